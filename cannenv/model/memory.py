"""Memory plan of a model on Ascend devices: weights, KV cache, prefill activations, reserve.

Pure arithmetic on a :class:`Shape` (counted from the meta model by :func:`cannenv.model.trace.shape`);
every formula is written out, with its source, in docs/model.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from cannenv.errors import InputError
from cannenv.model.quant import DTYPES, Scheme

GIB = 1 << 30
IDLE_RESERVED_MIB = 3419
"""largest HBM in use on an idle device in the npu-smi outputs the SoC data cites"""
RUNTIME_WORKSPACE_MIB = 1024
"""allowance for the runtime's own workspace (fused-operator and HCCL buffers, allocator slack):
a stated assumption"""
TP_CANDIDATES = (1, 2, 4, 8, 16)
KV_BYTES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0}

AttnKind = Literal["mha", "gqa", "mqa", "mla", "ssm", "linear", "none"]


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
    """SSM / linear attention: elements of the per-sequence state (conv + recurrent), independent of
    the sequence length"""
    pattern: str = ""
    """how the layer attends where it is not plain full attention: "sliding", "chunked" (Llama-4's
    local chunks: at most ``window`` tokens cached), "nope" (full attention without RoPE)"""


Role = Literal[
    "attention",
    "mlp",
    "expert",
    "shared_expert",
    "router",
    "embedding",
    "head",
    "norm",
    "vision",
    "projector",
    "other",
]
Split = Literal["tp", "kv", "expert", "replicated"]
QUANTISED_ROLES = ("attention", "mlp", "expert", "shared_expert")
"""roles whose weight matrices a quantisation scheme quantises"""


@dataclass(frozen=True)
class Weights:
    """Parameters of one role that are split the same way across devices (summed over the model)."""

    role: Role
    split: Split
    """tp: divided by the TP degree (column/row-parallel, vocab-parallel); kv: K/V projections,
    divided by TP but replicated once TP exceeds the KV heads; expert: divided by TP, or distributed
    by EP; replicated: whole on every device"""
    params: int
    matrices: tuple[tuple[int, int, int], ...] = ()
    """(out, in, count): the weight matrices a scheme quantises (empty: the group stays 16-bit)"""
    kv_heads: int = 0


@dataclass(frozen=True)
class Vision:
    """A vision tower and its projector: counted in the weights (roles vision/projector), planned
    for a stated number of images."""

    kind: str
    layers: int
    hidden: int
    intermediate: int
    heads: int
    patches_per_image: int
    """patches the tower runs per image (its sequence length)"""
    tokens_per_image: int
    """tokens each image adds to the decoder's sequence (after merging/pixel shuffle)"""
    assumption: str
    """what fixes the image size (a config field or a stated default)"""


@dataclass(frozen=True)
class Shape:
    """What the memory plan needs to know about a model (plain numbers)."""

    model: str
    params: int
    """unique parameters (tied weights counted once)"""
    tied: bool
    hidden: int
    heads: int
    intermediate: int
    """activation width of the MLP per token (MoE: experts per token x the expert width)"""
    vocab: int
    layers: tuple[Layer, ...]
    cross_attention: tuple[Layer, ...] = ()
    """encoder-decoder: cross-attention layers, cached over the encoder length"""
    notes: tuple[str, ...] = ()
    weights: tuple[Weights, ...] = ()
    """every parameter by role and split (sums to ``params``)"""
    experts: int = 0
    """routed experts per MoE layer (0: dense)"""
    eager_layers: int = 0
    """layers whose attention runs eager (materialises the seq x seq scores)"""
    experts_per_token: int = 0
    vision: Vision | None = None
    encoder_only: bool = False
    """an encoder (BERT): no KV cache by design"""
    rules: str = ""
    """how the shape was read: cannenv's rules for a model type, or transformers' meta build"""

    @property
    def attention_kinds(self) -> tuple[str, ...]:
        def label(lay: Layer) -> str:
            if lay.pattern == "chunked":
                return f"{lay.kind}+chunk{lay.window}"
            if lay.window:
                return f"{lay.kind}+window{lay.window}"
            return lay.kind + (f"+{lay.pattern}" if lay.pattern else "")

        return tuple(sorted({label(lay) for lay in self.layers}))

    @property
    def linear_params(self) -> int:
        """parameters of the weight matrices a scheme quantises"""
        return sum(o * i * n for w in self.weights for o, i, n in w.matrices)

    @property
    def embedding_params(self) -> int:
        return sum(w.params for w in self.weights if w.role == "embedding")

    def by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in self.weights:
            out[w.role] = out.get(w.role, 0) + w.params
        return out


def scheme_of(dtype: str | Scheme) -> Scheme:
    if isinstance(dtype, Scheme):
        return dtype
    if dtype not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}", hint="one of " + ", ".join(DTYPES))
    return DTYPES[dtype]


