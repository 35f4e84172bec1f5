"""A table of rows read out of a vendor's source (``hccl_messages.yaml``, ``aclnn_messages.yaml``):
loaded bounded and validated, its JSON Schema, and one repository's rows replaced by an importer's
refresh — one row a line (a refresh diff reads line by line), the header, repositories and reviewed
rules kept as a person wrote them, the file written atomically."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
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


def importer_main(
    args: Sequence[str],
    *,
    module: str,
    table: Path,
    schema: Callable[[], dict[str, Any]],
    read: Callable[[Path, str, Sequence[str]], list[dict[str, Any]]],
    diff: Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, list[dict[str, Any]]]],
    noun: str = "rows",
    extra: str = "",
    tree_hint: str = "git --git-dir=MIRROR archive COMMIT | tar -x -C TREE",
) -> int:
    """The importers' one command line (``python -m cannenv.explain.<module>``): ``--schema`` prints
    the table's JSON Schema; ``--import TREE REPO_KEY [EXTRA …]`` reads a source tree (the
    repository's files at the table's commit for REPO_KEY) with ``read`` and prints the refresh
    diff, exit 1 while it has something to review; ``--write`` with it replaces that repository's
    rows (exit 0). Usage and exit 2 otherwise."""
    import sys

    import yaml

    if list(args) == ["--schema"]:
        print(json.dumps(schema(), indent=2, sort_keys=True))
        return 0
    write = "--write" in args
    rest = [a for a in args if a != "--write"]
    if len(rest) >= 3 and rest[0] == "--import" and (extra or len(rest) == 3):
        tree, key = Path(rest[1]), rest[2]
        raw = yaml.safe_load(table.read_text(encoding="utf-8"))
        old = [r for r in raw.get("rows") or () if r.get("repo") == key]
        new = read(tree, key, rest[3:])
        d = diff(old, new)
        if write:
            replace_rows(table, key, new)
        print(
            f"# {key}: {len(new)} {noun} from {tree} ({len(old)} in the table): "
            + ", ".join(f"{len(d[w])} {w}" for w in ("lacks", "changed", "gone"))
        )
        print(yaml.safe_dump(d, sort_keys=False, width=200, allow_unicode=True), end="")
        return 1 if any(d.values()) and not write else 0
    schema_file = f"matrices/explain/{table.name.removesuffix('.yaml')}.schema.json"
    print(
        f"usage: python -m cannenv.explain.{module} --schema > {schema_file}\n"
        f"       python -m cannenv.explain.{module} --import TREE REPO_KEY{extra} [--write]\n"
        f"       (TREE: the repository's files at the commit the table names for REPO_KEY, e.g.\n"
        f"        {tree_hint})",
        file=sys.stderr,
    )
    return 2
