"""Plan and run certification stages; judge the device worker's output against the CPU reference.

``plan()`` is pure: from the options it lists the stages (printed first by the CLI). ``run()``
executes them group by group — doctor (level 1), kernels (level 2), then the LLM forward pass,
torch_npu fused ops and performance probes (level 3), each device part in a worker subprocess
(:mod:`cannenv.certify.llm_worker`) — and returns one :class:`StageResult` per planned stage,
whatever happens: a crash in one group becomes ``error`` results for that group, never a missing
stage, so the certificate is always complete.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from cannenv import values
from cannenv.certify.stages import (
    Device,
    Level,
    StagePlan,
    StageResult,
    StageStatus,
    errored,
    skipped,
    stage_result,
)
from cannenv.host import CommandResult, Host
from cannenv.host import run as host_run

if TYPE_CHECKING:
    from cannenv.facts import Facts

DtypeChoice = Literal["auto", "bf16", "fp16", "fp32"]
Scope = Literal["all", "llm", "perf"]

FUSED_STAGES = {
    "npu_rms_norm": "fused-rms-norm",
    "npu_rotary_mul": "fused-rotary-mul",
    "npu_fusion_attention": "fused-attention",
}


class CertifyOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    level: Level = 3
    stack_id: str | None = None
    device: Device = "npu"
    dtype: DtypeChoice = "auto"
    model_dir: str | None = None
    profile: bool = False
    seed: int = 0
    timeout_s: float = 900.0
    """Limit for each device worker run; past it the run is killed and the stage fails (hang)."""
    python: str | None = None
    """Interpreter for the worker (default: the one running cannenv)."""


# ---------------------------------------------------------------------------------------------
# Plan (pure)


def plan(options: CertifyOptions, scope: Scope = "all") -> list[StagePlan]:
    from cannenv.certify.perf import load_perf_data

    dev = options.device
    stages: list[StagePlan] = []

    def add(sid: str, title: str, level: Level, needs: str) -> None:
        stages.append(StagePlan(id=sid, title=title, level=level, needs=needs))

    if scope == "all" and options.level >= 1:
        add(
            "doctor",
            "Host against the stack (cannenv doctor)",
            1,
            "the doctor's probes and checks; a stack from the matrix (--stack) or the best match",
        )
    if scope == "all" and options.level >= 2:
        add(
            "kernels",
            "Ascend C smoke kernels",
            2,
            "a CANN toolkit with the Ascend C compiler and an NPU (or simulator)",
        )
    if scope in ("all", "llm") and (options.level >= 3 or scope == "llm"):
        add(
            "llm",
            f"Tiny decoder forward pass on {dev} vs CPU fp32",
            3,
            _needs(dev) + "; CPU torch for the reference",
        )
        if options.model_dir:
            add(
                "llm-model",
                f"Checkpoint {options.model_dir} on {dev} vs CPU fp32",
                3,
                _needs(dev) + "; transformers",
            )
        for op, sid in FUSED_STAGES.items():
            add(
                sid,
                f"torch_npu.{op} vs eager formula",
                3,
                "an Ascend NPU with torch_npu (A2/A3 for npu_fusion_attention)",
            )
    if scope in ("all", "perf") and (options.level >= 3 or scope == "perf"):
        shapes = load_perf_data().shapes[dev]
        for dt in shapes.dtypes:
            add(
                f"perf-matmul-{dt}",
                f"{dt} matmul {shapes.matmul_n}³ throughput vs peak",
                3,
                _needs(dev) + "; a known peak (platform ini / published table)",
            )
        add(
            "perf-bandwidth",
            f"device copy bandwidth ({shapes.copy_mib} MiB) vs peak",
            3,
            _needs(dev) + "; a known bandwidth peak",
        )
    return stages


def _needs(device: str) -> str:
    return {
        "npu": "an Ascend NPU (/dev/davinci*) and torch_npu",
        "cuda": "an NVIDIA GPU and a CUDA build of torch",
        "cpu": "CPU torch",
    }[device]


# ---------------------------------------------------------------------------------------------
# Context shared by the stages of one run


class RunContext:
    """Lazily gathered things several stages (and the certificate) share."""

    def __init__(self, options: CertifyOptions, host: Host) -> None:
        self.options = options
        self.host = host
        self._facts: Facts | None = None
        self.facts_error: str | None = None
        self.device_info: dict[str, Any] | None = None

    def facts(self) -> Facts | None:
        if self._facts is None and self.facts_error is None:
            try:
                from cannenv.probes import collect

                self._facts = collect(self.host)
            except Exception as exc:  # the probes are engineer B's; never let them sink a run
                self.facts_error = f"{type(exc).__name__}: {exc}"
        return self._facts


Group = Callable[[list[StagePlan], RunContext], list[StageResult]]


def run(
    plans: Sequence[StagePlan],
    options: CertifyOptions,
    host: Host | None = None,
    *,
    on_result: Callable[[StageResult], None] | None = None,
    context: RunContext | None = None,
) -> list[StageResult]:
    """Run every planned stage; always returns one result per plan, in plan order."""
    ctx = context or RunContext(options, host or Host.live())
    groups: list[tuple[Group, list[StagePlan]]] = []
    for p in plans:
        fn = _group_of(p.id)
        if groups and groups[-1][0] is fn:
            groups[-1][1].append(p)
        else:
            groups.append((fn, [p]))
    results: list[StageResult] = []
    for fn, members in groups:
        start = time.monotonic()
        try:
            got = {r.id: r for r in fn(members, ctx)}
        except Exception as exc:
            got = {
                p.id: errored(
                    p,
                    f"cannenv failed while running this stage: {type(exc).__name__}: {exc}",
                    hint="this is a bug in cannenv; rerun with --debug and report it",
                )
                for p in members
            }
        elapsed = round(time.monotonic() - start, 3)
        for p in members:
            r = got.get(p.id) or errored(p, "the stage produced no result (bug)")
            if r.duration_s == 0.0:
                r = r.model_copy(update={"duration_s": elapsed})
            results.append(r)
            if on_result is not None:
                on_result(r)
    return results


def _group_of(stage_id: str) -> Group:
    if stage_id == "doctor":
        return doctor_group
    if stage_id == "kernels":
        return kernels_group
    if stage_id == "llm":
        return llm_group
    if stage_id == "llm-model":
        return llm_model_group
    if stage_id.startswith("fused-"):
        return fused_group
    if stage_id.startswith("perf-"):
        return perf_group
    raise ValueError(f"unknown stage {stage_id!r}")


# ---------------------------------------------------------------------------------------------
# Level 1 and 2: the doctor (engineer B) and the smoke kernels (engineer C)


def doctor_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    (p,) = plans
    from cannenv import checks
    from cannenv.checks.stack import choose_target

    facts = ctx.facts()
    if facts is None:
        return [errored(p, f"collecting host facts failed: {ctx.facts_error}")]
    from cannenv.matrix import load

    matrix = load()
    # The same target choice as `cannenv doctor`: --stack, else the best match for what is installed.
    target = choose_target(facts, matrix, stack_id=ctx.options.stack_id)
    choice = target.choice
    findings = checks.run(facts, target)
    bad = [f for f in findings if f.status in ("fail", "error")]
    warn = [f for f in findings if f.status == "warn"]
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.status] = counts.get(f.status, 0) + 1
    metrics = {
        "counts": counts,
        "stack": choice.id,
        "findings": [values.dump(f) for f in findings if f.status != "pass"],
    }
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no findings"
    if not bad and not any(f.status in ("pass", "warn") for f in findings):
        # Nothing failed because nothing was judged: that certifies nothing.
        return [
            skipped(
                p,
                f"no doctor check could run here (doctor: {summary})",
                hint="run `cannenv doctor` to see why each check skipped",
                **metrics,
            )
        ]
    return [
        stage_result(
            p,
            "fail" if bad else "pass",
            f"doctor: {summary}",
            reasons=tuple(f"{f.id}: {f.detail or f.title}" for f in bad),
            warnings=tuple(f"{f.id}: {f.detail or f.title}" for f in warn),
            hint="run `cannenv doctor` for the remedies" if bad else None,
            metrics=metrics,
        )
    ]


def kernels_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    (p,) = plans
    from cannenv.certify.kernels import run_kernels

    # The SoC comes from the facts the run already gathered (no second npu-smi query).
    report = run_kernels(ctx.host, mode="npu" if ctx.options.device == "npu" else "cpu", facts=ctx.facts())
    result: StageResult = report.to_stage_result()
    return [result.model_copy(update={"id": p.id, "title": p.title})]


# ---------------------------------------------------------------------------------------------
# The device worker


def npu_absent(host: Host) -> str | None:
    """Why there is certainly no NPU here (no /dev/davinci* nodes), or None."""
    dev = host.path("/dev")
    try:
        names = [e.name for e in dev.iterdir()]
    except OSError:
        names = []
    if any(n == "davinci_manager" or re.fullmatch(r"davinci\d+", n) for n in names):
        return None
    return "no Ascend NPU on this host: no /dev/davinci* device nodes"


NPU_HINT = (
    "run on an Atlas host with the driver installed; in a container, pass the devices "
    "(--device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc)"
)


def _worker_argv(options: CertifyOptions, task: str, out: Path, *, model: str | None = None) -> list[str]:
    argv = [
        options.python or sys.executable,
        "-m",
        "cannenv.certify.llm_worker",
        "--task",
        task,
        "--device",
        options.device,
        "--dtype",
        options.dtype,
        "--seed",
        str(options.seed),
        "--out",
        str(out),
    ]
    if model:
        argv += ["--model", model]
    if options.profile and task == "llm":
        argv.append("--profile")
    return argv


def _worker_env(host: Host) -> dict[str, str]:
    import cannenv

    env = dict(host.env)
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    pkg_parent = str(Path(cannenv.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_parent + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class WorkerOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    result: dict[str, Any] | None
    status: Literal["ok", "skip", "fail", "error"]
    reason: str = ""
    hint: str | None = None
    details: dict[str, Any] = {}


def call_worker(
    options: CertifyOptions, host: Host, task: str, out: Path, *, model: str | None = None
) -> WorkerOutcome:
    """Run the worker; a crash or a hang is a ``fail`` outcome, never an exception."""
    res = host_run(
        _worker_argv(options, task, out, model=model), timeout=options.timeout_s, env=_worker_env(host)
    )
    return interpret(res, out / "result.json", options.timeout_s)


def interpret(res: CommandResult, result_path: Path, timeout_s: float) -> WorkerOutcome:
    tail = _tail(res.stderr or res.stdout)
    if res.missing:
        return WorkerOutcome(result=None, status="error", reason=f"cannot start the worker: {res.describe()}")
    if res.timed_out:
        return WorkerOutcome(
            result=None,
            status="fail",
            reason=f"the device run did not finish within {timeout_s:.0f} s and was killed (hang?)",
            hint="check the device with `npu-smi info`; raise --timeout if first-call compilation is slow",
            details={"stderr_tail": tail},
        )
    result: dict[str, Any] | None = None
    try:
        loaded = json.loads(result_path.read_text(encoding="utf-8"))
        result = loaded if isinstance(loaded, dict) else None
    except (OSError, ValueError):
        result = None
    if result is None:
        how = (
            f"killed by signal {-(res.returncode or 0)}"
            if (res.returncode or 0) < 0
            else f"exit code {res.returncode}"
        )
        return WorkerOutcome(
            result=None,
            status="fail",
            reason=f"the device run died ({how}): {tail[-1] if tail else ''}",
            hint="the last lines of its output are in the stage metrics",
            details={"stderr_tail": tail},
        )
    kind = result.get("outcome")
    if kind == "skip":
        return WorkerOutcome(
            result=result, status="skip", reason=str(result.get("reason")), hint=result.get("hint")
        )
    if kind == "exception" or res.returncode != 0:
        return WorkerOutcome(
            result=result,
            status="fail",
            reason=f"the device run raised {result.get('error', tail)}",
            hint="the traceback is in the stage metrics",
            details={"traceback": str(result.get("traceback", ""))[-4000:]},
        )
    if kind != "ok":
        return WorkerOutcome(result=result, status="error", reason=f"unexpected worker outcome {kind!r}")
    return WorkerOutcome(result=result, status="ok")


def _tail(text: str, n: int = 15) -> list[str]:
    lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("USDT:")]
    return lines[-n:]


def _not_ok(p: StagePlan, w: WorkerOutcome) -> StageResult:
    if w.status == "skip":
        return skipped(p, w.reason, hint=w.hint)
    status: StageStatus = "fail" if w.status == "fail" else "error"
    return stage_result(p, status, w.reason, reasons=(w.reason,), hint=w.hint, metrics=dict(w.details))


REFERENCE_MODULES = ("numpy", "torch")
"""What the device worker and the CPU float32 reference import (the optional ``llm`` extra)."""


def _precheck(plans: list[StagePlan], ctx: RunContext) -> list[StageResult] | None:
    """Skips for what is certainly missing here, before a worker is started."""
    if ctx.options.device == "npu":
        reason = npu_absent(ctx.host)
        if reason:
            return [skipped(p, reason, hint=NPU_HINT) for p in plans]
    missing = [m for m in REFERENCE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        reason = f"{' and '.join(missing)} not installed in this Python ({sys.executable})"
        hint = "pip install 'cannenv[llm]' (numpy and a CPU build of torch, for the reference)"
        return [skipped(p, reason, hint=hint) for p in plans]
    return None


# ---------------------------------------------------------------------------------------------
# Level 3: LLM forward pass


def llm_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    return _precheck(plans, ctx) or _forward_stage(plans, ctx, model=None)


def llm_model_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    (p,) = plans
    model = ctx.options.model_dir
    assert model is not None
    if not Path(model).is_dir():
        return [
            skipped(
                p, f"--model {model!r} is not a directory", hint="give a local Hugging Face checkpoint folder"
            )
        ]
    pre = _precheck(plans, ctx)
    if pre:
        return pre
    from cannenv.certify import llm

    reason = llm.hf_available()
    if reason:
        return [
            skipped(p, reason, hint="pip install 'cannenv[hf]' (transformers) to certify a local checkpoint")
        ]
    return _forward_stage(plans, ctx, model=model)


def _forward_stage(plans: list[StagePlan], ctx: RunContext, *, model: str | None) -> list[StageResult]:
    (p,) = plans
    with tempfile.TemporaryDirectory(prefix="cannenv-llm-") as tmp:
        out = Path(tmp)
        w = call_worker(ctx.options, ctx.host, "llm", out, model=model)
        if w.status != "ok" or w.result is None:
            return [_not_ok(p, w)]
        from cannenv.certify import llm

        device_out = llm.ForwardOutput.load(out / "forward.npz")
        cfg = llm.TinyConfig(seed=ctx.options.seed)
        if model:
            import torch

            ref = llm.run_hf(Path(model), torch.device("cpu"), torch.float32, cfg)
        else:
            ref = llm.reference(cfg)
    ctx.device_info = w.result.get("device")
    return [judge_forward(p, ref, device_out, w.result)]


def judge_forward(p: StagePlan, ref: Any, out: Any, worker: dict[str, Any]) -> StageResult:
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
    pre = _precheck(plans, ctx)
    if pre:
        return pre
    import numpy as np

    from cannenv.certify import llm
    from cannenv.certify.metrics import compare_tensor, load_thresholds

    with tempfile.TemporaryDirectory(prefix="cannenv-fused-") as tmp:
        out = Path(tmp)
        w = call_worker(ctx.options, ctx.host, "fused", out)
        if w.status != "ok" or w.result is None:
            return [_not_ok(p, w) for p in plans]
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
        results.append(stage_result(p, status, summary, reasons=reasons, metrics=metrics))
    return results


# ---------------------------------------------------------------------------------------------
# Level 3: performance


def perf_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    pre = _precheck(plans, ctx)
    if pre:
        return pre
    with tempfile.TemporaryDirectory(prefix="cannenv-perf-") as tmp:
        w = call_worker(ctx.options, ctx.host, "perf", Path(tmp))
    if w.status != "ok" or w.result is None:
        return [_not_ok(p, w) for p in plans]
    return judge_perf(plans, w.result, ctx.options.device, ctx.host)


class Peaks(NamedTuple):
    """The peaks a device's figures are judged against, where each comes from, and whether it is
    a vendor figure (an unverified peak is reported as a ratio but never judged)."""

    tflops: dict[str, float | None]
    """Matmul TFLOP/s per dtype."""
    bandwidth_gbs: float | None
    source: str
    bandwidth_source: str
    bandwidth_verified: bool = True
    tflops_verified: bool = True


def peaks_for(device: str, name: str, host: Host) -> Peaks:
    from cannenv.certify.perf import (
        find_platform_ini,
        load_perf_data,
        npu_matmul_peak,
        parse_platform_ini,
        published_peak,
    )

    data = load_perf_data()
    if device == "cuda":
        row = published_peak(data.cuda_peaks, name)
        if row is None:
            why = f"{name!r} is not in the published-peak table (matrices/certify/perf.yaml)"
            return Peaks({}, None, why, why)
        return Peaks(
            {k: v for k, v in row.tflops.items()},
            row.bandwidth_gbs,
            row.source,
            row.source,
            row.verified,
            row.verified,
        )
    if device == "npu":
        bw_row = published_peak(data.npu_bandwidth, name)
        bw, bw_src, bw_ok = (
            (bw_row.bandwidth_gbs, bw_row.source, bw_row.verified)
            if bw_row
            else (None, f"no bandwidth figure for {name} (not in the platform ini)", True)
        )
        ini_path = find_platform_ini(host, name)
        if ini_path is None:
            why = f"no platform_config/{name}.ini under $ASCEND_HOME_PATH or the default toolkit roots"
            return Peaks({}, bw, why, bw_src, bw_ok)
        ini = parse_platform_ini(
            ini_path.read_text(encoding="utf-8", errors="replace"), source=host.unroot(ini_path)
        )
        tf: dict[str, float | None] = {}
        dtypes: tuple[Literal["bf16", "fp16"], ...] = ("bf16", "fp16")
        for dt in dtypes:
            peak = npu_matmul_peak(ini, dt)
            tf[dt] = None if peak is None else peak / 1e12
        src = (
            f"{host.unroot(ini_path)}: {ini.cube_cores} cube cores × "
            f"{'·'.join(map(str, ini.cube_mnk))} × 2 × "
            f"{ini.cube_freq_mhz:g} MHz"
        )
        return Peaks(tf, bw, src, bw_src, bw_ok)
    cpu = "CPU: no peak is judged, figures only"
    return Peaks({}, None, cpu, cpu)


def judge_perf(plans: list[StagePlan], result: dict[str, Any], device: str, host: Host) -> list[StageResult]:
    from cannenv.certify.perf import judge, load_perf_data

    data = load_perf_data()
    dev = result.get("device") or {}
    name = str(dev.get("name", ""))
    peaks = peaks_for(device, name, host)
    matmul = {m["dtype"]: m for m in result.get("matmul", [])}
    out: list[StageResult] = []
    for p in plans:
        if p.id == "perf-bandwidth":
            copy = result.get("copy") or {}
            j = judge(
                float(copy.get("gbs", 0.0)),
                peaks.bandwidth_gbs,
                data.thresholds,
                what="copy bandwidth",
                unit="GB/s",
                peak_source=peaks.bandwidth_source,
                verified=peaks.bandwidth_verified,
            )
            metrics = {
                **copy,
                "peak_gbs": peaks.bandwidth_gbs,
                "peak_source": peaks.bandwidth_source,
                "ratio": j.ratio,
                "device": dev,
            }
        else:
            dt = p.id.removeprefix("perf-matmul-")
            m = matmul.get(dt)
            if m is None or "skip" in m:
                out.append(skipped(p, str((m or {}).get("skip", f"{dt} matmul was not measured"))))
                continue
            peak = peaks.tflops.get(dt)
            j = judge(
                float(m["tflops"]),
                peak,
                data.thresholds,
                what=f"{dt} matmul",
                unit="TFLOP/s",
                peak_source=peaks.source,
                verified=peaks.tflops_verified,
            )
            metrics = {**m, "peak_tflops": peak, "peak_source": peaks.source, "ratio": j.ratio, "device": dev}
        if j.status == "skip":
            out.append(skipped(p, j.reason, **metrics))
        else:
            out.append(
                stage_result(
                    p,
                    j.status,
                    j.reason,
                    reasons=(j.reason,) if j.status == "fail" else (),
                    warnings=(j.warning,) if j.warning else (),
                    metrics=metrics,
                )
            )
    return out
