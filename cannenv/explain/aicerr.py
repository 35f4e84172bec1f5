"""msaicerr's root-cause conclusions, imported from its source: ``matrices/explain/aicerr.yaml``.

msaicerr, the AI Core error analyser of the CANN toolkit (``tools/msaicerr``; open source in
hicann/oam-tools, and before 2024 in the vendor's Ascend/tools), reads an AI Core error's dump and
logs and writes ``info.txt``, which starts with its **root-cause conclusion** (``"***…Root cause
conclusion…***"`` then one sentence; the current release prints the sentence alone). Users paste
that sentence. The sentences are the branches of ``AicErrorInfo.get_conclusion`` (``_get_conclusion``
before), every ``conclusion = "…"`` assignment of the tool's source: known in full.

The table holds each sentence with its file and line at the commit read, from every copy listed in
``repos`` (the newest first: a sentence two copies have is cited from the first), so a log of an
older toolkit is read in its own words. A row's meaning and causes come only from the reviewed
``rules`` (words of the sentence, first rule deciding, each quoting the vendor's troubleshooting page
or the code's own branch); a row no rule covers is an error of the table (a test holds every row to
a rule).

A sentence is found by its **clauses** (the head of each of its sentences, up to the first comma):
those of at least :data:`MIN_CLAUSE` characters and :data:`MIN_WORDS` words that no row of other
causes has (a clause two wordings of one conclusion share identifies the first, the newest copy's),
the :data:`MAX_CLAUSES` longest — so a sentence reflowed, or worded again in one clause between releases
(``after excute`` / ``after execute``), is still found. The table becomes a :class:`LibTable` (one
form per clause, a literal: linear), derived at :data:`AICERR_PRIORITY`.

    python -m cannenv.explain.aicerr --import TREE REPO_KEY [--write]
    python -m cannenv.explain.aicerr --schema > matrices/explain/aicerr.schema.json
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.explain.parts import LibForm, LibRow, LibTable

if TYPE_CHECKING:
    from cannenv.explain.models import AicerrFile

MIN_CLAUSE = 30
"""The shortest clause that can identify a conclusion (``Please check your environment`` is not one)."""
MIN_WORDS = 3
MAX_CLAUSES = 3
"""Clauses kept per conclusion (the longest)."""
AICERR_PRIORITY = -19
"""Above the vendor's code rows (-20: the ``507015`` beside it is the exception the tool analysed,
its conclusion says which kind) and the runtime's AI Core exception report (-21), below every
hand-written signature."""
MAX_TABLE_BYTES = 1 << 20
MAX_SOURCE_BYTES = 4 << 20
"""A source file larger than this is not a msaicerr module (the importer skips it)."""
TARGET = "conclusion"
"""The variable the tool assigns its conclusion to."""

_SENTENCE_SPLIT = re.compile(r"[.!?\n]+|\(\d+\)")
_CLAUSE_END = re.compile(r"[,;:(]")


def normalise(text: str) -> str:
    """A conclusion as the table keeps it: whitespace collapsed, ends stripped."""
    return " ".join(text.split())


def clauses(text: str) -> list[str]:
    """The clauses of a conclusion that can identify it: the head of each sentence (up to its first
    comma, semicolon, colon or parenthesis), at least :data:`MIN_CLAUSE` characters and
    :data:`MIN_WORDS` words — a sentence's subject and verb, not a trailing ``please check …``."""
    out: list[str] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        head = normalise(_CLAUSE_END.split(sentence, 1)[0]).strip("\"' ")
        words = sum(1 for w in head.split() if any(ch.isalpha() for ch in w))
        if len(head) >= MIN_CLAUSE and words >= MIN_WORDS:
            out.append(head)
    return out


# ------------------------------------------------------------------------------ extraction
@dataclass(frozen=True)
class Assignment:
    path: str
    line: int
    text: str


