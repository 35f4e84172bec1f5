"""`cannenv explain`: msaicerr's root-cause conclusions (issue 29; matrices/explain/aicerr.yaml).

msaicerr, the CANN toolkit's AI Core error analyser, writes one root-cause conclusion at the top of
its ``info.txt``; the table holds every ``conclusion = "…"`` of the tool's source (hicann/oam-tools,
and the vendor's Ascend/tools history for older wordings), each read by a reviewed rule that quotes
the vendor's troubleshooting page. Tested: the importer on source written the way the tool writes
it (strings joined, ``+=`` details, ``%`` formats, a file that does not parse), the refresh diff and
command line, that every row is read by a rule and every rule reads a row, each conclusion found by
its own wording and by a wording changed in one clause, near misses (generic English a conclusion
ends with), the ranking below the vendor's codes, and hostile input (a huge line, many lines).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cannenv.explain import aicerr, judge, signatures
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
MODEL = aicerr.load_model(aicerr.shipped_path())
FOUND = aicerr.conclusions(MODEL)


def _ours(text: str) -> list[judge.Match]:
    return [m for m in _explain(text).matches if m.id.startswith("lib-msaicerr-")]


# --- the data ----------------------------------------------------------------------------------
def test_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "aicerr.schema.json").read_text())
    assert shipped == aicerr.json_schema(), (
        "regenerate: python -m cannenv.explain.aicerr --schema > matrices/explain/aicerr.schema.json"
    )


def test_every_row_is_read_by_a_rule_and_every_rule_reads_one() -> None:
    unread = [r.text for r in MODEL.rows if aicerr.rule_for(MODEL.rules, r.text) is None]
    assert unread == [], "add a reviewed rule (words, causes, the vendor's page) for these"
    used = {aicerr.rule_for(MODEL.rules, r.text).name for r in MODEL.rows}
    assert [r.name for r in MODEL.rules if r.name not in used] == []
    texts = [r.text for r in MODEL.rows]
    assert len(texts) == len(set(texts)), "a text two copies have is cited from the first only"


def test_the_current_tools_branches_are_all_there() -> None:
    """The current release's eleven branches of get_conclusion and its fallback (hicann/oam-tools)."""
    current = {r.text for r in MODEL.rows if r.repo == "oam-tools"}
    assert len(current) == 12
    assert "Failed to execute the single-operator test case. The operator logic may be incorrect." in current
    assert "Internal error. Contact technical support." in current


def test_causes_only_where_the_vendor_says_so() -> None:
    by_rule = {r.name: r for r in MODEL.rules}
    # the operator, its data or memory overwritten: no release is named
    for name in (
        "single-op-failed",
        "args-overwritten",
        "atomic-add-overflow",
        "io-address",
        "set-wait-flag",
    ):
        assert by_rule[name].causes == ("not-a-version-problem",)
    # a kernel asking for more AI Cores than the device has: built for another chip
    assert by_rule["aicore-count"].causes == ("chip-unsupported",)
    # the environment or hardware, the graph compiler, the tool itself: no cause of the table
    for name in (
        "env-sample-operator",
        "graph-no-memory-clean",
        "internal-error",
        "information-insufficient",
    ):
        assert by_rule[name].causes == ()
    for r in MODEL.rules:  # each reading cites the vendor's page or the code's own branch
        assert r.source.url.startswith(
            ("https://github.com/hicann/docs/", "https://github.com/Ascend/tools/")
        ) or ("/msaicerr/" in r.source.url)


def test_every_row_cites_its_line_at_a_commit() -> None:
    _, sources = aicerr.build(MODEL)
    for c in FOUND:
        title, url = sources[c.source_id]
        assert url.endswith(f"/{c.path}#L{c.line}") and f"/blob/{c.commit}/" in url
        assert str(c.line) in title


# --- the importer -------------------------------------------------------------------------------
TOOL_SOURCE = """
class AicErrorInfo:
    def get_conclusion(self):
        conclusion = ""
        if not self.a:
            conclusion = ("The first branch of the analyser is long enough to be told apart,"
                          " while this clause follows it.\\n")
        elif self.b:
            conclusion = "Memory of code overwritten by something long enough\\n"
            if self.addr:
                conclusion += "The memory address is %s\\n" % self.addr
        elif self.c:
            conclusion = "Access something out of its boundary with details\\n" + "\\n".join(self.d)
        elif self.e:
            conclusion = "The address is %s and it is wrong in a long sentence" % self.e
        else:
            conclusion = self._other()
        return conclusion
"""


def _tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "src" / "msaicerr" / "ms_interface"
    pkg.mkdir(parents=True)
    (pkg / "aic_error_info.py").write_text(TOOL_SOURCE)
    (pkg / "broken.py").write_text("def f(:\n    conclusion = 'never read'\n")
    (pkg / "notes.txt").write_text("conclusion = 'not a Python file'\n")
    return tmp_path


