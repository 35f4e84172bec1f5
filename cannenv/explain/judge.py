"""From a scan to an explanation: which signatures matched, and each cause decided on this host.

Pure: it takes the scan, the signature table, and the doctor's own findings (``checks.run`` on
the host's facts) or none. A cause is

* ``confirmed`` only when a fact ties the cause to this error: a check that decides it fails (the
  pair, the package, the device the error needs is wrong here), or the version condition the
  vendor states for this very message holds — on the versions the log itself prints first, else
  on the host's. The tying fact is kept (``tie``) and shown in --verbose and JSON;
* ``consistent`` when a fact merely allows it (a deciding check only warns);
* ``ruled-out`` when every check and condition that decides it says the host is fine, or the log's
  own detail excludes it (``rules_out`` of a matched signature: ``cur_sq_num … ret=-28`` says the
  queues are used up, so a too-old driver is not why ``Alloc sq cq fail``);
* ``undecided`` otherwise: no host facts, a check skipped, or a cause (HCCL links, memory) that
  one host's facts cannot settle. The answer then names what would decide.

A **contradiction** is flagged where the log and the host disagree (the log prints numpy 2.0.1,
the probed interpreter has 1.26: the log may come from another environment). Then this host's facts
alone confirm nothing: a cause only they would confirm is ``consistent``, with the contradiction and
"the facts of the environment the log comes from" first among what would decide it; a condition on
the log's own version still ties.

Besides the hand-written signatures, the knowledge tables (:mod:`cannenv.explain.knowledge`) give
signatures for every vendor code, and :func:`derive` makes one for each missing shared object
(mapped to the package that ships it) and undefined symbol (demangled, mapped by namespace) the
scan extracted.

How the log's processes died (:func:`deaths_of`: a shell's ``Killed``, ``Segmentation fault (core
dumped)``, Python's and PyTorch's reports of a dead child, an exit status of 128+N) are facts shown
with the explanation; only a SIGKILL points to a cause (host memory, undecided), and the kernel's
OOM-killer line confirms it by itself (``log_tie``). A crash signal names no cause.

Causes are ranked confirmed, consistent, undecided, ruled out; within that by the matched
signature's priority and the order its data gives. The first keyword of a log never decides
alone: a memory error that a too-old driver raises ranks ``driver-too-old`` first only when the
driver facts say so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from cannenv.explain.scan import Hit, ScanResult
from cannenv.explain.signatures import (
    DEATH_PRIORITY,
    ERRNO_PRIORITY,
    ERROR_CODE_CAPTURE,
    FAILED_CHECK_PRIORITY,
    FAMILY_TITLE,
    HEADER_PRIORITY,
    KERNEL_OOM_PRIORITY,
    KNOWLEDGE_PRIORITY,
    LIBRARY_TABLE_PRIORITY,
    MESSAGE_CAPTURE,
    MESSAGE_FAMILY,
    OS_ERRNO_PRIORITY,
    PROGRAM_CODE_PRIORITY,
    RESIDUAL_PRIORITY,
    SOURCE_PRIORITY,
    Cause,
    Condition,
    Pattern,
    Signature,
    SignatureCause,
    SignatureTable,
    Source,
    code_signature,
)

if TYPE_CHECKING:
    from cannenv.explain.knowledge import Knowledge
    from cannenv.explain.parts import InnerCode
    from cannenv.facts import Facts
    from cannenv.report import Finding

CauseStatus = Literal["confirmed", "consistent", "undecided", "ruled-out"]
_ORDER: dict[str, int] = {"confirmed": 0, "consistent": 1, "undecided": 2, "ruled-out": 3}
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
    tie: str | None = None
    """When confirmed: the fact that ties the cause to this error."""
    contradiction: str | None = None
    """Where the log and the host disagree about a fact that decides this cause."""


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
class Death:
    """How a process of the log died: the signal (signal(7)'s row) and the line that says so. A
    fact shown with the explanation; only a SIGKILL (and the kernel's OOM killer) points to a cause."""

    signal: int | None
    """Its number (x86/ARM); None where the report does not say (a pool's worker that died)."""
    name: str | None
    action: str | None
    """signal(7)'s default action: Term (terminate) or Core (terminate and dump core)."""
    meaning: str
    said: str
    """How the log says it (``Killed``, ``exit status 137 = 128 + 9``, ``SIGKILL`` …)."""
    line: str
    count: int
    sources: tuple[Source, ...]


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
    log_facts: Mapping[str, str] | None = None
    """Versions the log itself prints (component -> version): facts of the log's environment."""
    contradictions: tuple[str, ...] = ()
    """Where the log's facts and the host's disagree."""
    deaths: tuple[Death, ...] = ()
    """How the log's processes died (a signal, an exit status of 128+N, a pool's worker): facts."""

    @property
    def residual_only(self) -> bool:
        """Whether only the residual reading read the log (no signature of a known message)."""
        return bool(self.matches) and all(m.id == RESIDUAL_ID for m in self.matches)

    @property
    def exit_code(self) -> int:
        """0 explained and not present on this host, 1 a cause confirmed here, 3 no known signature
        matched (the residual reading alone included: it knows no message)."""
        if not self.matches or self.residual_only:
            return 3
        return 1 if any(c.status == "confirmed" for c in self.causes) else 0

    @property
    def verdict(self) -> str:
        if not self.matches:
            if self.scan.bytes_read == 0:
                return "the input is empty (0 bytes read): no known signature matched, nothing to explain"
            named = [d.name for d in self.deaths if d.name]
            if named:
                return (
                    f"no known signature matched; a process died of {', '.join(named)} "
                    "(a symptom: it names no cause)"
                )
            return "no known signature matched"
        if not self.causes:
            return f"{self.matches[0].id} matched; it names no cause (its note says what the vendor advises)"
        if self.residual_only:
            return (
                "no known signature matched; the failure reads as not a version problem "
                "(undecided: none of its lines points to the installation)"
            )
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


def matched(table: SignatureTable, scan: ScanResult, derived: Sequence[Signature] = ()) -> list[Signature]:
    """The signatures whose patterns were found: one of ``any`` and every one of ``all``;
    ordered by priority (high first), then file order (derived ones after)."""
    hits = scan.hits
    every = (*table.signatures, *derived)
    out = [s for s in every if any(p.key in hits for p in s.any) and all(p.key in hits for p in s.all)]
    order = {id(s): i for i, s in enumerate(every)}
    return sorted(out, key=lambda s: (-s.priority, order[id(s)]))


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


def fact_key(component: str) -> str:
    """The key of a component in log facts: driver, cann, or a canonical distribution name."""
    from cannenv.versions import canonicalize_name

    return component if component in ("driver", "cann") else canonicalize_name(component)


def judge_condition(
    cond: Condition, facts: Facts | None, log_facts: Mapping[str, str] | None = None
) -> tuple[CauseStatus, str]:
    """Whether ``cond.component`` meets the condition, by the project's version grammars (HDK,
    CANN, PEP 440): on the version the log prints when it prints one (the environment that failed),
    else on the host's."""
    logged = (log_facts or {}).get(fact_key(cond.component))
    have = (
        logged if logged is not None else (_installed(cond.component, facts) if facts is not None else None)
    )
    where = "the log shows" if logged is not None else "this host has"
    bound = cond.below or cond.at_least
    if have is None:
        return "undecided", f"{cond.component}: not found on this host (decides: {cond.describe()})"
    hv, bv = _version(cond.component, have), _version(cond.component, bound)
    if hv is None or bv is None:
        return "undecided", f"{cond.component} {have}: not comparable with {bound}"
    holds = hv < bv if cond.below else hv >= bv
    verb = "below" if cond.below else "at least"
    if holds:
        return "confirmed", f"{where} {cond.component} {have}, {verb} {bound}, the version this error needs"
    return "ruled-out", f"{where} {cond.component} {have}, not {verb} {bound}"


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
    if any(f.status == "warn" for f in fs):
        return "consistent", basis, remedy
    return "undecided", basis, remedy


def _verdict(
    sig: Signature,
    sc: SignatureCause,
    cause: Cause,
    table: SignatureTable,
    facts: Facts | None,
    findings: Mapping[str, Sequence[Finding]] | None,
    log_facts: Mapping[str, str] | None = None,
    contradicted: str | None = None,
) -> CauseVerdict:
    """One cause decided; ``contradicted``: where the log's versions and this host's disagree (the
    log may come from another environment), so no fact of this host ties the cause to the error."""
    checks = sc.checks if sc.checks is not None else cause.checks
    statuses: list[CauseStatus] = []
    basis: list[str] = []
    remedy: str | None = None
    confirmed_by: tuple[str, ...] = ()
    tie: str | None = None
    contradiction: str | None = None
    if sc.when is not None and (facts is not None or (log_facts or {}).get(fact_key(sc.when.component))):
        st, why = judge_condition(sc.when, facts, log_facts)
        statuses.append(st)
        basis.append(why)
        if st == "confirmed":
            tie = why
        contradiction = _contradiction(sc.when.component, facts, log_facts)
    if sc.log_tie is not None:  # the log's own line ties it (the kernel's OOM killer)
        statuses.append("confirmed")
        basis.append(sc.log_tie)
        tie = sc.log_tie
    if findings is not None:
        st_c, basis_c, remedy = judge_checks(checks, findings)
        if st_c == "confirmed":
            confirmed_by = tuple(
                dict.fromkeys(c for c in checks for f in findings.get(c, ()) if f.status == "fail")
            )
            tie = tie or basis_c[0]
        if st_c is not None:
            statuses.append(st_c)
            basis += basis_c
    status: CauseStatus
    if "confirmed" in statuses:
        status = "confirmed"
    elif statuses and all(s == "ruled-out" for s in statuses):
        status = "ruled-out"
    elif "consistent" in statuses:
        status = "consistent"
    else:
        status = "undecided"
    if status == "confirmed" and contradicted and not (tie or "").startswith(LOG_TIE):
        # only this host's facts confirm it, and the log says it ran elsewhere: they allow the
        # cause, they do not tie it to this error
        status = "consistent"
        contradiction = contradiction or contradicted
    decide: tuple[str, ...] = ()
    if status in ("undecided", "consistent"):
        facts_ = sc.facts if sc.facts is not None else cause.facts
        decide = ((f"whether {sc.when.describe()}",) if sc.when else ()) + facts_
        if contradiction:
            decide = (ELSEWHERE, *decide)
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
        sources=tuple(_source(table, s) for s in sc.sources),
        version_problem=cause.version_problem,
        confirmed_by=confirmed_by if status == "confirmed" else (),
        tie=tie if status == "confirmed" else None,
        contradiction=contradiction,
    )


LOG_TIE = "the log shows "
"""How a tie decided on the log's own version begins (judge_condition)."""
ELSEWHERE = "the facts of the environment the log comes from (`cannenv facts --json` there, then --facts)"


def _contradiction(component: str, facts: Facts | None, log_facts: Mapping[str, str] | None) -> str | None:
    logged = (log_facts or {}).get(fact_key(component))
    if logged is None or facts is None:
        return None
    have = _installed(component, facts)
    if have is None or _version(component, have) == _version(component, logged):
        return None
    return (
        f"the log shows {component} {logged}; this host has {have} — the log may come from another "
        "environment; judge it with --facts from that one"
    )


def log_facts_of(table: SignatureTable, scan: ScanResult) -> dict[str, str]:
    """The versions the log prints (the version extractors of the knowledge): the first value of
    each component."""
    out: dict[str, str] = {}
    for e in table.knowledge.extractors if table.knowledge is not None else ():
        if e.kind != "version" or e.component is None:
            continue
        found = scan.values.get(e.id)
        if found:
            out.setdefault(fact_key(e.component), next(iter(found)))
    return out


def deaths_of(table: SignatureTable, scan: ScanResult) -> tuple[Death, ...]:
    """How the log's processes died: every report of a death the death extractors found (a shell's
    ``Killed``, Python's ``died with <Signals.SIGKILL: 9>``, torchrun's ``exitcode  : -9``, an exit
    status of 128+N, a pool's worker that died), resolved to signal(7)'s row; one per signal (the
    first line, every report counted), at most :data:`MAX_DEATHS`."""
    k = table.knowledge
    d = k.deaths if k is not None else None
    if d is None or not scan.values:
        return ()
    out: dict[str, Death] = {}
    for e in k.extractors if k is not None else ():
        if e.kind not in ("signal", "exit-status", "process-died"):
            continue
        for value, v in scan.values.get(e.id, {}).items():
            parts = [x for x in value.split("|") if x]
            if not parts:
                continue
            sig = None
            said = " ".join(parts)
            if e.kind == "exit-status":
                status = int(parts[0]) if parts[0].isdecimal() else 0
                sig = d.signal(str(status - 128)) if status > 128 else None
                if sig is None:
                    continue
                said = f"exit status {status} = 128 + {sig.number}"
            elif e.kind == "signal":
                sig = next((x for x in map(d.signal, parts) if x is not None), None)
                if sig is None:
                    continue
            key = sig.name if sig is not None else e.id
            had = out.get(key)
            if had is not None:
                out[key] = replace(had, count=had.count + v.count)
                continue
            if len(out) >= MAX_DEATHS:
                continue
            sources = tuple(
                _source(table, sid)
                for sid in dict.fromkeys(
                    x for x in (e.source, sig.source if sig is not None else None) if x is not None
                )
            )
            out[key] = Death(
                sig.number if sig is not None else None,
                sig.name if sig is not None else None,
                sig.action if sig is not None else None,
                sig.meaning if sig is not None else "a child process died; the report does not say how",
                said,
                v.line,
                v.count,
                sources,
            )
    return tuple(out.values())


MAX_DEATHS = 8
"""Distinct deaths kept (one per signal; a log of 1,000 ranks killed by SIGTERM is one)."""


def _derive_deaths(
    table: SignatureTable, scan: ScanResult, deaths: Sequence[Death]
) -> tuple[list[Signature], dict[str, Hit]]:
    """The signatures a death gives: the kernel's OOM-killer line (host memory, confirmed by the line
    itself) and a death by a signal whose row has a reading (SIGKILL: host memory, undecided: a
    timeout, a scheduler or a user sends it too). Other deaths (SIGSEGV, SIGABRT …) name no cause:
    they are facts of the explanation, never a signature."""
    k = table.knowledge
    d = k.deaths if k is not None else None
    if d is None or k is None:
        return [], {}
    sigs: list[Signature] = []
    hits: dict[str, Hit] = {}

    def add(
        sid: str,
        title: str,
        component: str,
        priority: int,
        key: str,
        line: str,
        count: int,
        r: Any,
        log_tie: str | None,
        supersedes: tuple[str, ...] = (),
    ) -> None:
        hits[key] = Hit(count, [line])
        sigs.append(
            Signature(
                id=sid,
                title=title,
                component=component,
                any=(Pattern(key, key, rx=None),),
                all=(),
                priority=priority,
                causes=(SignatureCause(r.cause, r.why, r.sources, (), None, r.remedy, r.facts, log_tie),),
                note="",
                derived=True,
                supersedes=d.supersedes + supersedes,
            )
        )

    oom = [v for e in k.extractors if e.kind == "oom-kill" for v in scan.values.get(e.id, {}).items()]
    if oom:
        said, v = oom[0]
        kernel_lines = {x.line for _, x in oom}
        decided = []  # a generic out-of-memory reading whose every line is the kernel's own
        for sid in d.oom_killer_supersedes:
            try:
                generic = table.signature(sid)
            except KeyError:
                continue
            read = [scan.hits[p.key] for p in generic.any if p.key in scan.hits]
            if read and all(h.count == len(h.lines) and set(h.lines) <= kernel_lines for h in read):
                decided.append(sid)
        add(
            "kernel-oom-killer",
            f"the kernel's OOM killer killed a process ({said.split('|')[0]}): host memory ran out",
            "Linux kernel (the OOM killer)",
            KERNEL_OOM_PRIORITY,
            "derived:oom-kill",
            v.line,
            len(kernel_lines),
            d.oom_killer,
            f"{LOG_TIE}the kernel's OOM killer: {v.line}",
            tuple(decided),
        )
    for death in deaths:
        sig = d.signal(death.name) if death.name else None
        if sig is None or sig.reading is None:
            continue
        add(
            f"process-killed-{sig.name.lower()}",
            f"a process was killed by {sig.name} (signal {sig.number}: {death.said})",
            "Linux signal(7) (how the process died)",
            DEATH_PRIORITY,
            f"derived:death:{sig.name}",
            death.line,
            death.count,
            sig.reading,
            None,
        )
    return sigs, hits


def crash_frame(text: str) -> tuple[str, str]:
    """A backtrace frame's function and the shared object it runs in, from what gdb prints after
    ``#N  0xADDR in `` (``FUNC (ARGS) from /path/libX.so``; no library for a frame with debug
    information, ``… at file.cc:N``)."""
    func, sep, lib = text.rpartition(" from ")
    if not sep:
        return text.strip(), ""
    return func.strip(), lib.strip()


def _derive_cxx11_abi_crash(
    k: Knowledge, scan: ScanResult, deaths: Sequence[Death], add: Callable[..., None]
) -> None:
    """A process that died dumping core (SIGABRT, SIGSEGV, SIGBUS …: signal(7)'s Core action) inside
    libstdc++'s C++11-ABI code (a frame whose function is ``std::…`` with ``__cxx11`` before its
    arguments: the new std::string/std::list, libstdc++'s Dual ABI), with a library of NNAL on the
    same stack (the shared-object table): NNAL ships a cxx_abi_0 and a cxx_abi_1 build and its
    set_env.sh picks one from torch's ABI, so objects of the two ABIs pass these types to each other.
    A frame that only takes a std::__cxx11 argument (``c10::Error::Error(…, std::__cxx11::…)``) is
    not inside that code."""
    if not any(d.action == "Core" for d in deaths):
        return
    cxx11: tuple[str, Any] | None = None
    nnal: str | None = None
    for e in k.extractors:
        if e.kind != "crash-frame":
            continue
        for value, v in scan.values.get(e.id, {}).items():
            func, lib = crash_frame(value)
            if cxx11 is None and func.startswith("std::") and "__cxx11" in func.partition("(")[0]:
                cxx11 = (func, v)
            if nnal is None and lib and k.package_of(lib) == "nnal":
                nnal = lib.rsplit("/", 1)[-1]
    if cxx11 is None or nnal is None:
        return
    func, v = cxx11
    add(
        "cxx11-abi-crash-nnal",
        f"a process crashed inside libstdc++'s C++11-ABI code with NNAL's {nnal} on the stack",
        "NNAL (ATB) cxx_abi_0/cxx_abi_1 build against torch's C++ ABI",
        22,
        f"derived:cxx11-abi-crash:{nnal}",
        v.line,
        v.count,
        [
            (
                "nnal-mismatch",
                f"the crash is in {func.partition('(')[0][:160]} (std::__cxx11: the C++11 ABI) with {nnal} on"
                " the stack: NNAL's cxx_abi variant and torch (or the library calling it) pass std::string/"
                "std::list across two ABIs — use the NNAL build (cxx_abi_0/1) of torch's ABI",
                ("gcc-dual-abi", "nnal-set-env", "gdb-backtrace"),
            ),
            (
                "env-not-sourced",
                "NNAL's set_env.sh chose the variant when it was sourced (cxx_abi_1 when torch could not be"
                " imported): source it again in the environment that runs torch, or with --cxx_abi=N",
                "nnal-set-env",
            ),
        ],
    )


def _same_release_build(requirement: str, name: str, installed: str) -> bool:
    """Whether pip's ``requires NAME==V`` against an installed ``V`` with a pre-release, dev or
    local label (``torch==1.5.0`` against ``1.5.0a0+1977093``) names one release: PEP 440's ``==``
    compares the whole public version, so a source or vendor build of V fails the pin."""
    import re

    from packaging.version import InvalidVersion, Version

    from cannenv.explain.knowledge import dist_name

    m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])? ?== ?([0-9][0-9.]*)", requirement.strip())
    if m is None or dist_name(m.group(1)) != name:
        return False
    try:
        pinned, got = Version(m.group(2)), Version(installed.rstrip("."))
    except InvalidVersion:
        return False
    if got == pinned or not (got.is_prerelease or got.local is not None):
        return False

    def padded(v: Version) -> tuple[int, ...]:
        return v.release + (0,) * (4 - len(v.release))

    return padded(got) == padded(pinned)


