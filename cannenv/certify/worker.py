"""The door to the device worker (:mod:`cannenv.certify.llm_worker`): start it, bound it, read it.

The device side of the ``llm``, ``fused-*`` and ``perf-*`` stages runs in a subprocess so that a
crash (a segfault in a driver) or a hang (killed at ``--timeout``) becomes a ``fail`` with the
worker's last lines, never a crash of cannenv. :func:`precheck` turns what is certainly missing
here into skips before a worker is started.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from cannenv.certify.stages import StagePlan, StageResult, StageStatus, skipped, stage_result
from cannenv.host import CommandResult, Host
from cannenv.host import run as host_run

if TYPE_CHECKING:
    from cannenv.certify.context import CertifyOptions, RunContext

NPU_HINT = (
    "run on an Atlas host with the driver installed; in a container, pass the devices "
    "(--device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm --device /dev/hisi_hdc)"
)

REFERENCE_MODULES = ("numpy", "torch")
"""What the device worker and the CPU float32 reference import (the optional ``llm`` extra)."""

QUIET_ENV = {
    # transformers' and huggingface_hub's progress bars and advisory logging: the worker's output
    # is only read back on failure, and a bar there would be noise in the stage metrics.
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TQDM_DISABLE": "1",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}


def npu_absent(host: Host) -> str | None:
    """Why there is certainly no NPU here (no /dev/davinci* nodes), or None."""
    try:  # listed inside the root (cannenv/host.py)
        names = host.listdir("/dev")
    except (OSError, ValueError):
        names = []
    if any(n == "davinci_manager" or re.fullmatch(r"davinci\d+", n) for n in names):
        return None
    return "no Ascend NPU on this host: no /dev/davinci* device nodes"


def worker_argv(options: CertifyOptions, task: str, out: Path, *, model: str | None = None) -> list[str]:
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


def worker_env(host: Host) -> dict[str, str]:
    import cannenv

    env = dict(host.env)
    env.update(QUIET_ENV)
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
    wall_s: float = 0.0
    """Seconds from starting the worker to its exit (interpreter start and imports included)."""


def call_worker(
    options: CertifyOptions, host: Host, task: str, out: Path, *, model: str | None = None
) -> WorkerOutcome:
    """Run the worker; a crash or a hang is a ``fail`` outcome, never an exception."""
    res = host_run(
        worker_argv(options, task, out, model=model), timeout=options.timeout_s, env=worker_env(host)
    )
    w = interpret(res, out / "result.json", options.timeout_s)
    return w.model_copy(update={"wall_s": round(res.duration_s, 3)})


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
    from cannenv import records
    from cannenv.errors import InputError

    try:
        loaded = records.parse_json(
            records.read_text(result_path, what="worker result"), source=str(result_path)
        )
        result = loaded if isinstance(loaded, dict) else None
    except (OSError, ValueError, InputError):
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


def not_ok(p: StagePlan, w: WorkerOutcome) -> StageResult:
    """The stage result of a worker run that did not end ``ok``."""
    if w.status == "skip":
        return skipped(p, w.reason, hint=w.hint)
    status: StageStatus = "fail" if w.status == "fail" else "error"
    return stage_result(p, status, w.reason, reasons=(w.reason,), hint=w.hint, metrics=dict(w.details))


def precheck(plans: list[StagePlan], ctx: RunContext) -> list[StageResult] | None:
    """Skips for what is certainly missing here, before a worker is started."""
    if ctx.options.device == "npu":
        absent = npu_absent(ctx.host)
        if absent:
            return [skipped(p, absent, hint=NPU_HINT) for p in plans]
    if not ctx.host.is_live:
        reason = (
            f"the host is a tree on disk (--root {ctx.host.root}), not the live system: "
            "device stages run only on the machine itself"
        )
        return [skipped(p, reason, hint="run cannenv certify on the host without --root") for p in plans]
    missing = [m for m in REFERENCE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        reason = f"{' and '.join(missing)} not installed in this Python ({sys.executable})"
        hint = "pip install 'cannenv[llm]' (numpy and a CPU build of torch, for the reference)"
        return [skipped(p, reason, hint=hint) for p in plans]
    return None
