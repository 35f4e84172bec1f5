"""`cannenv precision` on real small architectures (transformers, deterministic random weights).

Llama, Qwen2, Qwen3, Qwen2-MoE and Gemma/Gemma2 at tiny sizes: the same model in bf16 against float32
reports no divergence; a copy with one module's weights perturbed (scaled, one row zeroed, a square
matrix transposed) is localised to exactly that module and the replay says "local"; a layer-2
perturbation that reaches layer 20 of a 22-layer model is reported at layer 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from cannenv.precision import runner  # noqa: E402
from cannenv.precision.policy import load_policy  # noqa: E402
from tests.helpers.cli import cannenv  # noqa: E402

COMMON: dict[str, Any] = {
    "vocab_size": 128,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 64,
}
INPUTS = runner.InputSpec(batch=1, seq_len=16, seed=0)


def _config(kind: str, layers: int) -> Any:
    t = transformers
    c = {**COMMON, "num_hidden_layers": layers}
    if kind == "llama":
        return t.LlamaConfig(**c)
    if kind == "qwen2":
        return t.Qwen2Config(**c)
    if kind == "qwen3":
        return t.Qwen3Config(head_dim=8, **c)
    if kind == "qwen2_moe":
        return t.Qwen2MoeConfig(
            moe_intermediate_size=16,
            shared_expert_intermediate_size=32,
            num_experts=4,
            num_experts_per_tok=2,
            **c,
        )
    if kind == "gemma":
        return t.GemmaConfig(head_dim=8, **c)
    if kind == "gemma2":
        return t.Gemma2Config(head_dim=8, **c)
    raise AssertionError(kind)


def _save(kind: str, folder: Path, layers: int = 3, perturb: Callable[[Any], None] | None = None) -> str:
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(_config(kind, layers))
    if perturb is not None:
        with torch.no_grad():
            perturb(model)
    model.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    made: dict[tuple[str, str], str] = {}
    root = tmp_path_factory.mktemp("precision-models")

    def get(
        kind: str, variant: str = "orig", perturb: Callable[[Any], None] | None = None, layers: int = 3
    ) -> str:
        key = (kind, f"{variant}-{layers}")
        if key not in made:
            made[key] = _save(kind, root / f"{kind}-{variant}-{layers}", layers, perturb)
        return made[key]

    return get


POLICY = load_policy()
KINDS = ["llama", "qwen2", "qwen3", "qwen2_moe", "gemma", "gemma2"]


@pytest.mark.parametrize("kind", KINDS)
def test_bf16_against_fp32_is_no_false_alarm(models: Callable[..., str], kind: str) -> None:
    report = runner.run(models(kind), device="cpu", dtype="bf16", inputs=INPUTS, policy=POLICY)
    assert report.candidate.dtype == "bf16" and report.candidate.device.startswith("cpu")
    assert report.first_divergence is None, report.first_divergence
    assert report.exit_code == 0
    assert report.entries_compared > 20 and report.unmatched == 0
    assert any("no NPU here" in n for n in report.notes)  # CPU-only is reported as such
    # and it did measure something: bf16 rounding is visible, well inside the policy
    worst = report.worst[0].metrics
    assert worst is not None and 1e-4 < (worst.max_rel_error or 0) < 0.1


def _scale(name: str, factor: float = 2.0) -> Callable[[Any], None]:
    def f(m: Any) -> None:
        m.get_submodule(name).weight.mul_(factor)

    return f


def _zero_row(name: str, row: int = 3) -> Callable[[Any], None]:
    def f(m: Any) -> None:
        m.get_submodule(name).weight[row].zero_()

    return f


def _transpose(name: str) -> Callable[[Any], None]:
    def f(m: Any) -> None:
        w = m.get_submodule(name).weight
        assert w.shape[0] == w.shape[1]
        w.copy_(w.t().clone())

    return f


CASES = [
    ("llama", "scaled", "model.layers.1.mlp.down_proj", _scale),
    ("llama", "row", "model.layers.1.self_attn.q_proj", _zero_row),
    ("llama", "transposed", "model.layers.2.self_attn.o_proj", _transpose),
    ("qwen2", "scaled", "model.layers.1.self_attn.v_proj", _scale),
    ("qwen2", "transposed", "model.layers.0.self_attn.o_proj", _transpose),
    ("qwen3", "row", "model.layers.2.mlp.up_proj", _zero_row),
    ("qwen3", "scaled", "model.layers.1.self_attn.k_proj", _scale),
    ("qwen2_moe", "scaled", "model.layers.1.mlp.shared_expert.down_proj", _scale),
    ("qwen2_moe", "row", "model.layers.2.mlp.gate", _zero_row),
    ("gemma", "row", "model.layers.1.mlp.gate_proj", _zero_row),
    ("gemma2", "transposed", "model.layers.1.self_attn.o_proj", _transpose),
]


@pytest.mark.parametrize(
    ("kind", "how", "module", "perturb"), CASES, ids=[f"{k}-{h}" for k, h, _, _ in CASES]
)
def test_perturbed_copy_is_localised_to_that_module(
    models: Callable[..., str], kind: str, how: str, module: str, perturb: Callable[[str], Any]
) -> None:
    orig = models(kind)
    copy = models(kind, f"{how}-{module}", perturb(module))
    report = runner.compare(copy, orig, dtype="fp32", inputs=INPUTS, policy=POLICY)
    fd = report.first_divergence
    assert fd is not None and fd.module == module, (fd, report.worst[:3])
    assert fd.replay is not None and fd.replay.verdict == "local", fd.replay
    assert fd.path[-1] == module and fd.path[0] == "model.embed_tokens"
    assert report.exit_code == 1
    # nothing before it in execution order diverged
    assert all(e.status == "ok" for e in report.entries[: fd.index])


def test_unchanged_copy_is_identical(models: Callable[..., str]) -> None:
    report = runner.compare(models("qwen2"), models("qwen2"), dtype="fp32", inputs=INPUTS, policy=POLICY)
    assert report.first_divergence is None and report.diverged == 0
    assert all(e.metrics is not None and e.metrics.max_abs_error == 0.0 for e in report.entries)


def test_layer_2_perturbation_reaching_layer_20_is_reported_at_layer_2(models: Callable[..., str]) -> None:
    orig = models("llama", layers=22)
    copy = models("llama", "deep", _scale("model.layers.2.mlp.down_proj", 3.0), layers=22)
    report = runner.compare(copy, orig, dtype="fp32", inputs=INPUTS, policy=POLICY)
    fd = report.first_divergence
    assert fd is not None and fd.module == "model.layers.2.mlp.down_proj"
    assert fd.replay is not None and fd.replay.verdict == "local"
    layer20 = next(e for e in report.entries if e.module == "model.layers.20")
    assert layer20.status == "diverged"  # it did reach layer 20; the report still names layer 2
    assert fd.path[:4] == ["model.embed_tokens", "model.rotary_emb", "model.layers.0", "model.layers.1"]


def test_errors_that_add_up_are_inherited(models: Callable[..., str]) -> None:
    """A norm weight and the v_proj after it each off by 0.06 %: the norm and q_proj stay within
    the fp32 limit (1e-3), v_proj's output carries both (1.2e-3) and crosses. Replayed on the
    reference's inputs, v_proj alone is within: the divergence is inherited."""

    def both(m: Any) -> None:
        _scale("model.layers.0.input_layernorm", 1.0006)(m)
        _scale("model.layers.0.self_attn.v_proj", 1.0006)(m)

    report = runner.compare(
        models("llama", "adds-up", both), models("llama"), dtype="fp32", inputs=INPUTS, policy=POLICY
    )
    fd = report.first_divergence
    assert fd is not None and fd.module == "model.layers.0.self_attn.v_proj", report.worst[:3]
    statuses = {e.module: e.status for e in report.entries}
    assert (
        statuses["model.layers.0.input_layernorm"] == "ok"
        and statuses["model.layers.0.self_attn.q_proj"] == "ok"
    )
    assert fd.replay is not None and fd.replay.verdict == "inherited", fd.replay
    assert fd.replay.metrics is not None and 5e-4 < (fd.replay.metrics.max_rel_error or 0) < 1e-3


