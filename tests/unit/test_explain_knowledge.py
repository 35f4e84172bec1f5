"""`cannenv explain` knowledge from the vendor's tables and evidence weighed (issue 29).

The code tables, the shared-object → package map, symbol namespaces (demangled), log-printed
versions as facts of the log's environment, confirmed/consistent/contradiction, details that rule
a cause out, linear-time patterns, and the fleet page's explained-error groups.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from cannenv.cli import cli
from cannenv.errors import InputError
from cannenv.explain import judge, knowledge, models, signatures, tables
from cannenv.resources import matrices_dir
from tests.helpers import hosts
from tests.helpers.explaining import explain as _explain
from tests.helpers.explaining import known

TABLE = signatures.shipped()
K = tables.shipped()


def _top(text: str) -> str | None:
    ex = _explain(text)
    return ex.causes[0].id if ex.causes else None


# --- the tables ---------------------------------------------------------------------------------
def test_knowledge_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "knowledge.schema.json").read_text())
    assert shipped == knowledge.json_schema(), (
        "regenerate: python -m cannenv.explain.knowledge --schema > matrices/explain/knowledge.schema.json"
    )


def test_the_tables_are_complete_and_every_row_has_a_source() -> None:
    codes = {c.code: c for c in K.codes}
    # the runtime header's full ranges, the aclnn table, HCCL's EI/EJ codes, HcclResult 1..24
    assert {"107000", "107036", "207000", "207019", "507000", "507057", "507899", "507904"} <= set(codes)
    assert {"100000", "148053", "200000", "500000", "500005"} <= set(codes)
    assert {"161001", "161002", "361001", "561000", "561003", "561103", "561107"} <= set(codes)
    ei = (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 19)
    assert {f"EI00{n:02d}" for n in ei} <= set(codes)
    assert {"EJ0001", "EJ0002", "EJ0003", "EJ0004"} <= set(codes)
    assert sorted(K.hccl_results) == list(range(1, 25))
    assert all(c.source in K.sources or c.source in TABLE.sources for c in K.codes)
    assert all(url.startswith("https://") for _, url in K.sources.values())


def test_a_knowledge_row_with_an_unknown_cause_is_refused(tmp_path: Path) -> None:
    import yaml

    raw = yaml.safe_load(knowledge.shipped_path().read_text())
    raw["codes"][0]["causes"] = ["no-such-cause"]
    bad = knowledge.parse_knowledge(raw, source="k.yaml")
    model = models.SignatureFile.model_validate(yaml.safe_load(signatures.shipped_path().read_text()))
    with pytest.raises(InputError, match="no-such-cause"):
        signatures.build(model, bad)


def test_the_header_importer_reads_vendor_headers() -> None:
    text = (
        "#define  ACL_ERROR_RT_PARAM_INVALID              107000 // param invalid\n"
        "static const int ACL_ERROR_INVALID_PARAM = 100000;\n"
    )
    rows = knowledge.import_header(text, family="acl-runtime", source="rt-error-codes")
    assert [(r["code"], r["name"], r["meaning"]) for r in rows] == [
        ("107000", "ACL_ERROR_RT_PARAM_INVALID", "param invalid"),
        ("100000", "ACL_ERROR_INVALID_PARAM", "invalid param"),
    ]


def test_the_driver_table_is_the_whole_drv_error_enum() -> None:
    drv = K.driver_errors
    # ascend_hal_error.h (hicann/driver): 0..99 in order, then DRV_ERROR_NOT_SUPPORT = 0xfffe and
    # DRV_ERROR_RESERVED after it; every row with the header as its source
    assert sorted(drv) == [*range(100), 0xFFFE, 0xFFFF]
    assert all(
        c.family == "drv-error" and c.source == "hal-error-codes" and c.code == c.name for c in drv.values()
    )
    assert drv[0].name == "DRV_ERROR_NONE" and not drv[0].causes
    assert (drv[1].name, drv[6].name, drv[87].name) == (
        "DRV_ERROR_NO_DEVICE",
        "DRV_ERROR_OUT_OF_MEMORY",
        "DRV_ERROR_RESOURCE_OCCUPIED",
    )
    assert drv[90].name == "DEV_ERROR_UNAUTHORIZED_ACCESS_DEVICE"  # the header spells a few DEV_ERROR_
    assert "hicann/driver" in K.sources["hal-error-codes"][1]


def test_the_enum_importer_gives_each_enumerator_its_c_value() -> None:
    text = (
        "/* a comment { before */\n"
        "typedef enum tagDrvError {\n"
        "    DRV_ERROR_NONE = 0,                /**< success */\n"
        "    DRV_ERROR_NO_DEVICE = 1,           /**< no   valid device */\n"
        "    DRV_ERROR_NEXT,\n"
        "    OTHER_THING = 7, // not the driver's\n"
        "    DEV_ERROR_AFTER_OTHER,\n"
        "    DRV_ERROR_NOT_SUPPORT = 0xfffe,\n"
        "    DRV_ERROR_RESERVED\n"
        "} drvError_t; // lint\n"
    )
    rows = knowledge.import_enum(text, family="drv-error", source="hal-error-codes")
    assert [(r["name"], r["value"], r["meaning"]) for r in rows] == [
        ("DRV_ERROR_NONE", 0, "success"),
        ("DRV_ERROR_NO_DEVICE", 1, "no valid device"),
        ("DRV_ERROR_NEXT", 2, "next"),
        ("DEV_ERROR_AFTER_OTHER", 8, "after other"),
        ("DRV_ERROR_NOT_SUPPORT", 0xFFFE, "not support"),
        ("DRV_ERROR_RESERVED", 0xFFFF, "reserved"),
    ]
    assert all(r["causes"] == [] and r["family"] == "drv-error" for r in rows)
    assert (
        knowledge.import_enum("typedef enum { A = B << 2 } drvError_t;", family="drv-error", source="x") == []
    )
    assert knowledge.import_enum("no enum here", family="drv-error", source="x") == []


@given(st.lists(st.one_of(st.none(), st.integers(0, 70000)), min_size=1, max_size=30))
def test_the_enum_importer_follows_c_for_any_enum(values: list[int | None]) -> None:
    lines = [
        f"    DRV_ERROR_E{i}" + ("" if v is None else f" = {v:#x}" if i % 2 else f" = {v}") + ","
        for i, v in enumerate(values)
    ]
    text = "typedef enum tagDrvError {\n" + "\n".join(lines) + "\n} drvError_t;\n"
    expected, value = [], -1
    for v in values:
        value = value + 1 if v is None else v
        expected.append(value)
    rows = knowledge.import_enum(text, family="drv-error", source="x")
    assert [r["value"] for r in rows] == expected
    assert [r["name"] for r in rows] == [f"DRV_ERROR_E{i}" for i in range(len(values))]


def test_a_driver_row_needs_its_value_once(tmp_path: Path) -> None:
    import yaml

    raw = yaml.safe_load(knowledge.shipped_path().read_text())
    rows = [c for c in raw["codes"] if c["family"] == "drv-error"]
    rows[5]["value"] = rows[4]["value"]
    with pytest.raises(InputError, match=r"value 4 listed twice in drv-error"):
        knowledge.parse_knowledge(raw, source="k.yaml")
    del rows[5]["value"]
    with pytest.raises(InputError, match=r"needs its value"):
        knowledge.parse_knowledge(raw, source="k.yaml")


# --- linear-time patterns ---------------------------------------------------------------------------
@pytest.mark.parametrize("rx", [r"(?=x)abc", r"(?<!x)abc", r"(a)\1", r"(?P<n>a)(?P=n)", r"(?>ab)c"])
def test_patterns_outside_the_re2_subset_are_refused(rx: str) -> None:
    assert signatures.re2_subset_problem(rx)
    with pytest.raises(ValueError, match=r"linear-time|super-linear|RE2"):
        models.PatternModel(regex=rx, anchor="abc")


def test_every_shipped_pattern_is_in_the_re2_subset() -> None:
    regexes = [p.regex.pattern for p in TABLE.patterns if p.regex is not None]
    assert len(regexes) > 50
    assert [rx for rx in regexes if signatures.re2_subset_problem(rx)] == []
    try:
        import re2
    except ImportError:
        return
    for rx in regexes:  # and RE2 itself takes every one
        re2.compile(rx)


# --- codes ---------------------------------------------------------------------------------------
def test_a_numeric_code_counts_only_next_to_an_error_word() -> None:
    assert _top("processed 107000 tokens in 3 s\n") is None
    ex = _explain("aclrtMemcpy failed, error code is 107000\n")
    assert [m.id for m in ex.matches] == ["code-107000"]
    assert ex.causes[0].id == "not-a-version-problem" and "ACL_ERROR_RT_PARAM_INVALID" in ex.causes[0].why


def test_an_ei_code_is_known_from_the_table_without_a_hand_signature() -> None:
    assert _top("EI0014: The ranktable information check failed, Reason:[x].\n") == "hccl-config"
    assert _top("EJ0001: Failed to initialize the HCCP process.\n") == "device-busy"


def test_an_hccl_result_code_is_read_from_the_log() -> None:
    ex = _explain("HCCL function error: HcclAllReduce failed, error code is 9\n")
    assert ex.causes[0].id == "hccl-link" and "HCCL_E_TIMEOUT" in ex.causes[0].why


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        ("DeviceOpen:[drv api] halDeviceOpen failed. device_id=1, drvRetCode=87.", "device-busy"),
        ("MallocPhysical:[drv api]halMemCreate failed drvRetCode=6, size=20971520(bytes), flags=0", "oom"),
        # (drvGetDevNum's failure has a signature of its own: device-count-failed, same cause)
        ("Call driver api halGetDevNumEx failed, drvRetCode=1.", "device-not-visible"),
        ("[drv api] halGetDeviceInfo failed: drvRet: 2", "device-not-visible"),
    ],
)
def test_a_driver_return_code_is_read_where_the_line_names_it(line: str, cause: str) -> None:
    ex = _explain(line + "\n")
    assert [m.id for m in ex.matches][-1].startswith("drv-")
    top = ex.causes[0]
    assert top.id == cause and "the driver's table" in top.why
    assert ex.matches[-1].component == "Ascend driver (drvError_t)"


@pytest.mark.parametrize(
    "line",
    [
        "served 87 requests, ret=87, status 87",  # a bare number is never the driver's code
        "device_id=87 failed, code 6",
        "[drv api] halSqCqAllocate failed: device_id=3, drvRetCode=14!",  # a code whose name says no cause
        "[drv api] halDeviceOpen failed. drvRetCode=870.",  # not in the table
        "drvRetCode=-28",
    ],
)
def test_no_driver_signature_without_the_driver_naming_a_code_with_causes(line: str) -> None:
    assert not [m.id for m in _explain(line + "\n").matches if m.id.startswith("drv-")]


# --- shared objects and symbols ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "package", "cause"),
    [
        ("ImportError: libascend_hal.so.1: cannot open shared object file", "driver", "device-not-visible"),
        ("OSError: libascend_ml.so: cannot open shared object file", "cann-toolkit", "env-not-sourced"),
        ("OSError: libacl_new_thing.so: cannot open shared object file", "cann-toolkit", "env-not-sourced"),
        ("ImportError: libatb_foo.so: cannot open shared object file", "nnal", "env-not-sourced"),
        ("ImportError: libfoo_bar.so.2: cannot open shared object file", None, "third-party-library"),
    ],
)
def test_a_missing_shared_object_is_mapped_to_its_package(line: str, package: str | None, cause: str) -> None:
    soname = line.split(": cannot")[0].rsplit(" ", 1)[-1]
    lib = K.library(soname)
    assert (lib.package if lib else None) == package
    assert _top(line + "\n") == cause


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        # a torch_npu extension built against another torch_npu
        (
            "ext.so: undefined symbol: _ZN7c10_npu3acl20AclrtPeekAtLastErrorE17aclrtLastErrLevel",
            "framework-mismatch",
        ),
        # torch_npu itself against another torch
        (
            "libtorch_npu.so: undefined symbol: _ZN3c1010TensorImpl18set_storage_offsetEl",
            "torch-torch_npu-mismatch",
        ),
        # an NNAL symbol, cut off in the log (no demangler can parse it): its first namespace decides
        (
            "libop_plugin_atb.so: undefined symbol: _ZN3atb15CreateOperationINS_5infer14GroupTo",
            "nnal-mismatch",
        ),
        ("libfoo.so: undefined symbol: aclnnFooBar", "cann-too-old"),
        # a class's vtable (the ABI's special name _ZTV): the class's namespace decides (mindyolo#249)
        (
            "mindspore_lite/lib/libmindspore_converter.so: undefined symbol: _ZTVN9mindspore12TypeAnythingE",
            "framework-mismatch",
        ),
        # the same, cut off in the log
        ("libext.so: undefined symbol: _ZTIN3atb15Operat", "nnal-mismatch"),
    ],
)
def test_an_undefined_symbol_is_demangled_and_mapped_by_namespace(line: str, cause: str) -> None:
    assert _top(line + "\n") == cause


def test_demangling_uses_the_library() -> None:
    assert knowledge.demangle("_ZN2ge8Operator7SetAttrEPKcb") == "ge::Operator::SetAttr(char const*, bool)"
    assert knowledge.demangle("aclnnAdd") is None


# --- evidence weighed ------------------------------------------------------------------------------
def test_checks_that_only_warn_make_a_cause_consistent_not_confirmed() -> None:
    from cannenv.report import Finding

    warn = Finding(id="toolkit-ops", status="warn", severity="medium", title="t", detail="910b kernels only")
    st, basis, _ = judge.judge_checks(["toolkit-ops"], {"toolkit-ops": [warn]})
    assert st == "consistent" and "warn" in basis[0]


def _numpy_host(tmp_path: Path, numpy: str) -> tuple[str, str]:
    t = hosts.HostTree(tmp_path / "h").os_release()
    inst = t.toolkit("8.2.RC1", kernels="910b")
    t.python_stack("2.6.0", "2.6.0.post1")
    sp = t.site_packages("3.11")
    for old in (t.root / sp.lstrip("/")).glob("numpy-*.dist-info"):
        (old / "METADATA").unlink()
        old.rmdir()
    t.dist("numpy", numpy)
    t.sourced(inst)
    env = tmp_path / "h.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in t.env.items()))
    return str(t.root), str(env)


LOG_NUMPY_2 = (
    "Successfully installed numpy-2.0.1\n"
    "numpy version: 2.0.1\n"
    "AttributeError: `np.float_` was removed in the NumPy 2.0 release. Use `np.float64` instead.\n"
)


def test_a_version_the_log_prints_decides_and_a_disagreeing_host_is_a_contradiction(tmp_path: Path) -> None:
    root, env = _numpy_host(tmp_path, "1.26.4")
    r = CliRunner().invoke(
        cli, ["explain", "--root", root, "--env-file", env, "--json", LOG_NUMPY_2], standalone_mode=False
    )
    doc = json.loads(r.output)
    top = doc["causes"][0]
    assert (top["id"], top["status"]) == ("python-deps", "confirmed")
    assert top["tie"].startswith("the log shows numpy 2.0.1")
    assert "this host has 1.26.4" in top["contradiction"] and "--facts" in top["contradiction"]
    assert doc["log_facts"] == {"numpy": "2.0.1"} and doc["contradictions"]
    r = CliRunner().invoke(
        cli, ["explain", "--root", root, "--env-file", env, "--verbose", LOG_NUMPY_2], standalone_mode=False
    )
    assert "tied to this error by: the log shows numpy 2.0.1" in r.output
    assert "contradiction: the log shows numpy 2.0.1; this host has 1.26.4" in r.output


SQ_CQ_USED_UP = (
    "[ERROR] DRV(1,):2025 [drv_share_log.c:238][drv][tsdrv]Alloc chan failed. "
    "(devid=3; tsid=0; type=0; cur_sq_num=150; cur_cq_num=150; ret=-28)\n"
    "[ERROR] RUNTIME(1,):2025 [stream_sqcq_manage.cc:79]1 AllocStreamSqCq:[SqCqManage]Alloc sq cq fail, "
    "stream_id=1088, retCode=0x7020023.\n"
)


def _explain_on_an_old_driver(tmp_path: Path, text: str) -> dict[str, Any]:
    """`cannenv explain --json` of ``text`` on an A2 host whose driver (25.2.0) is below 25.5.1."""
    t = hosts.HostTree(tmp_path / "h").os_release().driver(hosts.driver_like_25_3("25.2.0")).npu_smi("a2")
    t.dev_nodes(2)
    inst = t.cann("8.5.0", ops="910b")
    t.python_stack("2.8.0", "2.8.0.post2").sourced(inst)
    env = tmp_path / "h.env"
    env.write_text("".join(f"{k}={v}\n" for k, v in t.env.items()))
    r = CliRunner().invoke(
        cli,
        ["explain", "--root", str(t.root), "--env-file", str(env), "--json", text],
        standalone_mode=False,
    )
    doc = json.loads(r.output)
    return dict(doc)


def test_trap_alloc_sq_cq_fail_with_used_up_queues_is_not_an_old_driver(tmp_path: Path) -> None:
    """`Alloc sq cq fail` on a driver below 25.5.1 used to be confirmed driver-too-old; the driver's
    own line (cur_sq_num … ret=-28) says the queues are used up: device-busy, the old driver ruled out."""
    doc = _explain_on_an_old_driver(tmp_path, SQ_CQ_USED_UP)
    assert doc["causes"][0]["id"] == "device-busy"
    [old] = [c for c in doc["causes"] if c["id"] == "driver-too-old"]
    assert old["status"] == "ruled-out" and old["basis"][0].startswith("the log's own detail rules it out")


TOO_MANY_STREAMS = (
    "[ERROR] RUNTIME(9,app):2026 [stream.cc:728]9 Setup:Alloc sq cq failed, stream_id=2047,"
    " retCode=0x7020023.\n"
    "[ERROR] RUNTIME(9,app):2026 [stream.cc:731]9 Setup:Alloc Stream resource failed."
    " Reason: Too many streams are created. ErrorCode=EE1023.\n"
)


def test_trap_alloc_sq_cq_fail_with_too_many_streams_is_the_application(tmp_path: Path) -> None:
    """The runtime's own EE1023 reason beside `Alloc sq cq failed` (hicann/runtime's every EE1023 call
    site: too many streams, events or Notify objects are created): the application used the resources
    up, and on an old driver the old driver is ruled out by that detail, not confirmed by the keyword."""
    doc = _explain_on_an_old_driver(tmp_path, TOO_MANY_STREAMS)
    assert doc["causes"][0]["id"] == "not-a-version-problem"
    assert doc["causes"][0]["signature"] == "runtime-too-many-created"
    [old] = [c for c in doc["causes"] if c["id"] == "driver-too-old"]
    assert old["status"] == "ruled-out" and old["basis"][0].startswith("the log's own detail rules it out")
    for reason in ("Too many events are created", "Too many Notify objects are created"):
        ex = _explain(f"Alloc Event resource failed. Reason: {reason}. ErrorCode=EE1023.")
        assert ex.causes[0].id == "not-a-version-problem", reason


def test_a_dtype_the_operator_lacks_is_not_an_ops_package_problem() -> None:
    text = (
        "RuntimeError: call aclnnExpm1 failed, error code is 161002\n"
        "AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_DOUBLE, "
        "should be in dtype support list [DT_FLOAT,DT_FLOAT16].\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "not-a-version-problem"
    assert "ops-package-missing-or-wrong" not in [c.id for c in ex.causes if c.status != "ruled-out"]


# --- fleet page ----------------------------------------------------------------------------------------
def test_the_fleet_html_page_shows_the_explained_error_groups(tmp_path: Path) -> None:
    from tests.unit.test_explain import _facts_json

    _facts_json(tmp_path, hosts.kernels_wrong(tmp_path / "n1"), "node1")
    _facts_json(tmp_path, hosts.a2_cann85_new(tmp_path / "n3"), "node3")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "node1.log").write_text("error code is 561103\n")
    (logs / "node3.log").write_text("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    page = tmp_path / "fleet.html"
    r = CliRunner().invoke(
        cli,
        ["fleet", "report", str(tmp_path / "collection"), "--logs", str(logs), "--html", str(page)],
        standalone_mode=False,
    )
    assert r.exception is None, r.output
    html = page.read_text()
    assert "<h2>Explained errors</h2>" in html
    rows = re.findall(r'<tr class="explained">(.*?)</tr>', html, re.S)
    assert len(rows) == 2
    [ops] = [x for x in rows if "node1" in x]
    assert "ops-561103" in ops and "ops-package-missing-or-wrong" in ops and "confirmed" in ops
    assert any("<code>oom</code>" in x and "node3" in x for x in rows)


# --- the vendor's error-code reference, runtime-internal hex codes (issue 29, round 2) -------------------
def test_the_error_code_reference_is_whole_and_every_row_has_a_source() -> None:
    codes = {c.code: c for c in K.codes}
    reference = [c for c in K.codes if c.family == "error-code"]
    assert len(reference) >= 380
    # every class of the reference: RTS (EE), ACL (EH), driver (EL), aclnn (EZ), profiling (EK),
    # dump (EP), FE/TE fusion (E2/E4), AI CPU (E3), compiler (EB), operators (E5/E6/E7)
    for code in ("EE1001", "EE1015", "EE1023", "EH0001", "EH0014", "EL0001", "EL0015", "EZ1001", "EZ1014"):
        assert code in codes, code
    assert {"EZ9999", "EZ9903", "EK0001", "EP0001", "E20001", "E40020", "E30006", "EB0000"} <= set(codes)
    assert all(c.source in K.sources for c in reference)
    assert codes["EE1015"].causes == ("driver-too-old",) and codes["EZ9999"].causes == ()
    assert K.inner_codes and len(K.inner_codes) >= 350
    assert K.inner_codes[0x07010003].acl == "ACL_ERROR_RT_INVALID_DEVICEID"
    assert all(K.public_code(x.acl) is not None for x in K.inner_codes.values())


def test_the_error_code_importer_reads_the_json_and_the_cpp_that_embeds_it() -> None:
    row = {
        "errClass": "RTS Errors",
        "errTitle": "Package_Error_Incorrect_Driver_Version",
        "ErrCode": "EE1015",
        "ErrMessage": "%s failed. Reason: The driver version capability is insufficient. %s",
        "suggestion": {"Possible Cause": "N/A", "Solution": "Upgrade the driver."},
    }
    warn = {"errTitle": "Not_Supported", "ErrCode": "WE0001", "ErrMessage": "Failed to %s"}
    doc = json.dumps({"error_info_list": [row, warn]})
    titles = {"Package_Error_Incorrect_Driver_Version": ("driver-too-old",)}
    for text in (doc, f'static const std::string g = R"(\n{doc}\n)";\n'):
        [r] = knowledge.import_error_codes(text, source="cann-error-codes", title_causes=titles)
        assert r == {
            "code": "EE1015",
            "name": "Package_Error_Incorrect_Driver_Version",
            "family": "error-code",
            "meaning": "… failed. Reason: The driver version capability is insufficient. …",
            "causes": ["driver-too-old"],
            "source": "cann-error-codes",
            "component": "RTS Errors",
            "advice": "Upgrade the driver.",
        }


def test_the_error_code_importer_reads_tbes_operator_table() -> None:
    # TBE's errormanager.json (source tbe-errormanager): a bare list, errCode/errMessage, no title
    doc = json.dumps(
        [
            {
                "errCode": "E80012",
                "errMessage": "In op[%s], the num of dimensions of input[%s] should be in the range of"
                " [%s, %s], but actually is [%s].",
                "argList": "op_name,param_name,min_value,max_value,real_value",
            }
        ]
    )
    [r] = knowledge.import_error_codes(doc, source="tbe-errormanager", title_causes={})
    assert r == {
        "code": "E80012",
        "name": "Untitled",
        "family": "error-code",
        "meaning": "In op[…], the num of dimensions of input[…] should be in the range of […, …],"
        " but actually is […].",
        "causes": [],
        "source": "tbe-errormanager",
    }
    codes = {c.code: c for c in K.codes}
    # the rows as reviewed: a check of what the caller passed; TBE's compile errors (E9~EB) per the
    # MindSpore CANN error page, which the row names as where its causes were read
    assert codes["E80012"].causes == ("not-a-version-problem",)
    assert codes["E80012"].source == "tbe-errormanager"
    assert codes["EB0000"].causes == ("chip-unsupported", "not-a-version-problem")
    assert codes["EB0000"].source == "cann-error-codes" and codes["EB0000"].causes_source == "ms-cann-errors"


def test_a_tbe_operator_check_is_the_code_then_its_family() -> None:
    # the MindSpore CANN error page's E80000 (StridedSliceGradD): the code's row decides, and TBE's
    # error dict of an E5~E8 code says the same for a code no table knows
    line = (
        "RuntimeError: ({'errCode': 'E80000', 'op_name': 'strided_slice_grad_d', 'param_name': 'strides[0]',"
        " 'excepted_value': '1', 'real_value': '2'}, 'In op[strided_slice_grad_d], the parameter[strides[0]]"
        " should be , but actually is [2].')"
    )
    ex = _explain(line)
    assert [m.id for m in ex.matches] == ["code-E80000", "tbe-operator-check"]
    assert [c.id for c in ex.causes] == ["not-a-version-problem"]
    unknown = _explain(line.replace("E80000", "E89999"))
    assert [m.id for m in unknown.matches] == ["tbe-operator-check"]


def test_the_inner_code_importer_pairs_the_hex_value_with_the_public_code() -> None:
    define = (
        "constexpr int32_t RT_ERROR_DEVICE_ID = 0x07010003;\nconstexpr int32_t RT_ERROR_X = 0x07010004;\n"
    )
    mapping = 'rtErrMap_[RT_ERROR_DEVICE_ID] = {ACL_ERROR_RT_INVALID_DEVICEID,\n    "device id " "error"};\n'
    rows = knowledge.import_inner_codes(define, mapping, source="rt-inner-codes")
    assert rows == [
        {
            "code": "0x07010003",
            "name": "RT_ERROR_DEVICE_ID",
            "acl": "ACL_ERROR_RT_INVALID_DEVICEID",
            "meaning": "device id error",
            "source": "rt-inner-codes",
        }
    ]


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        (
            "EE1015: [PID: 7] rtsGetX failed. Reason: The driver version capability is insufficient.",
            "driver-too-old",
        ),
        ("[ERROR] EL0005: The resources are busy.", "device-busy"),
        (
            "EZ1002: aclnnFoo failed. Environment variable ASCEND_OPP_PATH is not configured.",
            "env-not-sourced",
        ),
        ("EH0011: The current system or device does not support aclmdlRICaptureBegin.", "chip-unsupported"),
        ("E40020: Failed to import Python module [tbe]. Reason: see the plog.", "python-deps"),
    ],
)
def test_a_code_of_the_reference_is_explained_without_a_hand_signature(line: str, cause: str) -> None:
    ex = _explain(line + "\n")
    assert ex.causes[0].id == cause, [(m.id, [c.id for c in m.causes]) for m in ex.matches]
    assert ex.matches[-1].id.startswith("code-") and "the vendor's table" in ex.causes[0].why


def test_a_reference_code_that_says_nothing_alone_matches_nothing() -> None:
    assert known(_explain("EZ9999: Inner Error!\nEZ9999: [PID: 1] something failed\n")) == ()
    assert known(_explain("see section EE10011 and model E1001X\n")) == ()  # not whole codes


def test_a_runtime_internal_hex_code_after_an_error_word_is_its_public_code() -> None:
    ex = _explain("rtGetDevice execute failed, reason=[device id error], err:0x7010003\n")
    [m] = ex.matches
    assert m.id == "rt-inner-0x07010003" and ex.causes[0].id == "device-not-visible"
    assert "107001 ACL_ERROR_RT_INVALID_DEVICEID" in ex.causes[0].why
    assert _top("ret=0x07020016 in rtMalloc\n") == "oom"  # RT_ERROR_DRV_OUT_MEMORY
    # an address, or a hex value no error word introduces, is no code
    assert _explain("stack 0x7010003 at frame 3\nerror at addr 0x7fff12345678\n").matches == ()


# --- kinds of error the products name themselves ---------------------------------------------------------
def test_a_cpu_fallback_warning_is_no_error_and_ranks_below_any_other() -> None:
    warn = (
        "[W compiler_depend.ts:51] Warning: CAUTION: The operator 'aten::foo.out' is not currently "
        "supported on the NPU backend and will fall back to run on the CPU. This may have performance "
        "implications. (function npu_cpu_fallback)\n"
    )
    assert _top(warn) == "not-a-version-problem"
    ex = _explain(warn + "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    assert ex.causes[0].id == "oom"


def test_a_missing_submodule_of_an_installed_package_is_a_release_mismatch() -> None:
    """Python names the first part of a dotted import it cannot find: 'pkg.sub' missing means pkg
    imported (installed) in a release without sub; a bare 'pkg' missing is a dependency."""
    assert _top("ModuleNotFoundError: No module named 'somepkg.sub.mod'\n") == "framework-mismatch"
    assert _top("ModuleNotFoundError: No module named 'somepkg'\n") == "python-deps"
    assert _top("No module named 'torch_npu._C'\n") == "not-a-version-problem"  # the source-tree trap


def test_a_cuda_only_api_on_npu_is_the_codes_not_a_package() -> None:
    assert _top("ImportError: cannot import name '_cuda_foo' from 'torch.cuda.memory' (x.py)\n") == (
        "not-a-version-problem"
    )
    assert _top("AttributeError: module 'torch._C' has no attribute '_cuda_getDevice'\n") == (
        "not-a-version-problem"
    )


def test_trap_cuda_path_in_user_code_vs_inside_a_framework() -> None:
    """The same 'Torch not compiled with CUDA enabled': from the user's own call it is the code; from
    inside transformers (a newer release than the torch pair) it is the framework's release."""
    user = (
        '  File "train.py", line 3, in <module>\n'
        '  File "/env/site-packages/torch/cuda/__init__.py", line 289, in _lazy_init\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    framework = (
        '  File "/env/site-packages/transformers/modeling_utils.py", line 4100, in from_pretrained\n'
        "AssertionError: Torch not compiled with CUDA enabled\n"
    )
    assert _top(user) == "not-a-version-problem"
    assert _top(framework) == "framework-mismatch"


