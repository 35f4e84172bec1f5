"""Round 8 (issue 29): a library a loader fails to load, in the printed forms of the loaders around
the stack (torch.ops.load_library, cffi, ONNX Runtime, TVM), mapped to its package by the library
table; and a Python distribution the packaging tools report of another version or missing
(pkg_resources, pip check and pip's resolver, importlib.metadata, transformers' require_version),
whose group decides the cause. Each line is the upstream's own format filled in (the format is
quoted beside it, from the source cited in knowledge.yaml) or a line of the corpus."""

from __future__ import annotations

import pytest

from cannenv.explain import signatures
from cannenv.explain.knowledge import dist_name
from tests.helpers.explaining import explain, known

K = signatures.shipped().knowledge
assert K is not None


def top(text: str) -> tuple[str, str]:
    """The first known match and its first cause."""
    ex = explain(text)
    m = known(ex)[0]
    return m.id, m.causes[0].id


def ids(text: str) -> set[str]:
    return {m.id for m in known(explain(text))}


# --- the loaders ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "sid", "cause"),
    [
        # torch/_ops.py: raise OSError(f"Could not load this library: {path}") (torchcodec, torchaudio …)
        (
            "OSError: Could not load this library: /opt/huawei/miniconda3/lib/python3.12/site-packages/"
            "torchcodec/libtorchcodec_image.so",
            "library-third-party",
            "third-party-library",
        ),
        (
            "OSError: Could not load this library: /usr/local/lib/python3.10/site-packages/torch_npu/lib/"
            "libtorch_npu.so",
            "library-libtorch_npu",
            "framework-mismatch",
        ),
        # cffi _cffi_backend.c: "cannot load library '%s': %s" (a CANN library: its package decides)
        (
            "OSError: cannot load library 'libascendcl.so': libascendcl.so: cannot open shared object file:"
            " No such file or directory",
            "library-libascendcl",
            "env-not-sourced",
        ),
        # the corpus's MindSpeed-Core-MS FAQ line (its dlerror lost a space: only cffi's form names it)
        (
            "OSError:cannot load library 'libsndfile.so':libsndfile.so: cannot open sharedobject file:"
            " No such file or directory",
            "cffi-cannot-load-library",
            "third-party-library",
        ),
        # ONNX Runtime env.cc: "Failed to load library " + library_filename + " with error: " + dlerror()
        (
            "Failed to load library /usr/lib/libhccl.so with error: /usr/lib/libhccl.so:"
            " wrong ELF class: ELFCLASS32",
            "library-libhccl",
            "env-not-sourced",
        ),
        # TVM dso_library.cc: "Failed to load dynamic shared library " << name << " " << dlerror()
        (
            "Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library"
            " /root/model/libatb_deploy.so /root/model/libatb_deploy.so: invalid ELF header",
            "library-libatb",
            "env-not-sourced",
        ),
    ],
)
def test_loader_forms_name_the_library(line: str, sid: str, cause: str) -> None:
    assert top(line) == (sid, cause)


def test_cffi_reading_yields_to_the_package_of_a_mapped_library() -> None:
    line = "OSError: cannot load library 'libascendcl.so': libascendcl.so: cannot open shared object file"
    assert "cffi-cannot-load-library" not in ids(line)


def test_a_loader_that_names_the_needing_library_is_not_read_as_missing() -> None:
    # MindSpore Lite's "dlopen X failed, error: Y: cannot open …": Y is missing, X only needed it
    line = (
        "dlopen /x/site-packages/mindspore_lite/lib/libascend_kernel_plugin.so failed, error:"
        " libacl_cblas.so: cannot open shared object file: No such file or directory"
    )
    found = ids(line)
    assert "library-libacl_cblas" in found
    assert "library-libascend" not in found


