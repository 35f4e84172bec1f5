"""The CANN runtime's and GE's own error messages, imported from their source
(matrices/explain/rtge_messages.yaml).

The importer reads real source text (tests/data/explain_rtge/: verbatim excerpts of hicann/runtime
and hicann/ge at the table's commits, at their repository paths; EXCERPTS.md names each); the table
is whole (every error-log and report call a log can tell apart, of both repositories); log lines as
the user reads them (the plog's ``[ERROR] RUNTIME(…) [file.cc:line]…``/``[ERROR] GE(…)`` and the
error manager's ``…message[FUNC:…][FILE:…][LINE:…]``) are matched to the call that logged them and
to the cause of the reviewed rule covering it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv.explain import judge, rtge, signatures, tables
from cannenv.explain.scan import MAX_VALUES, Scanner
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
RM = rtge.RtgeMessages(K.rtge_messages) if K.rtge_messages is not None else None
WHOLE = rtge.load(rtge.shipped_path(), keep_all=True)
EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "explain_rtge"
REPO = Path(__file__).resolve().parents[2]
# the first line of each excerpt's range in the vendor's file (EXCERPTS.md)
FIRST_LINE = {
    "src/runtime/api/api_c.cc": 1365,
    "src/runtime/core/src/runtime.cc": 5070,
    "src/runtime/driver/npu_driver_mem.cc": 951,
    "src/runtime/core/src/stream/stream.cc": 725,
    "src/runtime/api/impl/api_error.cc": 1365,
    "runtime/v1/graph/manager/caching_allocator.cc": 300,
    "runtime/v1/graph/manager/graph_mem_allocator.cc": 62,
}
PLOG = "[ERROR] {mod}(3301,python3):2026-08-30-10:11:12.345.678 [{file}:{line}]3302 {func}:{msg}"


def _plog(mod: str, file: str, line: int, func: str, msg: str) -> str:
    return PLOG.format(mod=mod, file=file, line=line, func=func, msg=msg)


def _report(code: str, msg: str, func: str, file: str, line: int) -> str:
    return f"{code}: [PID: 3301] 2026-08-30-10:11:12.345.678 {msg}[FUNC:{func}][FILE:{file}][LINE:{line}]"


def _rtge(text: str) -> list[judge.Match]:
    return [m for m in _explain(text).matches if m.id.startswith("rtge-src-")]


# --- the table ----------------------------------------------------------------------------------
def test_table_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "rtge_messages.schema.json").read_text())
    assert shipped == rtge.json_schema(), (
        "regenerate: python -m cannenv.explain.rtge --schema > matrices/explain/rtge_messages.schema.json"
    )


def test_the_table_is_whole_and_each_row_has_its_source_url() -> None:
    assert {m.repo for m in WHOLE.messages} == {"hicann/runtime", "hicann/ge"}
    assert WHOLE.total == len(WHOLE.messages) > 15_000  # every call a log can tell apart
    assert RM is not None and RM.total == WHOLE.total
    # the engine keeps the rows a rule gives a cause and the public codes' reports
    assert {m.source_id for m in RM.messages} == {
        m.source_id for m in WHOLE.messages if m.causes or rtge.public_code(m.code)
    }
    for m in RM.messages:  # each row is its own source, resolved by id
        assert RM.source(m.source_id) == (m.source_title, m.url)
        assert (m.rule and m.reason) or (rtge.public_code(m.code) and not m.causes)
    for m in WHOLE.messages:
        assert re.fullmatch(r"https://github\.com/hicann/(runtime|ge)/blob/[0-9a-f]{40}/\S+#L[0-9]+", m.url)
    # a rule gives few messages a cause: the others are not looked for
    assert 0 < len([m for m in RM.messages if m.causes]) < WHOLE.total // 50
    assert len(RM.messages) < WHOLE.total // 5


def test_a_row_reporting_a_public_code_is_left_to_the_code_table() -> None:
    assert rtge.public_code("EE1001") and rtge.public_code("E10001")
    assert not any(rtge.public_code(c) for c in ("E19999", "EE9999", "EL9999", "E18888", "FAILED", ""))
    public = [m for m in WHOLE.messages if rtge.public_code(m.code)]
    # only the reviewed rules on the runtime's own reasons (EE1006's, EE1016's) give one a cause
    assert public and {m.rule for m in public if m.causes} == {
        "call-not-allowed-in-state",
        "argument-not-supported",
        "soc-lacks-feature",
    }
    assert {m.code for m in public if m.causes} == {"EE1006", "EE1016", "EE1017"}


def test_every_rule_cause_is_a_cause_of_the_signature_file_and_every_rule_is_used() -> None:
    assert RM is not None
    assert {m.rule for m in RM.messages if m.rule} == {r.name for r in RM.rules}
    assert {c for m in RM.messages for c in m.causes} == {
        "driver-too-old",
        "oom",
        "device-not-visible",
        "ops-package-missing-or-wrong",
        "chip-unsupported",
        "not-a-version-problem",
    }
    assert {c for m in RM.messages for c in m.causes} <= set(TABLE.causes)


def test_source_rows_rank_below_every_hand_written_signature() -> None:
    noise = ("worker-parent-exited", "pip-scripts-not-on-path")  # no errors: helpers at exit, pip's warning
    hand = [s.priority for s in TABLE.signatures if not s.derived and s.id not in noise]
    assert min(hand) > signatures.SOURCE_PRIORITY > signatures.SOURCE_PRIORITY - judge.GE_BELOW_RUNTIME


def test_the_cached_table_holds_plain_tuples_and_a_log_without_a_marker_never_imports_it() -> None:
    from cannenv.explain import knowledge

    assert knowledge.shipped_path().with_name("rtge_messages.yaml") == rtge.shipped_path()
    assert K.rtge_messages is not None
    rows, repos, rules, total, files = K.rtge_messages
    assert all(type(r) is tuple for r in (*rows, *repos, *rules)) and type(files) is frozenset
    assert total == WHOLE.total and len(rows) == len(RM.messages if RM else ())
    # a warm cache (this session's, built above): a log without RUNTIME/GE/report lines does not
    # import the module; one with such a line does
    code = (
        "import sys\n"
        "from cannenv.explain import judge, signatures\n"
        "from cannenv.explain.scan import Scanner\n"
        "t = signatures.shipped()\n"
        "s = Scanner(t, total_hint=100)\n"
        "s.feed(sys.argv[1].encode())\n"
        "s.end_input()\n"
        "judge.explain(t, s.result())\n"
        "print('cannenv.explain.rtge' in sys.modules)\n"
    )

    def imported(text: str) -> bool:
        p = subprocess.run(
            [sys.executable, "-c", code, text],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=120,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip() == "True"

    imported("warm the cache of this session (CANNENV_CACHE_DIR)\n")
    assert not imported("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n")
    assert imported(
        _plog("RUNTIME", "api_c.cc", 1372, "rtSetDevice", "Invalid device_id=9, valid range is [0,8).\n")
    )


def test_the_cached_table_reads_the_rows_only_when_a_log_has_such_a_line() -> None:
    import pickle

    from cannenv.explain.lazy import Rows

    cached = pickle.loads(pickle.dumps(TABLE, pickle.HIGHEST_PROTOCOL))  # as the cache gives it back
    assert cached.knowledge is not None
    part = cached.knowledge.rtge_messages
    assert isinstance(part, Rows) and not part.loaded  # one blob: no row built when the table loads

    def run(text: str) -> list[str]:
        s = Scanner(cached, total_hint=len(text))
        s.feed(text.encode())
        s.end_input()
        return [m.id for m in judge.explain(cached, s.result()).matches if m.id.startswith("rtge-src-")]

    assert run("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n") == [] and not part.loaded
    line = _plog("RUNTIME", "api_c.cc", 1372, "f", "Invalid device_id=9, valid range is [0,8).")
    assert run(line + "\n") == ["rtge-src-device-id-runtime-api-c-1372"] and part.loaded


# --- the importer on real source text -------------------------------------------------------------
def test_import_reads_the_real_excerpts() -> None:
    calls = rtge.import_tree(EXCERPTS / "runtime") + rtge.import_tree(EXCERPTS / "ge")
    got = {(c.path, c.line, c.call, c.code, c.format) for c in calls}
    assert got == {
        # RT_LOG_INNER_MSG(RT_LOG_ERROR, …) logs and reports the runtime's inner error EE9999
        (
            "src/runtime/api/api_c.cc",
            8,
            "RT_LOG_INNER_MSG",
            "EE9999",
            "Invalid device_id=%d, valid range is [0,%u).",
        ),
        # a wrapper the runtime defines (error_message_manage.hpp), "%" PRIu64 one conversion
        (
            "src/runtime/core/src/runtime.cc",
            8,
            "COND_RETURN_ERROR_MSG_INNER",
            "EE9999",
            "Cannot find kernel by tilingKey[%s].",
        ),
        # RT_LOG's level and format on lines of their own, the format's adjacent literals joined
        (
            "src/runtime/driver/npu_driver_mem.cc",
            7,
            "RT_LOG",
            None,
            "this feature is not supported on current version, size=%lu, type=%u, memory policy=%u, "
            "deviceId=%u, moduleId=%u.",
        ),
        # GELOGE's status (ge::FAILED → FAILED), twice in the file
        (
            "runtime/v1/graph/manager/caching_allocator.cc",
            8,
            "GELOGE",
            "FAILED",
            "[Malloc][Memory] failed, no enough memory for size = %zu, device_id = %u",
        ),
        (
            "runtime/v1/graph/manager/caching_allocator.cc",
            14,
            "GELOGE",
            "MEMALLOC_FAILED",
            "Failed to apply for memory. We will try to free memory from memory pool, the above error log "
            "can be ignored. Try to free cached memory...",
        ),
        (
            "runtime/v1/graph/manager/caching_allocator.cc",
            19,
            "GELOGE",
            "FAILED",
            "[Malloc][Memory] failed, no enough memory for size = %zu, device_id = %u",
        ),
        # the runtime's error-code reports (RT_LOG_OUTER_MSG_IMPL and the macros that make one): the
        # code's template of error_code_meta.h with the call's values in it, a built value's
        # literals kept ("Parameter flags value " + std::to_string(flags)), __func__ a hole
        (
            "src/runtime/core/src/stream/stream.cc",
            8,
            "RT_LOG_OUTER_MSG_IMPL",
            "EE1023",
            "Alloc Stream resource failed. Reason: Too many streams are created. ErrorCode=EE1023.",
        ),
        (
            "src/runtime/core/src/stream/stream.cc",
            5,
            "RT_LOG",
            None,
            "Alloc sq cq failed, stream_id=%d, retCode=%#x.",
        ),
        (
            "src/runtime/core/src/stream/stream.cc",
            10,
            "RT_LOG_INNER_MSG",
            "EE9999",
            "Alloc sq cq failed, stream_id=%d, retCode=%#x.",
        ),
        (
            "src/runtime/api/impl/api_error.cc",
            7,
            "COND_RETURN_AND_MSG_OUTER_WITH_PARAM_AND_FUNC_DESC",
            "EE1003",
            "Checking stream flags failed because value %s for parameter flags is invalid. "
            "Expected value: [0, %s]. ErrorCode=EE1003.",
        ),
        (
            "src/runtime/api/impl/api_error.cc",
            11,
            "COND_RETURN_AND_MSG_OUTER",
            "EE1006",
            "Checking stream flags failed. Parameter flags value %s is not supported. Reason: The flag "
            "RT_STREAM_CP_PROCESS_USE(0x800U) must be used together with RT_STREAM_ACSQ_LOCK(0x2000U)."
            "ErrorCode=EE1006.",
        ),
        (
            "src/runtime/api/impl/api_error.cc",
            24,
            "NULL_PTR_RETURN_MSG_OUTER_WITH_FUNC_DESC",
            "EE1004",
            "Stream destruction failed because stm cannot be a NULL pointer. ErrorCode=EE1004.",
        ),
        (
            "src/runtime/api/impl/api_error.cc",
            26,
            "COND_RETURN_AND_MSG_OUTER",
            "EE1016",
            "Stream destruction failed. Reason: Stream (stream_id=%d) during the capture stage is not "
            "supported. ErrorCode=EE1016.",
        ),
        (
            "src/runtime/api/impl/api_error.cc",
            36,
            "NULL_PTR_RETURN_MSG_OUTER_WITH_FUNC_DESC",
            "EE1004",
            "Triggering event waiting failed because evt cannot be a NULL pointer. ErrorCode=EE1004.",
        ),
        (
            "src/runtime/api/impl/api_error.cc",
            37,
            "COND_RETURN_AND_MSG_OUTER_WITH_PARAM_AND_FUNC_DESC",
            "EE1003",
            "Triggering event waiting failed because value %s for parameter flag is invalid. "
            "Expected value: ACL_EVENT_WAIT_DEFAULT(0) or ACL_EVENT_WAIT_EXTERNAL(1). ErrorCode=EE1003.",
        ),
        # the error manager's report with its inner code
        (
            "runtime/v1/graph/manager/graph_mem_allocator.cc",
            9,
            "REPORT_INNER_ERR_MSG",
            "E19999",
            "Call aclrtMalloc fail, purpose:%s, size:%zu, device_id:%u",
        ),
        (
            "runtime/v1/graph/manager/graph_mem_allocator.cc",
            11,
            "GELOGE",
            "INTERNAL_ERROR",
            "[Malloc][Memory] failed, device_id = %u, size= %s",
        ),
    }


def test_the_runtimes_own_wrappers_are_found_with_their_format_and_level() -> None:
    texts = [t for _, t in rtge.walk(EXCERPTS / "runtime")]
    found = rtge.wrappers(texts)
    # the public wrappers: the format's place in their parameters
    assert found["ERROR_RETURN_MSG_INNER"] == (1, None, None)
    assert found["COND_RETURN_ERROR_MSG_INNER"] == (2, None, None)
    # a wrapper passing its own level parameter on to RT_LOG: the caller's must be RT_LOG_ERROR
    assert rtge.wrappers(["#define LOG_AT(level, format, ...) RT_LOG(level, format, ##__VA_ARGS__)\n"])[
        "LOG_AT"
    ] == (1, None, 0)
    assert (
        rtge.extract(
            'LOG_AT(RT_LOG_INFO, "an information about the device memory");',
            "a.cc",
            found | {"LOG_AT": (1, None, 0)},
        )
        == []
    )
    assert found["COND_RETURN_MSG_"] == (4, None, None)  # RT_LOG_##TYPE##_MSG logs at the error level
    # a macro's body (NULL_PTR_GOTO_MSG_'s stringified message) and RT_LOG_INNER_MSG's own definition
    # are not calls
    assert not [c for c in rtge.import_tree(EXCERPTS / "runtime") if c.path.endswith(".hpp")]


def test_a_comment_another_level_or_a_format_variable_is_not_a_message() -> None:
    text = (
        '// RT_LOG(RT_LOG_ERROR, "commented out check of the device memory %d", x);\n'
        'RT_LOG(RT_LOG_WARNING, "only a warning about the device memory %d", x);\n'
        "GELOGE(ge::FAILED, fmt, args);\n"
        'GELOGE(ret, "the status is a variable here, not a code: %d", ret);\n'
    )
    (c,) = rtge.extract(text, "src/x.cc")
    assert (c.line, c.code) == (4, None)
    # source text is read as it comes: an unterminated literal or unbalanced parentheses end at
    # the text's end, and the call after them is still read
    broken = 'RT_LOG(RT_LOG_ERROR, "unterminated (((\nGELOGE(FAILED, "the next call of the file is read");\n'
    assert [(c.line, c.code) for c in rtge.extract(broken, "src/x.cc")][-1] == (2, "FAILED")


def test_the_shipped_table_has_every_excerpt_message_at_its_place() -> None:
    by_key = {(m.path, m.line): m for m in WHOLE.messages}
    for tree in ("runtime", "ge"):
        for c in rtge.import_tree(EXCERPTS / tree):
            row = by_key[(c.path, FIRST_LINE[c.path] + c.line - 1)]
            assert (row.format, row.call, row.code) == (c.format, c.call, c.code or "")


def test_refresh_diff_names_rows_lacking_changed_and_gone() -> None:
    new = rtge.rows("ge", rtge.import_tree(EXCERPTS / "ge"))
    assert [(r["path"].rsplit("/", 1)[-1], r["line"]) for r in new] == [
        ("caching_allocator.cc", 8),
        ("caching_allocator.cc", 14),
        ("caching_allocator.cc", 19),
        ("graph_mem_allocator.cc", 9),
        ("graph_mem_allocator.cc", 11),
    ]
    old = [
        dict(new[0], line=7),
        dict(new[1], code="FAILED"),
        {**new[3], "format": "gone %s message of the past"},
    ]
    d = rtge.diff(old, new)
    assert [r["format"] for r in d["lacks"]] == [new[3]["format"], new[4]["format"]]
    assert d["changed"] == [
        {"path": new[1]["path"], "format": new[1]["format"], "was": "FAILED", "now": "MEMALLOC_FAILED"}
    ]
    assert [r["format"] for r in d["gone"]] == ["gone %s message of the past"]  # a moved line is no change


def test_the_importer_cli_prints_the_diff_and_writes_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "rtge_messages.yaml"
    head = rtge.shipped_path().read_text(encoding="utf-8").partition("\nrows:\n")[0]
    table.write_text(head + "\nrows:\n", encoding="utf-8")
    monkeypatch.setattr(rtge, "shipped_path", lambda: table)
    assert rtge.main(["--import", str(EXCERPTS / "ge"), "ge"]) == 1  # a diff to apply
    assert capsys.readouterr().out.startswith("# ge: 5 rows from")
    assert rtge.main(["--import", str(EXCERPTS / "ge"), "ge", "--write"]) == 0
    assert rtge.main(["--import", str(EXCERPTS / "ge"), "ge"]) == 0  # nothing left to apply
    assert "0 lacks, 0 changed, 0 gone" in capsys.readouterr().out
    written = rtge.load(table, keep_all=True)
    assert written.total == 5
    assert [p.name for p in tmp_path.iterdir()] == ["rtge_messages.yaml"]  # no temporary file left


# --- log lines as the user reads them -------------------------------------------------------------
def test_a_runtime_line_is_found_with_its_values_filled_in() -> None:
    (m,) = _rtge(
        _plog(
            "RUNTIME", "api_c.cc", 1372, "rtGetPrimaryCtxState", "Invalid device_id=9, valid range is [0,8)."
        )
    )
    assert m.id == "rtge-src-device-id-runtime-api-c-1372"
    assert [c.id for c in m.causes] == ["device-not-visible"]
    assert 'api_c.cc:1372: "Invalid device_id=%d, valid range is [0,%u)."' in m.title
    assert "device_id=9, valid range is [0,8)" in m.evidence[0].lines[0]
    (src,) = m.causes[0].sources
    assert src.url.endswith("/src/runtime/api/api_c.cc#L1372")
    assert "RT_LOG_INNER_MSG" in src.title and "EE9999" in src.title


def test_the_error_managers_report_finds_the_same_message() -> None:
    report = _report(
        "EE9999", "Invalid device_id=9, valid range is [0,8).", "rtGetPrimaryCtxState", "api_c.cc", 1372
    )
    (m,) = _rtge("EE9999: Inner Error!\n" + report + "\n")
    assert m.id == "rtge-src-device-id-runtime-api-c-1372"
    # both forms of one message are one signature
    both = (
        _plog("RUNTIME", "api_c.cc", 1372, "f", "Invalid device_id=9, valid range is [0,8).") + "\n" + report
    )
    assert [x.id for x in _rtge(both)] == [m.id]


@pytest.mark.parametrize(
    ("line", "sid", "cause"),
    [
        (
            _plog(
                "RUNTIME",
                "npu_driver_mem.cc",
                957,
                "DevMemAlloc1GHugePage",
                "this feature is not supported on current version, size=1073741824, type=2, "
                "memory policy=1024, deviceId=0, moduleId=3.",
            ),
            "rtge-src-driver-feature-runtime-npu-driver-mem-957",
            "driver-too-old",
        ),
        (
            _plog(
                "RUNTIME",
                "stream.cc",
                4293,
                "AllocDev",
                "Failed to allocate device memory, stream_id=3, size=4096, retCode=0x7020016",
            ),
            "rtge-src-device-memory-runtime-stream-4293",
            "oom",
        ),
        (
            _plog(
                "GE",
                "caching_allocator.cc",
                307,
                "TryExtendCache",
                " ErrorNo: 4294967295(failed) [Malloc][Memory] failed, "
                "no enough memory for size = 2147483648, device_id = 0",
            ),
            "rtge-src-device-memory-ge-caching-allocator-307",
            "oom",
        ),
        (
            _plog(
                "RUNTIME",
                "api_error.cc",
                2070,
                "rtSetDevice",
                "Device ID is invalid, drv devId=4, retCode=0x7010003",
            ),
            "rtge-src-device-id-runtime-api-error-2070",
            "device-not-visible",
        ),
        (
            _report(
                "EE9999",
                "Cannot find kernel by tilingKey[8589934593].",
                "BinaryGetFunction",
                "runtime.cc",
                5076,
            ),
            "rtge-src-kernel-not-found-runtime-runtime-5077",
            "ops-package-missing-or-wrong",
        ),
        (
            _plog(
                "GE",
                "om_file_helper.cc",
                284,
                "CheckModelSoc",
                " ErrorNo: 1343225857(Parameter invalid.) "
                "Model soc version[Ascend910B1] is not support in this device",
            ),
            "rtge-src-soc-mismatch-ge-om-file-helper-284",
            "chip-unsupported",
        ),
    ],
)
def test_each_rule_gives_its_cause(line: str, sid: str, cause: str) -> None:
    (m,) = _rtge(line + "\n")
    assert m.id == sid
    assert [c.id for c in m.causes] == [cause]
    assert RM is not None
    (rule,) = [r.name for r in RM.rules if sid.startswith(f"rtge-src-{r.name}-")]
    assert f"rule {rule}:" in m.causes[0].why


def test_a_message_no_rule_covers_gives_no_cause_and_is_not_looked_for() -> None:
    wrapper = _report(
        "E19999",
        "Call aclrtMalloc fail, purpose:Memory for caching, size:2147483648, device_id:0",
        "MallocMemory",
        "graph_mem_allocator.cc",
        70,
    )
    (row,) = WHOLE.match("graph_mem_allocator.cc", wrapper)  # the whole table has it ...
    assert (row.line, row.rule, row.causes) == (70, "", ())
    assert RM is not None and RM.match("graph_mem_allocator.cc", wrapper) == []  # ... the engine's not
    assert _rtge(wrapper + "\n") == []


def test_the_runtimes_detail_ranks_above_the_generic_ge_wrapper() -> None:
    # GE reports that its allocator could not get memory ("Call aclrtMalloc fail", "no enough memory
    # for size"); the runtime's line before it says why: the driver lacks the 1G huge-page feature
    text = "\n".join(
        [
            _plog(
                "RUNTIME",
                "npu_driver_mem.cc",
                957,
                "DevMemAlloc1GHugePage",
                "this feature is not supported on current version, size=1073741824, type=2, "
                "memory policy=1024, deviceId=0, moduleId=3.",
            ),
            _report(
                "E19999",
                "Call aclrtMalloc fail, purpose:Memory for caching, size:1073741824, device_id:0",
                "MallocMemory",
                "graph_mem_allocator.cc",
                70,
            ),
            _plog(
                "GE",
                "caching_allocator.cc",
                307,
                "TryExtendCache",
                " ErrorNo: 4294967295(failed) [Malloc][Memory] failed, "
                "no enough memory for size = 1073741824, device_id = 0",
            ),
        ]
    )
    e = _explain(text + "\n")
    assert [m.id for m in e.matches if m.id.startswith("rtge-src-")] == [
        "rtge-src-driver-feature-runtime-npu-driver-mem-957",
        "rtge-src-device-memory-ge-caching-allocator-307",
    ]
    assert e.causes[0].id == "driver-too-old"
    assert [c.id for c in e.causes].index("oom") > 0


def test_a_known_files_line_is_not_guessed_from_another_file() -> None:
    msg = "Device ID is invalid, drv devId=4, retCode=0x7010003"
    # api_c.cc is in the table, this message is not among its rows: not guessed from api_error.cc
    assert _rtge(_plog("RUNTIME", "api_c.cc", 1, "f", msg) + "\n") == []
    # a file the table lacks (renamed or moved between releases): any row may match
    (m,) = _rtge(_plog("RUNTIME", "api_error_old.cc", 1, "f", msg) + "\n")
    assert [c.id for c in m.causes] == ["device-not-visible"]


def test_an_info_or_warning_line_is_not_looked_up() -> None:
    line = _plog("RUNTIME", "api_c.cc", 1372, "f", "Invalid device_id=9, valid range is [0,8).")
    assert _rtge(line.replace("[ERROR]", "[WARNING]") + "\n") == []
    assert _rtge(line.replace("[ERROR]", "[INFO]") + "\n") == []


def test_hostile_inputs_are_read_once_and_bounded() -> None:
    # a long line of near-misses: each literal searched once per row of the line's file
    near = "Invalid device_id=9, valid range is " * 5_000
    assert _rtge(_plog("RUNTIME", "api_c.cc", 1372, "f", near) + "\n") == []
    # a report marker with no message before it, and one after a 100,000-character message
    assert _rtge("[FUNC:f][FILE:api_c.cc][LINE:1]\n") == []
    long = "x" * 100_000 + "Invalid device_id=9, valid range is [0,8).[FUNC:f][FILE:api_c.cc][LINE:1]\n"
    assert [m.id for m in _rtge(long)] == ["rtge-src-device-id-runtime-api-c-1372"]
    # brackets, parentheses and markers nested in the message, file names that are not file names
    odd = _plog("RUNTIME", "../../etc/passwd", 1, "f", "Invalid device_id=9, valid range is [0,8).")
    assert _rtge(odd + "\n") == []
    nested = "[ERROR] RUNTIME([ERROR] RUNTIME(1,x):[a.cc:1] [FUNC:[FILE:][FILE:api_c.cc]\n"
    assert _rtge(nested) == []
    # many distinct lines: the scan keeps at most MAX_VALUES per extractor
    many = "".join(
        _plog(
            "RUNTIME", "stream.cc", 4293, "f", f"Failed to allocate device memory, stream_id={i}, size=4096"
        )
        + "\n"
        for i in range(MAX_VALUES * 3)
    )
    s = Scanner(TABLE, total_hint=len(many))
    s.feed(many.encode())
    s.end_input()
    assert len(s.result().values["rtge-runtime"]) <= MAX_VALUES
    (m,) = [x for x in judge.explain(TABLE, s.result()).matches if x.id.startswith("rtge-src-")]
    assert m.evidence[0].count >= 1


# --- the runtime's reason for a failed call ---------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "sid", "cause"),
    [
        # today's wording (error_message_manage.cc: "%s execution failed, reason=%s")
        (
            "rtSetDevice execution failed, reason=device retain error",
            "rt-reason-0x07010006",
            "device-not-visible",
        ),
        # an older release's, in brackets, inside an error-manager report
        (
            "EE9999: [PID: 7] 2024-01-01-00:00:00.000.000 rtMalloc execute failed, "
            "reason=[driver error:out of memory]"
            "[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
            "rt-reason-0x07020016",
            "oom",
        ),
    ],
)
def test_the_runtimes_reason_names_the_code_whose_row_decides(line: str, sid: str, cause: str) -> None:
    (m,) = [x for x in _explain(line + "\n").matches if x.id.startswith("rt-reason-")]
    assert m.id == sid
    assert [c.id for c in m.causes] == [cause]
    inner = K.inner_codes[int(sid.rsplit("-", 1)[1], 16)] if K.inner_codes else None
    assert inner is not None and inner.meaning in m.title and inner.acl in m.causes[0].why
    # with the inner code's own hex value in the log, that value's signature alone says it
    both = _explain(f"{line}, retCode={inner.code}\n")
    assert [x.id for x in both.matches if x.id.startswith(("rt-reason-", "rt-inner-"))] == [
        f"rt-inner-{inner.code.lower()}"
    ]


def test_an_unknown_reason_names_nothing() -> None:
    text = "rtSetDevice execution failed, reason=a reason no table of the runtime has\n"
    assert not [x for x in _explain(text).matches if x.id.startswith("rt-reason-")]
    # every reason the table has names one ACL code (a shared reason with two would decide nothing)
    by: dict[str, set[str]] = {}
    for inner in (K.inner_codes or {}).values():
        by.setdefault(inner.meaning.lower(), set()).add(inner.acl)
    assert by and all(len(v) == 1 for v in by.values())


# --- the runtime's error-code reports (RT_LOG_OUTER_MSG_IMPL) ------------------------------------
def test_the_error_code_table_and_its_macros_are_read_from_the_real_source() -> None:
    texts = [t for _, t in rtge.walk(EXCERPTS / "runtime")]
    templates = rtge.code_templates(texts)
    # every code of RUNTIME_ERROR_CODE_TABLE logged at the error level; WE0001 (DLOG_WARN) is not
    assert len(templates) == 25 and "WE0001" not in templates
    assert templates["EE1023"] == (2, "%s failed. Reason: %s. ErrorCode=EE1023.")
    assert templates["EE1003"] == (
        4,
        "%s failed because value %s for parameter %s is invalid. Expected value: %s. ErrorCode=EE1003.",
    )
    macros = rtge.outer_macros(texts)
    # the wrappers are read through to RT_LOG_OUTER_MSG_IMPL: the code and each value by its place
    assert macros["RT_LOG_OUTER_MSG_WITH_FUNC"] == (("arg", 0), (("lit", "__func__"), ("rest", 1)))
    assert macros["NULL_PTR_RETURN_MSG_OUTER_WITH_FUNC_DESC"] == (
        ("lit", "ErrorCode::EE1004"),
        (("arg", 2), ("str", 0)),
    )
    assert macros["COND_RETURN_AND_MSG_OUTER"] == (("arg", 2), (("rest", 3),))
    # a call whose number of values is not the code's logs only a warning (PrintErrMsgToLog)
    call = 'RT_LOG_OUTER_MSG_IMPL(ErrorCode::EE1023, "Alloc Stream resource", "Too many", "extra");\n'
    assert rtge.extract_outer(call, "a.cc", macros, templates) == []
    # a call inside another macro's body (continued onto its last line) is its callers'
    body = (
        "#define ALLOC_FAILED() \\\n"
        '    RT_LOG_OUTER_MSG_IMPL(ErrorCode::EE1023, "Alloc", "Too many streams");\n'
    )
    assert rtge.extract_outer(body, "a.hpp", macros, templates) == []


def test_the_refresh_diff_is_empty_at_the_imported_commit() -> None:
    # the excerpts' rows, read now, are the shipped table's rows of those lines
    for tree, key in (("runtime", "runtime"), ("ge", "ge")):
        new = rtge.rows(key, rtge.import_tree(EXCERPTS / tree))
        new = [dict(r, line=FIRST_LINE[r["path"]] + r["line"] - 1) for r in new]
        spans = {(r["path"], r["line"]) for r in new}
        old = [
            {
                "repo": key,
                "path": m.path,
                "line": m.line,
                "call": m.call,
                "code": m.code or None,
                "format": m.format,
            }
            for m in WHOLE.messages
            if (m.path, m.line) in spans
        ]
        old = [{k: v for k, v in r.items() if v is not None} for r in old]
        assert rtge.diff(old, new) == {"lacks": [], "changed": [], "gone": []}
        assert len(new) == len(old)


@pytest.mark.parametrize(
    ("line", "sid", "cause"),
    [
        # EE1006's own reason: a flag the program passed, not a chip or driver limit
        (
            _plog(
                "RUNTIME",
                "api_error.cc",
                1375,
                "StreamCreate",
                "Checking stream flags failed. Parameter flags value 2048 is not supported. Reason: The flag "
                "RT_STREAM_CP_PROCESS_USE(0x800U) must be used together with RT_STREAM_ACSQ_LOCK(0x2000U)."
                "ErrorCode=EE1006.",
            ),
            "rtge-src-argument-not-supported-runtime-api-error-1375",
            "not-a-version-problem",
        ),
        # EE1016's own reason: a call during graph capture
        (
            _plog(
                "RUNTIME",
                "api_error.cc",
                1390,
                "StreamDestroy",
                "Stream destruction failed. Reason: Stream (stream_id=3) during the capture stage is not "
                "supported. ErrorCode=EE1016.",
            ),
            "rtge-src-call-not-allowed-in-state-runtime-api-error-1390",
            "not-a-version-problem",
        ),
        # EE1006's own reason: the SoC lacks the feature
        (
            _plog(
                "RUNTIME",
                "api_error.cc",
                1360,
                "StreamCreate",
                "Checking stream flags failed. Parameter flags value 512 is not supported. Reason: The "
                "current SoC supports only streams with a normal number of tasks and does not support huge "
                "streams."
                "ErrorCode=EE1006.",
            ),
            "rtge-src-soc-lacks-feature-runtime-api-error-1360",
            "chip-unsupported",
        ),
    ],
)
def test_a_reviewed_reason_supersedes_its_codes_generic_row(line: str, sid: str, cause: str) -> None:
    e = _explain(line + "\n")
    ids = [m.id for m in e.matches]
    assert sid in ids
    (m,) = [m for m in e.matches if m.id == sid]
    assert [c.id for c in m.causes] == [cause]
    # EE1006/EE1016's title (Not_Supported) gives chip-unsupported and driver-too-old: superseded
    assert not [i for i in ids if i.startswith("code-EE")]
    assert e.causes[0].id == cause


def test_a_code_report_no_rule_covers_is_its_codes_occurrence() -> None:
    # the line cut before "ErrorCode=EE1003": the runtime's report of api_error.cc:1371 is still
    # EE1003's, whose row (Invalid_Argument) decides
    line = _plog(
        "RUNTIME",
        "api_error.cc",
        1371,
        "StreamCreate",
        "Checking stream flags failed because value 99999 for parameter flags is invalid. "
        "Expected value: [0, 2047",
    )
    assert "EE1003" not in line
    e = _explain(line + "\n")
    (m,) = e.matches
    assert m.id == "code-EE1003" and [c.id for c in m.causes] == ["not-a-version-problem"]
    assert "api_error.cc:1371" in m.evidence[0].lines[0]
    # a code whose row names no cause (EE1023 Resource_Error) adds nothing by itself
    assert RM is not None
    stream = "Alloc Stream resource failed. Reason: Too many streams are created. ErrorCode=EE1023."
    (row,) = {m.code for m in RM.best("stream.cc", stream)}
    assert row == "EE1023"
    assert not [
        x
        for x in _explain(_plog("RUNTIME", "stream.cc", 732, "f", stream) + "\n").matches
        if x.id.startswith("code-")
    ]
