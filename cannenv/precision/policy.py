"""The tolerance policy of `cannenv precision`: per-entry metrics and the per-dtype limits that
say whether a module's output has diverged from its reference (numpy and pydantic only, no torch).

Metrics follow msprobe's compare columns (docs/precision.md lists the sources): cosine
similarity, maximum absolute error, the shares of elements within a relative error of 1/1000 and
5/1000 ("One/Five Thousandth(s) Err Ratio"), and non-finite values. cannenv adds the maximum error
relative to the tensor's own scale (``max|Δ| / max|ref|``), which is what tells a 2× scaled weight
from bf16 rounding on a tensor of any magnitude. The limits live in
``matrices/precision/tolerances.yaml``, each with its source.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

DTYPES = ("fp32", "fp16", "bf16")
Dtype = Literal["fp32", "fp16", "bf16"]


class EntryMetrics(BaseModel):
    """One output tensor of one module call against its reference."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shape: list[int]
    cosine: float | None
    """None when undefined (a non-finite value on either side where the other is finite, no element)."""
    max_abs_error: float | None
    max_rel_error: float | None
    """``max|out - ref| / max|ref|`` over the finite elements (the absolute error if ref is all zero)."""
    one_thousandth_ratio: float | None
    """Share of elements with ``|out - ref| <= 0.001·|ref|`` (msprobe's One Thousandth Err Ratio)."""
    five_thousandths_ratio: float | None
    nonfinite_mismatch: int = 0
    """Elements where exactly one side is NaN/Inf, or both are but differently."""
    error: str | None = None
    """Why the tensors could not be compared (a shape mismatch); such an entry has diverged."""

    @classmethod
    def shape_mismatch(cls, ref: list[int], out: list[int]) -> EntryMetrics:
        return cls(
            shape=out,
            cosine=None,
            max_abs_error=None,
            max_rel_error=None,
            one_thousandth_ratio=None,
            five_thousandths_ratio=None,
            error=f"shape {out} here, {ref} in the reference",
        )

    def badness(self) -> float:
        """Ordering key for "worst": incomparable or non-finite first, then relative error."""
        if self.error is not None or self.nonfinite_mismatch:
            return math.inf
        rel = self.max_rel_error if self.max_rel_error is not None else math.inf
        cos = self.cosine if self.cosine is not None else -1.0
        return max(rel, 1.0 - cos)


def measure(ref: npt.ArrayLike, out: npt.ArrayLike) -> EntryMetrics:
    """Every metric of ``out`` against ``ref`` (same shape), in float64."""
    r = np.asarray(ref, dtype=np.float64)
    o = np.asarray(out, dtype=np.float64)
    if r.shape != o.shape:
        return EntryMetrics.shape_mismatch(list(r.shape), list(o.shape))
    fr, fo = np.isfinite(r), np.isfinite(o)
    both = fr & fo
    # Non-finite on both sides at the same place with the same value (a -inf mask) is agreement.
    same_nonfinite = ~fr & ~fo & ((r == o) | (np.isnan(r) & np.isnan(o)))
    mismatch = int(np.count_nonzero(~both & ~same_nonfinite))
    rb, ob = r[both], o[both]
    n = rb.size
    if n == 0:
        return EntryMetrics(
            shape=list(o.shape),
            cosine=None if mismatch else 1.0,
            max_abs_error=0.0,
            max_rel_error=0.0,
            one_thousandth_ratio=1.0,
            five_thousandths_ratio=1.0,
            nonfinite_mismatch=mismatch,
        )
    d = np.abs(ob - rb)
    mae = float(d.max())
    scale = float(np.abs(rb).max())
    nr, no = float(np.linalg.norm(rb)), float(np.linalg.norm(ob))
    if nr == 0.0 and no == 0.0:
        cos = 1.0
    elif nr == 0.0 or no == 0.0:
        cos = 0.0
    else:
        cos = float(np.dot(rb, ob) / (nr * no))
    absr = np.abs(rb)
    return EntryMetrics(
        shape=list(o.shape),
        cosine=None if mismatch else min(cos, 1.0),
        max_abs_error=mae,
        max_rel_error=mae / scale if scale > 0.0 else mae,
        one_thousandth_ratio=float(np.count_nonzero(d <= 1e-3 * absr) / n),
        five_thousandths_ratio=float(np.count_nonzero(d <= 5e-3 * absr) / n),
        nonfinite_mismatch=mismatch,
    )