def _derive_python_dists(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """A Python distribution a packaging tool reports of another version than required or not
    installed (pkg_resources' VersionConflict and DistributionNotFound, pip's check and resolver
    lines, importlib.metadata's PackageNotFoundError, transformers' require_version: the
    ``python-dist-*`` extractors): the distribution named decides. One of CANN's Python dependencies
    is ``python-deps``; a package of the stack is ``framework-mismatch`` when of another version
    (its release pairs with the others'), ``python-deps`` when missing from the Python that runs the
    job; any other is ``third-party-library``."""
    from cannenv.explain.knowledge import dist_name

    done: set[tuple[str, str]] = set()
    for e in k.extractors:
        if e.kind not in ("python-dist-conflict", "python-dist-missing"):
            continue
        conflict = e.kind == "python-dist-conflict"
        for value, v in scan.values.get(e.id, {}).items():
            parts = value.split("|")  # pip's lines: the requirement, the name, the installed version
            name = dist_name(parts[1] if len(parts) == 3 else parts[0])
            if name == "python" or (name, e.kind) in done:  # transformers' python>=X: the interpreter
                continue
            done.add((name, e.kind))
            if len(parts) == 3 and _same_release_build(parts[0], name, parts[2]):
                add(
                    "python-dist-same-release-build",
                    f"pip reports {name} {parts[2].rstrip('.')} against {parts[0]} (a build of that release)",
                    "Python packaging (pip)",
                    10,
                    f"derived:python-dist:same-release:{name}",
                    v.line,
                    v.count,
                    [
                        (
                            "not-a-version-problem",
                            f"{name} {parts[2].rstrip('.')} is a pre-release, dev or locally labelled build"
                            f" of the very release {parts[0]} pins (a source or vendor build): PEP 440's =="
                            " does not match the label, so pip reports it, but no other release is installed",
                            ("pep440-version-matching", e.source or "pip-install-conflicts"),
                        )
                    ],
                )
                continue
            group = k.python_dist(name)
            what = "of another version than required" if conflict else "not installed"
            reading = "conflict" if conflict else "missing"
            if group is None:
                sid, cause = f"python-dist-third-party-{reading}", "third-party-library"
                why = f"{name} is none of CANN's Python dependencies and no package of the NPU stack"
                src: str | tuple[str, ...] = e.source or "py-site"
            else:
                kind, gsrc, reason = group
                src = (e.source, gsrc) if e.source else gsrc
                if kind == "cann-dep":
                    sid, cause, why = f"python-dist-cann-dep-{reading}", "python-deps", f"{name} is {reason}"
                elif conflict:
                    sid, cause, why = (
                        "python-dist-stack-conflict",
                        "framework-mismatch",
                        f"{name} is {reason}",
                    )
                else:
                    sid, cause = "python-dist-stack-missing", "python-deps"
                    why = f"{name} is {reason}; it is missing from the Python that runs the job"
            add(
                sid,
                f"the packaging tools report {name} {what}",
                "Python packaging (pip, pkg_resources, importlib.metadata)",
                10 if conflict else 6,
                f"derived:python-dist:{e.kind}:{name}",
                v.line,
                v.count,
                [(cause, why, src)],
                supersedes=() if conflict else ("python-package-metadata-missing",),
            )


def derive(
    table: SignatureTable, scan: ScanResult, deaths: Sequence[Death] = ()
) -> tuple[list[Signature], dict[str, Hit]]:
    """Signatures made from what the extractors found: a missing shared object (the package that
    ships it), an undefined symbol (demangled, by namespace and the library that needs it), an
    HCCL result code, the driver's drvError_t after ``drvRetCode=``, a Python exception raised in
    the program's own code (:mod:`cannenv.explain.pycode`), a failed check a program or tool printed
    (:mod:`cannenv.explain.failedchecks`); each with the line it came from."""
    from cannenv.explain.knowledge import demangle, message_key

    k = table.knowledge
    if k is None or not scan.values:
        return [], {}
    sigs: list[Signature] = []
    hits: dict[str, Hit] = {}

    def add(
        sid: str,
        title: str,
        component: str,
        priority: int,
        key: str,
        line: str,
        count: int,
        causes: Iterable[tuple[str, str, str | tuple[str, ...]]],
        supersedes: tuple[str, ...] = (),
        note: str = "",
    ) -> None:
        """One derived signature and its hit; a cause's sources: one id or several."""
        hits[key] = Hit(count, [line])
        sigs.append(
            Signature(
                id=sid,
                title=title,
                component=component,
                any=(Pattern(key, key, rx=None),),
                all=(),
                priority=priority,
                causes=tuple(
                    SignatureCause(c, why, (src,) if isinstance(src, str) else src, None, None, None)
                    for c, why, src in causes
                ),
                note=note,
                derived=True,
                supersedes=supersedes,
            )
        )

    libraries: dict[str, Any] = {}  # every library extractor's values (the loader's, a tool's own dlopen)
    for e in k.extractors:
        if e.kind == "library":
            for value, v in scan.values.get(e.id, {}).items():
                libraries.setdefault(value, v)
    for value, v in libraries.items():
        lib = k.library(value)
        key = f"derived:library:{value}"
        if lib is not None:
            add(
                f"library-{lib.name.rstrip('_')}",
                f"{value} is not found by the loader (it ships with {lib.package_title})",
                f"dynamic loader ({lib.package_title})",
                12,
                key,
                v.line,
                v.count,
                [(c, f"{value} ships with {lib.package_title}", lib.source) for c in lib.causes],
                # cffi's "cannot load library 'X'" is read as a system library; X's package decides
                supersedes=("cffi-cannot-load-library",),
            )
        else:
            add(
                "library-third-party",
                f"{value} is not found by the loader (none of CANN, the driver, NNAL, torch, torch_npu)",
                "dynamic loader (a third-party library)",
                4,
                key,
                v.line,
                v.count,
                [
                    (
                        "third-party-library",
                        f"{value} is none of the libraries the knowledge tables map",
                        "torch-npu-setup",
                    )
                ],
            )
    for e in k.extractors:  # the linker's -lNAME it found nowhere: lib<NAME>.so, mapped alike
        if e.kind != "link-library":
            continue
        for value, v in scan.values.get(e.id, {}).items():
            lib = k.library(f"lib{value}.so")
            if lib is None or "env-not-sourced" not in lib.causes:
                continue  # a library no set_env.sh puts on the path: link-library-missing's own reading
            add(
                f"link-library-{lib.name.rstrip('_')}",
                f"the linker cannot find -l{value} (lib{value}.so ships with {lib.package_title})",
                "a build's link step",
                12,
                f"derived:link-library:{value}",
                v.line,
                v.count,
                [
                    (
                        "env-not-sourced",
                        f"lib{value}.so ships with {lib.package_title}: the build finds it through the"
                        " folders its environment names (set_env.sh, the CANN path a build script reads)",
                        ("ascend-samples-link", "gnu-ld-ldfile"),
                    ),
                    (
                        "not-a-version-problem",
                        "the build's own link line names a library this install does not have where it looks",
                        "paddle-61172",
                    ),
                ],
                supersedes=("link-library-missing",),
            )
    _derive_cxx11_abi_crash(k, scan, deaths, add)
    _derive_python_dists(k, scan, add)

    for e in k.extractors:  # a header the compiler did not find that a package of the CANN toolkit installs
        if e.kind != "header" or not scan.values.get(e.id) or not k.headers:
            continue
        for value, v in scan.values.get(e.id, {}).items():
            shipped_by = k.headers.get(value)
            if shipped_by is None or shipped_by[0] != "cann-toolkit":
                continue
            list_id = shipped_by[1]
            listed = k.sources.get(list_id, (list_id, ""))[0]
            add(
                "header-cann-toolkit",
                f"{value} is not found by the compiler (the CANN toolkit installs it in its include folder)",
                "a build against CANN (the toolkit's include folder)",
                HEADER_PRIORITY,
                f"derived:header:{value}",
                v.line,
                v.count,
                [
                    (
                        "env-not-sourced",
                        f"{value} is installed by the CANN toolkit in its include folder "
                        f"({listed}); a build finds it only through the CANN "
                        "environment (ASCEND_TOOLKIT_HOME from set_env.sh, or the CANN path the project's "
                        "build is given) with the toolkit's development files installed: source set_env.sh "
                        "of the CANN the build is for, or pass its path, and configure again",
                        list_id,
                    )
                ],
            )
    for value, v in scan.values.get("undefined-symbol", {}).items():
        needed_by, _, symbol = value.partition("|")
        name = demangle(symbol) or symbol
        rule = k.symbol(name, needed_by)
        if rule is None and symbol.startswith("_Z"):  # a cut-off mangled name: its first namespace
            rule = next(
                (
                    r
                    for r in k.symbols
                    if r.prefix.endswith("::")
                    and _mangled_ns(symbol, r.prefix[:-2])
                    and (r.needed_by is None or r.needed_by in needed_by)
                    and (r.needed_by_not is None or r.needed_by_not not in needed_by)
                ),
                None,
            )
        if rule is None and symbol.startswith("_Z"):  # a C++ name of none of the stack's namespaces
            rule = k.symbol(name, needed_by, wildcard=True)
        if rule is None:
            continue
        if rule.prefix == "*":
            add(
                f"symbol-{rule.needed_by_package}-extension",
                f"{needed_by} needs {name}, which no package of the stack provides: {rule.provider}",
                f"{needed_by} (a {rule.needed_by_package} extension)",
                27,
                f"derived:symbol:{value}",
                v.line,
                v.count,
                [(c, f"{rule.reason or rule.provider} ({name})", rule.source) for c in rule.causes],
            )
            continue
        add(
            f"symbol-{rule.prefix.strip(':').lower()}",
            f"{needed_by} needs {name}, which the installed {rule.provider} does not provide",
            f"{needed_by} against {rule.provider}",
            27,
            f"derived:symbol:{value}",
            v.line,
            v.count,
            [
                (
                    c,
                    f"{needed_by} was built against another {rule.provider} than the one installed ({name})",
                    rule.source,
                )
                for c in rule.causes
            ],
        )
    code_values: dict[str, Any] = {}
    for e in k.extractors:
        if e.kind == "code":
            for value, v in scan.values.get(e.id, {}).items():
                # a hex return code (DVPP's 0xa0058003) is the table's upper-case spelling
                code_values.setdefault("0x" + value[2:].upper() if value.startswith("0x") else value, v)
    for value, v in scan.values.get(ERROR_CODE_CAPTURE, {}).items():
        code_values.setdefault(value, v)
    rtge = _rtge_matches(k, scan)  # the runtime's and GE's own lines, matched once for both readers
    for value, v in _rtge_codes(rtge):  # the runtime's own error-code report, its code's row decides
        code_values.setdefault(value, v)
    # each table below is read only when the log has a value for it (the cached table loads a
    # part on first use: cannenv.explain.lazy)
    for e in k.extractors:  # torch_npu's sentence for a code ("[Error]: Failed to apply for memory.")
        if e.kind != "npu-message" or not scan.values.get(e.id) or not k.messages:
            continue
        for value, v in scan.values.get(e.id, {}).items():
            for said in k.messages.get(message_key(value), ()):
                code_values.setdefault(said.code, v)
    for e in k.extractors:
        if e.kind != "rt-inner" or not scan.values.get(e.id) or not k.inner_codes:
            continue
        for value, v in scan.values.get(e.id, {}).items():
            inner = k.inner_codes.get(int(value, 16)) if _is_hex(value) else None
            public = k.public_code(inner.acl) if inner is not None else None
            if inner is None or public is None or not public.causes:
                continue
            add(
                f"rt-inner-{inner.code.lower()}",
                f"{inner.code} {inner.name}: {inner.meaning} (reported as {public.code} {public.name})",
                "CANN runtime (internal error code)",
                KNOWLEDGE_PRIORITY,
                f"derived:rt-inner:{inner.code}",
                v.line,
                v.count,
                [
                    (
                        c,
                        f"the runtime's table: {inner.code} is {inner.name} ({inner.meaning}), reported as "
                        f"{public.code} {public.name} ({public.meaning})",
                        inner.source,
                    )
                    for c in public.causes
                ],
            )
    _derive_rt_reason(k, scan, add)
    for value, v in code_values.items():
        code = k.code(value)
        if code is None or not code.causes or code.family not in FAMILY_TITLE:
            continue
        key = f"derived:code:{value}"
        hits[key] = Hit(v.count, [v.line])
        sigs.append(code_signature(code, (Pattern(key, key, rx=None),)))
    any_message = any(key.startswith(MESSAGE_CAPTURE) for key in scan.values)
    for m in k.source_messages if any_message else ():  # a message read out of the vendor's source
        found = scan.values.get(MESSAGE_CAPTURE + m.id)
        if not found or not m.causes:
            continue
        said_at = next(iter(found.values()))
        component, priority = MESSAGE_FAMILY[m.family]
        where = f"{component} ({m.at.split('#', 1)[0]})"
        printed = " … ".join(m.text)
        add(
            f"{m.family}-{m.id.split('-', 1)[1]}",
            f"{component} says: {printed}" + (f" ({m.code})" if m.code else ""),
            where,
            priority,
            f"derived:msg:{m.id}",
            said_at.line,
            said_at.count,
            [(c, f"{where} prints this message: {m.reason}", m.source) for c in m.causes],
        )
    for value, v in scan.values.get("hccl-result", {}).items():
        code = k.hccl_results.get(int(value)) if value.isdecimal() else None
        if code is None or not code.causes:
            continue
        add(
            f"hccl-result-{code.name.lower().replace('_', '-')}",
            f"HCCL returned {value} ({code.name}: {code.meaning})",
            "HCCL (HcclResult)",
            -25,
            f"derived:hccl-result:{value}",
            v.line,
            v.count,
            [
                (c, f"the vendor's table: {value} is {code.name} ({code.meaning})", code.source)
                for c in code.causes
            ],
        )
    _derive_hccl_source(k, scan, add)
    _derive_hccl_task(scan, add)
    if k.python_code is not None and (scan.values.get("py-frame") or scan.values.get("py-exception")):
        from cannenv.explain.pycode import read

        r = read(
            k.python_code,
            scan.values.get("py-frame", {}),
            scan.values.get("py-frame-outer", {}),
            scan.values.get("py-exception", {}),
            scan.error_lines,
        )
        if r is not None and deaths and r.id == "program-code-cut-traceback":
            r = None  # the traceback stops because the process died, not in the program's own code
        if r is not None:
            add(
                r.id,
                r.title,
                r.component,
                PROGRAM_CODE_PRIORITY,
                r.key,
                r.line,
                r.count,
                [("not-a-version-problem", r.why, r.sources)],
                r.supersedes,
            )
    _derive_cc_project_code(k, scan, add)
    _derive_aclnn_source(k, scan, add)
    _derive_rtge_source(rtge, add)
    _derive_ms_source(k, scan, add)
    _derive_drv_install(k, scan, add)
    for value, v in scan.values.get("drv-error", {}).items():
        code = k.driver_errors.get(int(value)) if value.isdecimal() else None
        if code is None or not code.causes:
            continue
        add(
            "drv-" + code.name.split("_ERROR_", 1)[-1].lower().replace("_", "-"),
            f"the driver returned {value} ({code.name}: {code.meaning})",
            "Ascend driver (drvError_t)",
            -25,
            f"derived:drv-error:{value}",
            v.line,
            v.count,
            [
                (
                    c,
                    f"the driver's table: {value} is {code.name} ({code.meaning})",
                    (code.source, "runtime-drv-api"),
                )
                for c in code.causes
            ],
        )
    _derive_lib_tables(k, scan, add)
    _derive_commands(k, scan, add)
    if any(key.startswith("check:") for key in scan.values) and k.failed_checks is not None:
        from cannenv.explain.failedchecks import read as read_checks

        # a failed check a program printed, on a line no other pattern or table reads (a library's
        # category, the vendor's message on the same line is the more precise reading of it)
        taken = {line for h in (*scan.hits.values(), *hits.values()) for line in h.lines}
        for c in read_checks(k.failed_checks, scan.values, taken):
            add(
                c.id,
                c.title,
                c.component,
                FAILED_CHECK_PRIORITY,
                c.key,
                c.line,
                c.count,
                [("not-a-version-problem", c.why, c.sources)],
            )
    return sigs, hits


def _derive_lib_tables(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """A category of a library's or tool's own error table found in a printed form (libtables.yaml):
    the row's causes (none: it matches and its note says what the table calls it), ranked below
    every other signature. The tables (a part of the cached table read on first use) are not read
    unless a form found something."""
    if not any(key.startswith("lib:") for key in scan.values):
        return
    for t in k.lib_tables:
        seen: set[str] = set()
        for f in t.forms:
            for value, v in scan.values.get(t.capture(f), {}).items():
                row = t.lookup(f.row or value)
                if row is None:
                    continue
                word = row.name.split(" ", 1)[0] if row.key.lstrip("-").isdecimal() else row.key
                sid = f"lib-{t.id}-{_slug(word)}"
                if sid in seen:
                    continue
                seen.add(sid)
                said = f"{t.title}'s {t.noun}: {row.name} ({row.meaning})"
                add(
                    sid,
                    f"{t.title}: {row.name} — {row.meaning}",
                    t.component,
                    LIBRARY_TABLE_PRIORITY if t.priority is None else t.priority,
                    f"derived:lib:{t.id}:{row.key}",
                    v.line,
                    v.count,
                    [(c, f"{said}; {row.reason}", (row.source_id, f.source)) for c in row.causes],
                    note="" if row.causes else f"{said}: names no cause by itself; {row.reason}",
                )


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")


def _source(table: SignatureTable, sid: str) -> Source:
    """A source by id: the tables' sources, else a row of HCCL's own messages or of the messages
    read out of the vendors' sources (its file and line at the commit)."""
    found = table.sources.get(sid)
    if found is not None:
        return found
    base, at, line = sid.partition("#L")
    found = table.sources.get(base) if at and line.isdecimal() else None
    if found is not None:  # a table row's line in its source's file (libtables.yaml: line)
        return Source(sid, f"{found.title}, line {line}", f"{found.url}#L{line}")
    k = table.knowledge
    lm = k.log_messages if k is not None else None
    row = lm.source(sid) if lm is not None else None
    om = k.op_messages if k is not None else None
    if row is None and om is not None and sid.startswith("aclnn-src:"):
        from cannenv.explain.opapi import OpMessages

        row = OpMessages(om).source(sid)
    rm = k.rtge_messages if k is not None else None
    if row is None and rm is not None and sid.startswith("rtge-src:"):
        from cannenv.explain.rtge import RtgeMessages

        row = RtgeMessages(rm).source(sid)
    mm = k.ms_messages if k is not None else None
    if row is None and mm is not None and sid.startswith("ms-src:"):
        from cannenv.explain.msascend import MsMessages

        row = MsMessages(mm).source(sid)
    if row is None and k is not None:
        row = k.message_source(sid)
    if row is None:
        raise KeyError(sid)
    return Source(sid, row[0], row[1])


HCCL_TASK_PRIORITY = 20
"""HCCL's task exception reports read together (:func:`_derive_hccl_task`): above the stage keyword's
signature (15), whose cause (hccl-link) is what the stage alone suggests; the reports' detail decides."""


def _derive_hccl_task(scan: ScanResult, add: Callable[..., None]) -> None:
    """HCCL's task exception reports of several ranks read as its fault guide reads them
    (task_exec_stage.md, notify wait timeout EI0002): ranks of one communicator that failed in
    different collectives issue different collectives (hccl-consistency); ranks that failed in the
    same collective further apart than the HCCL_EXEC_TIMEOUT the log prints waited past it
    (hccl-config: the gap is expected and the timeout too short, or the application is slow). A
    log without the detail (one rank, graph-mode tags, no timeout printed) decides nothing here."""
    from datetime import datetime

    reports = scan.values.get("hccl-task-base")
    if not reports:
        return
    ops: dict[str, dict[str, list[tuple[datetime, Any]]]] = {}  # group -> op -> (time, value)
    for value, v in reports.items():
        when, op, group = [*value.split("|"), "", ""][:3]
        try:
            at = datetime.strptime(when, "%Y-%m-%d-%H:%M:%S")
        except ValueError:
            continue
        ops.setdefault(group, {}).setdefault(op, []).append((at, v))
    doc = "hccl-task-exec-stage"
    for group, by_op in ops.items():
        if len(by_op) < 2:
            continue
        names = sorted(by_op)
        first = by_op[names[0]][0][1]
        add(
            "hccl-task-different-collectives",
            f"HCCL: ranks of one communicator failed in different collectives ({', '.join(names[:4])})",
            "HCCL (task exception reports)",
            HCCL_TASK_PRIORITY,
            f"derived:hccl-task-ops:{group}",
            first.line,
            sum(len(x) for x in by_op.values()),
            [
                (
                    "hccl-consistency",
                    f"HCCL's fault guide (EI0002): the task exception reports of communicator {group[:80]} "
                    f"name different collectives ({', '.join(names[:4])}) for its ranks — the ranks "
                    "issue different collectives; find why in the application",
                    (doc, "hccl-task-exception-log"),
                )
            ],
        )
        return
    limits = [int(x) for x in scan.values.get("hccl-exec-timeout", {}) if x.isdecimal()]
    if not limits:
        return
    limit = max(limits)
    for group, by_op in ops.items():
        for op, seen in by_op.items():
            times = sorted(t for t, _ in seen)
            gap = (times[-1] - times[0]).total_seconds()
            if len(times) < 2 or gap <= limit:
                continue
            add(
                "hccl-task-gap-over-exec-timeout",
                f"HCCL: ranks failed in {op} {gap:.0f} s apart, longer than HCCL_EXEC_TIMEOUT ({limit} s)",
                "HCCL (task exception reports)",
                HCCL_TASK_PRIORITY,
                f"derived:hccl-task-gap:{op}:{group}",
                seen[0][1].line,
                len(seen),
                [
                    (
                        "hccl-config",
                        f"HCCL's fault guide (EI0002): the ranks of communicator {group[:80]} failed "
                        f"in the same {op} {gap:.0f} s apart while HCCL_EXEC_TIMEOUT is {limit} s — one rank "
                        "arrived after the other had given up; if that gap is expected, set "
                        "HCCL_EXEC_TIMEOUT longer, else find the slow rank in the application",
                        (doc, "hccl-exec-timeout-log"),
                    )
                ],
            )
            return


def _derive_hccl_source(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """HCCL's own messages found in its ERROR lines (the file the line names, then the message's
    literal; hccl_messages.yaml) and the HcclResult an ``errNo[0x…]`` carries."""
    seen: set[str] = set()
    table = k.log_messages
    for e in k.extractors if table is not None else ():
        if e.kind not in ("hccl-log", "hccl-message"):
            continue
        for value, v in scan.values.get(e.id, {}).items():
            # a plog line names its file; a message pasted without its prefix is looked up in every row
            file, _, text = value.partition("|") if e.kind == "hccl-log" else ("", "", value)
            for m in table.match(file or None, text) if table is not None else ():
                sid = f"hccl-src-{m.module}-{m.file.rsplit('.', 1)[0].lower().replace('_', '-')}-{m.line}"
                if not m.causes or sid in seen:
                    continue
                seen.add(sid)
                returns = f"; the call returns {m.result}" if m.result else ""
                reports = f" after reporting {m.code}" if m.code else ""
                add(
                    sid,
                    f'HCCL logged its own message of {m.file}:{m.line}: "{m.format}"',
                    f"HCCL ({m.path.rsplit('/', 1)[0]}, module {m.module})",
                    SOURCE_PRIORITY,
                    f"derived:hccl-src:{m.repo}:{m.path}:{m.line}",
                    v.line,
                    v.count,
                    [
                        (
                            c,
                            f"HCCL's source logs this in {m.path}{reports}{returns}; "
                            f"module {m.module}: {m.reason}",
                            m.source_id,
                        )
                        for c in m.causes
                    ],
                )
    oserr = k.errno
    for e in k.extractors if oserr is not None else ():  # an OSError: [Errno N] text: 'path'
        if e.kind != "errno":
            continue
        for value, v in scan.values.get(e.id, {}).items():
            number, _, rest = value.partition("|")
            path = rest.partition("|")[2]
            numeric = number.removeprefix("-").isdecimal()
            read = oserr.causes(int(number), path) if oserr is not None and numeric else None
            if read is None:
                continue
            what, causes, reason, source = read
            add(
                f"oserror-{what.split(' ', 1)[0].lower().replace('_', '-')}",
                f"the system call failed with {what}" + (f": {path}" if path else ""),
                "the operating system (errno)",
                OS_ERRNO_PRIORITY,
                f"derived:errno:{number}:{path}",
                v.line,
                v.count,
                [(c, reason, source) for c in causes],
            )
    layout = k.hccl_errno
    for e in k.extractors if layout is not None else ():
        if e.kind != "hccl-errno":
            continue
        for value, v in scan.values.get(e.id, {}).items():
            decoded = layout.decode(int(value, 16)) if layout is not None and value else None
            code = k.hccl_results.get(decoded[1]) if decoded is not None else None
            if decoded is None or code is None or not code.causes:
                continue
            sid = f"hccl-errno-{code.name.lower().replace('_', '-')}"
            if sid in seen:
                continue
            seen.add(sid)
            add(
                sid,
                f"HCCL errNo 0x{value} ({decoded[0]}) carries {code.value} {code.name}: {code.meaning}",
                "HCCL (errNo)",
                ERRNO_PRIORITY,
                f"derived:hccl-errno:{value.lower()}",
                v.line,
                v.count,
                [
                    (
                        c,
                        f"HCCL's errNo layout gives {code.name} ({code.meaning}); "
                        "the vendor's table points it here",
                        (layout.source, code.source) if layout is not None else code.source,
                    )
                    for c in code.causes
                ],
            )


def _derive_aclnn_source(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """The aclnn operators' own parameter-check messages found after ``EZ1001`` (the code
    ``OP_LOGE`` reports an ACLNN_ERR_PARAM_* check with; aclnn_messages.yaml): the one row that
    pins down most of the line, with the causes of the reviewed rule covering it."""
    found = [v for e in k.extractors if e.kind == "aclnn-log" for v in scan.values.get(e.id, {}).items()]
    if k.op_messages is None or not found:
        return
    from cannenv.explain.opapi import OpMessages

    table = OpMessages(k.op_messages)
    seen: set[str] = set()
    for value, v in found:
        m = table.match(value)
        if m is None or not m.causes:
            continue
        sid = f"aclnn-src-{m.rule}-{m.file.rsplit('.', 1)[0].lower().replace('_', '-')}-{m.line}"
        if sid in seen:
            continue
        seen.add(sid)
        where = m.path.rsplit("/", 1)[0]
        places = f" (and {m.sites - 1} other places of the operators' source)" if m.sites > 1 else ""
        add(
            sid,
            f'an aclnn operator\'s parameter check refused the call: "{m.format}" ('
            + (f"{m.file}:{m.line} and {m.sites - 1} other places" if m.sites > 1 else f"{m.file}:{m.line}")
            + f", {m.code})",
            f"aclnn operator ({m.repo.split('/')[-1]} {where})",
            SOURCE_PRIORITY,
            f"derived:aclnn-src:{m.repo}:{m.path}:{m.line}",
            v.line,
            v.count,
            [
                (
                    c,
                    f"the operator's source logs this with {m.code} in {m.path}{places}; "
                    f"rule {m.rule}: {m.reason}",
                    m.source_id,
                )
                for c in m.causes
            ],
        )


def _derive_rt_reason(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """The runtime's ``rtXxx execution failed, reason=…``: the reason is an inner code's meaning
    (errcode_manage.cc's table, ``inner_codes``), reported as that code's ACL code, whose row
    decides; a reason several inner codes share with different ACL codes decides nothing."""
    found = [v for e in k.extractors if e.kind == "rt-reason" for v in scan.values.get(e.id, {}).items()]
    if not found or not k.inner_codes:
        return
    # the log's own hex code of the same inner error (``reason=[device id error], err:0x7010003``)
    # is read by its extractor already: one signature, not two
    hex_seen = {
        int(value, 16)
        for e in k.extractors
        if e.kind == "rt-inner"
        for value in scan.values.get(e.id, {})
        if _is_hex(value)
    }
    by_meaning: dict[str, list[InnerCode]] = {}
    for inner in k.inner_codes.values():
        by_meaning.setdefault(inner.meaning.lower(), []).append(inner)
    for value, v in found:
        reason = value.strip().rstrip(".").strip()
        inners = by_meaning.get(reason.lower(), [])
        if len({x.acl for x in inners}) != 1 or any(int(x.code, 16) in hex_seen for x in inners):
            continue
        inner = inners[0]
        public = k.public_code(inner.acl)
        if public is None or not public.causes:
            continue
        add(
            f"rt-reason-{inner.code.lower()}",
            f'the runtime\'s reason "{reason}": {inner.name} (reported as {public.code} {public.name})',
            "CANN runtime (error reason)",
            KNOWLEDGE_PRIORITY,
            f"derived:rt-reason:{inner.code}",
            v.line,
            v.count,
            [
                (
                    c,
                    f'the runtime\'s table gives the reason "{reason}" to {inner.code} {inner.name}, '
                    f"reported as {public.code} {public.name} ({public.meaning})",
                    inner.source,
                )
                for c in public.causes
            ],
        )


GE_BELOW_RUNTIME = 1
"""GE's messages rank this much below the runtime's (SOURCE_PRIORITY): GE calls the runtime, so
where both logged a message with a cause, the runtime's (the callee's) is the detail."""


def _rtge_lines(k: Knowledge, scan: ScanResult) -> list[tuple[str, str, Any]]:
    """(file, message, value) of the runtime's and GE's ERROR lines and the error manager's reports."""
    found: list[tuple[str, str, Any]] = []
    for e in k.extractors:
        if e.kind == "rtge-log":
            for value, v in scan.values.get(e.id, {}).items():
                file, _, text = value.partition("|")
                found.append((file, text, v))
        elif e.kind == "rtge-report":
            for value, v in scan.values.get(e.id, {}).items():
                text, _, file = value.rpartition("|")
                found.append((file, text, v))
    return found


def _rtge_matches(k: Knowledge, scan: ScanResult) -> list[tuple[str, Any, list[Any]]]:
    """(text, value, best rows) of each runtime/GE ERROR line and error-manager report: the rows of
    rtge_messages.yaml whose fixed text the line holds most of (:meth:`RtgeMessages.best`), matched
    once for both readers below."""
    found = _rtge_lines(k, scan)
    if k.rtge_messages is None or not found:
        return []
    from cannenv.explain.rtge import RtgeMessages

    table = RtgeMessages(k.rtge_messages)
    return [(text, v, table.best(file, text)) for file, text, v in found]


def _rtge_codes(matches: Sequence[tuple[str, Any, list[Any]]]) -> list[tuple[str, Any]]:
    """The public error codes (``EE1023``) of the runtime's own error-code reports found in its
    ERROR lines (``RT_LOG_OUTER_MSG_IMPL``: ``Alloc Stream resource failed. Reason: Too many
    streams are created. ErrorCode=EE1023.``) that no reviewed rule covers: each is that code's
    occurrence, which the code's row decides (a line cut before ``ErrorCode=`` included)."""
    if not matches:
        return []
    from cannenv.explain.rtge import public_code

    return [(m.code, v) for _, v, best in matches for m in best if not m.causes and public_code(m.code)]


def _derive_rtge_source(matches: Sequence[tuple[str, Any, list[Any]]], add: Callable[..., None]) -> None:
    """The runtime's and GE's own messages found in their ERROR lines (the file the line names,
    then the message; rtge_messages.yaml) and in the error manager's reports (the message before
    ``[FUNC:…][FILE:…]``), with the causes of the reviewed rule covering the row; a rule covering
    a row that reports a public code (EE1016's reason) supersedes that code's generic row."""
    if not matches:
        return
    from cannenv.explain.rtge import RtgeMessage, public_code
    from cannenv.explain.rtge import specificity as rtge_specificity

    seen: set[tuple[str, str, str]] = set()
    for text, v, best in matches:
        matched = [m for m in best if m.causes]
        groups: dict[tuple[str, str], list[RtgeMessage]] = {}
        for m in matched:
            groups.setdefault((m.component, m.rule), []).append(m)
        for group in groups.values():
            # one line, one message: of the rows that match it (one message logged at several
            # places, or worded alike: "drv devId=%u" and "drv devId=%d"), the one whose fixed text
            # the line holds most of, the first place on a tie; the others are named by their number
            m = max(group, key=lambda x: rtge_specificity(x.format, text))
            key = (m.component, m.format, m.rule)
            if key in seen:
                continue
            seen.add(key)
            others = len(group) - 1
            stem = m.file.rsplit(".", 1)[0].lower().replace("_", "-")
            code = f" with {m.code}" if m.code else ""
            places = f" (and {others} other messages alike)" if others else ""
            add(
                f"rtge-src-{m.rule}-{m.component.lower()}-{stem}-{m.line}",
                f'{m.component} logged its own message of {m.file}:{m.line}{places}: "{m.format}"',
                f"{'GE' if m.component == 'GE' else 'CANN runtime'} ({m.path.rsplit('/', 1)[0]})",
                SOURCE_PRIORITY - (GE_BELOW_RUNTIME if m.component == "GE" else 0),
                f"derived:rtge-src:{m.repo}:{m.path}:{m.line}",
                v.line,
                v.count,
                [
                    (
                        c,
                        f"the {m.component}'s source logs this{code} in {m.path}{places}; "
                        f"rule {m.rule}: {m.reason}",
                        m.source_id,
                    )
                    for c in m.causes
                ],
                (f"code-{m.code}",) if public_code(m.code) else (),
            )


def _derive_ms_source(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """MindSpore's own messages (mindspore_messages.yaml) found in its log lines (the file the line
    names, then the message) and in its raised exceptions (the exception line's message, with the
    files of the C++ call stack MindSpore prints under it), with the causes of the reviewed rule
    covering the row. Nothing is read without a MindSpore line or call stack."""
    found: list[tuple[tuple[str, ...], str, Any]] = []
    stack: list[str] = []
    section = False
    raised: list[tuple[str, Any]] = []
    for e in k.extractors:
        if e.kind == "ms-log":
            for value, v in scan.values.get(e.id, {}).items():
                path, _, text = value.partition("|")
                found.append(((path,), text, v))
        elif e.kind == "ms-raise":
            stack += list(scan.values.get(e.id, {}))
        elif e.kind == "ms-section":
            section = section or bool(scan.values.get(e.id))
        elif e.kind == "ms-message":
            raised += list(scan.values.get(e.id, {}).items())
    if stack or section:
        for value, v in scan.values.get("py-exception", {}).items():
            raised.append((value.partition("|")[2], v))
        found += [(tuple(stack), text, v) for text, v in raised]
    if k.ms_messages is None or not found:
        return
    from cannenv.explain.msascend import MS_BELOW_RUNTIME, MsMessages
    from cannenv.explain.rtge import specificity as ms_specificity

    table = MsMessages(k.ms_messages)
    seen: set[tuple[str, str]] = set()
    for paths, text, v in found:
        matched = [m for m in table.match(paths, text) if m.causes]
        if not matched:
            continue
        # one message: of the rows it matches, the one whose fixed text it holds most of
        m = max(matched, key=lambda x: ms_specificity(x.format, text))
        key = (m.format, m.rule)
        if key in seen:
            continue
        seen.add(key)
        stem = m.file.rsplit(".", 1)[0].lower().replace("_", "-")
        etype = f" ({m.exception})" if m.exception else ""
        add(
            f"ms-src-{m.rule}-{stem}-{m.line}",
            f'MindSpore raised or logged its own message of {m.file}:{m.line}{etype}: "{m.format}"',
            f"MindSpore ({m.path.rsplit('/', 1)[0]})",
            SOURCE_PRIORITY - MS_BELOW_RUNTIME,
            f"derived:ms-src:{m.repo}:{m.path}:{m.line}",
            v.line,
            v.count,
            [
                (c, f"MindSpore's source says this in {m.path}; rule {m.rule}: {m.reason}", m.source_id)
                for c in m.causes
            ],
        )


def _is_hex(value: str) -> bool:
    return 0 < len(value) <= 8 and all(ch in "0123456789abcdefABCDEF" for ch in value)


def _mangled_ns(symbol: str, ns: str) -> bool:
    """Whether a mangled name's first nested-name component is ``ns`` (``_ZN3atb…``, ``_ZNK3atb…``,
    a class's vtable/VTT/typeinfo/its name or a guard variable ``_ZTVN3atb…``): the ABI's
    length-prefixed encoding of one identifier, for names cut off in the log."""
    enc = f"{len(ns)}{ns}"
    return symbol.startswith(
        ("_ZN" + enc, "_ZNK" + enc, "_Z" + enc, *(f"_Z{s}N{enc}" for s in ("TV", "TT", "TI", "TS", "GV")))
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
    deaths = deaths_of(table, scan)
    derived, derived_hits = derive(table, scan, deaths)
    if deaths or any(e.kind == "oom-kill" and scan.values.get(e.id) for e in _extractors(table)):
        more, more_hits = _derive_deaths(table, scan, deaths)
        derived += more
        derived_hits.update(more_hits)
    if derived_hits:
        scan = replace(scan, hits={**scan.hits, **derived_hits})
    log_facts = log_facts_of(table, scan)
    contradictions = tuple(
        c for c in (_contradiction(comp, facts, log_facts) for comp in log_facts) if c is not None
    )
    found = matched(table, scan, derived)
    superseded = {sid for sig in found for sid in sig.supersedes}
    if superseded:  # a generic reading another signature decided (caller and callee the program's)
        found = [sig for sig in found if sig.id not in superseded]
    if not found:  # nothing read the log: the residual reading of its failure, if it reports one
        residual = _residual(table, scan)
        if residual is not None:
            sig, key, hit = residual
            scan = replace(scan, hits={**scan.hits, key: hit})
            found = [sig]
    excluded: dict[str, str] = {}
    for sig in found:
        for cid in sig.rules_out:
            line = next((ln for p in sig.any for ln in scan.hits.get(p.key, Hit()).lines), sig.title)
            excluded.setdefault(cid, f"the log's own detail rules it out: {line} ({sig.id})")
    matches: list[Match] = []
    ranked: list[tuple[tuple[int, int, int, int], CauseVerdict]] = []
    for si, sig in enumerate(found):
        verdicts = tuple(
            _excluded(
                _verdict(
                    sig,
                    sc,
                    table.causes[sc.id],
                    table,
                    facts,
                    by_check,
                    log_facts,
                    contradictions[0] if contradictions else None,
                ),
                excluded,
            )
            for sc in sig.causes
        )
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
        log_facts=log_facts,
        contradictions=contradictions,
        deaths=deaths,
    )


RESIDUAL_ID = "residual-no-installation-sign"
"""The residual reading's signature id (:mod:`cannenv.explain.residual`)."""


def _residual(table: SignatureTable, scan: ScanResult) -> tuple[Signature, str, Hit] | None:
    """The residual reading as a signature of its own, with its hit (the failure lines), or None."""
    from cannenv.explain import residual

    k = table.knowledge
    if k is None or k.residual is None or not scan.values:
        return None
    got = residual.read(k, scan.values)
    if not isinstance(got, residual.Reading):
        return None
    key = f"derived:residual:{got.line}"
    sig = Signature(
        id=RESIDUAL_ID,
        title="no known signature: the log's failure shows no sign of an installation or version problem",
        component="the program or its input (no signature of the stack reads the failure)",
        any=(Pattern(key, key, rx=None),),
        all=(),
        priority=RESIDUAL_PRIORITY,
        causes=(SignatureCause("not-a-version-problem", got.why, (), None, None, None),),
        note=k.residual.basis,
        derived=True,
        supersedes=(),
    )
    return sig, key, Hit(got.count, list(got.lines))


def _extractors(table: SignatureTable) -> tuple[Any, ...]:
    return table.knowledge.extractors if table.knowledge is not None else ()


def _excluded(v: CauseVerdict, excluded: Mapping[str, str]) -> CauseVerdict:
    why = excluded.get(v.id)
    if why is None:
        return v
    return replace(v, status="ruled-out", basis=(why, *v.basis), remedy=None, tie=None, confirmed_by=())


CC_SOURCES = (
    "gcc-cp-typeck",
    "gcc-cp-call",
    "gcc-cp-lex-undeclared",
    "clang-sema-code-kinds",
    "gcc-diagnostic-format",
)
"""Where the compilers print the forms the ``cc-code`` extractors read (knowledge.yaml)."""


def _derive_cc_project_code(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """A C/C++ compile error about a declaration (a member, an operator, a call's arguments, a
    conversion, in GCC's and Clang's wording: ``cc-code-error-*``; a name not declared,
    ``cc-undeclared``, only where a ``note:`` names a declaration) whose erroring file and every
    file the log names for it (``note:`` and ``In file included from`` lines) are the project's own
    tree: the project's source is inconsistent at that commit (``not-a-version-problem``, the
    program's own code's priority). It steps aside when any location line names a CANN install or a
    system / third-party include folder (``cc-foreign-*``), or a named file is a header the CANN
    toolkit installs (filelists.yaml ``headers``): whose declaration it is, is then not the
    project's alone."""
    notes = scan.values.get("cc-note-location", {})
    kinds = ("cc-code-error-gcc", "cc-code-error-clang", *(("cc-undeclared",) if notes else ()))
    errors = {value: v for e in kinds for value, v in scan.values.get(e, {}).items()}
    if not errors:
        return
    if any(e.startswith("cc-foreign-") and scan.values.get(e) for e in scan.values):
        return
    files = [value.partition("|")[0] for value in errors]
    files += list(notes)
    files += list(scan.values.get("cc-included-from", {}))
    for f in files:
        if any(f == h or f.endswith("/" + h) for h in k.headers):
            return
    value, v = next(iter(errors.items()))
    where, _, form = value.partition("|")
    declared = [f for f in files[len(errors) :] if f != where][:3]
    named = f" (declared in {', '.join(declared)})" if declared else ""
    add(
        "cc-project-code",
        f"a compile error in the project's own source: {form[:160]}",
        "the project's own C/C++ code",
        PROGRAM_CODE_PRIORITY,
        f"derived:cc-project-code:{where}",
        v.line,
        v.count,
        [
            (
                "not-a-version-problem",
                f"the compiler reports {where} against a declaration of the project's own tree{named}: "
                "no CANN install, system or third-party header is named for it, so the project's source is "
                "inconsistent at that commit (a caller not updated after an interface changed); the "
                "project's fix, not another package version, resolves it",
                CC_SOURCES,
            )
        ],
    )


def _derive_drv_install(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """The NPU driver installer's own error messages (drv_install.yaml, :mod:`.drvinstall`): a line
    the driver's .run package printed at the error level (``[Driver] [date] [ERROR]…``, its
    ``ERR_NO:0x…;ERR_DES:…``) whose text is a form of its scripts, read as the reviewed rule that
    covers the form says (a form no rule covers, or whose rule names no cause, is read as nothing);
    of the forms one message fits, the one with the most literal text."""
    found = [v for e in k.extractors if e.kind == "drv-install" for v in scan.values.get(e.id, {}).items()]
    table = k.drv_install if found else None
    if table is None:
        return
    from cannenv.explain.drvinstall import source_id

    seen: set[str] = set()
    for value, v in found:
        m = table.match(value)
        if m is None or not m.causes or m.text in seen:
            continue
        seen.add(m.text)
        said = f"the driver installer's scripts print this at {m.at[0]}"
        add(
            f"drv-install-{m.rule}",
            f'the NPU driver installer refused: "{m.text}" ({m.at[0].rsplit("/", 1)[-1]})',
            "Ascend driver installer (.run)",
            SOURCE_PRIORITY,
            f"derived:drv-install:{m.at[0]}",
            v.line,
            v.count,
            [(c, f"{said}; rule {m.rule}: {m.reason}", source_id(m.at[0])) for c in m.causes],
        )


def _derive_commands(k: Knowledge, scan: ScanResult, add: Callable[..., None]) -> None:
    """A command the shell or a tool does not find that commands.yaml knows: the package that ships
    it and what that means (:mod:`cannenv.explain.commands`); any other command: nothing."""
    if k.commands is None:
        return
    found: dict[str, Any] = {}
    for e in k.extractors:
        if e.kind == "command":
            for value, v in scan.values.get(e.id, {}).items():
                found.setdefault(value, v)
    if not found:
        return
    from cannenv.explain.commands import COMMAND_PRIORITY, read

    for r in read(k.commands, found):
        add(r.id, r.title, r.component, COMMAND_PRIORITY, r.key, r.line, r.count, r.causes)
