"""Platform ini parsing, peak computation, published peaks, judgement, CPU perf end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cannenv.certify import perf
from cannenv.errors import InputError
from cannenv.host import Host

# Laid out as the toolkit ships <arch>-linux/data/platform_config/Ascend910B4.ini (CANN 8.1.RC1,
# kernels.md §6 [C81]); intrinsic maps shortened.
INI_910B4 = """\
# [Platform Info configuration begin]
#**************************************************************************************
#
[version]
SoC_version=Ascend910B4
Short_SoC_version=Ascend910B
AIC_version=AIC-C-220
CCEC_AIC_version=dav-c220-cube
Arch_type=4

[SoCInfo]
ai_core_cnt=20
cube_core_cnt=20
vector_core_cnt=40
ai_cpu_cnt=4
memory_type=
memory_size=34359738368
l2_type=0
l2_size=100663296
core_type_list=CubeCore,VectorCore
vir_type_list=4,5,10,20

[AICoreSpec]
cube_freq=1500
cube_m_size=16
cube_n_size=16
cube_k_size=16
vec_calc_size=128

[AICoreMemoryRates]
ddr_rate=32

[DtypeMKN]
Default=16,16,16
DT_INT8=16,32,16
DT_UINT8=16,32,16

[AICoreintrinsicDtypeMap]
0=Intrinsic_vrec|float16,float32
24=Intrinsic_vconv|f322f32r,f322f16,f322bf16r,bf162f32
25=Intrinsic_mmad|u32u8u8,s32s8s8,f16f16f16,f32f16f16
"""

# Laid out as Ascend310P3.ini: no cube_core_cnt, no bf16 anywhere (kernels.md §5, §6).
INI_310P3 = """\
# [Platform Info configuration begin]
#
[version]
SoC_version=Ascend310P3
Short_SoC_version=Ascend310P
AIC_version=AIC-M-200

[SoCInfo]
ai_core_cnt=8
vector_core_cnt=7
mix_vector_core_cnt=15
memory_size=24000000000
l2_size=16777216

[AICoreSpec]
cube_freq=1060
cube_m_size=16
cube_n_size=16
cube_k_size=16

[DtypeMKN]
Default=16,16,16
DT_INT8=16,32,16

[AICoreintrinsicDtypeMap]
25=Intrinsic_vconv|f322f16,f162f32
26=Intrinsic_mmad|s32u8u8,f16f16f16,f32f16f16
126=Intrinsic_rpn_cor|""