def test_trap_an_operator_without_a_kernel_for_this_soc_is_the_chip() -> None:
    """'binary_info_config.json' points at the ops package; 'of socVersion [x] does not support
    opType [y]' says the operator has no kernel registered for this SoC."""
    text = (
        "RuntimeError: call aclnnFooBar failed, detail:EZ1001: Get regInfo failed, The "
        "binary_info_config.json of socVersion [ascend310p] does not support opType [FooBar].\n"
    )
    ex = _explain(text)
    assert [c.id for c in ex.causes][:2] == ["chip-unsupported", "ops-package-missing-or-wrong"]


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Unsupported soc_version: AscendDeviceType.X",
        "RuntimeError: Undefined soc_version: 999. Please file an issue to vllm-ascend.",
        "ValueError: MLAAttention is not supported for 310P.",
        "RuntimeError: MXFP MoE quantization is only supported on Ascend A5.",
    ],
)
def test_vllm_ascends_own_soc_checks_name_the_chip(line: str) -> None:
    assert _top(line + "\n") == "chip-unsupported"


def test_a_frameworks_own_diagnosis_is_not_a_version_problem() -> None:
    ms = "[WARNING] DEVICE(1) DumpTaskExceptionInfo] GetNext error may be caused by slow data processing\n"
    mindie = "NotImplementedError: unsupported model type: some_model; check atb_llm.models\n"
    assert _top(ms) == "not-a-version-problem"
    assert _top(mindie) == "not-a-version-problem"


