"""Doctor verdicts as a new user meets them (issue 12 §2): one target, one finding per root cause,
graded libraries, layout-true remedies, readable sources, wrapped output, bad options."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from cannenv import checks
from cannenv.checks.stack import choose_target
from cannenv.facts import AbiFacts, CannFacts, ElfLibrary, Facts, NeededLib, PythonFacts
from cannenv.host import Host
from cannenv.layout import default_set_env
from cannenv.matrix import load
from cannenv.probes import collect
from cannenv.probes._common import ProbeContext
from cannenv.probes.python_env import _from_interpreter
from cannenv.report import Finding, Report, render_table
from tests.helpers import hosts
from tests.helpers.hosts import HostTree

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it (stdout a pipe, not a terminal); output is stdout + stderr."""
    res = subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=120, check=False
    )
    res.stdout = res.stdout + res.stderr
    return res


def _judge(tree: HostTree, **kw: str) -> tuple[Facts, checks.Target, list[Finding]]:
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    target = choose_target(f, load(), **kw)
    return f, target, checks.run(f, target)


def _venv_without_cann(tmp_path: Path, torch: str = "2.8.0", tnpu: str = "2.9.0") -> HostTree:
    """What `pip install --no-deps torch==2.8.0 torch-npu==2.9.0` leaves on a CPU box: two dists."""
    tree = HostTree(tmp_path)
    tree.os_release()
    tree.dist("torch", torch).dist("torch-npu", tnpu)
    return tree


def _pins(findings: list[Finding]) -> dict[str, set[str]]:
    pins: dict[str, set[str]] = {}
    for f in findings:
        for pkg, ver in re.findall(r"\b(torch|torch-npu)==([\w.]+)", f.remedy or ""):
            pins.setdefault(pkg, set()).add(ver)
    return pins


# ------------------------------------------------------------------ 2.1 one target


def test_torch_2_8_with_torch_npu_2_9_gets_one_consistent_set_of_remedies(tmp_path: Path) -> None:
    _, target, fs = _judge(_venv_without_cann(tmp_path))
    assert target.stack is not None
    pins = _pins(fs)
    assert pins, "some remedy names a pip command"
    assert all(len(v) == 1 for v in pins.values()), pins  # never both torch==2.9.0 and torch-npu==2.8.0.post2
    for pkg, (ver,) in pins.items():
        assert ver == target.stack.version(pkg.replace("-", "_")), (pkg, ver, target.stack.id)
    canns = {m for f in fs for m in re.findall(r"install CANN (?:toolkit )?(\d[\w.]+)", f.remedy or "")}
    assert canns == {target.stack.version("cann")}


def test_without_a_stack_the_smallest_change_keeps_torch_npu() -> None:
    from cannenv.checks.python import pair_remedy

    assert "torch==2.9.0" in pair_remedy(checks.Target(matrix=load()), "2.8.0", "2.9.0")


# ------------------------------------------------------------------ 2.2, 2.3 torch_npu without CANN


def test_torch_npu_without_cann_names_its_cann_and_the_autoload_stop_gap(tmp_path: Path) -> None:
    _, _, fs = _judge(_venv_without_cann(tmp_path))
    (f,) = [x for x in fs if x.id == "torch-npu-cann"]
    assert f.status == "fail" and "pairs with CANN" in f.detail and "import torch" in f.detail
    assert f.remedy and "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in f.remedy


def test_torch_npu_newer_than_every_pairing_says_so(tmp_path: Path) -> None:
    _, _, fs = _judge(_venv_without_cann(tmp_path, torch="9.9.0", tnpu="9.9.0"))
    (f,) = [x for x in fs if x.id == "torch-npu-cann"]
    assert "newer than every pairing" in f.detail


def test_old_torch_has_no_autoload_warning(tmp_path: Path) -> None:
    _, _, fs = _judge(_venv_without_cann(tmp_path, torch="2.1.0", tnpu="2.1.0.post8"))
    (f,) = [x for x in fs if x.id == "torch-npu-cann"]
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD" not in (f.remedy or "")  # torch < 2.5 autoloads nothing


