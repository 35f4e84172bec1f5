"""`cannenv plan` and `cannenv provision`: what a host needs to become a stack, and doing it.

``plan`` is pure (facts → target → steps) and prints; ``provision`` runs the plans through
Ansible (:mod:`cannenv.plan.provision`). Both choose the target exactly as the doctor does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from cannenv.commands.options import (
    DRIVER_POLICY,
    MATRIX,
    QUIET,
    ROOT,
    SMI_BOARD,
    SMI_OUTPUT,
    echo_plan,
    host_options,
    target_options,
)
from cannenv.errors import InputError
from cannenv.gather import gather

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.fleet.targets import TargetMap
    from cannenv.plan.compute import CannPolicy, HdkPolicy
    from cannenv.plan.model import Plan

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


_VENV = click.option(
    "--venv",
    metavar="DIR",
    help="Install the Python packages into this virtual environment on the host (created when "
    "missing): for hosts whose system Python refuses pip (PEP 668: Debian 12, Ubuntu 24.04).",
)
_INVENTORY_GROUPS = click.option(
    "--inventory", "groups_inventory", metavar="INVENTORY", help="Ansible inventory: the groups of each node."
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
@target_options
@_INVENTORY_GROUPS
@DRIVER_POLICY
@MATRIX
@host_options
@SMI_OUTPUT
@SMI_BOARD
@_POLICY
@_HDK
@_VENV
@click.option(
    "--offline",
    is_flag=True,
    help="Python wheels from $CANNENV_ARTIFACTS (pip --no-index), as provision runs.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON (schema in docs/provision.md).")
@click.option(
    "--out",
    "out_file",
    metavar="FILE",
    help='Also write the plans as JSON ({"plans": [...]}, what `--json` prints for a folder): '
    "review it, then `cannenv provision --plan FILE` runs exactly it.",
)
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
    target_items: tuple[str, ...],
    targets_file: str | None,
    groups_inventory: str | None,
    driver_policy: str,
    matrix_paths: tuple[str, ...],
    python: str | None,
    site_packages: tuple[str, ...],
    env_file: str | None,
    npu_smi_timeout: float,
    npu_smi_output: str | None,
    npu_smi_board: str | None,
    cann_policy: str,
    hdk: bool | None,
    venv: str | None,
    offline: bool,
    as_json: bool,
    out_file: str | None,
    as_shell: bool,
    verbose: bool,
) -> int:
    """The ordered install plan that turns this host (or --root tree, or --facts) into a stack.

    \b
    Steps in the vendor's order: driver → firmware on a first installation, firmware → driver
    on an upgrade → (reboot) → CANN toolkit → ops/kernels for the chip → NNAL → Python
    packages → environment; each with its exact installer file, sha256, command line,
    preconditions and the fact that must read the new version after.
    One target per node: --target a2=ID,310p=ID / --targets FILE; a node whose hardware does not
    fit its target is refused with the reason. A host whose plan would act on a fact its probe could
    not read (an interpreter that timed out, an unreadable version file) is refused too: collect the
    facts again. Read-only: nothing is installed (see `cannenv provision`).

    \b
    Exit codes: 0 nothing to do · 1 the host needs steps (or a node of a folder was refused) ·
    2 bad input (also: the target does not fit this host's hardware, or the facts it needs are
    unknown) · 3 unknown stack.
    """
    from cannenv.checks.policy import RECOLLECT
    from cannenv.fleet.targets import refuse_misfits, target_map
    from cannenv.plan import compute_plan

    if as_json and as_shell:
        raise InputError("give either --json or --shell, not both")
    targets = target_map(
        stack_id=stack_id,
        lock=lock_file,
        target_items=target_items,
        targets_file=targets_file,
        inventory=groups_inventory,
    )
    refuse_misfits(targets, matrix_paths)
    if python and venv:
        raise InputError("give either --python or --venv, not both")
    opts = _PlanOptions(
        cast("CannPolicy", cann_policy), hdk_policy(hdk), offline, driver_policy, venv, matrix_paths, python
    )
    if facts_file and Path(facts_file).is_dir():
        if as_shell:
            raise InputError("--shell prints one host's plan; give --facts FILE, not a folder")
        return plan_folder(Path(facts_file), targets, opts, as_json, out_file)
    facts = gather(
        root, facts_file, python, site_packages, env_file, npu_smi_timeout, npu_smi_output, npu_smi_board
    )
    name = Path(facts_file).stem if facts_file else (facts.hostname or "localhost")
    target = node_target(name, facts, targets, opts)
    if target.stack is None:
        raise InputError(
            f"no target stack for this host: {target.choice.reason or 'none chosen'}",
            hint="name one: --stack ID (list them with `cannenv matrix list`) or --lock FILE",
        )
    # --python: the interpreter probed here (or, with --facts, the one named for the hosts) is the one
    # the Python packages go into
    plan = compute_plan(
        facts, target, cann_policy=opts.cann_policy, offline=offline, hdk=opts.hdk, venv=venv, python=python
    )
    if plan.refused:
        if plan.unknown:  # facts a probe could not read: never planned as absent
            raise InputError(
                "refused: the plan would act on facts a probe could not read: " + "; ".join(plan.unknown),
                hint=RECOLLECT,
            )
        raise InputError(
            f"refused: {'; '.join(plan.problems)}", hint="give this host a target of its own family"
        )
    if out_file:
        _write_plans(out_file, [(name, plan)])
    return echo_plan(plan, as_json=as_json, as_shell=as_shell, verbose=verbose)


class _PlanOptions:
    def __init__(
        self,
        cann_policy: CannPolicy,
        hdk: HdkPolicy,
        offline: bool,
        driver_policy: str,
        venv: str | None,
        matrix_paths: tuple[str, ...],
        python: str | None = None,
    ) -> None:
        self.cann_policy, self.hdk, self.offline = cann_policy, hdk, offline
        self.driver_policy, self.venv, self.matrix_paths = driver_policy, venv, matrix_paths
        self.python = python
        self._matrix: Any = None

    @property
    def matrix(self) -> Any:
        from cannenv import matrix as matrix_mod

        if self._matrix is None:
            self._matrix = matrix_mod.load(list(self.matrix_paths) or None)
        return self._matrix


def node_target(name: str, facts: Facts, targets: TargetMap, opts: _PlanOptions) -> Target:
    """This node's target: its group's or family's (--target/--targets), else --stack/--lock, else the
    doctor's choice (only when no per-node target was given)."""
    from cannenv.checks.stack import choose_target

    spec, how = targets.route(name, facts)
    if spec is None and targets.per_node:
        from cannenv.checks import Target
        from cannenv.report import StackChoice

        return Target(opts.matrix, None, StackChoice(how="none", reason=f"untargeted: {how}"))
    return choose_target(
        facts,
        opts.matrix,
        stack_id=spec.stack_id if spec else None,
        lock=spec.lock if spec else None,
        driver_policy=opts.driver_policy,
    )


