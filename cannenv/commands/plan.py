"""`cannenv plan` and `cannenv provision`: what a host needs to become a stack, and doing it.

``plan`` is pure (facts → target → steps) and prints; ``provision`` runs the plans through
Ansible (:mod:`cannenv.plan.provision`). Both choose the target exactly as the doctor does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from cannenv.commands.options import MATRIX, ROOT, SMI_BOARD, SMI_OUTPUT, echo_plan, host_options
from cannenv.errors import InputError
from cannenv.gather import gather

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.plan.compute import CannPolicy, HdkPolicy

_POLICY = click.option(
    "--cann-policy",
    type=click.Choice(["side-by-side", "replace"]),
    default="side-by-side",
    show_default=True,
    help="Another CANN version on the host: keep it beside the target (set_env.sh selects one), "
    "or remove it after the target is installed.",
)
_HDK = click.option(
    "--hdk/--no-hdk",
    "hdk",
    default=None,
    help="Plan the NPU driver and firmware (default: yes on a machine, no inside a container, whose "
    "driver is the machine's). --hdk for containers that stand in for machines.",
)


def hdk_policy(flag: bool | None) -> HdkPolicy:
    return "auto" if flag is None else ("yes" if flag else "no")


def resolve_target(
    facts: Facts, stack_id: str | None, lock_file: str | None, matrix_paths: tuple[str, ...]
) -> Target:
    """The doctor's target for these facts (one source of truth); a plan needs one."""
    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target

    if stack_id and lock_file:
        raise InputError("give either --stack or --lock, not both")
    m = matrix_mod.load(list(matrix_paths) or None)
    return choose_target(facts, m, stack_id=stack_id, lock=lock_file)


@click.command("plan")
@ROOT
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE|DIR",
    help="Plan for saved facts (from `cannenv facts --json`), or for every host of a `fleet collect` folder.",
)
@click.option("--stack", "stack_id", metavar="ID", help="Target stack (default: the doctor's choice).")
@click.option("--lock", "lock_file", metavar="FILE", help="Target the stack named in this lock file.")
@MATRIX
@host_options
@SMI_OUTPUT
@SMI_BOARD
@_POLICY
@_HDK
@click.option(
    "--offline",
    is_flag=True,
    help="Python wheels from $CANNENV_ARTIFACTS (pip --no-index), as provision runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (schema in docs/provision.md).")
@click.option(
    "--shell",
    "as_shell",
    is_flag=True,
    help="Print the plan as a bash script to review (never run by cannenv).",
)
@click.option("-v", "--verbose", is_flag=True, help="Also show the components left as they are, and why.")
def plan_cmd(
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
    cann_policy: str,
    hdk: bool | None,
    offline: bool,
    as_json: bool,
    as_shell: bool,
    verbose: bool,
) -> int:
    """The ordered install plan that turns this host (or --root tree, or --facts) into a stack.

    \b
    Steps in the vendor's order: driver → firmware → (reboot) → CANN toolkit → ops/kernels
    for the chip → NNAL → Python packages → environment; each with its exact installer file,
    sha256, command line, preconditions and the fact that must read the new version after.
    Read-only: nothing is installed (see `cannenv provision`).

    \b
    Exit codes: 0 nothing to do · 1 the host needs steps · 2 bad input · 3 unknown stack.
    """
    from cannenv.plan import compute_plan

    if as_json and as_shell:
        raise InputError("give either --json or --shell, not both")
    if facts_file and Path(facts_file).is_dir():
        if as_shell:
            raise InputError("--shell prints one host's plan; give --facts FILE, not a folder")
        return plan_folder(
            Path(facts_file),
            stack_id,
            lock_file,
            matrix_paths,
            cast("CannPolicy", cann_policy),
            hdk_policy(hdk),
            offline,
            as_json,
        )
    facts = gather(
        root, facts_file, python, site_packages, env_file, npu_smi_timeout, npu_smi_output, npu_smi_board
    )
    target = resolve_target(facts, stack_id, lock_file, matrix_paths)
    if target.stack is None:
        raise InputError(
            f"no target stack for this host: {target.choice.reason or 'none chosen'}",
            hint="name one: --stack ID (list them with `cannenv matrix list`) or --lock FILE",
        )
    plan = compute_plan(
        facts, target, cann_policy=cast("CannPolicy", cann_policy), offline=offline, hdk=hdk_policy(hdk)
    )
    return echo_plan(plan, as_json=as_json, as_shell=as_shell, verbose=verbose)


