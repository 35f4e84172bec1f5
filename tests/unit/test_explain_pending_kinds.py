"""Kinds of error the working corpus still missed (issue 29, rounds 2-5's pending cases), each
written from its product's own source and tested on the product's wording and on near misses:

* protobuf's duplicate registration of a generated .proto (descriptor_database.cc's ERROR line,
  descriptor.cc's CHECK): one of CANN's own .proto files (hicann/ge, hicann/runtime) twice in one
  process is a CANN Python package (te) of another CANN; any other file is two third-party copies;
* GE's E19025 and E19001 from the runtime's compact error table (error_manager.c);
* PyTorch's checks of the tensors torch.stack/torch.cat join (TensorShape.cpp) and the DataLoader's
  collate; Dynamo's fake-tensor messages (torch/_dynamo/utils.py get_fake_value);
* packaging's InvalidVersion (a version string outside PEP 440);
* torch_npu's profiler: its schedule warnings and its parse tasks' failures;
* vllm-ascend's 310P path saying '310P does not support …';
* MindCluster's owner/permission check of the paths its components open (ascend-common path.go);
* Volcano's enqueue check of the job's queue quota (proportion/capacity plugins);
* MindSpore's argument checks ("For '<op>', …": _checkparam.py and the operators' infer checks) and
  its graph mode's argument-count checks (evaluator.cc, api.py, cell.py);
* MindSpore Lite's report of a model converted by another release (lite_model.cc), its runtime's
  check of the .ms schema (lite_session.cc) and its converter's model readers (the parsers).

Each new regex also meets a long hostile line: it runs on the linear engine (RE2) and the whole
explain pipeline answers it. No timed assertions.
"""

from __future__ import annotations

from typing import Any

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain
from tests.helpers.explaining import known

TABLE = signatures.shipped()


def _top(text: str) -> str | None:
    ex = _explain(text)
    return ex.causes[0].id if ex.causes else None


def _matched(text: str) -> list[str]:
    """The signatures of known messages that matched (the residual reading knows none)."""
    return [m.id for m in known(_explain(text))]


def _regexes(sig_id: str) -> list[Any]:
    sig = next(s for s in TABLE.signatures if s.id == sig_id)
    return [p for p in (*sig.any, *sig.all) if p.rx is not None]


# --- protobuf: a generated .proto registered twice in one process --------------------------------
PROTO_ERROR = "[libprotobuf ERROR descriptor_database.cc:644] File already exists in database: {name}\n"
PROTO_CHECK = (
    "[libprotobuf FATAL descriptor.cc:1371] CHECK failed: "
    "GeneratedDatabase()->Add(encoded_file_descriptor, size):\n"
)


@pytest.mark.parametrize(
    "name", ["dvpp_tensor_shape.proto", "ge_ir.proto", "om.proto", "op_mapping_info.proto"]
)
def test_one_of_canns_own_protos_twice_is_a_cann_python_package_of_another_cann(name: str) -> None:
    ex = _explain(PROTO_ERROR.format(name=name) + PROTO_CHECK)
    assert ex.causes[0].id == "python-deps"
    assert ex.causes[0].signature == "protobuf-cann-proto-twice"
    # the file being CANN's rules out the third-party reading of the generic signature
    third = next(c for c in ex.causes if c.id == "third-party-library")
    assert third.status == "ruled-out"


@pytest.mark.parametrize(
    "name",
    [
        "onnx/onnx-ml.proto",  # another library's proto
        "tensorflow/core/protobuf/eager_service.proto",
        "attr_value.proto",  # TensorFlow's name, also in CANN's aicpu copy: not CANN's own
        "task.proto",  # too generic a name to be CANN's
        "xom.proto",  # a CANN name inside another word
        "om.protobuf",
        "vendor/ge_ir.proto",  # registered under a path: not CANN's bare name
    ],
)
def test_another_proto_twice_is_two_third_party_copies(name: str) -> None:
    text = PROTO_ERROR.format(name=name) + PROTO_CHECK
    assert "protobuf-cann-proto-twice" not in _matched(text)
    assert _top(text) == "third-party-library"


def test_the_check_line_alone_names_no_file_so_the_generic_reading_decides() -> None:
    assert _matched(PROTO_CHECK) == ["protobuf-proto-twice"]
    assert _top(PROTO_CHECK) == "third-party-library"
    # a log line that only mentions a database is not protobuf's
    assert _matched("INFO: File already exists in the database, skipping\n") == []


