"""The error tables of the libraries and tools around the stack: ``matrices/explain/libtables.yaml``.

A user pastes an error a library raised (OpenCV's ``cv2.error: OpenCV(4.x) …: error: (-215:Assertion
failed) …``, ONNX Runtime's ``[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : …``, Paddle's
``(InvalidArgument) …``, a compiler's diagnostic, CMake's ``CMake Error at FILE:LINE``), and the
library's own table says what kind of error it is. Each table is the library's complete enum (read
from its source at a commit), each row with the causes its meaning points to — only where the
meaning says so (an invalid argument or a failed assertion the library raises on its caller's input
is ``not-a-version-problem``; a memory category ``oom``; ``NotImplemented`` names none) — and the
forms the library prints it in (linear patterns, one anchor each).

A row found in a log becomes a derived signature (:func:`cannenv.explain.judge.derive`) at
:data:`~cannenv.explain.signatures.LIBRARY_TABLE_PRIORITY`, below every other signature: a vendor
code, a missing library or a message of the stack anywhere in the log still decides. A row that
names no cause still matches and says what the library's table calls it (its note).

    python -m cannenv.explain.libtables --schema > matrices/explain/libtables.schema.json
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.explain.parts import LibForm, LibRow, LibTable

if TYPE_CHECKING:
    from cannenv.explain.models import LibTablesFile

MAX_LIBTABLES_BYTES = 2 << 20
"""The file's bound (MPICH's whole message table is 1,309 rows)."""


def build(model: LibTablesFile) -> tuple[tuple[LibTable, ...], dict[str, tuple[str, str]]]:
    """The engine tables and the file's sources (id -> (title, url)); a form marked ``each_row``
    becomes one form per row, ``{key}`` replaced by the row's key and ``{printed}`` by the text it
    prints (MindSpore Lite's ``-300 Failed to find operator.``; a row without one has no such form)."""
    tables = []
    for t in model.tables:
        forms: list[LibForm] = []
        for f in t.forms:
            if not f.each_row:
                forms.append(LibForm(f.id, f.anchor, f.regex, f.row, f.source))
                continue
            uses_printed = "{printed}" in f.anchor
            for r in t.rows:
                if not r.printed_form or (uses_printed and not r.printed):
                    continue
                printed = r.printed or ""
                forms.append(
                    LibForm(
                        f"{f.id}-{r.key.lower()}",
                        f.anchor.replace("{key}", r.key).replace("{printed}", printed),
                        f.regex.replace("{key}", re.escape(r.key)).replace("{printed}", re.escape(printed)),
                        None,
                        f.source,
                    )
                )
        rows = tuple(
            LibRow(r.key, r.name, r.printed, r.meaning, r.causes, r.reason, r.source, r.line) for r in t.rows
        )
        tables.append(LibTable(t.id, t.title, t.component, tuple(forms), rows, t.fold_case, t.priority))
    return tuple(tables), {k: (v.title, v.url) for k, v in model.sources.items()}


def parse(raw: Any, *, source: str) -> LibTablesFile:
    from cannenv.explain.models import LibTablesFile, validate

    return validate(
        LibTablesFile,
        raw,
        source=source,
        what="library error tables",
        hint="see docs/explain.md (The libraries' own error tables)",
    )


def load(path: str | Path) -> tuple[tuple[LibTable, ...], dict[str, tuple[str, str]]]:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="library error tables", max_bytes=MAX_LIBTABLES_BYTES)
    return build(parse(raw, source=str(p)))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "libtables.yaml"


@cache
def shipped() -> tuple[tuple[LibTable, ...], dict[str, tuple[str, str]]]:
    return load(shipped_path())


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import LibTablesFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(
        LibTablesFile, "cannenv explain: the error tables of the libraries and tools around the stack"
    )


def diff_rows(
    old: list[dict[str, Any]], new: list[dict[str, Any]], *, by: str = "key"
) -> dict[str, list[Any]]:
    """An importer's refresh diff of one table's rows (or forms: ``by="id"``), by row key: rows the
    table lacks, rows changed, keys gone."""
    was = {r[by]: r for r in old}
    now = {r[by]: r for r in new}
    return {
        "lacks": [now[k] for k in now if k not in was],
        "changed": [now[k] for k in now if k in was and was[k] != now[k]],
        "gone": [k for k in was if k not in now],
    }


def write_rows(
    table_file: Path,
    table_id: str,
    rows: list[dict[str, Any]],
    *,
    forms: list[dict[str, Any]] | None = None,
    header: dict[str, Any] | None = None,
    sources: dict[str, dict[str, str]] | None = None,
) -> None:
    """Replace one table's rows (and its forms, where given) in libtables.yaml, its header comments
    kept; written atomically. A table the file lacks is added with ``header`` (title, component);
    ``sources`` are added to (or replace) the file's sources of those ids."""
    import yaml

    from cannenv.fsutil import atomic_write_text
    from cannenv.records import load_yaml

    text = table_file.read_text(encoding="utf-8")
    head = text[: text.index("schema_version")]
    data = load_yaml(text)
    if sources:
        data["sources"].update(sources)
    table = next((t for t in data["tables"] if t["id"] == table_id), None)
    if table is None:
        if header is None or forms is None:
            raise ValueError(f"{table_file}: no table {table_id}")
        table = {"id": table_id, **header, "forms": [], "rows": []}
        data["tables"].append(table)
    if forms is not None:
        table["forms"] = forms
    table["rows"] = rows
    atomic_write_text(table_file, head + yaml.safe_dump(data, sort_keys=False, width=200, allow_unicode=True))


def main(argv: list[str] | None = None) -> int:
    """``python -m cannenv.explain.libtables --schema``: print the JSON Schema of the file."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["--schema"]:
        print(
            "usage: python -m cannenv.explain.libtables --schema > matrices/explain/libtables.schema.json",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
