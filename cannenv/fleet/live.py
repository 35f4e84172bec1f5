"""Live per-host state of a rollout or a collection, from ansible-runner's events as they arrive.

ansible-runner calls :meth:`RolloutView.feed` / :meth:`CollectView.feed` with each event the moment
``ansible-playbook`` emits it (its ``event_handler``), not from captured text after the run. The
views keep per-host state (pure bookkeeping, :meth:`feed`) and report through
:class:`cannenv.progress.Progress` on stderr: a redrawn table of the running hosts on a terminal,
one line per host per step elsewhere, nothing with ``--quiet``. The final report and ``--json`` are
the commands' own business (stdout), unchanged by anything here.

The playbook speaks a small grammar in its task messages (``ansible/playbooks/provision.yml`` and
the ``cannenv_step`` role), parsed here and by :mod:`cannenv.plan.provision`:

- ``cannenv-provision: batch: h1,h2`` — a ``serial`` batch starts (``run_once`` per batch);
- ``cannenv-provision: start: step N: component action`` — a host starts a step;
- ``cannenv-provision: done: step N`` — a host finished a step;
- ``cannenv-provision: <code>: step N: reason`` — a host stopped (codes: step-failed, checksum,
  reboot-required, preflight, half-installed, interrupted, …).

Ctrl-C (:class:`Interrupt`): the first stops new batches (the playbook ends every host of a later
batch before its cordon hook), the second stops new steps (a host between steps writes its marker
and stops with ``interrupted``); running steps always finish or reach their ``--timeout``, so every
host ends in a state that is true on the host.
"""

from __future__ import annotations

import queue
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.progress import Progress, clock

if TYPE_CHECKING:
    from rich.console import RenderableType

STEP_STOP = re.compile(r"cannenv-provision: (?P<code>[a-z-]+): step (?P<step>\d+): (?P<reason>.*)", re.DOTALL)
STEP_DONE = re.compile(r"cannenv-provision: done: step (?P<step>\d+)")
STEP_START = re.compile(r"cannenv-provision: start: step (?P<step>\d+): (?P<what>[^\n]*)")
BATCH = re.compile(r"cannenv-provision: batch: (?P<hosts>[^\n]*)")
FETCHED_TASK = "Fetch the facts to the controller"
"""The facts role's task whose success means the host's facts reached the controller."""


def event_message(ev: Mapping[str, Any]) -> str:
    """The ``msg`` of an event's result, or of the first failed item of a looped task."""
    data = ev.get("event_data") or {}
    res = data.get("res") or {}
    if not isinstance(res, Mapping):
        return ""
    msg = str(res.get("msg") or "")
    for item in res.get("results") or ():
        if isinstance(item, Mapping) and item.get("failed") and STEP_STOP.search(str(item.get("msg") or "")):
            return str(item["msg"])
    return msg


def _one_line(text: str) -> str:
    return " ".join(text.split("\n", 1)[0].split())


@dataclass
class HostLive:
    name: str
    steps: int = 0
    """How many steps this host's plan has."""
    batch: int = 0
    step: int | None = None
    step_what: str = ""
    step_started: float = 0.0
    started: float | None = None
    done: list[int] = field(default_factory=list)
    state: str = "waiting"
    """waiting · running · ran (every step ran) · stopped (a step or the controller stopped it)"""
    reason: str = ""


