"""`cannenv explain`: a failed check printed by a program or tool (issue 29).

matrices/explain/failed_checks.yaml holds the forms in which a check of what a program was given is
printed when it fails, each from its printer's own source. Each form is tested on its printer's own
wording (the format string its source writes), a line that names a version, a package, a library,
the driver, a chip, memory or a timeout must step aside (another cause's reading), a warning's line
and prose about an error are not read, the reading ranks below every other one but a process's
death, is never confirmed, and every pattern is linear on a hostile line.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv import linre
from cannenv.errors import InputError
from cannenv.explain import failedchecks, signatures
from cannenv.explain.scan import Value
from cannenv.report import Finding
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None and K.failed_checks is not None
FC = K.failed_checks
FORMS = {f.id: f for f in FC.forms}


def _checks(text: str) -> list[str]:
    return [m.id for m in _explain(text).matches if m.id.startswith("failed-check-")]


def _top(text: str) -> tuple[str | None, str | None]:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


# --- the data ----------------------------------------------------------------------------------
def test_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "failed_checks.schema.json").read_text())
    assert shipped == failedchecks.json_schema(), (
        "regenerate: python -m cannenv.explain.failedchecks --schema"
        " > matrices/explain/failed_checks.schema.json"
    )


def test_every_form_and_step_aside_row_is_sourced_and_names_known_causes() -> None:
    for f in FC.forms:
        title, url = K.sources[f.source]
        assert url.startswith("https://") and title
    for row in FC.step_aside:
        assert all(c in TABLE.causes for c in row.causes), row
    assert {"version", "package", "library", "driver", "chip"} <= {r.id for r in FC.step_aside}


def test_a_form_without_its_group_is_refused() -> None:
    import yaml

    raw = yaml.safe_load(failedchecks.shipped_path().read_text())
    raw["forms"][0]["regex"] = "Assertion `[^\\n]{1,400}"
    with pytest.raises(InputError, match="one group"):
        failedchecks.parse(raw, source="t")
    raw = yaml.safe_load(failedchecks.shipped_path().read_text())
    raw["forms"][0]["regex"] = "(a)\\1"  # a backreference: not in RE2's subset
    with pytest.raises(InputError):
        failedchecks.parse(raw, source="t")
    raw = yaml.safe_load(failedchecks.shipped_path().read_text())
    raw["forms"][0]["source"] = "nowhere"
    with pytest.raises(InputError, match="unknown source"):
        failedchecks.parse(raw, source="t")


# --- each printer's own wording ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "form"),
    [
        # glibc assert/assert.c: "%s%s%s:%u: %s%sAssertion `%s' failed.\n"
        ("infer: main.c:10: main: Assertion `a == b' failed.", "glibc-assert"),
        ("python3: ../src/tiling.cpp:88: int Tile(int): Assertion `blockDim <= 48' failed.", "glibc-assert"),
        # PyPTO's DEV_ASSERT / DEV_ASSERT_MSG and its kernels' asserts; TensorRT's reportAssertion
        ("[ERROR] Assertion failed (taskNum > 0): no task for core 3", "assertion-failed"),
        ("Assertion failed: tileSize % 32 == 0", "assertion-failed"),
        # gRPC's GPR_ASSERT: gpr_log(GPR_ERROR, "assertion failed: %s", #x)
        (
            "E0413 20:03:08.764913058 122601 ev_epoll1_linux.cc:88] assertion failed: fd_node->fd >= 0",
            "gpr-assert",
        ),
        # PyPTO tilefwk/error.h: ASSERT "ASSERTION FAILED: " #cond, CHECK "CHECK FAILED: " #cond
        (
            'C++ exception with description "ASSERTION FAILED: vecTile[lastDim] % alignNum == 0',
            "tilefwk-assert",
        ),
        ("CHECK FAILED: shape.size() == 4", "tilefwk-check"),
        # glog: "Check failed: " #condition " "; CHECK_EQ "(v1 vs. v2)"; Abseil's own examples
        ("F1203 10:11:12.123456  4242 model.cc:77] Check failed: dims == 4 (3 vs. 4)", "glog-check"),
        ("Check failed: 2 * x == y (6 vs. 5) oops!", "glog-check"),
        # PyTorch TORCH_CHECK_MSG: "Expected " #cond " to be true, but got false.  (Could this …)"
        (
            "RuntimeError: Expected n_heads % tp_size == 0 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)",
            "torch-check",
        ),
        # TensorRT's logError: "Parameter check failed at: " file "::" fn "::" line ", condition: " msg
        (
            "ERROR [tensorrt_runtime.h:31] log] Parameter check failed at: "
            "optimizationProfile.cpp::setDimensions::119, condition: "
            "std::all_of(dims.d, dims.d + dims.nbDims, [](int32_t x) noexcept { return x >= 0; })",
            "trt-parameter-check",
        ),
        # GoogleTest's EqFailure and CmpHelperOpFailure
        ("Expected equality of these values:", "gtest-eq"),
        ("Expected: (batch) <= (max_batch), actual: 300 vs 256", "gtest-op"),
        # comparisons of a value the program got
        ("[ERROR] label count: 10 class count: 12 not match", "not-match"),
        ("ExpandFunction failed: Tile shape size 1 is not matched the output shape size 2.", "not-match"),
        (
            "AI_FMK  : /conv_base_op_builder.cpp CheckShapeMatch(**)::"
            '"Input Channel 3 does not match weight."',
            "not-match",
        ),
        ("ValueError: the input's rows don't match the labels' rows", "nt-match"),
        (
            "RuntimeError: The size of tensor a (3) must match the size of tensor b (4) "
            "at non-singleton dimension 1",
            "must-match",
        ),
        ("[ERROR] input image size[1579014] is not equal to model input size[3158028]", "not-equal"),
        ("ValueError: the dtype of x is not the same as y's", "not-same"),
        ("ValueError: block_size should be a multiple of 16", "should-be"),
        ("TypeError: the 'axis' must be int, but got float.", "but-got"),
        ("[ERROR] the request's image is larger than max (5242880 vs. 4194304)", "over-max"),
        ("ValueError: seq_len 9000 is larger than the maximum 8192", "over-the-max"),
        ("[ERROR] batch size 300 exceeds the limit 256", "exceeds"),
        ("IndexError: index 7 is out of range", "out-of-range"),
        ("IndexError: index 5 is out of bounds for dimension 0 with size 3", "out-of-bounds"),
        ("ValueError: hidden_size must be divisible by num_heads", "must-be"),
        (
            "log] shapeMachine.cpp (252) - Shape Error in operator(): broadcast with incompatible Dimensions",
            "incompatible",
        ),
        ("ERROR [tensorrt_runtime.h:31] log] x: dimensions not compatible for y", "not-compatible"),
    ],
)
def test_each_form_reads_its_printers_wording(line: str, form: str) -> None:
    assert form in FORMS
    assert f"failed-check-{form}" in _checks(line + "\n")
    # first where nothing else reads the line (MindSpore's own argument check reads its 'should be … but got')
    assert _top(line + "\n")[0] == "not-a-version-problem"


def test_the_why_names_the_check_line() -> None:
    ex = _explain("infer: main.c:10: main: Assertion `a == b' failed.\n")
    top = ex.causes[0]
    assert top.signature == "failed-check-glibc-assert"
    assert "Assertion `a == b' failed." in top.why and "glibc" in top.why
    assert top.sources[0].url.startswith("https://github.com/bminor/glibc/")


# --- what steps aside --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: torch version must be >= 2.1.0",  # a version (word and shape)
        "ValueError: torch must be >= 2.1",  # a version's constraint
        "[ERROR] The driver version does not match the firmware",
        "Check failed: soc_version == SOC_ASCEND910B",  # a chip (soc_version)
        "RuntimeError: Expected torch_npu 2.1.0.post3 but got 2.1.0",  # version numbers
        "[ERROR] the opp kernels package does not match the CANN toolkit",  # a package
        "libascendcl.so does not match the expected ABI",  # a library
        "Assertion `the installed CANN is not compatible' failed.",  # an installation
        "Check failed: device_context: No device found.",  # a device not visible
        "[ERROR] memory usage exceeds the limit",  # memory: oom's reading
        "HCCL: the wait time exceeds the timeout 1800 s",  # a timeout
        "[ERROR] The DDR address of the MTE instruction is out of range",  # an address
        "Check failed: (aclgrphBuildModel(g, o, b) == ge::GRAPH_SUCCESS): 1343266818",  # a callee's status
        "ASSERTION FAILED: ret == 0",  # a callee's return value
        # pybind11: a call's arguments against the binding's signature (two releases' APIs)
        "TypeError: apply_token_bitmask_inplace_cpu(): incompatible function arguments. The following "
        "argument types are supported:",
    ],
)
def test_a_line_naming_what_another_cause_reads_steps_aside(line: str) -> None:
    assert _checks(line + "\n") == []


def test_a_line_another_signature_reads_is_theirs() -> None:
    # MindSpore's validator wording ('should be = 4, but got 3') has its own signature; a library's
    # category (Clang's frame limit) its table's row: the generic reading adds nothing to either
    ex = _explain("ValueError: For 'Conv2D', the 'x' should be = 4, but got 3.\n")
    assert ex.causes[0].signature == "mindspore-argument-check"
    assert not [m for m in ex.matches if m.id.startswith("failed-check-")]
    ex = _explain("kernel.cpp:12:6: error: stack frame size (40960) exceeds limit (32768) in 'my_kernel'\n")
    assert [m.id for m in ex.matches] == ["lib-cc-frame-too-large"]


def test_a_path_is_not_what_a_check_names() -> None:
    line = "[ERROR] /usr/local/Ascend/driver/tools/_check_version.py:3: shape [2,3] does not match [3,2]\n"
    assert _checks(line) == ["failed-check-not-match"]


@pytest.mark.parametrize(
    "line",
    [
        "[WARNING] the shape does not match, padding it",  # a warning's line
        "W1203 10:11:12.123456  4242 model.cc:77] size exceeds the cache, evicting",  # glog's warning
        "UserWarning: the input's dtype is not the same as the weight's",
        "I ran the script but got an error",  # prose about an error, no expectation
        "it should run but got RuntimeError: oops",  # an error after 'but got', not a value
        "the server must be running",  # no relation after 'must be'
    ],
)
def test_prose_and_warnings_are_not_read(line: str) -> None:
    assert _checks(line + "\n") == []


# --- ranking and evidence ----------------------------------------------------------------------
def test_the_reading_ranks_below_every_other() -> None:
    text = (
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
        "infer: main.c:10: main: Assertion `a == b' failed.\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "env-not-sourced"
    assert [m.id for m in ex.matches][-1] == "failed-check-glibc-assert"
    assert (
        signatures.FAILED_CHECK_PRIORITY
        < signatures.LIBRARY_TABLE_PRIORITY
        < signatures.PROGRAM_CODE_PRIORITY
    )
    assert signatures.DEATH_PRIORITY < signatures.FAILED_CHECK_PRIORITY


def test_the_program_s_own_code_ranks_above_a_check_it_printed() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/proj/train.py", line 9, in <module>\n'
        "    main()\n"
        '  File "/home/u/proj/train.py", line 5, in main\n'
        "    assert x == y, 'x must be equal to y'\n"
        "AssertionError: x must be equal to y\n"
    )
    ex = _explain(text)
    assert ex.causes[0].signature.startswith("program-code-")
    assert "failed-check-must-be" in [m.id for m in ex.matches]


def test_it_is_never_confirmed() -> None:
    line = "infer: main.c:10: main: Assertion `a == b' failed.\n"
    failing = [
        Finding(id=cid, status="fail", severity="high", title=cid, detail="broken")
        for cid in sorted({c for cause in TABLE.causes.values() for c in cause.checks})
    ]
    ex = _explain(line, findings=failing)
    ours = [c for c in ex.causes if c.signature == "failed-check-glibc-assert"]
    assert ours and all(c.status != "confirmed" and c.tie is None for c in ours)


def test_one_reading_per_form_from_its_first_fitting_line() -> None:
    text = (
        "[ERROR] the driver version does not match\n"  # steps aside
        "[ERROR] shape [2] does not match [3]\n"
        "[ERROR] dtype fp16 does not match fp32\n"
    )
    ex = _explain(text)
    ours = [m for m in ex.matches if m.id == "failed-check-not-match"]
    assert len(ours) == 1 and "shape [2]" in ours[0].evidence[0].lines[0]


# --- hostile input -----------------------------------------------------------------------------
@pytest.mark.parametrize("form", FC.forms, ids=lambda f: f.id)
def test_each_form_is_linear_and_bounded(form: failedchecks.CheckForm) -> None:
    assert linre.ambiguity(form.regex, mode="search") is None
    compiled = linre.compile(form.regex)
    for filler in (form.anchor * max(1, 1_000_000 // len(form.anchor)), "a" * 1_000_000, " x" * 500_000):
        m = compiled.search(filler)
        assert m is None or len(m.group(0)) <= 1_000


def test_the_step_aside_and_level_patterns_are_linear() -> None:
    for p in (*(r.pattern for r in FC.step_aside), *FC.quiet_levels):
        assert linre.ambiguity(p, mode="search") is None, p
        linre.compile(p).search("version_" * 200_000 + "x")  # runs in bounds on a megabyte


def test_a_megabyte_line_of_anchors_is_read_in_bounds() -> None:
    line = "does not match " * 70_000 + "\n"
    assert _top(line)[0] in (None, "not-a-version-problem")


_WORDS = [f.anchor for f in FC.forms] + [
    "version",
    "driver",
    "/usr/lib/",
    "[WARNING]",
    "must",
    "but got an",
    " ",
]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(_WORDS) | st.text(max_size=12), max_size=40))
def test_any_line_of_anchors_and_noise_reads_in_bounds(parts: list[str]) -> None:
    line = "".join(parts).replace("\n", " ")
    values = {
        f.capture: {m.group(1) or "": Value(1, line)}
        for f in FC.forms
        if f.anchor in line and (m := linre.compile(f.regex).search(line)) is not None
    }
    for r in failedchecks.read(FC, values):
        assert r.id.removeprefix("failed-check-") in FORMS
        assert failedchecks.step_aside(FC, line) is None
        assert len(r.title) <= 300
