"""The tiny decoder, the precision metrics and the device worker (CPU end to end, no mocks)."""

from __future__ import annotations

import math
import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

from cannenv.certify import forward, runner, worker
from cannenv.certify import metrics as M
from cannenv.errors import InputError
from cannenv.host import Host

torch = pytest.importorskip("torch")

from cannenv.certify import llm  # noqa: E402

# --- metric functions on known inputs ------------------------------------------------------


def test_cosine_known_values() -> None:
    a = np.array([1.0, 0.0, 0.0])
    assert M.cosine_similarity(a, a) == pytest.approx(1.0)
    assert M.cosine_similarity(a, np.array([0.0, 1.0, 0.0])) == pytest.approx(0.0)
    assert M.cosine_similarity(a, -a) == pytest.approx(-1.0)
    assert M.cosine_similarity(np.zeros(3), np.zeros(3)) == 1.0
    assert M.cosine_similarity(np.zeros(3), a) == 0.0
    assert math.isnan(M.cosine_similarity(a, np.array([np.nan, 0.0, 0.0])))


def test_errors_known_values() -> None:
    ref = np.array([1.0, -4.0, 2.0])
    out = np.array([1.5, -4.0, 2.0])
    assert M.max_abs_error(ref, out) == pytest.approx(0.5)
    assert M.max_rel_error(ref, out) == pytest.approx(0.5 / 4.0)
    assert M.nonfinite_count(np.array([1.0, np.inf, np.nan, -np.inf])) == 3
    assert M.within_tolerance_ratio(ref, out) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="shape mismatch"):
        M.max_abs_error(ref, out[:2])


def test_top1_counts_only_clear_positions() -> None:
    ref = np.array([[5.0, 1.0, 0.0], [1.0, 1.0001, 0.0], [0.0, 0.0, 9.0]])
    out = np.array([[5.0, 1.0, 0.0], [1.1, 1.0, 0.0], [9.0, 0.0, 0.0]])
    top = M.top1_agreement(ref, out, margin_rel=0.05)
    assert top.counted == 2  # the near-tie in row 1 is not counted
    assert top.agreement == pytest.approx(0.5)  # row 0 agrees, row 2 does not


def test_nan_never_passes_a_check() -> None:
    assert not M.check("cosine", math.nan, ">=", 0.9).ok
    assert not M.check("top1", None, ">=", 0.9).ok
    limits = M.LogitLimits(cosine_min=0.99, max_rel_error=0.1, top1_agreement_min=0.9)
    ref = np.random.default_rng(0).normal(size=(4, 16))
    bad = ref.copy()
    bad[0, 0] = np.nan
    cmp = M.compare_logits(ref, bad, limits, margin_rel=0.05)
    assert not cmp.ok
    assert cmp.metrics["nonfinite"] == 1 and cmp.metrics["cosine"] == "nan"


def test_localise_names_first_layer_past_threshold() -> None:
    rng = np.random.default_rng(1)
    layers = [(n, rng.normal(size=(2, 8))) for n in ("embed", "layer0", "layer1", "final_norm")]
    out = [(n, a.copy()) for n, a in layers]
    out[2] = ("layer1", layers[2][1] + 0.5)
    out[3] = ("final_norm", layers[3][1] + 0.5)
    loc = M.localise(layers, out, M.TensorLimits(cosine_min=0.999, max_rel_error=1e-3))
    assert loc.first_bad == "layer1"
    assert [r.ok for r in loc.layers] == [True, True, False, False]
    assert "layer1" in loc.describe()
    with pytest.raises(ValueError, match="captured layers differ"):
        M.localise(layers, out[:3], M.TensorLimits(cosine_min=0.9, max_rel_error=1.0))


# --- thresholds data file ------------------------------------------------------------------


def test_shipped_thresholds_load() -> None:
    th = M.load_thresholds()
    assert set(th.dtypes) == {"fp32", "fp16", "bf16"}
    assert th.for_dtype("fp32").logits.cosine_min > th.for_dtype("bf16").logits.cosine_min
    with pytest.raises(InputError, match="no precision thresholds"):
        th.for_dtype("int8")


def test_bad_thresholds_file_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "t.yaml"
    bad.write_text(
        "schema_version: 1\ntop1_margin_rel: 0.05\ndtypes:\n  fp32:\n    logits: {cosine_min: high}\n"
    )
    with pytest.raises(InputError, match=r"dtypes\.fp32\.logits\.cosine_min"):
        M.load_thresholds(str(bad))


