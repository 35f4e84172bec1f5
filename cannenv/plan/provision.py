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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import InputError, NotFoundError
from cannenv.fleet.live import STEP_DONE as _DONE
from cannenv.fleet.live import STEP_STOP as _MSG
from cannenv.fleet.live import event_message
from cannenv.plan.model import Plan, Step
from cannenv.plan.state import STATE_OF, STATES, Cause, HostState, State
from cannenv.values import to_json, value

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.fleet.targets import TargetMap
    from cannenv.matrix import Matrix
    from cannenv.plan.compute import CannPolicy, HdkPolicy
    from cannenv.progress import Progress


@value
class HostOutcome:
    """One host's rollout outcome: its state (:mod:`cannenv.plan.state`) and what backs it."""

    name: str
    status: State
    cause: Cause
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
        return 0 if all(h.status == "done" for h in self.hosts) else 1

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


_TOOLKIT = re.compile(r"^Ascend-cann-toolkit_(?P<v>[^_]+)_linux-(?P<arch>aarch64|x86_64)\.(run|zip)\Z")


def _combined_hint(name: str, artifacts: Path) -> str:
    """When the toolkit is missing but the vendor's combined package (``Ascend-cann_<v>_linux-<arch>.run``,
    driver + toolkit, CANN 9.0.0 release note) is there: say that it is not a stand-in for it."""
    m = _TOOLKIT.match(name)
    if m is None:
        return ""
    combined = f"Ascend-cann_{m['v']}_linux-{m['arch']}.run"
    if not (artifacts / combined).is_file():
        return ""
    return (
        f"; {combined} there is the vendor's combined driver + toolkit package, which the plan does not "
        "use (it cannot be upgraded with --upgrade): put the separate toolkit download beside it"
    )


def step_files(step: Step, artifacts: Path) -> tuple[list[tuple[str, str | None]], str | None]:
    """The files a step needs from ``--artifacts`` as (name, pinned sha256), or a reason it cannot run."""
    files: list[tuple[str, str | None]] = [(i.file, i.sha256) for i in step.installers]
    if step.component == "python-packages" and step.version_to:
        wheels = {_wheel_key(p.name): p.name for p in sorted(artifacts.glob("*.whl"))}
        pinned = {req.partition("==")[0] for req in step.version_to.split() if "==" in req}
        bare = [req for req in step.version_to.split() if "==" not in req]
        for req in step.version_to.split():
            dist, _, ver = req.partition("==")
            name = (
                wheels.get((dist, ver))
                if ver
                else next((n for k, n in wheels.items() if k is not None and k[0] == dist), None)
            )
            if name is None:
                return files, f"no wheel for {req} in {artifacts} (pip runs with --no-index)"
            files.append((name, None))
        if bare:  # unpinned dependencies bring theirs: the whole wheelhouse but other pinned versions
            taken = {n for n, _ in files}
            files.extend(
                (n, None)
                for k, n in wheels.items()
                if k is not None and n not in taken and k[0] not in pinned and k[0] != "pip"
            )
        files.extend((n, None) for k, n in wheels.items() if k is not None and k[0] == "pip")
    from cannenv.sanitize import is_plain_file_name

    root = artifacts.resolve()
    for name, _ in files:
        if not is_plain_file_name(name):
            return files, f"{name!r} is not a plain file name: refused (it would leave --artifacts)"
        path = artifacts / name
        if not path.is_file():
            return files, f"{name} is not in --artifacts {artifacts}" + _combined_hint(name, artifacts)
        if not path.resolve().is_relative_to(root):
            return files, f"{name} in --artifacts {artifacts} is a link that leaves the folder: refused"
    return files, None


def outcome(name: str, cause: Cause, reason: str = "", **kw: Any) -> HostOutcome:
    """A host's outcome from its cause (the state follows: :data:`cannenv.plan.state.STATE_OF`)."""
    return HostOutcome(name=name, status=STATE_OF[cause], cause=cause, reason=reason, **kw)


