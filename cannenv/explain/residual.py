"""The residual reading: a failure no signature reads, and nothing in it that points to the installation.

Pure: it reads the failure lines the scanner's extractors kept (``residual.failure_kinds`` of the
knowledge, matrices/explain/knowledge.yaml: a line at the ERROR, FATAL or CRITICAL level, an
``error:`` or ``failed`` line, a Python exception line) and the markers of the ``residual`` section:
the words of every other cause (an import, a shared library, a version, the install's environment,
the driver or the device, the chip, memory, a device held by another process, communication, a
native crash). It is asked only when no signature, hand-written or derived, matched the log
(:func:`cannenv.explain.judge.explain`): then

* a log with no failure line (a hang's stacks, warnings only) has no reading;
* a line at a lower level (``WARNING`` …) or a stack frame is no failure (``residual.not_failure``);
* a marker in any failure line leaves the log unread (that cause is possible, and cannenv knows no
  signature to decide it): the answer stays "no signature matched", with the lines;
* otherwise the failure is read as **not a version problem**, ``undecided`` always (an absence of
  evidence, never a fact that ties it), at the lowest priority, with the failure line quoted.

docs/explain.md, "The residual reading", gives the reasoning and its measured precision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from cannenv import linre

if TYPE_CHECKING:
    from cannenv.explain.knowledge import Knowledge
    from cannenv.explain.parts import Residual
    from cannenv.explain.scan import Value

MAX_SHOWN_FAILURES = 3
"""Failure lines quoted with the reading."""


@dataclass(frozen=True)
class Reading:
    """The residual reading: the failure lines it read (the one quoted first) and why."""

    line: str
    count: int
    lines: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Silence:
    """Why there is no reading: no failure line, or the marker a failure line holds."""

    why: str
    marker: str | None = None
    causes: tuple[str, ...] = ()
    line: str | None = None


@cache
def _rx(pattern: str) -> linre.LinearPattern:
    return linre.compile(pattern, what="residual pattern")


def failures(k: Knowledge, values: Mapping[str, Mapping[str, Value]]) -> list[Value]:
    """The failure lines the extractors kept: the last Python exception line first, then the rest
    in the extractors' order; a line at a lower level (a warning) or a stack frame is not one."""
    rs = k.residual
    if rs is None:
        return []
    lower = _rx(rs.not_failure)
    kinds = set(rs.failure_kinds)
    exceptions: list[Value] = []
    others: list[Value] = []
    seen: set[str] = set()
    for e in k.extractors:
        if e.kind not in kinds:
            continue
        for v in values.get(e.id, {}).values():
            if v.line in seen or lower.search(v.line) is not None:
                continue
            seen.add(v.line)
            (exceptions if e.kind == "py-exception" else others).append(v)
    return exceptions[::-1] + others


def read(k: Knowledge, values: Mapping[str, Mapping[str, Value]]) -> Reading | Silence:
    """The residual reading of a log no signature read, or why there is none."""
    rs: Residual | None = k.residual
    if rs is None:
        return Silence("no residual table")
    lines = failures(k, values)
    if not lines:
        return Silence("the log reports no failure (no error line, no exception)")
    for eid in rs.in_stack:
        for value, v in values.get(eid, {}).items():
            return Silence(
                f"the failure is located in the installed stack ({value}): the log may show "
                f"{', '.join(rs.in_stack_causes)}, which no known signature decides",
                eid,
                rs.in_stack_causes,
                v.line,
            )
    for v in lines:
        for m in rs.markers:
            found = _rx(m.regex).search(v.line)
            if found is not None and (m.unless is None or _rx(m.unless).search(v.line) is None):
                return Silence(
                    f"a failure line names {found.group(0)!r} ({m.id}): the log may show "
                    f"{', '.join(m.causes)}, which no known signature decides",
                    m.id,
                    m.causes,
                    v.line,
                )
    first = lines[0]
    return Reading(
        first.line,
        sum(v.count for v in lines),
        tuple(v.line for v in lines[:MAX_SHOWN_FAILURES]),
        rs.reading,
    )
