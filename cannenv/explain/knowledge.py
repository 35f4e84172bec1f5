"""Knowledge from the vendor's complete tables: ``matrices/explain/knowledge.yaml``, validated at load.

Hand-written signatures (signatures.yaml) follow the wording of errors seen before; this file
holds what generalises to errors never seen:

* ``codes``: every ACL/runtime, aclnn, HCCL (EI/EJ) and HcclResult code of the vendor's tables, each
  with its name, meaning, source and the causes it points to. Every code with causes becomes a
  signature ranked below every hand-written one (numeric codes only next to an error word:
  ``error code is 507033``, ``ret=207001``, not a token count that happens to be 107000);
* ``libraries``/``packages``: a missing shared object mapped to the package that ships it;
* ``symbols``: an undefined symbol, demangled (itanium-demangler) and mapped by namespace or C
  prefix to the component that provides it, narrowed by the library that needs it;
* ``extractors``: patterns that pull the value out of a line (the library, the symbol, a version
  the log prints, an HCCL result code). Versions a log prints are facts of the log's environment
  (:mod:`cannenv.explain.judge` weighs them against the host's).

Every pattern is in the RE2 subset (no backreferences, no lookaround): linear in its input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cannenv.explain.drvinstall import DrvInstall
    from cannenv.explain.logsource import LogMessages
    from cannenv.explain.models import KnowledgeFile
    from cannenv.explain.msascend import MsData
    from cannenv.explain.opapi import OpData
    from cannenv.explain.parts import (
        Commands,
        Deaths,
        Errno,
        FailedChecks,
        FaqRow,
        HcclErrno,
        InnerCode,
        Library,
        LibTable,
        PythonCode,
        Residual,
        SourceMessage,
        Stage,
        SymbolRule,
    )
    from cannenv.explain.rtge import RtgeData

MAX_KNOWLEDGE_BYTES = 4 << 20


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class Code:
    code: str
    name: str
    family: str
    meaning: str
    causes: tuple[str, ...]
    source: str
    value: int | None = None
    """The numeric value of a named code (HcclResult, the driver's drvError_t)."""
    component: str | None = None
    advice: str | None = None
    message: str | None = None
    causes_source: str | None = None
    """Where the causes were read when not in ``source`` (a vendor page about a class of codes)."""


@dataclass(frozen=True)
class Extractor:
    id: str
    kind: str
    component: str | None
    anchor: str
    regex: str
    keep: str = "first"
    each: str | None = None
    """``signal-text``: one pattern per text of the signal table (``{text}`` in the regex)."""
    source: str | None = None


@dataclass(frozen=True)
class Knowledge:
    sources: Mapping[str, tuple[str, str]]
    """id -> (title, url)"""
    codes: Sequence[Code]
    libraries: tuple[Library, ...]
    symbols: tuple[SymbolRule, ...]
    extractors: tuple[Extractor, ...]
    hccl_results: Mapping[int, Code]
    hccl_stages: tuple[Stage, ...] = ()
    driver_errors: Mapping[int, Code] = field(default_factory=dict)
    """The driver's drvError_t by value (``drvRetCode=87`` in the runtime's ``[drv api]`` lines)."""
    inner_codes: Mapping[int, InnerCode] | None = None
    """Runtime-internal hex codes by value (``0x07010003`` → RT_ERROR_DEVICE_ID)."""
    messages: Mapping[str, tuple[Code, ...]] | None = None
    """torch_npu's sentence for a code (normalised by :func:`message_key`) → the codes it stands for."""
    faq: Sequence[FaqRow] = ()
    """The vendors' FAQ entries that show an error message (``faq.yaml``, :mod:`cannenv.explain.faq`)."""
    source_messages: Sequence[SourceMessage] = ()
    """Messages read out of the vendors' sources (torch_npu's checks, PyTorch's dispatch, the
    device plugin), each with the causes the reviewed mapping gives it (a signature table keeps
    only those with causes: the others are not looked for)."""
    source_messages_read: int = 0
    """Rows of ``source_messages`` in the table file, with causes or not."""
    hccl_errno: HcclErrno | None = None
    log_messages: LogMessages | None = None
    """HCCL's own error-log messages from its source (hccl_messages.yaml, :mod:`logsource`)."""
    python_code: PythonCode | None = None
    """Whose code raised a Python exception: the stack's packages, the built-in exceptions' messages."""
    errno: Errno | None = None
    """Linux errno values and the stack's paths (``[Errno 2] No such file or directory: '…'``)."""
    op_messages: OpData | None = None
    """The aclnn operators' parameter-check messages from their source (aclnn_messages.yaml,
    :mod:`opapi`)."""
    deaths: Deaths | None = None
    """How processes die (signal(7)'s table, the OOM killer): ``deaths``."""
    lib_tables: tuple[LibTable, ...] = ()
    """The error tables of the libraries and tools around the stack (libtables.yaml, :mod:`.libtables`)."""
    rtge_messages: RtgeData | None = None
    """The CANN runtime's and GE's own error messages from their source (rtge_messages.yaml,
    :mod:`rtge`)."""
    ms_messages: MsData | None = None
    """MindSpore's own Ascend-side error messages from its source (mindspore_messages.yaml,
    :mod:`msascend`)."""
    headers: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """A header a package installs into the toolkit's include folder, as a build includes it
    (``register/tilingdata_base.h``) → (the package of ``packages``, the file list that says so:
    filelists.yaml, :mod:`.filelists`)."""
    failed_checks: FailedChecks | None = None
    """The printed forms of a program's or tool's failed check (failed_checks.yaml, :mod:`.failedchecks`)."""
    residual: Residual | None = None
    """The residual reading of a failure no signature reads (``residual``, :mod:`.residual`)."""
    drv_install: DrvInstall | None = None
    """The NPU driver installer's own error messages from its scripts (drv_install.yaml,
    :mod:`.drvinstall`)."""
    python_dists: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)
    """A Python distribution (PEP 503 normalised name) → (its group, ``cann-dep`` or ``stack``, the
    source that says so, the reason): ``python_dists`` and ``python_code.packages``."""
    commands: Commands | None = None
    """Who ships a command the shell or a tool does not find (commands.yaml, :mod:`.commands`)."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (the validated-table cache) with its large parts as blobs of their own, each
        unpickled on first use (:mod:`cannenv.explain.lazy`): a short log reads few rows, if any."""
        from cannenv.explain.lazy import each, rows, table, value

        state = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in LAZY_ROWS:
            keys = ROW_KEYS.get(name)
            state[name] = rows(state[name]) if keys is None else each(state[name], keys=keys)
        for name in LAZY_TABLES:
            if state[name] is not None:
                state[name] = table(state[name])
        for name in LAZY_VALUES:
            if state[name] is not None:
                state[name] = value(state[name])
        if self.op_messages is not None:  # the aclnn rows (plain tuples): read when a log has EZ1001
            op_rows, repos, rules, total = self.op_messages
            state["op_messages"] = (rows(op_rows), repos, rules, total)
        if self.rtge_messages is not None:  # the runtime's and GE's rows: read when a log has such a line
            state["rtge_messages"] = rows(self.rtge_messages)
        if self.ms_messages is not None:  # MindSpore's rows: read when a log has such a line
            state["ms_messages"] = rows(self.ms_messages)
        return (_knowledge, (state,))

    def message_source(self, sid: str) -> tuple[str, str] | None:
        """(title, url) of a source message's own source (``msg:<id>``): its file and line at the
        commit of the repository source it cites. Resolved when an answer names it, so the
        cached table holds one source per repository, not one per message."""
        if not sid.startswith("msg:"):
            return None
        mid = sid[4:]
        for m in self.source_messages:
            if m.id == mid:
                title, url = self.sources[m.cites]
                return f"{title}: {m.at}", url.rstrip("/") + "/" + m.at
        return None

    def public_code(self, name: str) -> Code | None:
        """The code row of a public ACL name (``ACL_ERROR_RT_INVALID_DEVICEID`` → 107001)."""
        return _first_code(self.codes, "name", name)

    def code(self, value: str) -> Code | None:
        return _first_code(self.codes, "code", value)

    def library(self, soname: str) -> Library | None:
        """The package row of a shared object (``libhccl.so.1`` → libhccl): the exact name, else the
        longest prefix row."""
        stem = library_stem(soname)
        best: Library | None = None
        for lib in self.libraries:
            if lib.name == stem and not lib.prefix:
                return lib
            if lib.prefix and stem.startswith(lib.name) and (best is None or len(lib.name) > len(best.name)):
                best = lib
        return best

    def python_dist(self, name: str) -> tuple[str, str, str] | None:
        """The group of a Python distribution a packaging tool names (``cann-dep``, ``stack``) with
        its source and reason; None for any other distribution."""
        return self.python_dists.get(dist_name(name))

    def package_of(self, soname: str) -> str:
        """The package that ships a shared object, ``third-party`` when the table does not map it."""
        lib = self.library(soname)
        return lib.package if lib is not None else "third-party"

    def symbol(self, demangled: str, needed_by: str, *, wildcard: bool = False) -> SymbolRule | None:
        """The first rule whose prefix begins the symbol's qualified name (or the C name) and whose
        library condition fits; with ``wildcard``, only the ``*`` rules (any C++ name that no rule
        names, by the package of the library that needs it)."""
        name = demangled
        for special in SPECIAL_NAMES:  # a class's vtable/typeinfo/thunk is in the class's namespace
            if name.startswith(special):
                name = name[len(special) :]
                break
        for lead in ("const ", "void ", "int ", "bool ", "unsigned ", "long "):
            if name.startswith(lead):
                name = name[len(lead) :]
        for rule in self.symbols:
            if (rule.prefix == "*") != wildcard:
                continue
            if not wildcard and not name.startswith(rule.prefix):
                continue
            if rule.needed_by_package is not None and self.package_of(needed_by) != rule.needed_by_package:
                continue
            if rule.needed_by is not None and rule.needed_by not in needed_by:
                continue
            if rule.needed_by_not is not None and rule.needed_by_not in needed_by:
                continue
            return rule
        return None


