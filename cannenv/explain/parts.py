"""The knowledge's parts that a short log rarely reads, defined apart from :mod:`.knowledge`.

The validated-table cache (:func:`cannenv.explain.signatures.shipped`) keeps each of these parts as a
blob of its own (:mod:`cannenv.explain.lazy`); unpickling a blob imports this module. A log that
needs none of them (most short excerpts) never imports it, and so never builds these classes: on
Python 3.11 each frozen dataclass costs about half a millisecond to define (docs/performance.md,
"explain on a short log").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class InnerCode:
    """A runtime-internal hex code and the public ACL code it is reported as."""

    code: str
    name: str
    acl: str
    meaning: str
    source: str


@dataclass(frozen=True)
class Library:
    name: str
    prefix: bool
    package: str
    package_title: str
    causes: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class SymbolRule:
    prefix: str
    provider: str
    needed_by: str | None
    needed_by_not: str | None
    causes: tuple[str, ...]
    source: str
    needed_by_package: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class Stage:
    stage: str
    tag: str
    meaning: str
    causes: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class HcclErrno:
    """The layout of HCCL's error number (``errNo[0x0000000005000007]``, HCCL_ERROR_CODE /
    HCOM_ERROR_CODE of HCCL's log.h): module id, sub-module and the HcclResult it carries."""

    module_id: int
    module_shift: int
    submodule_shift: int
    submodule_mask: int
    result_mask: int
    submodules: Mapping[int, str]
    source: str

    def decode(self, value: int) -> tuple[str, int] | None:
        """(sub-module name, HcclResult value) of an HCCL error number; None for another module's."""
        if (value >> self.module_shift) & 0xFF != self.module_id:
            return None
        sub = (value >> self.submodule_shift) & self.submodule_mask
        return self.submodules.get(sub, f"sub-module {sub}"), value & self.result_mask


@dataclass(frozen=True)
class DeathReading:
    """What a way of dying says of the cause (a SIGKILL; the kernel's OOM killer)."""

    cause: str
    why: str
    facts: tuple[str, ...]
    remedy: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Signal:
    """One of signal(7)'s standard signals whose default action ends a process."""

    number: int
    name: str
    action: str
    meaning: str
    texts: tuple[str, ...]
    source: str
    reading: DeathReading | None = None


@dataclass(frozen=True)
class Deaths:
    """How processes die: signal(7)'s table (with what is printed for each signal) and what the
    kernel's OOM killer says; the judge reads a death as a fact, and SIGKILL/the OOM killer as
    evidence of host memory (cannenv.explain.judge)."""

    signals: tuple[Signal, ...]
    texts_sources: tuple[str, ...]
    oom_killer: DeathReading
    supersedes: tuple[str, ...] = ()
    supersedes_why: str = ""
    oom_killer_supersedes: tuple[str, ...] = ()

    def signal(self, said: str) -> Signal | None:
        """The signal a log names: its number (``9``, ``-9``), its name (``SIGKILL``, ``KILL``) or
        the words printed for it (``Killed``, ``Segmentation fault``)."""
        said = said.strip()
        if said.lstrip("-").isdecimal():
            n = int(said.lstrip("-"))
            return next((x for x in self.signals if x.number == n), None)
        upper = said.upper()
        name = upper if upper.startswith("SIG") else "SIG" + upper
        for x in self.signals:
            if x.name == name or said in x.texts:
                return x
        return None


@dataclass(frozen=True)
class ErrnoPath:
    errnos: frozenset[int]
    contains: str
    what: str
    causes: tuple[str, ...]
    reason: str
    source: str


@dataclass(frozen=True)
class Errno:
    """Linux errno values (name, strerror text, the causes a value gives by itself) and the causes
    of an errno on a path of the stack's layout (:meth:`causes`)."""

    rows: Mapping[int, tuple[str, str, tuple[str, ...], str, str]]
    """value -> (name, text, causes, reason, source)"""
    paths: tuple[ErrnoPath, ...]
    source: str

    def causes(self, value: int, path: str) -> tuple[str, tuple[str, ...], str, str] | None:
        """(what failed, causes, reason, source) of an OSError: the first path rule whose errno
        and literal fit, else the value's own causes; None when the value says nothing."""
        row = self.rows.get(value)
        if row is None:
            return None
        name, text, causes, reason, source = row
        for rule in self.paths:
            if value in rule.errnos and path and rule.contains in path:
                return f"{name} ({text}) on {rule.what}", rule.causes, rule.reason, rule.source
        if not causes:
            return None
        return f"{name} ({text})", causes, reason, source


@dataclass(frozen=True)
class PythonPackage:
    package: str
    title: str
    stack_of: tuple[str, ...]
    classes: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class PythonMessage:
    kind: str
    form: str
    regex: str | None
    names: str
    without_frames: bool
    supersedes: tuple[str, ...]
    reading: str
    source: str


@dataclass(frozen=True)
class PythonCode:
    """Whose code raised a Python exception (``python_code``; :mod:`cannenv.explain.pycode`)."""

    packages: tuple[PythonPackage, ...]
    builtin_types: frozenset[str]
    builtin_source: str
    messages: tuple[PythonMessage, ...]
    cut_traceback: str
    cut_traceback_source: str
    layout_source: str


@dataclass(frozen=True)
class ResidualMarker:
    """Words that, in a failure line, point to another cause (``residual.markers``)."""

    id: str
    regex: str
    causes: tuple[str, ...]
    source: str | None
    unless: str | None = None


