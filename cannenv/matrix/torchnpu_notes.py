"""Import the TorchNPU (Ascend Extension for PyTorch) release notes: every revision a release tag or
release branch of Ascend/pytorch holds.

The Ascend/pytorch repository keeps a release note per TorchNPU release (``docs/zh/release_notes/
release_notes.md`` on the ``v2.7.1-<release>`` branches and the ``v<release>-pytorch2.7.1`` tags,
``docs/zh/release_notes.md`` on master). The vendor revises a note after its release (the 26.1.0 tag's
grid marks TorchNPU 7.3.0 with CANN 9.0.0 "/", not compatible; the v2.7.1-26.1.0 branch's later
revision marks 7.3.X with 9.0.X "Y"), so every revision is imported: what a later revision of the same
release's note contradicts is kept with ``status: superseded`` (both statements are recorded). Each
note holds two tables this module reads:

* 相关产品版本配套说明 (the pairing table): CANN | PyTorch | TorchNPU release | branch | package version
  | Python versions. Each line is a vendor pairing (evidence ``recommended``) with its Python column.
* 版本兼容性说明 (compatibility): either a Markdown table ``release | CANN 9.0.0<br>CANN 8.5.0 …`` or an
  HTML grid of release lines (``7.3.X``) against CANN series (``9.1.X``) with ``Y`` cells.

The artefact is a folder ``torchnpu_release_notes/`` holding each distinct note verbatim as
``<ref>@<commit>.md`` (``git show <ref>:<path>`` of a clone; tests/data/vendor_refresh/README.md has the
commands) and ``refs.json``: for each file, the path in the repository, the full commit that last
changed it, that commit's date and every branch and tag that holds the same blob. The ref, path and
commit become the source; the date orders revisions of one release's note. Notes are hostile input:
read bounded, parsed line by line with plain string operations; a row that does not read as versions
is reported, never guessed; ``refs.json`` is validated field by field.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.errors import InputError, VersionError
from cannenv.matrix import gitdocs
from cannenv.matrix.artefact import MAX_MEMBER, Provenance

FOLDER = "torchnpu_release_notes"
MANIFEST = "refs.json"
REPO_URL = "https://gitcode.com/Ascend/pytorch"
MAX_NOTES = 200
MAX_MANIFEST = 256 << 10
MAX_REFS = 64
"""refs one note may name in the manifest (the most in a real snapshot: 3)"""
_REF = re.compile(r"^refs/(heads|tags)/[A-Za-z0-9][A-Za-z0-9._-]{0,80}\Z")
_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./-]{0,200}\.md\Z")
_NOT_COMPATIBLE = ("“/”代表不兼容", "“/”表示不兼容", '"/"代表不兼容', '"/"表示不兼容')
_NAME = re.compile(r"^(?P<ref>[A-Za-z0-9][A-Za-z0-9._-]{0,80})@(?P<commit>[0-9a-f]{7,40})\.md\Z")
_PY = re.compile(r"Python\s?(3)\.(\d{1,2})")
_SERIES = re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}(\.[0-9A-Za-z]{1,12})+\Z")
_MANIFEST_RULES = gitdocs.ManifestRules(
    name=_NAME,
    path=_PATH,
    ref=_REF,
    max_bytes=MAX_MANIFEST,
    max_entries=MAX_NOTES,
    max_refs=MAX_REFS,
    saved_by="cannenv matrix save-release-notes",
)


@dataclass(frozen=True)
class NotePair:
    """A line of the pairing table."""

    cann: str
    torch: str
    release: str
    branch: str
    torch_npu: str
    python: tuple[str, ...]


@dataclass(frozen=True)
class NoteCompat:
    """A compatibility statement: TorchNPU releases (or lines) with CANN releases (or series)."""

    torchnpu: tuple[str, ...]
    cann: tuple[str, ...]
    compatible: bool
    table: str
    """'list' (the Markdown table) or 'grid' (the Y/N grid)"""
    mark: str = "Y"
    """the cell as written (Y, N, or / where the note's legend says / is not compatible)"""


@dataclass
class NoteImport:
    ref: str
    commit: str
    path: str
    sha256: str
    release: str | None = None
    """the release the note is for (产品版本, else the pairing table's)"""
    pairs: list[NotePair] = field(default_factory=list)
    compat: list[NoteCompat] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    doc_path: str | None = None
    """the note's path in the repository (refs.json); None when the manifest does not name it"""
    full_commit: str | None = None
    date: str | None = None
    """the commit date of the revision (ISO 8601, refs.json): orders revisions of one release"""
    refs: tuple[str, ...] = ()
    """every branch and tag that holds this revision (refs.json)"""

    @property
    def source_id(self) -> str:
        return f"TNPU-RN-{self.release or self.ref}"

    @property
    def provenance(self) -> Provenance:
        where = f"{self.doc_path}@{self.full_commit or self.commit}" if self.doc_path else self.path
        return Provenance("Ascend/pytorch", self.ref, where, self.sha256)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _br_items(cell: str) -> list[str]:
    """``商用版：9.0.0<br>社区版：9.0.0`` -> [9.0.0]; ``CANN 8.5.0<br>CANN 8.3.RC1`` -> [8.5.0, 8.3.RC1]."""
    out: list[str] = []
    for part in cell.replace("<br/>", "<br>").replace("<br />", "<br>").split("<br>"):
        part = gitdocs.strip_tags(part)
        for sep in ("：", ":"):
            if sep in part:
                part = part.split(sep, 1)[1]
        part = part.strip().removeprefix("CANN").strip()
        if part and part not in out:
            out.append(part)
    return out


def _pythons(cell: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f"{m.group(1)}.{m.group(2)}" for m in _PY.finditer(cell[:2000])))


