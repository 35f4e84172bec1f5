"""The precision report: every compared entry, the first divergent module, and its renderers
(table, JSON, JUnit). Pure: built from rows of metrics, no torch.

JSON schema (``schema_version`` 1, docs/precision.md): ``first_divergence.module`` is the dotted
module name as ``named_modules()`` gives it (an msprobe API entry's name for API-level dumps), or
``first_divergence`` is null when no entry crosses the policy.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from cannenv import sanitize
from cannenv.precision.policy import DtypePolicy, EntryMetrics, Policy, crossed

Status = Literal["ok", "diverged", "unmatched"]
Mode = Literal["run", "compare", "dumps"]


class Entry(BaseModel):
    """One module call (or one msprobe dump entry) compared."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    """Position in execution order (0-based)."""
    module: str
    call: int = 0
    kind: Literal["module", "api"] = "module"
    status: Status
    crossed: list[str] = []
    metrics: EntryMetrics | None = None
    statistics: dict[str, Any] | None = None
    """Statistics-mode entries: msprobe's Max/Min/Mean/Norm of each side and their relative errors."""
    msprobe_accuracy_reached: Literal["Yes", "No"] | None = None
    note: str | None = None

    def badness(self) -> float:
        if self.status == "unmatched":
            return -1.0
        if self.metrics is not None:
            return self.metrics.badness()
        if self.statistics is not None:
            return float(self.statistics.get("worst_rel_error") or 0.0)
        return math.inf


class Replay(BaseModel):
    """The divergent module alone, on the reference's inputs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    verdict: Literal["local", "inherited", "unavailable"]
    crossed: list[str] = []
    metrics: EntryMetrics | None = None
    reason: str | None = None


class FirstDivergence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    module: str
    call: int
    index: int
    kind: Literal["module", "api"] = "module"
    crossed: list[str]
    metrics: EntryMetrics | None
    replay: Replay | None
    path: list[str]
    """From the input to the module: the blocks that ran before it along its ancestors (ok), then it."""


class Side(BaseModel):
    """What ran (or was read) on one side of the comparison."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    device: str
    dtype: str
    source: str
    note: str | None = None


class PrecisionReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = 1
    mode: Mode
    reference: Side
    candidate: Side
    dtype: str
    """The dtype whose limits judged the entries."""
    limits: dict[str, Any]
    input: dict[str, Any] = {}
    entries_compared: int
    diverged: int
    unmatched: int
    first_divergence: FirstDivergence | None
    worst: list[Entry]
    entries: list[Entry]
    notes: list[str] = []
    timings: dict[str, float] = {}

    @property
    def exit_code(self) -> int:
        return 0 if self.first_divergence is None else 1

    def to_json(self) -> str:
        return json.dumps(_finite(self.model_dump(mode="json")), indent=2, sort_keys=False)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def judge_entry(
    index: int,
    module: str,
    call: int,
    metrics: EntryMetrics | None,
    policy: Policy,
    limits: DtypePolicy,
    *,
    note: str | None = None,
    kind: Literal["module", "api"] = "module",
) -> Entry:
    if metrics is None:
        return Entry(index=index, module=module, call=call, kind=kind, status="unmatched", note=note)
    why = crossed(metrics, limits)
    return Entry(
        index=index,
        module=module,
        call=call,
        kind=kind,
        status="diverged" if why else "ok",
        crossed=why,
        metrics=metrics,
        msprobe_accuracy_reached=policy.msprobe_real_data.reached(metrics),
        note=note,
    )


def path_to(entries: Sequence[Entry], target: Entry) -> list[str]:
    """The entries before ``target`` whose parent is one of its ancestors (the blocks the input went
    through), then ``target``: ``model.embed_tokens``, ``model.layers.0``, ``model.layers.1``,
    ``model.layers.2.input_layernorm``, ..., ``model.layers.2.mlp.down_proj``."""
    if target.kind != "module":
        return [e.module for e in entries[: target.index + 1]][-10:]
    ancestors = _ancestors(target.module)
    out = []
    for e in entries[: target.index]:
        on_path = e.kind == "module" and _parent(e.module) in ancestors and e.module not in ancestors
        if on_path and e.module not in out:
            out.append(e.module)
    return [*out, target.module]


