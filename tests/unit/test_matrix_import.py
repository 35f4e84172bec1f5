"""The importers on extracts of the real vendor artefacts (tests/data/ascend_deployer/README.md),
the refresh diff, installer name templates, and (marked ``network``) the real downloads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cannenv import matrix
from cannenv.errors import InputError
from cannenv.matrix import deployer, index, refresh
from cannenv.resources import matrices_dir

DATA = Path(__file__).resolve().parents[1] / "data" / "ascend_deployer"
REPO = Path(__file__).resolve().parents[2]


def _wheel(tmp_path: Path, folder: Path = DATA, version: str = "26.0.0") -> Path:
    """An extract zipped back into a wheel (the importer reads both forms)."""
    whl = tmp_path / f"ascend_deployer-{version}-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        for f in sorted(folder.rglob("*")):
            if f.is_file() and f.name not in ("README.md", "index_torch_npu.json"):
                zf.write(f, f.relative_to(folder).as_posix())
    return whl


def test_deployer_folder_and_wheel_give_the_same_facts(tmp_path: Path) -> None:
    folder = deployer.read_deployer(DATA)
    wheel = deployer.read_deployer(_wheel(tmp_path))
    assert folder.version == wheel.version == "26.0.0"
    assert [(f.kind, f.key, f.value) for f in folder.facts] == [(f.kind, f.key, f.value) for f in wheel.facts]
    assert len(wheel.sha256) == 64 and folder.sha256 == ""
    assert "ascend_deployer/downloader/software/MindSpore_2.7.2.json" in folder.skipped


def test_deployer_facts_name_hdk_installers_and_pairings() -> None:
    imp = deployer.read_deployer(DATA)
    hdk = {f.key: f for f in imp.facts if f.kind == "hdk"}
    # CANN_8.3.RC1.json requires NPU 25.3.RC1: the HDK released with 8.3.RC1 (no "25.3.0" exists)
    assert hdk[("8.3.RC1", "25.3.rc1")].value["families"] == ["310p", "910", "a2"]
    assert ("8.5.0", "25.5.0") in hdk
    assert hdk[("8.5.0", "25.5.0")].provenance.path.endswith("software/CANN_8.5.0.json")
    downloads = {f.key[0]: f.value for f in imp.facts if f.kind == "download"}
    ops = downloads["Ascend-cann-910b-ops_8.5.0_linux-aarch64.zip"]
    assert ops["component"] == "ops" and ops["families"] == ["a2"] and ops["arch"] == "aarch64"
    assert ops["sha256"] == "feb53734b0eab515b34ffb0cd4ce2e2148f3c0d48cfd701eeaf042e19072742d"
    assert ops["url"].startswith("https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN%208.5.0/")
    bundle = downloads["Ascend-hdk-910b-npu_25.5.0_linux-x86-64.zip"]
    assert bundle["component"] == "hdk" and bundle["arch"] == "x86_64"
    wheel = downloads["torch_npu-2.10.0-cp311-cp311-manylinux_2_28_aarch64.whl"]
    assert wheel["component"] == "torch_npu" and wheel["python"] == "3.11"
    pairs = {f.key for f in imp.facts if f.kind == "torch_npu"}
    assert ("2.10.0", "9.0.0") in pairs and ("2.7.1.post2", "8.5.0") in pairs


def test_deployer_refuses_what_is_not_a_deployer(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(InputError, match="not an ascend-deployer wheel"):
        deployer.read_deployer(tmp_path)
    bad = tmp_path / "bad"
    shutil.copytree(DATA, bad)
    (bad / "ascend_deployer/downloader/software/CANN_8.5.0.json").write_text("{not json")
    with pytest.raises(InputError, match=r"CANN_8\.5\.0\.json:1: not valid JSON"):
        deployer.read_deployer(bad)


def test_deployer_never_reads_outside_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "d"
    shutil.copytree(DATA, root)
    secret = tmp_path / "outside.json"
    secret.write_text(
        json.dumps(
            {"name": "CANN", "version": "9.9.9", "required_soft": [{"name": "NPU", "version": "1.0.0"}]}
        )
    )
    (root / "ascend_deployer/downloader/software/CANN_9.9.9.json").symlink_to(secret)
    imp = deployer.read_deployer(root)
    assert not any(f.key[0] == "9.9.9" for f in imp.facts)  # the link is not followed


def test_index_listing_gives_exact_sets_and_dates() -> None:
    imp = index.read_listing(DATA / "index_torch_npu.json")
    assert imp.package == "torch-npu"
    assert imp.sets[("3.11", "aarch64")] >= {"2.7.1", "2.7.1.post2", "2.10.0", "2.13.0"}
    assert "2.1.0.post4" not in {v for vs in imp.sets.values() for v in vs}
    assert imp.uploaded["2.13.0"] == "2026-10-15"
    rows = index.wheel_rows(imp)
    assert all(r["versions"] == sorted(r["versions"], key=lambda v: matrix._pep(v)) for r in rows)
    assert not any(any(c in v for c in "<>=*,") for r in rows for v in r["versions"])  # never ranges


def _matrix_copy(tmp_path: Path) -> Path:
    """The shipped matrix with the importers' files emptied (their sources kept: stacks cite them)."""
    import yaml

    d = tmp_path / "matrices"
    d.mkdir()
    for f in matrix.loader.matrix_files([matrices_dir()]):
        if f.name in (refresh.DEPLOYER_FILE, refresh.INDEX_FILE):
            doc = yaml.safe_load(f.read_text(encoding="utf-8"))
            kept = {"schema_version": 1, "sources": doc["sources"]}
            (d / f.name).write_text(json.dumps(kept), encoding="utf-8")
        else:
            shutil.copy(f, d / f.name)
    return d


