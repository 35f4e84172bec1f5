"""Probes on host trees built from the real formats (tests/helpers/hosts.py), robustness, fuzzing."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.host import Host
from cannenv.probes import collect
from cannenv.probes._common import ProbeContext, parse_kv, read_text
from cannenv.probes.driver import parse_driver_info, parse_firmware_info
from cannenv.probes.elf import parse_ld_cache
from cannenv.probes.environ import REDACTED, redact_env
from cannenv.probes.npu import parse_board, parse_npu_smi_info, soc_from_board
from tests.helpers import hosts
from tests.helpers.hosts import HostTree
from tests.helpers.unprivileged import as_nobody

DATA = Path(__file__).resolve().parent.parent / "data" / "npu_smi"


def _host(tree: HostTree, **kw: object) -> Host:
    return Host(tree.root, dict(tree.env), True, float(kw.get("timeout", 5.0)))  # type: ignore[arg-type]


def test_driver_info_prefers_package_version_and_reads_lists() -> None:
    d = parse_driver_info(hosts.DRIVER_24_1_RC2_2)
    assert d.version == "24.1.rc2.2"
    assert d.innerversion == "V100R001C18SPC001B233"
    assert "V100R001C18" in d.compatible_version
    assert d.compatible_version_fw == ("7.0.0,7.2.99",)


def test_driver_info_without_package_version_uses_version() -> None:
    text = "\n".join(
        line for line in hosts.DRIVER_24_1_RC2_2.splitlines() if not line.startswith("package_version")
    )
    assert parse_driver_info(text.replace("24.1.rc2.2", "24.1.rc1")).version == "24.1.rc1"


def test_firmware_info() -> None:
    f = parse_firmware_info(hosts.FIRMWARE_7_7)
    assert f.version == "7.7.0.1.231"
    assert f.compatible_version_drv[0] == "23.0.0,23.0.0."


@pytest.mark.parametrize(
    ("family", "chips", "first_name", "phy"),
    [("a2", 2, "910B2C", None), ("a3", 3, "Ascend910", 0), ("310p", 2, "310P3", 0)],
)
def test_npu_smi_info_each_family(family: str, chips: int, first_name: str, phy: int | None) -> None:
    smi, drv, rows = parse_npu_smi_info((DATA / f"{family}_info.txt").read_text())
    assert smi and drv
    assert len(rows) == chips
    assert rows[0].name == first_name and rows[0].health == "OK" and rows[0].phy_id == phy
    assert rows[0].bus_id and rows[0].bus_id.startswith("0000:")


def test_a3_two_chips_per_npu_and_phy_ids() -> None:
    _, _, rows = parse_npu_smi_info((DATA / "a3_info.txt").read_text())
    assert [(r.npu_id, r.chip_id, r.phy_id) for r in rows] == [(0, 0, 0), (0, 1, 1), (7, 1, 15)]


def test_board_to_soc() -> None:
    assert soc_from_board(parse_board((DATA / "a2_board.txt").read_text())) == "Ascend910B4"
    assert soc_from_board(parse_board((DATA / "a3_board.txt").read_text())) == "Ascend910_9392"
    assert parse_board((DATA / "910a_board_npu.txt").read_text())["PCI Device ID"] == "0xD801"


def test_a2_old_layout_tree(tmp_path: Path) -> None:
    tree = hosts.a2_cann83_old(tmp_path)
    f = collect(_host(tree))
    assert f.driver and f.driver.version == "25.3.rc1"
    assert f.firmware and f.firmware.version == "7.7.0.1.231"
    inst = f.cann.active_install()
    assert inst and inst.version == "8.3.RC2" and inst.layout == "toolkit"
    assert "ASCEND_HOME_PATH" in f.cann.active_reason
    assert inst.ops and inst.ops[0].chips == ("910b",) and inst.ops[0].version_dir == "8.3.RC2"
    assert f.devices.soc == "Ascend910B4" and f.devices.family == "a2"
    assert f.python.packages["torch-npu"] == "2.7.1" and f.python.version == "3.11"
    assert f.os.distro_id == "ubuntu" and f.os.hwhiaiuser_user
    assert f.issues == ()


def test_a2_new_layout_tree(tmp_path: Path) -> None:
    f = collect(_host(hosts.a2_cann85_new(tmp_path)))
    inst = f.cann.active_install()
    assert inst and inst.layout == "cann" and inst.version == "8.5.0"
    assert inst.path == "/usr/local/Ascend/cann-8.5.0"
    assert inst.ops[0].package_name == "Ascend-cann-910b-ops" and inst.ops[0].chips == ("910b",)
    assert f.cann.nnal and f.cann.nnal.version == "8.5.0" and f.cann.nnal.abis == ("cxx_abi_0", "cxx_abi_1")


def test_a3_and_310p_families(tmp_path: Path) -> None:
    a3 = collect(_host(hosts.a3_cann83(tmp_path / "a3")))
    assert a3.devices.family == "a3" and a3.devices.soc == "Ascend910_9392"
    p = collect(_host(hosts.p310_cann81(tmp_path / "p")))
    assert p.devices.family == "310p" and p.devices.soc is None  # no board capture: family from Name column
    assert "310P3" in (p.devices.family_source or "")


def test_active_install_without_env_follows_latest_link(tmp_path: Path) -> None:
    tree = hosts.two_cann_mixed(tmp_path)
    tree.env = {"PATH": "/usr/bin"}
    f = collect(_host(tree))
    assert len(f.cann.installs) == 2
    inst = f.cann.active_install()
    assert inst and inst.version == "8.3.RC2" and "latest" in f.cann.active_reason


def test_non_root_install_under_home(tmp_path: Path) -> None:
    tree = HostTree(tmp_path)
    tree.toolkit("8.3.RC1", base="/home/dev/Ascend")
    tree.env = {"HOME": "/home/dev"}
    f = collect(_host(tree))
    assert f.cann.installs[0].user_install and f.cann.installs[0].version == "8.3.RC1"


def test_hung_npu_smi_is_a_timeout_not_a_hang(tmp_path: Path) -> None:
    env = hosts.live_npu_smi(tmp_path / "bin", hosts.NPU_SMI_HUNG)
    f = collect(Host(Path("/"), env, True, 1.0), npu_smi_timeout=0.5, only=("npu",))
    assert f.devices.npu_smi and f.devices.npu_smi.timed_out
    assert any(i.kind == "command-timeout" for i in f.issues)


def test_failing_npu_smi_keeps_the_message(tmp_path: Path) -> None:
    env = hosts.live_npu_smi(tmp_path / "bin", hosts.NPU_SMI_8005)
    f = collect(Host(Path("/"), env, True, 5.0), only=("npu",))
    assert f.devices.npu_smi and f.devices.npu_smi.returncode == 255
    assert "-8005" in f.devices.npu_smi.message


def test_live_npu_smi_is_run_and_parsed(tmp_path: Path) -> None:
    env = hosts.live_npu_smi(tmp_path / "bin", hosts.NPU_SMI_SCRIPT, "a3")
    f = collect(Host(Path("/"), env, True, 5.0), only=("npu",))
    assert f.devices.npu_smi and f.devices.npu_smi.returncode == 0
    assert f.devices.family == "a3" and f.devices.soc == "Ascend910_9392"


def test_sysfs_pci_fallback(tmp_path: Path) -> None:
    tree = HostTree(tmp_path)
    tree.write("/sys/bus/pci/devices/0000:5a:00.0/vendor", "0x19e5\n")
    tree.write("/sys/bus/pci/devices/0000:5a:00.0/device", "0xd802\n")
    tree.write("/sys/bus/pci/devices/0000:00:01.0/vendor", "0x8086\n")
    f = collect(_host(tree))
    assert [p.device for p in f.devices.pci] == ["0xd802"]
    assert f.devices.family == "a2"


def test_container_detection(tmp_path: Path) -> None:
    f = collect(_host(hosts.container_no_mounts(tmp_path)))
    assert f.container.in_container
    assert "/dev/davinci_manager" in f.container.absent


# ---------------------------------------------------------------- robustness

DRV = "/usr/local/Ascend/driver/version.info"


def _broken(tmp_path: Path, make: str) -> tuple[Path, HostTree]:
    tree = HostTree(tmp_path).driver()
    p = tmp_path / DRV.lstrip("/")
    p.unlink()
    if make == "empty":
        p.write_text("")
    elif make == "truncated":
        p.write_text(hosts.DRIVER_25_3_RC1[:5])  # "Versi": cut mid-key
    elif make == "binary":
        p.write_bytes(b"\x7fELF\x00\x01\x02" * 10)
    elif make == "oversized":
        p.write_bytes(b"Version=1\n" * 200_000)
    elif make == "dangling":
        p.symlink_to("/nowhere/version.info")
    elif make == "loop":
        p.symlink_to("version.info")
    elif make == "directory":
        p.mkdir()
    return p, tree


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        ("empty", "empty"),
        ("truncated", "malformed"),
        ("binary", "binary"),
        ("oversized", "oversized"),
        ("dangling", "dangling-symlink"),
        ("loop", "symlink-loop"),
        ("directory", "not-a-file"),
    ],
)
def test_broken_version_file_becomes_an_issue_naming_the_path(tmp_path: Path, make: str, kind: str) -> None:
    _, tree = _broken(tmp_path, make)
    f = collect(_host(tree))
    hits = [i for i in f.issues if i.path == DRV]
    assert hits and hits[0].kind == kind, f.issues
    assert DRV in hits[0].message
    assert f.cann.installs == () and f.firmware is not None  # the other probes carried on


def test_a_file_two_probes_judge_is_read_once_and_reported_once(tmp_path: Path) -> None:
    """opp_kernel/version.info is a toolkit component and the ops probe's version source: one read."""
    tree = hosts.a2_cann83_old(tmp_path)
    path = "/usr/local/Ascend/ascend-toolkit/8.3.RC2/opp_kernel/version.info"
    f = collect(_host(tree))
    (pkg,) = f.cann.installs[0].ops
    assert (pkg.version, pkg.version_dir) == ("8.3.0.0.201", "8.3.RC2")
    (tmp_path / path.lstrip("/")).write_text("")
    f = collect(_host(tree))
    assert [(i.probe, i.kind) for i in f.issues if i.path == path] == [("toolkit", "empty")]
    assert f.cann.installs[0].ops[0].chip_source == "kernel directories"  # the probes carried on


