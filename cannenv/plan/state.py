"""Each host's rollout state: one closed set of values, what ``provision`` reports per host.

A host of a rollout ends in exactly one of four states (issue 31):

* ``done`` — every planned step ran and the doctor passes afterwards (or there was nothing to do);
* ``failed`` — it stopped at a step (``step``, with the steps that ran before it in ``ran``), or all
  its steps ran and the doctor still fails it;
* ``not-run`` — nothing ran on it, and ``why`` says why (refused by the controller, another host's
  preflight, the rollout stopped before its batch, ``--check``, facts its plan needed that a probe
  could not read (``facts-unknown``), …);
* ``reboot-required`` — it stopped for a restart (a planned reboot step without ``--reboot``, or a
  previous run's reboot that has not happened yet): it stays cordoned, and provisioning again after
  the restart goes on.

``cause`` is the finer, stable kebab-case reason within the state, for scripts and the progress view.
This module is pure and small on purpose: the provision report, its renderer and the live progress
view (issue 35) read the same values.
"""

from __future__ import annotations

from typing import Literal, get_args

from cannenv.values import value

State = Literal["done", "failed", "not-run", "reboot-required"]
STATES: tuple[State, ...] = get_args(State)

Cause = Literal[
    # done
    "ran",
    "nothing-to-do",
    # failed
    "step-failed",
    "checksum",
    "unreachable",
    "interrupted",
    "doctor-fails",
    "facts-after",
    # not-run
    "check",
    "controller",
    "refused",
    "facts-unknown",
    "untargeted",
    "facts-moved",
    "not-collected",
    "preflight",
    "half-installed",
    "rollout-stopped",
    # reboot-required
    "planned-reboot",
    "awaiting-reboot",
]
CAUSES: tuple[Cause, ...] = get_args(Cause)

STATE_OF: dict[Cause, State] = {
    "ran": "done",
    "nothing-to-do": "done",
    "step-failed": "failed",
    "checksum": "failed",
    "unreachable": "failed",
    "interrupted": "failed",
    "doctor-fails": "failed",
    "facts-after": "failed",
    "check": "not-run",
    "controller": "not-run",
    "refused": "not-run",
    "facts-unknown": "not-run",
    "untargeted": "not-run",
    "facts-moved": "not-run",
    "not-collected": "not-run",
    "preflight": "not-run",
    "half-installed": "not-run",
    "rollout-stopped": "not-run",
    "planned-reboot": "reboot-required",
    "awaiting-reboot": "reboot-required",
}
"""Each cause belongs to exactly one state."""

OK_STATES: frozenset[State] = frozenset({"done"})
"""States in which a host may go back into service (``--uncordon``) and the exit code stays 0."""


@value
class HostState:
    """Where one host stands: its state, the cause, and what ran."""

    state: State
    cause: Cause
    why: str = ""
    step: int | None = None
    """``failed`` / ``reboot-required``: the step it stopped at (None: after the last step)."""
    component: str | None = None
    ran: tuple[int, ...] = ()
    """The steps that ran to completion on this host, in order."""

    @classmethod
    def of(
        cls,
        cause: Cause,
        why: str = "",
        *,
        step: int | None = None,
        component: str | None = None,
        ran: tuple[int, ...] = (),
    ) -> HostState:
        return cls(state=STATE_OF[cause], cause=cause, why=why, step=step, component=component, ran=ran)

    def headline(self) -> str:
        """One line: ``failed at step 3 (nnal), after steps 1, 2: …``, ``not-run: …``."""
        ran = (
            f"after step{'s' if len(self.ran) > 1 else ''} {', '.join(map(str, self.ran))}"
            if self.ran
            else "nothing ran before it"
        )
        if self.state == "failed" and self.step is not None:
            head = f"failed at step {self.step}" + (f" ({self.component})" if self.component else "")
            return f"{head}, {ran}: {self.why}"
        if self.state == "reboot-required" and self.step is not None:
            return f"reboot-required at step {self.step}, {ran}: {self.why}"
        return self.state + (f": {self.why}" if self.why else "")
