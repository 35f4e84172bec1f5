"""Level 3 forward-pass stages: the tiny decoder (``llm``), a local checkpoint (``llm-model``) and
torch_npu's fused ops (``fused-*``), each on the device (in the worker) against the CPU float32
reference (in this process).

The worker and the reference run at the same time: the reference is computed here while the
worker starts its interpreter, imports torch and runs, so on a CPU host the stage costs about one
interpreter start plus the larger of the two, not their sum. Each stage records its time by
phase in ``metrics.timings`` (``worker_wall_s``, ``reference_s``, the worker's own forward times)
so the overhead beyond the forward passes is visible (benchmarks/bench_certify_llm.py).
"""

from __future__ import annotations

import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.certify.stages import StagePlan, StageResult, StageStatus, skipped, stage_result
from cannenv.certify.worker import call_worker, not_ok, precheck

if TYPE_CHECKING:
    from cannenv.certify.context import RunContext

HF_HINT = "pip install 'cannenv[hf]' (transformers) to certify a local checkpoint"

FUSED_STAGES = {
    "npu_rms_norm": "fused-rms-norm",
    "npu_rotary_mul": "fused-rotary-mul",
    "npu_fusion_attention": "fused-attention",
}


def llm_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    return precheck(plans, ctx) or _forward_stage(plans, ctx, model=None)


def llm_model_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    (p,) = plans
    model = ctx.options.model_dir
    assert model is not None  # checked (checkpoint.inspect) before the run started
    pre = precheck(plans, ctx)
    if pre:
        return pre
    from cannenv.certify import llm

    reason = llm.hf_available()
    if reason:
        return [skipped(p, reason, hint=HF_HINT)]
    return _forward_stage(plans, ctx, model=model)


def _forward_stage(plans: list[StagePlan], ctx: RunContext, *, model: str | None) -> list[StageResult]:
    (p,) = plans
    with tempfile.TemporaryDirectory(prefix="cannenv-llm-") as tmp, ThreadPoolExecutor(1) as pool:
        out = Path(tmp)
        started = time.perf_counter()
        pending = pool.submit(call_worker, ctx.options, ctx.host, "llm", out, model=model)
        t0 = time.perf_counter()  # the reference's time includes importing torch here (once per run)
        cpu0 = time.thread_time()
        from cannenv.certify import llm

        cfg = llm.TinyConfig(seed=ctx.options.seed)
        if model:
            import torch

            ref_timings: dict[str, float] = {}
            try:
                ref = llm.run_hf(Path(model), torch.device("cpu"), torch.float32, cfg, ref_timings)
            except ImportError as exc:  # installed but broken: it cannot run here
                pending.result()
                return [skipped(p, f"transformers cannot be imported here ({exc})", hint=HF_HINT)]
        else:
            ref_timings = {}
            ref = llm.reference(cfg)
        reference_s = time.perf_counter() - t0
        reference_cpu_s = time.thread_time() - cpu0
        w = pending.result()
        if w.status != "ok" or w.result is None:
            return [not_ok(p, w)]
        device_out = llm.ForwardOutput.load(out / "forward.npz")
        modules = (
            None if model else module_divergence(cfg, out / "modules", str(w.result.get("dtype", "fp32")))
        )
    ctx.device_info = w.result.get("device")
    result = judge_forward(p, ref, device_out, w.result, modules)
    timings = {
        **result.metrics.get("timings", {}),
        "worker_wall_s": w.wall_s,
        "reference_s": round(reference_s, 3),
        "reference_cpu_s": round(reference_cpu_s, 3),
        "worker_cpu_s": w.result.get("cpu_s"),
        **{f"reference_{k}": v for k, v in ref_timings.items()},
        "stage_s": round(time.perf_counter() - started, 3),
    }
    metrics = {**result.metrics, "timings": timings}
    if model and ctx.checkpoint is not None:
        metrics["checkpoint"] = ctx.checkpoint.record()
        metrics.pop("config", None)  # the checkpoint's own config is in metrics.checkpoint
        metrics["input"] = w.result.get("config")
    return [result.model_copy(update={"metrics": metrics})]


