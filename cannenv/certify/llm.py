"""A tiny Llama-style decoder of our own, in plain PyTorch, for the certification forward pass.

RMSNorm, rotary position embeddings (half-rotation form), grouped-query attention with a causal
mask, SwiGLU MLP; 2 layers, hidden 256, head_dim 128 (what ``npu_rotary_mul`` and
``npu_fusion_attention`` accept, kernels.md §5), vocab 1024. Weights come from a seeded
``torch.Generator``: nothing is downloaded, and the float32 CPU reference is computed in the same
run, so random weights are as good as trained ones for comparing a device against the CPU.

Importing this module sets ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` before importing torch: with
torch_npu installed but CANN broken, plain ``import torch`` fails through the device-backend
autoload (STYLE.md pitfalls), and the CPU reference must never depend on torch_npu. The device
worker imports torch_npu explicitly when it needs it.
"""

from __future__ import annotations

import os

os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import torch
from pydantic import BaseModel, ConfigDict
from torch import Tensor, nn

DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class TinyConfig(BaseModel):
    """Shape of the tiny decoder and of its input; every field is recorded in the certificate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vocab_size: int = 1024
    hidden_size: int = 256
    intermediate_size: int = 704
    num_layers: int = 2
    num_heads: int = 2
    num_kv_heads: int = 1
    head_dim: int = 128
    rope_theta: float = 10000.0
    rms_eps: float = 1e-6
    batch: int = 2
    seq_len: int = 64
    seed: int = 0


# ---------------------------------------------------------------------------------------------
# Eager building blocks (also the reference formulas for the NPU fused-op checks)


def rms_norm(x: Tensor, weight: Tensor, eps: float) -> Tensor:
    """RMSNorm computed in float32 and cast back (how Llama implementations do it)."""
    h = x.float()
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def rotary_tables(
    seq_len: int, head_dim: int, theta: float, device: torch.device, dtype: torch.dtype
) -> tuple[Tensor, Tensor]:
    """``cos``/``sin`` of shape [seq, head_dim], built in float32 on the device, then cast."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device, dtype=torch.float32) / head_dim))
    pos = torch.arange(seq_len, device=device, dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def rotate_half(x: Tensor) -> Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Half-rotation rotary embedding ``x·cos + rotate_half(x)·sin`` (npu_rotary_mul's half mode)."""
    return x * cos + rotate_half(x) * sin


def causal_attention(q: Tensor, k: Tensor, v: Tensor, scale: float) -> Tensor:
    """Eager causal attention on [batch, heads, seq, head_dim]; softmax in float32."""
    seq = q.shape[-2]
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    mask = torch.ones(seq, k.shape[-2], dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    return torch.matmul(probs, v)


# ---------------------------------------------------------------------------------------------
# The model


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.heads = cfg.num_heads
        self.kv_heads = cfg.num_kv_heads
        self.head_dim = cfg.head_dim
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.num_heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * cfg.head_dim, cfg.hidden_size, bias=False)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = apply_rotary(q, cos, sin)
        k = apply_rotary(k, cos, sin)
        groups = self.heads // self.kv_heads
        k = k.repeat_interleave(groups, dim=1)
        v = v.repeat_interleave(groups, dim=1)
        out = causal_attention(q, k, v, 1.0 / math.sqrt(self.head_dim))
        y: Tensor = self.o_proj(out.transpose(1, 2).reshape(b, s, self.heads * self.head_dim))
        return y


class SwiGLU(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        y: Tensor = self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))
        return y


class DecoderLayer(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        self.input_norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.attn = Attention(cfg)
        self.post_attn_norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.mlp = SwiGLU(cfg)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
        h = x + self.attn(self.input_norm(x), cos, sin)
        y: Tensor = h + self.mlp(self.post_attn_norm(h))
        return y


class TinyDecoder(nn.Module):
    def __init__(self, cfg: TinyConfig) -> None:
        super().__init__()
        if cfg.num_heads % cfg.num_kv_heads:
            raise ValueError("num_heads must be a multiple of num_kv_heads")
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.num_layers))
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)

    def forward_capture(self, ids: Tensor) -> tuple[list[tuple[str, Tensor]], Tensor]:
        """Logits plus every block's output: ``embed``, ``layer0``..``layerN-1``, ``final_norm``."""
        captured: list[tuple[str, Tensor]] = []
        h = self.embed(ids)
        captured.append(("embed", h))
        cos, sin = rotary_tables(ids.shape[1], self.cfg.head_dim, self.cfg.rope_theta, h.device, h.dtype)
        for i, layer in enumerate(self.layers):
            h = layer(h, cos, sin)
            captured.append((f"layer{i}", h))
        h = self.norm(h)
        captured.append(("final_norm", h))
        return captured, self.lm_head(h)

    def forward(self, ids: Tensor) -> Tensor:
        return self.forward_capture(ids)[1]


