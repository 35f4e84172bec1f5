"""`cannenv explain`: MindSpore Lite's status codes (issue 29).

``matrices/explain/libtables.yaml`` table ``mindspore-lite``: every ``RET_*`` constant of MindSpore
Lite's ``include/errorcode.h`` with the text its ``GetErrorInfo`` prints, read whole. The converter
and the cropper print a failed step's status as ``<status> <GetErrorInfo(status)>`` (``CONVERT
RESULT FAILED:-300 Failed to find operator.``); a row names a cause only where the header's meaning
(or MindSpore Lite's troubleshooting page for -300) says so. Tested on the source's own wording,
near misses, the ranking trap and hostile input.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cannenv import linre
from cannenv.errors import InputError
from cannenv.explain import libtables, signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
LITE = {t.id: t for t in K.lib_tables}["mindspore-lite"]

# errorcode.h (mindspore-lite@2b288705 = mindspore_test@a05ce588): name, value;
# errorcode.cc's GetErrorInfo: the text printed for each
HEADER = {
    "RET_OK": (0, "No error occurs."),
    "RET_ERROR": (-1, "Common error code."),
    "RET_NULL_PTR": (-2, "NULL pointer returned."),
    "RET_PARAM_INVALID": (-3, "Invalid parameter."),
    "RET_NO_CHANGE": (-4, "No change."),
    "RET_SUCCESS_EXIT": (-5, "No error but exit."),
    "RET_MEMORY_FAILED": (-6, "Fail to create memory."),
    "RET_NOT_SUPPORT": (-7, "Fail to support."),
    "RET_THREAD_POOL_ERROR": (-8, "Thread pool error."),
    "RET_OUT_OF_TENSOR_RANGE": (-100, "Failed to check range."),
    "RET_INPUT_TENSOR_ERROR": (-101, "Failed to check input tensor."),
    "RET_REENTRANT_ERROR": (-102, "Exist executor running."),
    "RET_GRAPH_FILE_ERR": (-200, "Failed to verify graph file."),
    "RET_NOT_FIND_OP": (-300, "Failed to find operator."),
    "RET_INVALID_OP_NAME": (-301, "Invalid operator name."),
    "RET_INVALID_OP_ATTR": (-302, "Invalid operator attr."),
    "RET_OP_EXECUTE_FAILURE": (-303, "Failed to execution operator."),
    "RET_FORMAT_ERR": (-400, "Failed to checking tensor format."),
    "RET_INFER_ERR": (-500, "Failed to infer shape."),
    "RET_INFER_INVALID": (-501, "Invalid infer shape before runtime."),
    "RET_INPUT_PARAM_INVALID": (-600, "Invalid input param by user."),
}


def _lib(text: str) -> list[str]:
    return [m.id for m in _explain(text).matches if m.id.startswith("lib-mindspore-lite")]


# --- the data ----------------------------------------------------------------------------------
def test_the_table_is_the_headers_whole_enum_with_getErrorInfos_text() -> None:
    got = {r.name: (int(r.key), r.printed) for r in LITE.rows}
    assert got == HEADER
    assert all(r.source == "mslite-errorcode-h" for r in LITE.rows)
    # one printed form per row, each the status and its text
    assert {f.anchor for f in LITE.forms} == {f"{v} {t}" for v, t in HEADER.values()}


def test_causes_follow_the_headers_meaning_only() -> None:
    causes = {r.name: r.causes for r in LITE.rows if r.causes}
    assert causes == {
        "RET_MEMORY_FAILED": ("oom",),
        "RET_REENTRANT_ERROR": ("not-a-version-problem",),
        "RET_NOT_FIND_OP": ("not-a-version-problem",),
        "RET_INPUT_PARAM_INVALID": ("not-a-version-problem",),
    }
    # no status says which release is wrong
    version = {"cann-too-old", "framework-mismatch", "driver-too-old", "ops-package-missing-or-wrong"}
    assert not any(version & set(r.causes) for r in LITE.rows)


# --- the forms, on the source's own wording ------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "sig", "cause"),
    [
        # 2.0 converter.cc: CONVERTER_LOG_ERROR("CONVERT RESULT FAILED:" << status << " " << GetErrorInfo(..))
        (
            "[ERROR] LITE(1,7f,converter_lite):2023-01-01-00:00:00.000.000 [mindspore/lite/tools/converter/"
            "converter.cc:999] RunConverter] CONVERT RESULT FAILED:-300 Failed to find operator.",
            "lib-mindspore-lite-ret-not-find-op",
            "not-a-version-problem",
        ),
        # converter.cc: "Init config file failed: " << ret << " " << GetErrorInfo(ret)
        (
            "Init config file failed: -600 Invalid input param by user.",
            "lib-mindspore-lite-ret-input-param-invalid",
            "not-a-version-problem",
        ),
        # cropper.cc: std::cerr << "Flags init Error:" << status << " " << GetErrorInfo(status)
        ("Flags init Error:-6 Fail to create memory.", "lib-mindspore-lite-ret-memory-failed", "oom"),
        (
            "SAVE GRAPH FAILED:-102 Exist executor running.",
            "lib-mindspore-lite-ret-reentrant-error",
            "not-a-version-problem",
        ),
    ],
)
def test_a_printed_status_is_its_row(text: str, sig: str, cause: str) -> None:
    ex = _explain(text)
    assert _lib(text) == [sig]
    assert ex.causes[0].id == cause and ex.causes[0].signature == sig
    assert ex.causes[0].why.startswith("MindSpore Lite's own table")
    assert all("/blob/" in s.url for s in ex.causes[0].sources)


@pytest.mark.parametrize(
    ("text", "sig"),
    [
        ("CONVERT RESULT FAILED:-1 Common error code.", "lib-mindspore-lite-ret-error"),
        ("Preinference failed: -500 Failed to infer shape.", "lib-mindspore-lite-ret-infer-err"),
        ("CROPPER RESULT FAILED:-200 Failed to verify graph file.", "lib-mindspore-lite-ret-graph-file-err"),
        ("Optimize func graph failed: -7 Fail to support.", "lib-mindspore-lite-ret-not-support"),
    ],
)
def test_a_status_that_names_no_cause_still_matches_and_says_so(text: str, sig: str) -> None:
    ex = _explain(text)
    assert [m.id for m in ex.matches] == [sig]
    assert not ex.causes and "names no cause by itself" in ex.matches[0].note


@pytest.mark.parametrize(
    "text",
    [
        "CONVERT RESULT FAILED:-3000 Failed to find operator.",  # another number
        "CONVERT RESULT FAILED:1-300 Failed to find operator.",  # not the status alone
        "CONVERT RESULT FAILED:-301 Failed to find operator.",  # 1.0's numbering printed no text
        "CONVERT RESULT FAILED:-300 failed to find operator.",  # not GetErrorInfo's text
        "CONVERT RESULT FAILED:-300 Unknown error",  # GetErrorInfo's default names no row
        "Schedule kernels failed: -500",  # a status without its text is not read
        "CONVERT RESULT SUCCESS:0",
    ],
)
def test_near_misses_are_not_the_form(text: str) -> None:
    assert _lib(text) == []


# --- the trap: the table ranks below every stack-specific signature ------------------------------
def test_a_stack_signature_elsewhere_in_the_log_decides() -> None:
    text = (
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
        "CONVERT RESULT FAILED:-300 Failed to find operator.\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "env-not-sourced" and not ex.causes[0].signature.startswith("lib-")
    assert ex.matches[-1].id == "lib-mindspore-lite-ret-not-find-op"


# --- hostile input ------------------------------------------------------------------------------
@pytest.mark.parametrize("form", LITE.forms, ids=lambda f: f.id)
def test_each_form_is_linear_and_holds_its_anchor(form: Any) -> None:
    assert linre.ambiguity(form.regex, mode="search") is None
    compiled = linre.compile(form.regex)
    for filler in (
        form.anchor * max(1, 1_000_000 // len(form.anchor)),
        "-300 " * 200_000,
        "0" * 1_000_000 + form.anchor,
    ):
        m = compiled.search(filler)
        assert m is None or form.anchor in m.group(0)


def test_a_megabyte_line_and_many_lines_are_read_in_bounds() -> None:
    line = "-300 Failed to find operator.-300 Failed to find operator." * 17_000 + "\n"
    assert _explain(line).causes[0].id == "not-a-version-problem"
    many = "CONVERT RESULT FAILED:-1 Common error code.\n" * 50_000
    ex = _explain(many)
    assert [m.id for m in ex.matches] == ["lib-mindspore-lite-ret-error"] and not ex.causes


# --- validation of the {printed} substitution ----------------------------------------------------
def _raw() -> dict[str, Any]:
    from cannenv.records import load_yaml

    return dict(load_yaml(libtables.shipped_path().read_text()))


def _lite(d: dict[str, Any]) -> dict[str, Any]:
    return next(t for t in d["tables"] if t["id"] == "mindspore-lite")


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda t: t["forms"][0].update(regex="(?:^|[^0-9])({key}) "), "{printed}"),
        (lambda t: t["forms"][0].update(regex="(?:^|[^0-9])({key}) (?=x){printed}"), "regex"),
        (lambda t: t["rows"][1].update(printed="No error occurs."), "names two rows"),
    ],
)
def test_a_bad_form_is_refused(mutate: Any, problem: str) -> None:
    d = copy.deepcopy(_raw())
    mutate(_lite(d))
    with pytest.raises(InputError) as exc:
        libtables.parse(d, source="libtables.yaml")
    assert problem in exc.value.message
