"""The vendor's .zip downloads in ``--artifacts``: the zip's sha256 against the matrix's vendor digest
first, then a bounded extraction of the named .run; and which shipped stacks have vendor digests."""

from __future__ import annotations

import hashlib
import json
import stat
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))

from click.testing import CliRunner
from fixture_stack import fixture_spec, standin_wheel
from make_fixture_installer import FixtureInstaller, make_installers
from shipped_matrix import image_args, inject_download_digests, vendor_zip

from cannenv import matrix
from cannenv.artifacts import verify_installers
from cannenv.cli import cli
from cannenv.errors import InputError, IntegrityError, NotFoundError
from cannenv.image import ImageSpec, InstallerRef, RenderOptions, lock_for, render, spec_from_stack
from cannenv.lock import load_lock
from cannenv.vendorzip import extract_member

COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}
SHIPPED = "a2-cann8.5.0-torch2.7.1-py3.11"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FixtureInstaller]:
    return make_installers(tmp_path_factory.mktemp("runs"), "8.5.0", installed_bytes=4096, padding_bytes=4096)


@pytest.fixture(scope="module")
def zips(runs: dict[str, FixtureInstaller], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of vendor-style zips of the fixture installers (no bare .run in it)."""
    d = tmp_path_factory.mktemp("zips")
    for inst in runs.values():
        vendor_zip(inst.path, d)
    return d


def zip_spec(runs: dict[str, FixtureInstaller], zips: Path, **digests: str) -> ImageSpec:
    refs = tuple(
        InstallerRef(
            component=c,
            version="8.5.0",
            file=runs[f].path.name,
            archive=runs[f].path.stem + ".zip",
            archive_sha256=digests.get(c, sha(zips / (runs[f].path.stem + ".zip"))),
            archive_source="FIXTURE-DEPLOYER downloader/software/CANN_8.5.0.json",
        )
        for c, f in COMP.items()
    )
    s = fixture_spec(cann="8.5.0", installers=refs)
    assert isinstance(s, ImageSpec)
    return s


def test_a_vendor_zip_is_verified_then_its_run_extracted_and_both_digests_locked(
    runs: dict[str, FixtureInstaller], zips: Path, tmp_path: Path
) -> None:
    s = zip_spec(runs, zips)
    out = verify_installers(s, zips, extract_dir=tmp_path / "x")
    assert [v.ref.component for v in out] == ["cann", "ops", "nnal"]
    for v in out:
        assert v.pinned and v.from_archive
        assert v.path.parent.parent == tmp_path / "x" and v.path.name == v.ref.file
        assert v.sha256 == runs[COMP[v.ref.component]].sha256  # the very .run that was zipped
    ctx = render(s, RenderOptions(os="preinstalled", base_image="a/b:c", verified_installers=out))
    lock = lock_for(s, ctx)
    for i in lock.installers:
        zip_name = runs[COMP[i.component]].path.stem + ".zip"
        assert i.pinned and i.sha256 == runs[COMP[i.component]].sha256
        assert i.archive == zip_name and i.archive_sha256 == sha(zips / zip_name)
        assert i.archive_source and "FIXTURE-DEPLOYER" in i.archive_source
    assert "sha256-pinned installers" in ctx.labels["org.opencontainers.image.description"]
    from cannenv.image.sbom import inputs_from_lock, sbom_json

    sbom = json.loads(sbom_json(inputs_from_lock(lock)))
    toolkit = next(c for c in sbom["components"] if c.get("bom-ref") == "cann-cann")
    props = {p["name"]: p["value"] for p in toolkit["properties"]}
    assert props["cannenv:vendor-archive-sha256"] == lock.installers[0].archive_sha256
    assert toolkit["hashes"][0]["content"] == runs["toolkit"].sha256


def test_a_tampered_zip_is_refused_before_anything_is_extracted(
    runs: dict[str, FixtureInstaller], zips: Path, tmp_path: Path
) -> None:
    wrong = "f" * 64
    with pytest.raises(IntegrityError) as exc:
        verify_installers(zip_spec(runs, zips, ops=wrong), zips, extract_dir=tmp_path / "x")
    name = runs["kernels"].path.stem + ".zip"
    msg = str(exc.value)
    assert exc.value.exit_code == 5
    assert name in msg and wrong in msg and sha(zips / name) in msg and "FIXTURE-DEPLOYER" in msg
    assert not (tmp_path / "x").exists()  # every zip's digest is checked before any extraction


def test_a_bare_run_without_a_digest_still_needs_allow_unpinned_and_names_the_zip(
    runs: dict[str, FixtureInstaller], zips: Path
) -> None:
    s = zip_spec(runs, zips)
    directory = runs["toolkit"].path.parent  # .run files only
    with pytest.raises(IntegrityError, match="pins no sha256") as exc:
        verify_installers(s, directory)
    assert runs["toolkit"].path.stem + ".zip" in (exc.value.hint or "")
    out = verify_installers(s, directory, allow_unpinned=True)
    assert not any(v.pinned or v.from_archive for v in out)


def make_zip(path: Path, members: dict[str, bytes], *, link: str | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def test_a_zip_without_the_member_names_it(tmp_path: Path) -> None:
    z = make_zip(tmp_path / "a.zip", {"other.run": b"x", "other.run.cms": b"sig"})
    with pytest.raises(NotFoundError) as exc:
        extract_member(z, "Ascend-cann-toolkit_8.5.0_linux-x86_64.run", tmp_path / "out")
    assert "no member Ascend-cann-toolkit_8.5.0_linux-x86_64.run" in str(exc.value)
    assert "other.run" in (exc.value.hint or "")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "bad", ["../x.run", "sub/../../x.run", "/abs/x.run", "C:/x.run", "dir\\x.run", "a/\x01/x.run"]
)
def test_traversal_and_odd_member_names_refuse_the_zip(tmp_path: Path, bad: str) -> None:
    z = make_zip(tmp_path / "t.zip", {"x.run": b"payload", bad: b"evil"})
    with pytest.raises(InputError, match="refusing the zip"):
        extract_member(z, "x.run", tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.run").exists()


def test_links_duplicates_oversize_and_non_zips_are_refused(tmp_path: Path) -> None:
    z = make_zip(tmp_path / "l.zip", {}, link="x.run")
    with pytest.raises(InputError, match="not a regular file"):
        extract_member(z, "x.run", tmp_path / "o1")
    z = make_zip(tmp_path / "d.zip", {"a/x.run": b"1", "b/x.run": b"2"})
    with pytest.raises(InputError, match=r"2 members are named x\.run"):
        extract_member(z, "x.run", tmp_path / "o2")
    z = make_zip(tmp_path / "big.zip", {"x.run": b"0" * 2048})
    with pytest.raises(InputError, match="over the limit of 1024"):
        extract_member(z, "x.run", tmp_path / "o3", limit=1024)
    (tmp_path / "no.zip").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not a readable zip"):
        extract_member(tmp_path / "no.zip", "x.run", tmp_path / "o4")
    ok = extract_member(make_zip(tmp_path / "n.zip", {"dir/x.run": b"data"}), "x.run", tmp_path / "o5")
    assert ok.path == tmp_path / "o5" / "x.run" and ok.path.read_bytes() == b"data"
    assert ok.member == "dir/x.run" and ok.sha256 == hashlib.sha256(b"data").hexdigest()


def test_the_shared_zip_reader_streams_in_chunks_within_its_limit(tmp_path: Path) -> None:
    from cannenv import records

    z = make_zip(tmp_path / "s.zip", {"x.run": bytes(range(256)) * 40})
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("x.run")
        chunks = list(records.zip_member_chunks(zf, info, 1 << 20, source=str(z), chunk=1000))
        assert [len(c) for c in chunks] == [1000] * 10 + [240]
        assert b"".join(chunks) == records.read_zip_member(zf, info, 10240, source=str(z))
        with pytest.raises(InputError, match="over the limit of 10239"):
            records.read_zip_member(zf, info, 10239, source=str(z))


def test_a_corrupt_member_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    z = make_zip(tmp_path / "c.zip", {"x.run": b"A" * 4096})
    raw = bytearray(z.read_bytes())
    at = raw.index(b"A" * 64)  # stored, not compressed: flip payload bytes, the CRC no longer holds
    raw[at : at + 4] = b"BBBB"
    z.write_bytes(bytes(raw))
    with pytest.raises(InputError, match="cannot be read"):
        extract_member(z, "x.run", tmp_path / "out")
    assert not (tmp_path / "out" / "x.run").exists()


def test_a_signed_inner_zip_is_opened_one_level_down_and_no_deeper(tmp_path: Path) -> None:
    """A payload that is itself a zip of the same stem (with .cms/.crl beside it, as ascend-deployer's
    jobs.py unpacks them): the .run is taken from it, bounded the same way; a third level is not read."""
    run = "Ascend-cann-toolkit_8.5.0_linux-x86_64.run"
    inner = make_zip(tmp_path / "inner.zip", {run: b"payload", run + ".cms": b"sig"}).read_bytes()
    outer = make_zip(
        tmp_path / "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip",
        {
            "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip": inner,
            "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip.cms": b"s",
        },
    )
    got = extract_member(outer, run, tmp_path / "out")
    assert got.path.read_bytes() == b"payload" and got.sha256 == hashlib.sha256(b"payload").hexdigest()
    assert got.member == f"Ascend-cann-toolkit_8.5.0_linux-x86_64.zip!{run}"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [run]  # the inner zip is gone
    # the inner zip is bounded like any member
    with pytest.raises(InputError, match="over the limit"):
        extract_member(outer, run, tmp_path / "small", limit=len(inner) - 1)
    assert not list((tmp_path / "small").glob("*"))
    # a zip in the zip in the zip: not followed
    deeper = make_zip(tmp_path / "d2.zip", {"Ascend-cann-toolkit_8.5.0_linux-x86_64.zip": inner}).read_bytes()
    nested = make_zip(tmp_path / "n.zip", {"Ascend-cann-toolkit_8.5.0_linux-x86_64.zip": deeper})
    with pytest.raises(NotFoundError, match="no member"):
        extract_member(nested, run, tmp_path / "o2")
    # a traversal name inside the inner zip refuses it too
    evil = make_zip(tmp_path / "e.zip", {run: b"x", "../x": b"y"}).read_bytes()
    bad = make_zip(tmp_path / "b.zip", {"Ascend-cann-toolkit_8.5.0_linux-x86_64.zip": evil})
    with pytest.raises(InputError, match="refusing the zip"):
        extract_member(bad, run, tmp_path / "o3")


# ------------------------------------------------------------------------------- shipped stacks

# Which image installers of each shipped stack have a vendor sha256 in the shipped matrix (the
# digest of the vendor's .zip download, from ascend-deployer's manifests). A change here is a change
# of the data: update it on purpose. None for NNAL: no ascend-deployer release lists an NNAL package.
# None for CANN 9.1.0: no release lists it yet (26.0.0, the newest, stops at 9.0.0).
WITH_DIGEST = {
    "a2-cann8.0.0-torch2.1.0-py3.10": {"cann", "ops"},  # ascend-deployer 6.0.0 … 7.2rc1
    "a2-cann8.0.0-torch2.4.0-py3.10": {"cann", "ops"},  # ascend-deployer 6.0.0 … 7.2rc1
    "a2-cann8.1.rc1-torch2.5.1-py3.10": {"cann", "ops"},
    "a2-cann8.2.rc1-torch2.6.0-py3.11": {"cann", "ops"},
    "a2-cann8.2.rc1-torch2.1.0-py3.10": {"cann", "ops"},
    "a2-cann8.3.rc1-torch2.7.1-py3.11": {"cann", "ops"},
    "a2-cann8.3.rc1-torch2.6.0-py3.11": {"cann", "ops"},
    "a2-cann8.5.0-torch2.7.1-py3.11": {"cann", "ops"},
    "a2-cann8.5.0-torch2.8.0-py3.11": {"cann", "ops"},
    "a2-cann9.0.0-torch2.9.0-py3.11": {"cann", "ops"},
    "a2-cann9.0.0-torch2.8.0-py3.12": {"cann", "ops"},
    "a3-cann8.5.0-torch2.7.1-py3.11": {"cann", "ops"},
    "a3-cann9.0.0-torch2.9.0-py3.11": {"cann", "ops"},
    "a3-cann9.0.0-torch2.9.0-py3.12": {"cann", "ops"},
    "310p-cann8.0.0-torch2.1.0-py3.10": {"cann", "ops"},  # ascend-deployer 6.0.0 … 7.2rc1
    "310p-cann8.1.rc1-torch2.5.1-py3.10": {"cann", "ops"},
    "310p-cann8.2.rc1-torch2.6.0-py3.11": {"cann", "ops"},
    "a2-cann9.1.0-torch2.12.0-py3.11": set(),
    "a3-cann9.1.0-torch2.12.0-py3.11": set(),
    "950-atlas-350-cann9.1.0-torch2.10.0-py3.11": set(),  # no release lists CANN 9.1.0 or a 950 package
    "a2-cann9.2.0-torch2.10.0-py3.11": set(),  # nor CANN 9.2.0
    "a3-cann9.2.0-torch2.10.0-py3.11": set(),
}

# The driver .run of each shipped stack comes out of the vendor's HDK bundle zip
# (Ascend-hdk-<chip>-npu_<hdk>_linux-<arch>.zip), whose sha256 ascend-deployer's NPU_<hdk>.json gives.
# Those still without a vendor digest, and why (a change here is a change of the data):
NO_DRIVER_DIGEST = {
    # HDK 25.5.1 (the CANN 8.5.0 release note's text): the manifests list NPU_25.5.0 only
    "a2-cann8.5.0-torch2.7.1-py3.11": "HDK 23.0.rc2.2 … 26.0.rc1 for 910b, not 25.5.1",
    "a2-cann8.5.0-torch2.8.0-py3.11": "HDK 23.0.rc2.2 … 26.0.rc1 for 910b, not 25.5.1",
    "a2-cann9.0.0-torch2.9.0-py3.11": "HDK 23.0.rc2.2 … 26.0.rc1 for 910b, not 25.5.1",
    "a2-cann9.0.0-torch2.8.0-py3.12": "HDK 23.0.rc2.2 … 26.0.rc1 for 910b, not 25.5.1",
    # HDK 26.2.RC1 (CANN 9.2.0): newer than every ascend-deployer release (26.0.0 stops at 26.0.RC1)
    "a2-cann9.2.0-torch2.10.0-py3.11": "HDK 23.0.rc2.2 … 26.0.rc1 for 910b, not 26.2.rc1",
}
# Stacks whose driver names no installer file (the vendor's A3 and 950 HDK file names are not in our
# sources), so there is nothing to pin: a3-*, 950-atlas-350-*.


def test_every_shipped_stack_lists_its_installers_with_a_vendor_digest() -> None:
    m = matrix.load()
    seen: dict[str, set[str]] = {}
    for s in m.stacks:
        per_arch = []
        for arch in s.arches:
            spec = spec_from_stack(s, m, arch=arch, nnal=True)  # NNAL too: a digest for it would show
            have = set()
            for ref in spec.installers:
                if ref.sha256 is not None or ref.archive_sha256 is not None:
                    have.add(ref.component)
                if ref.archive_sha256 is not None:
                    assert ref.archive == ref.file[: -len(".run")] + ".zip"
                    assert ref.archive_source and ref.archive_source.startswith("DEPLOYER-")
            per_arch.append(have)
        assert all(h == per_arch[0] for h in per_arch), s.id  # the same on every architecture
        seen[s.id] = per_arch[0]
    assert seen == WITH_DIGEST


def test_every_installer_of_a_shipped_stack_without_a_vendor_digest_is_one_no_manifest_lists() -> None:
    """The gaps are the vendor's, never ours: each CANN installer a shipped stack names either has a
    vendor digest, or no ascend-deployer release the matrix holds lists it at all, NNAL in any
    version or a CANN newer than every release's manifests; and `digest_gap` says which."""
    m = matrix.load()
    newest_cann = max((d.version for d in m.downloads if d.component == "cann"), key=matrix._cann)
    gaps = 0
    for s in m.stacks:
        for key in ("cann", "ops", "nnal"):
            comp = s.components.get(key)
            for art in comp.artifacts.values() if comp else ():
                listed = m.vendor_archive(art.file)
                gap = m.digest_gap(art.file)
                assert (listed is None) == (gap is not None), art.file
                if listed is not None:
                    continue
                gaps += 1
                assert not any(d.file.startswith(art.file[: -len(".run")]) for d in m.downloads), art.file
                assert comp is not None and gap is not None
                if key == "nnal":
                    assert not any(d.component == "nnal" for d in m.downloads)
                    assert "no NNAL package at all" in gap
                else:
                    assert matrix._cann(comp.version) > matrix._cann(newest_cann), art.file
                    assert f"… {newest_cann}, not {comp.version}" in gap
    # NNAL of 19 stacks × 2 arches; toolkit + ops of the 9.1.0 and 9.2.0 stacks (5) × 2 arches
    assert gaps == 19 * 2 + 5 * 2 * 2


def test_every_shipped_driver_has_the_vendor_hdk_zip_digest_or_says_why_not() -> None:
    m = matrix.load()
    missing: dict[str, str] = {}
    for s in m.stacks:
        comp = s.components.get("driver")
        for arch, art in comp.artifacts.items() if comp else ():
            zipped = m.vendor_archive(art.file)
            if zipped is not None:
                assert zipped.component == "hdk" and zipped.file.endswith(".zip") and zipped.arch == arch
                assert any(src.startswith("DEPLOYER-") for src in zipped.sources)
                assert zipped.note and "NPU_" in zipped.note
                continue
            gap = m.digest_gap(art.file)
            assert gap is not None and "HDK bundle" in gap
            missing[s.id] = gap.split("which list ", 1)[1].split(";", 1)[0]
    assert missing == NO_DRIVER_DIGEST


def test_image_lock_of_a_shipped_stack_from_vendor_zips_needs_no_allow_unpinned(
    runs: dict[str, FixtureInstaller], zips: Path, tmp_path: Path
) -> None:
    """The command as a user runs it: the shipped stack id, the vendor's zips in --artifacts; the
    fixture zips' digests are injected into a test copy of the matrix in place of the vendor's."""
    downloads = {p.name: (c, sha(p)) for c, f in COMP.items() for p in [zips / (runs[f].path.stem + ".zip")]}
    m = inject_download_digests(tmp_path / "matrices", downloads)
    args = image_args(SHIPPED, m, zips, standin_wheel(tmp_path / "w", "cannenv", "0.1.0", "cannenv_standin"))
    r = CliRunner().invoke(cli, ["image", "lock", *args, "--no-resolve", "--out", str(tmp_path / "l.json")])
    assert r.exit_code == 0, r.output
    lock = load_lock(tmp_path / "l.json")
    assert lock.stack_id == SHIPPED
    assert [i.component for i in lock.installers] == ["cann", "ops"]  # NNAL only with --with-nnal
    for i in lock.installers:
        assert i.pinned and i.sha256 == runs[COMP[i.component]].sha256
        assert i.archive is not None and downloads[i.archive][1] == i.archive_sha256
    # the shipped matrix itself: the real vendor digest refuses the fixture zip (exit 5), even under
    # --with-nnal --allow-unpinned (which only admits the NNAL .run, for which the vendor lists no digest)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for f in ("toolkit", "kernels"):
        (mixed / (runs[f].path.stem + ".zip")).write_bytes((zips / (runs[f].path.stem + ".zip")).read_bytes())
    (mixed / runs["nnal"].path.name).write_bytes(runs["nnal"].path.read_bytes())
    shipped = [a for a in args if a not in ("--matrix", str(m), str(zips))]
    shipped[shipped.index("--artifacts") + 1 : shipped.index("--artifacts") + 1] = [str(mixed)]
    r = CliRunner().invoke(
        cli,
        ["image", "lock", *shipped, "--with-nnal", "--allow-unpinned", "--out", str(tmp_path / "l2.json")],
    )
    assert isinstance(r.exception, IntegrityError) and r.exception.exit_code == 5
    real = matrix.load().vendor_archive(runs["toolkit"].path.name)
    assert real is not None and real.sha256 in str(r.exception)


def test_matrix_show_names_the_vendor_zip_and_its_digest_for_each_installer() -> None:
    r = CliRunner().invoke(cli, ["matrix", "show", SHIPPED, "--json"])
    assert r.exit_code == 0, r.output
    archives = json.loads(r.output)["vendor_archives"]
    toolkit = archives["Ascend-cann-toolkit_8.5.0_linux-x86_64.run"]
    assert toolkit["file"] == "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip"
    assert toolkit["sha256"] == matrix.load().download(toolkit["file"]).sha256  # type: ignore[union-attr]
    assert toolkit["sources"] == ["DEPLOYER-7.3.0", "DEPLOYER-26.0.0"]  # both releases list it alike
    assert not any("nnal" in k for k in archives)  # no vendor digest for NNAL
    r = CliRunner().invoke(cli, ["matrix", "show", SHIPPED])
    assert "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip" in r.output.replace("\n", "").replace(" ", "")


def test_render_without_artifacts_names_the_vendor_zips_to_fetch(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        cli, ["image", "render", SHIPPED, "--arch", "x86_64", "--out", str(tmp_path / "ctx")]
    )
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert "no installer was verified" in flat
    assert "--artifacts DIR holding the vendor's downloads Ascend-cann-toolkit_8.5.0_linux-x86_64.zip" in flat
