"""Pinned by default (issue 22): `image lock` refuses a base image named by a tag unless --allow-tag
(and its notes then say so, truly), and `image sbom --check` works with the dependencies cannenv
declares (CycloneDX's JSON-validation extra)."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from cannenv import matrix
from cannenv.lock import Lock, write_lock

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_sbom_check_needs_only_declared_dependencies(tmp_path: Path) -> None:
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.findall(r'^\s*"(cyclonedx-python-lib[^"]*)",', text, flags=re.M)
    (cdx,) = [Requirement(d) for d in deps]
    assert "json-validation" in cdx.extras
    # what the extra brings is installed (the validator imports it lazily)
    needed = [
        Requirement(r)
        for r in metadata.requires("cyclonedx-python-lib") or ()
        if "json-validation" in r and "extra" in r
    ]
    assert needed
    for req in needed:
        assert metadata.version(req.name)
    lock = Lock(
        stack_id="a2-cann8.2.rc1-torch2.6.0-py3.11",
        matrix_digest=matrix.load().digest,
        cannenv_version="0.1.0",
        os="ubuntu22.04",
        base_image="ubuntu@sha256:" + "0" * 64,
        context_digest="sha256:" + "0" * 64,
        driver_range=">=25.0.rc1",
    )
    path = write_lock(tmp_path / "cannenv.lock.json", lock)
    proc = _cli("image", "sbom", str(path), "--check")
    assert proc.returncode == 0, proc.stderr
    assert '"bomFormat": "CycloneDX"' in proc.stdout


# ------------------------------------------------------------------ image lock of a shipped stack

sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "cann_installer"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

SHIPPED = "a2-cann8.5.0-torch2.7.1-py3.11"  # a shipped stack id


@pytest.fixture(scope="module")
def lock_args(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """`image lock` arguments for the shipped stack: the fixture installers as the vendor's zips, and
    a test copy of the matrix holding their digests (TEST FIXTURES; the Python side is real)."""
    from fixture_stack import standin_wheel
    from make_fixture_installer import make_installers
    from shipped_matrix import as_the_vendor_serves, image_args, inject_download_digests

    runs = make_installers(tmp_path_factory.mktemp("runs"), "8.5.0", installed_bytes=4096, padding_bytes=4096)
    served = tmp_path_factory.mktemp("artifacts")
    digests = as_the_vendor_serves(runs, served)
    m = inject_download_digests(tmp_path_factory.mktemp("m") / "matrices", digests)
    wheel = standin_wheel(tmp_path_factory.mktemp("w"), "cannenv", "0.1.0", "cannenv_standin")
    return ["image", "lock", *image_args(SHIPPED, m, served, wheel, os_id="debian12")]


def _with_base(args: list[str], base: str) -> list[str]:
    out = list(args)
    out[out.index("--base-image") + 1] = base
    return out


def test_a_base_image_named_by_tag_is_refused_unless_allow_tag(lock_args: list[str], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cannenv.cli import cli
    from cannenv.errors import IntegrityError
    from cannenv.lock import load_lock

    tagged = [*_with_base(lock_args, "debian:12"), "--no-resolve", "--out", str(tmp_path / "l.json")]
    r = CliRunner().invoke(cli, tagged)
    assert isinstance(r.exception, IntegrityError) and r.exception.exit_code == 5
    assert "debian:12 is a tag, not a digest" in str(r.exception) and not (tmp_path / "l.json").exists()
    r = CliRunner().invoke(cli, [*tagged, "--allow-tag"])
    assert r.exit_code == 0, r.output
    notes = load_lock(tmp_path / "l.json").notes
    assert "base image debian:12 is a tag, not a digest (accepted with --allow-tag)" in notes
    # pinned: no such note (the notes say only what is true)
    r = CliRunner().invoke(cli, [*lock_args, "--no-resolve", "--out", str(tmp_path / "p.json")])
    assert r.exit_code == 0, r.output
    assert not [n for n in load_lock(tmp_path / "p.json").notes if "--allow-tag" in n]


@pytest.mark.network
@pytest.mark.slow
def test_image_lock_of_a_shipped_stack_pins_every_python_requirement(
    lock_args: list[str], tmp_path: Path
) -> None:
    """Without a wheelhouse, `image lock` asks the index (pip's resolver, for the image's Python 3.11,
    x86_64 and Debian 12's glibc) and pins CANN's Python requirements and their dependencies with a
    version and the sha256 of the wheel; torch and torch_npu keep the stack's versions."""
    from click.testing import CliRunner

    from cannenv.cli import cli
    from cannenv.errors import ExternalError
    from cannenv.image.python import cann_python_pins
    from cannenv.lock import load_lock

    out = tmp_path / "cannenv.lock.json"
    r = CliRunner().invoke(cli, [*lock_args, "--out", str(out)])
    if isinstance(r.exception, ExternalError) and "could not pin" in str(r.exception):
        pytest.skip(f"the package index cannot be reached: {r.exception}")
    assert r.exit_code == 0, r.output
    lock = load_lock(out)
    reqs = {q.name: q for q in lock.python_requirements}
    assert all(q.version for q in reqs.values()), [q.name for q in reqs.values() if not q.version]
    wanted = {name for name, _ in cann_python_pins("8.5.0").requirements}
    assert wanted <= set(reqs)  # CANN's own list, every one with a version and a hash
    for name in set(reqs) - {"torch", "torch-npu", "cannenv"}:
        assert reqs[name].hashes and reqs[name].hashes[0].startswith("sha256:"), name
    assert reqs["protobuf"].version.startswith("3.20")  # what CANN's source pins
    assert set(reqs) - wanted - {"torch", "torch-npu", "cannenv"}  # their dependencies too (e.g. idna)
    assert reqs["torch"].version == "2.7.1" and not reqs["torch"].hashes
    assert not [n for n in lock.notes if "without a version" in n]
    (unhashed,) = [n for n in lock.notes if "without hashes" in n]
    assert "torch" in unhashed and "numpy" not in unhashed
    # the image installs exactly those: one hash-checked layer, no dependency resolution at build time
    from cannenv.image import RenderOptions, render, spec_from_stack
    from cannenv.image.pins import base_group

    spec = spec_from_stack(matrix.load().stack(SHIPPED), matrix.load(), arch="x86_64")
    built = render(spec, RenderOptions(os="debian12", python_pins=base_group(lock.python_requirements)))
    txt = built.files["python/base/requirements.txt"].decode()
    assert f"numpy=={reqs['numpy'].version} --hash={reqs['numpy'].hashes[0]}" in txt
    assert "--no-deps --require-hashes" in built.dockerfile


def test_image_lock_takes_a_site_matrix_that_pins_the_vendor_zip(tmp_path: Path) -> None:
    """One site matrix for images and provisioning: its stack pins the vendor's .zip download (file
    and sha256, as `provision` installs it); `image lock` installs the .run inside, verified through
    the zip, and records both (TEST FIXTURES for the installers)."""
    import shutil

    import yaml
    from click.testing import CliRunner
    from fixture_stack import standin_wheel
    from make_fixture_installer import make_installers
    from shipped_matrix import as_the_vendor_serves, image_args

    from cannenv.cli import cli
    from cannenv.lock import load_lock
    from cannenv.resources import matrices_dir

    runs = make_installers(tmp_path / "runs", "8.5.0", installed_bytes=4096, padding_bytes=4096)
    served = tmp_path / "artifacts"
    served.mkdir()
    downloads = as_the_vendor_serves(runs, served)
    site = tmp_path / "site"
    shutil.copytree(matrices_dir(), site)
    doc = yaml.safe_load((site / "stacks.yaml").read_text())
    (stack,) = [s for s in doc["stacks"] if s["id"] == SHIPPED]
    for file, (component, sha256) in downloads.items():
        stack["components"][component]["artifacts"]["x86_64"] = {"file": file, "sha256": sha256}
    (site / "stacks.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    wheel = standin_wheel(tmp_path / "w", "cannenv", "0.1.0", "cannenv_standin")
    args = image_args(SHIPPED, site, served, wheel)
    r = CliRunner().invoke(cli, ["image", "lock", *args, "--no-resolve", "--out", str(tmp_path / "l.json")])
    assert r.exit_code == 0, r.output
    locked = {i.component: i for i in load_lock(tmp_path / "l.json").installers}
    for file, (component, sha256) in downloads.items():
        assert locked[component].pinned and locked[component].archive == file
        assert locked[component].archive_sha256 == sha256
        assert locked[component].file == file.removesuffix(".zip") + ".run"