def host_state(o: HostOutcome) -> HostState:
    """The outcome as the state model's value (what the progress view and the renderer show)."""
    return HostState(
        state=o.status,
        cause=o.cause,
        why=o.reason,
        step=o.failed_step,
        component=o.failed_component,
        ran=o.steps_done,
    )


def _sha256(path: Path, cache: dict[Path, str]) -> str:
    from cannenv.fsutil import sha256_file

    if path not in cache:
        cache[path] = sha256_file(path)
    return cache[path]


def role_steps(
    plan: Plan,
    artifacts: Path,
    *,
    allow_unpinned: bool,
    facts: Facts | None = None,
    digests: dict[Path, str] | None = None,
) -> tuple[list[dict[str, Any]], list[tuple[Step, str]]]:
    """Everything the controller can know about a host's run, checked for every step before any
    step runs anywhere: the steps handed to the ``cannenv_step`` role, and each reason the host
    cannot run (plan problems, manual steps, files missing from ``--artifacts``, a copy whose sha256
    is not the plan's, an unpinned installer, an interpreter pip refuses). A host with any reason
    runs nothing."""
    cache = digests if digests is not None else {}
    out: list[dict[str, Any]] = []
    refusals: list[tuple[Step, str]] = []
    for s in plan.actions:
        files: list[tuple[str, str | None]] = []
        stop: str | None = None
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
                    got = _sha256(artifacts / name, cache)
                    if sha is not None and got != sha:
                        stop = (
                            f"{name} in --artifacts has sha256 {got}, the plan pins {sha}: "
                            "not the vendor's file (or a damaged copy)"
                        )
                        break
        if stop is None and s.component == "python-packages":
            stop = interpreter_refusal(plan, facts)
        if stop is not None:
            refusals.append((s, stop))
            continue
        out.append(
            {
                "index": s.index,
                "component": s.component,
                "action": s.action,
                "summary": s.summary,
                "commands": list(s.commands),
                "preflight": list(s.preflight),
                "reboot": s.action == "reboot",
                # the pinned digest when there is one; else this machine's copy's (wheels, --allow-unpinned)
                "files": [{"name": n, "sha256": sha or _sha256(artifacts / n, cache)} for n, sha in files],
            }
        )
    return out, refusals


def interpreter_refusal(plan: Plan, facts: Facts | None) -> str | None:
    """Why pip cannot install into the interpreter the plan names, as far as the facts say."""
    if facts is None or plan.venv or plan.python:
        return None
    py = facts.python
    if py.externally_managed:
        return (
            f"{py.interpreter or 'python3'} is externally managed (PEP 668): pip refuses it; "
            "plan with --venv DIR (or --python /path/to/venv/bin/python)"
        )
    return None


