"""Measured activation peak of a real forward pass on the CPU (imports torch; benchmarks and tests).

Every tensor the forward creates is seen as it is dispatched (a ``TorchDispatchMode``), counted
once per storage while any tensor created in the pass still refers to it, and the largest sum of
live bytes is the peak. Tensors made before the pass (weights, the input ids) are not counted: the
result is comparable to :func:`cannenv.model.memory.activation_bytes`.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LivePeak(TorchDispatchMode):  # type: ignore[no-untyped-call, unused-ignore]
    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call, unused-ignore]
        self.live = 0
        self.peak = 0
        self.refs: dict[int, list[int]] = {}
        """storage address -> [live tensors, bytes]"""

    def _release(self, key: int) -> None:
        entry = self.refs.get(key)
        if entry is None:
            return
        entry[0] -= 1
        if entry[0] <= 0:
            self.live -= entry[1]
            del self.refs[key]

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
                continue
            storage = t.untyped_storage()
            key = storage.data_ptr()
            if not key:
                continue
            entry = self.refs.get(key)
            if entry is None:
                entry = self.refs[key] = [0, storage.nbytes()]
                self.live += entry[1]
                self.peak = max(self.peak, self.live)
            entry[0] += 1
            weakref.finalize(t, self._release, key)
        return out


def prefill_peak(model: torch.nn.Module, batch: int, seq: int) -> int:
    """Peak bytes of activations during one prefill (no cache kept) of ``model`` on the CPU."""
    ids = torch.zeros(batch, seq, dtype=torch.long)
    with torch.no_grad():
        mode = LivePeak()
        with mode:
            out = model(input_ids=ids, use_cache=False)
        del out
    return mode.peak
