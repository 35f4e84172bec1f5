"""A C/C++ compile error inside a project's own source (knowledge.yaml ``cc-code`` extractors, the
judge's ``cc-project-code``): GCC's and Clang's diagnostics about a declaration (``FILE:LINE:COL:
error: MESSAGE``, GCC manual "Diagnostic Message Formatting Options"; the messages of GCC's cp/typeck.cc,
cp/call.cc, cp/lex.cc and Clang's DiagnosticSemaKinds.td), read as the project's code when the
erroring file and the files its ``note:`` / ``In file included from`` lines name are the project's own
tree; a CANN install, a header of the CANN toolkit's lists or a system / third-party include folder
named for it is not this reading. Each new regex also meets a long hostile line on the linear engine.
"""

from __future__ import annotations

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()

# real forms, each as the compiler prints it (the file and the names are a project's own)
GCC_ASSIGN = (
    "/app/ggml/src/ggml-cann.cpp:1154:13: error: no match for 'operator=' (operand types are "
    "'ggml_backend_buffer_type' and '<brace-enclosed initializer list>')\n"
    " 1154 |             };\n"
    "In file included from /app/ggml/src/ggml-cann.cpp:34:\n"
    "/app/ggml/src/ggml-backend-impl.h:29:12: note: candidate: 'ggml_backend_buffer_type& "
    "ggml_backend_buffer_type::operator=(const ggml_backend_buffer_type&)'\n"
)
FORMS = [
    GCC_ASSIGN,
    "src/layers/elementwise.cpp:195:21: error: \u2018struct cv::dnn::GeluFunctor\u2019 has no member named "
    "\u2018initCannOp\u2019; did you mean \u2018initKernel\u2019?\n",  # GCC, UTF-8 quotes
    "27.81 /app/src/backend.cpp:1230:19: error: 'struct buffer_i' has no member named 'get_name'; "
    "did you mean 'get_base'?\n",
    "src/op.cc:12:5: error: 'MakeTiling' was not declared in this scope; did you mean 'MakeTilings'?\n"
    "src/tiling.h:8:6: note: 'MakeTilings' declared here\n",
    "src/op.cc:40:7: error: no matching function for call to 'Runner::Run(int&)'\n"
    "src/runner.h:22:10: note: candidate: 'void Runner::Run(int, int)'\n",
    "src/op.cc:41:20: error: invalid conversion from 'const char*' to 'int' [-fpermissive]\n",
    "src/op.cc:50:9: error: too many arguments to function 'void helper(int)'\n",
    "src/op.cc:51:9: error: too few arguments to function 'void helper(int, int)'\n",
    "src/op.cc:60:12: error: no member named 'get_name' in 'struct buffer_i'\n",  # Clang
    "src/op.cc:61:3: error: use of undeclared identifier 'MakeTiling'; did you mean 'MakeTilings'?\n"
    "src/tiling.h:8:6: note: 'MakeTilings' declared here\n",  # Clang
    "src/op.cc:62:3: error: no matching function for call to 'helper'\n",  # Clang
    "src/op.cc:63:9: error: no viable overloaded '='\n",  # Clang
    "src/op.cc:64:15: error: too many arguments to function call, expected 1, have 2\n",  # Clang
]


@pytest.mark.parametrize("text", FORMS)
def test_a_compile_error_on_the_projects_own_declaration_is_the_projects_code(text: str) -> None:
    ex = _explain(text)
    assert "cc-project-code" in [m.id for m in ex.matches]
    assert ex.causes[0].id == "not-a-version-problem"


def test_the_reading_ranks_as_the_programs_own_code() -> None:
    sig = next(s for s in _explain(GCC_ASSIGN).matches if s.id == "cc-project-code")
    assert sig.priority == signatures.PROGRAM_CODE_PRIORITY


@pytest.mark.parametrize(
    "text",
    [
        # the declaration the note names is a CANN header (an install, the toolkit)
        "op.cc:40:7: error: no matching function for call to 'aclrtMalloc(void**, int)'\n"
        "/usr/local/Ascend/ascend-toolkit/latest/include/acl/acl_rt.h:380:25: note: candidate: "
        "'aclError aclrtMalloc(void**, size_t, aclrtMemMallocPolicy)'\n",
        "In file included from /home/u/Ascend/cann-8.5.0/include/register/op_def.h:12,\n"
        "                 from src/op_host/add.cpp:2:\n"
        "src/op_host/add.cpp:30:5: error: 'class ops::OpDef' has no member named 'SetTiling'\n",
        # a header of the toolkit's lists, wherever the build found it
        "In file included from build/include/register/tilingdata_base.h:9:\n"
        "src/add.cpp:30:5: error: 'struct TilingDef' has no member named 'SaveToBuffer'\n",
        # a system / third-party header
        "src/a.cc:5:3: error: no matching function for call to 'foo(int)'\n"
        "/usr/include/c++/11/bits/stl_vector.h:1187:7: note: candidate: 'void push_back()'\n",
        "src/a.cc:6:3: error: no member named 'Tensor' in namespace 'at'\n"
        "/usr/lib/python3/dist-packages/torch/include/ATen/core/Tensor.h:3:1: note: declared here\n",
        # the erroring file itself is in the CANN install
        "/usr/local/Ascend/ascend-toolkit/latest/include/acl/acl_base.h:10:1: error: "
        "'x' was not declared in this scope\n",
    ],
)
def test_a_declaration_outside_the_projects_tree_is_not_this_reading(text: str) -> None:
    assert "cc-project-code" not in [m.id for m in _explain(text).matches]


def test_other_compile_errors_are_not_this_reading() -> None:
    for text in (
        "src/a.cc:1:10: fatal error: mylib/x.h: No such file or directory\n",
        "src/a.cc:5:3: error: expected ';' before '}' token\n",
        "src/a.cc:5:3: warning: 'x' was not declared in this scope\n",
        # a name no declaration provides, and no note names one: the message alone does not tell the
        # project's mistake from a library's header that no longer declares it
        "src/a.cc:5:3: error: 'aclrtFoo' was not declared in this scope\n",
        "k.cpp:357:9: error: use of undeclared identifier 'rope_half'; did you mean 'rope___cce_half'?\n",
    ):
        assert "cc-project-code" not in [m.id for m in _explain(text).matches]


def test_each_cc_regex_runs_on_the_linear_engine_on_a_long_hostile_line() -> None:
    k = TABLE.knowledge
    assert k is not None
    cc = [x for x in k.extractors if x.kind == "cc-code"]
    assert len(cc) >= 5
    for e in cc:
        rx = linre.compile(e.regex)
        assert rx.engine == "re2"
        for line in (
            "a:1:1: error: '" + "x" * 200_000,
            "In file included from " + "a/" * 100_000,
            e.anchor + ":" * 200_000,
        ):
            rx.search(line)
    _explain("x.cc:1:1: error: '" + "a b " * 50_000 + "' has no member named\n")
