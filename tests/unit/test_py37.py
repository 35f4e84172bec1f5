"""The facts path stays runnable on Python 3.7: the fleet bundle runs it on the hosts' own Pythons.

Kylin V10 ships 3.7, Ubuntu 20.04 3.8, openEuler 22.03 LTS 3.9 (issue 15). The package needs 3.10,
but every module ``cannenv facts`` imports -- at import time and inside the functions a real
collection calls -- must not need more than 3.7. Two tools check that here, over the very files
(found by importing and running the facts path in a fresh interpreter, not by a hand-kept list):

* vermin (PyPI, made for this), with ``--target=3.7-`` and ``--violations``: syntax (walrus,
  ``match``, positional-only parameters), standard-library modules, members and keyword arguments
  newer than 3.7. A guarded line says so with ``# novm`` (a version test or ``TYPE_CHECKING``).
* an AST walk for what vermin cannot see without also flagging every annotation (which
  ``from __future__ import annotations`` leaves unevaluated): ``list[int]``-style subscripts of
  builtins and ``X | Y`` of types evaluated at run time.

The bundle tests (test_fleet_bundle.py) then run the real bundle on real 3.7-3.13 interpreters.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import HostSpec, build_tree

from cannenv.fleet import zipapp

ROOT = Path(__file__).resolve().parents[2]
TARGET = "3.7"

# Imports the bundle's entry modules, then collects facts from a fixture tree and from this live
# machine (the probes import more inside their functions), then prints every loaded file.
_RUN_FACTS_PATH = r"""
import json, sys
from cannenv.gather import gather
tree = sys.argv[1]
gather(tree, None, None, (), None, 5.0)
gather("/", None, None, (), None, 5.0)
print(json.dumps(sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""})))
"""


def _facts_path_files(tmp_path: Path) -> list[Path]:
    tree = build_tree(HostSpec("py37"), tmp_path / "tree")
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_FACTS_PATH, str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    package = ROOT / "cannenv"
    ran = {Path(f) for f in json.loads(proc.stdout.strip().splitlines()[-1])}
    static = set(zipapp.facts_path_sources())
    files = sorted(f for f in ran | static if f.suffix == ".py" and f.resolve().is_relative_to(package))
    assert package / "gather.py" in files and package / "probes" / "toolkit.py" in files
    return files


@pytest.fixture(scope="module")
def facts_path(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _facts_path_files(tmp_path_factory.mktemp("py37"))


# vermin reports ``x: Literal[...]``/``x: Final[...]`` variable annotations as 3.8 even when they are
# never evaluated; every file here has ``from __future__ import annotations`` (asserted), so they are.
_UNEVALUATED = ("literal variable annotations", "final variable annotations")


def test_the_facts_path_needs_nothing_newer_than_python_3_7(facts_path: list[Path], tmp_path: Path) -> None:
    pytest.importorskip("vermin", reason="vermin is not installed: pip install -e '.[test]'")
    main = tmp_path / "bundle_main.py"
    main.write_text(zipapp.render_main([]))
    texts = {f: f.read_text(encoding="utf-8") for f in facts_path}
    lazy = [
        f
        for f, text in texts.items()
        if ("Literal[" in text or "Final[" in text) and "from __future__ import annotations" not in text
    ]
    assert lazy == [], "these modules evaluate their annotations; add `from __future__ import annotations`"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", f"--target={TARGET}-"]
        + ["--violations", "--format", "parsable"]
        + [str(f) for f in [*facts_path, main]],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.stderr == "" and proc.stdout.strip(), proc.stderr
    found = [
        line
        for line in proc.stdout.splitlines()
        if line.split(":")[0] and not line.endswith(":") and not line.endswith(_UNEVALUATED)
    ]
    assert found == [], (
        f"code on the `cannenv facts` path (the fleet bundle, host Pythons >= {TARGET}) needs a newer "
        "Python (file:line:column:py2:py3:feature):\n" + "\n".join(found)
    )


_GENERIC_BUILTINS = frozenset({"list", "dict", "tuple", "set", "frozenset", "type"})
_TYPE_NAMES = _GENERIC_BUILTINS | {"str", "int", "float", "bool", "bytes", "object"}


def _guarded(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` or ``if sys.version_info >= (3, N):``: not run on the old Pythons."""
    if isinstance(test, ast.Name | ast.Attribute) and ast.unparse(test).endswith("TYPE_CHECKING"):
        return True
    return isinstance(test, ast.Compare) and ast.unparse(test.left) == "sys.version_info"


def runtime_typing_problems(source: str) -> list[tuple[int, str]]:
    """(line, problem) for ``list[int]`` and ``int | None`` evaluated at run time (not annotations)."""
    out: list[tuple[int, str]] = []

    def typeish(node: ast.expr | None) -> bool:
        return (
            (isinstance(node, ast.Constant) and node.value is None)
            or (isinstance(node, ast.Name) and node.id in _TYPE_NAMES)
            or isinstance(node, ast.Subscript)
        )

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _guarded(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.AnnAssign):  # the annotation is never evaluated; the value is
            if node.value is not None:
                visit(node.value)
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defaults = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            for child in [*node.decorator_list, *defaults, *node.body]:
                visit(child)
            return
        name = node.value.id if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) else ""
        if name in _GENERIC_BUILTINS:
            out.append((getattr(node, "lineno", 0), f"{name}[...] evaluated at run time needs Python 3.9"))
        is_or = isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr)
        if is_or and isinstance(node, ast.BinOp) and (typeish(node.left) or typeish(node.right)):
            out.append((node.lineno, "`X | Y` of types evaluated at run time needs Python 3.10"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return out


def test_no_new_style_types_are_evaluated_on_the_facts_path(facts_path: list[Path]) -> None:
    problems = [
        f"{f.relative_to(ROOT)}:{line}: {what}"
        for f in facts_path
        for line, what in runtime_typing_problems(f.read_text(encoding="utf-8"))
    ]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        ("X = list[int]\n", [1]),
        ("Y = int | None\n", [1]),
        ("ok = isinstance(v, str | int)\n", [1]),
        ("flags = 1 | 2\n", []),
        ("from __future__ import annotations\nx: list[int] | None = None\n", []),
        ("def f(a: dict[str, int]) -> tuple[int, ...]:\n    return (1,)\n", []),
        ("if TYPE_CHECKING:\n    A = list[int]\n", []),
        ("import sys\nif sys.version_info >= (3, 10):\n    A = int | str\nelse:\n    B = list[int]\n", [5]),
    ],
)
def test_the_ast_walk_finds_what_it_should(source: str, lines: list[int]) -> None:
    assert [line for line, _ in runtime_typing_problems(source)] == lines
