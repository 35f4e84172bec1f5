"""`cannenv precision run|compare` and the bench side of ``--from-dump``: load, run both sides with
hooks, localise, replay (imports torch and transformers; never on the ``doctor`` path).

run      the checkpoint on this host's device in its low-precision dtype (NPU through torch_npu
         when present; on a CPU-only host the chosen dtype on the CPU, reported as such) against
         the same checkpoint in float32 on the CPU.
compare  a second checkpoint of the same architecture against the first, same dtype, same device.
dump     the checkpoint in float32 on the CPU, its module statistics (and tensors) in msprobe's
         naming, against an msprobe dump taken on the NPU.
"""

from __future__ import annotations

import os

os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

import copy
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from cannenv.errors import InputError, MissingToolError
from cannenv.precision import capture
from cannenv.precision.policy import Policy, crossed
from cannenv.precision.report import Entry, PrecisionReport, Replay, Side, build, judge_entry

DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
HF_HINT = "pip install 'cannenv[model]' (CPU torch and transformers)"

Progress = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


@dataclass(frozen=True)
class InputSpec:
    batch: int = 1
    seq_len: int = 32
    seed: int = 0

    def ids(self, vocab_size: int) -> torch.Tensor:
        """Deterministic token ids, drawn as `certify --model` draws them (seed + 1)."""
        gen = torch.Generator().manual_seed(self.seed + 1)
        return torch.randint(0, vocab_size, (self.batch, self.seq_len), generator=gen)

    def record(self) -> dict[str, Any]:
        return {"batch": self.batch, "seq_len": self.seq_len, "seed": self.seed, "ids": "seeded uniform"}


def load_model(folder: str) -> nn.Module:
    """A local checkpoint in float32 on the CPU, eager attention (the same kernels on both sides)."""
    from cannenv.certify.checkpoint import inspect

    inspect(folder, hash_weights=False)  # exit 2 naming what is missing, before transformers runs
    try:
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging
    except ImportError as exc:
        raise MissingToolError(f"transformers cannot be imported ({exc})", hint=HF_HINT) from None
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        model = AutoModelForCausalLM.from_pretrained(
            folder, local_files_only=True, dtype=torch.float32, attn_implementation="eager"
        )
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"--model {folder!r}: transformers cannot load it ({exc})"[:2000]) from None
    model.eval()
    return model  # type: ignore[no-any-return]


def _vocab(model: nn.Module) -> int:
    cfg = getattr(model, "config", None)
    vocab = getattr(cfg, "vocab_size", None)
    if not isinstance(vocab, int) or vocab < 1:
        raise InputError("the model's config has no vocab_size; cannot draw input ids")
    return vocab


def forward_on(ids: torch.Tensor) -> Callable[[nn.Module], Any]:
    def run(model: nn.Module) -> Any:
        device = next(model.parameters()).device
        return model(input_ids=ids.to(device), use_cache=False)

    return run


@dataclass(frozen=True)
class Candidate:
    device: torch.device
    dtype: str
    label: str
    notes: tuple[str, ...] = ()


def choose_candidate(device: str, dtype: str) -> Candidate:
    """Where the candidate runs: the NPU when asked (or ``auto`` and torch_npu sees one), else the CPU."""
    from cannenv.certify.llm_worker import SkipTask, open_device, resolve_dtype

    if device == "auto":
        device = "npu" if _npu_present() else "cpu"
    try:
        dev = open_device(device)
        name, _why = resolve_dtype(dtype, dev)
    except SkipTask as exc:
        raise MissingToolError(exc.reason, hint=exc.hint) from None
    notes: tuple[str, ...] = ()
    if dev.kind == "cpu":
        notes = (
            f"no NPU here: the candidate is the model in {name} on the CPU (the dtype's own rounding, "
            "not a device's kernels); run on an Atlas host with torch_npu to judge the NPU",
        )
    return Candidate(dev.torch_device, name, f"{dev.kind}:{dev.name}", notes)


def _npu_present() -> bool:
    import importlib.util

    if importlib.util.find_spec("torch_npu") is None:
        return False
    try:
        import torch_npu  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
    except Exception:  # a broken torch_npu is "no NPU" for auto; --device npu names the error
        return False
    npu = getattr(torch, "npu", None)
    return bool(npu is not None and npu.is_available())


