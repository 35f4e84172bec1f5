"""Serving and training components (vllm-ascend, Triton-Ascend, MindSpeed, MindSpeed-LLM): the stack an
installed release names, against this host (issue 30).

The installed versions are facts the Python probe already reads from ``*.dist-info/METADATA`` (no
import). Each matrix statement about that release (its compatibility table, install page, pins) names
CANN / torch_npu / torch / Triton-Ascend versions; a host value none of the statements names is a
``warn`` naming every statement, a value one names passes with it. Sets stated as series (``9.1.X``)
cover their releases; nothing is widened.
"""

from __future__ import annotations

from cannenv.checks import Check, Target
from cannenv.checks._util import cite
from cannenv.errors import VersionError
from cannenv.facts import Facts
from cannenv.report import Finding

#: distribution name on the index -> component name in the matrix
INSTALLED = {
    "vllm-ascend": "vllm-ascend",
    "vllm_ascend": "vllm-ascend",
    "triton-ascend": "triton-ascend",
    "triton_ascend": "triton-ascend",
    "mindspeed": "mindspeed",
    "mindspeed-llm": "mindspeed-llm",
    "mindspeed_llm": "mindspeed-llm",
}
_KEYS = {"cann": "CANN", "torch_npu": "torch_npu", "torch": "torch", "triton-ascend": "Triton-Ascend"}


def _host_values(facts: Facts) -> dict[str, str]:
    out: dict[str, str] = {}
    inst = facts.cann.active_install()
    if inst is not None and inst.version:
        out["cann"] = inst.version
    pk = facts.python.packages
    for key, dist in (("torch_npu", "torch-npu"), ("torch", "torch"), ("triton-ascend", "triton-ascend")):
        v = pk.get(dist) or pk.get(dist.replace("-", "_"))
        if v:
            out[key] = v.split("+")[0]
    return out


def _matches(key: str, stated: str, have: str) -> bool:
    from cannenv.matrix.model import series_matches

    stated = stated.strip()
    if key == "cann":
        return series_matches("cann", stated, have) if stated[:1].isdecimal() else False
    try:
        from cannenv.matrix.model import _pep

        return bool(_pep(stated.split("+")[0]) == _pep(have))
    except VersionError:
        return stated == have


def _component_stack(facts: Facts, target: Target) -> list[Finding]:
    c = COMPONENT_STACK
    installed = {INSTALLED[k.lower()]: v for k, v in facts.python.packages.items() if k.lower() in INSTALLED}
    if not installed:
        return [c.finding("skip", "no vllm-ascend, Triton-Ascend, MindSpeed or MindSpeed-LLM is installed")]
    if target.matrix is None:
        return [c.finding("skip", "no matrix to judge the installed components against")]
    host = _host_values(facts)
    out: list[Finding] = []
    for name, version in sorted(installed.items()):
        subject = f"{name} {version}"
        rows = [r for r in target.matrix.component_rows(name, version) if r.evidence != "declared"]
        if not rows:
            known = ", ".join(target.matrix.component_versions(name)) or "none"
            out.append(
                c.finding(
                    "skip",
                    f"{subject}: no statement in the matrix names its stack (recorded releases: {known})",
                    subject=subject,
                )
            )
            continue
        bad: list[str] = []
        good: list[str] = []
        for key, label in _KEYS.items():
            have = host.get(key)
            stated = {v: r for r in rows for v in r.requires.get(key, ())}
            if have is None or not stated:
                continue
            hits = [v for v in stated if _matches(key, v, have)]
            if hits:
                good.append(f"{label} {have}")
            else:
                said = "; ".join(f"{v} ({stated[v].statement})" for v in stated)
                bad.append(f"{label} {have} is not what {subject} names: {said}")
        srcs = cite(target, dict.fromkeys(s for r in rows for s in r.sources))
        if bad:
            out.append(c.finding("warn", "; ".join(bad) + (f" [{srcs}]" if srcs else ""), subject=subject))
        elif good:
            out.append(
                c.finding(
                    "pass",
                    f"{subject} with {', '.join(good)}" + (f" [{srcs}]" if srcs else ""),
                    subject=subject,
                )
            )
        else:
            out.append(
                c.finding(
                    "skip",
                    f"{subject}: none of the versions it names is on this host to compare",
                    subject=subject,
                )
            )
    return out


COMPONENT_STACK = Check(
    "component-stack",
    "Installed serving/training components get the stack they name",
    "vllm-ascend, Triton-Ascend and MindSpeed-LLM releases each name the CANN, torch_npu, torch and "
    "Triton-Ascend they were built and validated with (their compatibility tables, install pages and "
    "pins); another CANN or torch_npu fails late (missing ops, `aclnn… failed`). The statements can "
    "disagree (a table and an install page): a host value any of them names passes.",
    "high",
    _component_stack,
)

CHECKS = (COMPONENT_STACK,)
