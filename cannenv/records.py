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


def read_text(
    path: str | os.PathLike[str],
    *,
    what: str,
    missing: type[CannenvError] = InputError,
    hint: str | None = None,
) -> str:
    """The file's text; a missing file raises ``missing`` (exit code per caller), others InputError."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise missing(f"{what} {p} does not exist", hint=hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read {what} {p}: {reason}", hint=hint) from None


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
