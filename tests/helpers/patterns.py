"""Every literal regular expression in the package, with how it is used (for tests/unit/test_linre.py)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

_CALLS = {"compile", "match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split"}
_MODE = {"match": "match", "fullmatch": "fullmatch"}  # everything else scans: search
_RANK = {"fullmatch": 0, "match": 1, "search": 2}


@dataclass(frozen=True)
class Found:
    where: str
    pattern: str
    flags: int
    mode: str


def _flags(node: ast.expr | None) -> int | None:
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
        return int(getattr(re, node.attr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        a, b = _flags(node.left), _flags(node.right)
        return None if a is None or b is None else a | b
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    return None


def _literal(node: ast.expr, consts: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left, consts), _literal(node.right, consts)
        return None if a is None or b is None else a + b
    return None


@cache
def literal_patterns(package: Path) -> tuple[tuple[Found, ...], tuple[str, ...]]:
    """(patterns found, calls whose pattern is not a literal: where they are)."""
    found: list[Found] = []
    dynamic: list[str] = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        nodes = list(ast.walk(tree))
        consts: dict[str, str] = {}
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = node.value
                if value is not None and len(targets) == 1 and isinstance(targets[0], ast.Name):
                    lit = _literal(value, consts)
                    if lit is not None:
                        consts[targets[0].id] = lit
        # how each module-level compiled name is used: NAME.match( / NAME.search( ...
        uses: dict[str, str] = {}
        for m in re.finditer(
            r"\b([A-Za-z_][A-Za-z0-9_]*)\.(fullmatch|match|search|findall|finditer|sub|subn|split)\(", source
        ):
            mode = _MODE.get(m.group(2), "search")
            prev = uses.get(m.group(1))
            if prev is None or _RANK[mode] > _RANK[prev]:
                uses[m.group(1)] = mode
        assigned = _assigned_names(nodes)
        for node in nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            f = node.func
            if not (isinstance(f.value, ast.Name) and f.value.id == "re" and f.attr in _CALLS):
                continue
            where = f"{rel}:{node.lineno}"
            if not node.args:
                continue
            pattern = _literal(node.args[0], consts)
            flag_node = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if flag_node is None:
                pos = 1 if f.attr == "compile" else {"sub": 4, "subn": 4, "split": 3}.get(f.attr, 2)
                flag_node = node.args[pos] if len(node.args) > pos else None
            flags = _flags(flag_node)
            if pattern is None or flags is None:
                dynamic.append(where)
                continue
            if f.attr == "compile":
                mode = "search"
                parent = assigned.get(id(node))
                if parent is not None and parent in uses:
                    mode = uses[parent]
            else:
                mode = _MODE.get(f.attr, "search")
            found.append(Found(where, pattern, flags, mode))
    return tuple(found), tuple(dynamic)


def _assigned_names(nodes: list[ast.AST]) -> dict[int, str]:
    """id(call) -> the name it is assigned to (``NAME = re.compile(...)``, ``self.NAME = ...``)."""
    out: dict[int, str] = {}
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                out[id(node.value)] = targets[0].id
            elif len(targets) == 1 and isinstance(targets[0], ast.Attribute):
                out[id(node.value)] = targets[0].attr
    return out
