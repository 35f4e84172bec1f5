"""Run every importer over a folder of downloaded vendor artefacts and diff against the matrix.

``cannenv matrix refresh --from DIR`` looks in DIR for:

* the ascend-deployer wheel (``ascend_deployer-*.whl``) or its unpacked folder;
* torch_npu wheels (``torch_npu-*.whl``): the "Ascend Auxiliary Software" table in METADATA;
* package index listings (``*.json`` as served by ``https://pypi.org/pypi/<package>/json``);
* vllm-ascend sdists (``vllm_ascend-*.tar.gz``): the stacks that project validated (evidence
  ``downstream``, :mod:`cannenv.matrix.vllm_ascend`);
* ``torchnpu_release_notes/``: every revision of the TorchNPU release note a branch or tag holds, as
  ``<ref>@<commit>.md`` with ``refs.json`` (pairings with their Python column, compatibility tables;
  :mod:`cannenv.matrix.torchnpu_notes`; ``cannenv matrix save-release-notes`` writes it from a clone);
* ``wheel_metadata/``: the METADATA of every torch_npu wheel on the package index
  (:mod:`cannenv.matrix.wheel_metadata`: Requires-Dist torch, Requires-Python, the published builds);
* ``component_notes/``: every revision of the version tables MindSpeed, MindSpeed-LLM, Triton-Ascend,
  MindIE-Motor and MindIE-LLM keep in their repositories (:mod:`cannenv.matrix.component_notes`;
  ``cannenv matrix save-component-notes`` writes it from a clone).

Each imported fact is compared with the matrix and reported as ``same``, ``added`` (the matrix does
not have it), ``changed`` (the matrix has another value for the same thing: a digest, a version
set) or ``conflict`` (another source in the matrix states something else for the same key); each
names its source (package, version, path inside, artefact sha256). ``--write`` rewrites the
importers' own files (``matrices/deployer.json``, ``matrices/index.json``) and adds missing wheel
rows to ``matrices/torch_npu.yaml``; hand-curated files are never rewritten. A conflict stays a
conflict after ``--write``: both statements are then recorded, and the report says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import InputError
from cannenv.matrix.artefact import Provenance

if TYPE_CHECKING:
    from cannenv.matrix.component_notes import DocImport
    from cannenv.matrix.deployer import DeployerImport, Fact
    from cannenv.matrix.index import IndexImport
    from cannenv.matrix.query import Matrix
    from cannenv.matrix.torchnpu_notes import NoteImport
    from cannenv.matrix.vllm_ascend import VllmAscendImport
    from cannenv.matrix.wheel_metadata import MetadataImport
    from cannenv.torch_npu_import import ImportedTable

DEPLOYER_FILE = "deployer.json"
INDEX_FILE = "index.json"
VLLM_ASCEND_FILE = "vllm_ascend.json"
TORCHNPU_FILE = "torchnpu.json"
WHEEL_METADATA_FILE = "wheel_metadata.json"
COMPONENT_NOTES_FILE = "component_notes.json"
STATUSES = ("added", "changed", "conflict", "same")


@dataclass(frozen=True)
class Change:
    status: str
    kind: str
    key: str
    detail: str
    source: Provenance
    recorded: bool = False
    """for a conflict: both statements are already in the matrix"""

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "kind": self.kind,
            "key": self.key,
            "detail": self.detail,
            "recorded": self.recorded,
            "source": self.source.to_json(),
        }


@dataclass
class Refresh:
    deployer: list[DeployerImport] = field(default_factory=list)
    listings: list[IndexImport] = field(default_factory=list)
    wheels: list[tuple[ImportedTable, Provenance]] = field(default_factory=list)
    downstream: list[VllmAscendImport] = field(default_factory=list)
    notes: list[NoteImport] = field(default_factory=list)
    metadata: list[MetadataImport] = field(default_factory=list)
    component_docs: list[DocImport] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    """ascend-deployer releases recorded before and not in --from: kept by ``write``"""

    def counts(self) -> dict[str, dict[str, int]]:
        """Per source label: imported / added / changed / conflict (recorded or not) / same."""
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            label = f"{c.source.package} {c.source.version}"
            row = out.setdefault(label, {"imported": 0, **{s: 0 for s in STATUSES}, "recorded_conflict": 0})
            row["imported"] += 1
            row[c.status] += 1
            if c.status == "conflict" and c.recorded:
                row["recorded_conflict"] += 1
        return out

    @property
    def unexplained(self) -> list[Change]:
        """Differences the matrix does not account for (added, changed, unrecorded conflicts)."""
        return [
            c
            for c in self.changes
            if c.status in ("added", "changed") or (c.status == "conflict" and not c.recorded)
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "counts": self.counts(),
            "unexplained": len(self.unexplained),
            "changes": [c.to_json() for c in self.changes if c.status != "same"],
            "warnings": self.warnings,
        }


def gather(folder: str | Path) -> Refresh:
    """Run the importers over ``folder`` (nothing is compared yet)."""
    from cannenv.matrix import component_notes, deployer, index, torchnpu_notes, vllm_ascend, wheel_metadata
    from cannenv.matrix.artefact import sha256_file
    from cannenv.torch_npu_import import read_table

    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"--from {root}: not a folder", hint="a folder with the downloaded artefacts")
    out = Refresh()
    for entry in sorted(root.iterdir()):
        if entry.is_symlink():
            out.warnings.append(f"{entry.name}: a symbolic link; skipped")
            continue
        name = entry.name
        if name.startswith("ascend_deployer") and (entry.suffix == ".whl" or entry.is_dir()):
            out.deployer.append(deployer.read_deployer(entry))
        elif name.startswith("torch_npu-") and entry.suffix == ".whl" and entry.is_file():
            table = read_table(entry)
            prov = Provenance(
                "torch-npu", table.package_version or "?", "*.dist-info/METADATA", sha256_file(entry)
            )
            out.wheels.append((table, prov))
        elif name == torchnpu_notes.FOLDER and entry.is_dir():
            out.notes.extend(torchnpu_notes.read_folder(entry))
        elif name == wheel_metadata.FOLDER and entry.is_dir():
            out.metadata.append(wheel_metadata.read_folder(entry))
        elif name == component_notes.FOLDER and entry.is_dir():
            out.component_docs.extend(component_notes.read_folder(entry))
        elif vllm_ascend.is_sdist(entry) and entry.is_file():
            out.downstream.append(vllm_ascend.read_sdist(entry))
        elif entry.suffix == ".json" and entry.is_file():
            try:
                out.listings.append(index.read_listing(entry))
            except InputError as exc:
                out.warnings.append(f"{name}: {exc.message}; skipped")
        elif entry.is_file() or entry.is_dir():
            out.warnings.append(f"{name}: not an artefact cannenv imports; skipped")
    if not (
        out.deployer
        or out.wheels
        or out.listings
        or out.downstream
        or out.notes
        or out.metadata
        or out.component_docs
    ):
        raise InputError(
            f"{root} holds no artefact to import",
            hint="put there: ascend_deployer-*.whl, torch_npu-*.whl, vllm_ascend-*.tar.gz, and index "
            "listings "
            "(curl -o torch-npu.json https://pypi.org/pypi/torch-npu/json)",
        )
    return out


def compare(r: Refresh, m: Matrix) -> Refresh:
    """Fill ``r.changes``: every imported fact against the matrix ``m``."""
    said: dict[str, list[str]] = {}  # one line per warning, naming the releases that give it
    for imp in r.deployer:
        for w in imp.warnings:
            said.setdefault(w, []).append(imp.version)
    many = len(r.deployer) > 1
    r.warnings.extend(f"ascend-deployer {', '.join(v)}: {w}" if many else w for w, v in said.items())
    for imp in r.deployer:
        for f in imp.facts:
            r.changes.append(_deployer_change(f, m))
    for listing in r.listings:
        r.changes.extend(_index_changes(listing, m))
    for table, prov in r.wheels:
        for row in table.rows:
            r.changes.append(_wheel_row_change(row.torch_npu, row.torch, row.cann, row.branch, prov, m))
    for note in r.notes:
        r.warnings.extend(note.warnings)
        for p in note.pairs:
            r.changes.append(_wheel_row_change(p.torch_npu, p.torch, p.cann, p.branch, note.provenance, m))
            if p.python:
                r.changes.append(_python_column_change(p.torch_npu, p.cann, p.python, note, m))
        for c in note.compat:
            r.changes.append(_compat_change(c.torchnpu, c.cann, c.compatible, note, m))
    for meta in r.metadata:
        r.warnings.extend(meta.warnings)
        r.changes.extend(_metadata_changes(meta, m))
    if r.downstream:
        from cannenv.matrix.vllm_ascend import component_rows

        for va in r.downstream:
            prov = Provenance(
                "vllm-ascend", va.version, "versioning_policy.md, installation.md, PKG-INFO", va.sha256
            )
            for crow in component_rows([va]):
                r.changes.append(_component_change(crow, prov, m))
    if r.component_docs:
        from cannenv.matrix.component_notes import component_rows as doc_rows

        for doc in r.component_docs:
            r.warnings.extend(doc.warnings)
        by_id = {d.source_id: d for d in r.component_docs}
        for crow in doc_rows(r.component_docs):
            for sid in crow["sources"]:  # each revision stating it is a source of its own
                r.changes.append(_component_change(crow, by_id[sid].provenance, m))
    for va in r.downstream:
        r.warnings.extend(f"vllm-ascend {va.version}: {w}" for w in va.warnings)
        for drow in va.rows:
            r.changes.append(_downstream_change(drow.release, drow.torch_npu, drow.cann, drow.provenance, m))
        for h in va.hdk:
            r.changes.append(_downstream_hdk_change(h.release, h.cann, h.hdk, h.provenance, m))
    return r


def _python_column_change(
    torch_npu: str, cann: str, python: tuple[str, ...], note: NoteImport, m: Matrix
) -> Change:
    """A pairing row's Python column against the matrix: a row of that build and CANN stating the
    same Python versions -> same; else added (the Python versions the matrix records are named)."""
    from cannenv.matrix.model import _cann, _pep

    key = f"torch_npu {torch_npu} + CANN {cann}: Python {', '.join(python)}"
    rows = [r for r in m.torch_npu if _pep(r.torch_npu) == _pep(torch_npu) and _cann(r.cann) == _cann(cann)]
    if any(r.python is not None and tuple(r.python) == python for r in rows):
        return Change("same", "torch_npu_python", key, "", note.provenance)
    said = "; ".join(f"Python {', '.join(r.python)} [{', '.join(r.sources)}]" for r in rows if r.python)
    return Change(
        "added",
        "torch_npu_python",
        key,
        f"also stated: {said}" if said else "no Python recorded",
        note.provenance,
    )


def _compat_change(
    torchnpu: tuple[str, ...], cann: tuple[str, ...], compatible: bool, note: NoteImport, m: Matrix
) -> Change:
    """A release note's compatibility statement against the matrix: the same statement from a
    TorchNPU release note -> same; the opposite recorded -> conflict; else added."""
    key = f"TorchNPU {', '.join(torchnpu)} with CANN {', '.join(cann)}: {'Y' if compatible else 'N'}"
    rows = [r for r in m.torch_npu_compat if set(torchnpu) <= set(r.torchnpu) and set(cann) <= set(r.cann)]
    if any(r.compatible == compatible and any(s.startswith("TNPU-RN-") for s in r.sources) for r in rows):
        return Change("same", "torchnpu_compat", key, "", note.provenance)
    other = [r for r in rows if r.compatible != compatible]
    if other:
        said = "; ".join(f"{r.statement} [{', '.join(r.sources)}]" for r in other)
        return Change("conflict", "torchnpu_compat", key, f"also stated: {said}", note.provenance)
    return Change("added", "torchnpu_compat", key, f"TorchNPU {note.release} release note", note.provenance)


def _component_change(row: dict[str, Any], prov: Provenance, m: Matrix) -> Change:
    """A component release's stated stack against the matrix: the same values from the same kind of
    statement -> same; else added (other statements about that release are named)."""
    want = {k: tuple(v) for k, v in row["requires"].items()}
    said = ", ".join(f"{k} {'/'.join(v)}" for k, v in want.items())
    key = f"{row['component']} {row['version']}: {said} ({row['statement']})"
    have = m.component_rows(row["component"], row["version"], include_superseded=True)
    status = row.get("status", "current")
    if any(dict(h.requires) == want and h.statement == row["statement"] and h.status == status for h in have):
        return Change("same", "component", key, "", prov)
    other = "; ".join(f"{h.statement} [{', '.join(h.sources)}]" for h in have)
    return Change("added", "component", key, f"also recorded: {other}" if other else "", prov)


def _metadata_changes(meta: MetadataImport, m: Matrix) -> list[Change]:
    """Each wheel's Requires-Dist torch / Requires-Python against what the matrix records."""
    out: list[Change] = []
    for w in meta.wheels:
        key = (
            f"torch-npu {w.version} {w.tag}: torch {w.torch or '(no pin)'}, "
            f"Requires-Python {w.requires_python or '-'}"
        )
        have = [r for r in m.wheel_metadata if r.file == w.file]
        if not have:
            out.append(Change("added", "wheel_metadata", key, "", meta.provenance))
        elif have[0].torch != w.torch or have[0].requires_python != w.requires_python:
            said = f"torch {have[0].torch}, Requires-Python {have[0].requires_python}"
            out.append(Change("changed", "wheel_metadata", key, f"recorded: {said}", meta.provenance))
        else:
            out.append(Change("same", "wheel_metadata", key, "", meta.provenance))
    return out


