"""The fleet bundle is pure Python: one file for every Python >= 3.7, machine and libc.

Builds the real bundle from this cannenv and runs it with the real interpreters of other versions
this machine has (pyenv's 3.7-3.13 here; 2.7 and 3.6 for the refusal). A test skips, with the
reason, when an interpreter is absent. The guard against native code on the facts path is shown
with a real native module (pydantic_core, a dependency of cannenv).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import HostSpec, build_tree

from cannenv.errors import ExternalError
from cannenv.facts import Facts
from cannenv.fleet import zipapp
from cannenv.fleet.zipapp import (
    BUNDLE_TAG,
    ENTRY_MODULES,
    LAZY_MODULES,
    MIN_PYTHON,
    NativeModuleError,
    build_bundle,
    discover_modules,
)

ELF_MAGIC = b"\x7fELF"


def _interpreter(major: int, minor: int) -> tuple[str, str] | None:
    """A real, working Python <major>.<minor> on this machine (pyenv's or on PATH) and its version."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    name = f"python{major}.{minor}"
    candidates = [str(p) for p in sorted(root.glob(f"{major}.{minor}.*/bin/{name}"))]
    candidates += [p for p in [shutil.which(name)] if p and "shims" not in p]
    probe_code = (
        "import platform, sys; "
        "sys.stdout.write('%d.%d %s' % (sys.version_info[:2] + (platform.python_version(),)))"
    )
    for cand in candidates:
        probe = subprocess.run(
            [cand, "-c", probe_code], capture_output=True, text=True, timeout=30, check=False
        )
        short, _, full = probe.stdout.partition(" ")
        if probe.returncode == 0 and short == f"{major}.{minor}":
            return cand, full
    return None


def _run(
    python: str, bundle: Path, *args: str, cache: Path, isolate: str = "-I"
) -> subprocess.CompletedProcess[str]:
    """Run the bundle with site-packages off (``-S``) and nothing from the environment."""
    return subprocess.run(
        [python, isolate, "-S", str(bundle), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "CANNENV_BUNDLE_CACHE": str(cache)},
        cwd=bundle.parent,
        check=False,
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> zipapp.Bundle:
    return build_bundle(tmp_path_factory.mktemp("bundle") / "cannenv.pyz")


# ------------------------------------------------------------------ layout


def test_the_bundle_carries_no_native_extension_file(bundle: zipapp.Bundle) -> None:
    with zipfile.ZipFile(bundle.path) as zf:
        entries = {name: zf.read(name) for name in zf.namelist()}
    assert [n for n in entries if zipapp._NATIVE_FILE.search(n)] == []
    assert [n for n in entries if n.endswith((".so", ".pyd", ".dylib")) or ".so." in n] == []
    assert [n for n, data in entries.items() if data.startswith(ELF_MAGIC)] == []  # not even renamed
    assert [n for n in entries if n.endswith((".pyc", ".pyi"))] == []


def test_layout_is_main_plus_pure_python_sources(bundle: zipapp.Bundle) -> None:
    with zipfile.ZipFile(bundle.path) as zf:
        names = zf.namelist()
        main = zf.read("__main__.py").decode()
    assert names[0] == "__main__.py" and all(n.startswith("site/") for n in names[1:])
    assert names[1:] == sorted(names[1:]) and len(names) == len(set(names)) == bundle.files
    assert "cannenv" in bundle.modules
    # click (8.2+ needs 3.10), YAML and pydantic are not on the facts path: the bundle's entry is
    # cannenv.gather.bundle_main (argparse) and the SoC table travels as validated JSON
    assert not {"click", "yaml", "pydantic", "pydantic_core", "torch", "docker"} & set(bundle.modules)
    assert not [n for n in names if n.startswith(("site/pydantic/", "site/pydantic_core/"))]
    assert "site/cannenv/gather.py" in names and "site/cannenv/values.py" in names
    assert "site/cannenv/_data/matrices/stacks.yaml" in names and "site/cannenv/_data/hardware.json" in names
    # explain's tables (signatures, the vendors' message tables) are the controller's, never the host's
    assert not [n for n in names if n.startswith("site/cannenv/_data/matrices/explain/")]
    assert f"MIN_PYTHON = {MIN_PYTHON!r}" in main and "@DIGEST@" not in main
    assert bundle.tag == BUNDLE_TAG == "py3-none-any"
    assert bundle.size == bundle.path.stat().st_size < 2_000_000


def test_deterministic_and_cached_by_content(tmp_path: Path, bundle: zipapp.Bundle) -> None:
    again = build_bundle(tmp_path / "again.pyz")
    assert again.path.read_bytes() == bundle.path.read_bytes()
    cached = build_bundle(None)
    assert cached.sha256 == bundle.sha256
    root = zipapp.cache_root()
    assert root is not None and cached.path.is_relative_to(root / "bundles")
    stamp = cached.path.stat().st_ino
    assert build_bundle(None).path == cached.path and cached.path.stat().st_ino == stamp  # not rewritten


# ------------------------------------------------------------------ the guard against native code


def test_a_native_module_without_fallback_stops_the_build(tmp_path: Path) -> None:
    """pydantic needs pydantic_core's native core: were it on the facts path, no bundle is made."""
    out = tmp_path / "b.pyz"
    with pytest.raises(NativeModuleError) as info:
        build_bundle(out, entry_modules=(*ENTRY_MODULES, "pydantic"))
    err = info.value
    assert isinstance(err, ExternalError)
    assert "pydantic_core._pydantic_core (" in str(err) and "imported by pydantic" in str(err)
    assert err.hint is not None and err.hint.startswith("pydantic_core._pydantic_core: native code")
    assert not out.exists()


def test_a_lazy_module_that_needs_native_code_stops_it_too() -> None:
    with pytest.raises(NativeModuleError, match=r"imported by pydantic$"):
        discover_modules(lazy_modules=(*LAZY_MODULES, "pydantic"))


def test_a_native_speed_up_with_a_fallback_is_no_error() -> None:
    """PyYAML imports its libyaml binding when it can and falls back to pure Python when it cannot."""
    found = discover_modules(("cannenv.cli",), ("yaml", "no_such_module_here"))
    assert "yaml" in found and "no_such_module_here" not in found


def test_an_entry_module_that_cannot_be_imported_is_an_external_error() -> None:
    with pytest.raises(ExternalError) as info:
        discover_modules(("cannenv.cli", "no_such_module_here"))
    assert not isinstance(info.value, NativeModuleError)
    assert "no_such_module_here: ModuleNotFoundError" in str(info.value)


# ------------------------------------------------------------------ the CLI


def test_fleet_bundle_cli(tmp_path: Path, bundle: zipapp.Bundle) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cannenv", "fleet", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    out = tmp_path / "cli.pyz"
    proc = cli("bundle", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"{out}  {bundle.size} bytes  {bundle.files} files  sha256 {bundle.sha256}" in proc.stdout
    assert "runs on: Python >= 3.7, any machine and libc (pure Python)" in proc.stdout
    assert out.read_bytes() == bundle.path.read_bytes()
    for removed in ("--target", "--wheelhouse"):  # per-tag native modules are gone, and their options
        proc = cli("bundle", "--out", str(out), removed, "x")
        assert proc.returncode == 2 and f"No such option '{removed}'" in proc.stderr
        proc = cli("collect", "-i", "inventory.ini", removed, "x")
        assert proc.returncode == 2 and f"No such option '{removed}'" in proc.stderr


# ------------------------------------------------------------------ real Pythons run the one bundle


@pytest.mark.parametrize("minor", [7, 8, 9, 10, 11, 12, 13])
def test_every_python_from_3_7_collects_facts_with_the_same_bundle(
    tmp_path: Path, bundle: zipapp.Bundle, minor: int
) -> None:
    found = _interpreter(3, minor)
    if found is None:
        pytest.skip(f"no Python 3.{minor} on this machine")
    python, _ = found
    root = build_tree(HostSpec("x"), tmp_path / "tree")
    cache = tmp_path / "cache"
    proc = _run(python, bundle.path, "facts", "--json", "--root", str(root), cache=cache)
    assert proc.returncode == 0, proc.stderr
    facts = Facts.from_json(proc.stdout)
    assert facts.driver is not None and facts.driver.version == "25.0.rc1.1"
    assert facts.cann.active == "/usr/local/Ascend/ascend-toolkit/8.2.RC1" and facts.issues == ()
    (extracted,) = cache.iterdir()  # one directory per content digest, whatever the Python
    assert (extracted / ".complete").is_file() and (extracted / "site" / "cannenv" / "gather.py").is_file()
    assert not [p for p in extracted.rglob("*") if p.suffix in (".so", ".pyd")]
    # this live machine, through the host's own interpreter: its packages are read on every Python
    # (3.7 has no importlib.metadata: dist-info files are read by hand there)
    live = _run(python, bundle.path, "facts", "--json", cache=cache)
    assert live.returncode == 0, live.stderr
    mine = Facts.from_json(live.stdout).python
    assert mine.source == "interpreter" and (mine.version or "").startswith(f"3.{minor}.")
    if "pip" in mine.packages:
        assert mine.packages["pip"][0].isdigit()


@pytest.mark.parametrize(("major", "minor"), [(2, 7), (3, 6)])
def test_an_older_python_is_told_what_it_needs(
    tmp_path: Path, bundle: zipapp.Bundle, major: int, minor: int
) -> None:
    found = _interpreter(major, minor)
    if found is None:
        pytest.skip(f"no Python {major}.{minor} on this machine")
    python, version = found
    cache = tmp_path / "cache"
    proc = _run(python, bundle.path, "facts", "--json", cache=cache, isolate="-E")  # 2.7 has no -I
    assert proc.returncode == 3
    assert proc.stderr == (
        f"cannenv-bundle: python-mismatch: the host runs CPython {version} ({python}); "
        "cannenv needs Python >= 3.7: install a newer python3 there\n"
    )
    assert proc.stdout == "" and not cache.exists()  # refused before anything is extracted


def test_the_bundle_runs_only_facts(tmp_path: Path, bundle: zipapp.Bundle) -> None:
    """It carries what `facts` imports; any other command is refused up front, not half run."""
    cache = tmp_path / "cache"
    proc = _run(sys.executable, bundle.path, "--debug", "doctor", "--json", cache=cache)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr == (
        "cannenv-bundle: unsupported-command: this bundle runs only `facts` (what `cannenv fleet "
        "collect` needs), not `doctor`: install cannenv (pip install cannenv) to run it\n"
    )
    assert not cache.exists()
    proc = _run(sys.executable, bundle.path, "--version", cache=cache)
    assert proc.returncode == 0 and "cannenv" in proc.stdout


# ------------------------------------------------------------------ the role on old host Pythons


@pytest.mark.parametrize("minor", [7, 8])
def test_the_role_with_an_old_host_python(tmp_path: Path, bundle: zipapp.Bundle, minor: int) -> None:
    """The collect role run by real ansible-playbook (local connection) with the host's Python 3.8:
    facts collected by the bundle; with 3.7 a clear `python-mismatch`, because this controller's
    ansible-core (>= 2.18) cannot run its own modules there (the bundle could)."""
    playbook_cli = shutil.which("ansible-playbook")
    if playbook_cli is None:
        pytest.skip("ansible-playbook is not installed (pip install 'cannenv[fleet]')")
    found = _interpreter(3, minor)
    if found is None:
        pytest.skip(f"no Python 3.{minor} on this machine")
    python, _ = found
    import json

    inventory = tmp_path / "hosts.ini"
    inventory.write_text("old-host ansible_connection=local\n")
    extra = {
        "cannenv_facts_python_candidates": [python],
        "cannenv_facts_bundle": str(bundle.path),
        "cannenv_facts_dest": str(tmp_path / "facts"),
        "cannenv_facts_login_shell": False,
    }
    playbook = Path(__file__).resolve().parents[2] / "ansible" / "playbooks" / "collect_facts.yml"
    run = subprocess.run(
        [playbook_cli, "-i", str(inventory), str(playbook), "-e", json.dumps(extra)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
    )
    import ansible.release

    old_ansible = tuple(int(x) for x in ansible.release.__version__.split(".")[:2]) < (2, 18)
    if minor == 7 and not old_ansible:
        assert run.returncode != 0
        assert "cannenv-fleet: python-mismatch: the host's Python is 3.7" in run.stdout
        assert not (tmp_path / "facts").exists()
        return
    assert run.returncode == 0, run.stdout[-3000:]
    facts = Facts.from_json((tmp_path / "facts" / "old-host.json").read_text())
    assert (facts.python.version or "").startswith(f"3.{minor}.") and facts.python.interpreter == python


def test_the_role_passes_facts_args_after_the_facts_command(tmp_path: Path, bundle: zipapp.Bundle) -> None:
    """`fleet collect --facts-arg=--multinode` (README, docs/multinode.md) and `--facts-arg=--root=…`
    reach `cannenv facts`: they go after `facts --json`, not before the subcommand (where the bundle's
    parser refused them: "unrecognized arguments: --multinode"). Real ansible-playbook, local host."""
    playbook_cli = shutil.which("ansible-playbook")
    if playbook_cli is None:
        pytest.skip("ansible-playbook is not installed (pip install 'cannenv[fleet]')")
    import json

    tree = build_tree(HostSpec("t"), tmp_path / "tree")
    inventory = tmp_path / "hosts.ini"
    inventory.write_text("mn-host ansible_connection=local\n")
    extra = {
        "cannenv_facts_python_candidates": [sys.executable],
        "cannenv_facts_bundle": str(bundle.path),
        "cannenv_facts_dest": str(tmp_path / "facts"),
        "cannenv_facts_login_shell": False,
        "cannenv_facts_args": ["--multinode", f"--root={tree}"],
    }
    playbook = Path(__file__).resolve().parents[2] / "ansible" / "playbooks" / "collect_facts.yml"
    run = subprocess.run(
        [playbook_cli, "-i", str(inventory), str(playbook), "-e", json.dumps(extra)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
    )
    assert run.returncode == 0, run.stdout[-3000:]
    facts = Facts.from_json((tmp_path / "facts" / "mn-host.json").read_text())
    assert facts.root == str(tree) and facts.cann.installs