def classify(events: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Runner events -> per host: steps done, the first failure (code, step, reason), and the planned
    reboot it stopped for (step, reason)."""
    hosts: dict[str, dict[str, Any]] = {}
    for ev in events:
        kind = ev.get("event")
        data = ev.get("event_data") or {}
        host = data.get("host")
        if not host:
            continue
        rec = hosts.setdefault(host, {"done": [], "failure": None, "reboot": None})
        res = data.get("res") or {}
        msg = event_message(ev)  # a looped task: the first failed item's own message
        if kind == "runner_on_ok":
            m = _DONE.search(msg)
            if m:
                rec["done"].append(int(m.group("step")))
            r = _MSG.search(msg)
            if r and r.group("code") == "reboot-required" and rec["reboot"] is None:
                rec["reboot"] = (int(r.group("step")), r.group("reason").strip())
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
        head = host_state(h).headline()
        if h.cause == "nothing-to-do":
            head = "done: nothing to do"
        lines.append(f"  {_l(h.name):<{width}}  {_l(head)}")
        if report.check and h.plan and h.plan.actions:
            for s in h.plan.actions:
                lines.append(
                    f"  {'':<{width}}    {s.index}. {_l(s.component)} {_l(s.action)}: {_l(s.summary)}"
                )
        for t in h.log_tail:
            lines.append(f"  {'':<{width}}    | {_l(t)}")
        for f in h.doctor_failures:
            lines.append(f"  {'':<{width}}    doctor: {_l(f)}")
    counts = {st: sum(1 for h in report.hosts if h.status == st) for st in STATES}
    lines.append(", ".join(f"{v} {k}" for k, v in counts.items() if v) or "no hosts")
    if report.out:
        lines.append(f"facts before/after and report.json in {_l(report.out)}")
    return "\n".join(lines) + "\n"


# -- the run ---------------------------------------------------------------------------------------


def _target(
    name: str, facts: Facts, m: Matrix, targets: TargetMap, driver_policy: str
) -> tuple[Target | None, str]:
    """This node's target from the one target map (group, family, default), or why it has none."""
    from cannenv.checks.stack import choose_target

    spec, how = targets.route(name, facts)
    if spec is None:
        return None, how
    return choose_target(facts, m, stack_id=spec.stack_id, lock=spec.lock, driver_policy=driver_policy), how


def parse_serial(text: str | None, *, canary: bool) -> list[int | str] | None:
    """``--serial N|P%`` (and ``--canary``: one host first) as Ansible's play ``serial`` list."""
    if text is None:
        return [1, "100%"] if canary else None
    m = re.fullmatch(r"([1-9][0-9]{0,5})(%?)", text.strip())
    if m is None or (m.group(2) and int(m.group(1)) > 100):
        raise InputError(f"--serial {text!r}: expected a number of hosts (5) or a percentage (25%)")
    batch: int | str = f"{m.group(1)}%" if m.group(2) else int(m.group(1))
    return [1, batch] if canary else [batch]


def parse_percent(text: str | None, what: str) -> int | None:
    if text is None:
        return None
    m = re.fullmatch(r"([0-9]{1,3})%?", text.strip())
    if m is None or int(m.group(1)) > 100:
        raise InputError(f"{what} {text!r}: expected a percentage 0..100 (e.g. 10%)")
    return int(m.group(1))


def load_plans(path: str | Path) -> dict[str, Plan]:
    """``plan --out``'s file: one plan, or ``{"plans": [...]}``, keyed by host (inventory name)."""
    import json

    from cannenv import records

    text = records.read_text(str(path), what="plan file", missing=NotFoundError)
    # the one bounded JSON reader: depth, integer digits, NaN (a 100,000-deep list is exit 2, not 70)
    doc = records.parse_json(text, source=f"--plan {path}", hint="write it with `cannenv plan --out`")
    docs = doc.get("plans") if isinstance(doc, dict) and "plans" in doc else [doc]
    if not isinstance(docs, list) or not docs:
        raise InputError(f"--plan {path}: field 'plans': expected a list of plans")
    out: dict[str, Plan] = {}
    for i, d in enumerate(docs):
        plan = Plan.from_json(json.dumps(d), source=f"{path} plans[{i}]")
        if not plan.host:
            raise InputError(f"--plan {path}: plans[{i}]: field 'host' is missing (the inventory name)")
        if plan.facts_digest is None:
            raise InputError(
                f"--plan {path}: plans[{i}] ({plan.host}): field 'facts_digest' is missing",
                hint="write the plan with this cannenv: `cannenv plan --facts DIR --offline --out FILE`",
            )
        if plan.host in out:
            raise InputError(f"--plan {path}: host {plan.host!r} has two plans")
        out[plan.host] = plan
    return out


def _load_facts(folder: Path) -> tuple[dict[str, Facts], dict[str, str]]:
    from cannenv.fleet.collection import load_collection
    from cannenv.fleet.report import load_facts  # the one rooted reader of facts files

    col = load_collection(folder)
    facts: dict[str, Facts] = {}
    missing: dict[str, str] = {}
    from cannenv.sanitize import is_plain_file_name

    for h in col.hosts:
        if h.status == "collected" and h.facts_file and is_plain_file_name(h.facts_file):
            try:  # one host's hostile facts ({{ … }}, a lone surrogate) stop that host, not the run
                facts[h.name] = replace(load_facts(Path(h.facts_file), root=folder), hostname=h.name)
            except InputError as exc:
                missing[h.name] = f"invalid-facts: {exc.message}"
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
    targets: TargetMap | None = None,
    plans: Mapping[str, Plan] | None = None,
    driver_policy: str = "accepted",
    matrix_paths: Sequence[str] = (),
    cann_policy: CannPolicy = "side-by-side",
    hdk: HdkPolicy = "auto",
    python: str | None = None,
    venv: str | None = None,
    check: bool = False,
    limit: str | None = None,
    forks: int = 5,
    reboot: bool = False,
    allow_unpinned: bool = False,
    out: str | Path | None = None,
    step_timeout: int = 1800,
    connect_timeout: int = 10,
    serial: list[int | str] | None = None,
    max_fail: int | None = None,
    cordon: str | None = None,
    uncordon: str | None = None,
    progress: Progress | None = None,
) -> ProvisionReport:
    """Collect, plan (or take ``plans``, made by ``plan --out``), preflight, run, judge.

    ``targets``: one target per node (:mod:`cannenv.fleet.targets`); ``stack_id``/``lock_file`` are
    its default. A node whose hardware does not fit its target is ``refused``; one no target applies
    to is ``untargeted``; with ``plans``, one whose facts moved since its plan is ``facts-moved``.
    """
    from cannenv import matrix as matrix_mod
    from cannenv.fleet.collect import collect
    from cannenv.fleet.targets import TargetMap, TargetSpec
    from cannenv.fsutil import atomic_write_text
    from cannenv.plan.compute import compute_plan, facts_digest

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
    if stack_id and lock_file:
        raise InputError("give either --stack or --lock, not both")
    if targets is None:
        default = (
            TargetSpec(stack_id=stack_id) if stack_id else TargetSpec(lock=lock_file) if lock_file else None
        )
        targets = TargetMap(default=default)
    elif targets.default is None and (stack_id or lock_file):
        targets = replace(targets, default=TargetSpec(stack_id=stack_id, lock=lock_file))
    if plans is None and not targets.per_node and targets.default is None:
        raise InputError("give the target: --stack ID, --lock FILE, --target FAMILY=ID or --plan FILE")
    m = matrix_mod.load(list(matrix_paths) or None)
    from cannenv.checks.stack import choose_target
    from cannenv.facts import Facts as _Facts

    for spec in targets.specs():  # an unknown id or a bad lock fails before any host is touched
        choose_target(_Facts(), m, stack_id=spec.stack_id, lock=spec.lock)
    for plan in (plans or {}).values():
        if plan.stack:
            m.stack(plan.stack)
        if (python and plan.python != python) or (venv and plan.venv != venv):
            has = (
                f"--venv {plan.venv}"
                if plan.venv
                else f"--python {plan.python}"
                if plan.python
                else "neither --venv nor --python"
            )
            raise InputError(
                f"--plan: the reviewed plan for {plan.host} was made with {has}; "
                f"{'--venv ' + venv if venv else '--python ' + str(python)} cannot change it",
                hint="the interpreter is part of the plan: `cannenv plan --facts DIR --offline --venv DIR "
                "--out FILE`, review it, then `provision --plan FILE`",
            )
        if not plan.offline and any(s.component == "python-packages" for s in plan.actions):
            raise InputError(
                f"--plan: the plan for {plan.host} installs Python packages from the index",
                hint="provision installs wheels from --artifacts: "
                "write the plan with `cannenv plan --offline`",
            )
    if plans is not None and limit is None:
        limit = ":".join(sorted(plans))
    from cannenv.fleet.collect import import_ansible_runner

    ansible_runner = import_ansible_runner()

    keep = Path(out).resolve() if out else None
    with tempfile.TemporaryDirectory(prefix="cannenv-provision-") as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        before = work / "before"
        from cannenv.progress import QUIET

        shown = progress or QUIET
        shown.line("collecting facts before the run")
        collect(inventory, before, limit=limit, forks=forks, connect_timeout=connect_timeout, progress=shown)
        facts, missing = _load_facts(before)
        outcomes: dict[str, HostOutcome] = {
            name: outcome(name, "not-collected", why) for name, why in missing.items()
        }
        host_targets: dict[str, Target] = {}
        runs: dict[str, list[dict[str, Any]]] = {}
        stacks_seen: set[str] = set()
        digests: dict[Path, str] = {}
        for name, f in sorted(facts.items()):
            if plans is not None:
                given = plans.get(name)
                if given is None:
                    outcomes[name] = outcome(name, "untargeted", "no plan for this host")
                    continue
                if given.facts_digest != facts_digest(f):
                    outcomes[name] = outcome(
                        name,
                        "facts-moved",
                        "its facts moved since the plan was made "
                        f"(plan {str(given.facts_digest)[:19]}…, now {facts_digest(f)[:19]}…): "
                        "plan again and review",
                        plan=given,
                    )
                    continue
                target = choose_target(f, m, stack_id=given.stack, driver_policy=given.driver_policy)
                plan = given
            else:
                chosen, how = _target(name, f, m, targets, driver_policy)
                if chosen is None:
                    outcomes[name] = outcome(name, "untargeted", how)
                    continue
                target = chosen
                plan = compute_plan(
                    f, target, cann_policy=cann_policy, offline=True, hdk=hdk, python=python, venv=venv
                )
            host_targets[name] = target
            if plan.stack:
                stacks_seen.add(plan.stack)
            settled = settled_outcome(name, plan)
            if settled is not None:
                outcomes[name] = settled
                continue
            steps, refusals = role_steps(plan, art, allow_unpinned=allow_unpinned, facts=f, digests=digests)
            problems = [f"plan: {p}" for p in plan.problems] + [
                f"step {s.index} ({s.component}): {why}" for s, why in refusals
            ]
            if problems:  # the controller knows this host cannot finish: it runs nothing
                outcomes[name] = outcome(
                    name,
                    "controller",
                    "refused by the controller, nothing ran: " + "; ".join(problems),
                    plan=plan,
                )
                continue
            n = len(steps)
            if check:
                outcomes[name] = outcome(
                    name, "check", f"{n} step{'s' if n != 1 else ''} would run (--check)", plan=plan
                )
                continue
            runs[name] = steps
            outcomes[name] = outcome(name, "rollout-stopped", plan=plan)
        if runs:
            from cannenv.fleet.live import Interrupt, RolloutView

            canary = bool(serial and len(serial) == 2 and serial[0] == 1)
            view = RolloutView(shown, runs, canary=canary)
            interrupt = Interrupt(work / "control", shown)
            shown.line(f"rollout: {len(runs)} host{'s' if len(runs) != 1 else ''} (Ctrl-C stops new batches)")
            with interrupt.installed(), shown.region(view.render):
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
                    serial=serial,
                    max_fail=max_fail,
                    cordon=cordon,
                    uncordon=uncordon,
                    extra=interrupt.extravars(),
                    on_event=view.feed,
                )
            seen = classify(events)
            preflight_failed = sorted(h for h, r in seen.items() if (r["failure"] or ("",))[0] == "preflight")
            shown.line("collecting facts after the run")
            after_facts, after_missing = _collect_after(
                inventory, work / "after", {n: outcomes[n].plan for n in runs}, forks, connect_timeout, shown
            )
            for name in sorted(runs):
                host_plan = outcomes[name].plan
                rec = seen.get(name, {"done": [], "failure": None, "reboot": None})
                judged = run_outcome(
                    name, host_plan, rec, preflight_failed, interrupted=bool(interrupt.level)
                )
                if judged is None:  # every step ran: the doctor judges the host
                    f2 = after_facts.get(name)
                    done = tuple(rec["done"])
                    if f2 is None:
                        judged = outcome(
                            name,
                            "facts-after",
                            f"every step ran, but the facts after the run: {after_missing.get(name, '?')}",
                            plan=host_plan,
                            steps_done=done,
                        )
                    else:
                        fails, remaining = _judge_after(
                            name,
                            f2,
                            m,
                            host_targets[name],
                            targets,
                            plans is not None,
                            driver_policy,
                            (cann_policy, hdk, python, venv),
                        )
                        judged = outcome(
                            name,
                            "doctor-fails" if fails else "ran",
                            "every step ran, the doctor still fails" if fails else "",
                            plan=host_plan,
                            steps_done=done,
                            doctor_failures=tuple(fails),
                            remaining=remaining,
                        )
                outcomes[name] = judged
        report = ProvisionReport(
            stack=", ".join(sorted(stacks_seen)) or None,
            check=check,
            out=str(keep) if keep else "",
            hosts=tuple(outcomes[n] for n in sorted(outcomes)),
        )
        if keep is not None:
            atomic_write_text(keep / "report.json", report.to_json())
        return report


