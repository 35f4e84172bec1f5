"""The matrix at the 2026 frontier (issue 24): products with their own HDK lines, stacks validated
downstream, "not yet" answers and query answers for a person.

Every expectation reproduces a vendor statement recorded in ../shared/research/vendor-2026-12.md:
§2 (MindCluster 26.1.0 / ToolBox 26.1.0 / ascend-deployer 26.0.0 Ascend 950 pairings; the CANN 9.1.0,
9.1.1, 9.2.0 release notes' "26.0.RC1/25.7.RC1" column), §1.3 (torch 2.15.0 published, torch_npu 2.15
not; TorchNPU 26.1.0's table covers CANN 8.5.X-9.1.X only), §1.6 (vllm-ascend v0.30.0rc1: CANN 9.2.0 +
torch_npu 2.10.0.post4 + HDK 26.0.RC1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cannenv import matrix
from cannenv.cli import main
from cannenv.host import Host
from cannenv.probes import collect
from tests.helpers.hosts import HostTree


def _m() -> matrix.Matrix:
    return matrix.load()


@pytest.fixture(autouse=True)
def _capsys(capsys: pytest.CaptureFixture[str]) -> None:
    global _CAP
    _CAP = capsys


_CAP: pytest.CaptureFixture[str] | None = None


def _query(*args: str) -> tuple[int, str]:
    assert _CAP is not None
    with pytest.raises(SystemExit) as info:
        main(["matrix", "query", *args])
    out, _ = _CAP.readouterr()
    return int(info.value.code or 0), out


# ------------------------------------------------------------------ products, not only families


def test_950_products_have_their_own_hdk_for_cann_910() -> None:
    """MindCluster 26.1.0: CANN 9.1.0 with 25.7.RC1 (Atlas 350), 25.1.RC1 (950 SuperPoD), 25.6.RC1 (850)."""
    m = _m()
    assert m.hdk_verdict("9.1.0", "25.7.rc1", "950", "atlas-350").level == "recommended"
    assert m.hdk_verdict("9.1.0", "25.1.rc1", "950", "atlas-950-superpod").level == "recommended"
    assert m.hdk_verdict("9.1.0", "25.6.rc1", "950", "atlas-850").level == "recommended"
    # a statement applies only to the products its source covers
    assert m.hdk_verdict("9.1.0", "25.7.rc1", "950", "atlas-850").level == "unknown"


def test_950_gets_no_a2_a3_hdk_series() -> None:
    m = _m()
    req = m.driver_requirement("9.1.0", "950", "atlas-350")
    assert req is not None
    assert req.compatible_series == ("25.7.RC1",)
    for drv in ("25.3.rc1", "26.0.rc1", "26.1.0", "25.5.0"):
        assert m.hdk_verdict("9.1.0", drv, "950", "atlas-350").level == "unknown", drv
    # and the A2 range is never stretched by the 950's 25.7.RC1
    a2 = m.driver_requirement("9.1.0", "a2")
    assert a2 is not None and "25.7.RC1" not in a2.compatible_series


def test_unknown_950_product_names_the_candidates() -> None:
    v = _m().hdk_verdict("9.1.0", "25.7.rc1", "950")
    assert v.level == "unknown"
    for title in ("Atlas 350", "Atlas 850", "Atlas 950 SuperPoD"):
        assert title in v.statement
    assert v.settle and "PCI subsystem" in v.settle


def test_cann_before_the_950_is_incompatible_naming_both_statements() -> None:
    """No 950 ops package exists before CANN 9.0.0 (CANN 9.0.0 release note), though the 9.1.0 table's
    '26.0.RC1/25.7.RC1' column marks 8.5.2 Y: both are named."""
    v = _m().hdk_verdict("8.5.2", "25.7.rc1", "950", "atlas-350")
    assert v.level == "incompatible"
    assert "9.0.0" in v.statement and "26.0.RC1/25.7.RC1" in v.statement
    _code, out = _query("--driver", "25.7.rc1", "--family", "950", "--json")
    doc = json.loads(out)
    canns = {r["cann"] for r in doc["cann_accepting_driver"]}
    assert "8.5.2" not in canns and {"9.1.0", "9.2.0", "9.0.0"} <= canns
    assert {r["product"] for r in doc["cann_accepting_driver"]} == {"atlas-350"}


def test_toolbox_statement_850_has_no_cann_90_statement() -> None:
    """ToolBox 26.1.0: Atlas 850 / 950 SuperPoD only CANN 9.1.X: 9.0.0 there is unknown, not a pass."""
    v = _m().hdk_verdict("9.0.0", "25.6.rc1", "950", "atlas-850")
    assert v.level == "unknown" and "9.1.X only" in v.statement


def test_atlas_350_on_cann_900_two_release_notes() -> None:
    """ascend-deployer 26.0.0: 1.0.RC1 (recommended); the appliance branch's 25.1.RC1 is observed only."""
    m = _m()
    assert m.hdk_verdict("9.0.0", "1.0.rc1", "950", "atlas-350").level == "recommended"
    rows = m.hdk_pairs("9.0.0", family="950", product="atlas-350")
    assert {(r.driver, r.evidence) for r in rows} >= {
        (("1.0.rc1",), "recommended"),
        (("25.1.rc1",), "observed"),
    }


