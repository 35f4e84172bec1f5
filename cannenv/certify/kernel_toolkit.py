"""What the installed CANN toolkit can do for the smoke kernels: build flows, run modes, SoC mapping.

Reads a host through :class:`cannenv.host.Host` (so a test builds a toolkit tree in a directory and
passes ``Host(root=tmp, env=...)``), and returns plain data. Nothing here builds or runs anything.

Layout facts (shared research kernels.md §2):

* legacy flow (CANN 7.0 – 8.x, ``ascendc.cmake`` / ``ascendc_library``):
  ``$CANN/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake`` (else ``tools/tikcpp/...``; physically
  ``<arch>-linux/tikcpp/...`` with ``compiler`` a link) [S-2024 npu_lib.cmake, C81];
* new flow (CANN >= 9.0, ``find_package(ASC)`` + ``LANGUAGES ASC``): ``asc-config.cmake`` (or
  ``asc_modules/FindASC.cmake``) in that same directory [ASC];
* cpu mode: ``$CANN/tools/tikicpulib/lib/cmake`` + the model library under ``tools/simulator/<dir>/lib``;
  sim mode: ``tools/simulator/<SOC_VERSION>/lib`` (legacy) or ``tools/simulator/dav_XXXX/lib`` (new);
  npu mode: ``libascendcl.so`` + a device node ``/dev/davinci<N>`` + the driver.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict

from cannenv.certify.kernel_data import SocBuildInfo, SocBuildTable
from cannenv.errors import InputError
from cannenv.host import Host

Flow = Literal["legacy", "asc", "reference"]
Mode = Literal["npu", "cpu", "sim"]
MODES: tuple[Mode, ...] = ("npu", "cpu", "sim")

DEFAULT_ASCEND_DIR = "/usr/local/Ascend"
# [CS] cmake/ascend.cmake search order for root installs, plus the CANN >= 8.5 `cann` layout.
CANN_ROOT_CANDIDATES = (
    "/usr/local/Ascend/ascend-toolkit/latest",
    "/usr/local/Ascend/cann",
    "/usr/local/Ascend/latest",
)
KERNEL_CMAKE_DIRS = (
    "compiler/tikcpp/ascendc_kernel_cmake",
    "tools/tikcpp/ascendc_kernel_cmake",
    "aarch64-linux/tikcpp/ascendc_kernel_cmake",
    "x86_64-linux/tikcpp/ascendc_kernel_cmake",
)
NO_TOOLKIT = "no CANN toolkit: ASCEND_HOME_PATH unset and none under /usr/local/Ascend"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CannRoot(_Frozen):
    """Where the toolkit is (host-absolute path), or why there is none."""

    path: str | None
    source: str
    """``ASCEND_HOME_PATH``, ``default``, ``--cann``, ``facts`` or ``none``."""
    reason: str | None = None


class ToolkitFlows(_Frozen):
    """The build flows the toolkit ships (paths are host-absolute)."""

    kernel_cmake_dir: str | None = None
    legacy_cmake: str | None = None
    """``ascendc.cmake``: the legacy ``ascendc_library`` flow."""
    asc_config_dir: str | None = None
    """Directory holding ``asc-config.cmake``: the new ``find_package(ASC)`` flow (passed as ASC_DIR)."""
    compiler: str | None = None
    """``ccec`` or ``bisheng`` under ``compiler/ccec_compiler/bin``."""

    @property
    def available(self) -> tuple[Flow, ...]:
        flows: list[Flow] = []
        if self.asc_config_dir:
            flows.append("asc")
        if self.legacy_cmake:
            flows.append("legacy")
        return tuple(flows)


class SocTarget(_Frozen):
    """A normalised SoC and what it maps to for the kernel build."""

    soc: str
    family: str
    source: str
    """``--soc``, ``facts`` (npu-smi board query) ..."""
    legacy_soc_version: str | None
    npu_arch: str | None
    cpu_debug_family: str | None
    cpu_debug_model_lib: str | None
    simulator_dir_legacy: str | None
    simulator_dir_asc: str | None


class ModeAvailability(_Frozen):
    mode: Mode
    available: bool
    reason: str


def find_cann_root(host: Host, *, explicit: str | None = None) -> CannRoot:
    """The CANN toolkit root: an explicit path, ``$ASCEND_HOME_PATH``, or a default install."""
    if explicit:
        if host.is_dir(explicit):
            return CannRoot(path=explicit, source="--cann")
        return CannRoot(path=None, source="--cann", reason=f"no CANN toolkit: {explicit} is not a directory")
    env_home = host.getenv("ASCEND_HOME_PATH")
    if env_home:
        if host.is_dir(env_home):
            return CannRoot(path=env_home, source="ASCEND_HOME_PATH")
        return CannRoot(
            path=None,
            source="ASCEND_HOME_PATH",
            reason=f"no CANN toolkit: ASCEND_HOME_PATH={env_home} does not exist",
        )
    candidates = list(CANN_ROOT_CANDIDATES)
    home = host.getenv("HOME")
    if home:
        candidates += [f"{home}/Ascend/ascend-toolkit/latest", f"{home}/Ascend/cann", f"{home}/Ascend/latest"]
    for cand in candidates:
        if host.is_dir(cand):
            return CannRoot(path=cand, source="default")
    return CannRoot(path=None, source="none", reason=NO_TOOLKIT)


def detect_flows(host: Host, cann_root: str) -> ToolkitFlows:
    """Which CMake flows the toolkit at ``cann_root`` ships."""
    root = PurePosixPath(cann_root)
    kernel_dir: str | None = None
    for rel in KERNEL_CMAKE_DIRS:
        cand = root / rel
        if host.is_dir(cand):
            kernel_dir = str(cand)
            break
    legacy = asc = None
    if kernel_dir is not None:
        kd = PurePosixPath(kernel_dir)
        if host.is_file(kd / "ascendc.cmake"):
            legacy = str(kd / "ascendc.cmake")
        asc_files = (kd / "asc-config.cmake", kd / "asc_modules/FindASC.cmake")
        if any(host.is_file(f) for f in asc_files):
            asc = kernel_dir
    if asc is None:
        # find_package(ASC) may also be satisfied from the toolkit's lib64/cmake tree.
        for rel in ("lib64/cmake/asc", "lib64/cmake/ASC"):
            cand = root / rel
            if host.is_file(cand / "asc-config.cmake"):
                asc = str(cand)
                break
    compiler = None
    for name in ("bisheng", "ccec"):
        cand = root / "compiler/ccec_compiler/bin" / name
        if host.is_file(cand):
            compiler = str(cand)
            break
    return ToolkitFlows(
        kernel_cmake_dir=kernel_dir, legacy_cmake=legacy, asc_config_dir=asc, compiler=compiler
    )


def soc_target(soc: str, table: SocBuildTable, *, source: str) -> SocTarget:
    """Normalise a SoC name (the ``Ascend910B`` = first-gen 910 ProB trap included) and map it."""
    from cannenv.soc import normalize_soc, soc_family

    canonical = normalize_soc(soc)
    family = soc_family(canonical)
    info: SocBuildInfo | None = table.families.get(family)
    if info is None:
        raise InputError(
            f"SoC {canonical} (family {family}) has no entry in smoke_kernels/socs.yaml",
            hint="families with a kernel build mapping: " + ", ".join(table.families),
        )
    legacy = canonical if canonical.lower() in info.legacy_soc_versions else None
    sim_legacy = info.simulator_dir_legacy.format(soc=canonical) if info.simulator_dir_legacy else None
    return SocTarget(
        soc=canonical,
        family=family,
        source=source,
        legacy_soc_version=legacy,
        npu_arch=info.npu_arch,
        cpu_debug_family=info.cpu_debug_family,
        cpu_debug_model_lib=info.cpu_debug_model_lib,
        simulator_dir_legacy=sim_legacy,
        simulator_dir_asc=info.simulator_dir_asc,
    )


def choose_flow(
    flows: ToolkitFlows, target: SocTarget, *, wanted: Flow | None = None
) -> tuple[Flow | None, str]:
    """The flow to build with, and why (or why none fits)."""
    usable: dict[Flow, str | None] = {}
    for flow in flows.available:
        if flow == "asc" and target.npu_arch is None:
            usable[flow] = (
                f"the find_package(ASC) flow has no --npu-arch for {target.soc} (family {target.family})"
            )
        elif flow == "legacy" and target.legacy_soc_version is None:
            usable[flow] = f"ascendc.cmake does not list {target.soc} as a SOC_VERSION"
        else:
            usable[flow] = None
    if wanted is not None:
        if wanted not in usable:
            return (
                None,
                f"the toolkit does not ship the {wanted} flow "
                f"(ships: {', '.join(flows.available) or 'none'})",
            )
        why = usable[wanted]
        return (None, why) if why else (wanted, f"{wanted} flow requested")
    preference: tuple[Flow, ...] = ("asc", "legacy")
    for candidate in preference:
        if candidate in usable and usable[candidate] is None:
            shipped = "asc-config.cmake" if candidate == "asc" else "ascendc.cmake (no asc-config.cmake)"
            return candidate, f"the toolkit ships {shipped}"
    if not flows.available:
        where = flows.kernel_cmake_dir or "compiler/tikcpp/ascendc_kernel_cmake"
        return None, f"the toolkit ships neither ascendc.cmake nor asc-config.cmake (looked in {where})"
    return None, "; ".join(why for why in usable.values() if why)


def _sim_dir(root: PurePosixPath, flow: Flow, target: SocTarget) -> PurePosixPath | None:
    name = target.simulator_dir_asc if flow == "asc" else target.simulator_dir_legacy
    return root / "tools/simulator" / name if name else None


def mode_availability(
    host: Host, cann_root: str, flow: Flow, target: SocTarget
) -> tuple[ModeAvailability, ...]:
    """For each run mode: can it run here, and why (not)."""
    root = PurePosixPath(cann_root)
    out: list[ModeAvailability] = []

    acl = [root / "lib64/libascendcl.so", root / "runtime/lib64/libascendcl.so"]
    has_acl = any(host.is_file(p) for p in acl)
    try:  # listed inside the root (cannenv/host.py)
        dev_nodes = [n for n in host.listdir("/dev") if re.fullmatch(r"davinci[0-9].*", n)]
    except (OSError, ValueError):
        dev_nodes = []
    driver = host.is_dir(f"{DEFAULT_ASCEND_DIR}/driver")
    if not has_acl:
        out.append(
            ModeAvailability(mode="npu", available=False, reason=f"no libascendcl.so under {root}/lib64")
        )
    elif not dev_nodes:
        out.append(
            ModeAvailability(mode="npu", available=False, reason="no NPU device node (/dev/davinci<N>)")
        )
    elif not driver:
        out.append(
            ModeAvailability(
                mode="npu", available=False, reason=f"no NPU driver under {DEFAULT_ASCEND_DIR}/driver"
            )
        )
    else:
        out.append(
            ModeAvailability(mode="npu", available=True, reason=f"libascendcl.so and {dev_nodes[0]} present")
        )

    sim = _sim_dir(root, flow, target)
    sim_lib = sim / "lib" if sim is not None else None
    has_sim = sim_lib is not None and host.is_dir(sim_lib)
    tikicpu = root / "tools/tikicpulib/lib/cmake"
    if target.cpu_debug_family is None:
        out.append(
            ModeAvailability(
                mode="cpu", available=False, reason=f"no CPU debug library family for {target.soc}"
            )
        )
    elif not host.is_dir(tikicpu):
        out.append(
            ModeAvailability(mode="cpu", available=False, reason=f"no CPU debug libraries ({tikicpu})")
        )
    elif not has_sim:
        out.append(
            ModeAvailability(
                mode="cpu",
                available=False,
                reason=f"CPU debug needs the {target.cpu_debug_model_lib} model library "
                f"under {sim_lib or 'tools/simulator'}",
            )
        )
    else:
        out.append(
            ModeAvailability(
                mode="cpu",
                available=True,
                reason=f"tikicpulib::{target.soc} ({target.cpu_debug_family}) present",
            )
        )

    if sim_lib is None:
        out.append(
            ModeAvailability(mode="sim", available=False, reason=f"no simulator directory for {target.soc}")
        )
    elif not has_sim:
        out.append(
            ModeAvailability(mode="sim", available=False, reason=f"no simulator libraries ({sim_lib})")
        )
    else:
        out.append(ModeAvailability(mode="sim", available=True, reason=f"simulator libraries in {sim_lib}"))
    return tuple(out)
