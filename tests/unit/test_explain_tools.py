"""`cannenv explain`: messages of the tools around the stack (issue 29, round 3's misses).

pip's and uv's resolver reports, Python's multiprocessing start methods, pydantic's validation
errors, transformers' messages for a model folder missing files, helper processes reporting their
parent gone at exit (TBE's compile workers, Python's resource tracker) and the MindIE installers'
prerequisite checks — each signature written from the tool's own message source
(matrices/explain/signatures.yaml names it), tested on the tool's own wording, on a near miss
that is not the kind, and on a hostile long line.
"""

from __future__ import annotations

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()

NEW = (
    "pip-no-version-npu-index",
    "pip-requires-other-python",
    "mp-start-method",
    "pydantic-input-validation",
    "hf-model-files-missing",
    "worker-parent-exited",
    "mindie-installer-python",
    "mindie-installer-cann-env",
    "mindie-installer-arch",
    "sherpa-onnx-provider-unknown",
    "paddle-lite-nnadapter-no-device",
)


def _top(text: str) -> tuple[str | None, str | None]:
    """(the first cause, the signature that gave it)."""
    ex = _explain(text)
    if not ex.causes:
        return None, None
    return ex.causes[0].id, ex.causes[0].signature


def _causes(text: str) -> list[str]:
    return [c.id for c in _explain(text).causes]


# --- pip and uv ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # pip's resolvelib factory: _report_single_requirement_conflict (Ascend/pytorch#18)
        "ERROR: Could not find a version that satisfies the requirement torch-npu==2.1.0rc1 "
        "(from versions: none)\n"
        "ERROR: No matching distribution found for torch-npu==2.1.0rc1\n",
        "ERROR: No matching distribution found for torch_npu==2.5.1.post1.dev20250619\n",
        "ERROR: Could not find a version that satisfies the requirement triton-ascend==3.2.2 "
        "(from versions: 3.2.0)\n",
        # uv's pubgrub report (triton-ascend#900)
        "  ╰─▶ Because there is no version of triton-ascend==3.2.1 and you require triton-ascend==3.2.1, "
        "we can conclude that your requirements are unsatisfiable.\n",
        "  ╰─▶ Because there are no versions of torch-npu and you require torch-npu, we can conclude that "
        "your requirements are unsatisfiable.\n",
    ],
)
def test_no_version_of_an_npu_package_served_from_the_vendors_index_is_the_index(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "pip-no-version-npu-index")
    # the other reading pip's own source allows: no wheel for this Python or platform
    assert _causes(text)[1] == "python-deps"


@pytest.mark.parametrize(
    "text",
    [
        "ERROR: No matching distribution found for torch-npu-ext==1.0\n",  # another package's name
        "ERROR: No matching distribution found for numpy==9.9\n",
        "Because there is no version of triton==9.9 and you require triton==9.9, we can conclude …\n",
    ],
)
def test_another_package_is_not_the_npu_index_rule(text: str) -> None:
    assert _top(text)[1] != "pip-no-version-npu-index"


@pytest.mark.parametrize(
    "text",
    [
        # pip: _report_requires_python_error
        "ERROR: Package 'vllm-ascend' requires a different Python: 3.8.10 not in '>=3.9'\n",
        # pip: _report_single_requirement_conflict, versions skipped by Requires-Python
        "ERROR: Ignored the following versions that require a different python version: "
        "0.9.1 Requires-Python >=3.9\n",
        # pip: _fail_if_link_is_unsupported_wheel
        "ERROR: torch_npu-2.1.0-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl "
        "is not a supported wheel on this platform.\n",
        # uv: the installed / requested Python
        "  ╰─▶ Because the current Python version (3.8.18) does not satisfy Python>=3.9 and "
        "vllm-ascend==0.9.0 depends on Python>=3.9, we can conclude that vllm-ascend==0.9.0 "
        "cannot be used.\n",
        "  ╰─▶ Because the requested Python version (>=3.8) does not satisfy Python>=3.9 and all versions of "
        "triton-ascend depend on Python>=3.9, we can conclude …\n",
    ],
)
def test_a_release_that_needs_another_python_is_the_python(text: str) -> None:
    assert _top(text) == ("python-deps", "pip-requires-other-python")


def test_a_wheel_of_another_platform_is_the_second_reading() -> None:
    line = "ERROR: mindspore-2.3.0-cp39-cp39-linux_x86_64.whl is not a supported wheel on this platform.\n"
    assert _causes(line)[:2] == ["python-deps", "not-a-version-problem"]


# --- Python's multiprocessing ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "gpustack.cmd.start - CRITICAL - context has already been set\n",  # context.py set_start_method
        "RuntimeError: \n        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n",  # spawn.py
        "ValueError: cannot find context for 'fork'\n",  # context.py get_context on Windows
    ],
)
def test_the_programs_start_method_is_the_program(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "mp-start-method")


def test_a_bare_fork_word_is_not_the_start_method_rule() -> None:
    assert _top("cannot find context for the request\n")[1] != "mp-start-method"