def _valid(family: str, text: str) -> bool:
    from cannenv.versions import parse_version

    try:
        parse_version(family, text)  # type: ignore[arg-type]
    except VersionError:
        return False
    return True


def parse_note(text: str, imp: NoteImport) -> NoteImport:
    """Fill ``imp`` from one release note's text."""
    lines = text.splitlines()
    header: list[str] | None = None
    table = ""
    slash_is_no = any(w in text for w in _NOT_COMPATIBLE)
    for i, line in enumerate(lines):
        if imp.release is None and "产品版本" in line and i + 1 < len(lines):
            found = gitdocs.strip_tags(lines[i + 1])
            if _SERIES.match(found):
                imp.release = found
        if not line.lstrip().startswith("|"):
            header, table = None, ""
            continue
        cells = _cells(line)
        if header is None:
            joined = "".join(cells)
            if "安装包版本" in joined and "Python" in joined and "CANN" in joined:
                header, table = cells, "pairs"
            elif len(cells) >= 2 and "CANN版本" in cells[1] and "PyTorch" in cells[0] + cells[1] + "TorchNPU":
                header, table = cells, "compat"
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        if table == "pairs":
            _pair_row(dict(zip(header, cells, strict=False)), imp, line)
        elif table == "compat" and len(cells) >= 2:
            release = gitdocs.strip_tags(cells[0])
            canns = [c for c in _br_items(cells[1]) if _SERIES.match(c)]
            if _SERIES.match(release) and canns:
                imp.compat.append(NoteCompat((release,), tuple(canns), True, "list"))
            else:
                imp.warnings.append(f"{imp.path}: compatibility row {line.strip()[:60]!r} not read")
    imp.compat.extend(_grid(lines, imp, slash_is_no=slash_is_no))
    if imp.release is None and imp.pairs:
        imp.release = imp.pairs[0].release
    return imp


