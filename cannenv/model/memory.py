"""Memory plan of a model on Ascend devices: weights, KV cache, prefill activations, reserve.

Pure arithmetic on a :class:`Shape` (counted from the meta model by :func:`cannenv.model.trace.shape`);
every formula is written out, with its source, in docs/model.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from cannenv.errors import InputError

Dtype = Literal["bf16", "fp16", "int8", "int4", "fp32"]
WEIGHT_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "int4": 0.5}
INT4_GROUP = 128
"""W4A16 quantisation group along the input dimension (one scale + one offset per group)"""
SCALE_BYTES = 2
"""each quantisation scale and offset is stored as fp16/bf16"""
GIB = 1 << 30
IDLE_RESERVED_MIB = 3419
"""largest HBM in use on an idle device in the npu-smi outputs the SoC data cites"""
RUNTIME_WORKSPACE_MIB = 1024
"""allowance for the runtime's own workspace (fused-operator and HCCL buffers, allocator slack):
a stated assumption"""
TP_CANDIDATES = (1, 2, 4, 8, 16)

AttnKind = Literal["mha", "gqa", "mqa", "mla", "ssm", "none"]


@dataclass(frozen=True)
class Layer:
    kind: AttnKind
    kv_heads: int = 0
    head_dim: int = 0
    window: int | None = None
    """sliding window (tokens kept), None for full attention"""
    latent: int = 0
    """MLA: kv_lora_rank + qk_rope_head_dim (the cached width per token)"""
    state_elems: int = 0
    """SSM: elements of the per-sequence state (conv + ssm), independent of the sequence length"""


@dataclass(frozen=True)
class Shape:
    """What the memory plan needs to know about a model (plain numbers)."""

    model: str
    params: int
    """unique parameters (tied weights counted once)"""
    linear_params: int
    """parameters of nn.Linear weights in the layers (what weight quantisation applies to)"""
    linear_out_features: int
    """sum of out_features of those Linear layers (one scale/offset per output channel in int8)"""
    embedding_params: int
    tied: bool
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    layers: tuple[Layer, ...]
    cross_attention: tuple[Layer, ...] = ()
    """encoder-decoder: cross-attention layers, cached over the encoder length"""
    notes: tuple[str, ...] = ()

    @property
    def attention_kinds(self) -> tuple[str, ...]:
        return tuple(
            sorted({lay.kind + (f"+window{lay.window}" if lay.window else "") for lay in self.layers})
        )


def weight_bytes(s: Shape, dtype: str) -> int:
    """All weight bytes in ``dtype`` (quantised dtypes keep embeddings, norms, biases at 16 bit)."""
    if dtype in ("fp32", "bf16", "fp16"):
        return int(s.params * WEIGHT_BYTES[dtype])
    rest = s.params - s.linear_params
    q = s.linear_params * WEIGHT_BYTES[dtype]
    if dtype == "int8":
        scales = s.linear_out_features * 2 * SCALE_BYTES
    elif dtype == "int4":
        scales = math.ceil(s.linear_params / INT4_GROUP) * 2 * SCALE_BYTES
    else:
        raise InputError(f"unknown dtype {dtype!r}")
    return int(rest * 2 + q + scales)


def _kv_width(lay: Layer, tp: int, kv_bytes: float) -> float:
    """Bytes cached per token by one layer on one device at tensor parallelism ``tp``."""
    if lay.kind in ("mha", "gqa", "mqa"):
        # K and V; KV heads are split across TP ranks, replicated when there are fewer than ranks
        return 2 * math.ceil(lay.kv_heads / tp) * lay.head_dim * kv_bytes
    if lay.kind == "mla":
        return lay.latent * kv_bytes  # the compressed latent is replicated on every rank
    return 0.0


def kv_bytes_per_token(s: Shape, kv_bytes: float, tp: int = 1) -> float:
    """KV-cache bytes for one more token (full-attention layers; windowed layers while under their window)."""
    return sum(_kv_width(lay, tp, kv_bytes) for lay in s.layers)


def kv_cache_bytes(s: Shape, batch: int, seq: int, kv_bytes: float, tp: int = 1) -> int:
    total = 0.0
    for lay in s.layers:
        tokens = min(seq, lay.window) if lay.window else seq
        total += _kv_width(lay, tp, kv_bytes) * tokens * batch
        total += lay.state_elems * kv_bytes * batch / (tp if lay.kind == "ssm" else 1)
    for lay in s.cross_attention:
        total += _kv_width(lay, tp, kv_bytes) * seq * batch
    return int(total)


def activation_bytes(s: Shape, batch: int, seq: int, act_bytes: float, tp: int = 1) -> int:
    """Prefill activation peak per device (fused attention: no seq x seq score matrix)."""
    tokens = batch * seq
    kv_heads = max((lay.kv_heads for lay in s.layers if lay.kv_heads), default=0)
    head_dim = max((lay.head_dim for lay in s.layers if lay.head_dim), default=s.hidden // max(s.heads, 1))
    qkv = (math.ceil(s.heads / tp) + 2 * math.ceil(kv_heads / tp)) * head_dim
    mlp = 2 * math.ceil(s.intermediate / tp)
    per_token = (2 * s.hidden + max(qkv, mlp)) * act_bytes
    logits = batch * math.ceil(s.vocab / tp) * 4  # the last position's logits, in fp32
    return int(tokens * per_token + logits)


def _weights_per_device(s: Shape, dtype: str, tp: int) -> int:
    # Linear layers and the (vocab-parallel) embedding and head are split across ranks; norms and
    # biases (the rest) are small and replicated.
    total = weight_bytes(s, dtype)
    head = 0 if s.tied else s.embedding_params
    split_params = s.linear_params + s.embedding_params + head
    replicated = max(s.params - split_params, 0) * 2
    return int((total - replicated) / tp + replicated)


@dataclass(frozen=True)
class DevicePlan:
    tp: int
    weights: int
    kv_cache: int
    activations: int
    reserve: int
    total: int
    hbm: int | None
    fits: bool | None
    max_tokens: int | None
    """largest batch x seq_len whose KV cache and activations still fit (None without an HBM size)"""


@dataclass(frozen=True)
class Plan:
    shape: Shape
    dtype: str
    kv_dtype: str
    batch: int
    seq_len: int
    weights_total: int
    kv_per_token: float
    kv_total: int
    device: str | None
    hbm: int | None
    hbm_source: tuple[str, ...]
    reserve: int
    at_tp: DevicePlan
    per_tp: tuple[DevicePlan, ...]
    min_tp: int | None
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        def dev(p: DevicePlan) -> dict[str, Any]:
            return {
                "tp": p.tp,
                "weights_bytes": p.weights,
                "kv_cache_bytes": p.kv_cache,
                "activation_bytes": p.activations,
                "reserve_bytes": p.reserve,
                "total_bytes": p.total,
                "hbm_bytes": p.hbm,
                "fits": p.fits,
                "max_batch_x_seq": p.max_tokens,
            }

        s = self.shape
        return {
            "schema": "cannenv.model.memory/1",
            "model": s.model,
            "parameters": s.params,
            "tied_embeddings": s.tied,
            "attention": list(s.attention_kinds),
            "layers": len(s.layers),
            "dtype": self.dtype,
            "kv_dtype": self.kv_dtype,
            "batch": self.batch,
            "seq_len": self.seq_len,
            "weights_bytes": self.weights_total,
            "kv_cache_bytes_per_token": self.kv_per_token,
            "kv_cache_bytes": self.kv_total,
            "device": self.device,
            "hbm_bytes": self.hbm,
            "hbm_sources": list(self.hbm_source),
            "reserve_bytes": self.reserve,
            "at_tp": dev(self.at_tp),
            "min_tp": self.min_tp,
            "per_tp": [dev(p) for p in self.per_tp],
            "notes": list(self.shape.notes + self.notes),
        }


def _device(
    s: Shape,
    dtype: str,
    kv_b: float,
    act_b: float,
    batch: int,
    seq: int,
    tp: int,
    hbm: int | None,
    reserve: int,
) -> DevicePlan:
    w = _weights_per_device(s, dtype, tp)
    kv = kv_cache_bytes(s, batch, seq, kv_b, tp)
    act = activation_bytes(s, batch, seq, act_b, tp)
    total = w + kv + act + reserve
    max_tokens = None
    if hbm is not None:
        free = hbm - w - reserve - activation_bytes(s, 1, 0, act_b, tp)
        per_token = kv_bytes_per_token(s, kv_b, tp) + (
            activation_bytes(s, 1, 1, act_b, tp) - activation_bytes(s, 1, 0, act_b, tp)
        )
        max_tokens = max(int(free // per_token), 0) if per_token > 0 and free > 0 else 0
    return DevicePlan(tp, w, kv, act, reserve, total, hbm, None if hbm is None else total <= hbm, max_tokens)


def plan(
    s: Shape,
    *,
    dtype: str,
    batch: int,
    seq_len: int,
    tp: int = 1,
    hbm: int | None = None,
    device: str | None = None,
    hbm_source: tuple[str, ...] = (),
    kv_dtype: str | None = None,
    reserve: int | None = None,
) -> Plan:
    if dtype not in WEIGHT_BYTES:
        raise InputError(f"--dtype {dtype!r}: one of " + ", ".join(WEIGHT_BYTES))
    if batch < 1 or seq_len < 1 or tp < 1:
        raise InputError("--batch, --seq-len and --tp must be at least 1")
    if s.heads and s.heads % tp:
        raise InputError(f"--tp {tp} does not divide the model's {s.heads} attention heads")
    # weight-only quantisation keeps activations and the KV cache in 16 bit
    kv_dtype = kv_dtype or (dtype if dtype in ("bf16", "fp16", "fp32") else "bf16")
    kv_b = WEIGHT_BYTES[kv_dtype]
    act_b = WEIGHT_BYTES[dtype] if dtype in ("bf16", "fp16", "fp32") else 2.0
    res = reserve if reserve is not None else (IDLE_RESERVED_MIB + RUNTIME_WORKSPACE_MIB) << 20
    candidates = [t for t in TP_CANDIDATES if not s.heads or s.heads % t == 0]
    per_tp = tuple(_device(s, dtype, kv_b, act_b, batch, seq_len, t, hbm, res) for t in candidates)
    at = _device(s, dtype, kv_b, act_b, batch, seq_len, tp, hbm, res)
    min_tp = next((p.tp for p in per_tp if p.fits), None) if hbm is not None else None
    return Plan(
        s,
        dtype,
        kv_dtype,
        batch,
        seq_len,
        weight_bytes(s, dtype),
        kv_bytes_per_token(s, kv_b),
        kv_cache_bytes(s, batch, seq_len, kv_b),
        device,
        hbm,
        hbm_source,
        res,
        at,
        per_tp,
        min_tp,
    )
