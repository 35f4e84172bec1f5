"""Matching in time linear in the text, for patterns that come from data and for our own.

Two halves, one guarantee (docs/security.md, "Time and memory"):

* :func:`compile` is the one door for a pattern that *data* supplies (explain's signatures, the SoC
  table's name patterns, anything a user or a shipped file may add). It compiles through RE2 (the
  maintained ``google-re2`` binding), an automaton engine whose matching time is linear in the text
  whatever the pattern: no backtracking, so no pattern can hang a scan. RE2 has no backreferences
  and no look-around, its ``\\d \\w \\s`` are ASCII, and ``$`` without ``(?m)`` is the end of the
  text only (never before a trailing newline). A pattern RE2 refuses is bad input (exit 2).
  Where RE2 cannot be imported (the fleet bundle runs on host Pythons without native modules),
  the pattern must pass :func:`ambiguity` and then runs on Python's ``re``: still linear.
* :func:`ambiguity` is the lint for patterns that stay on Python's backtracking ``re`` (our own
  code; the fleet bundle). It builds the pattern's position automaton (Glushkov) and looks for the
  two shapes that make a backtracking matcher super-linear (Weideman et al., "Analyzing matching
  time behavior of backtracking regular expression matchers by using ambiguity of NFA", 2016):
  a loop that can read the same text two ways (exponential: ``(a+)+``, ``(a|a)*``) and two loops
  that can share the same text (polynomial: ``\\s*x?\\s*``, ``\\S*\\.so[^:]*:``, ``.*a.*b``).
  An unanchored search is modelled as the pattern behind a loop over any text (so a leading
  ``\\s+`` on a long run of spaces is found); under ``re.M`` a ``^`` is entered after a newline.
  ``tests/unit/test_linre.py`` runs it on every literal pattern in the package.

The analysis is conservative: look-around and backreferences are not modelled (a backreference is
refused), bounded repeats above :data:`_UNROLL` are treated as unbounded, and an automaton too
large to decide within the budget is refused rather than passed.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from cannenv.errors import InputError

if TYPE_CHECKING:
    _Ways = dict[int, int]  # position -> number of ways to reach it (1, or 2 for "more than one")

__all__ = ["LinearPattern", "Match", "ambiguity", "compile", "engine"]

if sys.version_info >= (3, 11):  # pragma: no cover - version switch
    from re import _constants as _sre_c
    from re import _parser as _sre_p
else:  # pragma: no cover - the fleet bundle's host Pythons
    import sre_constants as _sre_c
    import sre_parse as _sre_p

MAX_PATTERN = 2000
"""The longest pattern accepted from data (characters)."""


class Match(Protocol):
    """What both engines' match objects offer."""

    def group(self, *args: int | str) -> Any: ...
    def start(self, group: int | str = ...) -> int: ...
    def end(self, group: int | str = ...) -> int: ...
    def span(self, group: int | str = ...) -> tuple[int, int]: ...
    def groupdict(self) -> dict[str, Any]: ...


class LinearPattern:
    """A compiled data pattern; ``search``/``match``/``fullmatch``/``finditer``/``sub`` as in ``re``."""

    __slots__ = ("_rx", "engine", "pattern")

    def __init__(self, pattern: str, rx: Any, engine: str) -> None:
        self.pattern = pattern
        self.engine = engine
        self._rx = rx

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._rx, method)(*args)
        except UnicodeEncodeError:  # a lone surrogate (a file name's undecodable byte): RE2 takes
            # UTF-8 only; each one becomes '?', so offsets into the text stay the same
            *rest, text = args
            clean = text.encode("utf-8", "replace").decode("utf-8")
            return getattr(self._rx, method)(*rest, clean)

    def search(self, text: str) -> Match | None:
        m: Match | None = self._call("search", text)
        return m

    def match(self, text: str) -> Match | None:
        m: Match | None = self._call("match", text)
        return m

    def fullmatch(self, text: str) -> Match | None:
        m: Match | None = self._call("fullmatch", text)
        return m

    def finditer(self, text: str) -> Iterator[Match]:
        it: Iterator[Match] = self._call("finditer", text)
        return it

    def sub(self, repl: str | Callable[[Any], str], text: str) -> str:
        out: str = self._call("sub", repl, text)
        return out

    def __repr__(self) -> str:
        return f"LinearPattern({self.pattern!r}, engine={self.engine!r})"


