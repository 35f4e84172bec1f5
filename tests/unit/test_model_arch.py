"""Memory plans of real published configs by cannenv's own rules (issue 32), against facts computed
by hand (tests/data/model_configs/facts.yaml, every value an expression of config numbers).

The configs are verbatim public copies (tests/data/model_configs/real/SOURCES.md); a seeded third
was held out before the rules were written (HELDOUT.md there). No torch and no transformers: the
plan of these model types must be the same whatever transformers is installed, and
test_same_plan_under_the_oldest_transformers runs the command under the oldest transformers the
`model` extra allows (a --target folder in the cache) to show it.
"""

from __future__ import annotations

import ast
import hashlib
import json
import operator
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cannenv.errors import InputError
from cannenv.model import arch, config, memory, quant

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "model_configs"
REAL = DATA / "real"
FACTS: dict[str, dict[str, Any]] = yaml.safe_load((DATA / "facts.yaml").read_text(encoding="utf-8"))
ADDED = (
    "DeepSeek-V3",
    "Kimi-K2-Instruct",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "Llama-4-Scout-17B-16E-Instruct",
    "Llama-4-Maverick-17B-128E-Instruct",
    "Qwen3-235B-A22B",
    "Qwen3-32B",
    "Qwen3-32B-FP8",
    "Qwen3-VL-8B-Instruct",
    "Qwen3-VL-30B-A3B-Instruct",
    "Qwen3-Next-80B-A3B-Thinking",
)
HELD_OUT = ("Llama-4-Scout-17B-16E-Instruct", "Qwen3-32B-FP8", "Qwen3-32B", "gpt-oss-20b")
MULTIMODAL = ("Qwen2.5-VL-7B-Instruct", "gemma-3-27b-it", "Mistral-Small-3.1-24B-Instruct-2503")
"""verbatim copies found after the held-out score (SOURCES.md): planned by cannenv's rules for
qwen2_5_vl, gemma3 and mistral3"""
TF457 = ("transformers==4.57.3", "huggingface_hub==0.36.0", "tokenizers==0.22.1")
OLDEST_TF = ("transformers==4.46.0", "huggingface_hub==0.26.5", "tokenizers==0.20.3")
"""the oldest transformers `pip install 'cannenv[model]'` allows (pyproject: transformers>=4.46)"""

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv}


