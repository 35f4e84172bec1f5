"""Build host trees for tests and examples from the REAL file formats (research §4).

FIXTURE: these trees imitate an Ascend host's files; they hold no CANN, no driver, no kernels.
File contents are the real samples quoted in ../shared/research/versions.md §4.1–§4.8 (the
section is named beside each constant). Where a sample for one version was not found, the fields
are copied from the nearest real sample and only the version lines changed; that is said in place.
A tree's device facts are captured `npu-smi` outputs (tests/data/npu_smi) at the place the docs name
(/var/lib/cannenv/npu-smi-info.txt): cannenv never runs a file of a tree. The tree's own
`usr/local/bin/npu-smi` is an executable stand-in that must never run (it would leave a marker).

Run ``python -m tests.helpers.hosts DIR`` to (re)generate ``examples/hosts``.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

NPU_SMI_DATA = Path(__file__).resolve().parent.parent / "data" / "npu_smi"

# research §4.1 — real driver version.info samples
DRIVER_23_0_7 = """Version=23.0.7
ascendhal_version=7.35.19
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C15SPC012B220
compatible_version=[V100R001C29],[V100R001C30],[V100R001C13],[V100R001C15]
compatible_version_fw=[7.0.0,7.1.99]
package_version=23.0.7
"""
# [MC] docs/en/faultdiag/user_guide/03_collecting_logs.md — note: no package_version line
DRIVER_24_1_RC1 = """Version=24.1.rc1
ascendhal_version=7.35.19
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C15SPC006B220
compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17]
compatible_version_fw=[7.0.0,7.2.99]
"""
DRIVER_24_1_RC2_2 = """Version=24.1.rc2.2
ascendhal_version=7.35.23
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C18SPC001B233
compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]
compatible_version_fw=[7.0.0,7.2.99]
package_version=24.1.rc2.2
"""
DRIVER_25_0_RC1_1 = """Version=25.0.rc1.1
ascendhal_version=7.35.23
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C21SPC002B220
compatible_version=[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]
compatible_version_fw=[7.0.0,7.7.99]
package_version=25.0.rc1.1
"""
# research §4.1: 25.3.rc1 "same keys" with these values (PyPTO FAQ)
DRIVER_25_3_RC1 = """Version=25.3.rc1
ascendhal_version=7.35.23
aicpu_version=1.0
tdt_version=1.0
log_version=1.0
prof_version=2.0
dvppkernels_version=1.1
tsfw_version=1.0
Innerversion=V100R001C23SPC002B212
compatible_version=[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C22],[V100R001C23]
compatible_version_fw=[7.0.0,8.9.9]
package_version=25.3.rc1
"""


def driver_like_25_3(version: str) -> str:
    """No real file for this driver version was found: 25.3.rc1's fields with the version lines changed."""
    return DRIVER_25_3_RC1.replace("25.3.rc1", version)


# research §4.2
FIRMWARE_7_7 = """Version=7.7.0.1.231
firmware_version=1.0
package_version=25.0.rc1.1
compatible_version_drv=[23.0.0,23.0.0.],[24.0,24.0.],[24.1,24.1.],[25.0,25.0.]
"""
FIRMWARE_7_1_0_11 = """Version=7.1.0.11.220
firmware_version=1.0
package_version=23.0.7
compatible_version_drv=[23.0.rc3,23.0.rc3.],[23.0.0,23.0.0.]
"""
# research §4.6
ASCEND_INSTALL_INFO = """UserName=HwHiAiUser
UserGroup=HwHiAiUser
Firmware_Install_Type=full
Firmware_Install_Path_Param=/usr/local/Ascend
Driver_Install_Type=full
Driver_Install_Path_Param=/usr/local/Ascend
Driver_Install_For_All=yes
"""
CANN_INSTALL_INFO = "Install_Path=/usr/local/Ascend\nToolkit_InstallPath=/usr/local/Ascend/ascend-toolkit\n"