def _write_plans(path: str, plans: list[tuple[str, Plan]]) -> None:
    from cannenv.fsutil import atomic_write_text

    atomic_write_text(path, _plans_json(plans) + "\n")


def _plans_json(plans: list[tuple[str, Plan]]) -> str:
    import json

    from cannenv.values import dump

    docs = [dump(p, exclude_none=True) | {"host": name} for name, p in plans]
    return json.dumps({"plans": docs}, separators=(",", ":"))


def plan_folder(
    folder: Path, targets: TargetMap, opts: _PlanOptions, as_json: bool, out_file: str | None = None
) -> int:
    """Plans for every facts file in a folder (``cannenv fleet collect --out``): one line per host,
    each named by its facts file (the inventory name), each against its own target."""
    from dataclasses import replace

    from cannenv.facts import Facts
    from cannenv.plan import compute_plan
    from cannenv.plan.model import Plan as PlanValue

    files = sorted(p for p in folder.glob("*.json") if p.name != "collection.json")
    if not files:
        raise InputError(f"--facts {folder}: no facts files (*.json) in this folder")
    plans: list[tuple[str, Plan]] = []
    for path in files:
        facts = Facts.load(path)
        target = node_target(path.stem, facts, targets, opts)
        if target.stack is None and targets.per_node:
            plan = PlanValue(host=path.stem, problems=(target.choice.reason,), refused=True)
        else:
            plan = compute_plan(
                facts,
                target,
                cann_policy=opts.cann_policy,
                offline=opts.offline,
                hdk=opts.hdk,
                venv=opts.venv,
                python=opts.python,
            )
        plans.append((path.stem, replace(plan, host=path.stem)))
    if out_file:
        _write_plans(out_file, plans)
    if as_json:
        click.echo(_plans_json(plans))
    else:
        from cannenv import sanitize

        width = max(len(name) for name, _ in plans)
        for name, p in plans:
            if p.refused:
                line = "refused: " + "; ".join(p.problems)
            elif p.problems:
                line = "problem: " + "; ".join(p.problems)
            elif p.empty:
                line = "nothing to do"
            else:
                line = f"{len(p.actions)} steps: " + ", ".join(
                    s.action if s.component == s.action else f"{s.component} {s.action}" for s in p.actions
                )
            click.echo(sanitize.line(f"{name:<{width}}  {p.stack or '-'}  {line}"))
    return 0 if all(p.empty for _, p in plans) else 1