def _issues_as_unprivileged_user(tree: HostTree) -> list[tuple[str, str]]:
    """The probes' issues when run as `nobody` (tests/helpers/unprivileged.py)."""
    collect(_host(tree))  # warm up: import every probe module before dropping privileges
    found = as_nobody(lambda: [(i.kind, i.path) for i in collect(_host(tree)).issues])
    return [tuple(x) for x in found]


def test_permission_denied(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        tree = HostTree(tmp_path).driver()
        (tmp_path / DRV.lstrip("/")).chmod(0)
        f = collect(_host(tree))
        assert any(i.kind == "permission-denied" and i.path == DRV for i in f.issues)
        return
    # As root: a tree every user can traverse (pytest's tmp dirs are 0700), probed as `nobody`.
    base = Path(tempfile.mkdtemp(prefix="cannenv-perm-", dir="/tmp"))
    try:
        base.chmod(0o755)
        tree = HostTree(base).driver()
        for d in [base, *[p for p in (base / DRV.lstrip("/")).parents if base in p.parents]]:
            d.chmod(0o755)
        (base / DRV.lstrip("/")).chmod(0)
        issues = _issues_as_unprivileged_user(tree)
        assert ("permission-denied", DRV) in issues, issues
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_crashing_probe_is_isolated(tmp_path: Path) -> None:
    # a site-packages path that is a file, and an ld.so.cache that is garbage: nothing raises
    tree = hosts.a2_cann83_old(tmp_path)
    tree.write("/etc/ld.so.cache", b"garbage" * 10)
    f = collect(_host(tree), site_packages=("/etc/passwd",))
    assert f.python.error


# ---------------------------------------------------------------- env redaction


def test_secrets_are_redacted() -> None:
    kept, red = redact_env(
        {
            "HF_TOKEN": "hf_abc",
            "AWS_SECRET_ACCESS_KEY": "x",
            "DB_PASSWORD": "p",
            "MY_API_KEY": "k",
            "ASCEND_HOME_PATH": "/usr/local/Ascend/ascend-toolkit/latest",
            "PIP_INDEX_URL": "https://user:pw@mirror/simple",
            "ASCEND_MIRROR": "https://u:pw@m/x",
            "EDITOR": "vi",
        }
    )
    assert set(red) == {"HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "MY_API_KEY"}
    assert all(kept[n] == REDACTED for n in red)
    assert kept["ASCEND_MIRROR"] == f"https://{REDACTED}@m/x"
    assert "EDITOR" not in kept and "hf_abc" not in str(kept)


# ---------------------------------------------------------------- fuzzing (never raise)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_fuzz_kv_and_driver_parsers(text: str) -> None:
    parse_kv(text)
    parse_driver_info(text)
    parse_firmware_info(text)
    parse_board(text)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([*(DATA / "a3_info.txt").read_text().splitlines(), "| x | y |", "|", ""]), max_size=30
    )
)
def test_fuzz_npu_smi_parser_on_shuffled_real_lines(lines: list[str]) -> None:
    _, _, rows = parse_npu_smi_info("\n".join(lines))
    for r in rows:
        assert r.npu_id >= 0 and r.name


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=600))
def test_fuzz_ld_cache_parser(data: bytes) -> None:
    parse_ld_cache(b"glibc-ld.so.cache1.1" + data)
    parse_ld_cache(data)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_read_text_on_any_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    root = tmp_path_factory.mktemp("fz")
    (root / "f").write_bytes(data)
    ctx = ProbeContext(host=Host(root, {}, False))
    read_text(ctx, "t", "/f")


