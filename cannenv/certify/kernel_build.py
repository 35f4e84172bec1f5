"""Command lines of the smoke-kernel build and run, per flow and mode (pure), and output excerpts.

Every command is an argv list plus the environment variables it needs beyond the caller's, so the
report can print a line a user can paste into a shell to reproduce the step by hand.

Flows (shared research kernels.md §2):

* ``legacy`` — ``cmake -S K -B B -DCANNENV_FLOW=legacy -DRUN_MODE=npu|cpu|sim -DSOC_VERSION=<SoC>
  -DASCEND_CANN_PACKAGE_PATH=<CANN>`` then ``cmake --build B`` [S-2024 run.sh];
* ``asc`` — ``cmake -S K -B B -DCANNENV_FLOW=asc -DASC_DIR=<dir of asc-config.cmake>
  -DCMAKE_ASC_ARCHITECTURES=dav-XXXX -DCMAKE_ASC_RUN_MODE=npu|cpu|sim`` with ``ASCEND_HOME_PATH`` set [ASC];
* ``reference`` — the plain C++ reference in ``K/reference`` with the system compiler.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict, Field

from cannenv.certify.kernel_data import KernelCase, KernelManifest
from cannenv.certify.kernel_toolkit import Flow, Mode, SocTarget

BUILD_JOBS = 2


class Command(BaseModel):
    """One step: argv, extra environment, working directory, and a reproducible shell line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    argv: tuple[str, ...]
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None

    @property
    def shell(self) -> str:
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.env.items()))
        line = shlex.join(self.argv)
        if self.cwd:
            line = f"cd {shlex.quote(self.cwd)} && " + (f"{prefix} " if prefix else "") + line
        elif prefix:
            line = f"{prefix} {line}"
        return line


