"""The scanner's one-pass anchor engine finds exactly what one ``bytes.find`` pass per anchor found.

The reference (tests/helpers/scan_reference.py) is the former engine. Both scan the same bytes with
the shipped table (real anchors: an anchor inside another, a capture shared by 27 anchors whose
values keep the order found); every pattern's hits, evidence lines and values must be equal, in the
same order, and so must the error lines and the repetition bookkeeping. Texts: the working set's
real excerpts, and random texts made of the table's anchors, lines of those excerpts and noise
(long lines past ``MAX_LINE``, repeated lines, ANSI escapes, escaped newlines, CR, bad UTF-8),
fed whole or in pieces, searched in blocks of many sizes (a match across a block's edge).
No timings here: benchmarks/bench_explain.py measures both engines.
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.explain import signatures
from cannenv.explain.scan import MAX_LINE, Scanner, ScanResult, anchors
from tests.helpers.scan_reference import PerAnchorScanner

DATA = Path(__file__).resolve().parents[1] / "data" / "errors"
TABLE = signatures.shipped()
CACHED = pickle.loads(pickle.dumps(TABLE, pickle.HIGHEST_PROTOCOL))
"""The table as the validated-table cache gives it back: its patterns one blob each, the anchors'
groups read back with it (signatures.anchor_groups), not computed."""
EXCERPTS = sorted(DATA.glob("*.txt"))  # the working set's folder only (held-out sets are apart)
ANCHORS = sorted({p.anchor for p in TABLE.patterns})
LINES = sorted(
    {
        ln
        for f in EXCERPTS
        for ln in f.read_text(encoding="utf-8", errors="replace").splitlines()
        if ln.strip()
    }
)
NOISE = [
    "\n",
    "\n",
    " ",
    ": ",
    "0",
    "7",
    "-1",
    "561103",
    "00",
    "'",
    "x" * 1500,  # several make a line longer than MAX_LINE
    "\x1b[31m",
    "\\n",
    "\r",
    "\xff",  # encoded below as bad UTF-8
]


def _scan(
    cls: type[Scanner],
    data: bytes,
    cuts: tuple[int, ...],
    block: int,
    total_hint: int | None,
    table: signatures.SignatureTable = TABLE,
    **how: int,
) -> Scanner:
    s = cls(table, total_hint=total_hint, **how)
    s.block = block
    at = 0
    for cut in sorted(cuts):
        s.feed(data[at:cut])
        at = cut
    s.feed(data[at:])
    s.end_input()
    return s


def _same(data: bytes, cuts: tuple[int, ...] = (), block: int = Scanner.block) -> ScanResult:
    old = _scan(PerAnchorScanner, data, cuts, Scanner.block, len(data))
    a = old.result()
    # both ways of finding the anchors: the automaton, and a find per anchor whose beginning the
    # input holds (a short input's), with the table as validated and as the cache gives it back
    for small_input, table in ((-1, TABLE), (len(data), TABLE), (len(data), CACHED)):
        new = _scan(Scanner, data, cuts, block, len(data), table, small_input=small_input)
        b = new.result()
        assert list(b.hits.items()) == list(a.hits.items())
        assert [(k, list(v.items())) for k, v in b.values.items()] == [
            (k, list(v.items())) for k, v in a.values.items()
        ]
        assert b.error_lines == a.error_lines and b.bytes_read == a.bytes_read
        assert new._seen == old._seen  # the same lines looked at, once each
    return b


def test_the_table_has_the_hard_cases() -> None:
    """What the random texts rely on: an anchor inside another, and one capture over many anchors."""
    assert any(a != b and a in b for a in ANCHORS for b in ANCHORS)
    captures = [p.capture for p in TABLE.patterns if p.capture]
    assert max(captures.count(c) for c in captures) > 1
    built = anchors(TABLE)
    assert anchors(TABLE) is built  # built once per table
    assert len(built.anchors) == len(ANCHORS) and built.longest == max(len(a.encode()) for a in ANCHORS)


def test_the_cached_table_keeps_its_anchor_groups() -> None:
    """The cache holds the anchors' groups beside the patterns: the scanner of a table read back
    finds the same anchors, patterns and prefixes without looking at every pattern."""
    assert CACHED == TABLE and CACHED.patterns == TABLE.patterns
    assert signatures.anchor_groups(CACHED.patterns) == signatures.anchor_groups(tuple(TABLE.patterns))
    fresh = pickle.loads(pickle.dumps(TABLE, pickle.HIGHEST_PROTOCOL))
    built = anchors(fresh)
    assert not fresh.patterns.loaded  # type: ignore[attr-defined]  # grouped without a pattern read
    assert built.patterns == anchors(TABLE).patterns and fresh.patterns.loaded  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(ANCHORS), st.sampled_from(NOISE)), max_size=40))
def test_a_short_input_s_candidates_hold_every_anchor_it_has(parts: list[str]) -> None:
    region = "".join(parts).encode("utf-8", "surrogateescape")
    ac = anchors(TABLE)
    held = {i for i, a in enumerate(ac.anchors) if a in region}
    assert held <= set(ac.candidates(region))


def test_every_working_set_excerpt_scans_the_same() -> None:
    assert len(EXCERPTS) > 100
    for f in EXCERPTS:
        r = _same(f.read_bytes())
        assert r.bytes_read == f.stat().st_size


def test_all_excerpts_as_one_log_in_small_blocks_and_pieces() -> None:
    data = b"\n".join(f.read_bytes() for f in EXCERPTS)
    rng = random.Random(29)
    cuts = [rng.randrange(len(data)) for _ in range(40)]
    r = _same(data, tuple(cuts), block=4093)
    assert len(r.hits) > 100 and r.values["error-code"]


def test_a_long_line_with_anchors_in_every_stretch() -> None:
    """A line past MAX_LINE is looked at a stretch around each place, and a place inside the stretch
    just taken is skipped: the same stretches as before, in the same order."""
    pieces = [
        "EI0005 error code is 561103",
        "y" * (MAX_LINE - 7),
        "EE1001 EI0006",
        "z" * (MAX_LINE + 3),
        "error code is 507035 EI0005",
    ]
    line = " ".join(pieces).encode()
    for block in (3, 64, 5000, Scanner.block):
        r = _same(line + b"\n" + line * 3 + b"\nEI0005\n", block=block)
        assert "code:561103" in r.hits


piece = st.one_of(
    st.sampled_from(ANCHORS),
    st.sampled_from(LINES),
    st.sampled_from(NOISE),
)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(piece, max_size=80),
    cuts=st.lists(st.integers(min_value=0, max_value=20_000), max_size=4),
    block=st.sampled_from([5, 17, 64, 1000, Scanner.block]),
)
def test_random_texts_of_anchors_and_noise_scan_the_same(
    parts: list[str], cuts: list[int], block: int
) -> None:
    text = "".join(parts)
    data = text.encode("utf-8", "surrogateescape").replace("\xff".encode(), b"\xff")
    _same(data, tuple(c for c in cuts if c <= len(data)), block=block)
