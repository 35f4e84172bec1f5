# ruff: noqa: E501  (verbatim table rows of the real sdist)
"""The vllm-ascend importer (issue 24 item 3): downstream-validated stacks from the project's sdist.

The fixture sdist holds verbatim excerpts of vllm_ascend-0.30.0rc2.tar.gz (PyPI, sha256
05cb51448c0cd174ea338b16ebbfc8e215f44b373ea2a0d65f1314523a01152f): the first rows of
docs/source/community/versioning_policy.md, the v0.30.0rc1 "Dependencies" of
docs/source/user_guide/release_notes.md and the Requires-Dist lines of PKG-INFO
(../shared/research/vendor-2026-12.md §1.6). The network test reads the real sdist.
"""

from __future__ import annotations

import hashlib
import io
import re
import tarfile
import urllib.request
from pathlib import Path

import pytest

from cannenv import matrix
from cannenv.errors import InputError
from cannenv.matrix import refresh, vllm_ascend

POLICY = """# Versioning Policy

## Release compatibility matrix

| vLLM Ascend | vLLM              | Python          | Stable CANN |        PyTorch/torch_npu        |   Triton Ascend   |    Mooncake  |
|-------------|-------------------|-----------------|-------------|---------------------------------|-------------------|--------------|
| v0.30.0rc1  | v0.30.0           | >= 3.10, < 3.13 | 9.2.0       | 2.10.0 / 2.10.0.post4           | 3.2.2             | v0.3.11.post1 |
| v0.26.0rc1  | v0.26.0           | >= 3.10, < 3.13 | 9.1.0       | 2.10.0 / 2.10.0.post4           | 3.2.2             | v0.3.11.post1 |
| v0.23.0.post1 | v0.23.0           | >= 3.10, < 3.13 | 9.1.0       | 2.10.0 / 2.10.0.post4           | 3.2.2             | v0.3.11.post1 |
| v0.23.0     | v0.23.0           | >= 3.10, < 3.13 | 9.1.0       | 2.10.0 / 2.10.0.post4           | 3.2.2             | v0.3.11.post1 |
| v0.23.0rc1  | v0.23.0           | >= 3.10, < 3.13 | 9.0.1       | 2.10.0 / 2.10.0.post2           | 3.2.1             | v0.3.11.post1 |

## Release window
"""
NOTES = """# Release Notes

## v0.30.0rc2 - 2026.10.13

## v0.30.0rc1 - 2026.10.11

### Dependencies

- vLLM: v0.30.0
- CANN: 9.2.0
- Ascend HDK: 26.0.RC1
- PyTorch / torch_npu: 2.10.0 / 2.10.0.post4

## v0.26.0rc1 - 2026.09.03

### Dependencies

- **CANN**: 9.1.0.
"""
PKG_INFO = """Metadata-Version: 2.4
Name: vllm_ascend
Version: 0.30.0rc2
Requires-Dist: torch==2.10.0
Requires-Dist: torch-npu==2.10.0.post4
Requires-Dist: triton-ascend==3.2.2

body text: Requires-Dist: torch==9.9.9 is not a header
"""


def _sdist(folder: Path, members: dict[str, str], version: str = "0.30.0rc2") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"vllm_ascend-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"vllm_ascend-{version}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _fixture(folder: Path) -> Path:
    return _sdist(
        folder,
        {vllm_ascend.POLICY: POLICY, vllm_ascend.NOTES: NOTES, vllm_ascend.PKG_INFO: PKG_INFO},
    )


def test_rows_hdk_and_pins_with_their_provenance(tmp_path: Path) -> None:
    path = _fixture(tmp_path)
    imp = vllm_ascend.read_sdist(path)
    assert imp.version == "0.30.0rc2"
    assert [(r.release, r.cann, r.torch, r.torch_npu) for r in imp.rows][:2] == [
        ("v0.30.0rc1", "9.2.0", "2.10.0", "2.10.0.post4"),
        ("v0.26.0rc1", "9.1.0", "2.10.0", "2.10.0.post4"),
    ]
    first = imp.rows[0].provenance
    assert first.path == vllm_ascend.POLICY and first.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [(h.release, h.cann, h.hdk) for h in imp.hdk] == [("v0.30.0rc1", "9.2.0", "26.0.RC1")]
    assert imp.requires == {"torch": "2.10.0", "torch-npu": "2.10.0.post4", "triton-ascend": "3.2.2"}


