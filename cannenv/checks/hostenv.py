"""Host checks: unreadable files, environment variables, devices, container mounts, the HwHiAiUser account."""

from __future__ import annotations

import re
from typing import get_args

from cannenv.checks import Check, Target
from cannenv.checks._util import toolkit_set_env
from cannenv.facts import Facts, IssueKind
from cannenv.layout import DEVICE_NODES, DRIVER_VOLUMES, version_of_path
from cannenv.report import Finding, Status

# Every issue kind of a file the probes read; the two command kinds belong to other checks.
_FILE_KINDS = frozenset(get_args(IssueKind)) - {"command-failed", "command-timeout"}


def _probe_files(facts: Facts, target: Target) -> list[Finding]:
    c = PROBE_FILES
    out = [
        c.finding(
            "error",
            issue.message,
            "re-create the file with its installer (reinstall the package that owns it)"
            if issue.path and issue.kind != "probe-crashed"
            else "rerun with --debug and report it",
            subject=issue.path or issue.probe,
        )
        for issue in facts.issues
        if issue.kind in _FILE_KINDS
    ]
    return out or [c.finding("pass", "every file the probes read was readable and well-formed")]


CANN_VARS = (
    "ASCEND_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
    "ASCEND_OPP_PATH",
    "ASCEND_AICPU_PATH",
    "TOOLCHAIN_HOME",
)


def _env_sourced(facts: Facts, target: Target) -> list[Finding]:
    c = ENV_SOURCED
    inst = facts.cann.active_install()
    if inst is None:
        return [c.finding("skip", "no CANN toolkit installed", caused_by="cann-installs")]
    env = facts.env.vars
    unset = [v for v in CANN_VARS if not env.get(v)]
    set_env = toolkit_set_env(facts)
    needs = facts.python.torch_npu_dir is not None or "torch-npu" in facts.python.packages
    if len(unset) == len(CANN_VARS):
        return [
            c.finding(
                "fail" if needs else "warn",
                "the CANN environment is not set (ASCEND_HOME_PATH, ASCEND_OPP_PATH … unset)"
                + ("; `import torch_npu` will fail with libhccl.so not found" if needs else ""),
                f"source {set_env}",
            )
        ]
    if unset:
        return [c.finding("warn", "partly set: " + ", ".join(unset) + " unset", f"source {set_env}")]
    ld = facts.env.ld_library_path
    out = [c.finding("pass", f"CANN environment set (ASCEND_HOME_PATH={env.get('ASCEND_HOME_PATH')})")]
    if facts.driver is not None and not any(
        p.rstrip("/").startswith("/usr/local/Ascend/driver/lib64") for p in ld
    ):
        out = [
            c.finding(
                "warn",
                "driver libraries are not on LD_LIBRARY_PATH (libascend_hal.so will not load)",
                "export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64/driver:"
                "/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64:$LD_LIBRARY_PATH",
            )
        ]
    return out


def _env_stale(facts: Facts, target: Target) -> list[Finding]:
    """Variables pointing at removed versions, and values that name another CANN than the active one."""
    c = ENV_STALE
    env = facts.env.vars
    if not any(env.get(v) for v in (*CANN_VARS, "ATB_HOME_PATH", "ASCEND_CUSTOM_OPP_PATH")):
        return [c.finding("skip", "no CANN variables set")]
    live_dirs = {i.path for i in facts.cann.installs}
    installed_versions = {i.version for i in facts.cann.installs if i.version}
    installed_versions |= {v for i in facts.cann.installs if (v := version_of_path(i.path))}
    out: list[Finding] = []
    set_env = toolkit_set_env(facts)
    for var in (*CANN_VARS, "ATB_HOME_PATH"):
        value = env.get(var)
        if not value:
            continue
        ver = version_of_path(value)
        if ver and ver not in installed_versions:
            out.append(
                c.finding(
                    "fail",
                    f"{var}={value} names CANN {ver}, which is not installed "
                    f"(installed: {', '.join(sorted(installed_versions)) or 'none'})",
                    f"open a new shell and `source {set_env}`",
                    subject=var,
                )
            )
        elif (
            not value.startswith(tuple(live_dirs))
            and value.startswith("/usr/local/Ascend")
            and not _base_ok(value, facts)
        ):
            out.append(
                c.finding(
                    "fail",
                    f"{var}={value} points to a directory that does not exist",
                    f"open a new shell and `source {set_env}`",
                    subject=var,
                )
            )
    custom = env.get("ASCEND_CUSTOM_OPP_PATH")
    custom_version = version_of_path(custom) if custom and ":" not in custom else None
    if custom_version and custom_version not in installed_versions:
        out.append(
            c.finding(
                "warn",
                f"ASCEND_CUSTOM_OPP_PATH={custom} names a CANN that is not installed",
                "re-source the custom operator package's set_env.bash",
                subject="ASCEND_CUSTOM_OPP_PATH",
            )
        )
    return out or [c.finding("pass", "CANN variables point at installed versions")]


