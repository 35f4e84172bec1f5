"""Judge a collection of facts files and group the findings across the fleet.

``fleet report`` runs the doctor's checks (``cannenv.checks``) on every facts file of a collection
and folds the findings into *groups* keyed by (check, status, subject, observed detail, remedy), each
with the list of nodes it applies to, so that "37 nodes have driver 24.1.rc2, the lock needs ≥ 25.0"
reads as one line. Every node gets a status:

* ``compliant``: nothing failed or warned;
* ``drifting``: warnings only (works, but differs from the target);
* ``failing``: a check failed or could not judge (``fail`` / ``error``);
* ``unreachable``: no facts to judge (host unreachable, no Python, timeout, unreadable facts file);
* ``untargeted``: per-family or per-group targets were given (``--target``) and none applies to the
  node's family or groups: it is reported as such, never judged against another chip's stack.

The JSON is compact by default: per node its status, counts, target, family, key versions, whether
a reboot is pending (``true`` / ``false`` / ``unknown``) and the ids of its groups; the full per-node
findings only with ``details=True`` (``--details``).

Pure: the judge is passed in (:func:`judge_with_checks` is the doctor's), files are read here but
nothing is printed. Renderers: :func:`render_junit` here, the HTML page in :mod:`cannenv.fleet.html`.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from cannenv import sanitize
from cannenv.errors import ExitCode, InputError
from cannenv.facts import Facts
from cannenv.fleet.collection import Collection, load_collection
from cannenv.fleet.targets import node_family as node_family
from cannenv.report import REBOOT_CHECK, Finding, RebootPending, StackChoice, reboot_pending

FLEET_REPORT_SCHEMA_VERSION = 2
"""2: nodes carry target, family, versions and group ids; their findings only with --details."""

NodeStatus = Literal["compliant", "drifting", "failing", "unreachable", "untargeted"]
NODE_STATUSES: tuple[str, ...] = get_args(NodeStatus)

Judge = Callable[[Facts], tuple[list[Finding], StackChoice]]
"""Facts of one node -> (findings, the stack the node was judged against)."""

Router = Callable[[str, Facts], tuple["Judge | None", str]]
"""(node name, facts) -> (the judge for its target, or None when no target applies; why)."""

_STATUS_RANK = {"fail": 0, "error": 1, "warn": 2, "skip": 3, "pass": 4}
_SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}
_UNTARGETED_REMEDY = (
    "give this family a target: `cannenv fleet report DIR --target {family}=STACK_ID` "
    "(or a lock file), or map the node's inventory group in a --targets file"
)

_COLLECT_REMEDY = {
    "unreachable": "make the host reachable over SSH (`ansible HOST -i INVENTORY -m ansible.builtin.ping`), "
    "then collect again",
    "no-python": "install Python >= 3.7 on the host "
    "(e.g. `apt-get install python3` / `dnf install python3`), then collect again",
    "python-mismatch": "install Python >= 3.7 on the host (the bundle runs on any such CPython, "
    "machine and libc), or install cannenv there and pass --no-bundle",
    "timeout": "find what hangs `cannenv facts` on the host (often npu-smi) or raise --timeout",
    "facts-failed": "run `cannenv facts --json` on the host by hand and fix the error it prints",
    "invalid-facts": "collect the facts again with this cannenv version (`cannenv fleet collect`)",
    "failed": "rerun with --verbose and read the Ansible error for this host",
}


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NodeResult(_Value):
    """One node of the fleet: how its facts were collected and what the checks found."""

    name: str
    status: NodeStatus
    collect_status: str = "collected"
    reason: str = ""
    """Why there are no facts (unreachable nodes), empty otherwise."""
    stack: str | None = None
    """The stack the node was judged against (its target)."""
    target: str = ""
    """How the target was chosen: ``family a2``, ``group gpu-a``, ``--stack``, ``best match`` …"""
    family: str | None = None
    versions: dict[str, str | None] = Field(default_factory=dict)
    """Key versions found on the node: driver, cann, torch, torch_npu."""
    counts: dict[str, int] = Field(default_factory=dict)
    reboot_pending: RebootPending = "unknown"
    """``true`` / ``false`` as the doctor's ``driver-loaded`` fails / passes, ``unknown`` when it
    could not compare the loaded driver with the installed one (or the node was not judged): the
    label ``cannenv.io/reboot-pending``'s value (:func:`cannenv.report.reboot_pending`)."""
    groups: tuple[int, ...] = ()
    """Ids of the groups (``FleetReport.groups``) this node's findings belong to."""
    findings: tuple[Finding, ...] = ()
    """Every finding of the node: in the JSON only with ``--details``."""