_re2_module: Any = None
_RE2_TRIED = False


def _re2() -> Any:
    """The RE2 binding, imported on first use (never at import: the fleet bundle discovers its
    modules by importing, and carries no native code); None where it is not installed."""
    global _re2_module, _RE2_TRIED
    if not _RE2_TRIED:
        _RE2_TRIED = True
        try:
            import re2

            _re2_module = re2
        except ImportError:  # the fleet bundle on a host: lint, then Python's re
            _re2_module = None
    return _re2_module


def engine() -> str:
    """``re2`` where the linear engine is installed, else ``re+lint``."""
    return "re2" if _re2() is not None else "re+lint"


def compile(pattern: str, *, ignorecase: bool = False, what: str = "pattern") -> LinearPattern:
    """A data-supplied pattern compiled for linear-time matching; :class:`InputError` (exit 2,
    naming ``what``) for one that is too long, does not compile, or (without RE2) is ambiguous."""
    if not isinstance(pattern, str) or not pattern:
        raise InputError(f"{what}: a pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN:
        raise InputError(f"{what}: pattern longer than {MAX_PATTERN} characters")
    text = f"(?i){pattern}" if ignorecase else pattern
    re2 = _re2()
    if re2 is not None:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = 8 << 20
        try:
            return LinearPattern(pattern, re2.compile(text, options), "re2")
        except re2.error as exc:
            detail = (
                exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            )
            raise InputError(
                f"{what}: {pattern!r} does not compile on the linear-time engine (RE2): {detail}",
                hint="no backreferences or look-around; see https://github.com/google/re2/wiki/Syntax",
            ) from None
    flags = re.IGNORECASE if ignorecase else 0
    try:
        rx = re.compile(pattern, flags)
    except re.error as exc:
        raise InputError(f"{what}: {pattern!r} does not compile: {exc}") from None
    why = ambiguity(pattern, flags=flags)
    if why is not None:
        raise InputError(f"{what}: {pattern!r} could take super-linear time: {why}")
    return LinearPattern(pattern, rx, "re+lint")


# ------------------------------------------------------------------------------ the lint
_UNROLL = 100
"""Bounded repeats up to this many copies are unrolled exactly; larger ones count as unbounded."""
_BUDGET = 400_000
"""Product-automaton states explored before the analysis gives up (and refuses the pattern)."""

_SAMPLE_EXTRA = "\u00a0\u00e9\u00df\u0130\u0131\u017f\u212a\u2003\u2028\u0663\u4e2d\ufffd\U0001f600"
_UNIVERSE: tuple[str, ...] = tuple(chr(i) for i in range(128)) + tuple(_SAMPLE_EXTRA)
"""Characters the analysis reasons with: all of ASCII and one of each kind beyond it."""


class _TooHard(Exception):
    pass


class _Unsupported(Exception):
    pass


def _op(x: object) -> str:
    return str(x)


_CATEGORY_RX = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
    "CATEGORY_LINEBREAK": r"\n",
    "CATEGORY_NOT_LINEBREAK": r"[^\n]",
}


