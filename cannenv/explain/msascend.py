"""MindSpore's own Ascend-side error messages, imported from its source
(``matrices/explain/mindspore_messages.yaml``).

MindSpore's C++ core logs and raises through one stream macro: ``MS_LOG(EXCEPTION) << "…" << x``
(raises, a RuntimeError in Python), ``MS_LOG(ERROR)``/``MS_LOG(CRITICAL)`` and
``MS_EXCEPTION(ValueError) << …`` (raises that exception type). Its Ascend device plugin
(``plugin/device/ascend``: the kernel runtime, memory adapter and pool, HCCL adapter, streams) and
the runtime's device and hardware layers (``runtime/device``, ``runtime/hardware``) are open
source, so every message they can log is known: its literal fragments (a streamed value is a hole,
``%s``), the file and line, the exception type where the call names one.

They reach a log in two forms, each naming the source file:

* the log line ``[ERROR] DEVICE(pid,tid,python):time [mindspore/ccsrc/…/file.cc:line] Func] message``
  (MindSpore's ``utils/log_adapter``; ``[CRITICAL]``/``[EXCEPTION]`` alike);
* the raised exception, ``RuntimeError: message`` followed by MindSpore's ``- C++ Call Stack: (For
  framework developers)`` whose first frame ``mindspore/ccsrc/…/file.cc:line Func`` is the raise site.

A row is told apart in a message by its distinctive literals, else all its fixed parts in order
(:func:`cannenv.explain.logsource.identities`); only the rows of the file the log names are tried.
The cause a row points to comes only from the table's reviewed ``rules`` (:class:`rtge.Rule`: words
of the message, optionally under some paths → causes, the code's own wording as the reason; the
first rule covering a row decides). Generic wrappers ("Ascend kernel runtime initialization
failed", "Run task for graph … error!") and every message no rule covers point to no cause and are
not looked for: the detail in the same log decides.

``python -m cannenv.explain.msascend --import TREE REPO_KEY [--write]`` reads a source tree and prints
the refresh diff against the shipped table (docs/explain.md, "MindSpore's own Ascend-side messages").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PREFIXES = (
    "mindspore/ccsrc/plugin/device/ascend/",
    "mindspore/ccsrc/plugin/ascend/",
    "mindspore/ccsrc/plugin/res_manager/ascend/",
    "mindspore/ccsrc/runtime/hardware/",
    "mindspore/ccsrc/runtime/device/",
)
"""The parts of the tree imported: the Ascend device plugin (``plugin/device/ascend``; ``plugin/ascend``
in the newest layout) and its resource manager where the release has one, and the runtime's device
and hardware layers."""
LEVELS = ("EXCEPTION", "ERROR", "CRITICAL")
"""``MS_LOG(level)`` levels imported: EXCEPTION and CRITICAL raise, ERROR logs."""
HOLE = "%s"
MARKS = ("#umsg#", "#dmsg#")
"""MindSpore's section marks (``#umsg#Framework Error Message:#umsg#``): printed as a heading on lines
of their own (``- Framework Error Message:`` between rules), a hole in the message."""
SOURCE_PREFIX = "ms-src:"
MS_BELOW_RUNTIME = 2
"""MindSpore's messages rank this much below the runtime's own (SOURCE_PRIORITY): MindSpore calls
CANN, so where both logged a message with a cause, CANN's (the callee's) is the detail."""


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class MsMessage:
    """One ``MS_LOG``/``MS_EXCEPTION`` call of MindSpore's Ascend-side source."""

    repo: str
    commit: str
    path: str
    line: int
    format: str
    exception: str
    call: str
    rule: str
    causes: tuple[str, ...]
    reason: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{self.line}"

    @property
    def source_id(self) -> str:
        return f"{SOURCE_PREFIX}{self.repo}:{self.path}#L{self.line}"

    @property
    def source_title(self) -> str:
        raised = f" ({self.exception})" if self.exception else ""
        at = f"{self.repo} {self.path}:{self.line} (at {self.commit[:12]})"
        return f'{at}: {self.call}{raised} << "{self.format}"'

    @property
    def file(self) -> str:
        return self.path.rsplit("/", 1)[-1]


Row = tuple[int, str, int, str, str, str, tuple[str, ...], tuple[str, ...], int]
"""(repository index, path, line, format, exception type, call, literals, parts, rule index)."""
RuleData = tuple[str, tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]
MsData = tuple[tuple[Row, ...], tuple[tuple[str, str], ...], tuple[RuleData, ...], int, frozenset[str]]
"""The table as the cached knowledge holds it (plain tuples, as :data:`rtge.RtgeData`): rows with a
cause, (owner/name, commit) by index, rules, rows of the whole table, the file names of every row."""


