"""Import the TorchNPU (Ascend Extension for PyTorch) release notes, one per release branch.

The Ascend/pytorch repository keeps a release note per TorchNPU release (``docs/zh/release_notes/
release_notes.md`` on the ``v2.7.1-<release>`` branches, ``docs/zh/release_notes.md`` on master). Each
holds two tables this module reads:

* 相关产品版本配套说明 (the pairing table): CANN | PyTorch | TorchNPU release | branch | package version
  | Python versions. Each line is a vendor pairing (evidence ``recommended``) with its Python column.
* 版本兼容性说明 (compatibility): either a Markdown table ``release | CANN 9.0.0<br>CANN 8.5.0 …`` or an
  HTML grid of release lines (``7.3.X``) against CANN series (``9.1.X``) with ``Y`` cells.

The artefact is a folder ``torchnpu_release_notes/`` holding each note verbatim as
``<branch>@<commit>.md`` (``git show <branch>:<path>`` of a clone; tests/data/torchnpu_release_notes/
README.md has the commands): the branch and commit become the source. Notes are hostile input: read
bounded, parsed line by line with plain string operations; a row that does not read as versions is
reported, never guessed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.errors import InputError, VersionError
from cannenv.matrix.artefact import MAX_MEMBER, Provenance

FOLDER = "torchnpu_release_notes"
REPO_URL = "https://gitcode.com/Ascend/pytorch"
MAX_NOTES = 200
_NAME = re.compile(r"^(?P<ref>[A-Za-z0-9][A-Za-z0-9._-]{0,80})@(?P<commit>[0-9a-f]{7,40})\.md\Z")
_PY = re.compile(r"Python\s?(3)\.(\d{1,2})")
_SERIES = re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}(\.[0-9A-Za-z]{1,12})+\Z")


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

    @property
    def source_id(self) -> str:
        return f"TNPU-RN-{self.release or self.ref}"

    @property
    def provenance(self) -> Provenance:
        return Provenance("Ascend/pytorch", self.ref, f"{self.path}@{self.commit}", self.sha256)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _strip_tags(text: str) -> str:
    """Text of an HTML fragment (tags dropped), linear: one pass over the characters."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out).strip()


def _br_items(cell: str) -> list[str]:
    """``商用版：9.0.0<br>社区版：9.0.0`` -> [9.0.0]; ``CANN 8.5.0<br>CANN 8.3.RC1`` -> [8.5.0, 8.3.RC1]."""
    out: list[str] = []
    for part in cell.replace("<br/>", "<br>").replace("<br />", "<br>").split("<br>"):
        part = _strip_tags(part)
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
    for i, line in enumerate(lines):
        if imp.release is None and "产品版本" in line and i + 1 < len(lines):
            found = _strip_tags(lines[i + 1])
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
            release = _strip_tags(cells[0])
            canns = [c for c in _br_items(cells[1]) if _SERIES.match(c)]
            if _SERIES.match(release) and canns:
                imp.compat.append(NoteCompat((release,), tuple(canns), True, "list"))
            else:
                imp.warnings.append(f"{imp.path}: compatibility row {line.strip()[:60]!r} not read")
    imp.compat.extend(_grid(lines, imp))
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
    torch = _strip_tags(col("PyTorch版本"))
    tnpu = _strip_tags(col("安装包版本"))
    branch = _strip_tags(col("分支"))
    release = next(
        (
            _strip_tags(v)
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


def _grid(lines: list[str], imp: NoteImport) -> list[NoteCompat]:
    """The HTML Y/N grid of 版本兼容性说明: header cells after 'CANN版本' are CANN series; each body
    row is a TorchNPU line followed by one cell per series."""
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
            text = _strip_tags(s)
            if _SERIES.match(text):
                series.append(text)
        elif s.startswith("<tbody"):
            in_body = True
        elif in_body and s.startswith("<td"):
            row.append(_strip_tags(s))
        elif in_body and s.startswith("</tr") and row:
            line_id, marks = row[0], row[1:]
            if _SERIES.match(line_id) and len(marks) == len(series):
                for mark, cann in zip(marks, series, strict=True):
                    if mark in ("Y", "N"):
                        out.append(NoteCompat((line_id,), (cann,), mark == "Y", "grid"))
            else:
                imp.warnings.append(f"{imp.path}: grid row {row!r} does not match the header {series!r}")
            row = []
    return out


def read_folder(folder: Path) -> list[NoteImport]:
    """Every ``<branch>@<commit>.md`` in ``folder`` (other files are reported by the caller)."""
    out: list[NoteImport] = []
    entries = sorted(
        p for p in folder.iterdir() if _NAME.match(p.name) and p.is_file() and not p.is_symlink()
    )
    if len(entries) > MAX_NOTES:
        raise InputError(f"{folder}: more than {MAX_NOTES} release notes", hint="one file per release branch")
    for p in entries:
        m = _NAME.match(p.name)
        assert m is not None
        with p.open("rb") as fh:
            data = fh.read(MAX_MEMBER + 1)
        if len(data) > MAX_MEMBER:
            raise InputError(f"{p}: more than {MAX_MEMBER} bytes", hint="a release note is a few kB")
        imp = NoteImport(m["ref"], m["commit"], p.name, hashlib.sha256(data).hexdigest())
        out.append(parse_note(data.decode("utf-8", "replace"), imp))
    return out


def matrix_doc(imports: list[NoteImport]) -> dict[str, Any]:
    """The notes as a matrix file: sources, torch_npu rows (with Python), compatibility rows.
    Where two notes state the same row (master and the release branch), the row names both."""
    doc: dict[str, Any] = {"schema_version": 1, "sources": [], "torch_npu": [], "torch_npu_compat": []}
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    compat: dict[tuple[Any, ...], dict[str, Any]] = {}
    seen_sources: set[str] = set()
    for imp in sorted(imports, key=lambda i: (i.release or "", i.ref)):
        sid = f"{imp.source_id}:{imp.ref}"
        if sid not in seen_sources:
            seen_sources.add(sid)
            doc["sources"].append(
                {
                    "id": sid,
                    "title": f"TorchNPU {imp.release or '?'} release note (版本配套说明, 版本兼容性说明), "
                    f"branch {imp.ref}",
                    "where": f"Ascend/pytorch {imp.ref}:{imp.path.split('@')[0]} @ {imp.commit} "
                    f"(sha256 {imp.sha256})",
                    "url": f"{REPO_URL}/blob/{imp.ref}/",
                }
            )
        for p in imp.pairs:
            key = (p.torch_npu, p.torch, p.cann, p.branch)
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
            elif sid not in row["sources"]:
                row["sources"].append(sid)
        for c in imp.compat:
            ckey = (c.torchnpu, c.cann, c.compatible, c.table, imp.release)
            have = compat.get(ckey)
            if have is None:
                mark = "Y" if c.compatible else "N"
                compat[ckey] = {
                    "torchnpu": list(c.torchnpu),
                    "cann": list(c.cann),
                    "compatible": c.compatible,
                    "statement": f"TorchNPU {imp.release} release note, 版本兼容性说明: TorchNPU "
                    f"{', '.join(c.torchnpu)} with CANN {', '.join(c.cann)}: {mark}",
                    "sources": [sid],
                }
            elif sid not in have["sources"]:
                have["sources"].append(sid)
    doc["torch_npu"] = list(rows.values())
    doc["torch_npu_compat"] = list(compat.values())
    return doc