[SoftwareSpec]
jit_compile_default_value=1
"""


def test_parse_910b4() -> None:
    ini = perf.parse_platform_ini(INI_910B4, source="Ascend910B4.ini")
    assert ini.soc_version == "Ascend910B4"
    assert (ini.cube_core_cnt, ini.vector_core_cnt, ini.cube_freq_mhz) == (20, 40, 1500)
    assert ini.cube_mnk == (16, 16, 16)
    assert ini.dtype_mkn["DT_INT8"] == (16, 32, 16)
    assert ini.supports_bf16
    # 20 × 16·16·16 × 2 × 1500 MHz = 245.76 TFLOP/s (kernels.md §6)
    assert perf.npu_matmul_peak(ini, "bf16") == pytest.approx(245.76e12)
    assert perf.npu_matmul_peak(ini, "fp16") == pytest.approx(245.76e12)
    assert perf.npu_matmul_peak(ini, "fp32") is None


def test_parse_310p3_uses_ai_cores_and_has_no_bf16() -> None:
    ini = perf.parse_platform_ini(INI_310P3, source="Ascend310P3.ini")
    assert ini.cube_core_cnt is None and ini.cube_cores == 8
    assert not ini.supports_bf16
    assert perf.npu_matmul_peak(ini, "fp16") == pytest.approx(69.47e12, rel=1e-3)  # table: 69.5
    assert perf.npu_matmul_peak(ini, "bf16") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[version]\nSoC_version=X\n", r"\[SoCInfo\] is missing"),
        (INI_910B4.replace("cube_freq=1500", "cube_freq=fast"), "cube_freq='fast' is not a number"),
        (INI_910B4.replace("cube_k_size=16\n", ""), "cube_k_size is missing"),
        (INI_910B4.replace("Default=16,16,16", "Default=16,16"), "three integers"),
        ("not an ini", "not a platform ini"),
    ],
)
def test_bad_ini_is_an_input_error(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        perf.parse_platform_ini(text, source="x.ini")


@given(
    cores=st.integers(1, 64),
    freq=st.integers(100, 3000),
    m=st.sampled_from([8, 16, 32]),
    n=st.sampled_from([8, 16, 32]),
    k=st.sampled_from([8, 16, 32]),
)
def test_peak_formula_property(cores: int, freq: int, m: int, n: int, k: int) -> None:
    text = (
        INI_910B4.replace("cube_core_cnt=20", f"cube_core_cnt={cores}")
        .replace("cube_freq=1500", f"cube_freq={freq}")
        .replace("Default=16,16,16", f"Default={m},{n},{k}")
    )
    ini = perf.parse_platform_ini(text)
    assert perf.npu_matmul_peak(ini, "fp16") == pytest.approx(cores * m * n * k * 2 * freq * 1e6)


def test_find_platform_ini(tmp_path: Path) -> None:
    cfg = tmp_path / "opt/cann/aarch64-linux/data/platform_config"
    cfg.mkdir(parents=True)
    (cfg / "Ascend910B4.ini").write_text(INI_910B4)
    host = Host(root=tmp_path, env={"ASCEND_HOME_PATH": "/opt/cann"}, allow_commands=False)
    found = perf.find_platform_ini(host, "Ascend910B4")
    assert found == "/opt/cann/aarch64-linux/data/platform_config/Ascend910B4.ini"
    assert perf.read_platform_ini(host, found).cube_cores > 0
    assert perf.find_platform_ini(host, "Ascend910B1") is None
    assert perf.find_platform_ini(host, "../../etc/passwd") is None  # a SoC name is a plain name
    # a tree's link out of it resolves inside the tree: the host's own file is never read
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    (outside / "data/platform_config").mkdir(parents=True)
    (outside / "data/platform_config/Ascend910B2.ini").write_text(INI_910B4)
    (tmp_path / "opt/linked").symlink_to(outside)
    linked = Host(root=tmp_path, env={"ASCEND_HOME_PATH": str(outside)}, allow_commands=False)
    assert perf.find_platform_ini(linked, "Ascend910B2") is None
    linked2 = Host(root=tmp_path, env={"ASCEND_HOME_PATH": "/opt/linked"}, allow_commands=False)
    assert perf.find_platform_ini(linked2, "Ascend910B2") is None
    default = tmp_path / "usr/local/Ascend/ascend-toolkit/latest/x86_64-linux/data/platform_config"
    default.mkdir(parents=True)
    (default / "Ascend310P3.ini").write_text(INI_310P3)
    assert (
        perf.find_platform_ini(Host(root=tmp_path, env={}, allow_commands=False), "Ascend310P3") is not None
    )


def test_npu_peaks_from_toolkit(tmp_path: Path) -> None:
    from cannenv.certify.perf_stage import peaks_for

    cfg = tmp_path / "usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/data/platform_config"
    cfg.mkdir(parents=True)
    (cfg / "Ascend910B4.ini").write_text(INI_910B4)
    peaks = peaks_for("npu", "Ascend910B4", Host(root=tmp_path, env={}, allow_commands=False))
    tflops, bw, src, bw_ok = peaks.tflops, peaks.bandwidth_gbs, peaks.source, peaks.bandwidth_verified
    assert tflops["bf16"] == pytest.approx(245.76)
    assert "20 cube cores" in src and "1500 MHz" in src
    assert bw == 800 and not bw_ok  # from the data file, unverified


def test_unverified_peaks_are_never_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A figure not from the vendor gives a ratio, never a pass: compute as well as bandwidth."""
    from cannenv.certify import perf_stage, runner

    unverified = perf_stage.Peaks({"bf16": 100.0}, 1000.0, "t", "t", False, False)
    monkeypatch.setattr(perf_stage, "peaks_for", lambda *_: unverified)
    plans = runner.plan(runner.CertifyOptions(device="cuda"), "perf")
    result = {"device": {"name": "X"}, "matmul": [{"dtype": "bf16", "tflops": 90.0}], "copy": {"gbs": 900.0}}
    results = perf_stage.judge_perf(plans, result, "cuda", Host(root=Path("/"), env={}, allow_commands=False))
    assert [r.id for r in results] == ["perf-matmul-bf16", "perf-matmul-fp16", "perf-bandwidth"]
    assert all(r.status == "skip" for r in results)
    assert results[0].metrics["ratio"] == pytest.approx(0.9) and "unverified" in results[0].reasons[0]


