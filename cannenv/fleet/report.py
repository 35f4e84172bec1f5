"""Judge a collection of facts files and group the findings across the fleet.

``fleet report`` runs the doctor's checks (``cannenv.checks``) on every facts file of a collection
and folds the findings into *groups* keyed by (check, status, subject, observed detail, remedy), each
with the list of nodes it applies to, so that "37 nodes have driver 24.1.rc2, the lock needs ≥ 25.0"
reads as one line. Every node gets a status:

* ``compliant``: nothing failed or warned;
* ``drifting``: warnings only (works, but differs from the target);
* ``failing``: a check failed or could not judge (``fail`` / ``error``);
* ``unreachable``: no facts to judge (host unreachable, no Python, timeout, unreadable facts file).

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
from cannenv.report import Finding, StackChoice

FLEET_REPORT_SCHEMA_VERSION = 1

NodeStatus = Literal["compliant", "drifting", "failing", "unreachable"]
NODE_STATUSES: tuple[str, ...] = get_args(NodeStatus)

Judge = Callable[[Facts], tuple[list[Finding], StackChoice]]
"""Facts of one node -> (findings, the stack the node was judged against)."""

_STATUS_RANK = {"fail": 0, "error": 1, "warn": 2, "skip": 3, "pass": 4}
_SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}

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
    counts: dict[str, int] = Field(default_factory=dict)
    findings: tuple[Finding, ...] = ()


class Group(_Value):
    """Findings that are the same on several nodes: same check, status, observed value and remedy."""

    check: str
    status: str
    severity: str
    title: str
    subject: str | None = None
    observed: str = ""
    remedy: str | None = None
    nodes: tuple[str, ...] = ()


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

    def exit_code(self, *, strict: bool = False) -> int:
        """1 when any node fails (with ``strict`` also when one drifts or is unreachable), else 0."""
        bad = {"failing"} | ({"drifting", "unreachable"} if strict else set())
        return int(ExitCode.CHECKS_FAILED) if any(n.status in bad for n in self.nodes) else int(ExitCode.OK)

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


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


def judge_with_checks(stack_id: str | None = None, lock: str | Path | None = None) -> Judge:
    """The doctor's judge: every check of ``cannenv.checks`` against the stack chosen by the doctor."""
    from cannenv.fleet._doctor import make_judge

    judge: Judge = make_judge(stack_id=stack_id, lock=lock)
    return judge


def load_facts(path: Path, *, root: Path | None = None) -> Facts:
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
    return Facts.from_json(data.decode("utf-8", errors="replace"), source=str(path))


def build_report(collection: Collection, judge: Judge, *, source: str = "") -> FleetReport:
    """Judge every collected node, mark the others unreachable, group the findings."""
    from cannenv import __version__

    nodes: list[NodeResult] = []
    choices: list[StackChoice] = []
    check_order: dict[str, None] = {}
    for host in collection.hosts:
        if host.status != "collected" or host.facts_file is None:
            nodes.append(
                NodeResult(
                    name=host.name, status="unreachable", collect_status=host.status, reason=host.reason
                )
            )
            continue
        try:
            facts = load_facts(Path(host.facts_file), root=collection.root)
        except (InputError, OSError) as exc:
            message = exc.message if isinstance(exc, InputError) else str(exc)
            nodes.append(
                NodeResult(
                    name=host.name, status="unreachable", collect_status="invalid-facts", reason=message
                )
            )
            continue
        findings, choice = judge(facts)
        choices.append(choice)
        for f in findings:
            check_order.setdefault(f.id, None)
        nodes.append(
            NodeResult(
                name=host.name,
                status=node_status(findings),
                collect_status=host.status,
                stack=choice.id,
                counts=_counts(findings),
                findings=tuple(findings),
            )
        )
    summary = {"nodes": len(nodes), **dict.fromkeys(NODE_STATUSES, 0)}
    for n in nodes:
        summary[n.status] += 1
    return FleetReport(
        cannenv_version=__version__,
        source=source,
        stack=_fleet_stack(choices),
        summary=summary,
        checks=tuple(check_order),
        nodes=tuple(nodes),
        groups=group_findings(nodes),
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
    Key = tuple[str, str, "str | None", str, "str | None"]
    groups: dict[Key, tuple[Finding | None, list[str]]] = {}
    meta: dict[Key, Group] = {}
    for node in nodes:
        if node.status == "unreachable":
            key = (
                "collect",
                "error",
                node.collect_status,
                node.reason,
                _COLLECT_REMEDY.get(node.collect_status),
            )
            if key not in meta:
                meta[key] = Group(
                    check="collect",
                    status="error",
                    severity="high",
                    title=f"no facts collected ({node.collect_status})",
                    subject=node.collect_status,
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
    return tuple(out)


def report_collection(directory: str | Path, judge: Judge) -> FleetReport:
    """Load a collection directory and judge it."""
    collection = load_collection(directory)
    return build_report(collection, judge, source=str(directory))


# ------------------------------------------------------------------------------------------ JUnit


def cell_status(node: NodeResult, check: str) -> str:
    """Worst status of ``check``'s findings on ``node`` (``none`` when the check made none)."""
    statuses = [f.status for f in node.findings if f.id == check]
    if node.status == "unreachable":
        return "unreachable"
    if not statuses:
        return "none"
    return min(statuses, key=lambda s: _STATUS_RANK[s])


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
