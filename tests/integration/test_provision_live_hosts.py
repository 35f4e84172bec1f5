"""Issue 35 over SSH: a failing host is reported before the next batch starts, and Ctrl-C leaves
every host a true state — the same views as tests/unit/test_provision_live.py, with real Ansible
over real SSH to three bare Debian containers instead of local connections.

The plans are reviewed plans (``--plan``) whose steps are plain shell lines (``echo ok``,
``sleep 8``, ``exit 3``), made for the facts each host reported, so the whole command runs: facts
before, preflight, rollout in batches, facts after. stderr is read through a pipe as it comes.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import Fleet, engine_problem, start_fleet
from helpers.provision import bare, reviewed_plan
from helpers.streams import start

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NAMES = ("n1", "n2", "n3")


@pytest.fixture(scope="module")
def fleet(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    problem = engine_problem()
    if problem:
        pytest.skip(f"SSH hosts need Docker, ssh and ansible-runner: {problem}")
    work = tmp_path_factory.mktemp("live-hosts")
    running = start_fleet(
        work, tuple(bare(n) for n in NAMES), label="cannenv-live-test", prefix="cannenv-live"
    )
    try:
        yield running
    finally:
        running.remove()


@pytest.fixture(scope="module")
def collected(fleet: Fleet) -> Path:
    out = fleet.work / "facts"
    argv = [sys.executable, "-m", "cannenv", "fleet", "collect", "-i", str(fleet.inventory)]
    proc = subprocess.run(
        [*argv, "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def _plan(collected: Path, steps: dict[str, list[str]], path: Path) -> Path:
    return reviewed_plan(path, steps, lambda host: collected / f"{host}.json")


def _args(fleet: Fleet, plan: Path, out: Path, *extra: str) -> list[str]:
    artifacts = fleet.work / "artifacts"
    artifacts.mkdir(exist_ok=True)
    argv = ["provision", "-i", str(fleet.inventory), "--plan", str(plan), "--artifacts", str(artifacts)]
    return [*argv, "--out", str(out), "--json", *extra]


def test_a_failing_host_is_reported_before_the_next_batch_starts(fleet: Fleet, collected: Path) -> None:
    plan = _plan(
        collected,
        {"n1": ["echo ok", "exit 3"], "n2": ["echo ok", "echo ok"], "n3": ["echo ok"]},
        fleet.work / "plan-fail.json",
    )
    run = start(
        _args(fleet, plan, fleet.work / "run-fail", "--serial", "2", "--max-fail", "100%"), terminal=False
    )
    assert run.wait(900) == 1, "\n".join(run.err.texts())
    err = run.err
    failed = err.index("n1  FAILED at step 2 (2/2): cann install exited 3")
    assert err.lines[failed][1], "the failure was shown only after the run had ended"
    verdict = err.index("batch 1 verdict: 1 of 2 ran every step; 1 stopped (n1) — the next batch starts")
    assert (
        failed
        < verdict
        < err.index("batch 2: 1 host: n3")
        < err.index("n3  step 1 (1/1) cann install: started")
    )
    report = {h["name"]: h for h in json.loads(bytes(run.stdout))["hosts"]}
    assert (report["n1"]["status"], report["n1"]["failed_step"], report["n1"]["steps_done"]) == (
        "failed",
        2,
        [1],
    )
    assert report["n2"]["steps_done"] == [1, 2] and report["n3"]["steps_done"] == [1]


def test_ctrl_c_twice_leaves_every_host_a_true_state(fleet: Fleet, collected: Path) -> None:
    # n1 stopped half way in the previous test: its marker keeps it from running again; n2 and n3 go
    plan = _plan(collected, {"n2": ["sleep 8", "echo ok"], "n3": ["echo ok"]}, fleet.work / "plan-int.json")
    run = start(_args(fleet, plan, fleet.work / "run-int", "--serial", "1"), terminal=False)
    run.err.wait_for("n2  step 1 (1/2) cann install: started", run.proc)
    run.proc.send_signal(signal.SIGINT)
    run.err.wait_for("interrupt: no new batch will start", run.proc)
    run.proc.send_signal(signal.SIGINT)
    run.err.wait_for("interrupt: no new step will start", run.proc)
    assert run.wait(900) == 1
    report = {h["name"]: h for h in json.loads(bytes(run.stdout))["hosts"]}
    n2 = report["n2"]
    assert (n2["status"], n2["failed_step"], n2["steps_done"]) == ("failed", 2, [1]), n2
    assert "interrupted" in n2["reason"] and "marked half-installed" in n2["reason"]
    assert report["n3"]["status"] == "not-run", report["n3"]
    assert "interrupted the rollout (Ctrl-C) before its batch" in report["n3"]["reason"]
    assert any("not reached by the rollout: n3" in t for t in run.err.texts())
    # the marker is on the host: the next run refuses n2 and names the step it stopped before
    again = _plan(collected, {"n2": ["echo ok"]}, fleet.work / "plan-again.json")
    run = start(_args(fleet, again, fleet.work / "run-again"), terminal=False)
    assert run.wait(900) == 1
    (n2,) = json.loads(bytes(run.stdout))["hosts"]
    assert (n2["status"], n2["cause"]) == ("not-run", "half-installed"), n2
