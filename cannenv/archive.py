"""The one bounded reader of archives: tar (plain or gzip) and zip, members by name, nothing extracted.

An archive is hostile input like any other file. What bounds the work is the bytes *inflated*, not
the bytes on disk: a 50 MB ``.tar.gz`` may hold a 48 GiB member, and a tar is a stream, so even a
member that is skipped is inflated to get past it. So :func:`tar_members`

* counts every byte the decompressor hands out, wanted or skipped, against ``max_total``
  (an :class:`InputError` naming the archive once it is passed);
* reads members as a stream (``r|``: never seeks, never holds the member list), at most
  ``max_members`` headers;
* yields only regular files whose name the caller wants, each at most ``max_member`` bytes, and
  stops as soon as the caller has what it wants (``stop_after`` members, or it stops iterating).

Zip archives have a central directory, so a skipped member is never inflated; their bounded
reader is :func:`cannenv.records.open_zip` / :func:`cannenv.records.zip_member_chunks`
(re-exported here), which check declared sizes and the bytes actually inflated.
"""

from __future__ import annotations

import io
import tarfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, cast

from cannenv.errors import InputError
from cannenv.records import open_zip, read_zip_member, zip_member_chunks

__all__ = [
    "MAX_INFLATED",
    "TarMember",
    "open_zip",
    "read_zip_member",
    "safe_member_name",
    "tar_members",
    "zip_member_chunks",
]

MAX_INFLATED = 1 << 30
"""Bytes inflated from one archive in total, wanted or skipped, unless the caller says less."""


class TarMember:
    """One wanted regular member: its name inside the archive and its bytes."""

    __slots__ = ("data", "name")

    def __init__(self, name: str, data: bytes) -> None:
        self.name = name
        self.data = data


class _Counted(io.RawIOBase):
    """A readable stream that refuses to hand out more than ``limit`` bytes in total."""

    def __init__(self, inner: IO[bytes], limit: int, where: str) -> None:
        self._inner = inner
        self._limit = limit
        self._where = where
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(b))
        self.total += len(data)
        if self.total > self._limit:
            raise InputError(
                f"{self._where}: inflates past {self._limit} bytes (skipped members count too)",
                hint="not the archive expected here, or one built to exhaust memory or time",
            )
        b[: len(data)] = data
        return len(data)


def safe_member_name(name: str) -> PurePosixPath | None:
    """The member's relative path, or None when it is absolute or climbs out (``..``)."""
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return p


def tar_members(
    source: str | Path | IO[bytes],
    wanted: Callable[[str], bool],
    *,
    what: str,
    max_member: int,
    max_total: int = MAX_INFLATED,
    max_members: int = 100_000,
    stop_after: int | None = None,
    compression: str = "gz",
) -> Iterator[TarMember]:
    """The regular members whose name ``wanted`` accepts, in archive order, read bounded (see the
    module docstring). ``compression``: ``gz`` or ``""`` (plain tar). Absolute and ``..`` names,
    links, devices and directories are never yielded. Damage is an InputError naming ``what``."""
    where = str(source) if isinstance(source, (str, Path)) else what
    yielded = 0
    raw: IO[bytes] | None = None
    try:
        raw = Path(source).open("rb") if isinstance(source, (str, Path)) else source  # noqa: SIM115
        inner: IO[bytes] = raw
        if compression == "gz":
            import gzip

            inner = cast("IO[bytes]", gzip.GzipFile(fileobj=raw, mode="rb"))
        counted = _Counted(inner, max_total, where)
        with tarfile.open(fileobj=io.BufferedReader(counted), mode="r|") as tf:
            for count, info in enumerate(tf):
                if count >= max_members:
                    raise InputError(f"{where}: more than {max_members} members", hint=f"not {what}")
                if not info.isreg() or safe_member_name(info.name) is None or not wanted(info.name):
                    continue
                if info.size > max_member:
                    raise InputError(f"{where}: member {info.name}: {info.size} bytes, over {max_member}")
                fh = tf.extractfile(info)
                if fh is None:
                    continue
                data = fh.read(max_member + 1)
                if len(data) > max_member:
                    raise InputError(f"{where}: member {info.name}: more than {max_member} bytes")
                yield TarMember(info.name, data)
                yielded += 1
                if stop_after is not None and yielded >= stop_after:
                    return
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise InputError(f"{where}: not a readable {what} ({exc})") from None
    finally:
        if raw is not None and isinstance(source, (str, Path)):
            raw.close()
