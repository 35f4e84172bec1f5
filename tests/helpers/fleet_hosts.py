"""Fleet test hosts: Ascend host trees (test fixtures, real file formats) served over real SSH.

Each host is a container of the local Docker engine (host networking, no registry) running sshd on
its own loopback port, with a filesystem laid out as an Ascend host: driver/firmware/CANN files in
the formats of research notes §4 (``../shared/research/versions.md``), and for hosts whose
environment is "sourced", an ``/etc/profile.d/ascend.sh`` that sources the toolkit's ``set_env.sh``
(§5.1) as sites do. Nothing here is a real CANN install: the trees are fixtures named as such.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .hosts import DRIVER_24_1_RC1, DRIVER_25_0_RC1_1, NPU_SMI_DATA, HostTree, loaded_driver_set

REPO = Path(__file__).resolve().parents[2]
HOST_IMAGE = os.environ.get("CANNENV_FLEET_HOST_IMAGE", "cannenv-test/fleet-host:bookworm")
# re-exported for the fleet tests and benchmarks
__all__ = ["DRIVER_24_1_RC1", "DRIVER_25_0_RC1_1", "FLEET", "HostSpec", "build_tree"]

SET_ENV_SH = """# fixture: the variables of CANN <= 8.3 set_env.sh (research §5.1), in file order
export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver:${LD_LIBRARY_PATH}
export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest
export LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/lib64:${ASCEND_TOOLKIT_HOME}/lib64/plugin/opskernel:${ASCEND_TOOLKIT_HOME}/lib64/plugin/nnengine:${ASCEND_TOOLKIT_HOME}/opp/built-in/op_impl/ai_core/tbe/op_tiling/lib/linux/$(arch):$LD_LIBRARY_PATH
export LD_LIBRARY_PATH=${ASCEND_TOOLKIT_HOME}/tools/aml/lib64:${ASCEND_TOOLKIT_HOME}/tools/aml/lib64/plugin:$LD_LIBRARY_PATH
export PYTHONPATH=${ASCEND_TOOLKIT_HOME}/python/site-packages:${ASCEND_TOOLKIT_HOME}/opp/built-in/op_impl/ai_core/tbe:$PYTHONPATH
export PATH=${ASCEND_TOOLKIT_HOME}/bin:${ASCEND_TOOLKIT_HOME}/compiler/ccec_compiler/bin:${ASCEND_TOOLKIT_HOME}/tools/ccec_compiler/bin:$PATH
export ASCEND_AICPU_PATH=${ASCEND_TOOLKIT_HOME}
export ASCEND_OPP_PATH=${ASCEND_TOOLKIT_HOME}/opp
export TOOLCHAIN_HOME=${ASCEND_TOOLKIT_HOME}/toolkit
export ASCEND_HOME_PATH=${ASCEND_TOOLKIT_HOME}
"""  # noqa: E501


@dataclass(frozen=True)
class HostSpec:
    """One fixture host: what its tree holds and how it misbehaves."""

    name: str
    driver: str = DRIVER_25_0_RC1_1
    cann: str = "8.2.RC1"
    kernels_version_dir: str = "8.2.RC1"
    kernels_chip: str = "910b"
    env_sourced: bool = True
    python: bool = True
    stopped: bool = False
    extra: dict[str, str] = field(default_factory=dict)
    bare: bool = False
    """No Ascend files at all: only ``extra`` (for provisioning tests)."""
    boot: str = ""
    """A shell command run at every start of the container, before sshd: what the machine's boot
    does (e.g. :data:`BOOT`, the driver loaded at boot)."""


FLEET: tuple[HostSpec, ...] = (
    HostSpec("healthy-1"),
    HostSpec("healthy-2"),
    HostSpec("old-driver", driver=DRIVER_24_1_RC1),
    HostSpec("wrong-kernels", kernels_version_dir="8.1.RC1", kernels_chip="310p"),
    HostSpec("env-not-sourced", env_sourced=False),
    HostSpec("no-python", python=False),
    HostSpec("down", stopped=True),
)


def build_tree(spec: HostSpec, root: Path, *, arch: str = "x86_64") -> Path:
    """Lay out ``spec`` under ``root`` with tests/helpers/hosts.py's builder (a fixture: real file
    formats, no real binaries), plus a ``set_env.sh`` a login shell really sources."""
    if spec.bare:
        for rel, text in spec.extra.items():
            HostTree(root, arch=arch).write(rel, text)
        return root
    tree = HostTree(root, arch=arch).driver(spec.driver, accounts=False)
    tree.toolkit(spec.cann, kernels=spec.kernels_chip, kernels_version=spec.kernels_version_dir, records=True)
    tree.write("/usr/local/Ascend/ascend-toolkit/set_env.sh", SET_ENV_SH)
    if spec.env_sourced:
        tree.write("/etc/profile.d/ascend.sh", ". /usr/local/Ascend/ascend-toolkit/set_env.sh\n")
    for rel, text in spec.extra.items():
        tree.write(rel, text)
    return root


def free_port() -> int:
    """A loopback port nobody listens on, below the kernel's ephemeral range (32768-60999 by
    default), so no outgoing connection of another test (ssh, docker, ansible) can take it between
    now and the moment our server binds it; randomised so concurrent workers rarely pick alike."""
    for _ in range(200):
        port = random.randrange(20000, 32768)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def docker(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def engine_problem() -> str | None:
    """Why the fleet tests cannot run here, or None."""
    if shutil.which("docker") is None:
        return "docker CLI not installed (apt-get install docker.io)"
    if shutil.which("ssh") is None:
        return "ssh client not installed (apt-get install openssh-client)"
    try:
        import ansible_runner  # noqa: F401
    except ImportError:
        return "ansible-runner not installed (pip install 'cannenv[fleet]')"
    try:
        proc = subprocess.run(["docker", "version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker engine not reachable: {exc}"
    if proc.returncode != 0:
        return f"docker engine not reachable: {proc.stderr.strip().splitlines()[-1:]}"
    return None


def ensure_host_image() -> None:
    """Make the sshd host image (registry-free; the tests' one amd64 base) if missing:
    tests/integration/bases.sh, which waits for a build under way elsewhere."""
    if docker("image", "inspect", HOST_IMAGE, check=False).returncode == 0:
        return
    proc = subprocess.run(
        ["bash", str(REPO / "tests/integration/bases.sh"), "bookworm"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bases.sh bookworm failed ({proc.returncode}): {proc.stderr[-2000:]}")


@dataclass
class RunningHost:
    spec: HostSpec
    container: str
    port: int


@dataclass
class Fleet:
    """The running test fleet: containers, the SSH key and an inventory file."""

    hosts: list[RunningHost]
    key: Path
    inventory: Path
    work: Path

    def inventory_text(self) -> str:
        return self.inventory.read_text()

    def stop(self, name: str) -> None:
        for h in self.hosts:
            if h.spec.name == name:
                docker("stop", "-t", "1", h.container)

    def remove(self) -> None:
        if self.hosts:
            docker("rm", "-f", *(h.container for h in self.hosts), check=False)


HOST_KEY = "/etc/ssh/ssh_host_ed25519_key"
"""Each fleet's hosts share one ed25519 host key made on the controller (clients do not check it):
no RSA key generated in every container at start."""


# --- FIXTURE: the driver loaded at boot ---------------------------------------------------------
# A real node keeps the driver it loaded at boot until it restarts: after a driver upgrade,
# npu-smi's header (the loaded driver) still names the old version while version.info names the new
# one ("reboot pending"). A container host imitates that: at every start (``docker start`` /
# ``docker restart`` is its reboot) BOOT copies the installed driver's version (version.info) into
# LOADED_DRIVER, and the fake npu-smi replays a real capture (tests/data/npu_smi) with its header's
# version lines set to that version (the rows stay as captured). With no driver installed at the
# start no driver is loaded: there is no npu-smi (the driver package brings it), as on a machine
# before its first driver installation.
FIXTURE_DIR = "/usr/local/lib/cannenv-fixture"
LOADED_DRIVER = "/run/cannenv-fixture/loaded-driver"
"""The driver version the host loaded at its last start (BOOT writes it; the fake npu-smi reads it)."""
BOOT = f"sh {FIXTURE_DIR}/boot.sh"
"""HostSpec.boot of a host made with :func:`driver_loaded_at_boot`."""
_LOADED = "@LOADED_DRIVER@"
_BOOT_SH = f"""#!/bin/sh
# cannenv TEST FIXTURE: the driver loaded at boot (tests/helpers/fleet_hosts.py); run at every start
set -e
v="$(sed -n 's/^Version=//p' /usr/local/Ascend/driver/version.info 2>/dev/null | head -n 1)"
mkdir -p "$(dirname {LOADED_DRIVER})"
if [ -n "$v" ]; then
    printf '%s\n' "$v" > {LOADED_DRIVER}
    install -m 0755 {FIXTURE_DIR}/npu-smi /usr/local/bin/npu-smi
else
    rm -f {LOADED_DRIVER} /usr/local/bin/npu-smi
fi
"""
_NPU_SMI_LOADED = f"""#!/bin/sh
# cannenv TEST FIXTURE, not the real npu-smi: replays captured output (tests/data/npu_smi/SOURCES.md)
# whose header names the driver loaded at the host's last start ({LOADED_DRIVER}).
d={FIXTURE_DIR}
v="$(cat {LOADED_DRIVER})" || exit 1
case "$*" in
  "info") sed "s/{_LOADED}/$v/g" "$d/info.txt" ;;
  "info -t board -i "*) if [ -f "$d/board.txt" ]; then cat "$d/board.txt"; else echo "This device does not support querying board." >&2; exit 255; fi ;;
  *) echo "npu-smi fixture: unsupported arguments: $*" >&2; exit 2 ;;