def settled_outcome(name: str, plan: Plan) -> HostOutcome | None:
    """A host's outcome that its plan alone settles, before anything is copied or run: ``refused``
    (another family or architecture), ``facts-unknown`` (its plan would act on facts a probe could not
    read: never installed over), ``nothing-to-do``; None when it has steps to run."""
    if plan.refused:
        cause: Cause = "facts-unknown" if plan.unknown else "refused"
        return outcome(name, cause, "; ".join(plan.problems), plan=plan)
    if plan.empty:
        return outcome(name, "nothing-to-do", plan=plan)
    return None


def run_outcome(
    name: str,
    plan: Plan | None,
    rec: Mapping[str, Any],
    preflight_failed: Sequence[str],
    *,
    interrupted: bool = False,
) -> HostOutcome | None:
    """A host's outcome from what Ansible reported for it (:func:`classify`); None when every step
    ran (then the doctor decides between ``done`` and ``failed``). ``interrupted``: the operator
    pressed Ctrl-C (issue 35)."""
    done = tuple(rec.get("done") or ())
    failure = rec.get("failure")
    reboot = rec.get("reboot")
    planned = [s.index for s in plan.actions] if plan is not None else []
    if failure is not None:
        code, step_no, reason = failure
        head, _, tail = str(reason).partition("\n")
        log = tuple(t for t in tail.splitlines() if t.strip())[-20:]
        if code == "half-installed":
            return outcome(name, "half-installed", head, plan=plan)
        if code == "awaiting-reboot":
            return outcome(name, "awaiting-reboot", head, plan=plan)
        if code == "interrupted" and not done:
            return outcome(
                name,
                "rollout-stopped",
                "the operator interrupted the rollout (Ctrl-C) before its first step",
                plan=plan,
            )
        if code == "interrupted":
            return outcome(
                name,
                "interrupted",
                f"interrupted: the operator stopped it (Ctrl-C) before step {step_no}; marked half-installed",
                plan=plan,
                failed_step=step_no,
                failed_component=_component(plan, step_no),
                steps_done=done,
            )
        if code == "preflight":
            return outcome(
                name,
                "preflight",
                f"its preflight failed, so nothing ran anywhere: step {step_no}: {head}",
                plan=plan,
            )
        cause: Cause = code if code in ("checksum", "unreachable", "step-failed") else "step-failed"
        at = step_no if step_no else next((i for i in planned if i not in done), None)
        return outcome(
            name,
            cause,
            f"{code}: {head}" if cause == "step-failed" and code != "step-failed" else head,
            plan=plan,
            failed_step=at,
            failed_component=_component(plan, at),
            steps_done=done,
            log_tail=log,
        )
    if reboot is not None:
        step_no, reason = reboot
        return outcome(
            name,
            "planned-reboot",
            str(reason),
            plan=plan,
            failed_step=step_no,
            failed_component="reboot",
            steps_done=done,
        )
    if not done:
        if preflight_failed:
            why = f"the preflight failed on {', '.join(preflight_failed)}: nothing ran on any host"
            return outcome(name, "preflight", why, plan=plan)
        return outcome(
            name,
            "rollout-stopped",
            "the operator interrupted the rollout (Ctrl-C) before its batch"
            if interrupted
            else "the rollout stopped before this host's batch (the canary failed, or --max-fail was passed)",
            plan=plan,
        )
    missing = [i for i in planned if i not in done]
    if missing:  # it stopped without a failure of its own (interrupted, the run was killed)
        return outcome(
            name,
            "interrupted",
            "the run ended before this host's remaining steps; its marker keeps it refused until checked",
            plan=plan,
            failed_step=missing[0],
            failed_component=_component(plan, missing[0]),
            steps_done=done,
        )
    return None


