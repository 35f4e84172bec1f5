"""`cannenv explain`: kinds of message read from the printing product's own source (round 7).

The JDK's refusal of a TLS certificate chain (bazel, Maven, Gradle downloads), pip's warning that
a package's commands went to a folder outside PATH, vLLM's client reporting an engine core that
exited after its own orderly shutdown, SGLang's PD metadata collision and PyTorch's dispatcher
given CPU tensors for one of torch_npu's npu:: operators — each tested on the printer's own
wording, on a near miss that is not the kind, and on a hostile long line.
"""

from __future__ import annotations

import pytest

from cannenv.explain import signatures
from tests.helpers.explaining import explain

TABLE = signatures.shipped()

NEW = (
    "pip-scripts-not-on-path",
    "vllm-engine-core-exit-after-shutdown",
    "sglang-pd-metadata-collision",
    "torch-npu-op-on-other-device",
    "k8s-scheduler-insufficient-resources",
)


def _top(text: str) -> tuple[str | None, str | None]:
    ex = explain(text)
    if not ex.causes:
        return None, None
    return ex.causes[0].id, ex.causes[0].signature


def test_every_new_signature_is_shipped_and_cites_its_source() -> None:
    by_id = {s.id: s for s in TABLE.signatures}
    for sid in NEW:
        sig = by_id[sid]
        assert sig.causes and all(c.sources for c in sig.causes), sid


@pytest.mark.parametrize(
    "text",
    [
        # bazel's fetch (the JDK's PKIXValidator around SunCertPathBuilder's exception)
        "ERROR: An error occurred during the fetch of repository 'io_bazel_rules_docker':\n"
        "   java.io.IOException: Error downloading [https://github.com/bazelbuild/rules_docker/releases/"
        "download/v0.14.3/rules_docker-v0.14.3.tar.gz] to /home/u/.cache/bazel/x.tar.gz: PKIX path "
        "building failed: sun.security.provider.certpath.SunCertPathBuilderException: unable to find "
        "valid certification path to requested target\n",
        # Maven / Gradle print the handshake's exception
        "Caused by: javax.net.ssl.SSLHandshakeException: sun.security.validator.ValidatorException: "
        "PKIX path building failed: sun.security.provider.certpath.SunCertPathBuilderException: "
        "unable to find valid certification path to requested target\n",
        # the builder's exception alone, as some tools shorten it
        "Could not GET 'https://repo.maven.apache.org/x.pom'. > unable to find valid certification "
        "path to requested target\n",
    ],
)
def test_the_jdk_refusing_a_certificate_chain_is_the_network(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "http-server-unreachable")


def test_a_java_exception_that_is_not_about_trust_is_not_read_as_the_network() -> None:
    ex = explain(
        "java.io.IOException: Error downloading [https://x/y.tar.gz]: Checksum was abc but wanted d\n"
    )
    assert "http-server-unreachable" not in [m.id for m in ex.matches]


@pytest.mark.parametrize(
    "text",
    [
        "WARNING: The script ascend-fd is installed in '/usr/local/python3.8/bin' which is not on PATH.\n"
        "  Consider adding this directory to PATH or, if you prefer to suppress this warning, use "
        "--no-warn-script-location.\nSuccessfully installed ascend-faultdiag-26.1.0\n",
        "  WARNING: The scripts pip, pip3 and pip3.8 are installed in '/home/u/.local/bin' "
        "which is not on PATH.\n",
    ],
)
def test_pips_scripts_outside_path_are_not_a_version(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "pip-scripts-not-on-path")


def test_pips_warning_ranks_below_a_real_error_beside_it() -> None:
    text = (
        "  WARNING: The script f2py is installed in '/root/.local/bin' which is not on PATH.\n"
        "ImportError: libascendcl.so: cannot open shared object file: No such file or directory\n"
    )
    cause, sig = _top(text)
    assert sig != "pip-scripts-not-on-path" and cause == "env-not-sourced"


def test_prose_about_a_folder_not_on_path_is_not_pips_warning() -> None:
    ex = explain("error: the copy under libexec/git-core/, which is not on PATH, failed\n")
    assert "pip-scripts-not-on-path" not in [m.id for m in ex.matches]


ENGINE_DIED = (
    "ERROR 05-12 11:36:01 [core_client.py:704] Engine core proc EngineCore died unexpectedly, "
    "shutting down client.\n"
)


