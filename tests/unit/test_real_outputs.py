"""Real outputs users posted publicly (tests/data/npu_smi/SOURCES.md lists each one's source):
every one is read right by the parsers, and the doctor judges hosts built from them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cannenv import checks
from cannenv.checks.stack import choose_target
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.probes import collect
from cannenv.probes._common import bracket_list, parse_kv
from cannenv.probes.driver import parse_driver_info, parse_firmware_info
from cannenv.probes.npu import parse_npu_smi_info
from cannenv.soc import family_from_npu_name
from cannenv.versions import DriverVersion, compatible_codes_accept, internal_code
from tests.helpers import hosts
from tests.helpers.hosts import HostTree

DATA = Path(__file__).resolve().parent.parent / "data"
SMI = DATA / "npu_smi"


# ------------------------------------------------------------------ npu-smi info tables

REAL_TABLES = [
    # file, tool version, driver version, (npu, chip, phy, name, health, bus) of the first chip, chips, family
    ("910a_20.2.2_info.txt", "1.8.21", "20.2.2.spc001", (0, 0, None, "910A", "OK", "0000:C1:00.0"), 8, "910"),
    (
        "310pvir01_22.0.4_info.txt",
        "22.0.4",
        "22.0.4",
        (7, 0, 0, "310Pvir01", "OK", "0000:00:07.0"),
        1,
        "310p",
    ),
    ("910b4_24.1.1_info.txt", "24.1.1", "24.1.1", (0, 0, None, "910B4", "OK", "0000:C1:00.0"), 2, "a2"),
    ("a3_26.0.rc2_info.txt", "26.0.rc2", "26.0.rc2", (0, 0, 0, "Ascend910", "OK", "0000:9D:00.0"), 2, "a3"),
    ("a3_processes_info.txt", None, None, (7, 0, 14, "Ascend910", "OK", "0000:81:00.0"), 2, "a3"),
    ("950pr_25.x_info.txt", None, None, (0, 0, None, "Ascend950PR", "OK", "0000:71:00.0"), 1, "950"),
    ("950pr_pypto_info.txt", "25.7.rc1.6", "25.7.rc1.6", (0, 0, None, "Ascend950PR", "OK", None), 2, "950"),
    ("310p3_duo_25.2.0_info.txt", "25.2.0", "25.2.0", (2, 0, 0, "310P3", "OK", "0000:01:00.0"), 2, "310p"),
    (
        "310p3_25.0.rc1.b033_info.txt",
        "25.0.rc1.b033",
        "25.0.rc1.b033",
        (1, 0, 0, "310P3", "OK", "0000:01:00.0"),
        2,
        "310p",
    ),
    (
        "a3_24.1.rc3.7_info.txt",
        "24.1.rc3.7",
        "24.1.rc3.7",
        (0, 0, 0, "Ascend910", "OK", "0000:9D:00.0"),
        2,
        "a3",
    ),
    ("910b1_24.1.0_info.txt", "24.1.0", "24.1.0", (0, 0, None, "910B1", "OK", "0000:C1:00.0"), 2, "a2"),
    ("310b4_23.0.0_alarm_info.txt", "23.0.0", "23.0.0", (0, 0, 0, "310B4", "Alarm", None), 1, "310b"),
    (
        "950dt_nputop_synthetic_info.txt",
        "99.0.rc1.b1",
        "99.0.rc1.b1",
        (0, 0, None, "Ascend950DT", "OK", None),
        2,
        "950",
    ),
    ("a2_info.txt", "24.1.rc2.2", "24.1.rc2.2", (0, 0, None, "910B2C", "OK", "0000:5A:00.0"), 2, "a2"),
    ("310p_info.txt", "23.0.rc3", "23.0.rc3", (0, 0, 0, "310P3", "OK", "0000:01:00.0"), 2, "310p"),
]


@pytest.mark.parametrize(("name", "smi", "drv", "first", "count", "family"), REAL_TABLES)
def test_every_real_npu_smi_table_is_read(
    name: str, smi: str | None, drv: str | None, first: tuple[object, ...], count: int, family: str
) -> None:
    tool, driver, chips = parse_npu_smi_info((SMI / name).read_text())
    assert (tool, driver) == (smi, drv)
    assert len(chips) == count
    c = chips[0]
    assert (c.npu_id, c.chip_id, c.phy_id, c.name, c.health, c.bus_id) == first
    assert family_from_npu_name(c.name) == family
    if driver is not None:
        DriverVersion.parse(driver)  # every real header version is in the grammar


def test_950_second_npu_in_alarm_is_read() -> None:
    _, _, chips = parse_npu_smi_info((SMI / "950dt_nputop_synthetic_info.txt").read_text())
    assert [(c.npu_id, c.health) for c in chips] == [(0, "OK"), (3, "Alarm")]


def test_the_process_table_is_not_read_as_npus() -> None:
    _, _, chips = parse_npu_smi_info((SMI / "a3_processes_info.txt").read_text())
    assert [(c.npu_id, c.chip_id, c.phy_id) for c in chips] == [(7, 0, 14), (7, 1, 15)]


@pytest.mark.parametrize("name", ["vllm-ascend-4621.txt", "vllm-ascend-3657.txt"])
def test_collect_env_dumps_npu_table_is_read(name: str) -> None:
    text = (DATA / "collect_env" / name).read_text()
    _, drv, chips = parse_npu_smi_info(text)
    assert drv and chips and all(c.health == "OK" for c in chips)
    assert {family_from_npu_name(c.name) for c in chips} == {"a2"}


def test_collect_env_toolkit_record_is_read() -> None:
    text = (DATA / "collect_env" / "vllm-ascend-4621.txt").read_text()
    kv = parse_kv(text)
    assert kv["version"] == "8.3.RC2" and kv["innerversion"].startswith("V100R001C23")
    assert "V100R001C23" in bracket_list(kv["compatible_version"])


def _tree_with_table(tmp_path: Path, table: str, *, board: str | None = None) -> HostTree:
    """A tree carrying a captured ``npu-smi info`` output where the doctor reads it (never run)."""
    tree = HostTree(tmp_path).driver()
    tree.npu_smi(None)
    tree.write(hosts.CAPTURE_INFO, table)
    if board is not None:
        tree.write(hosts.CAPTURE_BOARD, board)
    return tree


def test_950_table_gives_npus_family_and_flags_alarm(tmp_path: Path) -> None:
    """The 950 layout (id and name in separate columns, empty first cell on the chip row): NPUs
    found, family 950, and an NPU in ``Alarm`` health is flagged (the table's Health column
    edited to Alarm for the test; the layout is the real one)."""
    table = (SMI / "950pr_25.x_info.txt").read_text().replace("| OK     |", "| Alarm  |")
    tree = _tree_with_table(tmp_path, table)
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.devices.family == "950" and len(f.devices.chips) == 1
    found = [x for x in checks.run(f, choose_target(f, load())) if x.id == "npu-devices"]
    assert [x.status for x in found] == ["warn"] and "Alarm" in found[0].detail
    assert "no npu-smi answer" not in found[0].detail


def test_unreadable_table_is_not_called_no_answer(tmp_path: Path) -> None:
    tree = _tree_with_table(tmp_path, "| something | nobody | has | seen |\n")
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    found = [x for x in checks.run(f, choose_target(f, load())) if x.id == "npu-devices"]
    assert found and "answered" in found[0].detail and "no npu-smi answer" not in found[0].detail


def test_vnpu_host_gets_the_310p_family(tmp_path: Path) -> None:
    tree = _tree_with_table(tmp_path, (SMI / "310pvir01_22.0.4_info.txt").read_text())
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.devices.family == "310p" and "310Pvir01" in (f.devices.family_source or "")


# ------------------------------------------------------------------ install records


@pytest.mark.parametrize(
    ("name", "version", "inner", "fw"),
    [
        ("driver_23.0.7_version.info", "23.0.7", "V100R001C15SPC012B220", ("7.0.0,7.1.99",)),
        ("driver_24.1.rc1_version.info", "24.1.rc1", "V100R001C15SPC006B220", ("7.0.0,7.2.99",)),
        ("driver_25.0.rc1.1_version.info", "25.0.rc1.1", "V100R001C21SPC002B220", ("7.0.0,7.7.99",)),
    ],
)
def test_real_driver_records(name: str, version: str, inner: str, fw: tuple[str, ...]) -> None:
    d = parse_driver_info((DATA / "install" / name).read_text())
    assert (d.version, d.innerversion, d.compatible_version_fw) == (version, inner, fw)
    DriverVersion.parse(d.version or "")
    assert internal_code(d.innerversion) is not None


def test_real_firmware_record() -> None:
    fw = parse_firmware_info((DATA / "install" / "firmware_7.1.0.11.220_version.info").read_text())
    assert fw.version == "7.1.0.11.220" and fw.package_version == "23.0.7"
    assert fw.compatible_version_drv == ("23.0.rc3,23.0.rc3.", "23.0.0,23.0.0.")


def test_real_toolkit_records_and_range_compatible_version() -> None:
    kv = parse_kv((DATA / "install" / "toolkit_8.0.RC3_ascend_toolkit_install.info").read_text())
    entries = bracket_list(kv["compatible_version"])
    assert entries == ("V100R001C13,V100R001C19", "V100R001C30")
    # driver 24.1.rc3 (C19, the range's upper bound) is listed; C20 is not; C30 exactly is
    assert compatible_codes_accept(entries, "V100R001C19SPC001B124") is True
    assert compatible_codes_accept(entries, "V100R001C15SPC006B220") is True
    assert compatible_codes_accept(entries, "V100R001C20SPC001B251") is False
    assert compatible_codes_accept(entries, "V100R001C30") is True
    assert compatible_codes_accept(("garbage",), "V100R001C19") is None
    kv85 = parse_kv((DATA / "install" / "toolkit_8.5.0_ascend_toolkit_install.info").read_text())
    assert kv85["version"] == "8.5.0" and kv85["path"].startswith("/usr/local/Ascend/cann-8.5.0")


def test_range_record_gives_no_false_warning_and_says_it_is_weak(tmp_path: Path) -> None:
    """CANN 8.0.RC3 on driver 24.1.rc3 (C19, the upper bound of the record's range), no NPU and so
    no matrix family: the fallback passes, and says it is the weakest evidence."""
    # 24.1.rc3's own lines as research §4.1 quotes them (several public notes)
    drv = (
        "Version=24.1.rc3\nInnerversion=V100R001C19SPC001B124\n"
        "compatible_version=[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]\n"
        "compatible_version_fw=[7.0.0,7.5.99]\npackage_version=24.1.rc3\n"
    )
    tree = HostTree(tmp_path).driver(drv)
    path = tree.toolkit("8.0.RC3")
    rec = (DATA / "install" / "toolkit_8.0.RC3_ascend_toolkit_install.info").read_text()
    tree.write(f"{path}/{tree.arch}-linux/ascend_toolkit_install.info", rec)
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.driver and f.driver.innerversion and "C19" in f.driver.innerversion
    found = [x for x in checks.run(f, choose_target(f, load())) if x.id == "driver-cann"]
    assert [x.status for x in found] == ["pass"], found
    assert "weakest evidence" in found[0].detail and "C10" in found[0].detail


def test_old_driver_version_grammar() -> None:
    v = DriverVersion.parse("20.2.2.spc001")
    assert v.text == "20.2.2.spc001"
    assert DriverVersion.parse("20.2.2") < v < DriverVersion.parse("20.2.3") < DriverVersion.parse("21.0.rc1")


# ------------------------------------------------------------------ ascend-toolkit/latest as a directory


def _latest_dir(tree: HostTree, version: str) -> None:
    """``ascend-toolkit/latest`` as a real directory whose entries link into one version."""
    base = "/usr/local/Ascend/ascend-toolkit"
    (tree.root / base.lstrip("/") / "latest").unlink()
    for entry in (f"{tree.arch}-linux", "toolkit", "lib64", "opp_kernel", "opp"):
        tree.link(f"{base}/latest/{entry}", f"../{version}/{entry}")


def test_latest_as_a_directory_of_links_with_env_set(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver()
    tree.toolkit("8.3.RC2")
    _latest_dir(tree, "8.3.RC2")
    tree.env["ASCEND_HOME_PATH"] = "/usr/local/Ascend/ascend-toolkit/latest"
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.cann.active and f.cann.active.endswith("/8.3.RC2")
    assert "ASCEND_HOME_PATH" in f.cann.active_reason and "environment not set" not in f.cann.active_reason


def test_latest_directory_follows_what_it_points_to_with_two_installs(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver()
    tree.toolkit("8.2.RC1")
    tree.toolkit("8.3.RC2")
    _latest_dir(tree, "8.2.RC1")  # the older one: not the newest-wins fallback
    tree.env = {"PATH": "/usr/bin"}
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.cann.active and f.cann.active.endswith("/8.2.RC1")
    assert "latest" in f.cann.active_reason
    tree.env["ASCEND_HOME_PATH"] = "/usr/local/Ascend/ascend-toolkit/latest"
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.cann.active and f.cann.active.endswith("/8.2.RC1")
    assert "ASCEND_HOME_PATH" in f.cann.active_reason


# ------------------------------------------------------------------ shape


def test_checks_never_import_probes() -> None:
    """Checks judge facts; they never depend on the code that reads the host."""
    pkg = Path(__file__).resolve().parents[2] / "cannenv" / "checks"
    bad = []
    for py in pkg.glob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            mods = []
            if isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            bad += [f"{py.name}: {m}" for m in mods if re.match(r"^cannenv\.probes(\.|$)", m)]
    assert bad == []


def test_950_board_query_has_no_chip_option() -> None:
    """Ascend 950's npu-smi refuses ``-c`` (SwanHubX/SwanLab PR #1719): the board query goes
    without it. The board text is a FIXTURE with the two fields research §4.8 names for 950."""
    from cannenv.host import Host as _Host
    from cannenv.probes._common import ProbeContext
    from cannenv.probes.npu import _from_info

    asked: list[tuple[int, int | None]] = []

    def board_of(npu: int, chip: int | None) -> str:
        asked.append((npu, chip))
        return "        NPU ID : 0\n        Chip Name : Ascend950PR\n        NPU Name : 9579\n"

    facts: dict[str, object] = {}
    ctx = ProbeContext(host=_Host(Path("/"), {}, True, 5.0))
    _from_info(ctx, facts, (SMI / "950pr_25.x_info.txt").read_text(), "test", board_of)
    assert asked == [(0, None)]
    assert facts["soc"] == "Ascend950PR_9579" and facts["family"] == "950"
    facts = {}
    _from_info(ctx, facts, (SMI / "a3_26.0.rc2_info.txt").read_text(), "test", board_of)
    # other families keep -c for the SoC; the NPU-level answer follows for its Board ID (issue 30)
    assert asked[1:] == [(0, 0), (0, None)]
