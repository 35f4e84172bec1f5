"""The Ascend tools' own messages (issue 29): ais_bench and its aclruntime backend, msit, msprobe,
PyPTO and triton-ascend — read from the vendored excerpts of their real files
(tests/data/explain_tools/EXCERPTS.md), each row cited at its commit, each cause through the
reviewed rules of ``message_causes``, ranked as the other messages read out of sources."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cannenv import linre
from cannenv.explain import messages, signatures, tables
from cannenv.explain.rules import TOOL_FAMILIES, distinctive, pattern
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
EXCERPTS = Path(__file__).resolve().parents[1] / "data" / "explain_tools"
FIRST_LINE = {
    (row[0], row[2]): int(row[4].split("-")[0])
    for row in (
        [c.strip() for c in line.strip("|").split("|")]
        for line in (EXCERPTS / "EXCERPTS.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("| source")
    )
}
TOOLS = {m for m in K.source_messages if m.family in TOOL_FAMILIES}


def _excerpt_rows(source: str) -> list[dict[str, object]]:
    return messages.import_tool_source(EXCERPTS / source, source)


def test_python_forms_are_read_with_their_pieces() -> None:
    """logger.warning(…format…), logger.error('%s' % x), raise …Error(…), print('[ERROR] …');
    a plain print or a logger.info is not a message."""
    text = (
        "def f(path, size):\n"
        '    logger.warning("aclruntime version:{} is lower please update".format(v))\n'
        "    logger.error('The file path %s may be insecure because is does not belong to you.' % path)\n"
        '    logger.warning("The file path %r may be insecure because it can be written by others.", path)\n'
        '    raise ValueError(f"Input {path} does not exist! Check the path given")\n'
        '    print("[ERROR] Invalid args. some input is not a real dir path")\n'
        '    print("the run finished with all outputs saved to the folder")\n'
        '    logger.info("a message only at the info level, never an error")\n'
    )
    got = [(line, messages.fragments(p)) for line, p in messages.tool_py_messages(text)]
    assert got == [
        (2, ["aclruntime version:", "is lower please update"]),
        (3, ["The file path", "may be insecure because is does not belong to you."]),
        (4, ["The file path", "may be insecure because it can be written by others."]),
        (5, ["Input", "does not exist! Check the path given"]),
        (6, ["[ERROR] Invalid args. some input is not a real dir path"]),
    ]


def test_cpp_forms_are_read_with_their_pieces() -> None:
    """aclruntime's ERROR_LOG/WARN_LOG and throw std::runtime_error, PyPTO's CHECK(…) << … stream;
    a DEBUG_LOG and a comment are not messages."""
    text = (
        'WARN_LOG("intensors in:%zu need:%zu not match", inputs.size(), n);\n'
        '    DEBUG_LOG("only a debug line, not an error of any kind");\n'
        '    // ERROR_LOG("a commented call is not a message at all");\n'
        '    throw std::runtime_error("ParseNpyHeader: should be little endian.");\n'
        "    CHECK(ExternalError::INVALID_VAL, a % b == 0)\n"
        '        << "The tileShape of last axis need to " << n << " align!";\n'
    )
    got = [(line, macro, messages.fragments(p)) for line, p, macro in messages.tool_cpp_messages(text)]
    assert got == [
        (1, "WARN_LOG", ["intensors in:", "need:", "not match"]),
        (4, "runtime_error", ["ParseNpyHeader: should be little endian."]),
        (5, "CHECK", ["The tileShape of last axis need to", "align!"]),
    ]


def test_import_reads_the_real_excerpts() -> None:
    got = {
        source: [
            (str(r["at"]).rsplit("/", 1)[-1], tuple(r["text"]), r["family"]) for r in _excerpt_rows(source)
        ]  # type: ignore[arg-type]
        for source in messages.TOOL_SOURCES
    }
    assert got["ais-bench-tools"] == [
        ("io_oprations.py#L9", ("arg0 tensorsize:", "filesize:", "not match"), "ais-bench"),
        (
            "miscellaneous.py#L4",
            ("aclruntime version:", "is lower please update aclruntime follow any one method"),
            "ais-bench",
        ),
        (
            "miscellaneous.py#L5",
            (
                "1. visit https://github.com/Ascend/tools/tree/master/ais-bench_workload/tool/ais_bench"
                " to install",
            ),
            "ais-bench",
        ),
        (
            "miscellaneous.py#L6",
            (
                "2. or run cmd: pip3  install -v --force-reinstall 'git+https://github.com/Ascend/tools.git"
                "#egg=aclruntime&subdirectory=ais-bench_workload/tool/ais_bench/backend' to install",
            ),
            "ais-bench",
        ),
    ]
    # 'intensors in:%zu need:%zu not match': its two longest fragments make 19 characters, too few
    assert got["ais-bench-msit"] == [
        (
            "ModelInferenceProcessor.cpp#L8",
            ("check failed dym gearcount:", "but dymtype:", "not set"),
            "ais-bench",
        ),
        ("cnpy.cpp#L4", ("ParseNpyHeader: should be little endian.",), "ais-bench"),
    ]
    assert [t for _, t, _ in got["msit"]] == [
        ("The file path", "may be insecure because other users have write permissions."),
        ("The file path", "may be insecure because is does not belong to you."),
    ]
    assert [t for _, t, _ in got["msprobe"]] == [
        ("The file path", "may be insecure because is does not belong to you.")
    ]
    # PyPTO's CHECK is its external error, a family of its own; its ASSERTs are not imported
    assert got["pypto"] == [("where.cpp#L3", ("The tileShape of last axis need to 8 align!",), "pypto-check")]
    assert got["triton-ascend"] == [
        (
            "utils.py#L4",
            ("ASCEND_HOME_PATH is not set, source <ascend-toolkit>/set_env.sh first",),
            "triton-ascend",
        )
    ]


def test_the_refresh_diff_is_empty_at_the_imported_commit() -> None:
    """Every excerpt's message is a shipped row with the same id (its text and file) at the same
    line of the same file; the copy of a message a newer source already has is that source's row."""
    shipped = {m.id: m for m in K.source_messages}
    for source in messages.TOOL_SOURCES:
        for r in _excerpt_rows(source):
            row = shipped[str(r["id"])]
            assert row.text == tuple(r["text"])  # type: ignore[arg-type]
            path, line = str(r["at"]).split("#L")
            if row.cites == source:
                assert row.at == f"{path}#L{FIRST_LINE[(source, path)] + int(line) - 1}"
            else:  # ais_bench's older repository: the msit copy of the same file cites it
                assert (source, row.cites) == ("ais-bench-tools", "ais-bench-msit")
                assert row.at.rsplit("/", 1)[-1].split("#")[0] == path.rsplit("/", 1)[-1]
    diff = messages.refresh_diff(
        [{"id": "aisb-0000000000", "at": "x.py#L1"}], [{"id": "aisb-1111111111", "at": "y.py#L2"}]
    )
    assert diff == {
        "added": [{"id": "aisb-1111111111", "at": "y.py#L2"}],
        "removed": ["aisb-0000000000"],
        "moved": {},
    }