# --- pydantic ------------------------------------------------------------------------------------------
def test_a_request_pydantic_refuses_is_the_clients_input() -> None:
    # vllm-ascend's AISBench guide: an image path where the API wants {'url': …} (HTTP 400)
    line = (
        '[AisBenchClientException] Request failed: HTTP status 400. Server response: {"error":{"message":'
        '"1 validation error for ChatCompletionContentPartImageParam\\nimage_url\\n  Input should be a valid '
        "dictionary [type=dict_type, input_value='data/textvqa/train_images/b2.jpg', input_type=str]\\n\"}}\n"
    )
    assert _top(line) == ("not-a-version-problem", "pydantic-input-validation")
    # FastAPI's 422 body: the error list as JSON or as Python's repr
    json_body = (
        '{"detail":[{"type":"int_parsing","loc":["body","max_tokens"],'
        '"msg":"Input should be a valid integer"}]}\n'
    )
    assert _top(json_body) == ("not-a-version-problem", "pydantic-input-validation")
    repr_body = (
        "[{'type': 'int_parsing', 'loc': ('body', 'max_tokens'), 'msg': 'Input should be a valid integer'}]\n"
    )
    assert _top(repr_body) == ("not-a-version-problem", "pydantic-input-validation")


def test_input_should_be_outside_pydantics_format_is_not_the_rule() -> None:
    assert _top("AssertionError: Input should be a 4-D tensor\n")[1] != "pydantic-input-validation"


# --- transformers --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # dynamic_module_utils.get_cached_module_file (vllm-ascend#619, the message cut after the file)
        "ERROR: `Could not locate the configuration_deepseek.py`\n",
        "OSError: Could not locate the modeling_chatglm.py inside /models/chatglm3-6b-w8a8.\n",
        # utils/hub.py cached_file
        "OSError: /models/Qwen2-7B does not appear to have a file named config.json. Checkout "
        "'https://huggingface.co//models/Qwen2-7B/tree/None' for available files.\n",
        # dynamic_module_utils.resolve_trust_remote_code
        "ValueError: The repository for /models/internlm2 contains custom code which must be executed to "
        "correctly load the model. You can inspect the repository content at https://hf.co//models/internlm2.\n"
        "Please pass the argument `trust_remote_code=True` to allow custom code to be run.\n",
        "ValueError: Loading /models/chatglm2 requires you to execute the configuration file in that repo on "
        "your local machine. Make sure you have read the code there to avoid malicious use, then set the "
        "option `trust_remote_code=True` to remove this error.\n",
    ],
)
def test_a_model_folder_missing_files_or_trust_is_the_folder(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "hf-model-files-missing")


def test_the_datasets_warning_about_trust_remote_code_is_not_the_rule() -> None:
    warning = (
        "FutureWarning: The repository for hellaswag contains custom code which must be executed to "
        "correctly load the dataset. You can avoid this message in future by passing the argument "
        "`trust_remote_code=True`.\n"
    )
    assert _top(warning)[1] != "hf-model-files-missing"


# --- helper processes whose parent is gone ---------------------------------------------------------------
def test_tbe_workers_reporting_their_parent_gone_are_not_the_error() -> None:
    line = "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!\n"
    assert _top(line * 8) == ("not-a-version-problem", "worker-parent-exited")
    tracker = (
        "/usr/lib64/python3.11/multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker: There "
        "appear to be 30 leaked semaphore objects to clean up at shutdown\n"
    )
    assert _top(tracker) == ("not-a-version-problem", "worker-parent-exited")
    # the error before it decides: it ranks below every other signature
    oom = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    assert _top(oom + line + tracker) == ("oom", "npu-oom")
    hccl = "EI0006: Getting socket times out. Reason: 1. The remote does not initiate a connect request.\n"
    assert _top(line + hccl)[0] == "hccl-link"


# --- the MindIE installers ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "cause", "sig"),
    [
        (
            "[mindie-service] [20240426-15:25:45] [ERROR] MindIE-service python api Install failed, please "
            "install python3.10 firstly!\n",
            "python-deps",
            "mindie-installer-python",
        ),
        (
            "[mindie-llm] [20250610-10:00:00] [ERROR] MindIE-LLM python api install failed, please install "
            "Python3.10 or Python3.11 first\n",
            "python-deps",
            "mindie-installer-python",
        ),
        (
            "AscendIE python api Install failed, please install python3.9 firstly!\n",
            "python-deps",
            "mindie-installer-python",
        ),
        (
            "[mindie-llm] [20250610-10:00:00] [ERROR] Install failed, please source cann set_env.sh first.\n",
            "env-not-sourced",
            "mindie-installer-cann-env",
        ),
        (
            "[mindie-service] [20250610-10:00:00] [ERROR] Install failed, can not find cann in "
            "/usr/local/Ascend/x.\n",
            "env-not-sourced",
            "mindie-installer-cann-env",
        ),
        (
            "[ERROR] Install failed, pkg arch aarch64 is not consistent with the current environment "
            "architecture x86_64.\n",
            "not-a-version-problem",
            "mindie-installer-arch",
        ),
        (
            "[ERROR] It is system of x86_64, but run package is aarch64\n",
            "not-a-version-problem",
            "mindie-installer-arch",
        ),
    ],
)
def test_the_mindie_installers_prerequisites(text: str, cause: str, sig: str) -> None:
    assert _top(text) == (cause, sig)


