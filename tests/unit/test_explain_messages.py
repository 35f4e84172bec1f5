"""Messages read out of the vendors' sources (issue 29): torch_npu's checks that carry an ErrCode,
PyTorch's dispatch message, the device plugins' errors — read from real source lines, matched on
the corpus's real excerpts, each cause through the reviewed mapping."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from cannenv.errors import InputError
from cannenv.explain import knowledge, messages, signatures, tables
from cannenv.explain.rules import TOOL_FAMILIES
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
ERRORS = Path(__file__).resolve().parents[1] / "data" / "errors"

# Real lines of Ascend/pytorch torch_npu/csrc/distributed/ProcessGroupHCCL.cpp at 9e73e708 (L136-L188,
# a few long lines wrapped)
PROCESS_GROUP_HCCL = r"""
HcclReduceOp getHcclReduceOp(const c10d::ReduceOp reduceOp, at::Tensor& input) {
  if (reduceOp == c10d::ReduceOp::PREMUL_SUM) {
    TORCH_CHECK(
        input.scalar_type() == at::kHalf || input.scalar_type() == at::kFloat ||
            input.scalar_type() == at::kBFloat16 || input.scalar_type() == at::kDouble,
        "PreMulSum Data type must be half, float, bfloat16 or double",
        DIST_ERROR(ErrCode::TYPE));
    return HCCL_REDUCE_SUM;
  }
  if (unsupportedOp.find(reduceOp) != unsupportedOp.end()) {
    TORCH_CHECK(
        false, "Cannot use ReduceOp." + unsupportedOp[reduceOp] + " with HCCL",
        DIST_ERROR(ErrCode::NOT_SUPPORT));
  } else if (hcclOp.find(reduceOp) == hcclOp.end()) {
    TORCH_CHECK(false, "Unhandled ReduceOp", DIST_ERROR(ErrCode::NOT_FOUND));
  }
  return hcclOp[reduceOp];
}

// AllGather & Broadcast support all data type, no need do more check.
// On Ascend950 (Atlas A5), HCCL additionally supports uint64/fp64.
void checkSupportedDataType(HcclDataType type, std::string functionName) {
  bool supported = (supportedDataTypes.count(type) != 0) ||
      (is_atlas_a5 && a5ExtraDataTypes.count(type) != 0);
  TORCH_CHECK(
      supported,
      "HCCL " + functionName + ": Unsupported data type ",
      getHcclDataTypeSerialString(type),
      DIST_ERROR(ErrCode::NOT_SUPPORT));
}
"""

# Real lines of torch_npu/csrc/core/npu/interface/HcclInterface.cpp and HCCLUtils.cpp at 9e73e708
HCCL_INTERFACE = r"""
    TORCH_CHECK(func, "Failed to find function ", "HcclCommResume,"
                " maybe you cann version is too low, please upgrade it", DIST_ERROR(ErrCode::NOT_FOUND));
    throw std::runtime_error(
        "Unsupported data type for HCCL process group" + DIST_ERROR(ErrCode::NOT_SUPPORT));
    ASCEND_LOGE("aclrtSetDevice failed, ret = %d, device = %d", ret, device); // no ErrCode: not a row
"""

# Real lines of Ascend/pytorch torch_npu/npu/utils.py at 9e73e708 (L150-L155, L365-L368; one wrapped)
NPU_UTILS_PY = """
def _get_device_index(device, optional=False, allow_cpu=False):
    if isinstance(device, torch.device):
        if allow_cpu:
            if device.type not in ['npu', 'cpu']:
                raise ValueError('Expected a npu or cpu device, but got: {}'.format(device) +
                                 pta_error(ErrCode.VALUE))
        elif device.type != 'npu':
            raise ValueError('Expected a npu device, but got: {}'.format(device) + pta_error(ErrCode.VALUE))


def get_npu_overflow_flag():
    if is_support_inf_nan():
        raise RuntimeError("Unsupported api when soc_version >= Ascend910B1, please use npu_check_overflow" +
                           pta_error(ErrCode.NOT_SUPPORT))
"""

# A real line of Project-HAMi/ascend-device-plugin internal/server/device_share.go at ed35e1c4 (L69)
DEVICE_SHARE_GO = """
	return "", fmt.Errorf("npu-smi not found in %v or PATH", npuSmiCandidates)
