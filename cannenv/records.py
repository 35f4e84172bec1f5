"""Reading versioned JSON records (facts, lock files, fleet manifests) with one set of messages.

Every record file cannenv reads back is JSON with a ``schema_version`` and a value class (or a
pydantic model) behind it. A bad file must say which file, which line or field, and what to do —
the same way everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cannenv.errors import CannenvError, InputError

if TYPE_CHECKING:
    import os

T = TypeVar("T")


MAX_RECORD_BYTES = 64 << 20
"""The largest record file read (facts of a big host are ~100 KB; a fleet JSON a few MB)."""


def read_bytes(
    path: str | os.PathLike[str],
    *,
    what: str,
    missing: type[CannenvError] = InputError,
    hint: str | None = None,
    max_bytes: int = MAX_RECORD_BYTES,
) -> bytes:
    """The file's bytes: a regular file of at most ``max_bytes`` (a FIFO, a device such as
    /dev/zero, a directory or a larger file is an InputError, never a hang or a MemoryError);
    a missing file raises ``missing`` (exit code per caller)."""
    from cannenv.host import FileTooLargeError, NotRegularFileError, read_regular

    p = Path(path)
    try:
        return read_regular(p, max_bytes)
    except FileNotFoundError:
        raise missing(f"{what} {p} does not exist", hint=hint) from None
    except FileTooLargeError as exc:
        raise InputError(
            f"{what} {p} is {exc.size} bytes; cannenv reads at most {max_bytes} for one", hint=hint
        ) from None
    except NotRegularFileError as exc:
        raise InputError(
            f"cannot read {what} {p}: it is {exc.strerror}, expected a regular file", hint=hint
        ) from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read {what} {p}: {reason}", hint=hint) from None


def read_text(
    path: str | os.PathLike[str],
    *,
    what: str,
    missing: type[CannenvError] = InputError,
    hint: str | None = None,
    max_bytes: int = MAX_RECORD_BYTES,
) -> str:
    """The file's UTF-8 text (see :func:`read_bytes`); bytes that are not UTF-8 are an InputError."""
    data = read_bytes(path, what=what, missing=missing, hint=hint, max_bytes=max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"cannot read {what} {Path(path)}: not UTF-8 text (byte {exc.start})", hint=hint
        ) from None


def parse_json(text: str, *, source: str, hint: str | None = None) -> Any:
    """JSON from ``text``; a syntax error names ``source``, the line and the column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})", hint=hint
        ) from None


def check_schema_version(
    raw: Any, *, source: str, supported: int, what: str, default: int | None = None, hint: str | None = None
) -> None:
    """Refuse a record whose ``schema_version`` is missing (unless ``default``), odd, or newer."""
    if not isinstance(raw, dict):
        raise InputError(f"{source}: expected a JSON object ({what})", hint=hint)
    version = raw.get("schema_version", default)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= supported:
        reads = f"this cannenv reads 1..{supported}"
        why = f"it is newer than {reads}" if isinstance(version, int) and version > supported else reads
        raise InputError(
            f"{source}: {what} schema_version {version!r} is not supported: {why}",
            hint=hint or "upgrade cannenv, or write the file again with this version",
        )


def validate(model: type[T], raw: Any, *, source: str, hint: str | None = None) -> T:
    """``model`` (a value class or pydantic model) from ``raw``; a validation error names the first
    field and counts the rest."""
    from cannenv import values

    ValidationError = values.validation_error(source)
    try:
        return values.validate(model, raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise InputError(f"{source}: field {where}: {first['msg']}{more}", hint=hint) from None
