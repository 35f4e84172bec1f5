"""`cannenv explain`: hardware faults as the kernel and the Ascend device report them (issue 29).

Linux's own report formats (APEI/GHES + CPER, PCIe AER, EDAC, x86 machine checks), the driver's DCMI
return codes and the device's fault events (MindCluster's fault knowledge and fault levels), each a
table of matrices/explain/libtables.yaml read whole from its source: every form is tested on the
printer's own wording (the format string of its source), on near misses, on hostile input, and the
severity each format states decides — a corrected error names no cause.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cannenv import linre
from cannenv.checks import Finding
from cannenv.explain import hwtables, judge, signatures
from cannenv.explain.scan import Scanner

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
TABLES = {t.id: t for t in K.lib_tables}
HW = ("linux-cper", "linux-cper-section", "linux-cper-mem", "linux-aer", "linux-edac", "linux-mce")
HELDOUT5 = Path(__file__).resolve().parents[1] / "data" / "errors" / "heldout5"


def _explain(text: str, findings: list[Finding] | None = None) -> judge.Explanation:
    s = Scanner(TABLE, total_hint=len(text))
    s.feed(text.encode())
    s.end_input()
    return judge.explain(TABLE, s.result(), findings=findings)


def _top(text: str) -> tuple[str | None, str | None]:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


def _matches(text: str) -> list[str]:
    return [m.id for m in _explain(text).matches]


# --- the data: whole tables ---------------------------------------------------------------------
def test_the_kernels_tables_are_its_whole_string_arrays() -> None:
    # cper.c severity_strs and mem_err_type_strs; aer.c aer_error_severity_string before and after
    # the rename; EDAC's CE/UE; mce_notify_irq and mce_panic
    assert [r.key for r in TABLES["linux-cper"].rows] == ["recoverable", "fatal", "corrected", "info"]
    mem = [r.printed or r.key for r in TABLES["linux-cper-mem"].rows]
    assert len(mem) == 16 and mem[3] == "multi-bit ECC" and mem[15] == "physical memory map-out event"
    assert {r.printed for r in TABLES["linux-aer"].rows} == {
        "Uncorrected (Non-Fatal)",
        "Uncorrected (Fatal)",
        "Corrected",
        "Uncorrectable (Non-Fatal)",
        "Uncorrectable (Fatal)",
        "Correctable",
    }
    assert [r.key for r in TABLES["linux-edac"].rows] == ["CE", "UE"]


def test_a_corrected_error_names_no_cause_and_an_uncorrected_one_the_hardware() -> None:
    corrected = {("linux-cper", "corrected"), ("linux-cper", "info"), ("linux-edac", "CE")}
    corrected |= {("linux-aer", k) for k in ("corrected", "correctable")} | {("linux-mce", "logged")}
    for tid in HW:
        for r in TABLES[tid].rows:
            if (tid, r.key) in corrected or tid in ("linux-cper-section", "linux-cper-mem"):
                assert r.causes == (), (tid, r.key)
            else:
                assert r.causes == ("not-a-version-problem",), (tid, r.key)
    assert "not the cause of a crash" in TABLES["linux-cper"].lookup("corrected").reason  # type: ignore[union-attr]


def test_dcmi_is_the_headers_whole_table_with_the_references_words() -> None:
    rows = {r.key: r for r in TABLES["dcmi"].rows}
    assert set(rows) == {"0", "-8255"} | {str(-8000 - i) for i in (*range(1, 18), 20, 22, 23)}
    assert rows["-8005"].name == "DCMI_ERR_CODE_INNER_ERR" and rows["-8005"].causes == ()
    assert "Internal error." in rows["-8005"].meaning
    # where the sources disagree on -8005 the row says so (the FAQ's reading is the signature's)
    assert "MindCluster's FAQ" in rows["-8005"].reason and "device-not-visible" in rows["-8005"].reason
    assert rows["-8020"].causes == ("device-busy",)
    assert rows["-8008"].causes == ("device-not-visible",)
    assert rows["-8255"].causes == ("chip-unsupported",)
    assert all(r.causes == () for k, r in rows.items() if k in {"-8004", "-8006", "-8009", "-8012", "-8017"})
    # the one setup cause: the vendor's own "the device does not exist" / "invalid device ID"
    versioned = {c for c, v in TABLE.causes.items() if v.version_problem}
    assert {(k, c) for k, r in rows.items() for c in r.causes if c in versioned} == {
        ("-8007", "device-not-visible"),
        ("-8008", "device-not-visible"),
    }
    for tid in (*HW, "ascend-fault-events"):
        assert not {c for r in TABLES[tid].rows for c in r.causes} & versioned, tid
    with_cause = {k for k, r in rows.items() if r.causes}
    assert with_cause == {"-8003", "-8007", "-8008", "-8013", "-8020", "-8255"}
    assert {r.name for r in rows.values() if r.causes} == set(hwtables.DCMI_CAUSES)


def test_fault_events_are_the_fault_knowledge_and_the_fault_levels_whole() -> None:
    t = TABLES["ascend-fault-events"]
    assert t.fold_case and len(t.rows) >= 860
    hbm = t.lookup("0x80e01809"[2:])
    assert hbm is not None and hbm.causes == ("not-a-version-problem",)
    assert "HBM" in hbm.name and "NotHandleFault" in hbm.meaning and "[Hardware, NPU/HBM]" in hbm.meaning
    # the class decides: Hardware points to the hardware; Software/User/mixed name none
    for r in t.rows:
        klass = r.meaning[1 : r.meaning.find(",")] if r.meaning.startswith("[") else ""
        assert (r.causes == ("not-a-version-problem",)) == (klass == "Hardware"), r.key
    only_level = [r for r in t.rows if r.source == "mc-fault-code-json"]
    assert only_level and all(r.causes == () and "handles it as" in r.meaning for r in only_level)


def test_every_row_and_form_cites_a_source_at_a_commit() -> None:
    import re

    for tid in (*HW, "dcmi", "ascend-fault-events"):
        t = TABLES[tid]
        for sid in {r.source for r in t.rows} | {f.source for f in t.forms}:
            _, url = K.sources[sid]
            assert re.search(r"/blob/[0-9a-f]{40}/", url), (tid, sid, url)


# --- the forms on their printers' own wording ---------------------------------------------------
GHES_FATAL = """\
{763}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 11
{763}[Hardware Error]: event severity: fatal
{763}[Hardware Error]:  Error 0, type: fatal
{763}[Hardware Error]:   section_type: PCIe error
{763}[Hardware Error]:   port_type: 0, PCIe end point
Kernel panic - not syncing: Fatal hardware error!
"""

GHES_CORRECTED = """\
[   99.240616] {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 2
[   99.240708] {1}[Hardware Error]: It has been corrected by h/w and requires no further action
[   99.240756] {1}[Hardware Error]: event severity: corrected
[   99.240897] {1}[Hardware Error]:  Error 0, type: corrected
[   99.240958] {1}[Hardware Error]:   section_type: ARM processor error
[   99.241167] {1}[Hardware Error]:    error_type: 0, cache error
"""


def test_a_fatal_ghes_record_is_the_hardware() -> None:
    assert _top(GHES_FATAL) == ("not-a-version-problem", "lib-linux-cper-fatal")
    assert "lib-linux-cper-section-pcie" in _matches(GHES_FATAL)


def test_a_corrected_ghes_record_matches_and_names_no_cause() -> None:
    ex = _explain(GHES_CORRECTED)
    assert ex.causes == ()
    m = {x.id: x for x in ex.matches}
    assert (
        "lib-linux-cper-corrected" in m and "not the cause of a crash" in m["lib-linux-cper-corrected"].note
    )
    # the ARM processor section's 'error_type: 0, cache error' is not a memory error type
    assert not any(i.startswith("lib-linux-cper-mem") for i in m)


def test_the_heldout_kbox_record_is_read_without_the_colon() -> None:
    # round 5's held-out miss: the device's kbox prints '[Hardware Error]event severity: recoverable'
    text = (HELDOUT5 / "hiascend-800-ts0008-hbm-bit-ecc.txt").read_text(encoding="utf-8")
    assert _top(text) == ("not-a-version-problem", "lib-linux-cper-recoverable")
    assert "lib-linux-cper-mem-multi-bit-ecc" in _matches(text)


@pytest.mark.parametrize(
    ("text", "sig", "cause"),
    [
        (
            "pcieport 0000:00:1c.0: AER: Uncorrected (Fatal) error received: 0000:01:00.0",
            "lib-linux-aer-uncorrected-fatal",
            "not-a-version-problem",
        ),
        (
            "pcieport 0000:00:1c.0: AER: Multiple Uncorrected (Non-Fatal) error received: 0000:01:00.0",
            "lib-linux-aer-uncorrected-nonfatal",
            "not-a-version-problem",
        ),
        (
            "pci 0000:01:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction Layer, "
            "(Requester ID)",
            "lib-linux-aer-uncorrectable-fatal",
            "not-a-version-problem",
        ),
        (
            "EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 "
            "page:0x12345 offset:0x0 grain:32)",
            "lib-linux-edac-ue",
            "not-a-version-problem",
        ),
        (
            "Kernel panic - not syncing: UE on DIMM_A1 (page:0x1 offset:0x0 grain:8)",
            "lib-linux-edac-ue",
            "not-a-version-problem",
        ),
        (
            "Kernel panic - not syncing: Fatal machine check on current CPU",
            "lib-linux-mce-fatal",
            "not-a-version-problem",
        ),
        ("dcmi module initialize failed. ret is -8020", "device-used-by-another", "device-busy"),
        (
            "get card list failed, error code: -8008",
            "lib-dcmi-dcmi-err-code-device-not-exist",
            "device-not-visible",
        ),
        (
            "set device config failed, errorcode is: -8255",
            "lib-dcmi-dcmi-err-code-not-support",
            "chip-unsupported",
        ),
        (
            "[ERROR] device fault: Event id=0x80e01809, sensor type=0xc",
            "lib-ascend-fault-events-80e01809",
            "not-a-version-problem",
        ),
        ("event_id:  [0x80E01809] assertion=1", "lib-ascend-fault-events-80e01809", "not-a-version-problem"),
        (
            "        Error Code                     : 80E01809",
            "lib-ascend-fault-events-80e01809",
            "not-a-version-problem",
        ),
    ],
)
def test_a_printed_form_is_its_row(text: str, sig: str, cause: str) -> None:
    assert _top(text) == (cause, sig)


@pytest.mark.parametrize(
    ("text", "sig"),
    [
        (
            "pci 0000:01:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
            "lib-linux-aer-corrected",
        ),
        ("pcieport 0000:00:1c.0: AER: Correctable error received: 0000:01:00.0", "lib-linux-aer-correctable"),
        (
            "EDAC MC0: 3 CE memory read error on CPU_SrcID#0_Ha#0_Chan#0_DIMM#1 (channel:0 slot:1 page:0x1 "
            "offset:0x0 grain:32 syndrome:0x0)",
            "lib-linux-edac-ce",
        ),
        ("mce: [Hardware Error]: Machine check events logged", "lib-linux-mce-logged"),
        ("dcmi init failed, error code: -8005", "lib-dcmi-dcmi-err-code-inner-err"),
    ],
)
def test_a_row_that_names_no_cause_still_matches_and_says_so(text: str, sig: str) -> None:
    ex = _explain(text)
    m = {x.id: x for x in ex.matches}
    assert sig in m and m[sig].note
    assert all(c.signature != sig for c in ex.causes)


@pytest.mark.parametrize(
    "text",
    [
        "processed -8005 tokens in 3 s",
        "loss = -8020.5 at step 7",
        "Error Code : NA",
        "Event id=0x12345678",  # no row of the tables
        "event severity: fatal",  # not the kernel's HW_ERR-tagged line
        "PCIe Bus Error: severity=Unknown",
        "EDAC MC0: ECC enabled",
        "    error_type: 0x02",  # a processor section's error type bits, not a memory type
        "stderr=-8005",  # no error word of its own
    ],
)
def test_near_misses_are_not_the_forms(text: str) -> None:
    assert not any(i.startswith(("lib-linux", "lib-dcmi", "lib-ascend-fault")) for i in _matches(text)), text


# --- ranking and the disagreeing sources ----------------------------------------------------------
def test_a_version_signature_beside_a_hardware_report_stays_first() -> None:
    text = (
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
        + GHES_FATAL
    )
    ex = _explain(text)
    assert ex.causes[0].signature != "lib-linux-cper-fatal"
    assert "lib-linux-cper-fatal" in [m.id for m in ex.matches]


def _driver_loaded(status: str) -> Finding:
    return Finding(
        id="driver-loaded", status=status, severity="high", title="driver loaded", detail="reboot pending"
    )


def test_dcmi_8005_after_an_upgrade_without_reboot_is_tied_by_the_driver_loaded_check() -> None:
    text = (HELDOUT5 / "mc-faq-npu-exporter-dcmi-8005-no-reboot.txt").read_text(encoding="utf-8")
    plain = _explain(text)
    assert [c.id for c in plain.causes[:2]] == ["device-not-visible", "driver-firmware-mismatch"]
    pending = _explain(text, [_driver_loaded("fail")])
    top = pending.causes[0]
    assert (top.id, top.status, top.signature) == (
        "driver-firmware-mismatch",
        "confirmed",
        "dcmi-init-failed",
    )
    assert "reboot" in (top.remedy or "")
    loaded = _explain(text, [_driver_loaded("pass")])
    assert {c.id: c.status for c in loaded.causes}.get("driver-firmware-mismatch") == "ruled-out"


@pytest.mark.parametrize(
    ("code", "first"),
    [("-8005", "device-not-visible"), ("-8020", "device-busy")],
)
def test_mindcluster_devmanagers_dcmi_init_line_is_read_as_npu_smis(code: str, first: str) -> None:
    # dcmi.go: fmt.Errorf("dcmi init failed, error code: %d"), the FAQ's npu-exporter line
    text = f"deviceManager init failed, prepare dcmi failed, err: dcmi init failed, error code: {code}"
    ex = _explain(text)
    assert ex.causes[0].id == first
    if code == "-8005":
        assert [c.id for c in ex.causes[:2]] == ["device-not-visible", "driver-firmware-mismatch"]
        assert _explain(text, [_driver_loaded("fail")]).causes[0].id == "driver-firmware-mismatch"


# --- hostile input ---------------------------------------------------------------------------------
def _forms() -> list[tuple[str, str, str]]:
    return [
        (t.id, f.anchor, f.regex)
        for tid in (*HW, "dcmi", "ascend-fault-events")
        for t in [TABLES[tid]]
        for f in t.forms
    ]


@pytest.mark.parametrize("form", _forms(), ids=lambda f: f"{f[0]}:{f[1]}")
def test_each_form_is_linear_on_a_line_of_its_anchor(form: tuple[str, str, str]) -> None:
    _, anchor, regex = form
    assert linre.ambiguity(regex, mode="search") is None
    compiled = linre.compile(regex)
    for filler in (anchor * max(1, 1_000_000 // len(anchor)), "[Hardware Error]: " * 60_000, "0x" * 500_000):
        m = compiled.search(filler)
        assert m is None or anchor in m.group(0)


def test_a_huge_line_and_many_lines_are_read_in_bounds() -> None:
    huge = "[Hardware Error]: event severity: " * 30_000 + "fatal\n"  # a 1 MB line
    many = "".join(
        f"{{{i}}}[Hardware Error]:  Error 0, type: corrected\nEvent id=0x80e0180{i % 10}\n"
        for i in range(10_000)
    )
    for text in (huge, many):
        ex = _explain(text)
        assert len(ex.matches) < 40
    assert _top(huge) == ("not-a-version-problem", "lib-linux-cper-fatal")


# --- the importers read the vendor's files --------------------------------------------------------
def test_the_dcmi_importer_reads_a_header_and_a_spanning_solution(tmp_path: Path) -> None:
    inc = tmp_path / hwtables.DCMI_HEADER
    inc.parent.mkdir(parents=True)
    inc.write_text(
        "#define DCMI_OK 0\n#define DCMI_ERROR_CODE_BASE (-8000)\n"
        "#define DCMI_ERR_CODE_SECURE_FUN_FAIL (DCMI_ERROR_CODE_BASE - 4)\n"
        "#define DCMI_ERR_CODE_INNER_ERR     (DCMI_ERROR_CODE_BASE - 5)\n"
        "#define DCMI_ERR_CODE_RESOURCE_OCCUPIED (DCMI_ERROR_CODE_BASE - 20)\n"
    )
    row = "<tr><td>{}</td><td>{}</td><td>{}</td>{}</tr>"
    page = (
        "<table>"
        + "".join(
            [
                row.format(
                    "DCMI_ERR_CODE_SECURE_FUN_FAIL",
                    "-8004",
                    "Secure function failed.",
                    "<td rowspan='2'>Provide logs.</td>",
                ),
                row.format("DCMI_ERR_CODE_INNER_ERR", "-8005", "Internal error.", ""),
                row.format(
                    "DCMI_ERR_CODE_RESOURCE_OCCUPIED",
                    "-8020",
                    "Occupied.",
                    "<td>Check other containers.</td>",
                ),
            ]
        )
        + "</table>"
    )
    for rel in hwtables.DCMI_DOCS.values():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(page)
    rows = {r["key"]: r for r in hwtables.read_dcmi(tmp_path)}
    assert set(rows) == {"0", "-8004", "-8005", "-8020"}
    assert rows["-8005"]["meaning"] == "Internal error. Solution: Provide logs."
    assert rows["-8020"]["causes"] == ["device-busy"] and rows["-8005"]["causes"] == []
