"""Checks: pure functions ``(Facts, Target) -> list[Finding]``, kept as records in a plain registry.

Each :class:`Check` has a stable kebab-case ``id`` (used by ``--check``, JSON, JUnit, fleet
grouping), a one-line ``title``, a ``why`` text and a ``severity``. Checks never touch the host;
they are tested by building :class:`~cannenv.facts.Facts` directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cannenv.errors import NotFoundError, did_you_mean
from cannenv.facts import Facts
from cannenv.report import Finding, Scope, Severity, StackChoice, Status

if TYPE_CHECKING:
    from cannenv.matrix import Matrix, Stack


@dataclass(frozen=True)
class Target:
    """What the host is judged against: a stack (or none), the matrix, and the product family."""

    matrix: Matrix | None = None
    stack: Stack | None = None
    choice: StackChoice = field(default_factory=StackChoice)
    family: str | None = None
    family_source: str | None = None
    no_devices: str | None = None
    """When set, the reason device checks are not judged (an image build, a CI runner without an
    NPU): they report ``skip`` with it, never ``pass`` and never ``fail``."""
    driver_policy: str = "accepted"
    """What satisfies the stack's driver pin (:mod:`cannenv.checks.policy`): ``accepted`` — the pin or
    a driver the vendor accepts for the stack's CANN; ``pinned`` — the pin only."""
    no_software: str | None = None
    """When set, the reason the host's own CANN, NNAL and Python stack are not judged (a node that
    carries only the HDK, driver and firmware: CANN and torch live in the workloads' images). The
    software checks report ``skip`` with it (but those in :data:`HDK_NODE_CHECKS`), stack-match
    compares only the host-side components, and driver-cann judges the driver against the target
    stack's CANN."""
    multinode: bool = False
    """Judge multi-node readiness (``doctor --multinode``); else those checks say ``skip``."""


HDK_NODE_CHECKS = frozenset({"ascend-software", "probe-files", "os-user", "stack-match"})
"""Software-scoped checks that still judge a node that carries only the HDK (``Target.no_software``)."""
HDK_ONLY = (
    "the node carries only driver and firmware (--role hdk); CANN and torch live in the workloads' images"
)
"""The ``Target.no_software`` reason of ``--role hdk`` (doctor, fleet report, the DaemonSet's agent)."""


CheckFn = Callable[[Facts, Target], list[Finding]]


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    why: str
    severity: Severity
    fn: CheckFn
    scope: Scope = "software"
    """``device``: judges the NPU, its driver/firmware or their container mounts."""
    reads: tuple[str, ...] = ()
    """Components (:data:`cannenv.checks.policy.READ_BY` keys) whose facts the check judges as a whole:
    where a probe could not read one, the check says ``error`` (could not judge) instead of judging
    an unknown as absent."""

    def finding(
        self,
        status: Status,
        detail: str = "",
        remedy: str | None = None,
        *,
        subject: str | None = None,
        scope: Scope | None = None,
        caused_by: str | None = None,
    ) -> Finding:
        return Finding(
            id=self.id,
            status=status,
            severity=self.severity,
            title=self.title,
            detail=detail,
            remedy=remedy,
            subject=subject,
            scope=scope or self.scope,
            caused_by=caused_by,
        )

    def run(self, facts: Facts, target: Target) -> list[Finding]:
        """Run the check; a bug inside a check becomes an ``error`` finding, never a traceback, and a
        component it reads that a probe could not read (:attr:`reads`) an ``error`` saying so."""
        if self.reads:
            from cannenv.checks.policy import RECOLLECT, unknown_reason

            for key in self.reads:
                why = unknown_reason(facts, key)
                if why is not None:
                    return [self.finding("error", f"not judged: {why}", RECOLLECT, subject=key)]
        try:
            return self.fn(facts, target)
        except Exception as exc:
            return [
                self.finding(
                    "error",
                    f"the check itself failed: {type(exc).__name__}: {exc}",
                    "this is a bug in cannenv; rerun with --debug and report it",
                )
            ]


def _registry() -> tuple[Check, ...]:
    from cannenv.checks import cann, components, hdk, hostenv, multinode, python, stack

    return (
        *cann.CHECKS[:1],  # ascend-software first: on an empty machine it is the headline
        *hostenv.CHECKS_FIRST,
        *hdk.CHECKS,
        *cann.CHECKS[1:],
        *python.CHECKS,
        *components.CHECKS,
        *hostenv.CHECKS,
        *stack.CHECKS,
        *multinode.CHECKS,
    )


def all_checks() -> tuple[Check, ...]:
    return _REGISTRY


