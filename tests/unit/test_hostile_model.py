"""Hostile model configs (issue 21 items 5 and 8, issue 25 item 6): every bad value is exit 2
naming the field, before anything is built; a missing torch/transformers is exit 4 with the install
command; a torch_npu installed without CANN is kept out of the trace. Nothing exits 70."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.errors import InputError
from cannenv.model import config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "tests" / "data" / "model_configs"
LLAMA = json.loads((CONFIGS / "llama.json").read_text())


def run(
    *args: str, env: dict[str, str] | None = None, python: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    return subprocess.run(
        [*(python or [sys.executable]), "-m", "cannenv", "model", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**base, **(env or {})},
        check=False,
    )


def write(tmp: Path, name: str, doc: dict[str, object] | str) -> Path:
    path = tmp / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


BAD = [
    # (change to a tiny Llama config, the field the message must name)
    ({"num_hidden_layers": 1_000_000_000}, "num_hidden_layers"),  # issue 21 item 5: 300 bytes, no build
    ({"num_hidden_layers": -4}, "num_hidden_layers"),
    ({"num_hidden_layers": 2.5}, "num_hidden_layers"),  # issue 21 item 8: non-integers
    ({"num_attention_heads": "2"}, "num_attention_heads"),
    ({"hidden_size": "4096"}, "hidden_size"),
    ({"hidden_size": True}, "hidden_size"),
    ({"vocab_size": 0}, "vocab_size"),
    ({"intermediate_size": 10**30}, "intermediate_size"),
    ({"hidden_size": 4095, "num_attention_heads": 32, "num_key_value_heads": 8}, "hidden_size"),
    ({"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 7}, "num_key_value_heads"),
    ({"num_key_value_heads": 8}, "num_key_value_heads"),  # more KV heads (8) than heads (4)
    ({"num_local_experts": 4, "num_experts_per_tok": 5}, "num_experts_per_tok"),
    ({"layer_types": ["full_attention"] * 3}, "layer_types"),
    ({"num_hidden_layers": 1024, "num_local_experts": 16384}, "num_hidden_layers"),
    ({"text_config": {"num_hidden_layers": 0}}, "text_config.num_hidden_layers"),
    ({"architectures": "LlamaForCausalLM"}, "architectures"),
]


@pytest.mark.parametrize(("change", "field"), BAD, ids=[f for _, f in BAD])
def test_bad_values_name_the_field(tmp_path: Path, change: dict[str, object], field: str) -> None:
    path = write(tmp_path, "config.json", {**LLAMA, **change})
    with pytest.raises(InputError) as err:
        config.load(config=str(path))
    assert f": {field}: " in err.value.message


def test_nan_and_infinity_name_the_field(tmp_path: Path) -> None:
    for constant in ("NaN", "Infinity", "-Infinity"):
        text = json.dumps(LLAMA)[:-1] + f', "num_attention_heads": {constant}}}'
        with pytest.raises(InputError, match=f"num_attention_heads: {constant} is not a number"):
            config.load(config=str(write(tmp_path, "config.json", text)))


def test_deep_and_huge_documents_are_bad_input(tmp_path: Path) -> None:
    deep = '{"model_type": "llama", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(InputError, match="nested deeper"):
        config.load(config=str(write(tmp_path, "config.json", deep)))
    digits = '{"model_type": "llama", "vocab_size": ' + "9" * 5000 + "}"
    with pytest.raises(InputError, match="digits"):
        config.load(config=str(write(tmp_path, "config.json", digits)))


def test_cli_exits_2_for_each_bad_value_and_never_70(tmp_path: Path) -> None:
    # the attack of issue 21 item 5 through the command (validation runs before torch is imported)
    for i, (change, field) in enumerate(BAD[:5]):
        path = write(tmp_path, f"c{i}.json", {**LLAMA, **change})
        res = run("memory", "--config", str(path))
        assert res.returncode == 2, res.stderr
        assert f"{field}:" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_typos_are_warned_with_the_likely_key(tmp_path: Path) -> None:
    doc = {k: v for k, v in LLAMA.items() if k != "num_key_value_heads"}
    doc["num_key_value_head"] = 1  # Llama-3-8B with this typo turns into an MHA model
    res = run("memory", "--config", str(write(tmp_path, "config.json", doc)), "--seq-len", "64", "--json")
    assert res.returncode == 0, res.stderr
    assert (
        "num_key_value_head: not a key of this model's config; did you mean num_key_value_heads?"
        in res.stderr
    )
    res = run(
        "memory",
        "--config",
        str(write(tmp_path, "c2.json", {**LLAMA, "max_position_embeddings": 8192})),
        "--seq-len",
        "100000",
        "--json",
    )
    assert res.returncode == 0, res.stderr
    assert "past the model's max_position_embeddings" in res.stderr


@pytest.mark.slow
def test_unknown_model_type_and_remote_code_are_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "configuration_evil.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    doc = {**LLAMA, "model_type": "evil", "auto_map": {"AutoConfig": "configuration_evil.EvilConfig"}}
    write(tmp_path, "config.json", doc)
    res = run(
        "ops", "--model", str(tmp_path), "--torch-npu", str(ROOT / "tests/data/torch_npu_registry/2.13.0")
    )
    assert res.returncode == 2, res.stderr
    assert "model_type: 'evil' is not a model transformers" in res.stderr and "auto_map" in res.stderr
    assert not marker.exists()


def _site_without(tmp: Path, *hidden: str) -> list[str]:
    """A real Python environment lacking ``hidden``: this interpreter with -S and a folder of links
    to every entry of its site-packages except those distributions."""
    import site

    farm = tmp / "site"
    farm.mkdir(parents=True)
    for sp in site.getsitepackages():
        for entry in Path(sp).iterdir():
            low = entry.name.lower()
            if any(low == h or low.startswith(h + "-") or low.startswith(h + ".") for h in hidden):
                continue
            if entry.suffix == ".pth" or (farm / entry.name).exists():
                continue
            (farm / entry.name).symlink_to(entry)
    return [str(farm)]


@pytest.mark.slow
def test_missing_torch_is_exit_4_with_the_install_command(tmp_path: Path) -> None:
    path = write(tmp_path, "config.json", LLAMA)
    for hidden in (("torch",), ("transformers",)):
        paths = _site_without(tmp_path / hidden[0], *hidden)
        env = {"PYTHONPATH": os.pathsep.join([str(ROOT), *paths])}
        # the memory plan of a type cannenv's own rules read needs neither (issue 32)
        res = run("memory", "--config", str(path), python=[sys.executable, "-S"], env=env)
        assert res.returncode == 0, res.stderr
        res = run("ops", "--config", str(path), python=[sys.executable, "-S"], env=env)
        assert res.returncode == 4, res.stderr
        assert f"{hidden[0]} not installed" in res.stderr
        assert (
            "pip install 'cannenv[model]' --extra-index-url https://download.pytorch.org/whl/cpu"
            in res.stderr
        )


@pytest.mark.slow
@pytest.mark.network
def test_torch_npu_without_cann_is_kept_out_of_the_trace(tmp_path: Path) -> None:
    """The normal dev box: the real torch_npu wheel unpacked beside torch, no CANN. transformers
    imports torch_npu when it finds it, which fails (libhccl.so) - exit 70 before the blocker."""
    from cannenv.model import registry

    try:
        wheel = Path(registry.from_version("2.13.0").origin)
    except Exception as exc:  # no network and nothing cached
        pytest.skip(f"torch_npu 2.13.0 wheel not available: {exc}")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    probe = subprocess.run(
        [sys.executable, "-c", "import torch_npu"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert probe.returncode != 0 and "libhccl" in probe.stderr  # really broken without CANN
    # gpt2 is built on the meta device (llama is read by cannenv's own rules, no torch at all)
    res = run("memory", "--config", str(CONFIGS / "gpt2.json"), "--seq-len", "64", "--json", env=env)
    assert res.returncode == 0, res.stderr
    assert "torch_npu is installed in this Python but was not imported" in res.stderr
    assert json.loads(res.stdout)["parameters"] > 0


_SIZE_KEYS = sorted(config.rules().integers)
_values = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_SIZE_KEYS), _values, max_size=6))
def test_any_size_values_are_accepted_or_refused_naming_a_field(change: dict[str, object]) -> None:
    raw = {**LLAMA, **change}
    try:
        config.from_dict(raw, "config.json")
    except InputError as exc:
        assert exc.message.startswith("config.json: ")
        named = exc.message.split(": ")[1].split(".")[-1]
        assert named in raw or named in ("num_hidden_layers", "layer_types")
        return
    for key, bound in config.rules().integers.items():
        value = raw.get(key)
        if value is not None:
            assert type(value) is int and bound.min <= value <= bound.max