def test_cli_json_junit_and_exit_codes(models: Callable[..., str], tmp_path: Path) -> None:
    orig = models("llama")
    copy = models("llama", "scaled-model.layers.1.mlp.down_proj", _scale("model.layers.1.mlp.down_proj"))
    junit = tmp_path / "p.xml"
    r = cannenv(
        "precision",
        "compare",
        "--model",
        copy,
        "--against",
        orig,
        "--seq-len",
        "16",
        "--json",
        "--junit",
        str(junit),
    )
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["schema_version"] == 1 and doc["mode"] == "compare"
    assert doc["first_divergence"]["module"] == "model.layers.1.mlp.down_proj"
    assert doc["first_divergence"]["replay"]["verdict"] == "local"
    assert 'name="first_divergence" value="model.layers.1.mlp.down_proj"' in junit.read_text()
    table = cannenv(
        "precision", "run", "--model", orig, "--device", "cpu", "--dtype", "bf16", "--seq-len", "16"
    )
    assert table.returncode == 0, table.stderr
    assert "first divergence: none" in table.stdout and "bf16 on the CPU" in table.stdout


def test_cli_bad_input_is_exit_2(tmp_path: Path) -> None:
    r = cannenv("precision", "run", "--model", str(tmp_path / "nope"))
    assert r.returncode == 2 and "does not exist" in r.stderr
    (tmp_path / "config.json").write_text("[1]")
    r = cannenv("precision", "compare", "--model", str(tmp_path), "--against", str(tmp_path))
    assert r.returncode == 2 and "expected a JSON object" in r.stderr


