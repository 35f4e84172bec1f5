"""Error messages read out of the vendors' own sources: the ``source_messages`` of knowledge.yaml.

A log often carries only the sentence a component printed (``HCCL AllReduce & Reduce: Unsupported
data type at::kByte/at::kBool``), no code. The sentences are taken from the complete sources that
print them, never typed from one log:

* **torch_npu** (``torch_npu/csrc`` of Ascend/pytorch): every ``TORCH_CHECK``, ``TORCH_NPU_WARN``,
  ``throw std::runtime_error`` … whose message carries a ``PTA_ERROR(ErrCode::PARAM)``-style code
  (:func:`cpp_messages`); the row keeps the code (``ERR02007``), so its causes come through the
  reviewed ERRxxxxx mapping of the ``codes`` table (or a reviewed rule of ``message_causes``);
* **PyTorch**'s dispatch message, ``"<kernel>" not implemented for '<dtype>'`` (one family);
* **the device plugin** (Go): every ``fmt.Errorf``/``errors.New``/``klog.Errorf`` … message
  (:func:`go_messages`), its causes by module (the source file) through ``message_causes``.

A message is split at what the program fills in (streamed values, ``%s``/``%v`` placeholders, a
line break); the row keeps the literal fragments of the printed line that holds the longest one.
A row is kept only when that longest fragment is distinctive (:data:`MIN_FRAGMENT` characters and
two words at least). It matches a log line holding the longest fragment, with the fragment before
it (or after it) on the same line (:func:`pattern`: one loop, linear on any engine).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cannenv.explain.rules import MIN_FRAGMENT as MIN_FRAGMENT
from cannenv.explain.rules import TOOL_FAMILIES
from cannenv.explain.rules import distinctive as distinctive
from cannenv.explain.rules import pattern as pattern

SUBMODULES = {"PTA": 0, "OPS": 1, "DIST": 2, "GRAPH": 3, "PROF": 4}
"""torch_npu's ``SubModule`` (NPUException.h): the two digits after ERR."""
ERRCODES = {
    "SUC": 0,
    "PARAM": 1,
    "TYPE": 2,
    "VALUE": 3,
    "PTR": 4,
    "INTERNAL": 5,
    "MEMORY": 6,
    "NOT_SUPPORT": 7,
    "NOT_FOUND": 8,
    "UNAVAIL": 9,
    "SYSCALL": 10,
    "TIMEOUT": 11,
    "PERMISSION": 12,
    "ACL": 100,
    "HCCL": 200,
    "GE": 300,
}
"""torch_npu's ``ErrCode`` (NPUException.h): the three digits after the submodule."""

# Calls that raise or log their arguments as a message, and how many leading arguments are the
# condition (not the message): TORCH_CHECK(cond, msg…), TORCH_CHECK_WITH(Type, cond, msg…)
RAISERS: Mapping[str, int] = {
    "TORCH_CHECK": 1,
    "TORCH_CHECK_VALUE": 1,
    "TORCH_CHECK_TYPE": 1,
    "TORCH_CHECK_INDEX": 1,
    "TORCH_CHECK_NOT_IMPLEMENTED": 1,
    "TORCH_CHECK_WITH": 2,
    "TORCH_INTERNAL_ASSERT": 1,
    "TORCH_INTERNAL_ASSERT_DEBUG_ONLY": 1,
    "AT_ASSERT": 1,
    "REDUCER_CHECK": 1,
    "TORCH_NPU_WARN": 0,
    "TORCH_NPU_WARN_ONCE": 0,
    "TORCH_WARN": 0,
    "TORCH_WARN_ONCE": 0,
    "AT_ERROR": 0,
    "ASCEND_LOGE": 0,
    "ASCEND_LOGW": 0,
    "runtime_error": 0,
    "invalid_argument": 0,
    "logic_error": 0,
    "TypeError": 0,
    "ValueError": 0,
}
BUILDERS = frozenset({"str", "string", "c10::str", "std::string"})
"""Calls whose string arguments are part of the message they build (``c10::str("a", x, "b")``)."""

