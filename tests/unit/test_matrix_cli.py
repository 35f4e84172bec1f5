"""`cannenv matrix …` through the real CLI entry point (exit codes, JSON shapes, error messages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cannenv.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(["matrix", *args])
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "list", "--family", "Atlas A3", "--json")
    data = json.loads(out)
    assert code == 0 and data["matrix_digest"].startswith("sha256:")
    assert data["stacks"] and all(s["family"] == "a3" for s in data["stacks"])


def test_show_unknown_stack_exit_3_with_hint(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "show", "a2-cann8.3.rc1-torch2.7.2-py3.11")
    assert code == 3 and "Perhaps you meant 'a2-cann8.3.rc1-torch2.7.1-py3.11'" in err


def test_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "show", "a2-cann8.2.rc1-torch2.6.0-py3.11", "--json")
    data = json.loads(out)
    assert code == 0 and data["components"]["driver"]["version"] == "25.0.rc1.1"
    assert data["driver_requirement"]["evidence"] == "recommended" and data["problems"] == []


def test_query_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "query", "--cann", "8.3.RC1", "--torch", "2.7.1", "--python", "3.11", "--json"
    )
    data = json.loads(out)
    assert code == 0 and [r["torch_npu"] for r in data["torch_npu"]] == ["2.7.1"]
    code, out, _ = _run(capsys, "query", "--cann", "8.2.RC1", "--family", "a2", "--json")
    (req,) = json.loads(out)["driver_requirement"]
    assert req["minimum"] == "25.0.rc1" and req["evidence"] == "recommended"
    code, out, _ = _run(capsys, "query", "--driver", "24.1.rc2", "--family", "a2")
    assert code == 0 and "8.1.RC1" in out and "8.2.RC1" not in out


def test_query_names_each_recommended_hdk_where_the_sources_disagree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """CANN 8.0.0: the vendor installer (ascend-deployer 6.0.0 … 7.2rc1) and MindSpeed-LLM say HDK
    24.1.0, the quick-install table 24.1.RC2: both are recorded and the headline picks neither."""
    code, out, _ = _run(capsys, "query", "--cann", "8.0.0", "--family", "a2")
    flat = " ".join(out.split())
    assert code == 0 and "recommended driver 24.1.0 or 24.1.rc2 (the sources name different HDKs" in flat
    assert "driver 24.1.0 [DEPLOYER-6.0.0, DEPLOYER-7.0rc1, DEPLOYER-7.1rc1, DEPLOYER-7.2rc1]" in flat
    code, out, _ = _run(capsys, "query", "--driver", "24.1.0", "--family", "a2")
    assert code == 0 and "8.0.0" in out


def test_resolve_impossible_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys,
        "resolve",
        "--keep",
        "driver=24.1.rc2",
        "--want",
        "torch=2.6.0",
        "--family",
        "a2",
        "--python",
        "3.11",
    )
    assert code == 3
    assert "torch 2.6.0 first comes with CANN 8.2.RC1, whose recommended HDK is 25.0.RC1" in out
    assert "nearest valid change" in out


def test_resolve_bad_pin_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "resolve", "--want", "torch2.6.0")
    assert code == 2 and "KEY=VERSION" in err


def test_lint_shipped_and_bad_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "lint")
    assert code == 0 and out.strip().endswith("ok")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        'schema_version: 1\npython_support:\n  - {torch: ["2.2.0"], python: [3.10], sources: [X]}\n'
    )
    code, out, _ = _run(capsys, "lint", str(bad))
    assert code == 2 and f"{bad}:3" in out and "quote version numbers" in out


def test_schema_prints_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "schema")
    assert code == 0 and json.loads(out)["title"] == "cannenv matrix file"
    code, _, _ = _run(capsys, "schema", "--write", str(tmp_path / "s.json"))
    assert code == 0 and json.loads((tmp_path / "s.json").read_text()) == json.loads(out)


def test_other_matrix_via_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "m.yaml"
    f.write_text("schema_version: 1\nstacks: []\n")
    code, out, _ = _run(capsys, "--matrix", str(f), "list", "--json")
    assert code == 0 and json.loads(out)["stacks"] == []
