"""Error signatures as data: ``matrices/explain/signatures.yaml``, validated at load.

The file holds three tables:

* ``sources``: the public threads and vendor pages that established a cause (id → title, URL);
* ``causes``: the root causes ``cannenv explain`` can name (a stable id, the doctor checks and
  facts that decide it on a host, a remedy when no check supplies one);
* ``signatures``: what an error looks like (exact strings, regexes over normalised text, vendor
  error codes), the component that raised it, and its causes in order, each with its sources.

pydantic validates the file (every problem named by field); the engine works on the frozen
dataclasses below, with every regex compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv import linre
from cannenv.errors import InputError
from cannenv.explain.rules import REQUIRED_CAUSES as REQUIRED_CAUSES
from cannenv.explain.rules import re2_subset_problem as re2_subset_problem

if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from cannenv.explain.knowledge import Knowledge
    from cannenv.explain.models import PatternModel, SignatureFile

_MODELS = frozenset(
    {
        "SourceModel",
        "CauseModel",
        "PatternModel",
        "ComponentCondition",
        "SignatureCauseModel",
        "SignatureModel",
        "SignatureFile",
    }
)


def __getattr__(name: str) -> Any:
    """The pydantic models, from :mod:`cannenv.explain.models` (imported on first use only)."""
    if name in _MODELS:
        from cannenv.explain import models

        return getattr(models, name)
    raise AttributeError(name)


MAX_SIGNATURE_BYTES = 4 << 20
KNOWLEDGE_PRIORITY = -20
"""Priority of the signatures made from the vendor's code tables: below every hand-written one."""
SOURCE_PRIORITY = -45
"""Priority of a message of HCCL's source (hccl_messages.yaml) found in a log: below every
hand-written signature (a test holds them above it)."""
PROGRAM_CODE_PRIORITY = -60
"""Priority of "raised in the program's own code" (cannenv.explain.pycode): below every signature,
so that a message of the stack anywhere in the log still ranks first."""
DEATH_PRIORITY = -65
"""Priority of a process's death read as a cause (a SIGKILL: host memory, undecided): below every
other signature, the program's own code included; a death is how a process ended, the other
evidence of the log says why."""
RESIDUAL_PRIORITY = -70
"""Priority of the residual reading (cannenv.explain.residual): asked only when nothing else matched,
and the lowest of all should a caller add it beside another signature."""
KERNEL_OOM_PRIORITY = -20
"""Priority of the kernel's OOM-killer line (it ties the death to host memory by itself)."""
LIBRARY_TABLE_PRIORITY = -62
"""Priority of a category of a library's or tool's own error table (libtables.yaml: OpenCV's
cv::Error::Code, ONNX Runtime's StatusCode, Paddle's ErrorCode, a compiler's diagnostic): below every
other signature, the program's own code too, so that a vendor code, a missing library or a message
of the stack anywhere in the log still decides; above a process's death (DEATH_PRIORITY), which
says how a process ended while the library's category is evidence of why."""
FAILED_CHECK_PRIORITY = -63
"""Priority of a failed check a program or tool printed (failed_checks.yaml: an assert, a CHECK, a
comparison of a value it got): below every other signature, the program's own code (-60) and the
libraries' tables (-62) too — a check is the most generic reading a line can have; above a process's
death (DEATH_PRIORITY), which says how a process ended while the check says why."""
ERRNO_PRIORITY = -50
HEADER_PRIORITY = 18
"""Priority of a header the compiler did not find that the CANN toolkit installs (filelists.yaml's
``headers``): as the hand-written acl/….h signature, above a compiler's own table (a category that
names no cause) and a CMake error that follows it."""
OS_ERRNO_PRIORITY = -30
"""Priority of an OSError's errno (``[Errno 2] No such file or directory: '/dev/davinci0'``): below
the vendor's codes, above the program's own code."""
"""Priority of the HcclResult an HCCL errNo carries: below the message on the same line, which
says more (errNo 0x05010001 is HCCL_E_PARA for a bad rank table as for a bad count)."""


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class Pattern:
    """A compiled pattern: ``anchor`` (a literal every match contains) finds candidate lines
    with a substring test; ``regex`` then confirms on those lines only."""

    key: str
    anchor: str
    rx: str | None
    """The regex's source (compiled on first use, once per process: a 1 KB log compiles the few
    whose anchor it contains, and the cached table unpickles without compiling any)."""
    capture: str | None = None
    """An extractor's id: the scan keeps the values of the regex's groups, not only the lines."""

    groups: int = 0
    """The regex's capture groups (an extractor's values)."""
    keep_last: bool = False
    """An extractor that keeps its last :data:`~cannenv.explain.scan.MAX_VALUES` values, not its
    first (a traceback's innermost frames and final exception line)."""

    @property
    def regex(self) -> linre.LinearPattern | None:
        return None if self.rx is None else _compiled(self.rx)