def localise(
    ref_model: nn.Module,
    cand_model: nn.Module,
    forward: Callable[[nn.Module], Any],
    *,
    cand_device: torch.device,
    cand_dtype: str,
    policy: Policy,
    keep_dir: str | None,
    replay: bool,
    progress: Progress,
) -> tuple[list[Entry], Replay | None, dict[str, float], list[str]]:
    """Both sides with hooks; every module judged; the first divergent one replayed."""
    limits = policy.for_dtype(cand_dtype)
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="cannenv-precision-") as tmp:
        root = Path(keep_dir) if keep_dir else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        progress("reference forward (spooling module outputs)")
        spool = capture.spool_reference(ref_model, forward, root)
        timings["reference_s"] = round(time.perf_counter() - t0, 3)
        timings["spool_mib"] = round(spool.bytes_written / (1 << 20), 3)
        t0 = time.perf_counter()
        progress(f"candidate forward ({cand_dtype}, comparing {len(spool.order)} module calls)")
        rows = capture.compare_candidate(cand_model, forward, spool)
        timings["candidate_s"] = round(time.perf_counter() - t0, 3)
    entries = [
        judge_entry(i, r.module, r.call, r.metrics, policy, limits, note=r.note) for i, r in enumerate(rows)
    ]
    notes = []
    flips = [r for r in rows if r.flipped]
    if flips:
        notes.append(
            f"{sum(r.flipped for r in flips)} discrete choice(s) in {len(flips)} module call(s) (first: "
            f"{flips[0].module}) differ from the reference's, e.g. a router's experts at a near-tie; the "
            "candidate was made to follow the reference's choices so the rest compares like with like"
        )
    first = next((e for e in entries if e.status == "diverged"), None)
    result: Replay | None = None
    if first is not None and replay:
        t0 = time.perf_counter()
        progress(f"replaying {first.module} on the reference's inputs")
        result = replay_module(ref_model, cand_model, forward, first, cand_device, cand_dtype, policy)
        timings["replay_s"] = round(time.perf_counter() - t0, 3)
    return entries, result, timings, notes


def replay_module(
    ref_model: nn.Module,
    cand_model: nn.Module,
    forward: Callable[[nn.Module], Any],
    first: Entry,
    device: torch.device,
    dtype: str,
    policy: Policy,
) -> Replay:
    try:
        got = capture.capture_call(ref_model, forward, first.module, first.call)
        if got is None:
            return Replay(verdict="unavailable", reason="the module call was not seen again in the reference")
        m = capture.replay(cand_model, first.module, got, device, DTYPES[dtype])
    except Exception as exc:  # a module that cannot be called alone is a finding, not a crash
        return Replay(verdict="unavailable", reason=f"{type(exc).__name__}: {exc}"[:500])
    if m is None:
        return Replay(verdict="unavailable", reason="the replayed module returned other outputs")
    why = crossed(m, policy.for_dtype(dtype))
    return Replay(verdict="local" if why else "inherited", crossed=why, metrics=m)


def run(
    model_dir: str,
    *,
    device: str,
    dtype: str,
    inputs: InputSpec,
    policy: Policy,
    keep_dir: str | None = None,
    replay: bool = True,
    progress: Progress = _quiet,
) -> PrecisionReport:
    started = time.perf_counter()
    cand = choose_candidate(device, dtype)
    progress(f"loading {model_dir}")
    ref_model = load_model(model_dir)
    cand_model = copy.deepcopy(ref_model).to(device=cand.device, dtype=DTYPES[cand.dtype])
    _no_hf32(cand)
    return _localised_report(
        "run",
        ref_model,
        cand_model,
        inputs.ids(_vocab(ref_model)),
        cand=cand,
        reference=Side(label=model_dir, device="cpu", dtype="fp32", source="CPU float32 reference"),
        candidate=Side(label=model_dir, device=cand.label, dtype=cand.dtype, source="this host's device"),
        notes=list(cand.notes),
        policy=policy,
        inputs=inputs,
        keep_dir=keep_dir,
        replay=replay,
        progress=progress,
        started=started,
    )