def _pair_row(rec: dict[str, str], imp: NoteImport, line: str) -> None:
    def col(*words: str) -> str:
        for k, v in rec.items():
            if all(w in k for w in words):
                return v
        return ""

    canns = [c for c in _br_items(col("CANN")) if _valid("cann", c)]
    torch = gitdocs.strip_tags(col("PyTorch版本"))
    tnpu = gitdocs.strip_tags(col("安装包版本"))
    branch = gitdocs.strip_tags(col("分支"))
    release = next(
        (
            gitdocs.strip_tags(v)
            for k, v in rec.items()
            if k.endswith("版本")
            and "PyTorch" not in k
            and "CANN" not in k
            and "Python" not in k
            and "安装包" not in k
        ),
        "",
    )
    python = _pythons(col("Python"))
    if not (canns and _valid("pep440", torch) and _valid("pep440", tnpu) and branch):
        imp.warnings.append(f"{imp.path}: pairing row {line.strip()[:60]!r} not read (not versions)")
        return
    if not _SERIES.match(release) and "-" in branch:
        release = branch.rsplit("-", 1)[1]
    for cann in canns:
        imp.pairs.append(NotePair(cann, torch, release, branch, tnpu, python))


def _grid(lines: list[str], imp: NoteImport, *, slash_is_no: bool = False) -> list[NoteCompat]:
    """The HTML Y/N grid of 版本兼容性说明: header cells after 'CANN版本' are CANN series; each body
    row is a TorchNPU line followed by one cell per series. A ``/`` cell is "not compatible" only where
    the note's legend says so (the 26.1.0 tag's: “Y”代表兼容，“/”代表不兼容); else it is no statement."""
    marks_no = ("N", "/") if slash_is_no else ("N",)
    out: list[NoteCompat] = []
    in_section = False
    series: list[str] = []
    row: list[str] = []
    in_body = False
    for line in lines:
        s = line.strip()
        if s.startswith("## "):
            in_section = "版本兼容性说明" in s
            series, row, in_body = [], [], False
            continue
        if not in_section:
            continue
        if s.startswith("<th"):
            text = gitdocs.strip_tags(s)
            if _SERIES.match(text):
                series.append(text)
        elif s.startswith("<tbody"):
            in_body = True
        elif in_body and s.startswith("<td"):
            row.append(gitdocs.strip_tags(s))
        elif in_body and s.startswith("</tr") and row:
            line_id, marks = row[0], row[1:]
            if _SERIES.match(line_id) and len(marks) == len(series):
                for mark, cann in zip(marks, series, strict=True):
                    if mark == "Y" or mark in marks_no:
                        out.append(NoteCompat((line_id,), (cann,), mark == "Y", "grid", mark))
            else:
                imp.warnings.append(f"{imp.path}: grid row {row!r} does not match the header {series!r}")
            row = []
    return out


def read_manifest(folder: Path) -> dict[str, dict[str, Any]]:
    """``refs.json`` of the folder, validated: file name -> {path, commit, date, refs}. Absent: {}."""
    p = folder / MANIFEST
    if not p.is_file() or p.is_symlink():
        return {}
    return gitdocs.read_manifest(p, _MANIFEST_RULES)[1]


def read_folder(folder: Path) -> list[NoteImport]:
    """Every ``<ref>@<commit>.md`` in ``folder`` with what ``refs.json`` says of it (other files are
    reported by the caller)."""
    out: list[NoteImport] = []
    entries = sorted(
        p for p in folder.iterdir() if _NAME.match(p.name) and p.is_file() and not p.is_symlink()
    )
    if len(entries) > MAX_NOTES:
        raise InputError(f"{folder}: more than {MAX_NOTES} release notes", hint="one file per release branch")
    manifest = read_manifest(folder)
    for name in manifest:
        if not (folder / name).is_file():
            raise InputError(f"{folder / MANIFEST}: names {name}, which is not in the folder", hint="")
    for p in entries:
        m = _NAME.match(p.name)
        assert m is not None
        with p.open("rb") as fh:
            data = fh.read(MAX_MEMBER + 1)
        if len(data) > MAX_MEMBER:
            raise InputError(f"{p}: more than {MAX_MEMBER} bytes", hint="a release note is a few kB")
        imp = NoteImport(m["ref"], m["commit"], p.name, hashlib.sha256(data).hexdigest())
        meta = manifest.get(p.name)
        if meta is not None:
            imp.doc_path, imp.full_commit, imp.date = meta["path"], meta["commit"], meta["date"]
            imp.refs = meta["refs"]
        elif manifest:
            imp.warnings.append(f"{p.name}: not in {MANIFEST} (path, date and refs unknown)")
        out.append(parse_note(data.decode("utf-8", "replace"), imp))
    return out


