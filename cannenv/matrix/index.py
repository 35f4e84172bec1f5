"""Import what the package index publishes: exact torch-npu (and torch) versions per Python and arch.

The input is the index's JSON API document (``https://pypi.org/pypi/<package>/json``), fetched
(:func:`fetch_listing`) or read from a saved file (``curl -o torch-npu.json …``), so the import
also works offline. Versions are recorded as exact sets from the wheel file names
(``torch_npu-2.7.1.post2-cp311-cp311-manylinux_2_28_aarch64.whl`` -> 2.7.1.post2 for Python 3.11
on aarch64): never ranges, which would claim versions that were never published. Yanked files are
left out (pip does not pick them).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.errors import ExternalError, InputError
from cannenv.matrix.artefact import Provenance

PACKAGES = ("torch-npu", "torch")
INDEX_URL = "https://pypi.org/pypi/{package}/json"
MAX_LISTING = 64 << 20
_WHEEL = re.compile(r"^(?P<dist>[A-Za-z0-9_.]+)-(?P<v>[^-]+)-cp(?P<py>3\d+)-cp3\d+t?-(?P<plat>[^-]+)\.whl\Z")


@dataclass
class IndexImport:
    package: str
    sha256: str
    path: str
    sets: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(python, arch) -> versions with a wheel"""
    uploaded: dict[str, str] = field(default_factory=dict)
    """version -> first upload date (YYYY-MM-DD)"""

    @property
    def source_id(self) -> str:
        return f"INDEX-{self.package}"

    @property
    def provenance(self) -> Provenance:
        return Provenance("pypi.org", self.package, self.path, self.sha256)


def fetch_listing(package: str, *, timeout: float = 30.0) -> bytes:
    """The index's JSON document for ``package`` (network)."""
    import urllib.error
    import urllib.request

    url = INDEX_URL.format(package=package)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            data: bytes = resp.read(MAX_LISTING + 1)
    except (urllib.error.URLError, OSError) as exc:
        raise ExternalError(
            f"cannot reach {url}: {exc}",
            hint="save the listing elsewhere (`curl -o FILE URL`) and pass it with --listing FILE",
        ) from None
    if len(data) > MAX_LISTING:
        raise InputError(f"{url}: more than {MAX_LISTING} bytes")
    return data


def parse_listing(data: bytes, *, name: str = "listing") -> IndexImport:
    """Exact version sets per (Python, arch) from a JSON API document."""
    from cannenv import records

    text = records.decode_utf8(data, source=name, hint=INDEX_URL)
    doc = records.parse_json(text, source=name, hint=INDEX_URL)
    if not isinstance(doc, dict) or not isinstance(doc.get("releases"), dict):
        raise InputError(f"{name}: no 'releases' mapping", hint=f"expected the JSON of {INDEX_URL}")
    info: dict[str, Any] = doc["info"] if isinstance(doc.get("info"), dict) else {}
    package = str(info.get("name") or "").lower().replace("_", "-") or "unknown"
    out = IndexImport(package, hashlib.sha256(data).hexdigest(), name)
    for version, files in doc["releases"].items():
        if not isinstance(files, list):
            continue
        for f in files:
            if not isinstance(f, dict) or f.get("yanked") or f.get("packagetype") != "bdist_wheel":
                continue
            m = _WHEEL.match(str(f.get("filename", "")))
            if not m or "linux" not in m["plat"]:
                continue
            arch = "aarch64" if "aarch64" in m["plat"] else "x86_64" if "x86_64" in m["plat"] else None
            if arch is None:
                continue
            py = f"{m['py'][0]}.{m['py'][1:]}"
            out.sets.setdefault((py, arch), set()).add(str(version))
            date = str(f.get("upload_time_iso_8601") or f.get("upload_time") or "")[:10]
            if date and (version not in out.uploaded or date < out.uploaded[version]):
                out.uploaded[str(version)] = date
    return out


def read_listing(path: str | Path) -> IndexImport:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: not a file", hint=f"save {INDEX_URL} to a file")
    with p.open("rb") as fh:
        data = fh.read(MAX_LISTING + 1)
    if len(data) > MAX_LISTING:
        raise InputError(f"{p}: more than {MAX_LISTING} bytes")
    return parse_listing(data, name=p.name)


def _sorted(versions: set[str]) -> list[str]:
    from cannenv.versions import parse_pep440

    return sorted(versions, key=parse_pep440)


def _pythons(imp: IndexImport) -> list[str]:
    return sorted({py for py, _ in imp.sets}, key=lambda p: tuple(int(x) for x in p.split(".")))


def wheel_rows(imp: IndexImport) -> list[dict[str, Any]]:
    """``wheels`` rows: one per Python (both arches in one row when their sets are equal)."""
    rows: list[dict[str, Any]] = []
    for py in _pythons(imp):
        arm = imp.sets.get((py, "aarch64"), set())
        x86 = imp.sets.get((py, "x86_64"), set())
        groups = [(["aarch64", "x86_64"], arm)] if arm == x86 else [(["aarch64"], arm), (["x86_64"], x86)]
        for arches, versions in groups:
            if versions:
                rows.append(
                    {
                        "package": imp.package,
                        "python": py,
                        "arches": arches,
                        "versions": _sorted(versions),
                        "sources": [imp.source_id],
                    }
                )
    return rows


def matrix_doc(imports: list[IndexImport]) -> dict[str, Any]:
    """The listings as a matrix file (sources, wheels, published dates)."""
    doc: dict[str, Any] = {"schema_version": 1, "sources": [], "wheels": [], "published": []}
    for imp in imports:
        doc["sources"].append(
            {
                "id": imp.source_id,
                "title": f"the package index's listing of {imp.package} (exact wheels per Python and arch)",
                "where": f"{INDEX_URL.format(package=imp.package)} ({imp.path}, sha256 {imp.sha256})",
                "url": INDEX_URL.format(package=imp.package),
            }
        )
        doc["wheels"].extend(wheel_rows(imp))
        doc["published"].append(
            {
                "package": imp.package,
                "uploaded": {v: imp.uploaded[v] for v in _sorted(set(imp.uploaded))},
                "sources": [imp.source_id],
            }
        )
    return doc
