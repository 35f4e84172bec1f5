"""`cannenv env`: the exports the detected CANN's ``set_env.sh`` would make, for sh or fish.

The steps follow the research notes, in file order: toolkit ``set_env.sh`` up to 8.3 (§5.1),
the CANN ≥ 8.5 environment as captured by the official images (§5.2), and NNAL/ATB's
``set_env.sh`` (§5.3). Paths are written out (no ``${ASCEND_TOOLKIT_HOME}`` indirection) so the
output is what the variables end up holding.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Literal

from cannenv.errors import NotFoundError
from cannenv.facts import CannInstall, Facts

Shell = Literal["sh", "fish"]
DRIVER_LIBS = (
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/Ascend/driver/lib64/common",
    "/usr/local/Ascend/driver/lib64/driver",
)
# NNAL/ATB set_env.sh defaults [ATB] scripts/set_env.sh (research §5.3).
ATB_DEFAULTS = (
    ("ATB_STREAM_SYNC_EVERY_KERNEL_ENABLE", "0"),
    ("ATB_STREAM_SYNC_EVERY_RUNNER_ENABLE", "0"),
    ("ATB_STREAM_SYNC_EVERY_OPERATION_ENABLE", "0"),
    ("ATB_OPSRUNNER_SETUP_CACHE_ENABLE", "1"),
    ("ATB_OPSRUNNER_KERNEL_CACHE_LOCAL_COUNT", "1"),
    ("ATB_OPSRUNNER_KERNEL_CACHE_GLOABL_COUNT", "5"),
    ("ATB_WORKSPACE_MEM_ALLOC_ALG_TYPE", "1"),
    ("ATB_WORKSPACE_MEM_ALLOC_GLOBAL", "1"),
    ("ATB_COMPARE_TILING_EVERY_KERNEL", "0"),
    ("ATB_HOST_TILING_BUFFER_BLOCK_NUM", "128"),
    ("ATB_DEVICE_TILING_BUFFER_BLOCK_NUM", "32"),
    ("ATB_SHARE_MEMORY_NAME_SUFFIX", ""),
    ("ATB_MATMUL_SHUFFLE_K_ENABLE", "1"),
    ("LCCL_DETERMINISTIC", "0"),
    ("LCCL_PARALLEL", "0"),
)


@dataclass(frozen=True)
class EnvStep:
    kind: Literal["set", "prepend"]
    name: str
    values: tuple[str, ...]


def _base_of(inst: CannInstall) -> str:
    parts = inst.path.rstrip("/").split("/")
    if inst.layout == "toolkit":
        return "/".join(parts[:-2]) or "/"
    return "/".join(parts[:-1]) or "/"


def toolkit_steps(inst: CannInstall, *, latest_exists: bool, arch: str) -> list[EnvStep]:
    """Steps of the toolkit environment for one install (layout decides the recipe)."""
    base = _base_of(inst)
    latest = f"{base}/ascend-toolkit/latest"
    if inst.layout == "toolkit":
        h = latest if latest_exists else inst.path
        return [
            EnvStep("prepend", "LD_LIBRARY_PATH", DRIVER_LIBS),
            EnvStep("set", "ASCEND_TOOLKIT_HOME", (h,)),
            EnvStep(
                "prepend",
                "LD_LIBRARY_PATH",
                (
                    f"{h}/lib64",
                    f"{h}/lib64/plugin/opskernel",
                    f"{h}/lib64/plugin/nnengine",
                    f"{h}/opp/built-in/op_impl/ai_core/tbe/op_tiling/lib/linux/{arch}",
                ),
            ),
            EnvStep("prepend", "LD_LIBRARY_PATH", (f"{h}/tools/aml/lib64", f"{h}/tools/aml/lib64/plugin")),
            EnvStep(
                "prepend",
                "PYTHONPATH",
                (f"{h}/python/site-packages", f"{h}/opp/built-in/op_impl/ai_core/tbe"),
            ),
            EnvStep(
                "prepend",
                "PATH",
                (f"{h}/bin", f"{h}/compiler/ccec_compiler/bin", f"{h}/tools/ccec_compiler/bin"),
            ),
            EnvStep("set", "ASCEND_AICPU_PATH", (h,)),
            EnvStep("set", "ASCEND_OPP_PATH", (f"{h}/opp",)),
            EnvStep("set", "TOOLCHAIN_HOME", (f"{h}/toolkit",)),
            EnvStep("set", "ASCEND_HOME_PATH", (h,)),
        ]
    h = inst.path
    lt = latest if latest_exists else h
    return [
        EnvStep("set", "ASCEND_TOOLKIT_HOME", (h,)),
        EnvStep("set", "ASCEND_TOOLKIT_LATEST_HOME", (lt,)),
        EnvStep(
            "prepend", "PYTHONPATH", (f"{h}/python/site-packages", f"{h}/opp/built-in/op_impl/ai_core/tbe")
        ),
        EnvStep(
            "prepend", "PYTHONPATH", (f"{lt}/python/site-packages", f"{lt}/opp/built-in/op_impl/ai_core/tbe")
        ),
        EnvStep(
            "prepend",
            "PATH",
            (
                f"{h}/bin",
                f"{h}/tools/ccec_compiler/bin",
                f"{h}/tools/profiler/bin",
                f"{h}/tools/ascend_system_advisor/asys",
            ),
        ),
        EnvStep("prepend", "PATH", (f"{h}/tools/show_kernel_debug_data", f"{h}/tools/msobjdump")),
        EnvStep(
            "prepend",
            "PATH",
            (f"{lt}/bin", f"{lt}/compiler/ccec_compiler/bin", f"{lt}/tools/ccec_compiler/bin"),
        ),
        EnvStep("set", "ASCEND_AICPU_PATH", (h,)),
        EnvStep("set", "ASCEND_OPP_PATH", (f"{h}/opp",)),
        EnvStep("set", "TOOLCHAIN_HOME", (f"{h}/toolkit",)),
        EnvStep("set", "ASCEND_HOME_PATH", (h,)),
        EnvStep("set", "CMAKE_PREFIX_PATH", (f"{h}/toolkit/tools/tikicpulib/lib/cmake:{h}/lib64/cmake",)),
        EnvStep(
            "prepend",
            "LD_LIBRARY_PATH",
            (
                f"{lt}/lib64",
                f"{lt}/lib64/plugin/opskernel",
                f"{lt}/lib64/plugin/nnengine",
                f"{lt}/opp/built-in/op_impl/ai_core/tbe/op_tiling",
            ),
        ),
        EnvStep("prepend", "LD_LIBRARY_PATH", (f"{lt}/tools/aml/lib64", f"{lt}/tools/aml/lib64/plugin")),
        EnvStep("prepend", "LD_LIBRARY_PATH", DRIVER_LIBS),
        EnvStep(
            "prepend",
            "LD_LIBRARY_PATH",
            (
                f"{h}/lib64",
                f"{h}/lib64/plugin/opskernel",
                f"{h}/lib64/plugin/nnengine",
                f"{h}/opp/built-in/op_impl/ai_core/tbe/op_tiling",
            ),
        ),
    ]


def nnal_steps(atb_home: str) -> list[EnvStep]:
    steps = [
        EnvStep("set", "ATB_HOME_PATH", (atb_home,)),
        EnvStep(
            "prepend",
            "LD_LIBRARY_PATH",
            (f"{atb_home}/lib", f"{atb_home}/examples", f"{atb_home}/tests/atbopstest"),
        ),
        EnvStep("prepend", "PATH", (f"{atb_home}/bin",)),
    ]
    steps += [EnvStep("set", name, (value,)) for name, value in ATB_DEFAULTS]
    return steps


def atb_abi(facts: Facts) -> int:
    """The ABI NNAL's set_env.sh picks: torch's C++11 ABI, 1 when torch is absent (research §5.3)."""
    return 0 if facts.python.torch_cxx11_abi is False else 1


def steps_for(facts: Facts) -> list[EnvStep]:
    inst = facts.cann.active_install()
    if inst is None:
        raise NotFoundError(
            "no CANN toolkit found to build an environment for",
            hint="install the CANN toolkit (Ascend-cann-toolkit_<ver>_linux-<arch>.run --install), "
            "or point --root at the tree that holds it",
        )
    latest_exists = f"{_base_of(inst)}/ascend-toolkit/latest" in facts.cann.links
    arch = inst.arch or facts.os.arch or "x86_64"
    steps = toolkit_steps(inst, latest_exists=latest_exists, arch=arch)
    nnal = facts.cann.nnal
    if nnal is not None:
        steps += nnal_steps(f"{nnal.path}/latest/atb/cxx_abi_{atb_abi(facts)}")
    return steps


def render(steps: list[EnvStep], shell: Shell, *, header: str | None = None) -> str:
    lines = [f"# {line}" for line in (header or "").splitlines()]
    for step in steps:
        if shell == "sh":
            if step.kind == "set":
                lines.append(f"export {step.name}={shlex.quote(step.values[0])}")
            else:
                joined = ":".join(step.values)
                lines.append(f'export {step.name}={shlex.quote(joined)}"${{{step.name}:+:${{{step.name}}}}}"')
        else:
            if step.kind == "set":
                lines.append(f"set -gx {step.name} {_fish_quote(step.values[0])}")
            else:
                vals = " ".join(_fish_quote(v) for v in step.values)
                lines.append(f"set -gx {step.name} {vals} ${step.name}")
    return "\n".join(lines) + "\n"


def _fish_quote(value: str) -> str:
    if value and all(c.isalnum() or c in "/._-+:=,@" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
