"""The torch a judged torch_npu is built for: which kernels *its* ATen operators have (no torch).

The trace runs on the installed torch, but a torch_npu build runs on the torch release it requires
(its METADATA ``Requires-Dist: torch==2.8.0+cpu``), whose operators may have other kernels: torch
2.8.0's ``_grouped_mm`` has only a CUDA kernel (2.13.0 adds a CompositeExplicitAutograd one), so a
call that runs on the NPU through the composite kernel of a newer torch has no kernel at all on the
stack. Every torch wheel ships the declarations its dispatcher registrations are generated from:
``torchgen/packaged/ATen/native/native_functions.yaml``. That file is read (one member of the wheel,
bounded; nothing imported or executed) and each traced operator is reclassified with its keys.

The wheel comes from ``pip download --no-deps torch==V`` for manylinux aarch64 (those wheels are
the CPU build, about 100 MB; the yaml is the same on every platform) into
``<cache>/torch/V/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from cannenv import records
from cannenv.errors import ExternalError, InputError, MissingToolError

MEMBER = "torchgen/packaged/ATen/native/native_functions.yaml"
MAX_YAML_BYTES = 16 << 20
"""torch 2.8.0's file is 0.6 MB"""
MAX_MEMBERS = 100_000
KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CPU",
)
_FUNC = re.compile(r"^- func: ([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)?)\(")
_KEY_LINE = re.compile(r"^    ([A-Za-z0-9_, ]+):")
_DELEGATE = re.compile(r"^  structured_delegate: ([A-Za-z_][A-Za-z0-9_.]*)\s*\Z")


def parse(text: str) -> dict[str, frozenset[str]]:
    """``aten::name[.overload]`` -> the dispatch keys with a kernel, as torchgen reads the file:
    no ``dispatch:`` block means CompositeImplicitAutograd; a ``structured_delegate`` gives the
    functional the backends of its ``out`` kernel plus torchgen's CompositeExplicitAutograd-
    NonFunctional wrapper; a ``ufunc_inner_loop`` generates CPU and CUDA kernels."""
    entries: dict[str, set[str]] = {}
    explicit: dict[str, bool] = {}
    delegates: dict[str, str] = {}
    current: str | None = None
    in_dispatch = False
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            current = m.group(1)
            entries[current] = set()
            explicit[current] = False
            in_dispatch = False
            continue
        if current is None:
            continue
        if line.startswith("  dispatch:"):
            in_dispatch = True
            explicit[current] = True
            continue
        if in_dispatch:
            if line.lstrip().startswith("#"):
                continue
            k = _KEY_LINE.match(line)
            if k:
                entries[current].update(x.strip() for x in k.group(1).split(",") if x.strip())
                continue
            in_dispatch = False
        d = _DELEGATE.match(line)
        if d:
            delegates[current] = d.group(1)
            explicit[current] = True
        elif line.startswith("  ufunc_inner_loop:"):  # torchgen generates the CPU and CUDA kernels
            entries[current].update(("CPU", "CUDA"))
            explicit[current] = True
    for name, out in delegates.items():
        # a structured functional/in-place variant: the out kernel's backends, and the wrapper
        # torchgen generates for every other backend (CompositeExplicitAutogradNonFunctional)
        entries[name] |= entries.get(out, set()) | {"CompositeExplicitAutogradNonFunctional"}
    result: dict[str, frozenset[str]] = {}
    for name, keys in entries.items():
        if not explicit[name]:
            keys = {"CompositeImplicitAutograd"}
        result["aten::" + (name[:-8] if name.endswith(".default") else name)] = frozenset(keys)
    return result


def kernels(table: dict[str, frozenset[str]], ops: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """For each ``aten::`` operator, the KEYS it has kernels for in that torch (absent: none)."""
    return {
        op: tuple(k for k in KEYS if k in table.get(op, frozenset())) for op in ops if op.startswith("aten::")
    }


def from_wheel(path: Path) -> str:
    zf = records.open_zip(path, max_members=MAX_MEMBERS, what="torch wheel", hint="a torch wheel")
    with zf:
        for info in zf.infolist():
            if info.filename == MEMBER:
                data = records.read_zip_member(zf, info, MAX_YAML_BYTES, source=str(path))
                return data.decode("utf-8", errors="replace")
    raise InputError(f"{path} holds no {MEMBER}", hint="pass a torch wheel (pip download --no-deps torch==V)")


def cache_folder() -> Path:
    from cannenv.matrix import cache_dir

    base = cache_dir()
    if base is None:
        raise MissingToolError("no cache folder to download torch into", hint="set CANNENV_CACHE_DIR")
    return base / "torch"


def table_for(version: str, *, download: bool = True) -> tuple[dict[str, frozenset[str]], str]:
    """The kernel table of torch ``version`` and the wheel it was read from."""
    if not re.match(r"^[0-9]+\.[0-9]+(\.[0-9]+)?\Z", version):
        raise InputError(f"{version!r} is not a torch release version")
    folder = cache_folder() / version
    wheels = sorted(folder.glob(f"torch-{version}-*.whl")) if folder.is_dir() else []
    if not wheels and download:
        from cannenv.model.registry import download_wheels

        platform = ["--platform", "manylinux_2_28_aarch64", "--platform", "manylinux2014_aarch64"]
        wheels = download_wheels(
            f"torch=={version}",
            folder,
            f"torch-{version}-*.whl",
            [*platform, "--python-version", "3.11"],
            timeout=1800,
        )
    if not wheels:
        raise ExternalError(f"no torch {version} wheel in {folder}")
    return parse(from_wheel(wheels[0])), str(wheels[0])