@cache
def _compiled(rx: str) -> linre.LinearPattern:
    """Every pattern of the data through the project's one door for data regexes (RE2)."""
    return linre.compile(rx, what="regex")


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    url: str


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    checks: tuple[str, ...]
    facts: tuple[str, ...]
    remedy: str
    version_problem: bool


@dataclass(frozen=True)
class Condition:
    component: str
    below: str | None
    at_least: str | None

    def describe(self) -> str:
        if self.below:
            return f"{self.component} is below {self.below}"
        return f"{self.component} is {self.at_least} or newer"


@dataclass(frozen=True)
class SignatureCause:
    id: str
    why: str
    sources: tuple[str, ...]
    checks: tuple[str, ...] | None
    when: Condition | None
    remedy: str | None
    facts: tuple[str, ...] | None = None
    """What would decide it when not the cause's own facts (a SIGKILL: the host's memory, not the
    device's)."""
    log_tie: str | None = None
    """A line of the log that ties the cause to this error by itself (the kernel's OOM killer
    says it killed the process for memory): ``confirmed``, the line its tie."""


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    component: str
    any: tuple[Pattern, ...]
    all: tuple[Pattern, ...]
    priority: int
    causes: tuple[SignatureCause, ...]
    note: str
    rules_out: tuple[str, ...] = ()
    derived: bool = False
    """Made from the knowledge tables (a code, a library, a symbol), not written by hand."""
    supersedes: tuple[str, ...] = ()
    """Signatures whose generic reading this one decides (a derived one: call-signature-mismatch's
    'two releases differ' when caller and callee are both the program's); they are not shown."""


@dataclass(frozen=True)
class SignatureTable:
    sources: Mapping[str, Source]
    causes: dict[str, Cause]
    signatures: tuple[Signature, ...]
    patterns: Sequence[Pattern]
    """Every distinct pattern of every signature, once (and the knowledge's extractors)."""
    knowledge: Knowledge | None = None

    def signature(self, sid: str) -> Signature:
        for s in self.signatures:
            if s.id == sid:
                return s
        raise KeyError(sid)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (the validated-table cache) with its patterns and sources one blob each and the
        scanner's index of the anchors beside them (:func:`anchor_groups`): a short log unpickles
        the patterns of the anchors it holds and the sources its answer cites, not the thousands of
        the table."""
        from cannenv.explain.lazy import each, keyed

        state = {f.name: getattr(self, f.name) for f in fields(self)}
        state["patterns"] = each(self.patterns)
        state["sources"] = keyed(self.sources)  # an answer cites a few of them
        return (_signature_table, (state, anchor_groups(self.patterns)))


AnchorGroups = tuple[
    tuple[bytes, ...], "array[int]", "array[int]", dict[bytes, int], "array[int]", "array[int]"
]
"""A table's anchors grouped, as flat arrays (few objects to load and to collect):

* its distinct anchors (UTF-8, in the order its patterns first name them);
* ``starts``, ``members``: the positions in its patterns of anchor ``i``'s patterns are
  ``members[starts[i]:starts[i + 1]]``;