class Group(_Value):
    """Findings that are the same on several nodes: same check, status, observed value and remedy."""

    id: int = 0
    check: str
    status: str
    severity: str
    title: str
    subject: str | None = None
    observed: str = ""
    remedy: str | None = None
    nodes: tuple[str, ...] = ()


class JobResult(_Value):
    """A multi-node job's nodes judged as one (``fleet report --job``; cannenv.fleet.job)."""

    name: str
    nodes: tuple[str, ...] = ()
    status: Literal["ready", "not-ready", "unchecked"] = "ready"
    """unchecked: nothing to compare (a job of one node), as ``fleet job`` warns; it fails with --strict."""
    failing: tuple[str, ...] = ()
    """Ids of the job checks that failed or errored."""
    findings: tuple[Finding, ...] = ()
    """The job's findings that are not a pass."""
    converge: dict[str, list[str]] = Field(default_factory=dict)
    """Per node, the version changes that converge the job."""


class FleetReport(_Value):
    """What ``cannenv fleet report --json`` prints (documented in docs/fleet.md)."""

    schema_version: int = FLEET_REPORT_SCHEMA_VERSION
    cannenv_version: str = ""
    source: str = ""
    stack: StackChoice = StackChoice()
    summary: dict[str, int] = Field(default_factory=dict)
    checks: tuple[str, ...] = ()
    """Check ids in the order the doctor runs them (columns of the HTML grid)."""
    nodes: tuple[NodeResult, ...] = ()
    groups: tuple[Group, ...] = ()
    jobs: tuple[JobResult, ...] = ()
    """Multi-node jobs judged as one (``--job``); a job that is not ready fails the report."""

    def exit_code(self, *, strict: bool = False) -> int:
        """The report's exit code (docs/fleet.md, "Report"), first that applies:

        * 2 (bad input) when a facts file of the folder could not be read (unreadable, invalid, of a
          newer schema): the monitoring itself is blind there;
        * 6 (external step failed) when no node has facts at all (every host unreachable: the
          collection failed);
        * 1 when any node fails (with ``strict`` also when one drifts, is unreachable or untargeted),
          or a job given with ``--job`` is not ready;
        * 0 otherwise."""
        if any(n.collect_status == "invalid-facts" for n in self.nodes):
            return int(ExitCode.BAD_INPUT)
        if self.nodes and all(n.status == "unreachable" for n in self.nodes):
            return int(ExitCode.EXTERNAL_FAILURE)
        bad = {"failing"} | ({"drifting", "unreachable", "untargeted"} if strict else set())
        failed = any(n.status in bad for n in self.nodes) or any(
            j.status == "not-ready" or (strict and j.status == "unchecked") for j in self.jobs
        )
        return int(ExitCode.CHECKS_FAILED) if failed else int(ExitCode.OK)

    def to_json(self, *, indent: int | None = 2, details: bool = False) -> str:
        """The JSON report; per-node findings only with ``details`` (the groups hold them once)."""
        if details:
            return self.model_dump_json(indent=indent)
        return self.model_dump_json(indent=indent, exclude={"nodes": {"__all__": {"findings"}}})


def node_status(findings: Iterable[Finding]) -> NodeStatus:
    statuses = {f.status for f in findings}
    if statuses & {"fail", "error"}:
        return "failing"
    if "warn" in statuses:
        return "drifting"
    return "compliant"


