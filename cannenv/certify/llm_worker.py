"""The device side of `cannenv certify llm|perf`, run as ``python -m cannenv.certify.llm_worker``.

It runs in its own process so that a crash (a segfault in a driver, an exception from a broken
torch_npu) or a hang (killed at the timeout) becomes a finding instead of taking cannenv down.
Tasks:

``llm``   the tiny decoder (or ``--model DIR``) on the device: ``forward.npz`` with every block's
          output and the logits, plus timings and, with ``--profile``, the top operators.
``fused`` torch_npu's fused ops (npu_rms_norm, npu_rotary_mul, npu_fusion_attention with the causal
          sparse mode) and their eager formulas on the device: ``fused.npz``.
``perf``  matmul throughput and copy bandwidth figures (judged by the parent against peaks).

It writes ``result.json`` into ``--out``: ``{"outcome": "ok" | "skip" | "exception", ...}``. The
parent (cannenv.certify.runner) compares with the CPU reference and judges; nothing here prints
a verdict.
"""

from __future__ import annotations

import os

# Before torch is imported anywhere in this process: a broken torch_npu must not break `import
# torch`; the NPU path imports torch_npu explicitly below.
os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

import argparse
import json
import math
import platform
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cannenv.fsutil import atomic_write_text

RESULT = "result.json"
FORWARD = "forward.npz"
MODULES = "modules"
"""Every module's output of one more forward (``cannenv.precision.capture.Spool``, float32 .npy), so
the parent names the first divergent module, not only the block."""
FUSED = "fused.npz"


