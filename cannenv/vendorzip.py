"""The vendor's ``.zip`` downloads of CANN installers: verify the zip's sha256, then take one ``.run``
out of it.

The vendor publishes ``<name>.zip`` holding ``<name>.run`` and its ``.cms``/``.crl`` signature (or, one
level down, a signed inner ``<name>.zip`` that holds them), and its download manifests (ascend-deployer
6.0.0 … 26.0.0: CANN 8.0.RC1 … 9.0.0) give the sha256 of the outer zip only. So the zip
is what can be checked against a vendor digest: it is hashed first, and only a zip whose digest
matches is opened. The zip is then hostile input like any other: only a regular member whose name is
a plain relative path is read, it is streamed with a byte limit (the declared size and a hard cap),
zipfile's CRC check runs on the way, and the bytes are written under a name we choose, never the
member's. The standard library's :mod:`zipfile` does the parsing; nothing else is extracted.
"""

from __future__ import annotations

import hashlib
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cannenv import records
from cannenv.errors import InputError, IntegrityError, NotFoundError
from cannenv.fsutil import sha256_file

__all__ = ["MAX_MEMBER_BYTES", "Extracted", "check_digest", "extract_member"]

MAX_MEMBER_BYTES = 16 << 30  # the largest CANN .run (toolkit) is ~2-3 GB; a ZIP bomb stops here
MAX_MEMBERS = 1000  # the vendor's zips hold the .run and its signature files
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Extracted:
    path: Path  # the .run written under the caller's directory
    sha256: str  # of the extracted bytes
    member: str  # its name inside the zip


def check_digest(path: Path, expected: str, *, source: str) -> str:
    """The sha256 of ``path`` if it equals ``expected`` (the vendor's), else IntegrityError (exit 5)."""
    digest = sha256_file(path)
    if digest != expected:
        raise IntegrityError(
            f"{path}: sha256 {digest} does not match the vendor's digest {expected} for {path.name} "
            f"({source})",
            hint="the download is corrupt, truncated or not the vendor's release: download it again; "
            "nothing was extracted from it",
        )
    return digest


def _unsafe_name(name: str) -> str | None:
    """Why a member name is refused (absolute, drive, backslash, ``..``, control characters)."""
    if not name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if "\\" in name:
        return "a backslash in the name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a control character in the name"
    if ".." in PurePosixPath(name).parts:
        return "a '..' component (path traversal)"
    return None


def extract_member(
    zip_path: Path, member: str, dest_dir: Path, *, limit: int = MAX_MEMBER_BYTES
) -> Extracted:
    """Write the regular member whose file name is ``member`` (at any depth) to ``dest_dir/member``.

    A vendor zip that holds no such member but one signed inner zip of the same stem
    (``<name>.zip`` with its ``.cms``/``.crl``, as ascend-deployer's ``jobs.py`` unpacks a payload
    that is itself a zip) is opened one level down, bounded the same way; never deeper. The digest
    that was checked stays the outer zip's.

    Refused with a clear error: a zip that is not a zip, any member name that is a path traversal,
    no member or more than one member of that name, a member that is a link/directory/encrypted,
    one larger than ``limit`` or than it declares, a CRC mismatch.
    """
    if _unsafe_name(member) or "/" in member:
        raise InputError(f"installer name {member!r} is not a plain file name")
    with _open(zip_path) as zf:
        infos = _checked_infos(zf, str(zip_path))
        hits = _named(infos, member)
        inner_name = PurePosixPath(member).stem + ".zip"
        inner = _named(infos, inner_name)
        if not hits and len(inner) == 1:
            inner_path = dest_dir / f".cannenv-inner-{inner_name}"
            _write(zf, inner[0], inner_path, limit, str(zip_path))
            try:
                with _open(inner_path, label=f"{zip_path}!{inner[0].filename}") as izf:
                    label = f"{zip_path}!{inner[0].filename}"
                    found = _one(_named(_checked_infos(izf, label), member), member, label, izf)
                    sha = _write(izf, found, dest_dir / member, limit, label)
                    return Extracted(dest_dir / member, sha, f"{inner[0].filename}!{found.filename}")
            finally:
                inner_path.unlink(missing_ok=True)
        found = _one(hits, member, str(zip_path), zf)
        sha = _write(zf, found, dest_dir / member, limit, str(zip_path))
        return Extracted(dest_dir / member, sha, found.filename)


def _open(path: Path, *, label: str | None = None) -> zipfile.ZipFile:
    return records.open_zip(
        path,
        max_members=MAX_MEMBERS,
        what=f"vendor zip{' ' + label if label else ''}",
        hint="the vendor's zip holds the .run and its signature",
    )


def _checked_infos(zf: zipfile.ZipFile, label: str) -> list[zipfile.ZipInfo]:
    infos = zf.infolist()
    for info in infos:
        why = _unsafe_name(info.filename)
        if why is not None:
            raise InputError(
                f"{label}: member {info.filename!r} has {why}; refusing the zip",
                hint="the vendor's zips hold plain file names; this one was altered",
            )
    return infos


def _named(infos: list[zipfile.ZipInfo], name: str) -> list[zipfile.ZipInfo]:
    return [i for i in infos if PurePosixPath(i.filename).name == name and not i.is_dir()]


def _one(hits: list[zipfile.ZipInfo], member: str, label: str, zf: zipfile.ZipFile) -> zipfile.ZipInfo:
    if not hits:
        names = [i.filename for i in zf.infolist()][:10]
        raise NotFoundError(
            f"{label}: no member {member} in the zip",
            hint="the zip holds: "
            + (", ".join(names) or "nothing")
            + "; the matrix names the installer inside the vendor's zip of the same name",
        )
    if len(hits) > 1:
        raise InputError(
            f"{label}: {len(hits)} members are named {member}: " + ", ".join(i.filename for i in hits),
            hint="the vendor's zip holds the installer once",
        )
    return hits[0]


def _write(zf: zipfile.ZipFile, info: zipfile.ZipInfo, out_path: Path, limit: int, label: str) -> str:
    """Stream ``info`` into the new file ``out_path`` (bounded, CRC-checked); its sha256."""
    chunks = records.zip_member_chunks(zf, info, limit, source=label, chunk=_CHUNK)
    h = hashlib.sha256()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with out_path.open("xb") as dst:
            for chunk in chunks:
                h.update(chunk)
                dst.write(chunk)
    except OSError as exc:
        out_path.unlink(missing_ok=True)
        raise InputError(f"{label}: member {info.filename} cannot be written ({exc})") from None
    except InputError:
        out_path.unlink(missing_ok=True)
        raise
    return h.hexdigest()
