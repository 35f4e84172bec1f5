"""Resolution over stacks and rules: the issue's examples."""

from __future__ import annotations

import pytest

from cannenv import matrix
from cannenv.errors import InputError
from cannenv.resolve import candidates, resolve


@pytest.fixture(scope="module")
def m() -> matrix.Matrix:
    return matrix.load()


def test_impossible_request_explains_the_blocking_rule(m: matrix.Matrix) -> None:
    res = resolve(m, keep={"driver": "24.1.rc2"}, want={"torch": "2.6.0"}, family="a2", python="3.11")
    assert not res.ok
    (blocker,) = res.blockers
    assert "driver 24.1.rc2 is accepted up to CANN 8.1.RC1" in blocker
    assert "carries torch_npu only for torch 2.1.0, 2.3.1, 2.4.0 and 2.5.1" in blocker
    assert "torch 2.6.0 first comes with CANN 8.2.RC1, whose recommended HDK is 25.0.RC1" in blocker
    changes = {c.component: c for c in res.changes}
    assert changes["torch"].to == "2.5.1"
    assert changes["driver"].to.startswith(">=25.0.rc1")
    assert changes["driver"].candidates[0].id == "a2-cann8.2.rc1-torch2.6.0-py3.11"
    assert changes["driver"].candidates[0].listed


def test_valid_request_lists_kept_pins_nearest_first(m: matrix.Matrix) -> None:
    res = resolve(m, keep={"driver": "24.1.rc2"}, want={"torch": "2.5.1"}, family="a2")
    assert res.ok
    first = res.candidates[0]
    assert first.id == "a2-cann8.1.rc1-torch2.5.1-py3.10" and first.listed
    assert all(c.driver.accepts("24.1.rc2") for c in res.candidates)
    assert all(c.torch == "2.5.1" for c in res.candidates)


def test_resolution_over_rules_finds_unlisted_combinations(m: matrix.Matrix) -> None:
    res = resolve(m, want={"cann": "8.3.RC1", "torch": "2.7.1", "python": "3.11"})
    ids = [c.id for c in res.candidates]
    assert ids[0] == "a2-cann8.3.rc1-torch2.7.1-py3.11"
    assert "a3-cann8.3.rc1-torch2.7.1-py3.11" in ids  # from the rules (validated HDK 25.3.0 on A3)
    assert not next(c for c in res.candidates if c.family == "a3").listed


def test_rules_candidates_respect_published_wheels(m: matrix.Matrix) -> None:
    cands = candidates(m, family="a2")
    # torch_npu 2.7.1 (CANN 8.3.RC1) has no cp312 wheel: no such candidate
    assert not any(c.torch_npu == "2.7.1" and c.python == "3.12" for c in cands)
    assert any(c.torch_npu == "2.7.1.post2" and c.python == "3.12" for c in cands)


def test_cann_and_torch_conflict(m: matrix.Matrix) -> None:
    res = resolve(m, keep={"cann": "8.0.0"}, want={"torch": "2.6.0"}, family="a2")
    assert not res.ok
    assert any("CANN 8.0.0 carries torch_npu only for torch 2.1.0, 2.3.1" in b for b in res.blockers)


def test_python_blocker(m: matrix.Matrix) -> None:
    res = resolve(m, want={"torch": "2.2.0", "python": "3.12"}, family="a2")
    assert not res.ok
    assert any("python 3.12" in b or "Python" in b for b in res.blockers)


def test_unknown_component_key(m: matrix.Matrix) -> None:
    with pytest.raises(InputError) as info:
        resolve(m, want={"toch": "2.6.0"})
    assert info.value.hint and "torch" in info.value.hint


def test_unknown_value_is_named(m: matrix.Matrix) -> None:
    res = resolve(m, want={"torch": "3.0.0"})
    assert not res.ok and "no valid combination has torch 3.0.0" in res.blockers[0]
