"""The scanner's former engine, kept as a reference: one ``bytes.find`` pass per anchor.

``PerAnchorScanner`` is :class:`cannenv.explain.scan.Scanner` with ``_examine`` as it was before
the one-pass automaton: for each anchor in the table's order, each place from the first on, the
line around it (at most ``MAX_LINE`` bytes either side), the next place searched from that line's
end. tests/unit/test_explain_engine.py compares the two; benchmarks/bench_explain.py times both.
Not product code: its cost grows with the number of anchors.
"""

from __future__ import annotations

from cannenv.explain.scan import MAX_LINE, Scanner


class PerAnchorScanner(Scanner):
    def _examine(self, region: bytes) -> None:
        n = len(region)
        for anchor, patterns in zip(self._anchors.anchors, self._anchors.patterns, strict=True):
            pos = region.find(anchor)
            while pos >= 0:
                lo = region.rfind(b"\n", max(0, pos - MAX_LINE), pos) + 1 or max(0, pos - MAX_LINE)
                nl = region.find(b"\n", pos, min(n, pos + MAX_LINE))
                hi = nl if nl >= 0 else min(n, pos + MAX_LINE)
                self._line(region[lo:hi], anchor, patterns)
                pos = region.find(anchor, max(hi, pos + 1))