# --- GE codes of the runtime's compact error table ----------------------------------------------------
def test_e19025_an_input_tensor_the_caller_gave_is_not_a_version_problem() -> None:
    text = (
        "RuntimeError: E19025: [PID: 1] Input tensor is invalid. Reason: The Output memory provided "
        "by the user, plus 64 bytes for data alignment, is smaller than op_size in the model.\n"
    )
    assert _top(text) == "not-a-version-problem"
    # a number that is not a code after an error word, and the code inside a word, are not E19025
    assert _top("loaded 19025 samples\n") is None
    assert "code-E19025" not in _matched("XE19025: nothing\n")


# --- PyTorch: tensors of different shapes joined ------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: stack expects each tensor to be equal size, "
        "but got [3, 224, 224] at entry 0 and [3, 512, 512] at entry 5",
        "RuntimeError: stack expects each tensor to be equal size, but got [",  # cut off in the log
        "RuntimeError: Sizes of tensors must match except in dimension 1. "
        "Expected size 3 but got size 4 for tensor number 1 in the list.",
        "RuntimeError: Tensors must have same number of dimensions: got 2 and 3",
        "RuntimeError: each element in list of batch should be of equal size",
    ],
)
def test_tensors_of_different_shapes_joined_are_the_data_or_the_code(line: str) -> None:
    assert _matched(line + "\n")[0] == "torch-join-unequal-shapes"
    assert _top(line + "\n") == "not-a-version-problem"


def test_a_version_signature_beside_the_join_error_still_ranks_first() -> None:
    text = (
        "RuntimeError: stack expects each tensor to be equal size, "
        "but got [3] at entry 0 and [4] at entry 1\n"
        "RuntimeError: call aclnnAdd failed, error code is 561103\n"
    )
    assert _top(text) == "ops-package-missing-or-wrong"


# --- Dynamo: an operator that cannot run on fake tensors ----------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "torch._dynamo.exc.Unsupported: unsupported operator: npu.custom.default (see "
        "https://docs.google.com/document/d/1GgvOe7C8_NVOMLOCwDaYV1mXXyHMXY7ExoewHqooxrs/edit"
        "#heading=h.64r4npvq0w0 for how to fix)",
        "torch._dynamo.exc.Unsupported: data dependent operator: aten._local_scalar_dense.default",
        "torch._dynamo.exc.Unsupported: dynamic shape operator: aten.nonzero.default",
        "torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors",
    ],
)
def test_an_operator_without_a_fake_implementation_is_the_programs_registration(line: str) -> None:
    assert "torch-dynamo-fake-unsupported-op" in _matched(line + "\n")
    assert _top(line + "\n") == "not-a-version-problem"


def test_unsupported_operator_without_the_op_is_not_dynamos_message() -> None:
    assert "torch-dynamo-fake-unsupported-op" not in _matched("ERROR: unsupported operator: \n")
    assert "torch-dynamo-fake-unsupported-op" not in _matched("unsupported operator in expression\n")


# --- packaging: a version string outside PEP 440 ------------------------------------------------------
def test_invalid_version_is_a_string_packaging_cannot_parse() -> None:
    text = "packaging.version.InvalidVersion: Invalid version: '0.7.4.dev17+g12ab.d20250101.empty'\n"
    assert _top(text) == "not-a-version-problem"
    assert _top("InvalidVersion\n") == "not-a-version-problem"
    # another name that only begins like it is not packaging's exception
    assert "packaging-invalid-version" not in _matched("InvalidVersionSpecError: x\n")
    assert "packaging-invalid-version" not in _matched("MyInvalidVersion raised\n")


# --- torch_npu's profiler -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "[WARNING] Incorrect schedule: Stop profiler while current state is RECORD "
        "which may result in incomplete parsed data.",
        "[WARNING] Incorrect schedule: Stop profiler while current state is WARMUP "
        "which will result in empty parsed data.",
        "[WARNING] Incorrect schedule: RECORD followed by NONE",
        "[WARNING] Incorrect schedule: WARMUP followed by NONE",
    ],
)
def test_an_incorrect_profiler_schedule_is_the_programs_step_calls(line: str) -> None:
    assert _top(line + "\n") == "not-a-version-problem"


def test_the_profilers_parse_tasks_failing_is_not_a_version_problem() -> None:
    text = "[ERROR] profiler.py: Task [CANNExportParser] run failed.\n[ERROR] Task [DbParser] run failed.\n"
    assert _matched(text)[0] == "torch-npu-profiler-parse-failed"
    assert _top(text) == "not-a-version-problem"
    # another program's task
    assert "torch-npu-profiler-parse-failed" not in _matched("Task [build step] run failed.\n")
    assert "torch-npu-profiler-parse-failed" not in _matched("Task [] run failed.\n")