def _literal(node: ast.expr) -> str | None:
    """The text a conclusion's value starts with: a string (implicit concatenation joined), the
    left string of ``"…" + x`` or ``"…%s" % x`` (up to the conversion); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left = _literal(node.left)
        if left is None:
            return None
        return left.split("%", 1)[0] if isinstance(node.op, ast.Mod) else left
    return None


def extract(source: str, path: str) -> list[Assignment]:
    """Every ``conclusion = "…"`` of one Python file, in line order (a file that does not parse
    yields none; ``+=`` adds detail to the conclusion assigned before it, not one of its own)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Assignment] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue  # ``conclusion += "The memory address is %s"`` adds to the conclusion before it
        if not any(isinstance(t, ast.Name) and t.id == TARGET for t in node.targets):
            continue
        text = _literal(node.value)
        if text is not None and normalise(text):
            out.append(Assignment(path, node.lineno, normalise(text)))
    out.sort(key=lambda a: a.line)
    return out


def walk(tree: Path) -> Iterator[tuple[str, str]]:
    """(path relative to ``tree``, text) of every Python file of the tree, in path order."""
    for p in sorted(tree.rglob("*.py")):
        if p.is_file() and not p.is_symlink() and p.stat().st_size <= MAX_SOURCE_BYTES:
            yield p.relative_to(tree).as_posix(), p.read_text(encoding="utf-8", errors="replace")


def import_tree(tree: Path) -> list[Assignment]:
    """Every conclusion of a source tree (msaicerr's folder or a repository holding it), each text
    once (its first place)."""
    seen: set[str] = set()
    out: list[Assignment] = []
    for rel, text in walk(tree):
        for a in extract(text, rel):
            if a.text not in seen:
                seen.add(a.text)
                out.append(a)
    return out


def rows_of(
    assignments: Iterable[Assignment], repo_key: str, cited: Iterable[str] = ()
) -> list[dict[str, Any]]:
    """Table rows of a copy's conclusions, less the texts a copy listed before it already cites."""
    known = set(cited)
    return [
        {"repo": repo_key, "path": a.path, "line": a.line, "text": a.text}
        for a in assignments
        if a.text not in known
    ]


def diff(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, list[Any]]:
    """What a refresh changes: conclusions the table lacks, conclusions that moved to another file,
    conclusions gone (by text: a line that only moved is not a change)."""
    before = {str(r["text"]): r for r in old}
    after = {str(r["text"]): r for r in new}
    lacks = [dict(r) for t, r in after.items() if t not in before]
    gone = [dict(r) for t, r in before.items() if t not in after]
    changed = [
        {"text": t, "was": before[t]["path"], "now": r["path"]}
        for t, r in after.items()
        if t in before and before[t]["path"] != r["path"]
    ]
    return {"lacks": lacks, "changed": changed, "gone": gone}


# ------------------------------------------------------------------------------ the table
@dataclass(frozen=True)
class Conclusion:
    """One conclusion of the table with the rule that reads it."""

    key: str
    text: str
    repo: str
    commit: str
    path: str
    line: int
    rule: str
    meaning: str
    causes: tuple[str, ...]
    reason: str
    clauses: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{self.line}"

    @property
    def source_id(self) -> str:
        return f"aicerr:{self.key}"

    @property
    def source_title(self) -> str:
        shown = self.text if len(self.text) <= 160 else self.text[:157] + "…"
        return f'msaicerr {self.repo} {self.path}:{self.line} (at {self.commit[:12]}): conclusion = "{shown}"'


def rule_for(rules: Sequence[Any], text: str) -> Any | None:
    """The first reviewed rule one of whose words the conclusion contains (any case)."""
    low = text.lower()
    return next((r for r in rules if any(w.lower() in low for w in r.words)), None)


def conclusions(model: AicerrFile) -> tuple[Conclusion, ...]:
    """Every distinct conclusion of the table (cited from the first copy in ``repos`` order) with
    its rule and identifying clauses (none: too short to tell apart, never looked for); a row no
    rule covers is left out (the table's test fails)."""
    order = {k: i for i, k in enumerate(model.repos)}
    first: dict[str, Any] = {}
    for r in sorted(model.rows, key=lambda r: (order[r.repo], r.path, r.line)):
        first.setdefault(r.text, r)
    read: list[tuple[Any, Any]] = []
    for text, row in first.items():
        rule = rule_for(model.rules, text)
        if rule is not None:
            read.append((row, rule))
    causes_of: dict[str, set[tuple[str, ...]]] = {}
    owner: dict[str, str] = {}
    for row, rule in read:
        for c in clauses(row.text):
            causes_of.setdefault(c, set()).add(tuple(rule.causes))
            owner.setdefault(c, row.text)  # a clause two wordings share is the first one's
    out: list[Conclusion] = []
    for row, rule in read:
        own = sorted(
            {c for c in clauses(row.text) if len(causes_of[c]) == 1 and owner[c] == row.text},
            key=lambda c: (-len(c), c),
        )
        repo = model.repos[row.repo]
        digest = hashlib.sha1(row.text.encode("utf-8")).hexdigest()[:8]
        out.append(
            Conclusion(
                key=f"{rule.name}-{digest}",
                text=row.text,
                repo=repo.repo,
                commit=repo.commit,
                path=row.path,
                line=row.line,
                rule=rule.name,
                meaning=rule.meaning,
                causes=tuple(rule.causes),
                reason=rule.reason,
                clauses=tuple(own[:MAX_CLAUSES]),
            )
        )
    return tuple(out)