def _found(row: Row, text: str) -> bool:
    lits, parts = row[6], row[7]
    if lits:
        return any(x in text for x in lits)
    at = 0
    for p in parts:
        at = text.find(p, at)
        if at < 0:
            return False
        at += len(p)
    return bool(parts)


@dataclass(frozen=True)
class MsMessages:
    """The engine's table over :data:`MsData`."""

    data: MsData

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.data[0]

    @property
    def total(self) -> int:
        return self.data[3]

    def _message(self, row: Row) -> MsMessage:
        repo, commit = self.data[1][row[0]]
        rule = self.data[2][row[8]] if row[8] >= 0 else None
        return MsMessage(
            repo=repo,
            commit=commit,
            path=row[1],
            line=row[2],
            format=row[3],
            exception=row[4],
            call=row[5],
            rule=rule[0] if rule else "",
            causes=rule[2] if rule else (),
            reason=rule[3] if rule else "",
        )

    @property
    def messages(self) -> tuple[MsMessage, ...]:
        return tuple(self._message(r) for r in self.rows)

    def source(self, source_id: str) -> tuple[str, str] | None:
        """(title, url) of the row a derived signature names as its source."""
        if not source_id.startswith(SOURCE_PREFIX):
            return None
        repo, _, at = source_id[len(SOURCE_PREFIX) :].partition(":")
        path, _, line = at.rpartition("#L")
        for r in self.rows:
            if r[1] == path and str(r[2]) == line and self.data[1][r[0]][0] == repo:
                m = self._message(r)
                return m.source_title, m.url
        return None

    def match(self, files: Iterable[str], text: str) -> list[MsMessage]:
        """The rows found in ``text``, a message MindSpore logged or raised in one of ``files``
        (file names: the log line's, or the C++ call stack's): those of these files first; when
        none of them is found (MindSpore moves its code between files from release to release:
        ``runtime/device/ascend/ascend_memory_manager.cc`` then ``plugin/device/ascend/hal/device/
        ascend_memory_adapter.cc``), or no file is named, any row's."""
        names = {f.rsplit("/", 1)[-1] for f in files}
        own = [r for r in self.rows if r[1].rsplit("/", 1)[-1] in names and _found(r, text)]
        return [self._message(r) for r in own or [r for r in self.rows if _found(r, text)]]


# ------------------------------------------------------------------------------ extraction
@dataclass(frozen=True)
class Call:
    """An ``MS_LOG``/``MS_EXCEPTION`` stream of a source file: line, call, message, exception type."""

    path: str
    line: int
    call: str
    format: str
    exception: str | None


def _head() -> re.Pattern[str]:
    return re.compile(
        r"\bMS_LOG\s*\(\s*(" + "|".join(LEVELS) + r")\s*\)|\bMS_EXCEPTION\s*\(\s*([A-Z][A-Za-z0-9_]*)\s*\)"
    )


def _statement(text: str, i: int) -> tuple[list[str], int]:
    """The ``<<`` operands of the stream statement starting at ``i`` (up to its ``;``), and the end."""
    from cannenv.explain.logsource import call_end, format_at

    pieces: list[str] = []
    cur = i
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            _, i = format_at(text, i)
            continue
        if ch == "'":
            end = text.find("'", i + 2 if text.startswith("'\\", i) else i + 1)
            i = n if end < 0 else end + 1
            continue
        if ch in "([{":
            i = call_end(text, i + 1) if ch == "(" else i + 1
            continue
        if ch == ";" or ch == "}":
            break
        if text.startswith("<<", i):
            pieces.append(text[cur:i])
            cur = i + 2
            i += 2
            continue
        i += 1
    pieces.append(text[cur:i])
    return pieces, i


def _message(pieces: Sequence[str]) -> str | None:
    """The message of a stream's operands: string literals kept (a ``%`` doubled, so a literal is
    never read as a hole), any other operand a hole; None without a literal."""
    from cannenv.explain.logsource import format_at

    out: list[str] = []
    any_literal = False
    for p in pieces:
        s = p.strip()
        if not s:
            continue
        if s.startswith('"'):
            fmt, end = format_at(s, 0)
            if fmt is not None and not s[end:].strip():
                fmt = fmt.replace("%s", "\0").replace("%", "%%").replace("\0", HOLE)
                for mark in MARKS:  # a section heading MindSpore prints on lines of their own
                    fmt = fmt.replace(mark, HOLE)
                out.append(fmt)
                any_literal = True
                continue
        if not out or out[-1] != HOLE:
            out.append(HOLE)
    if not any_literal:
        return None
    return " ".join("".join(out).split())


