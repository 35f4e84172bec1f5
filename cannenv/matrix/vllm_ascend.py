"""Import the version tables of vllm-ascend from its source distribution on the package index.

A downstream project's release names the stack it validated: ``docs/source/community/versioning_policy.md``
("Release compatibility matrix": vLLM Ascend, vLLM, Python, Stable CANN, PyTorch/torch_npu …), the
release notes' "Dependencies" (``Ascend HDK: 26.0.RC1``) and the sdist's own ``Requires-Dist`` pins.
Each becomes a fact with evidence ``downstream`` — "validated by vllm-ascend v0.30.0rc1", never the
vendor's recommendation — naming the artefact, the path inside it and the artefact's sha256.
PyPI releases without a row of their own in the table are not imported: unknown, not guessed.

The sdist is hostile input like any artefact: a ``.tar.gz`` read with :mod:`tarfile` member by member
(regular files only, plain relative names, bounded count and sizes); nothing in it is executed or
extracted to disk. ``pip download --no-deps --no-binary :all: vllm-ascend==V`` builds the package's
metadata, which needs its build dependencies; the file itself is the one the package index serves
(``https://pypi.org/simple/vllm-ascend/``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from cannenv.errors import InputError
from cannenv.matrix.artefact import MAX_MEMBER, Provenance, sha256_file

PACKAGE = "vllm-ascend"
MAX_TAR_MEMBERS = 20000
MAX_INFLATED = 256 << 20
"""Bytes inflated from one sdist in total (vllm-ascend's are ~10 MB unpacked)."""
POLICY = "docs/source/community/versioning_policy.md"
NOTES = "docs/source/user_guide/release_notes.md"
PKG_INFO = "PKG-INFO"
INSTALL = "docs/source/installation.md"
_WANTED = (POLICY, NOTES, PKG_INFO, INSTALL)
_SDIST = re.compile(r"^vllm_ascend-(?P<v>[0-9][0-9A-Za-z.+!-]*)\.tar\.gz\Z")


@dataclass(frozen=True)
class DownstreamRow:
    """One row of the release compatibility matrix."""

    release: str
    """the vllm-ascend release, as the table writes it (``v0.30.0rc1``)"""
    vllm: str
    python: str
    cann: str
    torch: str
    torch_npu: str
    provenance: Provenance
    triton: str = ""


@dataclass(frozen=True)
class DownstreamHdk:
    """A release note's "Dependencies": ``CANN: 9.2.0`` with ``Ascend HDK: 26.0.RC1``."""

    release: str
    cann: str
    hdk: str
    provenance: Provenance


@dataclass
class VllmAscendImport:
    version: str
    """the sdist's own version"""
    sha256: str
    rows: list[DownstreamRow] = field(default_factory=list)
    hdk: list[DownstreamHdk] = field(default_factory=list)
    requires: dict[str, str] = field(default_factory=dict)
    """``Requires-Dist`` exact pins of the sdist itself (torch, torch-npu, triton-ascend …)"""
    install: dict[str, str] = field(default_factory=dict)
    """the installation page's requirement table: cann / torch_npu / torch -> version (``== 8.5.1``)"""
    warnings: list[str] = field(default_factory=list)

    @property
    def source_id(self) -> str:
        return f"VLLM-ASCEND-{self.version}"


def is_sdist(path: Path) -> bool:
    return _SDIST.match(path.name) is not None


def read_sdist(path: Path) -> VllmAscendImport:
    """The facts of one vllm-ascend sdist (``vllm_ascend-<version>.tar.gz``)."""
    m = _SDIST.match(path.name)
    if m is None or not path.is_file():
        raise InputError(
            f"{path}: not a vllm-ascend sdist (vllm_ascend-<version>.tar.gz)",
            hint="the source distribution the package index serves for vllm-ascend",
        )
    texts = _read_members(path)
    sha = sha256_file(path)
    out = VllmAscendImport(version=m.group("v"), sha256=sha)

    def prov(rel: str) -> Provenance:
        return Provenance(PACKAGE, out.version, rel, sha)

    if POLICY in texts:
        out.rows = parse_policy(texts[POLICY], prov(POLICY), out.warnings)
    else:
        out.warnings.append(f"{path.name}: no {POLICY}")
    if NOTES in texts:
        out.hdk = parse_release_notes(texts[NOTES], prov(NOTES))
    if PKG_INFO in texts:
        out.requires = parse_requires(texts[PKG_INFO])
    if INSTALL in texts:
        out.install = parse_install(texts[INSTALL])
    return out


def _read_members(path: Path) -> dict[str, str]:
    """The wanted members (path below the sdist's top folder -> text), read with the one bounded
    archive reader: skipped members count against the bytes inflated, and reading stops once all
    three are found."""
    from cannenv.archive import tar_members

    def rel(name: str) -> str:
        return "/".join(PurePosixPath(name).parts[1:])

    out: dict[str, str] = {}
    for member in tar_members(
        path,
        lambda name: rel(name) in _WANTED and rel(name) not in out,
        what="vllm-ascend sdist (.tar.gz)",
        max_member=MAX_MEMBER,
        max_total=MAX_INFLATED,
        max_members=MAX_TAR_MEMBERS,
        stop_after=len(_WANTED),
    ):
        out[rel(member.name)] = member.data.decode("utf-8", "replace")
    return out


_RELEASE = re.compile(r"^v\d+(\.\d+)*(rc\d+)?(\.post\d+)?\Z")


def parse_policy(text: str, prov: Provenance, warnings: list[str]) -> list[DownstreamRow]:
    """Rows of the "Release compatibility matrix" (the table whose header names vLLM Ascend,
    Stable CANN and PyTorch/torch_npu); rows that do not read as versions are reported, not guessed."""
    from cannenv.errors import VersionError
    from cannenv.versions import parse_version

    rows: list[DownstreamRow] = []
    header: list[str] | None = None
    for line in text.splitlines():
        cells = (
            [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else []
        )
        if not cells:
            if header is not None and rows:
                break  # the table ended
            continue
        low = [c.lower() for c in cells]
        if header is None:
            if "vllm ascend" in low and any("cann" in c for c in low) and any("torch_npu" in c for c in low):
                header = low
            continue
        if set("".join(cells)) <= set("-: "):
            continue
        rec = dict(zip(header, cells, strict=False))
        release = rec.get("vllm ascend", "")
        cann = next((v for k, v in rec.items() if "cann" in k), "")
        pair = next((v for k, v in rec.items() if "torch_npu" in k), "")
        if not _RELEASE.match(release) or "/" not in pair:
            warnings.append(f"{prov.path}: row {release or line.strip()[:40]!r} not read (not a release row)")
            continue
        torch, tnpu = (p.strip() for p in pair.split("/", 1))
        try:
            parse_version("cann", cann)
            parse_version("pep440", torch)
            parse_version("pep440", tnpu)
        except VersionError as exc:
            warnings.append(f"{prov.path}: row {release}: {exc.message}; not imported")
            continue
        triton = next((v for k, v in rec.items() if "triton" in k), "").strip()
        rows.append(
            DownstreamRow(
                release=release,
                vllm=rec.get("vllm", ""),
                python=rec.get("python", ""),
                cann=cann,
                torch=torch,
                torch_npu=tnpu,
                provenance=prov,
                triton=triton if triton[:1].isdecimal() else "",
            )
        )
    if header is None:
        warnings.append(f"{prov.path}: no release compatibility matrix found")
    return rows


_SECTION = re.compile(r"^##\s+(v\d[0-9A-Za-z.]*)\b")
# on a stripped line; no two repeats that can read the same characters (linear on any line)
_DEP = re.compile(r"^-[\s*]*(CANN|Ascend HDK)\**\s*:[\s*]*([0-9][0-9A-Za-z.]*)\Z")


def parse_release_notes(text: str, prov: Provenance) -> list[DownstreamHdk]:
    """``CANN: X`` with ``Ascend HDK: Y`` from each release's "Dependencies" (plain lines only: a
    sentence around the version is not a statement of one)."""
    out: list[DownstreamHdk] = []
    release: str | None = None
    deps: dict[str, str] = {}

    def flush() -> None:
        if release and "CANN" in deps and "Ascend HDK" in deps:
            out.append(DownstreamHdk(release, deps["CANN"], deps["Ascend HDK"], prov))

    for line in text.splitlines():
        sec = _SECTION.match(line)
        if sec:
            flush()
            release, deps = sec.group(1), {}
            continue
        dep = _DEP.match(line.strip())
        if dep and release:
            deps.setdefault(dep.group(1), dep.group(2).removesuffix("."))
    flush()
    return out


_INSTALL_KEYS = {"cann": "cann", "torch-npu": "torch_npu", "torchnpu": "torch_npu", "torch": "torch"}


def parse_install(text: str) -> dict[str, str]:
    """The first requirement table of the installation page: ``| CANN | == 8.5.1 | … |`` rows (the
    first statement of each software; later tables, e.g. the 310P one, are other products)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        s = line.strip()
        if not s.startswith("|"):
            continue
        cells = [c.strip() for c in s.strip("|").split("|")]
        if len(cells) < 2:
            continue
        key = _INSTALL_KEYS.get(cells[0].lower())
        val = cells[1]
        if key and val.startswith("==") and key not in out:
            v = val[2:].strip()
            if v[:1].isdecimal() and " " not in v:
                out[key] = v
    return out


def component_rows(imports: list[VllmAscendImport]) -> list[dict[str, Any]]:
    """``components`` rows: each release row of each sdist's table, and each sdist's own
    installation page and Requires-Dist (three statements that can disagree: all kept)."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}

    def add(version: str, requires: dict[str, list[str]], statement: str, sid: str) -> None:
        req = {k: v for k, v in requires.items() if v and v[0]}
        key = (
            version.lstrip("v"),
            statement.split(":", 1)[0],
            tuple(sorted((k, tuple(v)) for k, v in req.items())),
        )
        row = rows.get(key)
        if row is None:
            rows[key] = {
                "component": PACKAGE,
                "version": version.lstrip("v"),
                "requires": req,
                "statement": statement,
                "evidence": "downstream",
                "sources": [sid],
            }
        elif sid not in row["sources"]:
            row["sources"].append(sid)

    for imp in imports:
        for r in imp.rows:
            add(
                r.release,
                {
                    "cann": [r.cann],
                    "torch": [r.torch],
                    "torch_npu": [r.torch_npu],
                    "python": [r.python],
                    "triton-ascend": [r.triton],
                    "vllm": [r.vllm],
                },
                "versioning_policy.md, release compatibility matrix",
                imp.source_id,
            )
        if imp.install:
            add(
                imp.version,
                {k: [v] for k, v in imp.install.items()},
                f"installation.md of the {imp.version} sdist",
                imp.source_id,
            )
        pins = {
            k.replace("-", "_") if k == "torch-npu" else k: [v]
            for k, v in imp.requires.items()
            if k in ("torch", "torch-npu", "triton-ascend")
        }
        if pins:
            add(imp.version, pins, f"Requires-Dist of the {imp.version} sdist", imp.source_id)
    return list(rows.values())


def parse_requires(text: str) -> dict[str, str]:
    """``Requires-Dist: name==version`` exact pins of PKG-INFO (headers only, before the body)."""
    out: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        m = re.match(r"^Requires-Dist:\s*([A-Za-z0-9._-]+)\s*==\s*([0-9][0-9A-Za-z.+!-]*)\s*\Z", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def matrix_doc(imports: list[VllmAscendImport]) -> dict[str, Any]:
    """The facts of one or more sdists as one matrix file: sources, torch_npu rows (evidence
    ``downstream``), HDK rows. A pairing several releases validate is one row naming them all; the
    newest sdist's table leads (older sdists' rows it dropped are kept, naming their sdist)."""
    from cannenv.matrix.model import _pep

    ordered = sorted(imports, key=lambda i: _pep(i.version), reverse=True)
    doc: dict[str, Any] = {"schema_version": 1, "sources": [], "torch_npu": [], "hdk": [], "components": []}
    pairs: dict[tuple[str, str, str], dict[str, Any]] = {}
    hdks: dict[tuple[str, str], dict[str, Any]] = {}
    for imp in ordered:
        pins = ", ".join(
            f"{k}=={v}"
            for k, v in sorted(imp.requires.items())
            if k in ("torch", "torch-npu", "triton-ascend")
        )
        doc["sources"].append(
            {
                "id": imp.source_id,
                "title": f"vllm-ascend {imp.version} sdist: release compatibility matrix, release notes, "
                "Requires-Dist (validated downstream, not vendor statements)"
                + (f"; its own Requires-Dist pins {pins}" if pins else ""),
                "where": f"vllm_ascend-{imp.version}.tar.gz (sha256 {imp.sha256}): {POLICY}; {NOTES}; "
                f"{INSTALL}; {PKG_INFO}",
                "url": f"https://pypi.org/project/vllm-ascend/{imp.version}/",
            }
        )
        for r in imp.rows:
            key = (str(_pep(r.torch_npu)), str(_pep(r.torch)), r.cann)
            row = pairs.get(key)
            if row is None:
                row = pairs[key] = {
                    "torch_npu": r.torch_npu,
                    "torch": r.torch,
                    "cann": r.cann,
                    "table": "other",
                    "evidence": "downstream",
                    "sources": [],
                    "_releases": [],
                    "_python": r.python,
                }
            if imp.source_id not in row["sources"]:
                row["sources"].append(imp.source_id)
            if r.release not in row["_releases"]:
                row["_releases"].append(r.release)
        for h in imp.hdk:
            hkey = (h.cann, h.hdk.lower())
            hrow = hdks.setdefault(
                hkey,
                {
                    "cann": [h.cann],
                    "driver": [h.hdk.lower()],
                    "hdk": f"Ascend HDK {h.hdk}",
                    "evidence": "downstream",
                    "sources": [],
                    "_releases": [],
                },
            )
            if imp.source_id not in hrow["sources"]:
                hrow["sources"].append(imp.source_id)
            if h.release not in hrow["_releases"]:
                hrow["_releases"].append(h.release)
    for row in pairs.values():
        releases, python = row.pop("_releases"), row.pop("_python")
        row["note"] = f"validated by vllm-ascend {', '.join(releases)}" + (
            f" (Python {python})" if python else ""
        )
        doc["torch_npu"].append(row)
    for hrow in hdks.values():
        releases = hrow.pop("_releases")
        hrow["note"] = (
            f"validated by vllm-ascend {', '.join(releases)} (release notes, Dependencies: "
            f"CANN {hrow['cann'][0]} / {hrow['hdk']})"
        )
        doc["hdk"].append(hrow)
    doc["components"] = component_rows(ordered)
    return doc