def test_real_ld_cache_matches_ldconfig() -> None:
    cache = Path("/etc/ld.so.cache")
    if not cache.exists() or shutil.which("ldconfig") is None:
        pytest.skip("no /etc/ld.so.cache or ldconfig on this machine")
    import subprocess

    parsed = parse_ld_cache(cache.read_bytes())
    first = subprocess.run(
        ["ldconfig", "-p"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    assert parsed and len(parsed) <= int(first.split()[0])


def test_a_trees_arch_comes_from_its_cann_install_record(tmp_path: Path) -> None:
    """Issue 22: ``arch=`` of ascend_toolkit_install.info, before any /lib/<multiarch> directory (a
    trimmed tree may have none; a tree copied onto another machine's lib dirs must not change it)."""
    tree = hosts.a2_cann83_old(tmp_path / "a")
    shutil.rmtree(tree.root / "lib" / "aarch64-linux-gnu")
    assert not (tree.root / "lib" / "aarch64-linux-gnu").exists()
    assert collect(_host(tree)).os.arch == "aarch64"
    (tree.root / "lib" / "x86_64-linux-gnu").mkdir(parents=True)  # the record still wins
    assert collect(_host(tree)).os.arch == "aarch64"
    bare = HostTree(tmp_path / "b").os_release()  # no CANN record: the multiarch dir answers
    assert collect(_host(bare)).os.arch == "aarch64"