class RolloutView:
    """Per-host, per-batch state of ``cannenv provision``'s playbook run, reported as it happens."""

    def __init__(
        self,
        progress: Progress,
        plans: Mapping[str, Sequence[Mapping[str, Any]]],
        *,
        canary: bool = False,
        now: Any = time.monotonic,
    ) -> None:
        self.out = progress
        self.now = now
        self.canary = canary
        self.hosts: dict[str, HostLive] = {
            name: HostLive(name, steps=len(steps)) for name, steps in sorted(plans.items())
        }
        self._order = {name: [int(s.get("index", 0)) for s in steps] for name, steps in plans.items()}
        """Each host's step numbers (the plan's own, which skip the steps left as they are)."""
        self._last_index = {name: max(order, default=0) for name, order in self._order.items()}
        self.batch = 0
        self.batch_hosts: list[str] = []
        self.verdicts: list[str] = []
        self.width = max((len(n) for n in self.hosts), default=4)

    # -- state --------------------------------------------------------------------------------------

    def _host(self, name: str) -> HostLive:
        h = self.hosts.get(name)
        if h is None:
            h = self.hosts[name] = HostLive(name)
        if h.started is None:
            h.started = self.now()
        return h

    def feed(self, ev: Mapping[str, Any]) -> bool:
        """One runner event; returns True (ansible-runner keeps the event)."""
        kind = str(ev.get("event") or "")
        data = ev.get("event_data") or {}
        if kind == "playbook_on_stats":
            self._close_batch(final=True)
            return True
        host = data.get("host") if isinstance(data, Mapping) else None
        if not isinstance(host, str) or not host:
            return True
        msg = event_message(ev)
        if kind == "runner_on_ok":
            m = BATCH.search(msg)
            if m:
                self._open_batch([h for h in m.group("hosts").split(",") if h])
                return True
            m = STEP_START.search(msg)
            if m:
                h = self._host(host)
                h.state, h.step, h.step_what = "running", int(m.group("step")), _one_line(m.group("what"))
                h.step_started = self.now()
                self._say(h, f"step {h.step}{self._of(h, h.step)} {h.step_what}: started")
                return True
            m = STEP_STOP.search(msg)
            if m and m.group("code") == "reboot-required":  # the role ends the host there: no failure
                self._stop(
                    self._host(host), "reboot-required", int(m.group("step")), _one_line(m.group("reason"))
                )
                return True
            m = STEP_DONE.search(msg)
            if m:
                h = self._host(host)
                n = int(m.group("step"))
                h.done.append(n)
                took = self.now() - h.step_started
                if n >= self._last_index.get(host, n):
                    h.state = "ran"
                    self._say(
                        h,
                        f"step {n}{self._of(h, n)} done in {took:.0f} s; all {len(h.done)} steps ran in "
                        f"{clock(self.now() - (h.started or self.now()))} (the doctor judges it next)",
                    )
                else:
                    self._say(h, f"step {n}{self._of(h, n)} done in {took:.0f} s")
        elif kind == "runner_on_unreachable":
            h = self._host(host)
            if h.state != "stopped":
                h.state, h.reason = "stopped", f"unreachable: {_one_line(msg) or 'host unreachable'}"
                self._say(h, f"UNREACHABLE{self._at(h)}: {_one_line(msg) or 'host unreachable'}")
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            h = self._host(host)
            if h.state == "stopped":
                return True
            m = STEP_STOP.search(msg)
            if m:
                self._stop(h, m.group("code"), int(m.group("step")), _one_line(m.group("reason")))
            else:
                self._stop(h, "failed", h.step or 0, f"task {data.get('task', '?')!r}: {_one_line(msg)}")
        return True

    def _stop(self, h: HostLive, code: str, step: int, reason: str) -> None:
        """The host stopped (a failure, a planned reboot, an interrupt): said once, the moment it comes."""
        h.state, h.reason = "stopped", f"{code}: {reason}"
        where = f" at step {step}{self._of(h, step)}" if step else ""
        word = {"reboot-required": "REBOOT REQUIRED", "interrupted": "STOPPED (interrupted)"}.get(
            code, "FAILED"
        )
        self._say(h, f"{word}{where}: {reason}")

    def _of(self, h: HostLive, step: int | None) -> str:
        """`` (k/n)``: the step's place among the host's steps to run (the plan's numbers skip the
        steps left as they are: step 5 may be the first of 3)."""
        order = self._order.get(h.name, [])
        return f" ({order.index(step) + 1}/{len(order)})" if step in order else ""

    def _at(self, h: HostLive) -> str:
        return f" at step {h.step}{self._of(h, h.step)}" if h.step else ""

    def _open_batch(self, names: list[str]) -> None:
        self._close_batch(final=False)
        self.batch += 1
        self.batch_hosts = names
        for n in names:
            self._host(n).batch = self.batch
        label = " (canary)" if self.canary and self.batch == 1 else ""
        shown = ", ".join(names[:8]) + (f", … {len(names) - 8} more" if len(names) > 8 else "")
        plural = "s" if len(names) != 1 else ""
        self.out.line(f"batch {self.batch}{label}: {len(names)} host{plural}: {shown}")

    def _close_batch(self, *, final: bool) -> None:
        if not self.batch_hosts:
            if final:
                self._not_reached()
            return
        hosts = [self.hosts[n] for n in self.batch_hosts if n in self.hosts]
        ran = sum(1 for h in hosts if h.state == "ran")
        stopped = [h for h in hosts if h.state == "stopped"]
        label = " (canary)" if self.canary and self.batch == 1 else ""
        parts = [f"{ran} of {len(hosts)} ran every step"]
        if stopped:
            parts.append(f"{len(stopped)} stopped ({', '.join(h.name for h in stopped[:5])})")
        if not final:
            nxt = "the next batch starts"
        elif any(h.batch == 0 for h in self.hosts.values()):
            nxt = "no further batch started"
        else:
            nxt = "that was the last batch"
        verdict = f"batch {self.batch}{label} verdict: {'; '.join(parts)} — {nxt}"
        self.verdicts.append(verdict)
        self.out.line(verdict)
        self.batch_hosts = []
        if final:
            self._not_reached()

    def _not_reached(self) -> None:
        missing = [h.name for h in self.hosts.values() if h.batch == 0 and h.started is None]
        if missing and self.batch:
            self.out.line(f"not reached by the rollout: {', '.join(missing)}")

    def _say(self, h: HostLive, text: str) -> None:
        self.out.line(f"{h.name:<{self.width}}  {text}")

    # -- the redrawn table (terminal only) ----------------------------------------------------------

    def render(self) -> RenderableType:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        from cannenv import sanitize

        counts: dict[str, int] = {}
        for h in self.hosts.values():
            counts[h.state] = counts.get(h.state, 0) + 1
        table = Table(box=None, show_header=True, pad_edge=False)
        for col in ("host", "batch", "step", "running for"):
            table.add_column(col)
        now = self.now()
        running = [h for h in self.hosts.values() if h.state == "running"]
        for h in running[:20]:
            table.add_row(
                sanitize.line(h.name),
                str(h.batch or "-"),
                sanitize.line(f"{h.step}{self._of(h, h.step)} {h.step_what}"),
                clock(now - h.step_started),
            )
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        more = f" (+{len(running) - 20} more running)" if len(running) > 20 else ""
        status = f"batch {self.batch or '-'} · {summary}{more} · {clock(self.out.elapsed())}"
        return Group(table, Text(status))


