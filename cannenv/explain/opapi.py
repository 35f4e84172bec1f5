"""The aclnn operators' own parameter-check messages, imported from their source
(``matrices/explain/aclnn_messages.yaml``).

The aclnn operators are open source (hicann/opbase: the op_api framework and its check macros;
hicann/ops-nn, ops-math, ops-transformer: each operator's ``op_api``), so the messages an
``aclnnXxxGetWorkspaceSize`` call can refuse its arguments with are known in full: every
``OP_LOGE(ACLNN_ERR_…, "format", …)`` of the trees (macro bodies included: the common check macros
``OP_CHECK_DTYPE_NOT_SUPPORT`` … log under their caller's name, but their format string is theirs).
``OP_LOGE`` both logs the message and reports it (``REPORT_ERROR_MESSAGE``): the user reads it after
the error code the errno's first digit selects (``op_log.h``: 1… → ``EZ1001``), e.g.
``AclNN_Parameter_Error(EZ1001): Tensor self not implemented for DT_DOUBLE, should be in dtype
support list [DT_FLOAT,…].`` or ``call aclnnCast failed, detail:EZ1001: … self not implemented for
DT_BFLOAT16 …``.

A row is one distinct (format string, errno) pair, with the first place it is logged at and how
many call sites log it; it is told apart in a log by its fixed parts (split at the conversions
``%s``/``%ld``…, those of :data:`MIN_PART` characters or more), all found in order in the text
after ``EZ1001``, when they are :data:`MIN_TEXT` characters together with words in them (a message
with less, ``%s check failed.``, is not a row). The longest match wins.

The cause a row points to comes only from the table's reviewed ``rules`` (the errno, optionally
narrowed by words of the message → causes, with the reason; the first rule that covers a row
decides), never from the row.

``python -m cannenv.explain.opapi --import TREE REPO_KEY`` reads a source tree and prints the
refresh diff against the shipped table; ``--write`` replaces that repository's sites (docs/explain.md,
"The aclnn operators' own messages").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cannenv.explain.logsource import (
    SOURCE_SUFFIXES,
    call_end,
    format_at,
    fragments,
    split_args,
)

MIN_PART = 3
"""The shortest fixed part of a format string kept for matching."""
MIN_TEXT = 20
"""A message is told apart only when its fixed parts are this long together ..."""
MIN_LETTERS = 12
"""... with at least this many letters."""
LOG_CALL = re.compile(r"\bOP_LOGE(?:_WITHOUT_REPORT)?\s*\(")
ERRNO = re.compile(r"\s*(ACLNN_ERR_[A-Z_]+)\s*")
SKIP_DIRS = ("tests/", "test/", "examples/", "docs/")
"""Folders whose files are not the operators' code (unit tests, samples)."""


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class Rule:
    """A reviewed mapping: the errno of a check (and words of its message) → causes."""

    name: str
    codes: tuple[str, ...]
    causes: tuple[str, ...]
    reason: str
    words: tuple[str, ...] = ()

    def covers(self, code: str, fmt: str) -> bool:
        low = fmt.lower()
        return code in self.codes and (not self.words or any(w.lower() in low for w in self.words))


