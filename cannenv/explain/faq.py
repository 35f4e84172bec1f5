"""The vendors' FAQ and troubleshooting pages, imported whole: ``matrices/explain/faq.yaml``.

Each row is one entry of a vendor page that shows an error message: the literal fragments of that
message (verbatim from the entry, variable parts cut out), the cause a person assigned from the
entry's stated cause (a reviewed mapping, with a one-line reason), and the vendor's advice. Every
row becomes a signature ranked below the hand-written ones (``FAQ_PRIORITY``), unless a
hand-written signature was already made from the entry (``signature:``).

The importer reads a saved page (markdown: headings and code blocks), splits it into entries and
prints what the table lacks or what changed (the refresh diff); it never writes a cause::

    python -m cannenv.explain.faq --import tests/data/explain_faq/mindie-llm-faq.md mindie-llm-faq
    python -m cannenv.explain.faq --import tests/data/explain_faq/      # every saved page
    python -m cannenv.explain.faq --schema > matrices/explain/faq.schema.json
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.explain.parts import FaqRow as FaqRow

if TYPE_CHECKING:
    from cannenv.explain.models import FaqFile

MAX_FAQ_BYTES = 4 << 20
FAQ_PRIORITY = -15
"""Below every hand-written signature but the CPU-fallback warning, above the code tables' (-20):
a message the vendor's own page explains says more than a bare code beside it."""


# ------------------------------------------------------------------------------ engine values
def row_id(page: str, anchor: str, item: str | None = None) -> str:
    key = anchor if item is None else f"{anchor}#{item}"
    return f"faq-{page}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def build(model: FaqFile) -> tuple[FaqRow, ...]:
    out = []
    for e in model.entries:
        p = model.pages[e.page]
        out.append(
            FaqRow(
                id=row_id(e.page, e.anchor, e.item),
                page=e.page,
                anchor=e.anchor,
                title=e.title,
                component=p.component,
                page_title=p.title,
                url=f"{p.url}#{e.anchor}",
                match=e.match,
                cause=e.cause,
                reason=e.reason,
                advice=e.advice,
                signature=e.signature,
                priority=FAQ_PRIORITY if e.priority is None else e.priority,
                item=e.item,
            )
        )
    return tuple(out)


def parse_faq(raw: Any, *, source: str) -> FaqFile:
    from cannenv.explain.models import FaqFile, validate

    return validate(
        FaqFile, raw, source=source, what="FAQ table", hint="see docs/explain.md (Knowledge tables: FAQ)"
    )


def load_model(path: str | Path) -> FaqFile:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="FAQ table", max_bytes=MAX_FAQ_BYTES)
    return parse_faq(raw, source=str(p))


def load(path: str | Path) -> tuple[FaqRow, ...]:
    return build(load_model(path))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "faq.yaml"


@cache
def shipped() -> tuple[FaqRow, ...]:
    return load(shipped_path())


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import FaqFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(FaqFile, "cannenv explain: the vendors' FAQ entries")


# ------------------------------------------------------------------------------ the page parser
PART_NAMES = frozenset(
    {
        # the parts of one entry, not entries of their own
        "问题现象",
        "问题现象描述",
        "问题描述",
        "现象描述",
        "现象",
        "故障现象",
        "报错信息",
        "错误信息",
        "原因分析",
        "问题原因",
        "问题根因",
        "根因分析",
        "可能原因",
        "可能的原因及解决方法",
        "可能原因及定位思路",
        "定位思路",
        "原因及解决方法",
        "原因",
        "解决措施",
        "解决方案",
        "解决方法",
        "解决步骤",
        "解决办法",
        "处理方法",
        "处理步骤",
        "处理建议",
        "排查步骤",
        "排查方法",
        "定位方法",
        "操作步骤",
        "说明",
        "symptom",
        "symptoms",
        "description",
        "problem",
        "cause",
        "causes",
        "possible causes",
        "possible cause",
        "root cause",
        "cause analysis",
        "solution",
        "solutions",
        "resolution",
        "fix",
        "workaround",
        "procedure",
    }
)


def _heading(line: str) -> str | None:
    """The text of a markdown heading line (``## Title ##`` → ``Title``), else None: parsed with
    string methods (one pass), no regex."""
    text = line.lstrip("#")
    level = len(line) - len(text)
    if not 1 <= level <= 6 or text[:1] not in (" ", "\t"):
        return None
    return text.lstrip(" \t").rstrip(" \t#")


_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_EXPLICIT_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"'<>]+)["'][^<>]*>\s*</a>""")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ASCII_RUN = re.compile(r"[A-Za-z_][ -~]{10,}")
_QUOTED = re.compile(r"[“\"「]([^”\"」\n]{8,200})[”\"」]")
ERROR_WORDS = re.compile(
    r"(?i)error|exception|fail|fault|cannot|can't|can not|could not|couldn't|unable to|not found|"
    r"no such|not supported|unsupported|undefined symbol|not exist|invalid|illegal|denied|refused|"
    r"timeout|timed out|out of memory|abort|core dump|segmentation|mismatch|does not match|expected|"
    r"no module|not match|traceback|oom|killed|overflow|报错|错误|失败"
)