def _first_code(codes: Sequence[Code], key: str, value: str) -> Code | None:
    """The first row of ``codes`` whose ``key`` is ``value``: from the cached table's index when it
    has one (:class:`cannenv.explain.lazy.Each`), else row by row."""
    first = getattr(codes, "first", None)
    if first is not None:
        found: Code | None = first(key, value)
        return found
    for c in codes:
        if getattr(c, key) == value:
            return c
    return None


LAZY_ROWS = ("codes", "faq", "source_messages", "lib_tables", "libraries", "symbols", "hccl_stages")
"""The knowledge's row tables the cache loads on first use (:meth:`Knowledge.__reduce__`)."""
ROW_KEYS = {"codes": ("code", "name")}
"""Row tables pickled one blob per row, with the attributes a row is looked up by: a log's code reads
its own row (:meth:`Knowledge.code`, :meth:`Knowledge.public_code`), not the table."""
LAZY_TABLES = ("sources", "inner_codes", "messages", "hccl_results", "driver_errors", "headers")
"""Its mappings the cache loads on first use."""
LAZY_VALUES = (
    "hccl_errno",
    "python_code",
    "errno",
    "deaths",
    "log_messages",
    "failed_checks",
    "residual",
    "drv_install",
    "commands",
)
"""Its single values the cache loads when an attribute is first read (their classes live in
:mod:`cannenv.explain.parts` and :mod:`cannenv.explain.logsource`, imported only then)."""


