"""`certify --level 3`: a failing LLM stage names the first divergent module (``named_modules()``)."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from cannenv.certify import forward, llm, runner  # noqa: E402
from cannenv.certify.llm_worker import spool_modules  # noqa: E402


def _device_side(model: llm.TinyDecoder, cfg: llm.TinyConfig, out: Path) -> llm.ForwardOutput:
    """What the worker writes: block outputs and logits, and every module's output."""
    ids = llm.input_ids(cfg)
    with torch.no_grad():
        captured, logits = model.forward_capture(ids)
    spool_modules(model, ids, out / "modules")
    return llm.to_output(captured, logits)


def test_failing_stage_names_the_first_divergent_module(tmp_path: Path) -> None:
    cfg = llm.TinyConfig(batch=1, seq_len=16)
    model = llm.build_model(cfg)
    with torch.no_grad():
        model.layers[1].mlp.up_proj.weight[5].zero_()  # type: ignore[union-attr, index]
    bad = _device_side(model, cfg, tmp_path)
    modules = forward.module_divergence(cfg, tmp_path / "modules", "fp32")
    assert modules is not None and modules["module"] == "layers.1.mlp.up_proj"
    assert modules["path"][-1] == "layers.1.mlp.up_proj" and modules["path"][0] == "embed"
    plan = runner.plan(runner.CertifyOptions(device="cpu"), "llm")[0]
    result = forward.judge_forward(plan, llm.reference(cfg), bad, {"dtype": "fp32"}, modules)
    assert result.status == "fail"
    assert result.metrics["first_divergence"]["module"] == "layers.1.mlp.up_proj"
    assert any(r.startswith("first divergent module: layers.1.mlp.up_proj") for r in result.reasons)


def test_passing_stage_records_no_divergence(tmp_path: Path) -> None:
    cfg = llm.TinyConfig(batch=1, seq_len=16)
    model = llm.place(llm.build_model(cfg), torch.device("cpu"), torch.bfloat16)
    assert isinstance(model, llm.TinyDecoder)
    out = _device_side(model, cfg, tmp_path)
    modules = forward.module_divergence(cfg, tmp_path / "modules", "bf16")
    assert modules is not None and modules["module"] is None
    plan = runner.plan(runner.CertifyOptions(device="cpu"), "llm")[0]
    result = forward.judge_forward(plan, llm.reference(cfg), out, {"dtype": "bf16"}, modules)
    assert result.status == "pass" and result.metrics["first_divergence"]["module"] is None


def test_no_module_spool_is_none(tmp_path: Path) -> None:
    assert forward.module_divergence(llm.TinyConfig(), tmp_path / "absent", "bf16") is None
