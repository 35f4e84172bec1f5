"""HCCL's own error-log messages, imported from its source (``matrices/explain/hccl_messages.yaml``).

HCCL is open source (hicann/hcomm: the communicator, rank table, sockets, transports; hicann/hccl:
the collective operators), so the messages it can log are known in full: every format string of
its error- and warning-level macros (:data:`LOG_CALLS`), with the file and line it is in, the
``HcclResult`` the call site returns where the code shows it, and the EI code an
``RPT_INPUT_ERR``/``RPT_ENV_ERR`` call reports just before it.

A log line ``[ERROR] HCCL(pid,name):time [file.cc:line] …message…`` names the file; a row matches
it when one of the row's *literals* (the distinctive fixed parts of its format string: split at
the conversions ``%d``/``%s``/``%llu``…, at least :data:`MIN_LITERAL` characters, not shared by
many messages) is in the message; a message with no such literal matches when all its fixed
parts (:data:`MIN_PART` characters or more, :data:`MIN_LITERAL` together) are in the line in order
(``super_device_id[%s] is invalid`` after ``errNo[0x%016llx]``). Only the rows of the log's file
are tried when the table has that file; every row when it has not (a file renamed or gone between
releases).

The cause a row points to comes from the table's reviewed ``modules`` mapping (a path pattern,
optionally narrowed by a word of the message → causes, each with its reason), never from the row:
a row whose module has no clear cause names HCCL's module and points to nothing.

``python -m cannenv.explain.logsource --import TREE REPO COMMIT [PREFIX …]`` reads a source tree
and prints the refresh diff against the shipped table (rows the table lacks, rows whose message
changed, rows gone); ``--write`` writes the new table (docs/explain.md, Knowledge tables).
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from cannenv import linre

MIN_LITERAL = 20
"""The shortest fixed part of a format string that can identify its message."""
MAX_SHARED = 3
"""A literal found in the messages of more source files than this is generic (``] executor
kernel run failed``), not a message's identity."""
MAX_LITERALS = 3
"""Literals kept per message (the longest)."""
MIN_PART = 3
"""The shortest fixed part kept when a message is matched by all its parts."""
LOG_CALLS = ("HCCL_ERROR", "HCCL_WARNING", "HCCL_RUN_WARNING")
"""The logging macros whose format strings are imported: every one of HCCL's ``log.h`` that writes at
the error or warning level (``HCCL_ERROR`` → ``HCCL_ERROR_LOG_PRINT``, DLOG_ERROR, or DLOG_WARN with
``ErrToWarn:`` under IsErrorToWarn; ``HCCL_WARNING`` and ``HCCL_RUN_WARNING`` → DLOG_WARN, the latter
to the run log too). ``HCCL_INFO``/``HCCL_DEBUG``/``HCCL_RUN_INFO``/``HCCL_USER_CRITICAL_LOG`` write at
the info or debug level."""
ERROR_CALL = "HCCL_ERROR"
"""The macro a row names by leaving ``macro`` out (most rows)."""
SOURCE_SUFFIXES = (".cc", ".cpp", ".c", ".h", ".hpp")


# The importer's patterns, compiled on first use (explain loads this module for the engine values
# below; it never reads a source tree).
@cache
def _conversion() -> re.Pattern[str]:
    """A printf conversion (flags, width, precision, length, type), and the <inttypes.h> macros."""
    return re.compile(
        r"%[-+ #0]*(?:\*|[1-9][0-9]*)?(?:\.(?:\*|[0-9]+))?(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfgGcspn%]"
    )


