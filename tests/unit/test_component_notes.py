"""Issue 30: MindSpeed, MindSpeed-LLM, Triton-Ascend, MindIE-Motor and MindIE-LLM rows imported from
the version tables those repositories keep in git (every revision a branch or tag holds), instead of
typed from pages. tests/data/vendor_refresh/component_notes/ holds the saved documents with refs.json
(tests/data/vendor_refresh/README.md says how they were saved)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.cli import cli
from cannenv.errors import InputError
from cannenv.matrix import component_notes as cn
from cannenv.matrix import load, refresh
from tests.helpers.gitrepo import GitRepo

DATA = Path(__file__).resolve().parents[1] / "data" / "vendor_refresh"
NOTES = DATA / cn.FOLDER
MATRICES = Path(__file__).resolve().parents[2] / "matrices"


def _rows(component: str, version: str, *, superseded: bool = False) -> list[dict[str, object]]:
    doc = json.loads((MATRICES / "component_notes.json").read_text(encoding="utf-8"))
    return [
        r
        for r in doc["components"]
        if r["component"] == component
        and r["version"] == version
        and (r.get("status") == "superseded") == superseded
    ]


def test_shipped_file_is_what_the_importer_makes_of_the_saved_documents() -> None:
    imports = cn.read_folder(NOTES)
    assert {i.repository for i in imports} == set(cn.DOCS)
    assert all(not i.warnings for i in imports), [w for i in imports for w in i.warnings]
    shipped = json.loads((MATRICES / "component_notes.json").read_text(encoding="utf-8"))
    made = cn.matrix_doc(imports)
    assert shipped["components"] == made["components"]
    assert [s["id"] for s in shipped["sources"]] == [s["id"] for s in made["sources"]]
    # the counts the closing note reports
    per_repo = {r: sum(1 for i in imports if i.repository == r) for r in cn.DOCS}
    assert per_repo == {
        "Ascend/MindSpeed-LLM": 8,
        "Ascend/MindSpeed": 5,
        "Ascend/triton-ascend": 2,
        "Ascend/MindIE-Motor": 3,
        "Ascend/MindIE-LLM": 4,
    }
    assert len(made["components"]) == 49
    assert sum(1 for r in made["components"] if r.get("status") == "superseded") == 1
    # the refresh diff over the saved documents: every imported fact is in the matrix
    r = refresh.compare(refresh.gather(DATA), load())
    mine = [c for c in r.changes if c.kind == "component" and c.source.package in cn.DOCS]
    assert len(mine) == 94 and all(c.status == "same" for c in mine)


def test_manifest_names_every_revision_and_the_ones_without_tables() -> None:
    doc = json.loads((NOTES / "Ascend+MindSpeed-LLM" / cn.MANIFEST).read_text(encoding="utf-8"))
    refs = {r for n in doc["notes"] for r in n["refs"]} | {
        r for n in doc["without_tables"] for r in n["refs"]
    }
    # every release branch and tag of the snapshot was looked at (pull refs are not releases)
    assert {"refs/tags/v26.1.0", "refs/heads/2.3.0", "refs/tags/v1.0.RC1.0", "refs/heads/master"} <= refs
    assert len(doc["notes"]) == 8 and len(doc["without_tables"]) == 19
    assert all("file" not in n for n in doc["without_tables"])


def test_mindspeed_llm_release_note_rows() -> None:
    (stack,) = _rows("mindspeed-llm", "26.1.0")[:1]
    assert stack["requires"] == {
        "cann": ["9.1.0"],
        "torchnpu": ["26.1.0"],
        "torch": ["2.7.1"],
        "triton-ascend": ["3.2.2"],
        "python": ["3.10"],
        "mindspeed-core": ["26.1.0_core_r0.12.1"],
        "megatron": ["core_v0.12.1"],
    }
    assert stack["sources"] == [
        "MSLLM-GIT:v26.1.0:010c7469e",
        "MSLLM-GIT:26.1.0:04ac75c14",
        "MSLLM-GIT:master:506cbd1e9",
    ]
    grid = [r for r in _rows("mindspeed-llm", "26.0.0") if "表 3" in str(r["statement"])]
    assert (
        grid[0]["requires"] == {"cann": ["8.3.RCX", "8.5.X", "9.0.X"]} and grid[0]["evidence"] == "declared"
    )
    assert grid[0]["note"] == "'/' (not compatible): cann 9.1.X"
    # Triton-Ascend is bound to the CANN the same row names
    assert _rows("triton-ascend", "3.2.2")[0]["requires"] == {"cann": ["9.1.0"]}


def test_a_later_revision_supersedes_and_both_are_kept() -> None:
    """The v26.0.0 tag's table had no Triton-Ascend column; master's names 3.2.1 for the same release."""
    (old,) = _rows("mindspeed-llm", "26.0.0", superseded=True)
    assert "triton-ascend" not in old["requires"]
    assert old["sources"] == ["MSLLM-GIT:v26.0.0:1ce6b8d24", "MSLLM-GIT:26.0.0:c5246da24"]
    assert "the later revision (master, 2026-08-12T19:13:18+08:00) states" in str(old["note"])
    assert "triton-ascend 3.2.1" in str(old["note"])
    m = load()
    assert all(r.status == "current" for r in m.component_rows("mindspeed-llm", "26.0.0"))
    assert any(
        r.status == "superseded" for r in m.component_rows("mindspeed-llm", "26.0.0", include_superseded=True)
    )


def test_mindspeed_2_3_0_release_note_covers_2_0_0_to_2_3_0() -> None:
    compat = [r for r in _rows("mindspeed", "2.1.0") if r["statement"].endswith("版本兼容性说明")]  # type: ignore[union-attr]
    assert compat[0]["requires"] == {
        "cann": ["8.2.RC1", "8.1.RC1", "8.0.0", "8.0.RC3", "8.0.RC2"],
        "torchnpu": ["7.1.0"],
    }
    stack = [r for r in _rows("mindspeed", "2.1.0") if "表 1" in str(r["statement"])]
    assert stack[0]["requires"]["python"] == ["3.9", "3.10"]  # type: ignore[index]


def test_triton_ascend_commercial_and_community_tables_are_both_kept() -> None:
    rows = {str(r["statement"]).rsplit("/ ", 1)[1]: r["requires"] for r in _rows("triton-ascend", "3.2.0rc4")}
    assert rows == {
        "商用版": {"cann": ["8.3.RC2", "8.3.RC1"]},
        "社区版": {"cann": ["8.3.RC2", "8.5.0.alpha001", "8.3.RC1"]},
    }


def test_mindie_readme_and_typed_release_table_disagree_and_both_show() -> None:
    """MindIE-Motor's v3.0.0.beta.2 README says MindIE 3.0.0 with CANN 9.0.0; the release-management
    table (typed from its page) says 8.5.1: both rows answer, and the answer says they disagree."""
    res = CliRunner().invoke(cli, ["matrix", "query", "--mindie", "3.0.0"])
    out = res.output
    assert "CANN 9.0.0 (validated by the vendor: MindIE-Motor README (README.md), 版本说明)" in out
    assert "CANN 8.5.1" in out and "disagree on CANN" in out


def test_typed_rows_remain_only_where_no_repository_holds_the_table() -> None:
    m = load()
    typed = [r for r in m.components if r.note and r.note.startswith("typed from the page")]
    assert {r.component for r in typed} == {"mindie", "mindie-motor"}
    imported_prefixes = tuple(d.prefix + ":" for d in cn.DOCS.values())
    for r in m.components:
        if r.component in ("mindspeed", "mindspeed-llm", "triton-ascend"):
            assert all(s.startswith(imported_prefixes) for s in r.sources), r


def test_hostile_manifest_and_names_are_refused(tmp_path: Path) -> None:
    work = tmp_path / cn.FOLDER
    shutil.copytree(NOTES, work)
    repo = work / "Ascend+MindIE-LLM"
    man = json.loads((repo / cn.MANIFEST).read_text(encoding="utf-8"))
    good = json.dumps(man)
    for field, bad in (("path", "../../etc/passwd.md"), ("commit", "x" * 40), ("path", "docs/other.md")):
        doc = json.loads(good)
        doc["notes"][0][field] = bad
        (repo / cn.MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
        with pytest.raises(InputError) as exc:
            cn.read_folder(work)
        assert "notes[0]" in exc.value.message
    doc = json.loads(good)
    doc["repository"] = "Evil/repo"
    (repo / cn.MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match="is not one cannenv reads"):
        cn.read_folder(work)
    (repo / cn.MANIFEST).write_text(good, encoding="utf-8")
    (repo / "stray@012345678.README.md").write_text(
        "| MindIE 软件版本 | CANN |\n|--|--|\n| 9.9.9 | 1.0.0 |\n"
    )
    with pytest.raises(InputError, match=r"not in refs\.json"):
        cn.read_folder(work)


def test_values_that_are_not_versions_are_reported_not_guessed() -> None:
    text = (
        "## 版本说明\n\n| MindIE软件版本 | CANN版本兼容性 |\n|:--|:--|\n"
        "| 2.3.0 | 8.5.0; rm -rf / |\n| 在研版本 | 在研版本 |\n"
    )
    imp = cn.parse_doc(text, cn.DocImport("Ascend/MindIE-LLM", "master", "0" * 9, "x", ""))
    assert imp.rows == []
    assert imp.warnings and "is not a version" in imp.warnings[0]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("|-:<>/tdrhabley表 YMindIECANN版本\n 0123456789.")), max_size=600)
)
def test_parser_never_raises(text: str) -> None:
    imp = cn.parse_doc(text, cn.DocImport("Ascend/MindSpeed-LLM", "master", "0" * 9, "x", ""))
    for r in imp.rows:
        assert r.version[:1].isdigit()


def test_save_component_notes_from_a_clone_keeps_every_revision(tmp_path: Path) -> None:
    git = GitRepo(tmp_path / "MindIE-LLM", date="2026-02-24T10:50:18+08:00")
    repo = git.path

    saved = NOTES / "Ascend+MindIE-LLM"
    first = (saved / "v3.0.0.beta.1@b6ad0d512.README.md").read_bytes()
    later = (saved / "master@2f5815d26.README.md").read_bytes()
    git("init", "-q", "-b", "v3.0.0.beta.1")
    (repo / "README.md").write_bytes(first)
    git("add", "-A")
    git("commit", "-qm", "beta.1")
    git("tag", "3.0.0.beta.1")
    git("checkout", "-qb", "master")
    (repo / "README.md").write_bytes(b"# no table here\n")
    git("commit", "-qam", "prose", date="2026-03-01T10:00:00+08:00")
    git("checkout", "-qb", "dev")
    (repo / "README.md").write_bytes(later)
    git("commit", "-qam", "2.3.0", date="2026-04-23T00:52:37+08:00")
    out = tmp_path / "out"
    res = CliRunner().invoke(
        cli, ["matrix", "save-component-notes", str(repo), "Ascend/MindIE-LLM", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert "2 documents with version tables held by 3 refs" in res.output
    man = json.loads((out / cn.FOLDER / "Ascend+MindIE-LLM" / cn.MANIFEST).read_text(encoding="utf-8"))
    assert [n["refs"] for n in man["notes"]] == [
        ["refs/heads/v3.0.0.beta.1", "refs/tags/3.0.0.beta.1"],
        ["refs/heads/dev"],
    ]
    assert [n["refs"] for n in man["without_tables"]] == [["refs/heads/master"]]
    imports = cn.read_folder(out / cn.FOLDER)
    rows = cn.component_rows(imports)
    assert {(r["version"], tuple(r["requires"]["cann"])) for r in rows} == {
        ("2.2.RC1", ("8.3.RC2",)),
        ("2.3.0", ("8.5.0",)),
    }
