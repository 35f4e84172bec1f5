"""The CANN runtime's and graph engine's own error messages, imported from their source
(``matrices/explain/rtge_messages.yaml``).

The runtime (hicann/runtime: ``libruntime``, its device, stream, memory and kernel code) and the
graph engine (hicann/ge: graph build, model load and execution, the op-kernel stores) are open
source, so the error messages they can log are known in full: every
``RT_LOG(RT_LOG_ERROR, "…")``/``RT_LOG_INNER_MSG``/``RT_LOG_CALL_MSG``/``RT_LOG_OUTER_MSG`` of the
runtime, every ``GELOGE(code, "…")`` of GE, and the ``REPORT_INNER_ERROR``/``REPORT_CALL_ERROR``/
``REPORT_INNER_ERR_MSG`` reports of both (and the trees' own wrappers of them:
:func:`wrappers`), with the file and line at the commit and the error code
argument where there is one (``GELOGE``'s status, the reported ``E19999``/``EE1001`` …); and the
runtime's error-code reports (``RT_LOG_OUTER_MSG_IMPL(code, value, …)`` and the macros that make
one: :func:`outer_macros`), each the code's template of ``error_code_meta.h`` with the call's values
in it (:func:`extract_outer`).

They reach a log in three forms, each naming the source file:

* the runtime's plog line ``[ERROR] RUNTIME(pid,name):time [file.cc:line]tid Func:message``
  (``RecordErrorLog`` of runtime ``src/runtime/core/src/common/rt_log.cc``);
* GE's plog line ``[ERROR] GE(pid,name):time [file.cc:line]tid Func: ErrorNo: …message``;
* the error manager's report printed to stderr by the framework (``E19999: Inner Error!`` then
  ``message[FUNC:Func][FILE:file.cc][LINE:n]``: runtime ``src/dfx/error_manager/error_manager.cc``).

A row is told apart in a line by its distinctive literals, else all its fixed parts in order
(:func:`cannenv.explain.logsource.identities`, the same rule as HCCL's messages); only the rows of
the file the line names are tried when the table has that file.

The cause a row points to comes only from the table's reviewed ``rules`` (words of the message,
optionally narrowed by path patterns → causes, each with the code's own wording as its reason; the
first rule that covers a row decides), never from the row. A row that reports a public error code
(``E30006``, ``EE1002`` …: anything but the inner ``…9999``/``…8888`` codes; a constant the
call names is resolved from the trees' own definitions) and no rule covers is that code's
occurrence, which the error-code reference decides (a rule covering it supersedes the code's row).
Any other message no rule covers points to no cause and is not looked for.

``python -m cannenv.explain.rtge --import TREE REPO_KEY [--write]`` reads a source tree and prints
the refresh diff against the shipped table (docs/explain.md, "The runtime's and GE's own messages").
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cannenv.explain.logsource import (
    SOURCE_SUFFIXES,
    _built_string,
    call_end,
    format_at,
    fragments,
    identities,
    split_args,
)

CALLS: Mapping[str, tuple[int, int | None, int | None]] = {
    # macro: (index of the format argument, of the code argument, of the level argument, which
    # must be RT_LOG_ERROR)
    "RT_LOG": (1, None, 0),
    "RT_LOG_INNER_MSG": (1, None, 0),
    "RT_LOG_CALL_MSG": (1, None, None),
    "RT_LOG_CALL_MSG_NO_RT_LOG": (1, None, None),
    "RT_LOG_OUTER_MSG": (1, 0, None),
    "RT_LOG_ERROR": (0, None, None),
    "REPORT_INNER_ERROR": (1, 0, None),
    "REPORT_CALL_ERROR": (1, 0, None),
    "REPORT_INNER_ERR_MSG": (1, 0, None),
    "GELOGE": (1, 0, None),
}
"""The error-logging and error-reporting macros whose format strings are imported; the tree's own
macros that pass a ``format``/``fmt`` parameter on to one of them (``ERROR_RETURN_MSG_INNER(ERRCODE,
format, …)``, ``COND_RETURN_ERROR_MSG_CALL(…)``) are found in the tree and added (:func:`wrappers`)."""
ERROR_LEVEL = "RT_LOG_ERROR"
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Z][A-Z0-9_]*)\(([^)\n]*)\)", re.M)
NOT_ERROR = ("WARN", "INFO", "DEBUG", "EVENT", "NORMAL")
"""A wrapper named for another level is not an error log, whatever it calls."""
_PASTED = re.compile(r"RT_LOG_##[A-Z]+##_MSG\s*\(")
_SPLIT_CONVERSION = re.compile(r"%[-+ #0]*(?:[1-9][0-9]*)?(?:\.[0-9]+)?%s")
_CODE = re.compile(r"[A-Z][A-Z0-9_]{1,63}")
_CODE_CONSTANT = re.compile(
    r"(?:\bconst(?:expr)?\b[^=;\n]{0,80}?\b([A-Z][A-Z0-9_]+)\s*=|#[ \t]*define[ \t]+([A-Z][A-Z0-9_]+))"
    r"[ \t]*\"(E[0-9A-Z]{2}[0-9]{3})\""
)
_PUBLIC_CODE = re.compile(r"E[0-9A-Z]{2}[0-9]{3}")
SKIP_DIRS = ("tests/", "test/", "ut/", "st/", "stub/", "stubs/", "examples/", "example/", "docs/", "sample/")
"""Folders whose files are not the product's code (unit tests, stubs, samples)."""