* ``prefixes``, ``pstarts``, ``pmembers``: the anchors that begin with the :data:`ANCHOR_PREFIX`
  bytes ``b`` are ``pmembers[pstarts[k]:pstarts[k + 1]]`` where ``k = prefixes[b]``; those
  shorter than that are under ``b""``."""
ANCHOR_PREFIX = 3
"""Bytes of an anchor's beginning by which a short input's scan picks the anchors it may hold."""
_GROUPS: dict[int, tuple[Sequence[Pattern], AnchorGroups]] = {}
"""The anchor groups read back with a cached table, by its patterns (a few tables at most)."""
_KEPT_GROUPS = 8


def anchor_groups(patterns: Sequence[Pattern]) -> AnchorGroups:
    """The anchors of ``patterns`` grouped (:data:`AnchorGroups`): read back with a cached table,
    else computed."""
    kept = _GROUPS.get(id(patterns))
    if kept is not None and kept[0] is patterns:
        return kept[1]
    from array import array

    by_anchor: dict[bytes, list[int]] = {}
    for i, p in enumerate(patterns):
        by_anchor.setdefault(p.anchor.encode("utf-8"), []).append(i)
    by_prefix: dict[bytes, list[int]] = {}
    for i, a in enumerate(by_anchor):
        by_prefix.setdefault(a[:ANCHOR_PREFIX] if len(a) >= ANCHOR_PREFIX else b"", []).append(i)

    def flat(groups: Iterable[list[int]]) -> tuple[array[int], array[int]]:
        starts, members = array("L", [0]), array("L")
        for g in groups:
            members.extend(g)
            starts.append(len(members))
        return starts, members

    starts, members = flat(by_anchor.values())
    pstarts, pmembers = flat(by_prefix.values())
    prefixes = {b: k for k, b in enumerate(by_prefix)}
    return tuple(by_anchor), starts, members, prefixes, pstarts, pmembers


def _signature_table(state: dict[str, Any], groups: AnchorGroups) -> SignatureTable:
    """A table read back from the cache, its anchor groups kept for :func:`anchor_groups`."""
    table = SignatureTable(**state)
    while len(_GROUPS) >= _KEPT_GROUPS:
        del _GROUPS[next(iter(_GROUPS))]
    _GROUPS[id(table.patterns)] = (table.patterns, groups)
    return table


# What must come before a numeric vendor code on its line, at most 24 characters (no digit) ahead
NUMERIC_CODE_CONTEXT = r"(?i)(?:err|code|ret|result|status|return|fail)[^0-9\n]{0,24}"


def _pattern(p: PatternModel) -> Pattern:
    if p.text is not None:
        return Pattern(key=f"text:{p.text}", anchor=p.text, rx=None)
    if p.code is not None:
        # a code as a whole word: 561103 but not 5611030, EI0005 but not EI00051
        rx = rf"(?:^|[^0-9A-Za-z]){re.escape(p.code)}(?:[^0-9A-Za-z]|$)"
        if p.code.lstrip("-").isdecimal():
            # a bare number is a code only where the line says so ("error code is 561103",
            # "ret=207018", "failed, 507035"): never a pid, a port or a size that happens to match
            rx = NUMERIC_CODE_CONTEXT + rx
        return Pattern(key=f"code:{p.code}", anchor=p.code, rx=rx)
    assert p.regex is not None and p.anchor is not None
    return Pattern(key=f"regex:{p.regex}", anchor=p.anchor, rx=p.regex)


FAMILY_TITLE = {
    "acl-runtime": "CANN runtime (ACL_ERROR_RT_*)",
    "acl": "ACL (acl_base.h)",
    "acl-ge": "Graph Engine (ACL_ERROR_GE_*, ge_error_codes.h)",
    "aclnn": "aclnn operator API (libopapi)",
    "hccl": "HCCL/HCCP",
    "error-code": "CANN error-code reference",
    "torch-npu-err": "torch_npu error codes (ERRxxxxx)",
    "dvpp": "DVPP media data processing (hi_mpi/acldvpp return codes)",
}
FAMILY_PRIORITY = {"torch-npu-err": KNOWLEDGE_PRIORITY - 10}
"""torch_npu's ERRxxxxx wraps the error beside it (ERR00100 'PTA call acl api failed' next to the
ACL code): ranked below the vendor's own codes."""
MESSAGE_CAPTURE = "msg:"
"""The capture id's prefix of a message read out of a vendor's source (``msg:<row id>``)."""
MESSAGE_FAMILY = {
    "torch-npu-check": ("torch_npu", -28),
    "pytorch-dispatch": ("PyTorch (kernel dispatch)", -32),
    "device-plugin": ("the Ascend device plugin (Kubernetes)", -28),
    "ais-bench": ("ais_bench (the msit benchmark) and its aclruntime backend", -28),
    "msit": ("msit (MindStudio inference tools)", -28),
    "msprobe": ("msprobe (MindStudio accuracy tools)", -28),
    "pypto": ("PyPTO", -28),
    "pypto-check": ("PyPTO (a CHECK: ExternalError)", -28),
    "triton-ascend": ("triton-ascend (Ascend backend)", -28),
}
"""Per message family: its component and priority. Below every hand-written signature and the
vendor's codes (-20); a torch_npu message above its ERRxxxxx wrapper (-30), which it is more
precise than; PyTorch's dispatch message below torch_npu's, whose own message decides when the
operator ran on the NPU; the Ascend tools' own messages (ais_bench, msit, msprobe, PyPTO,
triton-ascend) as torch_npu's and the device plugins': a component's own words about its input."""
ERROR_CODE_CAPTURE = "error-code"
"""The capture id of the patterns made from the error-code reference's codes (one per prefix)."""