@dataclass(frozen=True)
class Entry:
    anchor: str
    title: str
    text: str
    """The entry's whole text (heading, prose and code blocks)."""
    messages: tuple[str, ...]
    """Lines of its code blocks, inline code and quoted text in the heading that look like an error
    message: what a person picks the fragments from."""


def _clean_title(raw: str) -> str:
    t = _EXPLICIT_ANCHOR.sub("", raw)
    t = re.sub(r"<[^<>]*>", "", t)
    t = re.sub(r"\\([\\`*_{}\[\]()#+\-.!<>|])", r"\1", t)
    return " ".join(t.split())


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters of any script,
    digits, ``_`` and ``-`` kept), spaces made hyphens."""
    t = re.sub(r"\[([^\[\]]*)\]\([^()]*\)", r"\1", title).lower()
    t = "".join(ch for ch in t if ch.isalnum() or ch in "_- ")
    return t.replace(" ", "-")


def _is_part(title: str) -> bool:
    t = re.sub(r"^[0-9.、)\s]+", "", title).strip(" ：:").lower()
    return t in PART_NAMES


def parse_page(text: str) -> list[Entry]:
    """The entries of a saved markdown page: a heading that is not a part name (问题现象, 原因分析,
    解决措施, Symptom, Solution …) starts an entry, which runs to the next such heading; headings
    inside code blocks are code. A heading with no text under it (a category) is no entry."""
    entries: list[tuple[str, str, list[str], list[str]]] = []  # anchor, title, lines, code lines
    seen: dict[str, int] = {}
    fence: str | None = None
    cur: tuple[str, str, list[str], list[str]] | None = None
    for line in text.splitlines():
        m_f = _FENCE.match(line)
        if m_f:
            if fence is None:
                fence = m_f.group(1)
            elif fence == m_f.group(1):
                fence = None
            if cur is not None:
                cur[2].append(line)
            continue
        if fence is None:
            heading = _heading(line)
            text = heading or ""
            if heading is not None and not (cur is not None and _is_part(_clean_title(text))):
                title = _clean_title(text)
                explicit = _EXPLICIT_ANCHOR.search(text)
                anchor = explicit.group(1) if explicit else slug(title)
                n = seen.get(anchor, 0)
                seen[anchor] = n + 1
                if n and not explicit:
                    anchor = f"{anchor}-{n}"
                cur = (anchor, title, [line], [])
                entries.append(cur)
                continue
        if cur is not None:
            cur[2].append(line)
            if fence is not None:
                cur[3].append(line)
    out: list[Entry] = []
    for anchor, title, lines, code in entries:
        if not any(x.strip() for x in lines[1:]):
            continue
        body = "\n".join(lines)
        msgs: list[str] = []
        for x in code:
            x = x.strip()
            if 8 <= len(x) <= 600 and ERROR_WORDS.search(x) and x not in msgs:
                msgs.append(x)
        prose = "\n".join(x for x in lines if x not in code)
        for m in _INLINE_CODE.finditer(prose):
            x = m.group(1).strip()
            if 8 <= len(x) <= 400 and ERROR_WORDS.search(x) and x not in msgs:
                msgs.append(x)
        for m in _QUOTED.finditer(title):
            x = m.group(1).strip()
            if x not in msgs:
                msgs.append(x)
        for m in _QUOTED.finditer(prose):
            x = m.group(1).strip()
            if ERROR_WORDS.search(x) and x not in msgs:
                msgs.append(x)
        bare = re.sub(r"`[^`\n]*`", "", lines[0])
        says_error = bool(ERROR_WORDS.search(bare) or re.search(r"(?i)warning|message", bare))
        for m in _INLINE_CODE.finditer(lines[0]):  # a message quoted in a heading that says it is one
            x = m.group(1).strip()
            if 12 <= len(x) <= 400 and says_error and x not in msgs:
                msgs.append(x)
        for m in _ASCII_RUN.finditer(title if _CJK.search(title) else ""):
            x = m.group(0).strip(" :：,.")
            if len(x) >= 12 and (ERROR_WORDS.search(x) or ".so" in x) and not any(x in y for y in msgs):
                msgs.append(x)
        for line in prose.splitlines()[1:]:
            if not _CJK.search(line):  # an English message inside Chinese prose ("报错：symbol lookup …")
                continue
            for m in _ASCII_RUN.finditer(line):
                x = m.group(0).strip(" :：,.")
                if len(x) >= 16 and ERROR_WORDS.search(x) and not any(x in y for y in msgs):
                    msgs.append(x)
        out.append(Entry(anchor, title, body, tuple(msgs)))
    return out


def normal(text: str) -> str:
    """Text as a fragment is compared with it: markdown escapes and code marks undone, spaces single."""
    return " ".join(re.sub(r"\\([\\`*_{}\[\]()#+\-.!<>|])", r"\1", text).replace("`", "").split())


def fragment_in(fragment: str, entry: Entry) -> bool:
    """Whether a row's fragment occurs verbatim in the entry (spaces and markdown escapes aside)."""
    return normal(fragment) in normal(entry.text)