# research §4.3 — (innerversion, compatible_version) per toolkit version
TOOLKIT_INNER = {
    "8.0.RC3": ("V100R001C19SPC001B155", "[V100R001C13,V100R001C19],[V100R001C30]"),  # range form
    "8.1.RC1": (
        "V100R001C21SPC001B212",
        "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21]",
    ),
    "8.2.RC1": (
        "V100R001C22SPC001B231",
        "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]",
    ),
    "8.3.RC1": (
        "V100R001C23SPC001B231",
        "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]",
    ),
    "8.3.RC2": (
        "V100R001C23SPC002B210",
        "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]",
    ),
    "8.5.0": (
        "V100R001C25SPC001B212",
        "[V100R001C15],[V100R001C18],[V100R001C19],[V100R001C20],[V100R001C21],[V100R001C23]",
    ),
}
# internal component version per toolkit (research §2.4 / §4.5); 8.3.RC2's internal number was not
# found, so 8.3.RC1's form is used with the RC2 version_dir.
COMPONENT_VERSION = {
    "8.0.RC3": "7.5.0.1.129",
    "8.1.RC1": "7.7.0.1.238",
    "8.2.RC1": "8.2.0.0.201",
    "8.3.RC1": "8.3.0.0.201",
    "8.3.RC2": "8.3.0.0.201",
    "8.5.0": "8.5.0.2.220",
}
KERNEL_DIR = {"910b": "ascend910b", "310p": "ascend310p", "a3": "ascend910_93", "910": "ascend910"}


def _series(v: str) -> str:
    return ".".join(v.split(".")[:2])


def toolkit_install_info(version: str, arch: str, path: str) -> str:
    if version not in TOOLKIT_INNER:  # a release whose internal numbers were not recorded: without them
        return f"package_name=Ascend-cann-toolkit\nversion={version}\narch={arch}\nos=linux\npath={path}\n"
    inner, compat = TOOLKIT_INNER[version]
    return (
        f"package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion={inner}\n"
        f"compatible_version={compat}\narch={arch}\nos=linux\npath={path}\n"
    )


def toolkit_component_info(version: str) -> str:
    """research §4.5 `…/latest/toolkit/version.info` (8.2.RC1 sample) with the version lines set."""
    s = _series(version)
    return (
        f"Version={COMPONENT_VERSION.get(version, version)}\nversion_dir={version}\ntimestamp=20250724_194044950\n"  # noqa: E501
        f'required_package_compiler_version="{s}"\nrequired_package_hccl_version="{s}"\n'
        f'required_package_opp_version="{s}"\nrequired_package_opp_kernel_version=">=7.6, <={s}"\n'
        f'required_package_runtime_version="{s}"\n'
    )


def opp_kernel_info(version: str) -> str:
    """research §4.5 `…/latest/opp_kernel/version.info` (8.2.RC1 sample) with the version lines set."""
    s = _series(version)
    v = COMPONENT_VERSION.get(version, version)
    return (
        f"Version={v}\nversion_dir={version}\ntimestamp=20250724_194044950\nops_version={v}\nadk_version={v}\n"
        f'required_package_runtime_version=">=7.6, <={s}"\nrequired_package_toolkit_version=">=7.6, <={s}"\n'
    )


def atb_version_info(version: str, arch: str) -> str:
    """research §4.5 NNAL `latest/version.info` (8.2.RC1 sample) with the version lines set."""
    return (
        f"    Ascend-cann-atb : {version}\n    Ascend-cann-atb Version : {version}.B150\n    Platform : {arch}\n"  # noqa: E501
        f"    branch : br_release_cann_{version}_20251226\n    commit id : f10dc20391d8af04c3f8024aca0e0dfa94d2a0a5\n"  # noqa: E501
    )


CAPTURE_INFO = "/var/lib/cannenv/npu-smi-info.txt"
CAPTURE_BOARD = "/var/lib/cannenv/npu-smi-board.txt"
NPU_SMI_STANDIN = """#!/bin/sh
# cannenv TEST FIXTURE, not the real npu-smi. cannenv never runs a file of a --root tree; the device
# facts come from the captured output in /var/lib/cannenv/. Were this run, it would leave a marker.
touch "$(dirname "$0")/../../../NPU-SMI-WAS-RUN" 2>/dev/null
echo "npu-smi fixture: a file of a --root tree was run" >&2
exit 3
"""
# For the live-host tests only (a PATH directory of this machine): replays captured output.
NPU_SMI_SCRIPT = """#!/bin/sh
# cannenv TEST FIXTURE, not the real npu-smi: replays captured output (tests/data/npu_smi/SOURCES.md).
d="$(dirname "$0")"
case "$*" in
  "info") cat "$d/info.txt" ;;
  "info -t board -i "*) if [ -f "$d/board.txt" ]; then cat "$d/board.txt"; else echo "This device does not support querying board." >&2; exit 255; fi ;;
  *) echo "npu-smi fixture: unsupported arguments: $*" >&2; exit 2 ;;
esac
"""  # noqa: E501
NPU_SMI_HUNG = "#!/bin/sh\n# cannenv TEST FIXTURE: an npu-smi that hangs\nsleep 30\n"
# research §7: message seen when the device is held by another container
NPU_SMI_8005 = (
    "#!/bin/sh\n# cannenv TEST FIXTURE: npu-smi failing as in a container without the device\n"
    "echo 'DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)' >&2\n"
    "echo 'dcmi module initialize failed. ret is -8005' >&2\nexit 255\n"
)


