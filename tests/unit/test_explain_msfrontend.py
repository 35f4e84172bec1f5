"""`cannenv explain`: MindSpore's graph compiler's own report of a failed static analysis (issue 29).

``matrices/explain/libtables.yaml`` table ``mindspore-frontend``: GetEvalStackInfo (pipeline/jit
trace.cc) appends ``(See file 'PATH' for more details. Get instructions about `analyze_fail.ir` at
…)`` to the exception only when the graph build fails inside the static analysis of the network's
graph (``analyze_fail.dat`` in 2.0). Tested on the source's wording of both releases, near misses
(the backend's ``The function call stack:`` without the file, the tutorial's own mention), the
ranking trap and hostile input.
"""

from __future__ import annotations

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
FRONT = {t.id: t for t in K.lib_tables}["mindspore-frontend"]
SIG = "lib-mindspore-frontend-analyze-fail"


def _ids(text: str) -> list[str]:
    return [m.id for m in _explain(text).matches]


@pytest.mark.parametrize(
    "text",
    [
        # 2.x trace.cc: oss << " (See file '" << file_name << "' for more details. Get instructions about
        # `analyze_fail.ir` at https://www.mindspore.cn/search?inputValue=analyze_fail.ir)"
        "RuntimeError: The graph build stopped here.\n"
        " (See file '/job/rank_0/om/analyze_fail.ir' for more details. Get instructions about "
        "`analyze_fail.ir` at https://www.mindspore.cn/search?inputValue=analyze_fail.ir)\n",
        # 2.0: "The function call stack (See file '…' … `analyze_fail.dat` at …):"
        "RuntimeError: Unsupported syntax 'Raise'.\n"
        "The function call stack (See file '/r/rank_0/om/analyze_fail.dat' for more details. Get "
        "instructions about `analyze_fail.dat` at https://www.mindspore.cn/search?inputValue=analyze_fail.dat):\n",
    ],
)
def test_the_report_is_the_front_ends_own_compile_failure(text: str) -> None:
    ex = _explain(text)
    assert SIG in _ids(text)
    assert ex.causes[0].id == "not-a-version-problem"
    assert ex.causes[0].why.startswith("MindSpore's graph compiler's own table")
    assert any("error_analysis/error_scenario_analysis.md" in s.url for s in ex.causes[0].sources)


@pytest.mark.parametrize(
    "text",
    [
        "The function call stack:\nIn file /x/grad_array_ops.py(700)/        dx = input_grad(dout)/",
        "Get instructions about analyze_fail.ir at https://www.mindspore.cn/search",  # no file reported
        "see analyze_fail.ir for more details",
        "' for more details. Get instructions about `analyze_fail.txt`",
    ],
)
def test_near_misses_are_not_the_form(text: str) -> None:
    assert SIG not in _ids(text)


def test_a_version_signature_elsewhere_in_the_log_decides() -> None:
    text = (
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
        " (See file '/j/rank_0/om/analyze_fail.ir' for more details. Get instructions about "
        "`analyze_fail.ir` at https://www.mindspore.cn/search?inputValue=analyze_fail.ir)\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "env-not-sourced"
    assert ex.matches[-1].id == SIG


def test_the_form_is_linear_on_hostile_lines() -> None:
    (form,) = FRONT.forms
    assert linre.ambiguity(form.regex, mode="search") is None
    compiled = linre.compile(form.regex)
    for filler in (form.anchor * (1_000_000 // len(form.anchor)), "'" * 1_000_000, "analyze_fail." * 80_000):
        m = compiled.search(filler)
        assert m is None or form.anchor in m.group(0)
    many = " (See file 'a' for more details. Get instructions about `analyze_fail.ir` at x)\n" * 30_000
    assert _ids(many) == [SIG]


# --- the graph validator: what the compiled graph may not keep (validator.cc, the JIT Fallback FAQ) ----
@pytest.mark.parametrize(
    "text",
    [
        # ValidateValueNode: "Should not use Python object in runtime, node: " << node->DebugString() << ...
        "RuntimeError: mindspore/ccsrc/pipeline/jit/validator.cc:150 ValidateValueNode] Should not use "
        "Python object in runtime, node: ValueNode<InterpretedObject> InterpretedObject: 1",
        # CheckDeadNodeInOutputRecursively
        "RuntimeError: Function in output is not supported. Please check your code. In file net.py(12)",
    ],
)
def test_the_validators_refusals_are_the_programs_syntax(text: str) -> None:
    ex = _explain(text)
    assert ex.causes[0].id == "not-a-version-problem"
    assert ex.causes[0].signature == "mindspore-graph-validator"


@pytest.mark.parametrize(
    "text",
    [
        "Should not use Python objects in the runtime config",  # other words
        "Function in output is supported. Please check your code.",
    ],
)
def test_the_validators_near_misses(text: str) -> None:
    assert "mindspore-graph-validator" not in _ids(text)


def test_a_megabyte_of_validator_lines_is_one_match() -> None:
    text = "Should not use Python object in runtime, node: x\n" * 20_000
    assert _ids(text) == ["mindspore-graph-validator"]
