"""Forward hooks that compare every module's output with a reference, one module at a time.

The reference run (the CPU float32 model, or the original checkpoint) spools each module's
floating outputs to a temporary folder as ``.npy`` files; the candidate run (the device model, or
the converted copy) compares each of its module outputs with the spooled one inside its hook and
keeps only the metrics. Memory therefore stays at one forward pass plus one module's output of
each side; the spool lives on disk and is removed at the end (``keep_dir`` keeps it).

Modules are named as ``named_modules()`` names them; a module called several times in one forward
is told apart by its call index (``model.rotary_emb`` once, a shared module each time). Execution
order is the order in which modules *finish* (forward hooks), so a leaf comes before the block
that holds it: the first divergent entry is the most specific module where the error shows.

Importing this module imports torch (never on the ``doctor`` path): it sets
``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` first, as :mod:`cannenv.certify.llm` does, so a broken
torch_npu cannot break ``import torch``.
"""

from __future__ import annotations

import os

os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor, nn

from cannenv.precision.policy import EntryMetrics, measure

Array = npt.NDArray[np.float32]


def float_leaves(obj: Any, _depth: int = 0) -> list[Tensor]:
    """The floating-point tensors in a module's output, in a stable order (tuples, lists, dicts,
    ``ModelOutput``); integer tensors (routing indices) and ``None`` are left out."""
    if _depth > 8:
        return []
    if isinstance(obj, Tensor):
        return [obj] if obj.is_floating_point() else []
    if isinstance(obj, Mapping):
        return [t for k in obj for t in float_leaves(obj[k], _depth + 1)]
    if isinstance(obj, list | tuple):
        return [t for v in obj for t in float_leaves(v, _depth + 1)]
    return []


def int_leaves(obj: Any, _depth: int = 0) -> list[Tensor]:
    """The integer tensors in a module's output: discrete decisions (a router's top-k experts)."""
    if _depth > 8:
        return []
    if isinstance(obj, Tensor):
        return [obj] if not obj.is_floating_point() and not obj.is_complex() else []
    if isinstance(obj, Mapping):
        return [t for k in obj for t in int_leaves(obj[k], _depth + 1)]
    if isinstance(obj, list | tuple):
        return [t for v in obj for t in int_leaves(v, _depth + 1)]
    return []


def replace_ints(obj: Any, new: list[Tensor], _depth: int = 0) -> Any:
    """``obj`` with its integer tensors replaced, in :func:`int_leaves` order, by ``new``."""
    if _depth > 8:
        return obj
    if isinstance(obj, Tensor):
        return new.pop(0) if not obj.is_floating_point() and not obj.is_complex() else obj
    if isinstance(obj, dict):
        return type(obj)({k: replace_ints(v, new, _depth + 1) for k, v in obj.items()})
    if isinstance(obj, list | tuple) and not hasattr(obj, "_fields"):
        return type(obj)(replace_ints(v, new, _depth + 1) for v in obj)
    return obj


def to_numpy(t: Tensor) -> Array:
    return np.asarray(t.detach().to(device="cpu", dtype=torch.float32).numpy(), dtype=np.float32)


def tree_map(obj: Any, fn: Callable[[Tensor], Tensor], _depth: int = 0) -> Any:
    """``fn`` on every tensor of a nested tuple/list/dict; other values kept as they are."""
    if _depth > 8:
        return obj
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: tree_map(v, fn, _depth + 1) for k, v in obj.items()}
    if isinstance(obj, list | tuple) and not hasattr(obj, "_fields"):
        return type(obj)(tree_map(v, fn, _depth + 1) for v in obj)
    return obj