class _Analysis:
    """Glushkov positions of a parsed pattern: each position reads one character class."""

    def __init__(self, flags: int) -> None:
        self.flags = flags
        self.sets: list[frozenset[str]] = []
        self.follow: list[dict[int, int]] = []
        self.asserts_after = False

    # character classes -----------------------------------------------------------------------
    def _fold(self, chars: set[str]) -> frozenset[str]:
        if not self.flags & re.IGNORECASE:
            return frozenset(chars)
        out = set(chars)
        for c in chars:
            out.update(u for u in _UNIVERSE if u.lower() == c.lower() or u.upper() == c.upper())
        return frozenset(out)

    def _class(self, op: str, av: Any) -> frozenset[str]:
        if op == "LITERAL":
            return self._fold({chr(av)})
        if op == "NOT_LITERAL":
            excluded = self._fold({chr(av)})
            return frozenset(u for u in _UNIVERSE if u not in excluded)
        if op == "ANY":
            if self.flags & re.DOTALL:
                return frozenset(_UNIVERSE)
            return frozenset(u for u in _UNIVERSE if u != "\n")
        if op == "IN":
            negate = False
            chars: set[str] = set()
            for iop, iav in av:
                name = _op(iop)
                if name == "NEGATE":
                    negate = True
                elif name == "LITERAL":
                    chars.add(chr(iav))
                elif name == "RANGE":
                    lo, hi = iav
                    chars.update(u for u in _UNIVERSE if lo <= ord(u) <= hi)
                elif name == "CATEGORY":
                    rx = re.compile(_CATEGORY_RX.get(_op(iav), r"[\s\S]"), self.flags & re.ASCII)
                    chars.update(u for u in _UNIVERSE if rx.fullmatch(u))
                else:  # pragma: no cover - other class items do not occur in parsed patterns
                    raise _Unsupported(f"class item {name}")
            folded = self._fold(chars)
            return frozenset(u for u in _UNIVERSE if u not in folded) if negate else folded
        raise _Unsupported(op)  # pragma: no cover

    def _position(self, chars: frozenset[str]) -> int:
        self.sets.append(chars)
        self.follow.append({})
        return len(self.sets) - 1

    def _link(self, last: _Ways, first: _Ways) -> None:
        for p, m in last.items():
            row = self.follow[p]
            for f, k in first.items():
                row[f] = min(2, row.get(f, 0) + m * k)

    # Glushkov construction with path counts (capped at 2: one way, or more than one): each part
    # returns (ways to match the empty text, first positions, last positions)
    def seq(self, items: Any) -> tuple[int, _Ways, _Ways]:
        empty = 1
        first: _Ways = {}
        last: _Ways = {}
        for op, av in items:
            e, f, la = self.node(_op(op), av)
            empty, first, last = self._concat((empty, first, last), (e, f, la))
        return empty, first, last

    def _concat(self, a: tuple[int, _Ways, _Ways], b: tuple[int, _Ways, _Ways]) -> tuple[int, _Ways, _Ways]:
        ea, fa, la = a
        eb, fb, lb = b
        self._link(la, fb)
        first = _add(fa, _scale(fb, ea))
        last = _add(lb, _scale(la, eb))
        return min(2, ea * eb), first, last

    def node(self, op: str, av: Any) -> tuple[int, _Ways, _Ways]:
        if op in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
            p = self._position(self._class(op, av))
            return 0, {p: 1}, {p: 1}
        if op == "SUBPATTERN":
            sub = av[-1]
            add_flags, del_flags = (av[1], av[2]) if len(av) == 4 else (0, 0)
            saved = self.flags
            self.flags = (self.flags | add_flags) & ~del_flags
            try:
                return self.seq(sub)
            finally:
                self.flags = saved
        if op == "ATOMIC_GROUP":
            return self.seq(av)
        if op == "BRANCH":
            empty = 0
            first: _Ways = {}
            last: _Ways = {}
            for alt in av[1]:
                e, f, la = self.seq(alt)
                empty, first, last = min(2, empty + e), _add(first, f), _add(last, la)
            return empty, first, last
        if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, body = av
            if hi == _sre_c.MAXREPEAT or hi > _UNROLL:
                return self._loop(lo, body)
            return self._unrolled(lo, hi, body)
        if op == "AT":
            name = _op(av)
            if name not in ("AT_BEGINNING", "AT_BEGINNING_STRING") and self.sets:
                self.asserts_after = True
            return 1, {}, {}
        if op in ("ASSERT", "ASSERT_NOT"):
            self.asserts_after = self.asserts_after or bool(self.sets)
            return 1, {}, {}
        if op in ("GROUPREF", "GROUPREF_EXISTS"):
            raise _Unsupported("a backreference (its time is not bounded by the text)")
        raise _Unsupported(op)  # pragma: no cover

    def _loop(self, lo: int, body: Any) -> tuple[int, _Ways, _Ways]:
        """``body{lo,}``: lo copies (at least one), the last of them looping back on itself.
        An iteration that matches the empty text ends the loop (as in sre), so it adds no way."""
        acc: tuple[int, _Ways, _Ways] = (1, {}, {})
        for i in range(max(lo, 1)):
            e, f, la = self.seq(body)
            if i == max(lo, 1) - 1:
                self._link(la, f)
            acc = self._concat(acc, (e, f, la))
        return (1 if lo == 0 else acc[0]), acc[1], acc[2]

    def _unrolled(self, lo: int, hi: int, body: Any) -> tuple[int, _Ways, _Ways]:
        acc: tuple[int, _Ways, _Ways] = (1, {}, {})
        ends: _Ways = {}
        for i in range(hi):
            if i >= lo:  # the repeat may stop here
                ends = _add(ends, acc[2])
            acc = self._concat(acc, self.seq(body))
        return (1 if lo == 0 else acc[0]), acc[1], _add(acc[2], ends)