CAPTURE_BY_DRIVER: dict[tuple[str, str], str] = {
    ("a2", "24.1.rc2.2"): "a2_info.txt",
    ("a2", "25.3.rc1"): "a2_25.3.rc1_info.txt",
    ("a2", "25.5.1"): "a2_25.5.1_info.txt",
    ("a3", "25.2.1"): "a3_info.txt",
    ("a3", "24.1.rc3.7"): "a3_24.1.rc3.7_info.txt",
    ("310p", "23.0.rc3"): "310p_info.txt",
    ("310p", "25.0.rc1"): "310p3_25.0.rc1.b033_info.txt",
    ("310p", "25.2.0"): "310p3_duo_25.2.0_info.txt",
}
"""(family, installed driver) -> a real ``npu-smi info`` capture of that driver loaded (SOURCES.md)."""


def mindie_version_info(version: str, arch: str, *, named: bool = True) -> str:
    """MindIE's ``latest/version.info``: the lines Ascend/MindIE-Motor build/mindie/create_package.sh
    writes (``Ascend-mindie : …``, ``mindie-rt: …`` … ``Platform : …``); ``named`` gives the value as a
    MindIE 2.1.RC2 image prints it (``Ascend-mindie : MindIE 2.1.RC2.B080``, the other lines the bare
    version), else bare as the build script's own version.info has it."""
    head = f"MindIE {version}" if named else version
    return (
        f"Ascend-mindie : {head}\nmindie-rt: {version}\nmindie-torch: {version}\nmindie-service: {version}\n"
        f"mindie-llm: {version}\nmindie-sd:{version}\nPlatform : {arch}\n"
    )


def mindie_llm_version_info(version: str, arch: str) -> str:
    """MindIE-LLM's ``version.info`` (Ascend/MindIE-LLM scripts/build_version_info.sh: indented)."""
    return (
        f"    MindIE-LLM Version : {version}\n    Platform : {arch}\n    branch : master\n"
        "    commit id : 8b4871ad31f592aa863f6255760e4934484d78e4\n"
    )


def loaded_driver_set(info: str, version: str) -> str:
    """An ``npu-smi info`` capture whose header names driver ``version`` (FIXTURE: the header's
    version lines changed; the rows stay as captured)."""
    lines = info.splitlines(keepends=True)
    for i, line in enumerate(lines[:3]):
        m = re.search(r"Version:\s*(\S+)", line)
        if m:
            lines[i] = line.replace(m[1], version)
            break
    return "".join(lines)