def _base_ok(value: str, facts: Facts) -> bool:
    # values through ascend-toolkit/latest or nnal are fine when the link/dir was seen
    if "/ascend-toolkit/latest" in value:
        return any(k.endswith("/ascend-toolkit/latest") for k in facts.cann.links)
    if "/nnal/" in value:
        return facts.cann.nnal is not None
    return True


def _env_mixed(facts: Facts, target: Target) -> list[Finding]:
    c = ENV_MIXED
    env = facts.env
    out: list[Finding] = []
    for name, parts in (
        ("LD_LIBRARY_PATH", env.ld_library_path),
        ("PATH", env.path),
        ("PYTHONPATH", env.pythonpath),
    ):
        seen: dict[str, str] = {}
        for p in parts:
            v = version_of_path(p)
            if v and v not in seen:
                seen[v] = p
        if len(seen) > 1:
            detail = "; ".join(f"{v} ({p})" for v, p in seen.items())
            inst = facts.cann.active_install()
            set_env = inst.set_env if inst and inst.set_env else "the set_env.sh of one CANN version"
            out.append(
                c.finding(
                    "fail",
                    f"{name} mixes {len(seen)} CANN versions: {detail}",
                    f"open a new shell (or remove the old entries) and `source {set_env}` once",
                    subject=name,
                )
            )
    if out:
        return out
    return [c.finding("pass", "no path list mixes CANN versions")]


_HEALTH_FAIL = re.compile(r"^(error|critical|fault|abnormal)", re.IGNORECASE)


def _npu_devices(facts: Facts, target: Target) -> list[Finding]:
    c = NPU_DEVICES
    d = facts.devices
    smi = d.npu_smi
    if smi is not None and (smi.timed_out or smi.returncode != 0 or smi.missing):
        msg = smi.message or "npu-smi failed"
        remedy = "check the driver (`cat /usr/local/Ascend/driver/version.info`; reinstall the HDK driver) and reboot"  # noqa: E501
        if "-8005" in msg or "-8020" in msg or facts.container.in_container:
            remedy = (
                "the device is used by another container or process, or the container lacks the device "
                "nodes: stop the other user, or run with --device /dev/davinciN --device /dev/davinci_manager "  # noqa: E501
                "--device /dev/devmm_svm --device /dev/hisi_hdc"
            )
        if smi.missing and "--npu-smi-output" in msg:  # a tree: its npu-smi is data, never run
            remedy = "on that host run `npu-smi info > npu-smi-info.txt`, then add --npu-smi-output npu-smi-info.txt"  # noqa: E501
        if smi.timed_out:
            msg = f"`{' '.join(smi.argv)}` hung (no answer in {smi.duration_s:.0f} s; killed)"
        return [c.finding("fail", msg, remedy, subject="npu-smi")]
    if d.chips:
        out: list[Finding] = []
        bad = [ch for ch in d.chips if ch.health.upper() != "OK"]
        for ch in bad:
            status: Status = "fail" if _HEALTH_FAIL.match(ch.health) else "warn"
            out.append(
                c.finding(
                    status,
                    f"NPU {ch.npu_id} chip {ch.chip_id} ({ch.name}, {ch.bus_id}) health {ch.health}",
                    f"`npu-smi info -t health -i {ch.npu_id}` for the alarm; reset with "
                    f"`npu-smi set -t reset -i {ch.npu_id} -c {ch.chip_id}` or contact the vendor",
                    subject=f"npu{ch.npu_id}.{ch.chip_id}",
                )
            )
        npus = sorted({ch.npu_id for ch in d.chips})
        soc = f", SoC {d.soc}" if d.soc else ""
        if not bad:
            out.append(
                c.finding(
                    "pass", f"{len(npus)} NPU(s), {len(d.chips)} chip(s), all OK ({d.chips[0].name}{soc})"
                )
            )
        return out
    if smi is not None and smi.returncode == 0:
        return [
            c.finding(
                "warn",
                f"`{' '.join(smi.argv)}` answered, but its table listed no NPU row cannenv could read "
                f"(npu-smi {d.smi_version or 'version unknown'})",
                "run `npu-smi info` by hand; if it lists NPUs, save its output with `cannenv facts --json` "
                "and report the table layout to cannenv",
            )
        ]
    if d.pci:
        return [
            c.finding(
                "warn",
                f"{len(d.pci)} Huawei NPU PCI device(s) ({', '.join(p.device for p in d.pci)}) but "
                "no npu-smi answer to say whether they are healthy",
                "install the Ascend HDK driver (it provides npu-smi) or mount /usr/local/bin/npu-smi",
            )
        ]
    if d.dev_nodes:
        return [
            c.finding(
                "warn",
                f"device nodes {', '.join(d.dev_nodes)} exist but npu-smi is not available",
                "mount npu-smi and dcmi: -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi "
                "-v /usr/local/dcmi:/usr/local/dcmi",
            )
        ]
    if facts.driver is not None or (facts.container.in_container and facts.cann.installs):
        return [
            c.finding(
                "fail",
                "no NPU visible: no npu-smi answer, no PCI device of vendor 0x19e5, no /dev/davinci*",
                "check that the NPU is seated and the driver loaded (`lspci | grep -i d80`), or in a container "  # noqa: E501
                "pass --device /dev/davinci0 --device /dev/davinci_manager --device /dev/devmm_svm "
                "--device /dev/hisi_hdc",
            )
        ]
    return [c.finding("skip", "no NPU and no NPU driver on this host")]


