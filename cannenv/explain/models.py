"""The pydantic models of the explain data files (signatures.yaml, knowledge.yaml).

Imported only to validate a file (a first load, a user's --signatures file, the JSON Schemas): a
load from the validated-table cache never imports pydantic (docs/explain.md, Speed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cannenv.errors import InputError
from cannenv.explain.rules import ID_RULE as _ID
from cannenv.explain.rules import MAX_REGEX as _MAX_REGEX
from cannenv.explain.rules import REQUIRED_CAUSES, re2_subset_problem

ExtractorKind = Literal[
    "library",
    "link-library",
    "crash-frame",
    "symbol",
    "version",
    "code",
    "hccl-result",
    "drv-error",
    "rt-inner",
    "rt-reason",
    "npu-message",
    "hccl-log",
    "hccl-message",
    "hccl-errno",
    "hccl-task-base",
    "hccl-exec-timeout",
    "py-frame",
    "py-exception",
    "aclnn-log",
    "errno",
    "signal",
    "exit-status",
    "oom-kill",
    "process-died",
    "rtge-log",
    "rtge-report",
    "ms-log",
    "ms-raise",
    "ms-message",
    "ms-section",
    "header",
    "cc-code",
    "failure",
    "drv-install",
    "python-dist-conflict",
    "python-dist-missing",
    "command",
]
CodeFamily = Literal[
    "acl-runtime",
    "acl",
    "acl-ge",
    "aclnn",
    "hccl",
    "hccl-result",
    "drv-error",
    "error-code",
    "torch-npu-err",
    "dvpp",
]
MessageFamily = Literal[
    "torch-npu-check",
    "pytorch-dispatch",
    "device-plugin",
    "ais-bench",
    "msit",
    "msprobe",
    "pypto",
    "pypto-check",
    "triton-ascend",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SourceModel(_Frozen):
    title: str = Field(min_length=1)
    url: str = Field(pattern=r"^https://[^\s]+$")


class CauseModel(_Frozen):
    title: str = Field(min_length=1)
    checks: tuple[str, ...] = ()
    """Doctor checks whose findings decide the cause (fail: confirmed; pass: ruled out)."""
    facts: tuple[str, ...] = Field(min_length=1)
    """What would decide it, said to a user without host facts."""
    remedy: str = Field(min_length=1)
    version_problem: bool = True


class PatternModel(_Frozen):
    """One thing to look for in a line: ``text`` (exact), ``code`` (a vendor code as a whole
    word) or ``regex`` (with ``anchor``, a literal every match contains)."""

    text: str | None = Field(None, min_length=3)
    code: str | None = Field(None, pattern=r"^(E[0-9A-Z]{2}\d{3}|ERR\d{5}|[1-5]\d{5}|-?\d{4,6})$")
    regex: str | None = Field(None, min_length=3, max_length=_MAX_REGEX)
    anchor: str | None = Field(None, min_length=3)

    @model_validator(mode="after")
    def _one(self) -> PatternModel:
        given = [k for k in ("text", "code", "regex") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, code, regex")
        if self.regex is not None:
            if self.anchor is None:
                raise ValueError("a regex needs an anchor: a literal every match contains")
            problem = re2_subset_problem(self.regex)
            if problem:
                raise ValueError(problem)
        elif self.anchor is not None:
            raise ValueError("anchor goes with regex only")
        return self


class ComponentCondition(_Frozen):
    """A fact about one component that decides a cause for one signature: the driver (HDK),
    CANN, or a Python distribution, compared with the project's own version grammars."""

    component: str = Field(min_length=2)
    below: str | None = None
    at_least: str | None = None

    @model_validator(mode="after")
    def _one(self) -> ComponentCondition:
        if (self.below is None) == (self.at_least is None):
            raise ValueError("give exactly one of below, at_least")
        return self


class SignatureCauseModel(_Frozen):
    id: str
    why: str = Field(min_length=1)
    sources: tuple[str, ...] = Field(min_length=1)
    checks: tuple[str, ...] | None = None
    when: ComponentCondition | None = None
    remedy: str | None = None


class SignatureModel(_Frozen):
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    component: str = Field(min_length=1)
    any: tuple[PatternModel, ...] = Field(min_length=1)
    all: tuple[PatternModel, ...] = ()
    priority: int = Field(0, ge=-100, le=100)
    causes: tuple[SignatureCauseModel, ...] = Field(min_length=1)
    rules_out: tuple[str, ...] = ()
    """Causes the log's own detail excludes when this signature matches (a trap: the obvious
    keyword of another signature points one way, this detail another)."""
    note: str = ""


class SignatureFile(_Frozen):
    schema_version: Literal[1] = 1
    sources: dict[str, SourceModel]
    causes: dict[str, CauseModel]
    signatures: tuple[SignatureModel, ...] = Field(min_length=1)

    @field_validator("causes")
    @classmethod
    def _stable_ids(cls, v: dict[str, CauseModel]) -> dict[str, CauseModel]:
        missing = [c for c in REQUIRED_CAUSES if c not in v]
        if missing:
            raise ValueError(f"the stable cause ids are missing: {', '.join(missing)}")
        bad = [c for c in v if not re.match(_ID, c)]
        if bad:
            raise ValueError(f"cause ids must be lower-case ids: {', '.join(bad)}")
        return v

    @model_validator(mode="after")
    def _references(self) -> SignatureFile:
        from cannenv.checks import all_checks

        known_checks = {c.id for c in all_checks()}
        problems: list[str] = []
        seen: set[str] = set()
        for cid, cause in self.causes.items():
            problems += [f"cause {cid}: unknown check {c!r}" for c in cause.checks if c not in known_checks]
        for sig in self.signatures:
            if sig.id in seen:
                problems.append(f"signature {sig.id}: id used twice")
            seen.add(sig.id)
            for sc in sig.causes:
                if sc.id not in self.causes:
                    problems.append(f"signature {sig.id}: unknown cause {sc.id!r}")
                problems += [
                    f"signature {sig.id}: unknown source {s!r}" for s in sc.sources if s not in self.sources
                ]
                problems += [
                    f"signature {sig.id}: unknown check {c!r}"
                    for c in sc.checks or ()
                    if c not in known_checks
                ]
            problems += [
                f"signature {sig.id}: rules out unknown cause {c!r}"
                for c in sig.rules_out
                if c not in self.causes
            ]
            if len({sc.id for sc in sig.causes}) != len(sig.causes):
                problems.append(f"signature {sig.id}: a cause listed twice")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class CodeModel(_Frozen):
    code: str = Field(
        pattern=r"^(E[0-9A-Z]{2}\d{3}|ERR\d{5}|[1-5]\d{5}|HCCL_E_[A-Z_]+|(DRV|DEV)_ERROR_[A-Z0-9_]+|0xA0[0-9A-F]{2}80[0-9A-F]{2})$"
    )
    name: str = Field(min_length=2)
    value: int | None = Field(default=None, ge=0)
    """The numeric value of a named code (HcclResult, the driver's drvError_t): required for those."""
    family: CodeFamily
    meaning: str = Field(min_length=2)
    causes: tuple[str, ...] = ()
    source: str
    component: str | None = None
    """The vendor's error class (``RTS Errors``, ``AclNN Errors`` …) of an error-code row."""
    advice: str | None = None
    """The vendor's handling advice (the reference's Solution) of an error-code row."""
    message: str | None = Field(None, min_length=8)
    """The sentence torch_npu prints for the code (``[Error]: Failed to apply for memory.``,
    NPUErrorCodes.h)."""
    causes_source: str | None = None
    """Where the row's causes were read when not in its own source (a vendor page that states what
    a class of codes means: the MindSpore CANN error page for TBE's compile errors E9~EB)."""


