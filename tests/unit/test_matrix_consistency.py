"""The shipped matrix against itself and against the vendor's recorded statements (issue 11 §5),
and the answers a user asks for by name (issue 11, "Done when")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv import matrix
from cannenv.matrix.model import series_matches
from cannenv.resolve import candidates, resolve

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def m() -> matrix.Matrix:
    return matrix.load()


def test_every_stack_torch_and_torch_npu_are_published_for_its_python_and_arch(m: matrix.Matrix) -> None:
    for s in m.stacks:
        py = s.version("python")
        assert py
        for arch in s.arches:
            for package, key in (("torch-npu", "torch_npu"), ("torch", "torch")):
                version = s.version(key)
                assert version
                assert m.wheel_published(version, py, arch=arch, package=package) is True, (
                    s.id,
                    package,
                    arch,
                )


def test_every_stack_driver_is_recommended_or_stated_compatible(m: matrix.Matrix) -> None:
    for s in m.stacks:
        cann, drv = s.version("cann"), s.version("driver")
        assert cann and drv
        v = m.hdk_verdict(cann, drv, s.family, s.product)
        assert v.level in ("recommended", "compatible"), (s.id, v)
        assert v.sources


def test_every_stack_torch_npu_is_paired_or_stated_compatible(m: matrix.Matrix) -> None:
    for s in m.stacks:
        v = m.torch_npu_verdict(
            s.version("torch_npu") or "", s.version("cann") or "", torch=s.version("torch")
        )
        assert v.ok, (s.id, v)


def test_every_installer_has_a_source_and_the_vendor_digest_where_a_manifest_carries_it(
    m: matrix.Matrix,
) -> None:
    """Each named installer cites its sources. The vendor's manifests (ascend-deployer) digest the
    .zip downloads of CANN 8.1.RC1 ... 9.0.0 toolkits and ops packages: for every stack installer
    in that range the matrix holds the .zip with its sha256 and its source. NNAL, HDK drivers as
    separate .run files and CANN 9.1.0 are not carried by any manifest read (no digest invented)."""
    carried = {d.file: d for d in m.downloads}
    checked = 0
    for s in m.stacks:
        for key, comp in s.components.items():
            assert comp.sources, (s.id, key)
            for arch, art in comp.artifacts.items():
                zipped = art.file.removesuffix(".run") + ".zip"
                if key in ("cann", "ops") and zipped in carried:
                    d = carried[zipped]
                    assert len(d.sha256) == 64 and d.sources and d.url, (s.id, key, arch)
                    assert d.arch == arch
                    checked += 1
    assert checked >= 30  # 8.1.RC1 ... 9.0.0 stacks, cann + ops, both arches


def test_no_rule_contradicts_a_recorded_vendor_statement(m: matrix.Matrix) -> None:
    for row in m.hdk:
        if row.evidence != "recommended":
            continue
        for cann in row.cann:
            for fam in row.families or ():
                for stmt in m.hdk_compat_rows(cann, fam):
                    if stmt.compatible:
                        continue
                    for drv in row.driver:
                        assert not any(series_matches("driver", h, drv) for h in stmt.hdk), (row, stmt)
    for tr in m.torch_npu:
        if tr.status != "current" or tr.evidence != "recommended":
            continue
        v = m.torch_npu_verdict(tr.torch_npu, tr.cann, torch=tr.torch)
        assert v.level != "incompatible", (tr, v)


def test_lint_is_clean_and_every_source_is_declared(m: matrix.Matrix) -> None:
    assert m.lint_problems() == []
    for d in m.downloads:
        assert set(d.sources) <= set(m.sources)


# ------------------------------------------------------------------ done when


def _cli(*args: str) -> tuple[int, str]:
    p = subprocess.run(
        [sys.executable, "-m", "cannenv", "matrix", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    return p.returncode, p.stdout


def test_driver_25_3_rc1_on_a2_lists_8_3_rc1_and_8_5_0() -> None:
    code, out = _cli("query", "--driver", "25.3.rc1", "--family", "a2", "--json")
    rows = json.loads(out)["cann_accepting_driver"]
    by_cann = {r["cann"]: r["verdict"] for r in rows}
    assert code == 0
    assert by_cann["8.3.RC1"]["level"] == "recommended"  # the HDK released with it
    assert by_cann["8.5.0"]["level"] == "compatible" and "RN-850" in by_cann["8.5.0"]["sources"]
    assert "9.2.0" in by_cann and "9.1.0" in by_cann


@pytest.mark.parametrize("cann", ["9.1.0", "9.2.0"])
def test_newest_cann_hdk_answers_with_sources(cann: str) -> None:
    code, out = _cli("query", "--cann", cann, "--family", "a2", "--json")
    (req,) = json.loads(out)["driver_requirement"]
    assert code == 0 and req["evidence"] == "recommended" and req["sources"]
    assert req["compatible"] and "25.0.X" in req["incompatible"]


def test_9_2_0_refuses_25_2_and_9_1_refuses_25_0(m: matrix.Matrix) -> None:
    assert m.hdk_verdict("9.2.0", "25.2.0", "a2").level == "incompatible"
    assert m.hdk_verdict("9.1.0", "25.0.rc1.1", "a2").level == "incompatible"
    assert m.hdk_verdict("9.0.0", "25.0.rc1.1", "a2").level == "compatible"
    assert m.hdk_verdict("8.5.0", "25.3.rc1", "a2").ok


def test_cross_version_torch_npu_is_compatible_by_the_release_notes(m: matrix.Matrix) -> None:
    v = m.torch_npu_verdict("2.7.1.post2", "9.0.0", torch="2.7.1")
    assert v.level == "compatible" and "PT-RN-2610" in v.sources and v.recommended == "2.7.1.post4"


def test_unpaired_torch_npu_says_what_is_known(m: matrix.Matrix) -> None:
    _, out = _cli("query", "--torch-npu", "2.13.0", "--json")
    text = json.loads(out)["torch_npu_unpaired"]
    assert "no published CANN pairing" in text and "2026-10-15" in text and "nearest known pairing" in text
    # one entry per Python, even where the index rows split its arches (3.12: two rows)
    assert "Python 3.12 (aarch64/x86_64)" in text and text.count("Python 3.12") == 1


def test_resolve_never_proposes_an_unpublished_version(m: matrix.Matrix) -> None:
    res = resolve(m, keep={"cann": "8.0.RC1"}, want={"torch": "2.1.0"}, family="a2")
    assert res.ok and {c.torch_npu for c in res.candidates} == {"2.1.0.post3"}
    for c in candidates(m):
        assert m.wheel_published(c.torch_npu, c.python) is True, c.id


def test_recommended_stacks_for_cann_9_1_0(m: matrix.Matrix) -> None:
    for fam in ("a2", "a3"):
        (s,) = m.find_stacks(family=fam, cann="9.1.0", torch="2.12.0")
        assert s.version("torch_npu") == "2.12.0" and m.stack_problems(s) == []


def test_stacks_say_what_the_support_policy_says(m: matrix.Matrix) -> None:
    old = m.stack("a2-cann8.0.0-torch2.1.0-py3.10")
    notes = m.stack_notes(old, today="2026/12/01")
    # the two statements of the policy disagree for 2.1.0: both are shown, each with its source
    assert any("past its end of life (2025/12/30) [PT-SUPPORT]" in n for n in notes)
    assert any("maintenance" in n and "PT-SUPPORT-MASTER" in n for n in notes)
    new = m.stack("a2-cann9.1.0-torch2.12.0-py3.11")
    assert all("end of life" not in n for n in m.stack_notes(new, today="2026/12/01"))
