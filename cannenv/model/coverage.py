"""Classify the operators a model calls against a torch_npu registry (pure: no torch here).

Classes, in the order they are tried for an operator (docs/model.md says why):

``native``       the registry registers it: an NPU kernel (``supported``/``autograd``/``quant``,
                 or torch_npu's own ``npu::`` operators);
``composite``    torch has a composite kernel for it (``CompositeImplicitAutograd``: decomposed above
                 the backend; ``CompositeExplicitAutograd[NonFunctional]``: one kernel for every
                 backend) — it runs as its parts, which are classified in turn and decide its
                 *effect*; a composite operator is never itself a fallback;
``fallback``     no NPU kernel but a CPU one: torch_npu's boxed CPU fallback copies the inputs to the
                 host, runs the CPU kernel and copies back (slow; off with TORCH_NPU_FALLBACK_CPU_DISABLE=1);
``unsupported``  neither: the call fails on the NPU (a custom operator without a CPU kernel, a
                 CUDA-only kernel).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from cannenv.model.registry import Registry

Klass = Literal["native", "composite", "fallback", "unsupported"]
Effect = Literal["native", "fallback", "unsupported"]
_RANK: dict[str, int] = {"native": 0, "fallback": 1, "unsupported": 2}
COMPOSITE_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
)


@dataclass(frozen=True)
class OpRecord:
    """One ATen operator as the model called it, with one dtype signature."""

    op: str
    """``aten::linear`` (default overload) or ``aten::add.Tensor``"""
    dtypes: tuple[str, ...]
    count: int
    modules: tuple[str, ...]
    """innermost module paths, layer indices folded to ``*`` (``model.layers.*.mlp``)"""
    parts: tuple[str, ...]
    """what it decomposed into below autograd (itself when it did not decompose)"""
    steps: tuple[str, ...]
    """``prefill``, ``decode``"""


@dataclass(frozen=True)
class Trace:
    model: str
    """the model class that ran"""
    config: str
    steps: tuple[str, ...]
    ops: tuple[OpRecord, ...]
    kernels: Mapping[str, tuple[str, ...]]
    """every operator seen (called or a part) -> the torch dispatch keys it has kernels for"""
    decompositions: Mapping[str, tuple[str, ...]]
    """CompositeExplicitAutograd operators -> the operators their kernel calls, where known"""
    notes: tuple[str, ...] = ()
    partial: tuple[str, ...] = ()
    """composite operators whose kernel read tensor values on the way: parts traced up to there"""
    torch: str = ""
    """the torch that ran the trace"""
    transformers: str = ""
    kernels_from: str = ""
    """whose dispatch table ``kernels`` holds (the installed torch, or a stack's native_functions.yaml)"""


@dataclass(frozen=True)
class Verdict:
    op: str
    klass: Klass
    effect: Effect
    """what running it means: native, or the worst of its parts"""
    why: str
    parts: tuple[tuple[str, Klass, Effect], ...] = ()
    rewrite: str | None = None


@dataclass(frozen=True)
class Row:
    record: OpRecord
    verdict: Verdict


@dataclass(frozen=True)
class Fusion:
    id: str
    target: str
    available: bool
    """the registry has the fused operator"""
    modules: tuple[str, ...]
    replaces: str
    conditions: str
    source: str


@dataclass(frozen=True)
class Coverage:
    trace: Trace
    registry: Registry
    rows: tuple[Row, ...]
    fusions: tuple[Fusion, ...]
    fallbacks: tuple[str, ...] = field(default=())
    unsupported: tuple[str, ...] = field(default=())

    @property
    def verdict(self) -> Literal["ready", "fallbacks", "unsupported"]:
        if self.unsupported:
            return "unsupported"
        return "fallbacks" if self.fallbacks else "ready"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "cannenv.model.ops/1",
            "model": {
                "class": self.trace.model,
                "config": self.trace.config,
                "steps": list(self.trace.steps),
            },
            "torch_npu": self.registry.to_json(),
            "verdict": self.verdict,
            "fallbacks": list(self.fallbacks),
            "unsupported": list(self.unsupported),
            "operators": [
                {
                    "op": r.record.op,
                    "dtypes": list(r.record.dtypes),
                    "count": r.record.count,
                    "modules": list(r.record.modules),
                    "steps": list(r.record.steps),
                    "class": r.verdict.klass,
                    "effect": r.verdict.effect,
                    "why": r.verdict.why,
                    "parts": [{"op": p, "class": k, "effect": e} for p, k, e in r.verdict.parts],
                    "rewrite": r.verdict.rewrite,
                }
                for r in self.rows
            ],
            "fusions": [
                {
                    "id": f.id,
                    "target": f.target,
                    "available": f.available,
                    "modules": list(f.modules),
                    "replaces": f.replaces,
                    "conditions": f.conditions,
                    "source": f.source,
                }
                for f in self.fusions
            ],
            "notes": list(self.trace.notes),
            "traced_with": {
                "torch": self.trace.torch,
                "transformers": self.trace.transformers,
                "kernels_from": self.trace.kernels_from,
            },
        }


