"""Import the version tables that MindSpeed, MindSpeed-LLM, Triton-Ascend, MindIE-Motor and MindIE-LLM
keep in their own repositories: every revision a release branch or tag holds.

Each repository keeps its stack per release in a document (:data:`DOCS`): MindSpeed-LLM's release
note (``docs/zh/release_notes_llm.md``: 表1 the release's stack, 表2/表3 Y-or-/ grids of TorchNPU
releases and CANN series) and its README's 软件版本配套表 (2.1.0 … 2.3.0); MindSpeed's release notes
(``docs/zh/release_notes_core.md``; ``docs/release_notes_mindspeed/RELEASENOTE.md`` of 2.3.0 with the
版本兼容性说明 of 2.0.0 … 2.3.0); Triton-Ascend's README (CANN 商用版 / 社区版 per release); the MindIE
READMEs' 版本说明 (MindIE release -> CANN). Read: every Markdown table whose header names the
component's own version column, and every HTML grid (a row per release, a column per TorchNPU
release or CANN series, ``Y`` or ``/``).

The artefact is a folder ``component_notes/`` holding one sub-folder per repository
(``Ascend+MindSpeed-LLM``) with each distinct document revision verbatim as
``<ref>@<commit>.<name>.md`` (``/`` in a ref name written ``+``) and ``refs.json``: for each file the
path in the repository, the full commit that last changed it, its commit date and every branch and tag
that holds the same blob. Rows read the same by several revisions name each; where a later revision
of the same document states another stack for the same release, the earlier row is kept with
``status: superseded`` and a note naming the later one; two documents that disagree are both kept.
Documents are hostile input: read bounded, parsed line by line with plain string operations, values
that do not read as versions are reported, never guessed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.errors import InputError
from cannenv.matrix import gitdocs
from cannenv.matrix.artefact import MAX_MEMBER, Provenance

FOLDER = "component_notes"
MANIFEST = "refs.json"
MAX_REPOS = 16
MAX_NOTES = 300
"""document revisions per repository (the most in a real snapshot: 31)"""
MAX_MANIFEST = 512 << 10
MAX_REFS = 96
MAX_TABLE_LINES = 400


@dataclass(frozen=True)
class Doc:
    component: str
    """the component whose releases the document's tables describe"""
    prefix: str
    """source id prefix"""
    paths: tuple[str, ...]


DOCS: dict[str, Doc] = {
    "Ascend/MindSpeed-LLM": Doc("mindspeed-llm", "MSLLM-GIT", ("docs/zh/release_notes_llm.md", "README.md")),
    "Ascend/MindSpeed": Doc(
        "mindspeed",
        "MINDSPEED-GIT",
        ("docs/zh/release_notes_core.md", "docs/release_notes_mindspeed/RELEASENOTE.md"),
    ),
    "Ascend/triton-ascend": Doc("triton-ascend", "TRITON-ASCEND-GIT", ("README_zh.md",)),
    "Ascend/MindIE-Motor": Doc("mindie", "MINDIE-MOTOR-GIT", ("README.md",)),
    "Ascend/MindIE-LLM": Doc("mindie", "MINDIE-LLM-GIT", ("README.md",)),
}
"""The repositories read, the component their tables describe and the documents holding them."""