# --- round 2: kinds of error from the products' own sources ----------------------------------------------
@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # Python: who owns the name that cannot be imported decides
        (
            "ImportError: cannot import name 'Foo' from 'vllm_ascend.ops.bar' (/x/vllm_ascend/ops/bar.py)",
            "framework-mismatch",
        ),
        (
            "ImportError: cannot import name 'Foo' from 'mindspore._x' (/env/site-packages/mindspore/_x.py)",
            "framework-mismatch",
        ),
        (
            "ImportError: cannot import name 'Foo' from 'somelib' (/env/site-packages/somelib/__init__.py)",
            "third-party-library",
        ),
        ("ImportError: cannot import name 'Foo' from 'somelib' (unknown location)", "third-party-library"),
        (
            "ImportError: cannot import name 'a' from partially initialized module 'app.b' "
            "(most likely due to a circular import) (/src/app/b.py)",
            "not-a-version-problem",
        ),
        ("Failed to import pkg_C:No module named 'pkg.pkg_C'", "not-a-version-problem"),
        # the software's own SoC checks, in any spelling
        ("RuntimeError: Unsupported soc version: Ascend999X", "chip-unsupported"),
        ("RuntimeError: Can not support soc_version: 250.", "chip-unsupported"),
        # the platform, not the packages
        (
            "/opt/tool: /lib64/libm.so.6: version `GLIBC_2.99' not found (required by /opt/tool)",
            "third-party-library",
        ),
        (
            "ERROR: Unexpected bus error encountered in worker. "
            "This might be caused by insufficient shared memory (shm).",
            "not-a-version-problem",
        ),
        (
            "RuntimeError: Cannot re-initialize NPU in forked subprocess. "
            "To use NPU with multiprocessing, use spawn",
            "not-a-version-problem",
        ),
        # pins and releases
        (
            "The conflict is caused by:\n    frameworkx 1.2.0 depends on torch==2.9.0\n"
            "    plugy 1.2.0 depends on torch==2.8.0",
            "framework-mismatch",
        ),
        (
            "ValueError: Tokenizer class FancyTokenizer does not exist or is not currently imported.",
            "third-party-library",
        ),
        # torch_npu's own checks; attributes of another release
        ("RuntimeError: Please run 'source set_env.sh' in the CANN installation path.", "env-not-sourced"),
        ("RuntimeError: Installed triton version too old, please upgrade", "framework-mismatch"),
        ("AttributeError: module 'vllm_ascend.utils' has no attribute 'foo'", "framework-mismatch"),
        ("AttributeError: module 'numpy' has no attribute 'float'", "python-deps"),
        # HCCL's own words
        ("ExceptionType:[Heartbeat Lost Occurred], Possible Reason:1. Process has exited", "hccl-link"),
        ("|  10.0.0.2(1)   |   10.0.0.1(0)   |  server  | no connect |", "hccl-link"),
    ],
)
def test_round_two_kinds_are_explained_by_the_products_own_words(text: str, cause: str) -> None:
    assert _top(text + "\n") == cause


