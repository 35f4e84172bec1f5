"""GE's numeric status codes, read whole from the graph engine's headers into table ``ge-status`` of
``matrices/explain/libtables.yaml`` (docs/explain.md, "GE's numeric status codes").

GE returns a ``ge::Status`` (``uint32_t``) and logs it in decimal: ``Compile graph failed, error
code:1343225857``, ``Init plugin so failed, ret = 1343225860``, ATC's ``Unknown ATC error
code(1343266818)``. Each named status is built by a macro of GE's public headers, ``GE_ERRORNO(runtime,
type, level, sysid, modid, name, value, desc)`` (``api_error_codes.h`` of hicann/metadef: runtime << 30
| type << 28 | level << 25 | sysid << 17 | modid << 12 | value & 0xFFF), the module macros
``GE_ERRORNO_COMMON(name, value, desc)`` … ``GE_ERRORNO_GENERATOR`` (``error_codes_define.h``: each
fixes runtime, type, level, sysid and modid through the enums of the same header), and
``GE_ERRORNO_DEFINE(…, name, value)`` whose description ``GE_ERRORNO_EXTERNAL(name, desc)`` registers
elsewhere. This module expands those macros as the compiler does (the headers' own ``// 1343225857``
comments check it) and gives each row the file and line of its value.

Causes come only from a row's own description, reviewed per row (:data:`GE_CAUSES`): a parameter the
caller passed, an API called out of order → ``not-a-version-problem``; device memory → ``oom``; an
invalid device id → ``device-not-visible``; an operator kernel or kernel store GE cannot find → the
cause GE's own message for the same lookup gives (``ops-package-missing-or-wrong``, the runtime/GE
table's ``kernel-not-found`` rule). Every other status (internal steps: ``INTERNAL_ERROR``, ``Graph
prepare failed`` …) names none and still matches with GE's meaning.

    git --git-dir=GE_MIRROR archive COMMIT inc dflow/llm_datadist/v1 | tar -x -C /tmp/ge
    git --git-dir=METADEF_MIRROR archive COMMIT inc pkg_inc | tar -x -C /tmp/metadef
    python -m cannenv.explain.gestatus --import /tmp/ge /tmp/metadef [--write]

Without ``--write`` it prints the refresh diff (rows the table lacks, changed, gone; exit 1 while
there is something to review); ``--write`` replaces the table's rows in libtables.yaml.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cannenv import linre

TABLE_ID = "ge-status"
MAX_SOURCE_BYTES = 4 << 20

# (tree, path, source id); tree 0 = hicann/ge, 1 = hicann/metadef. The module macros and their enums
# are defined in the first file.
DEFINE_FILE = (1, "pkg_inc/common/ge_common/error_codes_define.h", "ge-status-define")
FILES = (
    (1, "inc/external/ge_common/api_error_codes.h", "ge-status-api"),
    DEFINE_FILE,
    (0, "inc/graph_metadef/common/ge_common/ge_inner_error_codes.h", "ge-status-inner"),
    (0, "dflow/llm_datadist/v1/llm_error_codes_v1.h", "ge-status-llm"),
)
# files that only register a description (GE_ERRORNO_EXTERNAL) for a value defined above
DESC_FILES = ((0, "dflow/llm_datadist/v1/llm_error_codes.cc"),)

_NP = "not-a-version-problem"
_CALLER = "the caller's own argument or call order, which no version changes"
# Reviewed per row from GE's own description of the status; a name absent here names no cause.
GE_CAUSES: dict[str, tuple[tuple[str, ...], str]] = {
    "PARAM_INVALID": (
        (_NP,),
        "GE's description 'Parameter invalid!': a check of the graph or the arguments failed",
    ),
    "UNSUPPORTED": ((_NP,), "GE's description 'Parameter unsupported!': a parameter the caller passed"),
    "PATH_INVALID": ((_NP,), "GE's description 'Path is invalid!': a path the caller passed"),
    "GE_CLI_GE_ALREADY_INITIALIZED": ((_NP,), f"'GE is already initialized.': {_CALLER}"),
    "GE_CLI_GE_NOT_INITIALIZED": ((_NP,), f"'GE is not yet initialized or is finalized.': {_CALLER}"),
    "GE_MULTI_INIT": ((_NP,), f"'Multiple initializations are not supported.': {_CALLER}"),
    "GE_FINALIZE_NOT_INIT": ((_NP,), f"'Finalize is not allowed before initialization.': {_CALLER}"),
    "GE_MULTI_FINALIZE": ((_NP,), f"'Multiple finalizations are not supported.': {_CALLER}"),
    "GE_SESS_ALREADY_RUNNING": ((_NP,), f"'Session already running,not support parallel run.': {_CALLER}"),
    "GE_SESS_GRAPH_NOT_EXIST": ((_NP,), f"'Graph ID does not exist.': {_CALLER}"),
    "GE_SESS_GRAPH_ALREADY_EXIST": ((_NP,), f"'Graph ID already exist.': {_CALLER}"),
    "GE_SESSION_NOT_EXIST": ((_NP,), f"'Cannot find session with specific session id.': {_CALLER}"),
    "GE_GRAPH_ALREADY_RUNNING": ((_NP,), f"'graph already running,not support parallel run.': {_CALLER}"),
    "GE_GRAPH_GRAPH_NOT_EXIST": ((_NP,), f"'graph ID does not exist.': {_CALLER}"),
    "GE_GRAPH_GRAPH_ALREADY_EXIST": ((_NP,), f"'Graph ID already exist.': {_CALLER}"),
    "GE_GRAPH_OPTIONS_INVALID": ((_NP,), f"'Client session options is invalid.': {_CALLER}"),
    "GE_GRAPH_NOT_BUILT": ((_NP,), f"'Graph is not compiled.': {_CALLER}"),
    "GE_GRAPH_REPEAT_OPERATION": ((_NP,), f"'Repeat operation is not allowed.': {_CALLER}"),
    "GE_EXEC_NOT_INIT": ((_NP,), f"'GE Executor is not yet initialized.': {_CALLER}"),
    "GE_EXEC_MODEL_PATH_INVALID": ((_NP,), f"'Model file path is invalid.': {_CALLER}"),
    "GE_EXEC_MODEL_ID_INVALID": ((_NP,), f"'Model id is invalid.': {_CALLER}"),
    "GE_EXEC_LOAD_MODEL_REPEATED": ((_NP,), f"'The model is loaded repeatedly.': {_CALLER}"),
    "LLM_PARAM_INVALID": (
        (_NP,),
        "GE's LLM-DataDist status 'parameter is invalid!': an argument the caller passed",
    ),
    "GE_RTI_DEVICE_ID_INVALID": (
        ("device-not-visible",),
        "GE's description 'device id is invalid' (as the runtime's 107001 ACL_ERROR_RT_INVALID_DEVICEID)",
    ),
    "GE_RTI_CALL_RUNTIME_MEM_ALLOC_DEVICE_FAILED": (
        ("oom",),
        "GE's description 'call runtime alloc device memory failed': the device's memory",
    ),
    "GE_EXEC_ALLOC_FEATURE_MAP_MEM_FAILED": (
        ("oom",),
        "GE's description 'Failed to allocate feature map memory.': the model's device memory",
    ),
    "GE_EXEC_ALLOC_WEIGHT_MEM_FAILED": (
        ("oom",),
        "GE's description 'Failed to allocate weight memory.': the model's device memory",
    ),
    "GE_EXEC_ALLOC_VAR_MEM_FAILED": (
        ("oom",),
        "GE's description 'Failed to allocate variable memory.': the model's device memory",
    ),
    "LLM_DEVICE_OUT_OF_MEMORY": (("oom",), "GE's LLM-DataDist status 'device out of memory!'"),
    "GE_OPS_KERNEL_INFO_NOT_EXIST": (
        ("ops-package-missing-or-wrong",),
        "GE's description 'OpsKernelInfo does not exist.': no operator kernel information for the node, "
        "the lookup GE's own message 'Cannot find any supported ops kernel info store' reports "
        "(rtge_messages.yaml, rule kernel-not-found)",
    ),
    "GE_OPS_KERNEL_STORE_NOT_EXIST": (
        ("ops-package-missing-or-wrong",),
        "GE's description 'OpsKernelInfoStore does not exist.': the operator kernel store is missing, "
        "as GE's own message 'Cannot find any supported ops kernel info store' (rule kernel-not-found)",
    ),
}
NO_CAUSE = (
    "GE's description names no cause by itself (an internal step, or a failure whose reason is "
    "elsewhere in the log)"
)

_CALL = re.compile(r"^[ \t]*(GE_ERRORNO(?:_[A-Z]+)?|LLM_ERRORNO_COMMON)\(", re.M)
# the headers are a vendor's artefact (hostile input): patterns with repeats that could share text run
# on RE2 (cannenv.linre), linear in the text whatever it holds
_MODULE_DEFINE = linre.compile(
    r"#define\s+(GE_ERRORNO_[A-Z]+|LLM_ERRORNO_COMMON)\(name, value, desc\)"
    r"\s*\\\s*GE_ERRORNO\(([^;]*?),\s*name,",
    what="GE_ERRORNO module macro",
)
_ENUM = linre.compile(r"enum\s+class\s+(\w+)\s*:\s*[\w:]+\s*\{([^}]*)\}", what="enum class")
_STRING = linre.compile(r'"((?:[^"\\]|\\.)*)"', what="string literal")
_CAST = linre.compile(r"static_cast<[\w:]+>\((.*)\)", what="static_cast")
_ENUMERATOR = linre.compile(r"(\w+)\s*=\s*(0[bBxX][0-9a-fA-F]+|\d+)", what="enumerator")
_COMMENT_VALUE = re.compile(r"//\s*(\d{6,10})\s*\Z")


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SOURCE_BYTES} bytes")
    return path.read_text(encoding="utf-8-sig")


def _args(text: str, start: int) -> tuple[list[str], int]:
    """The comma-separated arguments of the call whose '(' is at ``start`` (string literals kept
    whole, adjacent literals joined) and the index after its ')'."""
    args, cur, depth, i = [], [], 0, start
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i : j + 1])
            i = j + 1
            continue
        if ch == "(":
            depth += 1
            if depth > 1:
                cur.append(ch)
        elif ch == ")":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i + 1
            cur.append(ch)
        elif ch == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    raise ValueError("unbalanced call")


def _literal(arg: str) -> str:
    parts = [m.group(1) for m in _STRING.finditer(arg)]
    if not parts:
        raise ValueError(f"not a string literal: {arg!r}")
    return "".join(parts)


def _number(arg: str, symbols: dict[str, int]) -> int:
    arg = arg.strip().strip("()").strip()
    arg = _CAST.sub(r"\1", arg).strip()
    if arg in symbols:
        return symbols[arg]
    m = re.fullmatch(r"(0[bB][01]+|0[xX][0-9a-fA-F]+|\d+)[uU]?", arg)
    if m is None:
        raise ValueError(f"not a number: {arg!r}")
    return int(m.group(1), 0)


def compose(runtime: int, type_: int, level: int, sysid: int, modid: int, value: int) -> int:
    """GE_ERRORNO's value: runtime << 30 | type << 28 | level << 25 | sysid << 17 | modid << 12 |
    value & 0xFFF, each field masked with 0xFF, as uint32_t."""
    return (
        ((0xFF & runtime) << 30)
        | ((0xFF & type_) << 28)
        | ((0xFF & level) << 25)
        | ((0xFF & sysid) << 17)
        | ((0xFF & modid) << 12)
        | (0xFFF & value)
    ) & 0xFFFFFFFF


def read_rows(
    ge_tree: Path, metadef_tree: Path, causes_of: dict[str, tuple[tuple[str, ...], str]] | None = None
) -> list[dict[str, Any]]:
    """The rows of table ``ge-status``, ordered by value; each with the file and line of its value.
    Raises ValueError where a header's ``// value`` comment disagrees with the expansion, or where
    the review (``causes_of``, default :data:`GE_CAUSES`) names a status the headers lack."""
    review = GE_CAUSES if causes_of is None else causes_of
    trees = (ge_tree, metadef_tree)
    define_text = _read(trees[DEFINE_FILE[0]] / DEFINE_FILE[1])
    symbols: dict[str, int] = {}
    for e in _ENUM.finditer(define_text):
        enum, body = e.group(1), e.group(2)
        for v in _ENUMERATOR.finditer(body):
            name, value = v.group(1), v.group(2)
            symbols[f"ge::{enum}::{name}"] = int(value, 0)
    modules: dict[str, list[int]] = {}
    for d in _MODULE_DEFINE.finditer(define_text):
        macro, fields = d.group(1), d.group(2)
        parts = [p.strip() for p in fields.replace("\\", " ").split(",")]
        modules[macro] = [_number(p, symbols) for p in parts]
    if not modules:
        raise ValueError(f"{DEFINE_FILE[1]}: no module macro found")
    descs: dict[str, str] = {}
    found: list[tuple[str, int, str, int, str | None]] = []  # name, value, source, line, desc
    for tree, path, source in FILES:
        text = _read(trees[tree] / path)
        for m in _CALL.finditer(text):
            macro = m.group(1)
            if text[max(0, m.start() - 400) : m.start()].rstrip(" \t\n").endswith("\\"):
                continue  # a macro's body (a #define continued on this line), not a status
            args, _ = _args(text, m.end() - 1)
            line = text.count("\n", 0, m.start()) + 1
            if macro == "GE_ERRORNO_EXTERNAL":
                descs[args[0]] = _literal(args[1])
                continue
            if macro in ("GE_ERRORNO", "GE_ERRORNO_DEFINE"):
                fields = [_number(a, symbols) for a in args[:5]]
                name, value = args[5], _number(args[6], symbols)
                desc = _literal(args[7]) if macro == "GE_ERRORNO" else None
            elif macro in modules:
                fields = modules[macro]
                name, value, desc = args[0], _number(args[1], symbols), _literal(args[2])
            else:
                raise ValueError(f"{path}:{line}: unknown macro {macro}")
            code = compose(fields[0], fields[1], fields[2], fields[3], fields[4], value)
            end = text.find("\n", text.find(")", m.end()))
            said = _COMMENT_VALUE.search(text[m.start() : end if end >= 0 else len(text)])
            if said and int(said.group(1)) != code:
                raise ValueError(f"{path}:{line}: {name} computes {code}, the header says {said.group(1)}")
            found.append((name, code, source, line, desc))
    for tree, path in DESC_FILES:
        text = _read(trees[tree] / path)
        for m in re.finditer(r"GE_ERRORNO_EXTERNAL\(", text):
            args, _ = _args(text, m.end() - 1)
            descs.setdefault(args[0], _literal(args[1]))
    rows: dict[int, dict[str, Any]] = {}
    for name, code, source, line, desc in found:
        meaning = desc or descs.get(name) or f"{name} (GE_ERRORNO_DEFINE without a registered description)"
        causes, why = review.get(name, ((), ""))
        row = {
            "key": str(code),
            "name": name,
            "meaning": meaning,
            "causes": list(causes),
            "reason": why if causes else ("not an error (the success value)" if code == 0 else NO_CAUSE),
            "source": source,
            "line": line,
        }
        if code in rows:  # one value, two names (the headers define no such pair today)
            raise ValueError(f"{name} and {rows[code]['name']} are both {code}")
        rows[code] = row
    unknown = set(review) - {r["name"] for r in rows.values()}
    if unknown:
        raise ValueError(f"the review names statuses the headers lack: {sorted(unknown)}")
    return [rows[c] for c in sorted(rows)]


def main(argv: Sequence[str] | None = None) -> int:
    import yaml

    from cannenv.explain import libtables

    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    rest = [a for a in args if a != "--write"]
    if len(rest) != 3 or rest[0] != "--import":
        print(
            "usage: python -m cannenv.explain.gestatus --import GE_TREE METADEF_TREE [--write]",
            file=sys.stderr,
        )
        return 2
    table_file = libtables.shipped_path()
    raw = yaml.safe_load(table_file.read_text(encoding="utf-8"))
    old: list[dict[str, Any]] = next((t for t in raw["tables"] if t["id"] == TABLE_ID), {"rows": []})["rows"]
    new = read_rows(Path(rest[1]), Path(rest[2]))
    d = libtables.diff_rows(old, new)
    if write:
        libtables.write_rows(table_file, TABLE_ID, new)
    print(
        f"# {TABLE_ID}: {len(new)} rows ({len(old)} in the table): "
        + ", ".join(f"{len(d[w])} {w}" for w in ("lacks", "changed", "gone"))
    )
    print(yaml.safe_dump(d, sort_keys=False, width=200, allow_unicode=True), end="")
    return 1 if any(d.values()) and not write else 0


if __name__ == "__main__":
    raise SystemExit(main())
