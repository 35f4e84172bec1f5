"""Adversarial suite (issue 10): a ``--root`` tree is data, never code, and nothing is read outside it.

Every test here builds a hostile input on disk and runs the real code on it: the CLI in a
subprocess (with an address-space limit and a wall-clock timeout where the attack is about
resources), or the probes in-process on a real tree. Each one fails on the code before issue 10.
See docs/security.md for the threat model these tests hold cannenv to.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv.host import Host
from cannenv.probes import collect
from tests.helpers import hosts

REPO = Path(__file__).resolve().parents[2]
SECRET = "OUTSIDE-THE-ROOT-7f3a"
"""Written only into files outside the probed root: it must never appear in the facts."""


def _limits(address_space: int) -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))


def cli(
    *args: str, timeout: float = 120, address_space: int | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``cannenv ARGS`` in a subprocess, optionally under an address-space limit (RLIMIT_AS)."""
    e = {"PATH": os.environ.get("PATH", "/usr/bin"), "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    e.update(env or {})
    if "CANNENV_CACHE_DIR" in os.environ:
        e["CANNENV_CACHE_DIR"] = os.environ["CANNENV_CACHE_DIR"]
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
        cwd=REPO,
        preexec_fn=(lambda: _limits(address_space)) if address_space else None,
        check=False,
    )


def _host(tree: hosts.HostTree) -> Host:
    return Host(tree.root, dict(tree.env), True, 5.0)


def _outside(tmp_path: Path) -> Path:
    """A directory beside the root holding files a hostile tree points at."""
    out = tmp_path / "outside"
    (out / "etc").mkdir(parents=True, exist_ok=True)
    (out / "etc/os-release").write_text(f'ID={SECRET}\nPRETTY_NAME="{SECRET}"\n')
    (out / "version.info").write_text(f"Version={SECRET}\npackage_version={SECRET}\n")
    (out / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {SECRET}\nVersion: 6.6.6\n")
    (out / "vendor").write_text("0x19e5\n")
    (out / "device").write_text("0xd802\n")
    return out


# ---------------------------------------------------------------- critical 1: nothing is run


def _trap_tree(tmp_path: Path) -> hosts.HostTree:
    """A healthy-looking tree whose npu-smi, gcc, cmake and python would leave a marker if run."""
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    trap = '#!/bin/sh\ntouch "{marker}"\necho "Version 99.9"\n'
    for exe in ("usr/local/bin/npu-smi", "usr/bin/gcc", "usr/bin/cmake", "usr/bin/python3"):
        p = tree.root / exe
        p.parent.mkdir(parents=True, exist_ok=True)
        p.unlink(missing_ok=True)
        p.write_text(trap.format(marker=tmp_path / f"RAN-{p.name}"))
        p.chmod(0o755)
    return tree


def test_doctor_root_runs_nothing_from_the_tree(tmp_path: Path) -> None:
    tree = _trap_tree(tmp_path)
    env = tree.env_file(tmp_path / "host.env")
    # the tree's PATH points into the tree: which() finds the traps there, and still runs nothing
    for args in (("doctor", "--json"), ("facts", "--json")):
        r = cli(*args, "--root", str(tree.root), "--env-file", str(env))
        assert r.returncode in (0, 1), r.stderr
    assert sorted(p.name for p in tmp_path.glob("RAN-*")) == []
    assert not (tree.root / "NPU-SMI-WAS-RUN").exists()
    facts = json.loads(cli("facts", "--json", "--root", str(tree.root), "--env-file", str(env)).stdout)
    # devices came from the capture the tree carries, gcc/cmake stay unknown (not run)
    assert facts["devices"]["npu_smi"]["message"].startswith("captured output read from")
    assert facts["devices"]["family"] == "a2" and facts["os"]["gcc"] is None


def test_a_tree_link_to_a_host_binary_is_not_run(tmp_path: Path) -> None:
    """``usr/local/bin/npu-smi -> /usr/bin/touch``: resolved inside the tree, and never run."""
    tree = hosts.HostTree(tmp_path / "tree").driver()
    tree.link("/usr/local/bin/npu-smi", "/usr/bin/touch")
    tree.write("/usr/bin/touch", "#!/bin/sh\ntouch " + str(tmp_path / "RAN") + "\n", mode=0o755)
    f = collect(_host(tree))
    assert not (tmp_path / "RAN").exists()
    assert f.devices.npu_smi is not None and f.devices.npu_smi.missing
    assert "--npu-smi-output" in f.devices.npu_smi.message


def test_host_run_refuses_for_a_tree(tmp_path: Path) -> None:
    res = Host(tmp_path, {}, True, 5.0).run(["/bin/touch", str(tmp_path / "RAN")])
    assert res.missing and not res.ok and not (tmp_path / "RAN").exists()


def test_python_option_is_refused_for_a_tree(tmp_path: Path) -> None:
    tree = _trap_tree(tmp_path)
    r = cli("facts", "--root", str(tree.root), "--python", str(tree.root / "usr/bin/python3"))
    assert r.returncode == 2 and "--site-packages" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "RAN-python3").exists()