class SkipTask(Exception):
    """The task cannot run here; ``reason`` says why and ``hint`` what would make it run."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.hint = hint


@dataclass
class Device:
    kind: str
    torch_device: Any
    name: str
    sync: Callable[[], None]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def is_310p(self) -> bool:
        return self.kind == "npu" and re.match(r"(?i)^ascend310p", self.name) is not None


def open_device(kind: str) -> Device:
    import torch

    base: dict[str, Any] = {"kind": kind, "torch": torch.__version__, "python": platform.python_version()}
    if kind == "cpu":
        name = platform.processor() or platform.machine()
        return Device(kind, torch.device("cpu"), name, lambda: None, {**base, "name": name})
    if kind == "cuda":
        if not torch.cuda.is_available():
            build = (
                "a CPU-only build" if torch.version.cuda is None else f"built for CUDA {torch.version.cuda}"
            )
            raise SkipTask(
                f"torch {torch.__version__} ({build}) sees no CUDA device",
                hint="run on a host with an NVIDIA GPU and a CUDA build of torch",
            )
        # A tight fp32 reference needs true fp32 matmuls on the device.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        name = torch.cuda.get_device_name(0)
        info = {
            **base,
            "name": name,
            "cuda": torch.version.cuda,
            "capability": list(torch.cuda.get_device_capability(0)),
        }
        return Device(kind, torch.device("cuda:0"), name, torch.cuda.synchronize, info)
    if kind == "npu":
        try:
            import torch_npu  # type: ignore[import-not-found, unused-ignore]  # registers "npu"
        except ModuleNotFoundError as exc:
            if exc.name != "torch_npu":
                raise
            raise SkipTask(
                "torch_npu is not installed in this Python",
                hint="install the torch_npu wheel the stack pins (`cannenv doctor` names it)",
            ) from None
        npu: Any = getattr(torch, "npu")  # noqa: B009 - added by torch_npu at import
        if not npu.is_available():
            raise SkipTask(
                "torch_npu sees no NPU (torch.npu.is_available() is False)",
                hint="check `npu-smi info`, the driver and that the container got /dev/davinci* devices",
            )
        npu.set_device(0)
        name = str(npu.get_device_name(0))
        # HF32 would make fp32 matmuls on the device loose (kernels.md §4); keep fp32 true fp32.
        for holder in ("matmul", "conv"):
            obj = getattr(npu, holder, None)
            if obj is not None and hasattr(obj, "allow_hf32"):
                obj.allow_hf32 = False
        info = {**base, "name": name, "soc": name, "torch_npu": getattr(torch_npu, "__version__", None)}
        return Device(kind, torch.device("npu:0"), name, npu.synchronize, info)
    raise SkipTask(f"unknown device kind {kind!r}")


def resolve_dtype(requested: str, dev: Device) -> tuple[str, str]:
    """The dtype to run and why. bf16 on 310P is a skip: its cube has no bf16 (kernels.md §5)."""
    if requested == "auto":
        if dev.is_310p:
            return "fp16", f"{dev.name} has no bf16 (310P): fp16"
        return "bf16", "default bf16"
    if requested == "bf16" and dev.is_310p:
        raise SkipTask(f"bf16 is not supported on {dev.name} (310P)", hint="use --dtype fp16 on 310P")
    if requested == "bf16" and dev.kind == "cuda":
        import torch

        if not torch.cuda.is_bf16_supported():
            raise SkipTask(f"{dev.name} does not support bf16", hint="use --dtype fp16")
    return requested, "requested"


# ---------------------------------------------------------------------------------------------
# Tasks


def task_llm(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    import torch

    from cannenv.certify import llm

    dev = open_device(args.device)
    dtype_name, why = resolve_dtype(args.dtype, dev)
    dtype = llm.DTYPES[dtype_name]
    cfg = llm.TinyConfig(seed=args.seed)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if args.model:
        reason = llm.hf_available()
        if reason is None:
            try:
                import transformers  # noqa: F401
            except ImportError as exc:  # installed but broken
                reason = f"transformers cannot be imported here ({exc})"
        if reason:
            raise SkipTask(
                reason, hint="pip install 'cannenv[hf]' (transformers) to certify a local checkpoint"
            )
        output = llm.run_hf(Path(args.model), dev.torch_device, dtype, cfg, timings)
        dev.sync()
        timings["first_forward_s"] = timings.pop("forward_s")  # one forward, after loading
        model: Any = None
        ids: Any = None
    else:
        base = llm.build_model(cfg)
        model = llm.place(base, dev.torch_device, dtype)
        ids = llm.input_ids(cfg).to(dev.torch_device)
        dev.sync()
        t_load = time.perf_counter()
        timings["load_s"] = t_load - t0
        with torch.no_grad():
            captured, logits = model.forward_capture(ids)
            dev.sync()
            timings["first_forward_s"] = time.perf_counter() - t_load
            output = llm.to_output(captured, logits)
            t1 = time.perf_counter()
            model(ids)
            dev.sync()
            timings["forward_s"] = time.perf_counter() - t1
        spool_modules(model, ids, out / MODULES)
    output.save(out / FORWARD)
    result: dict[str, Any] = {
        "outcome": "ok",
        "device": dev.info,
        "dtype": dtype_name,
        "dtype_reason": why,
        "model": str(args.model) if args.model else "tiny",
        # A checkpoint's own config is recorded by the parent (config.json and weight digests);
        # here only what this run chose: the input shape and seed.
        "config": (
            {"batch": cfg.batch, "seq_len": cfg.seq_len, "seed": cfg.seed} if args.model else cfg.model_dump()
        ),
        "timings": timings,
    }
    if args.profile and model is not None:
        result["profile"] = profile_forward(dev, model, ids)
    return result


def spool_modules(model: Any, ids: Any, folder: Path) -> None:
    """One more forward with hooks writing each module's outputs under ``folder`` (order.json)."""
    from cannenv.precision import capture

    def forward(m: Any) -> Any:
        return m.forward_capture(ids)

    folder.mkdir()
    spool = capture.spool_reference(model, forward, folder)
    atomic_write_text(folder / "order.json", json.dumps(spool.order))