@dataclass(frozen=True)
class OpMessage:
    """One distinct parameter-check message of the aclnn operators' source."""

    repo: str
    commit: str
    path: str
    line: int
    format: str
    code: str
    sites: int
    parts: tuple[str, ...]
    rule: str
    causes: tuple[str, ...]
    reason: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{self.line}"

    @property
    def source_id(self) -> str:
        return f"aclnn-src:{self.repo}:{self.path}#L{self.line}"

    @property
    def source_title(self) -> str:
        call = f'OP_LOGE({self.code}, "{self.format}")'
        places = f", logged at {self.sites} places" if self.sites > 1 else ""
        return f"{self.repo} {self.path}:{self.line} (at {self.commit[:12]}): {call}{places}"

    @property
    def file(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    def found_in(self, text: str) -> bool:
        """All the fixed parts in ``text``, in order, each searched from where the last ended."""
        at = 0
        for p in self.parts:
            at = text.find(p, at)
            if at < 0:
                return False
            at += len(p)
        return True


Row = tuple[int, str, int, str, str, int, tuple[str, ...], int]
"""A row as the engine keeps it: (repository index, path, line, format, errno, sites, fixed parts,
rule index)."""
RuleData = tuple[str, tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]
"""A rule as the engine keeps it: (name, errnos, causes, reason, words)."""
OpData = tuple[Sequence[Row], tuple[tuple[str, str], ...], tuple[RuleData, ...], int]
"""The table as the cached knowledge holds it: (rows, (owner/name, commit) by index, rules, rows
of the whole table). Plain tuples: unpickling them neither imports this module nor builds an
object per row (about 1 ms for the 2,629 rows, not 11), so a log without ``EZ1001`` pays nothing."""


@dataclass(frozen=True)
class OpMessages:
    """The engine's table over :data:`OpData`: the rows that point to a cause (the only ones
    looked for), most specific first (the fixed text's letters and digits, then the places that
    log it)."""

    data: OpData

    @property
    def rows(self) -> Sequence[Row]:
        return self.data[0]

    @property
    def repos(self) -> tuple[tuple[str, str], ...]:
        return self.data[1]

    @property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(Rule(*r) for r in self.data[2])

    @property
    def total(self) -> int:
        """Rows of the whole table."""
        return self.data[3]

    def _message(self, row: Row) -> OpMessage:
        repo, commit = self.repos[row[0]]
        rule = Rule(*self.data[2][row[7]]) if row[7] >= 0 else None
        return OpMessage(
            repo=repo,
            commit=commit,
            path=row[1],
            line=row[2],
            format=row[3],
            code=row[4],
            sites=row[5],
            parts=row[6],
            rule=rule.name if rule else "",
            causes=rule.causes if rule else (),
            reason=rule.reason if rule else "",
        )

    @property
    def messages(self) -> tuple[OpMessage, ...]:
        return tuple(self._message(r) for r in self.rows)

    def source(self, source_id: str) -> tuple[str, str] | None:
        """(title, url) of the row a derived signature names as its source."""
        if not source_id.startswith("aclnn-src:"):
            return None
        repo, _, at = source_id[len("aclnn-src:") :].partition(":")
        path, _, line = at.rpartition("#L")
        for r in self.rows:
            if r[1] == path and str(r[2]) == line and self.repos[r[0]][0] == repo:
                m = self._message(r)
                return m.source_title, m.url
        return None

    def match(self, text: str) -> OpMessage | None:
        """The row whose fixed parts are all in ``text`` in order; of several, the one that pins
        down most of it (``Tensor %s not implemented for %s, should be …`` over ``%s not
        implemented for %s, should be …``): the first, in the table's order."""
        for r in self.rows:
            parts = r[6]
            if parts[0] not in text:
                continue
            at = 0
            for p in parts:
                at = text.find(p, at)
                if at < 0:
                    break
                at += len(p)
            else:
                return self._message(r)
        return None


# ------------------------------------------------------------------------------ extraction
@dataclass(frozen=True)
class Call:
    """An ``OP_LOGE(ACLNN_ERR_…, "format", …)`` call of a source file."""

    path: str
    line: int
    format: str
    code: str


def extract(text: str, path: str) -> list[Call]:
    """Every ``OP_LOGE`` call of one file whose first argument is an aclnn errno and whose format
    is a string literal (comments left out; macro bodies kept: a check macro's message is its own)."""
    calls: list[Call] = []
    for m in LOG_CALL.finditer(text):
        start = m.start()
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].lstrip().startswith(("//", "*", "/*")):
            continue
        end = call_end(text, m.end())
        args = split_args(text[m.end() : end - 1])
        if len(args) < 2:
            continue
        code = ERRNO.fullmatch(args[0].replace("\\\n", " "))
        if code is None:
            continue
        fmt, _ = format_at(text, m.end() + len(args[0]) + 1)
        if fmt is None:
            continue
        line = text.count("\n", 0, start) + 1
        calls.append(Call(path, line, " ".join(fmt.split()), code.group(1)))
    return calls


def parts_of(fmt: str) -> tuple[str, ...]:
    """The fixed parts a log line must hold, in order; () when they cannot tell the message apart."""
    parts = tuple(p for p in fragments(fmt) if len(p) >= MIN_PART)
    joined = "".join(parts)
    if len(joined) < MIN_TEXT or sum(ch.isalpha() for ch in joined) < MIN_LETTERS:
        return ()
    return parts