def module_divergence(cfg: Any, folder: Path, dtype: str) -> dict[str, Any] | None:
    """The tiny decoder's first divergent module (``named_modules()`` name) under the precision
    policy (docs/precision.md): the worker's module outputs against the CPU float32 ones. None when
    the worker wrote none (an older worker, a checkpoint run)."""
    import json

    from cannenv.certify import llm
    from cannenv.precision import capture
    from cannenv.precision.policy import load_policy
    from cannenv.precision.report import Side, build, judge_entry

    order_file = folder / "order.json"
    if not order_file.is_file():
        return None
    order = [(str(n), int(c), int(k)) for n, c, k in json.loads(order_file.read_text())]
    device = capture.Spool(folder, order=order)
    policy = load_policy()
    limits = policy.for_dtype(dtype)
    with tempfile.TemporaryDirectory(prefix="cannenv-llm-ref-") as tmp:
        ids = llm.input_ids(cfg)

        def forward(m: Any) -> Any:
            return m.forward_capture(ids)

        ref = capture.spool_reference(llm.build_model(cfg), forward, Path(tmp))
        ref_index = ref.index()
        entries = []
        for i, (name, call, n) in enumerate(device.order):
            at = ref_index.get((name, call))
            metrics = None
            if at is not None and ref.order[at][2] == n:
                metrics = capture.compare_arrays(
                    [ref.get(at, j) for j in range(n)], [device.get(i, j) for j in range(n)]
                )
            entries.append(judge_entry(i, name, call, metrics, policy, limits))
    side = Side(label="tiny", device="-", dtype=dtype, source="-")
    report = build(mode="run", reference=side, candidate=side, dtype=dtype, policy=policy, entries=entries)
    fd = report.first_divergence
    return {
        "module": None if fd is None else fd.module,
        "crossed": [] if fd is None else fd.crossed,
        "path": [] if fd is None else fd.path,
        "policy": report.limits,
        "worst": [
            {"module": e.module, "max_rel_error": e.metrics.max_rel_error if e.metrics else None}
            for e in report.worst[:5]
        ],
        "replay": "not run in certify: `cannenv precision run` replays the module on the reference's inputs",
    }


def judge_forward(
    p: StagePlan, ref: Any, out: Any, worker: dict[str, Any], modules: dict[str, Any] | None = None
) -> StageResult:
    """Compare a device forward with the reference; name the first layer past its threshold."""
    from cannenv.certify.metrics import compare_logits, load_thresholds, localise

    th = load_thresholds()
    dtype = str(worker.get("dtype", "fp32"))
    limits = th.for_dtype(dtype)
    cmp = compare_logits(ref.logits, out.logits, limits.logits, margin_rel=th.top1_margin_rel)
    loc = localise(ref.layers, out.layers, limits.layers)
    dev = worker.get("device") or {}
    where = f"{dev.get('name', dev.get('kind', '?'))} {dtype}"
    m = cmp.metrics
    top = "n/a" if m["top1_agreement"] is None else f"{m['top1_agreement']:.1%}"
    summary = (
        f"{where}: logits cosine {_f(m['cosine'])}, max rel err {_f(m['max_rel_error'])}, "
        f"top-1 {top} of {m['top1_counted']} clear positions"
    )
    metrics: dict[str, Any] = {
        "device": dev,
        "dtype": dtype,
        "dtype_reason": worker.get("dtype_reason"),
        "model": worker.get("model"),
        "config": worker.get("config"),
        "logits": m,
        "checks": [c.model_dump() for c in cmp.checks],
        "layers": [r.model_dump() for r in loc.layers],
        "first_bad_layer": loc.first_bad,
        "first_divergence": modules,
        "timings": worker.get("timings", {}),
    }
    if "profile" in worker:
        metrics["profile"] = worker["profile"]
    warnings: tuple[str, ...] = ()
    if cmp.ok:
        if loc.first_bad is not None:
            warnings = (f"logits hold, but {loc.describe()}",)
        return stage_result(p, "pass", summary, warnings=warnings, metrics=metrics)
    reasons = [*cmp.failures()]
    reasons.append(
        loc.describe() if loc.first_bad else "no single layer is past its threshold: the error accumulates"
    )
    if modules is not None:
        reasons.append(
            f"first divergent module: {modules['module']} ({'; '.join(modules['crossed'])})"
            if modules["module"]
            else "no module crosses the precision policy (docs/precision.md): the error accumulates"
        )
    return stage_result(
        p,
        "fail",
        summary,
        reasons=tuple(reasons),
        hint="see metrics.layers for the per-layer errors; compare the op in that layer alone",
        metrics=metrics,
    )


