"""Small file helpers shared by every writer of records (lock files, certificates, reports)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` so that readers see either the old file or the whole new one.

    The bytes go to a temporary file in the same directory, are flushed and fsynced, then renamed
    over the target (atomic on POSIX). On any failure the temporary file is removed and the old
    file is left untouched. A path that cannot be written (a parent that is a file, a dangling
    link, no permission, a full disk) is an InputError naming it (exit 2), never a traceback.
    """
    target = Path(path)
    try:
        return _atomic_write(target, data, mode)
    except OSError as exc:
        from cannenv.errors import InputError

        raise InputError(
            f"cannot write {target}: {exc.strerror or exc}",
            hint="choose a path in a writable directory with free space",
        ) from None


def _atomic_write(target: Path, data: bytes, mode: int) -> Path:
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "it is a directory", str(target))
    if target.parent.exists() and not target.parent.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, f"{target.parent} is not a directory", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(mode)
        Path(tmp).replace(target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(tmp).unlink()
        raise
    return target


def require_parent_dir(path: str | os.PathLike[str], option: str) -> None:
    """Refuse an output file whose directory does not exist (exit 2, naming the option): a typo in
    a metrics or report path must not create a directory nobody reads and exit 0."""
    parent = Path(path).parent
    if not parent.exists() and not parent.is_symlink():  # a file or a dangling link: the writer says why
        from cannenv.errors import InputError

        raise InputError(
            f"{option} {os.fspath(path)!r}: the directory {os.fspath(parent)!r} does not exist",
            hint="create it first (e.g. node_exporter's --collector.textfile.directory), or fix the path",
        )


def atomic_write_text(path: str | os.PathLike[str], text: str, *, mode: int = 0o644) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def sha256_file(path: str | os.PathLike[str], *, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, streamed (installers are GBs)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