def test_every_tool_row_cites_its_file_and_line_at_a_commit() -> None:
    by_source = {s: 0 for s in messages.TOOL_SOURCES}
    for m in TOOLS:
        by_source[m.cites] += 1
        _title, url = K.message_source(m.source) or ("", "")
        assert re.fullmatch(r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/[^#\s]+#L[0-9]+", url), url
        assert url.endswith(m.at)
        assert distinctive(m.text, pair=True)
        assert signatures.re2_subset_problem(pattern(m.text)[1]) is None
        linre.compile(pattern(m.text)[1], what="regex")
    assert all(n > 0 for n in by_source.values()), by_source
    assert len(TOOLS) > 5000


def test_the_oss_own_words_are_no_tools_message() -> None:
    """FileNotFoundError("No such file or directory") prints strerror's words: not a row (it would
    match every log that names a missing file)."""
    assert not [m for m in TOOLS if " ".join(m.text).rstrip(".").lower() == "no such file or directory"]


@pytest.mark.parametrize(
    ("log", "cause", "family"),
    [
        (
            "[ERROR] arg0 tensorsize: 196608 filesize: 602112 not match\n",
            "not-a-version-problem",
            "ais-bench",
        ),
        (
            "2026-01-02 10:00:00 ERROR The file path /data/a.bin may be insecure because is does not"
            " belong to you.\n",
            "not-a-version-problem",
            "msit",
        ),
        (
            "CHECK FAILED: ErrCode: F0000C! Enum: ERR_CONFIG_ALIGNMENT\n"
            "The tileShape of last axis need to 8 align!\n",
            "not-a-version-problem",
            "pypto-check",
        ),
        (
            "OSError: ASCEND_HOME_PATH is not set, source <ascend-toolkit>/set_env.sh first\n",
            "env-not-sourced",
            "triton-ascend",
        ),
        (
            "[ERROR] Importing _set_init_iter failed, please use the latest version package of MindSpore.\n",
            "framework-mismatch",
            "msprobe",
        ),
    ],
)
def test_a_tools_message_explains_with_its_reviewed_cause(log: str, cause: str, family: str) -> None:
    ex = _explain(log)
    assert ex.causes and ex.causes[0].id == cause
    assert any(m.id.startswith(family + "-") for m in ex.matches)


def test_tool_rows_rank_as_the_other_source_messages() -> None:
    """Below every hand-written signature and the vendor's codes, as torch_npu's own messages."""
    for fam in TOOL_FAMILIES:
        assert signatures.MESSAGE_FAMILY[fam][1] == signatures.MESSAGE_FAMILY["torch-npu-check"][1]
    # a hand-written signature beside a tool's message still decides
    hand = [s.priority for s in TABLE.signatures if not s.derived]
    assert signatures.MESSAGE_FAMILY["ais-bench"][1] < min(p for p in hand if p > -40)


def test_a_message_with_no_reviewed_class_points_to_nothing() -> None:
    """aclruntime's 'load model from file failed' may be a model of another CANN or chip: no cause."""
    ex = _explain("[ERROR] load model from file failed, model file is search_bs1.om\n")
    assert not [m for m in ex.matches if m.id.startswith("ais-bench-")]


def test_hostile_long_lines_are_read_once() -> None:
    line = "arg0 tensorsize: " + "1 " * 200_000 + "\n"
    ex = _explain(line * 3)
    assert not [m for m in ex.matches if m.id.startswith("ais-bench-")]
    assert len(messages.tool_cpp_messages('ERROR_LOG("' + "x" * 100_000)) <= 1  # an unterminated literal