def _add(a: dict[int, int], b: dict[int, int]) -> dict[int, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = min(2, out.get(k, 0) + v)
    return out


def _scale(a: dict[int, int], k: int) -> dict[int, int]:
    return {p: min(2, m * k) for p, m in a.items()} if k else {}


def _leading(
    items: Any, flags: int, a: _Analysis, firsts_are_word: bool, word: frozenset[str]
) -> frozenset[str] | None:
    """The characters after which a search may start the pattern (None: none, it is anchored at
    the start of the text); every character where nothing restricts it."""
    allowed = frozenset(_UNIVERSE)
    for op, av in items:
        name = _op(op)
        if name == "AT":
            at = _op(av)
            if at == "AT_BEGINNING_STRING" or (at == "AT_BEGINNING" and not flags & re.MULTILINE):
                return None
            if at == "AT_BEGINNING":
                allowed &= frozenset("\n")
            elif at == "AT_BOUNDARY" and firsts_are_word:
                allowed -= word
            continue
        if name in ("ASSERT", "ASSERT_NOT") and av[0] == -1 and len(av[1]) == 1:
            ((iop, iav),) = list(av[1])
            if _op(iop) in ("LITERAL", "NOT_LITERAL", "ANY", "IN"):
                chars = a._class(_op(iop), iav)
                allowed = allowed & chars if name == "ASSERT" else allowed - chars
                continue
        if name == "SUBPATTERN" and len(av[-1]) and _op(next(iter(av[-1]))[0]) == "AT":
            return _leading(list(av[-1]), flags, a, firsts_are_word, word)
        break
    return allowed


def ambiguity(pattern: str, *, flags: int = 0, mode: str = "search") -> str | None:
    """Why ``pattern`` can make Python's backtracking ``re`` take super-linear time, or None.

    ``mode`` is how it is used: ``search`` (also findall, finditer, sub, split), ``match`` or
    ``fullmatch``. Exponential shapes are reported in every mode; polynomial ones too.
    """
    try:
        parsed = _sre_p.parse(pattern, flags)
    except re.error as exc:
        return f"does not compile: {exc}"
    state = getattr(parsed, "state", None) or getattr(parsed, "pattern", None)
    all_flags = flags | int(getattr(state, "flags", 0))
    a = _Analysis(all_flags)
    try:
        _, first, last = a.seq(list(parsed.data))
    except _Unsupported as exc:
        return f"not analysable: {exc}"
    sets = list(a.sets)
    follow = [dict(f) for f in a.follow]
    # Reaching a final position ends a match/search successfully (a greedy repeat at the end backs
    # up to it at worst), so no failing path runs through one: drop them, unless a later assertion
    # ($, \b, a look-ahead) can still fail there, or the whole text must match.
    if mode != "fullmatch" and not a.asserts_after:
        follow = [
            {} if p in last else {q: m for q, m in f.items() if q not in last} for p, f in enumerate(follow)
        ]
        first = {q: m for q, m in first.items() if q not in last}
    # An unanchored search tries every start: the pattern behind a loop over any text, entered only
    # after a character the pattern's leading ^ (re.M), \b or one-character look-behind allows.
    if mode == "search":
        word = frozenset(u for u in _UNIVERSE if re.fullmatch(r"\w", u))
        firsts_are_word = all(sets[q] <= word for q in first)
        lead = _leading(list(parsed.data), all_flags, a, firsts_are_word, word)
        if lead is not None:
            allowed, rest = lead, frozenset(_UNIVERSE) - lead
            pa, pb = len(sets), len(sets) + 1
            sets += [allowed, rest]
            follow += [{pa: 1, pb: 1, **first}, {pa: 1, pb: 1}]
    try:
        return _ambiguous(sets, follow)
    except _TooHard:
        return "too complex to prove linear (split it, or anchor it)"


def _ambiguous(sets: list[frozenset[str]], follow: list[dict[int, int]]) -> str | None:
    """Exponential: two different paths from a position back to itself reading the same text (in
    the pair automaton, (p, p) back to (p, p) through a split). Polynomial: p != q with (p, p, q)
    reaching (p, q, q) in the triple automaton (two loops that share a text)."""
    n = len(sets)
    # characters that no set tells apart are one: each set becomes a bit mask over those classes
    classes: dict[tuple[bool, ...], int] = {}
    for u in _UNIVERSE:
        classes.setdefault(tuple(u in s for s in sets), len(classes))
    masks = [0] * n
    for sig, bit in classes.items():
        for i, inside in enumerate(sig):
            if inside:
                masks[i] |= 1 << bit
    budget = [_BUDGET]
    reach = [_closure(follow, p) for p in range(n)]
    cyclic = [p for p in range(n) if p in reach[p]]
    if not cyclic:
        return None
    scc = [frozenset(q for q in reach[p] if p in reach[q]) for p in range(n)]

    def moves(p: int, within: frozenset[int] | set[int]) -> list[tuple[int, int, int]]:
        return [(t, masks[t], m) for t, m in follow[p].items() if t in within]

    for p in cyclic:  # exponential degree
        local = {q: moves(q, scc[p]) for q in scc[p]}
        seen: set[tuple[int, int, bool]] = set()
        stack: list[tuple[int, int, bool]] = [(p, p, False)]
        while stack:
            x, y, off = stack.pop()
            budget[0] -= 1
            if budget[0] < 0:
                raise _TooHard
            for t1, m1, k1 in local[x]:
                for t2, m2, _ in local[y]:
                    if not m1 & m2:
                        continue
                    variants = (off or t1 != t2,) if (off or t1 != t2 or x != y or k1 < 2) else (False, True)
                    for o in variants:
                        if (t1, t2) == (p, p) and o:
                            return f"a loop can read the same text in two ways ({_describe(sets[p])})"
                        if (t1, t2, o) not in seen:
                            seen.add((t1, t2, o))
                            stack.append((t1, t2, o))
    for p in cyclic:  # polynomial degree
        for q in cyclic:
            if p == q or q not in reach[p]:
                continue
            between = {s for s in reach[p] if q in reach[s] or s == q}
            m_p = {s: moves(s, scc[p]) for s in scc[p]}
            m_b = {s: moves(s, between) for s in between | {p}}
            m_q = {s: moves(s, scc[q]) for s in scc[q]}
            target = (p, q, q)
            seen3: set[tuple[int, int, int]] = {(p, p, q)}
            stack3: list[tuple[int, int, int]] = [(p, p, q)]
            while stack3:
                x, y, z = stack3.pop()
                budget[0] -= 1
                if budget[0] < 0:
                    raise _TooHard
                for t1, m1, _ in m_p.get(x, ()):
                    for t2, m2, _ in m_b.get(y, ()):
                        m12 = m1 & m2
                        if not m12:
                            continue
                        for t3, m3, _ in m_q.get(z, ()):
                            if not m12 & m3:
                                continue
                            nxt = (t1, t2, t3)
                            if nxt == target:
                                return (
                                    f"two repeats can share the same text ({_describe(sets[p])}, then "
                                    f"{_describe(sets[q])}): make them disjoint or anchor the pattern"
                                )
                            if nxt not in seen3:
                                seen3.add(nxt)
                                stack3.append(nxt)
    return None


def _closure(follow: list[dict[int, int]], p: int) -> set[int]:
    out: set[int] = set()
    todo = list(follow[p])
    while todo:
        q = todo.pop()
        if q not in out:
            out.add(q)
            todo.extend(follow[q])
    return out


def _describe(chars: frozenset[str]) -> str:
    if len(chars) == len(_UNIVERSE):
        return "any character"
    if len(chars) > len(_UNIVERSE) // 2:
        missing = "".join(sorted(u for u in _UNIVERSE if u not in chars and ord(u) < 128))[:16]
        return f"a repeat of anything but {missing!r}"
    shown = "".join(sorted(c for c in chars if ord(c) < 128))[:16]
    return f"a repeat over {shown!r}"
