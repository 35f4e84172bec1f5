"""Where the text to explain comes from: arguments, ``--log FILE``, ``--log DIR`` (a plog
folder), ``-`` (stdin). Every file is opened non-blocking and checked to be a regular file on
the descriptor itself; a folder is walked without following links (a link is named, not read);
under ``--root`` a path inside the tree is resolved inside it, so a link cannot leave the tree.
Reading streams in chunks and stops after :data:`MAX_LOG_BYTES` in all.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from cannenv.errors import InputError
from cannenv.explain.scan import CHUNK, Scanner, ScanResult
from cannenv.explain.signatures import SignatureTable

MAX_LOG_BYTES = 4 << 30
"""The most bytes read from all inputs together (the rest is named as not read)."""
MAX_DIR_FILES = 10_000
MAX_DEPTH = 8

if TYPE_CHECKING:
    from cannenv.progress import Progress


_File = tuple[str, Path, int]
"""A regular file of a walked folder: its name as shown, its local path, its size (a plain tuple:
defining a dataclass costs more than a short log's scan, docs/performance.md)."""


def _inside_root(path: str, root: Path | None) -> str | None:
    """The host spelling of ``path`` when it lies (lexically) under ``root``."""
    if root is None:
        return None
    p = Path(os.path.abspath(path))  # noqa: PTH100 - lexical, links are resolved by the Host
    try:
        rel = p.relative_to(root)
    except ValueError:
        return None
    return "/" + str(rel)


def _resolve(path: str, root: Path | None) -> tuple[Path, bool]:
    """(local path, resolved inside a root); a link under the root stays inside it."""
    host_path = _inside_root(path, root)
    if host_path is None or root is None:
        return Path(path), False
    from cannenv.host import Host

    try:
        local, _ = Host(root, {}, True, 1.0).resolve(host_path)
    except OSError as exc:
        raise InputError(
            f"--log {path}: {exc.strerror or exc} (resolved inside --root {root})",
            hint="a link in a tree under --root is followed inside the tree only",
        ) from None
    return local, True


def _open(local: Path, name: str, *, nofollow: bool) -> tuple[int, os.stat_result]:
    from cannenv.host import NotRegularFileError, open_regular

    try:
        return open_regular(local, nofollow=nofollow, name=name)
    except NotRegularFileError as exc:
        raise InputError(
            f"cannot read log {name}: it is {exc.strerror}, expected a regular file or a folder"
        ) from None
    except FileNotFoundError:
        raise InputError(f"log {name} does not exist") from None
    except OSError as exc:
        raise InputError(f"cannot read log {name}: {exc.strerror or exc}") from None


def _walk(top: Path, name: str, skipped: list[str]) -> list[_File]:
    """Regular files under ``top`` (links and special files are named in ``skipped``)."""
    files: list[_File] = []
    over = 0  # regular files past MAX_DIR_FILES: counted, one line for all of them
    stack: list[tuple[Path, str, int]] = [(top, name, 0)]
    while stack:
        d, shown, depth = stack.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(f"{shown}: {exc.strerror or exc}")
            continue
        for e in entries:
            label = f"{shown.rstrip('/')}/{e.name}"
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                skipped.append(f"{label}: {exc.strerror or exc}")
                continue
            if stat.S_ISLNK(st.st_mode):
                skipped.append(f"{label}: a link (not followed out of the folder)")
            elif stat.S_ISDIR(st.st_mode):
                if depth + 1 > MAX_DEPTH:
                    skipped.append(f"{label}: deeper than {MAX_DEPTH} folders")
                else:
                    stack.append((Path(e.path), label, depth + 1))
            elif stat.S_ISREG(st.st_mode):
                if len(files) >= MAX_DIR_FILES:
                    over += 1
                    continue
                files.append((label, Path(e.path), st.st_size))
            else:
                skipped.append(f"{label}: not a regular file")
    if over:
        skipped.append(f"{name}: {over} more files past the first {MAX_DIR_FILES} (not read)")
    return files


def _chunks(fd: int, budget: list[int]) -> Iterator[bytes]:
    with os.fdopen(fd, "rb", buffering=0) as fh:
        while budget[0] > 0:
            data = fh.read(min(CHUNK, budget[0]))
            if not data:
                return
            budget[0] -= len(data)
            yield data


PROGRESS_FILES = 200
PROGRESS_BYTES = 256 << 20
"""From this many log files or bytes on, a scan shows its progress on stderr (below: nothing)."""


def scan(
    table: SignatureTable,
    *,
    texts: Sequence[str] = (),
    logs: Sequence[str] = (),
    stdin: IO[bytes] | None = None,
    root: Path | None = None,
    progress: Progress | None = None,
) -> ScanResult:
    """Scan every input in turn (arguments, then logs, then stdin). ``progress`` shows the bytes
    read, file by file, when the logs are many or large (``PROGRESS_FILES``, ``PROGRESS_BYTES``)."""
    skipped: list[str] = []
    plan: list[tuple[str, Path, int, bool]] = []  # (name, local, size, nofollow)
    for log in logs:
        local, in_root = _resolve(log, root)
        try:
            st = (local if in_root else Path(log)).stat()
        except FileNotFoundError:
            raise InputError(
                f"log {log} does not exist", hint="give a log file, a folder of logs (plog), or -"
            ) from None
        except OSError as exc:
            raise InputError(f"cannot read log {log}: {exc.strerror or exc}") from None
        if stat.S_ISDIR(st.st_mode):
            for label, path, size in _walk(local, log, skipped):
                plan.append((label, path, size, True))
        else:
            plan.append((log, local, st.st_size, in_root))
    total = sum(len(t.encode("utf-8", "surrogateescape")) for t in texts) + sum(p[2] for p in plan)
    scanner = Scanner(table, total_hint=None if stdin is not None else total)
    if texts:
        scanner.sources.append("arguments")
        scanner.feed("\n".join(texts).encode("utf-8", "surrogateescape"))
        scanner.end_input()
    budget = [MAX_LOG_BYTES]
    from cannenv.progress import QUIET

    big = len(plan) >= PROGRESS_FILES or total >= PROGRESS_BYTES
    shown = (progress or QUIET) if big else QUIET
    with shown.task(
        f"scanning {len(plan)} log file{'s' if len(plan) != 1 else ''}", total=total, unit="B"
    ) as task:
        unread = 0  # files left once the byte budget is spent: counted, one line for all
        for name, local, size, nofollow in plan:
            if budget[0] <= 0:
                unread += 1
                continue
            try:
                fd, _ = _open(local, name, nofollow=nofollow)
            except InputError as exc:
                if name in logs:
                    raise
                skipped.append(exc.message.removeprefix("cannot read log "))
                continue
            scanner.sources.append(name)
            scanner.feed_all(_chunks(fd, budget))
            task.advance(size, note=name)
    if unread:
        skipped.append(
            f"{unread} more file{'s' if unread != 1 else ''}: not read, "
            f"{MAX_LOG_BYTES} bytes were read already"
        )
    if stdin is not None:
        scanner.sources.append("stdin")
        while budget[0] > 0:
            data = stdin.read(min(CHUNK, budget[0]))
            if not data:
                break
            budget[0] -= len(data)
            scanner.feed(data)
        scanner.end_input()
    if budget[0] <= 0:
        skipped.append(f"input past {MAX_LOG_BYTES} bytes: not read")
    scanner.skipped.extend(skipped)
    return scanner.result()
