"""`cannenv model`: operator coverage against real torch_npu registries, and the memory plan.

Models are built from tiny local configs (tests/data/model_configs) with the model code transformers
ships; registries come from real torch_npu wheels (tests/data/torch_npu_registry, see its README).
The reviewed coverage tables live in tests/data/model_coverage; regenerate them with
``CANNENV_REGEN=1 python -m pytest tests/unit/test_model.py -k table`` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from cannenv.errors import InputError  # noqa: E402
from cannenv.model import config, coverage, memory, registry, trace  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data"
CONFIGS = DATA / "model_configs"
TABLES = DATA / "model_coverage"
REGISTRIES = DATA / "torch_npu_registry"
FAMILIES = ("llama", "qwen2", "mixtral", "gemma", "gpt2", "bert", "t5", "mamba", "cannenv_tiny")


def reg(version: str) -> registry.Registry:
    got = registry.from_dir(REGISTRIES / version)  # a site-packages-like folder: version from METADATA
    assert got.version == version
    return got


@pytest.fixture(scope="module")
def traces() -> dict[str, coverage.Trace]:
    return {f: trace.record(config.load(config=str(CONFIGS / f"{f}.json"))) for f in FAMILIES}


def table(cov: coverage.Coverage) -> str:
    lines = [
        f"# {cov.trace.model} against torch_npu {cov.registry.version}; steps: {', '.join(cov.trace.steps)}"
    ]
    for r in cov.rows:
        parts = ",".join(f"{p}={e}" for p, _, e in r.verdict.parts if e != "native")
        lines.append(
            f"{r.record.op} [{','.join(r.record.dtypes)}] x{r.record.count}: "
            f"{r.verdict.klass}/{r.verdict.effect}" + (f" off-NPU parts {parts}" if parts else "")
        )
    lines.append("fusions: " + ", ".join(f"{f.id}@{'|'.join(f.modules)}" for f in cov.fusions))
    lines.append("verdict: " + cov.verdict)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("family", FAMILIES)
def test_coverage_table_is_the_reviewed_one(traces: dict[str, coverage.Trace], family: str) -> None:
    text = table(coverage.classify(traces[family], reg("2.7.1")))
    path = TABLES / f"{family}.txt"
    if os.environ.get("CANNENV_REGEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()


def test_every_family_records_prefill_and_decode(traces: dict[str, coverage.Trace]) -> None:
    for family, tr in traces.items():
        assert tr.steps[0] == "prefill", family
        if family != "bert":
            assert tr.steps == ("prefill", "decode"), (family, tr.notes)
    assert traces["bert"].steps == ("prefill",)
    assert any("no decode step" in n for n in traces["bert"].notes)
    # module paths fold layer indices; the attention call is where transformers makes it
    llama = {r.op: r for r in traces["llama"].ops}
    assert "model.layers.*.self_attn" in llama["aten::scaled_dot_product_attention"].modules


def test_composite_is_never_a_fallback(traces: dict[str, coverage.Trace]) -> None:
    # Take mm (and its out= variant, which torch's structured composite for mm calls) away from
    # the registry: linear stays composite, so does mm; the effect becomes a fallback.
    full = reg("2.7.1")
    ops = {k: v for k, v in full.ops.items() if k not in ("aten::mm", "aten::mm.out")}
    crippled = replace(full, ops=ops)
    cov = coverage.classify(traces["llama"], crippled)
    linear = next(r.verdict for r in cov.rows if r.record.op == "aten::linear")
    assert linear.klass == "composite"
    assert linear.effect == "fallback"
    assert ("aten::mm", "composite", "fallback") in linear.parts
    assert cov.fallbacks == ("aten::mm.out",)
    for tr in traces.values():
        for row in coverage.classify(tr, full).rows:
            kernels = tr.kernels.get(row.record.op, ())
            if not full.sections(row.record.op) and any(k in kernels for k in coverage.COMPOSITE_KEYS):
                assert row.verdict.klass == "composite", row.record.op


def test_add_rms_norm_where_a_residual_add_feeds_an_rmsnorm(traces: dict[str, coverage.Trace]) -> None:
    """Issue 25 point 7: the residual add is found by module structure (the decoder layer adds, its
    RMSNorm children read the sum), not by operator pattern (the norm's own ``+ eps`` is an add too)."""
    full = reg("2.7.1")
    assert full.sections("npu::npu_add_rms_norm") and full.sections("npu::npu_incre_flash_attention")
    fused = {f: {x.id: x for x in coverage.classify(traces[f], full).fusions} for f in traces}
    llama = fused["llama"]["add-rms-norm"]
    assert llama.target == "torch_npu.npu_add_rms_norm" and llama.available
    assert llama.modules == ("model.layers.*.input_layernorm", "model.layers.*.post_attention_layernorm")
    assert "add-rms-norm" in fused["qwen2"] and "add-rms-norm" in fused["mixtral"]
    # LayerNorm models: no RMSNorm, no add-RMSNorm
    assert "add-rms-norm" not in fused["gpt2"] and "add-rms-norm" not in fused["bert"]
    # Gemma's RMSNorm scales by (1 + weight): not what the op documents
    assert "rms-norm" in fused["gemma"] and "add-rms-norm" not in fused["gemma"]
    # paged attention: decode-time, on the attention module
    paged = fused["llama"]["paged-attention"]
    assert paged.target == "torch_npu.npu_incre_flash_attention"
    assert paged.modules == ("model.layers.*.self_attn",) and "block_table" in paged.conditions
    assert "paged-attention" not in fused["bert"]  # no decode step


def test_no_suggestion_where_the_registry_lacks_the_op(traces: dict[str, coverage.Trace]) -> None:
    full = reg("2.13.0")
    gone = ("npu::npu_add_rms_norm", "npu::npu_incre_flash_attention")
    crippled = replace(full, ops={k: v for k, v in full.ops.items() if k not in gone})
    ids = {f.id for f in coverage.classify(traces["llama"], crippled).fusions}
    assert "add-rms-norm" not in ids and "paged-attention" not in ids
    assert {"rms-norm", "decode-attention"} <= ids


class Planted(torch.nn.Module):
    """The tiny decoder's embedding, then a custom operator the registry does not know."""

    def __init__(self, op: str) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(16, 8)
        self.op = op

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ns, name = self.op.split("::")
        return getattr(getattr(torch.ops, ns), name)(self.embed(ids))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def planted_ops() -> None:
    lib = torch.library.Library("cannenv_test", "DEF")
    lib.define("mystery(Tensor x) -> Tensor")
    lib.define("hostonly(Tensor x) -> Tensor")
    lib.impl("mystery", lambda x: torch.empty_like(x), "Meta")  # a device kernel elsewhere, none for CPU
    lib.impl("hostonly", lambda x: torch.empty_like(x), "Meta")
    lib.impl("hostonly", lambda x: x.clone(), "CPU")
    planted_ops.lib = lib  # type: ignore[attr-defined]  # keep the registrations alive


@pytest.mark.usefixtures("planted_ops")
def test_planted_unsupported_operator_is_reported() -> None:
    with torch.device("meta"):
        model = Planted("cannenv_test::mystery")
    cov = coverage.classify(trace.record_model(model, "planted"), reg("2.13.0"))
    assert cov.unsupported == ("cannenv_test::mystery",)
    assert cov.verdict == "unsupported"
    with torch.device("meta"):
        model = Planted("cannenv_test::hostonly")
    cov = coverage.classify(trace.record_model(model, "planted"), reg("2.13.0"))
    assert cov.fallbacks == ("cannenv_test::hostonly",)
    assert cov.verdict == "fallbacks"


def test_two_real_torch_npu_versions_differ_where_they_should(traces: dict[str, coverage.Trace]) -> None:
    old, new = reg("2.7.1"), reg("2.13.0")
    changed = registry.diff(old, new)
    assert "aten::gelu" in changed["removed"]  # 2.13.0 keeps only gelu.out (a structured kernel)
    assert "npu::npu_swiglu" not in changed["removed"]
    assert len(changed["added"]) > 100
    diffs = coverage.compare(coverage.classify(traces["gemma"], old), coverage.classify(traces["gemma"], new))
    gelu = next(d for d in diffs if d["op"] == "aten::gelu")
    # gelu is native in 2.7.1; in 2.13.0 torch's structured composite runs it through gelu.out
    assert gelu == {"op": "aten::gelu", "old": "native/native", "new": "composite/native"}


def test_registry_of_a_real_wheel_equals_its_fixture(tmp_path: Path) -> None:
    # A wheel built from the fixture files reads the same as the folder (same parser, zip path).
    wheel = tmp_path / "torch_npu-2.7.1-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for f in sorted((REGISTRIES / "2.7.1").rglob("*.yaml")):
            zf.write(f, f.relative_to(REGISTRIES / "2.7.1").as_posix())
        zf.writestr(
            "torch_npu-2.7.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch_npu\nVersion: 2.7.1\n"
        )
    got = registry.from_wheel(wheel)
    assert got.version == "2.7.1"
    assert got.ops == reg("2.7.1").ops


def test_a_wheel_member_that_is_a_link_is_refused_not_read(tmp_path: Path) -> None:
    # the one bounded zip reader (cannenv.records.zip_member_chunks) reads regular members only
    import stat

    wheel = tmp_path / "torch_npu-2.7.1-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        info = zipfile.ZipInfo("torch_npu/csrc/aten/npu_native_functions.yaml")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(InputError, match="not a regular file"):
        registry.from_wheel(wheel)


def test_hostile_wheels_are_refused(tmp_path: Path) -> None:
    not_zip = tmp_path / "a.whl"
    not_zip.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a readable zip"):
        registry.from_wheel(not_zip)
    empty = tmp_path / "b.whl"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("torch_npu/__init__.py", "")
    with pytest.raises(InputError, match="holds no"):
        registry.from_wheel(empty)
    bomb = tmp_path / "c.whl"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("torch_npu/csrc/aten/npu_native_functions.yaml", b"#" * (registry.MAX_YAML_BYTES + 10))
    with pytest.raises(InputError, match="at most"):
        registry.from_wheel(bomb)
    bad = tmp_path / "d.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("torch_npu/csrc/aten/npu_native_functions.yaml", "supported: [mm, {nofunc: 1}]\n")
    with pytest.raises(InputError, match=r"supported\[1\]"):
        registry.from_wheel(bad)
    link = tmp_path / "site" / "torch_npu" / "csrc" / "aten"
    link.mkdir(parents=True)
    (link / "npu_native_functions.yaml").symlink_to("/etc/passwd")
    with pytest.raises(InputError, match="outside"):
        registry.from_dir(tmp_path / "site")


@pytest.mark.network
@pytest.mark.slow
def test_a_version_is_downloaded_once_and_reads_like_the_fixture() -> None:
    # The real thing: pip download --no-deps torch-npu==2.7.1 into cannenv's cache (kept there,
    # so a second run reads the cached wheel), then the wheel's yaml.
    from cannenv.errors import ExternalError

    try:
        got = registry.from_version("2.7.1")
    except ExternalError as exc:
        pytest.skip(f"PyPI not reachable: {exc.message}")
    assert got.version == "2.7.1"
    assert got.ops == reg("2.7.1").ops
    assert Path(got.origin).parent == registry.cache_folder() / "2.7.1"


@pytest.mark.network
@pytest.mark.slow
def test_check_against_a_shipped_stack() -> None:
    # The stack's torch_npu (2.9.0.post2, for its Python 3.12) is fetched into the cache; its
    # family (Atlas A3) gives the HBM per chip.
    res = run_cli(
        "check",
        "--config",
        str(CONFIGS / "llama.json"),
        "--stack",
        "a3-cann9.0.0-torch2.9.0-py3.12",
        "--json",
    )
    if res.returncode == 6:
        pytest.skip(f"PyPI not reachable: {res.stderr[-300:]}")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["torch_npu"]["version"] == "2.9.0.post2"
    assert doc["memory"]["hbm_bytes"] == 65536 << 20
    assert doc["verdict"] == "ready; fits at TP 1"


def test_resolve_refuses_what_is_not_a_registry() -> None:
    with pytest.raises(InputError):
        registry.resolve("2.7.1; rm -rf /")
    with pytest.raises(InputError, match="version"):
        registry.from_version("--index-url=http://evil")


# ---------------------------------------------------------------------------------------------
# memory


LLAMA_7B = {
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
    "tie_word_embeddings": False,
}


def test_llama_7b_matches_published_figures() -> None:
    shp = trace.shape(config.from_dict(dict(LLAMA_7B), "7b"))
    assert shp.params == 6_738_415_616  # Llama-2-7B
    p = memory.plan(shp, dtype="fp16", batch=1, seq_len=1)
    assert p.weights_total == 2 * 6_738_415_616
    assert round(p.weights_total / 1e9, 1) == 13.5  # "~13.5 GB of weights"
    assert p.kv_per_token == 512 * 1024  # "512 KiB per token"
    int8 = memory.plan(shp, dtype="int8", batch=1, seq_len=1).weights_total
    assert 6.9e9 < int8 < 7.1e9  # "~7 GB in INT8", scales included
    # KV cache grows linearly: 1k -> 8k tokens is 8x
    kv1k = memory.kv_cache_bytes(shp, 1, 1024, 2)
    assert memory.kv_cache_bytes(shp, 1, 8192, 2) == 8 * kv1k == 512 * 1024 * 8192


def test_plan_against_the_soc_data() -> None:
    from cannenv import soc

    shp = trace.shape(config.from_dict(dict(LLAMA_7B), "7b"))
    mem = soc.device_memory("910b4")
    assert mem is not None and mem.hbm_mib == 32768
    p = memory.plan(shp, dtype="bf16", batch=8, seq_len=8192, tp=1, hbm=mem.hbm_mib << 20)
    assert p.at_tp.fits is False  # 12.6 GiB weights + 32 GiB KV cache
    assert p.min_tp == 2  # 6.3 GiB weights + 16 GiB KV + 4.3 GiB reserve per device
    small = next(d for d in p.per_tp if d.tp == 1)
    assert small.max_tokens is not None and 20_000 < small.max_tokens < 40_000
    assert [d.tp for d in p.per_tp] == [1, 2, 4, 8, 16]


@pytest.mark.parametrize("family", ["llama", "qwen2", "gpt2", "cannenv_tiny"])
def test_weight_bytes_equal_a_real_allocation(family: str) -> None:
    cfg = config.load(config=str(CONFIGS / f"{family}.json"))
    for name, dtype in (("bf16", torch.bfloat16), ("fp32", torch.float32)):
        model = trace.build(cfg, dtype, device="cpu")
        measured = trace.parameter_bytes(model)
        assert memory.weight_bytes(trace.shape(cfg, model), name) == measured, (family, name)
    shp = trace.shape(cfg)
    assert shp.tied == (family in ("qwen2", "gpt2"))
    # the embedding (and a tied head) is never counted among the quantised layer weights
    assert shp.linear_params > 0 and shp.linear_params + shp.embedding_params <= shp.params


def test_kv_cache_per_attention_kind(traces: dict[str, coverage.Trace]) -> None:
    def kv(family: str) -> float:
        return memory.kv_bytes_per_token(trace.shape(config.load(config=str(CONFIGS / f"{family}.json"))), 2)

    assert kv("llama") == 2 * 2 * 2 * 16 * 2  # layers x K,V x kv_heads x head_dim x bytes (GQA)
    assert kv("gemma") == 2 * 2 * 1 * 16 * 2  # MQA
    assert kv("bert") == 0
    mamba = trace.shape(config.load(config=str(CONFIGS / "mamba.json")))
    assert mamba.attention_kinds == ("ssm",)
    assert memory.kv_cache_bytes(mamba, 1, 10, 2) == memory.kv_cache_bytes(mamba, 1, 10_000, 2) > 0
    mixtral = trace.shape(config.load(config=str(CONFIGS / "mixtral.json")))
    assert mixtral.attention_kinds == ("gqa+window32",)
    assert memory.kv_cache_bytes(mixtral, 1, 1000, 2) == memory.kv_cache_bytes(mixtral, 1, 32, 2)
    # MLA (DeepSeek-V3 code from transformers): kv_lora_rank 16 + qk_rope_head_dim 8 per layer
    deepseek = trace.shape(config.load(config=str(CONFIGS / "deepseek_v3.json")))
    assert deepseek.attention_kinds == ("mla",)
    assert memory.kv_bytes_per_token(deepseek, 2) == 2 * (16 + 8) * 2
    # per-layer types (Gemma-2 alternates sliding and full attention)
    gemma2 = trace.shape(config.load(config=str(CONFIGS / "gemma2.json")))
    assert [lay.window for lay in gemma2.layers] == [8, None, 8, None]
    assert memory.kv_cache_bytes(gemma2, 1, 100, 2) == (2 * 8 + 2 * 100) * 2 * 2 * 16 * 2
    mla = memory.Shape("mla", 1, False, 64, 4, 128, 128, (memory.Layer("mla", latent=512 + 64),) * 3)
    assert memory.kv_bytes_per_token(mla, 2, tp=1) == memory.kv_bytes_per_token(mla, 2, tp=4) == 3 * 576 * 2
    layered = memory.Shape(
        "gemma2-like",
        1,
        False,
        64,
        4,
        128,
        128,
        (memory.Layer("gqa", 2, 16, window=8), memory.Layer("gqa", 2, 16)),
    )
    assert memory.kv_cache_bytes(layered, 1, 100, 2) == (8 + 100) * 2 * 2 * 16 * 2


# ---------------------------------------------------------------------------------------------
# the commands, as a user runs them


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", "model", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_cli_ops_json_and_exit_code() -> None:
    res = run_cli(
        "ops", "--config", str(CONFIGS / "llama.json"), "--torch-npu", str(REGISTRIES / "2.7.1"), "--json"
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["schema"] == "cannenv.model.ops/1"
    assert doc["verdict"] == "ready"
    assert {f["id"] for f in doc["fusions"]} >= {"rms-norm", "rotary", "attention"}
    res = run_cli(
        "ops",
        "--config",
        str(CONFIGS / "gemma.json"),
        "--torch-npu",
        str(REGISTRIES / "2.13.0"),
        "--compare",
        str(REGISTRIES / "2.7.1"),
    )
    assert res.returncode == 0, res.stderr
    assert "From torch_npu 2.7.1" in res.stdout
    assert "aten::gelu: native/native -> composite/native" in res.stdout


@pytest.mark.slow
def test_cli_memory_and_check() -> None:
    res = run_cli("memory", "--config", str(CONFIGS / "llama.json"), "--soc", "Ascend910B3", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["at_tp"]["fits"] is True
    res = run_cli("memory", "--config", str(CONFIGS / "llama.json"), "--soc", "Ascend310P1")
    assert res.returncode == 2 and "--hbm-gib" in res.stderr  # no sourced size for 310P1
    res = run_cli(
        "check",
        "--config",
        str(CONFIGS / "llama.json"),
        "--torch-npu",
        str(REGISTRIES / "2.13.0"),
        "--hbm-gib",
        "0.001",
        "--json",
    )
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert doc["operators"] == "ready" and doc["fits"] is False
    if shutil.which("npu-smi") is None:  # no NPU here: check asks for the device instead of guessing
        res = run_cli(
            "check", "--config", str(CONFIGS / "llama.json"), "--torch-npu", str(REGISTRIES / "2.13.0")
        )
        assert res.returncode == 2 and "--soc" in res.stderr
    res = run_cli("ops", "--config", str(CONFIGS / "llama.json"), "--torch-npu", "not-a-version!")
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_bad_config_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "llama",\n "hidden_size": }')
    with pytest.raises(InputError, match=r"config.json:2: not valid JSON"):
        config.load(model_dir=str(tmp_path))
    with pytest.raises(InputError, match="exactly one"):
        config.load()
    (tmp_path / "c2.json").write_text(json.dumps({"hidden_size": 3}))
    with pytest.raises(InputError, match="model_type"):
        config.load(config=str(tmp_path / "c2.json"))


# ---------------------------------------------------------------------------------------------
# the registry parser, on any input

_names = st.from_regex(r"[a-z_][a-z0-9_]{0,12}(\.[A-Za-z0-9_]{1,8})?", fullmatch=True)
_entries = st.one_of(
    _names,
    st.builds(lambda n: {"func": n + "(Tensor self) -> Tensor", "op_api": True}, _names),
    st.integers(),
    st.none(),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["supported", "autograd", "quant", "custom", "symint", "backend", "other"]),
        st.one_of(st.lists(_entries, max_size=6), st.text(max_size=10), st.none()),
        max_size=5,
    )
)
def test_registry_parser_takes_any_yaml(doc: dict[str, object]) -> None:
    import yaml

    text = yaml.safe_dump(doc)
    try:
        ops = registry.parse_yaml({"npu_native_functions.yaml": text})
    except InputError as exc:
        assert "npu_native_functions.yaml" in exc.message
        return
    for section, items in doc.items():
        if section in ("supported", "autograd", "quant", "custom") and isinstance(items, list):
            ns = "npu" if section == "custom" else "aten"
            for e in items:
                name = e if isinstance(e, str) else e["func"].split("(")[0]  # type: ignore[index]
                assert section in ops[f"{ns}::{name}"]
    assert all(k.split("::")[0] in ("aten", "npu") for k in ops)


def test_a_module_made_at_call_time_is_reported_at_the_registered_module_that_calls_it() -> None:
    """transformers 5.25 wraps a function (the rotary embedding) in a module it makes at call time:
    its operators are the calling layer's, as the model's own layout names it, not '@Func'."""

    class Made(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return torch.neg(x)

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            return Made()(self.proj(x))

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.block = Block()

        def forward(self, x: Any) -> Any:
            return self.block(x)

    model = Net().to("meta")
    rec = trace._Recorder()
    with trace._recording(rec, model):
        model(torch.empty(2, 4, device="meta"))
    where = {name: set(acc.modules) for (name, _), acc in rec.calls.items()}
    assert where["aten::neg"] == {"block"}, where
    assert where["aten::linear"] == {"block.proj"}, where
