"""Plans as text: a table for people, and a shell script to review (cannenv never runs it)."""

from __future__ import annotations

from cannenv.plan.model import Plan, Step
from cannenv.sanitize import shell_comment as _c
from cannenv.sanitize import shell_word as _q


def _digest(sha: str | None) -> str:
    return f"sha256 {_c(sha)}" if sha else "sha256 NOT PINNED (verify the download yourself)"


def render_text(plan: Plan, *, verbose: bool = False) -> str:
    """The human view: the target, then every step that does something, with what to check after.
    Every value is one terminal line (:func:`cannenv.sanitize.line`): a host's or a matrix's text
    can neither start a line of its own nor carry an escape sequence."""
    out = [
        f"plan for {_c(plan.host or 'this host')}: stack {_c(plan.stack or '-')}"
        + (f" ({_c(plan.family)}, {_c(plan.arch)})" if plan.family or plan.arch else ""),
    ]
    if plan.target_reason:
        out.append(f"  target: {_c(plan.target_reason)}")
    out.append(f"  other CANN versions: {_c(plan.cann_policy)}")
    for p in plan.problems:
        out.append(f"  problem: {_c(p)}")
    for note in plan.notes:
        out.append(f"  note: {_c(note)}")
    if plan.empty:
        out.append("nothing to do: the host already has the stack")
        return "\n".join(out) + "\n"
    for s in plan.steps:
        if not s.acts:
            if verbose:
                out.append(f"   -  {_c(s.component):<15} leave    {_c(s.summary)}")
            continue
        out.append(f"  {s.index:>2}. {_c(s.component):<15} {_c(s.action):<8} {_c(s.summary)}")
        for inst in s.installers:
            inner = f" (holds {_c(inst.run_file)})" if inst.run_file else ""
            out.append(f"        file   {_c(inst.file)}{inner}  {_digest(inst.sha256)}")
        for pre in s.preconditions:
            out.append(f"        needs  {_c(pre)}")
        for line in s.commands:
            out.append(f"        run    {_c(line)}")
        if s.manual:
            out.append("        MANUAL a person must do this step")
        for v in s.verify:
            out.append(f"        check  {_c(v.fact)} = {_c(v.expect)}")
        if s.reboot and s.action != "reboot":
            out.append("        then   reboot")
    n = len(plan.actions)
    out.append(f"{n} step{'s' if n != 1 else ''}" + (" (reboot required)" if plan.reboot_required else ""))
    return "\n".join(out) + "\n"


def _step_block(s: Step) -> list[str]:
    lines = [f"# --- step {s.index}: {_c(s.component)} {_c(s.action)}: {_c(s.summary)}"]
    for inst in s.installers:
        lines.append(
            f"# file {_c(inst.file)}: {_digest(inst.sha256)}" + (f" ({_c(inst.url)})" if inst.url else "")
        )
        if inst.sha256:
            check = _q(f"{inst.sha256}  {inst.file}")
            lines.append(f'echo {check} | (cd "$CANNENV_ARTIFACTS" && sha256sum -c -)')
    for pre in s.preconditions:
        lines.append(f"# needs: {_c(pre)}")
    if s.manual:
        lines.append(f"echo {_q('MANUAL STEP: ' + s.summary)} >&2; exit 1")
    elif s.action == "reboot":
        lines.append("echo 'reboot required: reboot, then plan again (cannenv plan --shell)' >&2; exit 3")
    else:
        lines.extend(s.commands)
    for v in s.verify:
        lines.append(f"# then `cannenv facts --json`: {_c(v.fact)} = {_c(v.expect)}")
    return lines


def render_shell(plan: Plan) -> str:
    """A bash script of the plan, for a person to read and run; cannenv itself never runs it.

    Every value written into it passes :func:`cannenv.sanitize.shell_comment` (comments: one line,
    control characters visible) or :func:`cannenv.sanitize.shell_word` (words: quoted, control
    characters as ``$'\\x1b'`` escapes); the step commands are built from such words."""
    head = [
        "#!/usr/bin/env bash",
        f"# cannenv install plan for {_c(plan.host or 'this host')} -> stack {_c(plan.stack or '-')}",
        "# Review before running as root. cannenv never runs this script itself.",
        "# Put the installers named below in one folder and point CANNENV_ARTIFACTS at it.",
        "set -euo pipefail",
        'CANNENV_ARTIFACTS="${CANNENV_ARTIFACTS:-$PWD}"',
    ]
    for p in plan.problems:
        head.append(f"# PROBLEM: {_c(p)}")
    for note in plan.notes:
        head.append(f"# note: {_c(note)}")
    if plan.empty:
        head.append("# nothing to do: the host already has the stack")
        head.append("exit 0")
        return "\n".join(head) + "\n"
    body: list[str] = []
    for s in plan.actions:
        body.append("")
        body.extend(_step_block(s))
    body.append("")
    body.append("echo 'plan done: check with `cannenv doctor`'")
    return "\n".join(head + body) + "\n"
