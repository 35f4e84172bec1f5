"""A model's shape from its ``config.json`` by cannenv's own rules: no torch, no transformers.

For the model types of ``architectures.yaml`` the memory plan does not build the model: every
parameter is counted from the config with the module structure of that architecture written out
here (docs/model.md, section 4), so the answer is the same under every transformers version and a
1T-parameter config plans in milliseconds. A multimodal config's decoder is read from its text
config and its vision tower and projector are counted and placed. Other model types transformers
knows are still built on the meta device (:func:`cannenv.model.trace.shape`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from cannenv.errors import InputError
from cannenv.model.config import ModelConfig
from cannenv.model.memory import QUANTISED_ROLES, Layer, Shape, Vision, Weights


class TypeRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    rules: str
    text: str | None = None
    flat_ok: bool = False
    vision: str | None = None
    vision_defaults: dict[str, Any] = {}
    image_pixels: int | None = None
    tie_from: str = "top"
    qkv_bias: bool = False
    qk_norm: bool = False
    norms_per_layer: int = 2
    fused: bool = False
    tie: bool = False
    local_every: int | None = None
    defaults: dict[str, Any] = {}
    source: str


class Alias(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)
    as_: str
    require: list[str]
    architectures: list[str]
    source: str

    def __init__(self, **data: Any) -> None:
        if "as" in data:
            data["as_"] = data.pop("as")
        super().__init__(**data)


class Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int
    types: dict[str, TypeRule]
    aliases: dict[str, Alias]


RULES = ("decoder", "gpt_oss", "llama4", "qwen3_next")
VISION_RULES = ("qwen3_vl", "qwen2_5_vl", "llama4", "siglip", "pixtral")
TIE_FROM = ("top", "text")


@cache
def table() -> Table:
    from cannenv import records
    from cannenv.resources import model_architectures_file

    path = model_architectures_file()
    doc = records.validate(Table, records.load_yaml(path.read_text(encoding="utf-8")), source=str(path))
    for name, t in doc.types.items():  # a typo in the shipped table is our bug: caught by its test
        if t.rules not in RULES or (t.vision is not None and t.vision not in VISION_RULES):
            raise ValueError(f"{path}: {name}: unknown rules {t.rules!r} / vision {t.vision!r}")
        if t.tie_from not in TIE_FROM or (t.tie_from == "text" and not t.text):
            raise ValueError(f"{path}: {name}: tie_from {t.tie_from!r} (one of {TIE_FROM}, text needs text)")
        if t.vision == "qwen2_5_vl" and not t.image_pixels:
            raise ValueError(f"{path}: {name}: a dynamic-resolution tower needs image_pixels")
    for name, a in doc.aliases.items():
        if a.as_ not in doc.types:
            raise ValueError(f"{path}: alias {name} -> {a.as_}: not a planned type")
    return doc


def resolve(cfg: ModelConfig) -> tuple[ModelConfig, str | None]:
    """The config as the architecture it is structurally (an alias of ``architectures.yaml``), with a
    note saying so; unchanged for every other type."""
    alias = table().aliases.get(cfg.model_type)
    if alias is None:
        return cfg, None
    missing = [k for k in alias.require if cfg.raw.get(k) is None]
    arch = cfg.raw.get("architectures")
    if missing or (arch is not None and list(arch) != alias.architectures):
        what = f"missing {', '.join(missing)}" if missing else f"architectures {arch}"
        raise InputError(
            f"{cfg.origin}: model_type {cfg.model_type!r} is planned as {alias.as_} only when it has"
            f" that structure ({what})",
            hint=f"required: {', '.join(alias.require)}; architectures {alias.architectures}",
        )
    raw = {k: v for k, v in cfg.raw.items() if k != "auto_map"}
    raw["model_type"] = alias.as_
    note = (
        f"model_type {cfg.model_type} planned as {alias.as_} (structurally identical: {alias.source});"
        " the checkpoint's own code (auto_map) is not run"
    )
    return replace(cfg, raw=raw), note


def plannable(cfg: ModelConfig) -> bool:
    """True when cannenv's own rules plan this model type (after aliases)."""
    return cfg.tiny is None and (cfg.model_type in table().types or cfg.model_type in table().aliases)


# ---------------------------------------------------------------------------------------------
# Reading sizes


class _Cfg:
    """One (sub-)config: reads recorded (typo warnings compare unknown keys with them), defaults
    from the type's table, a missing size is exit 2 naming it."""

    def __init__(self, raw: dict[str, Any], origin: str, where: str, defaults: dict[str, Any]) -> None:
        self.raw, self.origin, self.where, self.defaults = raw, origin, where, defaults
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        v = self.raw.get(key)
        if v is None:
            v = self.defaults.get(key, default)
        return v

    def size(self, key: str, default: int | None = None) -> int:
        v = self.get(key, default)
        if v is None:
            raise InputError(
                f"{self.origin}: {self.where}{key}: missing, and cannenv's rules for this model type need it",
                hint="a config of this model type states it (cannenv/model/architectures.yaml)",
            )
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InputError(f"{self.origin}: {self.where}{key}: {str(v)[:40]!r} is not a size")
        return v

    def flag(self, key: str, default: bool) -> bool:
        return bool(self.get(key, default))

    def ints(self, key: str) -> list[int] | None:
        v = self.get(key)
        if v is None:
            return None
        if not isinstance(v, list) or not all(type(x) is int for x in v):
            raise InputError(f"{self.origin}: {self.where}{key}: expected a list of integers")
        return list(v)


# ---------------------------------------------------------------------------------------------
# Counting


def _skip_matcher(skip: tuple[str, ...]) -> Any:
    """Module names a checkpoint keeps unquantised, matched by whole path components (``*`` matches
    one component, ``re:.*x$`` is read as ``x``): time per path independent of the list's length."""
    exact: set[tuple[str, ...]] = set()
    wild: list[tuple[str, ...]] = []
    for s in skip:
        s = s.removeprefix("re:").removeprefix(".*").removesuffix("$").strip(".")
        if not s:
            continue
        parts = tuple(s.split("."))
        if "*" in parts:
            wild.append(parts)
        else:
            exact.add(parts)
    wild = wild[:1000]  # a wildcard list is short (gpt-oss: 2); bounded all the same

    def skipped(path: str) -> bool:
        comps = tuple(path.split("."))
        n = len(comps)
        for i in range(n):
            for j in range(i + 1, n + 1):
                if comps[i:j] in exact:
                    return True
        for pat in wild:
            m = len(pat)
            for i in range(n - m + 1):
                if all(p == "*" or p == c for p, c in zip(pat, comps[i : i + m], strict=True)):
                    return True
        return False

    return skipped


@dataclass
class _Group:
    params: int = 0
    shapes: dict[tuple[int, int], int] | None = None


class _Acc:
    """Parameters by (role, split, quantisable matrix), as the memory plan places them."""

    def __init__(self, skip: tuple[str, ...]) -> None:
        self.skipped = _skip_matcher(skip)
        self.groups: dict[tuple[str, str, bool], _Group] = {}
        self.kv_heads = 0

    def add(
        self, role: str, split: str, path: str, n: int, matrix: tuple[int, int, int] | None = None
    ) -> None:
        """``n`` parameters at module ``path``; ``matrix`` (out, in, count): weight matrices a scheme
        may quantise (only for attention/mlp/expert/shared_expert, never for a skipped module)."""
        is_matrix = matrix is not None and role in QUANTISED_ROLES and not self.skipped(path)
        g = self.groups.setdefault((role, split, is_matrix), _Group(shapes={}))
        g.params += n
        if is_matrix and matrix is not None:
            assert g.shapes is not None
            out, inp, count = matrix
            g.shapes[(out, inp)] = g.shapes.get((out, inp), 0) + count

    def linear(
        self, role: str, split: str, path: str, inp: int, out: int, *, bias: bool = False, count: int = 1
    ) -> None:
        """``count`` nn.Linear(inp, out): the weight (a matrix), its bias replicated."""
        self.add(role, split, path, inp * out * count, (out, inp, count))
        if bias:
            self.add(role, "replicated" if split != "expert" else "expert", path + ".bias", out * count)

    def weights(self) -> tuple[Weights, ...]:
        return tuple(
            Weights(
                role,  # type: ignore[arg-type]
                split,  # type: ignore[arg-type]
                g.params,
                tuple(sorted((o, i, n) for (o, i), n in (g.shapes or {}).items())),
                self.kv_heads if split == "kv" else 0,
            )
            for (role, split, _), g in sorted(self.groups.items())
        )

    def total(self) -> int:
        return sum(g.params for g in self.groups.values())


@dataclass
class _Decoder:
    hidden: int
    heads: int
    inter: int
    vocab: int
    layers: list[Layer]
    experts: int = 0
    top_k: int = 0


def _gqa_kind(heads: int, kv: int) -> str:
    return "mqa" if kv == 1 and heads > 1 else ("gqa" if kv < heads else "mha")


def _attention(
    c: _Cfg, t: TypeRule, acc: _Acc, p: str, h: int, nq: int, nkv: int, d: int, *, gated: bool = False
) -> None:
    """Llama-style attention: q/k/v/o (biases per the config), q/k norms where the type has them;
    ``gated``: Qwen3-Next's q_proj also produces the output gate (twice the width)."""
    bias = c.flag("attention_bias", False)
    qkv_bias = bias or t.qkv_bias
    if t.fused:  # Phi-3: one qkv_proj (column-parallel as a whole)
        acc.linear("attention", "tp", f"{p}.qkv_proj", h, (nq + 2 * nkv) * d, bias=qkv_bias)
        acc.linear("attention", "tp", f"{p}.o_proj", nq * d, h, bias=bias)
        return
    acc.linear("attention", "tp", f"{p}.q_proj", h, nq * d * (2 if gated else 1), bias=qkv_bias)
    acc.linear("attention", "kv", f"{p}.k_proj", h, nkv * d, bias=qkv_bias)
    acc.linear("attention", "kv", f"{p}.v_proj", h, nkv * d, bias=qkv_bias)
    acc.linear("attention", "tp", f"{p}.o_proj", nq * d, h, bias=bias)
    if t.qk_norm:
        acc.add("norm", "replicated", f"{p}.q_norm", d)
        acc.add("norm", "replicated", f"{p}.k_norm", d)


def _mla(c: _Cfg, acc: _Acc, p: str, h: int, nq: int) -> int:
    """DeepSeek's multi-head latent attention; returns the cached width per token."""
    kv_lora = c.size("kv_lora_rank")
    q_lora = c.get("q_lora_rank")
    nope, rope, v = c.size("qk_nope_head_dim"), c.size("qk_rope_head_dim"), c.size("v_head_dim")
    bias = c.flag("attention_bias", False)
    if q_lora:
        q_lora = c.size("q_lora_rank")
        # the down-projections are ReplicatedLinear in vLLM's DeepSeek-V2/V3: whole on every rank
        acc.linear("attention", "replicated", f"{p}.q_a_proj", h, q_lora, bias=bias)
        acc.add("norm", "replicated", f"{p}.q_a_layernorm", q_lora)
        acc.linear("attention", "tp", f"{p}.q_b_proj", q_lora, nq * (nope + rope))
    else:
        acc.linear("attention", "tp", f"{p}.q_proj", h, nq * (nope + rope))
    acc.linear("attention", "replicated", f"{p}.kv_a_proj_with_mqa", h, kv_lora + rope, bias=bias)
    acc.add("norm", "replicated", f"{p}.kv_a_layernorm", kv_lora)
    acc.linear("attention", "tp", f"{p}.kv_b_proj", kv_lora, nq * (nope + v))
    acc.linear("attention", "tp", f"{p}.o_proj", nq * v, h, bias=bias)
    return kv_lora + rope