def _parent(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def _ancestors(name: str) -> set[str]:
    parts = name.split(".")
    return {"", *(".".join(parts[:i]) for i in range(1, len(parts)))}


def build(
    *,
    mode: Mode,
    reference: Side,
    candidate: Side,
    dtype: str,
    policy: Policy,
    entries: list[Entry],
    replay: Replay | None = None,
    input_info: dict[str, Any] | None = None,
    notes: Sequence[str] = (),
    timings: dict[str, float] | None = None,
) -> PrecisionReport:
    first = next((e for e in entries if e.status == "diverged"), None)
    fd = None
    if first is not None:
        fd = FirstDivergence(
            module=first.module,
            call=first.call,
            index=first.index,
            kind=first.kind,
            crossed=first.crossed,
            metrics=first.metrics,
            replay=replay,
            path=path_to(entries, first),
        )
    limits = policy.for_dtype(dtype) if dtype in policy.dtypes else None
    shown = {
        "cosine_min": None if limits is None else limits.cosine_min.value,
        "max_rel_error": None if limits is None else limits.max_rel_error.value,
        "sources": sorted(
            {policy.cited(lim) for lim in ((limits.cosine_min, limits.max_rel_error) if limits else ())}
        ),
    }
    ranked = sorted((e for e in entries if e.status != "unmatched"), key=lambda e: -e.badness())
    return PrecisionReport(
        mode=mode,
        reference=reference,
        candidate=candidate,
        dtype=dtype,
        limits=shown,
        input=input_info or {},
        entries_compared=sum(1 for e in entries if e.status != "unmatched"),
        diverged=sum(1 for e in entries if e.status == "diverged"),
        unmatched=sum(1 for e in entries if e.status == "unmatched"),
        first_divergence=fd,
        worst=ranked[: policy.top],
        entries=entries,
        notes=list(notes),
        timings=timings or {},
    )


# ---------------------------------------------------------------------------------------------
# Renderers


def _f(x: float | None, spec: str = ".6g") -> str:
    return "n/a" if x is None else format(x, spec)


def _row(e: Entry) -> str:
    m = e.metrics
    if m is not None:
        figures = (
            f"cos {_f(m.cosine, '.6f')}  rel {_f(m.max_rel_error, '.3g')}  abs {_f(m.max_abs_error, '.3g')}  "
            f"1/1000 {_f(m.one_thousandth_ratio, '.3f')}  msprobe {e.msprobe_accuracy_reached or '-'}"
        )
    elif e.statistics is not None:
        figures = f"statistics rel {_f(e.statistics.get('worst_rel_error'), '.3g')}"
    else:
        figures = e.note or ""
    call = f"#{e.call}" if e.call else ""
    return f"  {e.status:9s} {sanitize.line(e.module + call):58s} {figures}"


def render_table(r: PrecisionReport) -> str:
    lines = [
        f"precision {r.mode}: {sanitize.line(r.candidate.label)} ({r.candidate.device}, {r.candidate.dtype})"
        f" against {sanitize.line(r.reference.label)} ({r.reference.device}, {r.reference.dtype})",
        f"policy ({r.dtype}): cosine >= {r.limits.get('cosine_min')}, max|Δ|/max|ref| <= "
        f"{r.limits.get('max_rel_error')}",
        f"{r.entries_compared} entries compared, {r.diverged} diverged, {r.unmatched} unmatched",
    ]
    lines += [f"note: {sanitize.line(n)}" for n in r.notes]
    fd = r.first_divergence
    lines.append("")
    if fd is None:
        lines.append("first divergence: none — every entry is within the policy")
    else:
        call = f" (call {fd.call})" if fd.call else ""
        lines.append(
            f"first divergence: {sanitize.line(fd.module)}{call}, entry {fd.index} in execution order"
        )
        lines += [f"  crossed: {sanitize.line(c)}" for c in fd.crossed]
        if fd.replay is not None:
            rp = fd.replay
            if rp.verdict == "local":
                lines.append("  replay: LOCAL — on the reference's inputs this module alone still diverges")
                lines += [f"    {sanitize.line(c)}" for c in rp.crossed]
            elif rp.verdict == "inherited":
                rel = _f(rp.metrics.max_rel_error, ".3g") if rp.metrics else "n/a"
                lines.append(
                    "  replay: INHERITED — on the reference's inputs this module is within the policy "
                    f"(max rel {rel}); the error came in through its inputs"
                )
            else:
                lines.append(f"  replay: unavailable ({sanitize.line(rp.reason or '')})")
        lines.append("  path: " + " → ".join(sanitize.line(p) for p in fd.path[-12:]))
    if r.worst:
        lines += ["", f"worst {len(r.worst)}:"]
        lines += [_row(e) for e in r.worst]
    unmatched = [e for e in r.entries if e.status == "unmatched"][:10]
    if unmatched:
        lines += ["", "unmatched:"] + [_row(e) for e in unmatched]
    return "\n".join(lines) + "\n"


def render_junit(r: PrecisionReport) -> str:
    """One testcase per compared entry; a diverged entry is a failure, unmatched is skipped."""
    import xml.etree.ElementTree as ET

    suite = ET.Element(
        "testsuite",
        name=f"cannenv precision {r.mode}",
        tests=str(len(r.entries)),
        failures=str(r.diverged),
        errors="0",
        skipped=str(r.unmatched),
    )
    props = ET.SubElement(suite, "properties")
    fd = r.first_divergence
    ET.SubElement(props, "property", name="first_divergence", value="" if fd is None else fd.module)
    ET.SubElement(props, "property", name="dtype", value=r.dtype)
    for e in r.entries:
        name = e.module + (f"#{e.call}" if e.call else "")
        case = ET.SubElement(suite, "testcase", classname=f"cannenv.precision.{r.mode}", name=name)
        if e.status == "diverged":
            el = ET.SubElement(case, "failure", message="; ".join(e.crossed), type="diverged")
            first = fd is not None and fd.index == e.index
            el.text = ("first divergence\n" if first else "") + "\n".join(e.crossed)
        elif e.status == "unmatched":
            ET.SubElement(case, "skipped", message=e.note or "unmatched")
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    doc = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    return sanitize.xml(doc)


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``--json`` (docs/precision.md; a test keeps the shipped copy in sync)."""
    return PrecisionReport.model_json_schema()
