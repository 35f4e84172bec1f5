"""Whose code raised a Python exception: the program's own, or the NPU stack's.

Pure: it reads what the scanner's extractors took out of a log (the traceback's frames, ``File "PATH",
line N, in FUNC``, the innermost kept last, and the exception lines, ``Kind: message``) and the
``python_code`` table of the knowledge (matrices/explain/knowledge.yaml). A frame's package comes
from where Python installs packages (the ``site`` module: ``…/site-packages/<package>/…``, Debian's
``dist-packages``; the standard library under ``lib/pythonX.Y/``); a frame in neither is the
program's own (its checkout, its script). A package of the stack's table is the stack's, whatever
the layout (a source checkout's ``…/torch_npu/…`` too); ``stack_of`` limits one to the programs it
plugs into (vllm_ascend is the stack when vLLM runs, the program when its own code is run). The
program is the package of the outermost frame that is neither the standard library nor the stack's.

A built-in exception of a message form the table lists (CPython's own wording: an AttributeError on
an object of a class, a call's arguments, a name, a key, an index, an assertion) is the program's
when the innermost frame that is not the standard library's is the program's, and what the message
names is the program's too: a class that is neither the stack's nor a built-in type, a callee the
program's frames define. Without frames, only a form marked ``without_frames`` decides (an object of
a class that is neither the stack's nor a built-in type). A traceback cut before its exception line
whose every frame is the program's is read the same way, when no other line of the log reports an
error (a stack's message beside it, a CANN failure, a torch_npu ERRxxxxx, would be why). The reading
is ranked below every other signature (:data:`~cannenv.explain.signatures.PROGRAM_CODE_PRIORITY`):
a message of the stack anywhere in the log still decides. docs/explain.md, "The program's own code".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

from cannenv import linre

if TYPE_CHECKING:
    from cannenv.explain.parts import PythonCode, PythonMessage
    from cannenv.explain.scan import Value

Owner = Literal["stdlib", "stack", "installed", "program", "unknown"]
INSTALL_DIRS = ("site-packages", "dist-packages")
"""Where Python installs third-party packages (the ``site`` module; ``dist-packages`` on Debian)."""
MIN_CUT_FRAMES = 2
"""Frames a traceback cut before its exception line shows at least, all the program's, to be read."""


@dataclass(frozen=True)
class Frame:
    path: str
    line: str
    func: str

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}, in {self.func}"


@dataclass(frozen=True)
class Reading:
    """A finding that the exception was raised in the program's own code, with what shows it."""

    id: str
    title: str
    component: str
    why: str
    sources: tuple[str, ...]
    key: str
    line: str
    count: int
    supersedes: tuple[str, ...]


def frames(values: Mapping[str, Value]) -> list[Frame]:
    """The frames an extractor kept (``path|line|func``), in their order."""
    out = []
    for value in values:
        path, _, rest = value.rpartition("|")
        path, _, line = path.rpartition("|")
        out.append(Frame(path, line, rest))
    return out


def package_of(path: str, code: PythonCode) -> tuple[Owner, str]:
    """(what kind of code, the package's name) of a frame's file, by where it lies."""
    if path.startswith("<"):
        return ("stdlib" if path.startswith("<frozen ") else "unknown"), path
    parts = [p for p in path.replace("\\", "/").split("/") if p and p != "."]
    if not parts:
        return "unknown", path
    stack = {p.package for p in code.packages}
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] in INSTALL_DIRS:
            name = parts[i + 1].removesuffix(".py")
            return ("stack" if name in stack else "installed"), name
    for part in parts[:-1]:
        if part in stack:
            return "stack", part
    for i, part in enumerate(parts[:-1]):
        if part.startswith("python") and i > 0 and parts[i - 1] in ("lib", "lib64") and part[6:7].isdecimal():
            return "stdlib", parts[i + 1].removesuffix(".py")
    return "program", _checkout_name(parts)


def _checkout_name(parts: list[str]) -> str:
    """A checkout's package (``…/sglang/python/sglang/srt/x.py`` → sglang, ``vllm-ascend/vllm_ascend/…``
    → vllm_ascend), else the script's name (``/usr/local/bin/vllm`` → vllm)."""
    dirs = parts[:-1]
    for i in range(1, len(dirs)):
        prev = dirs[i - 1].replace("-", "_")
        if dirs[i].isidentifier() and (prev == dirs[i] or prev in ("python", "src")):
            return dirs[i]
    return parts[-1].removesuffix(".py")


def _owner(frame: Frame, code: PythonCode, program: str | None) -> tuple[Owner, str]:
    kind, name = package_of(frame.path, code)
    if kind == "stack":
        row = next(p for p in code.packages if p.package == name)
        if row.stack_of and program not in row.stack_of:  # not plugged in: laid out as any package
            installed = any(d in frame.path.replace("\\", "/").split("/") for d in INSTALL_DIRS)
            kind = "installed" if installed else "program"
    if kind == "installed" and name == program:
        kind = "program"
    return kind, name