def build_model(cfg: TinyConfig) -> TinyDecoder:
    """The tiny decoder in float32 on the CPU, weights drawn from ``cfg.seed``.

    Linear weights ~ N(0, 1/fan_in) keep activations O(1) through the layers (so the logits are
    not all near-ties); norm weights are 1 + small noise so they take part in the comparison.
    """
    model = TinyDecoder(cfg)
    gen = torch.Generator().manual_seed(cfg.seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                param.copy_(1.0 + 0.05 * torch.randn(param.shape, generator=gen))
            elif name == "embed.weight":
                param.copy_(torch.randn(param.shape, generator=gen))
            else:
                param.copy_(torch.randn(param.shape, generator=gen) / math.sqrt(param.shape[1]))
    return model.eval()


def input_ids(cfg: TinyConfig) -> Tensor:
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    return torch.randint(0, cfg.vocab_size, (cfg.batch, cfg.seq_len), generator=gen)


# ---------------------------------------------------------------------------------------------
# Running and capturing


@dataclass(frozen=True)
class ForwardOutput:
    """Block outputs and logits as float32 numpy arrays (what the comparison works on)."""

    layers: tuple[tuple[str, npt.NDArray[np.float32]], ...]
    logits: npt.NDArray[np.float32]

    def save(self, path: Path) -> None:
        arrays = {f"layer:{name}": a for name, a in self.layers}
        arrays["logits"] = self.logits
        arrays["__order__"] = np.array([name for name, _ in self.layers])
        np.savez(path, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: Path) -> ForwardOutput:
        with np.load(path, allow_pickle=False) as data:
            order = [str(n) for n in data["__order__"]]
            layers = tuple((n, np.asarray(data[f"layer:{n}"], dtype=np.float32)) for n in order)
            return cls(layers=layers, logits=np.asarray(data["logits"], dtype=np.float32))


def _np(t: Tensor) -> npt.NDArray[np.float32]:
    return np.asarray(t.detach().float().cpu().numpy(), dtype=np.float32)


def to_output(captured: Sequence[tuple[str, Tensor]], logits: Tensor) -> ForwardOutput:
    return ForwardOutput(layers=tuple((n, _np(t)) for n, t in captured), logits=_np(logits))


def place(model: nn.Module, device: torch.device, dtype: torch.dtype) -> nn.Module:
    """A copy of ``model`` on ``device`` in ``dtype`` (the reference model stays untouched)."""
    return copy.deepcopy(model).to(device=device, dtype=dtype)


def run_tiny(cfg: TinyConfig, device: torch.device, dtype: torch.dtype) -> ForwardOutput:
    """Build the seeded model, run it on ``device`` in ``dtype``, capture every block."""
    model = place(build_model(cfg), device, dtype)
    ids = input_ids(cfg).to(device)
    assert isinstance(model, TinyDecoder)
    with torch.no_grad():
        captured, logits = model.forward_capture(ids)
        return to_output(captured, logits)


def reference(cfg: TinyConfig) -> ForwardOutput:
    """The golden: float32 on the CPU, same weights and input as the device run."""
    return run_tiny(cfg, torch.device("cpu"), torch.float32)


# ---------------------------------------------------------------------------------------------
# A local Hugging Face checkpoint (optional: transformers)


def hf_available() -> str | None:
    """None when transformers is installed, else the reason it is not (found, not imported:
    importing it costs about a second, paid only where a checkpoint is loaded)."""
    import importlib.util

    if importlib.util.find_spec("transformers") is None:
        return "transformers is not installed"
    return None


def quiet_transformers() -> None:
    """No progress bars and no advisory logging from transformers (cannenv prints the results)."""
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()


def run_hf(
    model_dir: Path,
    device: torch.device,
    dtype: torch.dtype,
    cfg: TinyConfig,
    timings: dict[str, float] | None = None,
) -> ForwardOutput:
    """A local checkpoint through transformers; block outputs are its ``hidden_states``.

    ``timings``, when given, gets ``load_s`` (import, config, weights, placement) and
    ``forward_s`` (the forward pass alone)."""
    import time

    t0 = time.perf_counter()
    from transformers import AutoConfig, AutoModelForCausalLM

    quiet_transformers()
    hf_cfg = AutoConfig.from_pretrained(model_dir, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, dtype=torch.float32)
    model = model.to(device=device, dtype=dtype).eval()
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    ids = torch.randint(0, int(hf_cfg.vocab_size), (cfg.batch, cfg.seq_len), generator=gen).to(device)
    t1 = time.perf_counter()
    with torch.no_grad():
        out = model(input_ids=ids, output_hidden_states=True)
    if timings is not None:
        timings["load_s"] = round(t1 - t0, 3)
        timings["forward_s"] = round(time.perf_counter() - t1, 3)
    hidden: Sequence[Tensor] = out.hidden_states
    names = ["embed", *[f"hidden{i}" for i in range(1, len(hidden))]]
    return to_output(list(zip(names, hidden, strict=True)), out.logits)


# ---------------------------------------------------------------------------------------------
# Fused-op inputs (NPU check): seeded on the CPU in float32, then cast and moved by the caller


def fused_inputs(cfg: TinyConfig) -> dict[str, Tensor]:
    gen = torch.Generator().manual_seed(cfg.seed + 2)
    b, s, n, d = cfg.batch, cfg.seq_len, cfg.num_heads, cfg.head_dim
    cos, sin = rotary_tables(s, d, cfg.rope_theta, torch.device("cpu"), torch.float32)
    return {
        "x": torch.randn(b, s, cfg.hidden_size, generator=gen),
        "gamma": 1.0 + 0.05 * torch.randn(cfg.hidden_size, generator=gen),
        "q": torch.randn(b, n, s, d, generator=gen),
        "k": torch.randn(b, n, s, d, generator=gen),
        "v": torch.randn(b, n, s, d, generator=gen),
        "cos": cos.view(1, 1, s, d),
        "sin": sin.view(1, 1, s, d),
    }


def eager_fused_refs(t: dict[str, Tensor], cfg: TinyConfig) -> dict[str, Tensor]:
    """The eager formulas each fused op must reproduce, on whatever device/dtype ``t`` holds."""
    return {
        "npu_rms_norm": rms_norm(t["x"], t["gamma"], cfg.rms_eps),
        "npu_rotary_mul": apply_rotary(t["q"], t["cos"], t["sin"]),
        "npu_fusion_attention": causal_attention(t["q"], t["k"], t["v"], 1.0 / math.sqrt(cfg.head_dim)),
    }


def fused_reference(cfg: TinyConfig, dtype: torch.dtype) -> dict[str, npt.NDArray[np.float32]]:
    """CPU float32 values of the fused-op formulas on inputs first rounded through ``dtype``.

    Rounding the inputs the way the device sees them leaves only the op's own error to measure.
    """
    rounded = {k: v.to(dtype).float() for k, v in fused_inputs(cfg).items()}
    with torch.no_grad():
        return {k: _np(v) for k, v in eager_fused_refs(rounded, cfg).items()}
