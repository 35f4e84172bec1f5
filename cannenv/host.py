"""The one door to the outside: files under a root, the environment, and subprocesses.

Probes never touch ``os.environ``, ``open('/...')`` or ``subprocess`` directly; they ask a
:class:`Host`. A test host is just a directory plus a dict, so probes are exercised on real files
without mocks, and ``--root`` lets the doctor judge a mounted image filesystem the same way.

A tree under ``--root`` is data, never code, and it may be hostile (docs/security.md):

* nothing under it is executed — :meth:`Host.run` refuses for any host but the live one;
* every path is resolved *inside* the root, as the kernel resolves it for a process chrooted
  there: an absolute link target starts again at the root, ``..`` stops at the root
  (:meth:`Host.resolve`); every reader (text, ELF, METADATA, sysfs, listings, existence) goes
  through it, so no file outside the root is ever opened;
* only regular files are opened as files (a FIFO or a device is refused without blocking), and
  every read has a size bound (:meth:`Host.read_bytes`).

Subprocesses (:func:`run`) get an argument list, never a shell, a wall-clock timeout that kills
the whole process group, and a cap on the output kept in memory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_OUTPUT = 16 << 20
"""Bytes of stdout (and, separately, stderr) kept from a command; past it the command is killed."""
MAX_LINK_HOPS = 40
"""Symlinks followed while resolving one path (Linux's MAXSYMLINKS)."""
MAX_DIR_ENTRIES = 100_000
"""Names read from one directory; a directory holding more is not one the probes look for."""


class NotRegularFileError(OSError):
    """The path names a directory, FIFO, socket or device where a regular file was expected."""


class FileTooLargeError(OSError):
    """A file is larger than the bound for its kind."""

    def __init__(self, message: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, message)
        self.size = size
        self.limit = limit


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
    truncated: bool = False
    """The command wrote more than the output cap and was killed."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.missing and not self.truncated

    def describe(self) -> str:
        """One line saying how the command ended, for findings and error messages."""
        cmd = " ".join(self.argv)
        if self.missing:
            return f"`{cmd}`: executable not found" + (f" ({self.stderr})" if self.stderr else "")
        if self.timed_out:
            return f"`{cmd}`: no answer within {self.duration_s:.0f} s (killed)"
        if self.truncated:
            return f"`{cmd}`: wrote more output than cannenv keeps (killed)"
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
    max_output: int = DEFAULT_MAX_OUTPUT,
) -> CommandResult:
    """Run ``argv`` (never through a shell) with a timeout and capture its output as text.

    The command runs in a new session (its own process group): on timeout, or when it writes
    more than ``max_output`` bytes to stdout or stderr, the whole group is killed, so children
    of a hung tool do not survive it. Output is read as it comes, never more than the cap.
    """
    args = tuple(str(a) for a in argv)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(  # argument list, never a shell
            args,
            stdin=subprocess.PIPE if input_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        return CommandResult(args, None, "", "", time.monotonic() - start, missing=True)
    except (PermissionError, ValueError) as exc:  # not executable; NUL byte in argv/env
        return CommandResult(args, None, "", str(exc), time.monotonic() - start, missing=True)
    except OSError as exc:  # e.g. ENOEXEC: not a program this machine can run
        return CommandResult(args, None, "", exc.strerror or str(exc), time.monotonic() - start, missing=True)
    if input_text is not None:
        threading.Thread(target=_feed, args=(proc.stdin, input_text), daemon=True).start()
    out, err, timed_out, truncated = _collect(proc, start + max(0.0, float(timeout)), max_output)
    if timed_out or truncated:
        _kill_group(proc)
    else:
        try:
            proc.wait(timeout=max(0.0, start + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
    code = None if (timed_out or truncated) else proc.returncode
    return CommandResult(
        args,
        code,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
        time.monotonic() - start,
        timed_out=timed_out,
        truncated=truncated,
    )


def _feed(stdin: IO[bytes] | None, text: str) -> None:
    if stdin is None:
        return
    try:
        stdin.write(text.encode("utf-8"))
        stdin.close()
    except OSError:  # the command exited without reading it all
        pass


def _collect(proc: subprocess.Popen[bytes], deadline: float, cap: int) -> tuple[bytes, bytes, bool, bool]:
    """Read stdout and stderr until both close, the deadline, or the cap: (out, err, timed out, over cap).

    A command that exits while a child it left behind still holds the pipes is done: once the
    command has exited, a quiet pipe ends the reading."""
    out_fd = proc.stdout.fileno() if proc.stdout is not None else -1
    err_fd = proc.stderr.fileno() if proc.stderr is not None else -2
    bufs: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
    sel = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            sel.register(stream.fileno(), selectors.EVENT_READ)
    timed_out = truncated = False
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            events = sel.select(min(left, 0.2))
            if not events and proc.poll() is not None:
                # It exited after the wait above ended (under load a thread switch sits between the
                # two): what it wrote before exiting is in the pipes now, so look once more without
                # waiting; only pipes that are quiet after its exit (a child it left holds them) end
                # the reading. Breaking at once lost whole answers: exit 0 and an empty stdout.
                events = sel.select(0)
                if not events:
                    break
            for key, _ in events:
                fd = key.fd
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(fd)
                    continue
                buf = bufs[fd]
                room = cap - len(buf)
                buf += chunk[: max(room, 0)]
                if len(chunk) > room:
                    truncated = True
            if truncated:
                break
    finally:
        sel.close()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return bytes(bufs[out_fd]), bytes(bufs[err_fd]), timed_out, truncated


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill the command and everything it started (its process group), then reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def open_regular(
    path: str | os.PathLike[str], *, nofollow: bool = False, name: str | None = None
) -> tuple[int, os.stat_result]:
    """An open descriptor and its ``fstat`` for a regular file; the caller closes it.

    Opened non-blocking, so a FIFO neither blocks the open nor is read, and checked with
    ``fstat`` on the descriptor itself (no window between the check and the use). Raises
    NotRegularFileError for a directory, FIFO, socket or device; FileNotFoundError,
    PermissionError and other OSErrors as the system says.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    if nofollow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise NotRegularFileError(errno.EINVAL, kind, name or os.fspath(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(
    path: str | os.PathLike[str], max_bytes: int, *, nofollow: bool = False, name: str | None = None
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``.

    The size is checked before anything is read (a sparse 1 GB file costs nothing), and the read
    itself is capped, so a file that grows meanwhile (or lies about its size, as /proc files do)
    is refused too. Raises FileTooLargeError, NotRegularFileError or OSError.
    """
    shown = name or os.fspath(path)
    fd, st = open_regular(path, nofollow=nofollow, name=name)
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > max_bytes:
            raise FileTooLargeError(f"{shown} is {st.st_size} bytes", st.st_size, max_bytes)
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLargeError(f"{shown} is over {max_bytes} bytes", len(data), max_bytes)
    return data


@dataclass(frozen=True)
class Host:
    """A host seen through a root directory and an environment.

    ``root`` is ``/`` for the live host, or a directory holding a host tree (a test fixture, a
    mounted image). ``env`` is the environment to judge (default: this process's).
    ``allow_commands`` can switch commands off for the live host too; a tree never runs any
    (its files are data: device facts for a tree come from a captured ``npu-smi`` output).
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
        """The lexical local spelling of a host path (links NOT resolved: use :meth:`resolve`
        for anything that is opened, listed or tested)."""
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

    # --- paths, resolved inside the root ------------------------------------------------------
    def resolve(self, host_path: str | os.PathLike[str], *, follow: bool = True) -> tuple[Path, str]:
        """(local path, host spelling) of ``host_path`` with every symlink resolved inside the root.

        As the kernel does for a process chrooted at the root: an absolute link target starts
        again at the root and ``..`` never climbs above it, so the local path always lies under
        the root. With ``follow=False`` a link in the last component is not followed. Raises
        OSError: FileNotFoundError (a component is missing), ELOOP (more than 40 links),
        NotADirectoryError, PermissionError. The live host resolves through the kernel itself.
        """
        text = os.fspath(host_path)
        if "\x00" in text:
            raise FileNotFoundError(errno.ENOENT, "a path with a NUL byte names no file", text)
        if self.is_live:
            return Path(text), text
        pending = [c for c in text.split("/") if c not in ("", ".")]
        pending.reverse()  # a stack: the next component is last
        done: list[str] = []
        hops = 0
        root = str(self.root)
        while pending:
            part = pending.pop()
            if part == "..":
                if done:
                    done.pop()
                continue
            if part in ("", "."):
                continue
            local = os.path.join(root, *done, part)  # noqa: PTH118 - str walk, hot path
            st = os.lstat(local)
            if stat.S_ISLNK(st.st_mode) and (pending or follow):
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", text)
                target = os.readlink(local)  # noqa: PTH115 - Path.readlink needs 3.9 (facts path: 3.7)
                if target.startswith("/"):
                    done = []
                pending.extend(reversed([c for c in target.split("/") if c not in ("", ".")]))
                continue
            if pending and not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", text)
            done.append(part)
        return Path(root, *done), "/" + "/".join(done)

    def stat(self, host_path: str | os.PathLike[str], *, follow: bool = True) -> os.stat_result:
        """``stat`` (or ``lstat``) of a host path resolved inside the root; raises OSError."""
        local, _ = self.resolve(host_path, follow=follow)
        return os.stat(local) if follow else os.lstat(local)  # noqa: PTH116

    def _mode(self, host_path: str | os.PathLike[str], follow: bool = True) -> int | None:
        try:
            return self.stat(host_path, follow=follow).st_mode
        except (OSError, ValueError):
            return None

    def exists(self, host_path: str | os.PathLike[str]) -> bool:
        """True when the path exists (links followed inside the root); never raises."""
        return self._mode(host_path) is not None

    def lexists(self, host_path: str | os.PathLike[str]) -> bool:
        """True when the path exists, a dangling link included."""
        return self._mode(host_path, follow=False) is not None

    def is_dir(self, host_path: str | os.PathLike[str]) -> bool:
        m = self._mode(host_path)
        return m is not None and stat.S_ISDIR(m)

    def is_file(self, host_path: str | os.PathLike[str]) -> bool:
        """A regular file (links followed inside the root)."""
        m = self._mode(host_path)
        return m is not None and stat.S_ISREG(m)

    def is_symlink(self, host_path: str | os.PathLike[str]) -> bool:
        m = self._mode(host_path, follow=False)
        return m is not None and stat.S_ISLNK(m)

    def readlink(self, host_path: str | os.PathLike[str]) -> str:
        """The target of a link, as written in the tree; raises OSError."""
        local, _ = self.resolve(host_path, follow=False)
        return os.readlink(local)  # noqa: PTH115 - Path.readlink needs 3.9

    def realpath(self, host_path: str | os.PathLike[str]) -> str | None:
        """Host spelling of the resolved path, or None when it does not exist."""
        try:
            local, spelling = self.resolve(host_path)
            if self.is_live:
                return str(Path(local).resolve(strict=True))
            os.lstat(local)
        except (OSError, RuntimeError, ValueError):
            return None
        return spelling

    def listdir(self, host_path: str | os.PathLike[str], *, limit: int = MAX_DIR_ENTRIES) -> list[str]:
        """Sorted entry names of a directory (at most ``limit``); raises OSError."""
        local, _ = self.resolve(host_path)
        names: list[str] = []
        with os.scandir(local) as it:
            for entry in it:
                names.append(entry.name)
                if len(names) >= limit:
                    break
        return sorted(names)

    # --- reading files ----------------------------------------------------------------------
    def open_regular(self, host_path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
        """An open file descriptor and its ``fstat`` for a regular file; the caller closes it.

        In a tree the last component is opened with ``O_NOFOLLOW``, so a link swapped in after
        :meth:`resolve` is refused, not followed. See :func:`open_regular`.
        """
        local, _ = self.resolve(host_path)
        return open_regular(local, nofollow=not self.is_live, name=os.fspath(host_path))

    def read_bytes(self, host_path: str | os.PathLike[str], max_bytes: int) -> bytes:
        """The bytes of a regular file of at most ``max_bytes`` (see :func:`read_regular`)."""
        local, _ = self.resolve(host_path)
        return read_regular(local, max_bytes, nofollow=not self.is_live, name=os.fspath(host_path))

    def open_binary(self, host_path: str | os.PathLike[str], max_bytes: int) -> IO[bytes]:
        """A binary file object for a regular file of at most ``max_bytes`` (ELF, caches)."""
        fd, st = self.open_regular(host_path)
        if st.st_size > max_bytes:
            os.close(fd)
            raise FileTooLargeError(f"{host_path} is {st.st_size} bytes", st.st_size, max_bytes)
        return os.fdopen(fd, "rb")

    # --- environment and commands -----------------------------------------------------------
    def getenv(self, name: str, default: str | None = None) -> str | None:
        return self.env.get(name, default)

    def which(self, name: str) -> str | None:
        """Host spelling of an executable on the host's PATH (resolved inside the root for a
        tree, which is never run); None when absent. Unreadable PATH entries are skipped."""
        for d in (self.env.get("PATH") or "").split(os.pathsep):
            if not d or "\x00" in d:
                continue
            cand = str(Path(d) / name)
            try:
                local, _ = self.resolve(cand)
                st = os.stat(local)  # noqa: PTH116
            except (OSError, ValueError):
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
                return cand
        if self.is_live:
            try:
                return shutil.which(name)
            except (OSError, ValueError):
                return None
        return None

    def run(
        self, argv: Sequence[str], *, timeout: float | None = None, max_output: int = DEFAULT_MAX_OUTPUT
    ) -> CommandResult:
        """Run a command on the live host. A tree under a root is data: nothing in it is run."""
        if not self.is_live:
            return CommandResult(
                tuple(argv), None, "", f"nothing under --root {self.root} is run", 0.0, missing=True
            )
        if not self.allow_commands:
            return CommandResult(tuple(argv), None, "", "commands disabled for this host", 0.0, missing=True)
        return run(
            argv,
            timeout=self.command_timeout if timeout is None else timeout,
            env=self.env,
            max_output=max_output,
        )
