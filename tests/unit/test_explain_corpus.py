"""`cannenv explain` on real error excerpts from public threads (tests/data/errors/cases.yaml).

Each excerpt must be explained with the cause its thread established ranked first; where the
thread states the host's versions, they are built into a host tree and the cause decided on it.
``python -m tests.unit.test_explain_corpus`` regenerates tests/data/errors/SOURCES.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cannenv.explain import host_findings, judge, signatures
from cannenv.explain.scan import Scanner
from tests.helpers import hosts

DATA = Path(__file__).resolve().parents[1] / "data" / "errors"
CASES: list[dict[str, Any]] = yaml.safe_load((DATA / "cases.yaml").read_text(encoding="utf-8"))
TABLE = signatures.shipped()


def _scan(text: bytes) -> Any:
    s = Scanner(TABLE, total_hint=len(text))
    s.feed(text)
    s.end_input()
    return s.result()


def _host_tree(root: Path, host: dict[str, str]) -> hosts.HostTree:
    """A host tree with the versions a thread states (and nothing it does not)."""
    t = hosts.HostTree(root).os_release()
    if "driver" in host:
        t.driver(hosts.driver_like_25_3(host["driver"])).npu_smi("a2").dev_nodes(2)
    inst = None
    if "cann" in host:
        major = tuple(int(x) for x in host["cann"].split(".")[:2] if x.isdigit())
        inst = (
            t.cann(host["cann"], ops="910b") if major >= (8, 5) else t.toolkit(host["cann"], kernels="910b")
        )
    if "torch" in host:
        t.python_stack(host["torch"], host.get("torch_npu"))
    if "numpy" in host:
        sp = t.site_packages("3.11")
        for old in (t.root / sp.lstrip("/")).glob("numpy-*.dist-info"):
            (old / "METADATA").unlink()
            old.rmdir()
        t.dist("numpy", host["numpy"])
    if inst is not None:
        t.sourced(inst)
    return t


def _explain_on(tmp_path: Path, case: dict[str, Any], text: bytes) -> judge.Explanation:
    from cannenv.host import Host
    from cannenv.probes import collect

    tree = _host_tree(tmp_path / "host", case["host"])
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    _, findings = host_findings(facts)
    return judge.explain(TABLE, _scan(text), facts=facts, findings=findings, host_source="root")


@pytest.mark.parametrize("case", CASES, ids=[c["file"].removesuffix(".txt") for c in CASES])
def test_real_excerpt_is_explained_by_the_established_cause(case: dict[str, Any], tmp_path: Path) -> None:
    text = (DATA / case["file"]).read_bytes()
    ex = judge.explain(TABLE, _scan(text))
    assert ex.matches, f"{case['file']}: no signature matched"
    assert ex.causes[0].id == case["cause"], [(c.id, c.signature) for c in ex.causes]
    if "host" in case:
        on_host = _explain_on(tmp_path, case, text)
        top = on_host.causes[0]
        assert top.id == case["cause"], [(c.id, c.status, c.basis) for c in on_host.causes]
        if "status" in case:
            assert top.status == case["status"], top.basis


def test_the_corpus_is_large_real_and_has_traps_and_non_version_problems() -> None:
    assert len(CASES) >= 40
    assert len({c["file"] for c in CASES}) == len(CASES)
    assert all(c["url"].startswith("https://github.com/") for c in CASES)
    assert sum(1 for c in CASES if c.get("trap")) >= 5
    assert sum(1 for c in CASES if not TABLE.causes[c["cause"]].version_problem) >= 5
    assert {p.name for p in DATA.glob("*.txt")} == {c["file"] for c in CASES}
    assert sum(1 for c in CASES if "host" in c) >= 3


def render_sources() -> str:
    out = [
        "# Real error excerpts (tests/data/errors)",
        "",
        "Copied as posted from public threads (a few lines each; the URL is the source). Each is a test",
        "of the cause id the thread established (tests/unit/test_explain_corpus.py). Generated from",
        "cases.yaml by `python -m tests.unit.test_explain_corpus`; a test keeps it in sync.",
        "",
        "| file | source | cause established | trap | host facts from the thread |",
        "|---|---|---|---|---|",
    ]
    for c in CASES:
        host = ", ".join(f"{k} {v}" for k, v in c.get("host", {}).items()) or "-"
        est = c["established"].replace("|", "\\|")
        trap = "yes" if c.get("trap") else ""
        out.append(f"| `{c['file']}` | {c['url']} | `{c['cause']}`: {est} | {trap} | {host} |")
    traps = sum(1 for c in CASES if c.get("trap"))
    nonver = sum(1 for c in CASES if not TABLE.causes[c["cause"]].version_problem)
    out += ["", f"{len(CASES)} excerpts; {traps} traps; {nonver} not version problems.", ""]
    return "\n".join(out)


def test_sources_md_is_in_sync() -> None:
    assert (DATA / "SOURCES.md").read_text(encoding="utf-8") == render_sources(), (
        "regenerate: python -m tests.unit.test_explain_corpus"
    )


if __name__ == "__main__":
    (DATA / "SOURCES.md").write_text(render_sources(), encoding="utf-8")
