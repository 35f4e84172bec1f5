"""`cannenv explain`: the error tables of the libraries and tools around the stack (issue 29).

OpenCV's ``cv::Error::Code``, ONNX Runtime's ``StatusCode``, PaddlePaddle's ``phi::ErrorCode``, the
C/C++ compilers' diagnostics and CMake's message types (matrices/explain/libtables.yaml, each table
read whole from the project's own source): each printed form is tested on the library's own
wording (the format string its source writes), on near misses that are not the form, on a hostile
line, and in the trap the ranking is for — a vendor code, a missing library, a message of the stack
or the program's own code anywhere in the log decides before the library's category.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cannenv import linre
from cannenv.errors import InputError
from cannenv.explain import judge, libtables, signatures
from cannenv.explain.scan import Scanner
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
TABLES = {t.id: t for t in K.lib_tables}


def _lib_matches(text: str) -> list[judge.Match]:
    return [m for m in _explain(text).matches if m.id.startswith("lib-")]


def _top(text: str) -> tuple[str | None, str | None]:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


# --- the data ----------------------------------------------------------------------------------
def test_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "libtables.schema.json").read_text())
    assert shipped == libtables.json_schema(), (
        "regenerate: python -m cannenv.explain.libtables --schema > matrices/explain/libtables.schema.json"
    )


def test_the_tables_are_the_libraries_whole_enums() -> None:
    # OpenCV: StsOk 0 … StsFilterOffsetErr -31, StsBadSize -201 … OpenCLNoAMDBlasFft -223
    cv = {r.key: r.name for r in TABLES["opencv"].rows}
    assert set(cv) == {str(-i) for i in range(0, 32)} | {str(-i) for i in range(201, 224)}
    assert (cv["-215"], cv["-5"], cv["-213"], cv["-4"]) == (
        "StsAssert",
        "StsBadArg",
        "StsNotImplemented",
        "StsNoMem",
    )
    # ONNX Runtime: OK 0 … EP_FAIL 11
    ort = {r.key: r.name for r in TABLES["onnxruntime"].rows}
    assert (
        set(ort) == {str(i) for i in range(12)} and ort["11"] == "EP_FAIL" and ort["7"] == "INVALID_PROTOBUF"
    )
    # Paddle: LEGACY 0 and the twelve typed errors of phi::errors
    pd = [r.key for r in TABLES["paddle"].rows]
    assert pd == [
        "Legacy",
        "InvalidArgument",
        "NotFound",
        "OutOfRange",
        "AlreadyExists",
        "ResourceExhausted",
        "PreconditionNotMet",
        "PermissionDenied",
        "ExecutionTimeout",
        "Unimplemented",
        "Unavailable",
        "Fatal",
        "External",
    ]
    # every row and form cites the project's own source at a commit
    for t in K.lib_tables:
        for r in t.rows:
            assert "/blob/" in K.sources[r.source][1] and len(r.reason) >= 10
        for f in t.forms:
            url = K.sources[f.source][1]
            commit = url.split("/blob/", 1)[1].split("/", 1)[0]
            assert len(commit) == 40 and all(c in "0123456789abcdef" for c in commit), url


def test_causes_follow_the_tables_meaning_only() -> None:
    def causes(table: str, key: str) -> tuple[str, ...]:
        row = TABLES[table].lookup(key)
        assert row is not None
        return row.causes

    nv = ("not-a-version-problem",)
    assert causes("opencv", "-215") == nv and causes("opencv", "-5") == nv
    assert causes("opencv", "-4") == ("oom",) and causes("paddle", "ResourceExhausted") == ("oom",)
    assert causes("onnxruntime", "2") == nv and causes("paddle", "InvalidArgument") == nv
    for table, key in (
        ("opencv", "-213"),
        ("opencv", "-2"),
        ("onnxruntime", "9"),
        ("onnxruntime", "1"),
        ("paddle", "Unimplemented"),
        ("paddle", "External"),
        ("cc", "missing-file"),
        ("cc", "undeclared"),
        ("cmake", "FATAL_ERROR"),
    ):
        assert causes(table, key) == (), (table, key)
    # the version-problem causes never come from a library's category alone (the driver's DCMI codes
    # and the hardware's reports: tests/unit/test_explain_hwfaults.py)
    versioned = {c for c, v in TABLE.causes.items() if v.version_problem}
    libraries = ("opencv", "onnxruntime", "paddle", "cc", "cmake")
    assert not {c for t in K.lib_tables if t.id in libraries for r in t.rows for c in r.causes} & versioned


# --- the printed forms, on the libraries' own wording -------------------------------------------
@pytest.mark.parametrize(
    ("text", "sig", "cause"),
    [
        # OpenCV 4.x formatMessage: "OpenCV(%s) %s:%d: error: (%d:%s) %s in function '%s'"
        (
            "cv2.error: OpenCV(4.10.0) /io/opencv/modules/imgproc/src/color.cpp:196: error: "
            "(-215:Assertion failed) !_src.empty() in function 'cvtColor'",
            "lib-opencv-stsassert",
            "not-a-version-problem",
        ),
        (
            "cv2.error: OpenCV(4.5.4) /tmp/opencv/modules/dnn/src/dnn.cpp:1234: error: (-5:Bad argument) "
            "Can't read ONNX file: model.onnx in function 'readNetFromONNX'",
            "lib-opencv-stsbadarg",
            "not-a-version-problem",
        ),
        (
            "what():  OpenCV(4.8.0) /src/modules/core/src/alloc.cpp:73: error: (-4:Insufficient memory) "
            "Failed to allocate 12345678912 bytes in function 'OutOfMemoryError'",
            "lib-opencv-stsnomem",
            "oom",
        ),
        # OpenCV 3.x: "%s:%d: error: (%d) %s in function %s"
        (
            "/build/opencv/modules/imgproc/src/resize.cpp:4044: error: (-215) ssize.width > 0 && "
            "ssize.height > 0 in function resize",
            "lib-opencv-stsassert",
            "not-a-version-problem",
        ),
        # ONNX Runtime's Status::ToString, as the Python binding raises it
        (
            "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : "
            "INVALID_ARGUMENT : Got invalid dimensions for input: images for the following indices",
            "lib-onnxruntime-invalid-argument",
            "not-a-version-problem",
        ),
        (
            "onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf: [ONNXRuntimeError] : 7 : "
            "INVALID_PROTOBUF : Load model from model.onnx failed:Protobuf parsing failed.",
            "lib-onnxruntime-invalid-protobuf",
            "not-a-version-problem",
        ),
        # Paddle's SimplifyErrorTypeFormat (Python) and ErrorSummary::to_string (C++ summary)
        (
            "ValueError: (InvalidArgument) The shape of input x must be 4-D, but received 3.\n"
            "  [Hint: Expected x.dims().size() == 4, but received x.dims().size():3 != 4:4.] "
            "(at /paddle/paddle/phi/kernels/funcs/foo.cc:61)",
            "lib-paddle-invalidargument",
            "not-a-version-problem",
        ),
        (
            "----------------------\nError Message Summary:\n----------------------\n"
            "ResourceExhaustedError: Not enough available npu memory. "
            "(at /paddle/paddle/phi/backends/device_base.cc:120)",
            "lib-paddle-resourceexhausted",
            "oom",
        ),
        (
            "IndexError: (OutOfRange) The starting index 5 of slice is out of bounds [0, 3). "
            "(at /paddle/paddle/phi/kernels/funcs/slice_utils.h:60)",
            "lib-paddle-outofrange",
            "not-a-version-problem",
        ),
        # Clang / BiSheng: warn_fe_frame_larger_than
        (
            "kernel.cpp:12:6: error: stack frame size (40960) exceeds limit (32768) in 'my_kernel'",
            "lib-cc-frame-too-large",
            "not-a-version-problem",
        ),
    ],
)
def test_a_printed_form_is_its_row(text: str, sig: str, cause: str) -> None:
    ex = _explain(text)
    assert [m.id for m in ex.matches] == [sig], [m.id for m in ex.matches]
    assert ex.causes[0].id == cause and ex.causes[0].signature == sig
    # the why names the library's table; the sources are its own files at their commits
    assert ex.causes[0].why.startswith(
        ("OpenCV's own table", "ONNX Runtime's own table", "PaddlePaddle's own", "the C/C++")
    )
    assert all("/blob/" in s.url for s in ex.causes[0].sources)


@pytest.mark.parametrize(
    ("text", "sig"),
    [
        (
            "cv2.error: OpenCV(4.9.0) /src/modules/dnn/src/layer.cpp:99: error: "
            "(-213:The function/feature is not implemented) Unsupported layer type in function 'forward'",
            "lib-opencv-stsnotimplemented",
        ),
        (
            "onnxruntime.capi.onnxruntime_pybind11_state.NotImplemented: [ONNXRuntimeError] : 9 : "
            "NOT_IMPLEMENTED : Could not find an implementation for ConvInteger(10) node with name ''",
            "lib-onnxruntime-not-implemented",
        ),
        (
            "NotImplementedError: (Unimplemented) Ascend npu only support mode=constant right now. "
            "(at /paddle/backends/npu/kernels/pad3d_kernel.cc:40)",
            "lib-paddle-unimplemented",
        ),
        ("src/foo.cc:3:10: fatal error: Python.h: No such file or directory", "lib-cc-missing-file"),
        ("kernel.cpp:3:10: fatal error: 'kernel_operator.h' file not found", "lib-cc-missing-file"),
        (
            "x.cpp:5:3: error: ‘aclrtFoo’ was not declared in this scope; did you mean ‘aclrtBar’?",
            "lib-cc-undeclared",
        ),
        ("x.cpp:5:3: error: use of undeclared identifier 'aclrtFoo'", "lib-cc-undeclared"),
        ("CMake Error at CMakeLists.txt:21 (message):\n  Unexpected value", "lib-cmake-fatal-error"),
        ("CMake Error (dev) at CMakeLists.txt:3 (project):", "lib-cmake-author-error"),
        ("CMake Internal Error (please report a bug)", "lib-cmake-internal-error"),
    ],
)
def test_a_category_that_names_no_cause_still_matches_and_says_so(text: str, sig: str) -> None:
    ex = _explain(text)
    assert [m.id for m in ex.matches] == [sig]
    assert not ex.causes and "names no cause by itself" in ex.matches[0].note
    assert ex.exit_code == 0 and ex.verdict.startswith(f"{sig} matched; it names no cause")


@pytest.mark.parametrize(
    "text",
    [
        # Python's own FileNotFoundError, not Paddle's NotFound
        "FileNotFoundError: [Errno 2] No such file or directory: 'model.onnx'",
        "ModuleNotFoundError: No module named 'paddle'",
        # TensorFlow's (after a dot), not Paddle's summary line
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: Incompatible shapes",
        "the (External) interface of the plugin",  # no Error word, not after a separator
        "make: *** [all] error: (-2) of the recipe",  # no line number before ': error: ('
        "[ONNXRuntimeError] : : FAIL",  # no code
        "error: ‘x’ was declared in this scope",
        "CMake Warning at CMakeLists.txt:3 (message):",  # a warning, not an error
        "warning: the frame size of 2048 bytes",
    ],
)
def test_near_misses_are_not_the_forms(text: str) -> None:
    assert _lib_matches(text) == []


# --- the trap: the library's category ranks below every stack-specific signature ----------------
def test_the_tables_rank_below_every_other_signature() -> None:
    assert min(s.priority for s in TABLE.signatures) > signatures.LIBRARY_TABLE_PRIORITY
    # a process's death says how it ended, the library's category why: the death ranks below it
    assert signatures.DEATH_PRIORITY < signatures.LIBRARY_TABLE_PRIORITY
    for prio in (
        signatures.PROGRAM_CODE_PRIORITY,
        signatures.SOURCE_PRIORITY,
        signatures.ERRNO_PRIORITY,
        signatures.KNOWLEDGE_PRIORITY,
    ):
        assert prio > signatures.LIBRARY_TABLE_PRIORITY


@pytest.mark.parametrize(
    ("text", "cause", "sig_prefix"),
    [
        # OpenCV's cannops wraps the runtime's failure: the vendor code under it decides
        (
            "what():  OpenCV(4.10.0) /src/opencv_contrib/modules/cannops/src/cann_call.cpp:97: error: "
            "(-215:Assertion failed) ret == 0 in function 'aclrtMemcpy2dWarpper'\n"
            "EL0014: The operation is unsupported.",
            "chip-unsupported",
            "code-EL0014",
        ),
        # an ONNX Runtime invalid argument, and CANN's shared object missing elsewhere in the log
        (
            "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
            "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : "
            "INVALID_ARGUMENT : Invalid Feed Input Name:x",
            "env-not-sourced",
            "library-",
        ),
        # Paddle's invalid argument wrapping the operator's 561103 (no kernel): the vendor's code decides
        (
            "ValueError: (InvalidArgument) call aclnnAdd failed, error code is 561103 "
            "(at /paddle/backends/npu/kernels/funcs/npu_op_runner.cc:500)",
            "ops-package-missing-or-wrong",
            "",
        ),
        # a failed allocation the library calls ResourceExhausted, and the NPU's own OOM message: the stack's
        (
            "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
            "ResourceExhaustedError: Not enough available npu memory. "
            "(at /paddle/phi/backends/device_base.cc:120)",
            "oom",
            "",
        ),
    ],
)
def test_a_stack_signature_elsewhere_in_the_log_decides(text: str, cause: str, sig_prefix: str) -> None:
    ex = _explain(text)
    assert ex.causes[0].id == cause
    assert not ex.causes[0].signature.startswith("lib-")
    assert ex.causes[0].signature.startswith(sig_prefix)
    assert any(m.id.startswith("lib-") for m in ex.matches)  # still shown, ranked last
    assert ex.matches[-1].id.startswith("lib-")


def test_the_programs_own_code_ranks_above_the_librarys_category() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/app/train.py", line 10, in <module>\n'
        "    main()\n"
        '  File "/home/u/app/train.py", line 7, in main\n'
        "    cfg['batch']\n"
        "KeyError: 'batch'\n"
        "cv2.error: OpenCV(4.10.0) /io/opencv/modules/core/src/alloc.cpp:73: error: (-4:Insufficient memory) "
        "Failed to allocate 1 bytes in function 'OutOfMemoryError'\n"
    )
    ex = _explain(text)
    assert ex.causes[0].signature.startswith("program-code-")
    assert [c.id for c in ex.causes][:2] == ["not-a-version-problem", "oom"]


def test_acl_headers_keep_their_own_signature() -> None:
    ex = _explain("main.cpp:1:10: fatal error: acl/acl.h: No such file or directory")
    assert ex.causes[0].id == "env-not-sourced" and ex.causes[0].signature == "acl-header-not-found"
    # the toolkit's header list (header-cann-toolkit, derived from filelists.yaml) says the same below it
    assert [m.id for m in ex.matches] == [
        "acl-header-not-found",
        "header-cann-toolkit",
        "lib-cc-missing-file",
    ]


# --- hostile input ------------------------------------------------------------------------------
def _forms() -> list[Any]:
    return [f for t in K.lib_tables for f in t.forms]


@pytest.mark.parametrize("form", _forms(), ids=lambda f: f.id)
def test_each_form_is_linear_and_holds_its_anchor(form: Any) -> None:
    assert linre.ambiguity(form.regex, mode="search") is None
    compiled = linre.compile(form.regex)
    for filler in (
        ": error: (-" * 100_000,
        "[ONNXRuntimeError] : 1" * 50_000,
        form.anchor * max(1, 1_000_000 // len(form.anchor)),
        "a" * 1_000_000,
    ):
        m = compiled.search(filler)
        assert m is None or form.anchor in m.group(0)


def test_a_megabyte_line_of_one_anchor_is_read_in_bounds() -> None:
    line = ": error: (-215:" * 60_000 + "\n"
    assert _top(line)[0] in (None, "not-a-version-problem")


# --- validation -------------------------------------------------------------------------------
def _raw() -> dict[str, Any]:
    from cannenv.records import load_yaml

    return dict(load_yaml(libtables.shipped_path().read_text()))


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        (lambda d: d["tables"][0]["rows"][0].update(source="nowhere"), "unknown source"),
        (lambda d: d["tables"][0]["rows"][1].update(key="0"), "names two rows"),
        (lambda d: d["tables"][1]["forms"][0].update(regex="\\[ONNXRuntimeError\\] : [0-9]"), "captures"),
        (lambda d: d["tables"][1]["forms"][0].update(regex="(?=x)([0-9])"), "regex"),
        (lambda d: d["tables"][4]["forms"][0].update(row="NOPE"), "unknown row"),
    ],
)
def test_a_bad_table_is_refused_by_field(mutate: Any, problem: str) -> None:
    import copy

    d = copy.deepcopy(_raw())
    mutate(d)
    with pytest.raises(InputError) as exc:
        libtables.parse(d, source="libtables.yaml")
    assert problem in exc.value.message


def test_an_unknown_cause_is_refused_with_the_knowledge() -> None:
    from dataclasses import replace

    bad = replace(K.lib_tables[0], rows=(replace(K.lib_tables[0].rows[0], causes=("no-such-cause",)),))
    with pytest.raises(InputError, match="unknown cause 'no-such-cause'"):
        signatures._check_knowledge(replace(K, lib_tables=(bad,)), _signature_model())


def _signature_model() -> Any:
    from cannenv.explain.models import SignatureFile, read_yaml

    _, raw = read_yaml(
        signatures.shipped_path(), what="signature file", max_bytes=signatures.MAX_SIGNATURE_BYTES
    )
    return SignatureFile.model_validate(raw)


# --- cost on a short log ------------------------------------------------------------------------
def test_the_tables_are_read_only_when_a_form_found_something() -> None:
    """In the validated-table cache the tables are a part read on first use (cannenv.explain.lazy):
    a log with none of their forms never reads them."""
    import pickle

    cached = pickle.loads(pickle.dumps(TABLE, pickle.HIGHEST_PROTOCOL))
    k = cached.knowledge
    assert k is not None and not k.lib_tables.loaded

    def explain(text: str) -> judge.Explanation:
        s = Scanner(cached, total_hint=len(text))
        s.feed(text.encode())
        s.end_input()
        return judge.explain(cached, s.result())

    assert (
        explain("RuntimeError: call aclnnAdd failed, error code is 561103").causes[0].signature
        == "ops-561103"
    )
    assert not k.lib_tables.loaded
    ex = explain("cv2.error: OpenCV(4.1.0) a.cpp:1: error: (-215:Assertion failed) x in function 'f'")
    assert ex.causes[0].signature == "lib-opencv-stsassert" and k.lib_tables.loaded
