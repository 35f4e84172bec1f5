"""The one pure-Python fleet bundle on hosts whose Python is not the controller's: real SSH, real Ansible.

Hosts are containers of the local Docker engine made from Debian images without a registry
(debootstrap + `docker import`), each running sshd on its own loopback port with host networking and
an Ascend host tree (a fixture in real formats, tests/helpers/fleet_hosts.py):

* Debian trixie (tests/integration/fleet_base_debian.sh trixie): python3 is CPython 3.13, the controller here
  runs 3.11. `cannenv fleet collect` pushes the same bundle it would push anywhere (no per-Python
  build, nothing downloaded) and must collect facts there.
* Debian bullseye (tests/integration/fleet_base_debian.sh bullseye): python3 is CPython 3.9, too old. The
  collector records `no-python` naming what it found, and the bundle run there by hand refuses with
  `cannenv-bundle: python-mismatch: ...` (exit 3) naming the host's Python and what is needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import (
    HostSpec,
    build_tree,
    docker,
    engine_problem,
    free_port,
    root_owned,
    wait_ssh,
)

from cannenv.fleet.zipapp import BUNDLE_TAG
from cannenv.fsutil import sha256_file

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TRIXIE_IMAGE = os.environ.get("CANNENV_FLEET_TRIXIE_IMAGE", "cannenv-test/fleet-host:trixie")
BULLSEYE_IMAGE = os.environ.get("CANNENV_FLEET_BULLSEYE_IMAGE", "cannenv-test/fleet-host:bullseye")
SETUP = Path(__file__).with_name("fleet_base_debian.sh")


@dataclass
class Host:
    name: str
    container: str
    port: int
    python: str
    inventory: Path


@contextmanager
def _ssh_host(image: str, suite: str, name: str, work: Path) -> Iterator[Host]:
    """A container of ``image`` serving SSH with a fixture tree; the image (Debian ``suite``) is made
    by fleet_base_debian.sh when missing."""
    problem = engine_problem()
    if problem:
        pytest.skip(f"fleet hosts need Docker, ssh and ansible-runner: {problem}")
    made = subprocess.run(
        ["bash", str(SETUP), suite, image], capture_output=True, text=True, timeout=900, check=False
    )
    if made.returncode != 0:
        pytest.skip(f"{SETUP.name} could not make {image} ({made.returncode}): {made.stderr.strip()[-600:]}")
    python = docker("run", "--rm", "--network", "none", image, "python3", "-V").stdout.strip()
    key = work / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=60)
    port = free_port()
    container = f"cannenv-fleet-bundle-{name}-{os.getpid()}-{int(time.time())}"
    sshd = (
        "ssh-keygen -A >/dev/null && mkdir -p /run/sshd && exec /usr/sbin/sshd -D -e "
        f"-p {port} -o ListenAddress=127.0.0.1 -o PasswordAuthentication=no"
    )
    docker(
        "create",
        "--name",
        container,
        "--network",
        "host",
        "--label",
        "cannenv-fleet-test",
        image,
        "sh",
        "-c",
        sshd,
    )
    try:
        tree = build_tree(HostSpec(name), work / "tree")
        (tree / "root/.ssh").mkdir(parents=True)
        (tree / "root/.ssh/authorized_keys").write_text((work / "id_ed25519.pub").read_text())
        archive = work / "tree.tar"
        with tarfile.open(archive, "w") as tf:
            for child in sorted(tree.iterdir()):
                tf.add(child, arcname=child.name, filter=root_owned)
        with archive.open("rb") as fh:
            subprocess.run(["docker", "cp", "-", f"{container}:/"], stdin=fh, check=True, timeout=120)
        docker("start", container)
        wait_ssh(port)
        inventory = work / "inventory.ini"
        inventory.write_text(
            "[ascend]\n"
            f"{name} ansible_host=127.0.0.1 ansible_port={port} ansible_user=root "
            f"ansible_ssh_private_key_file={key} "
            "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n"
        )
        yield Host(name, container, port, python, inventory)
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def trixie(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    work = tmp_path_factory.mktemp("trixie")
    with _ssh_host(TRIXIE_IMAGE, "trixie", "trixie-1", work) as host:
        yield host


@pytest.fixture(scope="module")
def bullseye(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    work = tmp_path_factory.mktemp("bullseye")
    with _ssh_host(BULLSEYE_IMAGE, "bullseye", "bullseye-1", work) as host:
        yield host


def _cannenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=600, check=False
    )


def _collect(host: Host, out: Path, *args: str) -> dict:  # type: ignore[type-arg]
    proc = _cannenv("fleet", "collect", "-i", str(host.inventory), "--out", str(out), *args, "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_a_host_with_another_python_collects_facts(trixie: Host, tmp_path: Path) -> None:
    assert trixie.python.startswith("Python 3.13"), trixie.python
    assert sys.version_info[:2] != (3, 13), "the controller must run another Python than the host"
    manifest = _collect(trixie, tmp_path / "facts")
    (entry,) = manifest["hosts"]
    assert entry["status"] == "collected", entry
    assert manifest["bundle_tag"] == BUNDLE_TAG == "py3-none-any"
    # the very bundle `fleet bundle` makes here, for every host
    proc = _cannenv("fleet", "bundle", "--out", str(tmp_path / "cannenv.pyz"))
    assert proc.returncode == 0, proc.stderr
    assert manifest["bundle_sha256"] == sha256_file(tmp_path / "cannenv.pyz")
    facts = json.loads((tmp_path / "facts" / f"{trixie.name}.json").read_text())
    assert facts["python"]["version"].startswith("3.13.") and facts["python"]["interpreter"].startswith(
        "/usr/"
    )
    assert facts["driver"]["version"] == "25.0.rc1.1"
    assert facts["os"]["distro_id"] == "debian"


def test_a_host_whose_python_is_too_old(bullseye: Host, tmp_path: Path) -> None:
    """Through the role the host is `no-python` (it looks for 3.10+ first); by hand the bundle says why."""
    assert bullseye.python.startswith("Python 3.9."), bullseye.python
    version = bullseye.python.split()[1]
    manifest = _collect(bullseye, tmp_path / "facts")
    (entry,) = manifest["hosts"]
    assert entry["status"] == "no-python", entry
    assert "no Python >= 3.10 on the host" in entry["reason"] and f"Python {version}" in entry["reason"]
    assert not (tmp_path / "facts" / f"{bullseye.name}.json").exists()

    bundle = tmp_path / "cannenv.pyz"
    proc = _cannenv("fleet", "bundle", "--out", str(bundle))
    assert proc.returncode == 0, proc.stderr
    docker("cp", str(bundle), f"{bullseye.container}:/tmp/cannenv.pyz")
    run = docker("exec", bullseye.container, "python3", "/tmp/cannenv.pyz", "facts", "--json", check=False)
    assert run.returncode == 3, (run.returncode, run.stdout, run.stderr)
    assert run.stderr == (
        f"cannenv-bundle: python-mismatch: the host runs CPython {version} (/usr/bin/python3); "
        "cannenv needs Python >= 3.10: install a newer python3 there\n"
    )
    assert run.stdout == ""
