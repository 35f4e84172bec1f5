"""`cannenv fleet collective`: the all-reduce harness, run for real with CPU torch (gloo) on this
machine, by Ansible over three local-connection inventory hosts; HCCL here is `skip` with its reason.
(Across three Debian containers over SSH: tests/integration/test_collective_hosts.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv.fleet import collective_worker
from cannenv.fleet.collective import GLOO_NOTE, MARKER
from tests.helpers.cli import cannenv

pytest.importorskip("torch")
pytest.importorskip("ansible_runner")
WORKER = Path(collective_worker.__file__)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _result(stdout: str) -> dict:  # type: ignore[type-arg]
    [line] = [x for x in stdout.splitlines() if x.startswith(MARKER)]
    return json.loads(line[len(MARKER) :])  # type: ignore[no-any-return]


@pytest.mark.slow
def test_harness_all_reduces_on_two_local_ranks() -> None:
    argv = [
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(_free_port()),
        "--nnodes",
        "1",
        "--node-rank",
        "0",
    ]
    proc = subprocess.run(
        [sys.executable, str(WORKER), *argv, "--nproc-per-node", "2", "--size-mb", "0.5", "--iters", "2"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = _result(proc.stdout)
    assert (got["status"], got["backend"], got["world_size"], got["correct"]) == ("pass", "gloo", 2, True)
    assert got["size_bytes"] == 524288 and got["algbw_gbps"] > 0


def test_hccl_without_an_npu_is_a_skip_with_the_reason() -> None:
    proc = subprocess.run(
        [sys.executable, str(WORKER), "--backend", "hccl", "--master-addr", "127.0.0.1",
         "--nnodes", "1", "--node-rank", "0"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0
    got = _result(proc.stdout)
    assert got["status"] == "skip" and "torch_npu" in got["reason"]


def _inventory(tmp_path: Path, extra: str = "") -> Path:
    inv = tmp_path / "inventory.ini"
    lines = ["[job]"] + [
        f"n{i} ansible_host=127.0.0.1 ansible_connection=local ansible_python_interpreter={sys.executable}"
        for i in range(3)
    ]
    inv.write_text("\n".join(lines) + "\n" + extra)
    return inv


@pytest.mark.slow
def test_ansible_starts_the_ranks_on_every_host_gloo(tmp_path: Path) -> None:
    res = cannenv(
        "fleet", "collective", "-i", str(_inventory(tmp_path)), "--backend", "gloo",
        "--master-port", str(_free_port()), "--python", sys.executable,  # master: n0's ansible_host
        "--size-mb", "0.5", "--iters", "2", "--json",
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    got = json.loads(res.stdout)
    assert got["status"] == "pass" and got["detail"].startswith(GLOO_NOTE)
    assert got["figures"]["world_size"] == 3 and got["figures"]["nnodes"] == 3
    assert got["hosts"] == {"n0": "ok", "n1": "ok", "n2": "ok"}


@pytest.mark.slow
def test_ansible_hccl_here_is_skip_never_pass(tmp_path: Path) -> None:
    res = cannenv(
        "fleet", "collective", "-i", str(_inventory(tmp_path)), "--backend", "hccl",
        "--master-addr", "127.0.0.1", "--python", sys.executable,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("SKIP  collective (hccl): hccl not run: torch_npu cannot be imported")
    assert "      n0: skip\n" in res.stdout and ": ok" not in res.stdout


def test_a_skipped_collective_says_skip_for_each_host() -> None:
    """FIXTURE Ansible events (the shape ansible-runner gives): every host ran the harness and rank 0
    printed a skip, so each host line says skip, never ok."""
    from cannenv.fleet.collective import result_from_events

    payload = MARKER + json.dumps({"status": "skip", "reason": "torch_npu cannot be imported"})
    events = [
        {
            "event": "runner_on_ok",
            "event_data": {
                "host": host,
                "task": "Run the harness (one process per device)",
                "res": {"stdout": payload if host == "h0" else ""},
            },
        }
        for host in ("h0", "h1")
    ]
    got = result_from_events(events, "hccl")
    assert got.status == "skip" and got.hosts == {"h0": "skip", "h1": "skip"}


@pytest.mark.slow
def test_an_unreachable_rank_fails_the_collective(tmp_path: Path) -> None:
    port = _free_port()  # nothing listens there: SSH is refused
    extra = f"down ansible_host=127.0.0.1 ansible_port={port} ansible_user=root\n"
    res = cannenv(
        "fleet", "collective", "-i", str(_inventory(tmp_path, extra)), "--backend", "gloo", "--master-addr",
        "127.0.0.1", "--master-port", str(_free_port()), "--python", sys.executable, "--timeout", "10",
    )  # fmt: skip
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout.startswith("FAIL  collective (gloo): the collective did not complete")
    assert "down: unreachable" in res.stdout


def test_bad_options_are_bad_input(tmp_path: Path) -> None:
    inv = _inventory(tmp_path)
    assert cannenv("fleet", "collective", "-i", str(inv), "--env", "1X=y").returncode == 2
    assert cannenv("fleet", "collective", "-i", str(inv), "--master-addr", "a b").returncode == 2
    assert cannenv("fleet", "collective", "-i", str(inv), "--python", "python3; reboot").returncode == 2
