"""Whose code raised a Python exception (cannenv/explain/pycode.py, ``python_code`` of knowledge.yaml).

Synthetic tracebacks in CPython's own format (traceback.py: ``File "PATH", line N, in FUNC``, the
innermost frame last, then ``Kind: message``) through the real scanner and judge: an exception of a
built-in kind raised in the program's frame on the program's names is ``not-a-version-problem``,
named by its frame and class; raised in the stack's frame, or on the stack's class, it is not; a
call between two of the program's functions no longer reads as two releases; a stack message in the
same log still ranks first. Hostile inputs: a hundred thousand frames, a line of megabytes.
"""

from __future__ import annotations

from cannenv.explain import judge, pycode, signatures
from cannenv.explain.scan import MAX_VALUES, Scanner, ScanResult
from tests.helpers.explaining import known

TABLE = signatures.shipped()
assert TABLE.knowledge is not None and TABLE.knowledge.python_code is not None
CODE = TABLE.knowledge.python_code

SGL = "/sgl-workspace/sglang/python/sglang/srt"
SITE = "/usr/local/python3.11.15/lib/python3.11/site-packages"


def _scan(text: str, **how: int) -> ScanResult:
    data = text.encode()
    s = Scanner(TABLE, total_hint=len(data), **how)
    s.feed(data)
    s.end_input()
    return s.result()


def _explain(text: str) -> judge.Explanation:
    return judge.explain(TABLE, _scan(text))


def _tb(frames: list[tuple[str, int, str]], last: str | None) -> str:
    out = ["Traceback (most recent call last):"]
    for path, line, func in frames:
        out += [f'  File "{path}", line {line}, in {func}', "    do_something()"]
    if last is not None:
        out.append(last)
    return "\n".join(out) + "\n"


def _top(ex: judge.Explanation) -> tuple[str, str] | None:
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else None


# --- where a frame's file lies -------------------------------------------------------------------
def test_a_frames_package_is_read_from_where_python_installs_it() -> None:
    assert pycode.package_of(f"{SITE}/torch/nn/modules/module.py", CODE) == ("stack", "torch")
    assert pycode.package_of("/usr/lib/python3/dist-packages/torch_npu/npu/utils.py", CODE) == (
        "stack",
        "torch_npu",
    )
    assert pycode.package_of(f"{SITE}/transformers/modeling_utils.py", CODE) == ("installed", "transformers")
    assert pycode.package_of(f"{SITE}/six.py", CODE) == ("installed", "six")
    assert pycode.package_of("/usr/lib/python3.10/json/decoder.py", CODE) == ("stdlib", "json")
    assert pycode.package_of("<frozen runpy>", CODE) == ("stdlib", "<frozen runpy>")
    assert pycode.package_of("<string>", CODE)[0] == "unknown"
    assert pycode.package_of(f"{SGL}/managers/scheduler.py", CODE) == ("program", "sglang")
    assert pycode.package_of("sgl-sglang/python/sglang/srt/x.py", CODE) == ("program", "sglang")
    assert pycode.package_of("/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner.py", CODE) == (
        "stack",
        "vllm_ascend",
    )
    assert pycode.package_of("/home/u/pytorch/torch/_ops.py", CODE) == ("stack", "torch")  # a checkout
    assert pycode.package_of("/usr/local/bin/vllm", CODE) == ("program", "vllm")
    assert pycode.package_of("train.py", CODE) == ("program", "train")
    assert pycode.package_of("C:\\work\\proj\\app\\main.py", CODE) == ("program", "main")


# --- AttributeError ------------------------------------------------------------------------------
def test_an_attribute_error_on_the_programs_class_in_its_frame_is_the_programs_bug() -> None:
    text = _tb(
        [
            (f"{SGL}/managers/scheduler.py", 2854, "update_running_batch"),
            (f"{SGL}/mem_cache/pool.py", 77, "get"),
        ],
        "AttributeError: 'NPUPool' object has no attribute 'kv_buffer'",
    )
    ex = _explain(text)
    assert _top(ex) == ("not-a-version-problem", "program-code-object-attribute")
    why = ex.causes[0].why
    assert f"{SGL}/mem_cache/pool.py:77, in get" in why and "(sglang)" in why and "NPUPool" in why
    assert {s.id for s in ex.causes[0].sources} >= {"cpython-object-c", "py-traceback", "py-site"}
    assert ex.matches[0].evidence[0].lines == (
        "AttributeError: 'NPUPool' object has no attribute 'kv_buffer'",
    )