def _counts(findings: Iterable[Finding]) -> dict[str, int]:
    counts = dict.fromkeys(_STATUS_RANK, 0)
    for f in findings:
        counts[f.status] += 1
    return counts


def judge_with_checks(
    stack_id: str | None = None,
    lock: str | Path | None = None,
    driver_policy: str = "accepted",
    matrix_paths: Sequence[str] = (),
    role: str = "full",
) -> Judge:
    """The doctor's judge: every check of ``cannenv.checks`` against the stack chosen by the doctor
    (from the site matrix ``matrix_paths`` when given)."""
    from cannenv.fleet._doctor import make_judge

    judge: Judge = make_judge(
        stack_id=stack_id, lock=lock, driver_policy=driver_policy, matrix_paths=matrix_paths, role=role
    )
    return judge


def load_facts(path: Path, *, root: Path | None = None, memo: dict[str, Facts] | None = None) -> Facts:
    """Read one facts file with the doctor's reader (``doctor --facts``): the same schema_version
    check and messages. A missing or unreadable file raises OSError, a bad one InputError.

    With ``root`` (the collection folder) ``path`` is a name inside it: an absolute name or one
    with ``..`` is refused, and links are resolved inside the folder (cannenv/host.py), so a
    manifest can never make the report read a file outside its collection. Only a regular file
    of at most :data:`cannenv.records.MAX_RECORD_BYTES` is read (a FIFO or /dev/zero is refused).
    """
    from cannenv import records
    from cannenv.host import Host

    if root is None:
        data = records.read_bytes(path, what="facts file")
    else:
        name = PurePosixPath(str(path))
        if name.is_absolute() or ".." in name.parts or not name.parts:
            raise InputError(
                f"facts_file {str(path)!r} is not a file name inside the collection folder {root}"
            )
        try:
            data = Host(root, {}).read_bytes(str(name), records.MAX_RECORD_BYTES)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InputError(f"cannot read facts file {root / name}: {reason}") from None
        path = root / name
    return Facts.from_json(data.decode("utf-8", errors="replace"), source=str(path), memo=memo)


def key_versions(facts: Facts) -> dict[str, str | None]:
    py = facts.python
    return {
        "driver": facts.driver.version if facts.driver else None,
        "cann": next((i.version for i in facts.cann.installs if i.path == facts.cann.active), None),
        "torch": py.packages.get("torch"),
        "torch_npu": py.packages.get("torch-npu"),
    }


def build_report(
    collection: Collection, judge: Judge, *, source: str = "", router: Router | None = None
) -> FleetReport:
    """Judge every collected node, mark the others unreachable, group the findings.

    With ``router`` each node is judged by the judge of its own target (per family or inventory
    group); a node no target applies to is ``untargeted``, with the reason."""
    from cannenv import __version__

    nodes: list[NodeResult] = []
    choices: list[StackChoice] = []
    check_order: dict[str, None] = {}
    memo: dict[str, Facts] = {}  # nodes of one pool: validated once (Facts.from_json)
    for host in collection.hosts:
        if host.status != "collected" or host.facts_file is None:
            nodes.append(
                NodeResult(
                    name=host.name, status="unreachable", collect_status=host.status, reason=host.reason
                )
            )
            continue
        try:
            facts = load_facts(Path(host.facts_file), root=collection.root, memo=memo)
        except (InputError, OSError) as exc:
            message = exc.message if isinstance(exc, InputError) else str(exc)
            nodes.append(
                NodeResult(
                    name=host.name, status="unreachable", collect_status="invalid-facts", reason=message
                )
            )
            continue
        family = node_family(facts)
        versions = key_versions(facts)
        use, why = (judge, "") if router is None else router(host.name, facts)
        if use is None:
            nodes.append(
                NodeResult(
                    name=host.name,
                    status="untargeted",
                    collect_status=host.status,
                    reason=why,
                    family=family,
                    versions=versions,
                )
            )
            continue
        findings, choice = use(facts)
        choices.append(choice)
        for f in findings:
            check_order.setdefault(f.id, None)
        nodes.append(
            NodeResult(
                name=host.name,
                status=node_status(findings),
                collect_status=host.status,
                stack=choice.id,
                target=why or choice.how,
                family=family,
                versions=versions,
                counts=_counts(findings),
                reboot_pending=reboot_pending(findings),
                findings=tuple(findings),
            )
        )
    summary = {"nodes": len(nodes), **dict.fromkeys(NODE_STATUSES, 0)}
    for n in nodes:
        summary[n.status] += 1
    groups, members = group_findings_with_members(nodes)
    nodes = [n.model_copy(update={"groups": tuple(members.get(n.name, ()))}) for n in nodes]
    fleet_stack = _fleet_stack(choices)
    if router is not None:
        ids = tuple(sorted({c.id for c in choices if c.id}))
        fleet_stack = StackChoice(
            id=ids[0] if len(ids) == 1 else None,
            how="option",
            reason="per-family / per-group targets (each node's target is in its row)",
            candidates=ids,
        )
    return FleetReport(
        cannenv_version=__version__,
        source=source,
        stack=fleet_stack,
        summary=summary,
        checks=tuple(check_order),
        nodes=tuple(nodes),
        groups=groups,
    )


