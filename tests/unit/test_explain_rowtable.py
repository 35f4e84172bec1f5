"""The imported vendor-source tables' files (hccl_messages.yaml, aclnn_messages.yaml): an importer's
refresh replaces one repository's rows, keeps the rest and the reviewed header as written, and writes
the file atomically; the shipped files are exactly what the row writer writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cannenv.explain import logsource, opapi
from cannenv.explain.rowtable import dump_rows, replace_rows

HEADER = "# reviewed by a person: kept as written\nschema_version: 1\nrepos:\n  a: {commit: x}\n"


@pytest.mark.parametrize("table", [logsource.shipped_path(), opapi.shipped_path()], ids=["hccl", "aclnn"])
def test_the_shipped_rows_are_what_the_writer_writes(table: Path) -> None:
    text = table.read_text(encoding="utf-8")
    _, sep, body = text.partition("\nrows:\n")
    assert sep
    assert dump_rows(yaml.safe_load(text)["rows"]) == body


def test_a_refresh_replaces_one_repositorys_rows_and_keeps_the_rest(tmp_path: Path) -> None:
    table = tmp_path / "t.yaml"
    rows = [{"repo": "a", "line": 1, "format": "x"}, {"repo": "b", "line": 2, "format": 'quote " and ü'}]
    table.write_text(HEADER + "rows:\n" + dump_rows(rows), encoding="utf-8")
    replace_rows(table, "a", [{"repo": "a", "line": 9, "format": "new"}])
    text = table.read_text(encoding="utf-8")
    assert text.startswith(HEADER + "rows:\n")
    assert yaml.safe_load(text)["rows"] == [rows[1], {"repo": "a", "line": 9, "format": "new"}]
    assert [p.name for p in tmp_path.iterdir()] == ["t.yaml"]  # no temporary file left behind


def test_a_file_without_rows_is_refused_and_left_alone(tmp_path: Path) -> None:
    table = tmp_path / "t.yaml"
    table.write_text(HEADER, encoding="utf-8")
    with pytest.raises(ValueError, match="no 'rows:' section"):
        replace_rows(table, "a", [])
    assert table.read_text(encoding="utf-8") == HEADER


def test_logsource_writes_its_rows_under_the_repository_key(tmp_path: Path) -> None:
    table = tmp_path / "t.yaml"
    table.write_text(HEADER + "rows:\n", encoding="utf-8")
    logsource.write_rows(table, "a", [{"path": "src/x.cc", "line": 3}])
    assert yaml.safe_load(table.read_text(encoding="utf-8"))["rows"] == [
        {"repo": "a", "path": "src/x.cc", "line": 3}
    ]
