"""What the chip computes, applied to the plan (issue 25: "a 310P plan in bf16 says ready (310P runs
fp16), lists A2/A3-only fused attention, and there is no HBM for 910B1, 910B2 or any 310P")."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from cannenv import soc
from cannenv.model import quant, registry

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "data" / "model_configs"
REAL = CONFIGS / "real"
REG = ROOT / "tests" / "data" / "torch_npu_registry"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    return subprocess.run(
        [sys.executable, "-m", "cannenv", "model", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
        check=False,
    )


def test_hbm_per_soc_with_sources() -> None:
    for name, mib in (
        ("Ascend910B1", 65536),
        ("Ascend910B2", 65536),
        ("Ascend910B4", 32768),
        ("Ascend310P3", 21527),
    ):
        mem = soc.device_memory(soc=name)
        assert mem is not None and mem.hbm_mib == mib and mem.sources, name


@pytest.mark.slow
def test_a_310p_plan_runs_fp16_without_fused_attention() -> None:
    cfg = str(REAL / "Phi-3-mini-4k-instruct.json")  # torch_dtype bfloat16
    res = run("memory", "--config", cfg, "--soc", "Ascend310P3", "--seq-len", "2048", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["dtype"] == "fp16" and doc["hbm_bytes"] == 21527 << 20
    assert any("has no bf16: the bf16 checkpoint runs in fp16" in n for n in doc["notes"])
    res = run("memory", "--config", cfg, "--soc", "Ascend310P3", "--dtype", "bf16")
    assert res.returncode == 2 and "--dtype bf16: Atlas 300I Duo/Pro (310P) computes fp16, int8" in res.stderr
    res = run(
        "check",
        "--config",
        str(CONFIGS / "llama.json"),
        "--soc",
        "Ascend310P3",
        "--torch-npu",
        str(REG / "2.13.0"),
    )
    assert res.returncode == 0, res.stderr
    assert (
        "npu_fusion_attention not suggested: Atlas 300I Duo/Pro (310P) has no npu_fusion_attention"
        in res.stderr
    )
    assert "attention: torch_npu.npu_fusion_attention" not in res.stdout


@pytest.mark.slow
def test_soft_capping_is_never_offered_fused_attention() -> None:
    res = run("ops", "--config", str(CONFIGS / "gemma2.json"), "--torch-npu", str(REG / "2.13.0"))
    assert res.returncode == 0, res.stderr
    assert "npu_fusion_attention not suggested: it cannot soft-cap the scores" in res.stderr
    assert "attention: torch_npu.npu_fusion_attention" not in res.stdout
    # nor the decode-time ones (their attention is written out as matmul + softmax.int there)
    for op in ("npu_fused_infer_attention_score", "npu_incre_flash_attention"):
        assert f"{op} not suggested: it cannot soft-cap the scores" in res.stderr
        assert f"torch_npu.{op} (" not in res.stdout


@pytest.mark.slow
def test_fp8_needs_conversion_on_a2_and_contradictions_are_refused() -> None:
    fp8 = str(REAL / "Qwen3-30B-A3B-FP8.json")
    res = run("memory", "--config", fp8, "--soc", "Ascend910B3", "--json")
    assert res.returncode == 0, res.stderr
    assert any(
        n.startswith("needs conversion: Atlas A2 has no fp8 matmul") for n in json.loads(res.stdout)["notes"]
    )
    res = run("memory", "--config", fp8, "--soc", "Ascend910B3", "--dtype", "fp8")
    assert res.returncode == 2 and "has no fp8 matmul" in res.stderr
    res = run("memory", "--config", fp8, "--soc", "Ascend910B3", "--family", "a3")
    assert res.returncode == 2 and "--soc Ascend910B3 is a Atlas A2 SoC" in res.stderr
    res = run("check", "--config", fp8, "--soc", "Ascend910B3", "--stack", "a3-cann9.0.0-torch2.9.0-py3.12")
    assert res.returncode == 2 and "--stack is for Atlas A3" in res.stderr


def test_quantised_matmul_ops_are_in_the_registries() -> None:
    for version in ("2.7.1", "2.13.0"):
        reg = registry.from_dir(REG / version)
        assert reg.sections(quant.WOQ_OP) and reg.sections(quant.QUANT_OP), version


@pytest.mark.slow
def test_a_registry_without_the_quantised_matmul_is_not_runnable(tmp_path: Path) -> None:
    planted = tmp_path / "site"
    shutil.copytree(REG / "2.13.0", planted)
    for yml in (planted / "torch_npu/csrc/aten").glob("*.yaml"):
        kept = [line for line in yml.read_text().splitlines() if "npu_weight_quant_batchmatmul" not in line]
        yml.write_text("\n".join(kept) + "\n")
    res = run(
        "check",
        "--config",
        str(REAL / "Llama-2-7B-GPTQ.json"),
        "--soc",
        "Ascend910B3",
        "--torch-npu",
        str(planted),
    )
    assert res.returncode == 1, res.stderr
    assert (
        "the gptq-int4 weights need npu::npu_weight_quant_batchmatmul, absent from this torch_npu"
        in res.stdout
    )


def test_the_hosts_device_memory_from_npu_smi() -> None:
    """The chip rows' HBM-Usage total (Memory-Usage on 310P, which has no HBM column), per real
    capture (tests/data/npu_smi/SOURCES.md): `model check` on the host plans with it."""
    from cannenv.probes.npu import parse_npu_smi_info

    expected = {
        "910b1_24.1.0_info.txt": {65536},
        "910b4_24.1.1_info.txt": {32768},
        "a3_26.0.rc2_info.txt": {65536},
        "310p_info.txt": {21527},
        "310p3_duo_25.2.0_info.txt": {43693, 44280},
    }
    for name, sizes in expected.items():
        _, _, chips = parse_npu_smi_info((ROOT / "tests/data/npu_smi" / name).read_text())
        assert {c.memory_mib for c in chips} == sizes, name


@pytest.mark.slow
def test_mla_models_are_offered_the_mla_prolog() -> None:
    res = run(
        "ops", "--config", str(CONFIGS / "deepseek_v3.json"), "--torch-npu", str(REG / "2.13.0"), "--json"
    )
    assert res.returncode == 0, res.stderr
    fusions = {f["id"]: f for f in json.loads(res.stdout)["fusions"]}
    assert (
        fusions["mla-prolog"]["target"] == "torch_npu.npu_mla_prolog_v3"
        and fusions["mla-prolog"]["available"]
    )
    res = run("ops", "--config", str(CONFIGS / "llama.json"), "--torch-npu", str(REG / "2.13.0"), "--json")
    assert "mla-prolog" not in {f["id"] for f in json.loads(res.stdout)["fusions"]}
