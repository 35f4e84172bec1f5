"""Import the vendor's offline installer, ascend-deployer (PyPI: ``pip download --no-deps ascend-deployer``).

Its download manifests are the vendor's own record of each release:

* ``ascend_deployer/downloader/software/CANN_<v>.json``: ``required_soft`` names the HDK (``NPU``)
  the CANN release requires; ``other`` lists the installers (toolkit, per-chip ops/kernels, nnae,
  nnrt, toolbox) with download URL and sha256;
* ``NPU_<v>.json``: the HDK bundles per chip (driver + firmware) and MCU files, with sha256;
* ``Torch-npu_<v>.json``: torch (CPU) and torch_npu wheels per Python and arch, with sha256;
* ``version_match.json``: which CANN each torch_npu (and MindSpore, DL) release goes with.

:func:`read_deployer` returns :class:`Fact` records, each naming the file inside the artefact it came
from; :func:`matrix_doc` turns them into a matrix file (``matrices/deployer.json``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import InputError
from cannenv.matrix.artefact import Artefact, Provenance

if TYPE_CHECKING:
    from packaging.version import Version

PACKAGE = "ascend-deployer"
SOFTWARE = "ascend_deployer/downloader/software/"
VERSION_MATCH = "ascend_deployer/downloader/version_match.json"

CHIP_FAMILY = {"910b": "a2", "a3": "a3", "310p": "310p", "910": "910", "950": "950"}
"""Chip tag in the vendor's file names -> product family."""

