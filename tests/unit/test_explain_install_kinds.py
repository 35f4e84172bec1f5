"""`cannenv explain`: version/installation causes read from kinds of evidence (issue 29, round 7).

Each reading is built from the product's own source, never one excerpt's wording: torch's
``caffe2::`` names (c10/util/typeid.h) as torch's namespace, the GNU linker's ``cannot find -lNAME``
(binutils ld/ldfile.c) mapped through the shared-object table, PaddlePaddle as a framework of the
stack (PaddleCustomDevice's NPU plugin), and ais_bench's own version check of its aclruntime
backend, CPython's import message with its location wrapped onto the next line (Rich's traceback),
and a crash inside libstdc++'s C++11-ABI code with NNAL's libraries on gdb's backtrace.
Each is tested on real lines of the form and on a counter-example that must not be read
that way.
"""

from __future__ import annotations

import pytest

from tests.helpers.explaining import explain as _explain


def _top(text: str) -> tuple[str | None, list[str]]:
    ex = _explain(text)
    return (ex.causes[0].id if ex.causes else None), [m.id for m in ex.matches]


# --- caffe2:: is torch's namespace (c10's type registry) --------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "ImportError: /opt/ext/_C.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN6caffe26detail37_typeMetaDataInstance_preallocated_32E",
        "ImportError: /work/build/lib/my_ops.so: undefined symbol: "
        "_ZN6caffe28TypeMeta21_typeMetaDataInstanceIfEEPKNS_6detail12TypeMetaDataEv",
    ],
)
def test_an_extension_missing_a_caffe2_name_was_built_against_another_torch(line: str) -> None:
    top, matches = _top(line + "\n")
    assert top == "framework-mismatch"
    assert "symbol-caffe2" in matches


def test_torch_npu_missing_a_caffe2_name_is_the_torch_pair() -> None:
    line = (
        "ImportError: /usr/local/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so: "
        "undefined symbol: "
        "_ZN6caffe26detail37_typeMetaDataInstance_preallocated_32E\n"
    )
    assert _top(line)[0] == "torch-torch_npu-mismatch"


def test_a_name_of_another_namespace_stays_the_extension_s_own_build() -> None:
    # counter-example: a namespace that only begins like caffe2 is not torch's
    line = "ImportError: /opt/ext/_C.so: undefined symbol: _ZN7caffe2x6detail3fooEv\n"
    top, matches = _top(line)
    assert top == "not-a-version-problem"
    assert "symbol-caffe2" not in matches


# --- the linker's -lNAME mapped through the shared-object table ----------------------------------


@pytest.mark.parametrize(
    ("line", "sig"),
    [
        ("/usr/bin/ld: cannot find -lascendcl", "link-library-libascendcl"),
        ("/usr/bin/ld: cannot find -lhccl", "link-library-libhccl"),
        ("/usr/bin/ld.bfd: cannot find -lruntime", "link-library-libruntime"),
        ("/usr/bin/ld: cannot find -latb", "link-library-libatb"),
    ],
)
def test_a_library_of_a_set_env_package_the_linker_cannot_find_is_the_build_s_environment(
    line: str, sig: str
) -> None:
    text = line + "\ncollect2: error: ld returned 1 exit status\n"
    top, matches = _top(text)
    assert top == "env-not-sourced"
    assert sig in matches
    # the generic link reading is superseded by the mapped one
    assert "link-library-missing" not in matches


@pytest.mark.parametrize(
    "lib",
    [
        "npu_hccl",  # a library of the build itself (Paddle#61172): no package of the map
        "opencv_core",  # a third-party library
        "torch",  # torch's: no set_env.sh puts it on the path
    ],
)
def test_a_library_no_set_env_script_provides_keeps_the_generic_link_reading(lib: str) -> None:
    text = f"/usr/bin/ld: cannot find -l{lib}\ncollect2: error: ld returned 1 exit status\n"
    top, matches = _top(text)
    assert top == "not-a-version-problem"
    assert not [m for m in matches if m.startswith("link-library-lib")]


def test_the_link_reading_is_not_a_loader_reading() -> None:
    # counter-example: the loader's words are the loader's signature, not the linker's
    text = "OSError: libascendcl.so: cannot open shared object file: No such file or directory\n"
    matches = _top(text)[1]
    assert not [m for m in matches if m.startswith("link-library")]