def _knowledge(state: dict[str, Any]) -> Knowledge:
    return Knowledge(**state)


# The Itanium C++ ABI's special names (5.1.4: _ZTV, _ZTT, _ZTI, _ZTS, _ZTh/_ZTv/_ZTc, _ZGV), as the
# demangler writes them: what follows is the class or object they belong to, whose namespace decides.
# https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling-special
SPECIAL_NAMES = (
    "vtable for ",
    "vtt for ",
    "construction vtable for ",
    "typeinfo name for ",
    "typeinfo for ",
    "non-virtual thunk for ",
    "virtual thunk for ",
    "covariant return thunk for ",
    "guard variable for ",
)


def dist_name(name: str) -> str:
    """A Python distribution's name as PEP 503 normalises it (``vllm_ascend`` → ``vllm-ascend``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _python_dists(model: KnowledgeFile) -> dict[str, tuple[str, str, str]]:
    pd = model.python_dists
    if pd is None:
        return {}
    out: dict[str, tuple[str, str, str]] = {}
    stack = list(pd.stack.names)
    if model.python_code is not None:  # the stack's import names (torch_npu, vllm_ascend) and their hosts
        stack += [p.package for p in model.python_code.packages]
        stack += [s for p in model.python_code.packages for s in p.stack_of]
    for name in stack:
        out[dist_name(name)] = ("stack", pd.stack.source, pd.stack.reason)
    for name in pd.cann_deps.names:  # a CANN dependency is one whatever else lists it
        out[dist_name(name)] = ("cann-dep", pd.cann_deps.source, pd.cann_deps.reason)
    return out


def library_stem(soname: str) -> str:
    """A shared object's name as the library table keys it: no folder, no ``.so`` and version
    (``lib64/libascend_protobuf.so.3.13.0.0`` → ``libascend_protobuf``)."""
    return re.sub(r"\.so(\.[0-9]+)*\Z", "", soname.rsplit("/", 1)[-1])


def demangle(symbol: str) -> str | None:
    """The demangled C++ name (itanium-demangler), or None when it is not a mangled name or cannot
    be parsed (a cut-off symbol)."""
    if not symbol.startswith("_Z"):
        return None
    try:
        from itanium_demangler import parse
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    try:
        node = parse(symbol)
    except Exception:  # the library raises on some malformed inputs
        return None
    if node is None:
        return None
    text = str(node)
    # itanium-demangler writes a function with its return type first for templates
    return text


def _source_messages(model: KnowledgeFile) -> tuple[SourceMessage, ...]:
    """Each message with its causes: the first ``message_causes`` rule that fits it, else (a
    torch_npu check) the causes of its ERRxxxxx row."""
    from cannenv.explain.parts import SourceMessage
    from cannenv.explain.rules import pattern

    codes = {c.code: c for c in model.codes}
    out: list[SourceMessage] = []
    for m in model.source_messages:
        said = " ".join(m.text).lower()
        causes: tuple[str, ...] = ()
        reason = ""
        for rule in model.message_causes:
            if rule.family != m.family or (rule.codes and m.code not in rule.codes):
                continue
            if rule.module is not None and not m.at.startswith(rule.module):
                continue
            if rule.contains and not any(x.lower() in said for x in rule.contains):
                continue
            causes, reason = rule.causes, rule.reason
            break
        else:
            row = codes.get(m.code) if m.code else None
            if row is not None:
                causes = row.causes
                reason = f"torch_npu raises it with {row.code} {row.name} ({row.meaning})"
        anchor, rx = pattern(m.text)
        out.append(
            SourceMessage(
                m.id, m.family, m.text, m.code, m.at, f"msg:{m.id}", causes, reason, anchor, rx, m.source
            )
        )
    return tuple(out)


def build(model: KnowledgeFile) -> Knowledge:
    from cannenv.explain.parts import HcclErrno, InnerCode, Library, Stage, SymbolRule

    sources = {k: (v.title, v.url) for k, v in model.sources.items()}
    return Knowledge(
        sources=sources,
        codes=tuple(
            Code(
                c.code,
                c.name,
                c.family,
                c.meaning,
                c.causes,
                c.source,
                c.value,
                component=c.component,
                advice=c.advice,
                message=c.message,
                causes_source=c.causes_source,
            )
            for c in model.codes
        ),
        libraries=tuple(
            Library(
                lib.name,
                lib.prefix,
                lib.package,
                model.packages[lib.package].title,
                model.packages[lib.package].causes,
                lib.source,
            )
            for lib in model.libraries
        ),
        symbols=tuple(
            SymbolRule(
                s.prefix,
                s.provider,
                s.needed_by,
                s.needed_by_not,
                s.causes,
                s.source,
                s.needed_by_package,
                s.reason,
            )
            for s in model.symbols
        ),
        extractors=tuple(
            Extractor(e.id, e.kind, e.component, e.anchor, e.regex, e.keep, e.each, e.source)
            for e in model.extractors
        ),
        deaths=_deaths(model),
        python_code=_python_code(model),
        residual=_residual(model),
        python_dists=_python_dists(model),
        hccl_results={
            c.value: Code(c.code, c.name, c.family, c.meaning, c.causes, c.source, c.value)
            for c in model.codes
            if c.family == "hccl-result" and c.value is not None
        },
        driver_errors={
            c.value: Code(c.code, c.name, c.family, c.meaning, c.causes, c.source, c.value)
            for c in model.codes
            if c.family == "drv-error" and c.value is not None
        },
        inner_codes={
            int(x.code, 16): InnerCode(x.code, x.name, x.acl, x.meaning, x.source) for x in model.inner_codes
        },
        hccl_stages=tuple(Stage(x.stage, x.tag, x.meaning, x.causes, x.source) for x in model.hccl_stages),
        messages=_messages(model),
        source_messages=_source_messages(model),
        source_messages_read=len(model.source_messages),
        hccl_errno=HcclErrno(
            model.hccl_errno.module_id,
            model.hccl_errno.module_shift,
            model.hccl_errno.submodule_shift,
            model.hccl_errno.submodule_mask,
            model.hccl_errno.result_mask,
            dict(model.hccl_errno.submodules),
            model.hccl_errno.source,
        )
        if model.hccl_errno is not None
        else None,
        errno=_errno(model),
    )


def _errno(model: KnowledgeFile) -> Errno | None:
    from cannenv.explain.parts import Errno, ErrnoPath

    en = model.errno
    if en is None:
        return None
    by_name = {r.name: r.value for r in en.rows}
    return Errno(
        rows={r.value: (r.name, r.text, r.causes, r.reason, r.source or en.source) for r in en.rows},
        paths=tuple(
            ErrnoPath(
                frozenset(by_name[n] for n in x.errnos), x.contains, x.what, x.causes, x.reason, x.source
            )
            for x in en.paths
        ),
        source=en.source,
    )


def _deaths(model: KnowledgeFile) -> Deaths | None:
    from cannenv.explain.parts import DeathReading, Deaths, Signal

    d = model.deaths
    if d is None:
        return None

    def reading(r: Any) -> DeathReading:
        return DeathReading(r.cause, r.why, r.facts, r.remedy, r.sources)

    return Deaths(
        signals=tuple(
            Signal(
                x.number,
                x.name,
                x.action,
                x.meaning,
                x.texts,
                x.source,
                reading(x.reading) if x.reading is not None else None,
            )
            for x in d.signals
        ),
        texts_sources=d.texts_sources,
        oom_killer=reading(d.oom_killer),
        supersedes=d.supersedes,
        supersedes_why=d.supersedes_why,
        oom_killer_supersedes=d.oom_killer_supersedes,
    )


def _residual(model: KnowledgeFile) -> Residual | None:
    from cannenv.explain.parts import Residual, ResidualMarker

    rs = model.residual
    if rs is None:
        return None
    return Residual(
        failure_kinds=rs.failure_kinds,
        not_failure=rs.not_failure,
        markers=tuple(ResidualMarker(m.id, m.regex, m.causes, m.source, m.unless) for m in rs.markers),
        reading=rs.reading,
        basis=rs.basis,
        in_stack=rs.in_stack.extractors if rs.in_stack else (),
        in_stack_causes=rs.in_stack.causes if rs.in_stack else (),
    )


def _python_code(model: KnowledgeFile) -> PythonCode | None:
    from cannenv.explain.parts import PythonCode, PythonMessage, PythonPackage

    pc = model.python_code
    if pc is None:
        return None
    return PythonCode(
        packages=tuple(
            PythonPackage(p.package, p.title, p.stack_of, p.classes, p.source) for p in pc.packages
        ),
        builtin_types=frozenset(pc.builtin_types),
        builtin_source=pc.builtin_source,
        messages=tuple(
            PythonMessage(
                m.kind, m.form, m.regex, m.names, m.without_frames, m.supersedes, m.reading, m.source
            )
            for m in pc.messages
        ),
        cut_traceback=pc.cut_traceback,
        cut_traceback_source=pc.cut_traceback_source,
        layout_source=pc.layout_source,
    )


def with_log_messages(k: Knowledge, table: LogMessages) -> Knowledge:
    """The knowledge with HCCL's log messages; each row is a source of its own (the file and line
    at the imported commit), resolved from the row when a signature names it
    (:meth:`LogMessages.source`), not copied into ``sources`` (the cached table stays small)."""
    from dataclasses import replace

    return replace(k, log_messages=table)


def with_op_messages(k: Knowledge, table: OpData) -> Knowledge:
    """The knowledge with the aclnn operators' messages (plain tuples: :class:`opapi.OpMessages`
    reads them when a log has ``EZ1001``); each row is its own source (the file and line at the
    imported commit), resolved from the row (:meth:`opapi.OpMessages.source`)."""
    from dataclasses import replace

    return replace(k, op_messages=table)


def with_rtge_messages(k: Knowledge, table: RtgeData) -> Knowledge:
    """The knowledge with the runtime's and GE's messages (plain tuples: :class:`rtge.RtgeMessages`
    reads them when a log has a RUNTIME/GE error line or an error-manager report); each row is its
    own source (the file and line at the imported commit), resolved from the row."""
    from dataclasses import replace

    return replace(k, rtge_messages=table)


def with_ms_messages(k: Knowledge, table: MsData) -> Knowledge:
    """The knowledge with MindSpore's messages (plain tuples: :class:`msascend.MsMessages` reads them
    when a log has a MindSpore log line or C++ call stack); each row is its own source."""
    from dataclasses import replace

    return replace(k, ms_messages=table)


def message_key(sentence: str) -> str:
    """A torch_npu sentence as a lookup key: lower case, single spaces, no final full stop."""
    return " ".join(sentence.lower().split()).rstrip(". ")


def _messages(model: KnowledgeFile) -> dict[str, tuple[Code, ...]]:
    out: dict[str, list[Code]] = {}
    for c in model.codes:
        if c.message:
            row = Code(c.code, c.name, c.family, c.meaning, c.causes, c.source, c.value, message=c.message)
            out.setdefault(message_key(c.message), []).append(row)
    return {k: tuple(v) for k, v in out.items()}


def import_npu_messages(text: str) -> dict[str, str]:
    """torch_npu's first sentence per ACL code from NPUErrorCodes.h (``{207001, "Failed to apply for
    memory.\\n …"}``, lines continued with a backslash): code → sentence."""
    flat = text.replace("\\\n", "")
    out: dict[str, str] = {}
    for m in re.finditer(_NPU_MESSAGE_RX, flat):
        first = " ".join(m.group(2).split("\\n", 1)[0].split())
        if len(first) >= 8:
            out[m.group(1)] = first
    return out