def test_perf_data_and_published_peaks() -> None:
    data = perf.load_perf_data()
    assert data.thresholds.warn_below_ratio == 0.6
    h200 = perf.published_peak(data.cuda_peaks, "NVIDIA H200")
    assert h200 is not None and h200.tflops["bf16"] == pytest.approx(989.5) and h200.bandwidth_gbs == 4800
    nvl = perf.published_peak(data.cuda_peaks, "NVIDIA H200 NVL")
    assert nvl is not None and nvl.name == "NVIDIA H200 NVL"
    pcie = perf.published_peak(data.cuda_peaks, "NVIDIA H100 PCIe")
    assert pcie is not None and pcie.tflops["fp16"] == pytest.approx(756.5)
    assert perf.published_peak(data.cuda_peaks, "NVIDIA GeForce RTX 4090") is None
    assert all(row.verified for row in data.cuda_peaks)
    assert all(not row.verified for row in data.npu_bandwidth)


def test_judge() -> None:
    th = perf.Thresholds(warn_below_ratio=0.6, fail_below_ratio=0.1)
    ok = perf.judge(800, 1000, th, what="bf16 matmul", unit="TFLOP/s", peak_source="t")
    assert ok.status == "pass" and ok.warning is None and ok.ratio == pytest.approx(0.8)
    low = perf.judge(500, 1000, th, what="m", unit="u", peak_source="t")
    assert low.status == "pass" and low.warning is not None and "60%" in low.warning
    bad = perf.judge(50, 1000, th, what="m", unit="u", peak_source="t")
    assert bad.status == "fail"
    none = perf.judge(50, None, th, what="m", unit="u", peak_source="no table")
    assert none.status == "skip" and none.ratio is None
    soft = perf.judge(500, 1000, th, what="m", unit="u", peak_source="t", verified=False)
    assert soft.status == "skip" and soft.ratio == pytest.approx(0.5)


def test_kernel_details_top_ops() -> None:
    csv_text = (
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\n"
        "1,MatMul_1,MatMulV2,AI_CORE,1.0,30.5,0\n"
        "1,MatMul_2,MatMulV2,AI_CORE,2.0,20.0,0\n"
        "1,Softmax_1,SoftmaxV2,AI_VECTOR_CORE,3.0,5.0,0\n"
        "1,Bad,Cast,AI_CORE,4.0,n/a,0\n"
    )
    ops = perf.top_ops_from_kernel_details(csv_text)
    assert [(o.name, o.calls) for o in ops] == [("MatMulV2", 2), ("SoftmaxV2", 1)]
    assert ops[0].time_us == pytest.approx(50.5)
    with pytest.raises(InputError, match="Duration"):
        perf.top_ops_from_kernel_details("a,b\n1,2\n")


def test_cpu_perf_end_to_end_records_figures_but_certifies_nothing() -> None:
    pytest.importorskip("torch")
    from cannenv.certify import runner

    options = runner.CertifyOptions(device="cpu", timeout_s=300)
    plans = runner.plan(options, "perf")
    assert [p.id for p in plans] == ["perf-matmul-fp32", "perf-matmul-bf16", "perf-bandwidth"]
    results = runner.run(plans, options)
    assert all(r.status == "skip" for r in results)
    assert results[0].metrics["tflops"] > 0 and results[-1].metrics["gbs"] > 0
    assert "no peak" in results[0].reasons[0]
    # Each stage reports its own measurement time, not the whole worker run's.
    assert all(r.duration_s > 0 for r in results)
    assert all(r.duration_s == r.metrics["stage_s"] for r in results)
    # They ran but nothing could be judged: not-certified (exit 4), not nothing-runnable.
    from cannenv.certify.stages import exit_code, outcome

    assert all(r.ran for r in results) and outcome(results) == "not-certified"
    assert exit_code(results) == 4