@click.command("provision")
@click.option("-i", "--inventory", required=True, metavar="INVENTORY", help="Ansible inventory file.")
@click.option("--stack", "stack_id", metavar="ID", help="Target stack (the default for every host).")
@click.option("--lock", "lock_file", metavar="FILE", help="Target the stack named in this lock file.")
@target_options
@click.option(
    "--plan",
    "plan_file",
    metavar="FILE",
    help="Run exactly these reviewed plans (`cannenv plan --facts DIR --offline --out FILE`); a host "
    "whose facts moved since is refused.",
)
@DRIVER_POLICY
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
    "--python",
    "python",
    metavar="PATH",
    help="Install the Python packages with this interpreter on the hosts (e.g. a venv's bin/python).",
)
@_VENV
@click.option(
    "--check", "check_only", is_flag=True, help="Collect facts and show each host's plan; change nothing."
)
@click.option("--limit", metavar="PATTERN", help="Ansible host pattern: only these hosts.")
@click.option(
    "--forks", type=click.IntRange(1, 1000), default=5, show_default=True, help="Hosts worked on in parallel."
)
@click.option("--serial", metavar="N|P%", help="Roll out in batches of N hosts (or P% of them).")
@click.option(
    "--canary", is_flag=True, help="The first batch is one host; the rest follow only if it succeeds."
)
@click.option(
    "--max-fail", "max_fail", metavar="P%", help="Stop the rollout when more than P% of a batch fails."
)
@click.option(
    "--cordon",
    metavar="CMD",
    help="Run CMD on this machine before each host ($CANNENV_NODE = its inventory name), e.g. "
    "'kubectl drain \"$CANNENV_NODE\" --ignore-daemonsets'. Operator-given and trusted.",
)
@click.option(
    "--uncordon",
    metavar="CMD",
    help="Run CMD on this machine after each host that succeeded, e.g. 'kubectl uncordon \"$CANNENV_NODE\"'.",
)
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
    "--timeout",
    type=click.IntRange(1, 86400),
    default=1800,
    show_default=True,
    help="Seconds one step may run on a host.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the per-host report as JSON.")
@QUIET
def provision_cmd(
    inventory: str,
    stack_id: str | None,
    lock_file: str | None,
    target_items: tuple[str, ...],
    targets_file: str | None,
    plan_file: str | None,
    driver_policy: str,
    artifacts: str,
    matrix_paths: tuple[str, ...],
    cann_policy: str,
    hdk: bool | None,
    python: str | None,
    venv: str | None,
    check_only: bool,
    limit: str | None,
    forks: int,
    serial: str | None,
    canary: bool,
    max_fail: str | None,
    cordon: str | None,
    uncordon: str | None,
    reboot: bool,
    allow_unpinned: bool,
    out: str | None,
    timeout: int,
    as_json: bool,
    quiet: bool,
) -> int:
    """Bring the inventory's hosts to their targets: collect facts, plan, preflight, run, judge.

    \b
    One target per node (--target a2=ID,310p=ID, --targets FILE with inventory groups; --stack or
    --lock the default): a host whose hardware does not fit its target is refused. Each host: its
    plan's installers are copied, their sha256 checked on the host before any runs, every step's
    preconditions checked on every host before any step runs anywhere, the steps run in order as
    root (in --serial batches, a --canary first), and the host stops at its first failed step.
    After the run the facts are collected again and judged by the doctor (device checks skipped):
    a host is `done` only when the doctor passes.

    \b
    \b
    While it runs, stderr shows each host's state as Ansible reports it (live on a terminal, one line
    per host per step otherwise; --quiet: none): the step running, steps done, failures the moment
    they happen, each batch's verdict before the next starts. Ctrl-C once: no new batch starts;
    twice: no new step starts (running steps finish or reach --timeout); then every host's state.

    \b
    Exit codes: 0 every host done or nothing to do · 1 a host failed, was refused, needs a reboot,
    or (--check) needs steps · 2 bad input · 4 Ansible missing.
    """
    from cannenv.fleet.targets import refuse_misfits, target_map
    from cannenv.plan.provision import load_plans, parse_percent, parse_serial, provision, render_report
    from cannenv.progress import Progress

    plans = None
    if plan_file:
        if stack_id or lock_file or target_items or targets_file:
            raise InputError("--plan runs reviewed plans as they are: give no --stack/--lock/--target(s)")
        plans = load_plans(plan_file)
    elif not (stack_id or lock_file or target_items or targets_file):
        raise InputError(
            "give the target: --stack ID, --lock FILE, --target FAMILY=ID, --targets FILE or --plan FILE"
        )
    targets = target_map(
        stack_id=stack_id,
        lock=lock_file,
        target_items=target_items,
        targets_file=targets_file,
        inventory=inventory,
    )
    refuse_misfits(targets, matrix_paths)
    report = provision(
        inventory,
        artifacts=artifacts,
        targets=targets,
        plans=plans,
        driver_policy=driver_policy,
        matrix_paths=matrix_paths,
        cann_policy=cast("CannPolicy", cann_policy),
        hdk=hdk_policy(hdk),
        python=python,
        venv=venv,
        check=check_only,
        limit=limit,
        forks=forks,
        reboot=reboot,
        allow_unpinned=allow_unpinned,
        out=out,
        step_timeout=timeout,
        serial=parse_serial(serial, canary=canary),
        max_fail=parse_percent(max_fail, "--max-fail"),
        cordon=cordon,
        uncordon=uncordon,
        progress=Progress.for_cli(quiet),
    )
    click.echo(report.to_json() if as_json else render_report(report), nl=not as_json)
    return report.exit_code()


COMMANDS: list[click.Command] = [plan_cmd, provision_cmd]