def code_signature(c: Any, patterns: tuple[Pattern, ...]) -> Signature:
    """The signature of one code of the vendor's tables (a ``knowledge.Code`` with causes)."""
    advice = getattr(c, "advice", None)
    component = getattr(c, "component", None)
    also = getattr(c, "causes_source", None)
    return Signature(
        id=f"code-{c.code}",
        title=f"{c.code} {c.name}: {c.meaning}",
        component=f"{component} ({FAMILY_TITLE[c.family]})"
        if component
        else FAMILY_TITLE.get(c.family, c.family),
        any=patterns,
        all=(),
        priority=FAMILY_PRIORITY.get(c.family, KNOWLEDGE_PRIORITY),
        causes=tuple(
            SignatureCause(
                id=cid,
                why=f"the vendor's table: {c.code} is {c.name} ({c.meaning})"
                + (f"; the vendor's advice: {advice}" if advice else ""),
                sources=(c.source, also) if also else (c.source,),
                checks=None,
                when=None,
                remedy=None,
            )
            for cid in c.causes
        ),
        note="",
        derived=True,
    )


def _code_signatures(
    knowledge: Knowledge, pat: Callable[[PatternModel], Pattern], patterns: dict[str, Pattern]
) -> list[Signature]:
    """A signature for each of HCCL's stage keywords. Codes (numeric and E-codes) are made by
    ``judge.derive`` from the code extractors' values: a handful of anchors (error words, one per
    E-code prefix), not one per code."""
    from cannenv.explain.models import PatternModel

    out: list[Signature] = []
    for st in knowledge.hccl_stages:
        text = f"[{st.stage}][{st.tag}]"
        out.append(
            Signature(
                id=f"hccl-stage-{st.stage.lower()}-{st.tag.lower().replace(' ', '-')}",
                title=f"HCCL {text}: {st.meaning}",
                component="HCCL (plog stage keywords)",
                any=(pat(PatternModel(text=text)),),
                all=(),
                priority=15,
                causes=tuple(
                    SignatureCause(
                        cid,
                        f"HCCL's fault guide: {text} is where {st.meaning}",
                        (st.source,),
                        None,
                        None,
                        None,
                    )
                    for cid in st.causes
                ),
                note="",
                derived=True,
            )
        )
    return out


