"""The values of `cannenv certify kernels`: environment, plan and report (pydantic, frozen).

They sit below :mod:`cannenv.certify.kernels` (which plans and runs) and
:mod:`cannenv.certify.kernel_render` (which prints), so neither imports the other for its types.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cannenv.certify.kernel_build import Command
from cannenv.certify.kernel_toolkit import CannRoot, Flow, Mode, ModeAvailability, SocTarget, ToolkitFlows

if TYPE_CHECKING:
    from cannenv.certify.stages import StageResult

SCHEMA_VERSION = 1
Status = Literal["pass", "fail", "skip", "error"]
Target = Literal["device", "reference"]
StepStatus = Literal["ok", "failed", "timeout", "missing"]
BROKEN_TOOLCHAIN = "the toolchain or environment is broken"
COMPARE_MODULES = ("numpy",)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Timeouts(_Frozen):
    configure_s: float = 300.0
    build_s: float = 900.0
    run_s: float = 120.0
    sim_run_s: float = 1800.0


# ------------------------------------------------------------------------------------ environment
class KernelsEnvironment(_Frozen):
    """What the host offers the kernel build (gathered once, then planned against)."""

    live: bool
    cann: CannRoot
    toolkit: ToolkitFlows | None = None
    soc: SocTarget | None = None
    soc_reason: str | None = None
    """Why no SoC is known (when ``soc`` is None)."""
    modes: dict[str, tuple[ModeAvailability, ...]] = Field(default_factory=dict)
    """Run-mode availability per build flow the toolkit ships (needs a SoC)."""
    missing_modules: tuple[str, ...] = ()
    """Python modules the inputs, goldens and comparison need that this Python lacks."""


# ------------------------------------------------------------------------------------------- plan
class PlannedCase(_Frozen):
    id: str
    kernel_symbol: str
    launch_symbol: str
    block_dim: int
    tiling: dict[str, int]
    golden: str
    tolerance: str
    run: Command | None = None
    launch_problems: tuple[str, ...] = ()
    """Why this launch would not fit the SoC or the kernel (cannenv.certify.launch); not launched."""
    unchecked_buffers: tuple[str, ...] = ()
    """On-chip buffers whose size the SoC table does not know (not checked)."""


class PlannedKernel(_Frozen):
    name: str
    title: str
    role: str
    written_for: tuple[str, ...]
    skip_reason: str | None = None
    build_dir: str | None = None
    configure: Command | None = None
    build: Command | None = None
    cases: tuple[PlannedCase, ...] = ()


class KernelsPlan(_Frozen):
    target: Target
    mode: Mode | None
    flow: Flow | None
    flow_reason: str
    env: KernelsEnvironment
    modes: tuple[ModeAvailability, ...] = ()
    skip_reason: str | None = None
    """Why nothing can run (no toolkit, no SoC, mode impossible ...); None when kernels will run."""
    hint: str | None = None
    work_dir: str
    kernels_dir: str
    kernels: tuple[PlannedKernel, ...] = ()


# ----------------------------------------------------------------------------------------- report
class StepResult(_Frozen):
    status: StepStatus
    command: str
    """The shell line that reproduces this step."""
    duration_s: float
    returncode: int | None = None
    excerpt: tuple[str, ...] = ()
    """The relevant lines of the output when the step failed (not the whole log)."""


class CaseResult(_Frozen):
    id: str
    status: Status
    reasons: tuple[str, ...] = ()
    run: StepResult | None = None
    comparisons: tuple[Any, ...] = ()
    """:class:`cannenv.certify.kernel_compare.Comparison` per output (dumped as plain data)."""
    kernel_time_us: float | None = None
    bandwidth_gb_s: float | None = None
    gflops: float | None = None


class KernelResult(_Frozen):
    name: str
    title: str
    role: str
    status: Status
    reasons: tuple[str, ...] = ()
    configure: StepResult | None = None
    build: StepResult | None = None
    build_s: float | None = None
    cases: tuple[CaseResult, ...] = ()


class KernelsReport(_Frozen):
    """Result of `cannenv certify kernels` (``--json`` prints ``model_dump(mode="json")``)."""

    schema_version: int = SCHEMA_VERSION
    stage: Literal["kernels"] = "kernels"
    status: Status
    summary: str
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    hint: str | None = None
    certifies: bool
    """False for the harness self-test and whenever nothing ran on a device or simulator."""
    plan: KernelsPlan
    kernels: tuple[KernelResult, ...] = ()
    work_dir: str | None = None
    """Kept build directory (``--keep-build``), else None (a temporary directory, removed)."""
    duration_s: float = 0.0
    metrics: dict[str, Any] = Field(default_factory=dict)

    def to_stage_result(self) -> StageResult:
        """The common stage shape of :mod:`cannenv.certify.stages` (for the certificate).

        A pass that certifies nothing (the harness self-test) becomes a ``skip`` that says so.
        """
        from cannenv.certify.stages import StageResult

        status, summary, reasons = self.status, self.summary, self.reasons
        ran = status != "skip"  # a skip here was decided before building (no toolkit, no SoC)
        if status == "pass" and not self.certifies:
            why = "harness self-test: the C++ references passed, which certifies nothing about a device"
            status, summary, reasons = "skip", f"skipped: {why}", (why, *reasons)
        return StageResult(
            id="kernels",
            title="Ascend C smoke kernels",
            status=status,
            summary=summary,
            reasons=reasons,
            warnings=self.warnings,
            hint=self.hint,
            metrics=self.metrics,
            duration_s=self.duration_s,
            ran=ran,
        )
