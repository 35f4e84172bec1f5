"""The one pure-Python fleet bundle on hosts whose Python is not the controller's: real SSH, real Ansible.

Hosts are containers of the local Docker engine made from Debian images without a registry
(debootstrap + `docker import`), each running sshd on its own loopback port with host networking and
an Ascend host tree (a fixture in real formats, tests/helpers/fleet_hosts.py):

* Debian trixie (fixture ``trixie_image``, tests/integration/bases.sh): python3 is CPython 3.13,
  the controller here runs 3.11. `cannenv fleet collect` pushes the same bundle it would push
  anywhere (no per-Python build, nothing downloaded) and must collect facts there.
* Debian bullseye (fixture ``bullseye_image``): python3 is CPython 3.9, the
  Python of openEuler 22.03 LTS and older than the package's 3.10. The same bundle collects its facts
  there (the facts path stays 3.7-compatible: tests/unit/test_py37.py); older Debian suites that ship
  3.7/3.8 are no longer served, so those versions run the bundle locally (test_fleet_bundle.py).
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

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@dataclass
class Host:
    name: str
    container: str
    port: int
    python: str
    inventory: Path


@contextmanager
def _ssh_host(image: str, name: str, work: Path) -> Iterator[Host]:
    """A container of ``image`` (Debian with sshd, a conftest fixture) serving SSH with a fixture tree."""
    problem = engine_problem()
    if problem:
        pytest.skip(f"fleet hosts need Docker, ssh and ansible-runner: {problem}")
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
def trixie(trixie_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    work = tmp_path_factory.mktemp("trixie")
    with _ssh_host(trixie_image, "trixie-1", work) as host:
        yield host


@pytest.fixture(scope="module")
def bullseye(bullseye_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    work = tmp_path_factory.mktemp("bullseye")
    with _ssh_host(bullseye_image, "bullseye-1", work) as host:
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


def test_a_host_with_python_3_9_collects_facts(bullseye: Host, tmp_path: Path) -> None:
    """openEuler 22.03's Python: the one bundle runs there, through the role, over real SSH."""
    assert bullseye.python.startswith("Python 3.9."), bullseye.python
    version = bullseye.python.split()[1]
    manifest = _collect(bullseye, tmp_path / "facts")
    (entry,) = manifest["hosts"]
    assert entry["status"] == "collected", entry
    proc = _cannenv("fleet", "bundle", "--out", str(tmp_path / "cannenv.pyz"))
    assert proc.returncode == 0, proc.stderr
    assert manifest["bundle_sha256"] == sha256_file(tmp_path / "cannenv.pyz")
    facts = json.loads((tmp_path / "facts" / f"{bullseye.name}.json").read_text())
    assert facts["python"]["version"] == version and facts["python"]["interpreter"] == "/usr/bin/python3"
    assert facts["driver"]["version"] == "25.0.rc1.1"
    assert facts["cann"]["active"] == "/usr/local/Ascend/ascend-toolkit/8.2.RC1"
    assert facts["os"]["distro_id"] == "debian" and facts["os"]["distro_version"] == "11"
    assert facts["issues"] == [], facts["issues"]
    # and judged by this controller like any other host
    report = _cannenv("fleet", "report", str(tmp_path / "facts"), "--json")
    assert report.returncode in (0, 1), report.stderr
    assert bullseye.name in json.loads(report.stdout)["nodes"][0].values()
