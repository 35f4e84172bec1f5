"""The activation estimate against a measured peak: small models of each kind (dense, MoE with
fused experts, soft-capped) run a real prefill on the CPU with SDPA and with eager attention, every
tensor created in the pass counted while alive (cannenv.model.measure). benchmarks/bench_model.py
prints the same table."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from cannenv.model import config, measure, memory, trace  # noqa: E402

SMALL = {
    "llama": {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 256,
        "intermediate_size": 688,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "vocab_size": 1024,
    },
    "mixtral": {
        "model_type": "mixtral",
        "architectures": ["MixtralForCausalLM"],
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "num_local_experts": 4,
        "num_experts_per_tok": 2,
        "vocab_size": 1024,
    },
    "qwen3_moe": {
        "model_type": "qwen3_moe",
        "architectures": ["Qwen3MoeForCausalLM"],
        "hidden_size": 256,
        "intermediate_size": 512,
        "moe_intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "num_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 1024,
    },
    "gemma2": {  # soft-capping: transformers runs it eager whatever is asked
        "model_type": "gemma2",
        "architectures": ["Gemma2ForCausalLM"],
        "hidden_size": 256,
        "intermediate_size": 512,
        "num_hidden_layers": 2,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "head_dim": 32,
        "vocab_size": 1024,
        "sliding_window": 4096,
    },
}


def ratios(seq: int) -> list[tuple[str, str, int, int, float]]:
    out = []
    for name, raw in SMALL.items():
        for impl in ("sdpa", "eager") if name != "gemma2" else ("default",):
            doc = dict(raw) if impl == "default" else {**raw, "attn_implementation": impl}
            cfg = config.from_dict(doc, name)
            model = trace.build(cfg, torch.float32, device="cpu")
            shp = trace.shape(cfg, model)
            measured = measure.prefill_peak(model, 1, seq)
            estimate = memory.activation_bytes(shp, 1, seq, 4)
            out.append((name, impl, measured, estimate, estimate / measured))
    return out


@pytest.mark.slow
def test_activation_estimates_hold_against_measured_peaks() -> None:
    rows = ratios(1024)
    for name, impl, measured, estimate, ratio in rows:
        # within 25 % low / 35 % high at 1,024 tokens (measured: 0.81-1.11); eager's s x s scores
        # are 6x the fused peak here, so planning eager as fused would be far outside
        assert 0.75 <= ratio <= 1.35, (name, impl, measured, estimate)
    by = {(n, i): m for n, i, m, _, _ in rows}
    assert by[("llama", "eager")] > 4 * by[("llama", "sdpa")]
    assert by[("gemma2", "default")] > 4 * by[("llama", "sdpa")]  # soft-capped: eager
