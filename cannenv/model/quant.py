"""Weight formats: how many bytes a model's weights take in each scheme (pure; no torch).

A scheme comes from ``--dtype`` or from the checkpoint itself (``quantization_config`` /
msmodelslim's ``quantize`` key, ``torch_dtype``). Only the 2-D/3-D weight matrices of attention,
the dense MLP, the experts and the shared experts are quantised (what GPTQ, AWQ, fp8 and W8A8
checkpoints quantise); embeddings, the output head, routers, norms and biases stay 16-bit, and a
config's ignore list (``modules_to_not_convert``, ``ignored_layers``, ``ignore``) keeps those modules
16-bit too. docs/model.md gives each layout with its source.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from cannenv.errors import InputError

Granularity = Literal["none", "channel", "group", "block", "tensor"]


@dataclass(frozen=True)
class Scheme:
    name: str
    bits: float
    """bits per quantised weight element (16/32: not quantised)"""
    granularity: Granularity = "none"
    group: int = 128
    """group size along the input (group), or the square block side (block)"""
    scale_bytes: float = 2.0
    zero_bytes: float = 0.0
    """per scale: a zero point (asymmetric schemes)"""
    per_in_bytes: float = 0.0
    """per input feature of each matrix (GPTQ's g_idx, int32)"""
    per_out_bytes: float = 0.0
    """per output channel beyond the scale (W8A8: int32 quant_bias + fp32 deq_scale)"""
    dense_bytes: float = 2.0
    """bytes per element of everything not quantised"""
    activation: Literal["16", "8"] = "16"
    """16: weight-only (activations 16-bit); 8: int8/fp8 matmul (needs the chip's support)"""
    skip: tuple[str, ...] = ()
    """module names the config keeps unquantised"""
    source: str = ""
    needs_fp8_matmul: bool = False
    matmul_op: str | None = None
    """the torch_npu operator the quantised matmul runs on (checked against the registry)"""
    per_matrix_bytes: float = 0.0
    """per weight matrix (per-tensor scales: NVFP4's fp32 global scale, modelopt's input scale)"""
    needs_format: str | None = None
    """a low-precision format the chip must compute natively (mxfp4, nvfp4); else the checkpoint
    needs conversion there (chips.yaml ``formats``)"""

    @property
    def quantised(self) -> bool:
        return self.bits < 16

    def matrix_bytes(self, out: int, inp: int) -> float:
        """Bytes of one [out, in] matrix in this scheme."""
        if not self.quantised:
            return out * inp * self.dense_bytes
        if self.granularity == "channel":
            scales = out
        elif self.granularity == "group":
            scales = out * math.ceil(inp / self.group)
        elif self.granularity == "block":
            scales = math.ceil(out / self.group) * math.ceil(inp / self.group)
        else:
            scales = 1
        return (
            out * inp * self.bits / 8
            + scales * (self.scale_bytes + self.zero_bytes)
            + inp * self.per_in_bytes
            + out * self.per_out_bytes
            + self.per_matrix_bytes
        )


WOQ_OP = "npu::npu_weight_quant_batchmatmul"
"""weight-only quantised matmul (W8A16/W4A16: GPTQ, AWQ, int8/int4)"""
QUANT_OP = "npu::npu_quant_matmul"
"""int8 x int8 (W8A8) and, where the chip has it, fp8 matmul"""
_SOURCE_WOQ = "torch_npu npu_weight_quant_batchmatmul: antiquant_scale (N,) or (ceil(K/group), N), fp16/bf16"
DTYPES: dict[str, Scheme] = {
    "fp32": Scheme("fp32", 32, dense_bytes=4.0),
    "bf16": Scheme("bf16", 16),
    "fp16": Scheme("fp16", 16),
    # weight-only, per output channel, a 2-byte scale and offset each (W8A16)
    "int8": Scheme(
        "int8", 8, "channel", scale_bytes=2.0, zero_bytes=2.0, source=_SOURCE_WOQ, matmul_op=WOQ_OP
    ),
    # weight-only, groups of 128 along the input, a 2-byte scale and offset each (W4A16)
    "int4": Scheme(
        "int4", 4, "group", 128, scale_bytes=2.0, zero_bytes=2.0, source=_SOURCE_WOQ, matmul_op=WOQ_OP
    ),
    # fp8 e4m3 weights with fp32 scales per 128x128 block (DeepSeek-V3 / Qwen3-FP8 checkpoints)
    "fp8": Scheme(
        "fp8",
        8,
        "block",
        128,
        scale_bytes=4.0,
        activation="8",
        needs_fp8_matmul=True,
        matmul_op=QUANT_OP,
        source="quantization_config fp8 weight_block_size [128, 128], weight_scale_inv fp32",
    ),
    # msmodelslim W8A8: int8 weight, per-channel fp32 deq_scale + int32 quant_bias, int8 activations
    "w8a8": Scheme(
        "w8a8",
        8,
        "channel",
        scale_bytes=4.0,
        per_out_bytes=4.0,
        activation="8",
        matmul_op=QUANT_OP,
        source="msmodelslim W8A8: weight int8, deq_scale, quant_bias per output channel (npu_quant_matmul)",
    ),
}


def _int(q: dict[str, Any], key: str, default: int, origin: str, lo: int, hi: int) -> int:
    v = q.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise InputError(
            f"{origin}: quantization_config.{key}: {str(v)[:20]!r} is not an integer in {lo}..{hi}"
        )
    return v


def _skip(q: dict[str, Any], origin: str) -> tuple[str, ...]:
    out: list[str] = []
    for key in ("modules_to_not_convert", "ignored_layers", "ignore"):
        v = q.get(key)
        if v is None:
            continue
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or len(v) > 100_000:
            raise InputError(f"{origin}: quantization_config.{key}: expected a list of module names")
        out += [x.removeprefix("re:") for x in v]
    return tuple(out)


def from_config(raw: dict[str, Any], origin: str) -> Scheme | None:
    """The checkpoint's own weight format, or None when it names none (then ``torch_dtype``)."""
    if raw.get("quantize") is not None:  # msmodelslim writes "quantize": "w8a8" (vllm-ascend reads it)
        kind = raw.get("quantize")
        if kind in ("w8a8", "w8a8_dynamic"):
            return DTYPES["w8a8"]
        raise InputError(f"{origin}: quantize: {str(kind)[:40]!r} is not a scheme cannenv plans (w8a8)")
    q = raw.get("quantization_config")
    if q is None:
        return None
    if not isinstance(q, dict):
        raise InputError(f"{origin}: quantization_config: expected an object")
    method = q.get("quant_method")
    skip = _skip(q, origin)
    if method in ("gptq", "awq"):
        bits = _int(q, "bits", 4, origin, 2, 8)
        group = _int(q, "group_size", 128, origin, -1, 1 << 20)
        per_channel = group in (-1, 0)
        zero = bits / 8 if method == "awq" or not q.get("sym", True) or method == "gptq" else 0.0
        return Scheme(
            f"{method}-int{bits}",
            bits,
            "channel" if per_channel else "group",
            128 if per_channel else group,
            scale_bytes=2.0,
            zero_bytes=zero,  # GPTQ and AWQ store packed zero points (qzeros) even when symmetric
            per_in_bytes=4.0 if method == "gptq" else 0.0,  # GPTQ's g_idx (int32 per input row)
            skip=skip,
            matmul_op=WOQ_OP,
            source=f"quantization_config quant_method {method}: qweight {bits}-bit packed, fp16 scales and "
            "packed qzeros per group" + (", int32 g_idx per input row" if method == "gptq" else ""),
        )
    if method == "fp8":
        block = q.get("weight_block_size")
        if block is not None:
            ok = (
                isinstance(block, list)
                and len(block) == 2
                and all(type(b) is int and 1 <= b <= 1 << 16 for b in block)
            )
            if not ok or block[0] != block[1]:
                raise InputError(
                    f"{origin}: quantization_config.weight_block_size: expected [N, N] (e.g. [128, 128])"
                )
            return Scheme(
                "fp8-block",
                8,
                "block",
                int(block[0]),
                scale_bytes=4.0,
                activation="8",
                needs_fp8_matmul=True,
                matmul_op=QUANT_OP,
                skip=skip,
                source="quantization_config fp8 weight_block_size: e4m3 weights, fp32 weight_scale_inv"
                " per block",
            )
        return Scheme(
            "fp8-tensor",
            8,
            "tensor",
            scale_bytes=4.0,
            activation="8",
            needs_fp8_matmul=True,
            matmul_op=QUANT_OP,
            skip=skip,
            source="quantization_config fp8 (per tensor): e4m3 weights, one fp32 scale per matrix",
        )
    if method == "compressed-tensors":
        return _compressed_tensors(q, origin, skip)
    if method == "mxfp4":
        # gpt-oss: *_blocks uint8 [.., out, in/32, 16] (two e2m1 values a byte) and *_scales uint8
        # [.., out, in/32] (one E8M0 exponent per 32 elements); modules_to_not_convert stay bf16
        return Scheme(
            "mxfp4",
            4,
            "group",
            32,
            scale_bytes=1.0,
            skip=skip,
            needs_format="mxfp4",
            source="quantization_config mxfp4 (OCP MX): e2m1 weights, one E8M0 scale byte per 32"
            " along the input",
        )
    if method == "modelopt":
        return _modelopt(q, origin, skip)
    if method == "bitsandbytes":
        return _bitsandbytes(q, origin, skip)
    known = "gptq, awq, fp8, compressed-tensors, mxfp4, modelopt (NVFP4, FP8), bitsandbytes, msmodelslim w8a8"
    raise InputError(
        f"{origin}: quantization_config.quant_method: {str(method)[:40]!r}: cannenv does not know how this"
        " format stores its weights, so it cannot plan them",
        hint=f"known: {known}; plan a what-if with --dtype (bf16, int8, int4, w8a8 ...)",
    )


def _modelopt(q: dict[str, Any], origin: str, skip: tuple[str, ...]) -> Scheme:
    """NVIDIA ModelOpt checkpoints (``quant_method: modelopt``, ``quant_algo``)."""
    algo = str(q.get("quant_algo", ""))
    skip = skip + _names(q, "exclude_modules", origin)
    if algo == "NVFP4":
        group = _int(q, "group_size", 16, origin, 1, 1 << 16)
        # e2m1 weights, an e4m3 scale per group of 16, fp32 weight_scale_2 and input_scale per matrix
        return Scheme(
            "nvfp4",
            4,
            "group",
            group,
            scale_bytes=1.0,
            per_matrix_bytes=8.0,
            activation="8",
            skip=skip,
            needs_format="nvfp4",
            source=f"quantization_config modelopt NVFP4: e2m1 weights, e4m3 scale per {group}, fp32 global"
            " and input scales per matrix",
        )
    if algo == "FP8":
        return Scheme(
            "fp8-tensor",
            8,
            "tensor",
            scale_bytes=4.0,
            per_matrix_bytes=4.0,
            activation="8",
            needs_fp8_matmul=True,
            matmul_op=QUANT_OP,
            skip=skip,
            source="quantization_config modelopt FP8: e4m3 weights, fp32 weight and input scales per matrix",
        )
    raise InputError(
        f"{origin}: quantization_config.quant_algo: {algo[:40]!r} (modelopt): cannenv does not know how it"
        " stores its weights",
        hint="known modelopt algorithms: NVFP4, FP8; plan a what-if with --dtype",
    )


def _bitsandbytes(q: dict[str, Any], origin: str, skip: tuple[str, ...]) -> Scheme:
    """bitsandbytes (quantised when loaded, or saved so): 4-bit NF4/FP4 with an absmax per 64
    elements (fp32, or uint8 plus an fp32 per 256 blocks with double quantisation); 8-bit LLM.int8
    with an fp32 scale per output row. A few hundred bytes of per-matrix metadata are not counted."""
    skip = skip + _names(q, "llm_int8_skip_modules", origin)
    if q.get("load_in_4bit"):
        double = bool(q.get("bnb_4bit_use_double_quant"))
        kind = str(q.get("bnb_4bit_quant_type", "fp4"))
        return Scheme(
            f"bnb-{kind}",
            4,
            "group",
            64,
            scale_bytes=1.0 + 4.0 / 256 if double else 4.0,
            skip=skip,
            matmul_op=WOQ_OP,
            source=f"quantization_config bitsandbytes 4-bit {kind}: absmax per 64"
            + (" (uint8, double-quantised)" if double else " (fp32)"),
        )
    if q.get("load_in_8bit"):
        return Scheme(
            "bnb-int8",
            8,
            "channel",
            scale_bytes=4.0,
            skip=skip,
            matmul_op=WOQ_OP,
            source="quantization_config bitsandbytes LLM.int8: int8 weights, fp32 SCB per output row",
        )
    raise InputError(f"{origin}: quantization_config: bitsandbytes without load_in_4bit or load_in_8bit")


def _names(q: dict[str, Any], key: str, origin: str) -> tuple[str, ...]:
    v = q.get(key)
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v) or len(v) > 100_000:
        raise InputError(f"{origin}: quantization_config.{key}: expected a list of module names")
    return tuple(v)


