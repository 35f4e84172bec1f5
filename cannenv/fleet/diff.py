"""``cannenv fleet diff OLD NEW``: what changed between two collections.

Per node: added / removed nodes, reachability changes, every component version that moved
(upgraded, downgraded, installed, removed, changed — ordered with the vendor grammars of
:mod:`cannenv.versions`), and, when a judge is given (``--stack`` / ``--lock``), the node status
change plus the findings that are new (new drift) or gone (fixed). Pure: returns data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from cannenv.errors import CannenvError
from cannenv.fleet.collection import Collection
from cannenv.fleet.report import FleetReport, NodeResult, load_facts
from cannenv.versions import Family, parse_version

ChangeKind = Literal["upgraded", "downgraded", "installed", "removed", "changed"]

_FAMILY: dict[str, Family] = {
    "cann": "cann",
    "ops": "cann",
    "nnal": "cann",
    "driver": "driver",
    "firmware": "firmware",
    "python": "pep440",
    "torch": "pep440",
    "torch_npu": "pep440",
}


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class VersionChange(_Value):
    component: str
    old: str | None
    new: str | None
    kind: ChangeKind


class FindingChange(_Value):
    check: str
    status: str
    detail: str
    remedy: str | None = None


class FindingUpdate(_Value):
    """The same check (and subject) fails before and after, but what it observed changed: a driver
    that was upgraded and is still below the target is one changed finding, not new drift + a fix."""

    check: str
    subject: str | None = None
    old_status: str
    new_status: str
    old_detail: str
    new_detail: str
    remedy: str | None = None


class NodeDiff(_Value):
    name: str
    change: Literal["added", "removed", "changed"]
    old_status: str | None = None
    new_status: str | None = None
    versions: tuple[VersionChange, ...] = ()
    new_findings: tuple[FindingChange, ...] = ()
    fixed_findings: tuple[FindingChange, ...] = ()
    changed_findings: tuple[FindingUpdate, ...] = ()


class FleetDiff(_Value):
    old: str
    new: str
    nodes: tuple[NodeDiff, ...] = ()
    summary: dict[str, int] = {}

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


def compare_versions(component: str, old: str | None, new: str | None) -> VersionChange | None:
    """One component's move, or None when it did not change."""
    if old == new:
        return None
    if old is None:
        return VersionChange(component=component, old=None, new=new, kind="installed")
    if new is None:
        return VersionChange(component=component, old=old, new=None, kind="removed")
    family = _FAMILY.get(component)
    kind: ChangeKind = "changed"
    if family is not None:
        try:
            a, b = parse_version(family, old), parse_version(family, new)
            if a < b:
                kind = "upgraded"
            elif b < a:
                kind = "downgraded"
        except (CannenvError, TypeError):
            kind = "changed"
    return VersionChange(component=component, old=old, new=new, kind=kind)


def _versions(collection: Collection) -> dict[str, dict[str, str] | None]:
    from cannenv.checks.stack import installed_versions

    out: dict[str, dict[str, str] | None] = {}
    for host in collection.hosts:
        if host.status != "collected" or host.facts_file is None:
            out[host.name] = None
            continue
        try:
            # the one rooted reader: a name in the folder, links resolved inside it (as the report)
            out[host.name] = installed_versions(load_facts(Path(host.facts_file), root=collection.root))
        except (CannenvError, OSError):
            out[host.name] = None
    return out


_Key = tuple[str, "str | None", str, str, "str | None"]


def _finding_keys(node: NodeResult | None) -> dict[_Key, FindingChange]:
    """(check, subject, status, detail, remedy) -> the non-passing finding."""
    if node is None:
        return {}
    out: dict[_Key, FindingChange] = {}
    for f in node.findings:
        if f.status in ("pass", "skip"):
            continue
        out[(f.id, f.subject, f.status, f.detail, f.remedy)] = FindingChange(
            check=f.id, status=f.status, detail=f.detail, remedy=f.remedy
        )
    return out


def _compare_findings(
    ok: dict[_Key, FindingChange], nk: dict[_Key, FindingChange]
) -> tuple[tuple[FindingChange, ...], tuple[FindingChange, ...], tuple[FindingUpdate, ...]]:
    """(appeared, fixed, changed): a finding gone and one appeared for the same check and subject
    (one each) is the same problem observed differently — changed, neither new nor fixed."""
    gone = [k for k in ok if k not in nk]
    came = [k for k in nk if k not in ok]
    by_identity: dict[tuple[str, str | None], tuple[list[_Key], list[_Key]]] = {}
    for k in gone:
        by_identity.setdefault((k[0], k[1]), ([], []))[0].append(k)
    for k in came:
        by_identity.setdefault((k[0], k[1]), ([], []))[1].append(k)
    changed: list[FindingUpdate] = []
    paired: set[_Key] = set()
    for (check, subject), (olds, news) in by_identity.items():
        if len(olds) == 1 and len(news) == 1:
            o, n = olds[0], news[0]
            paired.update((o, n))
            changed.append(
                FindingUpdate(
                    check=check,
                    subject=subject,
                    old_status=o[2],
                    new_status=n[2],
                    old_detail=o[3],
                    new_detail=n[3],
                    remedy=n[4],
                )
            )
    appeared = tuple(nk[k] for k in came if k not in paired)
    fixed = tuple(ok[k] for k in gone if k not in paired)
    return appeared, fixed, tuple(changed)


