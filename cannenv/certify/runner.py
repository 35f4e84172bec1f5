"""Plan and run certification stages.

``plan()`` is pure: from the options it lists the stages (printed first by the CLI). ``run()``
executes them group by group — doctor (level 1, here), kernels (level 2, here, through
:mod:`cannenv.certify.kernels`), then the LLM forward pass and torch_npu fused ops
(:mod:`cannenv.certify.forward`) and the performance probes (:mod:`cannenv.certify.perf_stage`),
each device part in a worker subprocess (:mod:`cannenv.certify.worker`) — and returns one
:class:`StageResult` per planned stage, whatever happens: a crash in one group becomes ``error``
results for that group, never a missing stage, so the certificate is always complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from cannenv import values
from cannenv.certify.context import CertifyOptions as CertifyOptions
from cannenv.certify.context import DtypeChoice as DtypeChoice
from cannenv.certify.context import RunContext as RunContext
from cannenv.certify.context import Scope as Scope
from cannenv.certify.context import device_checks_off as device_checks_off
from cannenv.certify.forward import FUSED_STAGES
from cannenv.certify.stages import (
    Level,
    StagePlan,
    StageResult,
    errored,
    skipped,
    stage_result,
)
from cannenv.host import Host

if TYPE_CHECKING:
    pass

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
            # A group of one: the stage took the whole group's time. In a larger group (fused
            # ops, perf) each stage reports its own share from the worker; a stage that did not
            # run (a skip before the worker started) took no time of its own.
            if r.duration_s == 0.0 and len(members) == 1:
                r = r.model_copy(update={"duration_s": elapsed})
            results.append(r)
            if on_result is not None:
                on_result(r)
    return results


def _group_of(stage_id: str) -> Group:
    from cannenv.certify import forward, perf_stage

    if stage_id == "doctor":
        return doctor_group
    if stage_id == "kernels":
        return kernels_group
    if stage_id == "llm":
        return forward.llm_group
    if stage_id == "llm-model":
        return forward.llm_model_group
    if stage_id.startswith("fused-"):
        return forward.fused_group
    if stage_id.startswith("perf-"):
        return perf_stage.perf_group
    raise ValueError(f"unknown stage {stage_id!r}")


# ---------------------------------------------------------------------------------------------
# Level 1 and 2: the doctor (engineer B) and the smoke kernels (engineer C)


def doctor_group(plans: list[StagePlan], ctx: RunContext) -> list[StageResult]:
    (p,) = plans
    from cannenv import checks

    target = ctx.target()
    if target is None:
        return [errored(p, f"collecting host facts failed: {ctx.facts_error}")]
    facts = ctx.facts()
    assert facts is not None
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
        "stack_how": choice.how,
        "stack_reason": choice.reason,
        "device_checks": "judged" if target.no_devices is None else f"skipped: {target.no_devices}",
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
                ran=True,
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
