"""Progress for long work, on stderr: live on a terminal, plain lines elsewhere, nothing with --quiet.

One look for every command that can run long (downloads, model traces, log scans, precision runs,
rollouts): the results a command prints on stdout (a table, ``--json``, ``--shell``) never pass
through here, so they are byte-identical with and without a terminal, and with ``--quiet``.

- ``live`` (stderr is a terminal): Rich draws a bar or a status region that redraws in place;
  permanent lines (a host failed, a batch's verdict) print above it.
- ``plain`` (stderr is a pipe or a file, e.g. a CI log): one line per event, and for a counted
  task one line at its start, at most one every ``PLAIN_EVERY_S`` seconds while it runs, and one
  at its end. Every line starts with the elapsed time ``[m:ss]``.
- ``quiet``: nothing.

``CANNENV_PROGRESS=live|plain|quiet`` overrides the choice (tests, or a terminal that cannot redraw).
Every text shown here may come from data (host names, file names, reasons): it passes through
:func:`cannenv.sanitize.line`, so it cannot move the cursor or forge a line.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any, Literal

from cannenv import sanitize

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

Mode = Literal["live", "plain", "quiet"]
MODES: tuple[Mode, ...] = ("live", "plain", "quiet")
PLAIN_EVERY_S = 10.0
"""A counted task's plain lines come at most this often (plus its first and last)."""


def choose_mode(quiet: bool = False, stream: IO[str] | None = None) -> Mode:
    """``quiet`` wins; then ``CANNENV_PROGRESS``; then live on a terminal (not ``TERM=dumb``), else plain."""
    if quiet:
        return "quiet"
    forced = os.environ.get("CANNENV_PROGRESS", "").strip().lower()
    if forced in MODES:
        return forced
    out = stream if stream is not None else sys.stderr
    try:
        tty = out.isatty()
    except (AttributeError, ValueError):
        tty = False
    return "live" if tty and os.environ.get("TERM", "") != "dumb" else "plain"


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover - the loop returns


def clock(seconds: float) -> str:
    """``[m:ss]`` (``[h:mm:ss]`` past an hour): the elapsed time that starts every plain line."""
    s = max(0, int(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Task:
    """One counted piece of work (files, bytes, layers); ``advance``/``update`` from the worker."""

    def __init__(self, progress: Progress, label: str, total: float | None, unit: str) -> None:
        self._p = progress
        self.label = sanitize.line(label)
        self.total = total
        self.unit = unit
        self.done = 0.0
        self.note = ""
        self._started = time.monotonic()
        self._last_plain = self._started
        self._rich_id: Any = None

    def _amount(self) -> str:
        if not self.unit and not self.total:
            return ""  # a piece of work without a count: only its start, its end and its time

        def fmt(x: float) -> str:
            return human_bytes(x) if self.unit == "B" else f"{x:.0f}"

        unit = "" if self.unit == "B" else f" {self.unit}"
        if self.total:
            pct = 100.0 * self.done / self.total if self.total else 0.0
            return f"{fmt(self.done)}/{fmt(self.total)}{unit} ({pct:.0f}%)"
        return f"{fmt(self.done)}{unit}"

    def advance(self, n: float = 1, note: str | None = None) -> None:
        self.update(self.done + n, note=note)

    def update(self, done: float, *, total: float | None = None, note: str | None = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if note is not None:
            self.note = sanitize.line(note)
        self._p._task_moved(self)

    def _describe(self) -> str:
        return " ".join(x for x in (self.label, self._amount(), self.note) if x)

    def _line(self, state: str) -> str:
        """``label: 3/10 files (30%) note`` while running; ``label: done, 10 files in 4.2 s`` after."""
        amount = self._amount()
        if state == "running":
            return f"{self.label}: {amount or 'running'}" + (f" {self.note}" if self.note else "")
        took = f"in {time.monotonic() - self._started:.1f} s"
        return f"{self.label}: {state}, {amount} {took}" if amount else f"{self.label}: {state} {took}"


class Progress:
    """Progress on one stream (stderr unless told): see the module's docstring for the modes."""

    def __init__(self, mode: Mode = "plain", stream: IO[str] | None = None) -> None:
        self.mode: Mode = mode
        self.stream: IO[str] = stream if stream is not None else sys.stderr
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._console: Console | None = None
        self._bars: Any = None

    @classmethod
    def for_cli(cls, quiet: bool = False, stream: IO[str] | None = None) -> Progress:
        out = stream if stream is not None else sys.stderr
        return cls(choose_mode(quiet, out), out)

    # -- output -------------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.mode != "quiet"

    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=self.stream, highlight=False, markup=False, soft_wrap=True, emoji=False
            )
        return self._console

    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def line(self, text: str) -> None:
        """A permanent line (in live mode above the redrawn region). ``text`` is sanitised."""
        if self.mode == "quiet":
            return
        safe = sanitize.line(text)
        with self._lock:
            if self.mode == "live":
                self.console().print(safe)
            else:
                self.stream.write(f"[{clock(self.elapsed())}] {safe}\n")
                self.stream.flush()

    # -- a counted task -----------------------------------------------------------------------------

    @contextmanager
    def task(self, label: str, total: float | None = None, unit: str = "files") -> Iterator[Task]:
        """A counted piece of work: a bar on a terminal, start/every-10 s/end lines elsewhere."""
        task = Task(self, label, total, unit)
        if self.mode == "live":
            self._start_bars()
            task._rich_id = self._bars.add_task(task._describe(), total=total)
        elif self.mode == "plain":
            self.line(f"{task.label}: started" + (f" ({task._amount()})" if total else ""))
        ok = False
        try:
            yield task
            ok = True
        finally:
            if self.mode == "live" and task._rich_id is not None:
                self._bars.update(task._rich_id, completed=task.done, total=task.total)
                self._bars.stop_task(task._rich_id)
                self._bars.remove_task(task._rich_id)
                if not self._bars.tasks:
                    self._stop_bars()
                self.line(task._line("done" if ok else "stopped"))
            elif self.mode == "plain":
                self.line(task._line("done" if ok else "stopped"))

    def _task_moved(self, task: Task) -> None:
        if self.mode == "live" and task._rich_id is not None:
            self._bars.update(
                task._rich_id, completed=task.done, total=task.total, description=task._describe()
            )
        elif self.mode == "plain":
            now = time.monotonic()
            if now - task._last_plain >= PLAIN_EVERY_S:
                task._last_plain = now
                self.line(task._line("running"))

    def _start_bars(self) -> None:
        if self._bars is not None:
            return
        from rich.progress import BarColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._bars = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TimeElapsedColumn(),
            console=self.console(),
            transient=True,
        )
        self._bars.start()

    def _stop_bars(self) -> None:
        if self._bars is not None:
            self._bars.stop()
            self._bars = None

    # -- a redrawn status region (rollouts) ---------------------------------------------------------

    @contextmanager
    def region(self, render: Callable[[], RenderableType]) -> Iterator[Callable[[], None]]:
        """On a terminal, ``render()`` redrawn in place (4 times a second and on each ``refresh()``);
        elsewhere nothing is drawn (plain mode prints only :meth:`line`\\ s)."""
        if self.mode != "live":
            yield lambda: None
            return
        from rich.live import Live

        with Live(
            render(), console=self.console(), refresh_per_second=4, transient=True, get_renderable=render
        ) as live:
            yield live.refresh


QUIET = Progress("quiet")
"""For library calls made without a command line: reports nothing."""
