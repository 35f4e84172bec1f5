"""Explaining a text in tests: one scan of the whole text with the shipped tables, then the judge.

The explain tests share these instead of each writing its own scanner loop."""

from __future__ import annotations

from typing import Any

from cannenv.explain import judge, signatures
from cannenv.explain.scan import Scanner, ScanResult

TABLE = signatures.shipped()


def scan(text: str | bytes, table: signatures.SignatureTable = TABLE, **how: int) -> ScanResult:
    """The scanner's result for ``text`` fed in one piece (``how``: the scanner's limits)."""
    data = text.encode() if isinstance(text, str) else text
    s = Scanner(table, total_hint=len(data), **how)
    s.feed(data)
    s.end_input()
    return s.result()


def known(ex: judge.Explanation) -> tuple[judge.Match, ...]:
    """The matches of known messages: every one but the residual reading's (which knows none)."""
    return tuple(m for m in ex.matches if m.id != judge.RESIDUAL_ID)


def explain(text: str | bytes, **kw: Any) -> judge.Explanation:
    """The judge's explanation of ``text`` by the shipped tables (``kw``: facts, findings …)."""
    return judge.explain(TABLE, scan(text), **kw)
