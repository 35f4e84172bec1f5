"""The vendors' FAQ pages imported whole (matrices/explain/faq.yaml, cannenv/explain/faq.py).

Every page of the table is saved as the vendor wrote it (tests/data/explain_faq/<page id>.md, the
source URL at its commit in faq.yaml): the importer parses it, every entry that shows an error
message is a row or skipped with why, every row's fragments are in its entry verbatim, and each row
explains its own entry's text with the cause a person assigned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cannenv.explain import faq, signatures
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

PAGES = Path(__file__).resolve().parents[1] / "data" / "explain_faq"
MODEL = faq.load_model(faq.shipped_path())
ROWS = faq.shipped()
TABLE = signatures.shipped()
GENERIC = {"error", "failed", "exception", "runtimeerror", "traceback", "out of memory", "segmentation fault"}


def _entries(page: str) -> dict[str, faq.Entry]:
    return {e.anchor: e for e in faq.parse_page((PAGES / f"{page}.md").read_text(encoding="utf-8"))}


def test_faq_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "faq.schema.json").read_text())
    assert shipped == faq.json_schema(), (
        "regenerate: python -m cannenv.explain.faq --schema > matrices/explain/faq.schema.json"
    )


@pytest.mark.parametrize("page", sorted(MODEL.pages))
def test_every_page_is_imported_whole(page: str) -> None:
    """The refresh diff of the saved page is empty: every entry that shows a message is a row or
    skipped with why, and no row's entry changed."""
    diff = faq.refresh_diff(MODEL, page, (PAGES / f"{page}.md").read_text(encoding="utf-8"))
    assert diff["new"] == [], f"entries the table lacks: {[e['anchor'] for e in diff['new']]}"
    assert diff["changed"] == []
    assert diff["rows"] + diff["skipped"] >= diff["with_message"]


def test_every_saved_page_is_a_page_of_the_table() -> None:
    assert sorted(f.stem for f in PAGES.glob("*.md")) == sorted(MODEL.pages)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.page}#{r.anchor[:30]}")
def test_row_fragments_are_verbatim_and_distinctive(row: faq.FaqRow) -> None:
    entry = _entries(row.page)[row.anchor]
    assert entry.title == row.title
    for fragment in row.match:
        assert faq.fragment_in(fragment, entry), fragment
        assert fragment.strip(" .:").lower() not in GENERIC
    assert row.url.startswith(f"https://github.com/{MODEL.pages[row.page].repo}/blob/")
    assert row.url.endswith(f"#{row.anchor}")


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r.page}#{r.anchor[:30]}")
def test_row_explains_its_own_message(row: faq.FaqRow) -> None:
    """Each fragment, as the vendor's page prints it, is explained by the row's signature (its own,
    or the hand-written one made from the entry) with the row's cause among the causes; a row's
    own signature carries the page's URL with the entry's anchor."""
    own = row.signature or row.id
    entry = _entries(row.page)[row.anchor]
    for fragment in row.match:
        # the entry's message line that holds the fragment, as the page prints it
        line = next(
            (faq.normal(m) for m in entry.messages if faq.normal(fragment) in faq.normal(m)), fragment
        )
        ex = _explain(f"something went wrong\n{line}\n")
        assert own in [m.id for m in ex.matches], fragment
        if row.cause is not None:
            assert row.cause in [c.id for c in ex.causes]
    if row.signature is None:
        sig = TABLE.signature(row.id)
        assert sig.derived and sig.priority == row.priority
        if row.cause is not None:
            assert TABLE.sources[sig.causes[0].sources[0]].url == row.url
            assert sig.causes[0].remedy == row.advice