_PLACEHOLDER = re.compile(
    r"%[-+ #0]*(?:\*|[1-9][0-9]*)?(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfgGcspvqwTt%]|\{\}"
)


@dataclass
class _Frame:
    name: str
    line: int
    args: list[list[str | None]]
    """Per argument: the message pieces (a literal, or None where the program fills in a value)."""
    code: tuple[str, str] | None = None


def _lex(text: str) -> Iterator[tuple[str, str, int]]:
    """C/C++ tokens that matter here: ('str', value, line), ('id', name, line), ('(' / ')' / ',' /
    '?' / 'op', text, line). Comments skipped; adjacent literals are joined by the caller."""
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch in " \t\r\\":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
        elif ch == '"' or (ch == "R" and text.startswith('R"', i)):
            if ch == "R":
                m = re.compile(r'R"([^(\s]{0,16})\(').match(text, i)
                if m is None:
                    yield ("id", "R", line)
                    i += 1
                    continue
                end = text.find(")" + m.group(1) + '"', m.end())
                end = n if end < 0 else end
                value = text[m.end() : end]
                yield ("str", value, line)
                line += value.count("\n")
                i = end + len(m.group(1)) + 2
                continue
            j, buf = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    esc = text[j + 1]
                    if esc == "\n":
                        line += 1
                    else:
                        buf.append(
                            {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}.get(esc, "\\" + esc)
                        )
                    j += 2
                    continue
                if text[j] == "\n":  # an unterminated literal: stop at the line's end
                    break
                buf.append(text[j])
                j += 1
            yield ("str", "".join(buf), line)
            i = j + 1
        elif ch == "'":
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            lit = text[i + 1 : j]
            yield ("str", {'\\"': '"', "\\'": "'", "\\\\": "\\"}.get(lit, lit), line)
            i = j + 1
        elif ch.isalpha() or ch == "_":
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*").match(text, i)
            assert m is not None
            yield ("id", m.group(0), line)
            i = m.end()
        elif ch in "(),?":
            yield (ch, ch, line)
            i += 1
        else:
            yield ("op", ch, line)
            i += 1


def cpp_messages(text: str) -> list[tuple[int, str, str, list[str | None]]]:
    """Every message of a C++ source that carries a torch_npu error code: (line of the call,
    submodule, ErrCode name, the message's pieces: literals, None for a value filled in)."""
    out: list[tuple[int, str, str, list[str | None]]] = []
    stack: list[_Frame] = [_Frame("", 0, [[]])]
    pending: str | None = None  # the identifier just before a '('
    tokens = list(_lex(text))
    i = 0
    while i < len(tokens):
        kind, value, line = tokens[i]
        top = stack[-1]
        if (  # PTA_ERROR ( ErrCode::PARAM ): the name and three tokens
            kind == "id"
            and value.endswith("_ERROR")
            and value.split("_")[0] in SUBMODULES
            and i + 3 < len(tokens)
            and tokens[i + 1][0] == "("
            and tokens[i + 3][0] == ")"
            and tokens[i + 2][1].startswith("ErrCode::")
        ):
            top.code = (value.split("_")[0], tokens[i + 2][1].removeprefix("ErrCode::"))
            top.args[-1].append(None)
            i += 4
            pending = None
            continue
        if kind == "id":
            pending = value
            top.args[-1].append(None)
        elif kind == "(":
            stack.append(_Frame(pending or "", line, [[]]))
            if top.args[-1] and top.args[-1][-1] is None and pending:
                top.args[-1].pop()  # the call's name is not a value of its own
            pending = None
        elif kind == ")":
            pending = None
            if len(stack) == 1:
                i += 1
                continue
            frame = stack.pop()
            parent = stack[-1]
            name = frame.name.rsplit("::", 1)[-1] if frame.name not in RAISERS else frame.name
            if frame.name in RAISERS or name in RAISERS:
                skip = RAISERS.get(frame.name, RAISERS.get(name, 0))
                if frame.code is not None:
                    pieces: list[str | None] = []
                    for arg in frame.args[skip:]:
                        pieces += arg
                    out.append((frame.line, frame.code[0], frame.code[1], pieces))
                    parent.args[-1].append(None)
                    i += 1
                    continue
            if frame.code is not None and parent.code is None:
                parent.code = frame.code
            if frame.name in BUILDERS or name in BUILDERS or frame.name == "":
                # a message built inside (c10::str(…)) or a parenthesised expression
                for arg in frame.args:
                    parent.args[-1] += arg
            else:
                parent.args[-1].append(None)
        elif kind == ",":
            pending = None
            top.args.append([])
        elif kind == "?":
            pending = None
            top.args[-1] = [None]  # a ternary: either literal may be printed
        elif kind == "str":
            pending = None
            top.args[-1].append(value)
        else:
            if value in ";{}":
                stack[1:] = []
                stack[0].args = [[]]
            pending = None
        i += 1
    return out


