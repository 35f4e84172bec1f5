"""`cannenv certify kernels` end to end with the system compiler (no CANN, no NPU).

Each smoke kernel ships a plain C++ reference. The harness self-test builds it through the same
path as the Ascend C build (cmake configure -> build -> run with a timeout -> compare with the
same numpy golden and tolerance code -> report). Perturbed copies of the references show that the
comparison catches a wrong result, a block that never ran, and a compiler error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cannenv.certify import kernels as K
from cannenv.host import Host
from cannenv.resources import smoke_kernels_dir

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("c++") is None, reason="needs cmake and a C++ compiler"
)


def _copy_kernels(tmp_path: Path) -> Path:
    dst = tmp_path / "smoke_kernels"
    shutil.copytree(smoke_kernels_dir(), dst)
    return dst


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


def test_probe_alone_passes_and_certifies_nothing(tmp_path: Path) -> None:
    report = K.run_kernels(Host.live(), target="reference", kernels=("toolchain_probe",), keep_build=tmp_path)
    assert report.status == "pass", K.render_report(report)
    assert report.certifies is False
    assert report.to_stage_result().status == "skip"  # a self-test never certifies a stage
    assert "certifies nothing" in report.to_stage_result().reasons[0]  # and the skip says why
    (probe,) = report.kernels
    (case,) = probe.cases
    assert case.comparisons[0]["rule"] == "exact" and case.comparisons[0]["passed"]
    assert case.kernel_time_us is not None and case.bandwidth_gb_s is not None
    assert probe.configure is not None and probe.configure.command.startswith("cmake -S ")
    # The kept build holds exactly what the command lines name.
    assert (tmp_path / "toolchain_probe/build/smoke_toolchain_probe_ref").is_file()
    assert (tmp_path / "toolchain_probe/data/copy/y.bin").stat().st_size == 4096 * 2


@pytest.mark.slow
def test_every_reference_passes_end_to_end(tmp_path: Path) -> None:
    report = K.run_kernels(Host.live(), target="reference", keep_build=tmp_path)
    text = K.render_report(report)
    assert report.status == "pass", text
    assert [k.name for k in report.kernels] == ["toolchain_probe", "vector_add", "matmul", "row_softmax"]
    by = {k.name: k for k in report.kernels}
    assert {c.id for c in by["vector_add"].cases} == {"fp16", "fp32"}
    mm = by["matmul"].cases[0]
    assert mm.gflops is not None and mm.comparisons[0]["rule"] == "fp32-double-ten-thousandth"
    assert mm.comparisons[0]["cosine"] > 0.999999
    sm = by["row_softmax"].cases[0]
    assert sm.comparisons[0]["rule"] == "fp16-double-thousandth" and sm.comparisons[0]["passed"]
    assert "harness self-test" in text and "GFLOP/s" in text
    # The report is plain data: JSON round trip.
    again = K.KernelsReport.model_validate_json(report.model_dump_json())
    assert again.status == "pass"


@pytest.mark.slow
def test_perturbed_outputs_fail_the_check(tmp_path: Path) -> None:
    kdir = _copy_kernels(tmp_path)
    ref = kdir / "vector_add/reference/reference.cpp"
    # One wrong element (index 5000) in both cases: the exact rule must catch it.
    wrong = "z[at] = add(x[at], y[at]);\n                if (at == 5000) z[at] = add(z[at], y[at]);"
    _edit(ref, "z[at] = add(x[at], y[at]);", wrong)
    sm = kdir / "row_softmax/reference/reference.cpp"
    # Every element 5% high. (1% would pass: softmax outputs here are below 0.03, so a 1% error
    # stays under the rule's 1e-3 absolute leg — the double-thousandth rule forgives it by design.)
    _edit(sm, "work[static_cast<size_t>(c)] * inv", "work[static_cast<size_t>(c)] * inv * 1.05f")
    report = K.run_kernels(
        Host.live(),
        target="reference",
        kernels_dir=kdir,
        kernels=("vector_add", "row_softmax"),
        keep_build=tmp_path / "w",
    )
    assert report.status == "fail"
    by = {k.name: k for k in report.kernels}
    assert by["toolchain_probe"].status == "pass"
    add = by["vector_add"]
    assert add.status == "fail"
    for case in add.cases:
        cmp = case.comparisons[0]
        assert not cmp["passed"] and cmp["first_mismatch"] == 5000 and "1 of 16411" in cmp["detail"]
    soft = by["row_softmax"].cases[0].comparisons[0]
    assert not soft["passed"] and soft["atol_failures"] > 16 and soft["rtol_failures"] > 16
    assert any("outside exact" in r for r in report.reasons)
    assert "FAILED" in K.render_report(report)


@pytest.mark.slow
def test_a_block_that_never_ran_leaves_the_sentinel(tmp_path: Path) -> None:
    kdir = _copy_kernels(tmp_path)
    _edit(
        kdir / "vector_add/reference/reference.cpp",
        "block < blockDim; ++block",
        "block < blockDim - 1; ++block",
    )
    report = K.run_kernels(Host.live(), target="reference", kernels_dir=kdir, kernels=("vector_add",))
    add = report.kernels[1]
    assert add.status == "fail"
    cmp = add.cases[0].comparisons[0]
    assert cmp["sentinel"] > 0 and cmp["nonfinite"] == cmp["sentinel"]
    assert "sentinel" in cmp["detail"]


@pytest.mark.slow
def test_compiler_error_in_the_probe_means_broken_toolchain(tmp_path: Path) -> None:
    kdir = _copy_kernels(tmp_path)
    _edit(kdir / "toolchain_probe/reference/reference.cpp", "y[i] = x[i];", "y[i] = x[i] +;")
    report = K.run_kernels(Host.live(), target="reference", kernels_dir=kdir)
    probe, *others = report.kernels
    assert report.status == "fail"
    assert probe.reasons[0] == (
        "the toolchain or environment is broken: the toolchain probe (a buffer copy) failed to build"
    )
    assert probe.build is not None and probe.build.status == "failed"
    excerpt = "\n".join(probe.build.excerpt)
    assert "reference.cpp" in excerpt and "error" in excerpt
    assert len(probe.build.excerpt) <= 21
    assert all(k.status == "skip" for k in others)


def test_cli_self_test_json(tmp_path: Path) -> None:
    from cannenv.commands.certify import kernels_cmd as kernels

    res = CliRunner().invoke(kernels, ["--self-test", "--kernel", "toolchain_probe", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["status"] == "pass" and doc["certifies"] is False
    assert doc["plan"]["target"] == "reference"


# A FIXTURE, not CANN: the ACL runtime declarations the host launchers use (signatures as
# documented for acl/acl.h) and the launch stubs ascendc_library would generate. Lets the system
# compiler type-check every host launcher without a toolkit.
FIXTURE_ACL_H = """\
#pragma once
#include <cstddef>
#include <cstdint>
typedef int aclError;
typedef void* aclrtStream;
#define ACL_SUCCESS 0
typedef enum { ACL_MEM_MALLOC_HUGE_FIRST } aclrtMemMallocPolicy;
typedef enum { ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST } aclrtMemcpyKind;
aclError aclInit(const char* configPath);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtFree(void* devPtr);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclFinalize();
const char* aclGetRecentErrMsg();
"""


@pytest.mark.slow
def test_host_launchers_type_check_against_fixture_acl(tmp_path: Path) -> None:
    import re

    from cannenv.certify.kernel_data import shipped_manifests
    from cannenv.host import run

    inc = tmp_path / "include"
    (inc / "acl").mkdir(parents=True)
    (inc / "acl/acl.h").write_text(FIXTURE_ACL_H)
    kdir = smoke_kernels_dir()
    for m in shipped_manifests():
        kernel_src = (kdir / m.name / m.kernel_source).read_text()
        for case in m.cases:
            # The stub mirrors the kernel's parameters: GM_ADDR -> void*, scalars stay.
            params = re.search(rf"void {case.kernel_symbol}\(([^)]*)\)", kernel_src)
            assert params is not None, case.kernel_symbol
            args = [p.strip().rsplit(" ", 1)[0] for p in params.group(1).split(",")]
            args = ["void*" if a == "GM_ADDR" else a for a in args]
            (inc / f"{case.launch_symbol}.h").write_text(
                "#pragma once\n#include <cstdint>\n"
                f'extern "C" uint32_t {case.launch_symbol}'
                f"(uint32_t blockDim, void* stream, {', '.join(args)});\n"
            )
        result = run(
            [
                "c++",
                "-std=c++17",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-fsyntax-only",
                f"-I{inc}",
                f"-I{kdir / 'common'}",
                str(kdir / m.name / m.host_source),
            ],
            timeout=120,
        )
        assert result.ok, f"{m.name}: {result.stderr}"