def select(ids: Sequence[str] | None) -> tuple[Check, ...]:
    """The checks named by ``--check`` (all when None); unknown ids raise NotFoundError."""
    if not ids:
        return _REGISTRY
    known = {c.id: c for c in _REGISTRY}
    out = []
    for raw in ids:
        for cid in (p.strip() for p in raw.split(",")):
            if not cid:
                continue
            if cid not in known:
                raise NotFoundError(
                    f"no check {cid!r}",
                    hint=(did_you_mean(cid, list(known)) or "") + " list them with `cannenv doctor --list`",
                )
            if known[cid] not in out:
                out.append(known[cid])
    return tuple(out)


def run(facts: Facts, target: Target, checks: Iterable[Check] | None = None) -> list[Finding]:
    """Run checks in registry order. On a host with no Ascend software at all, only the checks that
    say so run; the others are skipped with that reason instead of piling up failures."""
    from dataclasses import replace

    from cannenv.checks import policy
    from cannenv.checks.cann import has_ascend_software

    findings: list[Finding] = []
    bare = not has_ascend_software(facts)
    # A stack for other hardware is refused (stack-match says so, once): the other checks judge the
    # host as it is, never against another chip's packages.
    refused = target.stack is not None and policy.hardware_mismatch(facts, target.stack) is not None
    as_is = replace(target, stack=None) if refused else target
    for check in _REGISTRY if checks is None else checks:
        if bare and check.id not in ("ascend-software", "probe-files"):
            findings.append(
                check.finding(
                    "skip",
                    "no Ascend software on this host (see ascend-software)",
                    caused_by="ascend-software",
                )
            )
            continue
        if target.no_devices and check.scope == "device":
            findings.append(check.finding("skip", f"device check not judged: {target.no_devices}"))
            continue
        if target.no_software and check.scope == "software" and check.id not in HDK_NODE_CHECKS:
            findings.append(check.finding("skip", f"not judged on this node: {target.no_software}"))
            continue
        findings.extend(check.run(facts, target if check.id == "stack-match" else as_is))
    return link_causes(_explicit_target_causes(findings, facts, target))


_REPLACED_WITH_THE_STACK = ("toolkit-ops", "nnal-cann", "torch-npu-cann")
"""Checks that judge packages against the *installed* CANN: when an explicit target stack replaces
that CANN, their remedies (packages for the old CANN) are superseded by the stack's."""


def _explicit_target_causes(findings: list[Finding], facts: Facts, target: Target) -> list[Finding]:
    """With ``--stack``/``--lock`` naming a CANN other than the installed one, the stack is the one
    target: findings about matching the old CANN become consequences of stack-match."""
    from dataclasses import replace

    from cannenv.checks import policy
    from cannenv.checks._util import same_cann

    stack = target.stack
    if stack is None or target.choice.how not in ("option", "lock"):
        return findings
    if policy.hardware_mismatch(facts, stack) is not None:
        return findings  # the stack is refused for this hardware: it replaces nothing
    inst = facts.cann.active_install()
    want = stack.version("cann")
    if inst is None or not inst.version or not want or same_cann(inst.version, want):
        return findings
    # A stack-match line that is itself a consequence of one of these checks (NNAL not installed:
    # nnal-cann says so and gives the install) keeps that check as the root: never a cycle.
    roots = {f.caused_by for f in findings if f.id == "stack-match" and f.status != "pass"}
    return [
        replace(f, caused_by="stack-match")
        if f.id in _REPLACED_WITH_THE_STACK
        and f.caused_by is None
        and f.status != "pass"
        and f.id not in roots
        else f
        for f in findings
    ]


def link_causes(findings: list[Finding]) -> list[Finding]:
    """Keep a ``caused_by`` link only where the cause is itself a finding that is not a pass (a
    check run alone with ``--check`` has no cause to point to)."""
    from dataclasses import replace

    causes = {f.id: f for f in findings if f.status in ("fail", "warn", "error")}
    out = []
    for f in findings:
        if f.caused_by is None:
            out.append(f)
        elif f.caused_by not in causes:
            out.append(replace(f, caused_by=None))
        elif f.remedy and causes[f.caused_by].remedy and f.status in ("fail", "warn"):
            # one root cause, one remedy: a consequence never names a second, possibly contradicting
            # fix (firmware told to go down while the driver goes up; two NNAL versions)
            out.append(replace(f, remedy=f"fixed by {f.caused_by}'s remedy"))
        else:
            out.append(f)
    return out


_REGISTRY: tuple[Check, ...] = _registry()
