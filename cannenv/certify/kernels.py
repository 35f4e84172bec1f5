"""`cannenv certify kernels`: build, run and check our own Ascend C smoke kernels.

gather → plan → execute → report:

* :func:`inspect_environment` reads the host (CANN root, build flows, SoC, run modes) — no side effects;
* :func:`plan_kernels` is pure: which kernels, which flow and mode, the exact command lines, or why
  a kernel is skipped (``--dry-run`` stops here);
* :func:`execute` builds each kernel in a work directory, runs it with a timeout through
  :func:`cannenv.host.run`, and compares every output with the numpy golden;
* :func:`run_kernels` chains the three and returns a :class:`KernelsReport` (plain data that the
  certificate embeds; :meth:`KernelsReport.to_stage_result` gives the common stage shape).

The toolchain probe (a buffer copy) is always built first: if it does not build, the report says
the toolchain or environment is broken and does not blame any smoke kernel.

No CANN toolkit → every kernel is ``skip`` with the reason; never ``pass``. The harness self-test
(``target="reference"``) runs the plain C++ reference of each kernel through the same path with
the system compiler; it checks cannenv's harness and certifies nothing about a device.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from cannenv.certify.kernel_build import (
    BuildContext,
    Command,
    build_command,
    configure_command,
    merged_env,
    parse_kernel_time_us,
    relevant_lines,
    run_command,
)
from cannenv.certify.kernel_data import KernelManifest, SocBuildTable, ToleranceTable
from cannenv.certify.kernel_model import (
    BROKEN_TOOLCHAIN,
    COMPARE_MODULES,
    CaseResult,
    KernelResult,
    KernelsEnvironment,
    KernelsPlan,
    KernelsReport,
    PlannedCase,
    PlannedKernel,
    Status,
    StepResult,
    StepStatus,
    Target,
    Timeouts,
)
from cannenv.certify.kernel_render import plan_line, render_plan, render_report
from cannenv.certify.kernel_toolkit import (
    MODES,
    Flow,
    Mode,
    ModeAvailability,
    choose_flow,
    detect_flows,
    find_cann_root,
    mode_availability,
    soc_target,
)
from cannenv.errors import CannenvError
from cannenv.host import Host, run

# The values live in kernel_model and the rendering in kernel_render; both stay importable from here.
__all__ = ["KernelsPlan", "KernelsReport", "plan_line", "render_plan", "render_report"]


def resolve_soc(host: Host, facts: Any = None) -> tuple[str | None, str]:
    """The SoC from saved facts (``cannenv.facts.Facts``), else the live host's npu-smi board query.

    Returns ``(soc or None, source)``. Never raises for a host without an NPU.
    """
    if facts is not None:
        return getattr(getattr(facts, "devices", None), "soc", None), "facts"
    if not host.allow_commands:
        return None, "facts"
    from cannenv.probes import collect

    found = collect(host, only=("npu",))
    return found.devices.soc, "facts (npu-smi board query)"


def inspect_environment(
    host: Host,
    *,
    soc: str | None = None,
    soc_source: str = "--soc",
    cann: str | None = None,
    table: SocBuildTable | None = None,
) -> KernelsEnvironment:
    """Gather: CANN root, flows the toolkit ships, and the SoC mapped through ``socs.yaml``."""
    from cannenv.certify.kernel_data import shipped_soc_table

    cann_root = find_cann_root(host, explicit=cann)
    toolkit = detect_flows(host, cann_root.path) if cann_root.path else None
    target = None
    reason = None
    if soc:
        try:
            target = soc_target(soc, table or shipped_soc_table(), source=soc_source)
        except CannenvError as exc:
            if soc_source == "--soc":
                raise  # the user's own input: exit 2 with the did-you-mean hint
            reason = f"SoC {soc!r} (from {soc_source}) has no kernel build mapping: {exc.message}"
    else:
        reason = "SoC unknown: no NPU reported by npu-smi and no --soc given"
    modes: dict[str, tuple[ModeAvailability, ...]] = {}
    if toolkit is not None and target is not None and cann_root.path is not None:
        for flow in toolkit.available:
            modes[flow] = mode_availability(host, cann_root.path, flow, target)
    missing = tuple(m for m in COMPARE_MODULES if importlib.util.find_spec(m) is None)
    return KernelsEnvironment(
        live=host.is_live,
        cann=cann_root,
        toolkit=toolkit,
        soc=target,
        soc_reason=reason,
        modes=modes,
        missing_modules=missing,
    )


# ------------------------------------------------------------------------------------------- plan
def _mode_hint(modes: tuple[ModeAvailability, ...], wanted: Mode | None) -> str | None:
    possible = [m.mode for m in modes if m.available and m.mode != wanted]
    if possible:
        return "possible here: " + ", ".join(f"--mode {m}" for m in possible)
    return None


def plan_kernels(
    env: KernelsEnvironment,
    manifests: tuple[KernelManifest, ...],
    *,
    mode: Mode = "npu",
    target: Target = "device",
    flow: Flow | None = None,
    work_dir: str = "<work>",
    kernels_dir: str,
) -> KernelsPlan:
    """Pure: what will be built and run, with which commands, or why it is skipped."""
    work = PurePosixPath(work_dir)
    kdir = PurePosixPath(kernels_dir)
    skip: str | None = None
    hint: str | None = None
    modes: tuple[ModeAvailability, ...] = ()
    ctx: BuildContext | None = None
    chosen: Flow | None
    plan_mode: Mode | None = mode

    if target == "reference":
        chosen, flow_reason, plan_mode = (
            "reference",
            "harness self-test: C++ references, system compiler",
            None,
        )
        ctx = BuildContext(flow="reference")
    elif env.cann.path is None or env.toolkit is None:
        chosen, flow_reason = None, "no toolkit"
        skip = env.cann.reason or "no CANN toolkit"
        hint = (
            "install the CANN toolkit and `source <install>/ascend-toolkit/set_env.sh` "
            "(or <install>/cann/set_env.sh on CANN >= 8.5), or set ASCEND_HOME_PATH"
        )
    elif env.soc is None:
        chosen, flow_reason = None, "no SoC"
        skip = env.soc_reason or "SoC unknown"
        hint = "pass --soc, e.g. --soc Ascend910B3 (npu-smi info: Name column, prefixed with Ascend)"
    else:
        chosen, flow_reason = choose_flow(env.toolkit, env.soc, wanted=flow)
        if chosen is None:
            skip = f"no usable build flow: {flow_reason}"
        else:
            modes = env.modes.get(chosen, ())
            this = next(m for m in modes if m.mode == mode)
            if not this.available:
                skip = f"run mode {mode} is not possible here: {this.reason}"
                hint = _mode_hint(modes, mode)
            ctx = BuildContext(
                flow=chosen,
                mode=mode,
                cann_root=env.cann.path,
                asc_config_dir=env.toolkit.asc_config_dir,
                target=env.soc,
            )
    if not env.live and skip is None:
        skip = "the host is a tree on disk (--root), not the live system: nothing can be built or run"
    if env.missing_modules and skip is None:
        skip = f"{' and '.join(env.missing_modules)} not installed in this Python: it computes the goldens"
        hint = "pip install numpy (or 'cannenv[llm]')"

    from cannenv.certify.launch import check_case

    buffers = None
    source: str | None = None
    family = env.soc.family if env.soc is not None and target == "device" else None
    if family is not None:
        from cannenv.certify.kernel_data import shipped_soc_table

        table = shipped_soc_table()
        info = table.families.get(family)
        buffers = info.buffers if info is not None else None
        if buffers is not None:
            refs = [table.sources[k] for k in buffers.sources]
            source = "; ".join(r.title + (f" <{r.url}>" if r.url else "") for r in refs)
    planned: list[PlannedKernel] = []
    for manifest in manifests:
        kskip = skip
        if (
            kskip is None
            and target == "device"
            and env.soc is not None
            and env.soc.family not in manifest.written_for.families
        ):
            families = ", ".join(manifest.written_for.families)
            kskip = f"written for {families}; {env.soc.soc} is family {env.soc.family}"
        build_dir = work / manifest.name / "build"
        configure = build = None
        cases: list[PlannedCase] = []
        for case in manifest.cases:
            run_cmd = None
            if ctx is not None and kskip is None:
                run_cmd = run_command(ctx, manifest, case, build_dir, work / manifest.name / "data" / case.id)
            problems, unchecked = check_case(manifest.name, case, buffers, family=family, source=source)
            cases.append(
                PlannedCase(
                    launch_problems=problems,
                    unchecked_buffers=unchecked if target == "device" else (),
                    id=case.id,
                    kernel_symbol=case.kernel_symbol,
                    launch_symbol=case.launch_symbol,
                    block_dim=case.block_dim,
                    tiling=dict(case.tiling),
                    golden=case.golden,
                    tolerance=case.tolerance,
                    run=run_cmd,
                )
            )
        if ctx is not None and kskip is None:
            configure = configure_command(ctx, kdir, manifest, build_dir)
            build = build_command(ctx, build_dir)
        planned.append(
            PlannedKernel(
                name=manifest.name,
                title=manifest.title,
                role=manifest.role,
                written_for=manifest.written_for.families,
                skip_reason=kskip,
                build_dir=str(build_dir) if kskip is None else None,
                configure=configure,
                build=build,
                cases=tuple(cases),
            )
        )
    return KernelsPlan(
        target=target,
        mode=plan_mode,
        flow=chosen,
        flow_reason=flow_reason,
        env=env,
        modes=modes,
        skip_reason=skip,
        hint=hint,
        work_dir=work_dir,
        kernels_dir=kernels_dir,
        kernels=tuple(planned),
    )


# ----------------------------------------------------------------------------------------- report
def _worst(statuses: list[Status]) -> Status:
    if "fail" in statuses:
        return "fail"
    if "error" in statuses:
        return "error"
    if "pass" in statuses:
        return "pass"
    return "skip"


# ---------------------------------------------------------------------------------------- execute
def _step(cmd: Command, *, timeout: float, base_env: Mapping[str, str]) -> tuple[StepResult, str]:
    result = run(cmd.argv, timeout=timeout, env=merged_env(base_env, cmd.env), cwd=cmd.cwd)
    # stderr first: compilers and cmake report errors there, progress goes to stdout.
    output = (result.stderr or "") + ("\n" if result.stdout and result.stderr else "") + (result.stdout or "")
    if result.missing:
        status: StepStatus = "missing"
        excerpt: tuple[str, ...] = (f"{cmd.argv[0]}: executable not found",)
    elif result.timed_out:
        status = "timeout"
        excerpt = (f"no answer within {timeout:.0f} s (killed)", *relevant_lines(output, limit=8))
    elif result.returncode != 0:
        status = "failed"
        excerpt = relevant_lines(output)
    else:
        status = "ok"
        excerpt = ()
    return (
        StepResult(
            status=status,
            command=cmd.shell,
            duration_s=round(result.duration_s, 3),
            returncode=result.returncode,
            excerpt=excerpt,
        ),
        result.stdout or "",
    )


def _describe_failure(step: StepResult, what: str) -> str:
    if step.status == "missing":
        return f"{what}: {step.excerpt[0]}"
    if step.status == "timeout":
        return f"{what} timed out after {step.duration_s:.0f} s"
    return f"{what} failed (exit {step.returncode})"


def _run_case(
    plan: KernelsPlan,
    manifest: KernelManifest,
    planned: PlannedCase,
    tolerances: ToleranceTable,
    timeouts: Timeouts,
    base_env: Mapping[str, str],
) -> CaseResult:
    from cannenv.certify import kernel_compare as kc

    case = next(c for c in manifest.cases if c.id == planned.id)
    assert planned.run is not None and planned.run.cwd is not None
    data_dir = Path(planned.run.cwd)
    if data_dir.exists():
        shutil.rmtree(data_dir)
    inputs = kc.make_inputs(manifest, case)
    for name, arr in inputs.items():
        kc.write_tensor(data_dir / f"{name}.bin", arr)
    expected = kc.golden(case, inputs)
    timeout = timeouts.sim_run_s if plan.mode == "sim" else timeouts.run_s
    step, stdout = _step(planned.run, timeout=timeout, base_env=base_env)
    if step.status != "ok":
        return CaseResult(
            id=case.id, status="fail", reasons=(_describe_failure(step, f"run of case {case.id}"),), run=step
        )
    comparisons = []
    reasons: list[str] = []
    for spec in case.outputs:
        try:
            actual = kc.read_tensor(data_dir / f"{spec.name}.bin", spec)
        except CannenvError as exc:
            reasons.append(f"case {case.id}: {exc.message}")
            continue
        cmp = kc.compare(actual, expected[spec.name], spec, case.tolerance, tolerances.rule(case.tolerance))
        comparisons.append(cmp)
        if not cmp.passed:
            reasons.append(f"case {case.id} output {spec.name}: outside {case.tolerance}: {cmp.detail}")
    t_us = parse_kernel_time_us(stdout)
    nbytes, flops = kc.work_of(case)
    bandwidth = round(nbytes / (t_us * 1e-6) / 1e9, 3) if t_us else None
    gflops = round(flops / (t_us * 1e-6) / 1e9, 3) if t_us and flops and manifest.metric == "flops" else None
    return CaseResult(
        id=case.id,
        status="fail" if reasons else "pass",
        reasons=tuple(reasons),
        run=step,
        comparisons=tuple(c.model_dump(mode="json") for c in comparisons),
        kernel_time_us=t_us,
        bandwidth_gb_s=bandwidth if manifest.metric == "bandwidth" else None,
        gflops=gflops,
    )


def _skipped_kernel(planned: PlannedKernel, reason: str) -> KernelResult:
    return KernelResult(
        name=planned.name,
        title=planned.title,
        role=planned.role,
        status="skip",
        reasons=(reason,),
        cases=tuple(CaseResult(id=c.id, status="skip", reasons=(reason,)) for c in planned.cases),
    )


def _rejected_kernel(planned: PlannedKernel, problems: tuple[str, ...]) -> KernelResult:
    reasons = tuple(f"launch parameters rejected before launch: {p}" for p in problems)
    return KernelResult(
        name=planned.name,
        title=planned.title,
        role=planned.role,
        status="error",
        reasons=reasons,
        cases=tuple(
            CaseResult(
                id=c.id,
                status="error" if c.launch_problems else "skip",
                reasons=c.launch_problems or ("not run: another case of this kernel was rejected",),
            )
            for c in planned.cases
        ),
    )


def execute(
    plan: KernelsPlan,
    manifests: tuple[KernelManifest, ...],
    *,
    tolerances: ToleranceTable | None = None,
    timeouts: Timeouts | None = None,
    base_env: Mapping[str, str] | None = None,
) -> tuple[KernelResult, ...]:
    """Build and run what the plan says, kernel by kernel; the toolchain probe first."""
    import os

    from cannenv.certify.kernel_data import shipped_tolerances

    tol = tolerances or shipped_tolerances()
    tmo = timeouts or Timeouts()
    env = dict(os.environ if base_env is None else base_env)
    by_name = {m.name: m for m in manifests}
    results: list[KernelResult] = []
    probe_broken: str | None = None
    for planned in plan.kernels:
        if planned.skip_reason is not None:
            results.append(_skipped_kernel(planned, planned.skip_reason))
            continue
        rejected = [p for c in planned.cases for p in c.launch_problems]
        if rejected:
            # Checked on the host against the SoC table: never built, never launched.
            results.append(_rejected_kernel(planned, tuple(rejected)))
            continue
        if probe_broken is not None:
            results.append(_skipped_kernel(planned, f"not attempted: {probe_broken}"))
            continue
        manifest = by_name[planned.name]
        assert planned.configure is not None and planned.build is not None and planned.build_dir is not None
        Path(planned.build_dir).mkdir(parents=True, exist_ok=True)
        is_probe = planned.role == "toolchain-probe"
        configure, _ = _step(planned.configure, timeout=tmo.configure_s, base_env=env)
        build = None
        failed_step = configure if configure.status != "ok" else None
        what = "configure"
        if failed_step is None:
            build, _ = _step(planned.build, timeout=tmo.build_s, base_env=env)
            failed_step = build if build.status != "ok" else None
            what = "build"
        build_s = round(configure.duration_s + (build.duration_s if build else 0.0), 3)
        status: Status
        reasons: tuple[str, ...]
        if failed_step is not None:
            reason = _describe_failure(failed_step, f"{what} of {planned.name}")
            if is_probe:
                probe_broken = f"{BROKEN_TOOLCHAIN}: the toolchain probe did not {what}"
                reason = f"{BROKEN_TOOLCHAIN}: the toolchain probe (a buffer copy) failed to {what}"
            status, reasons = "fail", (reason,)
            cases = tuple(
                CaseResult(id=c.id, status="skip", reasons=(f"not run: {what} failed",))
                for c in planned.cases
            )
        else:
            cases = tuple(_run_case(plan, manifest, c, tol, tmo, env) for c in planned.cases)
            reasons = tuple(r for c in cases for r in c.reasons)
            status = _worst([c.status for c in cases])
            if is_probe and status == "fail":
                reasons = (
                    "the toolchain probe built but did not run correctly: runtime, driver or device broken",
                    *reasons,
                )
        results.append(
            KernelResult(
                name=planned.name,
                title=planned.title,
                role=planned.role,
                status=status,
                reasons=reasons,
                configure=configure,
                build=build,
                build_s=build_s,
                cases=cases,
            )
        )
    return tuple(results)


def summarize(
    plan: KernelsPlan, results: tuple[KernelResult, ...], *, duration_s: float, work_dir: str | None
) -> KernelsReport:
    """Fold kernel results into the stage verdict."""
    statuses = [k.status for k in results]
    status: Status = _worst(statuses) if results else "skip"
    reasons: list[str] = []
    warnings: list[str] = []
    if plan.skip_reason is not None:
        reasons.append(plan.skip_reason)
    for k in results:
        if k.status in ("fail", "error"):
            reasons.extend(f"{k.name}: {r}" for r in k.reasons)
        elif k.status == "skip" and plan.skip_reason is None:
            (warnings if status == "pass" else reasons).extend(f"{k.name} skipped: {r}" for r in k.reasons)
    counts = {s: statuses.count(s) for s in ("pass", "fail", "skip", "error") if statuses.count(s)}
    where = (
        "reference (system compiler)" if plan.target == "reference" else f"mode {plan.mode}, flow {plan.flow}"
    )
    if status == "skip":
        summary = f"skipped: {plan.skip_reason or 'no kernel ran'}"
    else:
        summary = f"{status}: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + f" ({where})"
    certifies = plan.target == "device" and status == "pass"
    metrics: dict[str, Any] = {
        "target": plan.target,
        "mode": plan.mode,
        "flow": plan.flow,
        "soc": plan.env.soc.soc if plan.env.soc else None,
        "counts": counts,
        "kernels": {
            k.name: {
                "status": k.status,
                "build_s": k.build_s,
                "cases": {
                    c.id: {
                        "status": c.status,
                        "kernel_time_us": c.kernel_time_us,
                        "bandwidth_gb_s": c.bandwidth_gb_s,
                        "gflops": c.gflops,
                        "max_abs_err": max((x["max_abs_err"] for x in c.comparisons), default=None),
                        "cosine": min((x["cosine"] for x in c.comparisons), default=None),
                    }
                    for c in k.cases
                },
            }
            for k in results
        },
    }
    hint = plan.hint
    if status == "fail" and any(k.role == "toolchain-probe" and k.status == "fail" for k in results):
        hint = "fix the toolkit first: build and run the toolchain probe by hand with the command lines shown"
    return KernelsReport(
        status=status,
        summary=summary,
        reasons=tuple(reasons),
        warnings=tuple(warnings),
        hint=hint,
        certifies=certifies,
        plan=plan,
        kernels=results,
        work_dir=work_dir,
        duration_s=round(duration_s, 3),
        metrics=metrics,
    )


def run_kernels(
    host: Host | None = None,
    *,
    mode: Mode = "npu",
    soc: str | None = None,
    soc_source: str = "--soc",
    cann: str | None = None,
    kernels: tuple[str, ...] = (),
    keep_build: str | Path | None = None,
    target: Target = "device",
    flow: Flow | None = None,
    kernels_dir: Path | None = None,
    dry_run: bool = False,
    timeouts: Timeouts | None = None,
    facts: Any = None,
) -> KernelsReport:
    """The whole stage: gather, plan, (unless ``dry_run``) execute, and report.

    ``soc`` None: taken from ``facts`` (a :class:`cannenv.facts.Facts`) or, on a live host, from
    the doctor's npu probe (npu-smi board query).
    """
    from cannenv.certify.kernel_data import load_manifests, select_kernels, shipped_manifests
    from cannenv.resources import smoke_kernels_dir

    if mode not in MODES:  # pragma: no cover - click restricts it
        raise ValueError(mode)
    host = host or Host.live()
    kdir = kernels_dir or smoke_kernels_dir()
    manifests = select_kernels(load_manifests(kdir) if kernels_dir else shipped_manifests(), kernels)
    if soc is None and target == "device":
        soc, soc_source = resolve_soc(host, facts)
    env = inspect_environment(host, soc=soc, soc_source=soc_source, cann=cann)
    start = time.monotonic()
    tmp: str | None = None
    if keep_build is not None:
        work = Path(keep_build).resolve()
        work.mkdir(parents=True, exist_ok=True)
    elif dry_run:
        work = Path("<work>")
    else:
        tmp = tempfile.mkdtemp(prefix="cannenv-kernels-")
        work = Path(tmp)
    plan = plan_kernels(
        env, manifests, mode=mode, target=target, flow=flow, work_dir=str(work), kernels_dir=str(kdir)
    )
    try:
        if dry_run:
            results: tuple[KernelResult, ...] = ()
        else:
            results = execute(plan, manifests, timeouts=timeouts, base_env=host.env)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report = summarize(
        plan, results, duration_s=time.monotonic() - start, work_dir=str(work) if keep_build else None
    )
    if dry_run:
        dry = {"summary": "dry run: " + plan_line(plan), "status": "skip", "certifies": False}
        return report.model_copy(update=dry)
    return report
