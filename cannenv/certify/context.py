"""The options of one certification run and the context its stages share.

Below :mod:`cannenv.certify.runner` (which plans and runs the stages) and the stage modules
(:mod:`~cannenv.certify.forward`, :mod:`~cannenv.certify.perf_stage`, :mod:`~cannenv.certify.worker`),
which all need these types: none of them imports the runner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from cannenv.certify.stages import Device, Level
from cannenv.host import Host

if TYPE_CHECKING:
    from cannenv.certify.checkpoint import Checkpoint
    from cannenv.checks import Target
    from cannenv.facts import Facts

DtypeChoice = Literal["auto", "bf16", "fp16", "fp32"]
Scope = Literal["all", "llm", "perf"]


class CertifyOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    level: Level = 3
    stack_id: str | None = None
    device: Device = "npu"
    dtype: DtypeChoice = "auto"
    model_dir: str | None = None
    profile: bool = False
    seed: int = 0
    timeout_s: float = 900.0
    """Limit for each device worker run; past it the run is killed and the stage fails (hang)."""
    python: str | None = None
    """Interpreter for the worker (default: the one running cannenv)."""
    no_devices: bool = False
    """``--no-devices`` / ``CANNENV_NO_DEVICES=1``: the doctor stage judges software only."""
    lock: str | None = None
    """``--lock FILE``: the stack (and the whole setup) comes from this lock file."""
    matrix_paths: tuple[str, ...] = ()
    """``--matrix PATH``: a site matrix instead of the shipped one."""


def device_checks_off(options: CertifyOptions) -> str | None:
    """Why the doctor stage skips its device checks, as `cannenv doctor --no-devices` does: asked
    for, or certifying a CPU or CUDA device (no NPU is expected then); None on an NPU run."""
    if options.no_devices:
        return "--no-devices (software only: no NPU expected here)"
    if options.device != "npu":
        return f"--device {options.device} (no NPU expected here)"
    return None


class RunContext:
    """Lazily gathered things several stages (and the certificate) share."""

    def __init__(self, options: CertifyOptions, host: Host, *, checkpoint: Checkpoint | None = None) -> None:
        self.options = options
        self.host = host
        self.checkpoint = checkpoint
        """The ``--model`` checkpoint, inspected before the run (its config and weight digests)."""
        self._facts: Facts | None = None
        self.facts_error: str | None = None
        self._target: Target | None = None
        self.device_info: dict[str, Any] | None = None

    def facts(self) -> Facts | None:
        if self._facts is None and self.facts_error is None:
            try:
                from cannenv.probes import collect

                self._facts = collect(self.host)
            except Exception as exc:  # the probes are engineer B's; never let them sink a run
                self.facts_error = f"{type(exc).__name__}: {exc}"
        return self._facts

    def target(self) -> Target | None:
        """The stack the host is judged against, chosen as `cannenv doctor` chooses it (--lock,
        --stack, else the best match for what is installed); None when the facts failed."""
        if self._target is None:
            facts = self.facts()
            if facts is None:
                return None
            from dataclasses import replace

            from cannenv.checks.stack import choose_target
            from cannenv.matrix import load

            matrix = load(list(self.options.matrix_paths) or None)
            target = choose_target(facts, matrix, stack_id=self.options.stack_id, lock=self.options.lock)
            self._target = replace(target, no_devices=device_checks_off(self.options))
        return self._target