_NPU_MESSAGE_RX = r'\{([1-5][0-9]{5}),\s*"([^"]*)"\}'


def parse_knowledge(raw: Any, *, source: str) -> Knowledge:
    from cannenv.explain.models import KnowledgeFile, validate

    model = validate(
        KnowledgeFile,
        raw,
        source=source,
        what="knowledge file",
        hint="see docs/explain.md (Knowledge tables)",
    )
    return build(model)


def load(path: str | Path) -> Knowledge:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="knowledge file", max_bytes=MAX_KNOWLEDGE_BYTES)
    return parse_knowledge(raw, source=str(p))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "knowledge.yaml"


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import KnowledgeFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(KnowledgeFile, "cannenv explain knowledge tables")


def re_code(word: str) -> bool:
    """A 6-digit ACL code."""
    return word.isdecimal() and len(word) == 6


def import_header(text: str, *, family: str, source: str) -> list[dict[str, Any]]:
    """Rows of ``codes`` from a vendor header (rt_error_codes.h, acl_base.h, GE's ge_error_codes.h):
    code, name, meaning (the header's comment, else the name in words); causes are left empty for a
    person to set. A constant is ``#define NAME 145000``, ``static const int32_t NAME = 107000;``
    or ``static const uint32_t NAME = 145000U;``."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        decl, _, comment = line.partition("//")
        words = decl.replace("=", " ").replace(";", " ").split()
        if words[:1] == ["#define"]:
            words = words[1:]
        elif words[:2] == ["static", "const"] and words[2:3] in (["int"], ["int32_t"], ["uint32_t"]):
            words = words[3:]
            if len(words) == 2 and words[1].endswith("U"):
                words = [words[0], words[1][:-1]]
        else:
            continue
        if (
            len(words) == 2
            and words[0].startswith("ACL_ERROR_")
            and words[1].isdecimal()
            and len(words[1]) == 6
        ):
            name, code, comment = words[0], words[1], comment.strip()
            meaning = comment or name.removeprefix("ACL_ERROR_").replace("_", " ").lower()
            rows.append(
                {
                    "code": code,
                    "name": name,
                    "family": family,
                    "meaning": meaning,
                    "causes": [],
                    "source": source,
                }
            )
    return rows


DRV_PREFIXES = ("DRV_ERROR_", "DEV_ERROR_")
"""The enumerators of the driver's ``drvError_t`` (ascend_hal_error.h; a few are spelt DEV_ERROR_)."""