class InnerCodeModel(_Frozen):
    """A runtime-internal hex code (``0x07010003``) and the public ACL code the runtime maps it to."""

    code: str = Field(pattern=r"^0x0[0-9A-F]{7}$")
    name: str = Field(pattern=r"^RT_ERROR_[A-Z0-9_]+$")
    acl: str = Field(pattern=r"^ACL_[A-Z0-9_]+$")
    meaning: str = Field(min_length=2)
    source: str


class PackageModel(_Frozen):
    title: str = Field(min_length=2)
    causes: tuple[str, ...] = Field(min_length=1)


class LibraryModel(_Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9_+.-]+$")
    prefix: bool = False
    package: str
    source: str


class FileListModel(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    component: str = Field(min_length=1)
    """The vendor's name of the package (``<func_name>`` of a CANN package XML, a wheel's name)."""
    package: str = Field(pattern=r"^[a-z0-9-]+$")
    """The package of knowledge.yaml ``packages`` it belongs to (reviewed: ``reason``)."""
    reason: str = Field(min_length=10)
    title: str = Field(min_length=1)
    url: str = Field(pattern=r"^https://[^\s]+$")
    """Where the list was read: a repository file at a commit, a wheel on its registry."""
    files: tuple[str, ...] = Field(min_length=1)
    """The shared objects the package installs (``install_path/file`` as the source says)."""
    bundled: tuple[str, ...] = ()
    """Third-party libraries the package carries its own copy of (grpc, OpenSSL, boost …): not
    mapped to the package, the same names are system or pip libraries elsewhere."""
    headers: tuple[str, ...] = ()
    """The headers it installs into the toolkit's include folder, as a build includes them
    (``register/tilingdata_base.h``): a compiler that does not find one names this package."""


class FileListsFile(_Frozen):
    schema_version: Literal[1] = 1
    lists: tuple[FileListModel, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> FileListsFile:
        ids = [x.id for x in self.lists]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"list ids used twice: {', '.join(twice)}")
        return self


class SymbolModel(_Frozen):
    prefix: str = Field(min_length=1)
    """The start of the demangled name (or C name); ``*``: any C++ (mangled) name no rule above
    names — only with ``needed_by_package``."""
    provider: str = Field(min_length=2)
    needed_by: str | None = None
    """Only when the library that needs the symbol contains this literal."""
    needed_by_not: str | None = None
    """Only when the library that needs the symbol does not contain this literal."""
    needed_by_package: str | None = None
    """Only when the library table maps the library that needs the symbol to this package
    (``third-party``: also a library the table does not know)."""
    causes: tuple[str, ...] = Field(min_length=1)
    reason: str | None = None
    """Why these causes (a reviewed reading of the sources), said as the cause's why."""
    source: str

    @model_validator(mode="after")
    def _wildcard(self) -> SymbolModel:
        if self.prefix == "*" and self.needed_by_package is None:
            raise ValueError("prefix '*' needs needed_by_package")
        if self.prefix != "*" and len(self.prefix) < 2:
            raise ValueError("a prefix has at least two characters")
        return self


class StageModel(_Frozen):
    stage: str = Field(pattern=r"^[A-Za-z]+$")
    tag: str = Field(pattern=r"^[A-Za-z ]+$")
    meaning: str = Field(min_length=2)
    causes: tuple[str, ...] = Field(min_length=1)
    source: str


class ExtractorModel(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: ExtractorKind
    component: str | None = None
    anchor: str = Field(min_length=3)
    regex: str = Field(min_length=3, max_length=400)
    keep: Literal["first", "last"] = "first"
    """Which values the scan keeps when there are more than it keeps: the first found, or the last
    (a traceback's innermost frames and its final exception line are its last)."""
    each: Literal["signal-text"] | None = None
    """``signal-text``: the regex is made once per text of the signal table (``deaths.signals``:
    the words strsignal, bash and faulthandler print for a signal), ``{text}`` replaced by the text
    and the text its anchor (one extractor for every signal of the complete table)."""
    source: str | None = None
    """Where the form the regex reads is printed (the program's own source)."""

    @model_validator(mode="after")
    def _check(self) -> ExtractorModel:
        rx = self.regex.replace("{text}", "Killed") if self.each else self.regex
        if self.each and "{text}" not in self.regex:
            raise ValueError("an extractor made per text places the text ({text}) in its regex")
        problem = re2_subset_problem(rx)
        if problem:
            raise ValueError(problem)
        if (self.kind == "version") != (self.component is not None):
            raise ValueError("a version extractor names its component, no other does")
        return self


class SourceMessageModel(_Frozen):
    """A message as the vendor's source prints it (cannenv.explain.messages): the literal
    fragments of its printed line, where it is raised (``path#Lline`` under the source's URL at a
    commit) and, for torch_npu, the ERRxxxxx its check carries."""

    id: str = Field(pattern=r"^[a-z]+-[0-9a-f]{10}$")
    family: MessageFamily
    text: tuple[str, ...] = Field(min_length=1)
    code: str | None = Field(None, pattern=r"^ERR0[0-4]\d{3}$")
    at: str = Field(pattern=r"^[A-Za-z0-9_./+-]+#L[0-9]+(-L[0-9]+)?$")
    source: str

    @model_validator(mode="after")
    def _check(self) -> SourceMessageModel:
        from cannenv.explain.rules import TOOL_FAMILIES, distinctive, pattern

        if not distinctive(self.text, pair=self.family in TOOL_FAMILIES):
            raise ValueError("the longest fragment is not distinctive (20 characters, two words)")
        problem = re2_subset_problem(pattern(self.text)[1])
        if problem:
            raise ValueError(problem)
        if (self.family == "torch-npu-check") != (self.code is not None):
            raise ValueError("a torch-npu-check row carries its ERRxxxxx code, no other does")
        return self


class MessageCauseModel(_Frozen):
    """A reviewed rule: the causes of the messages of one family that fit it (the first rule that
    fits decides; a torch_npu message no rule fits takes the causes of its ERRxxxxx row)."""

    family: MessageFamily
    codes: tuple[str, ...] = ()
    """Only messages carrying one of these torch_npu codes."""
    module: str | None = None
    """Only messages raised under this path (a file or a folder of the source)."""
    contains: tuple[str, ...] = ()
    """Only messages containing one of these literals (any case)."""
    causes: tuple[str, ...]
    reason: str = Field(min_length=10)
    """Why, from the vendor's own wording (shown in the cause's why)."""


class HcclErrnoModel(_Frozen):
    """The layout of HCCL's 64-bit error number (``errNo[0x0000000005000007]``): system reserve
    (bits 63-32), module id (5: HCCL), sub-module (HCCL, HCOM …) and the HcclResult (bits 15-0)."""

    module_id: int = Field(ge=0, le=255)
    module_shift: int = Field(ge=0, le=56)
    submodule_shift: int = Field(ge=0, le=56)
    submodule_mask: int = Field(ge=1)
    result_mask: int = Field(ge=1)
    submodules: dict[int, str]
    source: str


class ErrnoRowModel(_Frozen):
    """One errno value of the Linux table (errno(3)): its name, the text strerror() gives it, and
    the causes it points to by itself (empty: the value alone says nothing)."""

    value: int = Field(ge=-20, le=4095)
    """The errno value; negative: getaddrinfo()'s EAI_* (socket.gaierror prints them as errno)."""
    name: str = Field(pattern=r"^E[A-Z0-9_]+$")
    text: str = Field(min_length=2)
    causes: tuple[str, ...] = ()
    reason: str = ""
    source: str | None = None
    """Where the row's meaning is read, when not the table's source (``errno.source``)."""


class ErrnoPathModel(_Frozen):
    """The causes of an errno on a path of the stack's layout (a device node, the driver's or
    CANN's install): the first rule whose errno and literal fit decides."""

    errnos: tuple[str, ...] = Field(min_length=1)
    """errno names (ENOENT …)."""
    contains: str = Field(min_length=2)
    """A literal of the path (``/dev/davinci``, ``/Ascend/ascend-toolkit/``)."""
    what: str = Field(min_length=2)
    causes: tuple[str, ...] = Field(min_length=1)
    reason: str = Field(min_length=2)
    source: str


class ErrnoModel(_Frozen):
    """An OSError as Python prints it (``[Errno 2] No such file or directory: '/dev/davinci0'``)."""

    source: str
    rows: tuple[ErrnoRowModel, ...] = Field(min_length=1)
    paths: tuple[ErrnoPathModel, ...] = ()


class PythonPackageModel(_Frozen):
    """A Python package of the NPU stack: a traceback frame under it (site-packages/<package>/…, or a
    checkout's <package>/ folder) is the stack's code, not the program's."""

    package: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    """The import name (the folder its files are in)."""
    title: str = Field(min_length=1)
    stack_of: tuple[str, ...] = ()
    """Only when the program is one of these (vllm_ascend is vLLM's platform plugin: the stack's
    when the program is vLLM, the program itself when its own code runs); empty: always."""
    classes: tuple[str, ...] = ()
    """The package's classes its messages name (an object of one is the stack's, not the program's)."""
    source: str


class PythonMessageModel(_Frozen):
    """One form of a Python built-in exception's message that names the program's own names, as
    CPython writes it: an AttributeError on an object of a class, a call's arguments (TypeError),
    a name not defined, a key or index missing, an assertion."""

    kind: str = Field(pattern=r"^[A-Z][A-Za-z]*$")
    """The exception's type (a built-in one: docs.python.org's exception hierarchy)."""
    form: str = Field(pattern=_ID)
    regex: str | None = Field(None, min_length=3, max_length=_MAX_REGEX)
    """Matched at the start of the message (after ``Kind: ``); group 1 the name it names (a class
    or a callee's qualified name); none: any message of the kind."""
    names: Literal["class", "callee", "nothing"] = "nothing"
    without_frames: bool = False
    """Whether the message decides without a traceback frame (an object of a class that is neither
    the stack's nor a built-in type): else the innermost frame must be the program's."""
    supersedes: tuple[str, ...] = ()
    """Hand-written signatures whose generic reading the ownership decides when caller and callee are
    both the program's (call-signature-mismatch: two packages of different releases)."""
    reading: str = Field(min_length=1)
    source: str

    @model_validator(mode="after")
    def _check(self) -> PythonMessageModel:
        if self.regex is not None:
            problem = re2_subset_problem(self.regex)
            if problem:
                raise ValueError(problem)
        groups = re.compile(self.regex).groups if self.regex is not None else 0
        if (self.names == "nothing") != (groups == 0):
            raise ValueError("a form that names a class or callee captures it (group 1), no other does")
        return self


class PythonCodeModel(_Frozen):
    """Whose code raised a Python exception (cannenv.explain.pycode): the stack's packages, Python's
    built-in types, and the messages of the built-in exceptions that name the program's own names."""

    packages: tuple[PythonPackageModel, ...] = Field(min_length=1)
    builtin_types: tuple[str, ...] = Field(min_length=1)
    """Python's built-in types (their objects belong to no package: NoneType, str, dict …)."""
    builtin_source: str
    messages: tuple[PythonMessageModel, ...] = Field(min_length=1)
    cut_traceback: str
    """The reading of a traceback cut before its exception line whose every frame is the program's."""
    cut_traceback_source: str
    layout_source: str
    """Where Python installs packages (site-packages, Debian's dist-packages): a frame's package."""


class ResidualMarkerModel(_Frozen):
    """Words that, in a failure line, point to a cause other than the program's own (an import, a
    library, a version, the driver, the device, memory, communication): the residual reading then
    stays silent."""

    id: str = Field(pattern=_ID)
    regex: str = Field(min_length=2, max_length=_MAX_REGEX)
    """Searched in each failure line (RE2 subset; ``(?i)`` for case-blind)."""
    causes: tuple[str, ...] = Field(min_length=1)
    """The causes the words are the vocabulary of (signatures.yaml's ``causes``: their titles and
    the facts that decide them)."""
    source: str | None = None
    """Where an upstream defines the words (Python's ImportError, the dynamic loader's messages);
    none where the words are the causes' own vocabulary."""
    unless: str | None = Field(None, min_length=3, max_length=_MAX_REGEX)
    """A line holding this is not marked (``'NoneType' object has no attribute``: a value that is
    None, not an API of another release)."""

    @model_validator(mode="after")
    def _check(self) -> ResidualMarkerModel:
        for rx in (self.regex, self.unless):
            problem = re2_subset_problem(rx) if rx is not None else None
            if problem:
                raise ValueError(problem)
        if "not-a-version-problem" in self.causes:
            raise ValueError("a marker points away from not-a-version-problem, never to it")
        return self


class ResidualInStackModel(_Frozen):
    """Extractors whose value places the failure inside the installed stack (a compile error in a
    CANN install's header): the residual reading stays silent, these causes possible."""

    extractors: tuple[str, ...] = Field(min_length=1)
    causes: tuple[str, ...] = Field(min_length=1)


class ResidualModel(_Frozen):
    """The residual reading (cannenv.explain.residual): when no signature reads a log that reports a
    failure, and no failure line holds a marker, the failure is read as not a version problem."""

    failure_kinds: tuple[str, ...] = Field(min_length=1)
    """Extractor kinds whose values are the log's failure lines (``failure``, ``py-exception`` …)."""
    not_failure: str = Field(min_length=3, max_length=_MAX_REGEX)
    """A line holding this reports no failure: a lower level (WARNING, INFO, DEBUG, a warning
    class), a stack frame (Python's ``File "…", line N``, c10's ``frame #N:``)."""
    markers: tuple[ResidualMarkerModel, ...] = Field(min_length=1)
    in_stack: ResidualInStackModel | None = None
    reading: str = Field(min_length=1)
    """Why the reading holds (shown with the cause)."""
    basis: str = Field(pattern=r"^docs/[A-Za-z0-9_./-]+\.md(#[a-z0-9-]+)?$")
    """Where the project's docs give the reasoning and its measured precision (an inference of
    cannenv's, not a vendor's statement: no source of the vendor's is claimed for it)."""

    @model_validator(mode="after")
    def _check(self) -> ResidualModel:
        problem = re2_subset_problem(self.not_failure)
        if problem:
            raise ValueError(problem)
        if len({m.id for m in self.markers}) != len(self.markers):
            raise ValueError("a marker id is used twice")
        return self


class DeathReadingModel(_Frozen):
    """What a way of dying says of the cause (``deaths``): a SIGKILL, the kernel's OOM killer."""

    cause: str
    why: str = Field(min_length=1)
    facts: tuple[str, ...] = Field(min_length=1)
    """What would decide it (host memory, not the device's: dmesg, the container's limit)."""
    remedy: str = Field(min_length=1)
    sources: tuple[str, ...] = Field(min_length=1)


class SignalModel(_Frozen):
    """One of signal(7)'s standard signals whose default action ends a process (Term, Core)."""

    number: int = Field(ge=1, le=31)
    """Its number on x86, ARM and most other architectures (signal(7)'s table)."""
    name: str = Field(pattern=r"^SIG[A-Z0-9]+$")
    action: Literal["Term", "Core"]
    meaning: str = Field(min_length=1)
    """signal(7)'s comment."""
    texts: tuple[str, ...] = ()
    """What is printed for it: glibc's strsignal (bash's report of a child killed by it), bash's
    own list, CPython's faulthandler."""
    reading: DeathReadingModel | None = None
    """What a process killed by it says of the cause (SIGKILL: host memory, at most consistent);
    none: a symptom that names no cause."""
    source: str


class DeathsModel(_Frozen):
    """How processes die (cannenv.explain.judge: ``deaths``): the signal table and what the kernel's
    OOM killer says."""

    signals: tuple[SignalModel, ...] = Field(min_length=1)
    texts_sources: tuple[str, ...] = Field(min_length=1)
    """Where the texts of the signals come from (glibc's list, bash's, faulthandler's)."""
    oom_killer: DeathReadingModel
    supersedes: tuple[str, ...] = ()
    """Hand-written signatures whose reading a death decides: helper processes that report their
    parent gone (the death says how it went)."""
    supersedes_why: str = ""
    oom_killer_supersedes: tuple[str, ...] = ()
    """Generic out-of-memory signatures the OOM killer's line decides when it is the only line they
    read (the kernel's 'Out of memory: Killed process' is the host's memory, not the device's)."""


class PythonDistGroupModel(_Frozen):
    """Python distributions (PyPI project names, compared as PEP 503 normalises them) of one kind."""

    names: tuple[str, ...] = Field(min_length=1)
    source: str
    reason: str = Field(min_length=10)
    """Why these names are of the group (a reviewed reading of the source)."""


class PythonDistsModel(_Frozen):
    """Which package a packaging tool's version conflict or missing distribution names decides the
    cause (cannenv.explain.judge, the ``python-dist-*`` extractors): one of CANN's Python
    dependencies, a package of the stack (with ``python_code.packages``), or any other."""

    cann_deps: PythonDistGroupModel
    stack: PythonDistGroupModel
    """The stack's distributions besides ``python_code.packages`` (whose import names count too)."""


class KnowledgeFile(_Frozen):
    schema_version: Literal[1] = 1
    sources: dict[str, SourceModel]
    packages: dict[str, PackageModel]
    libraries: tuple[LibraryModel, ...]
    symbols: tuple[SymbolModel, ...]
    hccl_stages: tuple[StageModel, ...] = ()
    extractors: tuple[ExtractorModel, ...]
    codes: tuple[CodeModel, ...] = Field(min_length=1)
    title_causes: dict[str, tuple[str, ...]] = {}
    """The causes the vendor's error title (``Memory_Allocation_Failure`` …) points to: what the
    error-code importer gives a new row (a person reviews them)."""
    inner_codes: tuple[InnerCodeModel, ...] = ()
    source_messages: tuple[SourceMessageModel, ...] = ()
    message_causes: tuple[MessageCauseModel, ...] = ()
    hccl_errno: HcclErrnoModel | None = None
    python_code: PythonCodeModel | None = None
    errno: ErrnoModel | None = None
    """Linux errno values and the stack's paths (an OSError's ``[Errno N] text: 'path'``)."""
    deaths: DeathsModel | None = None
    residual: ResidualModel | None = None
    """The residual reading of a failure no signature reads (cannenv.explain.residual)."""
    python_dists: PythonDistsModel | None = None
    """The groups of Python distributions a packaging tool's message names (round 8)."""

    @model_validator(mode="after")
    def _references(self) -> KnowledgeFile:
        problems: list[str] = []
        if self.python_dists is not None:
            groups = (self.python_dists.cann_deps, self.python_dists.stack)
            problems += [
                f"python_dists: unknown source {g.source!r}" for g in groups if g.source not in self.sources
            ]
        problems += [
            f"extractor {e.id}: unknown source {e.source!r}"
            for e in self.extractors
            if e.source is not None and e.source not in self.sources
        ]
        d = self.deaths
        if d is not None:
            readings = [d.oom_killer, *(x.reading for x in d.signals if x.reading is not None)]
            refs = [x.source for x in d.signals] + list(d.texts_sources)
            refs += [src for r in readings for src in r.sources]
            problems += [f"deaths: unknown source {r!r}" for r in refs if r not in self.sources]
            if len({x.name for x in d.signals}) != len(d.signals):
                problems.append("deaths: a signal is listed twice")
            if len({x.number for x in d.signals}) != len(d.signals):
                problems.append("deaths: a signal number is listed twice")
            texts = [t for x in d.signals for t in x.texts]
            if len(set(texts)) != len(texts):
                problems.append("deaths: a text names two signals")
        msg_ids: set[str] = set()
        for sm in self.source_messages:
            if sm.id in msg_ids:
                problems.append(f"message {sm.id}: listed twice")
            msg_ids.add(sm.id)
            if sm.source not in self.sources:
                problems.append(f"message {sm.id}: unknown source {sm.source!r}")
        seen: set[str] = set()
        values: set[tuple[str, int]] = set()
        for c in self.codes:
            if c.code in seen:
                problems.append(f"code {c.code}: listed twice")
            seen.add(c.code)
            if c.family in ("hccl-result", "drv-error"):
                if c.value is None:
                    problems.append(f"code {c.code}: a {c.family} code needs its value")
                elif (c.family, c.value) in values:
                    problems.append(f"code {c.code}: value {c.value} listed twice in {c.family}")
                else:
                    values.add((c.family, c.value))
        problems += [
            f"library {lib.name}: unknown package {lib.package!r}"
            for lib in self.libraries
            if lib.package not in self.packages
        ]
        problems += [
            f"symbol {x.prefix}: unknown needed_by_package {x.needed_by_package!r}"
            for x in self.symbols
            if x.needed_by_package is not None and x.needed_by_package not in self.packages
        ]
        if len({e.id for e in self.extractors}) != len(self.extractors):
            problems.append("an extractor id is used twice")
        pc = self.python_code
        if pc is not None:
            refs = [p.source for p in pc.packages] + [m.source for m in pc.messages]
            refs += [pc.builtin_source, pc.cut_traceback_source, pc.layout_source]
            problems += [f"python_code: unknown source {r!r}" for r in refs if r not in self.sources]
            if len({p.package for p in pc.packages}) != len(pc.packages):
                problems.append("python_code: a package is listed twice")
            if len({(m.kind, m.form) for m in pc.messages}) != len(pc.messages):
                problems.append("python_code: a message form is listed twice")
        rs = self.residual
        if rs is not None:
            refs = [m.source for m in rs.markers if m.source is not None]
            problems += [f"residual: unknown source {r!r}" for r in refs if r not in self.sources]
            kinds = {e.kind for e in self.extractors}
            problems += [f"residual: no extractor of kind {k!r}" for k in rs.failure_kinds if k not in kinds]
            ids = {e.id for e in self.extractors}
            problems += [
                f"residual: unknown extractor {x!r}"
                for x in (rs.in_stack.extractors if rs.in_stack else ())
                if x not in ids
            ]
        en = self.errno
        if en is not None:
            names = {r.name for r in en.rows}
            if len(names) != len(en.rows) or len({r.value for r in en.rows}) != len(en.rows):
                problems.append("errno: a value or name is listed twice")
            refs = [en.source] + [r.source for r in en.rows if r.source is not None]
            problems += [f"errno: unknown source {r!r}" for r in refs if r not in self.sources]
            problems += [
                f"errno path {x.contains}: unknown source {x.source!r}"
                for x in en.paths
                if x.source not in self.sources
            ]
            problems += [
                f"errno path {x.contains}: unknown errno {n!r}"
                for x in en.paths
                for n in x.errnos
                if n not in names
            ]
        codes = {c.code for c in self.codes}
        problems += [
            f"message {sm.id}: unknown code {sm.code!r}"
            for sm in self.source_messages
            if sm.code is not None and sm.code not in codes
        ]
        problems += [
            f"message cause rule {i}: unknown code {c!r}"
            for i, r in enumerate(self.message_causes)
            for c in r.codes
            if c not in codes
        ]
        names = {c.name for c in self.codes}
        inner: set[str] = set()
        for ic in self.inner_codes:
            if ic.code in inner:
                problems.append(f"inner code {ic.code}: listed twice")
            inner.add(ic.code)
            if ic.acl not in names:
                problems.append(f"inner code {ic.code}: unknown ACL code {ic.acl!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class FaqPageModel(_Frozen):
    """A vendor FAQ / troubleshooting page, read whole at one commit (``faq.yaml``)."""

    title: str = Field(min_length=2)
    component: str = Field(min_length=2)
    """What raises the errors the page is about (``MindIE LLM``, ``torch_npu`` …)."""
    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    path: str = Field(min_length=3, pattern=r"\.md$")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    skipped: dict[str, str] = {}
    """Entries (by anchor) that show an error message but make no row, each with why (the message
    is only a screenshot, or too generic to name one fault: ``Segmentation fault``)."""

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}"


class FaqEntryModel(_Frozen):
    """One FAQ entry that shows an error message: the literal fragments of the message (verbatim
    from the entry), the cause a person assigned from the entry's stated cause, and the vendor's
    advice."""

    page: str
    anchor: str = Field(min_length=1)
    title: str = Field(min_length=2)
    item: str | None = Field(None, min_length=1)
    """One item of an entry that lists several problems under one heading (a numbered list or a
    table: ``问题4``, ``row 2``); rows of one entry differ by it."""
    match: tuple[str, ...] = Field(min_length=1)
    """Literal fragments of the entry's error text, any of which identifies it (variable parts cut
    out); each at least 12 characters and not a bare error word."""
    cause: str | None = None
    """A cause id of signatures.yaml, from the entry's stated cause; None: the entry's cause fits no
    id (the row still matches and shows the advice, naming no cause)."""
    reason: str = Field(min_length=8)
    """Why that cause (or why none): the entry's stated cause in a line."""
    advice: str = Field(min_length=8)
    """The vendor's advice, a sentence (shown as the remedy)."""
    signature: str | None = Field(None, pattern=_ID)
    """A hand-written signature already made from this entry: the row derives none of its own."""
    priority: int | None = Field(None, ge=-100, le=30)
    """Set only for a very specific fragment (default: below every hand-written signature)."""

    @field_validator("match")
    @classmethod
    def _distinctive(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [m for m in v if len(m.strip()) < 12 or m != m.strip()]
        if bad:
            raise ValueError(f"a fragment must be a distinctive literal of 12+ characters, trimmed: {bad}")
        return v


class FaqFile(_Frozen):
    schema_version: Literal[1] = 1
    pages: dict[str, FaqPageModel]
    entries: tuple[FaqEntryModel, ...]

    @model_validator(mode="after")
    def _references(self) -> FaqFile:
        problems: list[str] = []
        seen: set[tuple[str, str, str | None]] = set()
        for e in self.entries:
            if e.page not in self.pages:
                problems.append(f"entry {e.anchor}: unknown page {e.page!r}")
            if (e.page, e.anchor, e.item) in seen:
                problems.append(f"entry {e.page}#{e.anchor} {e.item or ''}: listed twice")
            seen.add((e.page, e.anchor, e.item))
            if e.page in self.pages and e.anchor in self.pages[e.page].skipped:
                problems.append(f"entry {e.page}#{e.anchor}: both a row and skipped")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class SourceRepoModel(_Frozen):
    """A vendor repository at the commit its rows were imported from."""

    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    title: str = Field(min_length=2)


class LogModuleModel(_Frozen):
    """A reviewed mapping of source paths (fnmatch patterns) to the causes their messages point
    to, with the reason; ``words`` narrows it to messages containing one of them (any case)."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    paths: tuple[str, ...] = Field(min_length=1)
    words: tuple[str, ...] = ()
    causes: tuple[str, ...] = ()
    reason: str = Field(min_length=10)


class LogMessageModel(_Frozen):
    """One error-log call of the vendor's source: where it is, its format string, the HcclResult
    the call site returns and the EI code reported just before it, where the code shows them."""

    repo: str
    path: str = Field(min_length=3)
    line: int = Field(ge=1)
    format: str = Field(min_length=1)
    result: str | None = Field(None, pattern=r"^HCCL_(E_[A-Z_]+|SUCCESS)$")
    code: str | None = Field(None, pattern=r"^E[A-Z][0-9]{4}$")
    macro: Literal["HCCL_WARNING", "HCCL_RUN_WARNING"] | None = None
    """The warning-level macro that logs it; absent for ``HCCL_ERROR`` (error level)."""


class _RowAt(Protocol):
    @property
    def repo(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class _SourceTable(Protocol):
    @property
    def repos(self) -> dict[str, SourceRepoModel]: ...
    @property
    def rows(self) -> tuple[_RowAt, ...]: ...


ST = TypeVar("ST", bound=_SourceTable)


def _check_source_table(table: ST, reviewed: Sequence[_Named], noun: str) -> ST:
    """A table read out of source repositories: every row names one of its ``repos``, and each
    reviewed mapping (module or rule) is listed once."""
    problems = sorted(
        {f"row {r.path}:{r.line}: unknown repo {r.repo!r}" for r in table.rows if r.repo not in table.repos}
    )
    names = [m.name for m in reviewed]
    problems += [f"{noun} {n}: listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
    if problems:
        raise ValueError("; ".join(problems[:20]))
    return table


class LogMessagesFile(_Frozen):
    """``matrices/explain/hccl_messages.yaml``: HCCL's error-log messages imported from its source
    (``python -m cannenv.explain.logsource``) and the reviewed module → cause mapping."""

    schema_version: Literal[1] = 1
    repos: dict[str, SourceRepoModel] = Field(min_length=1)
    modules: tuple[LogModuleModel, ...]
    rows: tuple[LogMessageModel, ...]

    @model_validator(mode="after")
    def _references(self) -> LogMessagesFile:
        return _check_source_table(self, self.modules, "module")


class OpRuleModel(_Frozen):
    """A reviewed mapping of the aclnn errno a check logs with (``ACLNN_ERR_PARAM_INVALID`` …),
    narrowed by ``words`` of its message (any case), to the causes it points to, with the reason."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    codes: tuple[str, ...] = Field(min_length=1)
    words: tuple[str, ...] = ()
    causes: tuple[str, ...] = ()
    reason: str = Field(min_length=10)

    @field_validator("codes")
    @classmethod
    def _errnos(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [c for c in v if not re.fullmatch(r"ACLNN_ERR_[A-Z_]+", c)]
        if bad:
            raise ValueError(f"not an aclnn errno name: {bad}")
        return v


class OpMessageModel(_Frozen):
    """One distinct parameter-check message of a repository: its first place, the errno it is
    logged with, the format string and how many places log it."""

    repo: str
    path: str = Field(min_length=3)
    line: int = Field(ge=1)
    code: str = Field(pattern=r"^ACLNN_ERR_[A-Z_]+$")
    format: str = Field(min_length=1)
    sites: int = Field(ge=1)


class OpMessagesFile(_Frozen):
    """``matrices/explain/aclnn_messages.yaml``: the aclnn operators' OP_LOGE messages imported from
    their source (``python -m cannenv.explain.opapi``) and the reviewed errno → cause rules."""

    schema_version: Literal[1] = 1
    repos: dict[str, SourceRepoModel] = Field(min_length=1)
    rules: tuple[OpRuleModel, ...]
    rows: tuple[OpMessageModel, ...]

    @model_validator(mode="after")
    def _references(self) -> OpMessagesFile:
        return _check_source_table(self, self.rules, "rule")


class LibRowModel(_Frozen):
    """One category of a library's or tool's own error table (OpenCV's ``cv::Error::Code``, ONNX
    Runtime's ``StatusCode``, Paddle's ``ErrorCode``, a compiler's diagnostic kind), with the causes
    its meaning points to (none where the category alone says nothing) and why."""

    key: str = Field(min_length=1, max_length=60, pattern=r"^[A-Za-z0-9_.-]+$")
    """What a form captures for it: the code (``-215``, ``2``) or the name (``InvalidArgument``)."""
    name: str = Field(min_length=2)
    """The table's own name (``StsAssert``, ``INVALID_ARGUMENT``)."""
    printed: str | None = Field(None, min_length=3)
    """The name the library prints for it where it differs from both (OpenCV's ``Assertion failed``)."""
    meaning: str = Field(min_length=2)
    """The table's own comment for it."""
    causes: tuple[str, ...] = ()
    reason: str = Field(min_length=10)
    """Why these causes from the table's meaning, or why none."""
    source: str
    printed_form: bool = True
    """False: the library prints no category for it (Paddle's untyped LEGACY error): kept for the
    table's completeness, left out of the forms made ``each_row``."""
    line: int | None = Field(None, ge=1)
    """The row's line in its source's file (the source's URL + ``#L<line>``): a table read from a
    header whose every value has its own line (GE's status codes)."""


class LibFormModel(_Frozen):
    """A printed form of the table's errors: ``anchor`` (a literal every match contains) and a regex
    whose group 1 captures a row's key or printed name, or none with ``row`` (the one row it is);
    ``each_row``: one form per row, ``{key}`` in anchor and regex replaced by the row's key and
    ``{printed}`` (in both or neither) by the row's printed text, escaped in the regex (a table whose
    rows are known by their text alone, the runtime's errorStr, has ``{printed}`` only)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    anchor: str = Field(min_length=3)
    regex: str = Field(min_length=3, max_length=_MAX_REGEX)
    row: str | None = None
    each_row: bool = False
    source: str

    @model_validator(mode="after")
    def _check(self) -> LibFormModel:
        if self.each_row:
            keyed = "{key}" in self.anchor and "{key}" in self.regex
            if not (keyed or "{printed}" in self.anchor) or self.row is not None:
                raise ValueError(
                    "an each_row form has {key} (or {printed}) in its anchor and regex, and no row"
                )
            if ("{key}" in self.anchor) != ("{key}" in self.regex) or ("{printed}" in self.anchor) != (
                "{printed}" in self.regex
            ):
                raise ValueError("an each_row form has {printed} in both its anchor and regex, or in neither")
            probe_rx = self.regex.replace("{key}", "Key").replace("{printed}", "Printed")
        else:
            probe_rx = self.regex
        problem = re2_subset_problem(probe_rx)
        if problem:
            raise ValueError(problem)
        groups = re.compile(probe_rx).groups
        if groups != (0 if self.row is not None else 1):
            raise ValueError("a form captures the row (group 1), or names it (row) and captures nothing")
        return self


class LibTableModel(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=2)
    component: str = Field(min_length=2)
    forms: tuple[LibFormModel, ...] = Field(min_length=1)
    rows: tuple[LibRowModel, ...] = Field(min_length=1)
    fold_case: bool = False
    """True: a captured value finds its row whatever its letters' case (an event id the device logs
    as ``0x80e01809`` is the table's ``80E01809``)."""
    priority: int | None = Field(None, ge=-100, le=30)
    """The derived signature's priority (None: ``LIBRARY_TABLE_PRIORITY``, below every other
    signature): a table of the stack's own messages ranks with them (the runtime's AI Core errorStr
    texts at the runtime's -45)."""

    @model_validator(mode="after")
    def _unique(self) -> LibTableModel:
        problems: list[str] = []
        keys = [r.key for r in self.rows] + [r.printed for r in self.rows if r.printed]
        if self.fold_case:
            keys = [k.upper() for k in keys]
        problems += [
            f"table {self.id}: {k!r} names two rows" for k in sorted({k for k in keys if keys.count(k) > 1})
        ]
        ids = [f.id for f in self.forms]
        problems += [
            f"table {self.id}: form {i} listed twice" for i in sorted({i for i in ids if ids.count(i) > 1})
        ]
        known = {r.key for r in self.rows}
        problems += [
            f"table {self.id}: form {f.id}: unknown row {f.row!r}"
            for f in self.forms
            if f.row and f.row not in known
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class LibTablesFile(_Frozen):
    """``matrices/explain/libtables.yaml``: the error tables of the libraries and tools around the
    stack (cannenv.explain.libtables)."""

    schema_version: Literal[1] = 1
    sources: dict[str, SourceModel] = Field(min_length=1)
    tables: tuple[LibTableModel, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> LibTablesFile:
        problems: list[str] = []
        ids = [t.id for t in self.tables]
        problems += [f"table {i}: listed twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
        for t in self.tables:
            refs = [(f"row {r.key}", r.source) for r in t.rows] + [
                (f"form {f.id}", f.source) for f in t.forms
            ]
            problems += [
                f"table {t.id}: {what}: unknown source {s!r}" for what, s in refs if s not in self.sources
            ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class RtgeRuleModel(_Frozen):
    """A reviewed mapping of words of a runtime/GE message (any case), optionally only under some
    source paths (fnmatch patterns), to the causes it points to, with the code's own wording as
    its reason."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    words: tuple[str, ...] = Field(min_length=1)
    paths: tuple[str, ...] = ()
    causes: tuple[str, ...] = Field(min_length=1)
    reason: str = Field(min_length=10)


class RtgeMessageModel(_Frozen):
    """One error-log or report call of the runtime's or GE's source: where it is, the macro, the
    code argument where there is one, the format string."""

    repo: str
    path: str = Field(min_length=3)
    line: int = Field(ge=1)
    call: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    code: str | None = Field(None, pattern=r"^[A-Z][A-Z0-9_]{1,63}$")
    format: str = Field(min_length=1)


class RtgeMessagesFile(_Frozen):
    """``matrices/explain/rtge_messages.yaml``: the CANN runtime's and GE's error messages imported
    from their source (``python -m cannenv.explain.rtge``) and the reviewed word → cause rules."""

    schema_version: Literal[1] = 1
    repos: dict[str, SourceRepoModel] = Field(min_length=1)
    rules: tuple[RtgeRuleModel, ...]
    rows: tuple[RtgeMessageModel, ...]

    @model_validator(mode="after")
    def _references(self) -> RtgeMessagesFile:
        return _check_source_table(self, self.rules, "rule")


class MsMessageModel(_Frozen):
    """One ``MS_LOG(EXCEPTION|ERROR|CRITICAL)``/``MS_EXCEPTION(Type)`` stream of MindSpore's source:
    where it is, the call, the exception type where the call names one, the message (a streamed
    value is a hole, ``%s``)."""

    repo: str
    path: str = Field(min_length=3)
    line: int = Field(ge=1)
    call: str = Field(pattern=r"^MS_(?:LOG_(?:EXCEPTION|ERROR|CRITICAL)|EXCEPTION)$")
    exception: str | None = Field(None, pattern=r"^[A-Z][A-Za-z0-9_]{1,63}$")
    format: str = Field(min_length=1)

    @property
    def code(self) -> str | None:
        """The exception type, where :func:`cannenv.explain.rtge.build` reads a row's code."""
        return self.exception


class MsMessagesFile(_Frozen):
    """``matrices/explain/mindspore_messages.yaml``: MindSpore's Ascend-side error messages imported
    from its source (``python -m cannenv.explain.msascend``) and the reviewed word → cause rules."""

    schema_version: Literal[1] = 1
    repos: dict[str, SourceRepoModel] = Field(min_length=1)
    rules: tuple[RtgeRuleModel, ...]
    rows: tuple[MsMessageModel, ...]

    @model_validator(mode="after")
    def _references(self) -> MsMessagesFile:
        return _check_source_table(self, self.rules, "rule")


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], raw: Any, *, source: str, what: str, hint: str) -> M:
    """``raw`` validated as ``model``; InputError naming every problem by field."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "\n".join(
            f"{source}: field {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InputError(f"invalid {what}:\n{problems}", hint=hint) from None


def read_yaml(path: str | Path, *, what: str, max_bytes: int) -> tuple[Path, Any]:
    """A data file (YAML or JSON), read bounded (size, alias expansion)."""
    from cannenv.records import decode_utf8, load_yaml, read_bytes

    p = Path(path)
    text = decode_utf8(read_bytes(p, what=what, max_bytes=max_bytes), source=str(p))
    try:
        return p, load_yaml(text)
    except Exception as exc:  # yaml.YAMLError and the node-count bound
        raise InputError(f"{p}: not valid YAML: {exc}") from None


class AicerrRepoModel(_Frozen):
    """A copy of msaicerr's source at a commit (the CANN toolkit's ``tools/msaicerr``)."""

    repo: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    title: str = Field(min_length=10)
    """What this copy is (the vendor's repository, a mirror of its history, the release it ships in)."""


class AicerrRuleModel(_Frozen):
    """A reviewed reading of msaicerr's conclusions: a conclusion containing one of ``words`` (any
    case) means what the vendor's page says (``meaning``) and points to ``causes`` (none: it names
    no cause), with the reason."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    words: tuple[str, ...] = Field(min_length=1)
    causes: tuple[str, ...] = ()
    meaning: str = Field(min_length=10)
    reason: str = Field(min_length=10)
    source: SourceModel
    """The vendor's text this reading is taken from (its troubleshooting page, or the code's branch)."""


class AicerrRowModel(_Frozen):
    """One conclusion msaicerr can print: where it is assigned (``conclusion = "…"``) and its text
    (whitespace collapsed)."""

    repo: str
    path: str = Field(min_length=3)
    line: int = Field(ge=1)
    text: str = Field(min_length=3)


class AicerrFile(_Frozen):
    """``matrices/explain/aicerr.yaml``: msaicerr's root-cause conclusions imported from its source
    (``python -m cannenv.explain.aicerr``) and the reviewed rules that read them."""

    schema_version: Literal[1] = 1
    repos: dict[str, AicerrRepoModel] = Field(min_length=1)
    """The copies read, the newest first (a text two copies have is cited from the first)."""
    rules: tuple[AicerrRuleModel, ...] = Field(min_length=1)
    rows: tuple[AicerrRowModel, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> AicerrFile:
        problems: list[str] = []
        names = [r.name for r in self.rules]
        problems += [f"rule {n}: listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
        problems += [
            f"row {r.path}:{r.line}: unknown repo {r.repo!r}" for r in self.rows if r.repo not in self.repos
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class CheckFormModel(_Frozen):
    """A form in which a failed check is printed (``failed_checks.yaml``): ``anchor`` (a literal every
    match holds) and a linear regex whose group 1 is the check as printed; ``before``: words one of
    which the line holds before the anchor; ``not_after``: first words after it that make the line
    prose about an error rather than a compared value."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    kind: Literal["assertion", "comparison"]
    printer: str = Field(min_length=3)
    anchor: str = Field(min_length=3)
    regex: str = Field(min_length=3, max_length=_MAX_REGEX)
    reading: str = Field(min_length=20)
    source: str
    before: tuple[str, ...] = ()
    not_after: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _check(self) -> CheckFormModel:
        problem = re2_subset_problem(self.regex)
        if problem:
            raise ValueError(problem)
        if re.compile(self.regex).groups != 1:
            raise ValueError("a form's regex has one group: the check as printed")
        if any(not w.strip() or w != w.lower() for w in (*self.before, *self.not_after)):
            raise ValueError("before/not_after words are lower case and not empty")
        return self


class StepAsideModel(_Frozen):
    """What a failed check's line may name that makes it another cause's reading (a version, a
    package, a library, the driver, a chip, memory, a timeout): whole words in any case, or linear
    regexes (``shapes``), each row with the causes whose reading it is (none: the reading of what
    the line relays, a callee's status, is its own message's or code's)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    what: str = Field(min_length=3)
    words: tuple[str, ...] = Field(min_length=1)
    shapes: tuple[str, ...] = ()
    causes: tuple[str, ...] = ()
    source: str | None = None

    @model_validator(mode="after")
    def _check(self) -> StepAsideModel:
        if any(not re.fullmatch(r"[a-z0-9_ -]+", w) or not re.search(r"[a-z0-9]", w) for w in self.words):
            raise ValueError("a step-aside word is lower-case letters, digits, '_', '-' and spaces")
        for rx in self.shapes:
            problem = re2_subset_problem(rx)
            if problem:
                raise ValueError(problem)
        return self


class QuietLevelModel(_Frozen):
    """A line's level that reports no failure (a warning, a note): a linear regex and its source."""

    regex: str = Field(min_length=3, max_length=_MAX_REGEX)
    source: str

    @model_validator(mode="after")
    def _check(self) -> QuietLevelModel:
        problem = re2_subset_problem(self.regex)
        if problem:
            raise ValueError(problem)
        return self


class FailedChecksFile(_Frozen):
    """``matrices/explain/failed_checks.yaml``: the printed forms of a program's or tool's failed
    check (cannenv.explain.failedchecks)."""

    schema_version: Literal[1] = 1
    sources: dict[str, SourceModel] = Field(min_length=1)
    forms: tuple[CheckFormModel, ...] = Field(min_length=1)
    step_aside: tuple[StepAsideModel, ...] = Field(min_length=1)
    quiet_levels: tuple[QuietLevelModel, ...] = ()

    @model_validator(mode="after")
    def _references(self) -> FailedChecksFile:
        problems: list[str] = []
        ids = [f.id for f in self.forms]
        problems += [f"form {i}: listed twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
        refs = [(f"form {f.id}", f.source) for f in self.forms]
        refs += [(f"step_aside {s.id}", s.source) for s in self.step_aside if s.source is not None]
        refs += [(f"quiet level {q.regex}", q.source) for q in self.quiet_levels]
        problems += [f"{what}: unknown source {s!r}" for what, s in refs if s not in self.sources]
        if problems:
            raise ValueError("; ".join(problems))
        return self


class DrvInstallSourceModel(_Frozen):
    """The repository and commit the driver installer's scripts were read at."""

    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    title: str = Field(min_length=10)


class DrvInstallRuleModel(_Frozen):
    """A reviewed rule of the driver installer's messages: words of a form (lower case; any of them
    fits) and the causes the message points to (none: it names no cause by itself)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    words: tuple[str, ...] = Field(min_length=1)
    causes: tuple[str, ...] = ()
    reason: str = Field(min_length=20)

    @model_validator(mode="after")
    def _check(self) -> DrvInstallRuleModel:
        if any(not w.strip() or w != w.lower() for w in self.words):
            raise ValueError("a rule's words are lower case and not empty")
        return self


class DrvInstallMessageModel(_Frozen):
    """A message the installer's scripts print at the error level: its form as the script writes
    it, the literal pieces between its variable parts (the linear pattern) and where it is printed."""

    text: str = Field(min_length=1)
    pieces: tuple[str, ...] = Field(min_length=1)
    at: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> DrvInstallMessageModel:
        # that the pieces are the text's literal parts: cannenv.explain.drvinstall.parse
        if any(not re.fullmatch(r"scripts/package/[A-Za-z0-9_./+-]+\.(?:sh|inc):[0-9]+", a) for a in self.at):
            raise ValueError(f"'at' is scripts/package/…(.sh|.inc):LINE: {self.at!r}")
        return self


class DrvInstallFile(_Frozen):
    """``matrices/explain/drv_install.yaml``: the NPU driver installer's own error messages
    imported from its scripts (cannenv.explain.drvinstall) and the reviewed rules."""

    schema_version: Literal[1] = 1
    source: DrvInstallSourceModel
    rules: tuple[DrvInstallRuleModel, ...] = Field(min_length=1)
    messages: tuple[DrvInstallMessageModel, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> DrvInstallFile:
        problems: list[str] = []
        ids = [r.id for r in self.rules]
        problems += [f"rule {i}: listed twice" for i in sorted({i for i in ids if ids.count(i) > 1})]
        texts = [m.text for m in self.messages]
        problems += [f"message {t!r}: listed twice" for t in sorted({t for t in texts if texts.count(t) > 1})]
        if problems:
            raise ValueError("; ".join(problems))
        return self


CommandKind = Literal["cann", "driver", "os"]


class CommandKindModel(_Frozen):
    """What a command of one kind not found means (``commands.yaml`` ``kinds``): the causes, the
    reason said as their why (``{command}``, ``{package}`` and ``{where}`` filled in) and the
    sources of the reading."""

    causes: tuple[str, ...] = Field(min_length=1)
    what: str = Field(min_length=3)
    reason: str = Field(min_length=20)
    sources: tuple[str, ...] = Field(min_length=1)


class CommandModel(_Frozen):
    """A command and who ships it (``commands.yaml`` ``commands``): the package of knowledge.yaml
    (``cann``, ``driver``) or the OS package (``os``; none where the source names only the tool),
    the folder it is installed in, and the source that lists it."""

    name: str = Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$")
    kind: CommandKind
    package: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
    component: str | None = None
    """The vendor's package name (``<func_name>`` of a package XML) where it is one of several."""
    where: str = Field(min_length=1)
    source: str
    package_source: str | None = None
    """Where the package is named as the one that ships the command (an install guide), when
    ``source`` names only the command."""


class CommandsFile(_Frozen):
    """``matrices/explain/commands.yaml``: who ships a command the shell or a tool does not find
    (cannenv.explain.commands)."""

    schema_version: Literal[1] = 1
    sources: dict[str, SourceModel] = Field(min_length=1)
    path: tuple[str, ...] = Field(min_length=1)
    """The folders under a CANN install that its set_env.sh puts on PATH (``path_source`` says)."""
    path_source: str
    kinds: dict[CommandKind, CommandKindModel]
    commands: tuple[CommandModel, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _references(self) -> CommandsFile:
        problems: list[str] = []
        names = [c.name for c in self.commands]
        problems += [f"command {n}: listed twice" for n in sorted({n for n in names if names.count(n) > 1})]
        refs = [("path_source", self.path_source)]
        refs += [(f"command {c.name}", c.source) for c in self.commands]
        refs += [(f"command {c.name}", c.package_source) for c in self.commands if c.package_source]
        refs += [(f"kind {k}", s) for k, v in self.kinds.items() for s in v.sources]
        problems += [f"{what}: unknown source {s!r}" for what, s in refs if s not in self.sources]
        kinds = sorted({c.kind for c in self.commands})
        problems += [f"kind {k}: not described in kinds" for k in kinds if k not in self.kinds]
        if problems:
            raise ValueError("; ".join(problems))
        return self
