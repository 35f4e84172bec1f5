"""Seeded inputs, numpy goldens and the tolerance check of the smoke kernels.

Pure functions on numpy arrays (numpy is imported by this module only; the doctor never imports
it). The same code judges a device run, a CPU-debug or simulator run, and the C++ reference run
of the harness self-test.

Rules (``matrices/certify/tolerances.yaml``, research kernels.md §4):

* ``exact``: every element bit-equal (element-wise add and copy are correctly rounded).
* ``double_ratio`` (the fp16 "double thousandth" rule and its bf16/fp32 siblings): element i is an
  atol failure when ``|a-g| > atol`` and an rtol failure when ``|a-g| / (max(|a|,|g|) + minimum) > rtol``;
  the check fails only when **both** failure counts exceed ``size * error_ratio`` [S-2024 verify_result.py].

Either rule fails on a non-finite output where the golden is finite: the host launchers pre-fill
output buffers with a NaN sentinel (all bytes 0xFF), so a block that never ran is caught.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from cannenv.certify.kernel_data import KernelCase, KernelManifest, TensorSpec, ToleranceRule
from cannenv.certify.metrics import cosine_similarity
from cannenv.errors import InputError

if TYPE_CHECKING:
    from numpy.typing import NDArray

SENTINEL_BYTE = 0xFF
"""Every output byte is set to this before launch: NaN for fp16/fp32/bf16, -1 for int32."""


def np_dtype(name: str) -> np.dtype[Any]:
    if name == "bfloat16":
        # numpy has no bf16; stored as raw uint16 and widened for comparison (see to_float64).
        return np.dtype(np.uint16)
    return np.dtype(name)


def to_float64(arr: NDArray[Any], dtype: str) -> NDArray[np.float64]:
    """Widen an array of a manifest dtype to float64 for comparison."""
    if dtype == "bfloat16":
        widened = (arr.astype(np.uint32) << 16).view(np.float32)
        return widened.astype(np.float64)
    return arr.astype(np.float64)


# ------------------------------------------------------------------------------------------ inputs
def case_seed(manifest: KernelManifest, case: KernelCase, tensor: TensorSpec) -> int:
    """A stable seed per (kernel, case, input): independent of the order cases run in."""
    digest = hashlib.sha256(f"{manifest.seed}/{manifest.name}/{case.id}/{tensor.name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def make_inputs(manifest: KernelManifest, case: KernelCase) -> dict[str, NDArray[Any]]:
    """Seeded inputs of one case, in the manifest's dtypes."""
    out: dict[str, NDArray[Any]] = {}
    for spec in case.inputs:
        assert spec.init is not None  # validated by KernelCase
        rng = np.random.default_rng(case_seed(manifest, case, spec))
        values = rng.uniform(spec.init.low, spec.init.high, size=spec.shape)
        if spec.dtype == "bfloat16":
            f32 = values.astype(np.float32)
            out[spec.name] = (f32.view(np.uint32) >> 16).astype(np.uint16)  # truncation keeps it simple
        else:
            out[spec.name] = values.astype(np_dtype(spec.dtype))
    return out