# ---------------------------------------------------------------------------------------------
# Knowledge: fusions and rewrites (cannenv/model/ops.yaml)


@cache
def knowledge() -> dict[str, Any]:
    import yaml

    from cannenv.resources import model_ops_file

    with model_ops_file().open(encoding="utf-8") as fh:
        doc: dict[str, Any] = yaml.safe_load(fh)
    return doc


def _rewrites(registry: Registry) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in knowledge()["rewrites"]:
        if all(registry.sections(n) for n in item.get("needs", [])):
            out[item["op"]] = item["rewrite"]
    return out


# ---------------------------------------------------------------------------------------------
# Classification


class _Classifier:
    def __init__(self, trace: Trace, registry: Registry) -> None:
        self.trace = trace
        self.registry = registry
        self.rewrites = _rewrites(registry)
        self.memo: dict[str, Verdict] = {}

    def classify(self, op: str, parts: tuple[str, ...] = (), depth: int = 0) -> Verdict:
        key = op if not parts else op + "|" + ",".join(parts)
        if key not in self.memo:
            self.memo[key] = self._classify(op, parts, depth)
        return self.memo[key]

    def _classify(self, op: str, parts: tuple[str, ...], depth: int) -> Verdict:
        sections = self.registry.sections(op)
        if sections:
            return Verdict(op, "native", "native", "registered: " + ", ".join(sections))
        kernels = self.trace.kernels.get(op, ())
        rewrite = self.rewrites.get(op)
        composite = [k for k in COMPOSITE_KEYS if k in kernels]
        if composite:
            sub = tuple(p for p in (parts or self.trace.decompositions.get(op, ())) if p != op)
            judged: list[tuple[str, Klass, Effect]] = []
            if depth < 6:
                for p in sub:
                    v = self.classify(p, (), depth + 1)
                    judged.append((p, v.klass, v.effect))
            effect: Effect = "native"
            for _, _, e in judged:
                if _RANK[e] > _RANK[effect]:
                    effect = e
            how = (
                "decomposes into " + ", ".join(sub)
                if sub
                else "torch's kernel for every backend (a view or metadata change: no kernel runs)"
            )
            if op in self.trace.partial:
                how += " (traced until it read tensor values, which means a device-to-host copy)"
            return Verdict(op, "composite", effect, f"{composite[0]}: {how}", tuple(judged), rewrite)
        if "CPU" in kernels:
            return Verdict(
                op,
                "fallback",
                "fallback",
                "no NPU kernel; torch_npu's CPU fallback runs the CPU kernel",
                (),
                rewrite,
            )
        return Verdict(
            op, "unsupported", "unsupported", "no NPU kernel, no composite, no CPU kernel", (), rewrite
        )


def classify(trace: Trace, registry: Registry) -> Coverage:
    clf = _Classifier(trace, registry)
    rows = []
    fallbacks: set[str] = set()
    unsupported: set[str] = set()
    for rec in trace.ops:
        parts = rec.parts if rec.parts != (rec.op,) else ()
        v = clf.classify(rec.op, parts)
        rows.append(Row(rec, v))
        _collect(clf, v, fallbacks, unsupported)
    return Coverage(
        trace,
        registry,
        tuple(rows),
        fusions(trace, registry),
        tuple(sorted(fallbacks)),
        tuple(sorted(unsupported)),
    )


