"""Import of the "Ascend Auxiliary Software" table from real torch_npu METADATA (PyPI wheels)."""

from __future__ import annotations

import contextlib
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from cannenv import matrix
from cannenv.commands.matrix import matrix as matrix_group
from cannenv.errors import InputError
from cannenv.torch_npu_import import merge_rows, parse_table, read_table
from cannenv.versions import parse_pep440

DATA = Path(__file__).resolve().parents[1] / "data" / "torch_npu"
OLD = DATA / "torch_npu-2.1.0.post8.METADATA"
NEW = DATA / "torch_npu-2.7.1.post2.METADATA"


def test_old_wheel_table_with_continuations_and_odd_cells() -> None:
    t = read_table(OLD)
    assert t.package_version == "2.1.0.post8" and t.source_id == "WHEEL-torch_npu-2.1.0.post8"
    rows = {(r.cann, r.torch, r.torch_npu) for r in t.rows}
    assert ("8.0.RC3", "2.1.0", "2.1.0.post8") in rows  # continuation row: blank CANN cell
    assert ("5.0.3", "1.8.1", "1.5.0.post3") in rows
    beta = next(r for r in t.rows if r.raw_torch_npu.startswith("1.11.0.rc2"))
    assert beta.torch_npu == "1.11.0.rc2" and beta.prerelease and "（" in beta.raw_torch_npu
    assert beta.cann == "6.0.1" and beta.branch == "v1.11.0-3.0.0"
    assert t.warnings == ()
    assert len(t.rows) == 37


def test_new_wheel_table_matches_the_compatibility_rows() -> None:
    t = read_table(NEW)
    m = matrix.load()
    known = {(r.cann, r.torch, r.torch_npu) for r in m.torch_npu}
    for r in t.rows:  # the matrix stores PEP 440 canonical spellings (2.1.0.rc1 -> 2.1.0rc1)
        assert (r.cann, r.torch, str(parse_pep440(r.torch_npu))) in known, r
    assert ("8.5.0", "2.6.0", "2.6.0.post5") in {(r.cann, r.torch, r.torch_npu) for r in t.rows}


def test_reads_a_wheel(tmp_path: Path) -> None:
    whl = tmp_path / "torch_npu-2.1.0.post8-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.writestr("torch_npu-2.1.0.post8.dist-info/METADATA", OLD.read_text(encoding="utf-8"))
    assert read_table(whl).rows == read_table(OLD).rows


def test_not_a_torch_npu_metadata(tmp_path: Path) -> None:
    p = tmp_path / "METADATA"
    p.write_text("Metadata-Version: 2.1\nName: other\nVersion: 1.0\n")
    with pytest.raises(InputError):
        read_table(p)


def test_merge_adds_missing_rows_with_wheel_as_source(tmp_path: Path) -> None:
    target = tmp_path / "torch_npu.yaml"
    target.write_text(
        "# my rows\nschema_version: 1\nsources:\n  - {id: PT-COMPAT, title: compat table}\ntorch_npu:\n"
        '  - {torch_npu: "2.4.0", torch: "2.4.0", cann: "8.0.RC3", sources: [PT-COMPAT]}\n'
        "# trailing comment\n"
    )
    added = merge_rows(target, read_table(OLD))
    assert len(added) == 36
    text = target.read_text()
    assert text.startswith("# my rows") and "# trailing comment" in text
    m = matrix.load([target])
    assert "WHEEL-torch_npu-2.1.0.post8" in m.sources
    pre = m.torch_npu_rows(cann="8.0.RC2.alpha002", torch="2.3.1")
    assert [(r.torch_npu, r.status) for r in pre] == [("2.3.1rc1", "prerelease")]
    assert merge_rows(target, read_table(OLD)) == []  # idempotent


def test_cli_import_json() -> None:
    out = CliRunner().invoke(matrix_group, ["import-torch-npu", str(NEW), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["package_version"] == "2.7.1.post2"
    assert {"cann": "8.1.RC1.alpha002", "torch": "2.6.0", "torch_npu": "2.6.0rc1"}.items() <= next(
        r for r in data["rows"] if r["cann"] == "8.1.RC1.alpha002"
    ).items()


@given(st.text(max_size=200))
def test_parser_never_crashes_on_junk(text: str) -> None:
    with contextlib.suppress(InputError):
        parse_table("## Ascend Auxiliary Software\n" + text)