def _gated_mlp(
    acc: _Acc, role: str, split: str, p: str, h: int, i: int, *, bias: bool = False, fused: bool = False
) -> None:
    if fused:  # Phi-3: gate_up_proj [2i, h]
        acc.linear(role, split, f"{p}.gate_up_proj", h, 2 * i, bias=bias)
        acc.linear(role, split, f"{p}.down_proj", i, h, bias=bias)
        return
    acc.linear(role, split, f"{p}.gate_proj", h, i, bias=bias)
    acc.linear(role, split, f"{p}.up_proj", h, i, bias=bias)
    acc.linear(role, split, f"{p}.down_proj", i, h, bias=bias)


def _experts(acc: _Acc, p: str, h: int, i: int, e: int) -> None:
    """``e`` SwiGLU experts of width ``i`` (transformers 5 fuses them into 3-D tensors: the same
    parameters and the same per-matrix quantisation)."""
    # the quantisable matrices: gate and up [i, h], down [h, i], per expert
    acc.add("expert", "expert", p, 2 * e * h * i, (i, h, 2 * e))
    acc.add("expert", "expert", p, e * h * i, (h, i, e))


def _decoder(c: _Cfg, t: TypeRule, acc: _Acc, notes: list[str], pre: str) -> _Decoder:
    """Llama-style decoders and their MoE variants (Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3)."""
    h, n_layers, nq = c.size("hidden_size"), c.size("num_hidden_layers"), c.size("num_attention_heads")
    nkv = c.size("num_key_value_heads", nq)
    d = c.size("head_dim", h // nq if nq else 0)
    vocab, inter = c.size("vocab_size"), c.size("intermediate_size")
    acc.kv_heads = nkv
    mlp_bias = c.flag("mlp_bias", False)
    # MoE, by the keys each family uses
    e_ds, e_qwen, e_mix = c.get("n_routed_experts"), c.get("num_experts"), c.get("num_local_experts")
    experts = int(e_ds or e_qwen or e_mix or 0)
    top_k = c.size("num_experts_per_tok", 0) if experts else 0
    moe_i = c.size("moe_intermediate_size") if experts and not e_mix else inter
    shared_w = 0
    if e_ds:
        shared_w = c.size("n_shared_experts", 0) * moe_i
    elif e_qwen:
        shared_w = int(c.get("shared_expert_intermediate_size") or 0)
    first_dense = c.size("first_k_dense_replace", 0) if e_ds else 0
    freq = c.size("moe_layer_freq", 1) if e_ds else 1
    step = c.size("decoder_sparse_step", 1) if e_qwen else 1
    mlp_only = set(c.ints("mlp_only_layers") or []) if e_qwen else set()
    noaux = e_ds and c.get("topk_method") == "noaux_tc"
    mla = c.get("kv_lora_rank") is not None
    layers: list[Layer] = []
    for i in range(n_layers):
        p = f"{pre}layers.{i}"
        if mla:
            latent = _mla(c, acc, f"{p}.self_attn", h, nq)
            layers.append(Layer("mla", latent=latent))
        else:
            _attention(c, t, acc, f"{p}.self_attn", h, nq, nkv, d)
            layers.append(Layer(_gqa_kind(nq, nkv), nkv, d))  # type: ignore[arg-type]
        acc.add("norm", "replicated", f"{p}.input_layernorm", h)
        acc.add("norm", "replicated", f"{p}.post_attention_layernorm", h)
        if t.norms_per_layer > 2:  # Gemma-2/3: pre- and post-feedforward norms too
            acc.add("norm", "replicated", f"{p}.feedforward_layernorms", (t.norms_per_layer - 2) * h)
        if e_ds:
            moe = i >= first_dense and i % freq == 0
        elif e_qwen:
            moe = i not in mlp_only and (i + 1) % step == 0
        else:
            moe = bool(e_mix)
        if not (experts and moe):
            _gated_mlp(acc, "mlp", "tp", f"{p}.mlp", h, inter, bias=mlp_bias, fused=t.fused)
            continue
        gate = f"{p}.{'block_sparse_moe' if e_mix else 'mlp'}"
        acc.add("router", "replicated", f"{gate}.gate", experts * h)
        if noaux:  # stored in the checkpoint: e_score_correction_bias, one per expert
            acc.add("router", "replicated", f"{gate}.gate.e_score_correction_bias", experts)
        _experts(acc, f"{gate}.experts", h, moe_i, experts)
        if shared_w:
            name = "shared_experts" if e_ds else "shared_expert"
            _gated_mlp(acc, "shared_expert", "tp", f"{gate}.{name}", h, shared_w)
            if e_qwen:
                acc.add("router", "replicated", f"{gate}.shared_expert_gate", h)
    if experts:
        # dense layers wider than the routed width (DeepSeek's first_k_dense_replace) set the peak
        width = max(top_k * moe_i + shared_w, inter if first_dense else 0)
        notes.append(
            f"MoE: {experts} experts, activations counted for {top_k} routed x {moe_i}"
            + (f" + shared {shared_w}" if shared_w else "")
            + " per token"
        )
        inter = width
    if mla:
        notes.append(
            "MLA: the cache holds kv_lora_rank + qk_rope_head_dim per token and layer,"
            " replicated across TP ranks"
        )
    layers = _windows(c, layers, notes, t.local_every)
    return _Decoder(h, nq, inter, vocab, layers, experts, top_k)


def _windows(c: _Cfg, layers: list[Layer], notes: list[str], local_every: int | None = None) -> list[Layer]:
    """Sliding windows as the config sets them: ``layer_types`` per layer; else a local/global
    interleave (Gemma-2: every 2nd layer global; Gemma-3: every ``sliding_window_pattern``-th); else
    ``sliding_window`` on every layer unless ``use_sliding_window`` is false (Qwen: then from
    ``max_window_layers``)."""
    types = c.get("layer_types")
    window = c.get("sliding_window")
    use_sw = c.get("use_sliding_window", True)
    max_window_layers = c.get("max_window_layers")
    period = c.get("sliding_window_pattern", local_every) if local_every else None
    if not window:
        return layers
    out = []
    for i, lay in enumerate(layers):
        if isinstance(types, list) and i < len(types):
            sliding = "sliding" in str(types[i])
        elif isinstance(period, int) and period > 0:
            sliding = (i + 1) % period != 0
        elif use_sw is False:
            sliding = False
        elif isinstance(max_window_layers, int) and "use_sliding_window" in c.raw:
            sliding = i >= max_window_layers
        else:
            sliding = True
        out.append(replace(lay, window=int(window), pattern="sliding") if sliding else lay)
    if any(lay.window for lay in out):
        notes.append(f"sliding window {window}: those layers cache at most {window} tokens")
    return out


def _gpt_oss(c: _Cfg, t: TypeRule, acc: _Acc, notes: list[str], pre: str) -> _Decoder:
    """gpt-oss: biased attention with one learned sink per head; every layer MoE with fused,
    biased experts (gate_up [E, h, 2i], down [E, i, h]) and a biased router."""
    h, n_layers, nq = c.size("hidden_size"), c.size("num_hidden_layers"), c.size("num_attention_heads")
    nkv, d = c.size("num_key_value_heads", nq), c.size("head_dim")
    vocab, inter, experts = c.size("vocab_size"), c.size("intermediate_size"), c.size("num_local_experts")
    top_k = c.size("num_experts_per_tok", 0) or c.size("experts_per_token", 0)
    acc.kv_heads = nkv
    layers = []
    for i in range(n_layers):
        p = f"{pre}layers.{i}"
        _attention(c, t, acc, f"{p}.self_attn", h, nq, nkv, d)
        acc.add("attention", "replicated", f"{p}.self_attn.sinks", nq)
        acc.add("norm", "replicated", f"{p}.input_layernorm", h)
        acc.add("norm", "replicated", f"{p}.post_attention_layernorm", h)
        acc.add("router", "replicated", f"{p}.mlp.router", experts * h + experts)
        acc.add("expert", "expert", f"{p}.mlp.experts", 2 * experts * h * inter, (2 * inter, h, experts))
        acc.add("expert", "expert", f"{p}.mlp.experts", experts * inter * h, (h, inter, experts))
        acc.add("expert", "expert", f"{p}.mlp.experts.bias", experts * (2 * inter + h))
        layers.append(Layer(_gqa_kind(nq, nkv), nkv, d))  # type: ignore[arg-type]
    notes.append(f"MoE: {experts} experts, activations counted for {top_k} routed x {inter} per token")
    return _Decoder(h, nq, top_k * inter, vocab, _windows(c, layers, notes), experts, top_k)


def _llama4(c: _Cfg, t: TypeRule, acc: _Acc, notes: list[str], pre: str) -> _Decoder:
    """Llama-4 text: MoE layers (``moe_layers``, else every ``interleave_moe_layer_step``-th) with 16
    or 128 fused experts, a shared expert and a router; dense layers of ``intermediate_size_mlp``.
    Attention: layers with RoPE attend within chunks of ``attention_chunk_size`` tokens (the cache
    keeps at most one chunk), every ``no_rope_layer_interval``-th layer is global without RoPE."""
    h, n_layers, nq = c.size("hidden_size"), c.size("num_hidden_layers"), c.size("num_attention_heads")
    nkv, d = c.size("num_key_value_heads", nq), c.size("head_dim")
    vocab, inter, experts = c.size("vocab_size"), c.size("intermediate_size"), c.size("num_local_experts")
    inter_mlp, top_k = c.size("intermediate_size_mlp"), c.size("num_experts_per_tok", 1)
    acc.kv_heads = nkv
    step = c.size("interleave_moe_layer_step")
    moe_layers = c.ints("moe_layers")
    moe = set(moe_layers) if moe_layers is not None else set(range(step - 1, n_layers, step))
    interval = c.size("no_rope_layer_interval")
    rope = c.ints("no_rope_layers") or []  # 1: the layer uses RoPE (and chunked attention)
    if len(rope) != n_layers:
        rope = [int((i + 1) % interval != 0) for i in range(n_layers)]
    chunk = c.get("attention_chunk_size")
    layers = []
    for i in range(n_layers):
        p = f"{pre}layers.{i}"
        _attention(c, t, acc, f"{p}.self_attn", h, nq, nkv, d)
        acc.add("norm", "replicated", f"{p}.input_layernorm", h)
        acc.add("norm", "replicated", f"{p}.post_attention_layernorm", h)
        if i in moe:
            acc.add("router", "replicated", f"{p}.feed_forward.router", experts * h)
            _experts(acc, f"{p}.feed_forward.experts", h, inter, experts)
            _gated_mlp(acc, "shared_expert", "tp", f"{p}.feed_forward.shared_expert", h, inter)
        else:
            _gated_mlp(acc, "mlp", "tp", f"{p}.feed_forward", h, inter_mlp)
        kind = _gqa_kind(nq, nkv)
        if rope[i] and chunk:
            layers.append(Layer(kind, nkv, d, int(chunk), pattern="chunked"))  # type: ignore[arg-type]
        else:
            layers.append(Layer(kind, nkv, d, pattern="" if rope[i] else "nope"))  # type: ignore[arg-type]
    if chunk:
        n_chunked = sum(1 for lay in layers if lay.pattern == "chunked")
        notes.append(
            f"chunked attention: {n_chunked} layers attend within chunks of {chunk} tokens and cache at"
            f" most {chunk}; {n_layers - n_chunked} global layers without RoPE cache every token"
        )
    notes.append(
        f"MoE: {experts} experts in {len(moe)} of {n_layers} layers, activations counted for {top_k}"
        f" routed x {inter} + shared {inter} per token"
    )
    width = max(top_k * inter + inter, inter_mlp if len(moe) < n_layers else 0)
    return _Decoder(h, nq, width, vocab, layers, experts, top_k)


def _qwen3_next(c: _Cfg, t: TypeRule, acc: _Acc, notes: list[str], pre: str) -> _Decoder:
    """Qwen3-Next: every ``full_attention_interval``-th layer gated full attention, the others Gated
    DeltaNet linear attention (a fixed state per sequence, no per-token cache); MoE with a gated
    shared expert in every layer."""
    h, n_layers, nq = c.size("hidden_size"), c.size("num_hidden_layers"), c.size("num_attention_heads")
    nkv, d = c.size("num_key_value_heads", nq), c.size("head_dim")
    vocab, experts = c.size("vocab_size"), c.size("num_experts")
    moe_i, shared = c.size("moe_intermediate_size"), c.size("shared_expert_intermediate_size", 0)
    top_k = c.size("num_experts_per_tok")
    nk, nv = c.size("linear_num_key_heads"), c.size("linear_num_value_heads")
    dk, dv, kernel = (
        c.size("linear_key_head_dim"),
        c.size("linear_value_head_dim"),
        c.size("linear_conv_kernel_dim"),
    )
    interval = c.size("full_attention_interval")
    types = c.get("layer_types")
    acc.kv_heads = nkv
    key_dim, value_dim = nk * dk, nv * dv
    conv_dim = 2 * key_dim + value_dim
    layers = []
    for i in range(n_layers):
        p = f"{pre}layers.{i}"
        full = (
            ("full" in str(types[i]))
            if isinstance(types, list) and i < len(types)
            else (i + 1) % interval == 0
        )
        if full:
            _attention(c, t, acc, f"{p}.self_attn", h, nq, nkv, d, gated=True)
            layers.append(Layer(_gqa_kind(nq, nkv), nkv, d))  # type: ignore[arg-type]
        else:
            la = f"{p}.linear_attn"
            acc.linear("attention", "tp", f"{la}.in_proj_qkvz", h, 2 * key_dim + 2 * value_dim)
            acc.linear("attention", "tp", f"{la}.in_proj_ba", h, 2 * nv)
            acc.add("attention", "tp", f"{la}.conv1d", conv_dim * kernel)  # sharded by channel in vLLM
            acc.add("attention", "tp", f"{la}.dt_bias", nv)
            acc.add("attention", "tp", f"{la}.A_log", nv)
            acc.add("norm", "replicated", f"{la}.norm", dv)
            acc.linear("attention", "tp", f"{la}.out_proj", value_dim, h)
            layers.append(Layer("linear", state_elems=conv_dim * kernel + nv * dk * dv))
        acc.add("norm", "replicated", f"{p}.input_layernorm", h)
        acc.add("norm", "replicated", f"{p}.post_attention_layernorm", h)
        acc.add("router", "replicated", f"{p}.mlp.gate", experts * h)
        _experts(acc, f"{p}.mlp.experts", h, moe_i, experts)
        if shared:
            _gated_mlp(acc, "shared_expert", "tp", f"{p}.mlp.shared_expert", h, shared)
            acc.add("router", "replicated", f"{p}.mlp.shared_expert_gate", h)
    n_linear = sum(1 for lay in layers if lay.kind == "linear")
    notes.append(
        f"linear attention: {n_linear} Gated DeltaNet layers keep a fixed state per sequence (conv"
        f" {conv_dim}x{kernel} + recurrent {nv}x{dk}x{dv}) instead of a per-token cache;"
        f" {n_layers - n_linear} full-attention layers cache every token"
    )
    notes.append(
        f"MoE: {experts} experts, activations counted for {top_k} routed x {moe_i}"
        f" + shared {shared} per token"
    )
    return _Decoder(h, nq, top_k * moe_i + shared, vocab, layers, experts, top_k)


def _vision_qwen3_vl(v: _Cfg, acc: _Acc, notes: list[str], out_hidden: int) -> Vision:
    """Qwen3-VL's ViT: Conv3d patch embedding, learned position embeddings, ``depth`` blocks
    (LayerNorm, biased qkv/proj, fc1/fc2), a patch merger and one deepstack merger per
    ``deepstack_visual_indexes`` entry. Linears are split by TP as vLLM's tower does."""
    hv, depth, iv = v.size("hidden_size"), v.size("depth"), v.size("intermediate_size")
    heads, patch = v.size("num_heads"), v.size("patch_size")
    tp_, ch, merge = (
        v.size("temporal_patch_size", 2),
        v.size("in_channels", 3),
        v.size("spatial_merge_size", 2),
    )
    out = v.size("out_hidden_size", out_hidden)
    npos = v.size("num_position_embeddings")
    deep = v.ints("deepstack_visual_indexes") or []
    acc.add("vision", "replicated", "visual.patch_embed", ch * tp_ * patch * patch * hv + hv)
    acc.add("vision", "replicated", "visual.pos_embed", npos * hv)
    for i in range(depth):
        b = f"visual.blocks.{i}"
        acc.add("vision", "replicated", f"{b}.norm", 4 * hv)
        acc.linear("vision", "tp", f"{b}.attn.qkv", hv, 3 * hv, bias=True)
        acc.linear("vision", "tp", f"{b}.attn.proj", hv, hv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.linear_fc1", hv, iv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.linear_fc2", iv, hv, bias=True)
    wide = hv * merge * merge
    for j, name in enumerate(
        ["visual.merger"] + [f"visual.deepstack_merger_list.{k}" for k in range(len(deep))]
    ):
        acc.add("projector", "replicated", f"{name}.norm", 2 * (hv if j == 0 else wide))
        acc.linear("projector", "tp", f"{name}.linear_fc1", wide, wide, bias=True)
        acc.linear("projector", "tp", f"{name}.linear_fc2", wide, out, bias=True)
    side = math.isqrt(npos)
    notes.append(
        f"vision tower (Qwen3-VL ViT, {depth} blocks of {hv}) and its mergers counted and split by TP as"
        " vLLM does; images planned at its position-embedding grid"
        f" ({side}x{side} patches of {patch}px: {side * patch}px square)"
    )
    return Vision(
        "qwen3_vl",
        depth,
        hv,
        iv,
        heads,
        npos,
        npos // (merge * merge),
        f"an image of {side * patch}x{side * patch} px (the tower's {npos} position embeddings)",
    )


def _vision_llama4(v: _Cfg, acc: _Acc, notes: list[str], text_hidden: int) -> Vision:
    """Llama-4's vision model: a linear patch embedding, class and position embeddings, pre/post
    LayerNorms, ``num_hidden_layers`` biased encoder layers, a pixel-shuffle adapter MLP and the
    multimodal projector (no bias)."""
    hv, layers, iv = v.size("hidden_size"), v.size("num_hidden_layers"), v.size("intermediate_size")
    heads, patch, size, ch = (
        v.size("num_attention_heads"),
        v.size("patch_size"),
        v.size("image_size"),
        v.size("num_channels", 3),
    )
    ratio = v.get("pixel_shuffle_ratio", 0.5)
    proj_in, proj_out = v.size("projector_input_dim"), v.size("projector_output_dim")
    out_dim = v.size("vision_output_dim")
    if not isinstance(ratio, (int, float)) or not 0 < ratio <= 1:
        raise InputError(f"{v.origin}: vision_config.pixel_shuffle_ratio: expected a number in (0, 1]")
    patches = (size // patch) ** 2
    acc.add("vision", "replicated", "vision_model.class_embedding", hv)
    acc.add("vision", "replicated", "vision_model.positional_embedding_vlm", (patches + 1) * hv)
    acc.add("vision", "replicated", "vision_model.patch_embedding", ch * patch * patch * hv)
    acc.add("vision", "replicated", "vision_model.layernorm_pre_post", 4 * hv)
    for i in range(layers):
        b = f"vision_model.model.layers.{i}"
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            acc.linear("vision", "tp", f"{b}.self_attn.{name}", hv, hv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.fc1", hv, iv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.fc2", iv, hv, bias=True)
        acc.add("vision", "replicated", f"{b}.norms", 4 * hv)
    shuffled = int(hv / (ratio * ratio))
    acc.linear("projector", "tp", "vision_model.vision_adapter.mlp.fc1", shuffled, proj_in)
    acc.linear("projector", "tp", "vision_model.vision_adapter.mlp.fc2", proj_in, proj_out)
    acc.linear("projector", "tp", "multi_modal_projector.linear_1", out_dim, text_hidden)
    tokens = int(patches * ratio * ratio)
    notes.append(
        f"vision tower (Llama-4 ViT, {layers} layers of {hv}) and projector counted and split by TP as"
        f" vLLM does; each {size}px tile adds {tokens} tokens"
    )
    return Vision(
        "llama4", layers, hv, iv, heads, patches + 1, tokens, f"one {size}x{size} px tile per image"
    )


def _vision_siglip(v: _Cfg, acc: _Acc, notes: list[str], text_hidden: int, mm_tokens: int) -> Vision:
    """Gemma-3's SigLIP tower: Conv2d patch embedding (biased), position embeddings, biased encoder
    layers with two LayerNorms each, a post LayerNorm (and the attention-pooling head only where
    ``vision_use_head``); the projector is one matrix vision x text hidden plus an RMSNorm."""
    hv, layers = v.size("hidden_size", 768), v.size("num_hidden_layers", 12)
    iv, heads = v.size("intermediate_size", 3072), v.size("num_attention_heads", 12)
    patch, size, ch = v.size("patch_size", 16), v.size("image_size", 224), v.size("num_channels", 3)
    patches = (size // patch) ** 2
    acc.add("vision", "replicated", "vision_tower.embeddings.patch_embedding", ch * patch * patch * hv + hv)
    acc.add("vision", "replicated", "vision_tower.embeddings.position_embedding", patches * hv)
    for i in range(layers):
        b = f"vision_tower.encoder.layers.{i}"
        for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
            acc.linear("vision", "tp", f"{b}.self_attn.{name}", hv, hv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.fc1", hv, iv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.fc2", iv, hv, bias=True)
        acc.add("vision", "replicated", f"{b}.layer_norms", 4 * hv)
    acc.add("vision", "replicated", "vision_tower.post_layernorm", 2 * hv)
    if v.flag("vision_use_head", True):
        acc.add("vision", "replicated", "vision_tower.head.probe", hv)
        acc.linear("vision", "tp", "vision_tower.head.attention.in_proj", hv, 3 * hv, bias=True)
        acc.linear("vision", "tp", "vision_tower.head.attention.out_proj", hv, hv, bias=True)
        acc.add("vision", "replicated", "vision_tower.head.layernorm", 2 * hv)
        acc.linear("vision", "tp", "vision_tower.head.mlp.fc1", hv, iv, bias=True)
        acc.linear("vision", "tp", "vision_tower.head.mlp.fc2", iv, hv, bias=True)
    acc.linear("projector", "tp", "multi_modal_projector.mm_input_projection", hv, text_hidden)
    acc.add("projector", "replicated", "multi_modal_projector.mm_soft_emb_norm", hv)
    notes.append(
        f"vision tower (SigLIP, {layers} layers of {hv}) and projector counted and split by TP as vLLM"
        f" does; each {size}px image adds {mm_tokens} tokens"
    )
    return Vision("siglip", layers, hv, iv, heads, patches, mm_tokens, f"one {size}x{size} px image")


def _vision_qwen2_5_vl(v: _Cfg, acc: _Acc, notes: list[str], out_hidden: int, pixels: int) -> Vision:
    """Qwen2.5-VL's ViT: a Conv3d patch embedding without bias, no position embeddings (2-D RoPE),
    ``depth`` blocks (two RMSNorms, biased qkv/proj, a biased SwiGLU MLP) and the patch merger (an
    RMSNorm and two biased linears). Linears are split by TP as vLLM's tower does. The tower takes
    any resolution: images are planned at ``pixels`` (the type's ``image_pixels``)."""
    hv, depth, iv = v.size("hidden_size"), v.size("depth"), v.size("intermediate_size")
    heads, patch = v.size("num_heads"), v.size("patch_size")
    tp_, ch, merge = v.size("temporal_patch_size"), v.size("in_channels"), v.size("spatial_merge_size")
    out = v.size("out_hidden_size", out_hidden)
    if not patch or not merge:
        raise InputError(f"{v.origin}: vision_config: patch_size and spatial_merge_size must be positive")
    acc.add("vision", "replicated", "visual.patch_embed", ch * tp_ * patch * patch * hv)
    for i in range(depth):
        b = f"visual.blocks.{i}"
        acc.add("vision", "replicated", f"{b}.norms", 2 * hv)
        acc.linear("vision", "tp", f"{b}.attn.qkv", hv, 3 * hv, bias=True)
        acc.linear("vision", "tp", f"{b}.attn.proj", hv, hv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.gate_proj", hv, iv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.up_proj", hv, iv, bias=True)
        acc.linear("vision", "tp", f"{b}.mlp.down_proj", iv, hv, bias=True)
    wide = hv * merge * merge
    acc.add("projector", "replicated", "visual.merger.ln_q", hv)
    acc.linear("projector", "tp", "visual.merger.mlp.0", wide, wide, bias=True)
    acc.linear("projector", "tp", "visual.merger.mlp.2", wide, out, bias=True)
    patches = pixels // (patch * patch)
    tokens = patches // (merge * merge)
    notes.append(
        f"vision tower (Qwen2.5-VL ViT, {depth} blocks of {hv}) and its merger counted and split by TP"
        f" as vLLM does; any resolution: images planned at {pixels:,} px (the image processor's"
        f" default max_pixels): {patches} patches of {patch}px, {tokens} tokens"
    )
    return Vision(
        "qwen2_5_vl",
        depth,
        hv,
        iv,
        heads,
        patches,
        tokens,
        f"an image of {pixels:,} px (the image processor's default max_pixels)",
    )


def _vision_pixtral(v: _Cfg, top: _Cfg, acc: _Acc, notes: list[str], text_hidden: int) -> Vision:
    """Mistral-3's Pixtral tower: a Conv2d patch embedding without bias, an RMSNorm before the
    encoder, ``num_hidden_layers`` layers (two RMSNorms, q/k/v/o and a SwiGLU MLP, no biases; 2-D
    RoPE, no position embeddings), then the projector: an RMSNorm, the patch merger (a linear from
    ``spatial_merge_size``² patches to one, whole on every rank in vLLM) and two linears (biased
    where ``multimodal_projector_bias``)."""
    hv, layers, iv = v.size("hidden_size"), v.size("num_hidden_layers"), v.size("intermediate_size")
    heads, patch, size, ch = (
        v.size("num_attention_heads"),
        v.size("patch_size"),
        v.size("image_size"),
        v.size("num_channels"),
    )
    merge = top.size("spatial_merge_size")
    feature = top.get("vision_feature_layer")
    n_feat = len(feature) if isinstance(feature, list) else 1
    bias = top.flag("multimodal_projector_bias", False)
    if not patch or not merge:
        raise InputError(f"{v.origin}: patch_size and spatial_merge_size must be positive")
    acc.add("vision", "replicated", "vision_tower.patch_conv", ch * patch * patch * hv)
    acc.add("vision", "replicated", "vision_tower.ln_pre", hv)
    for i in range(layers):
        b = f"vision_tower.transformer.layers.{i}"
        acc.add("vision", "replicated", f"{b}.norms", 2 * hv)
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            acc.linear("vision", "tp", f"{b}.attention.{name}", hv, hv)
        acc.linear("vision", "tp", f"{b}.feed_forward.gate_proj", hv, iv)
        acc.linear("vision", "tp", f"{b}.feed_forward.up_proj", hv, iv)
        acc.linear("vision", "tp", f"{b}.feed_forward.down_proj", iv, hv)
    acc.add("projector", "replicated", "multi_modal_projector.norm", hv)
    merger = "multi_modal_projector.patch_merger.merging_layer"
    acc.linear("projector", "replicated", merger, hv * merge * merge, hv)
    acc.linear("projector", "tp", "multi_modal_projector.linear_1", hv * n_feat, text_hidden, bias=bias)
    acc.linear("projector", "tp", "multi_modal_projector.linear_2", text_hidden, text_hidden, bias=bias)
    side = size // patch
    rows = side // merge
    tokens = rows * (rows + 1)  # merged patches, one [IMG_BREAK]/[IMG_END] token closing each row
    notes.append(
        f"vision tower (Pixtral, {layers} layers of {hv}) and projector counted and split by TP as vLLM"
        f" does; images planned at the tower's largest, image_size {size}px: {side * side} patches,"
        f" {tokens} tokens ({rows}x{rows} merged + one per row)"
    )
    return Vision(
        "pixtral", layers, hv, iv, heads, side * side, tokens, f"one {size}x{size} px image (image_size)"
    )


_TEXT_RULES = {"decoder": _decoder, "gpt_oss": _gpt_oss, "llama4": _llama4, "qwen3_next": _qwen3_next}


@dataclass(frozen=True)
class Read:
    shape: Shape
    keys: frozenset[str]
    """every key the rules read (typo warnings compare unknown keys with these)"""


def read(cfg: ModelConfig, *, skip: tuple[str, ...] = ()) -> Read:
    """The shape of a model type of ``architectures.yaml`` (after :func:`resolve`)."""
    t = table().types.get(cfg.model_type)
    if t is None:
        raise InputError(f"{cfg.origin}: model_type {cfg.model_type!r} has no cannenv rules")
    raw = cfg.raw
    where = ""
    if t.text:
        sub = raw.get(t.text)
        if isinstance(sub, dict):
            raw, where = sub, f"{t.text}."
        elif not t.flat_ok:
            raise InputError(
                f"{cfg.origin}: {t.text}: missing: a {cfg.model_type} config keeps its decoder there",
                hint="cannenv never plans an empty decoder",
            )
        # flat_ok: a config saved before the type nested its text config keeps the decoder at the top
    c = _Cfg(raw, cfg.origin, where, t.defaults)
    acc = _Acc(skip)
    notes: list[str] = []
    pre = "model."
    dec = _TEXT_RULES[t.rules](c, t, acc, notes, pre)
    h, vocab = dec.hidden, dec.vocab
    # tie_word_embeddings: the top level decides for a multimodal config (Qwen3-VL, Llama-4), the
    # text config where the type says so (Mistral-3: transformers 4.x ties by the text config, whose
    # class default is untied, while 5.x's Mistral3Config defaults the top level to tied; the
    # checkpoint stores lm_head)
    tied_v = raw.get("tie_word_embeddings") if t.tie_from == "text" else cfg.raw.get("tie_word_embeddings")
    if tied_v is None and t.text and t.tie_from == "top":
        tied_v = raw.get("tie_word_embeddings")
    c.read.add("tie_word_embeddings")
    tied = bool(tied_v) if tied_v is not None else t.tie
    acc.add("embedding", "tp", f"{pre}embed_tokens", vocab * h)
    if not tied:
        acc.add("head", "tp", "lm_head", vocab * h)
    acc.add("norm", "replicated", f"{pre}norm", h)
    vision: Vision | None = None
    keys = set(c.read)
    if t.vision:
        vc = cfg.raw.get("vision_config")
        if isinstance(vc, dict):
            v = _Cfg(vc, cfg.origin, "vision_config.", t.vision_defaults)
            if t.vision == "qwen3_vl":
                vision = _vision_qwen3_vl(v, acc, notes, h)
            elif t.vision == "qwen2_5_vl":
                assert t.image_pixels  # table() checks it
                vision = _vision_qwen2_5_vl(v, acc, notes, h, t.image_pixels)
            elif t.vision == "pixtral":
                top = _Cfg(cfg.raw, cfg.origin, "", t.vision_defaults)
                vision = _vision_pixtral(v, top, acc, notes, h)
                keys |= top.read
            elif t.vision == "siglip":
                mm = cfg.raw.get("mm_tokens_per_image", 256)
                vision = _vision_siglip(v, acc, notes, h, mm if type(mm) is int and mm > 0 else 256)
            else:
                vision = _vision_llama4(v, acc, notes, h)
        else:
            notes.append(
                "no vision_config in this config: the vision tower is not counted (transformers would"
                " build its default tower, which is not this checkpoint's)"
            )
    if not dec.layers:
        raise InputError(f"{cfg.origin}: {where}num_hidden_layers: 0 decoder layers: nothing to plan")
    params = acc.total()
    eager = 0
    if c.get("attn_logit_softcapping"):
        eager = len(dec.layers)
        notes.append(
            f"eager attention: attn_logit_softcapping {c.get('attn_logit_softcapping')}: the fused kernels"
            " (SDPA, npu_fusion_attention) cannot soft-cap the scores, so transformers runs attention eager;"
            " activations include the seq x seq scores"
        )
    elif raw.get("attn_implementation") == "eager" or cfg.raw.get("attn_implementation") == "eager":
        eager = len(dec.layers)
        notes.append(
            "eager attention: attn_implementation is eager; activations include the seq x seq scores"
        )
    shape = Shape(
        model=_model_name(cfg),
        params=params,
        tied=tied,
        hidden=h,
        heads=dec.heads,
        intermediate=dec.inter,
        vocab=vocab,
        layers=tuple(dec.layers),
        notes=tuple(notes),
        weights=acc.weights(),
        experts=dec.experts,
        experts_per_token=dec.top_k if dec.experts else 0,
        eager_layers=eager,
        vision=vision,
        rules=f"cannenv rules ({cfg.model_type}: {t.source})",
    )
    return Read(shape, frozenset(keys))


def _model_name(cfg: ModelConfig) -> str:
    arch = cfg.raw.get("architectures")
    if isinstance(arch, list) and arch and isinstance(arch[0], str):
        return arch[0][:100]
    return cfg.model_type