def import_enum(
    text: str,
    *,
    family: str,
    source: str,
    typedef: str = "drvError_t",
    prefixes: tuple[str, ...] = DRV_PREFIXES,
) -> list[dict[str, Any]]:
    """Rows of ``codes`` from a C ``typedef enum { … } TYPEDEF;`` of a vendor header (the driver's
    ascend_hal_error.h): every enumerator that starts with one of ``prefixes``, its value as C
    gives it (written, else the one before plus one; decimal or hex), its meaning the header's
    comment, else the name in words. Causes are left empty for a person to set."""
    end = text.find(f"}} {typedef}")
    start = text.rfind("{", 0, end) if end >= 0 else -1
    if start < 0:
        return []
    rows: list[dict[str, Any]] = []
    value = -1
    for line in text[start + 1 : end].splitlines():
        decl, _, comment = line.partition("/*")
        decl, _, slashed = decl.partition("//")
        comment = " ".join((comment.partition("*/")[0] or slashed).lstrip("*<! ").split())
        for item in decl.split(","):
            name, eq, written = (x.strip() for x in item.partition("="))
            if not name:
                continue
            if eq:
                try:
                    value = int(written, 0)
                except ValueError:  # an expression (another enumerator, a shift): not a table row
                    return []
            else:
                value += 1
            if not name.startswith(prefixes):
                continue
            words = name
            for prefix in prefixes:
                words = words.removeprefix(prefix)
            rows.append(
                {
                    "code": name,
                    "name": name,
                    "value": value,
                    "family": family,
                    "meaning": comment or words.replace("_", " ").lower(),
                    "causes": [],
                    "source": source,
                }
            )
    return rows


