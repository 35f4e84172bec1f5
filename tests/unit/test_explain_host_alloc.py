"""`cannenv explain`: an allocation the host refused (C++ ``std::bad_alloc``, Python ``MemoryError``,
strerror(ENOMEM) ``Cannot allocate memory``), read by the runtimes' documented forms
(signatures.yaml ``host-allocation-failed``): memory exhausted first, a size no machine has second;
a vendor's FAQ row for the same words ranks above it (it knows the case)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.explaining import explain, known

ERRORS = Path(__file__).resolve().parents[1] / "data" / "errors"


@pytest.mark.parametrize(
    "line",
    [
        # the AMCT calibration log of the vendor's case library (tests/data/errors, hc-amct-ifmr-bad-alloc)
        (ERRORS / "hc-amct-ifmr-bad-alloc.txt").read_text(encoding="utf-8"),
        "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
        "MemoryError\n",
        "RuntimeError: DataLoader worker (pid 4312) is killed: MemoryError\n",
        "bash: fork: Cannot allocate memory\n",
        "mmap failed: Cannot allocate memory\n",
    ],
)
def test_a_refused_host_allocation_is_memory_first_then_the_programs_size(line: str) -> None:
    ex = explain(line)
    sigs = [m.id for m in known(ex)]
    assert "host-allocation-failed" in sigs, sigs
    ids = [c.id for c in ex.causes if c.signature == "host-allocation-failed"]
    assert ids[:2] == ["oom", "not-a-version-problem"], ids
    top = ex.causes[0]
    assert top.status == "undecided"  # nothing of a host ties it


def test_the_vendors_faq_row_for_the_same_words_ranks_above_the_generic_reading() -> None:
    # MindSpore's FAQ: "MemoryError: std::bad_alloc" from an operator's parameters (num_sampled=int64.max)
    text = (ERRORS / "msfaq-impl-bad-alloc-uniformcandidatesampler.txt").read_text(encoding="utf-8")
    ex = explain(text)
    assert ex.causes[0].id == "not-a-version-problem"
    assert "host-allocation-failed" in [m.id for m in known(ex)]


@pytest.mark.parametrize(
    "line",
    [
        "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB\n",
        "AttributeError: 'MemoryErrorHandler' object has no attribute 'x'\n",
        "ValueError: bad_allocation_policy is not a valid policy\n",
    ],
)
def test_other_memory_words_are_not_a_refused_host_allocation(line: str) -> None:
    assert "host-allocation-failed" not in [m.id for m in known(explain(line))]
