"""The stack's torch: traced operators reclassified with the torch that the judged torch_npu
requires, read from that torch's own native_functions.yaml (issue 25: `model ops --torch-npu
2.8.0.post2` on Mixtral said "every operator runs on the NPU", but torch 2.8.0 gives `_grouped_mm`
only a CUDA kernel)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv.model import registry, stack_torch

ROOT = Path(__file__).resolve().parents[2]


def test_the_yaml_reading_equals_the_live_dispatcher() -> None:
    """torchgen's reading of the installed torch's own yaml, against its dispatcher, for every
    operator: the same kernel keys (CompositeImplicit/Explicit[NonFunctional], CPU)."""
    torch = pytest.importorskip("torch")
    torchgen = pytest.importorskip("torchgen")
    text = (Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml").read_text()
    table = stack_torch.parse(text)
    compared = 0
    for op in table:
        try:
            live = tuple(k for k in stack_torch.KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(op, k))
        except RuntimeError:  # declared but not registered in this build
            continue
        assert stack_torch.kernels(table, [op])[op] == live, op
        compared += 1
    assert compared > 2000


def test_required_torch_from_metadata() -> None:
    assert registry.required_torch("Name: torch_npu\nRequires-Dist: torch==2.8.0+cpu\n") == "2.8.0"
    assert registry.required_torch("Requires-Dist: torch==2.13.0.*\nRequires-Dist: numpy\n") == "2.13.0"
    assert registry.required_torch("Requires-Dist: numpy\n") is None


def test_a_hostile_yaml_is_read_without_surprises() -> None:
    text = (
        "- func: x(Tensor a) -> Tensor\n  dispatch:\n    # a comment\n    CPU: x\n"
        "- func: y.out(Tensor a) -> Tensor\n"
    )
    assert stack_torch.parse(text) == {
        "aten::x": frozenset({"CPU"}),
        "aten::y.out": frozenset({"CompositeImplicitAutograd"}),
    }
    assert stack_torch.parse("\x00" * 1000 + "\n- func: \n") == {}


@pytest.mark.slow
@pytest.mark.network
def test_mixtral_on_torch_npu_2_8_0_post2_cannot_run_grouped_mm() -> None:
    try:
        table, _ = stack_torch.table_for("2.8.0")
        registry.from_version("2.8.0.post2")
    except Exception as exc:  # no network and nothing cached
        pytest.skip(f"torch 2.8.0 / torch_npu 2.8.0.post2 wheels not available: {exc}")
    assert table["aten::_grouped_mm"] == frozenset({"CUDA"})  # torch 2.8.0: a CUDA kernel only
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "cannenv",
            "model",
            "ops",
            "--config",
            str(ROOT / "tests/data/model_configs/real/Mixtral-8x7B-v0.1.json"),
            "--torch-npu",
            "2.8.0.post2",
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert res.returncode == 1, res.stderr
    assert "not runnable: unsupported operators: aten::_grouped_mm" in res.stdout
    assert (
        "traced with torch 2.13.0" in res.stdout
        and "kernels from torch 2.8.0 native_functions.yaml" in res.stdout
    )
    assert "torch_npu 2.8.0.post2 requires torch 2.8.0" in res.stderr
