"""One way to read back versioned JSON records: every bad file names the file, line or field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from cannenv import records
from cannenv.errors import InputError, NotFoundError


class _Rec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = 1
    name: str
    size: int


def test_missing_file_raises_the_callers_error(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"widget file .*nope\.json does not exist"):
        records.read_text(tmp_path / "nope.json", what="widget file", missing=NotFoundError)
    with pytest.raises(InputError, match="cannot read widget file"):
        records.read_text(tmp_path, what="widget file")  # a directory


def test_bad_json_names_line_and_column() -> None:
    with pytest.raises(InputError, match=r"^w\.json:2: not valid JSON \(.*column 3\)"):
        records.parse_json("{\n  oops\n}", source="w.json")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"schema_version": 2}, "schema_version 2 is not supported: it is newer than this cannenv reads"),
        ({"schema_version": 0}, "schema_version 0 is not supported: this cannenv reads 1..1"),
        ({"schema_version": True}, "schema_version True is not supported"),
        ({}, "schema_version None is not supported"),
        ([1], "expected a JSON object"),
    ],
)
def test_schema_versions_outside_the_readable_range_are_refused(raw: object, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        records.check_schema_version(raw, source="w.json", supported=1, what="widget")
    if isinstance(raw, dict) and not raw:
        records.check_schema_version(raw, source="w.json", supported=1, what="widget", default=1)


def test_validation_names_the_first_field_and_counts_the_rest() -> None:
    with pytest.raises(InputError, match=r"^w\.json: field size: .*integer.* \(and 1 more problems\)$"):
        records.validate(_Rec, {"name": "a", "size": "big", "extra": 1}, source="w.json")
    assert records.validate(_Rec, {"name": "a", "size": 3}, source="w.json").size == 3