def test_rows_rank_below_hand_written_signatures_unless_set() -> None:
    # below them only the CPU-fallback warning (-40), helper processes reporting their parent gone at
    # exit (-46: no error), TBE's E5~E8 error dict (-25: the fallback for a code the knowledge
    # tables lack, ranked below their code rows) and the runtime's AI Core exception report (-21: the
    # generic reading of any AI Core error, below the code rows, msaicerr's conclusions and an FAQ
    # entry, each of which says more about the same failure), and ais_bench's aclruntime warning (-40)
    below = {"npu-cpu-fallback-warning", "worker-parent-exited", "tbe-operator-check"}
    below.add("pip-scripts-not-on-path")  # pip's warning after an install (-46): no error
    below.add("runtime-aicore-exception-report")
    # any host allocation failure's generic reading (-21, as the AI Core report's): below the code
    # rows and an FAQ row for the same words, each of which says more about the same failure
    below.add("host-allocation-failed")
    below.add("ais-bench-aclruntime-too-old")  # ais_bench's warning (-40): it runs on in its old mode
    hand = [s.priority for s in TABLE.signatures if not s.derived and s.id not in below]
    for r in ROWS:
        if r.signature is None and r.priority == faq.FAQ_PRIORITY:
            assert all(p >= r.priority for p in hand)


def test_parser_on_the_mindie_faq() -> None:
    """The MindIE LLM FAQ: 39 entries; the parts of an entry (问题现象描述, 原因分析, 解决措施, even a
    解决措施 one level too high) stay in it; headings in code blocks are code."""
    entries = _entries("mindie-llm-faq")
    assert len(entries) == 39
    kv = entries["pd分离场景d节点出现pull-kv-failed报错日志"]
    assert "Pull kv failed" in kv.messages
    assert "hccn_tool -i $i -stat -g" in kv.text  # from 解决措施
    pybind = entries["拉起服务时出现pybind11error_already_set报错"]
    assert "requirements" in pybind.text  # "## 解决措施" under a "##" entry
    assert entries["jzdmxshsgc"].title == "加载大模型时耗时过长"  # the page's own <a id>


def test_importer_prints_a_new_page_and_writes_no_cause(capsys: pytest.CaptureFixture[str]) -> None:
    """A page the table lacks: every entry with a message is printed as a draft, cause left empty;
    exit 1 (something to review). A page imported whole: exit 0."""
    assert faq.main(["--import", str(PAGES / "mindie-llm-faq.md"), "a-new-page"]) == 1
    out = yaml.safe_load(capsys.readouterr().out)
    assert out[0]["rows"] == 0 and len(out[0]["new"]) == out[0]["with_message"] == 18
    assert all(e["cause"] is None for e in out[0]["new"])
    assert faq.main(["--import", str(PAGES), "mindie-llm-faq"]) == 0


def test_refresh_diff_reports_a_changed_entry() -> None:
    text = (
        (PAGES / "mindie-llm-faq.md").read_text(encoding="utf-8").replace("Pull kv failed", "Pull KV failed")
    )
    diff = faq.refresh_diff(MODEL, "mindie-llm-faq", text)
    assert any(c.get("fragments") == ["Pull kv failed"] for c in diff["changed"])


def test_a_row_without_a_cause_matches_and_names_none() -> None:
    """torch_npu's installation FAQ: 'fatal error: 'filesystem' file not found' is a GCC too old, a
    cause of no id: the row matches, names no cause, and its note gives the vendor's advice."""
    from cannenv.explain.render import render_text

    row = next(r for r in ROWS if r.match == ("fatal error: 'filesystem' file not found",))
    assert row.cause is None
    ex = _explain("In file included from src/x.cpp:3:\nfatal error: 'filesystem' file not found\n")
    # the compiler's own category (libtables.yaml) matches too, ranked below the vendor's entry
    assert [m.id for m in ex.matches] == [row.id, "lib-cc-missing-file"]
    assert ex.causes == () and ex.exit_code == 0
    assert "names no cause" in ex.verdict
    assert "Install GCC 8 or newer" in render_text(ex)


def test_docs_list_every_page() -> None:
    """docs/explain.md holds the table of pages as the table and the saved pages give it
    (python -m cannenv.explain.faq --pages tests/data/explain_faq)."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "explain.md").read_text(encoding="utf-8")
    assert faq.pages_table(MODEL, PAGES) in doc, (
        "regenerate: python -m cannenv.explain.faq --pages tests/data/explain_faq"
    )