class CollectView:
    """Per-host state of ``fleet collect``'s playbook run: a line per host when its facts arrive or
    it fails (the failure's reason as the manifest will record it), a redrawn table of the hosts
    still running on a terminal."""

    def __init__(
        self,
        progress: Progress,
        classify: Callable[[Iterable[Mapping[str, Any]]], Mapping[str, Any]],
        *,
        now: Any = time.monotonic,
    ) -> None:
        self.out = progress
        self.classify = classify
        """:func:`cannenv.fleet.collect.classify_events`: a failed event -> (status, reason)."""
        self.now = now
        self.started: dict[str, float] = {}
        self.task: dict[str, str] = {}
        self.ended: dict[str, str] = {}
        self.width = 8

    def feed(self, ev: Mapping[str, Any]) -> bool:
        kind = str(ev.get("event") or "")
        data = ev.get("event_data") or {}
        host = data.get("host") if isinstance(data, Mapping) else None
        if not isinstance(host, str) or not host or host in self.ended:
            return True
        self.started.setdefault(host, self.now())
        self.width = max(self.width, len(host))
        if kind == "runner_on_start":
            self.task[host] = str(data.get("task") or "")
        elif kind == "runner_on_ok" and data.get("task") == FETCHED_TASK:
            self._end(host, "collected", "")
        else:
            outcome = self.classify([ev]).get(host)
            if outcome is not None:
                self._end(host, outcome.status, outcome.reason)
        return True

    def _end(self, host: str, status: str, reason: str) -> None:
        self.ended[host] = status
        took = self.now() - self.started.get(host, self.now())
        tail = f": {_one_line(reason)}" if reason else ""
        self.out.line(f"{host:<{self.width}}  {status} ({took:.1f} s){tail}")

    def render(self) -> RenderableType:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        from cannenv import sanitize

        table = Table(box=None, show_header=True, pad_edge=False)
        for col in ("host", "task", "for"):
            table.add_column(col)
        now = self.now()
        running = [h for h in self.started if h not in self.ended]
        for h in running[:20]:
            table.add_row(sanitize.line(h), sanitize.line(self.task.get(h, "")), clock(now - self.started[h]))
        got = sum(1 for s in self.ended.values() if s == "collected")
        more = f" (+{len(running) - 20} more)" if len(running) > 20 else ""
        return Group(
            table,
            Text(
                f"{got} collected, {len(self.ended) - got} not, {len(running)} running{more} "
                f"· {clock(self.out.elapsed())}"
            ),
        )