def _error_info_list(text: str) -> list[dict[str, Any]]:
    """The ``error_info_list`` of the vendor's error-code JSON: a file of its own
    (``error_code.json``) or the raw string a C++ source embeds it in (``R"( … )"``); or TBE's
    operator error table (``errormanager.json``: a bare list of ``errCode``/``errMessage``, no
    class, no title), read with the same keys."""
    import json

    start = text.find('R"(')
    if start >= 0:
        end = text.find(')"', start)
        text = text[start + 3 : end if end >= 0 else len(text)]
    raw = json.loads(text)
    rows = raw if isinstance(raw, list) else raw.get("error_info_list") if isinstance(raw, dict) else None
    out = [dict(r) for r in rows or () if isinstance(r, dict)]
    for r in out:  # TBE's spelling of the same two keys
        if "ErrCode" not in r and "errCode" in r:
            r["ErrCode"] = r["errCode"]
        if "ErrMessage" not in r and "errMessage" in r:
            r["ErrMessage"] = r["errMessage"]
    return out


def import_error_codes(
    text: str, *, source: str, title_causes: Mapping[str, tuple[str, ...]]
) -> list[dict[str, Any]]:
    """Rows of ``codes`` from the vendor's error-code reference (``error_code.json``: ErrCode,
    errClass, errTitle, ErrMessage and the suggestion's Solution): family ``error-code``, causes
    from ``title_causes`` by the vendor's title (a person reviews them). Warnings (W…) are left out."""
    rows: list[dict[str, Any]] = []
    for r in _error_info_list(text):
        code = str(r.get("ErrCode", "")).strip()
        if not re.fullmatch(r"E[0-9A-Z]{2}[0-9]{3}", code):
            continue
        title = str(r.get("errTitle") or "").strip()
        meaning = " ".join(str(r.get("ErrMessage") or "").replace("%s", "…").split())
        advice = " ".join(str((r.get("suggestion") or {}).get("Solution") or "").split())
        row: dict[str, Any] = {
            "code": code,
            "name": title or "Untitled",
            "family": "error-code",
            "meaning": meaning if len(meaning) >= 2 else title or code,
            "causes": list(title_causes.get(title, ())),
            "source": source,
        }
        if r.get("errClass"):
            row["component"] = " ".join(str(r["errClass"]).split())
        if advice and advice != "N/A":
            row["advice"] = advice
        rows.append(row)
    return rows