_PY_RAISERS = frozenset({"warn", "error", "warning", "critical", "exception", "fatal"})
"""Python calls that log or warn their first argument (``warnings.warn``, ``logger.error`` …)."""
_PY_FORMAT = re.compile(r"\{[^{}]*\}")


def _py_err(node: ast.AST) -> tuple[str, str] | None:
    """``pta_error(ErrCode.PARAM)`` → ('PTA', 'PARAM')."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.endswith("_error")
        and node.func.id[:-6].upper() in SUBMODULES
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Attribute)
        and isinstance(node.args[0].value, ast.Name)
        and node.args[0].value.id == "ErrCode"
    ):
        return node.func.id[:-6].upper(), node.args[0].attr
    return None


def _py_pieces(node: ast.AST, code: list[tuple[str, str]]) -> list[str | None]:
    """A Python message expression as literals and values (None); the torch_npu code it carries
    is appended to ``code``."""
    found = _py_err(node)
    if found is not None:
        code.append(found)
        return [None]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        out: list[str | None] = []
        for v in node.values:
            out += _py_pieces(v, code) if isinstance(v, ast.Constant) else [None]
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _py_pieces(node.left, code) + _py_pieces(node.right, code)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return [*_py_pieces(node.left, code), None]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        out = []
        for k, part in enumerate(_PY_FORMAT.split(node.func.value.value)):
            out += [None, part] if k else [part]
        return out
    return [None]


def py_messages(text: str) -> list[tuple[int, str, str, list[str | None]]]:
    """Every message of a Python module that carries a torch_npu error code (``raise
    RuntimeError("…" + pta_error(ErrCode.PARAM))``, ``warnings.warn(…)``): (line, submodule,
    ErrCode name, the message's pieces)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[int, str, str, list[str | None]]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Raise, ast.Call)):
            continue
        msg: ast.AST | None = None
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            msg = node.exc.args[0]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _PY_RAISERS
            and node.args
        ):
            msg = node.args[0]
        if msg is None:
            continue
        code: list[tuple[str, str]] = []
        pieces = _py_pieces(msg, code)
        if code:
            out.append((node.lineno, code[0][0], code[0][1], pieces))
    return out


_GO_CALL = re.compile(
    r"\b(?:fmt\.Errorf|errors\.New|klog\.(?:Errorf|Error|Fatalf|Fatal|Warningf|Warning)"
    r"|hwlog\.RunLog\.(?:Errorf|Error|Warnf|Warn))\(\s*\"((?:[^\"\\\n]|\\.)*)\""
)


def go_messages(text: str) -> list[tuple[int, list[str | None]]]:
    """Every error/warning message of a Go source: (line, the format string's pieces)."""
    out: list[tuple[int, list[str | None]]] = []
    for m in _GO_CALL.finditer(text):
        lit = m.group(1).replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t")
        out.append((text.count("\n", 0, m.start()) + 1, [lit]))
    return out


