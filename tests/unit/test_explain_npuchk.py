"""`cannenv explain`: asc-tools' npu check report (issue 29, round 7).

Table `npu-check` of matrices/explain/libtables.yaml: the error kinds of asc-tools'
npuchk/ascendc_npuchk_report.py (its whole `err_details` table, 19 kinds), each a defect of the
Ascend C kernel's own code, in the forms the report prints them: the `ERROR STATISTICS` lines
(`COUNT, KIND, RULE`) and an error's own line (`[V] [ErrorRead3] on read 0x…`).
"""

from __future__ import annotations

import re

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
T = next(t for t in K.lib_tables if t.id == "npu-check")

# err_details of npuchk/ascendc_npuchk_report.py at the source's commit, in its order: a refresh
# that finds another list edits this and the table together
KINDS = (
    "ErrorRead1 ErrorRead2 ErrorRead3 ErrorRead4 ErrorWrite1 ErrorWrite2 ErrorWrite3 ErrorWrite4 "
    "ErrorSync1 ErrorSync2 ErrorSync3 ErrorSync4 ErrorLeak ErrorFree "
    "ErrorBuffer1 ErrorBuffer2 ErrorBuffer0 ErrorBuffer3 ErrorBuffer4"
).split()


def _sigs(text: str) -> list[str]:
    return [m.id for m in explain(text).matches]


def test_the_table_is_the_reports_whole_list_each_the_kernels_code() -> None:
    assert [r.key for r in T.rows] == KINDS
    assert all(r.causes == ("not-a-version-problem",) for r in T.rows)
    for sid in {r.source for r in T.rows} | {f.source for f in T.forms}:
        _, url = K.sources[sid]
        assert re.search(r"/blob/[0-9a-f]{40}/", url), (sid, url)


@pytest.mark.parametrize(
    ("text", "sigs"),
    [
        (  # the report's statistics, as the script prints them
            "---------------------- ERROR STATISTICS ----------------------\n"
            "1, ErrorRead3, Read out of bounds, length exceeds the actual valid data\n",
            ["lib-npu-check-errorread3"],
        ),
        (  # as the vendor's Chinese page shows them (full-width commas)
            "----------------------ERROR STATISTICS----------------------\n"
            "1，ErrorBuffer2，VECIN/VECOUT/VECCALC的操作不合规\n"
            "1，ErrorWrite1，非法内存写入数据：未经过Ascend C框架的alloc_buf申请或已经free\n",
            ["lib-npu-check-errorwrite1", "lib-npu-check-errorbuffer2"],
        ),
        ("[V] [ErrorRead3] on read 0x7f328c11b010 0x800B\n", ["lib-npu-check-errorread3"]),
        ("12, ErrorLeak, memory leak\n", ["lib-npu-check-errorleak"]),
    ],
)
def test_the_reports_forms_are_the_kernels_code(text: str, sigs: list[str]) -> None:
    ex = explain(text)
    assert sorted(m.id for m in ex.matches) == sorted(sigs)
    assert ex.causes[0].id == "not-a-version-problem"


@pytest.mark.parametrize(
    "text",
    [
        "see ErrorWrite1 in the guide for what it means\n",  # prose, no count, no brackets
        "1, ErrorWrite9, unknown\n",  # not a kind of the table
        "v1.2, ErrorRead1x, y\n",
    ],
)
def test_near_misses_are_not_the_forms(text: str) -> None:
    assert not [s for s in _sigs(text) if s.startswith("lib-npu-check")]


def test_a_version_signature_beside_the_report_stays_first() -> None:
    text = "1, ErrorWrite1, x\nImportError: libascendcl.so: cannot open shared object file: No such file\n"
    assert explain(text).causes[0].id == "env-not-sourced"


@pytest.mark.parametrize("form", [(f.anchor, f.regex) for f in T.forms], ids=lambda f: f[0])
def test_each_form_is_linear_on_a_line_of_its_anchor(form: tuple[str, str]) -> None:
    anchor, regex = form
    assert linre.ambiguity(regex, mode="search") is None
    compiled = linre.compile(regex)
    for filler in (anchor * max(1, 300_000 // len(anchor)), "1, " * 200_000, "1，" * 200_000):
        m = compiled.search(filler)
        assert m is None or anchor in m.group(0)