@dataclass
class HostTree:
    """A host tree under ``root`` plus the environment its user would have."""

    root: Path
    env: dict[str, str] = field(
        default_factory=lambda: {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root"}
    )
    arch: str = "aarch64"
    driver_version: str | None = None
    """the installed driver (``driver()``): :meth:`npu_smi` shows a capture of that driver loaded"""

    def write(self, host_path: str, text: str | bytes, *, mode: int | None = None) -> Path:
        p = self.root / host_path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        if mode is not None:
            p.chmod(mode)
        return p

    def mkdir(self, host_path: str) -> Path:
        p = self.root / host_path.lstrip("/")
        p.mkdir(parents=True, exist_ok=True)
        return p

    def link(self, host_path: str, target: str) -> None:
        p = self.root / host_path.lstrip("/")
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.is_symlink() or p.exists():
            p.unlink()
        p.symlink_to(target)

    # --- HDK ------------------------------------------------------------------------------
    def driver(
        self, text: str = DRIVER_25_3_RC1, *, firmware: str | None = FIRMWARE_7_7, accounts: bool = True
    ) -> HostTree:
        """Driver (+ firmware) files; ``accounts=False`` leaves /etc/passwd and /etc/group alone
        (a tree unpacked over a running system must not replace its users)."""
        self.write("/usr/local/Ascend/driver/version.info", text)
        kv = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        self.driver_version = (kv.get("package_version") or kv.get("Version") or "").strip() or None
        self.mkdir("/usr/local/Ascend/driver/lib64/driver")
        self.write(
            "/usr/local/Ascend/driver/lib64/driver/libascend_hal.so", "FIXTURE placeholder, not a library\n"
        )
        self.mkdir("/usr/local/Ascend/driver/lib64/common")
        self.mkdir("/usr/local/dcmi")
        if firmware is not None:
            self.write("/usr/local/Ascend/firmware/version.info", firmware)
        self.write("/etc/ascend_install.info", ASCEND_INSTALL_INFO)
        if accounts:
            self.write(
                "/etc/passwd",
                "root:x:0:0:root:/root:/bin/bash\nHwHiAiUser:x:1000:1000::/home/HwHiAiUser:/bin/bash\n",
            )
            self.write("/etc/group", "root:x:0:\nHwHiAiUser:x:1000:\n")
        return self

    def npu_smi(self, family: str | None, *, capture: str | None = None) -> HostTree:
        """An (never run) npu-smi stand-in, and for ``family`` the captured outputs of its host.

        npu-smi's header names the loaded driver. The capture is a real one of the driver the tree
        installs where one exists (:data:`CAPTURE_BY_DRIVER`); else the family's capture with its
        header's version set to the installed driver (FIXTURE: the version lines changed, as
        :func:`driver_like_25_3` does for version.info), so loaded and installed agree. ``capture``
        names a file of tests/data/npu_smi kept as captured (a reboot-pending host shows the old driver).
        """
        self.write("/usr/local/bin/npu-smi", NPU_SMI_STANDIN, mode=0o755)
        if family is not None:
            real = capture or CAPTURE_BY_DRIVER.get((family, self.driver_version or ""))
            text = (NPU_SMI_DATA / (real or f"{family}_info.txt")).read_text()
            if real is None and self.driver_version:
                text = loaded_driver_set(text, self.driver_version)
            self.write(CAPTURE_INFO, text)
            board = NPU_SMI_DATA / f"{family}_board.txt"
            if board.exists():
                self.write(CAPTURE_BOARD, board.read_text())
        return self

    def dev_nodes(self, count: int = 1) -> HostTree:
        # FIXTURE: regular files stand in for the character devices (the probe checks existence only)
        for n in [*(f"davinci{i}" for i in range(count)), "davinci_manager", "devmm_svm", "hisi_hdc"]:
            self.write(f"/dev/{n}", "")
        return self

    def os_release(self) -> HostTree:
        self.write(
            "/etc/os-release",
            'PRETTY_NAME="Ubuntu 22.04.4 LTS"\nNAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\n',
        )
        self.mkdir(f"/lib/{self.arch}-linux-gnu")
        return self

    # --- CANN -----------------------------------------------------------------------------
    def toolkit(
        self,
        version: str,
        *,
        kernels: str | None = "910b",
        kernels_version: str | None = None,
        latest: bool = True,
        base: str = "/usr/local/Ascend",
        records: bool = False,
    ) -> str:
        """≤ 8.3 layout: <base>/ascend-toolkit/<ver>/ (+ latest link, set_env.sh). Returns the install path.

        ``records`` adds what a full install also leaves: the kernels package's install record, the
        runtime/opp ``version.info`` (research §4.5) and ``version.cfg`` (§4.4).
        """
        path = f"{base}/ascend-toolkit/{version}"
        self.write(
            f"{path}/{self.arch}-linux/ascend_toolkit_install.info",
            toolkit_install_info(version, self.arch, f"{path}/{self.arch}-linux"),
        )
        self.write(f"{path}/toolkit/version.info", toolkit_component_info(version))
        self.write(f"{base}/ascend-toolkit/set_env.sh", "# FIXTURE: stands for the toolkit's set_env.sh\n")
        self.mkdir(f"{path}/lib64")
        if kernels is not None:
            kv = kernels_version or version
            self.write(f"{path}/opp_kernel/version.info", opp_kernel_info(kv))
            self.mkdir(f"{path}/opp/built-in/op_impl/ai_core/tbe/kernel/config/{KERNEL_DIR[kernels]}")
        if records:
            self._toolkit_records(path, version, kernels, kernels_version or version)
        if latest:
            self.link(f"{base}/ascend-toolkit/latest", version)
        self.write("/etc/Ascend/ascend_cann_install.info", CANN_INSTALL_INFO)
        return path

    def _toolkit_records(self, path: str, version: str, kernels: str | None, kernels_version: str) -> None:
        internal = COMPONENT_VERSION.get(version, version)
        head = f"Version={internal}\nversion_dir={version}\ntimestamp=20250724_194044950\n"
        self.write(f"{path}/runtime/version.info", head)
        opp_required = f'required_package_runtime_version="{_series(version)}"\n'
        self.write(f"{path}/opp/version.info", head + opp_required)
        running = [f"{c}_running_version=[{internal}:{version}]\n" for c in ("runtime", "compiler", "opp")]
        if kernels is not None:
            self.write(
                f"{path}/{self.arch}-linux/ascend_opp_kernel_install.info",
                f"package_name=Ascend-cann-kernels-{kernels}\nversion={kernels_version}\n",
            )
            k_internal = COMPONENT_VERSION.get(kernels_version, kernels_version)
            running.append(f"opp_kernel_running_version=[{k_internal}:{kernels_version}]\n")
        self.write(f"{path}/version.cfg", "# version: 1.0\n" + "".join(running))

    def cann(
        self,
        version: str,
        *,
        ops: str | None = "910b",
        ops_version: str | None = None,
        base: str = "/usr/local/Ascend",
    ) -> str:
        """≥ 8.5 layout: <base>/cann-<ver>/ + <base>/cann link + ascend-toolkit/latest link."""
        path = f"{base}/cann-{version}"
        self.write(
            f"{path}/{self.arch}-linux/ascend_toolkit_install.info",
            toolkit_install_info(version, self.arch, f"{path}/{self.arch}-linux"),
        )
        # research §4.5: `…/latest/opp/version.info` (8.5.0)
        self.write(
            f"{path}/opp/version.info",
            f"Version={COMPONENT_VERSION.get(version, version)}\nversion_dir={version}\n"
            f'timestamp=20251117_000024591\nrequired_package_amct_acl_version="{_series(version)}"\n',
        )
        self.mkdir(f"{path}/lib64")
        if ops is not None:
            pkg = {
                "910b": "Ascend-cann-910b-ops",
                "310p": "Ascend-cann-310p-ops",
                "a3": "Ascend-cann-A3-ops",
            }[ops]
            self.write(
                f"{path}/{self.arch}-linux/ascend_ops_install.info",
                f"package_name={pkg}\nversion={ops_version or version}\n",
            )
        self.link(f"{base}/cann", f"cann-{version}")
        self.link(f"{base}/ascend-toolkit/latest", f"../cann-{version}")
        self.write(f"{base}/ascend-toolkit/set_env.sh", "# FIXTURE: stands for the toolkit's set_env.sh\n")
        self.write("/etc/Ascend/ascend_cann_install.info", CANN_INSTALL_INFO)
        return path

    def nnal(self, version: str, *, abis: tuple[str, ...] = ("cxx_abi_0", "cxx_abi_1")) -> HostTree:
        base = "/usr/local/Ascend/nnal/atb"
        for abi in abis:
            self.mkdir(f"{base}/{version}/atb/{abi}/lib")
        self.link(f"{base}/latest", version)
        self.write(f"{base}/latest/version.info", atb_version_info(version, self.arch))
        self.write(f"{base}/set_env.sh", "# FIXTURE: stands for NNAL's set_env.sh\n")
        return self

    def sourced(self, install: str, *, nnal_abi: int | None = None) -> HostTree:
        """Set the env the toolkit's set_env.sh would (research §5.1/§5.2) for an install path."""
        from cannenv.envscript import nnal_steps, toolkit_steps
        from cannenv.facts import CannInstall

        layout = "cann" if "/cann-" in install else "toolkit"
        inst = CannInstall(path=install, layout=layout, arch=self.arch)
        steps = toolkit_steps(inst, latest_exists=True, arch=self.arch)
        if nnal_abi is not None:
            steps += nnal_steps(f"/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_{nnal_abi}")
        for st in steps:
            if st.kind == "set":
                self.env[st.name] = st.values[0]
            else:
                old = self.env.get(st.name)
                self.env[st.name] = ":".join([*st.values, *([old] if old else [])])
        return self

    def mindie(self, version: str, *, base: str = "/usr/local/Ascend/mindie", named: bool = True) -> HostTree:
        """MindIE's .run install (Ascend/MindIE-Motor build/mindie/install.sh): ``<base>/<version>/``
        with version.info, a ``latest`` link, ``set_env.sh`` beside."""
        self.write(f"{base}/{version}/version.info", mindie_version_info(version, self.arch, named=named))
        self.mkdir(f"{base}/{version}/mindie-service")
        self.mkdir(f"{base}/{version}/mindie-llm")
        self.link(f"{base}/latest", version)
        self.write(f"{base}/set_env.sh", "# FIXTURE: stands for MindIE's set_env.sh\n")
        return self

    def mindie_llm(self, version: str, *, base: str = "/usr/local/Ascend/mindie") -> HostTree:
        """The open-source MindIE-LLM package's install (Ascend/MindIE-LLM scripts/install.sh):
        ``<base>/mindie-llm/<version>/version.info`` and a ``latest`` link; no MindIE version.info."""
        self.write(f"{base}/mindie-llm/{version}/version.info", mindie_llm_version_info(version, self.arch))
        self.link(f"{base}/mindie-llm/latest", version)
        return self

    # --- Python ---------------------------------------------------------------------------
    def site_packages(self, python: str = "3.11") -> str:
        return f"/usr/local/lib/python{python}/site-packages"

    def dist(self, name: str, version: str, *, python: str = "3.11") -> HostTree:
        sp = self.site_packages(python)
        norm = name.replace("-", "_")
        self.write(
            f"{sp}/{norm}-{version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        )
        if name in ("torch", "torch-npu"):
            self.mkdir(f"{sp}/{norm}")
            self.write(f"{sp}/{norm}/__init__.py", "# FIXTURE package directory\n")
        return self

    def python_stack(self, torch: str, torch_npu: str | None, *, python: str = "3.11") -> HostTree:
        self.dist("torch", torch, python=python)
        if torch_npu:
            self.dist("torch-npu", torch_npu, python=python)
        for dep in (
            "numpy",
            "decorator",
            "sympy",
            "cffi",
            "protobuf",
            "attrs",
            "PyYAML",
            "psutil",
            "scipy",
            "requests",
            "absl-py",
        ):
            self.dist(dep, "1.0", python=python)
        return self

    def container(self) -> HostTree:
        self.write("/.dockerenv", "")
        return self

    def env_file(self, path: Path) -> Path:
        path.write_text("".join(f"{k}={v}\n" for k, v in sorted(self.env.items())), encoding="utf-8")
        return path


# --- real ELF files -----------------------------------------------------------------------


def compile_torch_npu_libs(tree: HostTree, *, python: str = "3.11", cc: str = "gcc") -> Path:
    """Compile stub libhccl.so / libascendcl.so and a libtorch_npu.so that needs both (real ELF).

    The stubs go to ``<root>/opt/stubs``, NOT on any search path; torch_npu's library goes where
    pip puts it: ``site-packages/torch_npu/lib/libtorch_npu.so``. Returns the local stub dir.
    """
    work = tree.root / "opt" / "stubs"
    work.mkdir(parents=True, exist_ok=True)
    for name, sym in (("hccl", "HcclCommInitRootInfo"), ("ascendcl", "aclInit")):
        src = work / f"{name}.c"
        src.write_text(f"int {sym}(void) {{ return 0; }}\n")
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(work / f"lib{name}.so"), str(src)], check=True)
    sp = tree.root / tree.site_packages(python).lstrip("/") / "torch_npu" / "lib"
    sp.mkdir(parents=True, exist_ok=True)
    main = work / "torch_npu.c"
    main.write_text(
        "int HcclCommInitRootInfo(void); int aclInit(void);\n"
        "int torch_npu_init(void) { return aclInit() + HcclCommInitRootInfo(); }\n"
    )
    subprocess.run(
        [
            cc,
            "-shared",
            "-fPIC",
            "-o",
            str(sp / "libtorch_npu.so"),
            str(main),
            f"-L{work}",
            "-lhccl",
            "-lascendcl",
        ],
        check=True,
    )
    for f in ("hccl.c", "ascendcl.c", "torch_npu.c"):
        (work / f).unlink()
    return work


