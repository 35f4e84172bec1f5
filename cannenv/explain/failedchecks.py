"""A failed check printed by a program or tool: ``matrices/explain/failed_checks.yaml``.

Most errors a program reports about its own input carry no vendor code and no message of the stack:
the program (or a tool, a library it calls) checked what it was given and said the check failed —
glibc's ``file:line: func: Assertion `expr' failed.``, glog's and Abseil's ``Check failed: a == b (1
vs. 2)``, PyTorch's ``Expected cond to be true, but got false``, GoogleTest's ``Expected equality of
these values:``, a project's own ``ASSERTION FAILED: cond``, or a comparison of a value it got with
what it needs (``X does not match Y``, ``must be less than``, ``…, but got …``, ``exceeds``, ``out of
range``, ``larger than max (N vs. M)``, ``incompatible dimensions``). The table holds each form as its
printer prints it (an anchor for the scanner's one pass, a linear regex, the printer's source).

Pure: :func:`read` takes the values the scan's extractors found (one capture per form) and gives a
reading per form whose first fitting line is a failed check: ``not-a-version-problem``, ranked below
every other reading but a process's death (:data:`~cannenv.explain.signatures.FAILED_CHECK_PRIORITY`),
never confirmed (no fact of the host ties it). A line **steps aside** when what it checks is another
cause's: it names (outside its paths) a version, a package or an installation, a library or a
binary, the driver or firmware, a chip, memory or a timeout (``torch version must be >= 2.1`` is not
this reading). A comparison is not read on a warning's or a note's line (``quiet_levels``), nor where
the form needs an expectation before it (``before``: ``must``, ``expected`` … before ``but got``) and
the line has none, nor where what follows is prose about an error (``not_after``: ``but got an
error``), nor on a line another pattern or table reads (a library's category, the vendor's message:
the more precise reading of that line). docs/explain.md, "A failed check printed by a program or tool".

    python -m cannenv.explain.failedchecks --schema > matrices/explain/failed_checks.schema.json
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cannenv import linre
from cannenv.explain.parts import CheckForm, FailedChecks, StepAside

if TYPE_CHECKING:
    from cannenv.explain.models import FailedChecksFile

MAX_TABLE_BYTES = 1 << 20
SHOWN = 160
"""Characters of the check shown in a reading's title."""


class Found(Protocol):
    """What the scan keeps of a value (:class:`cannenv.explain.scan.Value`, not imported: the scan
    imports the tables this module builds)."""

    count: int
    line: str


@dataclass(frozen=True)
class CheckReading:
    """A failed check found in the log: the form, what it checked and the line."""

    id: str
    title: str
    component: str
    why: str
    sources: tuple[str, ...]
    key: str
    line: str
    count: int


def _words_rx(words: tuple[str, ...], shapes: tuple[str, ...]) -> str:
    """One linear regex: any of ``words`` whole (any case; a letter or digit beside it joins it, ``_``
    and ``-`` do not), or any of ``shapes``."""
    alts = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    parts = [f"(?i:(?:^|[^a-z0-9])(?:{alts})(?:[^a-z0-9]|$))"] if words else []
    return "|".join([*parts, *(f"(?:{s})" for s in shapes)])


def build(model: FailedChecksFile) -> tuple[FailedChecks, dict[str, tuple[str, str]]]:
    """The engine table and the file's sources (id -> (title, url))."""
    forms = tuple(
        CheckForm(f.id, f.kind, f.printer, f.anchor, f.regex, f.reading, f.source, f.before, f.not_after)
        for f in model.forms
    )
    aside = tuple(StepAside(s.id, s.what, _words_rx(s.words, s.shapes), s.causes) for s in model.step_aside)
    table = FailedChecks(forms, aside, tuple(q.regex for q in model.quiet_levels))
    return table, {k: (v.title, v.url) for k, v in model.sources.items()}


def parse(raw: Any, *, source: str) -> FailedChecksFile:
    from cannenv.explain.models import FailedChecksFile, validate

    return validate(
        FailedChecksFile,
        raw,
        source=source,
        what="failed-check forms",
        hint="see docs/explain.md (A failed check printed by a program or tool)",
    )


def load(path: str | Path) -> tuple[FailedChecks, dict[str, tuple[str, str]]]:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="failed-check forms", max_bytes=MAX_TABLE_BYTES)
    return build(parse(raw, source=str(p)))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "failed_checks.yaml"


@cache
def shipped() -> tuple[FailedChecks, dict[str, tuple[str, str]]]:
    return load(shipped_path())


@cache
def _rx(pattern: str) -> linre.LinearPattern:
    return linre.compile(pattern, what="regex")


def _unpathed(line: str) -> str:
    """The line without its paths (a token holding ``/`` or ``\\``): a folder named ``driver`` or a
    file ``_check_version.py`` is where the check is, not what it checks."""
    return " ".join(t for t in line.split() if "/" not in t and "\\" not in t)


def step_aside(table: FailedChecks, line: str) -> StepAside | None:
    """The row of what the line names that makes it another cause's reading, or None."""
    text = _unpathed(line)
    for row in table.step_aside:
        if _rx(row.pattern).search(text) is not None:
            return row
    return None


def quiet(table: FailedChecks, line: str) -> bool:
    """Whether the line is a warning's or a note's (it reports no failure)."""
    return any(_rx(q).search(line) is not None for q in table.quiet_levels)


def _first_word(text: str) -> str:
    word = text.lstrip(" \t:,;.\"'`([{").split(" ", 1)[0]
    return word.strip(" \t:,;.!\"'`)]}").lower()


def _fits(form: CheckForm, line: str) -> bool:
    """Whether a comparison's line holds its expectation (``before``) and compares a value (not
    ``not_after``'s prose about an error)."""
    at = line.find(form.anchor)
    if at < 0:
        return False
    if form.before and not any(w in line[:at].lower() for w in form.before):
        return False
    if form.not_after:
        word = _first_word(line[at + len(form.anchor) :])
        if word in form.not_after or any(len(w) >= 5 and word.endswith(w) for w in form.not_after):
            return False
    return True


def read(
    table: FailedChecks, values: Mapping[str, Mapping[str, Found]], taken: Collection[str] = ()
) -> list[CheckReading]:
    """One reading per form, from its first line that is a failed check and names nothing another
    cause reads (see the module), in the table's order; ``taken``: the lines other patterns and
    tables read (the more precise reading of that line is theirs)."""
    out: list[CheckReading] = []
    for form in table.forms:
        for value, v in values.get(form.capture, {}).items():
            line = v.line
            if line in taken or step_aside(table, line) is not None:
                continue
            if form.kind == "comparison" and (quiet(table, line) or not _fits(form, line)):
                continue
            check = " ".join(value.split())[:SHOWN] or form.anchor.strip()
            out.append(
                CheckReading(
                    f"failed-check-{form.id}",
                    f"a failed check ({form.printer}): {check}",
                    form.printer,
                    f"{form.reading}; the check line: {line.strip()}",
                    (form.source,),
                    f"derived:check:{form.id}",
                    line,
                    v.count,
                )
            )
            break
    return out


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import FailedChecksFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(
        FailedChecksFile, "cannenv explain: the printed forms of a program's or tool's failed check"
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m cannenv.explain.failedchecks --schema``: print the JSON Schema of the file."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["--schema"]:
        print(
            "usage: python -m cannenv.explain.failedchecks --schema"
            " > matrices/explain/failed_checks.schema.json",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