# ------------------------------------------------------------------ 2.4 libraries graded


def _abi_facts() -> Facts:
    """torch_npu 2.9.0's own NEEDED graph (readelf of the real wheel), with CANN and NNAL absent."""
    sp = "/venv/lib/python3.11/site-packages/torch_npu"

    def lib(path: str, *needed: str, found: tuple[str, ...] = ()) -> ElfLibrary:
        return ElfLibrary(
            path=f"{sp}/{path}",
            needed=tuple(NeededLib(name=n, found=f"/x/{n}" if n in found else None) for n in needed),
        )

    own = ("libtorch_npu.so", "libtensorpipe.so", "libnpu_profiler.so")
    return Facts(
        python=PythonFacts(packages={"torch": "2.9.0", "torch-npu": "2.9.0"}, torch_npu_dir=sp),
        abi=AbiFacts(
            checked=True,
            libraries=(
                lib("_C.cpython-311-x86_64-linux-gnu.so", "libtorch_npu.so", "libhccl.so", found=own),
                lib("lib/libtorch_npu.so", "libhccl.so", "libascendcl.so", "libtensorpipe.so", found=own),
                lib("lib/libtensorpipe.so", "libacl_tdt_channel.so"),
                lib("lib/libop_plugin_atb.so", "libtorch_npu.so", "libatb.so", "libhccl.so", found=own),
            ),
        ),
    )


def test_what_import_needs_fails_what_atb_ops_need_warns() -> None:
    from cannenv.checks.python import import_closure

    f = _abi_facts()
    assert "libop_plugin_atb.so" not in import_closure(f.abi.libraries)
    assert "libtensorpipe.so" in import_closure(f.abi.libraries)
    fs = checks.run(f, checks.Target(matrix=load()), checks.select(["abi-preflight"]))
    by = {x.subject: x for x in fs}
    assert by["libhccl.so"].status == "fail" and "`import torch_npu` fails" in by["libhccl.so"].detail
    assert by["libacl_tdt_channel.so"].status == "fail"  # libtensorpipe is loaded at import
    assert by["libatb.so"].status == "warn" and "ATB operations" in by["libatb.so"].detail


# ------------------------------------------------------------------ 2.5 one root cause, one finding


def test_no_cann_is_one_finding_with_its_consequences(tmp_path: Path) -> None:
    tree = _venv_without_cann(tmp_path)
    f, target, fs = _judge(tree)
    f = replace(f, abi=_abi_facts().abi)  # the NEEDED graph of the real torch_npu 2.9.0 wheel
    fs = checks.run(f, target)
    kids = [x for x in fs if x.caused_by == "cann-installs"]
    assert len(kids) >= 3 and {x.id for x in kids} >= {"abi-preflight", "stack-match"}
    report = Report.build(fs, stack=target.choice)
    doc = json.loads(report.to_json())
    assert sum(1 for x in doc["findings"] if x.get("caused_by") == "cann-installs") == len(
        kids
    )  # JSON keeps all
    plain = render_table(report, plain=True)
    assert "because of this" in plain and "abi-preflight ×" in plain
    assert not re.search(r"^FAIL\s+abi-preflight", plain, re.M)  # listed under the cause, not a line each
    verbose = render_table(report, plain=True, verbose=True)
    assert (
        len(re.findall(r"^\w+\s+abi-preflight", verbose, re.M)) >= 3 and "caused by: cann-installs" in verbose
    )


def test_bare_host_is_one_line_not_eighteen(tmp_path: Path) -> None:
    _, target, fs = _judge(hosts.bare(tmp_path))
    assert sum(1 for x in fs if x.caused_by == "ascend-software") >= 15
    plain = render_table(Report.build(fs, stack=target.choice), plain=True)
    assert len(re.findall(r"^SKIP", plain, re.M)) == 0 and "because of this (skip)" in plain


