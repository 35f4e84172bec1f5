"""How close does reading torch_npu's operator yaml come to what its binary registers?

Without CANN, ``import torch_npu`` fails, so the dispatcher (the truth: which operators have a
``PrivateUse1`` kernel) cannot be asked here. The next best witness is the binary itself: every
``m.impl("add.Tensor", ...)`` registration leaves the operator name as a string literal in
``torch_npu/lib/libtorch_npu.so``. For each wheel this script compares

* the yaml reading (:func:`cannenv.model.registry.from_wheel`, ATen operators), with
* the NUL-terminated strings of the shared library that are names of ATen operators torch knows
  (``torch._C._dispatch_get_all_op_names()``),

and prints: yaml operators whose name is in the binary; operator names in the binary the yaml
does not list (candidates for registrations the static reading misses — or strings used for
other purposes, e.g. error messages and ``at::`` calls made by name).

    python benchmarks/model_registry_check.py torch_npu-2.7.1-*.whl torch_npu-2.13.0-*.whl

Results (2026-12-01, the cp311 x86_64 wheels from PyPI) are written up in docs/model.md.
"""

from __future__ import annotations

import os
import re
import sys
import zipfile
from pathlib import Path

os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)?")


def binary_strings(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        data = zf.read("torch_npu/lib/libtorch_npu.so")
    out = set()
    for chunk in data.split(b"\0"):
        m = NAME.fullmatch(chunk.removeprefix(b"aten::"))
        if m:
            out.add(m.group().decode())
    return out


def main(wheels: list[str]) -> None:
    import torch

    from cannenv.model import registry

    aten = {n.removeprefix("aten::") for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")}
    for w in wheels:
        reg = registry.from_wheel(Path(w))
        yaml_ops = {k.removeprefix("aten::") for k in reg.ops if k.startswith("aten::")}
        strings = binary_strings(Path(w))
        in_bin = {op for op in yaml_ops if op in strings}
        known = yaml_ops & aten
        extra = sorted((strings & aten) - yaml_ops)
        print(
            f"torch_npu {reg.version}: {len(yaml_ops)} ATen operators in the yaml"
            f" ({len(known)} known to torch {torch.__version__})"
        )
        print(
            f"  yaml operators named in libtorch_npu.so: {len(in_bin)}"
            f" ({100 * len(in_bin) / len(yaml_ops):.1f}%)"
        )
        missing = sorted(yaml_ops - in_bin)
        print(f"  yaml operators not named in the binary: {len(missing)}: {', '.join(missing[:25])}")
        print(
            f"  ATen operator names in the binary the yaml does not list: {len(extra)}:"
            f" {', '.join(extra[:60])}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