def _judge_after(
    name: str,
    f2: Facts,
    m: Matrix,
    t1: Target,
    targets: TargetMap,
    reviewed: bool,
    driver_policy: str,
    options: tuple[Any, Any, str | None, str | None],
) -> tuple[list[str], int]:
    """The doctor's failures on the facts after the run, and how many steps a fresh plan still has."""
    from cannenv.checks.stack import choose_target
    from cannenv.plan.compute import compute_plan

    cann_policy, hdk, python, venv = options
    t2 = choose_target(
        f2,
        m,
        stack_id=t1.stack.id if t1.stack is not None and t1.choice.how != "lock" else None,
        lock=_lock_of(name, f2, targets) if t1.choice.how == "lock" else None,
        driver_policy=t1.driver_policy if reviewed else driver_policy,
    )
    fails = _doctor(f2, t2)
    fresh = compute_plan(f2, t2, cann_policy=cann_policy, offline=True, hdk=hdk, python=python, venv=venv)
    # facts after the run that a probe could not read: the host is not known to be done
    fails += [f"facts unknown: {u}" for u in fresh.unknown if f"facts unknown: {u}" not in fails]
    return fails, len(fresh.actions)


def install_interpreter(plan: Plan | None) -> str | None:
    """The interpreter a plan installs the Python packages into, when not the facts' own."""
    if plan is None:
        return None
    return f"{plan.venv}/bin/python" if plan.venv else plan.python