INNER_SUFFIXES = ("9999", "8888")
"""The inner-error codes' endings: ``E19999``/``EE9999``/``EL9999`` (the runtime's RT_INNER_ERROR /
RT_DRV_INNER_ERROR, base_info.hpp) and ``E18888`` (metadef's REPORT_INNER_ERR_MSG checks)."""


def told_by(path: str, code: str | None) -> str:
    """What a message must be told apart from (:func:`logsource.identities` counts the "files" a
    literal is found in): a public error code's report is that code's occurrence wherever it is
    logged from (``Alloc Stream resource failed. Reason: Too many streams are created.
    ErrorCode=EE1023.`` in five files is one message of EE1023), any other message its file."""
    return code if code and public_code(code) else path


def public_code(code: str) -> bool:
    """Whether a row's code is a reported public error code (``EE1001``) the error-code reference
    decides; the inner ones decide nothing (:data:`INNER_SUFFIXES`)."""
    return _PUBLIC_CODE.fullmatch(code) is not None and not code.endswith(INNER_SUFFIXES)


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class Rule:
    """A reviewed mapping: words of a message (any case), optionally only under some paths → causes."""

    name: str
    words: tuple[str, ...]
    causes: tuple[str, ...]
    reason: str
    paths: tuple[str, ...] = ()

    def covers(self, path: str, fmt: str) -> bool:
        low = fmt.lower()
        return any(w.lower() in low for w in self.words) and (
            not self.paths or any(fnmatch.fnmatchcase(path, p) for p in self.paths)
        )