# ---------------------------------------------------------------------------------------------
# The policy file


class Source(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    title: str
    url: str
    says: str
    """What the source states, in its words or a faithful translation."""


class Limit(BaseModel):
    """One limit with the source it comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: float
    source: str


class DtypePolicy(BaseModel):
    """When a module's output has diverged, for a candidate running in one dtype."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cosine_min: Limit
    max_rel_error: Limit


class MsprobeRealData(BaseModel):
    """msprobe's "Accuracy Reached or Not" (real-data mode), reported beside cannenv's verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cosine: Limit
    max_abs_error: Limit
    cosine_hard: Limit
    max_abs_error_hard: Limit

    def reached(self, m: EntryMetrics) -> Literal["Yes", "No"]:
        if m.error is not None or m.nonfinite_mismatch or m.cosine is None or m.max_abs_error is None:
            return "No"
        if m.cosine < self.cosine.value and m.max_abs_error > self.max_abs_error.value:
            return "No"
        if m.cosine < self.cosine_hard.value or m.max_abs_error > self.max_abs_error_hard.value:
            return "No"
        return "Yes"


class StatisticsPolicy(BaseModel):
    """Statistics-mode dumps (Max, Min, Mean, Norm only): msprobe's own warning rule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rel_error_max: Limit
    scale_floor: Limit


class Policy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1]
    sources: dict[str, Source]
    dtypes: dict[Dtype, DtypePolicy]
    msprobe_real_data: MsprobeRealData
    statistics: StatisticsPolicy
    top: int = Field(10, ge=1, le=1000)
    """How many of the worst entries a report lists."""

    def for_dtype(self, dtype: str) -> DtypePolicy:
        from cannenv.errors import InputError, did_you_mean

        try:
            return self.dtypes[dtype]  # type: ignore[index]
        except KeyError:
            raise InputError(
                f"no precision tolerances for dtype {dtype!r}", hint=did_you_mean(dtype, list(self.dtypes))
            ) from None

    def cited(self, limit: Limit) -> str:
        s = self.sources.get(limit.source)
        return f"{s.title} <{s.url}>" if s else limit.source


def crossed(m: EntryMetrics, p: DtypePolicy) -> list[str]:
    """The limits ``m`` crosses under ``p`` (empty: within tolerance)."""
    if m.error is not None:
        return [m.error]
    out: list[str] = []
    if m.nonfinite_mismatch:
        out.append(f"{m.nonfinite_mismatch} non-finite value(s) where the reference has none (or another)")
    if m.cosine is None or m.cosine < p.cosine_min.value:
        shown = "n/a" if m.cosine is None else f"{m.cosine:.6g}"
        out.append(f"cosine {shown} < {p.cosine_min.value:g}")
    if m.max_rel_error is None or m.max_rel_error > p.max_rel_error.value:
        shown = "n/a" if m.max_rel_error is None else f"{m.max_rel_error:.6g}"
        out.append(f"max_rel_error {shown} > {p.max_rel_error.value:g}")
    return out


def load_policy(path: str | Path | None = None) -> Policy:
    """The shipped tolerances (or ``path``), validated; every problem named with its field."""
    from cannenv.certify.kernel_data import load_yaml_model
    from cannenv.resources import matrices_dir

    p = Path(path) if path else matrices_dir() / "precision" / "tolerances.yaml"
    policy = load_yaml_model(
        p, Policy, what="precision tolerances", hint="schema: cannenv.precision.policy.Policy"
    )
    limits = [lim for d in policy.dtypes.values() for lim in (d.cosine_min, d.max_rel_error)]
    v, st = policy.msprobe_real_data, policy.statistics
    limits += [
        v.cosine,
        v.max_abs_error,
        v.cosine_hard,
        v.max_abs_error_hard,
        st.rel_error_max,
        st.scale_floor,
    ]
    missing = sorted({lim.source for lim in limits} - set(policy.sources))
    if missing:
        from cannenv.errors import InputError

        raise InputError(f"{p}: limits cite unknown sources {missing}", hint="add them under sources:")
    return policy


def json_number(x: Any) -> Any:
    """Non-finite floats as strings (JSON has no NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x