# --- scenarios ----------------------------------------------------------------------------


def a2_cann83_old(root: Path) -> HostTree:
    """Healthy-ish Atlas A2, CANN 8.3.RC2 in the ≤ 8.3 layout, driver 25.3.rc1, env sourced."""
    t = HostTree(root).os_release().driver(DRIVER_25_3_RC1).npu_smi("a2").dev_nodes(2)
    inst = t.toolkit("8.3.RC2", kernels="910b")
    t.python_stack("2.7.1", "2.7.1").sourced(inst)
    return t


def a2_cann85_new(root: Path) -> HostTree:
    """Healthy Atlas A2, CANN 8.5.0 in the ≥ 8.5 layout, NNAL 8.5.0, driver 25.5.1, env sourced."""
    t = HostTree(root).os_release().driver(driver_like_25_3("25.5.1")).npu_smi("a2").dev_nodes(2)
    inst = t.cann("8.5.0", ops="910b")
    t.nnal("8.5.0").python_stack("2.8.0", "2.8.0.post2").sourced(inst, nnal_abi=1)
    return t


def a3_cann83(root: Path) -> HostTree:
    t = HostTree(root).os_release().driver(driver_like_25_3("25.2.1")).npu_smi("a3").dev_nodes(16)
    inst = t.toolkit("8.3.RC2", kernels="a3")
    t.python_stack("2.7.1", "2.7.1").sourced(inst)
    return t