def _collect(clf: _Classifier, v: Verdict, fallbacks: set[str], unsupported: set[str]) -> None:
    if v.klass == "fallback":
        fallbacks.add(v.op)
    elif v.klass == "unsupported":
        unsupported.add(v.op)
    for p, _, _ in v.parts:
        _collect(clf, clf.classify(p), fallbacks, unsupported)


def fusions(trace: Trace, registry: Registry) -> tuple[Fusion, ...]:
    """Fused-operator opportunities: a pattern's operators all called inside one module subtree."""

    def subtrees(step: str | None) -> dict[str, set[str]]:
        own: dict[str, set[str]] = {}
        for rec in trace.ops:
            if step is not None and step not in rec.steps:
                continue
            for m in rec.modules:
                own.setdefault(m, set()).add(rec.op)
        out: dict[str, set[str]] = {}
        for m, ops in own.items():
            parts = m.split(".")
            for i in range(1, len(parts) + 1):
                out.setdefault(".".join(parts[:i]), set()).update(ops)
        return out

    out = []
    found: dict[str, list[str]] = {}
    for item in knowledge()["fusions"]:
        if item.get("config_has"):  # model-level: offered by the command from the config
            continue
        target = item["target"]
        available = registry.sections("npu::" + target.rsplit(".", 1)[-1]) is not None
        if item.get("needs_op") and not available:
            continue  # never suggested where the judged torch_npu lacks the operator
        if any(trace.model.startswith(p) for p in item.get("not_for_models", ())):
            continue
        if item.get("residual_into"):
            sites = _residual_sites(trace, found.get(item["residual_into"], []))
        else:
            sites = _pattern_sites(subtrees(item.get("step")), item.get("any_of") or [item["all_of"]])
        found[item["id"]] = sites
        if sites:
            out.append(
                Fusion(
                    item["id"],
                    target,
                    available,
                    tuple(sorted(sites)),
                    item["replaces"],
                    item["conditions"],
                    item["source"],
                )
            )
    return tuple(out)


def _pattern_sites(subtree: dict[str, set[str]], patterns: list[list[str]]) -> list[str]:
    """The innermost modules whose subtree calls every operator of one of the patterns."""
    sites = []
    for m, ops in subtree.items():
        if not any(set(p) <= ops for p in patterns):
            continue
        children = [c for c in subtree if c.startswith(m + ".")]
        if any(any(set(p) <= subtree[c] for p in patterns) for c in children):
            continue
        sites.append(m)
    return sites


_FLOAT_DTYPES = frozenset({"fp16", "bf16", "fp32"})


def _residual_sites(trace: Trace, norms: list[str]) -> list[str]:
    """Norm modules whose parent itself (not a sub-module) adds floating tensors: the residual add
    ``residual + hidden_states`` of a decoder layer, whose sum is the input of its norm children.
    Operator patterns cannot tell it from the norm's own ``+ eps``; the module structure can."""
    adders: set[str] = set()
    for rec in trace.ops:
        if rec.op == "aten::add.Tensor" and _FLOAT_DTYPES & set(rec.dtypes):
            adders.update(rec.modules)
    return [n for n in norms if "." in n and n.rpartition(".")[0] in adders]


def compare(a: Coverage, b: Coverage) -> list[dict[str, str]]:
    """Operators whose class or effect differs between two registries (same trace)."""
    va = {(r.record.op): r.verdict for r in a.rows}
    vb = {(r.record.op): r.verdict for r in b.rows}
    out = []
    for op in sorted(set(va) | set(vb)):
        x, y = va.get(op), vb.get(op)
        if x is None or y is None or (x.klass, x.effect) != (y.klass, y.effect):
            out.append(
                {
                    "op": op,
                    "old": f"{x.klass}/{x.effect}" if x else "-",
                    "new": f"{y.klass}/{y.effect}" if y else "-",
                }
            )
    return out
