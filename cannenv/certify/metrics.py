"""Precision metrics: a device output against a float32 CPU reference (numpy only, no torch).

The metrics follow the usual NPU-vs-golden practice (research kernels.md §4, §5): cosine
similarity, max absolute error, max error relative to the reference's largest magnitude, the
share of elements within the "double thousandth" tolerance (information only), non-finite
counts, and greedy top-1 agreement counted only at positions where the reference's top-1/top-2
margin is clear (random-init logits are full of near-ties, which would make top-1 a coin toss).

Layer-by-layer localisation compares every captured block output (embeddings, each decoder
layer, final norm) and names the first one past its threshold: the layer where a precision
problem enters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

FloatArray = npt.NDArray[np.floating[Any]]


def _pair(ref: npt.ArrayLike, out: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    r = np.asarray(ref, dtype=np.float64)
    o = np.asarray(out, dtype=np.float64)
    if r.shape != o.shape:
        raise ValueError(f"shape mismatch: reference {r.shape} vs output {o.shape}")
    return r, o


def nonfinite_count(a: npt.ArrayLike) -> int:
    """Number of NaN and ±Inf elements."""
    return int(np.count_nonzero(~np.isfinite(np.asarray(a, dtype=np.float64))))


def cosine_similarity(ref: npt.ArrayLike, out: npt.ArrayLike) -> float:
    """Cosine of the angle between the flattened arrays; NaN when either holds a non-finite value.

    Two all-zero arrays are identical (1.0); one all-zero array against a non-zero one is 0.0.
    """
    r, o = _pair(ref, out)
    if not (np.isfinite(r).all() and np.isfinite(o).all()):
        return math.nan
    nr = float(np.linalg.norm(r))
    no = float(np.linalg.norm(o))
    if nr == 0.0 and no == 0.0:
        return 1.0
    if nr == 0.0 or no == 0.0:
        return 0.0
    return float(np.dot(r.ravel(), o.ravel()) / (nr * no))


def max_abs_error(ref: npt.ArrayLike, out: npt.ArrayLike) -> float:
    """``max |out - ref|`` (NaN when a non-finite value is involved)."""
    r, o = _pair(ref, out)
    if r.size == 0:
        return 0.0
    d = np.abs(o - r)
    return math.nan if not np.isfinite(d).all() else float(d.max())


def max_rel_error(ref: npt.ArrayLike, out: npt.ArrayLike) -> float:
    """``max |out - ref| / max |ref|``: the worst error relative to the reference's scale.

    Element-wise relative error explodes on near-zero reference values (which random-init
    activations are full of), so the error is measured against the tensor's largest magnitude
    (kernels.md §5, "max |Δ| / max|ref|"). A zero reference gives the absolute error.
    """
    r, o = _pair(ref, out)
    mae = max_abs_error(r, o)
    if math.isnan(mae):
        return math.nan
    scale = float(np.abs(r).max()) if r.size else 0.0
    return mae / scale if scale > 0.0 else mae


def within_tolerance_ratio(
    ref: npt.ArrayLike, out: npt.ArrayLike, *, rtol: float = 1e-3, atol: float = 1e-3
) -> float:
    """Share of elements with ``|Δ| <= atol`` or ``|Δ| <= rtol·|ref|`` (the 双千 rule; information)."""
    r, o = _pair(ref, out)
    if r.size == 0:
        return 1.0
    d = np.abs(o - r)
    ok = (d <= atol) | (d <= rtol * np.abs(r))
    return float(np.count_nonzero(ok & np.isfinite(d)) / r.size)


class Top1(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    agreement: float | None
    """Share of counted positions where both argmaxes agree; None when no position is clear."""
    counted: int
    total: int
    margin: float
    """The top-1/top-2 gap a position needed to be counted."""


def top1_agreement(ref_logits: npt.ArrayLike, out_logits: npt.ArrayLike, *, margin_rel: float) -> Top1:
    """Greedy top-1 agreement over the last axis, counted only where the reference is decisive.

    A position counts when the reference's top-1 minus top-2 logit exceeds ``margin_rel`` times
    the standard deviation of all reference logits (scale-free, so the same data file works for
    the tiny model and a real checkpoint).
    """
    r, o = _pair(ref_logits, out_logits)
    if r.ndim < 1 or r.shape[-1] < 2:
        raise ValueError("logits need a vocabulary axis of at least 2")
    r2 = r.reshape(-1, r.shape[-1])
    o2 = o.reshape(-1, o.shape[-1])
    top2 = np.sort(r2, axis=-1)[:, -2:]
    gaps = top2[:, 1] - top2[:, 0]
    margin = float(margin_rel * np.std(r2))
    clear = gaps > margin
    counted = int(np.count_nonzero(clear))
    if counted == 0:
        return Top1(agreement=None, counted=0, total=int(r2.shape[0]), margin=margin)
    same = np.argmax(r2, axis=-1) == np.argmax(o2, axis=-1)
    return Top1(
        agreement=float(np.count_nonzero(same & clear) / counted),
        counted=counted,
        total=int(r2.shape[0]),
        margin=margin,
    )


# ---------------------------------------------------------------------------------------------
# Judging against thresholds


class Check(BaseModel):
    """One metric held against one limit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    value: float | None
    limit: float
    op: Literal[">=", "<="]
    ok: bool

    def describe(self) -> str:
        shown = "n/a" if self.value is None else f"{self.value:.6g}"
        verdict = "ok" if self.ok else "FAILED"
        return f"{self.name} {shown} (needs {self.op} {self.limit:g}): {verdict}"