def _faq_signatures(knowledge: Knowledge, pat: Callable[[PatternModel], Pattern]) -> list[Signature]:
    """A signature for each FAQ entry of the vendors' pages that no hand-written signature was made
    from: any of its literal fragments, its reviewed cause (none: it matches and names no cause, the
    vendor's advice in its note), the vendor's advice as the remedy."""
    from cannenv.explain.models import PatternModel

    out: list[Signature] = []
    for r in knowledge.faq:
        if r.signature is not None:
            continue
        out.append(
            Signature(
                id=r.id,
                title=f"{r.label} ({r.page_title})",
                component=f"{r.component} (the vendor's FAQ)",
                any=tuple(pat(PatternModel(text=f)) for f in r.match),
                all=(),
                priority=r.priority,
                causes=()
                if r.cause is None
                else (
                    SignatureCause(
                        r.cause,
                        f"the vendor's FAQ entry: {r.reason}; its advice: {r.advice}",
                        (r.id,),
                        None,
                        None,
                        r.advice,
                    ),
                ),
                note="" if r.cause is not None else f"the vendor's FAQ: {r.reason}; its advice: {r.advice}",
                derived=True,
            )
        )
    return out


def build(model: SignatureFile, knowledge: Knowledge | None = None) -> SignatureTable:
    patterns: dict[str, Pattern] = {}

    def pat(p: PatternModel) -> Pattern:
        compiled = _pattern(p)
        return patterns.setdefault(compiled.key, compiled)

    sigs = tuple(
        Signature(
            id=s.id,
            title=s.title,
            component=s.component,
            any=tuple(pat(p) for p in s.any),
            all=tuple(pat(p) for p in s.all),
            priority=s.priority,
            causes=tuple(
                SignatureCause(
                    id=c.id,
                    why=c.why,
                    sources=c.sources,
                    checks=c.checks,
                    when=Condition(c.when.component, c.when.below, c.when.at_least) if c.when else None,
                    remedy=c.remedy,
                )
                for c in s.causes
            ),
            note=s.note,
            rules_out=s.rules_out,
        )
        for s in model.signatures
    )
    sources = {k: Source(k, v.title, v.url) for k, v in model.sources.items()}
    if knowledge is not None:
        _check_knowledge(knowledge, model)
        sources.update({k: Source(k, t, u) for k, (t, u) in knowledge.sources.items()})
        sigs = (
            sigs + tuple(_code_signatures(knowledge, pat, patterns)) + tuple(_faq_signatures(knowledge, pat))
        )
        for e in knowledge.extractors:
            if e.each == "signal-text":
                # one pattern per text of the complete signal table (Killed, Segmentation fault …),
                # the text its anchor: a line is looked at only where one of them is
                texts = [t for x in knowledge.deaths.signals for t in x.texts] if knowledge.deaths else []
                for text in texts:
                    rx = e.regex.replace("{text}", re.escape(text))
                    key = f"extract:{e.id}:{text}"
                    patterns[key] = Pattern(key, text, rx, capture=e.id, groups=re.compile(rx).groups)
                continue
            key = f"extract:{e.id}"
            patterns[key] = Pattern(
                key,
                e.anchor,
                e.regex,
                capture=e.id,
                groups=re.compile(e.regex).groups,
                keep_last=e.keep == "last",
            )
        for m in knowledge.source_messages:
            if m.causes:  # a message that points to no cause is not looked for
                key = f"extract:{MESSAGE_CAPTURE}{m.id}"
                patterns[key] = Pattern(key, m.anchor, m.regex, capture=f"{MESSAGE_CAPTURE}{m.id}")
        fc = knowledge.failed_checks
        for form in fc.forms if fc is not None else ():  # a failed check: one extractor per form
            key = f"extract:{form.capture}"
            patterns[key] = Pattern(key, form.anchor, form.regex, capture=form.capture, groups=1)
        for t in knowledge.lib_tables:  # the libraries' own error tables: one extractor per form
            for f in t.forms:
                key = f"extract:{t.capture(f)}"
                patterns[key] = Pattern(
                    key, f.anchor, f.regex, capture=t.capture(f), groups=re.compile(f.regex).groups
                )
        coded = [c for c in knowledge.codes if c.family in FAMILY_TITLE and c.causes]
        for prefix in sorted({c.code[:3] for c in coded if c.code[0] == "E" and c.code[1] != "R"}):
            # every E-code of the tables as a whole word, one anchor per three-character prefix
            # (EE1, EI0, EL0 …): a few dozen anchors for hundreds of codes; judge.derive looks the
            # value up in the table
            key = f"extract:{ERROR_CODE_CAPTURE}-{prefix}"
            rx = rf"(?:^|[^0-9A-Za-z])({prefix}[0-9]{{3}})(?:[^0-9A-Za-z]|$)"
            patterns[key] = Pattern(key, prefix, rx, capture=ERROR_CODE_CAPTURE, groups=1)
    return SignatureTable(
        sources=sources,
        causes={
            k: Cause(k, v.title, v.checks, v.facts, v.remedy, v.version_problem)
            for k, v in model.causes.items()
        },
        signatures=sigs,
        patterns=tuple(patterns.values()),
        # a message that points to no cause is never looked for: the cached table leaves it out
        knowledge=None
        if knowledge is None
        else replace(knowledge, source_messages=tuple(m for m in knowledge.source_messages if m.causes)),
    )