# --- vllm-ascend's 310P path ------------------------------------------------------------------------
def test_the_310p_path_saying_it_does_not_support_a_feature_is_the_chip() -> None:
    text = "NotImplementedError: 310P does not support runner_type='pooling'\n"
    assert _top(text) == "chip-unsupported"
    assert _top("ValueError: Deepseek Sparse Attention is not supported for 310P.\n") == "chip-unsupported"
    assert _top("RuntimeError: head_first=True is not supported in 310P chunk path.\n") == "chip-unsupported"
    # a 310P that supports something, or a number 310 in another sentence, is not a check
    assert "vllm-ascend-soc-unsupported" not in _matched("the 310P does support bf16 here\n")


# --- MindCluster's path check ----------------------------------------------------------------------
def test_a_path_failing_mindclusters_owner_and_mode_check_is_the_folders_permissions() -> None:
    text = (
        "[ERROR]    2024/01/10 02:29:39.034681 60      collector/npu_collector.go:1924    deviceManager init "
        "failed, prepare dcmi failed, err: cannot found valid driver lib, fromEnv: lib path is invalid, "
        "[/usr/local/Ascend/driver/lib64/driver/libdcmi.so: check uid or mode failed; "
        "/usr/local/dcmi/libdcmi.so: check uid or mode failed;]\n"
    )
    assert _matched(text)[0] == "mind-cluster-path-owner-mode"
    assert _top(text) == "not-a-version-problem"
    assert _top("evalSymlinks ok; symlinks owner may not root\n") == "not-a-version-problem"
    # the DCMI failing without the path check is not this rule
    assert "mind-cluster-path-owner-mode" not in _matched("deviceManager init failed, prepare dcmi failed\n")


# --- Volcano's queue quota ----------------------------------------------------------------------------
def test_a_queue_without_quota_for_the_job_is_the_clusters_resources() -> None:
    text = "  Normal   Unschedulable  93s (x280 over 6m34s)   volcano  queue resource quota insufficient\n"
    assert _top(text) == "not-a-version-problem"
    # capacity's wording with the resource names appended
    assert _top("volcano  queue resource quota insufficient: insufficient huawei.com/Ascend910\n") == (
        "not-a-version-problem"
    )
    assert _matched("queue resource quota sufficient\n") == []


# --- MindSpore: the program's arguments and calls --------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "ValueError: For 'set_context', package type mindspore-gpu support 'device_target' type gpu or cpu, "
        "but got Ascend.",
        "ValueError: For 'BiasAdd', bias[0] shape should be equal to input_x[1] shape when data_format is 0, "
        "but got bias shape: .[const vector]{4}, input_shape: [const vector]{3, 8}.",
        "TypeError: For 'MatMul', the type of 'x' should be Tensor, but got int.",
    ],
)
def test_a_mindspore_argument_check_is_the_programs_argument(line: str) -> None:
    assert _matched(line + "\n")[0] == "mindspore-argument-check"
    assert _top(line + "\n") == "not-a-version-problem"


@pytest.mark.parametrize(
    "line",
    [
        "TypeError: The parameters number of the function is 2, but the number of provided arguments is 3.",
        "TypeError: The function construct needs 0 positional argument and 0 default argument, "
        "but provided 1",
        "TypeError: For 'Cell', the function construct requires 1 positional argument and "
        "0 default argument, total 1, but got 2.",
        "TypeError: Function fn needs 2 positional argument and 0 default argument, total 2, but got 3.",
        "TypeError: Function fn needs 2 positional argument, but got 1.",
    ],
)
def test_a_graph_function_called_with_another_number_of_arguments_is_the_programs_call(line: str) -> None:
    assert "mindspore-call-arity" in _matched(line + "\n")
    assert _top(line + "\n") == "not-a-version-problem"