_TOOL_PRINT = re.compile(r"\[?(?:ERROR|WARNING|WARN|CRITICAL)\]?\s?:?", re.IGNORECASE)
"""The level a tool prints before a message it prints itself (``print("[ERROR] …")``)."""
_PY_PERCENT = re.compile(r"%[-+ #0]*(?:\*|[1-9][0-9]*)?(?:\.[0-9*]+)?[ra]")
"""Python's ``%r``/``%a`` conversions (``logger.warning("… %r …", path)``), which C's table lacks."""


def _py_split(pieces: Sequence[str | None]) -> list[str | None]:
    out: list[str | None] = []
    for p in pieces:
        if p is None:
            out.append(None)
            continue
        for k, part in enumerate(_PY_PERCENT.split(p)):
            out += [None, part] if k else [part]
    return out


def tool_py_messages(text: str) -> list[tuple[int, list[str | None]]]:
    """Every error and warning a tool's Python module raises, logs or prints itself: ``raise
    XxxError(msg)``, ``logger.error/warning/critical/exception(msg)``, ``warnings.warn(msg)`` and
    ``print(msg)`` whose message starts with its level (``[ERROR]``, ``WARNING:``): (line, pieces)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[int, list[str | None]]] = []
    for node in ast.walk(tree):
        msg: ast.AST | None = None
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
            msg = node.exc.args[0]
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _PY_RAISERS:
                msg = node.args[0]
            elif isinstance(f, ast.Name) and f.id == "print":
                first = _py_pieces(node.args[0], [])
                if first and isinstance(first[0], str) and _TOOL_PRINT.match(first[0].lstrip()):
                    msg = node.args[0]
        if msg is None:
            continue
        out.append((getattr(node, "lineno", 0), _py_split(_py_pieces(msg, []))))
    return sorted(out, key=lambda x: x[0])


TOOL_CALLS = re.compile(
    r"(?:ERROR_LOG|WARN_LOG|runtime_error|invalid_argument|logic_error|out_of_range"
    r"|[A-Z]+_LOGE|[A-Z]+_LOGW|[A-Z_]*LOG_ERROR(?:_[A-Z])?|[A-Z_]*LOG_WARN(?:_[A-Z])?)"
)
"""C/C++ calls whose string arguments are a tool's error or warning (aclruntime's ``ERROR_LOG("…",
…)``, ``throw std::runtime_error(…)``, PyPTO's ``MACHINE_LOGE(code, "…")``)."""
TOOL_STREAMS = re.compile(r"(?:[A-Z]+_)?(?:ASSERT|CHECK)|std::cerr|cerr")
"""C/C++ checks and streams whose ``<<`` pieces are the message (PyPTO's ``CHECK(code, cond) <<
"…"``, ``std::cerr << "…"``)."""


def tool_cpp_messages(text: str) -> list[tuple[int, list[str | None], str]]:
    """Every error and warning message of a tool's C/C++ source: the string arguments of a
    :data:`TOOL_CALLS` call, the ``<<`` pieces after a :data:`TOOL_STREAMS` check (to the
    statement's end): (line, pieces, the macro or call)."""
    tokens = list(_lex(text))
    out: list[tuple[int, list[str | None], str]] = []
    i, n = 0, len(tokens)
    while i < n:
        kind, value, line = tokens[i]
        name = value.rsplit("::", 1)[-1]
        is_call = kind == "id" and TOOL_CALLS.fullmatch(name) is not None
        is_stream = kind == "id" and TOOL_STREAMS.fullmatch(value) is not None
        if not (is_call or is_stream) or (i + 1 < n and tokens[i + 1][0] != "(" and value != "std::cerr"):
            i += 1
            continue
        j = i + 1
        pieces: list[str | None] = []
        if j < n and tokens[j][0] == "(":  # the call's parenthesised arguments
            depth = 0
            while j < n:
                k, v, _ = tokens[j]
                depth += (k == "(") - (k == ")")
                if is_call and k == "str":
                    pieces.append(v)
                elif (
                    is_call and (k not in ("(", ")") or depth > 1) and (not pieces or pieces[-1] is not None)
                ):
                    pieces.append(None)
                j += 1
                if depth == 0:
                    break
        if is_stream:  # the << pieces to the statement's end
            while j < n and not (tokens[j][0] == "op" and tokens[j][1] in ";{}"):
                k, v, _ = tokens[j]
                if k == "str":
                    pieces.append(v)
                elif not (k == "op" and v == "<") and (not pieces or pieces[-1] is not None):
                    pieces.append(None)
                j += 1
        if any(isinstance(p, str) for p in pieces):
            out.append((line, pieces, name))
        i = max(j, i + 1)
    return out


