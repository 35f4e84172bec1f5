"""ABI preflight on a real ELF compiled here: torch_npu/lib/libtorch_npu.so needing libhccl + libascendcl."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cannenv.host import Host
from cannenv.probes import collect
from tests.helpers.hosts import HostTree, compile_torch_npu_libs

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs the system C compiler (gcc)")


def _missing(facts: object) -> set[str]:
    return {n.name for lib in facts.abi.libraries for n in lib.needed if n.found is None}  # type: ignore[attr-defined]


def test_preflight_names_both_missing_then_finds_them(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).python_stack("2.7.1", "2.7.1")
    stubs = compile_torch_npu_libs(tree)
    f = collect(Host(tree.root, {"PATH": "/usr/bin"}, True))
    assert f.abi.checked
    assert f.abi.libraries[0].path.endswith("torch_npu/lib/libtorch_npu.so")
    assert {"libhccl.so", "libascendcl.so"} <= _missing(f)

    from cannenv import checks
    from cannenv.checks import Target

    findings = [x for x in checks.run(f, Target(), checks.select(["abi-preflight"]))]
    by = {x.subject: x for x in findings}
    assert by["libhccl.so"].status == "fail" and "CANN toolkit" in by["libhccl.so"].detail
    assert "set_env.sh" in (by["libhccl.so"].remedy or "")

    ld = "/" + str(stubs.relative_to(tmp_path))
    f2 = collect(Host(tree.root, {"PATH": "/usr/bin", "LD_LIBRARY_PATH": ld}, True))
    assert _missing(f2) & {"libhccl.so", "libascendcl.so"} == set()
    found = {n.name: n for lib in f2.abi.libraries for n in lib.needed}
    assert found["libhccl.so"].via == "LD_LIBRARY_PATH" and found["libhccl.so"].found == f"{ld}/libhccl.so"


def test_a_missing_library_is_judged_without_pyyaml(tmp_path: Path) -> None:
    """The provider table is code: a failing abi-preflight (the common broken host) adds no import."""
    import subprocess
    import sys

    tree = HostTree(tmp_path / "tree").python_stack("2.7.1", "2.7.1")
    compile_torch_npu_libs(tree)
    code = (
        "import sys\n"
        "from cannenv import checks\n"
        "from cannenv.checks import Target\n"
        "from cannenv.host import Host\n"
        "from cannenv.probes import collect\n"
        f"f = collect(Host(__import__('pathlib').Path({str(tree.root)!r}), {{'PATH': '/usr/bin'}}, True))\n"
        "found = checks.run(f, Target(), checks.select(['abi-preflight']))\n"
        "print(sorted(x.subject for x in found if x.status == 'fail'), 'yaml' in sys.modules)\n"
    )
    repo = Path(__file__).resolve().parents[2]
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=repo, timeout=120, check=True
    )
    assert p.stdout.strip() == "['libascendcl.so', 'libhccl.so'] False", p.stdout + p.stderr


def test_runpath_origin_is_expanded(tmp_path: Path) -> None:
    import subprocess

    tree = HostTree(tmp_path).python_stack("2.7.1", "2.7.1")
    stubs = compile_torch_npu_libs(tree)
    lib_dir = tmp_path / tree.site_packages().lstrip("/") / "torch_npu" / "lib"
    for n in ("libhccl.so", "libascendcl.so"):
        shutil.copy(stubs / n, lib_dir.parent / n)
    src = tmp_path / "m.c"
    src.write_text("int aclInit(void); int f(void){return aclInit();}\n")
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-o",
            str(lib_dir / "libextra.so"),
            str(src),
            f"-L{stubs}",
            "-lascendcl",
            "-Wl,--enable-new-dtags,-rpath,$ORIGIN/..",
        ],
        check=True,
    )
    f = collect(Host(tree.root, {"PATH": "/usr/bin"}, True))
    extra = next(lib for lib in f.abi.libraries if lib.path.endswith("libextra.so"))
    assert extra.runpath == ("$ORIGIN/..",)
    need = next(x for x in extra.needed if x.name == "libascendcl.so")
    assert need.via == "RUNPATH" and need.found and need.found.endswith("torch_npu/libascendcl.so")
