"""The all-reduce harness across three Debian containers over SSH: real Ansible, real gloo, real CPU torch.

Hosts: three containers of the fleet host image (tests/helpers/fleet_hosts.py: Debian bookworm,
sshd, an Ascend host tree in real formats), each its own filesystem and Python 3.11. CPU torch comes
from the controller's own site-packages (the machine has no index for the CPU torch wheel), mounted
read-only into each container and put on PYTHONPATH for the harness. `cannenv fleet collective`
starts one rank per container through Ansible; the ranks meet over TCP and all-reduce with gloo.
The result must say it is gloo only; the HCCL path is `skip` with the node's own reason.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import Fleet, HostSpec, engine_problem, start_fleet

from cannenv.fleet.collective import GLOO_NOTE

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]
TORCH_IN_HOST = "/opt/cannenv-torch"


def _torch_site() -> Path:
    torch = pytest.importorskip("torch")
    if sys.version_info[:2] != (3, 11):
        pytest.skip(
            "the containers run Debian bookworm's Python 3.11: CPU torch is lent from a 3.11 controller"
        )
    return Path(torch.__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def job(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    problem = engine_problem()
    if problem:
        pytest.skip(f"fleet hosts need Docker, ssh and ansible-runner: {problem}")
    site = _torch_site()
    work = tmp_path_factory.mktemp("collective")
    running = start_fleet(
        work,
        tuple(HostSpec(f"rank-{i}") for i in range(3)),
        prefix="cannenv-collective",
        docker_args=("-v", f"{site}:{TORCH_IN_HOST}:ro"),
    )
    try:
        yield running
    finally:
        running.remove()


def _collective(fleet: Fleet, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-m", "cannenv", "fleet", "collective", "-i", str(fleet.inventory),
            "--master-addr", "127.0.0.1", "--master-port", str(_free_port()), "--python", "python3",
            "--env", f"PYTHONPATH={TORCH_IN_HOST}", "--env", "TORCH_DEVICE_BACKEND_AUTOLOAD=0",
            "--json", *args,
        ],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


def test_gloo_all_reduce_across_three_containers(job: Fleet) -> None:
    res = _collective(job, "--backend", "gloo", "--size-mb", "1", "--iters", "3")
    assert res.returncode == 0, res.stdout + res.stderr
    got = json.loads(res.stdout)
    assert got["status"] == "pass" and got["detail"].startswith(GLOO_NOTE)
    figures = got["figures"]
    assert (figures["world_size"], figures["nnodes"], figures["correct"]) == (3, 3, True)
    assert figures["torch"].endswith("+cpu") and figures["busbw_gbps"] > 0
    assert got["hosts"] == {"rank-0": "ok", "rank-1": "ok", "rank-2": "ok"}


def test_hccl_in_the_containers_is_skip_with_the_reason(job: Fleet) -> None:
    res = _collective(job, "--backend", "hccl")
    assert res.returncode == 0, res.stdout + res.stderr
    got = json.loads(res.stdout)
    assert got["status"] == "skip"
    assert "torch_npu cannot be imported here" in got["detail"]