def test_mindspores_wording_elsewhere_is_not_its_check() -> None:
    # prose, and a 'For' that is not an operation's quoted name
    assert "mindspore-argument-check" not in _matched("ValueError: For each rank, the size differs\n")
    assert "mindspore-argument-check" not in _matched("For 'x', see the docs\n")
    assert "mindspore-call-arity" not in _matched("f() takes 2 positional arguments but 3 were given\n")


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: Data type conversion of 'Parameter' is not supported, so data type int32 cannot be "
        "converted to data type float32 automatically.",
        "RuntimeError: Data type conversion is not supported for a 'Parameter', "
        "nor for the input tensor of an in-place operator, "
        "the argument[x]'s data type of primitive[AssignAdd] is Int32, which cannot be "
        "converted to data type Float32 automatically.",
    ],
)
def test_a_parameter_of_another_dtype_is_the_networks_dtype(line: str) -> None:
    assert _matched(line + "\n")[0] == "mindspore-parameter-dtype-conversion"
    assert _top(line + "\n") == "not-a-version-problem"


# --- MindSpore Lite: a model of another release -------------------------------------------------------
def test_a_lite_model_converted_by_another_release_is_a_framework_mismatch() -> None:
    text = (
        "WARNING [mindspore/lite/src/lite_model.cc:**] ConstructModel] "
        "model version is MindSpore Lite 1.2.0, inference version is MindSpore Lite 1.5.0 not equal\n"
        "[mindspore/lite/src/litert/infer_manager.cc:**] KernelInferShape] "
        "Get infershape func failed! type: X\n"
    )
    assert _matched(text)[0] == "mslite-model-version-differs"
    assert _top(text) == "framework-mismatch"
    # the runtime's own version line alone is no mismatch
    assert "mslite-model-version-differs" not in _matched(
        "MindSpore Lite inference version: MindSpore Lite 2.3.0\n"
    )


def test_a_model_the_lite_runtime_cannot_verify_is_converter_and_runtime_of_two_releases() -> None:
    text = (
        "ERROR [mindspore/lite/src/lite_session.cc:1539] LoadModelByBuff] Please enable runtime convert.\n"
        "ERROR [mindspore/lite/src/lite_session.cc:1598] LoadModelAndCompileByPath] Read model file failed\n"
    )
    ex = _explain(text)
    assert [c.id for c in ex.causes][:2] == ["framework-mismatch", "not-a-version-problem"]
    assert (
        _top("WARNING [lite_session.cc:1876] LoadModelByBuff] Invalid mslite model.\n")
        == "framework-mismatch"
    )
    # the runtime's 'Read model file failed' alone is not this check (nor the converter's reader)
    assert _matched("ERROR [lite_session.cc:1598] LoadModelAndCompileByPath] Read model file failed\n") == []


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR] LITE(1,7f,converter_lite):2021-12-13 [onnx_op_parser.cc:3079] InitOriginModel] "
        "Read onnx model file failed, model path: ./ml_audio_kit_vocals_resunet.onnx",
        "[ERROR] LITE [caffe_model_parser.cc:303] Read prototxt file failed, model path: ./deploy.prototxt",
        "[ERROR] LITE [caffe_model_parser.cc:310] Read caffemodel file failed, model path: ./w.caffemodel",
    ],
)
def test_a_model_file_the_converter_cannot_read_is_the_path_or_the_file(line: str) -> None:
    assert _matched(line + "\n")[0] == "mslite-converter-read-failed"
    assert _top(line + "\n") == "not-a-version-problem"


# --- each new regex on a long hostile line ------------------------------------------------------------
HOSTILE = {
    "protobuf-cann-proto-twice": "File already exists in database: " + "om" * 100_000,
    "torch-dynamo-fake-unsupported-op": "dynamic shape operator:" + " " * 200_000,
    "packaging-invalid-version": "InvalidVersion" + "x" * 200_000,
    "torch-npu-profiler-parse-failed": "Task [" + "A" * 200_000,
    "vllm-ascend-soc-unsupported": "310P does not support " + " " * 200_000,
    "mindspore-argument-check": "ValueError: For '" + "a" * 200_000,
    "mindspore-call-arity": "The parameters number of the function is " + "9" * 200_000,
    "mslite-model-version-differs": "model version is MindSpore Lite 1" + ".2" * 100_000,
    "mslite-converter-read-failed": "Read onnx model file failed, model path" + ":" * 200_000,
}


@pytest.mark.parametrize("sig_id", sorted(HOSTILE))
def test_each_new_regex_runs_on_the_linear_engine_on_a_long_hostile_line(sig_id: str) -> None:
    line = HOSTILE[sig_id]
    patterns = _regexes(sig_id)
    assert patterns
    for p in patterns:
        rx = linre.compile(p.rx)
        assert rx.engine == "re2"
        assert rx.search(line) is None
    # the whole pipeline answers it (the scanner bounds a line; nothing raises)
    _explain(line + "\n")