def _collect_after(
    inventory: str | Path,
    after: Path,
    host_plans: Mapping[str, Plan | None],
    forks: int,
    connect_timeout: int,
    progress: Progress | None = None,
) -> tuple[dict[str, Facts], dict[str, str]]:
    """Facts after the run, each host's read with the interpreter its plan installed into (a venv:
    the doctor then judges that interpreter, not the system's)."""
    from cannenv.fleet.collect import collect

    groups: dict[str, list[str]] = {}
    for name, plan in sorted(host_plans.items()):
        groups.setdefault(install_interpreter(plan) or "", []).append(name)
    facts: dict[str, Facts] = {}
    missing: dict[str, str] = {}
    for i, (interp, names) in enumerate(sorted(groups.items())):
        folder = after if len(groups) == 1 else after / f"python-{i}"
        collect(
            inventory,
            folder,
            limit=":".join(names),
            forks=forks,
            connect_timeout=connect_timeout,
            facts_args=("--python", interp) if interp else (),
            progress=progress,
        )
        got, lost = _load_facts(folder)
        facts.update(got)
        missing.update(lost)
    return facts, missing


def _lock_of(name: str, facts: Facts, targets: TargetMap) -> str | None:
    spec, _ = targets.route(name, facts)
    return spec.lock if spec is not None else None


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
    serial: list[int | str] | None = None,
    max_fail: int | None = None,
    cordon: str | None = None,
    uncordon: str | None = None,
    extra: Mapping[str, Any] | None = None,
    on_event: Callable[[Mapping[str, Any]], object] | None = None,
) -> list[Mapping[str, Any]]:
    from cannenv.fleet.collect import run_playbook

    rollout: dict[str, Any] = {"cannenv_serial": serial or ["100%"]}
    if max_fail is not None:
        rollout["cannenv_max_fail"] = int(max_fail)
    if cordon:
        rollout["cannenv_cordon"] = cordon
    if uncordon:
        rollout["cannenv_uncordon"] = uncordon

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
            **rollout,
            **dict(extra or {}),
        },
        connect_timeout=connect_timeout,
        on_event=on_event,
        cancel=lambda: False,  # Ctrl-C goes to Interrupt: steps finish, no host is killed mid-step
    )
