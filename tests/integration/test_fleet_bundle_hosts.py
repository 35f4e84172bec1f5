"""The fleet bundle on a host whose Python is not the controller's: real SSH, real Ansible, real wheels.

The host is a container of the local Docker engine made from Debian trixie (its python3 is CPython
3.13; the controller here runs 3.11) by tests/integration/fleet_base_trixie.sh (debootstrap +
`docker import`, no registry), running sshd on its own loopback port with host networking and an
Ascend host tree (a fixture in real formats, tests/helpers/fleet_hosts.py). `cannenv fleet collect`
builds the bundle for its default targets (pydantic_core wheels from PyPI or the session cache) and
must collect facts there; a bundle built for the controller's tag alone must record the host
`python-mismatch` with the tags it carries and the option that adds the host's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
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

from cannenv.fleet.zipapp import controller_target

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

IMAGE = os.environ.get("CANNENV_FLEET_TRIXIE_IMAGE", "cannenv-test/fleet-host:trixie")
SETUP = Path(__file__).with_name("fleet_base_trixie.sh")
NAME = "trixie-1"


@dataclass
class Host:
    container: str
    port: int
    python: str
    inventory: Path


@pytest.fixture(scope="module")
def host(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    problem = engine_problem()
    if problem:
        pytest.skip(f"fleet hosts need Docker, ssh and ansible-runner: {problem}")
    made = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900, check=False)
    if made.returncode != 0:
        pytest.skip(f"{SETUP.name} could not make {IMAGE} ({made.returncode}): {made.stderr.strip()[-600:]}")
    python = docker("run", "--rm", "--network", "none", IMAGE, "python3", "-V").stdout.strip()
    work = tmp_path_factory.mktemp("trixie")
    key = work / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True, timeout=60)
    port = free_port()
    container = f"cannenv-fleet-bundle-{os.getpid()}-{int(time.time())}"
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
        IMAGE,
        "sh",
        "-c",
        sshd,
    )
    try:
        tree = build_tree(HostSpec(NAME), work / "tree")
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
            f"{NAME} ansible_host=127.0.0.1 ansible_port={port} ansible_user=root "
            f"ansible_ssh_private_key_file={key} "
            "ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'\n"
        )
        yield Host(container, port, python, inventory)
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, timeout=60, check=False)


def _collect(host: Host, out: Path, *args: str) -> dict:  # type: ignore[type-arg]
    argv = [sys.executable, "-m", "cannenv", "fleet", "collect", "-i", str(host.inventory), "--out", str(out)]
    proc = subprocess.run(
        [*argv, *args, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def test_a_host_with_another_python_collects_facts(host: Host, tmp_path: Path) -> None:
    own = controller_target()
    assert host.python.startswith("Python 3.13"), host.python
    assert own.minor != 13, "the controller must run another Python than the host for this test"
    manifest = _collect(host, tmp_path / "facts")
    (entry,) = manifest["hosts"]
    assert entry["status"] == "collected", entry
    carried = manifest["bundle_tag"].split(",")
    assert {f"cp3{m}-{a}" for m in (10, 11, 12, 13) for a in ("x86_64", "aarch64")} <= set(carried)
    facts = json.loads((tmp_path / "facts" / f"{NAME}.json").read_text())
    assert facts["python"]["version"].startswith("3.13.") and facts["python"]["interpreter"].startswith(
        "/usr/"
    )
    assert facts["driver"]["version"] == "25.0.rc1.1"
    assert facts["os"]["distro_id"] == "debian"


def test_a_host_whose_tag_the_bundle_lacks_is_told_how_to_add_it(host: Host, tmp_path: Path) -> None:
    own = controller_target()
    manifest = _collect(host, tmp_path / "facts", "--target", "controller")
    (entry,) = manifest["hosts"]
    assert entry["status"] == "python-mismatch", entry
    host_tag = f"cp313-{own.machine}"
    assert f"the host runs {host_tag}" in entry["reason"]
    assert f"carries native modules for {own.tag} only" in entry["reason"]
    assert f"--target {own.tag},{host_tag}" in entry["reason"]
    assert manifest["bundle_tag"] == own.tag
    assert not (tmp_path / "facts" / f"{NAME}.json").exists()