def test_matrix_doc_is_downstream_evidence_never_recommended(tmp_path: Path) -> None:
    doc = vllm_ascend.matrix_doc([vllm_ascend.read_sdist(_fixture(tmp_path))])
    assert {r["evidence"] for r in doc["torch_npu"]} == {"downstream"}
    top = doc["torch_npu"][0]
    assert (top["torch_npu"], top["cann"]) == ("2.10.0.post4", "9.2.0")
    assert top["note"].startswith("validated by vllm-ascend v0.30.0rc1")
    same = next(r for r in doc["torch_npu"] if r["cann"] == "9.1.0")
    assert "v0.26.0rc1, v0.23.0.post1, v0.23.0" in same["note"]  # one row naming each release
    assert doc["hdk"] == [
        {
            "cann": ["9.2.0"],
            "driver": ["26.0.rc1"],
            "hdk": "Ascend HDK 26.0.RC1",
            "evidence": "downstream",
            "sources": ["VLLM-ASCEND-0.30.0rc2"],
            "note": "validated by vllm-ascend v0.30.0rc1 (release notes, Dependencies: CANN 9.2.0 / Ascend HDK 26.0.RC1)",
        }
    ]
    assert "torch-npu==2.10.0.post4" in doc["sources"][0]["title"]


def test_refresh_shows_each_downstream_fact_with_its_source(tmp_path: Path) -> None:
    _fixture(tmp_path / "art")
    r = refresh.compare(refresh.gather(tmp_path / "art"), matrix.load())
    downstream = [c for c in r.changes if c.kind == "downstream"]
    assert len(downstream) == 5 + 1
    # the shipped matrix records them (matrices/vllm_ascend.json, written by refresh --write)
    assert r.unexplained == [], [c.key for c in r.unexplained]
    assert all(c.source.package == "vllm-ascend" and len(c.source.sha256) == 64 for c in downstream)


def test_releases_without_a_row_are_not_guessed() -> None:
    m = matrix.load()
    notes = " ".join(r.note or "" for r in m.torch_npu if r.evidence == "downstream")
    for absent in ("v0.24.0rc1", "v0.25.1rc1", "v0.27.1rc1", "v0.28.0rc1", "v0.29.0rc1"):
        assert absent not in notes


def test_hostile_sdists_are_refused_or_read_bounded(tmp_path: Path) -> None:
    bad = tmp_path / "vllm_ascend-0.1.tar.gz"
    bad.write_bytes(b"not a tar")
    with pytest.raises(InputError):
        vllm_ascend.read_sdist(bad)
    # traversal / absolute names are skipped, never read
    evil = _sdist(tmp_path / "e", {"../../docs/source/community/versioning_policy.md": POLICY})
    imp = vllm_ascend.read_sdist(evil)
    assert imp.rows == [] and any("no docs/source/community/versioning_policy.md" in w for w in imp.warnings)
    # a row that does not read as versions is reported, not imported
    odd = POLICY.replace("| 9.2.0       |", "| nine        |")
    imp = vllm_ascend.read_sdist(_sdist(tmp_path / "o", {vllm_ascend.POLICY: odd}))
    assert "v0.30.0rc1" not in [r.release for r in imp.rows] and imp.warnings


@pytest.mark.network
def test_the_real_sdist_from_the_package_index(tmp_path: Path) -> None:
    """The sdist the package index serves (its simple page names the file and its sha256)."""
    try:
        with urllib.request.urlopen("https://pypi.org/simple/vllm-ascend/", timeout=60) as resp:
            page = resp.read(4 << 20).decode("utf-8", "replace")
        m = re.search(r'href="([^"]*/vllm_ascend-0\.30\.0rc2\.tar\.gz)#sha256=([0-9a-f]{64})"', page)
        assert m is not None, "the index lists vllm_ascend-0.30.0rc2.tar.gz"
        art = tmp_path / "art"
        art.mkdir()
        path = art / "vllm_ascend-0.30.0rc2.tar.gz"
        with urllib.request.urlopen(m.group(1), timeout=300) as resp:
            path.write_bytes(resp.read(64 << 20))
    except OSError as exc:
        pytest.skip(f"the package index is not reachable from here: {exc}")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == m.group(2)
    imp = vllm_ascend.read_sdist(path)
    assert ("v0.30.0rc1", "9.2.0", "2.10.0.post4") in {(r.release, r.cann, r.torch_npu) for r in imp.rows}
    assert len(imp.rows) == 39  # every row of the table in this sdist (pinned by its sha256 above)
    r = refresh.compare(refresh.gather(art), matrix.load())
    assert r.unexplained == [], [c.key for c in r.unexplained][:10]
    shipped = matrix.load().sources["VLLM-ASCEND-0.30.0rc2"]
    assert imp.sha256 in (shipped.where or "")
