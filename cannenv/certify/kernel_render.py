"""`cannenv certify kernels` as text: the plan (``--dry-run``, printed first) and the report.

Renderers only format the plain data of :mod:`cannenv.certify.kernels`; they never run anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cannenv.certify.kernel_model import KernelsPlan, KernelsReport


def plan_line(plan: KernelsPlan) -> str:
    if plan.skip_reason:
        return f"nothing would run: {plan.skip_reason}"
    n = sum(1 for k in plan.kernels if k.skip_reason is None)
    return f"{n} of {len(plan.kernels)} kernels would be built and run"


def render_plan(plan: KernelsPlan) -> str:
    env = plan.env
    lines = ["Plan: cannenv certify kernels"]
    if plan.target == "reference":
        lines.append("  target:  harness self-test (C++ references, system compiler) - certifies nothing")
    else:
        lines.append(f"  CANN:    {env.cann.path or '-'} ({env.cann.source})")
        if env.toolkit is not None:
            flows = ", ".join(env.toolkit.available) or "none"
            lines.append(f"  flows:   {flows} (compiler: {env.toolkit.compiler or 'not found'})")
        if env.soc is not None:
            s = env.soc
            lines.append(
                f"  SoC:     {s.soc} (family {s.family}, from {s.source}): "
                f"SOC_VERSION={s.legacy_soc_version or '-'}, arch={s.npu_arch or '-'}, "
                f"cpu-debug={s.cpu_debug_family or '-'}"
            )
        lines.append(f"  flow:    {plan.flow or '-'} ({plan.flow_reason})")
        lines.append(f"  mode:    {plan.mode}")
        for m in plan.modes:
            lines.append(f"    {m.mode:<4} {'possible' if m.available else 'not possible'}: {m.reason}")
    if plan.skip_reason:
        lines.append(f"  skip:    {plan.skip_reason}")
        if plan.hint:
            lines.append(f"  hint:    {plan.hint}")
    for k in plan.kernels:
        lines.append(f"  - {k.name}: {k.title}" + (f"  [skip: {k.skip_reason}]" if k.skip_reason else ""))
        if k.configure is not None and k.build is not None:
            lines.append(f"      $ {k.configure.shell}")
            lines.append(f"      $ {k.build.shell}")
        for c in k.cases:
            desc = f"      case {c.id}: {c.launch_symbol} block_dim={c.block_dim} tolerance={c.tolerance}"
            lines.append(desc)
            for problem in c.launch_problems:
                lines.append(f"      REJECTED before launch: {problem}")
            if c.unchecked_buffers:
                lines.append(f"      not checked (size unknown): {', '.join(c.unchecked_buffers)}")
            if c.run is not None:
                lines.append(f"      $ {c.run.shell}")
    return "\n".join(lines)


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _command_lines(indent: str, command: str, excerpt: Sequence[str]) -> list[str]:
    """A command that ran, then the excerpt of its output."""
    return [f"{indent}$ {command}", *(f"{indent}| {ln}" for ln in excerpt)]


def render_report(report: KernelsReport, *, verbose: bool = False) -> str:
    lines = [render_plan(report.plan), ""]
    lines.append(f"Result: {report.status.upper()} - {report.summary}")
    if not report.certifies and report.plan.target == "reference":
        lines.append("  (harness self-test: certifies nothing about a device)")
    for k in report.kernels:
        if k.status == "skip":
            # One line per skipped kernel; the reason is shown once when it is the plan's.
            why = "" if report.plan.skip_reason in k.reasons else f": {k.reasons[0]}" if k.reasons else ""
            lines.append(f"  SKIP  {k.name}{why}")
            continue
        build = f"build {_fmt(k.build_s, '.1f')} s" if k.build_s is not None else "not built"
        lines.append(f"  {k.status.upper():<5} {k.name} ({build})")
        for step in (k.configure, k.build):
            if step is not None and step.status != "ok":
                lines.extend(_command_lines("        ", step.command, step.excerpt))
        for c in k.cases:
            run_s = f"run {c.run.duration_s:.2f} s" if c.run else "not run"
            perf = ""
            if c.bandwidth_gb_s is not None:
                perf = f", {c.bandwidth_gb_s:.2f} GB/s"
            if c.gflops is not None:
                perf = f", {c.gflops:.2f} GFLOP/s"
            if c.kernel_time_us is not None:
                perf = f", kernel {c.kernel_time_us:.1f} us" + perf
            lines.append(f"        {c.status:<4} case {c.id}: {run_s}{perf}")
            for cmp in c.comparisons:
                lines.append(
                    f"             {cmp['output']}: {cmp['rule']} {'ok' if cmp['passed'] else 'FAILED'}  "
                    f"max abs {cmp['max_abs_err']:.3g}  max rel {cmp['max_rel_err']:.3g}  "
                    f"err ratio {cmp['error_ratio']:.3g}  cosine {cmp['cosine']:.6f}"
                )
            if c.run is not None and (verbose or c.status != "pass"):
                lines.extend(_command_lines("             ", c.run.command, c.run.excerpt))
        if k.status != "pass":
            lines.extend(f"        reason: {r}" for r in k.reasons[:5])
    if report.plan.skip_reason:
        lines.append(f"  reason: {report.plan.skip_reason}")
    for w in report.warnings:
        lines.append(f"  warning: {w}")
    if report.hint:
        lines.append(f"  hint: {report.hint}")
    if report.work_dir:
        lines.append(f"  build kept in {report.work_dir}")
    elif any(k.build is not None for k in report.kernels):
        lines.append("  (the temporary build directory is gone; --keep-build DIR keeps it for the commands)")
    return "\n".join(lines)
