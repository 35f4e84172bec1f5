"""From a scan to an explanation: which signatures matched, and each cause decided on this host.

Pure: it takes the scan, the signature table, and the doctor's own findings (``checks.run`` on
the host's facts) or none. A cause is

* ``confirmed`` when a check that decides it fails, or its fact condition holds (the driver is
  below the version the signature needs …);
* ``ruled-out`` when every check and condition that decides it says the host is fine;
* ``undecided`` otherwise: no host facts, a check skipped or only warning, or a cause (HCCL
  links, memory) that one host's facts cannot settle. The answer then names what would decide.

Causes are ranked confirmed first, then undecided, then ruled out; within that by the matched
signature's priority and the order its data gives. The first keyword of a log never decides
alone: a memory error that a too-old driver raises ranks ``driver-too-old`` first only when the
driver facts say so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cannenv.explain.scan import ScanResult
from cannenv.explain.signatures import Cause, Condition, Signature, SignatureCause, SignatureTable, Source

if TYPE_CHECKING:
    from cannenv.facts import Facts
    from cannenv.report import Finding

CauseStatus = Literal["confirmed", "undecided", "ruled-out"]
_ORDER: dict[str, int] = {"confirmed": 0, "undecided": 1, "ruled-out": 2}
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Evidence:
    pattern: str
    count: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class CauseVerdict:
    id: str
    title: str
    status: CauseStatus
    signature: str
    why: str
    basis: tuple[str, ...]
    """The facts and doctor findings that decided it (or that were looked at)."""
    decide: tuple[str, ...]
    """When undecided: the facts that would decide it."""
    remedy: str | None
    sources: tuple[Source, ...]
    version_problem: bool
    confirmed_by: tuple[str, ...] = ()
    """The doctor checks whose failing findings confirmed it (the root cause to group under)."""


@dataclass(frozen=True)
class Match:
    id: str
    title: str
    component: str
    priority: int
    evidence: tuple[Evidence, ...]
    causes: tuple[CauseVerdict, ...]
    note: str


@dataclass(frozen=True)
class Explanation:
    matches: tuple[Match, ...]
    causes: tuple[CauseVerdict, ...]
    """Every cause of every matched signature, once, ranked."""
    host_source: str
    """``live``, ``root``, ``facts`` or ``none`` (no host facts: nothing decided)."""
    host: Mapping[str, Any]
    doctor: tuple[Finding, ...]
    """The doctor's findings that are not a pass (shown when nothing matched)."""
    scan: ScanResult
    no_ascend: Finding | None = None
    """The doctor's failing ``ascend-software`` finding: nothing Ascend on the host at all."""

    @property
    def exit_code(self) -> int:
        """0 explained and not present on this host, 1 a cause confirmed here, 3 nothing matched."""
        if not self.matches:
            return 3
        return 1 if any(c.status == "confirmed" for c in self.causes) else 0

    @property
    def verdict(self) -> str:
        if not self.matches:
            if self.scan.bytes_read == 0:
                return "the input is empty (0 bytes read): no known signature matched, nothing to explain"
            return "no known signature matched"
        top = self.causes[0]
        if top.status == "confirmed":
            return f"{top.id} (confirmed on this host)"
        if self.no_ascend is not None:  # every cause's checks skip on it: name it, not "undecided"
            return (
                f"{self.no_ascend.detail}; install it first: the causes below cannot be decided "
                f"without it ({top.id} most likely)"
            )
        if self.host_source == "none":
            return f"{top.id} most likely; no host facts were given to decide"
        open_ = [c for c in self.causes if c.status == "undecided"]
        if open_:
            return f"{open_[0].id} most likely; nothing was confirmed on this host"
        return "every cause the signatures know is ruled out on this host"


def matched(table: SignatureTable, scan: ScanResult) -> list[Signature]:
    """The signatures whose patterns were found: one of ``any`` and every one of ``all``;
    ordered by priority (high first), then file order."""
    hits = scan.hits
    out = [
        s for s in table.signatures if any(p.key in hits for p in s.any) and all(p.key in hits for p in s.all)
    ]
    order = {s.id: i for i, s in enumerate(table.signatures)}
    return sorted(out, key=lambda s: (-s.priority, order[s.id]))


def _version(component: str, text: str | None) -> Any:
    from cannenv.checks._util import cann_v, driver_v, pep_v

    if component == "driver":
        return driver_v(text)
    if component == "cann":
        return cann_v(text)
    return pep_v(text)


def _installed(component: str, facts: Facts) -> str | None:
    from cannenv.versions import canonicalize_name

    if component == "driver":
        return (facts.driver.version if facts.driver else None) or facts.devices.driver_version
    if component == "cann":
        inst = facts.cann.active_install()
        return inst.version if inst else None
    return facts.python.packages.get(canonicalize_name(component))


def judge_condition(cond: Condition, facts: Facts) -> tuple[CauseStatus, str]:
    """Whether the host's version of ``cond.component`` meets the condition, by the project's
    version grammars (HDK, CANN, PEP 440)."""
    have = _installed(cond.component, facts)
    bound = cond.below or cond.at_least
    if have is None:
        return "undecided", f"{cond.component}: not found on this host (decides: {cond.describe()})"
    hv, bv = _version(cond.component, have), _version(cond.component, bound)
    if hv is None or bv is None:
        return "undecided", f"{cond.component} {have}: not comparable with {bound}"
    holds = hv < bv if cond.below else hv >= bv
    verb = "is below" if cond.below else "is at least"
    if holds:
        return "confirmed", f"{cond.component} {have} {verb} {bound}"
    return "ruled-out", f"{cond.component} {have} is not {'below' if cond.below else 'at least'} {bound}"


