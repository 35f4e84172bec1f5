"""The vendor's ``.zip`` downloads of CANN installers: verify the zip's sha256, then take one ``.run``
out of it.

From CANN 8.1.RC1 the vendor publishes ``<name>.zip`` holding ``<name>.run`` and its ``.cms``/``.crl``
signature, and its download manifests (ascend-deployer) give the sha256 of the zip only. So the zip
is what can be checked against a vendor digest: it is hashed first, and only a zip whose digest
matches is opened. The zip is then hostile input like any other: only a regular member whose name is
a plain relative path is read, it is streamed with a byte limit (the declared size and a hard cap),
zipfile's CRC check runs on the way, and the bytes are written under a name we choose, never the
member's. The standard library's :mod:`zipfile` does the parsing; nothing else is extracted.
"""

from __future__ import annotations

import hashlib
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

    Refused with a clear error: a zip that is not a zip, any member name that is a path traversal,
    no member or more than one member of that name, a member that is a link/directory/encrypted,
    one larger than ``limit`` or than it declares, a CRC mismatch.
    """
    if _unsafe_name(member) or "/" in member:
        raise InputError(f"installer name {member!r} is not a plain file name")
    zf = records.open_zip(
        zip_path,
        max_members=MAX_MEMBERS,
        what="vendor zip",
        hint="the vendor's zip holds the .run and its signature",
    )
    with zf:
        infos = zf.infolist()
        for info in infos:
            why = _unsafe_name(info.filename)
            if why is not None:
                raise InputError(
                    f"{zip_path}: member {info.filename!r} has {why}; refusing the zip",
                    hint="the vendor's zips hold plain file names; this one was altered",
                )
        hits = [i for i in infos if PurePosixPath(i.filename).name == member and not i.is_dir()]
        if not hits:
            names = [i.filename for i in infos][:10]
            raise NotFoundError(
                f"{zip_path}: no member {member} in the zip",
                hint="the zip holds: "
                + (", ".join(names) or "nothing")
                + "; the matrix names the installer inside the vendor's zip of the same name",
            )
        if len(hits) > 1:
            raise InputError(
                f"{zip_path}: {len(hits)} members are named {member}: " + ", ".join(i.filename for i in hits),
                hint="the vendor's zip holds the installer once",
            )
        info = hits[0]
        chunks = records.zip_member_chunks(zf, info, limit, source=str(zip_path), chunk=_CHUNK)
        dest_dir.mkdir(parents=True, exist_ok=True)
        out_path = dest_dir / member
        h = hashlib.sha256()
        try:
            with out_path.open("xb") as dst:
                for chunk in chunks:
                    h.update(chunk)
                    dst.write(chunk)
        except OSError as exc:
            out_path.unlink(missing_ok=True)
            raise InputError(f"{zip_path}: member {info.filename} cannot be written ({exc})") from None
        except InputError:
            out_path.unlink(missing_ok=True)
            raise
        return Extracted(out_path, h.hexdigest(), info.filename)