def _fleet_stack(choices: Sequence[StackChoice]) -> StackChoice:
    """One stack for the fleet when every node was judged against the same one."""
    ids = {c.id for c in choices}
    if len(ids) == 1 and choices:
        return choices[0]
    if not choices:
        return StackChoice(reason="no node could be judged")
    named = sorted(i for i in ids if i)
    return StackChoice(
        how="best-match", reason="each node judged against its own best match", candidates=tuple(named)
    )


def group_findings(nodes: Iterable[NodeResult]) -> tuple[Group, ...]:
    """Fold the non-passing findings of all nodes into groups; unreachable nodes group by reason."""
    return group_findings_with_members(nodes)[0]


def group_findings_with_members(
    nodes: Iterable[NodeResult],
) -> tuple[tuple[Group, ...], dict[str, list[int]]]:
    """The groups (ids 0.. in their sorted order) and, per node name, the ids of its groups."""
    Key = tuple[str, str, "str | None", str, "str | None"]
    groups: dict[Key, tuple[Finding | None, list[str]]] = {}
    meta: dict[Key, Group] = {}
    for node in nodes:
        if node.status in ("unreachable", "untargeted"):
            untargeted = node.status == "untargeted"
            key = (
                "target" if untargeted else "collect",
                "error",
                node.family if untargeted else node.collect_status,
                node.reason,
                _UNTARGETED_REMEDY.format(family=node.family or "FAMILY")
                if untargeted
                else _COLLECT_REMEDY.get(node.collect_status),
            )
            if key not in meta:
                meta[key] = Group(
                    check=key[0],
                    status="error",
                    severity="high",
                    title=f"no target for family {node.family or 'unknown'}"
                    if untargeted
                    else f"no facts collected ({node.collect_status})",
                    subject=key[2],
                    observed=node.reason,
                    remedy=key[4],
                )
                groups[key] = (None, [])
            groups[key][1].append(node.name)
            continue
        for f in node.findings:
            if f.status in ("pass", "skip"):
                continue
            fkey = (f.id, f.status, f.subject, f.detail, f.remedy)
            if fkey not in groups:
                groups[fkey] = (f, [])
            members = groups[fkey][1]
            if not members or members[-1] != node.name:
                members.append(node.name)
    out: list[Group] = []
    for gkey, (finding, members) in groups.items():
        if finding is None:
            out.append(meta[gkey].model_copy(update={"nodes": tuple(members)}))
        else:
            out.append(
                Group(
                    check=finding.id,
                    status=finding.status,
                    severity=finding.severity,
                    title=finding.title,
                    subject=finding.subject,
                    observed=finding.detail,
                    remedy=finding.remedy,
                    nodes=tuple(members),
                )
            )
    out.sort(
        key=lambda g: (
            _STATUS_RANK.get(g.status, 9),
            _SEVERITY_RANK.get(g.severity, 9),
            -len(g.nodes),
            g.check,
        )
    )
    numbered = tuple(g.model_copy(update={"id": i}) for i, g in enumerate(out))
    refs: dict[str, list[int]] = {}
    for g in numbered:
        for name in g.nodes:
            refs.setdefault(name, []).append(g.id)
    return numbered, refs


