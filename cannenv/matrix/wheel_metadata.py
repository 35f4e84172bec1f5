"""Import the METADATA of every torch_npu wheel on the package index.

What a wheel declares is the published truth about it: ``Requires-Dist: torch==2.13.0.*`` (which
PyTorch it installs against), ``Requires-Python`` and, from its file name, the Python (``cp311``) and
platform it was built for. The set of files is what exists; a Python/arch without a file has no build.

The artefact is a folder ``wheel_metadata/`` with

* ``listing.json``: the index's JSON simple page (``Accept: application/vnd.pypi.simple.v1+json`` on
  ``https://pypi.org/simple/torch-npu/``): every file with its sha256, size and upload time;
* ``metadata.json``: ``{file name: the METADATA header block}`` (the lines before the first blank
  line; the long description is not kept) for every wheel in the listing.

:func:`fetch` writes both (network): the index serves no separate ``.metadata`` files for torch-npu,
so each METADATA is read out of the wheel with HTTP range requests (the zip's end record, its central
directory, then the one member), every read bounded; nothing is executed or unpacked to disk.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import ExternalError, InputError
from cannenv.matrix.artefact import Provenance

if TYPE_CHECKING:
    from cannenv.progress import Progress

FOLDER = "wheel_metadata"
SIMPLE_URL = "https://pypi.org/simple/{package}/"
MAX_LISTING = 16 << 20
MAX_METADATA_JSON = 32 << 20
MAX_HEADERS = 64 << 10
MAX_CENTRAL_DIRECTORY = 8 << 20
MAX_MEMBER = 2 << 20
_WHEEL = re.compile(
    r"^(?P<dist>[A-Za-z0-9_]+)-(?P<v>[0-9][0-9A-Za-z.+!]*)-cp(?P<py>3[0-9]{1,2})-cp3[0-9]{1,2}t?-(?P<plat>[A-Za-z0-9_.]+)\.whl\Z"
)
_TORCH = re.compile(r"^torch\s*(?P<spec>[=<>!~][^;]*)?(;.*)?\Z")


@dataclass(frozen=True)
class WheelMeta:
    file: str
    version: str
    python: str
    arch: str
    torch: str | None
    """the Requires-Dist specifier of torch as written (``==2.13.0.*``, ``==2.9.1+cpu``)"""
    requires_python: str | None
    sha256: str | None
    uploaded: str | None

    @property
    def tag(self) -> str:
        return f"cp{self.python.replace('.', '')} {self.arch}"


@dataclass
class MetadataImport:
    package: str
    sha256: str
    """of metadata.json"""
    wheels: list[WheelMeta] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def source_id(self) -> str:
        return f"WHEEL-METADATA-{self.package}"

    @property
    def provenance(self) -> Provenance:
        return Provenance("pypi.org", self.package, f"{FOLDER}/metadata.json", self.sha256)


def headers(text: str) -> dict[str, list[str]]:
    """The header block of a METADATA file: name -> values (in order)."""
    out: dict[str, list[str]] = {}
    for line in text[:MAX_HEADERS].splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t") or ":" not in line:
            continue
        name, value = line.split(":", 1)
        out.setdefault(name.strip().lower(), []).append(value.strip())
    return out


def torch_requirement(requires: list[str]) -> str | None:
    """The specifier of ``torch`` among Requires-Dist values (None: no pin)."""
    for req in requires:
        m = _TORCH.match(req.strip())
        if m:
            return (m.group("spec") or "").replace(" ", "") or None
    return None


def _arch(plat: str) -> str | None:
    return "aarch64" if "aarch64" in plat else "x86_64" if "x86_64" in plat else None


def _read_bounded(path: Path, limit: int, what: str) -> bytes:
    if not path.is_file() or path.is_symlink():
        raise InputError(f"{path}: not a file", hint=f"{FOLDER}/ holds listing.json and metadata.json")
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{path}: more than {limit} bytes", hint=what)
    return data


def read_folder(folder: Path) -> MetadataImport:
    """The wheels of ``folder/listing.json`` with the METADATA headers of ``folder/metadata.json``."""
    from cannenv import records

    listing_raw = _read_bounded(folder / "listing.json", MAX_LISTING, "the index's JSON simple page")
    meta_raw = _read_bounded(folder / "metadata.json", MAX_METADATA_JSON, "file -> METADATA headers")
    listing = records.parse_json(listing_raw.decode("utf-8", "replace"), source="listing.json")
    metas = records.parse_json(meta_raw.decode("utf-8", "replace"), source="metadata.json")
    if not isinstance(listing, dict) or not isinstance(listing.get("files"), list):
        raise InputError(
            f"{folder}/listing.json: no 'files' list", hint=SIMPLE_URL.format(package="torch-npu")
        )
    if not isinstance(metas, dict):
        raise InputError(f"{folder}/metadata.json: not a mapping of file name to METADATA headers")
    package = str(listing.get("name") or "torch-npu")
    out = MetadataImport(package, hashlib.sha256(meta_raw).hexdigest())
    for f in listing["files"]:
        if not isinstance(f, dict) or f.get("yanked"):
            continue
        name = str(f.get("filename", ""))
        m = _WHEEL.match(name)
        if not m or "linux" not in m["plat"]:
            continue
        arch = _arch(m["plat"])
        if arch is None:
            continue
        text = metas.get(name)
        if not isinstance(text, str):
            out.warnings.append(f"{name}: listed by the index, no METADATA in metadata.json")
            continue
        h = headers(text)
        version = (h.get("version") or [m["v"]])[0]
        if version != m["v"]:
            out.warnings.append(f"{name}: METADATA says Version {version}; the file name says {m['v']}")
        hashes = f.get("hashes") if isinstance(f.get("hashes"), dict) else {}
        out.wheels.append(
            WheelMeta(
                file=name,
                version=m["v"],
                python=f"{m['py'][0]}.{m['py'][1:]}",
                arch=arch,
                torch=torch_requirement(h.get("requires-dist", [])),
                requires_python=next(iter(h.get("requires-python", [])), None),
                sha256=str(hashes.get("sha256")) if hashes and hashes.get("sha256") else None,
                uploaded=str(f.get("upload-time") or "")[:10] or None,
            )
        )
    return out


def matrix_doc(imports: list[MetadataImport]) -> dict[str, Any]:
    doc: dict[str, Any] = {"schema_version": 1, "sources": [], "wheel_metadata": []}
    for imp in imports:
        doc["sources"].append(
            {
                "id": imp.source_id,
                "title": f"METADATA of every {imp.package} wheel on the package index (Requires-Dist torch, "
                "Requires-Python, the published cpXY x platform builds)",
                "where": f"{SIMPLE_URL.format(package=imp.package)} + each wheel's *.dist-info/METADATA "
                f"({FOLDER}/metadata.json sha256 {imp.sha256})",
                "url": f"https://pypi.org/project/{imp.package}/",
            }
        )
        for w in sorted(imp.wheels, key=lambda w: w.file):
            row: dict[str, Any] = {
                "file": w.file,
                "package": imp.package,
                "version": w.version,
                "python": w.python,
                "arch": w.arch,
                "torch": w.torch,
                "requires_python": w.requires_python,
                "sha256": w.sha256,
                "sources": [imp.source_id],
            }
            doc["wheel_metadata"].append({k: v for k, v in row.items() if v is not None})
    return doc


# ---------------------------------------------------------------------------------------------
# network: the listing, and each wheel's METADATA by HTTP range requests


def _get(url: str, *, headers_: dict[str, str] | None = None, limit: int, timeout: float = 60.0) -> bytes:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, headers=headers_ or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data: bytes = resp.read(limit + 1)
    except (urllib.error.URLError, OSError) as exc:
        raise ExternalError(f"cannot read {url}: {exc}", hint="the package index must be reachable") from None
    if len(data) > limit:
        raise InputError(f"{url}: more than {limit} bytes")
    return data


def _range(url: str, start: int, end: int) -> bytes:
    """Bytes ``start..end`` (inclusive) of ``url``; the server must honour the range."""
    want = end - start + 1
    data = _get(url, headers_={"Range": f"bytes={start}-{end}"}, limit=want)
    if len(data) != want:
        raise ExternalError(f"{url}: asked bytes {start}-{end}, got {len(data)} bytes", hint="retry later")
    return data


def remote_metadata(url: str, size: int) -> str:
    """The ``*.dist-info/METADATA`` member of the wheel at ``url`` (``size`` bytes), read by ranges."""
    tail_len = min(size, 65536 + 22)
    tail = _range(url, size - tail_len, size - 1)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        raise InputError(f"{url}: no zip end record in the last {tail_len} bytes", hint="not a wheel")
    cd_size, cd_offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if cd_size > MAX_CENTRAL_DIRECTORY or cd_offset + cd_size > size:
        raise InputError(
            f"{url}: central directory of {cd_size} bytes at {cd_offset} (bound {MAX_CENTRAL_DIRECTORY})"
        )
    cd = _range(url, cd_offset, cd_offset + cd_size - 1)
    pos = 0
    while pos + 46 <= len(cd) and cd[pos : pos + 4] == b"PK\x01\x02":
        (method,) = struct.unpack("<H", cd[pos + 10 : pos + 12])
        csize, usize = struct.unpack("<II", cd[pos + 20 : pos + 28])
        nlen, elen, clen = struct.unpack("<HHH", cd[pos + 28 : pos + 34])
        (local,) = struct.unpack("<I", cd[pos + 42 : pos + 46])
        name = cd[pos + 46 : pos + 46 + nlen].decode("utf-8", "replace")
        pos += 46 + nlen + elen + clen
        parts = name.split("/")
        if len(parts) != 2 or not parts[0].endswith(".dist-info") or parts[1] != "METADATA":
            continue
        if csize > MAX_MEMBER or usize > MAX_MEMBER:
            raise InputError(f"{url}:{name}: {usize} bytes, more than {MAX_MEMBER}")
        head = _range(url, local, local + 29)
        if head[:4] != b"PK\x03\x04":
            raise InputError(f"{url}:{name}: no local header at {local}")
        lnlen, lelen = struct.unpack("<HH", head[26:30])
        start = local + 30 + lnlen + lelen
        raw = _range(url, start, start + csize - 1) if csize else b""
        if method == 0:
            data = raw
        elif method == 8:
            d = zlib.decompressobj(-15)
            data = d.decompress(raw, MAX_MEMBER + 1)
            if len(data) > MAX_MEMBER:
                raise InputError(f"{url}:{name}: inflates past {MAX_MEMBER} bytes")
        else:
            raise InputError(f"{url}:{name}: compression method {method} not read")
        return data.decode("utf-8", "replace")
    raise InputError(f"{url}: no *.dist-info/METADATA in the central directory", hint="not a wheel")


def fetch(
    folder: Path,
    *,
    package: str = "torch-npu",
    versions: set[str] | None = None,
    workers: int = 8,
    progress: Progress | None = None,
) -> int:
    """Write ``folder/listing.json`` and ``folder/metadata.json`` from the index (network); the
    number of wheels read. ``versions`` limits the METADATA reads (the listing is always whole).
    ``progress`` counts the wheels whose METADATA has arrived (stderr)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from cannenv.fsutil import atomic_write_text
    from cannenv.progress import QUIET

    listing_raw = _get(
        SIMPLE_URL.format(package=package),
        headers_={"Accept": "application/vnd.pypi.simple.v1+json"},
        limit=MAX_LISTING,
    )
    listing = json.loads(listing_raw)
    files = [
        f
        for f in listing.get("files", [])
        if isinstance(f, dict)
        and _WHEEL.match(str(f.get("filename", "")))
        and not f.get("yanked")
        and (versions is None or _WHEEL.match(str(f["filename"]))["v"] in versions)  # type: ignore[index]
    ]

    def one(f: dict[str, Any]) -> tuple[str, str]:
        text = remote_metadata(str(f["url"]), int(f["size"]))
        return str(f["filename"]), "\n".join(text.split("\n\n", 1)[0].splitlines()) + "\n"

    shown = progress or QUIET
    metas: dict[str, str] = {}
    with (
        shown.task(f"{package}: METADATA of {len(files)} wheels", total=len(files), unit="wheels") as task,
        ThreadPoolExecutor(max(1, workers)) as ex,
    ):
        for done in as_completed([ex.submit(one, f) for f in files]):
            name, text = done.result()
            metas[name] = text
            task.advance(1, note=name)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "listing.json", listing_raw.decode("utf-8"))
    atomic_write_text(folder / "metadata.json", json.dumps(dict(sorted(metas.items())), indent=0) + "\n")
    return len(metas)