def _eval(expr: object) -> int:
    """An arithmetic expression of integers (+ - * // and parentheses), nothing else."""

    def walk(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return int(_OPS[type(node.op)](walk(node.left), walk(node.right)))
        raise ValueError(f"not integer arithmetic: {ast.dump(node)[:80]}")

    return walk(ast.parse(" ".join(str(expr).split()), mode="eval"))


def _param(name: str) -> Any:
    return pytest.param(name, id=("heldout-" if name in HELD_OUT else "") + name)


def _shape(name: str, *, own: bool = False) -> tuple[memory.Shape, quant.Scheme | None]:
    cfg, _ = arch.resolve(config.load(config=str(REAL / f"{name}.json")))
    scheme = quant.from_config(cfg.raw, cfg.origin) if own else None
    return arch.read(cfg, skip=scheme.skip if scheme else ()).shape, scheme


def test_heldout_split_is_the_seeded_one() -> None:
    order = sorted(ADDED, key=lambda n: hashlib.sha256(f"cannenv-i32-heldout:{n}".encode()).hexdigest())
    assert tuple(order[: len(ADDED) // 3]) == HELD_OUT
    assert all((REAL / f"{n}.json").is_file() for n in ADDED)
    assert set(ADDED) <= set(FACTS)


@pytest.mark.parametrize("name", [_param(n) for n in FACTS])
def test_hand_computed_facts(name: str) -> None:
    f = FACTS[name]
    shp, scheme = _shape(name, own="own" in f)
    assert shp.params == _eval(f["parameters"])
    assert len(shp.layers) == f["layers"]
    assert memory.kv_bytes_per_token(shp, 2.0) == _eval(f["kv_per_token"])
    if "kv_at" in f:
        seq, expr = f["kv_at"]
        assert memory.kv_cache_bytes(shp, 1, seq, 2.0) == _eval(expr)
    if "per_device" in f:
        tp, expr = f["per_device"]
        assert memory.plan(shp, dtype="bf16", batch=1, seq_len=1, tp=tp).at_tp.weights == _eval(expr)
    if "own" in f:
        fmt, expr = f["own"]
        assert scheme is not None and scheme.name == fmt
        assert memory.weight_bytes(shp, scheme) == _eval(expr)
    if "vision_parameters" in f:
        assert shp.by_role()["vision"] + shp.by_role()["projector"] == _eval(f["vision_parameters"])


def _cli(*args: str, extra_path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, str(ROOT)) if p)
    return subprocess.run(
        [sys.executable, "-m", "cannenv", "model", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
        cwd=ROOT,
    )


def test_gpt_oss_plans_as_published_and_as_bf16() -> None:
    cfg = str(REAL / "gpt-oss-120b.json")
    own = _cli("memory", "--config", cfg, "--json", "--family", "a3", "--tp", "8")
    assert own.returncode == 0, own.stderr
    doc = json.loads(own.stdout)
    assert doc["dtype"] == "mxfp4"
    assert doc["weights_bytes"] == _eval(FACTS["gpt-oss-120b"]["own"][1])
    assert any("needs conversion: Atlas A3 has no mxfp4 matmul" in n for n in doc["notes"])
    bf16 = _cli("memory", "--config", cfg, "--json", "--dtype", "bf16", "--tp", "8")
    assert bf16.returncode == 0, bf16.stderr
    doc = json.loads(bf16.stdout)
    assert doc["dtype"] == "bf16" and doc["weights_bytes"] == 2 * _eval(FACTS["gpt-oss-120b"]["parameters"])
    assert doc["at_tp"]["weights_bytes"] == _eval(FACTS["gpt-oss-120b"]["per_device"][1])


def test_dtype_overrides_a_format_cannenv_does_not_know(tmp_path: Path) -> None:
    raw = json.loads((REAL / "Qwen3-235B-A22B.json").read_text(encoding="utf-8"))
    raw["quantization_config"] = {"quant_method": "hqq", "nbits": 4}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    res = _cli("memory", "--config", str(path), "--json")
    assert res.returncode == 2 and "'hqq': cannenv does not know how this format stores" in res.stderr
    res = _cli("memory", "--config", str(path), "--json", "--dtype", "int8")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["dtype"] == "int8" and any("--dtype int8 replaces" in n for n in doc["notes"])


def test_llama4_saved_by_transformers_451_plans_like_the_published_one() -> None:
    saved = _cli("memory", "--config", str(REAL / "Llama-4-Maverick-text-tf4.51.json"), "--json")
    hub = _cli("memory", "--config", str(REAL / "Llama-4-Maverick-17B-128E-Instruct.json"), "--json")
    assert saved.returncode == 0 and hub.returncode == 0, saved.stderr + hub.stderr
    a, b = json.loads(saved.stdout), json.loads(hub.stdout)
    for key in ("parameters", "weights_bytes", "kv_cache_bytes_per_token", "kv_cache_bytes", "attention"):
        assert a[key] == b[key]
    assert a["attention"] == ["gqa+chunk8192", "gqa+nope"]


def test_llama4_saved_by_transformers_451_is_traced_under_a_strict_transformers() -> None:
    """transformers 5 declares ``attn_temperature_tuning`` a boolean and refuses 4.51's ``4``; the
    model tests it for truth in both, so it is read as ``true`` (said on stderr), never exit 2."""
    pytest.importorskip("transformers")
    from cannenv.model.trace import saved_ints_as_bools

    raw = json.loads((REAL / "Llama-4-Maverick-text-tf4.51.json").read_text(encoding="utf-8"))
    fixed, notes = saved_ints_as_bools(raw["model_type"], raw)
    assert raw["attn_temperature_tuning"] == 4 and fixed["attn_temperature_tuning"] in (4, True)
    res = _cli(
        "check",
        "--config",
        str(REAL / "Llama-4-Maverick-text-tf4.51.json"),
        "--soc",
        "Ascend910B3",
        "--torch-npu",
        "2.7.1",
        "--json",
    )
    assert res.returncode in (0, 1), res.stderr[-1500:]  # a verdict (it does not fit at TP 1), not exit 2
    assert json.loads(res.stdout)["verdict"]
    if notes:  # a transformers with strict config classes
        assert notes == ["attn_temperature_tuning: 4 read as true (a boolean in this transformers)"]
        assert "attn_temperature_tuning: 4 read as true" in res.stderr


def test_kimi_k2_is_planned_as_deepseek_v3_only_with_its_structure() -> None:
    raw = json.loads((REAL / "Kimi-K2-Instruct.json").read_text(encoding="utf-8"))
    cfg, note = arch.resolve(config.from_dict(raw, "kimi"))
    assert cfg.model_type == "deepseek_v3" and "auto_map" not in cfg.raw and note and "kimi_k2" in note
    raw.pop("kv_lora_rank")
    with pytest.raises(InputError, match="planned as deepseek_v3 only when it has that structure"):
        arch.resolve(config.from_dict(raw, "kimi"))


def test_a_nested_config_without_its_text_config_is_an_error_not_a_fit() -> None:
    raw = json.loads((REAL / "Qwen3-VL-8B-Instruct.json").read_text(encoding="utf-8"))
    raw.pop("text_config")
    with pytest.raises(InputError, match="text_config: missing"):
        arch.read(config.from_dict(raw, "vl"))


def test_zero_layers_or_zero_kv_is_never_a_fit() -> None:
    empty = memory.Shape("empty", 0, False, 16, 2, 32, 8, ())
    with pytest.raises(InputError, match="0 decoder layers"):
        memory.plan(empty, dtype="bf16", batch=1, seq_len=8, hbm=1 << 40)
    no_kv = memory.Shape("nokv", 0, False, 16, 2, 32, 8, (memory.Layer("gqa", 0, 0),))
    with pytest.raises(InputError, match="0 KV bytes per token"):
        memory.plan(no_kv, dtype="bf16", batch=1, seq_len=8, hbm=1 << 40)


def test_the_memory_plan_imports_neither_torch_nor_transformers() -> None:
    code = (
        "import sys; from cannenv.cli import main\n"
        "try:\n    main(['model', 'memory', '--config', sys.argv[1], '--json'])\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, str(REAL / "DeepSeek-V3.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )
    assert res.returncode == 0, res.stderr[-2000:]


def _tf_target(pins: tuple[str, ...]) -> str:
    """A ``--target`` folder in the cache holding ``pins`` (pip, network, once)."""
    from cannenv.matrix import cache_dir

    base = cache_dir()
    if base is None:
        pytest.skip(f"no cache folder for {pins[0]}")
    target = base / pins[0].replace("==", "-")
    if not (target / "transformers" / "__init__.py").is_file():
        res = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), *pins],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if res.returncode != 0:
            pytest.skip(f"pip install {' '.join(pins)} failed (no network?): {res.stderr[-300:]}")
    return str(target)


def _oldest_tf() -> str:
    return _tf_target(OLDEST_TF)


@pytest.mark.slow
def test_same_plan_under_the_oldest_transformers() -> None:
    """Every real config cannenv's rules plan: the JSON plan under the oldest transformers the
    `model` extra allows is the installed one's, byte for byte."""
    pytest.importorskip("transformers")
    target = _oldest_tf()
    names = sorted(p.stem for p in REAL.glob("*.json"))
    planned = [
        n for n in names if arch.plannable(arch.resolve(config.load(config=str(REAL / f"{n}.json")))[0])
    ]
    assert len(planned) >= 15
    for name in names:  # the others are built on the meta device by the transformers on the path
        args = ("memory", "--config", str(REAL / f"{name}.json"), "--json", "--tp", "2", "--seq-len", "8192")
        new, old = _cli(*args), _cli(*args, extra_path=target)
        assert new.returncode == old.returncode == 0, (name, new.stderr[-800:], old.stderr[-800:])
        a, b = json.loads(new.stdout), json.loads(old.stdout)
        if name in planned:
            assert a == b, name
            assert a["rules"].startswith("cannenv rules")
        else:
            assert a["rules"] != b["rules"]  # which transformers built it is said
            a.pop("rules"), b.pop("rules")
            assert a == b, name


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "Mixtral-8x7B-v0.1",
        "Qwen3-30B-A3B",
        "Qwen3-30B-A3B-FP8",
        "DeepSeek-V2-Lite",
        "Llama-2-7B-GPTQ",
        "gemma-2-9b",
        "Phi-3-mini-4k-instruct",
    ],
)
def test_own_rules_agree_with_the_meta_build(name: str) -> None:
    """The configs planned before issue 32 by building the model on the meta device: cannenv's rules
    give the same parameters, roles and bytes per device (bf16, int8, int4 and the own format)."""
    pytest.importorskip("transformers")
    from cannenv.model import trace

    cfg = config.load(config=str(REAL / f"{name}.json"))
    own = quant.from_config(cfg.raw, cfg.origin)
    skip = own.skip if own else ()
    ours, built = arch.read(cfg, skip=skip).shape, trace.shape(cfg, skip=skip)
    assert ours.params == built.params and ours.by_role() == built.by_role()
    assert ours.intermediate == built.intermediate and ours.experts_per_token == built.experts_per_token
    assert [(lay.kind, lay.kv_heads, lay.head_dim, lay.window, lay.latent) for lay in ours.layers] == [
        (lay.kind, lay.kv_heads, lay.head_dim, lay.window, lay.latent) for lay in built.layers
    ]
    for sch in [quant.DTYPES[d] for d in ("bf16", "int8", "int4")] + ([own] if own else []):
        for tp in (1, 2, 8):
            a = memory.plan(ours, dtype=sch, batch=1, seq_len=64, tp=tp)
            b = memory.plan(built, dtype=sch, batch=1, seq_len=64, tp=tp)
            assert (a.at_tp.weights, a.at_tp.kv_cache, a.at_tp.activations) == (
                b.at_tp.weights,
                b.at_tp.kv_cache,
                b.at_tp.activations,
            ), (sch.name, tp)


