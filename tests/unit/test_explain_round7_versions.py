"""Round 7's version and installation kinds (issue 29), each on its product's own message and a near miss.

Every kind comes from its product's source (signatures.yaml): the CANN runtime's device count through
the driver (driver.cc, api_impl.cc) and torch_npu's (NPUFunctions.cpp); the runtime samples' dlsym
lookup of a newer ACL API; the binding generators' refusal of a call's argument types (pybind11,
nanobind); sglang's KV cache pool sizing; a header the CANN toolkit installs (the package XMLs'
include folder, filelists.yaml) not found by the compiler; msDebug's start without the driver's
debug channel. Each
new regex also meets a long hostile line: it runs on the linear engine (RE2), and the whole explain
pipeline answers it. No timed assertions.
"""

from __future__ import annotations

from typing import Any

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()


def _top(text: str) -> str | None:
    ex = _explain(text)
    return ex.causes[0].id if ex.causes else None


def _ids(text: str) -> list[str]:
    return [m.id for m in _explain(text).matches]


def _regexes(sig_id: str) -> list[Any]:
    sig = next(s for s in TABLE.signatures if s.id == sig_id)
    return [p for p in (*sig.any, *sig.all) if p.rx is not None]


# --- the NPUs could not be counted through the driver ----------------------------------------------
# driver.cc's format at 681ef76 and the earlier one, api_impl.cc's, AscendCL's and torch_npu's lines
RT_NEW = (
    "[ERROR] RUNTIME(846,python):2025-04-23 [driver.cc:72]846 GetDeviceCount:"
    "Call driver api drvGetDevNum failed, drvRetCode=7.\n"
)
RT_OLD = (
    "[ERROR] RUNTIME(38734,python3): [driver.cc:64]38734 GetDeviceCount:Call drvGetDevNum, drvRetCode=7.\n"
)
RT_SCAN = (
    "[ERROR] RUNTIME(12,python3): [api_impl.cc:3417]12 GetDeviceCount:"
    "[drv api] drvGetDevNum failed: drvRetCode=1!\n"
)
ACL = (
    "[ERROR] ASCENDCL(846,python): [device.cpp:342]846 "
    "aclrtGetDeviceCount: get device count failed, runtime result = 507899.\n"
)
PTA = (
    "[ERROR] APP(846,python): [log_inner.cpp:76]846 device_count:25: "
    '"[PTA]:"get device count of NPU failed""\n'
)


@pytest.mark.parametrize("text", [RT_NEW, RT_OLD, RT_SCAN, PTA, RT_OLD + ACL + PTA])
def test_the_npus_not_counted_through_the_driver_are_not_visible(text: str) -> None:
    assert _top(text) == "device-not-visible"
    assert "device-count-failed" in _ids(text)


def test_the_device_count_ranks_above_the_drv_internal_error_code_beside_it() -> None:
    # 507899 (drv internal error) alone keeps its own reading; the device count says which call failed
    assert _top(ACL.replace("aclrtGetDeviceCount: get device count failed", "aclrtMalloc failed")) != (
        "device-not-visible"
    )
    assert _top(RT_OLD + ACL) == "device-not-visible"


def test_the_count_refused_because_the_devices_are_occupied_is_another_process() -> None:
    text = RT_OLD.replace("drvRetCode=7.", "drvRetCode=87.") + ACL
    assert _top(text) == "device-busy"
    assert "device-count-occupied" in _ids(text)
    # 870 or 8 is not 87
    assert "device-count-occupied" not in _ids(RT_OLD.replace("drvRetCode=7.", "drvRetCode=870."))
    assert "device-count-occupied" not in _ids(RT_OLD.replace("drvRetCode=7.", "drvRetCode=8."))


def test_other_driver_calls_are_not_the_device_count() -> None:
    other = (
        "[ERROR] RUNTIME(1,python3): [npu_driver.cc:1]1 "
        "Call driver api halGetDeviceInfo failed, drvRetCode=7.\n"
    )
    assert "device-count-failed" not in _ids(other)
    assert "device-count-failed" not in _ids("drvGetDevNum returned 2 devices\n")


# --- an ACL API the runtime library loaded does not export -----------------------------------------
def test_an_acl_api_not_exported_by_the_runtime_is_a_cann_too_old() -> None:
    for name in ("aclrtCreateStreamConfigHandle", "aclrtSetStreamConfigOpt", "aclmdlRICaptureBegin"):
        text = f"[WARN]  Symbol {name} is not exported by the current Runtime library.\n"
        assert _top(text) == "cann-too-old"
    # a symbol that is not an ACL API is not this reading
    not_acl = "Symbol my_kernel is not exported by the current Runtime library.\n"
    assert "acl-api-not-exported" not in _ids(not_acl)


# --- a compiled binding refusing its arguments' types ----------------------------------------------
PYBIND = (
    "TypeError: get_binding_shape(): incompatible function arguments. "
    "The following argument types are supported:\n"
    "    1. (self: tensorrt.tensorrt.IExecutionContext, binding: int) -> tensorrt.tensorrt.Dims\n"
    "\n"
    "Invoked with: <tensorrt.tensorrt.IExecutionContext object at 0x7fce27c259b0>, 'images'\n"
)
NANOBIND = (
    "TypeError: simulate(): incompatible function arguments. The following argument types are supported:\n"
    "    1. simulate(self, arg: numpy.ndarray[], /) -> numpy.ndarray[]\n"
    "\n"
    "Invoked with types: opticks_CSGOptiX._CSGOptiXService, ndarray\n"
)