def _downstream_change(release: str, tnpu: str, cann: str, prov: Provenance, m: Matrix) -> Change:
    """A pairing a downstream release validated, against the matrix: the same downstream statement
    recorded -> same; else added, naming what the vendor's own rules say about the pairing."""
    from cannenv.matrix.model import _cann, _pep

    key = f"torch_npu {tnpu} + CANN {cann} (validated by vllm-ascend {release})"
    have = [
        r
        for r in m.torch_npu
        if r.evidence == "downstream"
        and _pep(r.torch_npu) == _pep(tnpu)
        and _cann(r.cann) == _cann(cann)
        and any(s.startswith("VLLM-ASCEND-") for s in r.sources)
    ]
    if have:
        return Change("same", "downstream", key, "", prov)
    other = [
        r
        for r in m.torch_npu
        if r.evidence != "downstream" and _pep(r.torch_npu) == _pep(tnpu) and _cann(r.cann) == _cann(cann)
    ]
    said = (
        "also recorded: " + "; ".join(f"{r.evidence} [{', '.join(r.sources)}]" for r in other)
        if other
        else "no other row pairs it"
    )
    return Change("added", "downstream", key, said, prov)


def _downstream_hdk_change(release: str, cann: str, hdk: str, prov: Provenance, m: Matrix) -> Change:
    from cannenv.matrix.model import _cann, series_matches

    key = f"CANN {cann} + HDK {hdk} (validated by vllm-ascend {release})"
    have = [
        r
        for r in m.hdk
        if r.evidence == "downstream"
        and any(_cann(c) == _cann(cann) for c in r.cann)
        and any(series_matches("driver", d, hdk) for d in r.driver)
        and any(s.startswith("VLLM-ASCEND-") for s in r.sources)
    ]
    return Change("same" if have else "added", "downstream", key, "", prov)