_ARCH = r"(?P<arch>aarch64|x86[-_]64)"
_FILE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cann", re.compile(rf"^Ascend-cann-toolkit_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("ops", re.compile(rf"^Ascend-cann-(?P<chip>[0-9A-Za-z]+)-ops_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    (
        "ops",
        # before 8.0.RC3 the kernels file names carry no architecture ("..._8.0.RC2_linux.zip")
        re.compile(rf"^Ascend-cann-kernels-(?P<chip>[0-9A-Za-z]+)_(?P<v>[^_]+)_linux(-{_ARCH})?\.(zip|run)$"),
    ),
    ("ops", re.compile(rf"^Atlas-(?P<chip>A3)-cann-kernels_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("nnal", re.compile(rf"^Ascend-cann-nnal_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("nnae", re.compile(rf"^Ascend-cann-nnae_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("nnrt", re.compile(rf"^Ascend-cann-nnrt_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("toolbox", re.compile(rf"^Ascend-mindx-toolbox_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("tfplugin", re.compile(rf"^Ascend-cann-tfplugin_(?P<v>[^_]+)_linux-{_ARCH}\.(zip|run)$")),
    ("hdk", re.compile(rf"^Ascend-hdk-(?P<chip>[0-9a-z]+)-npu_(?P<v>[^_]+)_linux-{_ARCH}\.zip$")),
    ("mcu", re.compile(r"^Ascend-hdk-(?P<chip>[0-9a-z]+)-mcu_(?P<v>[^_]+)\.zip\Z")),
    (
        "torch",
        re.compile(
            r"^torch-(?P<v>[^-]+?)(\+cpu)?-cp(?P<py>3\d+)-cp3\d+m?-.*?(?P<arch>aarch64|x86_64)\.whl\Z"
        ),
    ),
    (
        "torch_npu",
        re.compile(r"^torch_npu-(?P<v>[^-]+)-cp(?P<py>3\d+)-cp3\d+m?-.*?(?P<arch>aarch64|x86_64)\.whl\Z"),
    ),
)
IMPORTED_KINDS = frozenset({"CANN", "NPU", "Torch-npu"})
_SHA = re.compile(r"^[0-9a-f]{64}\Z")
_NAME_VERSION = re.compile(r"^(?P<name>[A-Za-z][A-Za-z-]*)_(?P<v>[0-9][0-9A-Za-z.+-]*)\Z")


@dataclass(frozen=True)
class Fact:
    """One imported fact: ``kind`` + ``key`` identify it, ``value`` is what the artefact says."""

    kind: str
    """hdk | download | torch_npu | wheel"""
    key: tuple[str, ...]
    value: dict[str, Any]
    provenance: Provenance

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "key": list(self.key),
            "value": self.value,
            "source": self.provenance.to_json(),
        }


@dataclass
class DeployerImport:
    version: str
    sha256: str
    facts: list[Fact] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """manifests of other software (MindSpore, MindIE images, DL, TensorFlow), not imported"""
    internal_version: str | None = None
    """what the wheel's own ``ascend_deployer/version.json`` says, where it contradicts ``version``"""

    @property
    def source_id(self) -> str:
        return f"DEPLOYER-{self.version}"

    @property
    def title(self) -> str:
        said = (
            f"; its ascend_deployer/version.json says {self.internal_version}: the package version is "
            "recorded"
            if self.internal_version
            else ""
        )
        return f"ascend-deployer {self.version} download manifests (the vendor's offline installer){said}"


def classify(filename: str) -> dict[str, Any] | None:
    """Component, version, family, arch (and Python) of a vendor file name; None if unknown."""
    for component, rx in _FILE_RULES:
        m = rx.match(filename)
        if not m:
            continue
        g = m.groupdict()
        out: dict[str, Any] = {"component": component, "version": g["v"]}
        chip = g.get("chip")
        if chip is not None:
            fam = CHIP_FAMILY.get(chip.lower())
            if fam is None:
                return None
            out["families"] = [fam]
        if g.get("arch"):
            out["arch"] = "x86_64" if g["arch"].startswith("x86") else "aarch64"
        if g.get("py"):
            out["python"] = f"{g['py'][0]}.{g['py'][1:]}"
        return out
    return None


def _json(art: Artefact, name: str) -> Any:
    from cannenv import records

    data = art.read(name)
    text = records.decode_utf8(data, source=f"{art.path}:{name}")
    return records.parse_json(text, source=f"{art.path}:{name}")


def _version_of(art: Artefact) -> str:
    for name in art.names():
        if name.endswith(".dist-info/METADATA"):
            m = re.search(r"^Version:\s*(\S+)\s*$", art.read(name).decode("utf-8", "replace"), re.MULTILINE)
            if m:
                return m[1]
    m = re.search(r"ascend_deployer-([0-9][^-]*)-", art.path.name)
    return m[1] if m else "unknown"


VERSION_JSON = "ascend_deployer/version.json"


def _internal_version(art: Artefact) -> str | None:
    """The ``version`` the wheel's own ``ascend_deployer/version.json`` states, if any."""
    if VERSION_JSON not in set(art.names()):
        return None
    doc = _json(art, VERSION_JSON)
    value = doc.get("version") if isinstance(doc, dict) else None
    return str(value) if isinstance(value, (str, int, float)) else None


def _same_pep440(a: str, b: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a.strip().lower() == b.strip().lower()


def read_deployer(path: str | Path) -> DeployerImport:
    """Every fact the ascend-deployer wheel (or its unpacked folder) states."""
    p = Path(path)
    with Artefact(p) as art:
        names = list(art.names(SOFTWARE))
        if not names and VERSION_MATCH not in set(art.names()):
            raise InputError(
                f"{p}: no {SOFTWARE}*.json manifests: not an ascend-deployer wheel",
                hint="`pip download --no-deps ascend-deployer -d DIR` and pass the .whl",
            )
        result = DeployerImport(_version_of(art), art.sha256)
        said = _internal_version(art)
        if said is not None and not _same_pep440(said, result.version):
            result.internal_version = said
            result.warnings.append(
                f"{VERSION_JSON} says version {said}, the package is {result.version}: the package "
                "version is recorded"
            )
        hdk_chips: dict[str, set[str]] = {}
        cann_needs: list[tuple[str, str, Provenance]] = []
        for name in sorted(names):
            if not name.endswith(".json"):
                continue
            doc = _json(art, name)
            if not isinstance(doc, dict):
                result.warnings.append(f"{name}: not a JSON object; skipped")
                continue
            prov = art.provenance(PACKAGE, result.version, name)
            kind = str(doc.get("name", ""))
            version = str(doc.get("version", ""))
            for req in doc.get("required_soft") or []:
                if isinstance(req, dict) and req.get("name") == "NPU" and kind == "CANN":
                    cann_needs.append((version, str(req.get("version")), prov))
            if kind not in IMPORTED_KINDS:
                result.skipped.append(name)
                continue
            for entry in _entries(doc):
                _download(result, entry, prov, kind, hdk_chips, version)
        for cann, hdk, prov in cann_needs:
            fams = sorted(hdk_chips.get(hdk.lower(), set()))
            result.facts.append(
                Fact(
                    "hdk",
                    (cann, hdk.lower()),
                    {"families": fams or None, "hdk": f"Ascend HDK {hdk}"},
                    prov,
                )
            )
        if VERSION_MATCH in set(art.names()):
            prov = art.provenance(PACKAGE, result.version, VERSION_MATCH)
            match = _json(art, VERSION_MATCH)
            for left, right in match.items() if isinstance(match, dict) else ():
                if not isinstance(right, str):
                    continue
                lm, rm = _NAME_VERSION.match(left), _NAME_VERSION.match(right)
                if not (lm and rm and lm["name"] == "Torch-npu" and rm["name"] == "CANN"):
                    continue
                tnpu = lm["v"]
                torch = re.sub(r"(\.post\d+|rc\d+)\Z", "", tnpu)
                result.facts.append(Fact("torch_npu", (tnpu, rm["v"]), {"torch": torch}, prov))
    return result


def _entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key, val in doc.items():
        if key == "required_soft" or not isinstance(val, list):
            continue
        for item in val:
            if isinstance(item, dict) and "filename" in item:
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("whl"), list):
                out.extend(w for w in item["whl"] if isinstance(w, dict) and "filename" in w)
    return out


def _download(
    result: DeployerImport,
    entry: dict[str, Any],
    prov: Provenance,
    kind: str,
    hdk_chips: dict[str, set[str]],
    manifest_version: str,
) -> None:
    file = str(entry["filename"])
    sha = str(entry.get("sha256") or "").lower()
    info = classify(file)
    if info is None:
        result.warnings.append(f"{prov.path}: {file}: file name not recognised; skipped")
        return
    if not _SHA.match(sha):
        result.warnings.append(f"{prov.path}: {file}: no valid sha256; skipped")
        return
    url = entry.get("url")
    value: dict[str, Any] = {**info, "sha256": sha, "url": url if isinstance(url, str) else None}
    if info["component"] == "hdk" and kind == "NPU":
        for fam in info.get("families", []):
            hdk_chips.setdefault(manifest_version.lower(), set()).add(fam)
    result.facts.append(Fact("download", (file,), value, prov))


def release_key(version: str) -> Version:
    """Order of ascend-deployer releases, PEP 440 (6.0rc2.post0 < 6.0rc3 < 6.0.0 < 7.0rc1 < 26.0.0);
    a version that is not PEP 440 sorts first."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version)
    except InvalidVersion:
        return Version("0")


def matrix_doc(imports: DeployerImport | list[DeployerImport]) -> dict[str, Any]:
    """The facts of one or more ascend-deployer releases as one matrix file (sources, hdk,
    torch_npu, downloads).

    Each release is a source of its own (``DEPLOYER-<version>``). A fact that several releases state
    alike is one row citing all of them (oldest first); where releases disagree (a file listed with
    two different sha256), each statement is a row of its own citing the releases that make it, and
    its note says so: both are recorded, neither is dropped. The families of an HDK pairing are the
    union of the chips whose HDK bundles the releases list.
    """
    imps = sorted(imports if isinstance(imports, list) else [imports], key=lambda i: release_key(i.version))
    doc: dict[str, Any] = {
        "schema_version": 1,
        "sources": [
            {
                "id": imp.source_id,
                "title": imp.title,
                "url": f"https://pypi.org/project/ascend-deployer/{imp.version}/",
                "where": f"PyPI ascend-deployer {imp.version}, "
                f"wheel sha256 {imp.sha256 or 'unpacked folder'}",
            }
            for imp in imps
        ],
        "hdk": [],
        "torch_npu": [],
        "downloads": [],
    }
    # key -> value-identity -> (value, [source ids], [paths]); insertion order = first stated
    merged: dict[tuple[str, tuple[str, ...]], dict[str, tuple[dict[str, Any], list[str], list[str]]]] = {}
    for imp in imps:
        for f in imp.facts:
            value = dict(f.value)
            if f.kind == "hdk":
                ident = ""  # families merge; the pairing itself is the key
            elif f.kind == "download":
                ident = value["sha256"]
            else:
                ident = json.dumps(value, sort_keys=True)
            slot = merged.setdefault((f.kind, f.key), {})
            have = slot.get(ident)
            if have is None:
                slot[ident] = (value, [imp.source_id], [f.provenance.path])
                continue
            if f.kind == "hdk":
                fams = sorted(set(have[0].get("families") or []) | set(value.get("families") or []))
                have[0]["families"] = fams or None
            if imp.source_id not in have[1]:
                have[1].append(imp.source_id)
            if f.provenance.path not in have[2]:
                have[2].append(f.provenance.path)
    for (kind, key), statements in merged.items():
        disagree = len(statements) > 1
        for value, sids, paths in statements.values():
            where = ", ".join(paths)
            if kind == "hdk":
                cann, hdk = key
                row: dict[str, Any] = {"cann": [cann]}
                if value["families"]:
                    row["families"] = value["families"]
                row.update(
                    driver=[hdk],
                    hdk=value["hdk"],
                    evidence="recommended",
                    sources=sids,
                    note=f"{where}: required_soft NPU {value['hdk'].removeprefix('Ascend HDK ')}",
                )
                doc["hdk"].append(row)
            elif kind == "torch_npu":
                tnpu, cann = key
                doc["torch_npu"].append(
                    {
                        "torch_npu": tnpu,
                        "torch": value["torch"],
                        "cann": cann,
                        "table": "other",
                        "sources": sids,
                        "note": f"{where}: Torch-npu_{tnpu} -> CANN_{cann}",
                    }
                )
            elif kind == "download":
                d: dict[str, Any] = {
                    "file": key[0],
                    "component": value["component"],
                    "version": value["version"],
                }
                for k in ("families", "arch", "python"):
                    if value.get(k):
                        d[k] = value[k]
                d["sha256"] = value["sha256"]
                if value.get("url"):
                    d["url"] = value["url"]
                d["sources"] = sids
                note = where
                if disagree:
                    others = "; ".join(
                        f"{sha} ({', '.join(s)})"
                        for sha, (_, s, _) in statements.items()
                        if sha != value["sha256"]
                    )
                    note += f"; the vendor's releases disagree on this file's sha256, also stated: {others}"
                d["note"] = note
                doc["downloads"].append(d)
    return doc


_WHERE_SHA = re.compile(r"wheel sha256 (?P<sha>[0-9a-f]{64})")


def recorded_releases(doc: dict[str, Any]) -> list[DeployerImport]:
    """The releases a deployer matrix file (as :func:`matrix_doc` wrote it) records, each with the
    facts that cite it: so that a refresh over a folder holding only some releases keeps the others
    instead of dropping what they stated."""
    out: dict[str, DeployerImport] = {}
    for src in doc.get("sources") or []:
        sid = str(src.get("id", ""))
        if not sid.startswith("DEPLOYER-"):
            continue
        m = _WHERE_SHA.search(str(src.get("where", "")))
        said = re.search(r"version\.json says (\S+):", str(src.get("title", "")))
        out[sid] = DeployerImport(
            sid.removeprefix("DEPLOYER-"), m["sha"] if m else "", internal_version=said[1] if said else None
        )

    def cite(row: dict[str, Any], kind: str, key: tuple[str, ...], value: dict[str, Any]) -> None:
        path = str(row.get("note") or "").split(":")[0].split(",")[0].split(";")[0].strip()
        for sid in row.get("sources") or []:
            imp = out.get(str(sid))
            if imp is not None:
                prov = Provenance(PACKAGE, imp.version, path, imp.sha256)
                imp.facts.append(Fact(kind, key, dict(value), prov))

    for row in doc.get("hdk") or []:
        hdk = str(row["hdk"]).removeprefix("Ascend HDK ")
        value = {"families": row.get("families"), "hdk": f"Ascend HDK {hdk}"}
        cite(row, "hdk", (str(row["cann"][0]), str(row["driver"][0])), value)
    for row in doc.get("torch_npu") or []:
        cite(row, "torch_npu", (str(row["torch_npu"]), str(row["cann"])), {"torch": row["torch"]})
    for row in doc.get("downloads") or []:
        value = {k: row[k] for k in ("component", "version", "families", "arch", "python") if k in row}
        value.update(sha256=row["sha256"], url=row.get("url"))
        cite(row, "download", (str(row["file"]),), value)
    return list(out.values())