def _program(outer: list[Frame], inner: list[Frame], code: PythonCode) -> str | None:
    """The package of the outermost frame that is neither the standard library's nor the stack's."""
    for f in (*outer, *inner):
        kind, name = package_of(f.path, code)
        if kind == "stack":
            row = next(p for p in code.packages if p.package == name)
            if not row.stack_of:
                continue
        if kind in ("installed", "program", "stack"):
            return name
    return None


@cache
def _form_rx(rx: str) -> linre.LinearPattern:
    return linre.compile(rx, what="regex")


def _form(code: PythonCode, kind: str, message: str) -> tuple[PythonMessage, str] | None:
    """The table's form of ``message`` and the name it names (a class, a callee), or None."""
    for m in code.messages:
        if m.kind != kind:
            continue
        if m.regex is None:
            return m, ""
        found = _form_rx(m.regex).search(message)
        if found is not None:
            return m, found.group(1) if m.names != "nothing" else ""
    return None


def _stack_class(name: str, code: PythonCode) -> str | None:
    """The stack package whose class ``name`` is (``Tensor``, ``torch._C._OpNamespace``), or None."""
    parts = name.split(".")
    for p in code.packages:
        if parts[0] == p.package or any(x in p.classes for x in parts):
            return p.package
    return None


def read(
    code: PythonCode,
    inner_values: Mapping[str, Value],
    outer_values: Mapping[str, Value],
    exceptions: Mapping[str, Value],
    error_lines: Sequence[str] = (),
) -> Reading | None:
    """Whether the log's Python exception was raised in the program's own code (see the module);
    ``error_lines``: the lines of the log that look like errors (a traceback cut before its
    exception line is read only when nothing else in the log reports an error)."""
    inner = frames(inner_values)
    outer = frames(outer_values)
    program = _program(outer, inner, code)
    owned = [(f, *_owner(f, code, program)) for f in inner]
    raising = next(((f, k, n) for f, k, n in reversed(owned) if k not in ("stdlib", "unknown")), None)
    where = f" ({program})" if program else ""
    kinds = {m.kind for m in code.messages}
    last = next(
        ((v, val) for v, val in reversed(list(exceptions.items())) if v.partition("|")[0] in kinds), None
    )
    if last is None:
        if exceptions or raising is None or error_lines:
            return None
        shown = [(f, k) for f, k, _ in owned if k not in ("stdlib", "unknown")]
        if len(shown) < MIN_CUT_FRAMES or any(k != "program" for _, k in shown):
            return None
        f = raising[0]
        return Reading(
            "program-code-cut-traceback",
            "a traceback cut before its exception line",
            f"the program's own code{where}",
            f"{code.cut_traceback}; innermost frame {f.where}",
            (code.cut_traceback_source, code.layout_source),
            "derived:python:cut-traceback",
            f'File "{f.path}", line {f.line}, in {f.func}',
            1,
            (),
        )
    (value, v) = last
    kind, _, message = value.partition("|")
    found = _form(code, kind, message)
    if found is None:
        return None
    form, name = found
    if raising is not None and raising[1] != "program":
        return None  # raised in the stack's code, or in another installed package's
    basis: list[str] = []
    if raising is not None:
        basis.append(f"raised in {raising[0].where}, the program's own code{where}")
    if form.names == "class":
        if _stack_class(name, code) is not None:
            return None
        if name in code.builtin_types:
            if raising is None:
                return None
            basis.append(f"{name} is a Python built-in type")
        elif raising is None and not form.without_frames:
            return None
        else:
            basis.append(f"{name} is none of the NPU stack's classes nor a Python built-in type")
    elif form.names == "callee":
        if raising is None:
            return None
        parts = [p for p in name.split(".") if p != "<locals>"]
        funcs = {f.func for f, k, _ in owned if k == "program"}
        defined = [p for p in parts if p in funcs and not (p.startswith("__") and p.endswith("__"))]
        if _stack_class(name, code) is not None or not defined:
            return None
        basis.append(f"the callee {name}() is the program's own: its frames run {defined[0]}")
    elif raising is None:
        return None
    sources: tuple[str, ...] = (form.source,)
    if raising is not None:
        sources += ("py-traceback", code.layout_source)
    if form.names == "class" and name in code.builtin_types:
        sources += (code.builtin_source,)
    return Reading(
        f"program-code-{form.form}",
        f"{kind}: {message[:160]}",  # rendered with its component: "raised by the program's own code (…)"
        f"the program's own code{where}",
        f"{form.reading}: " + "; ".join(basis),
        sources,
        f"derived:python:{form.form}",
        v.line,
        v.count,
        form.supersedes if form.names == "callee" else (),
    )