def _check_knowledge(knowledge: Knowledge, model: SignatureFile) -> None:
    """Every cause the knowledge names is a cause of the signature file, every source a source of
    either file."""
    sources = set(model.sources) | set(knowledge.sources)
    problems: list[str] = []
    rows: list[tuple[str, tuple[str, ...], str]] = [
        (f"code {c.code}", c.causes, c.source) for c in knowledge.codes
    ]
    rows += [(f"library {x.name}", x.causes, x.source) for x in knowledge.libraries]
    rows += [(f"symbol {x.prefix}", x.causes, x.source) for x in knowledge.symbols]
    rows += [(f"stage {x.stage}/{x.tag}", x.causes, x.source) for x in knowledge.hccl_stages]
    rows += [(f"code {c.code}", (), c.causes_source) for c in knowledge.codes if c.causes_source]
    rows += [(f"FAQ entry {x.url}", (x.cause,) if x.cause else (), x.id) for x in knowledge.faq]
    hand = {s.id for s in model.signatures}
    problems += [
        f"FAQ entry {x.url}: unknown signature {x.signature!r}"
        for x in knowledge.faq
        if x.signature is not None and x.signature not in hand
    ]
    rows += [(f"message {x.id}", x.causes, x.cites) for x in knowledge.source_messages]
    if knowledge.errno is not None:
        rows += [(f"errno {v}", r[2], r[4]) for v, r in knowledge.errno.rows.items()]
        rows += [(f"errno path {x.contains}", x.causes, x.source) for x in knowledge.errno.paths]
    d = knowledge.deaths
    if d is not None:
        readings = [("the OOM killer", d.oom_killer)]
        readings += [(f"signal {x.name}", x.reading) for x in d.signals if x.reading is not None]
        rows += [(what, (r.cause,), src) for what, r in readings for src in r.sources]
        problems += [
            f"deaths: unknown signature {x!r}"
            for x in (*d.supersedes, *d.oom_killer_supersedes)
            if x not in hand
        ]
    rows += [(f"{t.id} row {r.key}", r.causes, r.source) for t in knowledge.lib_tables for r in t.rows]
    fc = knowledge.failed_checks
    if fc is not None:
        rows += [(f"failed-check form {f.id}", ("not-a-version-problem",), f.source) for f in fc.forms]
        problems += [  # a step-aside row names the causes whose reading it is; it is no source's fact
            f"failed-check step_aside {x.id}: unknown cause {c!r}"
            for x in fc.step_aside
            for c in x.causes
            if c not in model.causes
        ]
    rs = knowledge.residual
    if rs is not None:  # a marker names the causes whose vocabulary it is; no source's fact
        problems += [
            f"residual {what}: unknown cause {c!r}"
            for what, causes in [
                *((f"marker {m.id}", m.causes) for m in rs.markers),
                ("in_stack", rs.in_stack_causes),
            ]
            for c in causes
            if c not in model.causes
        ]
    if knowledge.log_messages is not None:
        # a row of HCCL's messages is its own source (its file and line), resolved from the row
        modules = {m.module: m for m in knowledge.log_messages.messages if m.causes}
        sources |= {m.source_id for m in modules.values()}
        rows += [(f"HCCL module {name}", m.causes, m.source_id) for name, m in modules.items()]
    if knowledge.op_messages is not None:
        # likewise a row of the aclnn operators' messages: one per rule checked
        from cannenv.explain.opapi import OpMessages

        rules = {m.rule: m for m in OpMessages(knowledge.op_messages).messages if m.causes}
        sources |= {m.source_id for m in rules.values()}
        rows += [(f"aclnn rule {name}", m.causes, m.source_id) for name, m in rules.items()]
    if knowledge.rtge_messages is not None:
        # and of the runtime's and GE's messages: one per rule checked
        from cannenv.explain.rtge import RtgeMessages

        found = {m.rule: m for m in RtgeMessages(knowledge.rtge_messages).messages if m.causes}
        sources |= {m.source_id for m in found.values()}
        rows += [(f"runtime/GE rule {name}", m.causes, m.source_id) for name, m in found.items()]
    if knowledge.ms_messages is not None:
        # and of MindSpore's messages: one per rule checked
        from cannenv.explain.msascend import MsMessages

        ms_found = {m.rule: m for m in MsMessages(knowledge.ms_messages).messages if m.causes}
        sources |= {m.source_id for m in ms_found.values()}
        rows += [(f"MindSpore rule {name}", m.causes, m.source_id) for name, m in ms_found.items()]
    for what, causes, source in rows:
        problems += [f"{what}: unknown cause {c!r}" for c in causes if c not in model.causes]
        if source not in sources:
            problems.append(f"{what}: unknown source {source!r}")
    if problems:
        raise InputError("invalid knowledge file:\n" + "\n".join(sorted(set(problems))))