esac
"""  # noqa: E501


def driver_loaded_at_boot(family: str) -> dict[str, str]:
    """The files (HostSpec.extra) of the driver-loaded-at-boot fixture for a host of ``family``,
    whose ``npu-smi info`` is that family's capture with the header's version lines set to the
    loaded driver; the host's spec needs ``boot=BOOT``."""
    info = loaded_driver_set((NPU_SMI_DATA / f"{family}_info.txt").read_text(), _LOADED)
    files = {f"{FIXTURE_DIR}/boot.sh": _BOOT_SH, f"{FIXTURE_DIR}/npu-smi": _NPU_SMI_LOADED}
    files[f"{FIXTURE_DIR}/info.txt"] = info
    board = NPU_SMI_DATA / f"{family}_board.txt"
    if board.exists():
        files[f"{FIXTURE_DIR}/board.txt"] = board.read_text()
    return files


def _sshd_command(spec: HostSpec, port: int) -> str:
    steps = ["mkdir -p /run/sshd"]
    if spec.boot:
        steps.append(spec.boot)
    if not spec.python:
        # a host without Python: remove the interpreter this image carries
        steps.append("rm -f /usr/bin/python3* /usr/local/bin/python3*")
    steps.append(
        f"exec /usr/sbin/sshd -D -e -p {port} -h {HOST_KEY} "
        "-o ListenAddress=127.0.0.1 -o PasswordAuthentication=no"
    )
    return " && ".join(steps)