CPP_SUFFIXES = frozenset({".cpp", ".cc", ".h", ".hpp"})
_TOOL_SKIP = frozenset(
    {"test", "tests", "ut", "st", "UT", "ST", "unittest", "example", "examples", "sample", "samples"}
    | {"api_samples", "doc", "docs", "third_party", "vendor", "build"}
)
"""Folders of a tool's tree that are not the tool's own messages: tests, examples, docs (and files
named ``test_*``/``*_test.*``)."""


def _tool_skipped(rel: str) -> bool:
    parts = rel.strip("/").split("/")
    name = parts[-1].rsplit(".", 1)[0]
    return any(x in _TOOL_SKIP for x in parts[:-1]) or name.startswith("test_") or name.endswith("_test")


def _os_messages() -> frozenset[str]:
    """The C library's own error texts (strerror: ``No such file or directory``): a tool that raises
    one (``FileNotFoundError("No such file or directory")``) prints the OS's words, not its own."""
    import errno
    import os

    return frozenset(os.strerror(n).lower() for n in errno.errorcode)


def import_tool(
    tree: Path,
    folders: Sequence[str],
    *,
    source: str,
    family: str,
    prefix: str,
    by_macro: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Rows of ``source_messages`` from a checkout of a tool (msit, ais_bench and its aclruntime,
    msprobe, PyPTO, triton-ascend): every error and warning its Python and C/C++ sources under
    ``folders`` raise, log or print themselves (tests, examples and docs left out). ``by_macro``
    gives the messages of some C/C++ macros a family of their own (PyPTO's ``CHECK``, its external
    errors, apart from its ``ASSERT`` checks)."""
    found: dict[str, list[tuple[str, int, str | None, list[str | None]]]] = {}
    for folder in folders:
        for f in sorted((tree / folder).rglob("*")):
            if (f.suffix != ".py" and f.suffix not in CPP_SUFFIXES) or not f.is_file():
                continue
            rel = f.relative_to(tree).as_posix()
            if _tool_skipped(rel[len(folder) :]):
                continue
            text = f.read_text(encoding="utf-8", errors="replace")
            if f.suffix == ".py":
                for line, pieces in tool_py_messages(text):
                    found.setdefault(family, []).append((rel, line, None, pieces))
                continue
            for line, pieces, macro in tool_cpp_messages(text):
                fam = (by_macro or {}).get(macro, family)
                if fam:  # an empty family: a macro whose messages are not imported
                    found.setdefault(fam, []).append((rel, line, None, pieces))
    rows: dict[str, dict[str, Any]] = {}
    os_words = _os_messages()
    for fam, items in found.items():
        for row in _rows(items, family=fam, prefix=prefix, source=source):
            if " ".join(row["text"]).rstrip(".!").lower() not in os_words:
                rows.setdefault(row["id"], row)
    return sorted(rows.values(), key=lambda r: (r["at"].split("#")[0], int(r["at"].rsplit("L", 1)[1])))


def fragments(pieces: Sequence[str | None]) -> list[str]:
    """The literal fragments of the printed line that holds the longest literal: literals joined
    where nothing comes between them, split at values, placeholders and line breaks, ends
    stripped."""
    lines: list[list[str]] = [[]]
    cur: list[str] = []

    def flush() -> None:
        if cur:
            lines[-1].append("".join(cur))
            cur.clear()

    for p in pieces:
        if p is None:
            flush()
            continue
        for k, part in enumerate(p.split("\n")):
            if k:
                flush()
                lines.append([])
            for j, seg in enumerate(_PLACEHOLDER.split(part)):
                if j:
                    flush()
                cur.append(seg)
    flush()
    best: list[str] = []
    best_len = 0
    for ln in lines:
        frags = [f.strip() for f in ln if f.strip()]
        longest = max((len(f) for f in frags), default=0)
        if longest > best_len:
            best, best_len = frags, longest
    return best


def row_id(prefix: str, frags: Sequence[str], key: str) -> str:
    """A row id stable across line moves: the family's prefix and a digest of what it matches."""
    digest = hashlib.sha1(("\x00".join(frags) + "\x00" + key).encode("utf-8")).hexdigest()[:10]
    return f"{prefix}-{digest}"


def err_code(submodule: str, errcode: str) -> str:
    """torch_npu's ERRxxxxx of a submodule and ErrCode (``DIST``, ``NOT_SUPPORT`` → ERR02007)."""
    return f"ERR{SUBMODULES[submodule]:02d}{ERRCODES[errcode]:03d}"


def _rows(
    found: Iterable[tuple[str, int, str | None, list[str | None]]], *, family: str, prefix: str, source: str
) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    pair = family in TOOL_FAMILIES
    for path, line, code, pieces in found:
        frags = fragments(pieces)
        if not distinctive(frags, pair=pair):
            continue
        # a torch_npu message by its code; a plugin's by its file's name, so the same message of
        # the same file in an older copy of the component (another repository) is the same row
        key = code or path.rsplit("/", 1)[-1]
        rid = row_id(prefix, frags, key)
        if rid in rows:
            continue  # the same message raised in two places: the first is cited
        row: dict[str, Any] = {"id": rid, "family": family, "text": frags}
        if code:
            row["code"] = code
        row["at"] = f"{path}#L{line}"
        row["source"] = source
        rows[rid] = row
    return sorted(rows.values(), key=lambda r: (r["at"].split("#")[0], int(r["at"].rsplit("L", 1)[1])))


def import_torch_npu(tree: Path, *, source: str) -> list[dict[str, Any]]:
    """Rows of ``source_messages`` from a checkout of Ascend/pytorch: every message that carries a
    torch_npu error code, of ``torch_npu/csrc`` (C++ sources and headers) and of torch_npu's Python
    modules (``raise …(… + pta_error(ErrCode.PARAM))``)."""
    found: list[tuple[str, int, str | None, list[str | None]]] = []
    for f in sorted((tree / "torch_npu" / "csrc").rglob("*")):
        if f.suffix not in (".cpp", ".h", ".hpp", ".cc") or not f.is_file():
            continue
        text = f.read_text(encoding="utf-8", errors="replace")
        if "ErrCode::" not in text:
            continue
        rel = f.relative_to(tree).as_posix()
        for line, sub, errc, pieces in cpp_messages(text):
            if sub in SUBMODULES and errc in ERRCODES:
                found.append((rel, line, err_code(sub, errc), pieces))
    for f in sorted((tree / "torch_npu").rglob("*.py")):
        rel = f.relative_to(tree).as_posix()
        text = f.read_text(encoding="utf-8", errors="replace")
        if "ErrCode." not in text or rel.startswith("torch_npu/testing/"):
            continue
        for line, sub, errc, pieces in py_messages(text):
            if sub in SUBMODULES and errc in ERRCODES:
                found.append((rel, line, err_code(sub, errc), pieces))
    return _rows(found, family="torch-npu-check", prefix="tnpu", source=source)


def import_go(
    tree: Path, *, source: str, family: str = "device-plugin", prefix: str = "dp"
) -> list[dict[str, Any]]:
    """Rows of ``source_messages`` from a checkout of a Go component (the device plugin): every
    error message of its own sources (no vendor/, no tests)."""
    found: list[tuple[str, int, str | None, list[str | None]]] = []
    for f in sorted(tree.rglob("*.go")):
        rel = f.relative_to(tree).as_posix()
        if rel.startswith(("vendor/", "third_party/")) or rel.endswith("_test.go") or "/vendor/" in rel:
            continue
        for line, pieces in go_messages(f.read_text(encoding="utf-8", errors="replace")):
            found.append((rel, line, None, pieces))
    return _rows(found, family=family, prefix=prefix, source=source)


def refresh_diff(shipped: Sequence[Mapping[str, Any]], found: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What a refresh changes among one family's rows: the rows to add, the ids no longer found,
    and the rows whose place in the source moved (matched by id)."""
    have = {r["id"]: r for r in shipped}
    now = {r["id"]: r for r in found}
    return {
        "added": [dict(r) for i, r in now.items() if i not in have],
        "removed": sorted(i for i in have if i not in now),
        "moved": {i: r["at"] for i, r in now.items() if i in have and have[i]["at"] != r["at"]},
    }


IMPORTERS = {
    "torch-npu": ("tnpu", "torch-npu-check"),
    "device-plugin": ("dp", "device-plugin"),
}
"""``--import KIND``: the id prefix and family of the rows each importer makes."""


@dataclass(frozen=True)
class ToolSource:
    """How one tool's source is read (``--import tool CHECKOUT SOURCE_ID``)."""

    folders: tuple[str, ...]
    family: str
    prefix: str
    by_macro: tuple[tuple[str, str], ...] = ()
    """C/C++ macros whose messages take another family (PyPTO's ``CHECK``: ``pypto-check``) or
    none, when the family is empty (PyPTO's ``ASSERT`` checks of its own invariants)."""


_PYPTO_ASSERTS = ("ASSERT", "FE_ASSERT", "PASS_ASSERT", "MACHINE_ASSERT", "CODEGEN_ASSERT", "IR_ASSERT")
TOOL_SOURCES: Mapping[str, ToolSource] = {
    "ais-bench-msit": ToolSource(("ait/components/benchmark",), "ais-bench", "aisb"),
    "ais-bench-tools": ToolSource(("ais-bench_workload/tool/ais_bench",), "ais-bench", "aisb"),
    "msit": ToolSource(("msit",), "msit", "msit"),
    "msprobe": ToolSource(("debug/accuracy_tools/msprobe",), "msprobe", "msprobe"),
    "pypto": ToolSource(
        ("framework", "python"),
        "pypto",
        "pypto",
        (("CHECK", "pypto-check"), *((a, "") for a in _PYPTO_ASSERTS)),
    ),
    "triton-ascend": ToolSource(("third_party/ascend",), "triton-ascend", "triton"),
}
"""The tools' sources (``source`` of the rows, a ``sources`` entry of knowledge.yaml at its commit):
the folders read, the family and id prefix of their rows."""


def row_line(row: Mapping[str, Any]) -> str:
    """One row of ``source_messages`` as knowledge.yaml writes it (one line, flow style)."""
    import json

    parts = [
        f"{k}: {json.dumps(row[k], ensure_ascii=False)}"
        for k in ("id", "family", "text", "code", "at", "source")
        if k in row
    ]
    return "  - {" + ", ".join(parts) + "}"


def write_source(table: Path, source: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Replace one source's rows of ``source_messages`` in knowledge.yaml (the rows' lines where its
    first row was, else at the end; every other line kept; written atomically)."""
    from cannenv.fsutil import atomic_write_text

    lines = table.read_text(encoding="utf-8").splitlines()
    mark = f'source: "{source}"}}'
    at = next(
        (i for i, ln in enumerate(lines) if ln.startswith("  - {id: ") and ln.endswith(mark)), len(lines)
    )
    kept = [ln for ln in lines if not (ln.startswith("  - {id: ") and ln.endswith(mark))]
    at -= sum(1 for ln in lines[:at] if ln.startswith("  - {id: ") and ln.endswith(mark))
    atomic_write_text(table, "\n".join(kept[:at] + [row_line(r) for r in rows] + kept[at:]) + "\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m cannenv.explain.messages --import torch-npu CHECKOUT SOURCE_ID [PREFIX]`` (or
    ``device-plugin``) prints what a refresh changes against the shipped ``source_messages`` of
    that source: the rows to add (YAML), the ids no longer found and the rows whose line moved."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) in (4, 5) and args[0] == "--import" and args[1] in IMPORTERS:
        prefix, family = IMPORTERS[args[1]]
        prefix = args[4] if len(args) == 5 else prefix
        tree, source = Path(args[2]), args[3]
        if args[1] == "torch-npu":
            found = import_torch_npu(tree, source=source)
        else:
            found = import_go(tree, source=source, family=family, prefix=prefix)
        return _print_diff(tree, source, found)
    if len(args) in (4, 5) and args[:2] == ["--import", "tool"] and args[3] in TOOL_SOURCES:
        tree, source = Path(args[2]), args[3]
        found = import_tool_source(tree, source)
        if args[4:] == ["--write"]:
            from cannenv.explain.knowledge import shipped_path

            elsewhere = _cited_elsewhere(source)
            rows = [r for r in found if r["id"] not in elsewhere]
            write_source(shipped_path(), source, rows)
            print(f"# wrote {len(rows)} rows of {source}")
            return 0
        return _print_diff(tree, source, found)
    print(
        "usage: python -m cannenv.explain.messages --import torch-npu ASCEND_PYTORCH_CHECKOUT SOURCE_ID\n"
        "       python -m cannenv.explain.messages --import device-plugin CHECKOUT SOURCE_ID [ID_PREFIX]\n"
        "       python -m cannenv.explain.messages --import tool CHECKOUT "
        + "|".join(TOOL_SOURCES)
        + " [--write]",
        file=sys.stderr,
    )
    return 2


def import_tool_source(tree: Path, source: str) -> list[dict[str, Any]]:
    """The rows of one of :data:`TOOL_SOURCES` read from its checkout."""
    spec = TOOL_SOURCES[source]
    return import_tool(
        tree,
        spec.folders,
        source=source,
        family=spec.family,
        prefix=spec.prefix,
        by_macro=dict(spec.by_macro),
    )


def _print_diff(tree: Path, source: str, found: list[dict[str, Any]]) -> int:
    """Print what a refresh changes against the shipped rows of ``source``; 1 when there is
    something to review."""
    import yaml

    have = [r for r in _shipped_rows() if r.get("source") == source]
    # a message another source already cites (master, a newer release) is not this one's
    elsewhere = _cited_elsewhere(source)
    diff = refresh_diff(have, [r for r in found if r["id"] not in elsewhere])
    print(f"# {len(found)} messages in {tree}; shipped for {source}: {len(have)}")
    print(yaml.safe_dump(diff, sort_keys=False, width=200, allow_unicode=True), end="")
    return 1 if source in TOOL_SOURCES and any(diff.values()) else 0


def _shipped_rows() -> list[dict[str, Any]]:
    from cannenv.explain.knowledge import shipped_path
    from cannenv.records import load_yaml

    raw = load_yaml(shipped_path().read_text(encoding="utf-8")) or {}
    return list(raw.get("source_messages") or ())


def _cited_elsewhere(source: str) -> set[str]:
    """The ids of the rows other sources cite (a newer release's copy of the same message)."""
    return {r["id"] for r in _shipped_rows() if r.get("source") != source}


if __name__ == "__main__":
    raise SystemExit(main())