@pytest.mark.parametrize("text", [PYBIND, NANOBIND])
def test_a_binding_refusing_its_arguments_reads_as_the_extensions_release_first(text: str) -> None:
    ex = _explain(text)
    assert [c.id for c in ex.causes[:2]] == ["third-party-library", "not-a-version-problem"]
    assert ex.matches[0].id == "binding-incompatible-arguments"


def test_a_python_call_with_wrong_arguments_is_not_the_binding_reading() -> None:
    # CPython's own TypeError of a Python function is the call-signature reading, not a binding's
    text = "TypeError: forward() got an unexpected keyword argument 'indices'\n"
    assert "binding-incompatible-arguments" not in _ids(text)
    assert "binding-incompatible-arguments" not in _ids("incompatible function arguments were given\n")


# --- sglang's KV cache pool sizing --------------------------------------------------------------------
def test_sglang_finding_no_room_for_the_kv_cache_is_out_of_memory() -> None:
    for tail in ("", " Current value: mem_fraction_static=0.6"):
        text = f"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.{tail}\n"
        assert _top(text) == "oom"
    assert "sglang-kv-pool-no-memory" not in _ids("RuntimeError: Not enough memory.\n")


# --- msDebug without the driver's debug channel ---------------------------------------------------------
@pytest.mark.parametrize(
    "said",
    [
        "msdebug failed to initialize. please install HDK.",
        "msdebug failed to initialize. please install HDK with --debug before debugging.",
    ],
)
def test_msdebug_without_the_drivers_debug_channel_is_the_driver(said: str) -> None:
    ex = _explain(said + "\n[ERROR] error code: 0x20102\n")
    assert [c.id for c in ex.causes[:2]] == ["driver-too-old", "device-not-visible"]


def test_another_tool_asking_for_the_hdk_is_not_msdebug() -> None:
    assert "msdebug-init-failed" not in _ids("msprof failed to initialize. please install HDK.\n")


# --- a header the CANN toolkit installs, not found by the compiler ---------------------------------
GCC_MISS = (
    "/home/op_host/add_custom_tiling.h:6:10: "
    "fatal error: register/tilingdata_base.h: No such file or directory\n"
    ' #include "register/tilingdata_base.h"\n'
    "compilation terminated.\n"
)


@pytest.mark.parametrize(
    "line",
    [
        GCC_MISS,
        "main.cpp:1:10: fatal error: 'exe_graph/runtime/tiling_context.h' file not found\n",  # Clang/BiSheng
        "op.cc:3:10: fatal error: aclnn/aclnn_base.h: No such file or directory\n",  # opbase
        "x.cc:2:10: fatal error: ge/ge_api.h: No such file or directory\n",  # ge-compiler
        "y.cc:2:10: fatal error: hccl/hccl.h: No such file or directory\n",  # hccl
    ],
)
def test_a_header_of_the_cann_toolkit_not_found_is_the_cann_environment(line: str) -> None:
    ex = _explain(line)
    assert ex.causes[0].id == "env-not-sourced"
    assert "header-cann-toolkit" in [m.id for m in ex.matches]


def test_a_header_of_no_cann_list_is_not_the_cann_environment() -> None:
    for name in ("torch/extension.h", "register/my_own_header.h", "securec.h", "Python.h"):
        text = f"a.cc:1:10: fatal error: {name}: No such file or directory\n"
        assert "header-cann-toolkit" not in _ids(text)


# --- each new regex on a long hostile line --------------------------------------------------------------
HOSTILE = {
    "device-count-failed": "drvGetDevNum" + " " * 200_000 + "drvRetCode=",
    "device-count-occupied": "drvGetDevNum, drvRetCode=" + "8" * 200_000,
    "acl-api-not-exported": "Symbol acl" + "a" * 200_000 + " is not exported",
    "binding-incompatible-arguments": "f(): incompatible function arguments" + ". The" * 40_000,
}


def test_the_header_extractor_runs_on_the_linear_engine_on_a_long_hostile_line() -> None:
    k = TABLE.knowledge
    assert k is not None
    e = next(x for x in k.extractors if x.id == "missing-header")
    rx = linre.compile(e.regex)
    assert rx.engine == "re2"
    line = "fatal error: " + "a/" * 100_000 + ".h"
    assert rx.search(line) is None
    _explain(line + "\n")


@pytest.mark.parametrize("sig_id", sorted(HOSTILE))
def test_each_new_regex_runs_on_the_linear_engine_on_a_long_hostile_line(sig_id: str) -> None:
    line = HOSTILE[sig_id]
    patterns = _regexes(sig_id)
    assert patterns
    for p in patterns:
        rx = linre.compile(p.rx)
        assert rx.engine == "re2"
        assert rx.search(line) is None
    _explain(line + "\n")