def parse(raw: Any, *, source: str) -> SignatureTable:
    from cannenv.explain import tables
    from cannenv.explain.models import SignatureFile, validate

    model = validate(
        SignatureFile,
        raw,
        source=source,
        what="signature file",
        hint="see docs/explain.md (How to add a signature)",
    )
    return build(model, tables.shipped())


def load(path: str | Path) -> SignatureTable:
    """A signature file (YAML or JSON), read bounded and validated."""
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="signature file", max_bytes=MAX_SIGNATURE_BYTES)
    return parse(raw, source=str(p))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "signatures.yaml"


@cache
def shipped() -> SignatureTable:
    """The shipped signatures and knowledge, from the validated-table cache when the files, the
    code and the versions are unchanged (docs/explain.md: loading YAML and validating it costs more
    than explaining a short log), else loaded, validated and cached."""
    from cannenv.explain import knowledge

    # faq.yaml beside knowledge.yaml: cannenv.explain.faq is imported only to load and validate it
    faq_path = knowledge.shipped_path().with_name("faq.yaml")
    # and aclnn_messages.yaml: cannenv.explain.opapi is imported only when a log has EZ1001;
    # rtge_messages.yaml: cannenv.explain.rtge only when a log has a RUNTIME/GE line or a report
    aclnn_path = knowledge.shipped_path().with_name("aclnn_messages.yaml")
    lib_path = knowledge.shipped_path().with_name("libtables.yaml")
    rtge_path = knowledge.shipped_path().with_name("rtge_messages.yaml")
    ms_path = knowledge.shipped_path().with_name("mindspore_messages.yaml")
    aicerr_path = knowledge.shipped_path().with_name("aicerr.yaml")
    lists_path = knowledge.shipped_path().with_name("filelists.yaml")
    checks_path = knowledge.shipped_path().with_name("failed_checks.yaml")
    drv_install_path = knowledge.shipped_path().with_name("drv_install.yaml")
    commands_path = knowledge.shipped_path().with_name("commands.yaml")
    key = _cache_key(
        (
            shipped_path(),
            knowledge.shipped_path(),
            faq_path,
            knowledge.shipped_path().with_name("hccl_messages.yaml"),  # logsource.shipped_path()
            aclnn_path,
            lib_path,
            rtge_path,
            ms_path,
            aicerr_path,
            lists_path,
            checks_path,
            drv_install_path,
            commands_path,
        )
    )
    if key is not None:
        hit = _cache_read(key)
        if hit is not None:
            return hit
    table = load(shipped_path())
    if key is not None:
        _cache_write(key, table)
    return table


