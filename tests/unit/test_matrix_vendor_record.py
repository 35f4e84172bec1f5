"""Issue 30: the complete vendor record through importers with a refresh diff.

tests/data/vendor_refresh/ holds the saved artefacts (README there names each source): the TorchNPU
release note of every release branch of Ascend/pytorch, the package index's listing of torch-npu with
the METADATA headers of all its wheels, and vllm-ascend sdists (their version tables, install page and
PKG-INFO). The shipped generated files must be exactly what the importers make of them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv import checks
from cannenv.cli import cli
from cannenv.errors import ExternalError, InputError
from cannenv.facts import CannFacts, CannInstall, Facts, PythonFacts
from cannenv.matrix import load, refresh, torchnpu_notes, wheel_metadata
from cannenv.matrix.artefact import MAX_MEMBER
from tests.helpers.gitrepo import GitRepo

DATA = Path(__file__).resolve().parents[1] / "data" / "vendor_refresh"
MATRICES = Path(__file__).resolve().parents[2] / "matrices"


def _query(*args: str) -> tuple[int, list[str]]:
    res = CliRunner().invoke(cli, ["matrix", "query", *args])
    return res.exit_code, res.output.splitlines()


# ------------------------------------------------------------------ the importers and their diff


def test_shipped_files_are_what_the_importers_make_of_the_artefacts(tmp_path: Path) -> None:
    r = refresh.compare(refresh.gather(DATA), load())
    assert r.unexplained == [], [f"{c.status} {c.key}" for c in r.unexplained][:5]
    counts = r.counts()
    assert counts["pypi.org torch-npu"]["imported"] == 512  # every wheel file of the listing
    # every revision of the release note a release tag or branch holds (refs.json names them all)
    assert {k for k in counts if k.startswith("Ascend/pytorch")} == {
        "Ascend/pytorch master",
        "Ascend/pytorch v2.7.1-26.1.0",
        "Ascend/pytorch v2.7.1-26.0.0",
        "Ascend/pytorch v2.7.1-7.3.0",
        "Ascend/pytorch v26.1.0-pytorch2.7.1",
        "Ascend/pytorch v26.1.0-beta.1-pytorch2.7.1",
        "Ascend/pytorch v26.0.0-pytorch2.7.1",
        "Ascend/pytorch v7.3.1-pytorch2.7.1",
        "Ascend/pytorch v7.3.0-pytorch2.7.1",
    }
    work = tmp_path / "m"
    shutil.copytree(MATRICES, work)
    # vllm_ascend.json comes from the full sdists (its sources name their sha256); the excerpts here
    # give the same facts (unexplained == [] above) under the excerpts' own digests
    generated = ("torchnpu.json", "wheel_metadata.json")
    before = {n: (work / n).read_text(encoding="utf-8") for n in generated}
    refresh.write(refresh.gather(DATA), work)
    assert {n: (work / n).read_text(encoding="utf-8") for n in generated} == before


def test_refresh_against_an_older_matrix_names_every_new_fact(tmp_path: Path) -> None:
    work = tmp_path / "m"
    shutil.copytree(MATRICES, work)
    for name in ("torchnpu.json", "wheel_metadata.json"):
        (work / name).unlink()
    from cannenv.matrix import load_files
    from cannenv.matrix.loader import matrix_files

    older = load_files(matrix_files([work]), use_cache=False)
    r = refresh.compare(refresh.gather(DATA), older)
    added = [c for c in r.changes if c.status == "added"]
    kinds = {c.kind for c in added}
    assert {"wheel_metadata", "torchnpu_compat"} <= kinds
    assert any(c.key == "torch-npu 2.13.0 cp311 x86_64: torch ==2.13.0.*, Requires-Python -" for c in added)
    assert any(c.key == "TorchNPU 26.0.0 with CANN 9.0.0, 8.5.0, 8.3.RC1, 8.2.RC1, 8.1.RC1: Y" for c in added)
    assert all(c.source.sha256 for c in r.changes)


def test_release_notes_rows_and_python_column() -> None:
    notes = {n.ref: n for n in torchnpu_notes.read_folder(DATA / torchnpu_notes.FOLDER)}
    assert {k: (n.release, len(n.pairs)) for k, n in notes.items()} == {
        "master": ("26.1.0", 5),
        "v2.7.1-26.1.0": ("26.1.0", 5),
        "v26.1.0-pytorch2.7.1": ("26.1.0", 5),
        "v2.7.1-26.0.0": ("26.0.0", 4),
        "v26.0.0-pytorch2.7.1": ("26.0.0", 4),
        "v26.1.0-beta.1-pytorch2.7.1": ("26.0.0", 4),  # the beta tags still held 26.0.0's note
        "v2.7.1-7.3.0": ("7.3.0", 4),
        "v7.3.1-pytorch2.7.1": ("7.3.0", 4),
        "v7.3.0-pytorch2.7.1": ("7.3.0", 4),
    }
    # refs.json: the path, the full commit, its date and every ref holding the same blob
    assert notes["master"].doc_path == "docs/zh/release_notes.md"
    assert notes["master"].refs == (
        "refs/heads/master",
        "refs/tags/compatibility_release-pytorch2.13.0",
        "refs/tags/v26.2.0-beta.1-pytorch2.13.0",
    )
    assert notes["v2.7.1-26.0.0"].refs == ("refs/heads/v2.7.1-26.0.0", "refs/tags/v26.0.1-pytorch2.7.1")
    assert (notes["v26.1.0-pytorch2.7.1"].full_commit or "").startswith("d1f2bfb1d")
    assert all(not n.warnings for n in notes.values())
    p = {x.torch_npu: x for x in notes["v2.7.1-7.3.0"].pairs}
    assert p["2.6.0.post5"].python == ("3.9", "3.10", "3.11", "3.12")
    assert p["2.9.0"].cann == "8.5.0" and p["2.9.0"].branch == "v2.9.0-7.3.0"
    grid = [c for c in notes["v2.7.1-26.1.0"].compat if c.table == "grid"]
    assert len(grid) == 9 and all(c.compatible for c in grid)  # 3 release lines x 3 CANN series, all Y
    m = load()
    assert ("3.9", "3.10", "3.11", "3.12", "3.13") in m.python_stated("2.7.1.post4")


def test_every_revision_is_kept_and_the_later_one_judges() -> None:
    """The 26.1.0 tag's grid says TorchNPU 7.3.0 with CANN 9.0.0/9.1.0 and 26.0.0 with 9.1.0 are not
    compatible (“/” per its legend); the release branch's later revision says 7.3.X and 26.0.X are
    ("Y"). Both are recorded; the earlier is superseded and verdicts rest on the later."""
    notes = {n.ref: n for n in torchnpu_notes.read_folder(DATA / torchnpu_notes.FOLDER)}
    tag = notes["v26.1.0-pytorch2.7.1"]
    no = {(c.torchnpu, c.cann) for c in tag.compat if not c.compatible}
    assert no == {(("7.3.0",), ("9.0.0",)), (("7.3.0",), ("9.1.0",)), (("26.0.0",), ("9.1.0",))}
    assert all(c.mark == "/" for c in tag.compat if not c.compatible)
    m = load()
    superseded = [r for r in m.torch_npu_compat if r.status == "superseded"]
    assert {(r.torchnpu, r.cann, r.compatible) for r in superseded} == {
        (("7.3.0",), ("9.0.0",), False),
        (("7.3.0",), ("9.1.0",), False),
        (("26.0.0",), ("9.1.0",), False),
    }
    assert all("the later revision" in (r.note or "") for r in superseded)
    assert not any(r.status == "superseded" for r in m.torch_npu_compat_current)
    v = m.torch_npu_verdict("2.8.0.post2", "9.0.0")  # a 7.3.0 build
    assert v.level == "compatible" and "7.3.X with CANN 9.0.X: Y" in v.statement
    # the 7.3.0 tag's Python column gave 2.9.0 Python 3.9; the branch's later revision does not
    rows = [r for r in m.torch_npu_rows(torch_npu="2.9.0", include_superseded=True) if r.python]
    by_status = {r.status: r.python for r in rows if "TNPU-RN-7.3.0:v7.3.0-pytorch2.7.1" in r.sources}
    assert by_status == {"superseded": ("3.9", "3.10", "3.11", "3.12")}
    assert ("3.10", "3.11", "3.12") in m.python_stated("2.9.0")


def test_a_grid_slash_is_no_statement_without_the_legend() -> None:
    grid = (
        "## 版本兼容性说明\n<table><thead><tr><th>TorchNPU</th><th>CANN版本</th></tr>"
        "\n<tr>\n<th>8.5.0</th>\n<th>9.0.0</th>\n</tr></thead>\n<tbody>\n<tr>\n<td>7.3.0</td>"
        "\n<td>Y</td>\n<td>/</td>\n</tr>\n</tbody></table>\n"
    )
    plain = torchnpu_notes.parse_note(grid, torchnpu_notes.NoteImport("r", "abcdef1", "r@abcdef1.md", "0"))
    assert [(c.cann, c.compatible) for c in plain.compat] == [(("8.5.0",), True)]
    legend = "> 表格中“Y”代表兼容，“/”代表不兼容。\n" + grid
    said = torchnpu_notes.parse_note(legend, torchnpu_notes.NoteImport("r", "abcdef1", "r@abcdef1.md", "0"))
    assert [(c.cann, c.compatible) for c in said.compat] == [(("8.5.0",), True), (("9.0.0",), False)]


def test_hostile_manifest_is_refused_naming_the_field(tmp_path: Path) -> None:
    folder = tmp_path / torchnpu_notes.FOLDER
    folder.mkdir()
    (folder / "v1@abcdef1.md").write_text("# note\n", encoding="utf-8")
    entry = {
        "file": "v1@abcdef1.md",
        "path": "docs/zh/release_notes.md",
        "commit": "abcdef1" + "0" * 33,
        "date": "2026-08-07T15:49:16+08:00",
        "refs": ["refs/heads/v1"],
    }
    for key, bad in (
        ("path", "../../etc/passwd"),
        ("commit", "1234567" + "0" * 33),  # not the file name's commit
        ("date", "yesterday"),
        ("refs", ["refs/heads/a\nb"]),
        ("refs", ["refs/tags/x"] * (torchnpu_notes.MAX_REFS + 1)),
    ):
        (folder / "refs.json").write_text(json.dumps({"notes": [{**entry, key: bad}]}), encoding="utf-8")
        with pytest.raises(InputError):
            torchnpu_notes.read_folder(folder)
    (folder / "refs.json").write_text(json.dumps({"notes": [entry]}), encoding="utf-8")
    (imp,) = torchnpu_notes.read_folder(folder)
    assert imp.refs == ("refs/heads/v1",) and imp.date == entry["date"]
    (folder / "refs.json").write_bytes(b" " * (torchnpu_notes.MAX_MANIFEST + 1))
    with pytest.raises(InputError):
        torchnpu_notes.read_folder(folder)


def test_hostile_release_notes_are_bounded_and_reported(tmp_path: Path) -> None:
    folder = tmp_path / torchnpu_notes.FOLDER
    folder.mkdir()
    bad = (
        "|CANN版本|PyTorch版本|TorchNPU版本|分支|安装包版本|Python版本|\n|--|--|--|--|--|--|\n|x|y|z|w|v|u|\n"
    )
    (folder / "v2.7.1-9.9.9@abcdef1.md").write_text(bad, encoding="utf-8")
    (folder / "notes.md").write_text(bad, encoding="utf-8")  # not <branch>@<commit>.md: not read
    (folder / "v1@abcdef2.md").symlink_to(folder / "notes.md")
    (imp,) = torchnpu_notes.read_folder(folder)
    assert imp.pairs == [] and imp.warnings and "not read" in imp.warnings[0]
    (folder / "v2@abcdef3.md").write_bytes(b"x" * (MAX_MEMBER + 1))
    with pytest.raises(InputError):
        torchnpu_notes.read_folder(folder)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("|<>/-:YN.0123456789CANN版本Python\n tdhr")), max_size=3000))
def test_release_note_parser_never_raises(text: str) -> None:
    imp = torchnpu_notes.NoteImport("r", "abcdef1", "r@abcdef1.md", "0" * 64)
    torchnpu_notes.parse_note(text, imp)
    assert all(p.torch_npu and p.cann for p in imp.pairs)


def test_every_wheel_has_its_metadata_and_the_listing_agrees_with_index_json() -> None:
    imp = wheel_metadata.read_folder(DATA / wheel_metadata.FOLDER)
    assert len(imp.wheels) == 512 and not imp.warnings
    by = {(w.version, w.python, w.arch) for w in imp.wheels}
    m = load()
    for row in m.wheels:
        if row.package != "torch-npu":
            continue
        for v in row.versions:
            for a in row.arches:
                assert (v, row.python, a) in by, (v, row.python, a)
    w = {x.file: x for x in imp.wheels}
    assert w["torch_npu-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl"].torch == "==2.9.1+cpu"
    assert w["torch_npu-2.9.1-cp311-cp311-manylinux_2_28_aarch64.whl"].torch == "==2.9.1"


def test_metadata_headers_stop_at_the_blank_line() -> None:
    h = wheel_metadata.headers("Name: torch_npu\nRequires-Dist: torch==2.13.0.*\n\nRequires-Dist: evil\n")
    assert h["requires-dist"] == ["torch==2.13.0.*"]
    assert wheel_metadata.torch_requirement(["numpy", "torch ==2.12.0", "pyyaml"]) == "==2.12.0"
    assert wheel_metadata.torch_requirement(["torchvision==0.1"]) is None


@pytest.mark.network
def test_online_metadata_matches_the_saved_artefact(tmp_path: Path) -> None:
    try:
        n = wheel_metadata.fetch(tmp_path, versions={"2.13.0"})
    except ExternalError as exc:
        pytest.skip(f"package index not reachable: {exc}")
    assert n >= 10
    saved = json.loads((DATA / wheel_metadata.FOLDER / "metadata.json").read_text(encoding="utf-8"))
    fresh = json.loads((tmp_path / "metadata.json").read_text(encoding="utf-8"))
    for name, text in fresh.items():
        assert (
            wheel_metadata.headers(text)["requires-dist"]
            == wheel_metadata.headers(saved[name])["requires-dist"]
        )


# ------------------------------------------------------------------ the answers issue 30 names


def test_torch_2_13_names_the_published_torch_npu() -> None:
    _code, out = _query("--torch", "2.13.0")
    assert out[0].startswith("published: torch_npu 2.13.0 (Requires-Dist torch==2.13.0.*)")
    assert "(published, not validated)" in out[0]
    assert not any("no torch_npu for torch 2.13.0 is published" in line for line in out)


def test_no_answer_names_a_wheel_missing_for_the_asked_python() -> None:
    _code, out = _query("--cann", "9.1.0", "--torch", "2.12.0", "--python", "3.14")
    assert out[0].startswith(
        "no published wheel for Python 3.14 of the validated torch_npu 2.12.0, 2.12.0.post2"
    )
    assert "published: torch_npu 2.12.0.post3" in out[0]
    m = load()
    for py in ("3.10", "3.11", "3.12", "3.13", "3.14"):
        for arch in ("aarch64", "x86_64"):
            _c, lines = _query("--cann", "9.1.0", "--torch", "2.12.0", "--python", py, "--arch", arch)
            named = lines[0].split(" ", 2)[1] if lines[0].startswith("torch_npu ") else None
            if named:
                assert m.wheel_published(named, py, arch=arch) is True, (py, arch, lines[0])


def test_answer_line_says_validated() -> None:
    _code, out = _query("--cann", "9.1.0", "--torch", "2.12.0", "--python", "3.11")
    assert out[0].startswith(
        "torch_npu 2.12.0 (torch 2.12.0, CANN 9.1.0): validated: a vendor table states the pair"
    )


def test_superseded_or_beta_is_never_recommended() -> None:
    m = load()
    v = m.torch_npu_verdict("2.10.0", "9.1.0-beta.3")
    assert v.level != "recommended" and "superseded" in v.statement and "pre-release" in v.statement
    assert m.torch_npu_verdict("2.10.0.post4", "9.1.0").level == "recommended"
    for r in m.torch_npu:
        if r.status != "current":
            assert m.torch_npu_verdict(r.torch_npu, r.cann).level != "recommended" or any(
                x.status == "current" and x.evidence == "recommended" and x.cann == r.cann
                for x in m.torch_npu_rows(torch_npu=r.torch_npu)
            )


def test_keep_cann_8_5_1_accepts_the_hdk_mindie_names() -> None:
    res = CliRunner().invoke(cli, ["matrix", "resolve", "--keep", "cann=8.5.1", "--json"])
    doc = json.loads(res.output)
    ranges = {
        s.get("driver_range") or s.get("driver_needs") for s in doc.get("stacks", doc.get("candidates", []))
    }
    assert ranges and all(r is None or r.startswith(">=25.5.0") for r in ranges), ranges


# ------------------------------------------------------------------ components and products


@pytest.mark.parametrize(
    ("option", "version", "first"),
    [
        (
            "--vllm-ascend",
            "0.18.0",
            "vllm-ascend 0.18.0: CANN 8.5.1; PyTorch 2.9.0; torch_npu 2.9.0.post1+git4c901a4",
        ),
        ("--mindie", "2.2.RC1", "mindie 2.2.RC1: CANN 8.3.RC2; TorchNPU 7.2.0; MindCluster 7.2.RC1.SPC1"),
        ("--triton-ascend", "3.2.1", "triton-ascend 3.2.1: CANN 9.0.0"),
        (
            "--mindspeed-llm",
            "26.1.0",
            "mindspeed-llm 26.1.0: CANN 9.1.0; TorchNPU 26.1.0; PyTorch 2.7.1; Triton-Ascend 3.2.2",
        ),
    ],
)
def test_component_queries(option: str, version: str, first: str) -> None:
    _code, out = _query(option, version)
    # one line per statement: the imported tables and the typed pages (MindIE) each answer
    assert any(line.startswith(first) for line in out), out


def test_component_sources_that_disagree_are_both_shown() -> None:
    _code, out = _query("--vllm-ascend", "0.18.0")
    assert any(
        "disagree on torch_npu: 2.9.0.post1+git4c901a4" in line and "2.9.0 (installation.md" in line
        for line in out
    )
    _code, out = _query("--triton-ascend", "3.2.1")
    assert any("disagree on CANN: 9.0.0" in line and "9.0.1 (vllm-ascend 0.23.0rc1" in line for line in out)
    _code, out = _query("--mindie", "9.9")
    assert "no statement in the matrix names its stack" in out[0] and "3.0.0" in out[0].split("known:")[1]


def _facts(cann: str, packages: dict[str, str]) -> Facts:
    inst = CannInstall(path="/usr/local/Ascend/cann-x", layout="cann", version=cann)
    return Facts(
        cann=CannFacts(installs=(inst,), active=inst.path),
        python=PythonFacts(packages=packages),
    )


def test_doctor_judges_an_installed_vllm_ascend_against_what_it_names() -> None:
    target = checks.Target(matrix=load())
    sel = checks.select(["component-stack"])
    good = _facts(
        "8.5.1", {"vllm-ascend": "0.18.0", "torch": "2.9.0", "torch-npu": "2.9.0", "triton-ascend": "3.2.0"}
    )
    by = {f.subject: f for f in checks.run(good, target, sel)}
    f = by["vllm-ascend 0.18.0"]
    assert f.status == "pass" and "CANN 8.5.1" in f.detail
    # Triton-Ascend's own README binds 3.2.0 to CANN 8.5.0, while vllm-ascend 0.18.0 ran it on 8.5.1
    assert by["triton-ascend 3.2.0"].status == "warn" and "8.5.0" in by["triton-ascend 3.2.0"].detail
    bad = _facts("9.1.0", {"vllm-ascend": "0.18.0", "torch": "2.9.0", "torch-npu": "2.9.0"})
    (f,) = checks.run(bad, target, sel)
    assert f.status == "warn" and "CANN 9.1.0 is not what vllm-ascend 0.18.0 names: 8.5.1" in f.detail
    (f,) = checks.run(_facts("9.1.0", {"torch": "2.9.0"}), target, sel)
    assert f.status == "skip"
    (f,) = checks.run(_facts("9.1.0", {"vllm-ascend": "0.1.0"}), target, sel)
    assert f.status == "skip" and "no statement" in f.detail


def test_products_inside_a_family_carry_their_minima() -> None:
    m = load()
    p = m.product("atlas-800i-a2")
    assert (p.family, p.cann_from, p.hdk_from) == ("a2", "8.0.RC1", "24.1.RC1")
    v = m.hdk_verdict("7.0.0", "23.0.3", "a2", "atlas-800i-a2")
    assert v.level == "unknown" and "Atlas 800I A2" in v.statement
    assert m.hdk_verdict("7.0.0", "23.0.3", "a2").level == "recommended"  # the family as before
    from cannenv.soc import product_from_accelerator_type

    assert product_from_accelerator_type("card-910b-infer").id == "atlas-300i-a2"


def test_query_product_alone_says_what_it_requires() -> None:
    """Issue 30: "what an Atlas 800I A2 (not 800T A2) requires" is a question cannenv takes."""
    code, out = _query("--product", "atlas-800i-a2")
    assert code == 0
    assert out[0].startswith("atlas-800i-a2 (Atlas 800I A2 inference server, family a2): CANN >= 8.0.RC1 (")
    assert (
        "Ascend HDK >= 24.1.RC1 (MindCluster 6.0.RC1 pairs CANN 8.0.RC1 with Ascend HDK 24.1.RC1)" in out[0]
    )
    _code, out = _query("--product", "atlas-800t-a2")
    assert "no statement names a first CANN or HDK for this product (unknown)" in out[0]


def test_doctor_judges_an_installed_mindspeed_llm_on_its_torchnpu_release() -> None:
    target = checks.Target(matrix=load())
    sel = checks.select(["component-stack"])
    # torch_npu 2.7.1.post8 is TorchNPU 26.1.0's build (branch v2.7.1-26.1.0)
    good = _facts("9.1.0", {"mindspeed-llm": "26.1.0", "torch": "2.7.1", "torch-npu": "2.7.1.post8"})
    (f,) = checks.run(good, target, sel)
    assert f.status == "pass" and "TorchNPU release 26.1.0" in f.detail and "CANN 9.1.0" in f.detail
    # 2.7.1.post4 is TorchNPU 26.0.0's: MindSpeed-LLM 26.1.0's pairing table (表1) names 26.1.0 only; its
    # compatibility table (表2, evidence declared) says 26.0.0 works: a warn that names both
    older = _facts("9.1.0", {"mindspeed-llm": "26.1.0", "torch": "2.7.1", "torch-npu": "2.7.1.post4"})
    (f,) = checks.run(older, target, sel)
    assert (
        f.status == "warn"
        and "TorchNPU release 26.0.0 is not what mindspeed-llm 26.1.0 names: 26.1.0" in f.detail
    )
    assert (
        "the vendor declares it compatible (MindSpeed-LLM release note (docs/zh/release_notes_llm.md), "
        "表 2 MindSpeed LLM与TorchNPU版本兼容)" in f.detail
    )
    # TorchNPU 7.1.0 (2.1.0.post13) is named by no statement about MindSpeed-LLM 26.1.0
    bad = _facts("9.1.0", {"mindspeed-llm": "26.1.0", "torch": "2.7.1", "torch-npu": "2.1.0.post13"})
    (f,) = checks.run(bad, target, sel)
    assert f.status == "warn" and "TorchNPU release 7.1.0 is not what mindspeed-llm 26.1.0 names" in f.detail


def test_current_statements_that_disagree_answer_unknown_naming_both(tmp_path: Path) -> None:
    """Two current statements, one Y and one N, for the same TorchNPU release and CANN: neither wins."""
    from cannenv.matrix import load_files
    from cannenv.matrix.loader import matrix_files

    work = tmp_path / "m"
    shutil.copytree(MATRICES, work)
    (work / "contrary.yaml").write_text(
        "schema_version: 1\n"
        "torch_npu_compat:\n"
        '  - {torchnpu: ["7.3.0"], cann: ["9.0.0"], compatible: false, statement: "a contrary note",\n'
        '     sources: ["TNPU-RN-26.1.0:master"]}\n',
        encoding="utf-8",
    )
    m = load_files(matrix_files([work]), use_cache=False)
    v = m.torch_npu_verdict("2.8.0.post2", "9.0.0")
    assert v.level == "unknown" and "disagree" in v.statement
    assert "a contrary note" in v.statement and "7.3.X with CANN 9.0.X: Y" in v.statement


def test_save_release_notes_from_a_clone_keeps_every_revision(tmp_path: Path) -> None:
    """`matrix save-release-notes` on a real git repository: one file per distinct note, every ref
    that holds it in refs.json, and the folder reads back through the importer."""
    git = GitRepo(tmp_path / "pytorch", date="2026-01-06T12:00:00+08:00")
    repo = git.path

    note = (DATA / torchnpu_notes.FOLDER / "v7.3.0-pytorch2.7.1@4b1961b33.md").read_bytes()
    later = (DATA / torchnpu_notes.FOLDER / "v2.7.1-7.3.0@c867b4e6e.md").read_bytes()
    git("init", "-q", "-b", "v2.7.1-7.3.0")
    path = repo / "docs/zh/release_notes/release_notes.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(note)
    git("add", "-A")
    git("commit", "-qm", "7.3.0")
    git("tag", "v7.3.0-pytorch2.7.1")
    path.write_bytes(later)
    git("commit", "-qam", "revise", date="2026-04-15T09:09:30+08:00")
    git("tag", "v7.3.1-pytorch2.7.1")
    res = CliRunner().invoke(cli, ["matrix", "save-release-notes", str(repo), str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert "2 release notes held by 3 refs" in res.output
    folder = tmp_path / "out" / torchnpu_notes.FOLDER
    manifest = json.loads((folder / "refs.json").read_text(encoding="utf-8"))["notes"]
    assert [sorted(e["refs"]) for e in manifest] == [
        ["refs/tags/v7.3.0-pytorch2.7.1"],
        ["refs/heads/v2.7.1-7.3.0", "refs/tags/v7.3.1-pytorch2.7.1"],
    ]
    notes = {n.ref: n for n in torchnpu_notes.read_folder(folder)}
    assert set(notes) == {"v7.3.0-pytorch2.7.1", "v2.7.1-7.3.0"}
    assert (folder / notes["v2.7.1-7.3.0"].path).read_bytes() == later
    doc = torchnpu_notes.matrix_doc(list(notes.values()))
    old = [r for r in doc["torch_npu"] if r.get("status") == "superseded"]
    assert [(r["torch_npu"], r["python"]) for r in old] == [("2.9.0", ["3.9", "3.10", "3.11", "3.12"])]
    bad = CliRunner().invoke(cli, ["matrix", "save-release-notes", str(tmp_path), str(tmp_path / "x")])
    assert bad.exit_code != 0  # not a git repository: an error naming git's answer, no traceback