def test_refresh_reports_a_diff_with_sources_and_write_makes_it_clean(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    _wheel(art)
    shutil.copy(DATA / "index_torch_npu.json", art / "torch-npu.json")
    mdir = _matrix_copy(tmp_path)  # the shipped matrix without the importers' files
    r = refresh.compare(refresh.gather(art), matrix.load_files(matrix.loader.matrix_files([mdir])))
    by_status: dict[str, list[refresh.Change]] = {}
    for c in r.changes:
        by_status.setdefault(c.status, []).append(c)
    assert {c.kind for c in by_status["added"]} >= {"download", "hdk", "wheel"}
    # 8.5.0: the release note text says HDK 25.5.1, the vendor installer 25.5.0: a conflict, shown
    conflict = next(c for c in by_status["conflict"] if c.key == "CANN 8.5.0 -> HDK 25.5.0")
    assert "25.5.1 (RELMGMT)" in conflict.detail and not conflict.recorded
    assert all(c.source.sha256 and c.source.path and c.source.package for c in r.changes)
    counts = r.counts()
    assert counts["ascend-deployer 26.0.0"]["imported"] == sum(
        1 for c in r.changes if c.source.package == "ascend-deployer"
    )
    assert r.unexplained
    written = refresh.write(r, mdir)
    assert str(mdir / refresh.DEPLOYER_FILE) in written and str(mdir / refresh.INDEX_FILE) in written
    again = refresh.compare(refresh.gather(art), matrix.load_files(matrix.loader.matrix_files([mdir])))
    assert again.unexplained == []
    assert any(c.status == "conflict" and c.recorded for c in again.changes)  # both statements kept
    m = matrix.load_files(matrix.loader.matrix_files([mdir]))
    assert m.download("Ascend-cann-toolkit_8.5.0_linux-x86_64.zip") is not None


def test_refresh_cli_exit_codes(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    shutil.copy(DATA / "index_torch_npu.json", art / "torch-npu.json")
    mdir = _matrix_copy(tmp_path)
    run = [
        sys.executable,
        "-m",
        "cannenv",
        "matrix",
        "refresh",
        "--from",
        str(art),
        "--matrix-dir",
        str(mdir),
    ]
    first = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert first.returncode == 1, first.stderr
    doc = json.loads(first.stdout)
    assert doc["unexplained"] > 0 and doc["changes"][0]["source"]["package"] == "pypi.org"
    assert subprocess.run([*run, "--write"], capture_output=True, timeout=120, cwd=REPO).returncode == 0
    assert subprocess.run(run, capture_output=True, timeout=120, cwd=REPO).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    p = subprocess.run(
        [*run[:-4], "--from", str(empty)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert p.returncode == 2 and "holds no artefact" in p.stderr and "Traceback" not in p.stderr


def test_shipped_matrix_is_current_with_the_extracts(tmp_path: Path) -> None:
    """Every fact of the extracts is in the shipped matrix (refresh over them: nothing to review)."""
    art = tmp_path / "art"
    art.mkdir()
    _wheel(art)
    shutil.copy(DATA / "index_torch_npu.json", art / "torch-npu.json")
    r = refresh.compare(refresh.gather(art), matrix.load())
    assert [c for c in r.unexplained if c.kind != "wheel"] == []


# ------------------------------------------------------------------ installer name templates


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        (
            "Ascend-cann-toolkit_{version.__class__}_linux.run",
            "placeholder {version.__class__} is not allowed",
        ),
        ("Ascend-cann-toolkit_{foo}_linux.run", "placeholder {foo} is not allowed"),
        ("Ascend-cann-toolkit_{version_linux.run", "unbalanced '{'"),
        ("Ascend-cann-toolkit_{version!r}.run", "placeholder {version!r} is not allowed"),
        ("Ascend-cann-toolkit_{0}.run", "placeholder {0} is not allowed"),
    ],
)
def test_installer_templates_take_only_the_named_fields(tmp_path: Path, pattern: str, says: str) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(
        "schema_version: 1\ninstallers:\n"
        "  - {component: cann, package: Ascend-cann-toolkit, "
        f"pattern: {json.dumps(pattern)}, sources: [X]}}\n",
        encoding="utf-8",
    )
    with pytest.raises(matrix.MatrixError) as info:
        matrix.load([f])
    text = str(info.value)
    assert f"{f}:3" in text and "installers[0]" in text and "pattern" in text and says in text
    lint = subprocess.run(
        [sys.executable, "-m", "cannenv", "matrix", "lint", str(f)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert lint.returncode == 2 and says in lint.stdout and "Traceback" not in lint.stderr
    doctor = subprocess.run(
        [sys.executable, "-m", "cannenv", "doctor", "--matrix", str(f), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert doctor.returncode == 2 and says in doctor.stderr and "Traceback" not in doctor.stderr


def test_template_fills_only_the_named_fields() -> None:
    from cannenv.matrix.model import fill_template

    assert (
        fill_template(
            "Ascend-hdk-910b-npu-driver_{version}_linux-{hdk_arch}.run",
            version="25.3.rc1",
            arch="x86_64",
            hdk_arch="x86-64",
        )
        == "Ascend-hdk-910b-npu-driver_25.3.rc1_linux-x86-64.run"
    )
    with pytest.raises(ValueError, match="not allowed"):
        fill_template("{__import__}", version="1")


# ------------------------------------------------------------------ the real artefacts (network)


def _download(args: list[str], dest: Path) -> Path:
    p = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dest), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if p.returncode != 0:
        pytest.skip(f"the package index is not reachable from here: {p.stderr.strip()[-300:]}")
    return dest


@pytest.mark.network
@pytest.mark.slow
def test_importers_on_the_real_downloads(tmp_path: Path) -> None:
    """Every ascend-deployer release the shipped data cites, downloaded for real (its wheel sha256 as
    recorded), plus a real torch-npu wheel: the refresh finds nothing the shipped data lacks."""
    shipped = matrix.load()
    releases = {
        sid.removeprefix("DEPLOYER-"): src.where
        for sid, src in shipped.sources.items()
        if sid.startswith("DEPLOYER-")
    }
    assert {"6.0.0", "26.0.0"} <= set(releases)
    art = tmp_path / "art"
    for v in sorted(releases):  # one at a time: pip resolves one version of a project per call
        _download([f"ascend-deployer=={v}"], art)
    _download(
        [
            "--only-binary=:all:",
            "--python-version",
            "3.11",
            "--platform",
            "manylinux_2_28_x86_64",
            "torch-npu==2.7.1.post2",
        ],
        art,
    )
    for whl in art.glob("ascend_deployer-*.whl"):
        imp = deployer.read_deployer(whl)
        assert f"wheel sha256 {imp.sha256}" in releases[imp.version], whl.name
        if imp.version == "26.0.0":
            assert {f.key for f in imp.facts if f.kind == "hdk"} >= {
                ("8.3.RC1", "25.3.rc1"),
                ("9.0.0", "26.0.rc1"),
            }
    r = refresh.compare(refresh.gather(art), shipped)
    assert len(r.deployer) == len(releases)
    assert r.unexplained == [], [str(c.key) for c in r.unexplained][:10]


# ------------------------------------------------------------------ several ascend-deployer releases

RELEASES = Path(__file__).resolve().parents[1] / "data" / "ascend_deployer_releases"


def test_older_releases_give_cann_8_0_0_digests_and_kernels_without_an_arch() -> None:
    imp = deployer.read_deployer(RELEASES / "6.0.0")
    assert imp.version == "6.0.0"
    # only the HDK bundles of Atlas 300 (Ascend 310) cards stay unread: no cannenv family has them
    assert [w.split(": ")[1] for w in imp.warnings] == [
        "A300-3000-npu_24.1.0_linux-aarch64.zip",
        "A300-3010-npu_24.1.0_linux-x86_64.zip",
    ]
    downloads = {f.key[0]: f.value for f in imp.facts if f.kind == "download"}
    kit = downloads["Ascend-cann-toolkit_8.0.0_linux-aarch64.zip"]
    assert kit["sha256"] == "8926b10cc4a5c5bd9764ee245fdc809fa6b7237c6e92c8a4f02fb5b7f6f0a001"
    old = downloads["Ascend-cann-kernels-910b_8.0.RC2_linux.zip"]  # no arch in the name before 8.0.RC3
    assert (old["component"], old["families"], old.get("arch")) == ("ops", ["a2"], None)
    hdk = {f.key: f.value for f in imp.facts if f.kind == "hdk"}
    assert hdk[("8.0.0", "24.1.0")]["families"] == ["910", "a2"]


def test_releases_merge_into_one_file_citing_each_and_keep_both_sides_of_a_disagreement(
    tmp_path: Path,
) -> None:
    imps = [deployer.read_deployer(RELEASES / v) for v in ("7.0rc1", "6.0.0")]
    doc = deployer.matrix_doc(imps)
    assert [s["id"] for s in doc["sources"]] == ["DEPLOYER-6.0.0", "DEPLOYER-7.0rc1"]  # oldest first
    rows = {(r["file"], r["sha256"]): r for r in doc["downloads"]}
    kit = rows[
        (
            "Ascend-cann-toolkit_8.0.0_linux-x86_64.zip",
            "75bf653e2cc79af226f854df332aff421ff667807b0445c3e3c8bccb2efcfa0e",
        )
    ]
    assert kit["sources"] == ["DEPLOYER-6.0.0", "DEPLOYER-7.0rc1"]  # stated alike: one row, both cited
    npu = "torch_npu-2.3.1-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
    stated = {r["sha256"]: r for r in doc["downloads"] if r["file"] == npu}
    assert set(stated) == {
        "6544fdf29018668c0a6d4a1bcc955982c1ada70806281b010cba93bdcfbdcf22",  # 6.0.0 (the torch wheel's)
        "0c3f8bb919e71d6a23a12a0390bfffce2f5cc3d942877215020639c1444c2c51",  # 7.0rc1 (PyPI's)
    }
    assert all("disagree" in r["note"] for r in stated.values())
    # families of an HDK pairing: the union of the chips the releases list bundles for
    (pair,) = [r for r in doc["hdk"] if r["cann"] == ["8.0.0"]]
    assert pair["families"] == ["310p", "910", "a2"] and pair["sources"] == [
        "DEPLOYER-6.0.0",
        "DEPLOYER-7.0rc1",
    ]
    # as a matrix: the newest release's statement is the one used, every statement is listed
    mdir = tmp_path / "m"
    mdir.mkdir()
    (mdir / "deployer.json").write_text(json.dumps(doc), encoding="utf-8")
    m = matrix.load_files(matrix.loader.matrix_files([mdir]), use_cache=False)
    assert m.download(npu).sha256.startswith("0c3f8bb9")  # type: ignore[union-attr]
    assert len(m.downloads_of(npu)) == 2


def test_refresh_over_several_releases_then_over_one_keeps_the_others(tmp_path: Path) -> None:
    art = tmp_path / "art"
    art.mkdir()
    for v in ("6.0.0", "7.0rc1"):
        _wheel(art, RELEASES / v, v)
    _wheel(art)  # 26.0.0
    mdir = _matrix_copy(tmp_path)
    r = refresh.compare(refresh.gather(art), matrix.load_files(matrix.loader.matrix_files([mdir])))
    # the same warning from two releases is one line naming both
    assert not any(w.count("not recognised") > 1 for w in r.warnings)
    refresh.write(r, mdir)
    again = refresh.compare(refresh.gather(art), matrix.load_files(matrix.loader.matrix_files([mdir])))
    assert again.unexplained == []
    npu = "torch_npu-2.3.1-cp310-cp310-manylinux_2_17_aarch64.manylinux2014_aarch64.whl"
    disagreement = [c for c in again.changes if c.key == npu]
    assert {c.status for c in disagreement} == {"conflict"} and all(c.recorded for c in disagreement)
    # a later refresh over the newest release alone keeps what the older ones stated
    only_new = tmp_path / "new"
    only_new.mkdir()
    _wheel(only_new)
    r2 = refresh.compare(refresh.gather(only_new), matrix.load_files(matrix.loader.matrix_files([mdir])))
    refresh.write(r2, mdir)
    assert {"6.0.0", "7.0rc1"} <= set(r2.kept) and "26.0.0" not in r2.kept
    m = matrix.load_files(matrix.loader.matrix_files([mdir]), use_cache=False)
    assert m.download("Ascend-cann-toolkit_8.0.0_linux-aarch64.zip") is not None
    assert {"DEPLOYER-6.0.0", "DEPLOYER-7.0rc1", "DEPLOYER-26.0.0"} <= set(m.sources)
    third = refresh.compare(refresh.gather(art), m)
    assert third.unexplained == []


def test_digest_gap_says_which_manifests_the_matrix_holds_and_what_they_cover() -> None:
    m = matrix.load()
    assert m.digest_gap("Ascend-cann-toolkit_8.0.0_linux-x86_64.run") is None  # its .zip is listed
    nnal = m.digest_gap("Ascend-cann-nnal_8.5.0_linux-x86_64.run")
    assert nnal is not None and "no NNAL package at all" in nnal and "ascend-deployer 5.0.6 … 26.0.0" in nnal
    kit = m.digest_gap("Ascend-cann-toolkit_9.1.0_linux-aarch64.run")
    assert kit is not None and "CANN toolkit 6.0.RC1 … 9.0.0, not 9.1.0" in kit


def test_import_deployer_cli_merges_releases_into_one_file(tmp_path: Path) -> None:
    out = tmp_path / "deployer.json"
    run = [sys.executable, "-m", "cannenv", "matrix", "import-deployer"]
    p = subprocess.run(
        [*run, str(RELEASES / "7.0rc1"), str(RELEASES / "6.0.0"), "--json", "--write-to", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [r["version"] for r in doc["releases"]] == ["6.0.0", "7.0rc1"]
    assert all(f["source"]["package"] == "ascend-deployer" for r in doc["releases"] for f in r["facts"])
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [s["id"] for s in written["sources"]] == ["DEPLOYER-6.0.0", "DEPLOYER-7.0rc1"]
    human = subprocess.run(
        [*run, str(RELEASES / "6.0.0")], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert human.returncode == 0 and "8.0.0 requires HDK 24.1.0" in human.stdout
    bad = subprocess.run([*run, str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert (
        bad.returncode == 2 and "not an ascend-deployer wheel" in bad.stderr and "Traceback" not in bad.stderr
    )


# ------------------------------------------------------------------ the oldest releases (issue 24 item 4)


def test_the_oldest_releases_are_recorded_with_their_quirks() -> None:
    """ascend-deployer 5.0.6 and 6.0rc3 (PyPI) carry CANN 6.0.1 … 8.0.RC3 and HDK 6.0.RC1 … 24.1.RC3
    manifests (../shared/research/vendor-2026-12.md §1.4). 6.0rc3's NPU_24.1.RC3.json gives
    `"sha256": ""` for six HDK zips: no digest, so none is recorded from it (later releases give
    real ones); 5.0.6's ascend_deployer/version.json says 3.0.0 and 6.0.0 … 7.2rc1's say 6.0.RC2:
    the package version is recorded and the source says so."""
    m = matrix.load()
    assert {"DEPLOYER-5.0.6", "DEPLOYER-6.0rc3"} <= set(m.sources)
    assert m.download("Ascend-cann-toolkit_6.0.1_linux-aarch64.zip") is not None
    assert "DEPLOYER-5.0.6" in m.download("Ascend-cann-toolkit_6.0.1_linux-aarch64.zip").sources  # type: ignore[union-attr]
    for d in m.downloads_of("Ascend-hdk-910b-npu_24.1.rc3_linux-aarch64.zip"):
        assert "DEPLOYER-6.0rc3" not in d.sources and len(d.sha256) == 64
    assert "version.json says 3.0.0" in m.sources["DEPLOYER-5.0.6"].title
    for v in ("6.0.0", "7.0rc1", "7.1rc1", "7.2rc1"):
        assert "version.json says 6.0.RC2" in m.sources[f"DEPLOYER-{v}"].title
    for v in ("6.0rc3", "7.3.0", "26.0.0"):
        assert "version.json" not in m.sources[f"DEPLOYER-{v}"].title