def test_trap_no_operator_binary_is_the_chip_only_where_the_log_names_a_310p_and_bf16() -> None:
    missing = "Cannot find bin of op FooBar, integral key 0/1/|bf16/ND/bf16/ND/.\n"
    assert _top(missing) == "ops-package-missing-or-wrong"
    assert _top("[WARNING] [ascend310p] op cache miss\n" + missing) == "chip-unsupported"


def test_a_torch_symbol_when_torch_npu_loads_is_the_torch_pair() -> None:
    text = (
        "`_ZNK3c1010TensorImpl7fooBarEv`\n"
        '  File "/env/site-packages/torch_npu/utils/__init__.py", line 4, in <module>\n'
        "    from torch_npu import _C\n"
    )
    assert _top(text) == "torch-torch_npu-mismatch"
    assert _explain("backtrace: _ZNK3c1010TensorImpl7fooBarEv\n").matches == ()  # no torch_npu load


def test_a_library_of_mindie_points_at_mindies_environment() -> None:
    line = (
        "/usr/local/Ascend/mindie/latest/bin/daemon: error while loading shared libraries: "
        "libboundscheck.so: cannot open shared object file"
    )
    ex = _explain(line + "\n")
    assert ex.causes[0].id == "env-not-sourced" and "MindIE" in ex.matches[0].title