def extract(text: str, path: str) -> list[Call]:
    """Every ``MS_LOG(EXCEPTION|ERROR|CRITICAL) << …`` and ``MS_EXCEPTION(Type) << …`` of one file
    with a literal in its message (comments and macro bodies left out)."""
    found: list[Call] = []
    for m in _head().finditer(text):
        start = m.start()
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].lstrip().startswith(("//", "*", "/*", "#")):
            continue
        line_end = text.find("\n", start)
        if text[start : len(text) if line_end < 0 else line_end].rstrip().endswith("\\"):
            continue
        j = m.end()
        while j < len(text) and text[j].isspace():
            j += 1
        if not text.startswith("<<", j):
            continue
        pieces, _ = _statement(text, j + 2)
        fmt = _message(pieces)
        if fmt is None:
            continue
        level, etype = m.group(1), m.group(2)
        call = f"MS_LOG_{level}" if level else "MS_EXCEPTION"
        found.append(Call(path, text.count("\n", 0, start) + 1, call, fmt, etype))
    return found


def import_tree(tree: Path) -> list[Call]:
    """Every call of the imported parts of the tree (:data:`PREFIXES`; tests and stubs left out)."""
    from cannenv.explain.rtge import walk

    out: list[Call] = []
    for rel, text in walk(tree):
        if rel.startswith(PREFIXES):
            out += extract(text, rel)
    return out


def rows(repo_key: str, calls: Iterable[Call]) -> list[dict[str, Any]]:
    """Table rows of the calls whose message can be told apart in a log (:func:`logsource.identities`)."""
    from cannenv.explain.logsource import identities

    calls = sorted(calls, key=lambda c: (c.path, c.line))
    ids = identities((c.format, c.path) for c in calls)
    out: list[dict[str, Any]] = []
    for c in calls:
        if ids[c.format] == ((), ()):
            continue
        row: dict[str, Any] = {"repo": repo_key, "path": c.path, "line": c.line, "call": c.call}
        if c.exception:
            row["exception"] = c.exception
        row["format"] = c.format
        out.append(row)
    return out


# ------------------------------------------------------------------------------ the table
def build(
    raw_rules: Sequence[Any], raw_repos: Mapping[str, Any], raw_rows: Sequence[Any], *, keep_all: bool = False
) -> MsMessages:
    """The engine's table (:func:`rtge.build`'s rule: the first rule covering a row decides; only
    the rows a rule gives causes, every row with ``keep_all``)."""
    from cannenv.explain.rtge import build as build_rows

    return MsMessages(build_rows(raw_rules, raw_repos, raw_rows, keep_all=keep_all).data)


def diff(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """What a refresh changes (rows the table lacks, whose exception type changed, gone; a line that
    only moved is not a change)."""
    from cannenv.explain.rtge import diff as rtge_diff

    def as_code(rs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        return [{**r, "code": r.get("exception")} for r in rs]

    return rtge_diff(as_code(old), as_code(new))


MAX_TABLE_BYTES = 4 << 20


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "mindspore_messages.yaml"


def load(path: str | Path, *, keep_all: bool = False) -> MsMessages:
    """The table, read bounded and validated (its rows with a cause; every row with ``keep_all``)."""
    from cannenv.explain.models import MsMessagesFile
    from cannenv.explain.rowtable import load_validated

    model = load_validated(
        path,
        MsMessagesFile,
        what="MindSpore message table",
        hint="see docs/explain.md (Knowledge tables: MindSpore's own Ascend-side messages)",
        max_bytes=MAX_TABLE_BYTES,
    )
    return build(model.rules, model.repos, model.rows, keep_all=keep_all)


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import MsMessagesFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(
        MsMessagesFile, "cannenv explain: MindSpore's Ascend-side error messages from its source"
    )


def main(argv: list[str] | None = None) -> int:
    """``--schema`` prints the table's JSON Schema; ``--import TREE REPO_KEY [--write]`` prints the
    refresh diff of MindSpore's tree and with ``--write`` replaces that repository's rows
    (:func:`cannenv.explain.rowtable.importer_main`)."""
    import sys

    from cannenv.explain.rowtable import importer_main

    return importer_main(
        sys.argv[1:] if argv is None else argv,
        module="msascend",
        table=shipped_path(),
        schema=json_schema,
        read=lambda tree, key, _extra: rows(key, import_tree(tree)),
        diff=diff,
        tree_hint="git --git-dir=MIRROR archive COMMIT mindspore/ccsrc | tar -x -C TREE",
    )


if __name__ == "__main__":
    raise SystemExit(main())