# --- the model ------------------------------------------------------------------------------


def test_model_is_deterministic_and_captures_every_block() -> None:
    cfg = llm.TinyConfig(batch=1, seq_len=16)
    a = llm.reference(cfg)
    b = llm.reference(cfg)
    assert [n for n, _ in a.layers] == ["embed", "layer0", "layer1", "final_norm"]
    assert a.logits.shape == (1, 16, cfg.vocab_size)
    assert np.array_equal(a.logits, b.logits)
    other = llm.reference(cfg.model_copy(update={"seed": 1}))
    assert not np.array_equal(a.logits, other.logits)


def test_attention_is_causal() -> None:
    """Changing a later token must not change earlier positions' outputs."""
    cfg = llm.TinyConfig(batch=1, seq_len=8)
    model = llm.build_model(cfg)
    ids = llm.input_ids(cfg)
    ids2 = ids.clone()
    ids2[0, -1] = (ids2[0, -1] + 1) % cfg.vocab_size
    with torch.no_grad():
        out1, out2 = model(ids), model(ids2)
    assert torch.equal(out1[:, :-1], out2[:, :-1])
    assert not torch.equal(out1[:, -1], out2[:, -1])


def test_forward_output_roundtrip(tmp_path: Path) -> None:
    out = llm.reference(llm.TinyConfig(batch=1, seq_len=8))
    out.save(tmp_path / "f.npz")
    back = llm.ForwardOutput.load(tmp_path / "f.npz")
    assert [n for n, _ in back.layers] == [n for n, _ in out.layers]
    assert np.array_equal(back.logits, out.logits)


def test_perturbed_layer_fails_and_is_localised() -> None:
    """A model whose layer1 MLP is off fails the comparison, and localisation names layer1."""
    cfg = llm.TinyConfig()
    ref = llm.reference(cfg)
    model = llm.build_model(cfg)
    with torch.no_grad():
        mlp = model.layers[1].mlp.down_proj.weight  # type: ignore[union-attr]
        mlp.add_(0.2 * torch.randn(mlp.shape, generator=torch.Generator().manual_seed(7)) * mlp.std())
        captured, logits = model.forward_capture(llm.input_ids(cfg))
    bad = llm.to_output(captured, logits)
    plan = runner.plan(runner.CertifyOptions(device="cpu"), "llm")[0]
    worker = {"dtype": "bf16", "device": {"kind": "cpu", "name": "test"}}
    result = forward.judge_forward(plan, ref, bad, worker)
    assert result.status == "fail"
    assert result.metrics["first_bad_layer"] == "layer1"
    assert any("layer1" in r for r in result.reasons)
    assert not result.certified


# --- end to end on the CPU, through the worker subprocess -----------------------------------


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_llm_end_to_end_on_cpu(dtype: str) -> None:
    options = runner.CertifyOptions(device="cpu", dtype=dtype, timeout_s=300)  # type: ignore[arg-type]
    plans = [p for p in runner.plan(options, "llm") if p.id == "llm"]
    (result,) = runner.run(plans, options)
    assert result.status == "pass", result
    m = result.metrics
    assert m["dtype"] == dtype
    assert m["first_bad_layer"] is None
    assert [row["name"] for row in m["layers"]] == ["embed", "layer0", "layer1", "final_norm"]
    assert m["logits"]["top1_counted"] > 0
    limits = M.load_thresholds().for_dtype(dtype).logits
    assert m["logits"]["cosine"] >= limits.cosine_min
    if dtype == "fp32":
        assert m["logits"]["max_rel_error"] < 1e-5  # same code, same device: near-identical


def test_profile_reports_top_ops() -> None:
    options = runner.CertifyOptions(device="cpu", dtype="fp32", profile=True, timeout_s=300)
    plans = [p for p in runner.plan(options, "llm") if p.id == "llm"]
    (result,) = runner.run(plans, options)
    ops = result.metrics["profile"]["top_ops"]
    assert ops and all(o["clock"] == "cpu" for o in ops)
    assert any("mm" in o["name"] for o in ops)


# --- skips and findings ----------------------------------------------------------------------