GEMMA3_12B = {
    # the form of google/gemma-3-12b-it's config.json: the text sizes that differ from
    # Gemma3TextConfig's defaults, nothing else (head_dim 256, vocabulary 262,208 come from them)
    "architectures": ["Gemma3ForConditionalGeneration"],
    "mm_tokens_per_image": 256,
    "model_type": "gemma3",
    "text_config": {
        "hidden_size": 3840,
        "intermediate_size": 15360,
        "model_type": "gemma3_text",
        "num_attention_heads": 16,
        "num_hidden_layers": 48,
        "num_key_value_heads": 8,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "sliding_window": 1024,
    },
    "torch_dtype": "bfloat16",
    "vision_config": {
        "hidden_size": 1152,
        "image_size": 896,
        "intermediate_size": 4304,
        "model_type": "siglip_vision_model",
        "num_attention_heads": 16,
        "num_hidden_layers": 27,
        "patch_size": 14,
        "vision_use_head": False,
    },
}


def test_gemma3_from_defaults_and_its_siglip_tower() -> None:
    shp = arch.read(config.from_dict(GEMMA3_12B, "gemma3")).shape
    h, n, v, hv, iv = 3840, 48, 262208, 1152, 4304
    text = n * (h * 4096 + 2 * h * 2048 + 4096 * h + 2 * 256 + 3 * h * 15360 + 4 * h) + v * h + h
    vision = (
        3 * 14 * 14 * hv
        + hv
        + 64 * 64 * hv
        + 27 * (4 * (hv * hv + hv) + 2 * hv * iv + iv + hv + 4 * hv)
        + 2 * hv
    )
    assert shp.params == text + vision + hv * h + hv  # tied embeddings; projector matrix + RMSNorm
    assert shp.params == 12_187_325_040  # the published 12.2B
    assert shp.tied and shp.vision is not None and shp.vision.tokens_per_image == 256
    # every 6th layer global, the others a 1,024-token window
    assert sum(1 for lay in shp.layers if lay.window == 1024) == 40
    assert memory.kv_bytes_per_token(shp, 2.0) == 48 * 2 * 8 * 256 * 2