_REPO_DIR = re.compile(
    r"^(?P<owner>[A-Za-z0-9][A-Za-z0-9_.-]{0,38})\+(?P<name>[A-Za-z0-9][A-Za-z0-9_.-]{0,99})\Z"
)
_REF = re.compile(r"^refs/(heads|tags)/[A-Za-z0-9][A-Za-z0-9._-]{0,80}(/[A-Za-z0-9][A-Za-z0-9._-]{0,80})?\Z")
_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]{0,200}\.md\Z")
_NAME = re.compile(
    r"^(?P<ref>[A-Za-z0-9][A-Za-z0-9._+-]{0,120})@(?P<commit>[0-9a-f]{9})\.(?P<base>[A-Za-z0-9_][A-Za-z0-9_-]{0,80})\.md\Z"
)
_VALUE = re.compile(r"^[0-9][0-9A-Za-z.+_-]{0,40}\Z")
"""a version as the tables write it: 9.1.0, 8.3.RCX, 8.5.X, 26.0.0_core_r0.12.1, 3.2.0rc4"""
_WORD_VALUE = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,40}\Z")
"""a Megatron tag (core_v0.12.1)"""
_MANIFEST_RULES = gitdocs.ManifestRules(
    name=_NAME,
    path=_PATH,
    ref=_REF,
    max_bytes=MAX_MANIFEST,
    max_entries=MAX_NOTES,
    max_refs=MAX_REFS,
    saved_by="cannenv matrix save-component-notes",
)

# Header words -> component key (checked in order: the longer names first).
_HEADERS: tuple[tuple[str, str], ...] = (
    ("发布日期", ""),
    ("release date", ""),
    ("mindspeed llm", "mindspeed-llm"),
    ("mindspeed core", "mindspeed-core"),
    ("mindspeed mm", ""),
    ("mindspeed rl", ""),
    ("mindspeed", "mindspeed-core"),
    ("megatron", "megatron"),
    ("ascend extension for pytorch", "torchnpu"),
    ("torchnpu", "torchnpu"),
    ("torch_npu", "torchnpu"),
    ("pytorch", "torch"),
    ("triton-ascend", "triton-ascend"),
    ("cann", "cann"),
    ("python", "python"),
    ("mindie", "mindie"),
)
_ORDER = (
    "cann",
    "torchnpu",
    "torch",
    "triton-ascend",
    "python",
    "mindspeed-core",
    "megatron",
    "mindspeed-llm",
)
"""the order requirements are written in (what an answer names first)"""
_SUBJECT_KEY = {"mindspeed": "mindspeed-core"}
"""the header key of a component's own version column where it differs from the component name"""


@dataclass(frozen=True)
class TableRow:
    """One release's row of one table: the values each column names (a set, as written)."""

    version: str
    requires: dict[str, tuple[str, ...]]
    table: str
    """the table's title (``表 1  MindSpeed LLM软件版本配套表``)"""
    kind: str
    """'stack' (a release's stack) or 'grid' (a Y-or-/ compatibility grid)"""
    excluded: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """grid: the values marked '/' (not compatible)"""
    label: str | None = None
    """the version as written where it differs (a branch name ``26.1.0_core_r0.12.1``)"""


