"""Run ``cannenv ARGS`` and read its stderr as it comes: each line with whether the process was still
running when it arrived, from a pipe or from a pseudo-terminal (stdout too, byte for byte)."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Stream:
    """Lines of a stream as they arrive, each with whether the process was still running then."""

    lines: list[tuple[str, bool]] = field(default_factory=list)
    event: threading.Event = field(default_factory=threading.Event)
    wanted: str = ""

    def texts(self) -> list[str]:
        return [t for t, _ in self.lines]

    def index(self, fragment: str) -> int:
        for i, (t, _) in enumerate(self.lines):
            if fragment in t:
                return i
        raise AssertionError(f"{fragment!r} not in:\n" + "\n".join(self.texts()))

    def wait_for(self, fragment: str, proc: subprocess.Popen[bytes], timeout: float = 600) -> None:
        self.wanted = fragment
        self.event.clear()
        deadline = time.monotonic() + timeout
        while not any(fragment in t for t, _ in self.lines):
            assert proc.poll() is None and time.monotonic() < deadline, (
                f"{fragment!r} never came (exit {proc.poll()}):\n" + "\n".join(self.texts())
            )
            self.event.wait(1)


def _reader(read: Callable[[], bytes], proc: subprocess.Popen[bytes], out: Stream) -> None:
    buf = b""
    while True:
        try:
            chunk = read()
        except OSError:  # the pty's other side closed
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            raw, buf = buf.split(b"\n", 1)
            text = raw.decode("utf-8", "replace").rstrip("\r")
            out.lines.append((text, proc.poll() is None))
            if out.wanted and out.wanted in text:
                out.event.set()


@dataclass
class Run:
    proc: subprocess.Popen[bytes]
    err: Stream
    stdout: bytearray
    threads: list[threading.Thread]

    def wait(self, timeout: float = 900) -> int:
        rc = self.proc.wait(timeout)
        for t in self.threads:
            t.join(30)
        return rc


def _raw_pty() -> tuple[int, int]:
    """A pseudo-terminal that passes bytes as they are (no \\n -> \\r\\n), so stdout compares exactly."""
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    return master, slave


def start(args: list[str], *, terminal: bool) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_") or k == "CANNENV_CACHE_DIR"}
    env["TERM"] = "xterm"
    err, stdout = Stream(), bytearray()
    if terminal:
        out_m, out_s = _raw_pty()
        err_m, err_s = _raw_pty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "cannenv", *args],
            stdout=out_s,
            stderr=err_s,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        os.close(out_s)
        os.close(err_s)

        def read_out() -> None:
            while True:
                try:
                    chunk = os.read(out_m, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                stdout.extend(chunk)

        threads = [
            threading.Thread(target=_reader, args=(lambda: os.read(err_m, 65536), proc, err), daemon=True),
            threading.Thread(target=read_out, daemon=True),
        ]
    else:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cannenv", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdout is not None and proc.stderr is not None
        pipe_err, pipe_out = proc.stderr, proc.stdout
        threads = [
            threading.Thread(
                target=_reader, args=(lambda: os.read(pipe_err.fileno(), 65536), proc, err), daemon=True
            ),
            threading.Thread(target=lambda: stdout.extend(pipe_out.read()), daemon=True),
        ]
    for t in threads:
        t.start()
    return Run(proc, err, stdout, threads)
