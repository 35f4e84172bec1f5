"""`cannenv doctor`, `cannenv facts`, `cannenv env`: inspect a host and judge it against the matrix.

Gather (probes) → judge (checks) → render (report). Nothing here imports torch or docker.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, cast

import click

from cannenv.commands.options import (
    DRIVER_POLICY,
    HCCN_OUTPUT,
    MATRIX,
    MULTINODE,
    ROLE,
    ROOT,
    SMI_BOARD,
    SMI_OUTPUT,
    gc_paused,
    host_options,
    print_plan,
)
from cannenv.errors import InputError

# (moved to cannenv.gather, which the click-free fleet bundle shares; kept importable from here)
from cannenv.gather import check_python_options as check_python_options
from cannenv.gather import gather as gather
from cannenv.gather import make_host as make_host
from cannenv.gather import read_capture as read_capture
from cannenv.gather import read_env_file as read_env_file

if TYPE_CHECKING:
    from cannenv.envscript import Shell


def _color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@click.command("doctor")
@ROOT
@click.option(
    "--facts", "facts_file", metavar="FILE", help="Judge saved facts (from `cannenv facts --json`)."
)
@click.option("--stack", "stack_id", metavar="ID", help="Judge against this stack (default: best match).")
@click.option("--lock", "lock_file", metavar="FILE", help="Judge against the stack named in this lock file.")
@MATRIX
@host_options
@SMI_OUTPUT
@SMI_BOARD
@HCCN_OUTPUT
@MULTINODE
@click.option("--check", "check_ids", multiple=True, metavar="ID", help="Run only these checks (repeatable).")
@click.option("--list", "list_checks", is_flag=True, help="List the checks and exit.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (schema in docs/doctor.md).")
@click.option("--junit", "junit_file", metavar="FILE", help="Also write a JUnit XML report to FILE.")
@click.option(
    "--prometheus",
    "prometheus_file",
    metavar="FILE",
    help="Also write Prometheus metrics to FILE (node_exporter textfile format, written atomically; "
    "e.g. /var/lib/prometheus/node-exporter/cannenv.prom).",
)
@click.option(
    "--log",
    "logs",
    multiple=True,
    metavar="FILE|DIR|-",
    help="Explain the errors in this log (or plog folder, or - for stdin) on this host: their causes "
    "join the findings, under the check that confirms them (docs/explain.md). Repeatable.",
)
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@click.option(
    "--no-devices",
    is_flag=True,
    envvar="CANNENV_NO_DEVICES",
    help="Judge software only: device checks (driver, firmware, NPUs, container mounts) report skip. "
    "For images and CI runners without an NPU; env CANNENV_NO_DEVICES=1.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show passing checks in the table.")
@click.option(
    "--plan",
    "show_plan",
    is_flag=True,
    help="Show only the ordered fix plan toward the chosen stack (the same plan as `cannenv plan`).",
)
@click.option(
    "--shell", "as_shell", is_flag=True, help="With --plan: print it as a script to review (never run)."
)
@DRIVER_POLICY
@ROLE
@gc_paused
def doctor(
    root: str,
    facts_file: str | None,
    stack_id: str | None,
    lock_file: str | None,
    matrix_paths: tuple[str, ...],
    python: str | None,
    site_packages: tuple[str, ...],
    env_file: str | None,
    npu_smi_timeout: float,
    npu_smi_output: str | None,
    npu_smi_board: str | None,
    check_ids: tuple[str, ...],
    list_checks: bool,
    as_json: bool,
    junit_file: str | None,
    strict: bool,
    no_devices: bool,
    verbose: bool,
    show_plan: bool = False,
    as_shell: bool = False,
    prometheus_file: str | None = None,
    hccn_output: str | None = None,
    multinode: bool = False,
    driver_policy: str = "accepted",
    logs: tuple[str, ...] = (),
    role: str = "full",
) -> int:
    """Judge a host (or a tree, or saved facts) against the version matrix, with exact remedies.

    \b
    Exit codes: 0 nothing failed · 1 a check failed (or warned, with --strict) ·
    2 bad input · 3 unknown stack/check · others per `cannenv --help`.
    """
    from cannenv import __version__, checks
    from cannenv.checks.stack import choose_target, host_summary
    from cannenv.errors import CannenvError
    from cannenv.fsutil import atomic_write_text, require_parent_dir
    from cannenv.report import Report, render_junit, render_table

    if list_checks:
        click.echo(render_check_list(as_json=as_json, verbose=verbose), nl=False)
        return 0
    if stack_id and lock_file:
        raise InputError("give either --stack or --lock, not both")
    for out_file, option in ((junit_file, "--junit"), (prometheus_file, "--prometheus")):
        if out_file:
            require_parent_dir(out_file, option)
    selected = checks.select(list(check_ids) or None)
    facts = gather(
        root,
        facts_file,
        python,
        site_packages,
        env_file,
        npu_smi_timeout,
        npu_smi_output,
        npu_smi_board,
        hccn_output,
        multinode,
    )
    from cannenv import matrix as matrix_mod

    try:
        m = matrix_mod.load(list(matrix_paths) or None)
    except CannenvError:
        if stack_id or lock_file or matrix_paths:
            raise
        m = None
    target = choose_target(facts, m, stack_id=stack_id, lock=lock_file, driver_policy=driver_policy)
    if m is None:
        from cannenv.report import StackChoice

        target = replace(
            target, choice=StackChoice(how="none", reason="the shipped matrix could not be loaded")
        )
    if multinode:
        target = replace(target, multinode=True)
    if no_devices:
        target = replace(target, no_devices="--no-devices (software only: no NPU expected here)")
    if role == "hdk":
        target = replace(target, no_software=checks.HDK_ONLY)
    if as_shell and not show_plan:
        raise InputError("--shell goes with --plan: `cannenv doctor --plan --shell`")
    if show_plan:
        return print_plan(facts, target, as_json=as_json, as_shell=as_shell, verbose=verbose)
    findings = checks.run(facts, target, selected)
    if logs:
        from cannenv.explain import log_findings

        findings = findings + log_findings(logs, facts, findings, root)
    report = Report.build(
        findings, host=host_summary(facts), stack=target.choice, cannenv_version=__version__
    )
    if junit_file:
        atomic_write_text(junit_file, render_junit(report, strict=strict))
    if prometheus_file:
        import time

        from cannenv.prometheus import render_node

        atomic_write_text(prometheus_file, render_node(report, timestamp=time.time()))
    if as_json:
        click.echo(report.to_json())
    else:
        tty = sys.stdout.isatty()
        width = shutil.get_terminal_size().columns if tty else None
        click.echo(
            render_table(report, color=_color(), width=width, verbose=verbose, plain=not tty), nl=False
        )
    return report.exit_code(strict=strict)


def render_check_list(*, as_json: bool = False, verbose: bool = False) -> str:
    import json

    from cannenv.checks import all_checks

    rows = [{"id": c.id, "severity": c.severity, "title": c.title, "why": c.why} for c in all_checks()]
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    width = max(len(r["id"]) for r in rows)
    out = []
    for r in rows:
        out.append(f"{r['id']:<{width}}  {r['severity']:<8}  {r['title']}")
        if verbose:
            out.append(f"{'':<{width}}  {'':<8}  why: {r['why']}")
    return "\n".join(out) + "\n"


@click.command("facts")
@ROOT
@host_options
@SMI_OUTPUT
@SMI_BOARD
@HCCN_OUTPUT
@click.option(
    "--multinode", is_flag=True, help="Also run hccn_tool and spod-info per device (docs/multinode.md)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON (input for `doctor --facts`).")
def facts_cmd(
    root: str,
    python: str | None,
    site_packages: tuple[str, ...],
    env_file: str | None,
    npu_smi_timeout: float,
    npu_smi_output: str | None,
    npu_smi_board: str | None,
    as_json: bool,
    hccn_output: str | None = None,
    multinode: bool = False,
) -> int:
    """Print what the probes find on this host (or under --root). Read-only."""
    from cannenv.checks.stack import host_summary

    facts = gather(
        root,
        None,
        python,
        site_packages,
        env_file,
        npu_smi_timeout,
        npu_smi_output,
        npu_smi_board,
        hccn_output,
        multinode,
    )
    if as_json:
        click.echo(facts.to_json())
        return 0
    from cannenv.sanitize import line

    summary = host_summary(facts)
    width = max(len(k) for k in summary)
    for k, v in summary.items():
        if isinstance(v, list):
            v = ", ".join(str(x) for x in v) or "-"
        click.echo(line(f"{k:<{width}}  {v if v not in (None, '') else '-'}"))
    for issue in facts.issues:
        click.echo(line(f"issue: {issue.message}"))
    return 0


@click.command("env")
@click.option("--shell", type=click.Choice(["sh", "fish"]), default="sh", show_default=True)
@ROOT
@click.option("--facts", "facts_file", metavar="FILE", help="Use saved facts instead of probing.")
def env_cmd(shell: str, root: str, facts_file: str | None) -> int:
    """Print the exports the detected CANN's set_env.sh makes (toolkit, driver, NNAL).

    \b
    eval "$(cannenv env)"            # sh/bash/zsh
    cannenv env --shell fish | source
    """
    from cannenv import envscript
    from cannenv.facts import Facts
    from cannenv.probes import collect

    if facts_file:
        facts = Facts.load(facts_file)
    else:
        host = make_host(root, None, 10.0)
        facts = collect(host, only=("os", "environ", "driver", "toolkit", "nnal", "python"))
    steps = envscript.steps_for(facts)
    inst = facts.cann.active_install()
    header = f"cannenv env: CANN {inst.version if inst else '?'} at {inst.path if inst else '?'} ({facts.cann.active_reason})"  # noqa: E501
    click.echo(envscript.render(steps, cast("Shell", shell), header=header), nl=False)
    return 0


COMMANDS: list[click.Command] = [doctor, facts_cmd, env_cmd]