@dataclass(frozen=True)
class RtgeMessage:
    """One error-log or report call of the runtime's or GE's source."""

    repo: str
    commit: str
    path: str
    line: int
    format: str
    code: str
    call: str
    rule: str
    causes: tuple[str, ...]
    reason: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{self.line}"

    @property
    def source_id(self) -> str:
        return f"rtge-src:{self.repo}:{self.path}#L{self.line}"

    @property
    def source_title(self) -> str:
        code = f", reporting {self.code}" if self.code else ""
        return (
            f'{self.repo} {self.path}:{self.line} (at {self.commit[:12]}): {self.call}("{self.format}"){code}'
        )

    @property
    def file(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def component(self) -> str:
        return "GE" if self.repo.endswith("/ge") else "runtime"


Row = tuple[int, str, int, str, str, str, tuple[str, ...], tuple[str, ...], int]
"""A row as the engine keeps it: (repository index, path, line, format, code, call, literals,
parts, rule index)."""
RuleData = tuple[str, tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]
"""A rule as the engine keeps it: (name, words, causes, reason, paths)."""
RtgeData = tuple[tuple[Row, ...], tuple[tuple[str, str], ...], tuple[RuleData, ...], int, frozenset[str]]
"""The table as the cached knowledge holds it: (rows with a cause, (owner/name, commit) by index,
rules, rows of the whole table, the file names of every row). Plain tuples: unpickling them
neither imports this module nor builds an object per row, so a log without a RUNTIME/GE line or an
error-manager report pays nothing."""


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


def specificity(fmt: str, text: str) -> int:
    """How much of a format's fixed text ``text`` holds, its parts searched in order (each from
    where the last one ended): the row that pins a line down most is its message."""
    at = 0
    found = 0
    for p in fragments(fmt):
        i = text.find(p, at)
        if i >= 0:
            found += len(p)
            at = i + len(p)
    return found


@dataclass(frozen=True)
class RtgeMessages:
    """The engine's table over :data:`RtgeData`."""

    data: RtgeData

    @property
    def rows(self) -> tuple[Row, ...]:
        return self.data[0]

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(Rule(*r) for r in self.data[2])

    @property
    def total(self) -> int:
        """Rows of the whole table."""
        return self.data[3]

    def _message(self, row: Row) -> RtgeMessage:
        repo, commit = self.data[1][row[0]]
        rule = Rule(*self.data[2][row[8]]) if row[8] >= 0 else None
        return RtgeMessage(
            repo=repo,
            commit=commit,
            path=row[1],
            line=row[2],
            format=row[3],
            code=row[4],
            call=row[5],
            rule=rule.name if rule else "",
            causes=rule.causes if rule else (),
            reason=rule.reason if rule else "",
        )

    @property
    def messages(self) -> tuple[RtgeMessage, ...]:
        return tuple(self._message(r) for r in self.rows)

    def source(self, source_id: str) -> tuple[str, str] | None:
        """(title, url) of the row a derived signature names as its source."""
        if not source_id.startswith("rtge-src:"):
            return None
        repo, _, at = source_id[len("rtge-src:") :].partition(":")
        path, _, line = at.rpartition("#L")
        for r in self.rows:
            if r[1] == path and str(r[2]) == line and self.data[1][r[0]][0] == repo:
                m = self._message(r)
                return m.source_title, m.url
        return None

    def match(self, file: str | None, text: str) -> list[RtgeMessage]:
        """The rows found in ``text``: those of the log's ``file`` when the table has that file (a
        line of a known file that none of its rows matches is a message this release lacks, or
        one no rule covers: not guessed from other files); any row a rule covers when the file is
        unknown."""
        rows = self.rows
        if file and file in self.data[4]:
            rows = tuple(r for r in rows if r[1].endswith("/" + file) or r[1] == file)
        else:  # a public code's report is looked for in its own file only: elsewhere the line prints its code
            rows = tuple(r for r in rows if r[8] >= 0)
        return [self._message(r) for r in rows if _found(r, text)]

    def best(self, file: str | None, text: str) -> list[RtgeMessage]:
        """The rows :meth:`match` finds whose fixed text the line holds most of (one line is one
        message: ``Checking stream flags failed. Parameter flags value %s is not supported.
        Reason: …`` is the call site whose reason the line also holds, not every row that begins
        alike); all of them on a tie."""
        found = self.match(file, text)
        if len(found) < 2:
            return found
        most = max(specificity(m.format, text) for m in found)
        return [m for m in found if specificity(m.format, text) == most]


# ------------------------------------------------------------------------------ extraction
@dataclass(frozen=True)
class Call:
    """An error-log or report call of a source file: its line, macro, format and code argument."""

    path: str
    line: int
    call: str
    format: str
    code: str | None


def _code_of(arg: str) -> str | None:
    """The code a call names: a string literal (``"E19999"``) or a constant (``ge::FAILED``,
    ``ErrorCode::EE1001`` → its last name); None for an expression or a variable."""
    a = " ".join(arg.split())
    if a.startswith('"') and a.endswith('"'):
        a = a[1:-1]
    a = a.rsplit("::", 1)[-1].strip("() ")
    return a if _CODE.fullmatch(a) else None


def _define_body(text: str, at: int) -> str:
    """A macro's body: its lines up to the first that does not end with a backslash."""
    end = at
    while True:
        nl = text.find("\n", end)
        if nl < 0:
            return text[at:]
        if not text[:nl].rstrip().endswith("\\"):
            return text[at:nl]
        end = nl + 1


def wrappers(
    texts: Iterable[str], known: Mapping[str, tuple[int, int | None, int | None]] = CALLS
) -> dict[str, tuple[int, int | None, int | None]]:
    """``known`` with the macros the sources define that pass a ``format``/``fmt`` parameter on to
    a known one (or to the runtime's pasted ``RT_LOG_##TYPE##_MSG``), found until none is added: the
    format at that parameter's place; a ``level``/``LOGTYPE`` parameter must be RT_LOG_ERROR."""
    defines: list[tuple[str, list[str], str]] = []
    for text in texts:
        for m in _DEFINE.finditer(text):
            params = [x.strip() for x in m.group(2).split(",")]
            if any(x.lower() in ("format", "fmt") for x in params):
                defines.append((m.group(1), params, _define_body(text, m.end())))
    out = dict(known)
    added = True
    while added:
        added = False
        pattern = re.compile(
            r"\b(" + "|".join(re.escape(x) for x in sorted(out, key=len, reverse=True)) + r")\s*\("
        )
        for name, params, body in defines:
            if name in out or any(w in name for w in NOT_ERROR):
                continue
            wrapped = _wrapped(body, params, out, pattern)
            if wrapped is not None:
                fmt = next(i for i, x in enumerate(params) if x.lower() in ("format", "fmt"))
                out[name] = (fmt, None, wrapped if wrapped >= 0 else None)
                added = True
    return out


def _wrapped(
    body: str,
    params: list[str],
    known: Mapping[str, tuple[int, int | None, int | None]],
    pattern: re.Pattern[str],
) -> int | None:
    """Whether a macro's body logs its format at the error level: None when not; else the index of
    its own level parameter the caller must pass RT_LOG_ERROR in, or -1 when none."""
    fmt_names = [x for x in params if x.lower() in ("format", "fmt")]
    calls: list[tuple[int, int | None, int]] = []
    for m in pattern.finditer(body):
        calls.append((m.end(), known[m.group(1)][2], known[m.group(1)][0]))
    # RT_LOG_##TYPE##_MSG: RT_LOG_INNER_MSG(level, …), RT_LOG_CALL_MSG(module, …) or
    # RT_LOG_OUTER_MSG(code, …): each logs at the error level (its first argument is no level)
    calls += [(m.end(), None, 1) for m in _PASTED.finditer(body)]
    for at, level_at, fmt_at in calls:
        args = [a.strip() for a in split_args(body[at : call_end(body, at) - 1])]
        if len(args) <= fmt_at or not any(re.search(rf"\b{re.escape(n)}\b", args[fmt_at]) for n in fmt_names):
            continue
        if level_at is None:
            return -1
        if len(args) > level_at:
            if args[level_at] == ERROR_LEVEL:
                return -1
            if args[level_at] in params:
                return params.index(args[level_at])
    return None


def constants(texts: Iterable[str]) -> dict[str, str]:
    """The error-code constants the sources define (``static constexpr const char_t*
    RT_TSD_DRV_HDC_SEND_FILE_FAILED_ERROR = "E30006";``, ``#define RT_INNER_ERROR "EE9999"``): name →
    code, so that a call naming the constant is known to report that code."""
    out: dict[str, str] = {}
    for text in texts:
        for m in _CODE_CONSTANT.finditer(text):
            out.setdefault(m.group(1) or m.group(2), m.group(3))
    return out


def extract(
    text: str,
    path: str,
    calls: Mapping[str, tuple[int, int | None, int | None]] = CALLS,
    codes: Mapping[str, str] | None = None,
) -> list[Call]:
    """Every error-log/report call of one file with a string-literal format (comments and the
    macros' own definitions left out)."""
    found: list[Call] = []
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(x) for x in sorted(calls, key=len, reverse=True)) + r")\s*\("
    )
    for m in pattern.finditer(text):
        start = m.start()
        if not _product_call(text, start):
            continue  # a comment, or inside a macro's body: its callers' calls are imported
        name = m.group(1)
        fmt_at, code_at, level_at = calls[name]
        end = call_end(text, m.end())
        args = split_args(text[m.end() : end - 1])
        if len(args) <= fmt_at:
            continue
        if level_at is not None and (len(args) <= level_at or args[level_at].strip() != ERROR_LEVEL):
            continue
        offset = m.end() + sum(len(a) + 1 for a in args[:fmt_at])
        fmt, _ = format_at(text, offset)
        if fmt is None:
            continue
        # "%" PRIu64 / "%#" PRIx64: the <inttypes.h> macro completes the conversion (format_at
        # stands a macro for "%s"), one conversion, not a literal "%"
        fmt = _SPLIT_CONVERSION.sub("%s", fmt)
        code = _code_of(args[code_at]) if code_at is not None else None
        if code is not None and codes:
            code = codes.get(code, code)
        if name == "RT_LOG_INNER_MSG" or name.endswith("_MSG_INNER"):
            code = "EE9999"  # RT_LOG_LEVEL_TO_ERR_MSG[RT_LOG_ERROR]: the runtime's inner error
        line = text.count("\n", 0, start) + 1
        found.append(Call(path, line, name, " ".join(fmt.split()), code))
    return found


