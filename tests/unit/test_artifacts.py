"""Installer matching and sha256 verification against the matrix, before any build step."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"))

from fixture_stack import fixture_spec
from make_fixture_installer import FixtureInstaller, make_installers

from cannenv.artifacts import verify_installers
from cannenv.errors import IntegrityError, NotFoundError
from cannenv.image import ImageSpec, InstallerRef, RenderOptions, lock_for, render

COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}


@pytest.fixture(scope="module")
def installers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FixtureInstaller]:
    d = tmp_path_factory.mktemp("artifacts")
    return make_installers(d, "8.3.RC2", installed_bytes=4096, padding_bytes=4096)


def pinned_spec(inst: dict[str, FixtureInstaller], **digests: str | None) -> ImageSpec:
    refs = tuple(
        InstallerRef(
            component=c,
            version="8.3.RC2",
            file=inst[f].path.name,
            sha256=digests.get(c, inst[f].sha256),
        )
        for c, f in COMP.items()
    )
    s = fixture_spec(installers=refs)
    assert isinstance(s, ImageSpec)
    return s


def test_files_are_matched_by_the_era_name_and_verified(installers: dict[str, FixtureInstaller]) -> None:
    directory = installers["toolkit"].path.parent
    out = verify_installers(pinned_spec(installers), directory)
    assert [v.ref.component for v in out] == ["cann", "ops", "nnal"]
    assert all(v.pinned for v in out)
    assert out[1].path.name == "Ascend-cann-kernels-910b_8.3.RC2_linux-x86_64.run"


def test_a_digest_mismatch_names_the_file_and_both_digests(installers: dict[str, FixtureInstaller]) -> None:
    wrong = "0" * 64
    with pytest.raises(IntegrityError) as exc:
        verify_installers(pinned_spec(installers, ops=wrong), installers["toolkit"].path.parent)
    msg = str(exc.value)
    assert "Ascend-cann-kernels-910b_8.3.RC2_linux-x86_64.run" in msg
    assert wrong in msg and installers["kernels"].sha256 in msg
    assert exc.value.exit_code == 5


def test_unpinned_needs_allow_unpinned_and_lands_in_the_lock(installers: dict[str, FixtureInstaller]) -> None:
    s = pinned_spec(installers, nnal=None)
    directory = installers["toolkit"].path.parent
    with pytest.raises(IntegrityError, match="pins no sha256") as exc:
        verify_installers(s, directory)
    assert "--allow-unpinned" in (exc.value.hint or "")
    out = verify_installers(s, directory, allow_unpinned=True)
    nnal = next(v for v in out if v.ref.component == "nnal")
    assert not nnal.pinned and nnal.sha256 == installers["nnal"].sha256
    ctx = render(s, RenderOptions(os="preinstalled", base_image="a/b:c", verified_installers=out))
    lock = lock_for(s, ctx)
    locked = {i.component: i for i in lock.installers}
    assert locked["nnal"].sha256 == installers["nnal"].sha256 and not locked["nnal"].pinned
    assert locked["cann"].pinned
    assert any("not pinned" in n for n in lock.notes)


def test_render_reuses_the_verified_digests_instead_of_hashing_again(
    installers: dict[str, FixtureInstaller], monkeypatch: pytest.MonkeyPatch
) -> None:
    s = pinned_spec(installers, nnal=None)
    out = verify_installers(s, installers["toolkit"].path.parent, allow_unpinned=True)

    def no_hashing(path: object, **_kw: object) -> str:
        raise AssertionError(f"{path} hashed a second time")

    monkeypatch.setattr("cannenv.fsutil.sha256_file", no_hashing)
    ctx = render(s, RenderOptions(os="preinstalled", base_image="a/b:c", verified_installers=out))
    assert {f"installers/{v.ref.file}": v.sha256 for v in out}.items() <= ctx.link_digests.items()
    assert {f"installers/{v.ref.file}": v.path for v in out} == ctx.links


def test_a_missing_file_is_reported_with_what_is_there(
    installers: dict[str, FixtureInstaller], tmp_path: Path
) -> None:
    (tmp_path / "Ascend-cann-toolkit_8.3.RC1_linux-x86_64.run").write_bytes(b"x")
    with pytest.raises(NotFoundError) as exc:
        verify_installers(pinned_spec(installers), tmp_path)
    assert "Ascend-cann-toolkit_8.3.RC2_linux-x86_64.run" in str(exc.value)
    assert "8.3.RC1" in (exc.value.hint or "")


def test_letter_case_difference_is_pointed_out(
    installers: dict[str, FixtureInstaller], tmp_path: Path
) -> None:
    (tmp_path / "ascend-cann-toolkit_8.3.rc2_linux-x86_64.run").write_bytes(b"x")
    with pytest.raises(NotFoundError) as exc:
        verify_installers(pinned_spec(installers), tmp_path)
    assert "letter case" in (exc.value.hint or "")


def test_missing_files_are_found_before_any_hashing(
    installers: dict[str, FixtureInstaller], tmp_path: Path
) -> None:
    # toolkit present but with wrong bytes, kernels absent: the absence is reported, not the digest
    (tmp_path / installers["toolkit"].path.name).write_bytes(b"corrupt")
    with pytest.raises(NotFoundError):
        verify_installers(pinned_spec(installers), tmp_path)
