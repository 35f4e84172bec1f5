"""Serving and training components (vllm-ascend, Triton-Ascend, MindIE, MindIE Motor, MindSpeed,
MindSpeed-LLM): the stack an installed release names, against this host (issue 30).

The installed versions are facts: the Python probe reads ``*.dist-info/METADATA`` (no import), the
MindIE probe the ``version.info`` its installer writes (a build suffix, ``2.1.RC2.B080``, is the
release ``2.1.RC2``). Each matrix statement about that release (its compatibility table, install
page, pins) names CANN / torch_npu / torch / Triton-Ascend versions, the TorchNPU release and HDK
versions; a host value none of the statements names is a ``warn`` naming every statement, a value one
names passes with it. Sets stated as series (``9.1.X``) cover their releases; nothing is widened; a
value that is not a version (``the HDK of CANN 8.5.0``) is never compared.
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
    "mindie-motor": "mindie-motor",  # Ascend/MindIE-Motor mindie_motor/python/setup.py: name="mindie-motor"
}
_KEYS = {
    "cann": "CANN",
    "torch_npu": "torch_npu",
    "torch": "torch",
    "triton-ascend": "Triton-Ascend",
    "torchnpu": "TorchNPU release",
    "hdk": "HDK",
}


def mindie_release(version: str) -> str:
    """``2.1.RC2.B080`` (a build of a release, as version.info names it) -> ``2.1.RC2``."""
    head, _, last = version.rpartition(".")
    if head and last[:1] in ("B", "b") and last[1:].isdecimal() and len(last) <= 7:
        return head
    return version


def _host_values(facts: Facts, target: Target) -> dict[str, str]:
    out: dict[str, str] = {}
    inst = facts.cann.active_install()
    if inst is not None and inst.version:
        out["cann"] = inst.version
    pk = facts.python.packages
    for key, dist in (("torch_npu", "torch-npu"), ("torch", "torch"), ("triton-ascend", "triton-ascend")):
        v = pk.get(dist) or pk.get(dist.replace("-", "_"))
        if v:
            out[key] = v.split("+")[0]
    if "torch_npu" in out and target.matrix is not None:
        release = target.matrix.torchnpu_release(out["torch_npu"])
        if release:
            out["torchnpu"] = release
    if facts.driver is not None and facts.driver.version:
        out["hdk"] = facts.driver.version
    return out


def _installed(facts: Facts) -> dict[str, str]:
    out = {INSTALLED[k.lower()]: v for k, v in facts.python.packages.items() if k.lower() in INSTALLED}
    if facts.mindie is not None and facts.mindie.version:
        out["mindie"] = mindie_release(facts.mindie.version)
    return out


def _matches(key: str, stated: str, have: str) -> bool:
    from cannenv.matrix.model import series_matches

    stated = stated.strip()
    if key == "cann":
        return series_matches("cann", stated, have) if stated[:1].isdecimal() else False
    if key == "hdk":
        try:
            return stated[:1].isdecimal() and series_matches("driver", stated, have)
        except VersionError:
            return False
    if key == "torchnpu":  # a TorchNPU release or line: 7.3.0, 7.3.X
        want, got = stated.lower().split("."), have.lower().split(".")
        return got[: len(want) - 1] == want[:-1] if want[-1] == "x" else got == want
    try:
        from cannenv.matrix.model import _pep

        return bool(_pep(stated.split("+")[0]) == _pep(have))
    except VersionError:
        return stated == have


def _component_stack(facts: Facts, target: Target) -> list[Finding]:
    c = COMPONENT_STACK
    installed = _installed(facts)
    if not installed:
        return [
            c.finding(
                "skip",
                "no vllm-ascend, Triton-Ascend, MindIE, MindIE Motor, MindSpeed or MindSpeed-LLM is installed"
                + _mindie_unknown(facts),
            )
        ]
    if target.matrix is None:
        return [c.finding("skip", "no matrix to judge the installed components against")]
    host = _host_values(facts, target)
    out: list[Finding] = []
    for name, version in sorted(installed.items()):
        subject = f"{name} {version}"
        every = target.matrix.component_rows(name, version)
        rows = [r for r in every if r.evidence != "declared"]
        declared = [r for r in every if r.evidence == "declared"]
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
            stated = {v: r for r in rows for v in r.requires.get(key, ()) if v.strip()[:1].isdecimal()}
            if have is None or not stated:
                continue
            hits = [v for v in stated if _matches(key, v, have)]
            if hits:
                good.append(f"{label} {have}")
            else:
                by_statement: dict[str, list[str]] = {}
                for v, r in stated.items():
                    by_statement.setdefault(r.statement, []).append(v)
                said = "; ".join(f"{', '.join(vs)} ({st})" for st, vs in by_statement.items())
                also = [
                    r.statement
                    for r in declared
                    if any(
                        v.strip()[:1].isdecimal() and _matches(key, v, have) for v in r.requires.get(key, ())
                    )
                ]
                bad.append(
                    f"{label} {have} is not what {subject} names: {said}"
                    + (f"; the vendor declares it compatible ({'; '.join(also)})" if also else "")
                )
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


def _mindie_unknown(facts: Facts) -> str:
    """Why an installed MindIE is not judged (its version file names no MindIE release)."""
    m = facts.mindie
    if m is None or m.version:
        return ""
    parts = ", ".join(f"{k} {v}" for k, v in m.parts.items())
    return f" (MindIE at {m.path}: {m.version_file} names no MindIE release" + (
        f"; {parts})" if parts else ")"
    )


COMPONENT_STACK = Check(
    "component-stack",
    "Installed serving/training components get the stack they name",
    "vllm-ascend, Triton-Ascend, MindIE and MindSpeed-LLM releases each name the CANN, torch_npu, torch, "
    "Triton-Ascend, TorchNPU release and HDK they were built and validated with (their compatibility "
    "tables, install pages and pins); another CANN or torch_npu fails late (missing ops, `aclnn… "
    "failed`). The statements can disagree (a table and an install page): a host value any of them "
    "names passes.",
    "high",
    _component_stack,
)

CHECKS = (COMPONENT_STACK,)