def start_fleet(
    work: Path,
    specs: tuple[HostSpec, ...] = FLEET,
    *,
    label: str = "cannenv-fleet-test",
    prefix: str = "cannenv-fleet",
    docker_args: tuple[str, ...] = (),
) -> Fleet:
    """Start one container per spec (side by side), wait for every sshd, write an inventory; stop
    the ``stopped`` ones. Containers are named ``PREFIX-HOST-PID-TIME`` and listen on ports of
    their own (``free_port``), so concurrent workers and runs never collide."""
    ensure_host_image()
    key = work / "id_ed25519"
    host_key = work / "ssh_host_ed25519_key"
    for k in (key, host_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(k)], check=True, timeout=60)
    pub = (work / "id_ed25519.pub").read_text()
    suffix = f"{os.getpid()}-{time.time_ns() % 10**10}"
    hosts = [RunningHost(spec, f"{prefix}-{spec.name}-{suffix}", free_port()) for spec in specs]
    fleet = Fleet(hosts, key, work / "inventory.ini", work)

    def start(h: RunningHost) -> None:
        docker(
            "create", "--name", h.container, "--network", "host", "--label", label, *docker_args,
            HOST_IMAGE, "sh", "-c", _sshd_command(h.spec, h.port),
        )  # fmt: skip
        tree = Path(tempfile.mkdtemp(dir=work, prefix=f"tree-{h.spec.name}-"))
        build_tree(h.spec, tree)
        (tree / "root/.ssh").mkdir(parents=True)
        (tree / "root/.ssh/authorized_keys").write_text(pub)
        (tree / HOST_KEY.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(host_key, tree / HOST_KEY.lstrip("/"))
        archive = work / f"{h.spec.name}.tar"
        with tarfile.open(archive, "w") as tf:
            for child in sorted(tree.iterdir()):
                tf.add(child, arcname=child.name, filter=root_owned)
        with archive.open("rb") as fh:
            subprocess.run(["docker", "cp", "-", f"{h.container}:/"], stdin=fh, check=True, timeout=120)
        docker("start", h.container)
        wait_ssh(h.port)

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            for f in [pool.submit(start, h) for h in hosts]:
                f.result()
        lines = ["[ascend]"]
        for h in hosts:
            lines.append(
                f"{h.spec.name} ansible_host=127.0.0.1 ansible_port={h.port} ansible_user=root "
                f"ansible_ssh_private_key_file={key} "
                "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'"
            )
        fleet.inventory.write_text("\n".join(lines) + "\n")
        for h in hosts:
            if h.spec.stopped:
                fleet.stop(h.spec.name)
    except BaseException:
        fleet.remove()
        raise
    return fleet


def root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if info.name.startswith(("root/.ssh", HOST_KEY.lstrip("/"))):
        info.mode = 0o700 if info.isdir() else 0o600
    return info


def wait_ssh(port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"sshd on 127.0.0.1:{port} did not answer within {timeout} s")
