"""The residual reading (cannenv.explain.residual): a failure no signature reads, and no line of it
naming what another cause is about, is read as not a version problem — undecided, exit 3, only
when nothing else matched; a marker, a warning level, a stack frame or a failure inside the
installed stack each decide it otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.errors import InputError
from cannenv.explain import judge, knowledge, models, residual, signatures
from tests.helpers.explaining import TABLE, explain, scan

K = TABLE.knowledge
assert K is not None and K.residual is not None
RES = judge.RESIDUAL_ID
CORPUS = Path(__file__).resolve().parents[1] / "data" / "errors"


def _ids(text: str) -> list[str]:
    return [m.id for m in explain(text).matches]


@pytest.mark.parametrize(
    "text",
    [
        # the program's own failures, in the forms the failure extractors read
        'Traceback (most recent call last):\n  File "run.py", line 3, in <module>\n'
        "    main()\nRuntimeError: Ascend Transfer Engine initialization failed.",
        "(EngineCore_DP0 pid=1) ERROR 10-23 15:55:51 [multiproc_executor.py:597] WorkerProc failed to start.",
        "ERROR [mindspore/lite/src/lite_model.cc:**] ModelVerify] Model does not have inputs.",
        "make[1]: *** [CMakeFiles/Makefile2:5453: 3rdparty/jpeg12-static.dir/all] Error 2",
        "OpFileNotExistsError: File aic-*-ops-info.ini does not exist in directory",
        "ParseException: unexpected token at line 3",
        "FileNotFoundError: common.pt",
        "The input format of --out_nodes is invalid",
        "[Vdec]:vdec_check_send_stream [Line]:6563 pid 578 chn 64 stream len can't be zero!",
    ],
)
def test_a_failure_naming_nothing_of_another_cause_is_read_as_not_a_version_problem(text: str) -> None:
    ex = explain(text)
    assert [m.id for m in ex.matches] == [RES], ex.matches
    assert [(c.id, c.status) for c in ex.causes] == [("not-a-version-problem", "undecided")]
    assert ex.exit_code == 3 and ex.residual_only
    assert ex.matches[0].evidence[0].lines  # the failure line is quoted


MARKER_CASES = [
    ("import", "ImportError: cannot import name '_try_login' from 'modelscope.utils.hf_util'"),
    ("loader", "RuntimeError: failed to load libfoo_custom.so for the plugin"),
    ("version", "RuntimeError: the checkpoint was saved by a newer version of the tool"),
    ("environment", "ERROR: ASCEND_HOME_PATH is empty, cannot continue"),
    ("device", "RuntimeError: no NPU devices were found by the runtime"),
    ("chip", "ERROR kernel launch is not supported on this SoC (Ascend310P3)"),
    ("ops-package", "ERROR: the custom op kernel not found for MyAdd"),
    ("memory", "ValueError: Free memory on device (8.0/64.0 GiB) on startup is less than desired"),
    ("busy", "ERROR: the NPU is busy, retry later"),
    ("communication", "ERROR: Failed to connect to the host via ssh: Permission denied"),
    ("native-crash", "terminate called after throwing an instance of 'std::length_error'"),
    ("api", "TypeError: forward() got an unexpected keyword argument 'quant_linear'"),
]


@pytest.mark.parametrize(("marker", "line"), MARKER_CASES)
def test_a_marker_in_a_failure_line_leaves_the_log_unread(marker: str, line: str) -> None:
    """Each marker is the vocabulary of another cause: its cause is possible, no signature decides
    it, so the residual reading stays silent and says which marker and causes (not a version
    problem is never named)."""
    s = scan(line)
    got = residual.read(K, s.values)
    assert isinstance(got, residual.Silence) and got.marker == marker, got
    assert got.causes and "not-a-version-problem" not in got.causes
    assert RES not in [m.id for m in judge.explain(TABLE, s).matches]


def test_every_marker_of_the_table_is_exercised_above() -> None:
    assert K is not None and K.residual is not None
    assert {m for m, _ in MARKER_CASES} == {m.id for m in K.residual.markers}


def test_warnings_and_stack_frames_are_no_failures() -> None:
    """vLLM's harmless 'Failed to import from vllm._C with ModuleNotFoundError' is a WARNING: it is
    neither a failure nor a marker; a traceback frame whose path says 'memory' silences nothing."""
    warn = "WARNING 02-28 03:24:01 _custom_ops.py:19] Failed to import from vllm._C with ModuleNotFoundError"
    assert isinstance(residual.read(K, scan(warn).values), residual.Silence)
    assert _ids(warn) == []
    text = (
        "ERROR 09-10 [multiproc_executor.py:596] Traceback (most recent call last):\n"
        'ERROR 09-10 [multiproc_executor.py:596]   File "/srv/memory_pool/run.py", line 367, in forward\n'
        "ERROR 09-10 [multiproc_executor.py:596] RuntimeError: rotary_dim must be 128\n"
    )
    assert _ids(text) == [RES]


def test_a_compile_error_inside_the_installed_stack_is_not_read() -> None:
    text = (
        "In file included from "
        "/usr/local/Ascend/ascend-toolkit/latest/tools/tikcpp/tikcfw/impl/kernel_tpipe.h:23:\n"
        "/usr/local/Ascend/ascend-toolkit/latest/tools/tikcpp/tikcfw/impl/kernel_tensor_impl.h:88:5: "
        "error: unknown type name 'half'\n"
    )
    got = residual.read(K, scan(text).values)
    assert (
        isinstance(got, residual.Silence) and got.marker is not None and got.marker.startswith("cc-foreign-")
    )
    assert "chip-unsupported" in got.causes


def test_a_log_with_no_failure_line_has_no_reading() -> None:
    hang = "Using ~/.cache/torch_extensions/py38_cpu as PyTorch extensions root...\n" * 3
    assert _ids(hang) == []
    assert _ids("warning: component [edge-om] is already started!") == []


def test_any_signature_of_a_known_message_keeps_the_residual_reading_out() -> None:
    """The residual reading is asked only when nothing matched: beside a known message it is absent."""
    text = "KeyError: 'layers'\nRuntimeError: call aclnnInplaceZero failed, error code is 561103"
    ids = _ids(text)
    assert ids and RES not in ids


def test_the_residual_reading_is_never_confirmed_on_a_host() -> None:
    ex = explain("RuntimeError: Ascend Transfer Engine initialization failed.", facts=None, findings=[])
    assert ex.causes[0].status == "undecided" and ex.causes[0].tie is None and ex.exit_code == 3


def test_on_the_read_corpus_the_residual_reading_fires_only_where_nothing_else_did() -> None:
    """Every working excerpt the residual reading reads has no other match, and most of those it
    reads are established as not version problems (docs/explain.md gives the measured share)."""
    import tests.unit.test_explain_corpus as corpus

    read, right = 0, 0
    for case in corpus.WORKING:
        ex = explain((CORPUS / case["file"]).read_bytes())
        ids = [m.id for m in ex.matches]
        if RES in ids:
            assert ids == [RES]
            read += 1
            right += case["cause"] == "not-a-version-problem"
    assert read >= 15 and right / read >= 0.7, (read, right)


def _raw() -> dict[str, Any]:
    return dict(yaml.safe_load(knowledge.shipped_path().read_text(encoding="utf-8")))


def test_a_marker_pointing_to_not_a_version_problem_is_refused() -> None:
    raw = _raw()
    raw["residual"]["markers"][0]["causes"] = ["not-a-version-problem"]
    with pytest.raises(InputError, match=r"residual\.markers\.0"):
        knowledge.parse_knowledge(raw, source="k.yaml")


def test_a_marker_with_an_unknown_cause_or_extractor_is_refused() -> None:
    raw = _raw()
    raw["residual"]["markers"][0]["causes"] = ["no-such-cause"]
    bad = knowledge.parse_knowledge(raw, source="k.yaml")
    model = models.SignatureFile.model_validate(yaml.safe_load(signatures.shipped_path().read_text()))
    with pytest.raises(InputError, match="residual marker import: unknown cause 'no-such-cause'"):
        signatures.build(model, bad)
    raw = _raw()
    raw["residual"]["in_stack"]["extractors"] = ["no-such-extractor"]
    with pytest.raises(InputError, match="residual: unknown extractor 'no-such-extractor'"):
        knowledge.parse_knowledge(raw, source="k.yaml")
    raw = _raw()
    raw["residual"]["markers"][0]["regex"] = "(a)\\1"
    with pytest.raises(InputError, match=r"residual\.markers\.0"):
        knowledge.parse_knowledge(raw, source="k.yaml")


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "ERROR ",
                "error: ",
                "Error: ",
                "failed ",
                "FAILED ",
                "Exception: ",
                "WARNING ",
                'File "x.py", line 1, in f\n',
                "ImportError: x\n",
                "memory ",
                "driver ",
                "*** ",
                "terminate called ",
                "KeyError: 'k'\n",
                "\n",
                "abc ",
                "é",
            ]
        ),
        max_size=40,
    )
)
def test_any_text_gets_a_reading_or_a_reason_and_never_a_confirmed_residual(parts: list[str]) -> None:
    text = "".join(parts)
    s = scan(text)
    got = residual.read(K, s.values)
    assert isinstance(got, (residual.Reading, residual.Silence))
    ex = judge.explain(TABLE, s)
    if RES in [m.id for m in ex.matches]:
        assert isinstance(got, residual.Reading) and ex.exit_code == 3
        assert all(c.status == "undecided" for c in ex.causes)


def test_the_text_answer_shows_the_doctors_findings_beside_the_residual_reading() -> None:
    """The reading confirms nothing, so what the doctor finds on the host is shown all the same."""
    from cannenv.explain import render
    from cannenv.report import Finding

    bad = Finding(
        id="toolkit-ops", status="fail", severity="high", title="ops", detail="ops 8.0 beside toolkit 8.5"
    )
    ex = explain(
        "RuntimeError: Ascend Transfer Engine initialization failed.", findings=[bad], host_source="root"
    )
    text = render.render_text(ex)
    assert ex.residual_only and ex.exit_code == 3
    assert "What the doctor finds on this host all the same:" in text and "toolkit-ops [fail]" in text
    clean = render.render_text(explain("RuntimeError: init failed.", findings=[], host_source="root"))
    assert "The doctor finds nothing wrong on this host." in clean