def missing_docker_flags(facts: Facts) -> list[str]:
    """The exact `docker run` flags for the device nodes and driver mounts that are absent."""
    flags: list[str] = []
    absent = set(facts.container.absent)
    if not any(re.match(r"^/dev/v?davinci\d+\Z", n) for n in facts.devices.dev_nodes):
        flags.append("--device /dev/davinci0")
    for node in DEVICE_NODES:
        if node in absent:
            flags.append(f"--device {node}")
    for path, volume in DRIVER_VOLUMES.items():
        if path in absent:
            flags.append(f"-v {volume}")
    return flags


def _container_mounts(facts: Facts, target: Target) -> list[Finding]:
    c = CONTAINER_MOUNTS
    if not facts.container.in_container:
        return [c.finding("skip", "not running in a container")]
    flags = missing_docker_flags(facts)
    evidence = "; ".join(facts.container.evidence)
    if not flags:
        return [c.finding("pass", f"in a container ({evidence}); NPU device nodes and driver mounts present")]
    return [
        c.finding(
            "fail",
            f"in a container ({evidence}); missing: " + ", ".join(f.split()[-1].split(":")[0] for f in flags),
            "add to `docker run`: " + " ".join(flags),
        )
    ]


def _os_user(facts: Facts, target: Target) -> list[Finding]:
    c = OS_USER
    if facts.driver is None or facts.container.in_container:
        return [c.finding("skip", "only checked on a host with the NPU driver installed")]
    if facts.os.hwhiaiuser_user and facts.os.hwhiaiuser_group:
        return [c.finding("pass", "HwHiAiUser user and group exist")]
    return [
        c.finding(
            "warn",
            "the HwHiAiUser user or group is missing (the driver runs its services as it)",
            "groupadd HwHiAiUser && useradd -g HwHiAiUser -d /home/HwHiAiUser -m HwHiAiUser -s /bin/bash",
        )
    ]


PROBE_FILES = Check(
    "probe-files",
    "install files readable and well-formed",
    "An empty, truncated or binary version file, a dangling link or a directory in its place means a broken "
    "install; cannenv names the path and judges the rest.",
    "high",
    _probe_files,
)
ENV_SOURCED = Check(
    "env-sourced",
    "CANN environment set (set_env.sh sourced)",
    "torch_npu and CANN tools find CANN through ASCEND_HOME_PATH, ASCEND_OPP_PATH and LD_LIBRARY_PATH; without "  # noqa: E501
    "them `import torch_npu` fails with `libhccl.so: cannot open shared object file`.",
    "critical",
    _env_sourced,
)
ENV_STALE = Check(
    "env-stale",
    "environment points at installed versions",
    "Variables left over from a removed or other CANN version make torch_npu load the wrong libraries "
    "(`ASCEND_HOME_PATH : … does not exist`).",
    "high",
    _env_stale,
)
ENV_MIXED = Check(
    "env-mixed",
    "one CANN version per path list",
    "Sourcing two set_env.sh files mixes two CANN versions in LD_LIBRARY_PATH/PATH/PYTHONPATH; the loader "
    "then picks libraries from both.",
    "high",
    _env_mixed,
)
NPU_DEVICES = Check(
    "npu-devices",
    "NPUs visible and healthy",
    "npu-smi must answer and every chip report OK; -8005/-8020 in a container means the device is busy or "
    "not passed in.",
    "critical",
    _npu_devices,
    scope="device",
)
CONTAINER_MOUNTS = Check(
    "container-mounts",
    "container has the NPU devices and driver mounts",
    "Images carry no driver: the container needs the device nodes and the host's driver lib64, version.info, "
    "dcmi and npu-smi (the vendor's `docker run` recipe).",
    "critical",
    _container_mounts,
    scope="device",
)
OS_USER = Check(
    "os-user",
    "HwHiAiUser account present",
    "The driver and CANN installers expect the HwHiAiUser user and group.",
    "low",
    _os_user,
)
CHECKS_FIRST = (PROBE_FILES,)
CHECKS = (ENV_SOURCED, ENV_STALE, ENV_MIXED, NPU_DEVICES, CONTAINER_MOUNTS, OS_USER)