def hooked_modules(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """Every named submodule (the root itself is left out: its output is its last child's)."""
    return [(name, m) for name, m in model.named_modules() if name]


@dataclass
class Spool:
    """The reference side: each module call's floating outputs as ``.npy`` files under ``root``."""

    root: Path
    order: list[tuple[str, int, int]] = field(default_factory=list)
    """(module name, call index, number of floating outputs) in execution order."""
    bytes_written: int = 0
    decisions: dict[int, list[Tensor]] = field(default_factory=dict)
    """Integer outputs by entry (router choices, small): kept in memory to pin the candidate's."""

    def path(self, name: str, call: int, i: int) -> Path:
        # Names come from named_modules() (dotted identifiers); the index keeps files distinct.
        return self.root / f"{len(self.order):06d}-{i}.npy"

    def put(self, name: str, call: int, leaves: Sequence[Tensor], ints: Sequence[Tensor] = ()) -> None:
        index = len(self.order)
        if ints:
            self.decisions[index] = [t.detach().to("cpu").clone() for t in ints]
        for i, t in enumerate(leaves):
            arr = to_numpy(t)
            np.save(self.root / f"{index:06d}-{i}.npy", arr, allow_pickle=False)
            self.bytes_written += arr.nbytes
        self.order.append((name, call, len(leaves)))

    def index(self) -> dict[tuple[str, int], int]:
        return {(n, c): i for i, (n, c, _) in enumerate(self.order)}

    def get(self, index: int, i: int) -> Array:
        arr: Array = np.load(self.root / f"{index:06d}-{i}.npy", mmap_mode="r", allow_pickle=False)
        return arr


@contextlib.contextmanager
def hooks(model: nn.Module, on_output: Callable[[str, int, Any], Any]) -> Iterator[None]:
    """Forward hooks on every submodule calling ``on_output(name, call_index, output)``; a value it
    returns replaces the module's output (how the candidate follows the reference's decisions)."""
    calls: dict[str, int] = {}
    handles = []

    def make(name: str) -> Callable[..., Any]:
        def hook(_module: nn.Module, _args: Any, output: Any) -> Any:
            call = calls.get(name, 0)
            calls[name] = call + 1
            return on_output(name, call, output)

        return hook

    for name, module in hooked_modules(model):
        handles.append(module.register_forward_hook(make(name)))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@dataclass(frozen=True)
class Row:
    """One module call compared: metrics of its worst floating output (None when unmatched)."""

    module: str
    call: int
    metrics: EntryMetrics | None
    note: str | None = None
    flipped: int = 0
    """Integer outputs (discrete decisions) that differ from the reference's; pinned to its."""


def spool_reference(model: nn.Module, forward: Callable[[nn.Module], Any], root: Path) -> Spool:
    """Run ``forward(model)`` with hooks that spool every module's outputs under ``root``."""
    spool = Spool(root)

    def on_output(name: str, call: int, output: Any) -> None:
        spool.put(name, call, float_leaves(output), int_leaves(output))

    with hooks(model, on_output), torch.no_grad():
        forward(model)
    return spool


def compare_candidate(model: nn.Module, forward: Callable[[nn.Module], Any], spool: Spool) -> list[Row]:
    """Run ``forward(model)`` comparing each module's outputs with the spool; metrics only."""
    index = spool.index()
    rows: list[Row] = []

    def on_output(name: str, call: int, output: Any) -> Any:
        leaves = float_leaves(output)
        at = index.get((name, call))
        if at is None:
            rows.append(Row(name, call, None, "called here but not in the reference run"))
            return None
        n_ref = spool.order[at][2]
        if n_ref != len(leaves):
            rows.append(
                Row(name, call, None, f"{len(leaves)} floating outputs here, {n_ref} in the reference")
            )
            return None
        metrics = compare_leaves([spool.get(at, i) for i in range(n_ref)], leaves)
        flipped, pinned = _pin_decisions(output, spool.decisions.get(at))
        note = None
        if flipped:
            note = (
                f"{flipped} discrete choice(s) (integer outputs, e.g. a router's experts) differ from the "
                "reference; pinned to the reference's so that what follows compares like with like"
            )
        rows.append(Row(name, call, metrics, note, flipped))
        return pinned

    with hooks(model, on_output), torch.no_grad():
        forward(model)
    seen = {(r.module, r.call) for r in rows}
    for name, call, _ in spool.order:
        if (name, call) not in seen:
            rows.append(Row(name, call, None, "called in the reference run but not here"))
    return rows


def _pin_decisions(output: Any, ref_ints: list[Tensor] | None) -> tuple[int, Any]:
    """How many integer outputs differ from the reference's, and the output with the reference's
    in their place (None: keep the output as it is)."""
    mine = int_leaves(output)
    if not mine or ref_ints is None or len(ref_ints) != len(mine):
        return 0, None
    flipped = 0
    for a, b in zip(mine, ref_ints, strict=True):
        if a.shape != b.shape:
            return 0, None
        flipped += int((a.detach().to("cpu") != b).sum())
    if not flipped:
        return 0, None
    return flipped, replace_ints(output, [b.to(a.device) for a, b in zip(mine, ref_ints, strict=True)])


def compare_arrays(refs: Sequence[Array], outs: Sequence[Array]) -> EntryMetrics | None:
    """Metrics of the worst output of a module (the one with the largest relative error)."""
    worst: EntryMetrics | None = None
    for ref, out in zip(refs, outs, strict=True):
        if out.shape != ref.shape:
            m = EntryMetrics.shape_mismatch(list(ref.shape), list(out.shape))
        else:
            m = measure(np.asarray(ref), np.asarray(out))
        if worst is None or m.badness() > worst.badness():
            worst = m
    return worst


def compare_leaves(refs: Sequence[Array], outs: Sequence[Tensor]) -> EntryMetrics | None:
    """:func:`compare_arrays` for a module's output tensors (each copied to the host in turn)."""
    return compare_arrays(refs, [to_numpy(t) for t in outs])


# ---------------------------------------------------------------------------------------------
# Replay: one module on the reference's inputs


@dataclass(frozen=True)
class Captured:
    args: Any
    kwargs: Any
    outputs: list[Array]


def capture_call(
    model: nn.Module, forward: Callable[[nn.Module], Any], name: str, call: int
) -> Captured | None:
    """Run the reference again and keep the inputs and outputs of one module call (on the CPU)."""
    module = dict(model.named_modules()).get(name)
    if module is None:
        return None
    seen = {"pre": 0, "post": 0}
    box: dict[str, Any] = {}

    def keep(t: Tensor) -> Tensor:
        return t.detach().to("cpu").clone()

    def pre(_m: nn.Module, args: Any, kwargs: Any) -> None:
        if seen["pre"] == call:
            box["args"] = tree_map(args, keep)
            box["kwargs"] = tree_map(kwargs, keep)
        seen["pre"] += 1

    def post(_m: nn.Module, _args: Any, _kwargs: Any, output: Any) -> None:
        if seen["post"] == call:
            box["outputs"] = [to_numpy(t) for t in float_leaves(output)]
        seen["post"] += 1

    h1 = module.register_forward_pre_hook(pre, with_kwargs=True)
    h2 = module.register_forward_hook(post, with_kwargs=True)
    try:
        with torch.no_grad():
            forward(model)
    finally:
        h1.remove()
        h2.remove()
    if "outputs" not in box:
        return None
    return Captured(box["args"], box["kwargs"], box["outputs"])


def replay(
    model: nn.Module, name: str, captured: Captured, device: torch.device, dtype: torch.dtype | None
) -> EntryMetrics | None:
    """The candidate's copy of module ``name`` on the reference's inputs (floating inputs cast to
    ``dtype`` when given, as the candidate would see them): its own error, nothing inherited."""
    module = dict(model.named_modules()).get(name)
    if module is None:
        return None

    def move(t: Tensor) -> Tensor:
        if t.is_floating_point() and dtype is not None:
            return t.to(device=device, dtype=dtype)
        return t.to(device=device)

    with torch.no_grad():
        out = module(*tree_map(captured.args, move), **tree_map(captured.kwargs, move))
    leaves = float_leaves(out)
    if len(leaves) != len(captured.outputs):
        return None
    return compare_leaves(captured.outputs, leaves)