def _localised_report(
    mode: Literal["run", "compare"],
    ref_model: nn.Module,
    cand_model: nn.Module,
    ids: torch.Tensor,
    *,
    cand: Candidate,
    reference: Side,
    candidate: Side,
    notes: list[str],
    policy: Policy,
    inputs: InputSpec,
    keep_dir: str | None,
    replay: bool,
    progress: Progress,
    started: float,
) -> PrecisionReport:
    entries, rp, timings, flips = localise(
        ref_model,
        cand_model,
        forward_on(ids),
        cand_device=cand.device,
        cand_dtype=cand.dtype,
        policy=policy,
        keep_dir=keep_dir,
        replay=replay,
        progress=progress,
    )
    timings["total_s"] = round(time.perf_counter() - started, 3)
    return build(
        mode=mode,
        reference=reference,
        candidate=candidate,
        dtype=cand.dtype,
        policy=policy,
        entries=entries,
        replay=rp,
        input_info=inputs.record(),
        notes=[*notes, *flips],
        timings=timings,
    )


def _no_hf32(cand: Candidate) -> None:
    """HF32 would make float32 matmuls on the NPU loose (kernels.md §4): keep float32 true float32."""
    if cand.device.type != "npu":
        return
    npu = getattr(torch, "npu", None)
    for holder in ("matmul", "conv"):
        obj = getattr(npu, holder, None)
        if obj is not None and hasattr(obj, "allow_hf32"):
            obj.allow_hf32 = False


def compare(
    model_dir: str,
    against: str,
    *,
    dtype: str,
    inputs: InputSpec,
    policy: Policy,
    keep_dir: str | None = None,
    replay: bool = True,
    progress: Progress = _quiet,
) -> PrecisionReport:
    """``model_dir`` (the candidate: converted, quantised, merged, fine-tuned) against ``against``
    (the original), both in ``dtype`` on the CPU, same inputs."""
    started = time.perf_counter()
    name = "fp32" if dtype == "auto" else dtype
    progress(f"loading {against} and {model_dir}")
    ref_model = load_model(against).to(dtype=DTYPES[name])
    cand_model = load_model(model_dir).to(dtype=DTYPES[name])
    notes = []
    ref_type = getattr(getattr(ref_model, "config", None), "model_type", None)
    cand_type = getattr(getattr(cand_model, "config", None), "model_type", None)
    if ref_type != cand_type:
        notes.append(
            f"architectures differ: {cand_type} here, {ref_type} in --against; modules are matched by name"
        )
    return _localised_report(
        "compare",
        ref_model,
        cand_model,
        inputs.ids(min(_vocab(ref_model), _vocab(cand_model))),
        cand=Candidate(torch.device("cpu"), name, "cpu"),
        reference=Side(label=against, device="cpu", dtype=name, source="--against (the original)"),
        candidate=Side(label=model_dir, device="cpu", dtype=name, source="--model (the copy)"),
        notes=notes,
        policy=policy,
        inputs=inputs,
        keep_dir=keep_dir,
        replay=replay,
        progress=progress,
        started=started,
    )


# ---------------------------------------------------------------------------------------------
# --from-dump: the bench side of an msprobe dump, run here on the CPU


def _stats(t: torch.Tensor) -> dict[str, float | None]:
    x = t.detach().to(device="cpu", dtype=torch.float64)
    if x.numel() == 0:
        return {"Max": None, "Min": None, "Mean": None, "Norm": None}
    return {
        "Max": float(x.max()),
        "Min": float(x.min()),
        "Mean": float(x.mean()),
        "Norm": float(torch.linalg.vector_norm(x)),
    }


_TORCH_NAMES = {
    torch.float32: "torch.float32",
    torch.float16: "torch.float16",
    torch.bfloat16: "torch.bfloat16",
}


def bench_dump(model: nn.Module, forward: Callable[[nn.Module], Any], folder: Path, *, tensors: bool) -> Any:
    """Run ``model`` with hooks writing an msprobe-format dump (L0 module entries, forward only) into
    ``folder``: ``dump.json`` with statistics, and with ``tensors`` every output as ``.npy``."""
    import json

    import numpy as np

    from cannenv.fsutil import atomic_write_text
    from cannenv.precision.dumps import load_dump

    data: dict[str, Any] = {}
    tensor_dir = folder / "dump_tensor_data"
    if tensors:
        tensor_dir.mkdir(parents=True, exist_ok=True)
    classes = {name: type(m).__name__ for name, m in capture.hooked_modules(model)}

    def on_output(name: str, call: int, output: Any) -> None:
        key = f"Module.{name}.{classes[name]}.forward.{call}"
        records = []
        for i, t in enumerate(capture.float_leaves(output)):
            rec: dict[str, Any] = {
                "type": "torch.Tensor",
                "dtype": _TORCH_NAMES.get(t.dtype, str(t.dtype)),
                "shape": list(t.shape),
                **_stats(t),
            }
            if tensors:
                file = f"{key}.output.{i}.npy"
                np.save(tensor_dir / file, capture.to_numpy(t), allow_pickle=False)
                rec["data_name"] = file
            records.append(rec)
        data[key] = {"input_args": [], "input_kwargs": {}, "output": records}

    with capture.hooks(model, on_output), torch.no_grad():
        forward(model)
    doc = {"task": "tensor" if tensors else "statistics", "level": "L0", "framework": "pytorch", "data": data}
    atomic_write_text(folder / "dump.json", json.dumps(doc))
    return load_dump(folder)


def from_dump(
    model_dir: str,
    npu_dump_path: str,
    *,
    inputs: InputSpec,
    policy: Policy,
    keep_dir: str | None = None,
    progress: Progress = _quiet,
) -> PrecisionReport:
    """The bench side of an msprobe dump taken on the NPU: this checkpoint in float32 on the CPU,
    dumped in msprobe's format, then compared entry by entry (:func:`dumps.compare_dumps`)."""
    from cannenv.precision.dumps import compare_dumps, load_dump, policy_dtype

    started = time.perf_counter()
    npu = load_dump(npu_dump_path)
    modules = [e for e in npu.entries if e.kind == "module"]
    if not modules:
        raise InputError(
            f"{npu.path}: no module (L0) forward entries; --from-dump re-runs modules",
            hint='dump with msprobe level L0 or mix (config.json "level": "L0")',
        )
    progress(f"loading {model_dir}")
    model = load_model(model_dir)
    ids = inputs.ids(_vocab(model))
    notes = [_input_check(npu, ids)]
    with tempfile.TemporaryDirectory(prefix="cannenv-bench-dump-") as tmp:
        folder = Path(keep_dir) if keep_dir else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        progress("bench forward on the CPU in float32 (msprobe-format dump)")
        t0 = time.perf_counter()
        bench = bench_dump(model, forward_on(ids), folder, tensors=npu.data_dir is not None)
        bench_s = time.perf_counter() - t0
        entries = compare_dumps(npu, bench, policy)
    dtypes = [policy_dtype(e.outputs[0]) for e in npu.entries if e.outputs]
    dtype = max(set(dtypes), key=dtypes.count) if dtypes else "fp32"
    return build(
        mode="dumps",
        reference=Side(label=model_dir, device="cpu", dtype="fp32", source="bench run here (--from-dump)"),
        candidate=Side(
            label=str(npu.path), device="npu dump", dtype=dtype, source=f"msprobe {npu.task} dump"
        ),
        dtype=dtype,
        policy=policy,
        entries=entries,
        input_info=inputs.record(),
        notes=[n for n in notes if n],
        timings={"bench_s": round(bench_s, 3), "total_s": round(time.perf_counter() - started, 3)},
    )


def _input_check(npu: Any, ids: torch.Tensor) -> str | None:
    """The NPU run must have used these input ids: compare them with the first integer tensor the
    dump recorded as a module input (statistics), when it recorded one."""
    for e in npu.entries:
        for t in e.inputs:
            if t.dtype and t.dtype.startswith("torch.int") and t.stats.get("Max") is not None:
                mine = _stats(ids)
                same = all(
                    t.stats.get(s) is None
                    or abs(float(t.stats[s] or 0.0) - float(mine[s] or 0.0))
                    <= 1e-6 * max(1.0, abs(float(mine[s] or 0.0)))
                    for s in ("Max", "Min", "Mean")
                )
                if not same:
                    raise InputError(
                        f"{npu.path}: entry {e.key} ran on other input ids (Max/Min/Mean "
                        f"{t.stats.get('Max')}/{t.stats.get('Min')}/{t.stats.get('Mean')}, here "
                        f"{mine['Max']}/{mine['Min']}/{mine['Mean']})",
                        hint="dump the NPU run on cannenv's inputs (docs/precision.md, 'From an msprobe "
                        "dump') or pass the --seed/--batch/--seq-len it used",
                    )
                return None
    return (
        "the NPU dump records no integer input to check; the NPU run is assumed to have used these input ids"
    )