@pytest.mark.parametrize(
    "shutdown",
    [
        # the wording of 2026's first releases
        "(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1201] Shutdown initiated (timeout=0)\n"
        "(EngineCore pid=970) INFO 05-12 11:36:00 [core.py:1224] Shutdown complete\n",
        # the newer one
        "(EngineCore_DP0 pid=12) INFO [core.py:1290] [shutdown] EngineCore: start mode=abort timeout=0s\n"
        "(EngineCore_DP0 pid=12) INFO [core.py:1312] [shutdown] EngineCore: request processing complete; "
        "starting resource teardown\n",
    ],
)
def test_an_engine_core_that_exits_after_its_own_shutdown_is_the_program_ending(shutdown: str) -> None:
    assert _top(shutdown + ENGINE_DIED) == ("not-a-version-problem", "vllm-engine-core-exit-after-shutdown")


def test_an_engine_core_that_dies_without_a_shutdown_is_not_read_as_one() -> None:
    ex = explain("(EngineCore_DP0 pid=7) INFO loading weights\n" + ENGINE_DIED)
    assert "vllm-engine-core-exit-after-shutdown" not in [m.id for m in ex.matches]
    # nor does another 'Shutdown complete' (an HTTP server's) make it one
    ex = explain("INFO:     Application shutdown complete.\n" + ENGINE_DIED)
    assert "vllm-engine-core-exit-after-shutdown" not in [m.id for m in ex.matches]


def test_sglangs_metadata_collision_is_not_a_version() -> None:
    text = (
        "[2026-04-07 13:24:13 TP0] Context corruption detected: Request 3b5d (bootstrap_room=745) received "
        "metadata from bootstrap_room=412. Metadata buffer index: 1. This indicates metadata buffer index "
        "collision.\n"
    )
    assert _top(text) == ("not-a-version-problem", "sglang-pd-metadata-collision")
    ex = explain("[TP0] Context corruption detected in the KV cache\n")
    assert "sglang-pd-metadata-collision" not in [m.id for m in ex.matches]


@pytest.mark.parametrize(
    "text",
    [
        "NotImplementedError: Could not run 'npu::npu_format_cast' with arguments from the 'CPU' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).\n",
        "NotImplementedError: Could not run 'npu::npu_rms_norm' with arguments from the 'Meta' backend.\n",
    ],
)
def test_an_npu_operator_given_tensors_of_another_device_is_the_code(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "torch-npu-op-on-other-device")


def test_an_aten_operator_missing_on_the_npu_is_not_read_as_the_codes_device() -> None:
    # an aten:: operator with no NPU kernel says something else (the NPU lacks it), not this
    ex = explain(
        "NotImplementedError: Could not run 'aten::_foo' with arguments from the 'PrivateUse1' backend\n"
    )
    assert "torch-npu-op-on-other-device" not in [m.id for m in ex.matches]
    ex = explain("Could not run 'npu::npu_format_cast' with arguments from the 'NPU' backend.\n")
    assert "torch-npu-op-on-other-device" not in [m.id for m in ex.matches]


def test_hostile_long_lines_are_read_without_matching_garbage() -> None:
    # the patterns are linear (the lint tests check every one); a megabyte line is examined
    # around its anchor only and yields no reading of these kinds
    for line in (
        "Could not run 'npu::" + "a" * 300_000 + "' with arguments from the '" + "C" * 300_000,
        "The scripts " + "x, " * 200_000 + " which is not on PATH",
        "Engine core proc " + "E" * 400_000 + " died unexpectedly, shutting down client",
    ):
        ids = [m.id for m in explain(line + "\n").matches]
        assert not set(ids) & set(NEW), ids


@pytest.mark.parametrize(
    "text",
    [
        "  Warning  FailedScheduling  2m  default-scheduler  0/4 nodes are available: "
        "4 Insufficient huawei.com/Ascend910.\n",
        "  Warning  Unschedulable  1m  volcano  0/2 nodes are unavailable: 1 Insufficient cpu, "
        "2 Insufficient huawei.com/Ascend910.\n",
    ],
)
def test_a_scheduler_that_finds_no_node_with_the_resources_is_not_a_version(text: str) -> None:
    assert _top(text) == ("not-a-version-problem", "k8s-scheduler-insufficient-resources")


def test_a_scheduler_refusal_for_another_reason_is_not_read_as_resources() -> None:
    text = "0/3 nodes are available: 3 node(s) had untolerated taint {node-role: master}.\n"
    assert "k8s-scheduler-insufficient-resources" not in [m.id for m in explain(text).matches]
