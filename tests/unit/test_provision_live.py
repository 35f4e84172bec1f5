"""`cannenv provision` shows each host's state while it runs, and Ctrl-C leaves every host a true state.

Real ``ansible-playbook`` (through ansible-runner, as in production) over ``ansible_connection=local``
hosts: three inventory names for this machine, each with its own marker and work folder. The plans
are reviewed plans (``--plan``) whose steps are plain shell lines (``echo ok``, ``sleep 6``, ``exit 3``),
made for the facts this machine reports, so the whole command runs: facts before, preflight,
rollout in batches, facts after, the doctor's verdict. stderr is read as it comes, from a pipe and
from a pseudo-terminal; stdout (``--json``) must not depend on which.
The same views run over SSH hosts: the failure before the next batch and Ctrl-C twice in
tests/integration/test_provision_live_hosts.py, the streams from a pipe and a pseudo-terminal in
tests/integration/test_provision_mixed.py.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers.provision import reviewed_plan
from tests.helpers.streams import start

pytest.importorskip("ansible_runner")

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Site:
    inventory: Path
    artifacts: Path
    markers: dict[str, Path]
    facts: Path


@pytest.fixture(scope="module")
def collected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's facts as the facts role reports them (the plans are made for them)."""
    work = tmp_path_factory.mktemp("live-facts")
    inv = work / "inventory.ini"
    inv.write_text(f"h1 ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    run = start(["fleet", "collect", "-i", str(inv), "--out", str(work / "facts")], terminal=False)
    assert run.wait() == 0, "\n".join(run.err.texts())
    assert any("h1" in t and "collected (" in t for t in run.err.texts())
    return work / "facts" / "h1.json"


def site(tmp: Path, collected: Path) -> Site:
    markers = {h: tmp / f"marker-{h}" for h in ("h1", "h2", "h3")}
    lines = [
        "[all:vars]",
        "ansible_connection=local",
        f"ansible_python_interpreter={sys.executable}",
        "[nodes]",
    ]
    lines += [
        f"{h} cannenv_step_failed_marker={m} cannenv_step_dir={tmp / ('work-' + h)}"
        for h, m in markers.items()
    ]
    inventory = tmp / "inventory.ini"
    inventory.write_text("\n".join(lines) + "\n")
    (tmp / "artifacts").mkdir()
    return Site(inventory, tmp / "artifacts", markers, collected)


def plan_file(s: Site, steps: dict[str, list[str]], path: Path) -> Path:
    return reviewed_plan(path, steps, lambda _host: s.facts)  # one machine: the same facts for all


FAILING = {"h1": ["echo ok", "exit 3"], "h2": ["echo ok", "echo ok"], "h3": ["echo ok"]}


def provision_args(s: Site, plan: Path, *extra: str) -> list[str]:
    return ["provision", "-i", str(s.inventory), "--plan", str(plan), "--artifacts", str(s.artifacts), *extra]


def test_a_rollout_streams_each_host_and_reports_a_failure_before_the_next_batch(
    tmp_path: Path, collected: Path
) -> None:
    s = site(tmp_path, collected)
    plan = plan_file(s, FAILING, tmp_path / "plan.json")
    run = start(provision_args(s, plan, "--serial", "2", "--max-fail", "100%", "--json"), terminal=False)
    assert run.wait() == 1
    err = run.err
    first = err.index("h1  step 1 (1/2) cann install: started")
    assert err.lines[first][1], "the first host's step line came only after the run had ended"
    failed = err.index("h1  FAILED at step 2 (2/2): cann install exited 3")
    assert err.lines[failed][1]
    verdict = err.index("batch 1 verdict: 1 of 2 ran every step; 1 stopped (h1) — the next batch starts")
    assert (
        failed
        < verdict
        < err.index("batch 2: 1 host: h3")
        < err.index("h3  step 1 (1/1) cann install: started")
    )
    assert all(not t.startswith("{") for t in err.texts()), "the JSON report went to stderr"
    report = {h["name"]: h for h in json.loads(bytes(run.stdout))["hosts"]}
    assert (report["h1"]["status"], report["h1"]["failed_step"], report["h1"]["steps_done"]) == (
        "failed",
        2,
        [1],
    )
    assert report["h2"]["steps_done"] == [1, 2] and report["h3"]["steps_done"] == [1]
    assert s.markers["h1"].read_text().startswith("step 2: cann install exited 3")

    # the same rollout with stdout and stderr on a terminal: the same JSON, byte for byte
    s.markers["h1"].unlink()
    tty = start(provision_args(s, plan, "--serial", "2", "--max-fail", "100%", "--json"), terminal=True)
    assert tty.wait() == 1
    assert bytes(tty.stdout) == bytes(run.stdout)
    assert any("FAILED at step 2 (2/2)" in t for t in tty.err.texts())


def test_quiet_prints_only_the_report(tmp_path: Path, collected: Path) -> None:
    s = site(tmp_path, collected)
    plan = plan_file(s, {"h3": ["echo ok"]}, tmp_path / "plan.json")
    run = start(provision_args(s, plan, "--quiet"), terminal=False)
    run.wait()
    assert run.err.texts() == [], run.err.texts()
    assert b"h3" in bytes(run.stdout)


def test_ctrl_c_twice_stops_between_steps_and_every_host_has_a_true_state(
    tmp_path: Path, collected: Path
) -> None:
    s = site(tmp_path, collected)
    plan = plan_file(
        s, {"h1": ["sleep 6", "echo ok"], "h2": ["echo ok"], "h3": ["echo ok"]}, tmp_path / "plan.json"
    )
    run = start(provision_args(s, plan, "--serial", "1", "--json"), terminal=False)
    run.err.wait_for("h1  step 1 (1/2) cann install: started", run.proc)
    run.proc.send_signal(signal.SIGINT)
    run.err.wait_for("interrupt: no new batch will start", run.proc)
    run.proc.send_signal(signal.SIGINT)
    run.err.wait_for("interrupt: no new step will start", run.proc)
    started = time.monotonic()
    assert run.wait() == 1
    assert time.monotonic() - started < 600
    report = {h["name"]: h for h in json.loads(bytes(run.stdout))["hosts"]}
    h1 = report["h1"]
    assert (h1["status"], h1["failed_step"], h1["steps_done"]) == ("failed", 2, [1]), h1
    assert "interrupted" in h1["reason"] and "marked half-installed" in h1["reason"]
    assert s.markers["h1"].read_text().startswith("interrupted before step 2 (cann install)")
    for name in ("h2", "h3"):
        assert report[name]["status"] == "not-run", report[name]
        assert "interrupted the rollout (Ctrl-C) before its batch" in report[name]["reason"]
        assert not s.markers[name].exists()
    assert any("not reached by the rollout: h2, h3" in t for t in run.err.texts())