# --- the vendors' FAQs and troubleshooting guides -----------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("RuntimeError: out of memory, need block", "oom"),
        (
            "Prompt must be necessary and data type must be string and length in (0, 4194304]",
            "not-a-version-problem",
        ),
        ("Check_path: weights/config.json failed", "not-a-version-problem"),
        ("[ERROR] Pull kv failed for request 7", "hccl-link"),
        (
            "ImportError: /env/lib/libgomp.so.1: cannot allocate memory in static TLS block",
            "third-party-library",
        ),
        ("symbol lookup error: /usr/lib64/libfoo.so.2: undefined symbol: EVP_md4", "third-party-library"),
        ("ERROR failed to connect, retry=2, rank=1, error=SO_ERROR: Connection refused", "hccl-config"),
        ("RuntimeError: tp_size exceeds num_key_value_heads", "not-a-version-problem"),
        (
            "RuntimeError: Expected all tensors to be on the same device, but found cpu and npu:0",
            "not-a-version-problem",
        ),
        ("[ERROR] Acl open device 3 failed.", "env-not-sourced"),
        ("Init plugin so failed, ret = 1", "hccl-config"),
        (
            "OSError: cannot load library 'libfoo.so': libfoo.so: cannot open shared object file",
            "third-party-library",
        ),
        ("/x/liba.so: undefined symbol: _ZNK9mindspore6kernel3Foo3BarEv", "framework-mismatch"),
        (
            "[WARNING] Can not find driver so(need by mindspore-ascend). Please check LD_LIBRARY_PATH",
            "env-not-sourced",
        ),
        (
            "MindSpore version 2.2.0 and Ascend AI software package (Ascend Data Center Solution)version 7.3 "
            "does not match, the version of software package expect one of ['7.0']",
            "framework-mismatch",
        ),
        ("ModuleNotFoundError: No module named 'acl'", "env-not-sourced"),
        ("RuntimeError: Tensors must be contiguous", "not-a-version-problem"),
        (
            "ValueError: Error initializing torch.distributed: "
            "environment variable MASTER_ADDR expected, but not set",
            "hccl-config",
        ),
        (
            "./bin/mindieservice_daemon: error while loading shared libraries: "
            "libboost_thread.so.1.82.0: cannot open shared object file",
            "env-not-sourced",
        ),
        ("RuntimeError: FM_W+pad_left+pad_right-KW>=strideW failed", "not-a-version-problem"),
        (
            "RuntimeError: Kernel Select Failed, AI CORE and AI CPU can not find a valid kernel info",
            "not-a-version-problem",
        ),
        (
            "[model_deploy_config.cpp:159] Failed to get vocab size from tokenizer wrapper with exception: x",
            "third-party-library",
        ),
        ("Exception:Qwen25VL_VIT_graph nodes[1] infershape  fail, enable log", "chip-unsupported"),
        ("[ERROR] LLMPythonModel initializes fail", "python-deps"),
        ("[ERROR] Socket bind failed on 0.0.0.0:1025", "hccl-port"),
        (
            "[ERROR] ROCE(1,x):2025 [hns_roce_lite.c:630]hns_roce_lite_handle_error_cqe(630) : "
            "error cqe status: 0x15",
            "hccl-link",
        ),
        (
            "Note: Do not configure ranks belonging to different physical superpod ID info a single "
            "logical superpod ID",
            "hccl-config",
        ),
        ("RuntimeError: Failed to infer device type", "env-not-sourced"),
        (
            "vllm_ascend/utils.py: packaging.version.InvalidVersion: Invalid version: '0.1.dev1+gabc'",
            "framework-mismatch",
        ),
        ("EZ9999: numHeads / numKvHeads = 8, MLA only support {32, 64, 128}.", "not-a-version-problem"),
        ("ImportError: Please install vllm[audio] for audio support", "third-party-library"),
        (
            "failed to register layer: ApplyLayer exit status 1: archive/tar: invalid tar header",
            "not-a-version-problem",
        ),
    ],
)
def test_the_vendors_faq_messages_are_explained_by_their_documented_cause(text: str, cause: str) -> None:
    assert _top(text + "\n") == cause