def profile_forward(dev: Device, model: Any, ids: Any, limit: int = 10) -> dict[str, Any]:
    """Top operators of one forward: torch_npu's profiler on NPU, torch.profiler elsewhere."""
    import torch

    from cannenv.certify.perf import top_ops_from_kernel_details

    if dev.kind == "npu":
        import torch_npu  # type: ignore[import-not-found, unused-ignore]

        with tempfile.TemporaryDirectory(prefix="cannenv-prof-") as d:
            prof_mod = torch_npu.profiler
            acts = [prof_mod.ProfilerActivity.CPU, prof_mod.ProfilerActivity.NPU]
            with (
                prof_mod.profile(activities=acts, on_trace_ready=prof_mod.tensorboard_trace_handler(d)),
                torch.no_grad(),
            ):
                model(ids)
                dev.sync()
            # The output folder name is not documented firmly (kernels.md §7): search for the file.
            found = sorted(Path(d).rglob("kernel_details.csv"))
            if not found:
                return {"tool": "torch_npu.profiler", "top_ops": [], "note": "no kernel_details.csv produced"}
            ops = top_ops_from_kernel_details(
                found[0].read_text(encoding="utf-8", errors="replace"), limit=limit
            )
            return {"tool": "torch_npu.profiler", "top_ops": [o.model_dump() for o in ops]}
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.kind == "cuda" else [])
    with profile(activities=acts) as prof, torch.no_grad():
        model(ids)
        dev.sync()
    rows: list[dict[str, Any]] = []
    for ev in prof.key_averages():
        device_us = float(
            getattr(ev, "self_device_time_total", 0.0) or getattr(ev, "self_cuda_time_total", 0.0) or 0.0
        )
        cpu_us = float(ev.self_cpu_time_total)
        use_device = dev.kind == "cuda"
        rows.append(
            {
                "name": str(ev.key),
                "calls": int(ev.count),
                "time_us": device_us if use_device else cpu_us,
                "clock": "device" if use_device else "cpu",
            }
        )
    rows = [r for r in rows if r["time_us"] > 0]
    rows.sort(key=lambda r: float(r["time_us"]), reverse=True)
    return {"tool": "torch.profiler", "top_ops": rows[:limit]}