@dataclass(frozen=True)
class Residual:
    """The residual reading of a failure no signature reads (``residual``; :mod:`.residual`)."""

    failure_kinds: tuple[str, ...]
    not_failure: str
    markers: tuple[ResidualMarker, ...]
    reading: str
    basis: str
    in_stack: tuple[str, ...] = ()
    """Extractors whose value places the failure inside the installed stack (silence)."""
    in_stack_causes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceMessage:
    """A message read out of a vendor's source (``source_messages``), its causes resolved through
    the reviewed rules (``message_causes``) or its torch_npu code's row."""

    id: str
    family: str
    text: tuple[str, ...]
    code: str | None
    at: str
    source: str
    """The id of the message's own source (``msg:<id>``: its URL is the file and line at the commit,
    resolved on demand by :meth:`Knowledge.message_source`, not stored in ``sources``)."""
    causes: tuple[str, ...]
    reason: str
    anchor: str
    regex: str
    cites: str = ""
    """The id of the repository source (at its commit) the row's file and line are in."""


@dataclass(frozen=True)
class LibRow:
    """One category of a library's or tool's own error table (``libtables.yaml``: :mod:`.libtables`)."""

    key: str
    name: str
    printed: str | None
    meaning: str
    causes: tuple[str, ...]
    reason: str
    source: str
    line: int | None = None
    """The row's line in its source's file, where the table gives one."""

    @property
    def source_id(self) -> str:
        """The source of the row's causes: its source, at its line where it has one
        (``ge-status-define#L102``, resolved by the judge to the source's URL + ``#L102``)."""
        return f"{self.source}#L{self.line}" if self.line else self.source


@dataclass(frozen=True)
class LibForm:
    """A printed form of a table's errors: group 1 of ``regex`` captures a row's key or printed
    name, or the form is the one ``row``."""

    id: str
    anchor: str
    regex: str
    row: str | None
    source: str


@dataclass(frozen=True)
class LibTable:
    id: str
    title: str
    component: str
    forms: tuple[LibForm, ...]
    rows: tuple[LibRow, ...]
    fold_case: bool = False
    """A captured value finds its row whatever its letters' case (hex event ids)."""
    priority: int | None = None
    """The derived signature's priority (None: ``LIBRARY_TABLE_PRIORITY``, below every other
    signature; msaicerr's conclusions, read out of the vendor's source, rank with the other tables of
    the vendor's messages)."""
    noun: str = "own table"
    """What the table is to its tool, in the answer's words (``{title}'s {noun}: …``)."""

    def capture(self, form: LibForm) -> str:
        """The scan's capture id of a form's values."""
        return f"lib:{self.id}:{form.id}"

    def lookup(self, value: str) -> LibRow | None:
        """The row a form captured: by its key, else by the name the library prints."""
        if self.fold_case:
            value = value.upper()
            for r in self.rows:
                if value in (r.key.upper(), (r.printed or "").upper()):
                    return r
            return None
        for r in self.rows:
            if value in (r.key, r.printed):
                return r
        return None


@dataclass(frozen=True)
class FaqRow:
    """One entry of a vendor FAQ page that shows an error message (``faq.yaml``: :mod:`.faq`)."""

    id: str
    """The derived signature's id (``faq-<page>-<hash of the anchor>``) and the row's source id."""
    page: str
    anchor: str
    title: str
    component: str
    page_title: str
    url: str
    """The page at its commit, with the entry's anchor."""
    match: tuple[str, ...]
    cause: str | None
    reason: str
    advice: str
    signature: str | None
    priority: int
    item: str | None = None
    """One item of an entry that lists several problems (``问题4``)."""

    @property
    def label(self) -> str:
        """The entry's title, with the item where the entry lists several."""
        return self.title if self.item is None else f"{self.title}: {self.item}"


@dataclass(frozen=True)
class CheckForm:
    """A printed form of a failed check (``failed_checks.yaml``; :mod:`cannenv.explain.failedchecks`)."""

    id: str
    kind: str
    printer: str
    anchor: str
    regex: str
    reading: str
    source: str
    before: tuple[str, ...] = ()
    not_after: tuple[str, ...] = ()

    @property
    def capture(self) -> str:
        """The scan's capture id of the form's values."""
        return f"check:{self.id}"


@dataclass(frozen=True)
class StepAside:
    """What a failed check's line may name that makes it another cause's reading."""

    id: str
    what: str
    pattern: str
    """One linear regex of the row's words (whole, any case) and shapes."""
    causes: tuple[str, ...]


@dataclass(frozen=True)
class FailedChecks:
    """The printed forms of a program's or tool's failed check, what makes one step aside, and the
    levels of a line that reports no failure."""

    forms: tuple[CheckForm, ...]
    step_aside: tuple[StepAside, ...]
    quiet_levels: tuple[str, ...]


@dataclass(frozen=True)
class CommandKind:
    """What a command of one kind not found means (``commands.yaml``; :mod:`cannenv.explain.commands`)."""

    causes: tuple[str, ...]
    what: str
    reason: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Command:
    """A command and who ships it (``commands.yaml``)."""

    name: str
    kind: str
    package: str | None
    component: str | None
    where: str
    source: str
    package_source: str | None = None


@dataclass(frozen=True)
class Commands:
    """Who ships a command the shell or a tool does not find: the rows by name, and what each kind
    of command not found means."""

    rows: Mapping[str, Command]
    kinds: Mapping[str, CommandKind]