class Interrupt:
    """Ctrl-C during a rollout, in two levels that the playbook reads from two files on this machine.

    1. ``stop-batches`` appears: every host of a batch that has not started ends before its cordon
       hook (``not-run``); the running batch carries on.
    2. ``stop-steps`` appears: a host between two steps writes its marker and stops
       (``interrupted``); a running step finishes or reaches its ``--timeout``.
    Further presses only repeat what is being waited for: stopping Ansible mid-step would leave
    hosts whose state nobody knows.
    """

    def __init__(self, folder: Path, progress: Progress) -> None:
        self.batches = folder / "stop-batches"
        self.steps = folder / "stop-steps"
        self.out = progress
        self.level = 0
        self._said: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        """What a press has to say. A signal handler runs in the main thread between two bytecodes,
        possibly in the middle of printing a line (holding the progress lock, inside a buffered
        write): it must neither print nor take a lock. SimpleQueue.put is safe there; a printer
        thread (:meth:`installed`) or :meth:`flush` says it."""
        folder.mkdir(parents=True, exist_ok=True)
        for stale in (self.batches, self.steps):  # an earlier run's, in the same --out
            stale.unlink(missing_ok=True)

    def extravars(self) -> dict[str, str]:
        return {"cannenv_stop_batches": str(self.batches), "cannenv_stop_steps": str(self.steps)}

    def press(self) -> None:
        """One Ctrl-C: safe in a signal handler (a file written, a message queued, no lock)."""
        self.level += 1
        if self.level == 1:
            self.batches.write_text("interrupted by the operator\n")
            self._said.put(
                "interrupt: no new batch will start; the running batch finishes its steps "
                "(Ctrl-C again: no new step starts)"
            )
        elif self.level == 2:
            self.steps.write_text("interrupted by the operator\n")
            self._said.put(
                "interrupt: no new step will start; running steps finish or reach --timeout, then each "
                "host's state is reported"
            )
        else:
            self._said.put(
                "interrupt: still waiting for the running steps to finish or time out "
                "(stopping them now would leave hosts in a state nobody knows)"
            )

    def flush(self) -> None:
        """Say what the presses queued (in this thread)."""
        while True:
            try:
                msg = self._said.get_nowait()
            except queue.Empty:
                return
            if msg is not None:
                self.out.line(msg)

    def terminate(self) -> None:
        """SIGTERM (a service manager, ``kubectl delete``): both levels at once — no new batch, no
        new step; running steps finish or reach their timeout."""
        while self.level < 2:
            self.press()

    @contextmanager
    def installed(self) -> Iterator[Interrupt]:
        """SIGINT goes to :meth:`press`, SIGTERM to :meth:`terminate`, while the block runs (main
        thread only; elsewhere nothing); the previous handlers come back after it."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return

        def printer() -> None:
            while (msg := self._said.get()) is not None:
                self.out.line(msg)

        thread = threading.Thread(target=printer, name="cannenv-interrupt", daemon=True)
        thread.start()
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        signal.signal(signal.SIGINT, lambda _sig, _frame: self.press())
        signal.signal(signal.SIGTERM, lambda _sig, _frame: self.terminate())
        try:
            yield self
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._said.put(None)
            thread.join(5)