def test_the_importer_reads_every_assignment_the_way_the_tool_writes_it(tmp_path: Path) -> None:
    found = aicerr.import_tree(_tree(tmp_path))
    assert [(a.path, a.text) for a in found] == [
        (
            "src/msaicerr/ms_interface/aic_error_info.py",
            "The first branch of the analyser is long enough to be told apart, while this clause follows it.",
        ),
        (
            "src/msaicerr/ms_interface/aic_error_info.py",
            "Memory of code overwritten by something long enough",
        ),
        ("src/msaicerr/ms_interface/aic_error_info.py", "Access something out of its boundary with details"),
        ("src/msaicerr/ms_interface/aic_error_info.py", "The address is"),
    ]
    lines = TOOL_SOURCE.splitlines()
    for a in found:  # the line is the assignment's own (the text is on it or on the next)
        assert "conclusion =" in lines[a.line - 1]


def test_the_refresh_diff_is_by_text_not_by_line() -> None:
    old = [
        {"repo": "k", "path": "a.py", "line": 10, "text": "kept"},
        {"repo": "k", "path": "a.py", "line": 12, "text": "gone"},
    ]
    new = [
        {"repo": "k", "path": "a.py", "line": 99, "text": "kept"},
        {"repo": "k", "path": "b.py", "line": 1, "text": "new"},
    ]
    d = aicerr.diff(old, new)
    assert [r["text"] for r in d["lacks"]] == ["new"]
    assert [r["text"] for r in d["gone"]] == ["gone"]
    assert d["changed"] == []
    moved = aicerr.diff(old[:1], [{"repo": "k", "path": "c.py", "line": 10, "text": "kept"}])
    assert moved["changed"] == [{"text": "kept", "was": "a.py", "now": "c.py"}]


def test_a_copy_listed_later_does_not_add_a_text_an_earlier_one_cites(tmp_path: Path) -> None:
    found = aicerr.import_tree(_tree(tmp_path))
    rows = aicerr.rows_of(found, "old", cited=[found[0].text])
    assert [r["text"] for r in rows] == [a.text for a in found[1:]]


def test_the_command_line_prints_the_diff_and_writes_nothing_without_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = aicerr.shipped_path().read_bytes()
    assert aicerr.main(["--import", str(_tree(tmp_path)), "oam-tools"]) == 1  # something to review
    out = capsys.readouterr().out
    assert out.startswith("# oam-tools: 4 conclusions from ")
    assert "lacks:" in out and "gone:" in out and "Failed to execute the single-operator test case" in out
    assert aicerr.shipped_path().read_bytes() == before
    assert aicerr.main(["--bogus"]) == 2


# --- matching -----------------------------------------------------------------------------------
def _caused() -> list[Any]:
    return [c for c in FOUND if c.clauses]


@pytest.mark.parametrize("c", _caused(), ids=lambda c: c.key)
def test_each_conclusion_is_found_by_its_own_wording(c: Any) -> None:
    text = f'"**********************Root cause conclusion******************"\n{c.text}\n'
    ours = _ours(text)
    ids = [m.id for m in ours]
    assert f"lib-msaicerr-{c.key}" in ids
    # another wording of the same branch may share a clause (the 2023 tool's two 'dha status 1'
    # sentences): the same rule, never another reading
    assert {i.removeprefix("lib-msaicerr-").rsplit("-", 1)[0] for i in ids} == {c.rule}
    ex = _explain(text)
    if c.causes:
        assert ex.causes[0].id == c.causes[0] and ex.causes[0].signature in ids
        assert c.meaning in ex.causes[0].why and "root-cause conclusion" in ex.causes[0].why
    else:  # it matches and says what the vendor calls it, blaming nothing
        assert all(x.signature not in ids for x in ex.causes)


def test_a_conclusion_reworded_in_one_clause_is_still_found() -> None:
    """A release between the public copies fixed 'excute' to 'execute'; the other clause holds."""
    line = (
        "The args of op is diffrerent before and after execute, args may be overwrited by other op."
        "Please use oom to continue debug."
    )
    assert next(m.id for m in _ours(line)).startswith("lib-msaicerr-args-overwritten-")
    assert _explain(line).causes[0].id == "not-a-version-problem"


def test_the_current_conclusion_prints_without_the_old_header() -> None:
    line = "The number of AI Cores in the environment is less than that required by the operator.\n"
    ex = _explain(line)
    assert ex.causes[0].id == "chip-unsupported"
    assert ex.causes[0].signature.startswith("lib-msaicerr-aicore-count-")


@pytest.mark.parametrize(
    "text",
    [
        "please check the input data\n",  # the tail of a conclusion, generic English
        "Check the network accuracy.\n",
        "Please check your environment!\n",
        "Contact technical support.\n",
        "Input data is abnormal. Check the network accuracy.\n",  # too short to tell apart: not looked for
        "the operator logic may be incorrect\n",  # another case: not the tool's sentence
    ],
)
def test_near_misses_are_not_conclusions(text: str) -> None:
    assert _ours(text) == []


