"""The speed-ups keep answers exact: the validated-matrix cache, the JSON fast path, lazy CLI loading.

No timings here (those live in benchmarks/); these tests prove the fast paths give the same answers
as the slow ones and fall back silently when their shortcut is unusable.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.utils import canonicalize_name as packaging_canonicalize

from cannenv import matrix, values
from cannenv.cli import FAMILIES
from cannenv.resources import matrices_dir
from cannenv.versions import canonicalize_name

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv("CANNENV_CACHE_DIR", str(where))
    monkeypatch.delenv("CANNENV_NO_CACHE", raising=False)
    return where


def _copy_shipped(dest: Path) -> Path:
    dest.mkdir()
    for f in matrix._matrix_files([matrices_dir()]):
        (dest / f.name).write_bytes(f.read_bytes())
    return dest


def test_cache_hit_gives_the_same_matrix(cache: Path) -> None:
    files = matrix._matrix_files([matrices_dir()])
    fresh = matrix.load_files(files, use_cache=False)
    assert not cache.exists() or not list(cache.glob("matrix-*.pickle"))
    first = matrix.load_files(files)  # miss: validates, then writes the cache
    assert len(list(cache.glob("matrix-*.pickle"))) == 1
    again = matrix.load_files(files)  # hit
    assert again is not first
    assert again.digest == first.digest == fresh.digest
    assert again.stacks == fresh.stacks and again.hdk == fresh.hdk and again.files == fresh.files
    assert again.lint_problems() == fresh.lint_problems()


def test_cache_key_covers_the_content(cache: Path, tmp_path: Path) -> None:
    d = _copy_shipped(tmp_path / "m")
    before = matrix.load([d])
    stacks = d / "stacks.yaml"
    text = stacks.read_text(encoding="utf-8")
    assert "status: published" in text
    stacks.write_text(text.replace("status: published", "status: deprecated", 1), encoding="utf-8")
    after = matrix.load([d])  # same names, different bytes: a new key, validated afresh
    assert after.digest != before.digest
    assert [s.status for s in after.stacks] != [s.status for s in before.stacks]
    # a broken edit is reported, never answered from the cache of the valid content
    stacks.write_text(text.replace("status: published", "status: bogus", 1), encoding="utf-8")
    with pytest.raises(matrix.MatrixError):
        matrix.load([d])


def test_corrupt_or_foreign_cache_is_ignored(cache: Path) -> None:
    files = matrix._matrix_files([matrices_dir()])
    good = matrix.load_files(files)
    (entry,) = cache.glob("matrix-*.pickle")
    entry.write_bytes(b"not a pickle")
    assert matrix.load_files(files).digest == good.digest
    entry.write_bytes(pickle.dumps({"not": "a matrix"}))
    assert matrix.load_files(files).digest == good.digest


def test_unwritable_cache_and_switch_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("CANNENV_CACHE_DIR", str(blocker / "cache"))  # a folder under a file
    files = matrix._matrix_files([matrices_dir()])
    assert matrix.load_files(files).stacks
    monkeypatch.setenv("CANNENV_CACHE_DIR", str(tmp_path / "c2"))
    monkeypatch.setenv("CANNENV_NO_CACHE", "1")
    assert matrix.cache_dir() is None
    assert matrix.load_files(files).stacks
    assert not (tmp_path / "c2").exists()


def test_json_fast_path_keeps_entry_labels(cache: Path, tmp_path: Path) -> None:
    d = _copy_shipped(tmp_path / "m")
    base = matrix.load([d])
    stacks: list[dict[str, Any]] = [values.dump(s, exclude_none=True) for s in base.stacks]
    doc = {"schema_version": 1, "stacks": stacks}
    (d / "stacks.yaml").unlink()
    (d / "stacks.json").write_text(json.dumps(doc))
    assert matrix.load([d]).stacks == base.stacks  # valid JSON: validated straight from bytes
    first = stacks[0]
    first["sources"] = ["NO-SUCH-SOURCE"]
    (d / "stacks.json").write_text(json.dumps(doc))
    with pytest.raises(matrix.MatrixError) as err:
        matrix.load([d])
    (problem,) = err.value.problems
    assert problem.entry == f"stacks[0] (id {first['id']})" and "NO-SUCH-SOURCE" in problem.message
    first["status"] = "bogus"  # schema error: same report as the python-object path gives
    (d / "stacks.json").write_text(json.dumps(doc))
    with pytest.raises(matrix.MatrixError) as err:
        matrix.load([d])
    assert any(p.entry and p.entry.startswith("stacks[0]") and p.path == "status" for p in err.value.problems)


def test_every_family_command_is_listed_once() -> None:
    names: list[str] = []
    for family in FAMILIES:
        module = importlib.import_module(f"cannenv.commands.{family}")
        names.extend(c.name or "" for c in module.COMMANDS)
    assert len(names) == len(set(names)), "a command name is defined by two families"
    proc = subprocess.run(
        [sys.executable, "-m", "cannenv", "--help"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0
    listed = proc.stdout.split("Commands:", 1)[1]
    for name in names:
        assert f"\n  {name} " in listed, name


def test_doctor_imports_only_its_family() -> None:
    code = (
        "import sys\n"
        "sys.argv=['cannenv','doctor','--list']\n"
        "from cannenv.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('cannenv.commands.'))\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO)}
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120
    )
    # commands.options holds the options families share (no family of its own; click only)
    assert "LOADED ['cannenv.commands.doctor', 'cannenv.commands.options']" in p.stderr, p.stderr[-2000:]


@given(st.text(alphabet="abcXYZ019-_.", min_size=1, max_size=20))
def test_canonicalize_name_matches_packaging(name: str) -> None:
    assert canonicalize_name(name) == packaging_canonicalize(name)


def test_hardware_table_from_the_matrix_cache_is_the_yaml_one(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from cannenv import soc

    doc = yaml.safe_load((matrices_dir() / "socs.yaml").read_text(encoding="utf-8"))
    from_yaml = values.validate(soc.Hardware, doc["hardware"])
    monkeypatch.setattr(matrix.loader, "_SHIPPED", {})
    soc._hardware.cache_clear()
    try:
        assert matrix.shipped_if_cached() is None  # cold cache: never validates on its own
        assert soc.hardware() == from_yaml  # ... and the table is read from socs.yaml
        soc._hardware.cache_clear()
        matrix.load_files(matrix._matrix_files([matrices_dir()]))  # fills the cache
        hit = matrix.shipped_if_cached()
        assert hit is not None and matrix.load() is hit  # kept: a later load() reuses it
        assert soc.hardware() == from_yaml
        assert soc.hardware() is next(p.hardware for p in hit.parts if p.hardware is not None)
    finally:
        soc._hardware.cache_clear()


def test_warm_matrix_and_hardware_import_no_pydantic(tmp_path: Path) -> None:
    """The matrix and SoC types are plain dataclasses: pydantic and YAML are imported to validate
    files (a cold cache), never to answer from the validated-matrix cache."""
    code = (
        "import sys\n"
        "import cannenv.matrix, cannenv.soc\n"
        "assert 'pydantic' not in sys.modules, 'importing cannenv.matrix/soc imported pydantic'\n"
        "m = cannenv.matrix.load()\n"
        "hw = cannenv.soc.hardware()\n"
        "print('PYDANTIC', 'pydantic' in sys.modules, len(m.stacks), len(hw.socs), m.digest)\n"
        "print('YAML', 'yaml' in sys.modules, file=sys.stderr)\n"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(REPO),
        "CANNENV_CACHE_DIR": str(tmp_path / "cache"),
    }
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env, timeout=120
        )
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    assert len(list((tmp_path / "cache").glob("matrix-*.pickle"))) == 1
    cold, warm = (r.stdout.split() for r in runs)
    assert cold[:2] == ["PYDANTIC", "True"]  # cold: the files are validated
    assert warm[:2] == ["PYDANTIC", "False"], runs[1].stdout  # warm: unpickled only
    assert warm[2:] == cold[2:]  # same stacks, SoCs and digest
    assert "YAML True" in runs[0].stderr and "YAML False" in runs[1].stderr  # warm: no YAML parser either


def test_warm_doctor_imports_no_yaml(cache: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO))
    try:
        from tests.helpers.hosts import a2_cann85_new
    finally:
        sys.path.remove(str(REPO))
    tree = a2_cann85_new(tmp_path / "tree")
    env_file = tree.env_file(tmp_path / "host.env")
    code = (
        "import sys\n"
        "from cannenv.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('YAML', 'yaml' in sys.modules, file=sys.stderr)\n"
    )
    argv = ["doctor", "--json", "--root", str(tree.root), "--env-file", str(env_file)]
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "CANNENV_CACHE_DIR": str(cache)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", code, *argv],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=120,
        )
        for _ in range(2)
    ]
    assert "YAML True" in runs[0].stderr, runs[0].stderr[-2000:]  # cold: the matrix is parsed
    assert "YAML False" in runs[1].stderr, runs[1].stderr[-2000:]  # warm: cache only
    first, second = (json.loads(r.stdout) for r in runs)
    assert first == second


def test_probes_beside_give_the_facts_of_a_one_by_one_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sys.path.insert(0, str(REPO))
    try:
        from tests.helpers.hosts import a2_cann85_new
    finally:
        sys.path.remove(str(REPO))
    from cannenv import probes
    from cannenv.host import Host

    tree = a2_cann85_new(tmp_path / "tree")
    (tree.root / "etc" / "os-release").write_bytes(b"\x00\x01binary")  # an issue from a threaded probe
    (tree.root / "usr/local/Ascend/driver/version.info").write_text("")  # ... and from one in order
    host = Host(tree.root, dict(tree.env), True, 5.0)
    assert {"os", "npu", "python"} <= probes.BESIDE
    threaded = probes.collect(host)
    monkeypatch.setattr(probes, "BESIDE", frozenset())
    in_order = probes.collect(host)
    kinds = [(i.probe, i.kind) for i in in_order.issues]
    assert ("os", "binary") in kinds and ("driver", "empty") in kinds

    def timeless(facts: Any) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(facts.to_json())
        out["collected_at"] = ""
        out["devices"]["npu_smi"]["duration_s"] = 0.0  # how long npu-smi took differs run to run
        return out

    assert timeless(threaded) == timeless(in_order)
    assert [(i.probe, i.kind, i.path) for i in threaded.issues] == [
        (i.probe, i.kind, i.path) for i in in_order.issues
    ]
    assert threaded.devices.chips and threaded.python.packages  # the threaded probes did their work


def test_warm_explain_imports_its_own_modules_only(cache: Path, tmp_path: Path) -> None:
    """`cannenv explain` on a short log with host facts (issue 29): on a warm cache it imports the
    doctor's modules plus explain's own (the anchors' automaton, and RE2 for the patterns the log's
    anchors select) — no pydantic, YAML, rich, jinja2, the demangler, torch or docker; the pydantic
    models of the signature files only on a cold cache. No timings here: bench_explain.py measures
    the cost."""
    host = REPO / "examples" / "hosts" / "broken-kernels-wrong-chip"
    log = tmp_path / "1k.log"
    log.write_bytes((REPO / "tests" / "data" / "errors" / "va-5695-561103.txt").read_bytes())
    code = (
        "import sys\n"
        "from cannenv.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    common = ["--root", str(host / "tree"), "--env-file", str(host / "host.env"), "--json"]
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO), "CANNENV_CACHE_DIR": str(cache)}

    def run(*argv: str) -> tuple[set[str], str]:
        p = subprocess.run(
            [sys.executable, "-c", code, *argv],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=120,
        )
        assert "MODULES" in p.stderr, p.stderr[-2000:]
        return set(p.stderr.rsplit("MODULES", 1)[1].split()), p.stdout

    cold, cold_out = run("explain", *common, "--log", str(log))
    warm, warm_out = run("explain", *common, "--log", str(log))
    doctor, _ = run("doctor", *common)
    assert json.loads(cold_out) == json.loads(warm_out)  # the same answer from the cache
    assert json.loads(warm_out)["matches"][0]["signature"] == "ops-561103"
    assert "cannenv.explain.models" in cold and "pydantic" in cold  # cold: the files are validated
    beyond = sorted(m for m in warm - doctor if m.split(".")[0] not in ("re2", "ahocorasick_rs"))
    assert beyond == [
        "cannenv.commands.explain",
        "cannenv.explain",
        "cannenv.explain.inputs",
        "cannenv.explain.judge",
        "cannenv.explain.knowledge",
        "cannenv.explain.lazy",  # the cached table's large parts, unpickled on first use
        # not cannenv.explain.parts nor .logsource: the parts this log does not read (docs/performance.md)
        "cannenv.explain.render",
        "cannenv.explain.rules",
        "cannenv.explain.scan",
        "cannenv.explain.signatures",
        "cannenv.linre",
        "cannenv.progress",
        "mmap",  # the cached table's file is mapped: a lazy part's pages are read when it is used
    ], beyond
    # the anchors' one-pass automaton (a core dependency) is for inputs over 16 KiB: a short log
    # is searched with one bytes.find per anchor and never imports it; the doctor never does
    assert not [m for m in warm | doctor if m.startswith("ahocorasick")]
    # the linear engine, for the few patterns whose anchor the log contains (when it is installed)
    assert ("re2" in warm) == (importlib.util.find_spec("re2") is not None)
    heavy = ("pydantic", "yaml", "rich", "jinja2", "itanium_demangler", "torch", "docker", "xml")
    assert not [m for m in warm if m.split(".")[0] in heavy or m == "cannenv.explain.models"]
    assert sorted(m for m in warm if m.startswith("cannenv.commands.")) == [
        "cannenv.commands.explain",
        "cannenv.commands.options",
    ]
