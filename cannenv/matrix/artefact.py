"""Reading a vendor artefact (a wheel, or the folder it was unpacked into) as untrusted input.

An artefact may be hostile: names are looked up inside it, never followed out of it; only regular
files are read, each read is bounded; nothing in it is executed. Every fact an importer takes from
an artefact names it with a :class:`Provenance` (package, version, path inside, artefact sha256).
"""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cannenv.errors import InputError

MAX_MEMBER = 8 << 20
"""The largest member read from an artefact (the biggest real manifest is ~60 KB)."""
MAX_MEMBERS = 20000
MAX_TOTAL = 256 << 20
"""All the bytes read from one artefact together (an importer reads a few manifests): a wheel of
hundreds of members just under :data:`MAX_MEMBER` each is refused, not read whole."""


@dataclass(frozen=True)
class Provenance:
    """Where one imported fact was read: the artefact and the path inside it."""

    package: str
    version: str
    path: str
    sha256: str
    """sha256 of the artefact (the wheel file; of the member file for an unpacked folder)"""

    def to_json(self) -> dict[str, str]:
        return {"package": self.package, "version": self.version, "path": self.path, "sha256": self.sha256}

    def __str__(self) -> str:
        return f"{self.package} {self.version}:{self.path} (sha256 {self.sha256[:12]}…)"


def sha256_file(path: Path, *, limit: int = 1 << 34) -> str:
    h = hashlib.sha256()
    read = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            read += len(chunk)
            if read > limit:
                raise InputError(f"{path}: larger than {limit} bytes", hint="is this the vendor's artefact?")
            h.update(chunk)
    return h.hexdigest()


class Artefact:
    """A wheel (zip) or an unpacked folder; :meth:`read` returns a member's bytes, bounded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.is_zip = path.is_file() and zipfile.is_zipfile(path)
        if not self.is_zip and not path.is_dir():
            raise InputError(
                f"{path} is neither a wheel nor a folder",
                hint="pass the downloaded .whl (`pip download --no-deps PACKAGE -d DIR`) "
                "or its unpacked folder",
            )
        self.sha256 = sha256_file(path) if self.is_zip else ""
        self._zip: zipfile.ZipFile | None = None
        self._names: list[str] = []
        self._read_total = 0
        if self.is_zip:
            from cannenv.records import open_zip

            self._zip = open_zip(path, max_members=MAX_MEMBERS, what="wheel")
            infos = self._zip.infolist()
            self._names = [i.filename for i in infos if not i.is_dir()]
        else:
            root = path.resolve()
            count = 0
            for f in sorted(path.rglob("*")):
                count += 1
                if count > MAX_MEMBERS:
                    raise InputError(f"{path}: more than {MAX_MEMBERS} files")
                # only regular files that stay under the root (symlinks are not followed)
                if f.is_symlink() or not f.is_file():
                    continue
                rel = f.relative_to(path).as_posix()
                if not f.resolve().is_relative_to(root):  # pragma: no cover - symlinked parents
                    continue
                self._names.append(rel)

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()

    def __enter__(self) -> Artefact:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def names(self, under: str = "") -> Iterator[str]:
        for n in self._names:
            if n.startswith(under) and ".." not in PurePosixPath(n).parts:
                yield n

    def read(self, name: str) -> bytes:
        if name not in self._names or ".." in PurePosixPath(name).parts:
            raise InputError(f"{self.path}: no member {name!r}")
        from cannenv import records

        if self._zip is not None:
            info = self._zip.getinfo(name)
            if info.file_size > MAX_MEMBER:
                raise InputError(f"{self.path}:{name}: {info.file_size} bytes, more than {MAX_MEMBER} read")
            self._spend(name, info.file_size)
            data = records.read_zip_member(self._zip, info, MAX_MEMBER, source=str(self.path))
        else:
            data = records.read_bytes(
                self.path / name, what="artefact member", max_bytes=MAX_MEMBER, nofollow=True
            )
            self._spend(name, len(data))
        return data

    def _spend(self, name: str, size: int) -> None:
        self._read_total += size
        if self._read_total > MAX_TOTAL:
            raise InputError(
                f"{self.path}:{name}: reading it would take more than {MAX_TOTAL} bytes from this "
                "artefact in all; an importer reads a few small manifests",
                hint="is this the vendor's artefact?",
            )

    def member_sha256(self, name: str) -> str:
        return hashlib.sha256(self.read(name)).hexdigest()

    def provenance(self, package: str, version: str, name: str) -> Provenance:
        return Provenance(package, version, name, self.sha256 or self.member_sha256(name))
