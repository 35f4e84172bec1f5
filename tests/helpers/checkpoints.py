"""A tiny Hugging Face checkpoint made here (never downloaded), for the `--model` stage tests."""

from __future__ import annotations

from pathlib import Path


def tiny_llama(folder: Path) -> Path:
    """Write a 2-layer Llama (vocab 512, hidden 128) with ``save_pretrained`` into ``folder``."""
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=512,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    transformers.LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder
