"""msprobe dumps (``dump.json`` plus, in tensor mode, ``dump_tensor_data/``) read and compared.

The format is msprobe's (docs/27.dump_json_instruction.md of the msprobe docs): a JSON object with
``task`` (``statistics`` or ``tensor``), ``level`` (``L0`` modules, ``L1`` APIs, ``mix``),
``framework`` and ``data``, an object from entry name to entry in execution order. Module entries
are named ``Module.<named_modules() name>.<Class>.forward.<call>`` (``Cell.`` for MindSpore), API
entries ``<Type>.<api>.<call>.forward``; each holds ``input_args``, ``input_kwargs``, ``output``
(and ``parameters``), every tensor as ``type``/``dtype``/``shape``/``Max``/``Min``/``Mean``/``Norm``
and, in tensor mode, ``data_name`` (a ``.pt`` or ``.npy`` file in ``dump_tensor_data/``).

Every input is hostile: the JSON is read up to :data:`MAX_JSON_BYTES` (a larger one, a deeper
one, or one that is not an object is exit 2 naming the file), a malformed entry becomes an
``unmatched`` entry with the reason, a ``data_name`` is opened only when it is a plain file name
inside the dump's own ``dump_tensor_data/`` folder and smaller than :data:`MAX_TENSOR_BYTES`.
Backward entries and parameter gradients are not compared (inference precision).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from cannenv import sanitize
from cannenv.errors import InputError
from cannenv.precision.policy import DtypePolicy, EntryMetrics, Policy, measure
from cannenv.precision.report import Entry

MAX_JSON_BYTES = 256 << 20
MAX_TENSOR_BYTES = 2 << 30
MAX_ENTRIES = 1_000_000
MAX_OUTPUTS = 64
STATS = ("Max", "Min", "Mean", "Norm")
HINT = (
    "give msprobe's dump.json, or its folder (dump_path/step0/rank0 holding dump.json and, in tensor mode, "
    "dump_tensor_data/)"
)

TORCH_DTYPES = {
    "torch.float32": "fp32",
    "torch.float": "fp32",
    "torch.float16": "fp16",
    "torch.half": "fp16",
    "torch.bfloat16": "bf16",
    "Float32": "fp32",
    "Float16": "fp16",
    "BFloat16": "bf16",
}


@dataclass(frozen=True)
class TensorInfo:
    dtype: str | None
    shape: list[int] | None
    stats: dict[str, float | None]
    data_name: str | None


@dataclass(frozen=True)
class DumpEntry:
    key: str
    kind: Literal["module", "api"]
    name: str
    """The dotted module name (``named_modules()``) for a module entry, the API name otherwise."""
    call: int
    outputs: list[TensorInfo]
    inputs: list[TensorInfo]
    problem: str | None = None


@dataclass(frozen=True)
class Dump:
    path: Path
    task: str
    level: str
    framework: str
    entries: list[DumpEntry]
    data_dir: Path | None
    skipped: int = 0
    """Backward, parameter-gradient and unnamed entries left out."""
    notes: list[str] = field(default_factory=list)


def locate(path: str | Path) -> Path:
    """The ``dump.json`` that ``path`` names: the file itself, ``path/dump.json``, or the one
    ``path/step*/rank*/dump.json`` (several: exit 2 naming them)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"dump {str(p)!r} does not exist", hint=HINT)
    if p.is_file():
        return p
    if (p / "dump.json").is_file():
        return p / "dump.json"
    found = sorted(p.glob("step*/rank*/dump.json"))[:20] or sorted(p.glob("rank*/dump.json"))[:20]
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(
            f"dump {str(p)!r}: no dump.json (nor step*/rank*/dump.json) in this folder", hint=HINT
        )
    names = ", ".join(str(f.relative_to(p)) for f in found[:5])
    raise InputError(f"dump {str(p)!r} holds several dumps ({names}); give one of them", hint=HINT)


def _read_json(path: Path) -> Any:
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})", hint=HINT) from None
    if len(raw) > MAX_JSON_BYTES:
        raise InputError(f"{path}: larger than {MAX_JSON_BYTES >> 20} MiB; not read", hint=HINT)
    try:
        return json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply", hint=HINT) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not valid JSON ({exc})", hint=HINT) from None


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return float(x)
    if isinstance(x, str) and x.strip().lower() in ("inf", "-inf", "nan", "+inf"):
        return float(x.strip().lower())
    return None


def _tensors(obj: Any, out: list[TensorInfo], depth: int = 0) -> None:
    """Tensor records in an ``input_args``/``output`` value (lists nest; other types are skipped)."""
    if depth > 16 or len(out) >= MAX_OUTPUTS:
        return
    if isinstance(obj, list):
        for v in obj:
            _tensors(v, out, depth + 1)
        return
    if not isinstance(obj, dict):
        return
    kind = obj.get("type")
    if not (isinstance(kind, str) and kind.endswith("Tensor")):
        return
    shape = obj.get("shape")
    ok_shape = (
        isinstance(shape, list)
        and len(shape) <= 32
        and all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in shape)
    )
    name = obj.get("data_name")
    out.append(
        TensorInfo(
            dtype=obj["dtype"] if isinstance(obj.get("dtype"), str) else None,
            shape=[int(d) for d in shape] if ok_shape and isinstance(shape, list) else None,
            stats={s: _num(obj.get(s)) for s in STATS},
            data_name=name if isinstance(name, str) else None,
        )
    )


def parse_key(key: str) -> tuple[Literal["module", "api"], str, int, str] | None:
    """(kind, name, call, direction) of an entry name, or None for a name of neither form."""
    parts = key.split(".")
    module = len(parts) >= 5 and parts[0] in ("Module", "Cell") and parts[-2] in ("forward", "backward")
    if module and parts[-1].isdecimal() and len(parts[-1]) < 10:
        return "module", ".".join(parts[1:-3]), int(parts[-1]), parts[-2]
    if (
        len(parts) >= 4
        and parts[-1] in ("forward", "backward")
        and parts[-2].isdecimal()
        and len(parts[-2]) < 10
    ):
        return "api", ".".join(parts[:-2]), int(parts[-2]), parts[-1]
    return None


def load_dump(path: str | Path) -> Dump:
    """Read one msprobe dump (exit 2 for a file that is not one; bad entries kept with the reason)."""
    file = locate(path)
    doc = _read_json(file)
    if not isinstance(doc, dict):
        raise InputError(f"{file}: expected a JSON object, got {type(doc).__name__}", hint=HINT)
    data = doc.get("data")
    if not isinstance(data, dict):
        raise InputError(f"{file}: field 'data' must be an object of dump entries", hint=HINT)
    if len(data) > MAX_ENTRIES:
        raise InputError(f"{file}: more than {MAX_ENTRIES} entries", hint=HINT)
    task = doc.get("task")
    level = doc.get("level")
    framework = doc.get("framework")
    entries: list[DumpEntry] = []
    skipped = 0
    for key, value in data.items():
        parsed = parse_key(key)
        if parsed is None or parsed[3] != "forward":
            skipped += 1
            continue
        kind, name, call, _ = parsed
        if not isinstance(value, dict):
            entries.append(DumpEntry(key, kind, name, call, [], [], problem="entry is not an object"))
            continue
        outputs: list[TensorInfo] = []
        inputs: list[TensorInfo] = []
        _tensors(value.get("output"), outputs)
        _tensors(value.get("input_args"), inputs)
        entries.append(DumpEntry(key, kind, name, call, outputs, inputs))
    tensor_dir = file.parent / "dump_tensor_data"
    return Dump(
        path=file,
        task=task if isinstance(task, str) else "unknown",
        level=level if isinstance(level, str) else "unknown",
        framework=framework if isinstance(framework, str) else "unknown",
        entries=entries,
        data_dir=tensor_dir if tensor_dir.is_dir() else None,
        skipped=skipped,
    )


# ---------------------------------------------------------------------------------------------
# Tensor files


class TensorFileError(Exception):
    """A dump's tensor file cannot be used; the message says why (reported per entry)."""


def read_tensor(dump: Dump, info: TensorInfo) -> npt.NDArray[np.float32]:
    """The tensor ``info.data_name`` from the dump's own ``dump_tensor_data/`` folder, as float32."""
    if dump.data_dir is None or info.data_name is None:
        raise TensorFileError("no tensor file (statistics mode)")
    name = info.data_name
    if not sanitize.is_plain_file_name(name) or name in (".", ".."):
        raise TensorFileError(f"data_name {sanitize.line(name)!r} is not a plain file name; not opened")
    p = dump.data_dir / name
    try:
        real = p.resolve(strict=True)
        if real.parent != dump.data_dir.resolve(strict=True) or not real.is_file():
            raise TensorFileError(f"{name}: not a regular file inside dump_tensor_data/; not opened")
        size = real.stat().st_size
    except OSError:
        raise TensorFileError(f"{name}: missing from dump_tensor_data/") from None
    if size > MAX_TENSOR_BYTES:
        raise TensorFileError(f"{name}: {size} bytes, over the {MAX_TENSOR_BYTES >> 30} GiB limit")
    if name.endswith(".npy"):
        try:
            arr = np.load(real, allow_pickle=False, mmap_mode="r")
        except (ValueError, OSError, EOFError) as exc:
            raise TensorFileError(f"{name}: not a readable .npy ({exc})") from None
        if not np.issubdtype(arr.dtype, np.number):
            raise TensorFileError(f"{name}: dtype {arr.dtype} is not numeric")
        return np.asarray(arr, dtype=np.float32)
    if name.endswith(".pt"):
        return _read_pt(real, name)
    raise TensorFileError(f"{name}: neither .pt nor .npy")