def _deployer_change(f: Fact, m: Matrix) -> Change:
    from cannenv.matrix.model import _cann, series_matches

    prov = f.provenance
    if f.kind == "download":
        file, sha = f.key[0], f.value["sha256"]
        listed = m.downloads_of(file)
        if not listed:
            return Change("added", "download", file, f"sha256 {sha}", prov)
        if not any(d.sha256 == sha for d in listed):
            said = ", ".join(f"{d.sha256} ({', '.join(d.sources)})" for d in listed)
            return Change("changed", "download", file, f"sha256 {said} -> {sha}", prov)
        others = [d for d in listed if d.sha256 != sha]
        if others:  # the vendor's releases disagree, and the matrix records every statement
            said = "; ".join(f"{d.sha256} ({', '.join(d.sources)})" for d in others)
            return Change(
                "conflict", "download", file, f"sha256 {sha}; also stated: {said}", prov, recorded=True
            )
        return Change("same", "download", file, "", prov)
    if f.kind == "hdk":
        cann, hdk = f.key
        fams = f.value.get("families") or []
        rows = [
            r
            for r in m.hdk
            if any(_cann(c) == _cann(cann) for c in r.cann)
            and (r.families is None or not fams or set(r.families) & set(fams))
        ]
        same = [
            r
            for r in rows
            if any(series_matches("driver", d, hdk) for d in r.driver)
            and any(s.startswith("DEPLOYER-") for s in r.sources)
        ]
        other = [
            r
            for r in rows
            if r.evidence == "recommended" and not any(series_matches("driver", d, hdk) for d in r.driver)
        ]
        key = f"CANN {cann} -> HDK {hdk}"
        if other:
            said = "; ".join(f"{', '.join(r.driver)} ({', '.join(r.sources)})" for r in other)
            return Change("conflict", "hdk", key, f"the matrix also pairs {said}", prov, recorded=bool(same))
        if same:
            return Change("same", "hdk", key, "", prov)
        return Change("added", "hdk", key, f"families {', '.join(fams) or 'unstated'}", prov)
    # torch_npu -> CANN (version_match.json)
    tnpu, cann = f.key
    return _wheel_row_change(tnpu, str(f.value["torch"]), cann, None, prov, m)