def test_the_analysers_reading_ranks_above_the_code_and_the_report() -> None:
    """A conclusion pasted under the runtime's 507015 (ACL_ERROR_RT_AICORE_EXCEPTION, a code row at
    -20) and its AI Core exception report (-21): the analyser's reading of this very exception says
    which kind, so it ranks first — chip-unsupported over the code's not-a-version-problem."""
    text = (
        "RuntimeError: call aclnnAdd failed, error code is 507015\n"
        "An error occurs on the device(chipId:0, dieId:0), the serial number is 4, the error is aicore error,"
        " core id is 14, error code = 0x800000, dump info: pc start: 0x124000000ce0\n"
        "The number of AI Cores in the environment is less than that required by the operator.\n"
    )
    ex = _explain(text)
    ids = [m.id for m in ex.matches]
    assert "runtime-aicore-exception-report" in ids
    assert ex.causes[0].id == "chip-unsupported"
    assert ex.causes[0].signature.startswith("lib-msaicerr-aicore-count-")
    assert [c.id for c in ex.causes[1:]] == ["not-a-version-problem"]


@pytest.mark.parametrize(
    "text",
    [
        # PrintCoreInfo's report (910B/910_93), its head message from GetStarsRingBufferHeadMsg
        "[PID: 235403] Execution_Error(EZ2001): An error occurs on the device(chipId:0, dieId:0), the"
        " serial number is 4, the error is aicore error, core id is 14, error code = 0x800000, dump info:\n",
        "EZ9999[PID: 1] (EZ9999):  An error occurs on the device(chipId:0, dieId:0), the serial number is"
        " 329, the error is aivec error, core id is 0, error code = 286, dump info: pc start: 0x1200\n",
        "the serial number is 7, the error is fftsplus aivector error, core id is 3, error code = 0x10\n",
        # PrintCoreErrorInfo's report (older chips)
        "The error from device(0), serial number is 12, there is an error of aicore, core id is 5,"
        " error code = 0x8\n",
    ],
)
def test_the_runtimes_aicore_exception_report_in_its_source_forms(text: str) -> None:
    ex = _explain(text)
    assert [m.id for m in ex.matches] == ["runtime-aicore-exception-report"]
    assert ex.causes[0].id == "not-a-version-problem"


@pytest.mark.parametrize(
    "text",
    [
        "the error is fftsplus sdma error, core id is 0\n",  # not an AI Core: the report's other kinds
        "the error is hccl fftsplus timeout, core id is 0\n",
        "core id is 14, error code = 0x800000\n",
    ],
)
def test_the_reports_other_kinds_are_not_ai_core_exceptions(text: str) -> None:
    assert "runtime-aicore-exception-report" not in [m.id for m in _explain(text).matches]


def test_the_table_is_a_lib_table_at_its_own_priority() -> None:
    k = TABLE.knowledge
    assert k is not None
    (t,) = [t for t in k.lib_tables if t.id == "msaicerr"]
    assert t.priority == aicerr.AICERR_PRIORITY
    assert signatures.KNOWLEDGE_PRIORITY < aicerr.AICERR_PRIORITY < 0  # above the code rows
    report = next(s for s in TABLE.signatures if s.id == "runtime-aicore-exception-report")
    assert report.priority < signatures.KNOWLEDGE_PRIORITY


# --- hostile input ------------------------------------------------------------------------------
def test_a_huge_line_holding_a_conclusion_is_read_in_bounds() -> None:
    clause = "Failed to execute the single-operator test case"
    line = "x" * 3_000_000 + " " + clause + ". The operator logic may be incorrect. " + "y" * 3_000_000 + "\n"
    ex = _explain(line)
    assert any(m.id.startswith("lib-msaicerr-single-op-failed-") for m in ex.matches)


def test_many_lines_of_one_conclusion_give_one_match() -> None:
    line = "Failed to execute the single-operator test case. The operator logic may be incorrect.\n"
    ex = _explain(line * 100_000)
    ours = [m for m in ex.matches if m.id.startswith("lib-msaicerr-")]
    assert len(ours) == 1
    assert ex.causes[0].id == "not-a-version-problem"


def test_every_form_is_a_literal_the_linear_engine_takes() -> None:
    from cannenv import linre

    k = TABLE.knowledge
    assert k is not None
    (t,) = [t for t in k.lib_tables if t.id == "msaicerr"]
    assert len(t.forms) >= 25
    for f in t.forms:
        assert linre.ambiguity(f.regex, mode="search") is None
        assert linre.compile(f.regex).search(f"[{f.anchor}]") is not None
        assert len(f.anchor) >= aicerr.MIN_CLAUSE


def test_a_bad_table_is_refused_by_field() -> None:
    import yaml

    from cannenv.errors import InputError

    raw = yaml.safe_load(aicerr.shipped_path().read_text())
    raw["rows"][0]["repo"] = "nowhere"
    with pytest.raises(InputError, match="unknown repo"):
        aicerr.parse(raw, source="aicerr.yaml")
    raw = yaml.safe_load(aicerr.shipped_path().read_text())
    raw["repos"]["oam-tools"]["commit"] = "HEAD"
    with pytest.raises(InputError, match="commit"):
        aicerr.parse(raw, source="aicerr.yaml")