# ----------------------------------------------------------------------------------------- goldens
def golden(case: KernelCase, inputs: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """The expected outputs of one case, computed with numpy on the host."""
    out_spec = case.outputs[0]
    odt = np_dtype(out_spec.dtype)
    xs = [inputs[s.name] for s in case.inputs]
    if case.golden == "copy":
        result = xs[0].astype(odt)
    elif case.golden == "add":
        # numpy adds fp16 through float32 and rounds once more; fp32 has >= 2p+2 bits, so the
        # double rounding is innocuous and the result is the correctly rounded fp16 sum.
        result = np.add(xs[0], xs[1]).astype(odt)
    elif case.golden == "matmul":
        a = xs[0].astype(np.float64)
        b = xs[1].astype(np.float64)
        result = (a @ b).astype(odt)
    elif case.golden == "row_softmax":
        x = xs[0].astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        result = (e / e.sum(axis=-1, keepdims=True)).astype(odt)
    else:  # pragma: no cover - GoldenKind is closed
        raise InputError(f"unknown golden {case.golden!r}")
    return {out_spec.name: result.reshape(out_spec.shape)}


def work_of(case: KernelCase) -> tuple[int, int]:
    """(bytes moved to and from global memory, floating-point operations) of one launch."""
    nbytes = sum(t.nbytes for t in (*case.inputs, *case.outputs))
    if case.golden == "matmul":
        (m, k), (_, n) = case.inputs[0].shape, case.inputs[1].shape
        return nbytes, 2 * m * n * k
    if case.golden == "row_softmax":
        return nbytes, 5 * case.inputs[0].size
    if case.golden == "add":
        return nbytes, case.outputs[0].size
    return nbytes, 0


# -------------------------------------------------------------------------------------- file I/O
def write_tensor(path: Path, arr: NDArray[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(np.ascontiguousarray(arr).tobytes())


def read_tensor(path: Path, spec: TensorSpec) -> NDArray[Any]:
    """Read a raw little-endian output file; its size must match the manifest's shape and dtype."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"output {spec.name!r} was not written: {exc}") from exc
    if len(data) != spec.nbytes:
        raise InputError(
            f"output {path.name}: {len(data)} bytes, expected {spec.nbytes} "
            f"({spec.dtype} x {list(spec.shape)})"
        )
    return np.frombuffer(data, dtype=np_dtype(spec.dtype)).reshape(spec.shape)


# -------------------------------------------------------------------------------------- comparison
class Comparison(BaseModel):
    """Numeric result of one output against its golden."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    output: str
    rule: str
    passed: bool
    size: int
    max_abs_err: float
    """Over the elements where both values are finite (non-finite ones are counted in ``nonfinite``)."""
    max_rel_err: float
    error_ratio: float
    """Fraction of elements outside the rule (for ``exact``: not bit-equal)."""
    cosine: float
    atol_failures: int
    rtol_failures: int
    nonfinite: int
    """Non-finite outputs where the golden is finite (the sentinel left behind, or NaN/Inf)."""
    sentinel: int
    """Outputs still holding the sentinel bytes exactly: a block that never ran."""
    first_mismatch: int | None = None
    detail: str


def compare(
    actual: NDArray[Any], expected: NDArray[Any], spec: TensorSpec, rule_name: str, rule: ToleranceRule
) -> Comparison:
    """Judge one output against its golden with one tolerance rule."""
    if actual.shape != expected.shape:
        raise InputError(f"output {spec.name!r}: shape {actual.shape} != golden {expected.shape}")
    size = int(actual.size)
    raw = np.ascontiguousarray(actual).view(np.uint8).reshape(size, -1)
    sentinel = int(np.count_nonzero(np.all(raw == SENTINEL_BYTE, axis=1)))
    a = to_float64(actual, spec.dtype).ravel()
    g = to_float64(expected, spec.dtype).ravel()
    finite_g = np.isfinite(g)
    nonfinite = int(np.count_nonzero(~np.isfinite(a) & finite_g))
    both = np.isfinite(a) & finite_g
    diff = np.where(both, np.abs(a - g), np.inf)
    rel = diff / (np.maximum(np.abs(a), np.abs(g)) + rule.minimum)
    finite_diff = diff[both]
    finite_rel = rel[both]
    max_abs = float(finite_diff.max()) if finite_diff.size else 0.0
    max_rel = float(finite_rel.max()) if finite_rel.size else 0.0
    cos = cosine_similarity(np.where(both, g, 0.0), np.where(both, a, 0.0))  # non-finite pairs as 0
    if rule.kind == "exact":
        exp_raw = np.ascontiguousarray(expected).view(np.uint8).reshape(size, -1)
        bad = ~(raw == exp_raw).all(axis=1)
        bad_count = int(np.count_nonzero(bad))
        atol_fail = rtol_fail = bad_count
        passed = bad_count == 0
        ratio = bad_count / size
        first = int(np.argmax(bad)) if bad_count else None
        detail = "bit-exact" if passed else f"{bad_count} of {size} elements differ from the golden"
    else:
        assert rule.atol is not None and rule.rtol is not None and rule.error_ratio is not None
        atol_bad = diff > rule.atol
        rtol_bad = rel > rule.rtol
        atol_fail = int(np.count_nonzero(atol_bad))
        rtol_fail = int(np.count_nonzero(rtol_bad))
        limit = size * rule.error_ratio
        # [S-2024] verify_result.py: the check fails only when BOTH counts exceed the limit.
        passed = not (atol_fail > limit and rtol_fail > limit)  # non-finite: fails below
        either = atol_bad & rtol_bad
        ratio = float(np.count_nonzero(either)) / size
        first = int(np.argmax(either)) if either.any() else None
        detail = (
            f"atol failures {atol_fail}, rtol failures {rtol_fail}, limit {limit:g} "
            f"(size {size} x error ratio {rule.error_ratio:g}); fails only if both exceed it"
        )
    if nonfinite:
        passed = False
        detail += f"; {nonfinite} non-finite outputs where the golden is finite"
    if sentinel:
        detail += f"; {sentinel} elements still hold the pre-filled sentinel (a block or a tail never ran?)"
    return Comparison(
        output=spec.name,
        rule=rule_name,
        passed=passed,
        size=size,
        max_abs_err=max_abs,
        max_rel_err=max_rel,
        error_ratio=ratio,
        cosine=cos,
        atol_failures=atol_fail,
        rtol_failures=rtol_fail,
        nonfinite=nonfinite,
        sentinel=sentinel,
        first_mismatch=first,
        detail=detail,
    )