def check(name: str, value: float | None, op: Literal[">=", "<="], limit: float) -> Check:
    """A NaN or missing value never passes."""
    if value is None or math.isnan(value):
        return Check(name=name, value=None if value is None else math.nan, limit=limit, op=op, ok=False)
    ok = value >= limit if op == ">=" else value <= limit
    return Check(name=name, value=value, limit=limit, op=op, ok=ok)


class TensorLimits(BaseModel):
    """Limits for one tensor comparison (a layer output, a fused op)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cosine_min: float
    max_rel_error: float


class LogitLimits(TensorLimits):
    top1_agreement_min: float


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    checks: tuple[Check, ...]
    metrics: dict[str, Any]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def failures(self) -> list[str]:
        return [c.describe() for c in self.checks if not c.ok]


def compare_tensor(ref: npt.ArrayLike, out: npt.ArrayLike, limits: TensorLimits) -> Comparison:
    """Cosine, max relative error and non-finite values of one tensor against its limits."""
    cos = cosine_similarity(ref, out)
    rel = max_rel_error(ref, out)
    bad = nonfinite_count(out)
    metrics: dict[str, Any] = {
        "cosine": _num(cos),
        "max_abs_error": _num(max_abs_error(ref, out)),
        "max_rel_error": _num(rel),
        "within_double_thousandth": within_tolerance_ratio(ref, out),
        "nonfinite": bad,
    }
    checks = (
        check("nonfinite", float(bad), "<=", 0),
        check("cosine", cos, ">=", limits.cosine_min),
        check("max_rel_error", rel, "<=", limits.max_rel_error),
    )
    return Comparison(checks=checks, metrics=metrics)


def compare_logits(
    ref: npt.ArrayLike, out: npt.ArrayLike, limits: LogitLimits, *, margin_rel: float
) -> Comparison:
    """:func:`compare_tensor` plus greedy top-1 agreement at clear positions."""
    base = compare_tensor(ref, out, limits)
    top = top1_agreement(ref, out, margin_rel=margin_rel)
    metrics = dict(base.metrics)
    metrics["top1_agreement"] = top.agreement
    metrics["top1_counted"] = top.counted
    metrics["top1_positions"] = top.total
    metrics["top1_margin"] = top.margin
    checks = (*base.checks, check("top1_agreement", top.agreement, ">=", limits.top1_agreement_min))
    return Comparison(checks=checks, metrics=metrics)


class LayerRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    cosine: float | None
    max_abs_error: float | None
    max_rel_error: float | None
    nonfinite: int
    growth: float | None
    """This layer's max_rel_error over the previous layer's (how much the error jumped)."""
    ok: bool


class Localisation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    layers: tuple[LayerRow, ...]
    first_bad: str | None
    """The first captured block whose output is past its threshold; None if all hold."""

    def describe(self) -> str:
        if self.first_bad is None:
            return "every layer within its threshold"
        row = next(r for r in self.layers if r.name == self.first_bad)
        return (
            f"error enters at {self.first_bad!r}: cosine {_fmt(row.cosine)}, "
            f"max_rel_error {_fmt(row.max_rel_error)}, non-finite {row.nonfinite}"
        )


def localise(
    ref_layers: Sequence[tuple[str, npt.ArrayLike]],
    out_layers: Sequence[tuple[str, npt.ArrayLike]],
    limits: TensorLimits,
) -> Localisation:
    """Compare block outputs in order and name the first one past ``limits``."""
    ref_names = [n for n, _ in ref_layers]
    out_names = [n for n, _ in out_layers]
    if ref_names != out_names:
        raise ValueError(f"captured layers differ: reference {ref_names} vs output {out_names}")
    rows: list[LayerRow] = []
    first_bad: str | None = None
    previous: float | None = None
    for (name, r), (_, o) in zip(ref_layers, out_layers, strict=True):
        cmp = compare_tensor(r, o, limits)
        rel = cmp.metrics["max_rel_error"]
        growth = None
        if isinstance(rel, float) and previous is not None and previous > 0.0:
            growth = rel / previous
        rows.append(
            LayerRow(
                name=name,
                cosine=_opt(cmp.metrics["cosine"]),
                max_abs_error=_opt(cmp.metrics["max_abs_error"]),
                max_rel_error=_opt(rel),
                nonfinite=int(cmp.metrics["nonfinite"]),
                growth=growth,
                ok=cmp.ok,
            )
        )
        if not cmp.ok and first_bad is None:
            first_bad = name
        previous = rel if isinstance(rel, float) else None
    return Localisation(layers=tuple(rows), first_bad=first_bad)


def _num(x: float) -> float | str:
    """JSON-safe number: non-finite values become strings (certificates forbid NaN literals)."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _opt(x: Any) -> float | None:
    return x if isinstance(x, float) else None


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.6g}"


# ---------------------------------------------------------------------------------------------
# Thresholds data file (matrices/certify/llm_thresholds.yaml)


class DtypeLimits(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    logits: LogitLimits
    layers: TensorLimits
    fused_ops: TensorLimits


class LlmThresholds(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1]
    top1_margin_rel: float
    dtypes: dict[Literal["fp32", "fp16", "bf16"], DtypeLimits]

    def for_dtype(self, dtype: str) -> DtypeLimits:
        from cannenv.errors import InputError, did_you_mean

        try:
            return self.dtypes[dtype]  # type: ignore[index]
        except KeyError:
            raise InputError(
                f"no precision thresholds for dtype {dtype!r}", hint=did_you_mean(dtype, list(self.dtypes))
            ) from None


def load_thresholds(path: str | None = None) -> LlmThresholds:
    """Load and validate the thresholds file; every problem is reported with its field path."""
    from pathlib import Path

    from cannenv.certify.kernel_data import load_yaml_model
    from cannenv.resources import matrices_dir

    p = Path(path) if path else matrices_dir() / "certify" / "llm_thresholds.yaml"
    return load_yaml_model(
        p, LlmThresholds, what="LLM thresholds", hint="schema: cannenv.certify.metrics.LlmThresholds"
    )