def walk(tree: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``tree``, text) of every source file outside tests and samples."""
    for p in sorted(tree.rglob("*")):
        if not p.is_file() or p.suffix not in SOURCE_SUFFIXES:
            continue
        rel = p.relative_to(tree).as_posix()
        if any(rel.startswith(d) or f"/{d}" in rel for d in SKIP_DIRS):
            continue
        if "OP_LOGE" in (text := p.read_text(encoding="utf-8", errors="replace")):
            yield rel, text


def import_tree(tree: Path) -> list[Call]:
    calls: list[Call] = []
    for rel, text in walk(tree):
        calls += extract(text, rel)
    return calls


def sites(repo_key: str, calls: Iterable[Call]) -> list[dict[str, Any]]:
    """One site row per distinct (format, errno) of one repository: its first place and how many
    places log it; the calls whose message cannot be told apart are left out."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for c in sorted(calls, key=lambda c: (c.path, c.line)):
        if not parts_of(c.format):
            continue
        key = (c.format, c.code)
        if key in out:
            out[key]["sites"] += 1
        else:
            out[key] = {
                "repo": repo_key,
                "path": c.path,
                "line": c.line,
                "code": c.code,
                "format": c.format,
                "sites": 1,
            }
    return sorted(out.values(), key=lambda r: (r["path"], r["line"]))


# ------------------------------------------------------------------------------ the table
def build(
    raw_rules: Sequence[Any], raw_repos: Mapping[str, Any], raw_rows: Sequence[Any], *, keep_all: bool = False
) -> OpMessages:
    """The engine's table: one row per distinct (format, errno) over the repositories (the first
    repository's site named; the sites added up), with the causes of the first rule covering it."""
    rules = tuple(Rule(r.name, r.codes, r.causes, r.reason, r.words) for r in raw_rules)
    keys = list(raw_repos)
    repos = tuple((raw_repos[k].repo, raw_repos[k].commit) for k in keys)
    merged: dict[tuple[str, str], list[Any]] = {}
    for r in raw_rows:
        merged.setdefault((r.format, r.code), []).append(r)
    rows: list[Row] = []
    for (fmt, code), found in merged.items():
        first = found[0]
        rule = next((i for i, x in enumerate(rules) if x.covers(code, fmt)), -1)
        if not (rule >= 0 and rules[rule].causes) and not keep_all:
            continue
        parts = parts_of(fmt)
        if parts:
            sites = sum(r.sites for r in found)
            rows.append((keys.index(first.repo), first.path, first.line, fmt, code, sites, parts, rule))
    # the most specific first: a line's first matching row is its answer
    rows.sort(key=lambda r: (-sum(ch.isalnum() for p in r[6] for ch in p), -r[5], r[1], r[2]))
    data = tuple((r.name, r.codes, r.causes, r.reason, r.words) for r in rules)
    return OpMessages((tuple(rows), repos, data, len(merged)))


def diff(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """What a refresh changes: messages the table lacks, messages gone (by format and errno: a
    message that only moved is not a change), and those whose number of call sites changed."""

    def key(r: Mapping[str, Any]) -> tuple[str, str]:
        return (str(r["format"]), str(r["code"]))

    before = {key(r): r for r in old}
    after = {key(r): r for r in new}
    return {
        "lacks": [dict(r) for k, r in after.items() if k not in before],
        "changed": [
            {"format": k[0], "code": k[1], "was": before[k]["sites"], "now": r["sites"]}
            for k, r in after.items()
            if k in before and before[k]["sites"] != r["sites"]
        ],
        "gone": [dict(r) for k, r in before.items() if k not in after],
    }


# ------------------------------------------------------------------------------ loading
MAX_TABLE_BYTES = 8 << 20


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "aclnn_messages.yaml"


def load(path: str | Path, *, keep_all: bool = False) -> OpMessages:
    """The table, read bounded and validated (its rows with a cause; every row with ``keep_all``)."""
    from cannenv.explain.models import OpMessagesFile
    from cannenv.explain.rowtable import load_validated

    model = load_validated(
        path,
        OpMessagesFile,
        what="aclnn message table",
        hint="see docs/explain.md (Knowledge tables: the aclnn operators' own messages)",
        max_bytes=MAX_TABLE_BYTES,
    )
    return build(model.rules, model.repos, model.rows, keep_all=keep_all)


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import OpMessagesFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(
        OpMessagesFile, "cannenv explain: the aclnn operators' parameter-check messages from their source"
    )


def main(argv: list[str] | None = None) -> int:
    """``--schema`` prints the table's JSON Schema; ``--import TREE REPO_KEY [--write]`` prints the
    refresh diff of a source tree and with ``--write`` replaces that repository's rows
    (:func:`cannenv.explain.rowtable.importer_main`)."""
    import sys

    from cannenv.explain.rowtable import importer_main

    return importer_main(
        sys.argv[1:] if argv is None else argv,
        module="opapi",
        table=shipped_path(),
        schema=json_schema,
        read=lambda tree, key, _extra: sites(key, import_tree(tree)),
        diff=diff,
        noun="messages",
    )


if __name__ == "__main__":
    raise SystemExit(main())