def judge_checks(
    check_ids: Sequence[str], findings: Mapping[str, Sequence[Finding]]
) -> tuple[CauseStatus | None, list[str], str | None]:
    """(status, basis, remedy) from the doctor's findings of ``check_ids``; status None when
    none of them ran."""
    fs = [f for cid in check_ids for f in findings.get(cid, ())]
    if not fs:
        return None, [], None
    failing = [f for f in fs if f.status == "fail"]
    if failing:
        return (
            "confirmed",
            [f"doctor {f.id}: fail: {f.detail}" for f in failing],
            next((f.remedy for f in failing if f.remedy), None),
        )
    judged = [f for f in fs if f.status in ("pass", "warn", "error")]
    if judged and all(f.status == "pass" for f in judged):
        return (
            "ruled-out",
            [f"doctor {f.id}: pass" + (f" ({f.detail})" if f.detail else "") for f in judged],
            None,
        )
    basis = [f"doctor {f.id}: {f.status}: {f.detail}" for f in fs if f.status != "pass"]
    remedy = next((f.remedy for f in fs if f.status == "warn" and f.remedy), None)
    return "undecided", basis, remedy


def _verdict(
    sig: Signature,
    sc: SignatureCause,
    cause: Cause,
    table: SignatureTable,
    facts: Facts | None,
    findings: Mapping[str, Sequence[Finding]] | None,
) -> CauseVerdict:
    checks = sc.checks if sc.checks is not None else cause.checks
    statuses: list[CauseStatus] = []
    basis: list[str] = []
    remedy: str | None = None
    confirmed_by: tuple[str, ...] = ()
    if facts is not None and sc.when is not None:
        st, why = judge_condition(sc.when, facts)
        statuses.append(st)
        basis.append(why)
    if findings is not None:
        st_c, basis_c, remedy = judge_checks(checks, findings)
        if st_c == "confirmed":
            confirmed_by = tuple(
                dict.fromkeys(c for c in checks for f in findings.get(c, ()) if f.status == "fail")
            )
        if st_c is not None:
            statuses.append(st_c)
            basis += basis_c
    status: CauseStatus
    if "confirmed" in statuses:
        status = "confirmed"
    elif statuses and all(s == "ruled-out" for s in statuses):
        status = "ruled-out"
    else:
        status = "undecided"
    decide: tuple[str, ...] = ()
    if status == "undecided":
        decide = ((f"whether {sc.when.describe()}",) if sc.when else ()) + cause.facts
    chosen_remedy = remedy if status == "confirmed" and remedy else (sc.remedy or remedy or cause.remedy)
    return CauseVerdict(
        id=cause.id,
        title=cause.title,
        status=status,
        signature=sig.id,
        why=sc.why,
        basis=tuple(basis),
        decide=decide,
        remedy=None if status == "ruled-out" else chosen_remedy,
        sources=tuple(table.sources[s] for s in sc.sources),
        version_problem=cause.version_problem,
        confirmed_by=confirmed_by if status == "confirmed" else (),
    )


def _evidence(sig: Signature, scan: ScanResult) -> tuple[Evidence, ...]:
    """The lines that matched, each quoted once even when two patterns found it."""
    shown: set[str] = set()
    out = []
    for p in (*sig.any, *sig.all):
        hit = scan.hits.get(p.key)
        if hit is None:
            continue
        lines = tuple(x for x in hit.lines if x not in shown)
        shown.update(lines)
        out.append(Evidence(p.key, hit.count, lines))
    return tuple(out)


def explain(
    table: SignatureTable,
    scan: ScanResult,
    *,
    facts: Facts | None = None,
    findings: Iterable[Finding] | None = None,
    host_source: str = "none",
    host: Mapping[str, Any] | None = None,
) -> Explanation:
    by_check: dict[str, list[Finding]] | None = None
    all_findings = list(findings or ())
    if findings is not None:
        by_check = {}
        for f in all_findings:
            by_check.setdefault(f.id, []).append(f)
    matches: list[Match] = []
    ranked: list[tuple[tuple[int, int, int, int], CauseVerdict]] = []
    for si, sig in enumerate(matched(table, scan)):
        verdicts = tuple(_verdict(sig, sc, table.causes[sc.id], table, facts, by_check) for sc in sig.causes)
        evidence = _evidence(sig, scan)
        matches.append(Match(sig.id, sig.title, sig.component, sig.priority, evidence, verdicts, sig.note))
        ranked += [((_ORDER[v.status], -sig.priority, si, ci), v) for ci, v in enumerate(verdicts)]
    ranked.sort(key=lambda kv: kv[0])
    seen: set[str] = set()
    causes: list[CauseVerdict] = []
    for _, v in ranked:
        if v.id not in seen:
            seen.add(v.id)
            causes.append(v)
    doctor = tuple(f for f in all_findings if f.status in ("fail", "warn", "error"))
    return Explanation(
        matches=tuple(matches),
        causes=tuple(causes),
        host_source=host_source,
        host=dict(host or {}),
        doctor=doctor,
        scan=scan,
        no_ascend=next((f for f in doctor if f.id == "ascend-software" and f.status == "fail"), None),
    )
