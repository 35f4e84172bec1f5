"""`cannenv explain`: the CANN runtime's AI Core exception texts (issue 29, round 7).

Table ``rt-aicore-errorstr`` of matrices/explain/libtables.yaml, read whole from hicann/runtime by
`cannenv.explain.hwtables --import aicore-errors`: every text of the AI Core error-bit maps
(``errorMapInfo_``, the v200 chips' ``g_davidErrorMapInfo``) at 681ef761 and, for the texts reworded
since, at the first open-source tree 494dda36, and ``timeout or trap error.`` for no bit. The runtime
prints them in its report's extend info (``The extend info: errcode:(…) errorStr: TEXT… fixp_error0
info: …``). Tested on the printer's lines, near misses and hostile input; the importer on the
vendor's map form and, where the runtime's git mirror is on this machine, the refresh diff at the
imported commits.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cannenv import linre
from cannenv.explain import hwtables, signatures
from tests.helpers.explaining import explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
T = next(t for t in K.lib_tables if t.id == "rt-aicore-errorstr")
AICORE_EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "explain_rtge" / "aicore"


def _extend(error_str: str) -> str:
    # PrintCoreInfo's extend info, as the runtime logs it (plog) and frameworks print it (EZ9999)
    return (
        "[ERROR] RUNTIME(3813,python3):2026-01-10-17:53:52.846.528 [device_error_core_proc.cc:1243] 3813"
        " ProcessStarsCoreErrorInfo: The extend info: errcode:(0, 0x80000000, 0) errorStr: "
        f"{error_str} fixp_error0 info: 0xf16bb18, fixp_error1 info: 0xf3, fsmId:0, tslot:5, thread:0,"
        " ctxid:0, blk:11, sublk:0, subErrType:4.\n"
    )


def _top(text: str) -> tuple[str | None, str | None]:
    ex = explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


# --- the data: the whole table --------------------------------------------------------------------
def test_the_table_is_every_text_of_both_maps_at_both_commits() -> None:
    by_source: dict[str, int] = {}
    for r in T.rows:
        by_source[r.source] = by_source.get(r.source, 0) + 1
    assert by_source == {
        "rt-aicore-errmap": 171,
        "rt-aicore-errmap-v200": 173,
        "rt-aicore-errmap-old": 76,
        "rt-aicore-errmap-v200-old": 36,
    }
    assert T.priority == signatures.SOURCE_PRIORITY  # ranked with the runtime's own messages (-45)
    for r in T.rows:
        _, url = K.sources[r.source]
        assert re.search(r"hicann/runtime/blob/[0-9a-f]{40}/", url), r.key
        assert r.line is not None


def test_hardware_faults_and_a_kernels_faults_are_not_a_version_problem() -> None:
    rows = {r.key: r for r in T.rows}
    for r in T.rows:
        if any(w in r.meaning for w in ("multi-bit ECC", "2-bit ECC", "parity error")):
            assert r.causes == ("not-a-version-problem",), r.key
            assert "hardware" in r.reason
    assert rows["CCU_DC_DATA_ECC"].causes == ("not-a-version-problem",)
    assert rows["MTE_UB_WR_OVFLW"].causes == ("not-a-version-problem",)  # out of bounds: the kernel
    assert "kernel" in rows["MTE_UB_WR_OVFLW"].reason
    assert rows["TIMEOUT_OR_TRAP"].causes == ("not-a-version-problem",)
    # texts that say nothing, or name a binary that does not match: no cause
    assert rows["VEC_DATA_EXCP_CCU"].causes == ()
    assert rows["VEC_INSTR_UNDEF"].causes == ()
    assert rows["CCU_ILLEGAL_INSTR"].causes == ()


# --- the form on the runtime's own lines ----------------------------------------------------------
@pytest.mark.parametrize(
    ("error_str", "sig"),
    [
        ("timeout or trap error.", "lib-rt-aicore-errorstr-timeout-or-trap"),
        (
            "A multi-bit ECC error occurs when scalar accesses the dcache data. See the RAS alarm handling.",
            "lib-rt-aicore-errorstr-ccu-dc-data-ecc",
        ),
        (
            "A 2-bit ECC error occurs in the data-cache data-ram.",  # a release before the 2026-05 rewording
            "lib-rt-aicore-errorstr-old-ccu-dc-data-ecc",
        ),
        # the second text of two bits set is read too
        (
            "Data from the CCU is abnormal.The address for MTE to write UB is out of bounds.",
            "lib-rt-aicore-errorstr-mte-ub-wr-ovflw",
        ),
    ],
)
def test_a_real_extend_info_line_reads_as_its_row(error_str: str, sig: str) -> None:
    assert _top(_extend(error_str)) == ("not-a-version-problem", sig)


def test_a_text_that_says_nothing_matches_and_names_no_cause() -> None:
    ex = explain(_extend("Data from the CCU is abnormal."))
    assert [m.id for m in ex.matches if m.id.startswith("lib-rt-aicore")] == [
        "lib-rt-aicore-errorstr-vec-data-excp-ccu"
    ]
    assert not [c for c in ex.causes if c.signature.startswith("lib-rt-aicore")]


@pytest.mark.parametrize(
    "text",
    [
        "timeout or trap error.\n",  # the text without the report's errorStr
        "errorStr: the text of no row.\n",
        'if (err == 0) errorString = "timeout or trap error.";\n',  # the source, not its report
    ],
)
def test_near_misses_are_not_the_form(text: str) -> None:
    assert not [m for m in explain(text).matches if m.id.startswith("lib-rt-aicore")]


def test_a_version_signature_beside_the_report_stays_first() -> None:
    text = _extend("timeout or trap error.") + (
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
    )
    assert _top(text)[0] == "env-not-sourced"


@pytest.mark.parametrize("key", ["TIMEOUT_OR_TRAP", "CCU_DC_DATA_ECC", "v200.CUBE_L0A_ECC"])
def test_a_form_is_linear_on_a_line_of_its_anchor(key: str) -> None:
    form = next(f for f in T.forms if f.id == f"rt-errorstr-{key.lower()}")
    assert linre.ambiguity(form.regex, mode="search") is None
    compiled = linre.compile(form.regex)
    for filler in ("errorStr: " * 50_000, form.anchor * max(1, 500_000 // len(form.anchor))):
        m = compiled.search(filler)
        assert m is None or form.anchor in m.group(0)


# --- the importer ---------------------------------------------------------------------------------
MAP = """\
const std::map<uint64_t, std::string> DeviceErrorProc::errorMapInfo_ = {
    {BIU_L2_READ_OOB, "Bus read access error. You are advised to check the L2 code."},
    {CCU_LOOP_CNT_ERR, "The loop count of the hardware loop instruction is 0."
                       " Possible cause: The compiler optimization is incorrect"
                       " or the instruction is overwritten."},
    {VEC_COL2IMG_RD_FM_ADDR_OVFLOW, "The value of col2img is invalid."},
    {VEC_COL2IMG_ILLEGAL_FM_SIZE, "The value of col2img is invalid."},
    {CCU_DC_TAG_ECC, "A multi-bit ECC error occurs when scalar accesses the dcache tag."
                     " See the RAS alarm handling."},
};