@pytest.mark.slow
def test_gemma3_agrees_with_the_meta_build() -> None:
    pytest.importorskip("transformers")
    from cannenv.model import trace

    cfg = config.from_dict(GEMMA3_12B, "gemma3")
    ours, built = arch.read(cfg).shape, trace.shape(cfg)
    assert ours.params == built.params and ours.attention_kinds == built.attention_kinds
    assert memory.kv_cache_bytes(ours, 2, 8192, 2.0) == memory.kv_cache_bytes(built, 2, 8192, 2.0)


def test_the_later_multimodal_configs_have_their_facts() -> None:
    assert set(MULTIMODAL) <= set(FACTS)
    for name in MULTIMODAL:
        shp = _shape(name)[0]
        assert shp.rules.startswith("cannenv rules") and shp.vision is not None
        assert "vision_parameters" in FACTS[name]


def test_mistral3_ties_by_its_text_config() -> None:
    """Neither level of Mistral-Small-3.1's config says tie_word_embeddings: MistralConfig's default
    (untied) holds, the checkpoint's lm_head is counted; transformers 5's Mistral3Config defaults the
    top level to tied and comes out 671,088,640 parameters (2.79%) short."""
    name = "Mistral-Small-3.1-24B-Instruct-2503"
    shp = _shape(name)[0]
    assert not shp.tied and shp.by_role()["head"] == 131072 * 5120
    assert shp.params == 24_011_361_280 == _eval(FACTS[name]["parameters"])
    raw = json.loads((REAL / f"{name}.json").read_text(encoding="utf-8"))
    raw["text_config"]["tie_word_embeddings"] = True
    tied = arch.read(config.from_dict(raw, "m3")).shape
    assert tied.tied and tied.params == shp.params - 131072 * 5120