def test_an_attribute_error_without_frames_decides_only_on_a_class_of_nobody_known() -> None:
    assert _top(_explain("AttributeError: 'NPUPool' object has no attribute 'x'\n")) == (
        "not-a-version-problem",
        "program-code-object-attribute",
    )
    assert _top(_explain("AttributeError: type object 'NPUPool' has no attribute 'x'\n")) == (
        "not-a-version-problem",
        "program-code-type-attribute",
    )
    for cls in ("Tensor", "torch.Tensor", "_OpNamespace", "NoneType", "str"):  # the stack's, Python's
        assert not known(_explain(f"AttributeError: '{cls}' object has no attribute 'x'\n")), cls
    # a module's attribute is the module's release (other signatures), never the program's class
    assert not any(
        m.id.startswith("program-code-")
        for m in _explain("AttributeError: module 'foo' has no attribute 'x'\n").matches
    )


def test_an_attribute_error_on_a_builtin_type_needs_the_programs_frame() -> None:
    text = _tb(
        [("/work/app/run.py", 9, "main")], "AttributeError: 'NoneType' object has no attribute 'shape'"
    )
    ex = _explain(text)
    assert _top(ex) == ("not-a-version-problem", "program-code-object-attribute")
    assert "NoneType is a Python built-in type" in ex.causes[0].why
    assert "py-stdtypes" in {s.id for s in ex.causes[0].sources}


def test_an_exception_raised_in_the_stacks_frame_or_another_package_is_not_the_programs() -> None:
    for path in (f"{SITE}/torch_npu/npu/utils.py", f"{SITE}/transformers/configuration_utils.py"):
        text = _tb(
            [(f"{SGL}/model_executor/model_runner.py", 10, "load"), (path, 20, "inner")],
            "AttributeError: 'NPUPool' object has no attribute 'x'",
        )
        assert not any(m.id.startswith("program-code-") for m in _explain(text).matches), path
        text = _tb([("/work/app/run.py", 9, "main"), (path, 20, "inner")], "KeyError: 'model_type'")
        assert not any(m.id.startswith("program-code-") for m in _explain(text).matches), path


def test_the_standard_librarys_frames_are_passed_over_to_the_code_that_called_them() -> None:
    text = _tb(
        [("/work/app/run.py", 9, "main"), ("/usr/lib/python3.11/copy.py", 172, "deepcopy")],
        "KeyError: 'weight'",
    )
    ex = _explain(text)
    assert _top(ex) == ("not-a-version-problem", "program-code-key-missing")
    assert "/work/app/run.py:9, in main" in ex.causes[0].why


def test_vllm_ascend_is_the_stack_when_vllm_runs_and_the_program_when_its_own_code_runs() -> None:
    last = "AttributeError: 'AscendWorker' object has no attribute 'cache'"
    plugin = "/vllm-workspace/vllm-ascend/vllm_ascend/worker/worker.py"
    under_vllm = _tb([(f"{SITE}/vllm/entrypoints/api_server.py", 5, "main"), (plugin, 40, "init")], last)
    assert not any(m.id.startswith("program-code-") for m in _explain(under_vllm).matches)
    own = _tb(
        [("/vllm-workspace/vllm-ascend/tests/test_worker.py", 3, "test_init"), (plugin, 40, "init")], last
    )
    assert _top(_explain(own)) == ("not-a-version-problem", "program-code-object-attribute")