def p310_cann81(root: Path) -> HostTree:
    """310P3, CANN 8.1.RC1 on driver 25.0.rc1 (the HDK the deployer names for 8.1.RC1); npu-smi
    shows driver 25.0.rc1.b033 loaded (a real capture; the build suffix is the same release)."""
    t = HostTree(root).os_release().driver(driver_like_25_3("25.0.rc1"), firmware=FIRMWARE_7_1_0_11)
    t.npu_smi("310p")
    t.dev_nodes(2)
    inst = t.toolkit("8.1.RC1", kernels="310p")
    t.python_stack("2.5.1", "2.5.1", python="3.10").sourced(inst)
    return t


def container_ok(root: Path) -> HostTree:
    """A container with the official `docker run` device nodes and driver mounts (research §6.3)."""
    t = (
        HostTree(root)
        .os_release()
        .container()
        .driver(DRIVER_25_3_RC1, firmware=None)
        .npu_smi("a2")
        .dev_nodes(1)
    )
    inst = t.toolkit("8.3.RC2", kernels="910b")
    t.python_stack("2.7.1", "2.7.1").sourced(inst)
    return t


def container_no_mounts(root: Path) -> HostTree:
    """A CANN image run without --device flags and driver mounts."""
    t = HostTree(root).os_release().container()
    inst = t.toolkit("8.3.RC2", kernels="910b")
    t.python_stack("2.7.1", "2.7.1").sourced(inst)
    return t