def plan_folder(
    folder: Path,
    stack_id: str | None,
    lock_file: str | None,
    matrix_paths: tuple[str, ...],
    cann_policy: CannPolicy,
    hdk: HdkPolicy,
    offline: bool,
    as_json: bool,
) -> int:
    """Plans for every facts file in a folder (``cannenv fleet collect --out``): one line per host."""
    import json

    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target
    from cannenv.facts import Facts
    from cannenv.plan import compute_plan

    if stack_id and lock_file:
        raise InputError("give either --stack or --lock, not both")
    m = matrix_mod.load(list(matrix_paths) or None)
    files = sorted(p for p in folder.glob("*.json") if p.name != "collection.json")
    if not files:
        raise InputError(f"--facts {folder}: no facts files (*.json) in this folder")
    plans = []
    for path in files:
        facts = Facts.load(path)
        target = choose_target(facts, m, stack_id=stack_id, lock=lock_file)
        plan = compute_plan(facts, target, cann_policy=cann_policy, offline=offline, hdk=hdk)
        plans.append((path.stem, plan))
    if as_json:
        from cannenv.values import dump

        docs = [dump(p, exclude_none=True) | {"host": p.host or name} for name, p in plans]
        click.echo(json.dumps({"plans": docs}, separators=(",", ":")))
    else:
        width = max(len(name) for name, _ in plans)
        for name, p in plans:
            if p.problems:
                line = "problem: " + "; ".join(p.problems)
            elif p.empty:
                line = "nothing to do"
            else:
                line = f"{len(p.actions)} steps: " + ", ".join(f"{s.component} {s.action}" for s in p.actions)
            click.echo(f"{name:<{width}}  {p.stack or '-'}  {line}")
    return 0 if all(p.empty for _, p in plans) else 1


@click.command("provision")
@click.option("-i", "--inventory", required=True, metavar="INVENTORY", help="Ansible inventory file.")
@click.option("--stack", "stack_id", metavar="ID", help="Target stack for every host.")
@click.option("--lock", "lock_file", metavar="FILE", help="Target the stack named in this lock file.")
@click.option(
    "--artifacts",
    required=True,
    metavar="DIR",
    help="Folder on this machine holding the installers (and wheels) the plans name.",
)
@MATRIX
@_POLICY
@_HDK
@click.option(
    "--check", "check_only", is_flag=True, help="Collect facts and show each host's plan; change nothing."
)
@click.option("--limit", metavar="PATTERN", help="Ansible host pattern: only these hosts.")
@click.option("--forks", type=int, default=5, show_default=True, help="Hosts worked on in parallel.")
@click.option("--reboot", is_flag=True, help="Let Ansible reboot a host when a step needs it, and go on.")
@click.option(
    "--allow-unpinned",
    is_flag=True,
    help="Run installers the matrix pins no sha256 for (the host still checks the digest of this "
    "machine's copy).",
)
@click.option(
    "--out", metavar="DIR", help="Keep the facts before/after and the report here (default: a temp dir)."
)
@click.option(
    "--timeout", type=int, default=1800, show_default=True, help="Seconds one step may run on a host."
)
@click.option("--json", "as_json", is_flag=True, help="Print the per-host report as JSON.")
def provision_cmd(
    inventory: str,
    stack_id: str | None,
    lock_file: str | None,
    artifacts: str,
    matrix_paths: tuple[str, ...],
    cann_policy: str,
    hdk: bool | None,
    check_only: bool,
    limit: str | None,
    forks: int,
    reboot: bool,
    allow_unpinned: bool,
    out: str | None,
    timeout: int,
    as_json: bool,
) -> int:
    """Bring the inventory's hosts to a stack: collect facts, plan, copy and verify installers, run.

    \b
    Each host: its plan's installers are copied, their sha256 checked on the host before any
    runs, the steps run in order as root, and the host stops at its first failed step. After
    the run the facts are collected again and judged by the doctor (device checks skipped):
    a host is `done` only when the doctor passes.

    \b
    Exit codes: 0 every host done or nothing to do · 1 a host failed, needs a reboot, or
    (--check) needs steps · 2 bad input · 4 Ansible missing.
    """
    from cannenv.plan.provision import provision, render_report

    if not (stack_id or lock_file):
        raise InputError("give the target: --stack ID or --lock FILE")
    if stack_id and lock_file:
        raise InputError("give either --stack or --lock, not both")
    report = provision(
        inventory,
        artifacts=artifacts,
        stack_id=stack_id,
        lock_file=lock_file,
        matrix_paths=matrix_paths,
        cann_policy=cast("CannPolicy", cann_policy),
        hdk=hdk_policy(hdk),
        check=check_only,
        limit=limit,
        forks=forks,
        reboot=reboot,
        allow_unpinned=allow_unpinned,
        out=out,
        step_timeout=timeout,
    )
    click.echo(report.to_json() if as_json else render_report(report), nl=not as_json)
    return report.exit_code()


COMMANDS: list[click.Command] = [plan_cmd, provision_cmd]