def _ref_names(imp: NoteImport) -> str:
    return ", ".join(r.split("/", 2)[2] for r in imp.refs) if imp.refs else imp.ref


def _newest(imports: list[NoteImport]) -> dict[str, NoteImport]:
    """For each release: its newest revision (by commit date; only notes with a date take part)."""
    out: dict[str, NoteImport] = {}
    for imp in imports:
        if imp.release is None or imp.date is None:
            continue
        have = out.get(imp.release)
        if have is None or gitdocs.instant(imp.date) > gitdocs.instant(have.date or ""):
            out[imp.release] = imp
    return out


def _covers(newer: NoteCompat, older: NoteCompat) -> bool:
    """Whether ``newer`` speaks of every (release, CANN) pair ``older`` states."""
    from cannenv.matrix.model import series_matches

    def line(pattern: str, release: str) -> bool:
        p, r = pattern.lower().split("."), release.lower().split(".")
        return r[: len(p) - 1] == p[:-1] if p[-1] == "x" else (r == p or pattern == release)

    def cann(pattern: str, value: str) -> bool:
        try:
            return pattern == value or series_matches("cann", pattern, value.replace("X", "0"))
        except VersionError:
            return False

    return all(any(line(n, o) for n in newer.torchnpu) for o in older.torchnpu) and all(
        any(cann(n, o) for n in newer.cann) for o in older.cann
    )


def matrix_doc(imports: list[NoteImport]) -> dict[str, Any]:
    """The notes as a matrix file: sources, torch_npu rows (with Python), compatibility rows.
    Where several notes state the same row, the row names each. Where a later revision of the same
    release's note states otherwise (another Python column, the opposite compatibility mark), the
    earlier statement is kept with ``status: superseded`` and a note naming the later one."""
    doc: dict[str, Any] = {"schema_version": 1, "sources": [], "torch_npu": [], "torch_npu_compat": []}
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    compat: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen_sources: set[str] = set()
    newest = _newest(imports)
    ordered = sorted(imports, key=lambda i: (i.release or "", gitdocs.instant(i.date or ""), i.ref))
    for imp in ordered:
        sid = f"{imp.source_id}:{imp.ref}"
        latest = newest.get(imp.release or "")
        later = latest if latest is not None and latest is not imp and imp.date is not None else None
        if sid not in seen_sources:
            seen_sources.add(sid)
            path = imp.doc_path or "?"
            held = f"held by {_ref_names(imp)}" if imp.refs else f"branch {imp.ref}"
            doc["sources"].append(
                {
                    "id": sid,
                    "title": f"TorchNPU {imp.release or '?'} release note "
                    f"(版本配套说明, 版本兼容性说明), {held}",
                    "where": f"Ascend/pytorch {imp.ref}:{path} @ {imp.full_commit or imp.commit}"
                    + (f" ({imp.date})" if imp.date else "")
                    + f" (sha256 {imp.sha256})",
                    "url": f"{REPO_URL}/blob/{imp.ref}/{imp.doc_path or ''}",
                }
            )
        newer_pairs = {}
        if later is not None:
            newer_pairs = {(p.torch_npu, p.torch, p.cann, p.branch): p.python for p in later.pairs}
        for p in imp.pairs:
            key = (p.torch_npu, p.torch, p.cann, p.branch, p.python)
            row = rows.get(key)
            if row is None:
                rows[key] = {
                    "torch_npu": p.torch_npu,
                    "torch": p.torch,
                    "cann": p.cann,
                    "branch": p.branch,
                    "table": "active",
                    "python": list(p.python),
                    "sources": [sid],
                    "note": f"TorchNPU {p.release} release note, 相关产品版本配套说明",
                }
                now = newer_pairs.get((p.torch_npu, p.torch, p.cann, p.branch))
                if later is not None and now is not None and now != p.python:
                    rows[key]["status"] = "superseded"
                    rows[key]["note"] += (
                        f" ({_ref_names(imp)}, {imp.date}); the later revision ({_ref_names(later)}, "
                        f"{later.date}) states Python {', '.join(now)}"
                    )
            elif sid not in row["sources"]:
                row["sources"].append(sid)
        for c in imp.compat:
            ckey = (c.torchnpu, c.cann, c.compatible, c.table, imp.release)
            have = compat.get(ckey)
            if have is None:
                mark = "Y" if c.compatible else "N"
                said = f" (written “{c.mark}”)" if c.mark not in ("Y", "N") else ""
                compat[ckey] = {
                    "torchnpu": list(c.torchnpu),
                    "cann": list(c.cann),
                    "compatible": c.compatible,
                    "statement": f"TorchNPU {imp.release} release note, 版本兼容性说明: TorchNPU "
                    f"{', '.join(c.torchnpu)} with CANN {', '.join(c.cann)}: {mark}{said}",
                    "sources": [sid],
                }
                if later is not None:
                    against = [n for n in later.compat if n.compatible != c.compatible and _covers(n, c)]
                    if against:
                        n = against[0]
                        compat[ckey]["status"] = "superseded"
                        compat[ckey]["note"] = (
                            f"{_ref_names(imp)} ({imp.date}); the later revision ({_ref_names(later)}, "
                            f"{later.date}) states TorchNPU {', '.join(n.torchnpu)} with CANN "
                            f"{', '.join(n.cann)}: {'Y' if n.compatible else 'N'}"
                        )
            elif sid not in have["sources"]:
                have["sources"].append(sid)
    doc["torch_npu"] = list(rows.values())
    doc["torch_npu_compat"] = list(compat.values())
    return doc