def test_npu_smi_output_gives_device_facts(tmp_path: Path) -> None:
    tree = hosts.HostTree(tmp_path / "tree").driver()
    info = hosts.NPU_SMI_DATA / "a3_info.txt"
    board = hosts.NPU_SMI_DATA / "a3_board.txt"
    r = cli(
        "facts",
        "--json",
        "--root",
        str(tree.root),
        "--npu-smi-output",
        str(info),
        "--npu-smi-board",
        str(board),
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)["devices"]
    assert d["family"] == "a3" and d["soc"] == "Ascend910_9392" and len(d["chips"]) > 1
    r = cli("facts", "--root", str(tree.root), "--npu-smi-output", str(tmp_path / "nope.txt"))
    assert r.returncode == 4 or "does not exist" in r.stderr
    assert "Traceback" not in r.stderr


# ---------------------------------------------------------------- critical 2: no read leaves the root


def test_links_out_of_the_root_are_resolved_inside_it(tmp_path: Path) -> None:
    out = _outside(tmp_path)
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    depth = "../" * 12
    # absolute targets: re-rooted at the tree (nothing there -> absent)
    tree.link("/etc/os-release", str(out / "etc/os-release"))
    # relative targets climbing out: clamped at the root
    tree.link("/usr/local/Ascend/firmware/version.info", f"{depth}{out.relative_to('/')}/version.info")
    sp = tree.site_packages()
    tree.link(f"{sp}/evil-1.0.dist-info/METADATA", str(out / "METADATA"))
    tree.link(f"{sp}/evil2-1.0.dist-info", f"{depth}{out.relative_to('/')}")
    tree.link("/sys/bus/pci/devices/0000:01:00.0", str(out))
    tree.link("/etc/ld.so.cache", "/etc/ld.so.cache")  # a loop onto itself, never the host's cache
    tree.link("/usr/lib/os-release", f"{depth}etc/os-release")  # the host's own, clamped -> tree's
    f = collect(_host(tree))
    text = f.to_json()
    assert SECRET not in text
    assert "6.6.6" not in text
    assert f.devices.pci == ()  # the outside vendor/device files were not read
    assert f.firmware is None or f.firmware.version != SECRET


def test_absolute_links_inside_the_tree_are_followed_in_the_tree(tmp_path: Path) -> None:
    """A real image: ``latest -> /usr/local/Ascend/...`` means the image's file, not this host's."""
    tree = hosts.a2_cann83_old(tmp_path / "tree")
    real = "/usr/local/Ascend/driver/version.info"
    tree.write("/opt/drv/version.info", (tree.root / real.lstrip("/")).read_text())
    (tree.root / real.lstrip("/")).unlink()
    tree.link(real, "/opt/drv/version.info")  # absolute, inside the image
    f = collect(_host(tree))
    assert f.driver is not None and f.driver.version == "25.3.rc1"
    latest = "/usr/local/Ascend/ascend-toolkit/latest"
    assert Host(tree.root, {}).realpath(latest) == "/usr/local/Ascend/ascend-toolkit/8.3.RC2"


def test_resolve_clamps_dotdot_and_reroots_absolute_targets(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "a/b").mkdir(parents=True)
    (root / "a/b/f").write_text("in")
    (root / "a/up").symlink_to("../../../../..")
    (root / "a/abs").symlink_to("/a/b")
    (root / "a/loop").symlink_to("loop")
    host = Host(root, {})
    assert host.resolve("/a/up/a/b/f")[1] == "/a/b/f"
    assert host.resolve("/../../a/abs/f")[0] == root / "a/b/f"
    assert host.read_bytes("/a/abs/../b/f", 10) == b"in"
    with pytest.raises(OSError, match="too many levels"):
        host.resolve("/a/loop")
    assert not host.exists("/a/loop") and host.lexists("/a/loop") and host.is_symlink("/a/loop")