def diff_collections(
    old: Collection,
    new: Collection,
    *,
    old_report: FleetReport | None = None,
    new_report: FleetReport | None = None,
) -> FleetDiff:
    """Compare two collections (and their reports, when judged)."""
    old_v, new_v = _versions(old), _versions(new)
    old_h = {h.name: h for h in old.hosts}
    new_h = {h.name: h for h in new.hosts}
    old_n = {n.name: n for n in old_report.nodes} if old_report else {}
    new_n = {n.name: n for n in new_report.nodes} if new_report else {}
    nodes: list[NodeDiff] = []
    for name in sorted(set(old_h) | set(new_h)):
        o_status = (old_n[name].status if name in old_n else old_h[name].status) if name in old_h else None
        n_status = (new_n[name].status if name in new_n else new_h[name].status) if name in new_h else None
        if name not in new_h:
            nodes.append(NodeDiff(name=name, change="removed", old_status=o_status))
            continue
        if name not in old_h:
            nodes.append(NodeDiff(name=name, change="added", new_status=n_status))
            continue
        changes: list[VersionChange] = []
        a, b = old_v.get(name), new_v.get(name)
        if a is not None and b is not None:
            for comp in sorted(set(a) | set(b)):
                ch = compare_versions(comp, a.get(comp), b.get(comp))
                if ch is not None:
                    changes.append(ch)
        ok, nk = _finding_keys(old_n.get(name)), _finding_keys(new_n.get(name))
        appeared, fixed, updated = _compare_findings(ok, nk)
        if {o_status, n_status} & {"unreachable", "untargeted"}:
            # not judged on one side: its findings are unknown there, neither fixed nor new
            appeared, fixed, updated = (), (), ()
        if changes or appeared or fixed or updated or o_status != n_status:
            nodes.append(
                NodeDiff(
                    name=name,
                    change="changed",
                    old_status=o_status,
                    new_status=n_status,
                    versions=tuple(changes),
                    new_findings=appeared,
                    fixed_findings=fixed,
                    changed_findings=updated,
                )
            )
    summary = {
        "added": sum(1 for n in nodes if n.change == "added"),
        "removed": sum(1 for n in nodes if n.change == "removed"),
        "upgraded": sum(1 for n in nodes if any(v.kind == "upgraded" for v in n.versions)),
        "downgraded": sum(1 for n in nodes if any(v.kind == "downgraded" for v in n.versions)),
        "new_drift": sum(1 for n in nodes if n.new_findings),
        "fixed": sum(1 for n in nodes if n.fixed_findings),
        "changed_findings": sum(1 for n in nodes if n.changed_findings),
        "status_changed": sum(1 for n in nodes if n.change == "changed" and n.old_status != n.new_status),
    }
    return FleetDiff(old=str(old.root), new=str(new.root), nodes=tuple(nodes), summary=summary)


def render_text(diff: FleetDiff) -> str:
    """Plain text for people: one block per node that changed. Every value from the collections
    (node names are file names, versions and details come from hosts) is one terminal line
    (:func:`cannenv.sanitize.line`): no escape sequence, no line of its own."""
    from cannenv.sanitize import line as L

    lines = [f"fleet diff {L(diff.old)} -> {L(diff.new)}"]
    if not diff.nodes:
        lines.append("no changes")
    for n in diff.nodes:
        if n.change != "changed":
            status = n.new_status if n.change == "added" else n.old_status
            lines.append(f"{L(n.name)}: {n.change} ({L(status)})")
            continue
        head = f"{L(n.name)}:"
        if n.old_status != n.new_status:
            head += f" {L(n.old_status)} -> {L(n.new_status)}"
        lines.append(head)
        for v in n.versions:
            lines.append(f"  {L(v.component)} {L(v.kind)}: {L(v.old or '-')} -> {L(v.new or '-')}")
        for f in n.new_findings:
            lines.append(f"  new {L(f.status)} {L(f.check)}: {L(f.detail)}")
        for f in n.fixed_findings:
            lines.append(f"  fixed {L(f.status)} {L(f.check)}: {L(f.detail)}")
        for u in n.changed_findings:
            status = (
                L(u.new_status) if u.old_status == u.new_status else f"{L(u.old_status)} -> {L(u.new_status)}"
            )
            lines.append(f"  changed {status} {L(u.check)}: {L(u.old_detail)} -> {L(u.new_detail)}")
    lines.append(", ".join(f"{v} {k.replace('_', ' ')}" for k, v in diff.summary.items()))
    return "\n".join(lines) + "\n"