# --- the other built-in kinds --------------------------------------------------------------------
def test_each_built_in_kind_in_the_programs_frame() -> None:
    frames = [("/work/app/train.py", 30, "main"), ("/work/app/data.py", 12, "load")]
    for last, form in (
        ("KeyError: 'labels'", "key-missing"),
        ("IndexError: list index out of range", "index-out-of-range"),
        ("AssertionError: batch size must be even", "assertion-failed"),
        ("AssertionError", "assertion-failed"),
        (
            "UnboundLocalError: cannot access local variable 'x' where it is not associated with a value",
            "local-unbound",
        ),
        ("UnboundLocalError: local variable 'x' referenced before assignment", "local-unbound"),
        ("ZeroDivisionError: integer division or modulo by zero", "division-by-zero"),
        ("ZeroDivisionError: division by zero", "division-by-zero"),
    ):
        ex = _explain(_tb(frames, last))
        assert _top(ex) == ("not-a-version-problem", f"program-code-{form}"), last
        assert "/work/app/data.py:12, in load" in ex.causes[0].why
        # without a frame these say nothing about whose code it is
        assert not any(m.id.startswith("program-code-") for m in _explain(last + "\n").matches), last


def test_an_exception_kind_outside_the_table_is_not_read() -> None:
    text = _tb([("/work/app/run.py", 9, "main")], "RuntimeError: call aclnnAdd failed")
    assert not any(m.id.startswith("program-code-") for m in _explain(text).matches)


def test_a_division_by_zero_in_the_stacks_frame_is_not_the_programs() -> None:
    site = "/usr/local/lib/python3.11/site-packages"
    frames = [("/work/app/run.py", 9, "main"), (f"{site}/torch_npu/utils/_step.py", 40, "step")]
    text = _tb(frames, "ZeroDivisionError: float division by zero")
    assert not any(m.id.startswith("program-code-") for m in _explain(text).matches)


# --- a call's arguments (TypeError) --------------------------------------------------------------
def test_a_call_between_two_of_the_programs_functions_is_not_two_releases() -> None:
    frames = [
        (f"{SGL}/managers/schedule_batch.py", 1363, "offload_kv_cache"),
        (f"{SGL}/mem_cache/allocator/paged.py", 260, "get_cpu_copy"),
    ]
    ex = _explain(_tb(frames, "TypeError: get_cpu_copy() got an unexpected keyword argument 'mamba_indices'"))
    assert _top(ex) == ("not-a-version-problem", "program-code-unexpected-keyword")
    assert "call-signature-mismatch" not in {m.id for m in ex.matches}  # decided, not shown
    assert "framework-mismatch" not in {c.id for c in ex.causes}
    assert "the callee get_cpu_copy() is the program's own" in ex.causes[0].why
    for last in (
        "TypeError: Pool.get_cpu_copy() missing 1 required positional argument: 'indices'",
        "TypeError: get_cpu_copy() takes 2 positional arguments but 3 were given",
        "TypeError: get_cpu_copy() got multiple values for argument 'indices'",
    ):
        assert _top(_explain(_tb(frames, last)))[1].startswith("program-code-"), last  # type: ignore[index]


def test_a_call_into_a_function_the_program_does_not_show_keeps_the_two_releases_reading() -> None:
    frames = [(f"{SGL}/layers/attention/ring.py", 88, "forward")]
    last = "TypeError: _templated_ring_attention() missing 1 required positional argument: 'mesh'"
    assert _top(_explain(_tb(frames, last))) == ("framework-mismatch", "call-signature-mismatch")
    # no frame at all: the callee's owner is unknown, the existing reading stays
    assert _top(_explain(last + "\n")) == ("framework-mismatch", "call-signature-mismatch")
    # the caller is another installed package (the callee's release is not the program's to fix)
    frames = [("/work/app/run.py", 9, "main"), (f"{SITE}/transformers/trainer.py", 400, "train")]
    last = "TypeError: train() got an unexpected keyword argument 'fsdp'"
    assert _top(_explain(_tb(frames, last))) == ("framework-mismatch", "call-signature-mismatch")
    # a callee of the stack's classes is the stack's, whatever frames the program shows
    frames = [("/work/app/run.py", 9, "Tensor")]
    last = "TypeError: Tensor.npu() got an unexpected keyword argument 'x'"
    assert _top(_explain(_tb(frames, last))) == ("framework-mismatch", "call-signature-mismatch")


