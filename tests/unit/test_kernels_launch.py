"""Host-side launch checks of the smoke kernels against the SoC's on-chip buffers (issue 16, item 7)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cannenv.certify import kernels as K
from cannenv.certify.kernel_data import KernelCase, KernelManifest, shipped_manifests, shipped_soc_table
from cannenv.certify.launch import RULES, check_case
from cannenv.host import Host
from tests.unit.test_kernels_toolkit import fixture_toolkit

A2 = shipped_soc_table().families["a2"].buffers


def _manifest(name: str) -> KernelManifest:
    return next(m for m in shipped_manifests() if m.name == name)


def _case(name: str, **changes: object) -> KernelCase:
    case = _manifest(name).cases[0]
    tiling = {**case.tiling, **{k: v for k, v in changes.items() if k != "block_dim"}}
    update: dict[str, object] = {"tiling": tiling}
    if "block_dim" in changes:
        update["block_dim"] = changes["block_dim"]
    return case.model_copy(update=update)  # model_copy: no validation, as a hostile file could do


def test_soc_table_has_the_on_chip_buffers_with_sources() -> None:
    table = shipped_soc_table()
    assert A2 is not None and A2.ub == 192 * 1024 and A2.l1 == 512 * 1024
    assert (A2.l0a, A2.l0b, A2.l0c) == (64 * 1024, 64 * 1024, 128 * 1024)
    p310 = table.families["310p"].buffers
    assert p310 is not None and p310.ub == 256 * 1024 and p310.l0c is None  # not in our sources: unknown
    for fam in table.families.values():
        if fam.buffers is not None:
            assert all(table.sources[k].title for k in fam.buffers.sources)


def test_every_shipped_kernel_has_rules_and_every_case_fits_its_families() -> None:
    table = shipped_soc_table()
    for m in shipped_manifests():
        assert m.name in RULES
        for fam in m.written_for.families:
            for case in m.cases:
                problems, _ = check_case(m.name, case, table.families[fam].buffers, family=fam)
                assert problems == (), (m.name, fam, problems)


def test_tile_length_zero_is_rejected_before_it_can_hang_the_device() -> None:
    problems, _ = check_case("vector_add", _case("vector_add", tile_length=0), A2, family="a2")
    assert problems == ("case fp16: tile_length is 0: it must be at least 1 (a 0 never advances a loop)",)


def test_block_dim_zero_is_rejected_before_the_host_divides_by_it() -> None:
    problems, _ = check_case("matmul", _case("matmul", block_dim=0), A2, family="a2")
    assert any("block_dim is 0" in p for p in problems)


def test_vector_add_tile_must_fit_the_unified_buffer() -> None:
    # 3 queues x 2 buffers x 16384 fp16 = 192 KiB: exactly the 910B UB; one block more does not fit.
    assert check_case("vector_add", _case("vector_add", tile_length=16384), A2)[0] == ()
    (problem,) = check_case("vector_add", _case("vector_add", tile_length=16384 + 16), A2, family="a2")[0]
    assert "UB" in problem and "196608 B (192 KiB)" in problem and "tile_length 16400" in problem
    (odd,) = check_case("vector_add", _case("vector_add", tile_length=1000 + 3), A2)[0]
    assert "32-byte blocks" in odd


def test_matmul_checks_l1_l0a_l0b_l0c_and_the_8bit_repeat_times() -> None:
    # 512 x 512 x 512 on one core: A and B (512 KiB each) past L0A/L0B (64 KiB), both past L1
    # (512 KiB), C (1 MiB fp32) past L0C (128 KiB).
    problems, _ = check_case("matmul", _case("matmul", m=512, k=512, n=512, block_dim=1), A2, family="a2")
    text = "\n".join(problems)
    for buf in ("L0A", "L0B", "L0C", "L1"):
        assert f"of {buf}" in text
    # k = 16 x 256: LoadData would need repeatTimes 256 (an 8-bit field) even before the buffers.
    problems, _ = check_case("matmul", _case("matmul", k=4096, block_dim=4), A2, family="a2")
    assert any("repeatTimes would be 256" in p for p in problems)
    problems, _ = check_case("matmul", _case("matmul", m=130), A2)
    assert any("split evenly over block_dim 4" in p for p in problems)


def test_unknown_buffer_sizes_are_reported_not_checked() -> None:
    buffers = shipped_soc_table().families["310p"].buffers
    problems, unchecked = check_case("matmul", _case("matmul"), buffers, family="310p")
    assert problems == () and unchecked == ("l0a", "l0b", "l0c", "l1")


def test_plan_rejects_the_case_and_execute_never_builds_it(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend910B3",))
    env = K.inspect_environment(Host(root=tmp_path, env={}, allow_commands=False), soc="910B3")
    env = env.model_copy(update={"live": True})
    bad = _manifest("vector_add")
    bad = bad.model_copy(update={"cases": (_case("vector_add", tile_length=0), *bad.cases[1:])})
    plan = K.plan_kernels(env, (bad,), mode="cpu", work_dir=str(tmp_path / "w"), kernels_dir="/k")
    (kernel,) = plan.kernels
    assert kernel.cases[0].launch_problems and not kernel.cases[1].launch_problems
    assert "REJECTED before launch: case fp16: tile_length is 0" in K.render_plan(plan)
    (result,) = K.execute(plan, (bad,))
    assert result.status == "error" and result.configure is None and result.build is None
    assert re.match(
        r"launch parameters rejected before launch: case fp16: tile_length is 0", result.reasons[0]
    )
    assert [c.status for c in result.cases] == ["error", "skip"]
    assert not (tmp_path / "w").exists()  # nothing was built
    # A case past the UB names the limit's source by title and URL, not a bare key.
    big = _manifest("vector_add").model_copy(update={"cases": (_case("vector_add", tile_length=32768),)})
    plan = K.plan_kernels(env, (big,), mode="cpu", work_dir=str(tmp_path / "w"), kernels_dir="/k")
    (problem,) = plan.kernels[0].cases[0].launch_problems
    assert (
        "of UB" in problem and "Huawei CATLASS" in problem and "https://github.com/hicann/catlass" in problem
    )


@pytest.mark.parametrize("kernel", ["toolchain_probe", "vector_add", "matmul", "row_softmax"])
def test_host_programs_refuse_zero_parameters(kernel: str) -> None:
    """The C++ host launchers (second line) read every launch parameter with GetPositive."""
    from cannenv.resources import smoke_kernels_dir

    main = (smoke_kernels_dir() / kernel / "main.cpp").read_text()
    assert "args.Get(" not in main and 'GetPositive("block_dim")' in main


def test_new_flow_passes_npu_arch_once() -> None:
    from cannenv.resources import smoke_kernels_dir

    cmake = (smoke_kernels_dir() / "cmake" / "cannenv_smoke.cmake").read_text()
    code = "\n".join(ln for ln in cmake.splitlines() if not ln.lstrip().startswith("#"))
    assert "--npu-arch" not in code  # CMAKE_ASC_ARCHITECTURES injects it; the configure line sets that


def test_certify_kernels_exit_code_follows_the_outcome_table(tmp_path: Path) -> None:
    """Through the real entry point: nothing could run here -> 4 (never 0); a dry run -> 0."""
    from cannenv.cli import main

    def code(*args: str) -> int:
        with pytest.raises(SystemExit) as exc:
            main(["certify", "kernels", "--soc", "Ascend910B3", "--root", str(tmp_path), *args])
        return int(exc.value.code or 0)

    assert code() == 4
    assert code("--dry-run") == 0