def test_no_npu_node_means_skip_never_pass(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    options = runner.CertifyOptions(device="npu")
    ctx = runner.RunContext(options, Host(root=tmp_path, env={}, allow_commands=False))
    results = runner.run(runner.plan(options, "llm"), options, context=ctx)
    assert results and all(r.status == "skip" for r in results)
    assert all("no /dev/davinci" in r.reasons[0] for r in results)
    assert not any(r.certified for r in results)


def test_cuda_without_gpu_is_a_skip() -> None:
    if torch.cuda.is_available():
        pytest.skip("this host has a GPU")
    options = runner.CertifyOptions(device="cuda", timeout_s=300)
    plans = [p for p in runner.plan(options, "llm") if p.id == "llm"]
    (result,) = runner.run(plans, options)
    assert result.status == "skip"
    assert "sees no CUDA device" in result.reasons[0]


def test_fused_ops_skip_off_npu() -> None:
    options = runner.CertifyOptions(device="cpu")
    plans = [p for p in runner.plan(options, "llm") if p.id.startswith("fused-")]
    results = runner.run(plans, options)
    assert [r.id for r in results] == ["fused-rms-norm", "fused-rotary-mul", "fused-attention"]
    assert all(r.status == "skip" and "only on an Ascend NPU" in r.reasons[0] for r in results)


def _fake_python(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "python"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    return str(exe)


def test_hanging_device_run_is_a_failure(tmp_path: Path) -> None:
    options = runner.CertifyOptions(device="cpu", timeout_s=1, python=_fake_python(tmp_path, "sleep 30"))
    w = worker.call_worker(options, Host.live(), "llm", tmp_path / "out")
    assert w.status == "fail" and "did not finish within 1 s" in w.reason


def test_crashing_device_run_is_a_failure(tmp_path: Path) -> None:
    options = runner.CertifyOptions(
        device="cpu", python=_fake_python(tmp_path, "echo 'boom' >&2; kill -SEGV $$")
    )
    plans = [p for p in runner.plan(options, "llm") if p.id == "llm"]
    (result,) = runner.run(plans, options)
    assert result.status == "fail"
    assert "signal 11" in result.reasons[0]


def test_worker_exception_is_a_failure_with_traceback(tmp_path: Path) -> None:
    from cannenv.certify import llm_worker

    out = tmp_path / "out"
    code = llm_worker.main(
        ["--task", "llm", "--device", "cpu", "--model", str(tmp_path / "nope"), "--out", str(out)]
    )
    result = (out / "result.json").read_text()
    if llm.hf_available() is not None:
        assert code == 0 and '"skip"' in result  # transformers missing: a skip, with the reason
    else:
        assert code == 1 and '"exception"' in result


def test_model_dir_without_transformers_is_a_skip(tmp_path: Path) -> None:
    """Whether or not transformers is installed here: a Python where it cannot be imported skips."""
    import json
    import subprocess

    blocker = tmp_path / "blocker" / "transformers"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("no transformers in this environment")\n')
    path = os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")])
    ckpt = tmp_path / "ckpt"  # a checkpoint folder in shape (checked before the run), never loaded
    ckpt.mkdir()
    (ckpt / "config.json").write_text('{"model_type": "llama", "vocab_size": 512}')
    (ckpt / "model.safetensors").write_bytes(b"not loaded")
    env = {**os.environ, "PYTHONPATH": path}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cannenv",
            "certify",
            "llm",
            "--device",
            "cpu",
            "--model",
            str(ckpt),
            "--json",
            "--out",
            str(tmp_path / "cert.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    cert = json.loads(proc.stdout)["certificate"]
    stages = {s["id"]: s for s in cert["stages"]}
    assert stages["llm-model"]["status"] == "skip"
    assert "transformers" in stages["llm-model"]["reasons"][0]
    assert "llm-model" not in cert["certified_stages"]


@pytest.mark.slow
def test_local_hugging_face_checkpoint_is_compared_with_the_cpu_reference(tmp_path: Path) -> None:
    """`--model DIR`: a real (tiny, made here) Llama checkpoint through transformers, no download."""
    pytest.importorskip("transformers")
    from tests.helpers.checkpoints import tiny_llama

    tiny_llama(tmp_path / "ckpt")
    options = runner.CertifyOptions(device="cpu", dtype="bf16", model_dir=str(tmp_path / "ckpt"))
    plans = [p for p in runner.plan(options, "llm") if p.id == "llm-model"]
    (result,) = runner.run(plans, options)
    assert result.status == "pass", result
    assert result.metrics["logits"]["cosine"] > 0.99  # bf16 on the CPU against the fp32 reference


def test_reference_does_not_autoload_device_backends() -> None:
    assert os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0"
    # never loaded (cannenv.model.trace, imported earlier in the same test process, may leave a
    # None entry: its block on torch_npu, which is no import of it)
    assert sys.modules.get("torch_npu") is None