def test_950_stack_pairs_cann_910_with_hdk_257() -> None:
    m = _m()
    stacks = m.find_stacks(family="950")
    assert stacks, "a 950 stack where a vendor pairing exists"
    for s in stacks:
        assert s.product == "atlas-350" and s.version("cann") == "9.1.0" and s.version("driver") == "25.7.rc1"
        assert m.stack_problems(s) == []


def test_a2_a3_stacks_on_cann_920() -> None:
    m = _m()
    for fam in ("a2", "a3"):
        stacks = m.find_stacks(family=fam, cann="9.2.0")
        assert stacks, fam
        for s in stacks:
            assert m.stack_problems(s) == [], s.id


def _pci(tree: HostTree, sub_device: str | None) -> None:
    base = "/sys/bus/pci/devices/0000:01:00.0"
    tree.write(f"{base}/vendor", "0x19e5\n")
    tree.write(f"{base}/device", "0xd806\n")
    if sub_device is not None:
        tree.write(f"{base}/subsystem_vendor", "0x19e5\n")
        tree.write(f"{base}/subsystem_device", f"0x{sub_device}\n")


def test_product_from_pci_subsystem(tmp_path: Path) -> None:
    """ascend-deployer 26.0.0 common_info.py: 19e5:d806 with subsystem 19e5:4003/4004/4005 -> Atlas 350."""
    tree = HostTree(tmp_path)
    _pci(tree, "4004")
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.devices.family == "950"
    assert f.devices.product == "atlas-350" and "subsystem 19e5:4004" in (f.devices.product_source or "")


def test_product_not_told_names_candidates(tmp_path: Path) -> None:
    tree = HostTree(tmp_path)
    _pci(tree, None)
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.devices.family == "950" and f.devices.product is None
    assert set(f.devices.product_candidates) == {"atlas-350", "atlas-850", "atlas-950-superpod"}


def test_product_from_names_and_labels() -> None:
    from cannenv.soc import product_from_accelerator_type, products_from_soc

    assert [p.id for p in products_from_soc("Ascend950PR_9579")] == ["atlas-350"]
    assert products_from_soc("Ascend950DT_9582") == ()  # not told apart: no guess
    lbl = product_from_accelerator_type("950-SuperPod-Atlas-8")
    assert lbl is not None and lbl.id == "atlas-950-superpod"


# ------------------------------------------------------------------ validated downstream


def test_downstream_row_is_its_own_evidence_and_warns_against_the_vendor_table() -> None:
    v = _m().torch_npu_verdict("2.10.0.post4", "9.2.0", torch="2.10.0")
    assert v.level == "compatible"
    assert "validated by vllm-ascend v0.30.0rc1" in v.statement and "recommended" not in v.statement
    assert v.caveat and "8.5.X, 9.0.X, 9.1.X" in v.caveat and "PT-RN-2610" in v.caveat


def test_query_cann_920_torch_2100_names_the_downstream_row() -> None:
    code, out = _query("--cann", "9.2.0", "--torch", "2.10.0")
    assert code == 0
    first = out.splitlines()[0]
    assert "2.10.0.post4" in first and "downstream" in first
    assert "no torch_npu row matches" not in out


# ------------------------------------------------------------------ not yet / query answers


def test_torch_215_not_yet() -> None:
    _code, out = _query("--torch", "2.15.0")
    first = out.splitlines()[0]
    assert first.startswith("not yet") and "torch 2.14.0 + torch_npu 2.14.0" in first
    assert "2.15.0 is on the package index" in first
    assert "torch_npu 2.15" not in out.replace("torch-npu 2.15.x is not", "")