NOTE_PATHS = ("docs/zh/release_notes.md", "docs/zh/release_notes/release_notes.md")
"""where Ascend/pytorch keeps the Chinese release note (master; the release branches and tags)"""


def save_from_git(git_dir: Path, folder: Path) -> list[dict[str, Any]]:
    """Write ``folder`` (``<ref>@<commit>.md`` + ``refs.json``) from a clone of Ascend/pytorch: one
    file per distinct note blob that any branch or tag holds at :data:`NOTE_PATHS`, named after a
    branch where one holds it (else the first tag), with its path, full commit, commit date and
    every ref holding it. A file already in ``folder`` under another ref name keeps that name. The
    walk is :meth:`cannenv.matrix.gitdocs.Clone.revisions`; ``git_dir`` is a bare repository or a
    work tree. Returns the manifest's entries."""
    from cannenv.fsutil import atomic_write_text
    from cannenv.matrix.gitdocs import Clone

    clone = Clone(git_dir, "Ascend/pytorch")
    revisions = clone.revisions(NOTE_PATHS, _REF, limit=MAX_NOTES, what="release notes")
    folder.mkdir(parents=True, exist_ok=True)
    have = {m["ref"]: p.name for p in folder.iterdir() if (m := _NAME.match(p.name))}
    entries: list[dict[str, Any]] = []
    for rev in revisions:
        names = rev.names
        kept = [n for n in names if n in have and have[n].endswith(f"@{rev.commit[:9]}.md")]
        heads = rev.heads
        ref = kept[0] if kept else (heads[0] if heads else sorted(names)[0])
        name = f"{ref}@{rev.commit[:9]}.md"
        atomic_write_text(folder / name, clone.blob_text(rev.blob, MAX_MEMBER))
        entries.append(
            {"file": name, "path": rev.path, "commit": rev.commit, "date": rev.date, "blob": rev.blob}
        )
        entries[-1]["refs"] = sorted(rev.refs)
    entries.sort(key=lambda x: (gitdocs.instant(x["date"]), x["file"]))
    doc = {"repository": "Ascend/pytorch", "notes": entries}
    atomic_write_text(folder / MANIFEST, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return entries