# ------------------------------------------------------------------------------ the error-code calls
OUTER_IMPL = "RT_LOG_OUTER_MSG_IMPL"
"""The runtime's report of a public error code (``base.hpp``): ``RT_LOG_OUTER_MSG_IMPL(code,
value, …)`` logs the code's message template (``RUNTIME_ERROR_CODE_TABLE`` of
``error_code_meta.h``) with the values put in its ``%s`` in order (``ProcessErrorCodeImpl`` →
``PrintErrMsgToLog``, ``rt_log.cc``), at the call's file and line; a call whose number of values is
not the code's number of parameters logs only a warning."""
CODE_TABLE = "RUNTIME_ERROR_CODE_TABLE"
Expr = tuple[str, int | str]
"""An argument of an error-code call as the macro that makes it sees it: ``("arg", i)`` its own
i-th argument, ``("str", i)`` that argument stringized (``#param``), ``("rest", i)`` its arguments
from the i-th on (``##__VA_ARGS__``), ``("lit", text)`` the text written in its body
(``ErrorCode::EE1004``, ``__func__``, ``"stream"``)."""
OuterSpec = tuple[Expr, tuple[Expr, ...]]
"""An error-code macro: the expression of its code and of its values, in order."""
OUTER: Mapping[str, OuterSpec] = {OUTER_IMPL: (("arg", 0), (("rest", 1),))}
_X_ENTRY = re.compile(r"\bX\s*\(")
_FMT_CALL = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*::)*RtFmtMsg\s*\(")


def code_templates(texts: Iterable[str]) -> dict[str, tuple[int, str]]:
    """The runtime's error-code table (``#define RUNTIME_ERROR_CODE_TABLE(X)`` of
    ``error_code_meta.h``: ``X(EE1023, "EE1023", ("func", "reason"), "%s failed. Reason: %s.
    ErrorCode=EE1023.\\n", DLOG_ERROR)``): code → (number of parameters, message template) of
    the codes logged at the error level."""
    out: dict[str, tuple[int, str]] = {}
    for text in texts:
        at = text.find("#define " + CODE_TABLE + "(")
        if at < 0:
            continue
        body = _define_body(text, at).replace("\\\n", "\n")
        for m in _X_ENTRY.finditer(body):
            args = split_args(body[m.end() : call_end(body, m.end()) - 1])
            if len(args) != 5 or args[4].strip() != "DLOG_ERROR":
                continue
            fmt, _ = format_at(args[3], 0)
            params = args[2].strip()
            if fmt is None or not params.startswith("("):
                continue
            names = [x for x in split_args(params[1:-1]) if x.strip()]
            out.setdefault(args[0].strip(), (len(names), " ".join(fmt.split())))
    return out


def _expr(arg: str, params: Sequence[str]) -> Expr:
    a = arg.strip()
    while a.startswith("(") and a.endswith(")") and call_end(a, 1) == len(a):
        a = a[1:-1].strip()
    if a in ("__VA_ARGS__", "##__VA_ARGS__") and "..." in params:
        return ("rest", params.index("..."))
    if a in params:
        return ("arg", params.index(a))
    if a.startswith("#") and a[1:].strip() in params:
        return ("str", params.index(a[1:].strip()))
    return ("lit", a)


def _compose(e: Expr, outer: Sequence[Expr]) -> list[Expr]:
    """``e`` (an expression over a macro's arguments) with those arguments being ``outer`` (the
    expressions of its caller's body)."""
    kind, v = e
    if kind == "lit":
        return [e]
    assert isinstance(v, int)
    if kind == "rest":
        return list(outer[v:])
    if v >= len(outer):
        return []
    if kind == "arg":
        return [outer[v]]
    inner = outer[v]  # "#param" of an argument that is its caller's own argument: stringized there
    return [("str", inner[1])] if inner[0] == "arg" else [("lit", '"' + str(inner[1]) + '"')]


def outer_macros(texts: Iterable[str], known: Mapping[str, OuterSpec] = OUTER) -> dict[str, OuterSpec]:
    """``known`` with the macros the sources define whose body calls a known error-code macro (its
    code and values from their own arguments: ``NULL_PTR_RETURN_MSG_OUTER(PTR, RET_CODE)`` →
    ``RT_LOG_OUTER_MSG_WITH_FUNC(ErrorCode::EE1004, #PTR)`` → ``RT_LOG_OUTER_MSG_IMPL(
    ErrorCode::EE1004, __func__, #PTR)``), found until none is added; a body that does not call one
    (the stubs of other platforms) adds nothing."""
    defines: list[tuple[str, list[str], str]] = []
    for text in texts:
        for m in _DEFINE.finditer(text):
            params = [x.strip() for x in m.group(2).split(",")]
            defines.append((m.group(1), params, _define_body(text, m.end())))
    out = dict(known)
    added = True
    while added:
        added = False
        pattern = re.compile(
            r"\b(" + "|".join(re.escape(x) for x in sorted(out, key=len, reverse=True)) + r")\s*\("
        )
        for name, params, body in defines:
            if name in out:
                continue
            hit = pattern.search(body)
            if hit is None:
                continue
            args = [_expr(a, params) for a in split_args(body[hit.end() : call_end(body, hit.end()) - 1])]
            code_e, value_es = out[hit.group(1)]
            code = _compose(code_e, args)
            if len(code) != 1:
                continue
            out[name] = (code[0], tuple(x for e in value_es for x in _compose(e, args)))
            added = True
    return out


def _value(expr: str) -> str:
    """A value of an error-code call as the message shows it: a string literal's text (``%`` as
    ``%%``), a message built by concatenation or by ``RtFmtMsg("…", …)`` its literals with each
    other part a ``%s``; any other expression ``%s``."""
    e = expr.strip()
    m = _FMT_CALL.match(e)
    if m is not None:
        fmt, _ = format_at(e, m.end())
        return _SPLIT_CONVERSION.sub("%s", fmt) if fmt is not None else "%s"
    e = e.removesuffix(".c_str()").strip()
    return _built_string(e) or "%s"


def _values(spec: OuterSpec, args: Sequence[str]) -> tuple[str | None, list[str]]:
    """The code and the values (as message text) of a call of an error-code macro."""

    def text(e: Expr) -> list[str]:
        kind, v = e
        if kind == "lit":
            return [str(v)]
        assert isinstance(v, int)
        if kind == "rest":
            return [a for a in args[v:] if a.strip()]
        if v >= len(args):
            return []
        if kind == "str":
            return ['"' + " ".join(args[v].split()).replace("\\", "\\\\").replace('"', '\\"') + '"']
        return [args[v]]

    code = text(spec[0])
    values = [x for e in spec[1] for x in text(e)]
    return (_code_of(code[0]) if len(code) == 1 else None), values


def extract_outer(
    text: str,
    path: str,
    specs: Mapping[str, OuterSpec],
    templates: Mapping[str, tuple[int, str]],
) -> list[Call]:
    """Every error-code call of one file (comments and macro bodies left out) whose code is in the
    table and whose number of values is the code's: the code's message with the values in it."""
    found: list[Call] = []
    pattern = re.compile(
        r"\b(" + "|".join(re.escape(x) for x in sorted(specs, key=len, reverse=True)) + r")\s*\("
    )
    for m in pattern.finditer(text):
        start = m.start()
        if not _product_call(text, start):
            continue
        args = split_args(text[m.end() : call_end(text, m.end()) - 1])
        code, values = _values(specs[m.group(1)], args)
        if code is None or code not in templates:
            continue
        count, template = templates[code]
        if len(values) != count:
            continue  # PrintErrMsgToLog: "Parameter count mismatch", a warning only
        pieces = template.split("%s")
        if len(pieces) != count + 1:
            continue
        shown = [_value(v) if v.strip() != "__func__" else "%s" for v in values]
        fmt = pieces[0] + "".join(v + p for v, p in zip(shown, pieces[1:], strict=True))
        line = text.count("\n", 0, start) + 1
        found.append(Call(path, line, m.group(1), " ".join(fmt.split()), code))
    return found


def _product_call(text: str, start: int) -> bool:
    """Whether the call at ``start`` is code: not in a comment, not in a macro's own body (a line
    that ends with a backslash, or the last line of a ``#define`` continued onto it)."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].lstrip().startswith(("//", "*", "/*", "#")):
        return False
    line_end = text.find("\n", start)
    if text[start : len(text) if line_end < 0 else line_end].rstrip().endswith("\\"):
        return False
    at = line_start
    while at > 0:  # the lines before, while each continues onto the next
        prev = text.rfind("\n", 0, at - 1) + 1
        if not text[prev : at - 1].rstrip().endswith("\\"):
            return True
        if text[prev : at - 1].lstrip().startswith("#"):
            return False
        at = prev
    return True


def walk(tree: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``tree``, text) of every source file outside tests, stubs and samples."""
    for p in sorted(tree.rglob("*")):
        if not p.is_file() or p.suffix not in SOURCE_SUFFIXES:
            continue
        rel = p.relative_to(tree).as_posix()
        if any(rel.startswith(d) or f"/{d}" in rel for d in SKIP_DIRS):
            continue
        yield rel, p.read_text(encoding="utf-8", errors="replace")


def import_tree(tree: Path) -> list[Call]:
    """Every error-log/report call of the tree, its own wrapper macros included."""
    files = list(walk(tree))
    calls = wrappers(text for _, text in files)
    codes = constants(text for _, text in files)
    outer = outer_macros(text for _, text in files)
    templates = code_templates(text for _, text in files)
    out: list[Call] = []
    for rel, text in files:
        out += extract(text, rel, calls, codes)
        if templates:
            out += extract_outer(text, rel, outer, templates)
    return out


def rows(repo_key: str, calls: Iterable[Call]) -> list[dict[str, Any]]:
    """Table rows of the calls whose message can be told apart in a log (a distinctive literal,
    else distinctive parts: :func:`logsource.identities`); the others never could."""
    calls = sorted(calls, key=lambda c: (c.path, c.line))
    ids = identities((c.format, told_by(c.path, c.code)) for c in calls)
    out: list[dict[str, Any]] = []
    for c in calls:
        if ids[c.format] == ((), ()):
            continue
        row: dict[str, Any] = {"repo": repo_key, "path": c.path, "line": c.line, "call": c.call}
        if c.code:
            row["code"] = c.code
        row["format"] = c.format
        out.append(row)
    return out


# ------------------------------------------------------------------------------ the table
def build(
    raw_rules: Sequence[Any], raw_repos: Mapping[str, Any], raw_rows: Sequence[Any], *, keep_all: bool = False
) -> RtgeMessages:
    """The engine's table: the rows a rule gives causes and the rows reporting a public error code
    (every row with ``keep_all``), the first rule covering a row deciding; a public code's row no
    rule covers is that code's occurrence, which the code table decides."""
    rules = tuple(Rule(r.name, r.words, r.causes, r.reason, r.paths) for r in raw_rules)
    keys = list(raw_repos)
    repos = tuple((raw_repos[k].repo, raw_repos[k].commit) for k in keys)
    ids = identities((r.format, told_by(r.path, r.code)) for r in raw_rows)
    out: list[Row] = []
    files: set[str] = set()
    total = 0
    for r in raw_rows:
        lits, parts = ids[r.format]
        if not lits and not parts:
            continue
        total += 1
        files.add(r.path.rsplit("/", 1)[-1])
        code = r.code or ""
        rule = next((i for i, x in enumerate(rules) if x.covers(r.path, r.format)), -1)
        if not (rule >= 0 and rules[rule].causes) and not public_code(code) and not keep_all:
            continue
        out.append((keys.index(r.repo), r.path, r.line, r.format, code, r.call, lits, parts, rule))
    data = tuple((x.name, x.words, x.causes, x.reason, x.paths) for x in rules)
    return RtgeMessages((tuple(out), repos, data, total, frozenset(files)))


def diff(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """What a refresh changes: rows the table lacks (a format string not in it for that file), rows
    whose code changed, and rows gone (by path and format string; a line that only moved is not a
    change)."""

    def key(r: Mapping[str, Any]) -> tuple[str, str, str]:
        return (str(r["path"]), str(r["format"]), str(r["call"]))

    before = {key(r): r for r in old}
    after = {key(r): r for r in new}
    return {
        "lacks": [dict(r) for k, r in after.items() if k not in before],
        "changed": [
            {"path": k[0], "format": k[1], "was": before[k].get("code"), "now": r.get("code")}
            for k, r in after.items()
            if k in before and before[k].get("code") != r.get("code")
        ],
        "gone": [dict(r) for k, r in before.items() if k not in after],
    }


# ------------------------------------------------------------------------------ loading
MAX_TABLE_BYTES = 16 << 20


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "rtge_messages.yaml"


def load(path: str | Path, *, keep_all: bool = False) -> RtgeMessages:
    """The table, read bounded and validated (its rows with a cause; every row with ``keep_all``)."""
    from cannenv.explain.models import RtgeMessagesFile
    from cannenv.explain.rowtable import load_validated

    model = load_validated(
        path,
        RtgeMessagesFile,
        what="runtime/GE message table",
        hint="see docs/explain.md (Knowledge tables: the runtime's and GE's own messages)",
        max_bytes=MAX_TABLE_BYTES,
    )
    return build(model.rules, model.repos, model.rows, keep_all=keep_all)


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import RtgeMessagesFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(
        RtgeMessagesFile, "cannenv explain: the CANN runtime's and GE's error messages from their source"
    )


def main(argv: list[str] | None = None) -> int:
    """``--schema`` prints the table's JSON Schema; ``--import TREE REPO_KEY [--write]`` prints the
    refresh diff of a source tree and with ``--write`` replaces that repository's rows
    (:func:`cannenv.explain.rowtable.importer_main`)."""
    import sys

    from cannenv.explain.rowtable import importer_main

    return importer_main(
        sys.argv[1:] if argv is None else argv,
        module="rtge",
        table=shipped_path(),
        schema=json_schema,
        read=lambda tree, key, _extra: rows(key, import_tree(tree)),
        diff=diff,
    )


if __name__ == "__main__":
    raise SystemExit(main())