# --- PaddlePaddle is a framework of the stack ---------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "AttributeError: module 'paddle' has no attribute 'is_compiled_with_custom_device'",
        "AttributeError: module 'paddle.device' has no attribute 'get_all_custom_device_type'",
        "AttributeError: module 'paddle_custom_device' has no attribute 'npu'",
        "ImportError: cannot import name 'fused_rms_norm' from 'paddle.incubate.nn.functional' "
        "(/usr/local/lib/python3.9/site-packages/paddle/incubate/nn/functional/__init__.py)",
    ],
)
def test_a_name_missing_from_paddle_is_another_release_of_the_framework(line: str) -> None:
    assert _top(line + "\n")[0] == "framework-mismatch"


def test_a_module_that_only_begins_like_paddle_is_not_paddle() -> None:
    # counter-example: PaddleX / paddleocr are applications on Paddle, not the framework
    top, matches = _top("AttributeError: module 'paddlex' has no attribute 'create_pipeline'\n")
    assert "stack-module-missing-attribute" not in matches
    assert top != "framework-mismatch"


# --- ais_bench's own check of its aclruntime backend --------------------------------------------


@pytest.mark.parametrize("version", ["0.0.1", "None"])
def test_ais_bench_s_aclruntime_warning_is_a_frontend_backend_pair_of_two_releases(version: str) -> None:
    text = (
        "root#  python3 -m ais_bench --model resnet50_bs1.om --loop 2\n"
        f"[WARNING] aclruntime version:{version} is lower please update aclruntime follow any one method\n"
    )
    top, matches = _top(text)
    assert top == "framework-mismatch"
    assert matches == ["ais-bench-aclruntime-too-old"]


