"""The aclnn operators' own parameter-check messages, imported from their source
(matrices/explain/aclnn_messages.yaml).

The importer reads real source text (tests/data/explain_opapi/: verbatim excerpts of hicann/ops-nn
and hicann/ops-math at the table's commits, at their repository paths; EXCERPTS.md names each);
the table is whole (every OP_LOGE(ACLNN_ERR_…) a log can tell apart, of the four repositories);
log lines as the user reads them (``AclNN_Parameter_Error(EZ1001): …``, ``detail:EZ1001: …``) are
matched to the check that logged them and to the cause of the reviewed rule covering it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cannenv.explain import judge, opapi, signatures, tables
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
OM = opapi.OpMessages(K.op_messages) if K.op_messages is not None else None
EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "explain_opapi"
# the first line of each excerpt's range in the vendor's file (EXCERPTS.md)
FIRST_LINE = {
    "common/stub/op_api/aclnn_kernels/common/op_error_check.h": 143,
    "activation/sigmoid/op_api/aclnn_sigmoid.cpp": 73,
    "activation/celu_v2/op_api/celu_v2.cpp": 36,
    "math/cast/op_api/aclnn_cast.cpp": 94,
}


def _aclnn(text: str) -> list[judge.Match]:
    return [m for m in _explain(text).matches if m.id.startswith("aclnn-src-")]


# --- the table ----------------------------------------------------------------------------------
def test_table_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "aclnn_messages.schema.json").read_text())
    assert shipped == opapi.json_schema(), (
        "regenerate: python -m cannenv.explain.opapi --schema > matrices/explain/aclnn_messages.schema.json"
    )


def test_the_table_is_whole_and_each_row_has_its_source_url() -> None:
    whole = opapi.load(opapi.shipped_path(), keep_all=True)
    assert {m.repo for m in whole.messages} == {
        "hicann/opbase",
        "hicann/ops-nn",
        "hicann/ops-math",
        "hicann/ops-transformer",
    }
    assert whole.total == len(whole.messages) > 3_000  # every distinct check a log can tell apart
    assert OM is not None and OM.total == whole.total
    assert {m.source_id for m in OM.messages} == {m.source_id for m in whole.messages if m.causes}
    for m in OM.messages:  # each row is its own source, resolved by id
        assert OM.source(m.source_id) == (m.source_title, m.url)
    for m in whole.messages:
        assert re.fullmatch(r"https://github\.com/hicann/[\w-]+/blob/[0-9a-f]{40}/\S+#L[0-9]+", m.url)
        assert m.parts and sum(len(p) for p in m.parts) >= opapi.MIN_TEXT
        if m.causes:
            assert m.rule and m.reason and m.code.startswith("ACLNN_ERR_PARAM_")
        else:  # the operators' internal errors point to nothing
            assert not m.code.startswith("ACLNN_ERR_PARAM_")
    assert 0 < len(OM.messages) < whole.total


def test_the_cached_table_is_keyed_by_this_file_and_holds_plain_tuples() -> None:
    from cannenv.explain import knowledge

    # signatures.shipped() names the file without importing opapi (a log without EZ1001 never does)
    assert knowledge.shipped_path().with_name("aclnn_messages.yaml") == opapi.shipped_path()
    assert K.op_messages is not None
    rows, repos, rules, total = K.op_messages
    assert all(type(r) is tuple for r in (*rows, *repos, *rules)) and total == len(rows) + 984


def test_every_rule_cause_is_a_cause_of_the_signature_file() -> None:
    assert OM is not None
    assert {c for m in OM.messages for c in m.causes} == {"not-a-version-problem", "chip-unsupported"}
    assert {c for m in OM.messages for c in m.causes} <= set(TABLE.causes)


def test_source_rows_rank_below_every_hand_written_signature() -> None:
    # helper processes reporting their parent gone at exit are no error: they rank below these too
    noise = ("worker-parent-exited", "pip-scripts-not-on-path")  # no errors: helpers at exit, pip's warning
    hand = [s.priority for s in TABLE.signatures if not s.derived and s.id not in noise]
    assert min(hand) > signatures.SOURCE_PRIORITY


# --- the importer on real source text -------------------------------------------------------------
def test_import_reads_the_real_excerpts() -> None:
    calls = opapi.import_tree(EXCERPTS / "ops-nn") + opapi.import_tree(EXCERPTS / "ops-math")
    got = {(c.path, c.line, c.code, c.format) for c in calls}
    assert got == {
        # a check macro's body: the message is the macro's own
        (
            "common/stub/op_api/aclnn_kernels/common/op_error_check.h",
            3,
            "ACLNN_ERR_PARAM_INVALID",
            "Tensor %s not implemented for %s, should be in dtype support list %s.",
        ),
        (
            "common/stub/op_api/aclnn_kernels/common/op_error_check.h",
            10,
            "ACLNN_ERR_PARAM_INVALID",
            "Tensor %s expected dtype is %s but found %s.",
        ),
        (
            "activation/sigmoid/op_api/aclnn_sigmoid.cpp",
            10,
            "ACLNN_ERR_PARAM_INVALID",
            "Self dtype %s is unsupported by the current SOC version [%s].",
        ),
        ("activation/celu_v2/op_api/celu_v2.cpp", 6, "ACLNN_ERR_INNER_NULLPTR", "alloc out tensor failed."),
        (
            "activation/celu_v2/op_api/celu_v2.cpp",
            13,
            "ACLNN_ERR_INNER_NULLPTR",
            "CeluV2AiCore ADD_TO_LAUNCHER_LIST_AICORE failed.",
        ),
        # the errno on its own line, the format on the next
        (
            "math/cast/op_api/aclnn_cast.cpp",
            6,
            "ACLNN_ERR_PARAM_INVALID",
            "The param dtype not implemented for %s, should be in dtype support list %s.",
        ),
    }


def test_the_shipped_table_has_every_excerpt_message_at_its_place() -> None:
    whole = opapi.load(opapi.shipped_path(), keep_all=True)
    by_format = {(m.format, m.code): m for m in whole.messages}
    for tree in ("ops-nn", "ops-math"):
        for c in opapi.import_tree(EXCERPTS / tree):
            assert opapi.parts_of(c.format)
            row = by_format[(c.format, c.code)]
            assert row.sites >= 1
            if row.repo == f"hicann/{tree}" and row.path == c.path:
                assert row.line == FIRST_LINE[c.path] + c.line - 1


def test_refresh_diff_names_messages_lacking_changed_and_gone() -> None:
    new = opapi.sites("ops-nn", opapi.import_tree(EXCERPTS / "ops-nn"))
    assert [(r["path"].rsplit("/", 1)[-1], r["line"]) for r in new] == [
        ("celu_v2.cpp", 6),
        ("celu_v2.cpp", 13),
        ("aclnn_sigmoid.cpp", 10),
        ("op_error_check.h", 3),
        ("op_error_check.h", 10),
    ]
    old = [dict(new[0], sites=2), dict(new[1], line=7), {**new[2], "format": "gone %s message of the past"}]
    d = opapi.diff(old, new)
    assert [r["format"] for r in d["lacks"]] == [r["format"] for r in new[2:]]
    assert d["changed"] == [{"format": new[0]["format"], "code": new[0]["code"], "was": 2, "now": 1}]
    assert [r["format"] for r in d["gone"]] == ["gone %s message of the past"]  # a moved line is no change


def test_a_commented_call_or_another_macros_call_is_not_a_message() -> None:
    text = (
        '// OP_LOGE(ACLNN_ERR_PARAM_INVALID, "commented out check of the input tensor %s");\n'
        'OP_LOGE(context->GetNodeName(), "tiling failed for the input tensor %s", name);\n'
        "OP_LOGE(ACLNN_ERR_PARAM_INVALID, fmt, args);\n"
    )
    assert opapi.extract(text, "op_api/x.cpp") == []


# --- log lines as the user reads them -------------------------------------------------------------
def test_a_dtype_refusal_names_the_check_macro_and_the_callers_input() -> None:
    (c,) = _aclnn(
        "[PID: 1920919] 2026-06-23-03:49:48.970.240 AclNN_Parameter_Error(EZ1001): Tensor self not "
        "implemented for DT_DOUBLE, should be in dtype support list [DT_FLOAT,DT_FLOAT16,DT_BFLOAT16,]."
    )
    assert c.id.startswith("aclnn-src-param-check-op-error-check-")
    assert [x.id for x in c.causes] == ["not-a-version-problem"]
    assert "Tensor %s not implemented for %s" in c.title


def test_a_check_that_names_the_soc_points_to_the_chip() -> None:
    (c,) = _aclnn(
        "RuntimeError: call aclnnSigmoid failed, detail:EZ1001: [PID: 4012] 2026-01-02-10:11:12.123.456 "
        "Self dtype DT_BF16 is unsupported by the current SOC version [Ascend310P3]."
    )
    assert c.id == "aclnn-src-soc-unsupported-aclnn-sigmoid-82"
    assert [x.id for x in c.causes] == ["chip-unsupported"]
    (src,) = c.causes[0].sources
    assert src.url.endswith("/activation/sigmoid/op_api/aclnn_sigmoid.cpp#L82")


def test_the_most_specific_message_wins() -> None:
    (c,) = _aclnn(
        "detail:EZ1001: 2024-06-10-00:01:59.325.061 The param dtype not implemented for DT_BF16, "
        "should be in dtype support list [DT_FLOAT16,DT_FLOAT,]."
    )
    assert "The param dtype not implemented for %s" in c.title


def test_an_inner_error_or_an_unknown_message_points_to_nothing() -> None:
    assert _aclnn("EZ9999: Inner Error! CeluV2AiCore ADD_TO_LAUNCHER_LIST_AICORE failed.") == []
    assert _aclnn("AclNN_Parameter_Error(EZ1001): a message no operator of the table logs at all") == []


def test_hostile_long_lines_are_read_once() -> None:
    # a long line of near-misses: each part found once from where the last one ended (no backtracking)
    line = "EZ1001: " + "Tensor x not implemented for " * 20_000 + "\n"
    assert OM is not None and OM.match(line[8:]) is None
    assert _aclnn(line * 3) == []
    rx = next(re.compile(e.regex) for e in K.extractors if e.kind == "aclnn-log")
    assert rx.search("(EZ1001): " + "a" * 100_000) is not None