def _wheel_row_change(
    tnpu: str,
    torch: str,
    cann: str,
    branch: str | None,
    prov: Provenance,
    m: Matrix,
) -> Change:
    from cannenv.matrix.model import _cann, _pep

    rows = [r for r in m.torch_npu if _pep(r.torch_npu) == _pep(tnpu)]
    key = f"torch_npu {tnpu} -> CANN {cann}"
    same = [r for r in rows if _cann(r.cann) == _cann(cann)]
    if same:
        return Change("same", "torch_npu", key, "", prov)
    if any(r.status != "prerelease" and r.table != "other" for r in rows):
        said = ", ".join(sorted({f"{r.cann} ({', '.join(r.sources)})" for r in rows}))
        return Change("added", "torch_npu", key, f"the matrix pairs it with CANN {said}", prov)
    return Change(
        "added", "torch_npu", key, f"torch {torch}" + (f", branch {branch}" if branch else ""), prov
    )


def _index_changes(listing: IndexImport, m: Matrix) -> list[Change]:
    from cannenv.matrix.model import _pep

    prov = listing.provenance
    out: list[Change] = []
    for (py, arch), versions in sorted(listing.sets.items()):
        have = {
            str(_pep(v))
            for r in m.wheels
            if r.package == listing.package and r.python == py and arch in r.arches
            for v in r.versions
        }
        new = {str(_pep(v)) for v in versions}
        for v in sorted(new):
            key = f"{listing.package} {v} Python {py} {arch}"
            out.append(Change("same" if v in have else "added", "wheel", key, "", prov))
        for v in sorted(have - new):
            key = f"{listing.package} {v} Python {py} {arch}"
            out.append(Change("changed", "wheel", key, "recorded as published, not in this listing", prov))
    return out


