"""Memory plans of real published configs, by parameter role, against values computed by hand,
under two transformers majors (issue 25: "Every MoE plan is off by 2-8x" under transformers 5,
whose experts are fused 3-D nn.Parameters rather than nn.Linear).

The configs are in tests/data/model_configs/real (SOURCES there says where each comes from). The
installed transformers (5.x) is one major; transformers 4.57.3 is installed with pip into a
``--target`` folder in the cache (network, once) and put first on PYTHONPATH for the other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("torch")
pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "data" / "model_configs" / "real"
NAMES = (
    "Mixtral-8x7B-v0.1",
    "Qwen3-30B-A3B",
    "Qwen3-30B-A3B-FP8",
    "DeepSeek-V2-Lite",
    "gemma-2-9b",
    "Phi-3-mini-4k-instruct",
    "Llama-2-7B-GPTQ",
)
TF4 = ("transformers==4.57.3", "huggingface_hub==0.36.0", "tokenizers==0.22.1")


def _plans(extra_path: str | None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    env["PYTHONPATH"] = os.pathsep.join([p for p in (extra_path, str(ROOT)) if p])
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/helpers/model_plans.py"),
            *(str(REAL / f"{n}.json") for n in NAMES),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        env=env,
        check=False,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    doc: dict[str, object] = json.loads(res.stdout)
    return doc


def _tf4() -> str:
    from cannenv.matrix import cache_dir

    base = cache_dir()
    if base is None:
        pytest.skip("no cache folder for transformers 4")
    target = base / "transformers-4.57.3"
    if not (target / "transformers" / "__init__.py").is_file():
        res = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *TF4],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if res.returncode != 0:
            pytest.skip(f"pip install {' '.join(TF4)} failed (no network?): {res.stderr[-300:]}")
    return str(target)


@pytest.fixture(scope="module", params=["installed", "4.57.3"])
def plans(request: pytest.FixtureRequest) -> dict[str, object]:
    if request.param == "installed":
        doc = _plans(None)
        assert str(doc["transformers"]).split(".")[0] == "5"
        return doc
    doc = _plans(_tf4())
    assert doc["transformers"] == "4.57.3"
    return doc


GB = 10**9
GIB = 1 << 30


def test_mixtral_8x7b(plans: dict[str, object]) -> None:
    m: dict[str, dict[str, object]] = plans["Mixtral-8x7B-v0.1"]  # type: ignore[assignment]
    h, layers, experts, inter, vocab, kv = 4096, 32, 8, 14336, 32000, 8 * 128
    attention = layers * (2 * h * h + 2 * kv * h)  # q, o + k, v
    expert = layers * experts * 3 * h * inter  # w1, w2, w3 (gate_up_proj + down_proj in transformers 5)
    router = layers * experts * h
    norms = layers * 2 * h + h
    assert m["by_role"] == {
        "attention": attention,
        "expert": expert,
        "router": router,
        "norm": norms,
        "embedding": vocab * h,
        "head": vocab * h,
    }
    params = attention + expert + router + norms + 2 * vocab * h
    assert m["parameters"] == params == 46_702_792_704
    total = m["total"]
    assert total["bf16"] == 2 * params  # type: ignore[index]
    assert round(2 * params / GB, 1) == 93.4  # "Mixtral bf16 93.4 GB total"
    replicated = 2 * (router + norms)  # routers and norms stay whole on every device
    per = m["per_device"]
    assert per["bf16"]["1"] == 2 * params  # type: ignore[index]
    assert per["bf16"]["2"] == (2 * params - replicated) // 2 + replicated  # type: ignore[index]
    assert per["bf16"]["8"] == (2 * params - replicated) // 8 + replicated == 11_677_999_104  # type: ignore[index]
    assert round(per["bf16"]["8"] / GIB, 1) == 10.9  # type: ignore[index]  # "about 10.9 GiB per device at TP 8"
    # weight-only int8: 1 byte per weight + a 2-byte scale and offset per output channel of each matrix
    quantised = attention + expert
    out_channels = layers * ((h + kv + kv + h) + experts * (inter + h + inter))
    rest16 = 2 * (router + norms + 2 * vocab * h)
    int8 = quantised + 4 * out_channels + rest16
    assert total["int8"] == int8 == 47_001_116_672  # type: ignore[index]
    # int4: half a byte per weight + a 2-byte scale and offset per 128 inputs
    int4 = quantised // 2 + 4 * (quantised // 128) + rest16
    assert total["int4"] == int4 == 25_197_813_760  # type: ignore[index]
    assert per["int4"]["8"] == (int4 - replicated) // 8 + replicated  # type: ignore[index]
    assert per["int8"]["8"] == (int8 - replicated) // 8 + replicated  # type: ignore[index]


def test_qwen3_30b_a3b_and_its_fp8_checkpoint(plans: dict[str, object]) -> None:
    q: dict[str, dict[str, object]] = plans["Qwen3-30B-A3B"]  # type: ignore[assignment]
    h, layers, experts, moe_i, vocab, d = 2048, 48, 128, 768, 151936, 128
    attention = layers * (2 * h * 32 * d + 2 * h * 4 * d + 2 * d)  # q, o; k, v (4 KV heads); q/k norms
    expert = layers * experts * 3 * h * moe_i
    router = layers * experts * h
    norms = layers * 2 * h + h
    assert q["by_role"] == {
        "attention": attention - layers * 2 * d,
        "norm": norms + layers * 2 * d,  # q_norm/k_norm are norms
        "expert": expert,
        "router": router,
        "embedding": vocab * h,
        "head": vocab * h,
    }
    params = attention + expert + router + norms + 2 * vocab * h
    assert q["parameters"] == params == 30_532_122_624
    assert q["intermediate"] == 8 * moe_i  # activations: 8 routed experts of moe_intermediate_size
    # fp8 (weight_block_size [128, 128]): 1 byte per weight + an fp32 scale per 128x128 block
    f = plans["Qwen3-30B-A3B-FP8"]
    quantised = layers * (2 * h * 32 * d + 2 * h * 4 * d) + expert
    blocks = layers * ((32 * 16) + 2 * (4 * 16) + (16 * 32) + experts * 3 * (6 * 16))
    rest16 = 2 * (router + norms + layers * 2 * d + 2 * vocab * h)
    assert f["total"]["fp8-block"] == quantised + 4 * blocks + rest16 == 31_174_545_408  # type: ignore[index]


def test_deepseek_v2_lite(plans: dict[str, object]) -> None:
    m: dict[str, dict[str, object]] = plans["DeepSeek-V2-Lite"]  # type: ignore[assignment]
    h, layers, heads, nope, rope, v, rank, vocab = 2048, 27, 16, 128, 64, 128, 512, 102400
    experts, moe_i, shared, dense_i = 64, 1408, 2, 10944
    attention = layers * (
        h * heads * (nope + rope)  # q_proj (q_lora_rank null)
        + h * (rank + rope)  # kv_a_proj_with_mqa
        + rank * heads * (nope + v)  # kv_b_proj
        + heads * v * h  # o_proj
    )
    by_role = m["by_role"]
    assert by_role["attention"] == attention  # type: ignore[index]
    assert by_role["mlp"] == 3 * h * dense_i  # first_k_dense_replace: layer 0 is dense  # type: ignore[index]
    assert by_role["expert"] == (layers - 1) * experts * 3 * h * moe_i  # type: ignore[index]
    assert by_role["shared_expert"] == (layers - 1) * 3 * h * shared * moe_i  # type: ignore[index]
    assert by_role["router"] == (layers - 1) * experts * h  # type: ignore[index]
    assert by_role["embedding"] == by_role["head"] == vocab * h  # type: ignore[index]
    assert m["parameters"] == 15_706_484_224  # "16B total" (15.7B) in the model card
    assert m["attention"] == ["mla"]
    # TP 8: kv_a_proj_with_mqa is replicated (vLLM ReplicatedLinear), like routers and norms
    replicated = 2 * (layers * h * (rank + rope) + by_role["router"] + by_role["norm"])  # type: ignore[index]
    total = 2 * m["parameters"]  # type: ignore[operator]
    assert m["per_device"]["bf16"]["8"] == (total - replicated) // 8 + replicated  # type: ignore[index]


def test_gemma2_9b_runs_eager_attention(plans: dict[str, object]) -> None:
    g: dict[str, object] = plans["gemma-2-9b"]  # type: ignore[assignment]
    assert g["parameters"] == 9_241_705_984  # tied embedding counted once
    assert g["eager_layers"] == 42  # attn_logit_softcapping: no fused kernel soft-caps
    assert g["attention"] == ["gqa", "gqa+window4096"]


def test_phi3_mini_and_gptq(plans: dict[str, object]) -> None:
    p: dict[str, object] = plans["Phi-3-mini-4k-instruct"]  # type: ignore[assignment]
    assert p["parameters"] == 3_821_079_552
    assert p["attention"] == ["mha+window2047"]  # its sliding_window applies (not only mistral/mixtral)
    g: dict[str, dict[str, object]] = plans["Llama-2-7B-GPTQ"]  # type: ignore[assignment]
    h, i, layers = 4096, 11008, 32
    quantised = layers * (4 * h * h + 3 * h * i)
    groups = quantised // 128
    g_idx = layers * (4 * h + 2 * h + i)  # one int32 per input row of each matrix
    rest16 = 2 * (g["parameters"] - quantised)  # type: ignore[operator]
    # 4-bit qweight, fp16 scale + 4-bit zero point per group of 128, g_idx
    assert g["total"]["gptq-int4"] == quantised // 2 + groups * 2.5 + 4 * g_idx + rest16  # type: ignore[index]
    assert g["total"]["gptq-int4"] == 3_893_862_400  # type: ignore[index]  # TheBloke's model.safetensors: 3.9 GB
