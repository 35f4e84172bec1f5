"""Products inside the A2 / A3 families (issue 30): what tells them on a host and their minima.

The evidence is what the vendor's own tools read (matrices/socs.yaml, sources AD-PRODUCTS-2600 and
MC-BOARD-IDS): the NPU's PCI subsystem id (ascend-deployer 26.0.0 card_map) and the Board ID of
``npu-smi info -t board -i N`` (ascend-deployer node labelling, MindCluster device plugin). Host trees
carry real captured outputs (tests/data/npu_smi/SOURCES.md); where no public capture of a product
exists the capture's Board ID or the sysfs PCI ids take the value the vendor's table names.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cannenv import matrix
from cannenv.facts import DeviceFacts
from cannenv.host import Host
from cannenv.probes import collect
from cannenv.soc import products_from_board_id, products_from_pci
from tests.helpers import hosts
from tests.helpers.hosts import CAPTURE_BOARD, CAPTURE_INFO, HostTree

SMI = Path(__file__).resolve().parent.parent / "data" / "npu_smi"
MATRICES = Path(__file__).resolve().parent.parent.parent / "matrices"
A2_INFO = (SMI / "a2_25.5.1_info.txt").read_text()
A2_BOARD_CHIP = (SMI / "a2_board.txt").read_text()
A2_BOARD_NPU = (SMI / "a2_board_npu_25.5.1.txt").read_text()


def _a2_tree(tmp_path: Path, board_id: str | None = None, subsystem: str | None = None) -> HostTree:
    """An A2 tree with the captured `npu-smi info` and both board answers in one capture file (the
    chip-level one names the SoC, the NPU-level one the Board ID and PCI ids)."""
    npu = A2_BOARD_NPU
    if board_id is not None:
        npu = npu.replace(": 0x60", f": {board_id}")
    tree = HostTree(tmp_path)
    tree.write(CAPTURE_INFO, A2_INFO)
    tree.write(CAPTURE_BOARD, A2_BOARD_CHIP + npu)
    if subsystem is not None:
        base = "/sys/bus/pci/devices/0000:c1:00.0"
        for name, val in (("vendor", "0x19e5"), ("device", "0xd802"), ("subsystem_vendor", "0x19e5")):
            tree.write(f"{base}/{name}", val + "\n")
        tree.write(f"{base}/subsystem_device", f"0x{subsystem}\n")
    return tree


def _facts(tree: HostTree) -> DeviceFacts:
    return collect(Host(tree.root, dict(tree.env), True, 5.0)).devices


def test_real_a2_board_answer_names_no_product(tmp_path: Path) -> None:
    """The captured A2 board answer (subsystem 19e5:3003, which ascend-deployer maps to the class
    'A900T' only; Board ID 0x60, in no vendor tuple) tells no product: none is named or guessed."""
    d = _facts(_a2_tree(tmp_path))
    assert d.family == "a2" and d.board.get("Board ID") == "0x60"
    assert d.board.get("Chip Name") == "910B4"  # the chip-level answer still names the SoC
    assert d.product is None and d.product_candidates == ()


def test_board_id_of_800i_a2_without_hccs_tells_the_product(tmp_path: Path) -> None:
    """MindCluster: Board ID 0x3c (0x33 before 2024-09-04) is the Atlas 800I A2 without HCCS."""
    for bid in ("0x3c", "0x33"):
        d = _facts(_a2_tree(tmp_path / bid, board_id=bid))
        assert d.product == "atlas-800i-a2", bid
        assert d.product_source == f"npu-smi Board ID {bid}"


def test_shared_board_id_names_the_candidates_never_a_guess(tmp_path: Path) -> None:
    """ascend-deployer lists 0x30 in its Atlas_800_A2 (no T or I) and Atlas_900_A2_PoD tuples."""
    d = _facts(_a2_tree(tmp_path, board_id="0x30"))
    assert d.product is None
    assert d.product_candidates == ("atlas-800i-a2", "atlas-800t-a2", "atlas-900-a2-pod")
    assert d.product_source == "npu-smi Board ID 0x30"


def test_pci_subsystem_and_board_id_together_tell_the_product(tmp_path: Path) -> None:
    """ascend-deployer card_map: d802 with subsystem 19e5:3002 is 'Atlas 800I A2'; with the shared
    Board ID 0x30 the one product both name is the 800I A2."""
    d = _facts(_a2_tree(tmp_path, board_id="0x30", subsystem="3002"))
    assert d.product == "atlas-800i-a2"
    assert "subsystem 19e5:3002" in (d.product_source or "") and "Board ID 0x30" in (d.product_source or "")


def test_disagreeing_evidence_keeps_every_named_product_as_a_candidate(tmp_path: Path) -> None:
    """PCI 19e5:4000 (ascend-deployer: 'A300i-a2') against Board ID 0x50 (its Atlas_200T_A2_Box16)."""
    d = _facts(_a2_tree(tmp_path, board_id="0x50", subsystem="4000"))
    assert d.product is None
    assert d.product_candidates == ("atlas-300i-a2", "atlas-200t-a2-box16")
    assert (d.product_source or "").startswith("the evidence disagrees: ")


def test_board_ids_are_read_within_the_family(tmp_path: Path) -> None:
    """A real 300I Duo board answer shows Board ID 0xb1, which the A3 tables list: on the 310P
    host it names no product."""
    assert {p.id for p in products_from_board_id("a3", "0xb1")} == {"atlas-a3-superpod", "atlas-200t-a3-box8"}
    assert products_from_board_id("310p", "0xb1") == ()
    tree = HostTree(tmp_path)
    tree.write(CAPTURE_INFO, (SMI / "310p3_duo_25.2.0_info.txt").read_text())
    tree.write(CAPTURE_BOARD, (SMI / "310p3_duo_board_npu_25.5.1.txt").read_text())
    d = _facts(tree)
    assert d.family == "310p" and d.product is None and d.product_candidates == ()


def test_a3_products_from_the_vendor_tables() -> None:
    assert [p.id for p in products_from_pci("d803", "19e5:3003")] == ["atlas-800-a3"]
    assert [p.id for p in products_from_pci("d803", "19e5:3000")] == ["atlas-a3-superpod"]
    assert [p.id for p in products_from_board_id("a3", "0xB3")] == ["atlas-800-a3"]
    # a class id (ascend-deployer 'A900T') is no product's
    assert products_from_pci("d802", "19e5:3003") == ()
    assert products_from_board_id("a2", "0x60") == () and products_from_board_id("a2", "0x" + "1" * 40) == ()


def test_the_800i_a2_minima_are_judged() -> None:
    """800I A2: CANN >= 8.0.RC1 (first install guide page), HDK >= 24.1.RC1 (MindCluster 6.0.RC1)."""
    m = matrix.load()
    early = m.hdk_verdict("7.0.0", "23.0.3", "a2", "atlas-800i-a2")
    assert early.level == "unknown" and "8.0.RC1" in early.statement
    assert m.hdk_verdict("8.0.RC1", "24.1.rc1", "a2", "atlas-800i-a2").level == "recommended"


def test_a_driver_older_than_the_products_first_hdk_is_unknown_for_it(tmp_path: Path) -> None:
    """No shipped statement accepts an A2 driver older than 24.1.RC1 with CANN >= 8.0.RC1, so the
    rule is shown on a copy of the matrix with one HYPOTHETICAL statement added (CANN 8.0.RC1 with
    HDK 23.0.X: Y): the family keeps the statement's answer, the 800I A2 is unknown naming its
    minimum, and a stated N is never softened."""
    import shutil

    folder = tmp_path / "m"
    shutil.copytree(MATRICES, folder, ignore=shutil.ignore_patterns("explain", "precision", "certify"))
    hdk = folder / "hdk.yaml"
    text = hdk.read_text(encoding="utf-8")
    extra = (
        "hdk_compat:\n"
        '  - {cann: ["8.0.RC1"], hdk: ["23.0.X"], compatible: true, statement: "HYPOTHETICAL test row", '
        "sources: [RN-850]}\n"
        '  - {cann: ["8.0.RC1"], hdk: ["22.0.X"], compatible: false, statement: "HYPOTHETICAL test N", '
        "sources: [RN-850]}\n"
    )
    hdk.write_text(text.replace("hdk_compat:\n", extra, 1), encoding="utf-8")
    m = matrix.load([folder])
    assert m.hdk_verdict("8.0.RC1", "23.0.3", "a2").level == "compatible"
    v = m.hdk_verdict("8.0.RC1", "23.0.3", "a2", "atlas-800i-a2")
    assert v.level == "unknown" and "24.1.RC1" in v.statement and v.recommended == "24.1.RC1"
    assert m.hdk_verdict("8.0.RC1", "22.0.3", "a2", "atlas-800i-a2").level == "incompatible"


def test_candidates_are_each_judged() -> None:
    """A host that may be an 800I A2 or an 800T A2: where their answers differ the verdict is
    unknown and names each; where they agree it is that one answer."""
    m = matrix.load()
    cands = ("atlas-800i-a2", "atlas-800t-a2", "atlas-900-a2-pod")
    v = m.hdk_verdict("7.0.0", "23.0.3", "a2", None, cands)
    assert v.level == "unknown" and "Atlas 800I A2" in v.statement and "Atlas 800T A2" in v.statement
    same = m.hdk_verdict("8.5.0", "25.5.0", "a2", None, cands)
    fam = m.hdk_verdict("8.5.0", "25.5.0", "a2")
    assert (same.level, same.statement) == (fam.level, fam.statement)


def _toolkit_7(tree: HostTree) -> None:
    """CANN 7.0.0 in the <= 8.3 layout (hosts.toolkit's), its install record without the
    innerversion line (none recorded for 7.0.0 in the research notes)."""
    path = "/usr/local/Ascend/ascend-toolkit/7.0.0"
    tree.write(
        f"{path}/{tree.arch}-linux/ascend_toolkit_install.info",
        f"package_name=Ascend-cann-toolkit\nversion=7.0.0\narch={tree.arch}\nos=linux\npath={path}/{tree.arch}-linux\n",
    )
    tree.link("/usr/local/Ascend/ascend-toolkit/latest", "7.0.0")


def _doctor_driver_cann(tree: HostTree) -> tuple[DeviceFacts, str, str]:
    from cannenv import checks
    from cannenv.checks.stack import choose_target

    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    (d,) = [x for x in checks.run(f, choose_target(f, matrix.load())) if x.id == "driver-cann"]
    return f.devices, d.status, d.detail


def test_doctor_names_the_candidates_where_their_minima_differ(tmp_path: Path) -> None:
    """Board ID 0x30 with CANN 7.0.0: the 800I A2 has no statement before CANN 8.0.RC1, the other
    candidates keep the family's answer, so the doctor says the product is unknown within the
    family, which products it could be, and each one's answer; it picks none."""
    tree = _a2_tree(tmp_path, board_id="0x30").driver(hosts.driver_like_25_3("23.0.3"))
    _toolkit_7(tree)
    dev, status, detail = _doctor_driver_cann(tree)
    assert dev.product is None
    assert status == "warn", detail
    assert "product unknown within the family: npu-smi Board ID 0x30 could be" in detail
    assert "Atlas 800I A2 inference server: unknown" in detail and "Atlas 800T A2 training server" in detail


def test_doctor_judges_the_told_product(tmp_path: Path) -> None:
    """PCI 19e5:3002 (ascend-deployer: 'Atlas 800I A2') with CANN 7.0.0: unknown for the product,
    naming it, how the host told it and the statement its minimum rests on."""
    tree = _a2_tree(tmp_path, subsystem="3002").driver(hosts.driver_like_25_3("23.0.3"))
    _toolkit_7(tree)
    dev, status, detail = _doctor_driver_cann(tree)
    assert dev.product == "atlas-800i-a2"
    assert status == "warn" and "Atlas 800I A2" in detail and "subsystem 19e5:3002" in detail, detail
    assert "8.0.RC1" in detail


@given(st.text(max_size=200))
def test_any_board_id_text_names_only_the_familys_listed_products(text: str) -> None:
    hits = products_from_board_id("a2", text)
    assert all(p.family == "a2" for p in hits)
    if hits:
        assert int(text.strip().lower()[2:], 16) in {int(b, 16) for p in hits for b in p.board_ids}
