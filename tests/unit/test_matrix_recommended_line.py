"""Issue 30 (honest answers): "recommended instead" for a torch_npu stays on the asked build's own
PyTorch release — the torch its published wheels pin (``Requires-Dist: torch==``), else the one the
vendor's rows pair it with — or says that none is, naming the CANN releases that line is recommended
with. Never a pre-release, beta, superseded, conflicting or downstream row."""

from __future__ import annotations

from click.testing import CliRunner

from cannenv.cli import cli
from cannenv.matrix import load
from cannenv.matrix.model import _cann, _pep


def _torch3(version: str) -> str:
    return ".".join(str(n) for n in (*_pep(version).release, 0, 0)[:3])


def _asked_torch(m, torch_npu: str) -> set[str]:  # type: ignore[no-untyped-def]
    """The asked build's torch, read here straight from the data (not through the code under test)."""
    want = _pep(torch_npu)
    pinned = set()
    for w in m.wheel_metadata:
        spec = (w.torch or "").strip()
        if _pep(w.version) == want and spec.startswith("=="):
            pinned.add(_torch3(spec[2:].removesuffix(".*").split("+", 1)[0]))
    if pinned:
        return pinned
    rows = [r for r in m.torch_npu if _pep(r.torch_npu) == want]
    vendor = [r for r in rows if r.evidence != "downstream"] or rows
    return {_torch3(r.torch) for r in vendor}


def _query(*args: str) -> list[str]:
    res = CliRunner().invoke(cli, ["matrix", "query", *args])
    return res.output.splitlines()


def test_the_two_reported_answers_stay_on_the_asked_torch_line() -> None:
    out = _query("--torch-npu", "2.7.1.post4", "--cann", "8.3.RC1")
    assert out[0].startswith("compatible: torch_npu 2.7.1.post4 with CANN 8.3.RC1")
    # TorchNPU 7.2.0 pairs torch 2.7.1 with CANN 8.3.RC1 as torch_npu 2.7.1 (not 2.1.0.post17)
    assert out[1] == "  recommended instead: 2.7.1"
    out = _query("--torch-npu", "2.8.0.post2", "--cann", "9.0.0")
    assert out[1] == "  recommended instead: 2.8.0.post4"  # TorchNPU 26.0.0 (not 2.6.0.post6)


def test_no_build_on_the_line_says_so_and_names_where_it_is_recommended() -> None:
    m = load()
    v = m.torch_npu_verdict("2.7.1.post4", "8.0.0")
    assert v.recommended is None
    assert v.no_recommended is not None
    assert v.no_recommended.startswith("no torch_npu for torch 2.7.1 is recommended with CANN 8.0.0")
    assert "CANN 9.0.0: torch_npu 2.7.1.post4" in v.no_recommended
    assert "2.1.0" not in v.no_recommended and "2.6.0" not in v.no_recommended
    out = _query("--torch-npu", "2.7.1.post4", "--cann", "8.0.0")
    assert "recommended instead" not in "\n".join(out)
    assert out[1].startswith("  no recommended alternative: no torch_npu for torch 2.7.1")


def test_a_beta_cann_gets_no_recommended_build() -> None:
    v = load().torch_npu_verdict("2.10.0", "9.1.0-beta.3")
    assert v.recommended is None and v.no_recommended is not None
    assert "CANN 9.1.0: torch_npu 2.10.0.post6" in v.no_recommended


def test_downstream_torch_column_does_not_move_the_line() -> None:
    """vllm-ascend's table pairs torch_npu 2.8.0.post2 with torch 2.9.0; its wheels pin 2.8.0."""
    m = load()
    assert m.torch_of("2.8.0.post2") == ("2.8.0",)
    assert any(r.torch == "2.9.0" for r in m.torch_npu_rows(torch_npu="2.8.0.post2", include_superseded=True))


def test_every_shipped_row_recommends_only_its_own_torch_line() -> None:
    """The property over every shipped torch_npu build x every CANN the matrix names."""
    m = load()
    canns = m.cann_versions()
    builds = sorted({r.torch_npu for r in m.torch_npu}, key=_pep)
    asked = named = said_none = 0
    for tnpu in builds:
        line = _asked_torch(m, tnpu)
        for cann in canns:
            v = m.torch_npu_verdict(tnpu, cann)
            asked += 1
            if v.level == "recommended":
                assert v.recommended is None and v.no_recommended is None
                continue
            if v.recommended is None:
                # either the asked build is itself the recommended one, or the answer says why none
                if v.no_recommended is None:
                    assert any(
                        _pep(r.torch_npu) == _pep(tnpu)
                        and r.status == "current"
                        and r.evidence == "recommended"
                        for r in m.torch_npu_rows(cann=cann)
                    ), (tnpu, cann)
                else:
                    said_none += 1
                    assert f"with CANN {cann}" in v.no_recommended or "any CANN" in v.no_recommended
                continue
            named += 1
            assert _pep(v.recommended) != _pep(tnpu), (tnpu, cann)
            # same torch release as the asked build
            assert _asked_torch(m, v.recommended) & line, (tnpu, cann, v.recommended)
            # and a current, vendor-recommended, final-release row pairs it with this CANN
            rows = [
                r
                for r in m.torch_npu_rows(torch_npu=v.recommended, cann=cann)
                if _pep(r.torch_npu) == _pep(v.recommended)
            ]
            assert any(
                r.status == "current"
                and r.evidence == "recommended"
                and _torch3(r.torch) in line
                and not _pep(r.torch_npu).is_prerelease
                and not _cann(r.cann).is_prerelease
                for r in rows
            ), (tnpu, cann, v.recommended)
    assert asked > 3000 and named > 50 and said_none > 1000