# --- inference runtimes built or configured without the NPU -----------------------------------------------
def test_a_provider_sherpa_onnx_does_not_know_is_its_build() -> None:
    # sherpa-onnx provider.cc StringToProvider (k2-fsa/sherpa-onnx#2744)
    line = "/project/sherpa-onnx/csrc/provider.cc:StringToProvider:32 "
    line += "Unsupported string: ascend. Fallback to cpu\n"
    assert _top(line) == ("not-a-version-problem", "sherpa-onnx-provider-unknown")
    assert _top("Unsupported string: ascend\n")[1] != "sherpa-onnx-provider-unknown"


def test_paddle_lite_nnadapter_without_a_device_is_the_config() -> None:
    # Paddle-Lite lite/kernels/nnadapter/engine.cc (Paddle-Lite#9802)
    line = (
        "[F 12/ 1 14:47:20.689 ...le-Lite/lite/kernels/nnadapter/engine.cc:294 Engine] Check failed: "
        "(device_names.size() > 0): 0!>0 No device specified.\n"
    )
    assert _top(line) == ("not-a-version-problem", "paddle-lite-nnadapter-no-device")
    assert _top("No device specified.\n")[1] != "paddle-lite-nnadapter-no-device"


# --- hostile input: every new pattern stays linear on a long line ------------------------------------------
def _new_patterns() -> list[str]:
    ids = set(NEW)
    out: list[str] = []
    for sig in TABLE.signatures:
        if sig.id not in ids:
            continue
        for p in (*sig.any, *sig.all):
            if p.regex is not None and p.rx is not None:
                out.append(p.rx)
    return out


def test_every_new_kind_is_in_the_table() -> None:
    assert {s.id for s in TABLE.signatures} >= set(NEW)
    assert len(_new_patterns()) >= 14


@pytest.mark.parametrize("rx", _new_patterns())
def test_each_new_pattern_is_linear_on_a_hostile_line(rx: str) -> None:
    # the lint that proves Python's re would not backtrack on it either (RE2 is linear by construction)
    assert linre.ambiguity(rx, mode="search") is None
    compiled = linre.compile(rx)
    # a megabyte of near misses: every prefix the pattern could start on, never completed
    for filler in (
        "Input should be " * 40_000,
        "there is no version of " * 40_000,
        "[type=" * 100_000 + "Input should be ",
        "Subprocess[task_distribute] raise error[" * 20_000,
        "python api " * 60_000,
        "Unsupported string: " * 40_000,
        "device_names.size() > 0)" * 40_000,
        "Could not locate the " * 40_000,
        "requires a different Python: 3" * 30_000,
        "a" * 1_000_000,
    ):
        assert compiled.search(filler) is None  # none completes: every start fails within its bounds
    # through the whole scanner too: a 1 MB line of one anchor repeated
    anchor_line = "Input should be [type=" * 50_000 + "\n"
    assert _top(anchor_line)[0] in (None, "not-a-version-problem")


# --- HTTP clients (urllib3 / requests / pip's index collector) -----------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /Qwen/config.json (Caused by NewConnectionError("
        "'<urllib3.connection.HTTPSConnection object>: Failed to establish a new connection: "
        "[Errno -3] Temporary failure in name resolution'))",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'ProxyError('Cannot connect to proxy.', "
        "OSError('Tunnel connection failed: 407'))': /simple/x/",
        "requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='modelscope.cn', port=443): "
        "Read timed out.",
        "requests.exceptions.SSLError: HTTPSConnectionPool(host='pypi.org', port=443): [SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed",
        "Could not fetch URL https://pypi.org/simple/torch-npu/: There was a problem confirming the ssl "
        "certificate: HTTPSConnectionPool(host='pypi.org', port=443) - skipping",
    ],
)
def test_a_download_that_cannot_reach_its_server_is_the_network(text: str) -> None:
    ex = _explain(text + "\n")
    assert (ex.causes[0].id, ex.causes[0].signature) == ("not-a-version-problem", "http-server-unreachable")
    # the name-resolution errno inside it is the download's, not HCCL's configuration
    assert all(c.status == "ruled-out" for c in ex.causes if c.id in ("hccl-config", "hccl-link"))


def test_a_name_that_does_not_resolve_outside_a_download_stays_a_configuration_reading() -> None:
    ex = _explain("socket.gaierror: [Errno -2] Name or service not known\n")
    assert ex.causes[0].id == "hccl-config" and "http-server-unreachable" not in [m.id for m in ex.matches]
