"""The image lock file: what exactly went into an image built by ``cannenv image build``.

A lock is a record, written atomically (``cannenv.fsutil``) as canonical JSON (sorted keys, two-space
indent, trailing newline) so that it diffs well and the same content always gives the same bytes.
``cannenv doctor --lock FILE`` reads it with :func:`load_lock` to learn which stack a host or image
is meant to run (``Lock.stack_id``) and which matrix that stack came from (``Lock.matrix_digest``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

if TYPE_CHECKING:
    import os

LOCK_SCHEMA_VERSION: Literal[1] = 1

_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z")


_REQ_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?\Z")
"""A distribution name as PEP 508 spells it: it becomes a package URL (``pkg:pypi/NAME@VERSION``)."""
_REQ_VERSION = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63})?\Z")
"""Empty: not pinned (a requirement taken from the index as it stood)."""
_PINNED_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:-]{0,254}@sha256:[0-9a-f]{64}\Z")
_DIGEST_SUFFIX = re.compile(r"@sha256:[0-9a-f]{64}\Z")


def is_digest_ref(ref: str) -> bool:
    """Whether an image reference is pinned by a digest: ``…@sha256:`` and 64 hex digits, nothing
    after (``@sha256:latest`` and a trailing newline are not digests)."""
    return _DIGEST_SUFFIX.search(ref) is not None


"""``REPO@sha256:<64 hex>``: a pushed image by its digest, never a tag that can move."""


def _check_file_name(value: str | None) -> str | None:
    from cannenv.sanitize import is_plain_file_name

    if value is not None and not is_plain_file_name(value):
        raise ValueError(f"expected a plain file name, got {value!r}")
    return value


def _check_sha256(value: str) -> str:
    if not _SHA256.match(value):
        raise ValueError(f"expected 64 lower-case hex digits (a sha256), got {value!r}")
    return value


class LockedInstaller(BaseModel):
    """One CANN installer file that went into the image."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    component: str  # "toolkit" | "kernels" | "nnal" (matrix component names)
    version: str
    file: str  # file name only, as the vendor publishes it
    sha256: str
    pinned: bool  # True: the digest came from the matrix; False: recorded under --allow-unpinned
    url: str | None = None  # where the vendor publishes it, when the matrix knows
    # When the .run was taken out of the vendor's .zip download: that zip, the vendor's digest it
    # matched, and where the matrix has that digest from (``sha256`` is the extracted .run's).
    archive: str | None = None
    archive_sha256: str | None = None
    archive_source: str | None = None

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str) -> str:
        return _check_sha256(value)

    @field_validator("archive_sha256")
    @classmethod
    def _archive_sha(cls, value: str | None) -> str | None:
        return None if value is None else _check_sha256(value)

    @field_validator("file", "archive")
    @classmethod
    def _file(cls, value: str | None) -> str | None:
        return _check_file_name(value)


class LockedRequirement(BaseModel):
    """One Python distribution installed into the image, with the hashes pip enforced."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str
    hashes: tuple[str, ...] = ()  # "sha256:<hex>"; empty when installed from an index without hashes
    source: str  # "wheelhouse" | an index URL

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _REQ_NAME.match(value):
            raise ValueError(f"expected a distribution name (letters, digits, . _ -), got {value!r}")
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not _REQ_VERSION.match(value):
            raise ValueError(f"expected a version such as 2.8.0 or 2.8.0.post2, got {value!r}")
        return value

    @field_validator("hashes")
    @classmethod
    def _hashes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for h in value:
            if not _DIGEST.match(h):
                raise ValueError(f"expected 'sha256:<64 hex digits>', got {h!r}")
        return value


class Lock(BaseModel):
    """Everything needed to rebuild or to judge an image. Frozen: make a new one to change it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = LOCK_SCHEMA_VERSION
    stack_id: str
    matrix_digest: str
    cannenv_version: str
    os: str
    base_image: str
    base_image_digest: str | None = None  # "sha256:…": the registry digest the base is pinned by
    base_image_id: str | None = None  # "sha256:…": the local image id of the base (not a pin)
    arch: str | None = None  # x86_64 | aarch64
    user: str | None = None  # the image's default user: "HwHiAiUser(UID:GID)" or "root"
    context_digest: str  # sha256 of the rendered build context (Dockerfile + every file in it)
    installers: tuple[LockedInstaller, ...] = ()
    python_requirements: tuple[LockedRequirement, ...] = ()
    driver_range: str  # host driver versions the image accepts, as in its labels
    tag: str | None = None
    image_id: str | None = None  # "sha256:…" of the built image; None until built
    image_digest: str | None = None  # "REPO@sha256:…" once pushed (`cannenv image push`)
    notes: tuple[str, ...] = Field(default=(), description="warnings recorded at lock time")

    @field_validator("image_digest")
    @classmethod
    def _image_digest(cls, value: str | None) -> str | None:
        if value is not None and not _PINNED_REF.match(value):
            raise ValueError(f"expected REPO@sha256:<64 hex digits> (a pushed image's digest), got {value!r}")
        return value

    @field_validator("base_image_digest", "base_image_id", "image_id")
    @classmethod
    def _digests(cls, value: str | None) -> str | None:
        if value is not None and not _DIGEST.match(value):
            raise ValueError(f"expected 'sha256:<64 hex digits>', got {value!r}")
        return value

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"

    @property
    def unpinned(self) -> tuple[LockedInstaller, ...]:
        return tuple(i for i in self.installers if not i.pinned)


def write_lock(path: str | os.PathLike[str], lock: Lock) -> Path:
    """Write ``lock`` atomically; readers see the old file or the whole new one."""
    from cannenv.fsutil import atomic_write_text

    return atomic_write_text(path, lock.to_json())


def load_lock(path: str | os.PathLike[str]) -> Lock:
    """Read and validate a lock file; a bad file raises InputError naming the file and the field."""
    from cannenv import records

    hint = "a lock file is the JSON written by `cannenv image lock`; regenerate it"
    text = records.read_text(
        path, what="lock file", hint="write one with `cannenv image lock STACK_ID --artifacts DIR --out FILE`"
    )
    data = records.parse_json(text, source=str(path), hint=hint)
    records.check_schema_version(
        data,
        source=str(path),
        supported=LOCK_SCHEMA_VERSION,
        what="lock file",
        default=LOCK_SCHEMA_VERSION,
        hint="upgrade cannenv, or regenerate the lock with this version",
    )
    return records.validate(Lock, data, source=str(path), hint=hint)
