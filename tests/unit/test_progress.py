"""cannenv/progress.py and the rollout/collection views (cannenv/fleet/live.py): the pure parts.

The views are fed events of the shape ansible-runner hands its ``event_handler`` (the playbook's
own messages, as ``ansible/playbooks/provision.yml`` and the ``cannenv_step`` role print them);
tests/unit/test_provision_live.py runs the real playbook and reads the stream as it comes.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cannenv.fleet.collect import classify_events
from cannenv.fleet.live import CollectView, Interrupt, RolloutView
from cannenv.progress import Progress, choose_mode, clock


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def ev(kind: str, host: str | None = None, msg: str = "", task: str = "t", **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"task": task, "res": {"msg": msg}, **extra}
    if host is not None:
        data["host"] = host
    return {"event": kind, "event_data": data}


def lines(stream: io.StringIO) -> list[str]:
    """The plain lines without their ``[m:ss]`` prefix."""
    return [ln.split("] ", 1)[1] for ln in stream.getvalue().splitlines()]


@pytest.fixture
def plain() -> Iterator[tuple[Progress, io.StringIO]]:
    stream = io.StringIO()
    yield Progress("plain", stream), stream


def test_mode_follows_the_stream_quiet_and_the_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CANNENV_PROGRESS", raising=False)

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "xterm")
    assert choose_mode(False, Tty()) == "live"
    assert choose_mode(False, io.StringIO()) == "plain"
    assert choose_mode(True, Tty()) == "quiet"
    monkeypatch.setenv("TERM", "dumb")
    assert choose_mode(False, Tty()) == "plain"
    monkeypatch.setenv("CANNENV_PROGRESS", "quiet")
    assert choose_mode(False, io.StringIO()) == "quiet"
    monkeypatch.setenv("CANNENV_PROGRESS", "nonsense")
    assert choose_mode(False, io.StringIO()) == "plain"


def test_quiet_prints_nothing() -> None:
    stream = io.StringIO()
    p = Progress("quiet", stream)
    p.line("x")
    with p.task("download", total=10, unit="B") as t:
        t.advance(10)
    assert stream.getvalue() == ""


def test_a_plain_task_says_start_and_end_with_the_amount(plain: tuple[Progress, io.StringIO]) -> None:
    p, stream = plain
    with p.task("torch_npu wheels", total=3) as t:
        for _ in range(3):
            t.advance(1)
    got = lines(stream)
    assert got[0] == "torch_npu wheels: started (0/3 files (0%))"
    assert got[-1].startswith("torch_npu wheels: done, 3/3 files (100%) in ")


def test_a_task_that_raises_says_stopped(plain: tuple[Progress, io.StringIO]) -> None:
    p, stream = plain
    with pytest.raises(RuntimeError), p.task("sdists", total=2 << 20, unit="B") as t:
        t.advance(1 << 20)
        raise RuntimeError
    assert lines(stream)[-1].startswith("sdists: stopped, 1.0 MiB/2.0 MiB (50%) in ")


def test_live_mode_writes_to_its_stream_only() -> None:
    stream = io.StringIO()
    p = Progress("live", stream)
    with p.task("scan", total=2) as t:
        t.advance(2)
    p.line("a line")
    assert "scan: done, 2/2 files (100%)" in stream.getvalue()
    assert "a line" in stream.getvalue()


@given(st.text(max_size=200))
def test_no_text_can_move_the_cursor_or_forge_a_line(text: str) -> None:
    stream = io.StringIO()
    p = Progress("plain", stream)
    p.line(text)
    with p.task(text, total=1) as t:
        t.advance(1, note=text)
    out = stream.getvalue()
    assert "\x1b" not in out and "\r" not in out
    assert out.count("\n") == 3  # the line, the task's start and its end: one line each


def test_clock() -> None:
    assert clock(0) == "0:00"
    assert clock(61.9) == "1:01"
    assert clock(3 * 3600 + 5) == "3:00:05"


PLANS = {
    "h1": [{"index": 1}, {"index": 2}],
    "h2": [{"index": 1}, {"index": 2}],
    "h3": [{"index": 3}],
}


def rollout(view: RolloutView, clk: Clock) -> None:
    """Batch 1 = h1, h2 (h1 fails at step 2); batch 2 = h3; as the playbook emits them."""
    feed = view.feed
    feed(ev("runner_on_ok", "h1", "cannenv-provision: batch: h1,h2"))
    feed(ev("runner_on_ok", "h1", "cannenv-provision: start: step 1: nnal install"))
    feed(ev("runner_on_ok", "h2", "cannenv-provision: start: step 1: nnal install"))
    clk.t += 30
    feed(ev("runner_on_ok", "h1", "cannenv-provision: done: step 1"))
    feed(ev("runner_on_ok", "h2", "cannenv-provision: done: step 1"))
    feed(ev("runner_on_ok", "h1", "cannenv-provision: start: step 2: cann upgrade"))
    feed(ev("runner_on_ok", "h2", "cannenv-provision: start: step 2: cann upgrade"))
    clk.t += 5
    feed(
        ev(
            "runner_on_failed",
            "h1",
            "cannenv-provision: step-failed: step 2: cann upgrade exited 3\ninstaller said no\x1b[2J",
        )
    )
    feed(ev("runner_on_ok", "h2", "cannenv-provision: done: step 2"))
    feed(ev("runner_on_ok", "h3", "cannenv-provision: batch: h3"))
    feed(ev("runner_on_ok", "h3", "cannenv-provision: start: step 3: driver upgrade"))
    feed(ev("runner_on_ok", "h3", "cannenv-provision: done: step 3"))
    feed(ev("playbook_on_stats"))


def test_the_rollout_view_reports_each_host_step_and_batch_in_order(
    plain: tuple[Progress, io.StringIO],
) -> None:
    p, stream = plain
    clk = Clock()
    view = RolloutView(p, PLANS, canary=False, now=clk)
    rollout(view, clk)
    got = lines(stream)
    assert got[0] == "batch 1: 2 hosts: h1, h2"
    assert "h1  step 1 (1/2) nnal install: started" in got
    failed = got.index("h1  FAILED at step 2 (2/2): cann upgrade exited 3")
    verdict = got.index("batch 1 verdict: 1 of 2 ran every step; 1 stopped (h1) — the next batch starts")
    second = got.index("batch 2: 1 host: h3")
    assert failed < verdict < second  # the failure, then the verdict, before the next batch starts
    assert got[-1] == "batch 2 verdict: 1 of 1 ran every step — that was the last batch"
    assert any(line.startswith("h2  step 2 (2/2) done in 5 s; all 2 steps ran in 0:35") for line in got)
    assert view.hosts["h1"].state == "stopped" and view.hosts["h3"].state == "ran"
    assert "\x1b" not in stream.getvalue()


def test_a_failed_canary_says_no_further_batch_and_who_was_not_reached(
    plain: tuple[Progress, io.StringIO],
) -> None:
    p, stream = plain
    view = RolloutView(p, PLANS, canary=True, now=Clock())
    view.feed(ev("runner_on_ok", "h1", "cannenv-provision: batch: h1"))
    view.feed(ev("runner_on_ok", "h1", "cannenv-provision: start: step 1: nnal install"))
    view.feed(ev("runner_on_unreachable", "h1", "Failed to connect to the host via ssh"))
    view.feed(ev("playbook_on_stats"))
    got = lines(stream)
    assert got[0] == "batch 1 (canary): 1 host: h1"
    assert "h1  UNREACHABLE at step 1 (1/2): Failed to connect to the host via ssh" in got
    assert (
        got[-2]
        == "batch 1 (canary) verdict: 0 of 1 ran every step; 1 stopped (h1) — no further batch started"
    )
    assert got[-1] == "not reached by the rollout: h2, h3"


def test_an_interrupted_host_and_a_reboot_have_their_own_words(plain: tuple[Progress, io.StringIO]) -> None:
    p, stream = plain
    view = RolloutView(p, PLANS, now=Clock())
    view.feed(ev("runner_on_ok", "h1", "cannenv-provision: batch: h1,h2"))
    view.feed(
        ev("runner_on_failed", "h1", "cannenv-provision: interrupted: step 2: the operator interrupted")
    )
    view.feed(ev("runner_on_failed", "h2", "cannenv-provision: reboot-required: step 1: firmware 7.7"))
    got = lines(stream)
    assert "h1  STOPPED (interrupted) at step 2 (2/2): the operator interrupted" in got
    assert "h2  REBOOT REQUIRED at step 1 (1/2): firmware 7.7" in got


def test_the_live_table_renders_running_hosts() -> None:
    from rich.console import Console

    clk = Clock()
    view = RolloutView(Progress("plain", io.StringIO()), PLANS, now=clk)
    view.feed(ev("runner_on_ok", "h1", "cannenv-provision: batch: h1,h2"))
    view.feed(ev("runner_on_ok", "h1", "cannenv-provision: start: step 1: nnal install"))
    clk.t += 75
    console = Console(file=io.StringIO(), width=100)
    console.print(view.render())
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "h1" in text and "1 (1/2) nnal install" in text and "1:15" in text


def test_the_collect_view_names_each_host_as_it_ends(plain: tuple[Progress, io.StringIO]) -> None:
    p, stream = plain
    clk = Clock()
    view = CollectView(p, classify_events, now=clk)
    view.feed(ev("runner_on_start", "n1", task="Push the cannenv bundle"))
    view.feed(ev("runner_on_start", "n2", task="Push the cannenv bundle"))
    clk.t += 2
    view.feed(ev("runner_on_ok", "n1", task="Fetch the facts to the controller"))
    view.feed(ev("runner_on_unreachable", "n2", "ssh: connect to host 10.0.0.2 port 22: No route to host"))
    view.feed(ev("runner_on_ok", "n2", task="Fetch the facts to the controller"))  # ended already: ignored
    assert lines(stream) == [
        "n1        collected (2.0 s)",
        "n2        unreachable (2.0 s): ssh: connect to host 10.0.0.2 port 22: No route to host",
    ]


def test_interrupt_levels_write_the_files_the_playbook_reads(
    tmp_path: Path, plain: tuple[Progress, io.StringIO]
) -> None:
    p, stream = plain
    stale = tmp_path / "stop-batches"
    stale.write_text("left by an earlier run with the same --out\n")
    intr = Interrupt(tmp_path, p)
    assert not intr.batches.exists(), "a stop file of an earlier run would stop this one"
    assert intr.extravars() == {
        "cannenv_stop_batches": str(tmp_path / "stop-batches"),
        "cannenv_stop_steps": str(tmp_path / "stop-steps"),
    }
    intr.press()
    assert intr.batches.exists() and not intr.steps.exists()
    intr.press()
    assert intr.steps.exists()
    intr.press()
    assert stream.getvalue() == "", "a press (a signal handler) must not print: it may interrupt a print"
    intr.flush()
    got = lines(stream)
    assert got[0].startswith("interrupt: no new batch will start")
    assert got[1].startswith("interrupt: no new step will start")
    assert got[2].startswith("interrupt: still waiting")


def test_a_task_without_a_count_says_only_start_end_and_time(plain: tuple[Progress, io.StringIO]) -> None:
    p, stream = plain
    with p.task("tracing the model", unit="") as t:
        t.advance(1)
    got = lines(stream)
    assert got[0] == "tracing the model: started"
    assert got[1].startswith("tracing the model: done in ") and got[1].endswith(" s")


def test_sigterm_stops_new_batches_and_new_steps_at_once(
    tmp_path: Path, plain: tuple[Progress, io.StringIO]
) -> None:
    import os
    import signal

    p, _ = plain
    intr = Interrupt(tmp_path, p)
    before = signal.getsignal(signal.SIGTERM)
    with intr.installed():
        os.kill(os.getpid(), signal.SIGTERM)
    assert intr.batches.exists() and intr.steps.exists()
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_large_log_folder_shows_its_scan_on_stderr_and_the_json_is_the_same(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from cannenv.explain.inputs import PROGRESS_FILES

    plog = tmp_path / "plog"
    plog.mkdir()
    for i in range(PROGRESS_FILES):
        (plog / f"plog-{i}.log").write_text("[ERROR] RUNTIME: error code is 507035\n" if i == 7 else "ok\n")

    def run(*extra: str, mode: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")} | {
            "CANNENV_PROGRESS": mode
        }
        args = [sys.executable, "-m", "cannenv", "explain", "--log", str(plog), "--no-host", "--json", *extra]
        return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)

    shown, quiet = run(mode="plain"), run("--quiet", mode="plain")
    assert shown.stdout == quiet.stdout and shown.returncode == quiet.returncode
    assert f"scanning {PROGRESS_FILES} log files: done" in shown.stderr
    assert "scanning" not in quiet.stderr


def test_a_signal_in_the_middle_of_a_line_cannot_deadlock(tmp_path: Path) -> None:
    """The handler runs in the main thread, possibly while it holds the progress lock (printing a
    host's line): it must not print or lock. Simulated by pressing while the lock is held."""
    import io

    stream = io.StringIO()
    p = Progress("plain", stream)
    intr = Interrupt(tmp_path, p)
    with intr.installed():
        with p._lock:  # the main thread is printing a line when Ctrl-C comes
            intr.press()
            intr.press()
        import time

        deadline = time.monotonic() + 10
        while stream.getvalue().count("interrupt:") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert stream.getvalue().count("interrupt:") == 2


def test_a_planned_reboot_reported_as_ok_is_shown_as_such(plain: tuple[Progress, io.StringIO]) -> None:
    """The role ends a host at a reboot step without failing it (an ok event with the message)."""
    p, stream = plain
    view = RolloutView(p, PLANS, now=Clock())
    view.feed(ev("runner_on_ok", "h2", "cannenv-provision: batch: h2"))
    view.feed(
        ev("runner_on_ok", "h2", "cannenv-provision: reboot-required: step 1: firmware 7.7 needs a restart")
    )
    assert "h2  REBOOT REQUIRED at step 1 (1/2): firmware 7.7 needs a restart" in lines(stream)
    assert view.hosts["h2"].state == "stopped"