def test_trap_init_env_failed_under_a_daemonic_process_is_not_a_missing_dependency() -> None:
    """'init env failed' (EH9999, 500001) points at CANN's Python dependencies; the traceback's own
    detail — a daemonic process may not start the compiler's workers — decides."""
    init = (
        "EH9999: Inner Error!\nEH9999  [Init][Env]init env failed!\nbuild op model failed, result = 500001\n"
    )
    assert _top(init) == "python-deps"
    ex = _explain("AssertionError: daemonic processes are not allowed to have children\n" + init)
    assert ex.causes[0].id == "not-a-version-problem"
    [deps] = [c for c in ex.causes if c.id == "python-deps"]
    assert deps.status == "ruled-out"


def test_torch_npus_own_error_codes_rank_below_the_error_beside_them() -> None:
    assert _top("[ERROR] 2024-11-28 (PID:1, Device:0, RankID:-1) ERR01007 OPS feature not supported\n") == (
        "not-a-version-problem"
    )
    assert _top("[ERROR] ERR02011 DIST timeout error\n") == "hccl-link"
    ex = _explain(
        "RuntimeError: NPU out of memory. Tried to allocate 2 GiB\n[ERROR] ERR01002 OPS invalid type\n"
    )
    assert ex.causes[0].id == "oom" and ex.matches[-1].id == "code-ERR01002"
    assert known(_explain("[ERROR] ERR99999 UNKNOWN application exception\n")) == ()