def _read_pt(path: Path, name: str) -> npt.NDArray[np.float32]:
    try:
        import os

        os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
        import torch
    except ImportError:
        raise TensorFileError(f"{name}: reading .pt needs torch (pip install torch)") from None
    try:
        # weights_only: tensors and plain containers only, never a pickled object's code.
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # any malformed file is the entry's problem, not a crash
        raise TensorFileError(f"{name}: not a readable tensor file ({type(exc).__name__})") from None
    if not isinstance(obj, torch.Tensor):
        raise TensorFileError(f"{name}: holds a {type(obj).__name__}, not a tensor")
    if obj.is_complex() or obj.dtype == torch.bool:
        raise TensorFileError(f"{name}: dtype {obj.dtype} is not compared")
    return np.asarray(obj.detach().to(torch.float32).numpy(), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# Comparison


def policy_dtype(info: TensorInfo | None, default: str = "fp32") -> str:
    if info is None or info.dtype is None:
        return default
    return TORCH_DTYPES.get(info.dtype, default)


def compare_statistics(
    npu: TensorInfo, bench: TensorInfo, policy: Policy
) -> tuple[list[str], dict[str, Any]]:
    """msprobe's statistics-mode rule, on the tensor's scale: crossed limits and the figures.

    Each of Max, Min, Mean is compared relative to the bench tensor's scale
    ``max(|Bench max|, |Bench min|, 0.01)`` and Norm relative to ``max(Bench norm, 0.01)`` (msprobe's
    red rule divides Max diff by ``max(0.01, Bench max)``; a statistic's own value would make a
    mean near zero warn on any rounding)."""
    limit = policy.statistics.rel_error_max.value
    floor = policy.statistics.scale_floor.value
    crossed: list[str] = []
    figures: dict[str, Any] = {"npu": npu.stats, "bench": bench.stats}
    if npu.shape is not None and bench.shape is not None and npu.shape != bench.shape:
        crossed.append(f"shape {npu.shape} here, {bench.shape} in the bench dump")
    bmax, bmin = bench.stats.get("Max"), bench.stats.get("Min")
    finite = [abs(v) for v in (bmax, bmin) if v is not None and math.isfinite(v)]
    scale = max([*finite, floor])
    rel: dict[str, float | None] = {}
    for s in STATS:
        a, b = npu.stats.get(s), bench.stats.get(s)
        if a is None or b is None:
            rel[s] = None
            continue
        if not math.isfinite(a) or not math.isfinite(b):
            same = (math.isnan(a) and math.isnan(b)) or a == b
            rel[s] = 0.0 if same else math.inf
            if not same:
                crossed.append(f"{s} {a:g} here, {b:g} in the bench dump (non-finite)")
            continue
        denom = max(abs(b), floor) if s == "Norm" else scale
        rel[s] = abs(a - b) / denom
        if rel[s] > limit:  # type: ignore[operator]
            crossed.append(
                f"{s} relative error {rel[s]:.3g} > {limit:g} ({a:.6g} here, {b:.6g} in the bench)"
            )
    figures["rel_error"] = rel
    values = [v for v in rel.values() if v is not None]
    figures["worst_rel_error"] = max(values) if values else None
    return crossed, figures


def compare_dumps(npu: Dump, bench: Dump, policy: Policy, *, default_dtype: str = "fp32") -> list[Entry]:
    """Every forward entry of ``npu`` against the same-named entry of ``bench``, in ``npu``'s order."""
    by_key = {e.key: e for e in bench.entries}
    out: list[Entry] = []
    for i, e in enumerate(npu.entries):
        b = by_key.get(e.key)
        if e.problem or (b is not None and b.problem):
            out.append(_unmatched(i, e, e.problem or (b.problem if b else None) or ""))
            continue
        if b is None:
            out.append(_unmatched(i, e, "no entry of this name in the bench dump"))
            continue
        if not e.outputs or len(e.outputs) != len(b.outputs):
            why = (
                "no output tensor"
                if not e.outputs
                else f"{len(e.outputs)} outputs here, {len(b.outputs)} in bench"
            )
            out.append(_unmatched(i, e, why))
            continue
        out.append(_compare_entry(i, e, b, npu, bench, policy, default_dtype))
    return out


def _unmatched(i: int, e: DumpEntry, why: str) -> Entry:
    return Entry(index=i, module=e.name, call=e.call, kind=e.kind, status="unmatched", note=f"{e.key}: {why}")


def _compare_entry(
    i: int, e: DumpEntry, b: DumpEntry, npu: Dump, bench: Dump, policy: Policy, default_dtype: str
) -> Entry:
    from cannenv.precision.policy import crossed as crossed_by

    worst: EntryMetrics | None = None
    worst_crossed: list[str] = []
    stats_crossed: list[str] = []
    stats_fig: dict[str, Any] | None = None
    notes: list[str] = []
    for n_info, b_info in zip(e.outputs, b.outputs, strict=True):
        limits: DtypePolicy = policy.for_dtype(policy_dtype(n_info, default_dtype))
        try:
            m = measure(read_tensor(bench, b_info), read_tensor(npu, n_info))
        except TensorFileError as exc:
            if npu.data_dir is not None or bench.data_dir is not None:
                notes.append(str(exc))
            c, fig = compare_statistics(n_info, b_info, policy)
            stats_crossed += c
            if stats_fig is None or (fig["worst_rel_error"] or 0) > (stats_fig["worst_rel_error"] or 0):
                stats_fig = fig
            continue
        c = crossed_by(m, limits)
        if worst is None or m.badness() > worst.badness():
            worst, worst_crossed = m, c
        elif c and not worst_crossed:
            worst_crossed = c
    all_crossed = worst_crossed + stats_crossed
    return Entry(
        index=i,
        module=e.name,
        call=e.call,
        kind=e.kind,
        status="diverged" if all_crossed else "ok",
        crossed=all_crossed,
        metrics=worst,
        statistics=stats_fig,
        msprobe_accuracy_reached=policy.msprobe_real_data.reached(worst) if worst is not None else None,
        note="; ".join(notes)[:500] or None,
    )
