"""A table of rows read out of a vendor's source (``hccl_messages.yaml``, ``aclnn_messages.yaml``):
loaded bounded and validated, its JSON Schema, and one repository's rows replaced by an importer's
refresh — one row a line (a refresh diff reads line by line), the header, repositories and reviewed
rules kept as a person wrote them, the file written atomically."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
ROWS = "\nrows:\n"


def load_validated(path: str | Path, model: type[M], *, what: str, hint: str, max_bytes: int) -> M:
    """The file read with at most ``max_bytes`` and validated as ``model`` (an error names the field)."""
    from cannenv.explain.models import read_yaml, validate

    p, raw = read_yaml(path, what=what, max_bytes=max_bytes)
    return validate(model, raw, source=str(p), what=what, hint=hint)


def schema_of(model: type[BaseModel], title: str) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = title
    return schema


def dump_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows as YAML flow mappings, one a line, every value in JSON's spelling (valid YAML)."""
    return "".join(
        "  - {" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in r.items()) + "}\n"
        for r in rows
    )


def replace_rows(table: Path, repo_key: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Replace the rows of ``repo_key`` (each row names its ``repo`` first) by ``rows``; atomic."""
    from cannenv.fsutil import atomic_write_text

    text = table.read_text(encoding="utf-8")
    head, sep, body = text.partition(ROWS)
    if not sep:
        raise ValueError(f"{table}: no 'rows:' section")
    mark = f"{{repo: {json.dumps(repo_key)},"
    kept = [ln for ln in body.splitlines(keepends=True) if ln.strip() and mark not in ln]
    atomic_write_text(table, head + sep + "".join(kept) + dump_rows(rows))
