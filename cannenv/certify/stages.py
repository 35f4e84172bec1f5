"""Certification stages: what will run (the plan) and what happened (the results).

A stage ends in exactly one of four states:

``pass``
    it ran and met every threshold; only a ``pass`` certifies the stage.
``fail``
    it ran and the stack did not hold up: a threshold missed, a crash or a hang on the device.
``skip``
    it could not run here (no device of the requested kind, a missing optional package, no peak
    to judge against); the reason says what would make it run. A skip never certifies anything.
``error``
    cannenv could not judge the stage (a broken worker, unreadable output). Not certified either.

Planning is pure (no device, no torch); running happens in :mod:`cannenv.certify.runner`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

StageStatus = Literal["pass", "fail", "skip", "error"]
STATUSES: tuple[StageStatus, ...] = ("pass", "fail", "skip", "error")
Device = Literal["npu", "cuda", "cpu"]
DtypeName = Literal["bf16", "fp16", "fp32"]
Level = Literal[1, 2, 3]


class StagePlan(BaseModel):
    """One stage as planned: what it proves and what it needs to run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    level: Level
    needs: str
    """What must be present for the stage to run rather than skip (shown in the plan)."""


class StageResult(BaseModel):
    """What one stage did. ``metrics`` are plain JSON values (numbers, strings, lists, dicts)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    title: str
    status: StageStatus
    summary: str
    reasons: tuple[str, ...] = ()
    """Why the stage failed, skipped or errored (one line each); empty for a clean pass."""
    warnings: tuple[str, ...] = ()
    """Things worth a look that do not fail the stage (e.g. throughput below 60% of peak)."""
    hint: str | None = None
    """What to do next: how to make a skipped stage run, where to look after a failure."""
    metrics: dict[str, Any] = Field(default_factory=dict)
    duration_s: float = 0.0
    ran: bool = True
    """False for a skip decided before anything ran (no device, a missing package): the run
    then had nothing runnable. A skip after running (figures with no peak to judge them against,
    a doctor whose every check skipped) keeps ``True``."""

    @property
    def certified(self) -> bool:
        """True only for ``pass``: a skipped, failed or errored stage certifies nothing."""
        return self.status == "pass"


def stage_result(
    plan: StagePlan,
    status: StageStatus,
    summary: str,
    *,
    reasons: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
    hint: str | None = None,
    metrics: dict[str, Any] | None = None,
    ran: bool = True,
) -> StageResult:
    """The result of ``plan`` (its id and title) with ``status`` and ``summary``."""
    return StageResult(
        id=plan.id,
        title=plan.title,
        status=status,
        summary=summary,
        reasons=reasons,
        warnings=warnings,
        hint=hint,
        metrics=dict(metrics or {}),
        ran=ran,
    )


def skipped(
    plan: StagePlan, reason: str, *, hint: str | None = None, ran: bool = False, **metrics: Any
) -> StageResult:
    """A skip; ``ran=True`` when the stage did run but could not be judged."""
    return stage_result(
        plan, "skip", f"skipped: {reason}", reasons=(reason,), hint=hint, metrics=metrics, ran=ran
    )


def errored(plan: StagePlan, reason: str, *, hint: str | None = None) -> StageResult:
    return stage_result(plan, "error", f"error: {reason}", reasons=(reason,), hint=hint)


Outcome = Literal["certified", "partial", "failed", "not-certified", "nothing-runnable"]
OUTCOMES: tuple[Outcome, ...] = ("certified", "partial", "failed", "not-certified", "nothing-runnable")


def outcome(results: list[StageResult] | tuple[StageResult, ...]) -> Outcome:
    """The overall verdict of a run.

    ``certified``: every stage passed. ``failed``: a stage failed or errored. ``partial``: nothing
    failed but some stages skipped (only the passed ones are certified). ``not-certified``: nothing
    passed or failed, and some stage ran but could not be judged (figures without a peak).
    ``nothing-runnable``: every stage skipped before running (no device, a missing package), or
    there were no stages.
    """
    statuses = {r.status for r in results}
    if statuses & {"fail", "error"}:
        return "failed"
    if "pass" not in statuses:
        return "not-certified" if any(r.ran for r in results) else "nothing-runnable"
    if "skip" in statuses:
        return "partial"
    return "certified"


EXIT_CODES: dict[Outcome, tuple[int, int]] = {
    "certified": (0, 0),
    "partial": (0, 1),
    "failed": (1, 1),
    "not-certified": (4, 4),
    "nothing-runnable": (4, 4),
}
"""Outcome -> (exit code, exit code with ``--strict``); docs/certify.md has the same table (a
test compares them). Nothing certified is never exit 0: it is 4, the table's "a needed tool or
device is missing" (the stage reasons name what)."""


def exit_code(results: list[StageResult] | tuple[StageResult, ...], *, strict: bool = False) -> int:
    """The process exit code of a run (see :data:`EXIT_CODES`)."""
    plain, with_strict = EXIT_CODES[outcome(results)]
    return with_strict if strict else plain