@pytest.mark.parametrize("tensors", [False, True], ids=["statistics", "tensor"])
def test_from_dump_runs_the_bench_side_here(
    models: Callable[..., str], tmp_path: Path, tensors: bool
) -> None:
    """An "NPU" dump in msprobe's format (here: the bf16 model, and a bf16 copy with layer 1's
    down_proj scaled, dumped by the same writer) against the checkpoint run here as its bench."""
    orig = models("llama")
    fwd = runner.forward_on(INPUTS.ids(COMMON["vocab_size"]))
    npu_model = runner.load_model(orig).to(torch.bfloat16)
    good = runner.bench_dump(npu_model, fwd, tmp_path / "good", tensors=tensors)
    assert good.task == ("tensor" if tensors else "statistics") and len(good.entries) > 20
    report = runner.from_dump(orig, str(tmp_path / "good"), inputs=INPUTS, policy=POLICY)
    assert report.first_divergence is None, report.worst[:3]
    assert report.candidate.dtype == "bf16"
    with torch.no_grad():
        npu_model.get_submodule("model.layers.1.mlp.down_proj").weight.mul_(2.0)
    runner.bench_dump(npu_model, fwd, tmp_path / "bad", tensors=tensors)
    report = runner.from_dump(orig, str(tmp_path / "bad"), inputs=INPUTS, policy=POLICY)
    fd = report.first_divergence
    assert fd is not None and fd.module == "model.layers.1.mlp.down_proj", report.worst[:3]
    assert (fd.metrics is not None) == tensors  # tensor mode compares tensors, else statistics


def test_from_dump_refuses_a_dump_without_modules(tmp_path: Path, models: Callable[..., str]) -> None:
    from cannenv.errors import InputError

    (tmp_path / "dump.json").write_text(json.dumps({"task": "statistics", "level": "L1", "data": {}}))
    with pytest.raises(InputError, match="no module"):
        runner.from_dump(models("llama"), str(tmp_path), inputs=INPUTS, policy=POLICY)


def test_npu_asked_without_torch_npu_is_missing_tool() -> None:
    import importlib.util

    from cannenv.errors import MissingToolError

    if importlib.util.find_spec("torch_npu") is not None:
        pytest.skip("torch_npu is installed here")
    with pytest.raises(MissingToolError, match="torch_npu"):
        runner.choose_candidate("npu", "auto")
    cpu = runner.choose_candidate("auto", "auto")  # auto without an NPU: bf16 on the CPU, said so
    assert cpu.device.type == "cpu" and cpu.dtype == "bf16" and "no NPU here" in cpu.notes[0]
