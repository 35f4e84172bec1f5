"""The one door to the outside: files under a root, the environment, and subprocesses.

Probes never touch ``os.environ``, ``open('/...')`` or ``subprocess`` directly; they ask a
:class:`Host`. A test host is just a directory plus a dict, so probes are exercised on real files
without mocks, and ``--root`` lets the doctor judge a mounted image filesystem the same way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class CommandResult:
    """What a subprocess did. A missing executable or a timeout is a result, not an exception."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    missing: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.missing

    def describe(self) -> str:
        """One line saying how the command ended, for findings and error messages."""
        cmd = " ".join(self.argv)
        if self.missing:
            return f"`{cmd}`: executable not found"
        if self.timed_out:
            return f"`{cmd}`: no answer within {self.duration_s:.0f} s (killed)"
        if self.returncode != 0:
            tail = (self.stderr or self.stdout).strip().splitlines()[-1:] or [""]
            return f"`{cmd}` exited {self.returncode}: {tail[0]}"
        return f"`{cmd}` succeeded"


def run(
    argv: Sequence[str],
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    input_text: str | None = None,
) -> CommandResult:
    """Run ``argv`` (never through a shell) with a timeout and capture its output as text."""
    args = tuple(str(a) for a in argv)
    start = time.monotonic()
    try:
        proc = subprocess.run(  # argument list, never a shell
            args,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            input=input_text,
            check=False,
        )
    except FileNotFoundError:
        return CommandResult(args, None, "", "", time.monotonic() - start, missing=True)
    except PermissionError as exc:
        return CommandResult(args, None, "", str(exc), time.monotonic() - start, missing=True)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return CommandResult(args, None, out, err, time.monotonic() - start, timed_out=True)
    return CommandResult(args, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


@dataclass(frozen=True)
class Host:
    """A host seen through a root directory and an environment.

    ``root`` is ``/`` for the live host, or a directory holding a host tree (a test fixture, a
    mounted image). ``env`` is the environment to judge (default: this process's).
    ``allow_commands`` is False when the root is not the live system: running the host's
    ``npu-smi`` makes no sense for a tree on disk unless the tree provides its own executable.
    """

    root: Path = Path("/")
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    allow_commands: bool = True
    command_timeout: float = DEFAULT_TIMEOUT_S

    @classmethod
    def live(cls, *, command_timeout: float = DEFAULT_TIMEOUT_S) -> Host:
        return cls(Path("/"), dict(os.environ), True, command_timeout)

    @property
    def is_live(self) -> bool:
        return self.root == Path("/")

    def path(self, absolute: str | os.PathLike[str]) -> Path:
        """Map an absolute path on the probed host to a path on this machine."""
        p = Path(absolute)
        if self.is_live:
            return p
        rel = p.relative_to(p.anchor) if p.is_absolute() else p
        return self.root / rel

    def unroot(self, local: Path) -> str:
        """Inverse of :meth:`path`: the host-absolute spelling of a local path."""
        if self.is_live:
            return str(local)
        try:
            return "/" + str(local.relative_to(self.root))
        except ValueError:
            return str(local)

    def getenv(self, name: str, default: str | None = None) -> str | None:
        return self.env.get(name, default)

    def which(self, name: str) -> str | None:
        """Find an executable on the host's PATH (inside the root for a tree on disk)."""
        for d in (self.env.get("PATH") or "").split(os.pathsep):
            if not d:
                continue
            cand = self.path(Path(d) / name)
            if cand.is_file() and os.access(cand, os.X_OK):
                return str(cand)
        if self.is_live:
            return shutil.which(name)
        return None

    def run(self, argv: Sequence[str], *, timeout: float | None = None) -> CommandResult:
        """Run a host command, unless commands are disallowed for this host."""
        if not self.allow_commands:
            return CommandResult(tuple(argv), None, "", "commands disabled for this host", 0.0, missing=True)
        return run(argv, timeout=self.command_timeout if timeout is None else timeout, env=self.env)