def _f(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, float) else str(x)


# ---------------------------------------------------------------------------------------------
# Level 3: torch_npu fused ops


def fused_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    if ctx.options.device != "npu":
        reason = f"torch_npu fused ops run only on an Ascend NPU (device: {ctx.options.device})"
        return [skipped(p, reason, hint="run with --device npu on an Atlas host") for p in plans]
    pre = precheck(plans, ctx)
    if pre:
        return pre
    import numpy as np

    from cannenv.certify import llm
    from cannenv.certify.metrics import compare_tensor, load_thresholds

    with tempfile.TemporaryDirectory(prefix="cannenv-fused-") as tmp:
        out = Path(tmp)
        w = call_worker(ctx.options, ctx.host, "fused", out)
        if w.status != "ok" or w.result is None:
            return [not_ok(p, w) for p in plans]
        with np.load(out / "fused.npz", allow_pickle=False) as data:
            arrays = {k: np.asarray(data[k]) for k in data.files}
    dtype = str(w.result.get("dtype"))
    limits = load_thresholds().for_dtype(dtype).fused_ops
    cpu_ref = llm.fused_reference(llm.TinyConfig(seed=ctx.options.seed), llm.DTYPES[dtype])
    ops: dict[str, dict[str, Any]] = w.result.get("ops", {})
    by_stage = {sid: op for op, sid in FUSED_STAGES.items()}
    results = []
    for p in plans:
        op = by_stage[p.id]
        info = ops.get(op, {"status": "skip", "reason": "not reported by the worker"})
        if info["status"] == "skip":
            results.append(skipped(p, str(info["reason"]), hint=info.get("hint")))
            continue
        if info["status"] != "ran":
            reason = f"{op} raised on the device: {info.get('reason')}"
            results.append(stage_result(p, "fail", reason, reasons=(reason,)))
            continue
        fused = arrays[f"fused:{op}"]
        vs_eager = compare_tensor(arrays[f"eager:{op}"], fused, limits)
        vs_cpu = compare_tensor(cpu_ref[op], fused, limits)
        metrics = {"dtype": dtype, "vs_eager_on_device": vs_eager.metrics, "vs_cpu_fp32": vs_cpu.metrics}
        summary = (
            f"{op} {dtype}: cosine vs eager {_f(vs_eager.metrics['cosine'])}, "
            f"vs CPU {_f(vs_cpu.metrics['cosine'])}"
        )
        reasons = tuple(
            [f"vs eager on device: {r}" for r in vs_eager.failures()]
            + [f"vs CPU fp32: {r}" for r in vs_cpu.failures()]
        )
        status: StageStatus = "pass" if vs_eager.ok and vs_cpu.ok else "fail"
        r = stage_result(p, status, summary, reasons=reasons, metrics=metrics)
        results.append(r.model_copy(update={"duration_s": float(info.get("stage_s") or 0.0)}))
    return results