def test_torch_npus_sentence_for_a_code_is_that_code() -> None:
    """torch_npu prints a sentence per ACL code after '[Error]:' (NPUErrorCodes.h); a log that kept
    the sentence and lost the number is explained by the code."""
    ex = _explain("[Error]: Invalid device ID.\n        Check whether the device ID is valid.\n")
    assert [m.id for m in ex.matches] == ["code-107001"] and ex.causes[0].id == "device-not-visible"
    assert all(c.message for c in K.codes if c.code in ("107001", "207001", "507014"))
    assert knowledge.import_npu_messages('{207001,\n "Failed to apply for memory.\\n\\\n  Check it."},') == {
        "207001": "Failed to apply for memory."
    }
    assert _explain("[Error]: Something no table knows.\n").matches == ()


# --- round 3: kinds of error from the product's own source ----------------------------------------
def test_mindspore_without_an_op_info_table_for_the_soc_is_the_chip() -> None:
    # MindSpore's op_info_utils.cc: only Ascend910*/910B* have an op-info json (mindyolo#275, a 310P3)
    line = (
        "[ERROR] KERNEL(90948,fffdbae749f0,python):2024-03-19-17:40:09.790.450 "
        "[mindspore/ccsrc/kernel/oplib/op_info_utils.cc:172] LoadOpInfoJson] "
        "Get op info json suffix path failed, soc_version: Ascend310P3\n"
    )
    assert _top(line) == "chip-unsupported"
    # the same loader on a known SoC whose json is missing is not the chip
    missing = (
        "[ERROR] KERNEL(1,2,python):2024-03-19-17:40:09.790.450 "
        "[mindspore/ccsrc/kernel/oplib/op_info_utils.cc:178] LoadOpInfoJson] Get the path:"
        "/usr/local/Ascend/latest/opp/built-in/op_impl/ai_core/tbe/config/ascend910b/"
        "aic-ascend910b-ops-info.jsonfailed. Please check (1) whether the path exists\n"
    )
    assert _top(missing) != "chip-unsupported"