void f()
{
    errorString = "timeout or trap error.";
}
"""


def test_the_importer_reads_the_maps_entries(tmp_path: Path) -> None:
    for commit, maps in hwtables.AICORE_MAPS.items():
        for _, path, start, _ in maps:
            p = tmp_path / commit / path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(MAP.replace("DeviceErrorProc::errorMapInfo_ = {", start))
    rows = {r["key"]: r for r in hwtables.read_aicore_errors(tmp_path)}
    # a text already read (a newer commit, an earlier map) is not added again
    assert set(rows) == {
        "BIU_L2_READ_OOB",
        "CCU_LOOP_CNT_ERR",
        "VEC_COL2IMG_RD_FM_ADDR_OVFLOW",
        "CCU_DC_TAG_ECC",
        "TIMEOUT_OR_TRAP",
    }
    loop = rows["CCU_LOOP_CNT_ERR"]
    assert loop["printed"].endswith("or the instruction is overwritten")  # strings joined
    assert loop["line"] == 3
    assert rows["VEC_COL2IMG_RD_FM_ADDR_OVFLOW"]["name"] == (
        "VEC_COL2IMG_RD_FM_ADDR_OVFLOW, VEC_COL2IMG_ILLEGAL_FM_SIZE, v200.VEC_COL2IMG_RD_FM_ADDR_OVFLOW,"
        " v200.VEC_COL2IMG_ILLEGAL_FM_SIZE"
    )
    assert rows["CCU_DC_TAG_ECC"]["causes"] == ["not-a-version-problem"]
    assert rows["TIMEOUT_OR_TRAP"]["line"] == 14


def test_the_refresh_diff_is_empty_at_the_imported_commits() -> None:
    """The maps as the runtime's sources hold them at both commits (tests/data/explain_rtge/aicore:
    each file's map lines at their own line numbers, every other line blanked)."""
    import yaml

    from cannenv.explain import libtables

    raw = yaml.safe_load(libtables.shipped_path().read_text(encoding="utf-8"))
    old = next(t for t in raw["tables"] if t["id"] == "rt-aicore-errorstr")["rows"]
    d = libtables.diff_rows(old, hwtables.read_aicore_errors(AICORE_EXCERPTS))
    assert d == {"lacks": [], "changed": [], "gone": []}