def group_bytes(w: Weights, sch: Scheme) -> float:
    """Bytes of one weight group in scheme ``sch``."""
    if not w.matrices or not sch.quantised:
        return w.params * sch.dense_bytes
    in_matrices = 0
    total = 0.0
    for out, inp, n in w.matrices:
        total += n * sch.matrix_bytes(out, inp)
        in_matrices += n * out * inp
    return total + (w.params - in_matrices) * 2.0


def weight_bytes(s: Shape, dtype: str | Scheme) -> int:
    """All weight bytes in ``dtype`` (quantised schemes keep embeddings, norms, biases at 16 bit)."""
    sch = scheme_of(dtype)
    return int(sum(group_bytes(w, sch) for w in s.weights))


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
        total += lay.state_elems * kv_bytes * batch / (tp if lay.kind in ("ssm", "linear") else 1)
    for lay in s.cross_attention:
        total += _kv_width(lay, tp, kv_bytes) * seq * batch
    return int(total)


def activation_bytes(s: Shape, batch: int, seq: int, act_bytes: float, tp: int = 1) -> int:
    """Prefill activation peak per device.

    Fused attention (SDPA / npu_fusion_attention) never materialises the seq x seq scores; a layer
    whose attention runs eager (soft-capping, ``attn_implementation: eager``) holds them, with the
    fp32 softmax beside them: ``b * heads/tp * s * s * (act_bytes + 4)``. Per token: the residual
    stream, the normed input and the layer output (3h), the larger of the QKV output and the MLP's
    gate, up and act(gate) (3i), and for MoE the tokens copied to and back from their experts
    (2 k h). Checked against measured CPU peaks: tests/unit/test_model_activations.py.
    """
    tokens = batch * seq
    kv_heads = max((lay.kv_heads for lay in s.layers if lay.kv_heads), default=0)
    head_dim = max((lay.head_dim for lay in s.layers if lay.head_dim), default=s.hidden // max(s.heads, 1))
    qkv = (math.ceil(s.heads / tp) + 2 * math.ceil(kv_heads / tp)) * head_dim
    mlp = 3 * math.ceil(s.intermediate / tp)  # gate, up and act(gate) live together
    routed = 2 * s.experts_per_token * s.hidden  # MoE: tokens copied per expert, and back
    per_token = (3 * s.hidden + max(qkv, mlp) + routed) * act_bytes
    logits = batch * math.ceil(s.vocab / tp) * 4  # the last position's logits, in fp32
    scores = 0.0
    if s.eager_layers:  # scores in the activation dtype beside their fp32 softmax
        scores = batch * math.ceil(s.heads / tp) * seq * seq * (act_bytes + 4)
    return int(tokens * per_token + logits + scores)


def vision_activation_bytes(s: Shape, images: int, act_bytes: float, tp: int = 1) -> int:
    """Peak of the vision tower over ``images`` images (run before the decoder's prefill, so the
    plan takes the larger of the two): per patch the residual, the normed input and the block
    output (3 h_v) plus the larger of the QKV output and the MLP's hidden (fused attention: no
    patch x patch scores)."""
    v = s.vision
    if v is None or images <= 0:
        return 0
    per_patch = 3 * v.hidden + max(math.ceil(3 * v.hidden / tp), math.ceil(v.intermediate / tp))
    return int(images * v.patches_per_image * per_patch * act_bytes)


def _weights_per_device(s: Shape, dtype: str | Scheme, tp: int, ep: int = 1) -> int:
    # Megatron/vLLM: column/row-parallel linears and the vocab-parallel embedding and head split
    # across TP ranks; K/V projections split by KV head (replicated once TP exceeds them); experts
    # split across TP ranks, or distributed whole by expert parallelism; routers, norms replicated.
    sch = scheme_of(dtype)
    total = 0.0
    for w in s.weights:
        b = group_bytes(w, sch)
        if w.split == "tp":
            total += b / tp
        elif w.split == "kv":
            total += b * math.ceil(w.kv_heads / tp) / w.kv_heads if w.kv_heads else b / tp
        elif w.split == "expert":
            total += b / (ep if ep > 1 else tp)
        else:
            total += b
    return int(total)


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
    ep: int = 1
    images: int = 0

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
            "rules": s.rules,
            "parameters": s.params,
            "tied_embeddings": s.tied,
            "attention": list(s.attention_kinds),
            "layers": len(s.layers),
            "dtype": self.dtype,
            "ep": self.ep,
            "parameters_by_role": s.by_role(),
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
            "vision": None
            if s.vision is None
            else {
                "kind": s.vision.kind,
                "layers": s.vision.layers,
                "hidden": s.vision.hidden,
                "patches_per_image": s.vision.patches_per_image,
                "tokens_per_image": s.vision.tokens_per_image,
                "assumption": s.vision.assumption,
                "images": self.images,
            },
            "notes": list(self.shape.notes + self.notes),
        }