"""


def _row(**kw: Any) -> dict[str, Any]:
    row = {
        "id": "tnpu-0123456789",
        "family": "torch-npu-check",
        "text": ["a message long enough to identify"],
        "code": "ERR02007",
        "at": "torch_npu/csrc/x.cpp#L1",
        "source": "torch-npu-csrc",
    }
    row.update(kw)
    return row


# --- reading the sources ------------------------------------------------------------------------
def test_torch_npu_checks_are_read_with_their_err_code_and_split_at_values() -> None:
    found = {
        messages.err_code(sub, err): messages.fragments(p)
        for _, sub, err, p in messages.cpp_messages(PROCESS_GROUP_HCCL)
    }
    # the condition's own literals are not the message; a streamed value splits it
    assert found["ERR02002"] == ["PreMulSum Data type must be half, float, bfloat16 or double"]
    assert found["ERR02007"] == ["HCCL", ": Unsupported data type"]
    assert found["ERR02008"] == ["Unhandled ReduceOp"]
    lines = {
        messages.err_code(sub, err): line for line, sub, err, _ in messages.cpp_messages(PROCESS_GROUP_HCCL)
    }
    assert PROCESS_GROUP_HCCL.splitlines()[lines["ERR02007"] - 1].strip() == "TORCH_CHECK("


def test_adjacent_literals_join_a_throw_counts_and_a_log_without_err_code_does_not() -> None:
    found = [
        (messages.err_code(s, e), messages.fragments(p))
        for _, s, e, p in messages.cpp_messages(HCCL_INTERFACE)
    ]
    assert found == [
        (
            "ERR02008",
            ["Failed to find function HcclCommResume, maybe you cann version is too low, please upgrade it"],
        ),
        ("ERR02007", ["Unsupported data type for HCCL process group"]),
    ]


def test_torch_npus_python_modules_raise_with_err_codes_too() -> None:
    found = [
        (messages.err_code(s, e), messages.fragments(p)) for _, s, e, p in messages.py_messages(NPU_UTILS_PY)
    ]
    assert sorted(found) == [
        ("ERR00003", ["Expected a npu device, but got:"]),
        ("ERR00003", ["Expected a npu or cpu device, but got:"]),
        ("ERR00007", ["Unsupported api when soc_version >= Ascend910B1, please use npu_check_overflow"]),
    ]
    ex = _explain(
        "RuntimeError: Unsupported api when soc_version >= Ascend910B1, please use npu_check_overflow"
    )
    assert ex.causes[0].id == "chip-unsupported"
    assert ex.causes[0].sources[0].url.endswith("torch_npu/npu/utils.py#L367")


def test_placeholders_and_line_breaks_split_a_message() -> None:
    assert messages.fragments(["npu-smi not found in %v or PATH"]) == ["npu-smi not found in", "or PATH"]
    assert messages.fragments(["short\nthe second line is the longest one: %s here"]) == [
        "the second line is the longest one:",
        "here",
    ]
    assert [messages.fragments(p) for _, p in messages.go_messages(DEVICE_SHARE_GO)] == [
        ["npu-smi not found in", "or PATH"]
    ]


@pytest.mark.parametrize(
    ("frags", "ok"),
    [
        (["Invalid rank "], False),
        (["Unhandled ReduceOp"], False),
        (["HCCL", ": Unsupported data type"], True),
    ],
)
def test_only_a_distinctive_fragment_makes_a_row(frags: list[str], ok: bool) -> None:
    assert messages.distinctive(frags) is ok


def test_a_row_matches_its_longest_fragment_with_its_neighbour_in_linear_time() -> None:
    anchor, rx = messages.pattern(["HCCL", ": Unsupported data type"])
    assert anchor == ": Unsupported data type"
    assert re.search(rx, "RuntimeError: HCCL AllReduce & Reduce: Unsupported data type at::kByte/at::kBool")
    # torch_npu's sentence for an ACL code is another message
    assert not re.search(rx, "[Error]: Unsupported data type.")
    assert signatures.re2_subset_problem(rx) is None


def test_the_importer_reads_a_checkout_and_prints_what_a_refresh_changes(tmp_path: Path) -> None:
    src = tmp_path / "torch_npu" / "csrc" / "distributed"
    src.mkdir(parents=True)
    (src / "ProcessGroupHCCL.cpp").write_text(PROCESS_GROUP_HCCL)
    rows = messages.import_torch_npu(tmp_path, source="torch-npu-csrc")
    assert [(r["code"], r["text"]) for r in rows] == [
        ("ERR02002", ["PreMulSum Data type must be half, float, bfloat16 or double"]),
        ("ERR02007", ["Cannot use ReduceOp.", "with HCCL"]),
        ("ERR02007", ["HCCL", ": Unsupported data type"]),
    ]
    shipped = [
        r for r in K.source_messages if r.code == "ERR02007" and r.text == ("HCCL", ": Unsupported data type")
    ]
    assert len(shipped) == 1 and shipped[0].id == rows[2]["id"]  # ids stable across line moves
    diff = messages.refresh_diff(
        [{"id": rows[2]["id"], "at": "elsewhere#L1"}, {"id": "tnpu-gone000000", "at": "x#L1"}], rows
    )
    assert [r["id"] for r in diff["added"]] == [rows[0]["id"], rows[1]["id"]]
    assert diff["removed"] == ["tnpu-gone000000"]
    assert diff["moved"] == {rows[2]["id"]: rows[2]["at"]}


# --- the shipped rows -----------------------------------------------------------------------------
def test_every_message_cites_its_file_and_line_at_a_commit() -> None:
    assert len(K.source_messages) > 900
    families = {m.family for m in K.source_messages}
    # and the Ascend tools' (tests/unit/test_explain_toolmsgs.py)
    assert families == {"torch-npu-check", "pytorch-dispatch", "device-plugin"} | TOOL_FAMILIES
    for m in K.source_messages:
        _title, url = K.message_source(m.source) or ("", "")
        assert re.fullmatch(
            r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/[^#\s]+#L[0-9]+(-L[0-9]+)?", url
        ), url
        assert url.endswith(m.at)


def test_torch_npu_messages_take_their_err_codes_causes_unless_a_reviewed_rule_fits() -> None:
    codes = {c.code: c for c in K.codes}
    by_text = {" ".join(m.text): m for m in K.source_messages}
    hccl = by_text["HCCL : Unsupported data type"]
    assert hccl.causes == ("chip-unsupported", "not-a-version-problem")
    assert "Ascend950" in hccl.reason
    resume = by_text[
        "Failed to find function HcclCommResume, maybe you cann version is too low, please upgrade it"
    ]
    assert resume.causes[0] == "torch_npu-cann-mismatch"
    premul = by_text["PreMulSum Data type must be half, float, bfloat16 or double"]
    assert premul.causes == codes["ERR02002"].causes == ("not-a-version-problem",)
    unruled = [
        m
        for m in K.source_messages
        if m.family == "torch-npu-check" and m.code == "ERR00005" and m.text != ("No NPUs are available",)
    ]
    assert unruled and all(m.causes == () for m in unruled)  # PTA_INTERNAL says nothing alone


def test_a_message_only_an_older_release_prints_is_cited_at_that_release() -> None:
    # torch_npu 2.1 raised it as ERR00008 (PTA), master as another submodule's code: two rows
    rows = [m for m in K.source_messages if m.text == ("Failed to find function aclrtSetOpWaitTimeout",)]
    old = [
        m
        for m in rows
        if "/431df3706bda28c9e74d751b9e1f067c70b44306/" in (K.message_source(m.source) or ("", ""))[1]
    ]
    assert [m.code for m in old] == ["ERR00008"]
    assert len(rows) == 2 and all(m.causes[0] == "torch_npu-cann-mismatch" for m in rows)
    ex = _explain("RuntimeError: Failed to find function aclrtSetOpWaitTimeout[ERROR] 2024-05-01 ERR00008\n")
    assert ex.causes[0].id == "torch_npu-cann-mismatch"
    # the same message of several releases is one row, cited at the newest source that has it
    assert len({m.id for m in K.source_messages}) == len(K.source_messages)


def test_no_npu_available_is_a_device_the_process_does_not_see() -> None:
    rows = [m for m in K.source_messages if m.text == ("No NPUs are available",)]
    assert {m.code for m in rows} == {"ERR00001", "ERR00005", "ERR00009"}
    assert all(m.causes[0] == "device-not-visible" for m in rows)


def test_a_message_without_causes_is_not_looked_for() -> None:
    keys = {p.key for p in TABLE.patterns}
    for m in K.source_messages:
        assert (f"extract:msg:{m.id}" in keys) is bool(m.causes)


def test_a_row_that_is_not_distinctive_or_lacks_its_code_is_refused() -> None:
    from cannenv.explain.models import SourceMessageModel

    SourceMessageModel.model_validate(_row())
    for bad in (_row(text=["Invalid rank"]), _row(code=None), _row(family="device-plugin")):
        with pytest.raises(ValueError):
            SourceMessageModel.model_validate(bad)


def test_a_message_with_an_unknown_code_or_source_is_refused() -> None:
    import yaml

    raw = yaml.safe_load(knowledge.shipped_path().read_text())
    raw["source_messages"] = [_row(code="ERR02099")]
    with pytest.raises(InputError, match="unknown code"):
        knowledge.parse_knowledge(raw, source="test")
    raw["source_messages"] = [_row(source="nowhere")]
    with pytest.raises(InputError, match="unknown source"):
        knowledge.parse_knowledge(raw, source="test")


# --- on the corpus ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "cause", "family"),
    [
        ("wsnote-hccl-allreduce-uint8-unsupported.txt", "chip-unsupported", "torch-npu-check"),
        ("wsnote-lerp-kernel-half.txt", "not-a-version-problem", "pytorch-dispatch"),
        ("adp-103-npu-smi-not-found-device-share.txt", "device-not-visible", "device-plugin"),
    ],
)
def test_a_message_no_rule_knew_is_explained_from_the_source_that_prints_it(
    name: str, cause: str, family: str
) -> None:
    ex = _explain((ERRORS / "heldout2" / name).read_text())
    assert ex.causes[0].id == cause
    assert ex.causes[0].signature.startswith(family)
    assert all(s.url.startswith("https://github.com/") for s in ex.causes[0].sources)


def test_the_device_plugins_own_words_name_a_device_another_container_holds() -> None:
    # the warning Ascend's duplicate-mount detector logs (mind-cluster pkg/duplicatedetector/manager.go:181,
    # hwlog.RunLog.Warnf with the device id and the containers filled in)
    text = (
        "[WARN]     2026/08/20 10:01:02.123 1 duplicatedetector/manager.go:181 detected duplicate NPU device "
        "mount: device /dev/davinci3 is mounted by multiple containers: ContainerID=4f2a, Pod=ai/job-a; "
        "ContainerID=9c1d, Pod=ai/job-b"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "device-busy"
    assert "Ascend/mind-cluster/blob/22bb3d987bc0208c3eb7395e222b661276133c58" in ex.causes[0].sources[0].url


def test_pytorchs_dispatch_message_ranks_below_torch_npus_own() -> None:
    # the operator ran on the NPU (torch_npu's collective check) and PyTorch's message is beside it
    text = (
        "RuntimeError: \"lerp_kernel_scalar\" not implemented for 'Half'\n"
        "RuntimeError: HCCL AllReduce & Reduce: Unsupported data type at::kByte/at::kBool\n"
    )
    ex = _explain(text)
    assert [(c.id, c.signature.split("-")[0]) for c in ex.causes] == [
        ("chip-unsupported", "torch"),
        ("not-a-version-problem", "torch"),
    ]
    assert [m.id.rsplit("-", 1)[0] for m in ex.matches] == ["torch-npu-check", "pytorch-dispatch"]


def test_messages_of_the_sources_rank_below_every_hand_written_error() -> None:
    hand = {s.id: s.priority for s in TABLE.signatures if not s.derived}
    lowest = max(p for _, p in signatures.MESSAGE_FAMILY.values())
    # the CPU-fallback warning and the helpers' exit noise are no errors and rank below any other;
    # the rest rank above the messages (ais_bench's aclruntime warning too: it runs on in its old mode;
    # pip's warning that an install's commands are outside PATH)
    noise = {"npu-cpu-fallback-warning", "worker-parent-exited", "ais-bench-aclruntime-too-old"}
    noise.add("pip-scripts-not-on-path")
    assert all(p > lowest for sid, p in hand.items() if sid not in noise)
    assert all(hand[sid] < min(p for _, p in signatures.MESSAGE_FAMILY.values()) for sid in noise)


def test_a_hand_written_signature_still_ranks_above_a_message_of_the_sources() -> None:
    # torch_npu's own check beside it has the same words; the hand-written signature decides first
    ex = _explain(
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices"
    )
    assert ex.matches[0].id == "tensors-on-different-devices"
    assert all(m.id == "tensors-on-different-devices" or m.priority < -20 for m in ex.matches)