# --- ranked below every stack message ------------------------------------------------------------
def test_a_stack_message_in_the_same_log_still_ranks_first() -> None:
    text = (
        _tb([("/work/app/run.py", 9, "main")], "AttributeError: 'Runner' object has no attribute 'x'")
        + "RuntimeError: call aclnnInplaceZero failed, error code is 561103\n"
    )
    ex = _explain(text)
    assert ex.causes[0].signature != "program-code-object-attribute"
    assert "program-code-object-attribute" in {m.id for m in ex.matches}
    lowest = min(
        [s.priority for s in TABLE.signatures] + [signatures.ERRNO_PRIORITY, signatures.SOURCE_PRIORITY]
    )
    assert lowest > signatures.PROGRAM_CODE_PRIORITY
    # the readings' ids are their own (no hand-written signature's: ids are a stable schema)
    hand = {s.id for s in TABLE.signatures}
    assert (
        not {f"program-code-{m.form}" for m in CODE.messages} & hand
        and "program-code-cut-traceback" not in hand
    )


# --- a traceback cut before its exception line ---------------------------------------------------
def test_a_cut_traceback_of_the_programs_frames_alone() -> None:
    frames = [(f"{SGL}/managers/scheduler.py", 2854, "update_running_batch"), (f"{SGL}/pool.py", 260, "get")]
    ex = _explain(_tb(frames, None))
    assert _top(ex) == ("not-a-version-problem", "program-code-cut-traceback")
    assert f"{SGL}/pool.py:260, in get" in ex.causes[0].why
    # one frame is too little; a frame of the stack, another line reporting an error: not read
    assert not _explain(_tb(frames[:1], None)).matches
    assert not _explain(_tb([*frames, (f"{SITE}/torch/_ops.py", 5, "__call__")], None)).matches
    noisy = "[ERROR] 2024-09-20-07:49:24 (PID:759) ERR00100 PTA call acl api failed\n" + _tb(frames, None)
    assert not any(m.id == "program-code-cut-traceback" for m in _explain(noisy).matches)


# --- the extractors: keep the last, linear on hostile input --------------------------------------
def test_the_frame_extractor_keeps_the_innermost_frames_and_the_outermost() -> None:
    n = 5 * MAX_VALUES
    frames = [(f"/work/app/m{i}.py", i, f"f{i}") for i in range(n)]
    r = _scan(_tb(frames, "KeyError: 'k'"))
    inner = list(r.values["py-frame"])
    outer = list(r.values["py-frame-outer"])
    assert len(inner) == len(outer) == MAX_VALUES
    assert inner[-1] == f"/work/app/m{n - 1}.py|{n - 1}|f{n - 1}" and inner[0].startswith(
        f"/work/app/m{n - MAX_VALUES}."
    )
    assert outer[0] == "/work/app/m0.py|0|f0"
    assert list(r.values["py-exception"]) == ["KeyError|'k'"]


def test_a_value_seen_again_is_the_latest() -> None:
    text = "KeyError: 'a'\nIndexError: b\n[rank0]: KeyError: 'a'\n"  # a line repeated is looked at once
    assert list(_scan(text).values["py-exception"]) == ["IndexError|b", "KeyError|'a'"]


def test_hostile_tracebacks_a_hundred_thousand_frames_and_a_line_of_megabytes() -> None:
    frames = [(f"/work/app/m{i % 5000}.py", i, f"f{i}") for i in range(100_000)]
    text = _tb(frames, "AttributeError: 'Runner' object has no attribute 'x'")
    ex = _explain(text)  # more than FULL_SCAN_BYTES: examined around the error-looking places
    assert ex.scan.bytes_read > 4 << 20
    assert _top(ex) == ("not-a-version-problem", "program-code-object-attribute")
    assert "in f99999" in ex.causes[0].why
    long = 'File "' * 300_000 + "x" * (1 << 20) + " AttributeError: " + "'" * 200_000 + "\n"
    ex = _explain(long + 'File "/work/a.py", line 1, in g\nKeyError: 1\n')
    assert _top(ex) == ("not-a-version-problem", "program-code-key-missing")