def build(model: AicerrFile) -> tuple[LibTable, dict[str, tuple[str, str]]]:
    """The engine's table (a :class:`LibTable`: one literal form per identifying clause) and its
    sources (each conclusion's file and line; each rule's vendor text)."""
    found = conclusions(model)
    sources: dict[str, tuple[str, str]] = {c.source_id: (c.source_title, c.url) for c in found}
    sources.update({f"aicerr-rule:{r.name}": (r.source.title, r.source.url) for r in model.rules})
    forms = tuple(
        LibForm(f"{c.key}-{i}", clause, re.escape(clause), c.key, f"aicerr-rule:{c.rule}")
        for c in found
        for i, clause in enumerate(c.clauses)
    )
    rows = tuple(
        LibRow(c.key, f'"{c.text}"', None, c.meaning, c.causes, c.reason, c.source_id) for c in found
    )
    table = LibTable(
        "msaicerr",
        "msaicerr (the AI Core error analyser)",
        "CANN msaicerr (AI Core error analysis)",
        forms,
        rows,
        priority=AICERR_PRIORITY,
        noun="root-cause conclusion",
    )
    return table, sources


def parse(raw: Any, *, source: str) -> AicerrFile:
    from cannenv.explain.models import AicerrFile, validate

    return validate(
        AicerrFile,
        raw,
        source=source,
        what="msaicerr conclusion table",
        hint="see docs/explain.md (msaicerr's root-cause conclusions)",
    )


def load_model(path: str | Path) -> AicerrFile:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="msaicerr conclusion table", max_bytes=MAX_TABLE_BYTES)
    return parse(raw, source=str(p))


def load(path: str | Path) -> tuple[LibTable, dict[str, tuple[str, str]]]:
    return build(load_model(path))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "aicerr.yaml"


@cache
def shipped() -> tuple[LibTable, dict[str, tuple[str, str]]] | None:
    path = shipped_path()
    return load(path) if path.is_file() else None


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import AicerrFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(AicerrFile, "cannenv explain: msaicerr's root-cause conclusions from its source")


def _read(tree: Path, key: str, extra: Sequence[str]) -> list[dict[str, Any]]:
    """A copy's rows, less the texts of the copies listed before ``key`` in the table's ``repos``."""
    import yaml

    raw = yaml.safe_load(shipped_path().read_text(encoding="utf-8")) or {}
    repos = list((raw.get("repos") or {}).keys())
    earlier = set(repos[: repos.index(key)]) if key in repos else set(repos)
    cited = [str(r["text"]) for r in raw.get("rows") or () if r.get("repo") in earlier]
    return rows_of(import_tree(tree), key, cited)


def main(argv: list[str] | None = None) -> int:
    """``--schema`` prints the table's JSON Schema; ``--import TREE REPO_KEY [--write]`` prints the
    refresh diff of a copy of msaicerr's source (:func:`cannenv.explain.rowtable.importer_main`)."""
    import sys

    from cannenv.explain.rowtable import importer_main

    return importer_main(
        sys.argv[1:] if argv is None else argv,
        module="aicerr",
        table=shipped_path(),
        schema=json_schema,
        read=_read,
        diff=diff,
        noun="conclusions",
        tree_hint="git --git-dir=MIRROR archive COMMIT src/msaicerr | tar -x -C TREE",
    )


if __name__ == "__main__":
    raise SystemExit(main())