def driver_too_old(root: Path) -> HostTree:
    """A2 with CANN 8.2.RC1 on driver 24.1.rc2.2 ([ADOCS]: 8.2.RC1 needs HDK 25.0.RC1)."""
    t = (
        HostTree(root)
        .os_release()
        .driver(DRIVER_24_1_RC2_2, firmware=FIRMWARE_7_7)
        .npu_smi("a2")
        .dev_nodes(2)
    )
    inst = t.toolkit("8.2.RC1", kernels="910b")
    t.python_stack("2.6.0", "2.6.0").sourced(inst)
    return t


def kernels_wrong(root: Path) -> HostTree:
    """A2 host with CANN 8.3.RC2 whose kernels package is for 310P and from 8.2.RC1."""
    t = HostTree(root).os_release().driver(DRIVER_25_3_RC1).npu_smi("a2").dev_nodes(2)
    inst = t.toolkit("8.3.RC2", kernels="310p", kernels_version="8.2.RC1")
    t.python_stack("2.7.1", "2.7.1").sourced(inst)
    return t


def torch_npu_mismatch(root: Path) -> HostTree:
    """A2 with CANN 8.5.0 but torch_npu 2.8.0 (v2.8.0-7.2.0, built for CANN 8.3.RC1) [PT-COMPAT]."""
    t = HostTree(root).os_release().driver(driver_like_25_3("25.5.1")).npu_smi("a2").dev_nodes(2)
    inst = t.cann("8.5.0", ops="910b")
    t.python_stack("2.8.0", "2.8.0").sourced(inst)
    return t


def env_not_sourced(root: Path) -> HostTree:
    """A2 with CANN 8.3.RC2 installed and torch_npu, but set_env.sh never sourced."""
    t = HostTree(root).os_release().driver(DRIVER_25_3_RC1).npu_smi("a2").dev_nodes(2)
    t.toolkit("8.3.RC2", kernels="910b")
    t.python_stack("2.7.1", "2.7.1")
    return t


