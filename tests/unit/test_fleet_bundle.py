"""The fleet bundle across Pythons: target tags, wheel choice, determinism, the messages hosts get.

Runs the bundle with real interpreters of other versions where this machine has them (pyenv's
3.10/3.12/3.13 here) and with real pydantic_core wheels from PyPI (fetched once per session into the
session's cache; skipped with the reason when PyPI cannot be reached).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import HostSpec, build_tree

from cannenv.errors import InputError, NotFoundError
from cannenv.facts import Facts
from cannenv.fleet import zipapp
from cannenv.fleet.zipapp import (
    DEFAULT_TARGETS,
    Target,
    build_bundle,
    controller_target,
    find_wheel,
    parse_target,
    parse_targets,
)

OWN = controller_target()
OTHER_MINORS = tuple(m for m in (10, 11, 12, 13) if m != OWN.minor)


def _interpreter(minor: int) -> str | None:
    """A real, working CPython 3.<minor> on this machine (pyenv's or on PATH), or None."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [str(p) for p in sorted(root.glob(f"3.{minor}.*/bin/python3.{minor}"))]
    candidates += [p for p in [shutil.which(f"python3.{minor}")] if p and "shims" not in p]
    for cand in candidates:
        probe = subprocess.run(
            [cand, "-c", "import sys; print(sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == str(minor):
            return cand
    return None


def _run(python: str, bundle: Path, *args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-I", "-S", str(bundle), *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={"PATH": "/usr/bin:/bin", "CANNENV_BUNDLE_CACHE": str(cache)},
        cwd=bundle.parent,
        check=False,
    )


def _rewrite_main(src: Path, dst: Path, old: bytes, new: bytes) -> None:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "__main__.py":
                assert old in data
                data = data.replace(old, new)
            zout.writestr(item, data)


# ------------------------------------------------------------------ tags


def test_default_targets_are_cpython_310_to_313_on_x86_64_and_aarch64() -> None:
    tags = [t.tag for t in parse_targets([])]
    assert sorted(tags) == sorted(DEFAULT_TARGETS)
    assert len(tags) == 8 and {t.split("-")[1] for t in tags} == {"x86_64", "aarch64"}
    assert {t.split("-")[0] for t in tags} == {"cp310", "cp311", "cp312", "cp313"}


def test_target_spellings() -> None:
    assert parse_target("cp312-aarch64") == Target(3, 12, "aarch64")
    assert parse_target("CP312-arm64").tag == "cp312-aarch64"
    assert parse_target("cp311-amd64-gnu").tag == "cp311-x86_64"
    musl = parse_target("cp312-x86_64-musl")
    assert musl.tag == "cp312-x86_64-musl" and musl.pip_platforms()[0].startswith("musllinux_")
    ft = parse_target("cp313t-x86_64")
    assert ft.freethreaded and ft.abi == "cp313t" and ft.tag == "cp313t-x86_64"
    # repeatable, comma lists, keywords, duplicates folded, sorted
    got = parse_targets(["cp313-aarch64,cp312-aarch64", "cp312-aarch64", "controller"])
    assert got == tuple(sorted({Target(3, 13, "aarch64"), Target(3, 12, "aarch64"), OWN}))
    assert set(parse_targets(["default", "cp313-s390x"])) == {
        *parse_targets(["default"]),
        Target(3, 13, "s390x"),
    }


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("cp39-x86_64", "needs Python >= 3.10"),
        ("cp27-x86_64", "needs Python >= 3.10"),
        ("cp312-riscv64", "unknown machine 'riscv64'"),
        ("cp312-x86-64", "expected cpXY-MACHINE[-musl]"),
        ("py3-none-any", "expected cpXY-MACHINE[-musl]"),
        ("cp312", "expected cpXY-MACHINE[-musl]"),
    ],
)
def test_bad_targets_are_input_errors(text: str, words: str) -> None:
    with pytest.raises(InputError) as info:
        parse_target(text)
    assert words in str(info.value) and repr(text) in str(info.value)


def test_controller_target_matches_the_bundle_main() -> None:
    """zipapp computes the controller's tag the way __main__ computes a host's."""
    code = zipapp._template().replace("@TAGS@", "{}").replace("@DIGEST@", "x")
    ns: dict[str, object] = {"__name__": "bundle_main"}
    exec(compile(code, "bundle_main", "exec"), ns)
    assert ns["host_tag"]() == OWN.tag == zipapp.bundle_tag()  # type: ignore[operator]


def test_wheel_platform_tags() -> None:
    x86 = Target(3, 12, "x86_64")
    assert x86.libc_floor("manylinux_2_17_x86_64") == "2.17"
    assert x86.libc_floor("manylinux2014_x86_64") == "2.17"
    assert x86.libc_floor("manylinux_2_28_x86_64") == "2.28"
    assert x86.libc_floor("manylinux_2_17_aarch64") is None
    assert x86.libc_floor("musllinux_1_1_x86_64") is None
    assert x86.libc_floor("win_amd64") is None
    assert Target(3, 12, "x86_64", "musl").libc_floor("musllinux_1_2_x86_64") == "1.2"


def test_find_wheel_picks_exact_version_abi_machine_and_oldest_glibc(tmp_path: Path) -> None:
    names = [
        "pydantic_core-2.46.4-cp312-cp312-manylinux_2_28_aarch64.whl",
        "pydantic_core-2.46.4-cp312-cp312-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
        "pydantic_core-2.46.3-cp312-cp312-manylinux_2_5_aarch64.whl",  # other version
        "pydantic_core-2.46.4-cp313-cp313-manylinux_2_5_aarch64.whl",  # other Python
        "pydantic_core-2.46.4-cp312-cp312-manylinux_2_5_x86_64.whl",  # other machine
        "pydantic_core-2.46.4-cp312-cp312-musllinux_1_1_aarch64.whl",  # other libc
        "pydantic_core-2.46.4-cp312-cp312-win_arm64.whl",
        "pydantic_core-2.46.4.tar.gz",
        "not a wheel.whl",
    ]
    for n in names:
        (tmp_path / n).write_bytes(b"")  # only the file names are read here
    t = Target(3, 12, "aarch64")
    assert find_wheel(t, "2.46.4", [tmp_path]) == tmp_path / names[1]
    assert find_wheel(t, "2.46.5", [tmp_path]) is None
    musl = Target(3, 12, "aarch64", "musl")
    assert find_wheel(musl, "2.46.4", [tmp_path]) == tmp_path / names[5]
    assert find_wheel(Target(3, 10, "aarch64"), "2.46.4", [tmp_path, tmp_path / "absent"]) is None


# ------------------------------------------------------------------ missing targets


def test_missing_targets_are_named_with_the_way_to_get_them(tmp_path: Path) -> None:
    empty = tmp_path / "wheelhouse"
    empty.mkdir()
    version = zipapp.installed_version()
    targets = parse_targets(["controller", "cp313-s390x", "cp312-aarch64-musl"])
    with pytest.raises(NotFoundError) as info:
        build_bundle(tmp_path / "b.pyz", targets=targets, wheelhouse=empty, download=False)
    err = info.value
    text = str(err)
    assert f"no pydantic_core {version} wheel" in text
    assert "cp313-s390x" in text and "cp312-aarch64-musl" in text and OWN.tag not in text
    assert f"cp313-s390x (CPython 3.13, s390x, gnu): not in {empty}" in text
    assert err.hint is not None and "--wheelhouse WHEELHOUSE" in err.hint
    assert (
        "pip download --only-binary=:all: --no-deps --python-version 3.13 --implementation cp --abi cp313 "
        "--platform manylinux2014_s390x --platform manylinux_2_17_s390x "
        f"--dest WHEELHOUSE pydantic-core=={version}"
    ) in err.hint
    assert "--platform musllinux_1_1_aarch64" in err.hint
    assert not (tmp_path / "b.pyz").exists()


def test_missing_wheelhouse_and_unknown_target_from_the_cli(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cannenv", "fleet", "bundle", "--out", str(tmp_path / "b.pyz"), *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    proc = cli("--target", "cp312-riscv64")
    assert proc.returncode == 2 and "unknown machine 'riscv64'" in proc.stderr
    proc = cli("--target", "cp313-aarch64", "--wheelhouse", str(tmp_path / "nowhere"))
    assert proc.returncode == 3 and "not a directory" in proc.stderr


def test_a_target_pypi_does_not_have_is_reported_with_pips_reason(tmp_path: Path) -> None:
    """The download path for real: pydantic_core publishes no wheel for a future CPython 3.19."""
    with pytest.raises(NotFoundError) as info:
        build_bundle(tmp_path / "b.pyz", targets=[Target(3, 19, "x86_64")])
    text = str(info.value)
    assert "cp319-x86_64 (CPython 3.19, x86_64, gnu): " in text
    assert "not in" not in text.split("cp319-x86_64 (CPython 3.19, x86_64, gnu): ")[1]  # pip's own reason


# ------------------------------------------------------------------ built bundles


@pytest.fixture(scope="module")
def own_bundle(tmp_path_factory: pytest.TempPathFactory) -> zipapp.Bundle:
    return build_bundle(tmp_path_factory.mktemp("own") / "cannenv.pyz")


def test_layout_pure_once_native_per_tag(own_bundle: zipapp.Bundle) -> None:
    assert own_bundle.tags == (OWN.tag,) and own_bundle.native == ((OWN.tag, "installed"),)
    with zipfile.ZipFile(own_bundle.path) as zf:
        names = zf.namelist()
        main = zf.read("__main__.py").decode()
    site = [n for n in names if n.startswith("site/")]
    native = [n for n in names if n.startswith("native/")]
    assert not [n for n in site if zipapp._NATIVE_FILE.search(n) or n.endswith(".pyc")]
    assert not [n for n in site if n.startswith("site/pydantic_core/")]
    assert all(n.startswith(f"native/{OWN.tag}/pydantic_core/") for n in native)
    assert any(zipapp._NATIVE_FILE.search(n) for n in native)
    assert "site/cannenv/cli.py" in names and "site/pydantic/main.py" in names
    assert f'BUNDLE_TAGS = {{"{OWN.tag}": ' in main
    if "yaml" in own_bundle.modules:  # PyYAML's libyaml binding has a pure-Python fallback
        assert any(n.startswith("yaml/_yaml") for n in own_bundle.left_out)


def test_deterministic_and_cached_by_content(tmp_path: Path, own_bundle: zipapp.Bundle) -> None:
    again = build_bundle(tmp_path / "again.pyz")
    assert again.path.read_bytes() == own_bundle.path.read_bytes()
    cached = build_bundle(None)
    assert cached.sha256 == own_bundle.sha256
    assert zipapp.cache_root() is not None and cached.path.is_relative_to(zipapp.cache_root())  # type: ignore[arg-type]
    stamp = cached.path.stat().st_ino
    assert build_bundle(None).path == cached.path and cached.path.stat().st_ino == stamp  # not rewritten


def test_host_with_an_uncarried_tag_is_told_the_tags_and_the_option(
    tmp_path: Path, own_bundle: zipapp.Bundle
) -> None:
    foreign = tmp_path / "foreign.pyz"
    _rewrite_main(own_bundle.path, foreign, f'"{OWN.tag}"'.encode(), b'"cp312-s390x"')
    proc = _run(sys.executable, foreign, "facts", cache=tmp_path / "cache")
    assert proc.returncode == 3
    assert proc.stderr.strip() == (
        f"cannenv-bundle: python-mismatch: the host runs {OWN.tag}; this bundle carries native modules "
        f"for cp312-s390x only; add the host's tag when building it: --target cp312-s390x,{OWN.tag} "
        "(cannenv fleet collect / cannenv fleet bundle)"
    )


def test_host_with_too_old_a_libc_is_refused(tmp_path: Path, own_bundle: zipapp.Bundle) -> None:
    with zipfile.ZipFile(own_bundle.path) as zf:
        main = zf.read("__main__.py").decode()
    floor = json.loads(main.split("BUNDLE_TAGS = ", 1)[1].splitlines()[0])[OWN.tag]
    if not floor or OWN.libc != "gnu":
        pytest.skip(f"the installed pydantic_core declares no glibc floor ({floor!r})")
    strict = tmp_path / "strict.pyz"
    _rewrite_main(
        own_bundle.path, strict, f'"{OWN.tag}": "{floor}"'.encode(), f'"{OWN.tag}": "99.0"'.encode()
    )
    proc = _run(sys.executable, strict, "facts", cache=tmp_path / "cache")
    assert proc.returncode == 3 and "need glibc >= 99.0; the host has gnu " in proc.stderr


def test_python_too_old(tmp_path: Path, own_bundle: zipapp.Bundle) -> None:
    old = _interpreter(9)
    if old is None:
        pytest.skip("no Python 3.9 on this machine")
    proc = _run(old, own_bundle.path, "facts", cache=tmp_path / "cache")
    assert proc.returncode == 3
    assert proc.stderr.startswith(
        "cannenv-bundle: python-too-old: Python 3.9 found; cannenv needs Python >= 3.10"
    )


@pytest.fixture(scope="module")
def multi_bundle(tmp_path_factory: pytest.TempPathFactory) -> zipapp.Bundle:
    """The controller's tag plus CPython 3.10-3.13 on this machine, wheels from PyPI (session cache)."""
    targets = [OWN, *(Target(3, m, OWN.machine, OWN.libc) for m in OTHER_MINORS)]
    try:
        return build_bundle(tmp_path_factory.mktemp("multi") / "cannenv.pyz", targets=targets)
    except NotFoundError as exc:
        pytest.skip(f"pydantic_core wheels for other Pythons not obtainable here: {exc}")


def test_multi_target_bundle_is_deterministic(tmp_path: Path, multi_bundle: zipapp.Bundle) -> None:
    again = build_bundle(
        tmp_path / "again.pyz", targets=list(reversed([parse_target(t) for t in multi_bundle.tags]))
    )
    assert again.sha256 == multi_bundle.sha256  # wheels now from the cache: same bytes, order-free
    with zipfile.ZipFile(multi_bundle.path) as zf:
        names = zf.namelist()
    assert names[0] == "__main__.py"
    site = [n for n in names if n.startswith("site/")]
    native = [n for n in names if n.startswith("native/")]
    assert site == sorted(site) and native == sorted(native) and len(names) == 1 + len(site) + len(native)
    for tag in multi_bundle.tags:
        sos = [n for n in names if n.startswith(f"native/{tag}/pydantic_core/_pydantic_core")]
        assert len(sos) == 1, (tag, sos)
        abi = tag.split("-")[0]
        assert f"cpython-{abi[2:]}" in sos[0]
    pure = [n for n in names if n.startswith("site/pydantic/")]
    assert len(pure) == len(set(pure))  # pure-Python code once


@pytest.mark.parametrize("minor", OTHER_MINORS)
def test_hosts_with_other_pythons_collect_facts(
    tmp_path: Path, multi_bundle: zipapp.Bundle, minor: int
) -> None:
    python = _interpreter(minor)
    if python is None:
        pytest.skip(f"no Python 3.{minor} on this machine")
    root = build_tree(HostSpec("x"), tmp_path / "tree")
    proc = _run(python, multi_bundle.path, "facts", "--json", "--root", str(root), cache=tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    facts = Facts.from_json(proc.stdout)
    assert facts.driver is not None and facts.driver.version == "25.0.rc1.1"
    extracted = [p.name for p in (tmp_path / "cache").iterdir()]
    assert len(extracted) == 1 and extracted[0].endswith(f"-cp3{minor}-{OWN.machine}")
    assert (tmp_path / "cache" / extracted[0] / "native" / f"cp3{minor}-{OWN.machine}").is_dir()
    assert not (tmp_path / "cache" / extracted[0] / "native" / OWN.tag).exists()  # only the host's tag


def test_a_foreign_machine_gets_its_own_elf(tmp_path: Path) -> None:
    """No aarch64 machine here to run it: check the packed module is an aarch64 ELF for CPython 3.12."""
    from elftools.elf.elffile import ELFFile

    other = "aarch64" if OWN.machine != "aarch64" else "x86_64"
    try:
        bundle = build_bundle(tmp_path / "b.pyz", targets=[Target(3, 12, other)])
    except NotFoundError as exc:
        pytest.skip(f"pydantic_core wheel for cp312-{other} not obtainable here: {exc}")
    with zipfile.ZipFile(bundle.path) as zf:
        (so,) = [n for n in zf.namelist() if zipapp._NATIVE_FILE.search(n)]
        assert so.startswith(f"native/cp312-{other}/pydantic_core/_pydantic_core.cpython-312-{other}-linux")
        (tmp_path / "mod.so").write_bytes(zf.read(so))
    with (tmp_path / "mod.so").open("rb") as fh:
        assert ELFFile(fh).get_machine_arch() == {"aarch64": "AArch64", "x86_64": "x64"}[other]