def test_check_run_alone_keeps_no_dangling_cause(tmp_path: Path) -> None:
    f, target, _ = _judge(_venv_without_cann(tmp_path))
    fs = checks.run(f, target, checks.select(["stack-match"]))
    assert all(x.caused_by is None for x in fs)


# ------------------------------------------------------------------ 2.6 layout of the recommended version


def test_remedies_use_the_layout_of_the_version_they_recommend(tmp_path: Path) -> None:
    assert default_set_env("9.0.0") == "/usr/local/Ascend/cann-9.0.0/set_env.sh"
    assert default_set_env("8.3.RC1") == "/usr/local/Ascend/ascend-toolkit/set_env.sh"
    _, target, fs = _judge(_venv_without_cann(tmp_path))
    want = default_set_env(target.stack.version("cann") if target.stack else None)
    sources = {m for x in fs for m in re.findall(r"source (\S+set_env\.sh)", x.remedy or "")}
    assert sources == {want}


def test_a_set_env_sh_that_is_not_there_is_never_named(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver()
    tree.toolkit("8.3.RC2")
    (tree.root / "usr/local/Ascend/ascend-toolkit/set_env.sh").unlink()
    _, _, fs = _judge(tree)
    named = {m for x in fs for m in re.findall(r"(/\S+set_env\.sh)", x.remedy or "")}
    assert not [p for p in named if not (tree.root / p.lstrip("/")).exists()], named
    (env,) = [x for x in fs if x.id == "env-sourced"]
    assert env.remedy == "source <(cannenv env)"


# ------------------------------------------------------------------ 2.7 terminal width


def _long_report() -> Report:
    path = (
        "/usr/local/Ascend/ascend-toolkit/8.3.RC2/opp/built-in/op_impl/ai_core/tbe/kernel/config/ascend910b"
    )
    f = Finding(
        id="toolkit-ops",
        status="fail",
        severity="high",
        title="t",
        detail=f"missing {path}",
        remedy=f"install into {path} then `source /usr/local/Ascend/ascend-toolkit/set_env.sh`",
    )
    return Report.build([f])


@pytest.mark.parametrize("width", [60, 90, 200])
def test_table_wraps_to_the_terminal_and_never_cuts(width: int) -> None:
    text = render_table(_long_report(), width=width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    flat = re.sub(r"[\s│┃|]+", "", text)
    assert "ascend910b" in flat and "set_env.sh" in flat


def test_plain_text_when_not_a_terminal() -> None:
    res = _cli("doctor", "--root", str(EXAMPLES / "bare-no-ascend" / "tree"))
    assert "┃" not in res.stdout and "│" not in res.stdout
    assert "remedy:" in res.stdout


# ------------------------------------------------------------------ 2.8 bad options


def test_python_that_does_not_exist_is_exit_2_naming_it() -> None:
    res = _cli("doctor", "--python", "/nonexistent/python")
    assert res.returncode == 2 and "/nonexistent/python" in res.stdout


def test_site_packages_outside_root_says_it_is_read_under_the_root() -> None:
    root = EXAMPLES / "a3-cann8.3" / "tree"
    sp = root / "usr/local/lib/python3.11/site-packages"
    res = _cli("doctor", "--root", str(root), "--site-packages", str(sp))
    assert res.returncode == 2
    assert (
        "read inside the root" in res.stdout
        and "--site-packages /usr/local/lib/python3.11/site-packages" in res.stdout
    )


# ------------------------------------------------------------------ 2.9 the interpreter's real sys.path


def test_pythonpath_and_user_site_distributions_are_seen(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    (extra / "torch_npu-2.9.0.dist-info").mkdir(parents=True)
    (extra / "torch_npu-2.9.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch-npu\nVersion: 2.9.0\n"
    )
    user = tmp_path / "home"
    usersite = subprocess.run(
        [sys.executable, "-c", "import site; print(site.getusersitepackages())"],
        env={"HOME": str(user), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(usersite) / "somepkg-1.0.dist-info").mkdir(parents=True)
    (Path(usersite) / "somepkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: somepkg\nVersion: 1.0\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(user), "PYTHONPATH": str(extra)}
    ctx = ProbeContext(host=Host(Path("/"), env, True, 10.0))
    py = _from_interpreter(ctx, sys.executable)
    assert py.packages.get("torch-npu") == "2.9.0" and py.packages.get("somepkg") == "1.0"
    assert str(extra) in py.site_dirs and usersite in py.site_dirs


# ------------------------------------------------------------------ 2.10 target choice


@pytest.mark.parametrize(
    ("kernels", "family", "why"),
    [
        ("910b", "a2", "ops package is built for Atlas A2"),
        ("a3", "a3", "ops package is built for Atlas A3"),
        (None, "a2", "comes first in the hardware table"),
    ],
)
def test_ties_without_an_npu_are_broken_by_evidence_and_said(
    tmp_path: Path, kernels: str | None, family: str, why: str
) -> None:
    tree = HostTree(tmp_path)
    tree.os_release()
    tree.arch = "x86_64"
    path = tree.cann("8.5.0", ops=kernels)
    tree.sourced(path)
    tree.python_stack("2.7.1", "2.7.1")
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.devices.family is None
    t = choose_target(f, load())
    assert t.stack is not None and t.stack.family == family, t.choice
    assert why in t.choice.reason and "chosen over" in t.choice.reason


# ------------------------------------------------------------------ 2.11 user-facing sources


def test_user_output_shows_source_names_and_urls_not_internal_shorthands() -> None:
    host = EXAMPLES / "broken-driver-too-old"
    res = _cli("doctor", "--root", str(host / "tree"), "--env-file", str(host / "host.env"))
    assert "https://" in res.stdout
    for internal in ("ADOCS", "research §", "UNVERIFIED", "[PT-", "[VA-"):
        assert internal not in res.stdout
    listing = _cli("doctor", "--list", "--verbose").stdout
    assert "research §" not in listing and "UNVERIFIED" not in listing


def test_every_source_a_check_can_cite_is_readable() -> None:
    m = load()
    for src in m.sources.values():
        assert src.title and (src.url or src.where)
        assert src.url is None or src.url.startswith("https://")
    assert CannFacts() is not None


# ------------------------------------------------------------------ the 13 example hosts


def _readme_exits() -> dict[str, int]:
    rows = re.findall(r"^\| `([\w.-]+)` \|.*\| (\d) \|$", (EXAMPLES / "README.md").read_text(), re.M)
    return {name: int(code) for name, code in rows}


def test_the_example_hosts_still_give_their_documented_verdicts() -> None:
    from cannenv.commands.doctor import read_env_file

    exits = _readme_exits()
    assert len(exits) == 13
    for name, code in exits.items():
        env = read_env_file(str(EXAMPLES / name / "host.env"))
        f = collect(Host((EXAMPLES / name / "tree").resolve(), env, True, 5.0))
        t = choose_target(f, load())
        report = Report.build(checks.run(f, t), stack=t.choice)
        assert report.exit_code() == code, (
            name,
            [(x.id, x.status, x.detail) for x in report.findings if x.status == "fail"],
        )


def test_a_trees_environment_never_puts_its_code_on_the_interpreters_path(tmp_path: Path) -> None:
    """Under --root the environment is the tree's (--env-file): its PYTHONPATH is not followed."""
    extra = tmp_path / "tree" / "evil"
    (extra / "evil_pkg-1.0.dist-info").mkdir(parents=True)
    (extra / "evil_pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: evil-pkg\nVersion: 1.0\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(extra)}
    ctx = ProbeContext(host=Host(tmp_path / "tree", env, True, 10.0))
    py = _from_interpreter(ctx, sys.executable)
    assert "evil-pkg" not in py.packages


def test_library_grading_on_real_elf_files(tmp_path: Path) -> None:
    """gcc-built stand-ins with torch_npu's real NEEDED shape: _C → libtorch_npu → libhccl,
    libascendcl; libop_plugin_atb → libatb (loaded by ATB operations only)."""
    from tests.helpers.hosts import compile_torch_npu_libs

    tree = HostTree(tmp_path / "t")
    tree.os_release()
    tree.python_stack("2.9.0", "2.9.0")
    stubs = compile_torch_npu_libs(tree)
    lib = tree.root / tree.site_packages().lstrip("/") / "torch_npu" / "lib"
    (stubs / "atb.c").write_text("int atb_create(void) { return 0; }\n")
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-o", str(stubs / "libatb.so"), str(stubs / "atb.c")], check=True
    )
    for name, src, libs in (
        ("libop_plugin_atb.so", "int atb_create(void); int p(void) { return atb_create(); }\n", ["-latb"]),
        (
            "../_C.cpython-311-x86_64-linux-gnu.so",
            "int torch_npu_init(void); int c(void) { return torch_npu_init(); }\n",
            ["-ltorch_npu"],
        ),
    ):
        c = stubs / "x.c"
        c.write_text(src)
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-o", str(lib / name), str(c), f"-L{stubs}", f"-L{lib}", *libs],
            check=True,
        )
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    fs = checks.run(f, choose_target(f, load()), checks.select(["abi-preflight"]))
    by = {x.subject: x.status for x in fs}
    assert by.get("libhccl.so") == "fail" and by.get("libascendcl.so") == "fail"
    assert by.get("libatb.so") == "warn", by


_VERSIONED = {
    "toolkit": r"Ascend-cann-toolkit_([\w.]+)_",
    "kernels": r"Ascend-cann-(?:kernels-\w+|\w+-ops)_([\w.]+)_",
    "nnal": r"Ascend-cann-nnal_([\w.]+)_",
    "torch": r"\btorch==([\w.]+)",
    "torch-npu": r"\btorch-npu==([\w.]+)",
}


def test_the_remedies_shown_on_every_example_host_never_contradict_each_other() -> None:
    """Of what the table shows (consequences listed under their cause), no two remedies install
    different versions of the same thing."""
    from cannenv.commands.doctor import read_env_file
    from cannenv.report import group_consequences

    for name in _readme_exits():
        env = read_env_file(str(EXAMPLES / name / "host.env"))
        f = collect(Host((EXAMPLES / name / "tree").resolve(), env, True, 5.0))
        rows, _ = group_consequences(checks.run(f, choose_target(f, load())))
        for what, rx in _VERSIONED.items():
            versions = {v for r in rows for v in re.findall(rx, r.remedy or "")}
            assert len(versions) <= 1, (name, what, versions)


def test_an_explicit_stack_with_another_cann_is_the_one_target() -> None:
    """--stack naming CANN 8.5.0 on a host with 8.3.RC2 and wrong kernels: the kernels-for-8.3.RC2
    remedy is superseded by the stack's and listed under stack-match."""
    from cannenv.commands.doctor import read_env_file
    from cannenv.report import group_consequences

    host = EXAMPLES / "broken-kernels-wrong-chip"
    f = collect(Host((host / "tree").resolve(), read_env_file(str(host / "host.env")), True, 5.0))
    fs = checks.run(f, choose_target(f, load(), stack_id="a2-cann8.5.0-torch2.7.1-py3.11"))
    assert [x.caused_by for x in fs if x.id == "toolkit-ops" and x.status == "fail"] == ["stack-match"]
    rows, _ = group_consequences(fs)
    for what, rx in _VERSIONED.items():
        versions = {v for r in rows for v in re.findall(rx, r.remedy or "")}
        assert len(versions) <= 1, (what, versions)
    text = render_table(Report.build(fs), plain=True)
    # under the first stack-match row (toolkit-ops), and under nnal-cann, which is the root of the
    # missing NNAL (it gives the install; stack-match's nnal line defers to it, never the reverse)
    assert text.count("because of this") == 2
    assert "because of this (fail): stack-match (nnal)" in text