def task_fused(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    if args.device != "npu":
        raise SkipTask(
            f"torch_npu fused ops run only on an Ascend NPU (device: {args.device})",
            hint="run `cannenv certify llm --device npu` on an Atlas host",
        )
    import torch

    from cannenv.certify import llm

    dev = open_device("npu")
    dtype_name, why = resolve_dtype(args.dtype, dev)
    dtype = llm.DTYPES[dtype_name]
    import torch_npu  # type: ignore[import-not-found, unused-ignore]

    cfg = llm.TinyConfig(seed=args.seed)
    t = {k: v.to(device=dev.torch_device, dtype=dtype) for k, v in llm.fused_inputs(cfg).items()}
    arrays: dict[str, np.ndarray[Any, Any]] = {}
    ops: dict[str, dict[str, Any]] = {}
    with torch.no_grad():
        eager = llm.eager_fused_refs(t, cfg)

        def rms() -> Any:
            return torch_npu.npu_rms_norm(t["x"], t["gamma"], epsilon=cfg.rms_eps)[0]

        def rotary() -> Any:
            return torch_npu.npu_rotary_mul(t["q"], t["cos"], t["sin"])

        def attention() -> Any:
            # Causal via the compressed 2048×2048 upper-triangular mask and sparse_mode=3
            # (right-down causal; equal to left-up for square attention), as transformers'
            # npu_flash_attention integration does it (kernels.md §5).
            mask = torch.triu(torch.ones(2048, 2048, device=dev.torch_device), diagonal=1).bool()
            return torch_npu.npu_fusion_attention(
                t["q"],
                t["k"],
                t["v"],
                cfg.num_heads,
                input_layout="BNSD",
                atten_mask=mask,
                scale=1.0 / math.sqrt(cfg.head_dim),
                keep_prob=1.0,
                sparse_mode=3,
            )[0]

        calls: dict[str, Callable[[], Any]] = {
            "npu_rms_norm": rms,
            "npu_rotary_mul": rotary,
            "npu_fusion_attention": attention,
        }
        for name, fn in calls.items():
            if name == "npu_fusion_attention" and dev.is_310p:
                ops[name] = {
                    "status": "skip",
                    "reason": f"npu_fusion_attention is Atlas A2/A3 only ({dev.name})",
                    "hint": "run on an Atlas A2/A3 NPU to certify it",
                }
                continue
            if not hasattr(torch_npu, name):
                ops[name] = {
                    "status": "skip",
                    "reason": f"torch_npu {getattr(torch_npu, '__version__', '?')} has no {name}",
                    "hint": "install the torch_npu the stack pins (`cannenv doctor` names it)",
                }
                continue
            t0 = time.perf_counter()
            try:
                fused = fn()
                dev.sync()
            except Exception as exc:  # the op failing on the device is the finding
                ops[name] = {"status": "raised", "reason": f"{type(exc).__name__}: {exc}"[:2000]}
                continue
            arrays[f"fused:{name}"] = fused.float().cpu().numpy()
            arrays[f"eager:{name}"] = eager[name].float().cpu().numpy()
            ops[name] = {"status": "ran", "stage_s": round(time.perf_counter() - t0, 3)}
    np.savez(out / FUSED, **arrays)  # type: ignore[arg-type]
    return {"outcome": "ok", "device": dev.info, "dtype": dtype_name, "dtype_reason": why, "ops": ops}


def task_perf(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    from cannenv.certify.perf import load_perf_data, measure_copy, measure_matmul

    dev = open_device(args.device)
    data = load_perf_data()
    shapes = data.shapes[args.device]
    matmul: list[dict[str, Any]] = []
    for dtype in shapes.dtypes:
        if dtype == "bf16" and dev.is_310p:
            matmul.append({"dtype": dtype, "skip": f"bf16 is not supported on {dev.name} (310P)"})
            continue
        t0 = time.perf_counter()
        m = measure_matmul(dev.torch_device, dtype, shapes.matmul_n, data.timing, dev.sync)
        matmul.append({**m, "stage_s": round(time.perf_counter() - t0, 3)})
    t0 = time.perf_counter()
    copy = measure_copy(dev.torch_device, shapes.copy_mib, data.timing, dev.sync)
    copy = {**copy, "stage_s": round(time.perf_counter() - t0, 3)}
    return {"outcome": "ok", "device": dev.info, "matmul": matmul, "copy": copy}


TASKS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "llm": task_llm,
    "fused": task_fused,
    "perf": task_perf,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cannenv.certify.llm_worker")
    ap.add_argument("--task", choices=sorted(TASKS), required=True)
    ap.add_argument("--device", choices=["npu", "cuda", "cpu"], required=True)
    ap.add_argument("--dtype", choices=["auto", "bf16", "fp16", "fp32"], default="auto")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    code = 0
    try:
        result = TASKS[args.task](args, out)
    except SkipTask as skip:
        result = {"outcome": "skip", "reason": skip.reason, "hint": skip.hint}
    except Exception as exc:
        result = {
            "outcome": "exception",
            "error": f"{type(exc).__name__}: {exc}"[:4000],
            "traceback": traceback.format_exc()[-8000:],
        }
        traceback.print_exc()
        code = 1
    # CPU seconds of this whole process (interpreter start and imports included): with the wall
    # time of a shared machine this tells the work from the waiting (benchmarks/bench_certify_llm.py).
    times = os.times()
    result["cpu_s"] = round(times.user + times.system, 3)
    atomic_write_text(out / RESULT, json.dumps(result, indent=2, sort_keys=True, default=str))
    return code


if __name__ == "__main__":
    sys.exit(main())