def test_a_real_error_beside_the_aclruntime_warning_ranks_first() -> None:
    # counter-example: a warning (ais_bench then runs in its old mode); the error after it decides
    text = (
        "[WARNING] aclruntime version:0.0.1 is lower please update aclruntime follow any one method\n"
        "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    )
    assert _top(text)[0] == "oom"


# --- a crash inside std::__cxx11 code with NNAL on gdb's backtrace ------------------------------

GDB_HEAD = (
    "Program received signal SIGABRT, Aborted.\n"
    "[Switching to Thread 0xfff7aa3a1990 (LWP 41895)]\n"
    "(gdb) bt\n"
    "#0  0x0000ffffbc3850e8 in raise () from /lib64/libc.so.6\n"
    "#1  0x0000ffffbc386760 in abort () from /lib64/libc.so.6\n"
    "#2  0x0000ffffbc3c5048 in __libc_message () from /lib64/libc.so.6\n"
    "#3  0x0000ffffbc3cd58c in _int_free () from /lib64/libc.so.6\n"
)
CXX11_FRAME = (
    "#4  0x0000ffffadd85c08 in std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >::_M_dispose() () from /lib64/libstdc++.so.6\n"
)
REGEX_FRAME = (
    "#4  0x0000ffffadd85c08 in std::__detail::_Compiler<std::__cxx11::regex_traits<char> >::_Compiler("
    "char const*, char const*, std::locale const&, std::regex_constants::syntax_option_type) () from "
    "/lib64/libstdc++.so.6\n"
)
ATB_FRAME = (
    "#5  0x0000ffffa1234567 in atb::OperationBase::Setup(atb::VariantPack const&, unsigned long&, "
    "atb::Context*) () "
    "from /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0/lib/libatb.so\n"
)
PTA_FRAME = (
    "#6  0x0000ffffa2234567 in at_npu::native::OpCommand::Run() () from "
    "/usr/local/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so\n"
)


@pytest.mark.parametrize("inner", [CXX11_FRAME, REGEX_FRAME])
def test_an_abort_inside_cxx11_code_with_nnal_on_the_stack_is_a_mixed_cxx_abi(inner: str) -> None:
    ex = _explain(GDB_HEAD + inner + ATB_FRAME + PTA_FRAME)
    assert [c.id for c in ex.causes][:2] == ["nnal-mismatch", "env-not-sourced"]
    assert ex.matches[0].id == "cxx11-abi-crash-nnal"
    assert [d.name for d in ex.deaths] == ["SIGABRT"]


def test_gdb_s_thread_report_of_a_segfault_is_a_death_too() -> None:
    head = 'Thread 7 "python3" received signal SIGSEGV, Segmentation fault.\n'
    ex = _explain(head + CXX11_FRAME.replace("#4", "#0") + ATB_FRAME)
    assert [d.name for d in ex.deaths] == ["SIGSEGV"]
    assert ex.causes[0].id == "nnal-mismatch"


def test_without_a_frame_of_nnal_the_crash_names_no_cause() -> None:
    # counter-example (round 6's ATB FAQ excerpt is cut here): libc and libstdc++ frames only
    ex = _explain(GDB_HEAD + REGEX_FRAME + PTA_FRAME)
    assert "cxx11-abi-crash-nnal" not in [m.id for m in ex.matches]
    assert [d.name for d in ex.deaths] == ["SIGABRT"]


def test_a_frame_that_only_takes_a_cxx11_string_is_not_inside_that_code() -> None:
    # counter-example: c10::Error's constructor takes a std::__cxx11::basic_string; the crash is not in it
    frame = (
        "#4  0x0000ffffadd85c08 in c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, "
        "std::char_traits<char>, std::allocator<char> >) () from "
        "/usr/local/lib/python3.10/site-packages/torch/lib/libc10.so\n"
    )
    ex = _explain(GDB_HEAD + frame + ATB_FRAME)
    assert "cxx11-abi-crash-nnal" not in [m.id for m in ex.matches]


def test_a_backtrace_without_a_crash_is_no_abi_reading() -> None:
    # counter-example: a breakpoint's backtrace (no signal received): nothing died
    text = (
        "Breakpoint 1, atb::OperationBase::Setup () at operation_base.cpp:120\n(gdb) bt\n"
        + CXX11_FRAME
        + ATB_FRAME
    )
    ex = _explain(text)
    assert "cxx11-abi-crash-nnal" not in [m.id for m in ex.matches]
    assert not ex.deaths


def test_gdb_loading_nnal_s_symbols_is_not_a_frame() -> None:
    # counter-example: gdb's 'Reading symbols from …/libatb.so' names a library, not a frame of the stack
    text = (
        GDB_HEAD + "Reading symbols from /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_0/lib/libatb.so...\n"
    )
    ex = _explain(text + CXX11_FRAME)
    assert "cxx11-abi-crash-nnal" not in [m.id for m in ex.matches]


# --- cannot import name …, the location wrapped onto the next line --------------------------------

RICH_TAIL = (
    "│ ❱  24 from accelerate.utils import is_npu_available, is_xpu_available        │\n"
    "╰──────────────────────────────────────────────────────────────────────────────╯\n"
)


@pytest.mark.parametrize(
    "location",
    [
        "(/usr/local/lib/python3.10/dist-packages/accelerate/utils/__init__.py)",
        "(/root/miniconda3/envs/py39/lib/python3.9/site-packages/transformers/__init__.py)",
    ],
)
def test_an_import_name_whose_installed_location_is_wrapped_is_the_library_s_release(location: str) -> None:
    text = (
        RICH_TAIL
        + "ImportError: cannot import name 'is_npu_available' from 'accelerate.utils' \n"
        + location
        + "\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "third-party-library"
    assert ex.matches[0].id == "import-name-from-installed-library-wrapped"


def test_a_wrapped_location_in_the_program_s_own_tree_is_not_an_installed_library() -> None:
    # counter-example: the module is the program's (its checkout), not an installed package
    text = "ImportError: cannot import name 'helper' from 'utils.tools' \n(/home/u/proj/utils/tools.py)\n"
    ex = _explain(text)
    assert "import-name-from-installed-library-wrapped" not in [m.id for m in ex.matches]


def test_a_message_cut_before_its_location_is_not_read_as_installed() -> None:
    # counter-example: no location at all (the line was cut): whose module it is stays unknown
    text = (
        '  File "/usr/local/python3.10/lib/python3.10/site-packages/vllm/transformers_utils/utils.py", '
        "line 32\n"
        "ImportError: cannot import name '_try_login' from 'modelscope.utils.hf_util'\n"
    )
    ex = _explain(text)
    assert "import-name-from-installed-library-wrapped" not in [m.id for m in ex.matches]


def test_a_stack_package_s_wrapped_name_stays_the_framework_s() -> None:
    # the stack-package reading (priority 13) still ranks above the wrapped third-party one
    text = (
        "ImportError: cannot import name 'AscendFusedMoE' from 'vllm_ascend.ops' \n"
        "(/usr/local/lib/python3.11/site-packages/vllm_ascend/ops/__init__.py)\n"
    )
    assert _explain(text).causes[0].id == "framework-mismatch"
