"""Round 4's kinds of error (issue 29), each on the product's own message and a near miss.

Every kind comes from its product's source (signatures.yaml, the round-4 block): MindSpore's CANN
error-analysis page and FAQ (a device-memory pool the card cannot give: another program holds it;
the 'Ascend Error Message' under a framework wrapper decides), CANN's runtime (a device id outside
the range; the AICPU scheduler's missing KFC function; the toolkit's acl headers), a tool's own
dlopen of a CANN library, flash-attn's TORCH_CHECKs, MindIE's /dev/shm check, MindData's pipeline
messages and torch_npu's porting-guide FAQ. Each new regex also meets a long hostile line: it runs
on the linear engine (RE2), and the whole explain pipeline answers it. No timed assertions.
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


def _regexes(sig_id: str) -> list[Any]:
    sig = next(s for s in TABLE.signatures if s.id == sig_id)
    return [p for p in (*sig.any, *sig.all) if p.rx is not None]


# --- device memory MindSpore cannot take at start: the card is held --------------------------------
MS_OCCUPIED = (
    "RuntimeError: mindspore/ccsrc/runtime/device/ascend/ascend_memory_manager.cc:62 MallocDeviceMemory] "
    "Malloc device memory failed, size[32212254720], ret[207001], Device 6 may be other processes "
    "occupying this card, check as: ps -ef|grep python\n"
    "        rtMalloc execute failed, reason=[driver error:out of memory]"
    "[FUNC:ReportError][FILE:error_message_manage.cc][LINE:566]\n"
)


def test_the_pool_mindspore_takes_at_start_failing_is_a_card_held_by_another_program() -> None:
    assert _top(MS_OCCUPIED) == "device-busy"
    half = (
        "Malloc device memory failed, free memory size is less than half of total memory size.Device 0 "
        "Device MOC total size:65464696832 Device MOC free size:3596279808 may be other processes "
        "occupying this card, check as: ps -ef|grep python\n"
    )
    assert _top(half) == "device-busy"
    # another size is the model (MindSpore's page: a network too large for the device), not this rule
    other = MS_OCCUPIED.replace("32212254720", "4294967296")
    assert "mindspore-card-occupied" not in [m.id for m in _explain(other).matches]


def test_the_ascend_error_message_under_mindsporess_wrapper_decides() -> None:
    # MindSpore's FAQ: under 'Ascend kernel runtime initialization failed' CANN's message says why
    text = (
        " RuntimeError: Ascend kernel runtime initialization failed.\n"
        " EJ0001: Failed to initialize the HCCP process. "
        "Reason: Maybe the last training process is running.\n"
    )
    assert _top(text) == "device-busy"
    # alone, the wrapper still names its causes (mindyolo#236: the memory)
    assert _top("RuntimeError: Ascend kernel runtime initialization failed.\n") == "oom"


# --- a device id outside the range -------------------------------------------------------------------
def test_a_device_id_outside_the_valid_range_is_the_programs_setting() -> None:
    text = (
        "RuntimeError: Device 8 call rtSetDevice failed, ret[107001]. "
        "The details refer to 'Ascend Error Message'.\n"
        "EE1001: The argument is invalid.Reason: Set device failed, invalid device, set device=8, "
        "valid device range is [0, 8)\n"
        "        rtSetDevice execute failed, reason=[device id error]\n"
    )
    ex = _explain(text)
    assert ex.causes[0].id == "not-a-version-problem"
    assert "device-not-visible" in [c.id for c in ex.causes]
    # the runtime's error reference words it another way: the same rule
    ref = (
        "The argument is invalid.Reason: Invalid device ID 8. Set drv devId to 8. "
        "The valid device range is [0, 7).\n"
    )
    assert _top(ref) == "not-a-version-problem"


# --- CANN's headers and libraries not found ---------------------------------------------------------
def test_an_acl_header_not_found_is_the_cann_environment() -> None:
    assert _top("main.cpp:1:10: fatal error: acl/acl.h: No such file or directory\n") == "env-not-sourced"
    assert _top("x.cc:3:10: fatal error: acl/acl_rt.h: No such file or directory\n") == "env-not-sourced"
    # another project's header is not CANN's (left to other rules)
    assert _top("fatal error: Python.h: No such file or directory\n") is None


def test_a_tool_that_loads_a_cann_library_itself_and_fails_is_the_cann_environment() -> None:
    line = (
        "Failed to load the libascendcl.so dynamic library. Check the environment configuration dependency.\n"
    )
    assert _top(line) == "env-not-sourced"
    # a library none of the tables map is a third party's
    assert _top("Failed to load the libfoo.so dynamic library.\n") == "third-party-library"


# --- flash-attn's own checks ------------------------------------------------------------------------
def test_flash_attn_on_a_gpu_older_than_ampere_is_the_chip() -> None:
    assert _top("RuntimeError: FlashAttention only supports Ampere GPUs or newer.\n") == "chip-unsupported"
    dtype = "RuntimeError: FlashAttention only support fp16 and bf16 data type\n"
    assert _top(dtype) == "not-a-version-problem"
    line = "RuntimeError: FlashAttention forward only supports head dimension at most 256\n"
    assert _top(line) == "not-a-version-problem"


# --- MindIE's /dev/shm -------------------------------------------------------------------------------
def test_mindie_short_of_shared_memory_is_the_containers_shm() -> None:
    line = (
        "[2025-03-10 20:26:36.604+08:00] [324] [325] [mindie-server] [ERROR] [share_memory.cpp:172] : "
        "[MIE04E120407] [model_backend] Shared memory available is not enough on the filesystem.\n"
    )
    ex = _explain(line)
    assert ex.causes[0].id == "not-a-version-problem" and "shm" in ex.causes[0].why


# --- MindData's pipeline ------------------------------------------------------------------------------
def test_mindspore_data_pipeline_messages_are_the_users_pipeline() -> None:
    assert _top("[ERROR] Execute user Python code failed, check 'Python Call Stack' above.\n") == (
        "not-a-version-problem"
    )
    crop = "[ERROR] map operation: [Crop] failed. Crop: Crop height dimension: 8 exceeds image height: 3.\n"
    assert _top(crop) == "not-a-version-problem"
    slow = (
        "[WARNING] MD(90635,fffdf0ff91e0,python):2023-03-25-15:29:14.801.601 [mindspore/ccsrc/minddata/"
        "dataset/engine/datasetops/source/generator_op.cc:220] operator()] Bad performance attention,\n"
    )
    assert _top(slow) == "not-a-version-problem"


# --- the AICPU scheduler's missing KFC function -------------------------------------------------------
def test_a_kfc_function_the_device_lacks_is_cann_too_old() -> None:
    text = (
        "taskid: 0, streamid: 3, tid: 6495, deviceid: 0, retcode: 507018\n"
        "[ERROR] CCECPU(5670,aicpu_scheduler):2025-12-22-19:40:01.899.541 [ae_kernel_lib_aicpu_kfc.cpp:105]"
        "[CallKernelApi][tid:5680][AICPU_PROCESSER] Get KFC DynTileFwkKernelServerInit api success, "
        "but func is nullptr: (null)\n"
    )
    ex = _explain(text)
    assert [c.id for c in ex.causes][:2] == ["cann-too-old", "driver-too-old"]
    # 507018 alone stays the code's own reading
    assert _top("retcode: 507018\n") != "cann-too-old"


# --- torch_npu's porting-guide FAQ --------------------------------------------------------------------
def test_torch_npus_exit_hook_failing_is_the_program() -> None:
    text = (
        "Error in atexit._run_exitfuncs:\nTraceback (most recent call last):\n"
        '  File "/usr/lib/python3.7/site-packages/torch/__init__.py", line 429, in _npu_shutdown\n'
        "    torch._C._npu_shutdown()\nRuntimeError\n"
    )
    assert _top(text) == "not-a-version-problem"
    # without the exit hook's header the name alone is not this rule
    assert "pta-npu-shutdown-atexit" not in [m.id for m in _explain("torch._C._npu_shutdown()\n").matches]


def test_memcopysync_failing_is_an_earlier_asynchronous_operator_not_the_memory() -> None:
    text = (
        "[ERROR] RUNTIME(12731,python3.7):2021-02-02-22:23:56.475.679 [npu_driver.cc:1408]12828 "
        "MemCopySync:drvMemcpy failed: dst=0x108040288000, destMax=1240, src=0x7fe7649556d0, size=1240, "
        "kind=1, drvRetCode=17!\n"
        "[ERROR] RUNTIME(12731,python3.7):2021-02-02-22:23:56.475.717 [api_c.cc:224]12828 "
        "rtKernelLaunch:ErrCode=207001, desc=[module new memory error], InnerCode=0x70a0002\n"
    )
    assert _top(text) == "not-a-version-problem"


# --- each new regex on a long hostile line ------------------------------------------------------------
HOSTILE = {
    "mindspore-card-occupied": "Malloc device memory failed, size[" + "3" * 200_000,
    "set-device-out-of-range": "valid device range is [0, " + "0" * 200_000,
    "acl-header-not-found": "fatal error: acl/" + "a/" * 100_000 + ".h",
    "flash-attn-argument-check": "FlashAttention " + "forward only supports head dimension " * 10_000,
    "minddata-map-op-failed": "map operation: [" + "A" * 200_000,
    "aicpu-kfc-function-missing": "Get KFC " + "K" * 200_000 + " api success",
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


def test_the_new_library_extractor_runs_on_the_linear_engine_on_a_long_hostile_line() -> None:
    k = TABLE.knowledge
    assert k is not None
    e = next(x for x in k.extractors if x.id == "missing-library-load")
    rx = linre.compile(e.regex)
    assert rx.engine == "re2"
    assert rx.search("Failed to load the lib" + "x.so" * 100_000) is None
    _explain("Failed to load the lib" + "x.so" * 100_000 + "\n")