def test_qwen2_5_vl_flat_and_nested_configs_plan_alike() -> None:
    """The published Qwen2.5-VL config keeps the decoder at the top level (saved before transformers
    nested text_config); the same sizes under text_config give the same plan."""
    flat = config.load(config=str(REAL / "Qwen2.5-VL-7B-Instruct.json"))
    raw = json.loads(json.dumps(flat.raw))
    top = {k: raw.pop(k) for k in ("architectures", "model_type", "torch_dtype", "vision_config")}
    nested = {**top, "tie_word_embeddings": raw["tie_word_embeddings"], "text_config": raw}
    a, b = arch.read(flat).shape, arch.read(config.from_dict(nested, "nested")).shape
    assert (a.params, a.weights, a.layers, a.vision) == (b.params, b.weights, b.layers, b.vision)
    assert a.params == 8_292_166_656
    empty = {"model_type": "qwen2_5_vl", "vision_config": top["vision_config"]}
    with pytest.raises(InputError, match="hidden_size: missing"):
        arch.read(config.from_dict(empty, "empty"))


@pytest.mark.parametrize(
    ("name", "patches", "tokens", "act"),
    [
        # any resolution: the image processor's default max_pixels, 28*28*1280 px, patches of 14
        ("Qwen2.5-VL-7B-Instruct", 5120, 1280, 5120 * (3 * 1280 + 3 * 1280) * 2),
        # image_size 1540 / patch 14 = 110 a side; 55x55 merged + one break/end token per row
        ("Mistral-Small-3.1-24B-Instruct-2503", 12100, 55 * 56, 12100 * (3 * 1024 + 4096) * 2),
        # (896 / 14)^2 patches; mm_tokens_per_image
        ("gemma-3-27b-it", 4096, 256, 4096 * (3 * 1152 + 4304) * 2),
    ],
)
def test_images_of_the_later_multimodal_configs(name: str, patches: int, tokens: int, act: int) -> None:
    shp = _shape(name)[0]
    assert shp.vision is not None
    assert (shp.vision.patches_per_image, shp.vision.tokens_per_image) == (patches, tokens)
    assert memory.vision_activation_bytes(shp, 1, 2.0) == act


_PARAMS_BY_TRANSFORMERS = (
    "import json, sys, transformers\n"
    "from cannenv.model import config, trace\n"
    "out = {'transformers': transformers.__version__}\n"
    "for p in sys.argv[1:]:\n"
    "    s = trace.shape(config.load(config=p))\n"
    "    out[p] = [s.params, s.tied]\n"
    "print(json.dumps(out))\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("tf", ["installed", "4.57.3"])
def test_the_later_multimodal_configs_against_transformers_meta_build(tf: str) -> None:
    """transformers builds the same parameters as our rules, except transformers 5's tie of
    Mistral-3's output embeddings (the checkpoint stores lm_head: our rules keep it, as 4.57 does)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    extra = None if tf == "installed" else _tf_target(TF457)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra, str(ROOT)) if p)
    paths = [str(REAL / f"{n}.json") for n in MULTIMODAL]
    res = subprocess.run(
        [sys.executable, "-c", _PARAMS_BY_TRANSFORMERS, *paths],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout)
    if tf != "installed":
        assert doc["transformers"] == "4.57.3"
    for name, path in zip(MULTIMODAL, paths, strict=True):
        ours = _eval(FACTS[name]["parameters"])
        built, built_tied = doc[path]
        if name.startswith("Mistral") and built_tied:
            assert str(doc["transformers"]).startswith("5.") and ours - built == 131072 * 5120
        else:
            assert built == ours, (name, doc["transformers"])