CACHE_FORMAT = 5
"""Bump when the cached table's layout changes without a change in the hashed files or code."""


def _cache_key(files: tuple[Path, ...]) -> str | None:
    import hashlib
    import sys

    from cannenv import __version__
    from cannenv.matrix.loader import cache_dir

    if cache_dir() is None:
        return None
    h = hashlib.sha256(f"{CACHE_FORMAT}|{__version__}|{sys.version}".encode())
    here = Path(__file__).parent
    try:
        for f in (
            *files,
            here / "signatures.py",
            here / "knowledge.py",
            here / "faq.py",
            here / "messages.py",
            here / "logsource.py",
            here / "opapi.py",
            here / "libtables.py",
            here / "rtge.py",
            here / "msascend.py",
            here / "aicerr.py",
            here / "filelists.py",
            here / "failedchecks.py",
            here / "drvinstall.py",
            here / "commands.py",
            here / "tables.py",
            here / "rules.py",
            here / "lazy.py",
            here / "parts.py",
        ):
            # each file by its name, size and modification time, as Python's own bytecode cache
            # keys a module: reading and hashing 3.4 MB of tables cost more than a short log's answer
            st = f.stat()
            h.update(f"{f}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}\n".encode("utf-8", "surrogateescape"))
    except OSError:
        return None
    return h.hexdigest()


_CACHE_MAGIC = b"cannenv\x05"
"""The first bytes of a cached table's file (:func:`_cache_write`)."""


def _cache_read(key: str) -> SignatureTable | None:
    """The cached table of ``key``: its file mapped, not read; the pickle unpickled and each lazy
    part's blob left a view of the mapping, so the pages of a part are read when it is used
    (:mod:`cannenv.explain.lazy`). The cache's files are replaced, never rewritten in place."""
    import mmap
    import pickle
    import struct

    from cannenv.matrix.loader import cache_dir

    folder = cache_dir()
    if folder is None:
        return None
    try:
        with (folder / f"explain-{key}.pickle").open("rb") as fh:
            view = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
        magic, size, count = struct.unpack_from("<8sQQ", view)
        if magic != _CACHE_MAGIC:
            return None
        at = 24 + 8 * count
        main = view[at : at + size]
        buffers = []
        at += size
        for n in struct.unpack_from(f"<{count}Q", view, 24):
            buffers.append(view[at : at + n])
            at += n
        if at != len(view):  # cut short
            return None
        obj = pickle.loads(main, buffers=buffers)
    except Exception:  # absent, corrupt or written by other code: validate instead
        return None
    return obj if isinstance(obj, SignatureTable) else None


def _cache_write(key: str, table: SignatureTable) -> None:
    """The table pickled (protocol 5), its lazy parts' blobs out of band after it: a header (magic,
    the pickle's size, the number of blobs, each blob's size), the pickle, the blobs."""
    import pickle
    import struct

    from cannenv.fsutil import atomic_write_bytes
    from cannenv.matrix.loader import cache_dir

    folder = cache_dir()
    if folder is None:
        return
    try:
        blobs: list[pickle.PickleBuffer] = []
        main = pickle.dumps(table, pickle.HIGHEST_PROTOCOL, buffer_callback=blobs.append)
        raws = [b.raw() for b in blobs]
        head = struct.pack(f"<8sQQ{len(raws)}Q", _CACHE_MAGIC, len(main), len(raws), *map(len, raws))
        atomic_write_bytes(folder / f"explain-{key}.pickle", b"".join([head, main, *raws]))
        for f in sorted(folder.glob("explain-*.pickle"), key=lambda f: f.stat().st_mtime)[:-4]:
            f.unlink()
    except Exception:  # unwritable, full, raced by another process: the cache is only a shortcut
        return


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a signature file (``matrices/explain/schema.json``; a test keeps it in sync)."""
    from cannenv.explain.models import SignatureFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(SignatureFile, "cannenv error signatures")


def main(argv: list[str] | None = None) -> int:
    """``python -m cannenv.explain.signatures --schema``: print the JSON Schema of a signature file."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["--schema"]:
        print(
            "usage: python -m cannenv.explain.signatures --schema > matrices/explain/schema.json",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
