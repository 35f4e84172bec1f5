"""msprobe dumps: the examples of msprobe's docs read and compared, tensor-mode dumps written in
its layout, and hostile dumps (exit 2 or reported per entry, never a crash)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cannenv.errors import InputError
from cannenv.precision import dumps
from cannenv.precision.policy import load_policy, measure
from cannenv.precision.report import Side, build, render_junit, render_table
from tests.helpers.cli import cannenv

DATA = Path(__file__).resolve().parents[1] / "data" / "msprobe"
POLICY = load_policy()


def _write(folder: Path, doc: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dump.json").write_text(json.dumps(doc))
    return folder


def _doc(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text())


def test_doc_examples_are_read() -> None:
    l0 = dumps.load_dump(DATA / "pytorch_L0_dump.json")
    assert (l0.task, l0.level, l0.framework) == ("tensor", "L0", "pytorch")
    (e,) = l0.entries  # forward only; parameters_grad and backward are skipped
    assert l0.skipped == 2
    assert (e.kind, e.name, e.call) == ("module", "conv2", 0)
    assert e.outputs[0].shape == [8, 32, 10, 10] and e.outputs[0].stats["Norm"] == 149.65576171875
    assert e.inputs[0].data_name == "Module.conv2.Conv2d.forward.0.input.0.pt"
    l1 = dumps.load_dump(DATA / "pytorch_L1_dump.json")
    assert [(x.kind, x.name, x.call) for x in l1.entries] == [("api", "Functional.relu", 0)]
    ms = dumps.load_dump(DATA / "mindspore_L0_dump.json")
    assert ms.entries[0].name == "conv2" and ms.entries[0].outputs[0].dtype == "Float32"


@pytest.mark.parametrize("name", ["pytorch_L0_dump.json", "pytorch_L1_dump.json", "mindspore_L0_dump.json"])
def test_doc_example_against_itself_is_within(name: str) -> None:
    d = dumps.load_dump(DATA / name)
    entries = dumps.compare_dumps(d, d, POLICY)
    assert [e.status for e in entries] == ["ok"]
    # no tensor files are published with the docs: the statistics are compared
    assert entries[0].statistics is not None and entries[0].statistics["worst_rel_error"] == 0.0


def test_doc_example_with_a_drifted_output_is_the_first_divergence(tmp_path: Path) -> None:
    bench = _doc("pytorch_L0_dump.json")
    npu = copy.deepcopy(bench)
    out = npu["data"]["Module.conv2.Conv2d.forward.0"]["output"][0]
    out["Max"] = out["Max"] * 2.2  # the statistics msprobe's own rule flags (relative error > 0.5)
    npu_dir, bench_dir = _write(tmp_path / "npu", npu), _write(tmp_path / "bench", bench)
    entries = dumps.compare_dumps(dumps.load_dump(npu_dir), dumps.load_dump(bench_dir), POLICY)
    (e,) = entries
    assert e.status == "diverged" and e.module == "conv2"
    assert any(c.startswith("Max relative error") for c in e.crossed)


def test_cli_dumps_exit_codes_and_json(tmp_path: Path) -> None:
    bench = _doc("pytorch_L1_dump.json")
    npu = copy.deepcopy(bench)
    npu["data"]["Functional.relu.0.forward"]["output"][0]["Min"] = "-inf"
    npu_dir, bench_dir = _write(tmp_path / "npu", npu), _write(tmp_path / "bench", bench)
    junit = tmp_path / "d.xml"
    r = cannenv("precision", "dumps", str(npu_dir), str(bench_dir), "--json", "--junit", str(junit))
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["first_divergence"]["module"] == "Functional.relu" and doc["first_divergence"]["kind"] == "api"
    assert "non-finite" in doc["first_divergence"]["crossed"][0]
    assert "<failure" in junit.read_text()
    same = cannenv(
        "precision", "dumps", str(DATA / "pytorch_L0_dump.json"), str(DATA / "pytorch_L0_dump.json")
    )
    assert same.returncode == 0 and "first divergence: none" in same.stdout
    bad = cannenv("precision", "dumps", str(tmp_path / "missing"), str(bench_dir))
    assert bad.returncode == 2 and "does not exist" in bad.stderr


# ---------------------------------------------------------------------------------------------
# Tensor mode (fixtures written here in msprobe's layout)


def _tensor_dump(folder: Path, outputs: dict[str, np.ndarray], suffix: str = ".npy") -> Path:
    data_dir = folder / "dump_tensor_data"
    data_dir.mkdir(parents=True)
    data: dict[str, Any] = {}
    for key, arr in outputs.items():
        name = f"{key}.output.0{suffix}"
        if suffix == ".npy":
            np.save(data_dir / name, arr)
        else:
            torch = pytest.importorskip("torch")
            torch.save(torch.from_numpy(arr), data_dir / name)
        data[key] = {
            "input_args": [],
            "input_kwargs": {},
            "output": [
                {
                    "type": "torch.Tensor",
                    "dtype": "torch.bfloat16",
                    "shape": list(arr.shape),
                    "Max": float(arr.max()),
                    "Min": float(arr.min()),
                    "Mean": float(arr.mean()),
                    "Norm": float(np.linalg.norm(arr)),
                    "data_name": name,
                }
            ],
        }
    return _write(folder, {"task": "tensor", "level": "L0", "framework": "pytorch", "data": data})


KEYS = [
    "Module.model.embed.Embedding.forward.0",
    "Module.model.layers.0.mlp.Mlp.forward.0",
    "Module.lm_head.Linear.forward.0",
]


@pytest.mark.parametrize("suffix", [".npy", ".pt"])
def test_tensor_mode_first_divergence(tmp_path: Path, suffix: str) -> None:
    rng = np.random.default_rng(0)
    ref = {k: rng.standard_normal((4, 16)).astype(np.float32) for k in KEYS}
    npu = {k: (v * (1 + 2e-3 * rng.standard_normal(v.shape))).astype(np.float32) for k, v in ref.items()}
    npu[KEYS[1]] = npu[KEYS[1]].copy()
    npu[KEYS[1]][2] = 0.0  # one row zeroed in layer 0's MLP: every later entry inherits it
    npu[KEYS[2]] = npu[KEYS[2]] * 3
    entries = dumps.compare_dumps(
        dumps.load_dump(_tensor_dump(tmp_path / "n", npu, suffix)),
        dumps.load_dump(_tensor_dump(tmp_path / "b", ref, suffix)),
        POLICY,
    )
    assert [e.status for e in entries] == ["ok", "diverged", "diverged"]
    assert entries[1].module == "model.layers.0.mlp" and entries[1].metrics is not None
    assert entries[0].metrics is not None and entries[0].msprobe_accuracy_reached is not None
    report = build(
        mode="dumps",
        reference=Side(label="b", device="bench dump", dtype="-", source="t"),
        candidate=Side(label="n", device="npu dump", dtype="bf16", source="t"),
        dtype="bf16",
        policy=POLICY,
        entries=entries,
    )
    assert report.first_divergence is not None and report.first_divergence.module == "model.layers.0.mlp"
    assert report.first_divergence.path == ["model.embed", "model.layers.0.mlp"]
    assert "first divergence: model.layers.0.mlp" in render_table(report)
    assert "first_divergence" in render_junit(report)


def test_hostile_tensor_files_are_per_entry(tmp_path: Path) -> None:
    arr = np.ones((2, 3), dtype=np.float32)
    npu_dir = _tensor_dump(tmp_path / "n", {k: arr for k in KEYS})
    bench_dir = _tensor_dump(tmp_path / "b", {k: arr for k in KEYS})
    doc = json.loads((npu_dir / "dump.json").read_text())
    outs = [doc["data"][k]["output"][0] for k in KEYS]
    outs[0]["data_name"] = "../../b/dump.json"  # leaves the folder: never opened
    outs[1]["data_name"] = "missing.npy"
    (npu_dir / "dump_tensor_data" / (KEYS[2] + ".output.0.npy")).write_bytes(b"\x93NUMPY garbage")
    (npu_dir / "dump.json").write_text(json.dumps(doc))
    entries = dumps.compare_dumps(dumps.load_dump(npu_dir), dumps.load_dump(bench_dir), POLICY)
    notes = [e.note or "" for e in entries]
    assert "not a plain file name" in notes[0] and "missing" in notes[1] and "not a readable .npy" in notes[2]
    assert [e.status for e in entries] == ["ok", "ok", "ok"]  # fell back to the (equal) statistics


def test_pickled_object_in_pt_is_not_executed(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    arr = np.ones((2, 3), dtype=np.float32)
    npu_dir = _tensor_dump(tmp_path / "n", {KEYS[0]: arr}, ".pt")
    bench_dir = _tensor_dump(tmp_path / "b", {KEYS[0]: arr}, ".pt")
    target = npu_dir / "dump_tensor_data" / f"{KEYS[0]}.output.0.pt"
    torch.save({"not": "a tensor", "obj": Path("/")}, target)  # weights_only refuses Path objects
    (e,) = dumps.compare_dumps(dumps.load_dump(npu_dir), dumps.load_dump(bench_dir), POLICY)
    assert e.note and ".pt" in e.note and e.status == "ok"


def test_shape_mismatch_and_nonfinite_are_divergences() -> None:
    m = measure(np.ones((2, 3)), np.ones((3, 2)))
    assert m.error and "shape" in m.error
    r = np.array([1.0, 2.0, -np.inf])
    assert measure(r, r).nonfinite_mismatch == 0  # the same -inf mask on both sides agrees
    bad = measure(r, np.array([1.0, np.nan, -np.inf]))
    assert bad.nonfinite_mismatch == 1 and bad.cosine is None


# ---------------------------------------------------------------------------------------------
# Hostile dump.json


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "expected a JSON object"),
        ('{"data": []}', "field 'data'"),
        ("{not json", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (b"\xff\xfe".decode("latin-1"), "not valid JSON"),
    ],
)
def test_bad_dump_json_is_exit_2(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "dump.json").write_text(content, encoding="latin-1")
    with pytest.raises(InputError, match=message):
        dumps.load_dump(tmp_path)


def test_huge_dump_json_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dumps, "MAX_JSON_BYTES", 1000)
    (tmp_path / "dump.json").write_text(json.dumps({"data": {"x" * 2000: 1}}))
    with pytest.raises(InputError, match="larger than"):
        dumps.load_dump(tmp_path)


def test_several_dumps_in_a_folder_are_named(tmp_path: Path) -> None:
    for rank in ("rank0", "rank1"):
        _write(tmp_path / "step0" / rank, {"data": {}})
    with pytest.raises(InputError, match="several dumps"):
        dumps.load_dump(tmp_path)
    assert dumps.locate(tmp_path / "step0" / "rank1").name == "dump.json"


def test_malformed_entries_are_reported_per_entry(tmp_path: Path) -> None:
    doc = _doc("pytorch_L0_dump.json")
    doc["data"]["Module.a.Linear.forward.0"] = "not an object"
    doc["data"]["Module.b.Linear.forward.0"] = {
        "output": [{"type": "torch.Tensor", "shape": "x", "Max": "NaN"}]
    }
    doc["data"]["Module.c.Linear.forward.0"] = {"output": [[[[{"type": "torch.Tensor", "Max": 1e400}]]]]}
    doc["data"]["garbage"] = {}
    d = dumps.load_dump(_write(tmp_path, doc))
    entries = dumps.compare_dumps(d, d, POLICY)
    by = {e.module: e for e in entries}
    assert by["a"].status == "unmatched" and "not an object" in (by["a"].note or "")
    assert by["conv2"].status == "ok"
    assert d.skipped == 3  # parameters_grad, backward, garbage


JSONISH = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4),
    max_leaves=30,
)
KEY = st.sampled_from(["Module.m.L.forward.0", "Functional.relu.0.forward", "Cell.x.y.Z.forward.3", "junk"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(KEY, JSONISH, max_size=4), st.dictionaries(KEY, JSONISH, max_size=4), JSONISH)
def test_any_dump_is_exit_2_or_per_entry(
    tmp_path: Path, a: dict[str, Any], b: dict[str, Any], task: Any
) -> None:
    pa = _write(tmp_path / "a", {"task": task, "data": a})
    pb = _write(tmp_path / "b", {"data": b})
    entries = dumps.compare_dumps(dumps.load_dump(pa), dumps.load_dump(pb), POLICY)
    assert all(e.status in ("ok", "diverged", "unmatched") for e in entries)
    json.dumps([e.model_dump(mode="json") for e in entries], allow_nan=True)


def test_shipped_json_schema_is_in_sync() -> None:
    from cannenv.precision.report import report_json_schema

    shipped = json.loads((Path(__file__).resolve().parents[2] / "docs" / "precision.schema.json").read_text())
    assert shipped == report_json_schema(), "regenerate docs/precision.schema.json (docs/precision.md)"


def test_policy_cites_every_limit_and_refuses_unknown_sources(tmp_path: Path) -> None:
    policy = load_policy()
    for d in policy.dtypes.values():
        for lim in (d.cosine_min, d.max_rel_error):
            assert lim.source in policy.sources and policy.sources[lim.source].url
    text = (Path(__file__).resolve().parents[2] / "matrices" / "precision" / "tolerances.yaml").read_text()
    bad = tmp_path / "t.yaml"
    bad.write_text(text.replace("source: cannenv-calibration", "source: nowhere", 1))
    with pytest.raises(InputError, match="unknown sources"):
        load_policy(bad)
    bad.write_text(text.replace("cosine_min: {value: 0.99,", "cosine_min: {value: high,", 1))
    with pytest.raises(InputError, match="cosine_min"):
        load_policy(bad)


def test_missing_torch_is_exit_4(tmp_path: Path) -> None:
    """A Python where torch cannot be imported: `precision run` is exit 4 naming the install, while
    `precision dumps` of statistics needs no torch at all."""
    import os
    import subprocess
    import sys

    blocker = tmp_path / "blocker" / "torch"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("no torch in this environment")\n')
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text('{"model_type": "llama", "vocab_size": 512}')
    (ckpt / "model.safetensors").write_bytes(b"not loaded")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(blocker.parent), os.environ.get("PYTHONPATH", "")]),
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "cannenv", "precision", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)

    r = run("run", "--model", str(ckpt), "--device", "cpu")
    assert r.returncode == 4, r.stderr
    assert "torch" in r.stderr and "pip install" in r.stderr
    d = run("dumps", str(DATA / "pytorch_L1_dump.json"), str(DATA / "pytorch_L1_dump.json"))
    assert d.returncode == 0, d.stderr
