"""`cannenv explain`: GE's numeric status codes (issue 29; docs/explain.md, "GE's numeric status codes").

Table ``ge-status`` of matrices/explain/libtables.yaml is every named ``ge::Status`` of GE's headers,
each value expanded from its macro (GE_ERRORNO's fields, the module macros' enums) and cited at its
file and line: a status GE logs in decimal is decoded to its name and meaning, and to a cause only where
the meaning states one (GE_CAUSES, reviewed per row).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cannenv import linre
from cannenv.explain import gestatus, signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
GE = next(t for t in K.lib_tables if t.id == "ge-status")
ROWS = {r.name: r for r in GE.rows}


def _top(text: str) -> tuple[str | None, str | None]:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


# --- the data ---------------------------------------------------------------------------------------
def test_the_values_are_the_macros_expansion_as_the_headers_comments_say() -> None:
    # the headers' own comments: PARAM_INVALID // 1343225857, GE_CLI_INIT_FAILED // 1343229953,
    # GE_OPS_KERNEL_INFO_NOT_EXIST // 1343250434, NOT_CHANGED // 1343242304
    said = {
        "PARAM_INVALID": 1343225857,
        "INTERNAL_ERROR": 1343225860,
        "END_OF_SEQUENCE": 1343225863,
        "GE_CLI_INIT_FAILED": 1343229953,
        "GE_OPS_KERNEL_INFO_NOT_EXIST": 1343250434,
        "NOT_CHANGED": 1343242304,
        "GE_GENERATOR_GRAPH_MANAGER_ADD_GRAPH_FAILED": 1343266818,  # 0x5010A002: module 10, value 2
        "SUCCESS": 0,
        "FAILED": 0xFFFFFFFF,
    }
    for name, value in said.items():
        assert ROWS[name].key == str(value), name
    # the executor's statuses are the device's (RT_DEVICE = 0b10 in bits 31-30)
    assert int(ROWS["GE_EXEC_NOT_INIT"].key) == gestatus.compose(0b10, 1, 0, 8, 9, 1) == 0x90109001
    assert len(GE.rows) == 223 and len({r.key for r in GE.rows}) == 223


def test_every_row_cites_its_file_and_line_and_every_cause_is_reviewed() -> None:
    for r in GE.rows:
        assert r.source.startswith("ge-status-") and r.line and r.line > 0, r.name
        assert TABLE.sources[r.source].url.startswith("https://github.com/hicann/")
        causes, why = gestatus.GE_CAUSES.get(r.name, ((), ""))
        assert r.causes == causes, r.name
        if causes:
            assert r.reason == why
    with_cause = {r.name for r in GE.rows if r.causes}
    assert with_cause == set(gestatus.GE_CAUSES)
    assert not ROWS["INTERNAL_ERROR"].causes and not ROWS["FAILED"].causes  # the meaning says nothing


# --- explain ----------------------------------------------------------------------------------------
def test_a_parameter_check_is_not_a_version_problem_cited_at_its_line() -> None:
    text = (
        "[Compile][Graph]Compile graph failed, error code:1343225857, session_id:0, graph_id:0."
        "[FUNC:CompileGraph][FILE:ge_api.cc][LINE:1343]\n"
    )
    ex = _explain(text)
    assert (ex.causes[0].id, ex.causes[0].signature) == (
        "not-a-version-problem",
        "lib-ge-status-param-invalid",
    )
    urls = [s.url for c in ex.causes for s in c.sources]
    assert any(u.endswith("pkg_inc/common/ge_common/error_codes_define.h#L102") for u in urls)


@pytest.mark.parametrize(
    ("text", "cause", "sig"),
    [
        (
            "GELOGE ret = 1343250434, build graph failed",
            "ops-package-missing-or-wrong",
            "lib-ge-status-ge-ops-kernel-info-not-exist",
        ),
        (
            "Load model failed, error code: 2417004559",
            "oom",
            "lib-ge-status-ge-exec-alloc-feature-map-mem-failed",
        ),
        ("aclgrphBuildModel status=1343225857", "not-a-version-problem", "lib-ge-status-param-invalid"),
    ],
)
def test_a_status_whose_meaning_names_a_cause_decides(text: str, cause: str, sig: str) -> None:
    assert _top(text) == (cause, sig)


def test_a_status_that_names_no_cause_matches_with_its_meaning() -> None:
    ex = _explain("Check failed: ... 1343266818!==0 1343266818 Unknown ATC error code(1343266818)\n")
    assert [m.id for m in ex.matches] == ["lib-ge-status-ge-generator-graph-manager-add-graph-failed"]
    assert not ex.causes
    ex = _explain("Init plugin so failed, ret = 1343225860\n")
    assert "lib-ge-status-internal-error" in [m.id for m in ex.matches]


@pytest.mark.parametrize(
    "text",
    [
        "processed 1343225857 tokens in 3 s",  # no error word before it
        "error code:13432258570",  # eleven digits
        "error code:91343225857",
        "ret = 1343225999",  # no status of that value (module 0, value 143)
    ],
)
def test_near_misses_are_no_status(text: str) -> None:
    assert not [m.id for m in _explain(text).matches if m.id.startswith("lib-ge-status")]


def test_a_version_signature_beside_a_ge_status_stays_first() -> None:
    text = (
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
        "Compile graph failed, error code:1343225857\n"
    )
    assert _top(text)[1] != "lib-ge-status-param-invalid"


@pytest.mark.parametrize("form", GE.forms, ids=lambda f: f.id)
def test_each_form_is_linear_on_a_line_of_its_anchor(form: object) -> None:
    regex, anchor = form.regex, form.anchor  # type: ignore[attr-defined]
    assert linre.ambiguity(regex, mode="search") is None
    compiled = linre.compile(regex)
    for filler in (anchor * 200_000, "error code:" * 90_000, "code " + "1" * 1_000_000):
        m = compiled.search(filler)
        assert m is None or anchor in m.group(0)


def test_a_huge_line_and_many_lines_are_read_in_bounds() -> None:
    huge = "error code:" * 90_000 + "1343225857\n"  # a 1 MB line
    many = "".join(
        f"step {i}: Compile graph failed, error code:13432{25856 + i % 40}\n" for i in range(20_000)
    )
    assert _top(huge) == ("not-a-version-problem", "lib-ge-status-param-invalid")
    ex = _explain(many)
    assert 1 <= len(ex.matches) < 60


# --- the importer reads GE's headers ----------------------------------------------------------------
def _trees(tmp_path: Path, inner: str) -> tuple[Path, Path]:
    ge, md = tmp_path / "ge", tmp_path / "metadef"
    files = {
        (md, "inc/external/ge_common/api_error_codes.h"): (
            "#define GE_ERRORNO(runtime, type, level, sysid, modid, name, value, desc) \\\n"
            "  GE_ERRORNO_DEFINE(runtime, type, level, sysid, modid, name, value);     \\\n"
            "  GE_ERRORNO_EXTERNAL(name, desc)\n"
            'GE_ERRORNO(0, 0, 0, 0, 0, SUCCESS, 0, "success");\n'
            'GE_ERRORNO(0b11, 0b11, 0b111, 0xFFU, 0b11111, FAILED, 0xFFFU, "failed"); /*lint !e401*/\n'
            "GE_ERRORNO_DEFINE(0b01, 0b01, 0b000, 8, 0, END_OF_SEQUENCE, 7);\n"
        ),
        (md, "pkg_inc/common/ge_common/error_codes_define.h"): (
            "#define GE_ERRORNO_COMMON(name, value, desc) \\\n"
            "  GE_ERRORNO(ge::InnLogRuntime::RT_HOST, ge::InnErrorCodeType::ERROR_CODE, \\\n"
            "  ge::InnErrorLevel::COMMON_LEVEL, ge::InnSystemIdType::SYSID_GE, \\\n"
            "  ge::InnSubModuleId::COMMON_MODULE, name, (value), (desc))\n"
            "#define GE_ERRORNO_OPS(name, value, desc) \\\n"
            "  GE_ERRORNO(ge::InnLogRuntime::RT_HOST, ge::InnErrorCodeType::ERROR_CODE, \\\n"
            "  ge::InnErrorLevel::COMMON_LEVEL, ge::InnSystemIdType::SYSID_GE, \\\n"
            "  ge::InnSubModuleId::OPS_MODULE, name, (value), (desc))\n"
            "enum class InnSystemIdType : std::uint8_t { SYSID_GE = 8 };\n"
            "enum class InnLogRuntime : std::uint8_t {\n  RT_HOST = 0b01,\n  RT_DEVICE = 0b10,\n};\n"
            "enum class InnSubModuleId : std::uint8_t {\n  COMMON_MODULE = 0,\n  OPS_MODULE = 6,\n};\n"
            "enum class InnErrorCodeType : std::uint8_t {\n  ERROR_CODE = 0b01,\n};\n"
            "enum class InnErrorLevel : std::uint8_t {\n  COMMON_LEVEL = 0b000,\n};\n"
            'GE_ERRORNO_COMMON(PARAM_INVALID, 1, "Parameter invalid!");       // 1343225857\n'
        ),
        (ge, "inc/graph_metadef/common/ge_common/ge_inner_error_codes.h"): inner,
        (ge, "dflow/llm_datadist/v1/llm_error_codes_v1.h"): "",
        (ge, "dflow/llm_datadist/v1/llm_error_codes.cc"): "",
    }
    for (root, rel), text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return ge, md


def test_the_importer_expands_the_macros_and_keeps_each_line(tmp_path: Path) -> None:
    inner = (
        'GE_ERRORNO_EXTERNAL(END_OF_SEQUENCE, "End of sequence!");             // 1343225863\n'
        'GE_ERRORNO_OPS(GE_OPS_KERNEL_INFO_NOT_EXIST, 2, "OpsKernelInfo does not exist.");  // 1343250434\n'
        "GE_ERRORNO_OPS(GE_OPS_KERNEL_STORE_NOT_EXIST, 3,\n"
        '               "OpsKernelInfoStore " "does not exist.");  // 1343250435\n'
    )
    ge, md = _trees(tmp_path, inner)
    with pytest.raises(ValueError, match="the review names statuses the headers lack"):
        gestatus.read_rows(ge, md)  # the shipped review names statuses this small tree lacks
    kept = ("PARAM_INVALID", "GE_OPS_KERNEL_INFO_NOT_EXIST", "GE_OPS_KERNEL_STORE_NOT_EXIST")
    review = {name: gestatus.GE_CAUSES[name] for name in kept}
    rows = {r["name"]: r for r in gestatus.read_rows(ge, md, review)}
    assert rows["PARAM_INVALID"]["key"] == "1343225857" and rows["PARAM_INVALID"]["line"] == 24
    assert rows["END_OF_SEQUENCE"]["meaning"] == "End of sequence!"  # registered in another file
    store = rows["GE_OPS_KERNEL_STORE_NOT_EXIST"]
    assert (store["key"], store["line"], store["meaning"]) == (
        "1343250435",
        3,
        "OpsKernelInfoStore does not exist.",
    )
    assert store["causes"] == ["ops-package-missing-or-wrong"]
    assert rows["FAILED"]["key"] == "4294967295" and rows["SUCCESS"]["line"] == 4
    assert "GE_ERRORNO_DEFINE" not in rows and "runtime" not in rows  # a macro's body is no status


def test_the_importer_refuses_a_value_its_header_contradicts(tmp_path: Path) -> None:
    inner = (
        'GE_ERRORNO_OPS(GE_OPS_KERNEL_INFO_NOT_EXIST, 2, "OpsKernelInfo does not exist.");  // 1343250435\n'
    )
    ge, md = _trees(tmp_path, inner)
    with pytest.raises(ValueError, match="computes 1343250434, the header says 1343250435"):
        gestatus.read_rows(ge, md, {})
