"""``cannenv provision``: run each host's install plan through Ansible, then judge it with the doctor.

1. collect facts from every host (``cannenv fleet collect``'s machinery: the facts role, bundle);
2. plan per host with the doctor's target (:func:`cannenv.plan.compute_plan`, wheels offline);
3. run ``ansible/playbooks/provision.yml``: the ``cannenv_step`` role performs one plan step at a
   time — copies only that step's files, checks their sha256 *on the host* before anything runs,
   runs the step's commands as root, and fails the host at its first failed step (Ansible then
   stops that host; the others go on). A reboot step stops the host as "reboot required" unless
   ``--reboot`` lets Ansible reboot it and continue;
4. collect facts again and judge each host with the doctor (device checks skipped): a host is
   ``done`` only when the doctor passes, not when the commands exited 0.

ansible-runner starts ``ansible-playbook`` itself: that subprocess is Ansible's door, not ours.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cannenv.errors import InputError, NotFoundError
from cannenv.plan.model import Plan, Step
from cannenv.values import to_json, value

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.matrix import Matrix
    from cannenv.plan.compute import CannPolicy, HdkPolicy

HostStatus = Literal[
    "done", "nothing-to-do", "failed", "reboot-required", "planned", "not-collected", "doctor-fails"
]
_MSG = re.compile(r"cannenv-provision: (?P<code>[a-z-]+): step (?P<step>\d+): (?P<reason>.*)", re.DOTALL)
_DONE = re.compile(r"cannenv-provision: done: step (?P<step>\d+)")


@value
class HostOutcome:
    name: str
    status: HostStatus
    reason: str = ""
    failed_step: int | None = None
    failed_component: str | None = None
    log_tail: tuple[str, ...] = ()
    """The installer's last output lines (and its log file's, when it names one)."""
    steps_done: tuple[int, ...] = ()
    plan: Plan | None = None
    doctor_failures: tuple[str, ...] = ()
    """``check-id: detail`` of every failing doctor check after the run (device checks skipped)."""
    remaining: int = 0
    """Steps a fresh plan still lists after the run."""


@value
class ProvisionReport:
    stack: str | None = None
    check: bool = False
    out: str = ""
    hosts: tuple[HostOutcome, ...] = ()

    def exit_code(self) -> int:
        ok = ("done", "nothing-to-do")
        if self.check:
            return 0 if all(h.status == "nothing-to-do" for h in self.hosts) else 1
        return 0 if all(h.status in ok for h in self.hosts) else 1

    def to_json(self, *, indent: int | None = 2) -> str:
        return to_json(self, indent=indent)


def playbook_path() -> Path:
    from cannenv.resources import data_dir

    path = data_dir("ansible") / "playbooks" / "provision.yml"
    if not path.is_file():
        raise NotFoundError(f"the provision playbook is missing: {path}", hint="reinstall cannenv")
    return path


# -- pure parts ------------------------------------------------------------------------------------


def _wheel_key(name: str) -> tuple[str, str] | None:
    """``torch_npu-2.8.0.post2-cp311-...whl`` -> (``torch-npu``, ``2.8.0.post2``)."""
    if not name.endswith(".whl"):
        return None
    parts = name[: -len(".whl")].split("-")
    if len(parts) < 3:
        return None
    return re.sub(r"[-_.]+", "-", parts[0]).lower(), parts[1]


def step_files(step: Step, artifacts: Path) -> tuple[list[tuple[str, str | None]], str | None]:
    """The files a step needs from ``--artifacts`` as (name, pinned sha256), or a reason it cannot run."""
    files: list[tuple[str, str | None]] = [(i.file, i.sha256) for i in step.installers]
    if step.component == "python-packages" and step.version_to:
        wheels = {_wheel_key(p.name): p.name for p in sorted(artifacts.glob("*.whl"))}
        for req in step.version_to.split():
            dist, _, ver = req.partition("==")
            name = wheels.get((dist, ver))
            if name is None:
                return files, f"no wheel for {req} in {artifacts} (pip runs with --no-index)"
            files.append((name, None))
        files.extend((n, None) for k, n in wheels.items() if k is not None and k[0] == "pip")
    from cannenv.sanitize import is_plain_file_name

    root = artifacts.resolve()
    for name, _ in files:
        if not is_plain_file_name(name):
            return files, f"{name!r} is not a plain file name: refused (it would leave --artifacts)"
        path = artifacts / name
        if not path.is_file():
            return files, f"{name} is not in --artifacts {artifacts}"
        if not path.resolve().is_relative_to(root):
            return files, f"{name} in --artifacts {artifacts} is a link that leaves the folder: refused"
    return files, None


def role_steps(
    plan: Plan, artifacts: Path, *, allow_unpinned: bool
) -> tuple[list[dict[str, Any]], HostOutcome | None]:
    """The steps handed to the ``cannenv_step`` role, and the outcome when the host must stop at
    a step before running it (manual step, missing or unpinned installer)."""
    from cannenv.fsutil import sha256_file

    out: list[dict[str, Any]] = []
    for s in plan.actions:
        stop = None
        files: list[tuple[str, str | None]] = []
        if s.manual:
            stop = f"manual step: {s.summary}"
        elif s.action != "reboot":
            files, stop = step_files(s, artifacts)
            if stop is None:
                pinned_kind = {i.file for i in s.installers}
                for name, sha in files:
                    if sha is None and name in pinned_kind and not allow_unpinned:
                        stop = f"the matrix pins no sha256 for {name} (pin it, or --allow-unpinned)"
                        break
        if stop is not None:
            return out, HostOutcome(
                name=plan.host or "?",
                status="failed",
                reason=stop,
                failed_step=s.index,
                failed_component=s.component,
                plan=plan,
            )
        out.append(
            {
                "index": s.index,
                "component": s.component,
                "action": s.action,
                "summary": s.summary,
                "commands": list(s.commands),
                "reboot": s.action == "reboot",
                # the pinned digest when there is one; else this machine's copy's (wheels, --allow-unpinned)
                "files": [{"name": n, "sha256": sha or sha256_file(artifacts / n)} for n, sha in files],
            }
        )
    return out, None


def classify(events: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Runner events -> per host: steps done, and the first failure (code, step, reason)."""
    hosts: dict[str, dict[str, Any]] = {}
    for ev in events:
        kind = ev.get("event")
        data = ev.get("event_data") or {}
        host = data.get("host")
        if not host:
            continue
        rec = hosts.setdefault(host, {"done": [], "failure": None})
        res = data.get("res") or {}
        msg = str(res.get("msg") or "")
        for item in res.get("results") or ():  # a looped task: the first item's own message
            if isinstance(item, Mapping) and item.get("failed") and _MSG.search(str(item.get("msg") or "")):
                msg = str(item["msg"])
                break
        if kind == "runner_on_ok":
            m = _DONE.search(msg)
            if m:
                rec["done"].append(int(m.group("step")))
        elif kind == "runner_on_unreachable" and rec["failure"] is None:
            rec["failure"] = ("unreachable", None, msg or "host unreachable")
        elif kind == "runner_on_failed" and not data.get("ignore_errors") and rec["failure"] is None:
            m = _MSG.search(msg)
            if m:
                rec["failure"] = (m.group("code"), int(m.group("step")), m.group("reason").strip())
            else:
                text = " ".join((msg or str(res.get("stderr") or "")).split())
                rec["failure"] = ("failed", None, f"task {data.get('task', '?')!r}: {text or 'failed'}")
    return hosts