def _plannable(s: Shape) -> None:
    """A plan of nothing is an error, never a fit (0 layers; a decoder that caches nothing)."""
    if not s.layers:
        raise InputError(
            f"{s.model}: 0 decoder layers read from the config: there is nothing to plan",
            hint="a multimodal config keeps the decoder in text_config (cannenv reads it for the model types"
            " in cannenv/model/architectures.yaml); check num_hidden_layers",
        )
    caches = any(lay.kind not in ("none",) for lay in s.layers)
    if not caches and not s.encoder_only:
        raise InputError(
            f"{s.model}: no layer of this decoder caches anything (0 KV heads, no MLA latent, no state):"
            " a plan would call it free",
            hint="check num_key_value_heads / head_dim in the config (or its text_config)",
        )
    if (
        not s.encoder_only
        and kv_bytes_per_token(s, 2.0) == 0
        and not any(lay.state_elems for lay in s.layers)
    ):
        raise InputError(f"{s.model}: 0 KV bytes per token for a decoder: check the attention sizes")


def _device(
    s: Shape,
    dtype: Scheme,
    kv_b: float,
    act_b: float,
    batch: int,
    seq: int,
    tp: int,
    hbm: int | None,
    reserve: int,
    ep: int = 1,
    images: int = 0,
) -> DevicePlan:
    w = _weights_per_device(s, dtype, tp, ep)
    kv = kv_cache_bytes(s, batch, seq, kv_b, tp)
    act = max(
        activation_bytes(s, batch, seq, act_b, tp), vision_activation_bytes(s, batch * images, act_b, tp)
    )
    total = w + kv + act + reserve
    max_tokens = None
    if hbm is not None:
        free = hbm - w - reserve - activation_bytes(s, 1, 0, act_b, tp)
        per_token = kv_bytes_per_token(s, kv_b, tp) + (
            activation_bytes(s, 1, 1, act_b, tp) - activation_bytes(s, 1, 0, act_b, tp)
        )  # eager scores grow with s^2: this linear bound is then optimistic (said in the notes)
        max_tokens = max(int(free // per_token), 0) if per_token > 0 and free > 0 else 0
    return DevicePlan(tp, w, kv, act, reserve, total, hbm, None if hbm is None else total <= hbm, max_tokens)


def plan(
    s: Shape,
    *,
    dtype: str | Scheme,
    batch: int,
    seq_len: int,
    tp: int = 1,
    ep: int = 1,
    hbm: int | None = None,
    device: str | None = None,
    hbm_source: tuple[str, ...] = (),
    kv_dtype: str | None = None,
    reserve: int | None = None,
    notes: tuple[str, ...] = (),
    images: int = 0,
) -> Plan:
    sch = scheme_of(dtype)
    if batch < 1 or seq_len < 1 or tp < 1 or ep < 1:
        raise InputError("--batch, --seq-len, --tp and --ep must be at least 1")
    _plannable(s)
    if s.heads and s.heads % tp:
        raise InputError(f"--tp {tp} does not divide the model's {s.heads} attention heads")
    if ep > 1 and (not s.experts or s.experts % ep):
        raise InputError(
            f"--ep {ep} does not divide the model's {s.experts} routed experts"
            if s.experts
            else f"--ep {ep}: the model has no routed experts"
        )
    # weight-only quantisation keeps activations and the KV cache in 16 bit
    kv_dtype = kv_dtype or (sch.name if sch.name in ("bf16", "fp16", "fp32") else "bf16")
    kv_b = KV_BYTES[kv_dtype]
    act_b = sch.dense_bytes
    res = reserve if reserve is not None else (IDLE_RESERVED_MIB + RUNTIME_WORKSPACE_MIB) << 20
    candidates = [t for t in TP_CANDIDATES if not s.heads or s.heads % t == 0]
    if images < 0 or (images and s.vision is None):
        raise InputError(
            f"--images {images}: {s.model} has no vision tower in this config"
            if images > 0
            else "--images must be at least 0"
        )
    per_tp = tuple(_device(s, sch, kv_b, act_b, batch, seq_len, t, hbm, res, ep, images) for t in candidates)
    at = _device(s, sch, kv_b, act_b, batch, seq_len, tp, hbm, res, ep, images)
    min_tp = next((p.tp for p in per_tp if p.fits), None) if hbm is not None else None
    return Plan(
        s,
        sch.name,
        kv_dtype,
        batch,
        seq_len,
        weight_bytes(s, sch),
        kv_bytes_per_token(s, kv_b),
        kv_cache_bytes(s, batch, seq_len, kv_b),
        device,
        hbm,
        hbm_source,
        res,
        at,
        per_tp,
        min_tp,
        notes,
        ep,
        images,
    )