def report_collection(directory: str | Path, judge: Judge, *, router: Router | None = None) -> FleetReport:
    """Load a collection directory and judge it."""
    collection = load_collection(directory)
    return build_report(collection, judge, source=str(directory), router=router)


# ------------------------------------------------------------------------------------------ JUnit


def cell_status(node: NodeResult, check: str) -> str:
    """Worst status of ``check``'s findings on ``node`` (``none`` when the check made none)."""
    statuses = [f.status for f in node.findings if f.id == check]
    if node.status in ("unreachable", "untargeted"):
        return node.status
    if not statuses:
        return "none"
    return min(statuses, key=lambda s: _STATUS_RANK[s])


def reboot_counts(nodes: Iterable[NodeResult]) -> dict[str, int]:
    """Judged nodes (compliant, drifting, failing) by ``reboot_pending``: true, false, unknown."""
    counts = dict.fromkeys(get_args(RebootPending), 0)
    for node in nodes:
        if node.status not in ("unreachable", "untargeted"):
            counts[node.reboot_pending] += 1
    return counts


def reboot_unknown(nodes: Iterable[NodeResult]) -> dict[tuple[str, str | None], list[str]]:
    """Judged nodes whose reboot pending is ``unknown``, by (why, remedy): the ``driver-loaded``
    skip's detail and remedy, or that the check did not run. The text report and the HTML page list
    them, so a node whose loaded driver nothing told never reads as "no reboot pending"."""
    out: dict[tuple[str, str | None], list[str]] = {}
    for node in nodes:
        if node.status in ("unreachable", "untargeted") or node.reboot_pending != "unknown":
            continue
        said = next((f for f in node.findings if f.id == REBOOT_CHECK and f.status != "pass"), None)
        key = (
            (said.detail, said.remedy)
            if said is not None
            else (f"reboot pending unknown: the {REBOOT_CHECK} check did not run", None)
        )
        out.setdefault(key, []).append(node.name)
    return out


def render_junit(report: FleetReport, *, strict: bool = False) -> str:
    """JUnit XML: one testsuite per node, one testcase per finding; unreachable nodes are one error."""
    suites = ET.Element("testsuites", name="cannenv fleet")
    for node in report.nodes:
        suite = ET.SubElement(suites, "testsuite", name=node.name)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="status", value=node.status)
        ET.SubElement(props, "property", name="stack", value=node.stack or "")
        tests = failures = errors = skipped = 0
        if node.status == "unreachable":
            case = ET.SubElement(suite, "testcase", classname="cannenv.fleet.collect", name="collect facts")
            el = ET.SubElement(
                case, "error", message=node.reason or node.collect_status, type=node.collect_status
            )
            el.text = node.reason
            tests, errors = 1, 1
        for f in node.findings:
            tests += 1
            name = f.title if f.subject is None else f"{f.title} [{f.subject}]"
            case = ET.SubElement(suite, "testcase", classname=f"cannenv.doctor.{f.id}", name=name)
            body = f.detail + (f"\nremedy: {f.remedy}" if f.remedy else "")
            if f.status == "fail" or (strict and f.status == "warn"):
                failures += 1
                ET.SubElement(case, "failure", message=f.detail or f.title, type=f.status).text = body
            elif f.status == "error":
                errors += 1
                ET.SubElement(case, "error", message=f.detail or f.title, type="error").text = body
            elif f.status == "skip":
                skipped += 1
                ET.SubElement(case, "skipped", message=f.detail or f.title)
            elif f.status == "warn":
                ET.SubElement(case, "system-out").text = f"warning: {body}"
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
    ET.indent(suites)
    doc = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    return sanitize.xml(doc)  # control characters from facts files would make it not well-formed