_DEFINE_RX = r"constexpr\s+int32_t\s+(RT_ERROR_[A-Z0-9_]+)\s*=\s*0x([0-9A-Fa-f]{8})\s*;"
_MAP_RX = r'rtErrMap_\[(RT_ERROR_[A-Z0-9_]+)\]\s*=\s*\{\s*(ACL_[A-Z0-9_]+)\s*,\s*((?:"[^"]*"\s*)+)\}'


def import_inner_codes(define_text: str, map_text: str, *, source: str) -> list[dict[str, Any]]:
    """Rows of ``inner_codes`` from the runtime's sources: the hex value of each ``RT_ERROR_*``
    (``constexpr int32_t RT_ERROR_DEVICE_ID = 0x07010003;``) and the public ACL code and message
    the runtime reports it as (``rtErrMap_[RT_ERROR_DEVICE_ID] = {ACL_ERROR_RT_INVALID_DEVICEID,
    "device id error"};``)."""
    values = {m.group(1): int(m.group(2), 16) for m in re.finditer(_DEFINE_RX, define_text)}
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    flat = " ".join(map_text.split())
    for m in re.finditer(_MAP_RX, flat):
        name, acl, msg = m.group(1), m.group(2), m.group(3)
        value = values.get(name)
        if value is None or value in seen:
            continue
        seen.add(value)
        meaning = "".join(re.findall(r'"([^"]*)"', msg)).strip()
        rows.append(
            {
                "code": f"0x{value:08X}",
                "name": name,
                "acl": acl,
                "meaning": meaning or name,
                "source": source,
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    """``python -m cannenv.explain.knowledge --schema`` prints the JSON Schema;
    ``--import-header FILE FAMILY SOURCE`` prints the code rows of a vendor header that the
    shipped table lacks (refresh: docs/explain.md)."""
    import json
    import sys

    import yaml

    args = sys.argv[1:] if argv is None else argv
    if args == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
        return 0
    if len(args) == 4 and args[0] == "--import-header":
        known = {(c.code, c.value) for c in load(shipped_path()).codes}
        text = Path(args[1]).read_text(encoding="utf-8", errors="replace")
        # the driver's drvError_t is an enum; ACL/runtime codes are #defines and constants
        importer = import_enum if args[2] == "drv-error" else import_header
        rows = [
            r
            for r in importer(text, family=args[2], source=args[3])
            if (r["code"], r.get("value")) not in known
        ]
        print(yaml.safe_dump(rows, sort_keys=False, width=200), end="")
        return 0
    if len(args) == 3 and args[0] == "--import-error-codes":
        model_raw = yaml.safe_load(shipped_path().read_text(encoding="utf-8"))
        title_causes = {k: tuple(v) for k, v in (model_raw.get("title_causes") or {}).items()}
        known_codes = {c.code for c in load(shipped_path()).codes}
        rows = [
            r
            for r in import_error_codes(
                Path(args[1]).read_text(encoding="utf-8", errors="replace"),
                source=args[2],
                title_causes=title_causes,
            )
            if r["code"] not in known_codes
        ]
        print(yaml.safe_dump(rows, sort_keys=False, width=200, allow_unicode=True), end="")
        return 0
    if len(args) == 2 and args[0] == "--import-npu-messages":
        have = {c.code: c.message for c in load(shipped_path()).codes}
        found = import_npu_messages(Path(args[1]).read_text(encoding="utf-8", errors="replace"))
        changed = {c: m for c, m in found.items() if c in have and have[c] != m}
        print(yaml.safe_dump(changed, sort_keys=True, width=200), end="")
        return 0
    if len(args) == 4 and args[0] == "--import-inner-codes":
        k = load(shipped_path())
        names = {c.name for c in k.codes}
        known_inner = set(k.inner_codes or {})
        rows = [
            r
            for r in import_inner_codes(
                Path(args[1]).read_text(encoding="utf-8", errors="replace"),
                Path(args[2]).read_text(encoding="utf-8", errors="replace"),
                source=args[3],
            )
            if r["acl"] in names and int(r["code"], 16) not in known_inner
        ]
        print(yaml.safe_dump(rows, sort_keys=False, width=200), end="")
        return 0
    print(
        "usage: python -m cannenv.explain.knowledge --schema > matrices/explain/knowledge.schema.json\n"
        "       python -m cannenv.explain.knowledge --import-header HEADER FAMILY SOURCE_ID\n"
        "       (FAMILY drv-error: the drvError_t enum of the driver's ascend_hal_error.h)\n"
        "       python -m cannenv.explain.knowledge --import-error-codes ERROR_CODE_JSON SOURCE_ID\n"
        "       python -m cannenv.explain.knowledge --import-npu-messages NPUErrorCodes.h\n"
        "       python -m cannenv.explain.knowledge --import-inner-codes DEFINE_HPP ERRCODE_MANAGE_CC SOURCE",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