# ------------------------------------------------------------------------------ the refresh diff
def refresh_diff(model: FaqFile, page_id: str, text: str) -> dict[str, Any]:
    """What a saved page holds that the table lacks or has otherwise: ``new`` (entries that show a
    message and are neither a row nor skipped: draft rows, cause left for a person), ``changed``
    (rows whose entry is gone, retitled or no longer contains a fragment), and counts."""
    entries = parse_page(text)
    by_anchor = {e.anchor: e for e in entries}
    rows: dict[str, list[Any]] = {}
    for row in model.entries:
        if row.page == page_id:
            rows.setdefault(row.anchor, []).append(row)
    page = model.pages.get(page_id)
    skipped = page.skipped if page is not None else {}
    new: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    for e in entries:
        if e.messages and e.anchor not in rows and e.anchor not in skipped:
            new.append(
                {
                    "page": page_id,
                    "anchor": e.anchor,
                    "title": e.title,
                    "messages": list(e.messages),
                    "cause": None,
                }
            )
    for anchor, row in ((a, r) for a, rs in rows.items() for r in rs):
        entry = by_anchor.get(anchor)
        if entry is None:
            changed.append({"anchor": anchor, "title": row.title, "change": "entry gone from the page"})
            continue
        if entry.title != row.title:
            changed.append({"anchor": anchor, "change": f"retitled: {row.title!r} -> {entry.title!r}"})
        lost = [f for f in row.match if not fragment_in(f, entry)]
        if lost:
            changed.append({"anchor": anchor, "change": "fragment no longer in the entry", "fragments": lost})
    changed += [
        {"anchor": a, "change": "skipped entry gone from the page"} for a in skipped if a not in by_anchor
    ]
    with_msg = [e for e in entries if e.messages]
    return {
        "page": page_id,
        "entries": len(entries),
        "with_message": len(with_msg),
        "rows": sum(len(r) for r in rows.values()),
        "skipped": len(skipped),
        "no_message": len(entries) - len(with_msg),
        "new": new,
        "changed": changed,
    }


def pages_table(model: FaqFile, folder: Path) -> str:
    """The markdown table of docs/explain.md: per page, its rows (those with a signature of their
    own), the entries skipped with why, and the entries that show no message."""
    out = [
        "| page | component | rows (own signature) | skipped | entries without a message |",
        "|---|---|---|---|---|",
    ]
    total = [0, 0, 0, 0]
    for pid, p in model.pages.items():
        d = refresh_diff(model, pid, (folder / f"{pid}.md").read_text(encoding="utf-8"))
        own = sum(1 for e in model.entries if e.page == pid and e.signature is None)
        out.append(
            f"| [{p.title}]({p.url}) | {p.component} | {d['rows']} ({own}) | {d['skipped']}"
            f" | {d['no_message']} |"
        )
        for i, n in enumerate((d["rows"], own, d["skipped"], d["no_message"])):
            total[i] += n
    out.append(f"| **{len(model.pages)} pages** | | **{total[0]} ({total[1]})** | {total[2]} | {total[3]} |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``--schema`` prints the JSON Schema; ``--import PAGE SOURCE_ID`` (or ``--import FOLDER``: every
    ``<page id>.md`` in it) prints the refresh diff of a saved page against the table."""
    import json
    import sys

    import yaml

    args = sys.argv[1:] if argv is None else argv
    if args == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
        return 0
    if len(args) == 2 and args[0] == "--pages":
        print(pages_table(load_model(shipped_path()), Path(args[1])), end="")
        return 0
    if len(args) in (2, 3) and args[0] == "--import":
        model = load_model(shipped_path())
        target = Path(args[1])
        if target.is_dir():
            ids = [args[2]] if len(args) == 3 else sorted(f.stem for f in target.glob("*.md"))
            pairs = [(i, target / f"{i}.md") for i in ids]
        elif len(args) == 3:
            pairs = [(args[2], target)]
        else:
            print(
                "--import FILE needs the page's id (a key of pages in faq.yaml, or a new one)",
                file=sys.stderr,
            )
            return 2
        dirty = False
        for page_id, path in pairs:
            diff = refresh_diff(model, page_id, path.read_text(encoding="utf-8", errors="replace"))
            dirty = dirty or bool(diff["new"] or diff["changed"])
            print(yaml.safe_dump([diff], sort_keys=False, width=200, allow_unicode=True), end="")
        return 1 if dirty else 0
    print(
        "usage: python -m cannenv.explain.faq --schema > matrices/explain/faq.schema.json\n"
        "       python -m cannenv.explain.faq --import SAVED_PAGE.md PAGE_ID\n"
        "       python -m cannenv.explain.faq --import FOLDER [PAGE_ID]   (FOLDER/<page id>.md)\n"
        "       python -m cannenv.explain.faq --pages FOLDER   (the table of docs/explain.md)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