def render_report(report: ProvisionReport) -> str:
    """The operator's view; every value from a host (names, reasons, the installer's own output) is
    one terminal line (:func:`cannenv.sanitize.line`): no escape sequence, no line of its own."""
    from cannenv.sanitize import line as _l

    lines = [
        f"provision -> stack {_l(report.stack or '?')}"
        + (" (--check: nothing changed)" if report.check else ""),
    ]
    width = max((len(_l(h.name)) for h in report.hosts), default=4)
    for h in report.hosts:
        n = len(h.plan.actions) if h.plan else 0
        if h.status == "planned":
            head = f"{n} step{'s' if n != 1 else ''} to run"
        elif h.status == "failed" and h.failed_step:
            head = f"failed at step {h.failed_step} ({_l(h.failed_component)}): {_l(h.reason)}"
        else:
            head = h.status + (f": {_l(h.reason)}" if h.reason else "")
        lines.append(f"  {_l(h.name):<{width}}  {head}")
        if report.check and h.plan and h.plan.actions:
            for s in h.plan.actions:
                lines.append(
                    f"  {'':<{width}}    {s.index}. {_l(s.component)} {_l(s.action)}: {_l(s.summary)}"
                )
        for t in h.log_tail:
            lines.append(f"  {'':<{width}}    | {_l(t)}")
        for f in h.doctor_failures:
            lines.append(f"  {'':<{width}}    doctor: {_l(f)}")
    counts: dict[str, int] = {}
    for h in report.hosts:
        counts[h.status] = counts.get(h.status, 0) + 1
    lines.append(", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no hosts")
    if report.out:
        lines.append(f"facts before/after and report.json in {_l(report.out)}")
    return "\n".join(lines) + "\n"


