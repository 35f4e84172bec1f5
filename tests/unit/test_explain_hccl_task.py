"""`cannenv explain`: HCCL's task exception reports read together (issue 29; docs/explain.md, "HCCL's
task execution stage").

HCCL's fault guide (task_exec_stage.md, notify wait timeout EI0002) reads the reports of a
communicator's ranks together: different collectives on its ranks → the ranks issue different
collectives (hccl-consistency); the same collective failing further apart than HCCL_EXEC_TIMEOUT →
the timeout or the application's gap (hccl-config). Where the log lacks that detail the stage keyword
decides as before (hccl-link).
"""

from __future__ import annotations

import pytest

from cannenv import linre
from cannenv.explain import signatures
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
GROUP = "127.10.0.1%enp_60000_0_1761275812718970"


def _top(text: str) -> tuple[str | None, str | None]:
    ex = _explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


def _report(pid: int, when: str, op: str, group: str = GROUP, stage: str = "Timeout") -> str:
    # PrintBaseErrorLog's "%sTask run failed, base information is %s" with GetBaseInfoStr's fields
    return (
        f"[ERROR] HCCL({pid},all_reduce_test):{when}.499.235 [task_exception_handler.cc:908] "
        f"[{pid}][TaskExecStage][{stage}][Host]Task run failed, base information is streamID:[2], "
        f"taskID[21], tag[{op}_{group}], AlgType(level 0-1-2):[fullmesh-ring-NHR].\n"
    )


def _timeout(seconds: str) -> str:
    return (
        "[INFO] HCCL(2111665,all_reduce_test):2025-10-24-11:16:52.719.213 [externalinput.cc:1029] "
        f"[2111665][HCCL_ENV] HCCL_EXEC_TIMEOUT set by environment to [{seconds}]s\n"
    )


def test_ranks_in_different_collectives_are_a_consistency_problem() -> None:
    text = _report(1, "2025-10-24-11:18:29", "AllReduce") + _report(2, "2025-10-24-11:18:29", "AllGather")
    assert _top(text) == ("hccl-consistency", "hccl-task-different-collectives")
    ex = _explain(text)
    assert "hccl-stage-taskexecstage-timeout" in [m.id for m in ex.matches]  # still matched, below
    urls = [s.url for s in ex.causes[0].sources]
    assert any("task_exec_stage.md" in u for u in urls)


def test_a_gap_longer_than_the_printed_timeout_is_the_timeout() -> None:
    text = (
        _timeout("300.00")
        + _report(1, "2025-10-24-22:03:14", "AllReduce")
        + _report(2, "2025-10-24-22:08:58", "AllReduce")
    )
    assert _top(text) == ("hccl-config", "hccl-task-gap-over-exec-timeout")
    assert "344 s apart" in _explain(text).matches[0].title


@pytest.mark.parametrize(
    "text",
    [
        # the same gap without the timeout printed: the log does not say which is longer
        _report(1, "2025-10-24-22:03:14", "AllReduce") + _report(2, "2025-10-24-22:08:58", "AllReduce"),
        # the gap shorter than the timeout: both waited on someone else
        _timeout("1836")
        + _report(1, "2025-10-24-22:03:14", "AllReduce")
        + _report(2, "2025-10-24-22:08:58", "AllReduce"),
        # one rank only
        _report(1, "2025-10-24-11:18:29", "AllReduce"),
        # different collectives of different communicators
        _report(1, "2025-10-24-11:18:29", "AllReduce", "g1")
        + _report(2, "2025-10-24-11:18:29", "AllGather", "g2"),
    ],
)
def test_without_the_detail_the_stage_decides_as_before(text: str) -> None:
    assert _top(text) == ("hccl-link", "hccl-stage-taskexecstage-timeout")


def test_a_graph_mode_tag_without_the_operators_prefix_is_not_read() -> None:
    text = _report(1, "2025-10-24-11:18:29", "AllReduce").replace(f"AllReduce_{GROUP}", "1234") + _report(
        2, "2025-10-24-11:18:29", "AllGather"
    )
    assert _top(text) == ("hccl-link", "hccl-stage-taskexecstage-timeout")


def test_the_regexes_are_linear_on_their_anchors() -> None:
    for e in K.extractors:
        if e.kind not in ("hccl-task-base", "hccl-exec-timeout"):
            continue
        assert linre.ambiguity(e.regex, mode="search") is None
        compiled = linre.compile(e.regex)
        for filler in (e.anchor * (1_000_000 // len(e.anchor)), "):" + "[" * 1_000_000, "_" * 1_000_000):
            m = compiled.search(filler)
            assert m is None or e.anchor in m.group(0)


def test_a_huge_line_and_many_lines_are_read_in_bounds() -> None:
    huge = _report(1, "2025-10-24-11:18:29", "AllReduce").replace(GROUP, "g" * 1_000_000)
    many = "".join(
        _report(i, f"2025-10-24-11:{i % 60:02d}:{i % 60:02d}", ("AllReduce", "AllGather")[i % 2])
        for i in range(20_000)
    )
    assert _top(huge) == ("hccl-link", "hccl-stage-taskexecstage-timeout")  # a 1 MB tag is not read
    ex = _explain(many)
    assert ex.causes[0].id == "hccl-consistency" and len(ex.matches) < 20