def test_torchnpu_2620_with_cann_92x_is_unknown_with_what_settles_it() -> None:
    text = _m().cann_not_covered("9.2.0")
    assert text is not None and "9.1.X" in text and "TorchNPU 26.2.0" in text and "settle" in text


def test_query_cann_only_answers_hdk_first_and_no_torch_npu() -> None:
    code, out = _query("--cann", "9.2.0")
    assert code == 0
    assert out.splitlines()[0].startswith("CANN 9.2.0 on a2: recommended HDK Ascend HDK 26.2.RC1")
    assert "torch_npu" not in out


def test_query_no_empty_punctuation() -> None:
    _code, out = _query("--cann", "9.2.0", "--torch", "2.14.0", "--python", "3.11")
    assert "Python -" not in out and "[]" not in out and "(older statements: none)" not in out
    assert out.splitlines()[0] == "no torch_npu row matches CANN 9.2.0, torch 2.14.0, Python 3.11"


def test_query_950_recommended_hdk_per_product() -> None:
    _code, out = _query("--cann", "9.1.0", "--family", "950")
    lines = out.splitlines()
    assert lines[0].startswith(
        "CANN 9.1.0 on 950 (Atlas 350 card (Ascend 950PR)): recommended HDK Ascend HDK 25.7.RC1"
    )
    assert "recommended HDK -" not in out and "25.3.X" not in out


def test_query_json_keeps_its_keys() -> None:
    _code, out = _query("--cann", "8.3.RC1", "--torch", "2.7.1", "--python", "3.11", "--json")
    doc = json.loads(out)
    assert {"torch_npu", "python_support", "driver_requirement", "hdk_pairs", "answer"} <= set(doc)


def test_mindie_300_gives_cann_851_the_hdk_of_850() -> None:
    """MindIE 3.0.0 (gitcode Ascend/release-management MindIE/26.0.0/release.md): 'CANN 8.5.1和CANN 8.5.0
    配套的HDK版本一致' - a validated statement, with both HDKs the matrix records for 8.5.0."""
    m = _m()
    for drv in ("25.5.1", "25.5.0"):
        v = m.hdk_verdict("8.5.1", drv, "a2")
        assert v.level == "compatible" and v.sources == ("MINDIE-300",), v
    assert m.hdk_verdict("8.5.1", "25.7.rc1", "950", "atlas-350").level == "incompatible"  # before 9.0.0


SMI = Path(__file__).resolve().parent.parent / "data" / "npu_smi"


def test_product_from_real_npu_smi_names(tmp_path: Path) -> None:
    """npu-smi output quoted from a 950PR host (tests/data/npu_smi/SOURCES.md: 950pr_pypto_info.txt,
    npu-smi 25.7.rc1.6) names Ascend950PR: the Atlas 350 card (CANN 9.0.0 release note). The 950DT
    rows (950dt_nputop_synthetic_info.txt) do not tell the product: the candidates are named."""
    from tests.helpers.hosts import CAPTURE_INFO

    pr = HostTree(tmp_path / "pr")
    pr.write(CAPTURE_INFO, (SMI / "950pr_pypto_info.txt").read_text())
    f = collect(Host(pr.root, dict(pr.env), True, 5.0))
    assert f.devices.family == "950" and f.devices.product == "atlas-350"
    assert "Ascend950PR" in (f.devices.product_source or "")
    dt = HostTree(tmp_path / "dt")
    dt.write(CAPTURE_INFO, (SMI / "950dt_nputop_synthetic_info.txt").read_text())
    f = collect(Host(dt.root, dict(dt.env), True, 5.0))
    assert f.devices.family == "950" and f.devices.product is None
    assert set(f.devices.product_candidates) == {"atlas-350", "atlas-850", "atlas-950-superpod"}


def test_query_python_alone_and_validated_only_hdk_answer_first() -> None:
    code, out = _query("--python", "3.11")
    assert code == 0 and out.startswith("Python 3.11 is supported by torch ") and "2.12.0" in out
    code, out = _query("--python", "3.6")
    assert code == 3 and out.strip() == "no statement records a torch line for Python 3.6"
    code, out = _query("--cann", "8.5.1", "--family", "a2")
    assert out.splitlines()[0] == (
        "CANN 8.5.1 on a2: no recommended HDK stated; validated with driver 25.5.1, 25.5.0 [MINDIE-300]"
    )
    # a downstream row is never offered as "recommended instead"
    code, out = _query("--torch-npu", "2.13.0", "--cann", "9.2.0")
    assert "recommended instead" not in out