def _compressed_tensors(q: dict[str, Any], origin: str, skip: tuple[str, ...]) -> Scheme:
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise InputError(f"{origin}: quantization_config.config_groups: expected an object of groups")
    first = next(iter(groups.values()))
    w = first.get("weights") if isinstance(first, dict) else None
    if not isinstance(w, dict):
        raise InputError(f"{origin}: quantization_config.config_groups: a group without 'weights'")
    bits = _int(w, "num_bits", 8, origin, 2, 16)
    strategy = w.get("strategy", "tensor")
    kind = w.get("type", "int")
    gran: Granularity = {"channel": "channel", "group": "group", "block": "block", "tensor": "tensor"}.get(
        str(strategy), "tensor"
    )  # type: ignore[assignment]
    group = _int(w, "group_size", 128, origin, 1, 1 << 20) if gran == "group" else 128
    if gran == "block":
        block = w.get("block_structure")
        if isinstance(block, list) and block and type(block[0]) is int:
            group = int(block[0])
    acts = first.get("input_activations")
    if kind == "float" and bits == 4:  # NVFP4 packed: e4m3 scale per group, fp32 global scale
        return Scheme(
            "compressed-tensors-nvfp4",
            4,
            "group",
            group,
            scale_bytes=1.0,
            per_matrix_bytes=4.0,
            activation="8" if isinstance(acts, dict) and acts.get("num_bits") == 4 else "16",
            skip=skip,
            needs_format="nvfp4",
            source="quantization_config compressed-tensors nvfp4: e2m1 weights, e4m3 scale per group, fp32"
            " global scale per matrix",
        )
    return Scheme(
        f"compressed-tensors-{kind}{bits}",
        bits,
        gran,
        group,
        scale_bytes=4.0 if kind == "float" else 2.0,
        zero_bytes=0.0 if w.get("symmetric", True) else 2.0,
        activation="8" if isinstance(acts, dict) and acts.get("num_bits") == 8 else "16",
        needs_fp8_matmul=kind == "float" and bits == 8,
        matmul_op=QUANT_OP if isinstance(acts, dict) and acts.get("num_bits") == 8 else WOQ_OP,
        skip=skip,
        source=f"quantization_config compressed-tensors: {kind}{bits} weights, {strategy} scales",
    )


DTYPE_NAMES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "bf16": "bf16", "fp16": "fp16"}


def config_dtype(raw: dict[str, Any]) -> str | None:
    """``torch_dtype`` (transformers 4) or ``dtype`` (transformers 5) as bf16/fp16/fp32."""
    for key in ("torch_dtype", "dtype"):
        v = raw.get(key)
        if isinstance(v, str) and v in DTYPE_NAMES:
            return DTYPE_NAMES[v]
    return None