@cache
def _report() -> linre.LinearPattern:
    """An error-code report before a log call (source text is hostile input: the linear engine)."""
    return linre.compile(r"\bRPT_(?:INPUT|ENV|CALL)_ERR\s*\([^;]*?\"(E[A-Z][0-9]{4})\"", what="RPT_*_ERR")


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class Module:
    """A reviewed mapping: source paths (fnmatch patterns, the repository's path) → causes."""

    name: str
    paths: tuple[str, ...]
    causes: tuple[str, ...]
    reason: str
    words: tuple[str, ...] = ()
    """Only messages whose format string contains one of these words (any case)."""

    def covers_path(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, p) for p in self.paths)

    def covers_words(self, fmt: str) -> bool:
        low = fmt.lower()
        return not self.words or any(w.lower() in low for w in self.words)

    def covers(self, path: str, fmt: str) -> bool:
        return self.covers_path(path) and self.covers_words(fmt)


@dataclass(frozen=True)
class Message:
    """One error-log call of the vendor's source."""

    repo: str
    commit: str
    path: str
    line: int
    format: str
    literals: tuple[str, ...]
    """Any one of them in a line identifies the message."""
    parts: tuple[str, ...]
    """All of them in a line, in order, identify the message (when it has no literal)."""
    result: str | None
    code: str | None
    macro: str
    """The logging macro (``HCCL_ERROR``, ``HCCL_WARNING``, ``HCCL_RUN_WARNING``)."""
    module: str
    """The mapping that covers the row ("" when none does)."""
    causes: tuple[str, ...]
    reason: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{self.line}"

    @property
    def source_id(self) -> str:
        return f"src:{self.repo}:{self.path}#L{self.line}"

    @property
    def source_title(self) -> str:
        return f'{self.repo} {self.path}:{self.line} (at {self.commit[:12]}): {self.macro}("{self.format}")'

    @property
    def file(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def found_in(self, text: str) -> bool:
        if self.literals:
            return any(x in text for x in self.literals)
        at = 0
        for p in self.parts:
            at = text.find(p, at)
            if at < 0:
                return False
            at += len(p)
        return bool(self.parts)


@dataclass(frozen=True)
class LogMessages:
    """The engine's table: the rows that point to a cause (the only ones that make a signature;
    kept small, it is part of the cached signature table) and every file the whole table has."""

    messages: Sequence[Message]
    files: frozenset[str]
    """The file names of every row (with a cause or not)."""
    total: int
    """Rows of the whole table."""
    by_file: Mapping[str, tuple[Message, ...]] = field(default_factory=dict)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (the validated-table cache) with its rows as blobs unpickled on first use
        (:mod:`cannenv.explain.lazy`): only a log with an HCCL line reads them."""
        from cannenv.explain.lazy import rows, table

        return (_log_messages, (rows(self.messages), self.files, self.total, table(self.by_file)))

    def source(self, source_id: str) -> tuple[str, str] | None:
        """(title, url) of the row a derived signature names as its source."""
        if not source_id.startswith("src:"):
            return None
        _, _, rest = source_id.partition(":")
        repo, _, at = rest.partition(":")
        path, _, line = at.rpartition("#L")
        file = path.rsplit("/", 1)[-1]
        for m in self.by_file.get(file, ()):
            if m.repo == repo and m.path == path and str(m.line) == line:
                return m.source_title, m.url
        return None

    def match(self, file: str | None, text: str) -> list[Message]:
        """The rows whose literal is in ``text``: those of the log's ``file`` when the table has
        that file (a line of a known file that none of its rows matches is a message this
        release does not have, or a macro's: not guessed from other files); any row when the
        file is unknown (renamed or moved between releases) or not given."""
        if file and file in self.files:
            return [m for m in self.by_file.get(file, ()) if m.found_in(text)]
        return [m for m in self.messages if m.found_in(text)]


def _log_messages(
    messages: Sequence[Message], files: frozenset[str], total: int, by_file: Mapping[str, tuple[Message, ...]]
) -> LogMessages:
    return LogMessages(messages, files, total, by_file)


# ------------------------------------------------------------------------------ extraction
@dataclass(frozen=True)
class Call:
    """A logging call found in a source file: its line, format string and what the code around
    it shows (the HcclResult returned, the EI code reported just before)."""

    path: str
    line: int
    format: str
    result: str | None
    code: str | None
    macro: str = ERROR_CALL


def _string_at(text: str, i: int) -> tuple[str, int]:
    """The C string literal starting at ``text[i] == '"'``: its value (escapes kept as written,
    except \\" and \\\\) and the index after it."""
    out: list[str] = []
    j = i + 1
    n = len(text)
    while j < n:
        ch = text[j]
        if ch == "\\" and j + 1 < n:
            nxt = text[j + 1]
            out.append({'"': '"', "\\": "\\", "n": " ", "t": " "}.get(nxt, "\\" + nxt))
            j += 2
            continue
        if ch == '"':
            return "".join(out), j + 1
        if ch == "\n":
            break
        out.append(ch)
        j += 1
    return "".join(out), j


def _skip_space_comments(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            break
    return i


def format_at(text: str, i: int) -> tuple[str | None, int]:
    """The format argument starting at ``i`` (after the call's parenthesis): adjacent string
    literals joined, a macro between them (``PRIu64``) standing for a conversion; None when the
    first argument is not a string literal (a variable, a macro parameter)."""
    parts: list[str] = []
    i = _skip_space_comments(text, i)
    while i < len(text):
        if text[i] == '"':
            s, i = _string_at(text, i)
            parts.append(s)
        elif parts and (m := re.compile(_IDENT).match(text, i)) is not None:
            parts.append("%s")  # PRIu64, a LOG_KEYWORDS macro: a hole in the message
            i = m.end()
        else:
            break
        i = _skip_space_comments(text, i)
    return ("".join(parts) if parts else None), i


def call_end(text: str, i: int) -> int:
    """The index after the parenthesis that closes the call whose arguments start at ``i``."""
    depth = 1
    n = len(text)
    while i < n and depth:
        ch = text[i]
        if ch == '"':
            _, i = _string_at(text, i)
            continue
        if ch == "'":
            end = text.find("'", i + 2 if text.startswith("'\\", i) else i + 1)
            i = n if end < 0 else end + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        i += 1
    return i


def split_args(args: str) -> list[str]:
    """The top-level comma-separated arguments of a call's argument text."""
    out: list[str] = []
    depth = 0
    cur = 0
    i = 0
    n = len(args)
    while i < n:
        ch = args[i]
        if ch == '"':
            _, i = _string_at(args, i)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(args[cur:i])
            cur = i + 1
        i += 1
    out.append(args[cur:])
    return out


def _built_string(expr: str) -> str | None:
    """A message built by concatenation (``"set ifname to [" + names + "] by …"``) as a format
    string: its literals, each other operand a ``%s``; None without a literal."""
    parts: list[str] = []
    i = 0
    gap = False
    while i < len(expr):
        if expr[i] == '"':
            lit, i = _string_at(expr, i)
            if (gap and parts) or gap:
                parts.append("%s")
            parts.append(lit.replace("%", "%%"))
            gap = False
            continue
        if not (expr[i].isspace() or expr[i] == "+"):
            gap = True
        i += 1
    if gap:
        parts.append("%s")
    return "".join(parts) if any(p != "%s" for p in parts) else None


def _expand(text: str, start: int, fmt: str, rest: str) -> str:
    """The format with each ``%s`` whose argument is a local string built just before the call
    (``errormessage.c_str()``) replaced by that string's literals."""
    convs = [m for m in _conversion().finditer(fmt) if m.group() != "%%"]
    args = split_args(rest)
    if len(args) < 2:
        return fmt
    before = text[max(0, start - 3000) : start]
    out = fmt
    for idx in range(len(args) - 1, 0, -1):  # right to left: offsets of earlier holes stay valid
        m = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\.\s*c_str\s*\(\s*\)\s*", args[idx])
        if m is None or idx - 1 >= len(convs) or convs[idx - 1].group() != "%s":
            continue
        assigned = None
        for a in re.finditer(rf"\b{re.escape(m.group(1))}\s*=([^;]*);", before):
            assigned = a.group(1).strip()  # the last assignment before the call
        built = _built_string(assigned) if assigned is not None else None
        if built is not None:
            hole = convs[idx - 1]
            out = out[: hole.start()] + built + out[hole.end() :]
    return out


def _result_after(text: str, start: int, end: int, args: str) -> str | None:
    """The HcclResult the call site returns: ``CHK_PRT_RET(cond, HCCL_ERROR(…), HCCL_E_X)``'s
    last argument, ``return HCCL_E_X;`` as the next statement, else the code the format's
    ``HCOM_ERROR_CODE(HCCL_E_X)`` argument names."""
    before = text[max(0, start - 400) : start]
    wrap = before.rfind("CHK_PRT_RET(")
    if wrap >= 0 and ";" not in before[wrap:]:
        m = re.match(r"\s*(?:\)\s*)?(?:;\s*)?,\s*(HCCL_E_[A-Z_]+|HCCL_SUCCESS)\b", text[end : end + 200])
        if m:
            return m.group(1)
    m = re.match(r"\s*;\s*(?:\}\s*)?return\s+(HCCL_E_[A-Z_]+)\s*;", text[end : end + 200])
    if m:
        return m.group(1)
    m = re.search(r"(?:HCOM|HCCL)_ERROR_CODE\s*\(\s*(HCCL_E_[A-Z_]+)\s*\)", args)
    return m.group(1) if m else None


def extract(text: str, path: str) -> list[Call]:
    """Every error-log call of one source file, with a string-literal format."""
    calls: list[Call] = []
    for name in LOG_CALLS:
        for m in re.finditer(rf"\b{re.escape(name)}\s*\(", text):
            start = m.start()
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", start)
            if text[line_start:start].lstrip().startswith(("//", "*", "#define")) or text[
                start : len(text) if line_end < 0 else line_end
            ].rstrip().endswith("\\"):
                continue  # a comment, or a macro's body: logged under its caller's file
            fmt, after = format_at(text, m.end())
            if fmt is None:
                continue
            end = call_end(text, m.end())
            if "%s" in fmt:
                fmt = _expand(text, start, fmt, text[after : end - 1])
            result = _result_after(text, start, end, text[m.end() : end])
            report = None
            for r in _report().finditer(text[max(0, start - 600) : start]):
                report = r.group(1)  # the nearest report before the call
            line = text.count("\n", 0, start) + 1
            calls.append(Call(path, line, " ".join(fmt.split()), result, report, name))
    calls.sort(key=lambda c: c.line)
    return calls


def fragments(fmt: str) -> list[str]:
    """The fixed parts of a format string, split at each conversion, stripped."""
    return [p.strip() for p in _conversion().split(fmt) if p.strip()]


def _candidates(fmt: str) -> list[str]:
    return [p for p in fragments(fmt) if len(p) >= MIN_LITERAL and sum(ch.isalpha() for ch in p) >= 12]


def literals(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """The distinctive literals of each distinct format string of (format, path) pairs: long
    enough, with words in it, and found in the messages of at most :data:`MAX_SHARED` source
    files; the longest first."""
    files: dict[str, set[str]] = {}
    distinct: set[str] = set()
    for fmt, path in pairs:
        distinct.add(fmt)
        for p in _candidates(fmt):
            files.setdefault(p, set()).add(path.rsplit("/", 1)[-1])
    shared = Counter({p: len(v) for p, v in files.items()})
    out: dict[str, tuple[str, ...]] = {}
    for f in sorted(distinct):
        keep = sorted({p for p in _candidates(f) if shared[p] <= MAX_SHARED}, key=lambda p: (-len(p), p))
        out[f] = tuple(keep[:MAX_LITERALS])
    return out


def _part_candidates(fmt: str) -> tuple[str, ...]:
    parts = tuple(p for p in fragments(fmt) if len(p) >= MIN_PART)
    text = "".join(parts)
    if len(text) < MIN_LITERAL or sum(ch.isalpha() for ch in text) < 12:
        return ()
    return parts


def identities(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """(literals, parts) of each distinct format string: its distinctive literals
    (:func:`literals`); for a format without one, its fixed parts when they are long enough
    together and found as a whole in the messages of at most :data:`MAX_SHARED` files."""
    pairs = list(pairs)
    lits = literals(pairs)
    files: dict[tuple[str, ...], set[str]] = {}
    for fmt, path in pairs:
        if not lits[fmt]:
            key = _part_candidates(fmt)
            if key:
                files.setdefault(key, set()).add(path.rsplit("/", 1)[-1])
    out: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for fmt in lits:
        if lits[fmt]:
            out[fmt] = (lits[fmt], ())
            continue
        key = _part_candidates(fmt)
        out[fmt] = ((), key if key and len(files[key]) <= MAX_SHARED else ())
    return out


def walk(tree: Path, prefixes: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(path relative to ``tree``, text) of every source file under ``prefixes`` (all when none),
    in path order."""
    for p in sorted(tree.rglob("*")):
        if not p.is_file() or p.suffix not in SOURCE_SUFFIXES:
            continue
        rel = p.relative_to(tree).as_posix()
        if prefixes and not any(rel.startswith(x) for x in prefixes):
            continue
        yield rel, p.read_text(encoding="utf-8", errors="replace")


def import_tree(tree: Path, prefixes: Sequence[str] = ()) -> list[Call]:
    """Every error-log call of the source tree's files under ``prefixes``."""
    calls: list[Call] = []
    for rel, text in walk(tree, prefixes):
        calls += extract(text, rel)
    return calls


def rows(calls: Iterable[Call]) -> list[dict[str, Any]]:
    """Table rows (path, line, format, result, code) of the calls whose format string can be told
    apart in a log (a distinctive literal, else distinctive parts); the others never could."""
    calls = list(calls)
    ids = identities((c.format, c.path) for c in calls)
    out: list[dict[str, Any]] = []
    for c in calls:
        if ids[c.format] == ((), ()):
            continue
        row: dict[str, Any] = {"path": c.path, "line": c.line, "format": c.format}
        if c.result:
            row["result"] = c.result
        if c.code:
            row["code"] = c.code
        if c.macro != ERROR_CALL:
            row["macro"] = c.macro
        out.append(row)
    return out


# ------------------------------------------------------------------------------ the table
def module_of(modules: Sequence[Module], path: str, fmt: str) -> Module | None:
    """The first mapping that covers the row (the table's order: the narrow ones first)."""
    return next((m for m in modules if m.covers(path, fmt)), None)


def build(
    raw_modules: Sequence[Any],
    raw_repos: Mapping[str, Any],
    raw_rows: Sequence[Any],
    *,
    keep_all: bool = False,
) -> LogMessages:
    """The engine's table from the validated model's parts: the rows with a cause (every row
    with ``keep_all``)."""
    modules = tuple(Module(m.name, m.paths, m.causes, m.reason, m.words) for m in raw_modules)
    ids = identities((r.format, r.path) for r in raw_rows)
    by_path: dict[str, tuple[Module, ...]] = {}
    msgs: list[Message] = []
    for r in raw_rows:
        repo = raw_repos[r.repo]
        lits, parts = ids[r.format]
        if not lits and not parts:
            continue
        cands = by_path.get(r.path)
        if cands is None:
            cands = by_path[r.path] = tuple(m for m in modules if m.covers_path(r.path))
        mod = next((m for m in cands if m.covers_words(r.format)), None)
        msgs.append(
            Message(
                repo=repo.repo,
                commit=repo.commit,
                path=r.path,
                line=r.line,
                format=r.format,
                literals=lits,
                parts=parts,
                result=r.result,
                code=r.code,
                macro=r.macro or ERROR_CALL,
                module=mod.name if mod else "",
                causes=mod.causes if mod else (),
                reason=mod.reason if mod else "",
            )
        )
    kept = [m for m in msgs if m.causes or keep_all]
    by_file: dict[str, list[Message]] = {}
    for m in kept:
        by_file.setdefault(m.file, []).append(m)
    return LogMessages(
        messages=tuple(kept),
        files=frozenset(m.file for m in msgs),
        total=len(msgs),
        by_file={k: tuple(v) for k, v in by_file.items()},
    )


def diff(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """What a refresh changes: rows the table lacks (a format string not in it for that file),
    rows whose result or EI code changed, and rows gone (by file and format string; a line that
    only moved is not a change)."""

    def key(r: Mapping[str, Any]) -> tuple[str, str, str]:
        return (str(r["path"]), str(r["format"]), str(r.get("macro") or ERROR_CALL))

    before = {key(r): r for r in old}
    after = {key(r): r for r in new}
    lacks = [dict(r) for k, r in after.items() if k not in before]
    gone = [dict(r) for k, r in before.items() if k not in after]
    changed = [
        {
            "path": k[0],
            "format": k[1],
            **({"macro": k[2]} if k[2] != ERROR_CALL else {}),
            "was": {x: before[k].get(x) for x in ("result", "code")},
            "now": {x: r.get(x) for x in ("result", "code")},
        }
        for k, r in after.items()
        if k in before
        and (before[k].get("result"), before[k].get("code")) != (r.get("result"), r.get("code"))
    ]
    return {"lacks": lacks, "changed": changed, "gone": gone}


# ------------------------------------------------------------------------------ loading
MAX_TABLE_BYTES = 8 << 20


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "hccl_messages.yaml"


def load(path: str | Path, *, keep_all: bool = False) -> LogMessages:
    """The table, read bounded and validated (its rows with a cause; every row with ``keep_all``)."""
    from cannenv.explain.models import LogMessagesFile
    from cannenv.explain.rowtable import load_validated

    model = load_validated(
        path,
        LogMessagesFile,
        what="HCCL message table",
        hint="see docs/explain.md (Knowledge tables: HCCL's own log messages)",
        max_bytes=MAX_TABLE_BYTES,
    )
    return build(model.modules, model.repos, model.rows, keep_all=keep_all)


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import LogMessagesFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(LogMessagesFile, "cannenv explain: HCCL's error-log messages from its source")


def write_rows(table: Path, repo_key: str, new_rows: Sequence[Mapping[str, Any]]) -> None:
    """Replace the rows of ``repo_key`` in the table file (header, repos and modules kept as
    written: they are reviewed by a person); atomic."""
    from cannenv.explain.rowtable import replace_rows

    replace_rows(table, repo_key, [{"repo": repo_key, **r} for r in new_rows])


def main(argv: list[str] | None = None) -> int:
    """``--schema`` prints the table's JSON Schema; ``--import TREE REPO_KEY [PREFIX …] [--write]``
    prints the refresh diff of a source tree (its files under PREFIX, ``src/`` by default) and with
    ``--write`` replaces that repository's rows (:func:`cannenv.explain.rowtable.importer_main`)."""
    import sys

    from cannenv.explain.rowtable import importer_main

    return importer_main(
        sys.argv[1:] if argv is None else argv,
        module="logsource",
        table=shipped_path(),
        schema=json_schema,
        read=lambda tree, key, extra: [
            {"repo": key, **r} for r in rows(import_tree(tree, tuple(extra) or ("src/",)))
        ],
        diff=diff,
        extra=" [PREFIX ...]",
        tree_hint="git --git-dir=MIRROR archive COMMIT src | tar -x -C TREE",
    )


if __name__ == "__main__":
    raise SystemExit(main())