def two_cann_mixed(root: Path) -> HostTree:
    """8.2.RC1 and 8.3.RC2 side by side; both set_env.sh sourced one after the other."""
    t = HostTree(root).os_release().driver(DRIVER_25_3_RC1).npu_smi("a2").dev_nodes(2)
    old = t.toolkit("8.2.RC1", kernels="910b", latest=False)
    new = t.toolkit("8.3.RC2", kernels="910b")
    t.python_stack("2.7.1", "2.7.1")
    t.sourced(old)
    ld_old = t.env["LD_LIBRARY_PATH"].replace("/ascend-toolkit/latest", "/ascend-toolkit/8.2.RC1")
    t.sourced(new)
    t.env["LD_LIBRARY_PATH"] = (
        t.env["LD_LIBRARY_PATH"].replace(new.rsplit("/", 1)[0] + "/latest", new) + ":" + ld_old
    )
    return t


def reboot_pending(root: Path) -> HostTree:
    """A2 whose driver was upgraded 25.3.rc1 → 25.5.1 for CANN 8.5.0 and not restarted since:
    version.info says 25.5.1, npu-smi (the loaded driver) still 25.3.rc1."""
    t = (
        HostTree(root)
        .os_release()
        .driver(driver_like_25_3("25.5.1"))
        .npu_smi("a2", capture="a2_25.3.rc1_info.txt")
    )
    t.dev_nodes(2)
    inst = t.cann("8.5.0", ops="910b")
    t.nnal("8.5.0").python_stack("2.8.0", "2.8.0.post2").sourced(inst, nnal_abi=1)
    return t


def bare(root: Path) -> HostTree:
    """A machine with no Ascend software at all."""
    return HostTree(root).os_release()


SCENARIOS: dict[str, Callable[[Path], HostTree]] = {
    "a2-cann8.3-old-layout": a2_cann83_old,
    "a2-cann8.5-new-layout": a2_cann85_new,
    "a3-cann8.3": a3_cann83,
    "310p-cann8.1": p310_cann81,
    "container-with-mounts": container_ok,
    "broken-container-no-mounts": container_no_mounts,
    "broken-driver-too-old": driver_too_old,
    "broken-kernels-wrong-chip": kernels_wrong,
    "broken-torch-npu-vs-cann": torch_npu_mismatch,
    "broken-env-not-sourced": env_not_sourced,
    "broken-two-cann-mixed": two_cann_mixed,
    "broken-reboot-pending": reboot_pending,
    "bare-no-ascend": bare,
}


def live_npu_smi(bindir: Path, script: str, family: str | None = None) -> dict[str, str]:
    """An npu-smi on THIS machine (a PATH directory ``bindir``) for the live-host tests: the
    environment whose PATH finds it. A tree's npu-smi is never run, so hung or failing npu-smi
    behaviour is tested on the live host."""
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / "npu-smi"
    exe.write_text(script, encoding="utf-8")
    exe.chmod(0o755)
    if family is not None:
        (bindir / "info.txt").write_text((NPU_SMI_DATA / f"{family}_info.txt").read_text())
        board = NPU_SMI_DATA / f"{family}_board.txt"
        if board.exists():
            (bindir / "board.txt").write_text(board.read_text())
    return {"PATH": f"{bindir}:/usr/bin:/bin"}


def host_of(tree: HostTree) -> object:
    from cannenv.host import Host

    return Host(tree.root, dict(tree.env), True, 5.0)


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "examples/hosts")
    out.mkdir(parents=True, exist_ok=True)
    for name, build in SCENARIOS.items():
        d = out / name
        if d.exists():
            shutil.rmtree(d)
        tree = build(d / "tree")
        tree.env_file(d / "host.env")
        for p in (d / "tree").rglob("*"):
            if p.is_file() and not p.is_symlink() and p.stat().st_mode & stat.S_IXUSR:
                p.chmod(0o755)
        # git keeps no empty directories, yet the probes read them (the multiarch lib dir gives a
        # tree its arch, /usr/local/dcmi is a container mount): keep them in a clone too.
        for p in sorted((d / "tree").rglob("*")):
            if p.is_dir() and not p.is_symlink() and not any(p.iterdir()):
                (p / ".gitkeep").touch()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
