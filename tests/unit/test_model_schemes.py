"""Weight formats and device splits, pure arithmetic (no torch): the schemes a config names, the
bytes per matrix, expert parallelism and K/V replication."""

from __future__ import annotations

import pytest

from cannenv.errors import InputError
from cannenv.model import memory, quant

MIXTRAL_LIKE = memory.Shape(
    "moe",
    params=8 * 3 * 100 * 50 + 2 * 64 * 50 + 8 * 50 + 50,
    tied=False,
    hidden=50,
    heads=8,
    intermediate=200,
    vocab=64,
    layers=(memory.Layer("gqa", 2, 8),),
    weights=(
        memory.Weights("expert", "expert", 8 * 3 * 100 * 50, ((100, 50, 16), (50, 100, 8))),
        memory.Weights("embedding", "tp", 64 * 50),
        memory.Weights("head", "tp", 64 * 50),
        memory.Weights("router", "replicated", 8 * 50),
        memory.Weights("norm", "replicated", 50),
    ),
    experts=8,
    experts_per_token=2,
)


def test_experts_split_by_tp_or_distributed_by_ep() -> None:
    bf16 = "bf16"
    expert = 2 * 8 * 3 * 100 * 50
    rest_split = 2 * 2 * 64 * 50
    replicated = 2 * (8 * 50 + 50)
    tp4 = memory.plan(MIXTRAL_LIKE, dtype=bf16, batch=1, seq_len=1, tp=4).at_tp.weights
    assert tp4 == (expert + rest_split) // 4 + replicated
    # --ep 8 at TP 1: one whole expert per device, the rest whole
    ep8 = memory.plan(MIXTRAL_LIKE, dtype=bf16, batch=1, seq_len=1, tp=1, ep=8).at_tp.weights
    assert ep8 == expert // 8 + rest_split + replicated
    with pytest.raises(InputError, match="--ep 3 does not divide the model's 8 routed experts"):
        memory.plan(MIXTRAL_LIKE, dtype=bf16, batch=1, seq_len=1, ep=3)


def test_kv_projections_replicate_past_their_heads() -> None:
    kv = memory.Weights("attention", "kv", 2 * 2 * 8 * 50, ((16, 50, 2),), kv_heads=2)
    shp = memory.Shape("gqa", kv.params, False, 50, 8, 100, 64, (memory.Layer("gqa", 2, 8),), weights=(kv,))
    per = {t: memory.plan(shp, dtype="bf16", batch=1, seq_len=1, tp=t).at_tp.weights for t in (1, 2, 8)}
    assert per[1] == 2 * kv.params and per[2] == kv.params and per[8] == kv.params  # 1 KV head per rank


def test_schemes_from_config() -> None:
    gptq = quant.from_config(
        {"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}}, "c"
    )
    assert gptq is not None and gptq.name == "gptq-int4" and gptq.matmul_op == quant.WOQ_OP
    # one [256, 256] matrix: 4-bit weights, (fp16 scale + 4-bit zero) per 128 inputs per row, int32 g_idx
    assert gptq.matrix_bytes(256, 256) == 256 * 256 / 2 + 256 * 2 * 2.5 + 256 * 4
    awq = quant.from_config(
        {"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}}, "c"
    )
    assert awq is not None and awq.matrix_bytes(256, 256) == 256 * 256 / 2 + 256 * 2 * 2.5
    fp8 = quant.from_config(
        {
            "quantization_config": {
                "quant_method": "fp8",
                "weight_block_size": [128, 128],
                "ignored_layers": ["gate"],
            }
        },
        "c",
    )
    assert fp8 is not None and fp8.needs_fp8_matmul and fp8.skip == ("gate",)
    assert fp8.matrix_bytes(256, 384) == 256 * 384 + 4 * 2 * 3
    ct = quant.from_config(
        {
            "quantization_config": {
                "quant_method": "compressed-tensors",
                "config_groups": {"g": {"weights": {"num_bits": 4, "strategy": "group", "group_size": 64}}},
            }
        },
        "c",
    )
    assert ct is not None and ct.bits == 4 and ct.granularity == "group" and ct.group == 64
    w8a8 = quant.from_config({"quantize": "w8a8"}, "c")
    assert w8a8 is not None and w8a8.matmul_op == quant.QUANT_OP
    assert quant.from_config({}, "c") is None
    assert quant.config_dtype({"torch_dtype": "float16"}) == "fp16"
    assert quant.config_dtype({"dtype": "bfloat16"}) == "bf16"


@pytest.mark.parametrize(
    ("q", "field"),
    [
        ({"quant_method": "gptq", "bits": "4"}, "quantization_config.bits"),
        ({"quant_method": "gptq", "bits": 2.5}, "quantization_config.bits"),
        ({"quant_method": "fp8", "weight_block_size": [128, 64]}, "quantization_config.weight_block_size"),
        ({"quant_method": "magic"}, "quantization_config.quant_method"),
        (
            {"quant_method": "awq", "modules_to_not_convert": "gate"},
            "quantization_config.modules_to_not_convert",
        ),
        ({"quant_method": "compressed-tensors", "config_groups": []}, "quantization_config.config_groups"),
    ],
)
def test_bad_quantization_configs_name_the_field(q: dict[str, object], field: str) -> None:
    with pytest.raises(InputError, match=field.replace(".", r"\.")):
        quant.from_config({"quantization_config": q}, "c")