@dataclass
class DocImport:
    repository: str
    ref: str
    commit: str
    file: str
    sha256: str
    path: str | None = None
    full_commit: str | None = None
    date: str | None = None
    refs: tuple[str, ...] = ()
    rows: list[TableRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def doc(self) -> Doc:
        return DOCS[self.repository]

    @property
    def source_id(self) -> str:
        return f"{self.doc.prefix}:{self.ref}:{self.commit}"

    @property
    def provenance(self) -> Provenance:
        return Provenance(
            self.repository,
            self.ref,
            f"{self.path or self.file}@{self.full_commit or self.commit}",
            self.sha256,
        )

    @property
    def statement_doc(self) -> str:
        name = self.repository.split("/", 1)[1]
        kind = "release note" if "release" in (self.path or self.file).lower() else "README"
        return f"{name} {kind} ({self.path or self.file})"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _key(header: str) -> str | None:
    """The component key a column header names ('' : a column read by no one; None: unknown)."""
    h = " ".join(gitdocs.strip_tags(header).replace("&nbsp;", " ").lower().split())
    for word, key in _HEADERS:
        if word in h:
            return key
    return None


def _values(cell: str) -> list[str]:
    """The versions a cell names: ``<br>``, ``、``, ``/`` and ``,`` separate; ``商用版：`` labels, a
    ``CANN`` / ``Python`` prefix and a parenthesised remark (``2.3.0（商用）``) are dropped."""
    text = cell.replace("&nbsp;", " ")
    for br in ("<br/>", "<br />", "</br>", "<br>", "、", ",", "，"):
        text = text.replace(br, "\n")
    out: list[str] = []
    for part in text.split("\n"):
        part = gitdocs.strip_tags(part)
        for sep in ("：", ":"):
            if sep in part:
                part = part.split(sep, 1)[1]
        for paren in ("（", "("):
            part = part.split(paren, 1)[0]
        part = part.replace("*", "").strip()
        for word in ("CANN", "Python", "python"):
            part = part.removeprefix(word).strip()
        for piece in part.split("/") if "_core_" not in part else [part]:
            piece = piece.strip()
            if piece.endswith(".x"):
                piece = piece[:-2]
            if piece and piece not in out:
                out.append(piece)
    return out


def _title(lines: list[str], at: int) -> str:
    """The table's title: the nearest ``**表 N** …`` line above it, else the nearest heading."""
    for i in range(at - 1, max(-1, at - 12), -1):
        s = lines[i].strip()
        if s.startswith("**表") or s.startswith("**Table"):
            return " ".join(s.replace("**", "").split())
    label = ""
    for i in range(at - 1, max(-1, at - 4), -1):
        s = lines[i].strip()
        if s.startswith("- ") and len(s) < 40:  # '- 商用版' / '- 社区版' above the table
            label = " / " + s[2:].strip()
            break
    for i in range(at - 1, max(-1, at - 60), -1):
        s = lines[i].strip()
        if s.startswith("#"):
            return " ".join(s.lstrip("#").replace("⚡️", "").replace("📢", "").split()) + label
    return "table" + label


def parse_doc(text: str, imp: DocImport) -> DocImport:
    """Fill ``imp.rows`` from one document's text."""
    lines = text.splitlines()
    subject = _SUBJECT_KEY.get(imp.doc.component, imp.doc.component)
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _is_rule(lines[i + 1]):
            end = i + 2
            while end < len(lines) and lines[end].lstrip().startswith("|") and end - i < MAX_TABLE_LINES:
                end += 1
            _markdown_table(lines, i, end, subject, imp)
            i = end
            continue
        if "<table" in line:
            end = i
            while end < len(lines) and "</table>" not in lines[end] and end - i < MAX_TABLE_LINES:
                end += 1
            _grid(lines, i, end, subject, imp)
            i = end + 1
            continue
        i += 1
    return imp


def _is_rule(line: str) -> bool:
    s = line.strip()
    return s.startswith("|") and "-" in s and all(ch in "|-: " for ch in s)


def _version_of(cell: str, subject: str) -> tuple[str, str | None] | None:
    vals = _values(cell)
    if len(vals) != 1 or not _VALUE.match(vals[0]):
        return None  # master（在研版本）, '-': no release
    v = vals[0]
    if subject == "mindspeed-core" and "_core_" in v:
        return v.split("_core_", 1)[0], v
    return v, None


def _markdown_table(lines: list[str], start: int, end: int, subject: str, imp: DocImport) -> None:
    header = [_key(c) for c in _cells(lines[start])]
    if subject not in header:
        return
    col = header.index(subject)
    table = _title(lines, start)
    merged: dict[str, tuple[dict[str, list[str]], str | None]] = {}
    for n in range(start + 2, end):
        cells = _cells(lines[n])
        if len(cells) < len(header):
            imp.warnings.append(
                f"{imp.file}:{n + 1}: {len(cells)} cells under {len(header)} headers; skipped"
            )
            continue
        got = _version_of(cells[col], subject)
        if got is None:
            continue
        version, label = got
        req, _ = merged.setdefault(version, ({}, label))
        for k, key in enumerate(header):
            if k == col or not key:
                continue
            for v in _values(cells[k]):
                if v in ("-", "—"):
                    continue
                if not (_VALUE.match(v) or (key == "megatron" and _WORD_VALUE.match(v))):
                    if v not in ("在研版本",):
                        imp.warnings.append(f"{imp.file}:{n + 1}: {key} {v[:40]!r} is not a version; skipped")
                    continue
                if v not in req.setdefault(key, []):
                    req[key].append(v)
    for version, (req, label) in merged.items():
        requires = {k: tuple(v) for k, v in req.items() if v}
        if requires:
            imp.rows.append(TableRow(version, requires, table, "stack", label=label))


def _tag_cells(row: str) -> list[str]:
    """The text of each <th>/<td> of one <tr> (linear: one split per tag name)."""
    out: list[str] = []
    for piece in row.replace("<th", "<td").split("<td")[1:]:
        body = piece.split(">", 1)[1] if ">" in piece else ""
        out.append(gitdocs.strip_tags("<x>" + body.split("</t", 1)[0]))
    return out


def _grid(lines: list[str], start: int, end: int, subject: str, imp: DocImport) -> None:
    block = "\n".join(lines[start : end + 1])
    rows = [r.split("</tr>", 1)[0] for r in block.split("<tr")[1:]]
    if len(rows) < 3:
        return
    head = _tag_cells(rows[0])
    keys = [_key(c) for c in head]
    if len(head) != 2 or keys[0] != subject or keys[1] not in ("torchnpu", "cann"):
        return
    key = keys[1]
    assert key is not None
    columns = _tag_cells(rows[1])
    if not columns or not all(_VALUE.match(c) for c in columns):
        imp.warnings.append(f"{imp.file}:{start + 1}: grid columns {columns[:6]} are not versions; skipped")
        return
    table = _title(lines, start)
    for r in rows[2:]:
        cells = _tag_cells(r)
        if len(cells) != len(columns) + 1:
            continue
        got = _version_of(cells[0], subject)
        if got is None:
            continue
        version, label = got
        marks = cells[1:]
        if any(m not in ("Y", "/") for m in marks):
            imp.warnings.append(
                f"{imp.file}: {table}: row {cells[0][:40]!r}: marks other than Y and /; skipped"
            )
            continue
        yes = tuple(c for c, m in zip(columns, marks, strict=True) if m == "Y")
        no = tuple(c for c, m in zip(columns, marks, strict=True) if m == "/")
        if yes:
            imp.rows.append(TableRow(version, {key: yes}, table, "grid", {key: no} if no else {}, label))


# ------------------------------------------------------------------------------------------ folder


def read_manifest(folder: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """``refs.json`` of one repository's folder, validated: (repository, file -> entry)."""
    p = folder / MANIFEST
    if not p.is_file() or p.is_symlink():
        raise InputError(
            f"{folder}: no {MANIFEST}", hint="write the folder with `cannenv matrix save-component-notes`"
        )
    doc, entries = gitdocs.read_manifest(p, _MANIFEST_RULES)
    repo = doc.get("repository")
    if repo not in DOCS:
        raise InputError(f"{p}: repository {str(repo)[:80]!r} is not one cannenv reads", hint=", ".join(DOCS))
    for n, (name, e) in enumerate(entries.items()):
        where = f"{p}: notes[{n}]"
        if e["path"] not in DOCS[repo].paths:
            raise InputError(
                f"{where}.path: {e['path']} is not a document cannenv reads from {repo}", hint=""
            )
        m = _NAME.match(name)
        assert m is not None
        if Path(e["path"]).stem != m["base"]:
            raise InputError(f"{where}: {name} is not named after {e['path']}", hint="")
    return repo, entries


def read_folder(folder: Path) -> list[DocImport]:
    """Every repository sub-folder of ``component_notes/``: each saved document revision, parsed."""
    out: list[DocImport] = []
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    if len(subs) > MAX_REPOS:
        raise InputError(f"{folder}: more than {MAX_REPOS} repositories", hint="one folder per repository")
    for sub in subs:
        if not _REPO_DIR.match(sub.name):
            raise InputError(f"{sub}: not an <owner>+<repository> folder", hint="e.g. Ascend+MindSpeed-LLM")
        repo, manifest = read_manifest(sub)
        if sub.name != repo.replace("/", "+"):
            raise InputError(
                f"{sub}: its {MANIFEST} names {repo}", hint="one folder per repository, named after it"
            )
        files = sorted(p for p in sub.iterdir() if _NAME.match(p.name) and p.is_file() and not p.is_symlink())
        if len(files) > MAX_NOTES:
            raise InputError(f"{sub}: more than {MAX_NOTES} documents", hint="")
        for name in manifest:
            if not (sub / name).is_file():
                raise InputError(f"{sub / MANIFEST}: names {name}, which is not in the folder", hint="")
        for p in files:
            m = _NAME.match(p.name)
            assert m is not None
            meta = manifest.get(p.name)
            if meta is None:
                raise InputError(f"{p}: not in {MANIFEST}", hint="the manifest names every saved document")
            with p.open("rb") as fh:
                data = fh.read(MAX_MEMBER + 1)
            if len(data) > MAX_MEMBER:
                raise InputError(f"{p}: more than {MAX_MEMBER} bytes", hint="a README or release note")
            imp = DocImport(
                repo, m["ref"].replace("+", "/"), m["commit"], p.name, hashlib.sha256(data).hexdigest()
            )
            imp.path, imp.full_commit, imp.date, imp.refs = (
                meta["path"],
                meta["commit"],
                meta["date"],
                meta["refs"],
            )
            out.append(parse_doc(data.decode("utf-8", "replace"), imp))
    return out


def _ref_names(imp: DocImport) -> str:
    return ", ".join(r.split("/", 2)[2] for r in imp.refs) or imp.ref


def component_rows(imports: list[DocImport]) -> list[dict[str, Any]]:
    """``components`` rows from every document revision (see the module docstring)."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    stated_by: dict[tuple[Any, ...], list[DocImport]] = {}
    newest: dict[tuple[str, str, str, str], DocImport] = {}
    for imp in sorted(imports, key=lambda i: (gitdocs.instant(i.date or ""), i.file)):
        for r in imp.rows:
            for crow in _rows_of(imp, r):
                topic = (
                    imp.repository,
                    imp.path or "",
                    crow["component"],
                    crow["version"] + "\0" + crow["statement"],
                )
                newest[topic] = imp
                key = (topic, tuple(sorted((k, tuple(v)) for k, v in crow["requires"].items())))
                have = rows.get(key)
                if have is None:
                    rows[key] = crow
                    stated_by[key] = [imp]
                elif imp.source_id not in have["sources"]:
                    have["sources"].append(imp.source_id)
                    stated_by[key].append(imp)
    out = []
    for key, crow in rows.items():
        latest = newest[key[0]]
        if latest not in stated_by[key]:
            crow["status"] = "superseded"
            later = [r for k, r in rows.items() if k[0] == key[0] and latest in stated_by[k]]
            now = "; ".join(", ".join(f"{k} {'/'.join(v)}" for k, v in r["requires"].items()) for r in later)
            crow["note"] = (
                (crow.get("note", "") + " ").lstrip()
                + f"the later revision ({_ref_names(latest)}, {latest.date}) states {now or 'no row for it'}"
            )
        out.append(crow)
    return out


def _rows_of(imp: DocImport, r: TableRow) -> list[dict[str, Any]]:
    stmt = f"{imp.statement_doc}, {r.table}"
    order = {k: n for n, k in enumerate(_ORDER)}
    requires = {
        k: list(r.requires[k]) for k in sorted(r.requires, key=lambda k: (order.get(k, len(order)), k))
    }
    row: dict[str, Any] = {
        "component": imp.doc.component,
        "version": r.version,
        "requires": requires,
        "statement": stmt,
        "sources": [imp.source_id],
    }
    notes = []
    if r.label:
        notes.append(f"written {r.label}")
    if r.kind == "grid":
        row["evidence"] = "declared"
        no = "; ".join(f"{k} {', '.join(v)}" for k, v in r.excluded.items() if v)
        if no:
            notes.append(f"'/' (not compatible): {no}")
    if notes:
        row["note"] = "; ".join(notes)
    out = [row]
    # Triton-Ascend is bound one-to-one to a CANN release ('Triton-Ascend版本与CANN版本强绑定'): a
    # stack row naming both is also Triton-Ascend's statement.
    if r.kind == "stack" and imp.doc.component != "triton-ascend":
        for t in r.requires.get("triton-ascend", ()):
            if r.requires.get("cann"):
                out.append(
                    {
                        "component": "triton-ascend",
                        "version": t,
                        "requires": {"cann": list(r.requires["cann"])},
                        "statement": f"{stmt} (Triton-Ascend {t} with CANN {', '.join(r.requires['cann'])})",
                        "sources": [imp.source_id],
                    }
                )
    return out


def matrix_doc(imports: list[DocImport]) -> dict[str, Any]:
    """The documents as a matrix file: a source per revision, the component rows."""
    sources = []
    for imp in sorted(imports, key=lambda i: (i.repository, gitdocs.instant(i.date or ""), i.file)):
        if not any(imp.source_id in c["sources"] for c in component_rows([imp])):
            continue  # a revision with no version table (an old README) cites nothing
        sources.append(
            {
                "id": imp.source_id,
                "title": f"{imp.statement_doc}, held by {_ref_names(imp)}",
                "where": f"{imp.repository} {imp.ref}:{imp.path} @ {imp.full_commit or imp.commit}"
                + (f" ({imp.date})" if imp.date else "")
                + f" (sha256 {imp.sha256})",
                "url": f"https://github.com/{imp.repository}/blob/{imp.full_commit or imp.commit}/{imp.path}",
            }
        )
    return {"schema_version": 1, "sources": sources, "components": component_rows(imports)}


# ------------------------------------------------------------------------------------------- save


def save_from_git(git_dir: Path, repository: str, folder: Path) -> list[dict[str, Any]]:
    """Write ``folder/<owner>+<repo>/`` (documents + ``refs.json``) from a clone of ``repository``:
    one file per distinct blob of its :data:`DOCS` paths that any branch or tag holds, named after a
    branch holding it (else the first tag) and the commit that last changed it. The walk is
    :meth:`cannenv.matrix.gitdocs.Clone.revisions`. Returns the entries."""
    from cannenv.fsutil import atomic_write_text
    from cannenv.matrix.gitdocs import Clone

    if repository not in DOCS:
        raise InputError(f"repository {repository!r} is not one cannenv reads", hint=", ".join(DOCS))
    clone = Clone(git_dir, repository)
    revisions = clone.revisions(DOCS[repository].paths, _REF, limit=MAX_NOTES, what="documents")
    out = folder / repository.replace("/", "+")
    out.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    without: list[dict[str, Any]] = []
    for rev in revisions:
        ref = (sorted(rev.heads) or sorted(rev.names))[0]
        name = f"{ref.replace('/', '+')}@{rev.commit[:9]}.{Path(rev.path).stem}.md"
        text = clone.blob_text(rev.blob, MAX_MEMBER)
        entry: dict[str, Any] = {
            "file": name,
            "path": rev.path,
            "commit": rev.commit,
            "date": rev.date,
            "blob": rev.blob,
        }
        entry["refs"] = sorted(rev.refs)
        if not parse_doc(text, DocImport(repository, ref, rev.commit[:9], name, "")).rows:
            # a revision with no version table this module reads (an old README's prose or vertical
            # table): listed, so the record shows it was looked at, not saved
            del entry["file"]
            without.append(entry)
            continue
        atomic_write_text(out / name, text)
        entries.append(entry)
    entries.sort(key=lambda x: (gitdocs.instant(x["date"]), x["file"]))
    without.sort(key=lambda x: (gitdocs.instant(x["date"]), x["path"]))
    doc = {"repository": repository, "notes": entries, "without_tables": without}
    atomic_write_text(out / MANIFEST, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return entries