class BuildContext(BaseModel):
    """Everything the command assembly needs; host-absolute paths."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    flow: Flow
    mode: Mode | None = None
    """None for the reference flow."""
    cann_root: str | None = None
    asc_config_dir: str | None = None
    target: SocTarget | None = None
    build_type: str = "Release"
    jobs: int = BUILD_JOBS


def source_dir(kernels_dir: PurePosixPath, manifest: KernelManifest, flow: Flow) -> PurePosixPath:
    base = kernels_dir / manifest.name
    return base / manifest.reference_dir if flow == "reference" else base


def binary_name(manifest: KernelManifest, flow: Flow) -> str:
    return manifest.reference_binary if flow == "reference" else manifest.binary


def configure_command(
    ctx: BuildContext, kernels_dir: PurePosixPath, manifest: KernelManifest, build_dir: PurePosixPath
) -> Command:
    src = source_dir(kernels_dir, manifest, ctx.flow)
    argv = ["cmake", "-S", str(src), "-B", str(build_dir), f"-DCMAKE_BUILD_TYPE={ctx.build_type}"]
    env: dict[str, str] = {}
    if ctx.flow == "legacy":
        assert ctx.target is not None and ctx.cann_root is not None and ctx.mode is not None
        assert ctx.target.legacy_soc_version is not None
        argv += [
            "-DCANNENV_FLOW=legacy",
            f"-DRUN_MODE={ctx.mode}",
            f"-DSOC_VERSION={ctx.target.legacy_soc_version}",
            f"-DASCEND_CANN_PACKAGE_PATH={ctx.cann_root}",
        ]
        if ctx.mode == "cpu" and ctx.target.cpu_debug_family:
            # find_package(tikicpulib) looks here for tikicpulib-config.cmake [C81].
            argv.append(f"-DCMAKE_PREFIX_PATH={ctx.cann_root}/tools/tikicpulib/lib/cmake")
    elif ctx.flow == "asc":
        assert ctx.target is not None and ctx.cann_root is not None and ctx.mode is not None
        assert ctx.target.npu_arch is not None and ctx.asc_config_dir is not None
        argv += [
            "-DCANNENV_FLOW=asc",
            f"-DASC_DIR={ctx.asc_config_dir}",
            f"-DCMAKE_ASC_ARCHITECTURES={ctx.target.npu_arch}",
            f"-DCMAKE_ASC_RUN_MODE={ctx.mode}",
        ]
        env["ASCEND_HOME_PATH"] = ctx.cann_root  # find_package(ASC) is fatal without it [ASC]
    return Command(argv=tuple(argv), env=env)


def build_command(ctx: BuildContext, build_dir: PurePosixPath) -> Command:
    env = {"ASCEND_HOME_PATH": ctx.cann_root} if ctx.flow == "asc" and ctx.cann_root else {}
    return Command(argv=("cmake", "--build", str(build_dir), "--parallel", str(ctx.jobs)), env=env)


def run_environment(ctx: BuildContext) -> dict[str, str]:
    """Extra environment of the kernel binary for a mode (values are prepended to the caller's)."""
    if ctx.flow == "reference" or ctx.cann_root is None or ctx.target is None:
        return {}
    root = ctx.cann_root
    libs = [f"{root}/lib64", f"{root}/runtime/lib64"]
    env: dict[str, str] = {"ASCEND_HOME_PATH": root}
    sim_name = ctx.target.simulator_dir_asc if ctx.flow == "asc" else ctx.target.simulator_dir_legacy
    sim_lib = f"{root}/tools/simulator/{sim_name}/lib" if sim_name else None
    if ctx.mode == "sim":
        # [S-2024] run.sh: the runtime stub first, then the simulator libraries; logs to ./sim_log.
        libs = [f"{root}/runtime/lib64/stub", *([sim_lib] if sim_lib else []), *libs]
        env["CAMODEL_LOG_PATH"] = "sim_log"
    elif ctx.mode == "cpu":
        libs = [*([sim_lib] if sim_lib else []), f"{root}/tools/tikicpulib/lib", *libs]
    env["LD_LIBRARY_PATH"] = ":".join(libs)
    return env


def run_command(
    ctx: BuildContext,
    manifest: KernelManifest,
    case: KernelCase,
    build_dir: PurePosixPath,
    data_dir: PurePosixPath,
) -> Command:
    """``<binary> <case> <data dir> key=value ...``: reads <data>/<input>.bin, writes <data>/<output>.bin."""
    binary = build_dir / binary_name(manifest, ctx.flow)
    params = [f"{k}={v}" for k, v in case.params().items()]
    return Command(
        argv=(str(binary), case.id, str(data_dir), *params), env=run_environment(ctx), cwd=str(data_dir)
    )


def merged_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment plus ``extra``; LD_LIBRARY_PATH is prepended, not replaced."""
    env = dict(base)
    for key, value in extra.items():
        if key == "LD_LIBRARY_PATH" and env.get(key):
            env[key] = f"{value}:{env[key]}"
        else:
            env[key] = value
    return env


# ----------------------------------------------------------------------------------- output excerpts
_INTERESTING = re.compile(
    r"(error|fatal|undefined reference|cannot find|no such file|not found|cmake error|failed|"
    r"aborted|segmentation fault|cannenv:)",
    re.IGNORECASE,
)
_PATH_PREFIX = re.compile(r"^(In file included from|\s+from )")


def relevant_lines(text: str, *, limit: int = 20, context: int = 2) -> tuple[str, ...]:
    """The lines of compiler or program output that explain a failure, not a wall of text.

    Picks lines that look like errors, plus ``context`` lines after each (the source line and the
    caret of a compiler error) and the indented continuation of a ``CMake Error`` block; skips
    ``In file included from`` chains; falls back to the last lines.
    """
    lines = text.splitlines()
    picked: list[int] = []
    for i, line in enumerate(lines):
        if _PATH_PREFIX.match(line) or not _INTERESTING.search(line):
            continue
        if re.search(r"warning:", line, re.IGNORECASE) and "error" not in line.lower():
            continue
        end = min(i + context + 1, len(lines))
        # A CMake message continues on indented lines until a blank line.
        while end < len(lines) and end < i + 10 and lines[end].startswith(" ") and lines[end].strip():
            end += 1
        for j in range(i, end):
            if j not in picked:
                picked.append(j)
        if len(picked) >= limit:
            break
    if not picked:
        return tuple(line for line in lines[-min(limit, 15) :] if line.strip())
    out = [lines[j].rstrip() for j in sorted(picked)[:limit]]
    if len(lines) > len(out):
        out.append(f"... ({len(lines)} lines of output in all)")
    return tuple(out)


_METRIC = re.compile(r"^cannenv:\s*kernel_time_us=([0-9.eE+-]+)\s*$", re.MULTILINE)


def parse_kernel_time_us(stdout: str) -> float | None:
    """The launcher prints ``cannenv: kernel_time_us=<t>`` (launch to synchronize, host clock)."""
    m = _METRIC.search(stdout)
    if not m:
        return None
    try:
        value = float(m.group(1))
    except ValueError:
        return None
    return value if value > 0 else None