def test_a_source_file_that_does_not_parse_is_the_code_and_a_header_is_not_judged() -> None:
    src = (
        "/root/Git.d/onnxruntime/onnxruntime/core/providers/cann/cann_execution_provider.cc:1499:1: "
        "error: expected unqualified-id before ‘/’ token\n"
    )
    assert _top(src) == "not-a-version-problem"
    assert _top("foo/bar.cpp:12:5: error: stray '\\302' in program\n") == "not-a-version-problem"
    # in a header (CANN's or a library's) the same words may come from another release's declarations
    header = "/opt/Ascend/include/acl/acl_base.h:30:1: error: expected unqualified-id before ‘(’ token\n"
    assert _top(header) is None
    # an identifier after 'before' is a name the headers may lack: not this rule
    assert known(_explain("x.cc:3:1: error: expected unqualified-id before ‘aclrtFoo’ token\n")) == ()


def test_the_device_npu_unknown_to_torch_is_torch_npu_not_loaded() -> None:
    # c10/core/Device.cpp: 'npu' parses only once torch_npu has renamed the PrivateUse1 backend (MinerU#2665)
    line = (
        "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
        "ort, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: "
        "npu\n"
    )
    assert _top(line) == "python-deps"
    # another device name is the program's own string, not this rule
    other = _explain(line.replace("string: npu", "string: auto"))
    assert known(other) == () and other.residual_only  # read only as the program's (residual)


def test_a_kernel_check_of_paddles_npu_plugin_is_the_arguments() -> None:
    # PaddleCustomDevice pad3d_kernel.cc: PADDLE_ENFORCE_EQ(mode, "constant", …), PaddleSpeech#4084
    line = (
        "NotImplementedError: (Unimplemented) npu npu only support mode=constant right now,"
        'but received mode is replicate . [Hint: Expected mode == "constant", but received '
        'mode:replicate != "constant":constant.] (at /paddle/backends/npu/kernels/pad3d_kernel.cc:43)\n'
    )
    assert _top(line) == "not-a-version-problem"


def test_source_under_sh_is_the_shell() -> None:
    # dash has '.' and no 'source' (triton-ascend#1396: the quick start's set_env.sh line run by sh)
    assert _top("sh: 1: source: not found\n") == "not-a-version-problem"


def test_a_tbe_operator_given_another_type_for_its_kernel_name_is_the_framework_pairing() -> None:
    # kernel_name is the operator's last parameter, passed by the framework (mindocr#595, E80003)
    line = (
        "RuntimeError: ({'errCode': 'E80003', 'op_name': 'gather_nd', 'param_name': 'kernel_name', "
        "'param_type': 'str', 'actual_type': 'bool'}, \"In op[gather_nd], the parameter[kernel_name]'s type\n"
    )
    assert _top(line) == "framework-mismatch"
    # another parameter of the same check is the network's input
    other = line.replace("'param_name': 'kernel_name'", "'param_name': 'axis'")
    assert _top(other.replace("parameter[kernel_name]", "parameter[axis]")) == "not-a-version-problem"


def test_ge_s_error_registry_is_in_the_table_with_its_titles_causes() -> None:
    """GE's E1xxxx codes (error_registry.cc, imported whole): each row's causes are its title's
    reviewed causes (title_causes), and the codes are found in a log."""
    import yaml

    raw = yaml.safe_load(knowledge.shipped_path().read_text(encoding="utf-8"))
    rows = [c for c in raw["codes"] if c["source"] == "ge-error-codes"]
    assert len(rows) >= 110 and all(re.fullmatch(r"E1[0-9]{4}", c["code"]) for c in rows)
    titles = raw["title_causes"]
    assert [c["code"] for c in rows if c["causes"] != titles.get(c["name"], [])] == []
    ex = _explain("E10001: Value [-1] for parameter [Inputs] is invalid. Reason: maybe set input_shape\n")
    assert ex.causes[0].id == "not-a-version-problem"
    ex = _explain("E10501: IR for Op Foo with optype Foo is not registered.\n")
    assert [c.id for c in ex.causes][:2] == ["chip-unsupported", "ops-package-missing-or-wrong"]


def test_ges_public_codes_are_the_whole_header_with_the_vendors_meaning() -> None:
    # a real line of GE's header (hicann/ge inc/external/ge/ge_error_codes.h): uint32_t with a U suffix
    (row,) = knowledge.import_header(
        "static const uint32_t ACL_ERROR_GE_PARAM_INVALID = 145000U;\n",
        family="acl-ge",
        source="ge-error-codes-h",
    )
    assert (row["code"], row["name"]) == ("145000", "ACL_ERROR_GE_PARAM_INVALID")
    # the refresh is empty at the imported commit: every constant of the header (its lines 34-71,
    # vendored in tests/data/explain_rtge/ge/) is a row, and no row is not in it
    header = (
        Path(__file__).resolve().parents[1] / "data" / "explain_rtge" / "ge" / "inc" / "external" / "ge"
    ) / "ge_error_codes.h"
    imported = {
        (r["code"], r["name"])
        for r in knowledge.import_header(header.read_text(), family="acl-ge", source="ge-error-codes-h")
    }
    ge = [c for c in K.codes if c.family == "acl-ge"]
    assert len(imported) == 38 and {(c.code, c.name) for c in ge} == imported
    assert all(
        c.source == "ge-error-codes-h" and c.causes_source == "ge-aclerror-doc" and c.advice for c in ge
    )
    by_code = {c.code: c for c in ge}
    assert by_code["145001"].causes == ("not-a-version-problem",)  # aclInit not called first
    assert by_code["245002"].causes == ("oom",)  # the device's memory is used up
    assert by_code["145019"].causes == ("env-not-sourced",)  # LD_LIBRARY_PATH
    assert not by_code["545000"].causes  # an internal error names no cause
