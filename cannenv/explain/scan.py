"""Reading logs as hostile input: streaming, bounded memory, compiled patterns, redacted lines.

A log is read in chunks of :data:`CHUNK` bytes; only whole lines are examined (a line longer
than a chunk is cut into pieces of at most :data:`MAX_LINE` bytes around what it matches).
Every signature pattern has an *anchor*, a literal each of its matches contains, so a line is
tested against a regex only when the anchor has already been found in it.

All anchors are found in ONE pass over a region, whatever their number: an Aho-Corasick automaton
over the table's distinct anchors (``ahocorasick_rs.BytesAhoCorasick``, the Python binding of the
``aho-corasick`` Rust crate that ripgrep uses), built once per table and kept for the process
(:func:`anchors`). Why this library: it searches ``bytes`` (and zero-copy ``memoryview`` slices)
directly, as the scanner reads them; it reports every place of every anchor, overlapping ones and
an anchor inside another included; it is typed (``py.typed``), has wheels for x86_64 and aarch64
(Kunpeng hosts), builds 5,000 anchors in 10-20 ms (the shipped table's in under 1 ms), and
searched 8 MB about three times faster than ``pyahocorasick`` in our measurement.
``pyahocorasick``'s PyPI wheels search ``str`` only (each region would be decoded and copied as
UCS-4, four bytes per byte, before the search) and its pickled automaton loads slower than this
one builds; google-re2's ``Set`` tells which patterns occur in a text but not where, and the
scanner needs each place (the line around it).

The places are then taken anchor by anchor, in the table's order, exactly as a ``bytes.find``
pass per anchor took them: the same lines, evidence, values and repetition bookkeeping (an
extractor with many anchors, the E-codes', keeps its values in the order found and the same first
:data:`MAX_VALUES`); tests/unit/test_explain_engine.py compares the two on random texts. The
automaton's matches are asked for :data:`BLOCK` bytes at a time, so the list it returns stays
short; the places an anchor takes (one per line, 16 bytes each) are kept until the region's pass
ends: memory bounded by the region (a chunk), as the region itself is.

Inputs up to :data:`FULL_SCAN_BYTES` are examined line by line throughout. Past that, lines are
examined around the places that look like errors (:data:`SENTINELS`: ``error``, ``fail``,
``exception`` in any case, each a C-speed ``bytes.find`` over the lower-cased chunk),
:data:`CONTEXT` bytes either side, and a line already examined is never examined again: a 100 MB
log of INFO lines costs a few passes of ``find``, and megabytes of one repeated error one look.

Evidence lines are normalised (ANSI escapes removed, ``\\n`` escapes and CR made line breaks,
undecodable bytes replaced) and redacted (:func:`cannenv.redact.redact_text`) before they are
kept; renderers sanitise them again for their output.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import TYPE_CHECKING

from cannenv.explain.signatures import ANCHOR_PREFIX, Pattern, SignatureTable, anchor_groups

if TYPE_CHECKING:
    from ahocorasick_rs import BytesAhoCorasick

CHUNK = 8 << 20
"""Bytes read at a time."""
FULL_SCAN_BYTES = 4 << 20
"""Inputs up to this size are examined everywhere; larger ones around error-looking lines."""
MAX_LINE = 4096
"""The longest stretch of one line examined around an anchor (a 100 MB line is not copied)."""
CONTEXT = 2048
"""Bytes examined either side of an error-looking place in a large input."""
SENTINELS: tuple[bytes, ...] = (b"error", b"fail", b"exception", b"killed", b"core dump")
"""What an error looks like to the large-input prefilter, searched in the lower-cased chunk (error,
Error, ERROR, fail, Failed, FAIL, Exception …); vendor codes (EI0005 …) sit on or next to such
lines in torch_npu, vLLM and plog output. And how a process dies (docs/explain.md, "How processes
die"): ``Killed`` (the shell's report, the kernel's OOM killer, OOMKilled, ``killed by signal``)
and ``(core dumped)``, each one more C-speed pass over the chunk (about +0.05 s per 100 MB). Python's
and PyTorch's reports of a dead child sit on or next to an error or exception line already
(``CalledProcessError``, ``ChildFailedError``, ``ProcessExitedException``)."""
MAX_EVIDENCE = 3
"""Evidence lines kept per pattern (the count of matches is kept too)."""
MAX_SEEN_LINES = 200_000
"""Distinct lines remembered to skip repetitions, each by a 16-byte digest (bounded memory: a few
MB however long the lines are)."""
MAX_SHOWN = 300
"""Characters of an evidence line kept (centred on the match)."""
MAX_VALUES = 32
"""Distinct values an extractor keeps (a missing library, a symbol, a version …)."""
MAX_ERROR_LINES = 5
"""Error-looking lines kept for the answer when nothing matched."""
BLOCK = 1 << 18
"""Bytes of a region the anchor automaton searches at a time (its list of matches stays short)."""

_ANSI = r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
"""ANSI escapes (colours, cursor moves, OSC titles)."""


@cache
def _ansi() -> re.Pattern[str]:
    """:data:`_ANSI` compiled by the first line that has an escape, not at import: most logs have none."""
    return re.compile(_ANSI)


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def normalise(raw: bytes) -> list[str]:
    """The lines of ``raw`` as text: UTF-8 (bad bytes replaced), ANSI escapes removed, CR and
    literal ``\\n`` escapes (a traceback inside JSON) made line breaks."""
    text = raw.decode("utf-8", "replace")
    if "\x1b" in text:
        text = _ansi().sub("", text)
    if "\\n" in text:
        text = text.replace("\\r\\n", "\n").replace("\\n", "\n")
    return text.replace("\r", "\n").split("\n")


def redact(line: str) -> str:
    """A line with every credential removed: the one redaction policy's free-text form
    (:func:`cannenv.redact.redact_text`: URLs, secret-named keys in shell, JSON, dict-repr, header
    and flag spellings, auth schemes, tokens recognisable by shape)."""
    from cannenv.redact import redact_text

    return redact_text(line)


def _shown(line: str, anchor: str) -> str:
    line = line.strip()
    if len(line) <= MAX_SHOWN:
        return line
    at = max(line.find(anchor), 0)
    start = max(0, min(at - MAX_SHOWN // 3, len(line) - MAX_SHOWN))
    return (
        ("…" if start else "")
        + line[start : start + MAX_SHOWN]
        + ("…" if start + MAX_SHOWN < len(line) else "")
    )


SMALL_INPUT = 16 << 10
"""An input of at most this many bytes (a pasted excerpt) is searched with one ``bytes.find`` per
anchor: cheaper than building the table's automaton (~5 ms for 1,200 anchors), the same result."""


class Anchors:
    """A table's distinct anchors (UTF-8, in the order the table first names them), the patterns of
    each, and one automaton that finds them all in one pass (built on first use: a short excerpt
    never needs it). The grouping comes with a cached table (:func:`cannenv.explain.signatures.
    anchor_groups`); an anchor's patterns are looked up when an input holds it."""

    def __init__(self, patterns: Sequence[Pattern]) -> None:
        self._table = patterns
        groups = anchor_groups(patterns)
        self.anchors: tuple[bytes, ...] = groups[0]
        self._starts, self._members, self._prefixes, self._pstarts, self._pmembers = groups[1:]
        self.longest = max(map(len, self.anchors), default=0)
        self._of: dict[int, list[Pattern]] = {}

    def of(self, i: int) -> list[Pattern]:
        """The patterns of anchor ``i``, in the table's order."""
        got = self._of.get(i)
        if got is None:
            at = self._members[self._starts[i] : self._starts[i + 1]]
            got = self._of[i] = [self._table[j] for j in at]
        return got

    @property
    def patterns(self) -> tuple[list[Pattern], ...]:
        """The patterns of each anchor (every one looked up)."""
        return tuple(self.of(i) for i in range(len(self.anchors)))

    def candidates(self, region: bytes) -> list[int]:
        """The anchors ``region`` may hold, in order: those whose first :data:`~cannenv.explain.
        signatures.ANCHOR_PREFIX` bytes occur in it, and those shorter than that. Every anchor it
        holds is among them (its beginning is in the region), so a short input's finds are the same
        as one per anchor; a 1 KB excerpt holds the beginnings of a few dozen of the thousands."""
        k = ANCHOR_PREFIX
        prefixes, pstarts, pmembers = self._prefixes, self._pstarts, self._pmembers
        found: set[int] = set()
        for gram in {b"", *(region[i : i + k] for i in range(len(region) - k + 1))}:
            at = prefixes.get(gram)
            if at is not None:
                found.update(pmembers[pstarts[at] : pstarts[at + 1]])
        return sorted(found)

    @cached_property
    def automaton(self) -> BytesAhoCorasick | None:
        from ahocorasick_rs import BytesAhoCorasick  # a short excerpt never imports it

        return BytesAhoCorasick(self.anchors) if self.anchors else None


_ANCHORS: dict[int, tuple[Sequence[Pattern], Anchors]] = {}
_KEPT_TABLES = 8


def anchors(table: SignatureTable) -> Anchors:
    """The anchors of ``table``, built on first use and kept for the process (a few tables at most:
    the shipped one, and those a test or a benchmark loads)."""
    kept = _ANCHORS.get(id(table.patterns))
    if kept is not None and kept[0] is table.patterns:
        return kept[1]
    built = Anchors(table.patterns)
    while len(_ANCHORS) >= _KEPT_TABLES:
        del _ANCHORS[next(iter(_ANCHORS))]
    _ANCHORS[id(table.patterns)] = (table.patterns, built)
    return built


@dataclass
class Hit:
    count: int = 0
    lines: list[str] = field(default_factory=list)


@dataclass
class Value:
    """A value an extractor pulled out of the log (its regex groups joined by ``|``)."""

    count: int = 0
    line: str = ""


@dataclass
class ScanResult:
    """What a scan found: per pattern key, the distinct lines it matched and the first few."""

    hits: dict[str, Hit]
    bytes_read: int
    sources: tuple[str, ...]
    error_lines: tuple[str, ...]
    """The first error-looking lines (for the answer when no signature matched)."""
    mode: str
    """``full`` (every line examined) or ``around-errors`` (the large-input prefilter)."""
    skipped: tuple[str, ...] = ()
    """Inputs not read, with the reason (a link out of the folder, a FIFO …)."""
    values: dict[str, dict[str, Value]] = field(default_factory=dict)
    """Per extractor id, the values it found (at most :data:`MAX_VALUES`), in order found; an
    extractor that keeps its last values (``keep: last``) holds the latest, in the order last seen."""


class Scanner:
    """Feed it bytes (whole or in chunks, one input after another); ``result()`` at the end."""

    block: int = BLOCK
    """Bytes the anchor automaton searches at a time (:data:`BLOCK`)."""

    def __init__(
        self, table: SignatureTable, *, total_hint: int | None = None, small_input: int = SMALL_INPUT
    ) -> None:
        self._anchors = anchors(table)
        self._small = total_hint is not None and total_hint <= small_input
        self.hits: dict[str, Hit] = {}
        self.values: dict[str, dict[str, Value]] = {}
        self.bytes_read = 0
        self._seen: set[bytes] = set()
        self._full = total_hint is not None and total_hint <= FULL_SCAN_BYTES
        self._error_lines: list[str] = []
        self._carry = b""
        self.sources: list[str] = []
        self.skipped: list[str] = []
        self._unshown: dict[str, str] = {}
        """Extractors (``keep: last``) whose values still hold their raw line, and their anchor."""

    # --- feeding ------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        """More bytes of the current input; only whole lines are examined until :meth:`end_input`."""
        self.bytes_read += len(data)
        buf = self._carry + data if self._carry else data
        cut = buf.rfind(b"\n")
        if cut < 0:
            if len(buf) <= CHUNK:
                self._carry = buf
                return
            cut = len(buf) - 1  # a line longer than a chunk: examine it in pieces
        self._carry = buf[cut + 1 :]
        self._region(buf[: cut + 1])

    def end_input(self) -> None:
        if self._carry:
            carry, self._carry = self._carry, b""
            self._region(carry)

    def feed_all(self, chunks: Iterable[bytes]) -> None:
        for c in chunks:
            self.feed(c)
        self.end_input()

    # --- examining ----------------------------------------------------------------------------
    def _region(self, region: bytes) -> None:
        if self._full or len(region) <= FULL_SCAN_BYTES:
            if len(self._error_lines) < MAX_ERROR_LINES:
                self._note_error_lines(region)
            self._examine(region)
            return
        for start, end in self._windows(region):
            window = region[start:end]
            if len(self._error_lines) < MAX_ERROR_LINES:
                self._note_error_lines(window)
            self._examine_new_lines(window)

    def _windows(self, region: bytes) -> Iterator[tuple[int, int]]:
        """Byte ranges of whole lines around error-looking places (:data:`CONTEXT` bytes either
        side, widened to line boundaries within another :data:`CONTEXT`), merged, in order."""
        spans: list[tuple[int, int]] = []
        n = len(region)
        lowered = region.lower()  # ASCII only: the same length and offsets
        for s in SENTINELS:
            pos = lowered.find(s)
            while pos >= 0:
                a = max(0, pos - CONTEXT)
                nl = region.rfind(b"\n", max(0, a - CONTEXT), a)
                lo = nl + 1 if nl >= 0 else a
                b = min(n, pos + CONTEXT)
                nl = region.find(b"\n", b, min(n, b + CONTEXT))
                hi = nl + 1 if nl >= 0 else b
                spans.append((lo, hi))
                pos = lowered.find(s, hi)
        spans.sort()
        cur: tuple[int, int] | None = None
        for lo, hi in spans:
            if cur is not None and lo <= cur[1]:
                cur = (cur[0], max(cur[1], hi))
                continue
            if cur is not None:
                yield cur
            cur = (lo, hi)
        if cur is not None:
            yield cur

    def _examine_new_lines(self, window: bytes) -> None:
        """Examine the lines of ``window`` not seen before (repetition costs one look)."""
        seen = self._seen
        fresh: list[bytes] = []
        for ln in window.split(b"\n"):
            d = _digest(ln)
            if d in seen:
                continue
            fresh.append(ln)
            if len(seen) < MAX_SEEN_LINES:
                seen.add(d)
        if not fresh:
            return
        self._examine(b"\n".join(fresh))

    def _examine(self, region: bytes) -> None:
        """Every line of ``region`` holding an anchor, looked at once per anchor: one automaton pass
        finds every place of every anchor; then, anchor by anchor in the table's order, its places
        from the first on, skipping those on a line (or a :data:`MAX_LINE` stretch) already taken."""
        ac = self._anchors
        n = len(region)
        after: dict[int, int] = {}  # per anchor, where its next place may start
        taken: dict[int, array[int]] = {}  # per anchor, the (lo, hi) of each line it takes
        if self._small:
            # a short input (an excerpt): one C-speed find per anchor costs less than building the
            # automaton; the same places, taken by the same rule, in the same order
            for i in ac.candidates(region):
                anchor = ac.anchors[i]
                pos = region.find(anchor)
                while pos >= 0:
                    lo = region.rfind(b"\n", max(0, pos - MAX_LINE), pos) + 1 or max(0, pos - MAX_LINE)
                    nl = region.find(b"\n", pos, min(n, pos + MAX_LINE))
                    hi = nl if nl >= 0 else min(n, pos + MAX_LINE)
                    spans = taken.get(i)
                    if spans is None:
                        spans = taken[i] = array("q")
                    spans.append(lo)
                    spans.append(hi)
                    pos = region.find(anchor, max(hi, pos + 1))
            for i in sorted(taken):
                anchor, patterns, spans = ac.anchors[i], ac.of(i), taken[i]
                for k in range(0, len(spans), 2):
                    self._line(region[spans[k] : spans[k + 1]], anchor, patterns)
            return
        if ac.automaton is None:
            return
        view = memoryview(region)
        overlap = ac.longest - 1
        for start in range(0, n, self.block):
            base = max(0, start - overlap)
            for i, pos, end in ac.automaton.find_matches_as_indexes(
                view[base : start + self.block], overlapping=True
            ):
                if end + base <= start:  # wholly in the previous block: found there
                    continue
                pos += base
                if pos < after.get(i, 0):
                    continue
                lo = region.rfind(b"\n", max(0, pos - MAX_LINE), pos) + 1 or max(0, pos - MAX_LINE)
                nl = region.find(b"\n", pos, min(n, pos + MAX_LINE))
                hi = nl if nl >= 0 else min(n, pos + MAX_LINE)
                after[i] = max(hi, pos + 1)
                spans = taken.get(i)
                if spans is None:
                    spans = taken[i] = array("q")
                spans.append(lo)
                spans.append(hi)
        for i in sorted(taken):
            anchor, patterns, spans = ac.anchors[i], ac.of(i), taken[i]
            for k in range(0, len(spans), 2):
                self._line(region[spans[k] : spans[k + 1]], anchor, patterns)

    def _line(self, raw: bytes, anchor: bytes, patterns: list[Pattern]) -> None:
        key = _digest(b"%b\x00%b" % (anchor, raw))
        if key in self._seen:  # a repeated line: looked at once
            return
        if len(self._seen) < MAX_SEEN_LINES:
            self._seen.add(key)
        for text in normalise(raw):
            taken: dict[str, list[str]] = {}  # an extractor's regex run once per line (two may share one)
            for p in patterns:
                if p.anchor not in text:
                    continue
                if p.capture is not None:
                    self._capture(p, text, taken)
                    continue
                if p.regex is not None and p.regex.search(text) is None:
                    continue
                hit = self.hits.setdefault(p.key, Hit())
                hit.count += 1
                if len(hit.lines) < MAX_EVIDENCE:
                    shown = _shown(redact(text), p.anchor)
                    if shown not in hit.lines:
                        hit.lines.append(shown)

    def _capture(self, p: Pattern, text: str, taken: dict[str, list[str]] | None = None) -> None:
        assert p.regex is not None and p.capture is not None and p.rx is not None
        found = self.values.setdefault(p.capture, {})
        values = taken.get(p.rx) if taken is not None else None
        if values is None:
            values = [
                "|".join(m.group(i) or "" for i in range(1, p.groups + 1)) for m in p.regex.finditer(text)
            ]
            if taken is not None:
                taken[p.rx] = values
        for value in values:
            v = found.get(value)
            if v is None:
                if len(found) >= MAX_VALUES:
                    if not p.keep_last:
                        return
                    del found[next(iter(found))]  # the last MAX_VALUES: the oldest goes
                if p.keep_last:  # most are dropped again: shown and redacted when the scan ends
                    v = found[value] = Value(line=text)
                    self._unshown[p.capture] = p.anchor
                else:
                    v = found[value] = Value(line=_shown(redact(text), p.anchor))
            elif p.keep_last:  # seen again: now the latest (dict order is the order last seen)
                del found[value]
                found[value] = v
            v.count += 1

    def _note_error_lines(self, region: bytes) -> None:
        pos = region.find(b"rror")
        if pos < 0:
            pos = region.find(b"RROR")
        if pos < 0:
            return
        lo = region.rfind(b"\n", max(0, pos - MAX_LINE), pos) + 1
        nl = region.find(b"\n", pos, pos + MAX_LINE)
        raw = region[lo : nl if nl >= 0 else pos + MAX_LINE]
        for text in normalise(raw):
            t = text.strip()
            if t and "rror" in t.lower() and len(self._error_lines) < MAX_ERROR_LINES:
                shown = _shown(redact(t), "rror")
                if shown not in self._error_lines:
                    self._error_lines.append(shown)

    def result(self, mode: str | None = None) -> ScanResult:
        for capture, anchor in self._unshown.items():  # the values kept: redacted now, once
            for v in self.values.get(capture, {}).values():
                v.line = _shown(redact(v.line), anchor)
        self._unshown.clear()
        return ScanResult(
            hits=self.hits,
            bytes_read=self.bytes_read,
            sources=tuple(self.sources),
            error_lines=tuple(self._error_lines),
            mode=mode or ("full" if self._full else "around-errors"),
            skipped=tuple(self.skipped),
            values=self.values,
        )