# -- the run ---------------------------------------------------------------------------------------


def _targets(facts: Facts, m: Matrix, stack_id: str | None, lock_file: str | None) -> Target:
    from cannenv.checks.stack import choose_target

    return choose_target(facts, m, stack_id=stack_id, lock=lock_file)


def _load_facts(folder: Path) -> tuple[dict[str, Facts], dict[str, str]]:
    from cannenv.facts import Facts
    from cannenv.fleet.collection import load_collection

    col = load_collection(folder)
    facts: dict[str, Facts] = {}
    missing: dict[str, str] = {}
    for h in col.hosts:
        if h.status == "collected" and h.facts_file:
            facts[h.name] = replace(Facts.load(folder / h.facts_file), hostname=h.name)
        else:
            missing[h.name] = f"{h.status}: {h.reason}"
    return facts, missing


def _doctor(facts: Facts, target: Target) -> list[str]:
    from cannenv import checks

    judged = replace(target, no_devices="provision: judged in software only; device checks run on the host")
    return [f"{f.id}: {f.detail}" for f in checks.run(facts, judged) if f.status in ("fail", "error")]


def provision(
    inventory: str | Path,
    *,
    artifacts: str | Path,
    stack_id: str | None = None,
    lock_file: str | None = None,
    matrix_paths: Sequence[str] = (),
    cann_policy: CannPolicy = "side-by-side",
    hdk: HdkPolicy = "auto",
    check: bool = False,
    limit: str | None = None,
    forks: int = 5,
    reboot: bool = False,
    allow_unpinned: bool = False,
    out: str | Path | None = None,
    step_timeout: int = 1800,
    connect_timeout: int = 10,
) -> ProvisionReport:
    from cannenv import matrix as matrix_mod
    from cannenv.fleet.collect import collect
    from cannenv.fsutil import atomic_write_text
    from cannenv.plan.compute import compute_plan

    art = Path(artifacts)
    if not Path(inventory).is_file():
        raise InputError(f"inventory {inventory} is not a file", hint="pass an Ansible inventory file (-i)")
    if not art.is_dir():
        raise InputError(
            f"--artifacts {artifacts} is not a directory",
            hint="give the folder that holds the installers (and wheels) the plans name",
        )
    if forks < 1:
        raise InputError(f"--forks {forks}: expected 1 or more")
    m = matrix_mod.load(list(matrix_paths) or None)
    if stack_id:
        m.stack(stack_id)  # an unknown id fails before any host is touched
    from cannenv.fleet.collect import import_ansible_runner

    ansible_runner = import_ansible_runner()

    keep = Path(out).resolve() if out else None
    with tempfile.TemporaryDirectory(prefix="cannenv-provision-") as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        before = work / "before"
        collect(inventory, before, limit=limit, forks=forks, connect_timeout=connect_timeout)
        facts, missing = _load_facts(before)
        outcomes: dict[str, HostOutcome] = {
            name: HostOutcome(name=name, status="not-collected", reason=why) for name, why in missing.items()
        }
        targets: dict[str, Target] = {}
        runs: dict[str, list[dict[str, Any]]] = {}
        stops: dict[str, HostOutcome] = {}
        stack_seen: str | None = stack_id
        for name, f in sorted(facts.items()):
            target = _targets(f, m, stack_id, lock_file)
            targets[name] = target
            stack_seen = stack_seen or (target.stack.id if target.stack else None)
            plan = compute_plan(f, target, cann_policy=cann_policy, offline=True, hdk=hdk)
            if plan.empty:
                outcomes[name] = HostOutcome(name=name, status="nothing-to-do", plan=plan)
                continue
            if check:
                outcomes[name] = HostOutcome(name=name, status="planned", plan=plan)
                continue
            if plan.problems:
                outcomes[name] = HostOutcome(
                    name=name, status="failed", reason="; ".join(plan.problems), plan=plan
                )
                continue
            steps, stop = role_steps(plan, art, allow_unpinned=allow_unpinned)
            if stop is not None:
                stops[name] = replace(stop, name=name)
            if steps:
                runs[name] = steps
            elif stop is not None:
                outcomes[name] = stops[name]
            outcomes.setdefault(name, HostOutcome(name=name, status="planned", plan=plan))
        if runs:
            events = _run_playbook(
                ansible_runner,
                inventory,
                runs,
                art,
                work,
                forks=forks,
                reboot=reboot,
                step_timeout=step_timeout,
                connect_timeout=connect_timeout,
            )
            seen = classify(events)
            after = work / "after"
            collect(
                inventory, after, limit=":".join(sorted(runs)), forks=forks, connect_timeout=connect_timeout
            )
            after_facts, after_missing = _load_facts(after)
            for name in sorted(runs):
                host_plan = outcomes[name].plan
                rec = seen.get(name, {"done": [], "failure": None})
                done = tuple(rec["done"])
                failure = rec["failure"]
                base = HostOutcome(name=name, status="done", plan=host_plan, steps_done=done)
                if failure is not None:
                    code, step_no, reason = failure
                    comp = _component(host_plan, step_no)
                    if code == "reboot-required":
                        outcomes[name] = replace(base, status="reboot-required", reason=reason)
                    else:
                        head, _, tail = reason.partition("\n")
                        outcomes[name] = replace(
                            base,
                            status="failed",
                            reason=f"{code}: {head}",
                            failed_step=step_no,
                            failed_component=comp,
                            log_tail=tuple(t for t in tail.splitlines() if t.strip())[-20:],
                        )
                    continue
                if name in stops:
                    outcomes[name] = replace(stops[name], steps_done=done)
                    continue
                f2 = after_facts.get(name)
                if f2 is None:
                    outcomes[name] = replace(
                        base, status="failed", reason=f"facts after the run: {after_missing.get(name, '?')}"
                    )
                    continue
                t2 = _targets(f2, m, stack_seen if not lock_file else None, lock_file)
                fails = _doctor(f2, t2)
                remaining = len(compute_plan(f2, t2, cann_policy=cann_policy, offline=True, hdk=hdk).actions)
                status: HostStatus = "done" if not fails else "doctor-fails"
                outcomes[name] = replace(
                    base, status=status, doctor_failures=tuple(fails), remaining=remaining
                )
        report = ProvisionReport(
            stack=stack_seen,
            check=check,
            out=str(keep) if keep else "",
            hosts=tuple(outcomes[n] for n in sorted(outcomes)),
        )
        if keep is not None:
            atomic_write_text(keep / "report.json", report.to_json())
        return report


def _component(plan: Plan | None, index: int | None) -> str | None:
    if plan is None or index is None:
        return None
    for s in plan.actions:
        if s.index == index:
            return s.component
    return None


def _run_playbook(
    ansible_runner: Any,
    inventory: str | Path,
    runs: Mapping[str, list[dict[str, Any]]],
    artifacts: Path,
    work: Path,
    *,
    forks: int,
    reboot: bool,
    step_timeout: int,
    connect_timeout: int,
) -> list[Mapping[str, Any]]:
    from cannenv.fleet.collect import run_playbook

    return run_playbook(
        ansible_runner,
        playbook_path(),
        inventory,
        work / "runner",
        limit=":".join(sorted(runs)),
        forks=forks,
        extravars={
            "cannenv_provision_plans": dict(runs),
            "cannenv_step_artifacts": str(artifacts.resolve()),
            "cannenv_step_reboot": bool(reboot),
            "cannenv_step_timeout": int(step_timeout),
        },
        connect_timeout=connect_timeout,
    )
