"""Seeded inputs, goldens and tolerance rules of `cannenv certify kernels` (pure numpy)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.certify import kernel_compare as kc
from cannenv.certify.kernel_data import TensorSpec, ToleranceRule, shipped_manifests, shipped_tolerances

RULES = shipped_tolerances()
FP16 = RULES.rule("fp16-double-thousandth")


def _manifest(name: str):  # type: ignore[no-untyped-def]
    return next(m for m in shipped_manifests() if m.name == name)


def _spec(n: int, dtype: str = "float16") -> TensorSpec:
    return TensorSpec(name="z", shape=(n,), dtype=dtype)  # type: ignore[arg-type]


def test_tolerance_table_matches_the_documented_rules() -> None:
    assert RULES.rule("exact").kind == "exact"
    assert (FP16.atol, FP16.rtol, FP16.error_ratio) == (1e-3, 1e-3, 1e-3)
    bf16 = RULES.rule("bf16-double-four-thousandths")
    assert (bf16.atol, bf16.rtol, bf16.error_ratio) == (4e-3, 4e-3, 4e-3)
    fp32 = RULES.rule("fp32-double-ten-thousandth")
    assert (fp32.atol, fp32.rtol, fp32.error_ratio) == (1e-4, 1e-4, 1e-4)


def test_inputs_are_seeded_and_stable() -> None:
    m = _manifest("vector_add")
    case = m.cases[0]
    first = kc.make_inputs(m, case)
    again = kc.make_inputs(m, case)
    for name in first:
        assert first[name].dtype == np.float16
        assert np.array_equal(first[name].view(np.uint16), again[name].view(np.uint16))
        assert first[name].min() >= -100 and first[name].max() <= 100
    assert not np.array_equal(first["x"], first["y"])  # each input has its own seed
    other = kc.make_inputs(m, m.cases[1])
    assert other["x"].dtype == np.float32
    assert not np.allclose(other["x"].astype(np.float64), first["x"].astype(np.float64))


def test_add_golden_is_the_correctly_rounded_sum() -> None:
    m = _manifest("vector_add")
    case = m.cases[0]
    inputs = kc.make_inputs(m, case)
    gold = kc.golden(case, inputs)["z"]
    exact = (inputs["x"].astype(np.float64) + inputs["y"].astype(np.float64)).astype(np.float16)
    assert np.array_equal(gold.view(np.uint16), exact.view(np.uint16))


def test_matmul_and_softmax_goldens() -> None:
    mm = _manifest("matmul")
    inputs = kc.make_inputs(mm, mm.cases[0])
    c = kc.golden(mm.cases[0], inputs)["c"]
    assert c.dtype == np.float32 and c.shape == (128, 96)
    assert np.allclose(c, inputs["a"].astype(np.float32) @ inputs["b"].astype(np.float32), atol=1e-4)
    sm = _manifest("row_softmax")
    y = kc.golden(sm.cases[0], kc.make_inputs(sm, sm.cases[0]))["y"]
    assert y.dtype == np.float16
    assert np.allclose(y.astype(np.float64).sum(axis=1), 1.0, atol=5e-3)


def test_work_of_counts_bytes_and_flops() -> None:
    mm = _manifest("matmul").cases[0]
    nbytes, flops = kc.work_of(mm)
    assert nbytes == 128 * 64 * 2 + 64 * 96 * 2 + 128 * 96 * 4
    assert flops == 2 * 128 * 96 * 64


def test_exact_rule_catches_one_ulp() -> None:
    g = np.linspace(-10, 10, 1000).astype(np.float16)
    ok = kc.compare(g.copy(), g, _spec(1000), "exact", RULES.rule("exact"))
    assert ok.passed and ok.max_abs_err == 0 and ok.cosine == pytest.approx(1.0)
    bad = g.copy()
    bad.view(np.uint16)[137] += 1
    res = kc.compare(bad, g, _spec(1000), "exact", RULES.rule("exact"))
    assert not res.passed
    assert res.first_mismatch == 137
    assert "1 of 1000" in res.detail


def test_double_thousandth_fails_only_when_both_counts_exceed() -> None:
    n = 10_000  # limit = 10 elements
    g = np.full(n, 100.0, dtype=np.float32)
    spec = _spec(n, "float32")
    # 20 elements off by 2e-3 absolute: atol failures 20 > 10, but relative error 2e-5 is fine.
    only_atol = g.copy()
    only_atol[:20] += 2e-3
    r = kc.compare(only_atol, g, spec, "fp16-double-thousandth", FP16)
    assert r.atol_failures == 20 and r.rtol_failures == 0 and r.passed
    # Small values: relative failures only.
    small = np.full(n, 1e-4, dtype=np.float32)
    only_rtol = small.copy()
    only_rtol[:20] *= 1.5
    r = kc.compare(only_rtol, small, spec, "fp16-double-thousandth", FP16)
    assert r.rtol_failures == 20 and r.atol_failures == 0 and r.passed
    # Both counts above the limit: fail.
    both = g.copy()
    both[:11] *= 1.01
    r = kc.compare(both, g, spec, "fp16-double-thousandth", FP16)
    assert r.atol_failures == 11 and r.rtol_failures == 11 and not r.passed
    # Exactly at the limit is not "exceeding".
    at_limit = g.copy()
    at_limit[:10] *= 1.01
    assert kc.compare(at_limit, g, spec, "fp16-double-thousandth", FP16).passed


def test_sentinel_left_behind_fails_and_is_named() -> None:
    g = np.ones(64, dtype=np.float16)
    out = g.copy()
    out.view(np.uint8)[-16:] = kc.SENTINEL_BYTE  # the last 8 halves never written
    r = kc.compare(out, g, _spec(64), "fp16-double-thousandth", FP16)
    assert not r.passed
    assert r.sentinel == 8 and r.nonfinite == 8
    assert "sentinel" in r.detail


def test_bfloat16_is_widened_before_comparison() -> None:
    values = np.array([1.0, -2.5, 3.140625], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype(np.uint16)
    assert np.array_equal(kc.to_float64(bf16, "bfloat16"), values.astype(np.float64))
    rule = RULES.rule("bf16-double-four-thousandths")
    spec = _spec(3, "bfloat16")
    assert kc.compare(bf16, bf16.copy(), spec, "bf16-double-four-thousandths", rule).passed


def test_read_tensor_checks_the_size(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cannenv.errors import InputError

    spec = _spec(8)
    kc.write_tensor(tmp_path / "z.bin", np.zeros(4, dtype=np.float16))
    with pytest.raises(InputError, match="8 bytes, expected 16"):
        kc.read_tensor(tmp_path / "z.bin", spec)
    with pytest.raises(InputError, match="was not written"):
        kc.read_tensor(tmp_path / "missing.bin", spec)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-1e4, 1e4, allow_nan=False, width=32), min_size=1, max_size=200),
    st.sampled_from(sorted(RULES.rules)),
)
def test_an_output_equal_to_its_golden_always_passes(values: list[float], rule_name: str) -> None:
    arr = np.array(values, dtype=np.float32)
    rule: ToleranceRule = RULES.rule(rule_name)
    r = kc.compare(arr.copy(), arr, _spec(len(values), "float32"), rule_name, rule)
    assert r.passed and r.max_abs_err == 0.0 and r.error_ratio == 0.0