def write(r: Refresh, matrix_dir: Path) -> list[str]:
    """Write the importers' files into ``matrix_dir`` (validated together first); the paths written."""
    import tempfile

    from cannenv.fsutil import atomic_write_text
    from cannenv.matrix import deployer, index
    from cannenv.matrix.loader import load_files, matrix_files
    from cannenv.torch_npu_import import merge_rows

    texts: dict[str, str] = {}
    if r.deployer:
        # releases recorded before and absent from --from are kept, with every fact they stated
        from cannenv import records

        current = matrix_dir / DEPLOYER_FILE
        fresh = {d.version for d in r.deployer}
        kept = (
            [
                d
                for d in deployer.recorded_releases(
                    records.parse_json(records.read_text(current, what="matrix file"), source=str(current))
                )
                if d.version not in fresh
            ]
            if current.is_file()
            else []
        )
        r.kept = sorted((d.version for d in kept), key=deployer.release_key)
        releases = sorted(fresh | set(r.kept), key=deployer.release_key)
        texts[DEPLOYER_FILE] = _dump(
            deployer.matrix_doc([*r.deployer, *kept]),
            f"Generated by `cannenv matrix refresh --write` from ascend-deployer {', '.join(releases)}: "
            "do not edit.",
        )
    if r.downstream:
        from cannenv.matrix import vllm_ascend

        versions = ", ".join(i.version for i in r.downstream)
        texts[VLLM_ASCEND_FILE] = _dump(
            vllm_ascend.matrix_doc(r.downstream),
            f"Generated by `cannenv matrix refresh --write` from the vllm-ascend sdist(s) {versions}: "
            "do not edit.",
        )
    if r.notes:
        from cannenv.matrix import torchnpu_notes

        refs = ", ".join(f"{n.ref}@{n.commit}" for n in r.notes)
        texts[TORCHNPU_FILE] = _dump(
            torchnpu_notes.matrix_doc(r.notes),
            f"Generated by `cannenv matrix refresh --write` from the TorchNPU release notes {refs}: "
            "do not edit.",
        )
    if r.component_docs:
        from cannenv.matrix import component_notes

        repos = ", ".join(sorted({d.repository for d in r.component_docs}))
        texts[COMPONENT_NOTES_FILE] = _dump(
            component_notes.matrix_doc(r.component_docs),
            f"Generated by `cannenv matrix refresh --write` from the version tables of {repos} "
            "(every revision a branch or tag holds): do not edit.",
        )
    if r.metadata:
        from cannenv.matrix import wheel_metadata

        texts[WHEEL_METADATA_FILE] = _dump(
            wheel_metadata.matrix_doc(r.metadata),
            "Generated by `cannenv matrix refresh --write` from the METADATA of every torch_npu wheel on "
            "the package index: do not edit.",
        )
    if r.listings:
        texts[INDEX_FILE] = _dump(
            index.matrix_doc(r.listings),
            "Generated by `cannenv matrix refresh --write` from the package index listings: do not edit.",
        )
    with tempfile.TemporaryDirectory() as tmp:
        staged = Path(tmp)
        generated = {Path(n).stem for n in texts}
        stale = [f for f in matrix_files([matrix_dir]) if f.stem in generated and f.name not in texts]
        for f in matrix_files([matrix_dir]):
            if f not in stale:  # an importer's file in an older format is replaced, not kept beside
                (staged / f.name).write_bytes(f.read_bytes())
        for name, text in texts.items():
            (staged / name).write_text(text, encoding="utf-8")
        for table, _ in r.wheels:
            merge_rows(staged / "torch_npu.yaml", table)
        load_files(matrix_files([staged]), use_cache=False)  # raises MatrixError with every problem
        written = []
        for f in sorted(staged.iterdir()):
            target = matrix_dir / f.name
            new = f.read_text(encoding="utf-8")
            if not target.exists() or target.read_text(encoding="utf-8") != new:
                atomic_write_text(target, new)
                written.append(str(target))
        for f in stale:
            f.unlink()
            written.append(f"{f} (removed)")
    return written


def _dump(doc: dict[str, Any], header: str) -> str:
    """JSON with one row per line: stable, reviewable diffs, and the loader's fast path (pydantic
    validates JSON straight from the bytes). ``header`` goes into each source's note."""
    for src in doc.get("sources", ()):
        src.setdefault("note", header)
    parts = ['{"schema_version": 1']
    for section, rows in doc.items():
        if section == "schema_version":
            continue
        body = ",\n".join(f"  {json.dumps(row, ensure_ascii=False)}" for row in rows)
        parts.append(f'"{section}": [\n{body}\n]' if rows else f'"{section}": []')
    return ",\n".join(parts) + "}\n"