# --- the packaging tools ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "sid", "cause"),
    [
        # pkg_resources ContextualVersionConflict's args (the corpus's vllm-ascend#476 line)
        (
            "pip._vendor.pkg_resources.ContextualVersionConflict: (numpy 2.2.4 (/usr/local/python3.10/lib/"
            "python3.10/site-packages), Requirement.parse('numpy==1.26.4'), {'vllm-ascend'})",
            "python-dist-cann-dep-conflict",
            "python-deps",
        ),
        # VersionConflict.report(): "{self.dist} is installed but {self.req} is required"
        (
            "sympy 1.4 is installed but sympy>=1.13.1 is required by {'torch'}",
            "python-dist-cann-dep-conflict",
            "python-deps",
        ),
        # pip's resolver: "{name} {version} requires {requirement}, but you have {dep_name} {dep_version}
        # which is incompatible."
        (
            "vllm-ascend 0.9.1 requires torch-npu==2.5.1.post1, but you have torch-npu 2.6.0"
            " which is incompatible.",
            "python-dist-stack-conflict",
            "framework-mismatch",
        ),
        (
            "vllm 0.10.0 requires transformers>=4.53.2, but you have transformers 4.52.4"
            " which is incompatible.",
            "python-dist-third-party-conflict",
            "third-party-library",
        ),
        # pip check: "%s %s has requirement %s, but you have %s %s."
        (
            "te 0.4.0 has requirement attrs<23,>=21.2, but you have attrs 23.1.0.",
            "python-dist-cann-dep-conflict",
            "python-deps",
        ),
        # transformers' require_version: "{requirement} is required for a normal functioning of this
        # module, but found {pkg}=={got_ver}."
        (
            "ImportError: tokenizers>=0.21,<0.22 is required for a normal functioning of this module,"
            " but found tokenizers==0.20.3.",
            "python-dist-third-party-conflict",
            "third-party-library",
        ),
        # DistributionNotFound: "The '{self.req}' distribution was not found and is required by {requirers}"
        (
            "pkg_resources.DistributionNotFound: The 'decorator' distribution was not found"
            " and is required by te",
            "python-dist-cann-dep-missing",
            "python-deps",
        ),
        # pip check: "%s %s requires %s, which is not installed."
        (
            "mindspeed 0.8.0 requires einops, which is not installed.",
            "python-dist-third-party-missing",
            "third-party-library",
        ),
        # importlib.metadata's PackageNotFoundError of another package than the stack's
        (
            "importlib.metadata.PackageNotFoundError: No package metadata was found for librosa",
            "python-dist-third-party-missing",
            "third-party-library",
        ),
    ],
)
def test_packaging_forms_decided_by_the_package(line: str, sid: str, cause: str) -> None:
    assert top(line) == (sid, cause)


def test_missing_stack_package_keeps_the_metadata_reading() -> None:
    # the corpus's vLLM-MindSpore FAQ line: torch missing is python-deps, read as before
    _sid, cause = top("importlib.metadata.PackageNotFoundError: No package metadata was found for torch")
    assert cause == "python-deps"


def test_torch_npu_pin_keeps_its_own_signature_first() -> None:
    text = (
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are"
        " installed. This behaviour is the source of the following dependency conflicts.\n"
        "torch-npu 2.7.1.dev20250724 requires torch==2.7.1, but you have torch 2.8.0+cpu"
        " which is incompatible.\n"
    )
    assert top(text) == ("torch-npu-pins-torch", "torch-torch_npu-mismatch")
    assert "python-dist-stack-conflict" in ids(text)


def test_python_is_no_distribution() -> None:
    line = (
        "ImportError: python>=3.9.0 is required for a normal functioning of this module,"
        " but found python==3.8.10."
    )
    assert not any(i.startswith("python-dist-") for i in ids(line))


def test_groups_from_the_tables() -> None:
    assert K.python_dist("numpy") is not None and K.python_dist("numpy")[0] == "cann-dep"  # type: ignore[index]
    assert K.python_dist("torch_npu") == K.python_dist("torch-npu")
    assert K.python_dist("vllm_ascend") is not None and K.python_dist("vllm_ascend")[0] == "stack"  # type: ignore[index]
    assert K.python_dist("transformers") is None
    assert dist_name("Absl_Py") == "absl-py"


@pytest.mark.parametrize(
    "line",
    [
        # pip's legacy resolver line of the Ascend/pytorch installation FAQ's kind: a vendor build of 1.5.0
        "ERROR: torchvision 0.6.0 has requirement torch==1.5.0, but you'll have torch 1.5.0a0+1977093"
        " which is incompatible",
        "vllm 0.9.1 requires torch==2.7.1, but you have torch 2.7.1.dev20250601 which is incompatible.",
    ],
)
def test_a_build_of_the_pinned_release_is_no_other_release(line: str) -> None:
    assert top(line) == ("python-dist-same-release-build", "not-a-version-problem")


def test_another_release_is_a_conflict() -> None:
    line = "torchvision 0.22.1 requires torch==2.7.1, but you have torch 2.8.0+cpu which is incompatible."
    assert top(line) == ("python-dist-stack-conflict", "framework-mismatch")
