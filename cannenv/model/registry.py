"""The operators a torch_npu build registers for the NPU, read from the files its package ships.

torch_npu generates its dispatcher registrations from two yaml files it also ships in the wheel,
``torch_npu/csrc/aten/npu_native_functions.yaml`` (hand-kept core: views, copies, factories) and
``npu_native_functions_by_codegen.yaml`` (the same merged with op-plugin's operator list, which is
where nearly every kernel comes from; absent in some builds). Their sections, as torchnpugen reads
them (``torchnpugen/gen_backend_stubs.py`` in the 2.13.0 wheel):

``supported``  ATen operators with an NPU kernel (registered for the ``PrivateUse1`` key);
               a structured out variant (``structured: true``) also serves the functional and
               in-place variants that name it as ``structured_delegate``
``autograd``   ATen operators with an NPU autograd kernel (``AutogradPrivateUse1``)
``quant``      quantised ATen operators (``dequantize.self``, ``int_repr`` ...)
``custom`` / ``custom_autograd``   torch_npu's own operators, namespace ``npu``
               (``torch.ops.npu.npu_rms_norm``)
``symint``     a flag list (which kernels take SymInt), not a registration

Every input is hostile: a wheel is read as a zip with bounded member reads (no extraction), a
package folder only through regular files inside it; nothing is imported or executed.
"""

from __future__ import annotations

import os
import re
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cannenv import records
from cannenv.errors import ExternalError, InputError, MissingToolError, NotFoundError

YAML_DIR = "torch_npu/csrc/aten"
YAML_RE = re.compile(r"^torch_npu/csrc/aten/npu_native_functions[A-Za-z0-9_]*\.yaml\Z")
MAX_YAML_BYTES = 16 << 20
"""largest operator yaml we read (2.13.0's by_codegen file is 0.25 MB)"""
MAX_METADATA_BYTES = 4 << 20
MAX_ZIP_MEMBERS = 200_000
MAX_READ_MEMBERS = 16
"""operator yaml files + METADATA read from one build (a real one has 2-3 of them)"""
MAX_READ_BYTES = 48 << 20
"""all the bytes read from one build together (a real one: under 1 MB)"""
VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+){1,3}((\.post|rc|\.dev)[0-9]+)?\Z")
"""a torch_npu release version as PyPI spells it (2.1.0.post8, 2.7.1, 2.13.0)"""

ATEN_SECTIONS = ("supported", "autograd", "quant")
NPU_SECTIONS = ("custom", "custom_autograd")


@dataclass(frozen=True)
class Registry:
    """The NPU operators of one torch_npu build, keyed ``ns::name`` or ``ns::name.overload``."""

    version: str | None
    origin: str
    """where it was read: a wheel file, a package folder"""
    files: tuple[str, ...]
    ops: Mapping[str, tuple[str, ...]]
    """operator -> the yaml sections that register it"""
    torch: str | None = None
    """the torch release this build requires (its METADATA ``Requires-Dist: torch==V``)"""

    def sections(self, op: str) -> tuple[str, ...] | None:
        """Sections registering ``op`` (``aten::mm``, ``aten::add.Tensor``, ``npu::npu_rms_norm``)."""
        return self.ops.get(op)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "origin": self.origin,
            "files": list(self.files),
            "operators": len(self.ops),
        }


def _op_key(namespace: str, name: str) -> str:
    # ``mm.default`` is never written; the bare name is the default overload.
    return f"{namespace}::{name}"


def parse_yaml(texts: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Operator -> sections from the yaml files' texts (file name -> text). Raises InputError."""
    import yaml

    found: dict[str, set[str]] = {}
    for fname, text in texts.items():
        try:
            doc = records.load_yaml(text)
        except records.DocumentTooComplexError as exc:
            raise InputError(f"{fname}: not an operator list cannenv reads: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            raise InputError(f"{fname}{where}: not valid YAML ({exc.__class__.__name__})") from None
        if not isinstance(doc, dict):
            raise InputError(f"{fname}: expected a mapping of sections (supported, custom, ...)")
        delegates: dict[str, str] = {}
        for section, items in doc.items():
            if section not in ATEN_SECTIONS + NPU_SECTIONS:
                continue
            if items is None:
                continue
            if not isinstance(items, list):
                raise InputError(f"{fname}: section {section!r} is not a list")
            ns = "npu" if section in NPU_SECTIONS else "aten"
            for i, entry in enumerate(items):
                if isinstance(entry, str):
                    func = entry
                elif isinstance(entry, dict) and isinstance(entry.get("func"), str):
                    func = entry["func"]
                    delegate = entry.get("structured_delegate")
                    if isinstance(delegate, str):
                        delegates[_name(func)] = delegate
                else:
                    raise InputError(
                        f"{fname}: {section}[{i}] is neither an operator name nor a mapping with 'func'"
                    )
                name = _name(func)
                if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)?\Z", name):
                    raise InputError(f"{fname}: {section}[{i}]: {name!r} is not an operator name")
                found.setdefault(_op_key(ns, name), set()).add(section)
        # A functional that delegates to a registered structured out variant is registered too
        # (torchnpugen emits it from the out kernel); one whose out variant is missing is not.
        for name, out in delegates.items():
            if _op_key("aten", out) not in found:
                found.pop(_op_key("aten", name), None)
    return {k: tuple(sorted(v)) for k, v in sorted(found.items())}


def _name(func: str) -> str:
    return func.split("(", 1)[0].strip()


# ---------------------------------------------------------------------------------------------
# Reading a wheel, a package folder, the installed distribution, or a version from PyPI


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, wheel: Path) -> str:
    data = records.read_zip_member(zf, info, limit, source=str(wheel))
    return data.decode("utf-8", errors="replace")


def from_wheel(path: Path) -> Registry:
    """Read the operator yaml of a torch_npu wheel (a zip; nothing is extracted)."""
    zf = records.open_zip(
        path,
        max_members=MAX_ZIP_MEMBERS,
        what="torch_npu wheel",
        hint="a torch_npu wheel has a few thousand members",
    )
    with zf:
        infos = zf.infolist()
        texts: dict[str, str] = {}
        version = None
        torch_req = None
        wanted = [i for i in infos if YAML_RE.match(i.filename) or re.match(_METADATA_RE, i.filename)]
        _within_budget(path, len(wanted), sum(i.file_size for i in wanted))
        try:
            for info in wanted:
                name = info.filename
                if YAML_RE.match(name):
                    texts[PurePosixPath(name).name] = _read_member(zf, info, MAX_YAML_BYTES, path)
                else:
                    meta = _read_member(zf, info, MAX_METADATA_BYTES, path)
                    m = re.search(r"^Version:\s*(\S+)\s*$", meta, re.MULTILINE)
                    version = m.group(1) if m else None
                    torch_req = required_torch(meta)
        except (zipfile.BadZipFile, OSError, RuntimeError, EOFError, NotImplementedError, zlib.error) as exc:
            raise InputError(f"{path}: damaged wheel member ({exc})") from None
    if not texts:
        raise InputError(
            f"{path} holds no {YAML_DIR}/npu_native_functions*.yaml",
            hint="pass a torch_npu wheel (pip download --no-deps torch-npu==VERSION)",
        )
    return Registry(version, str(path), tuple(sorted(texts)), parse_yaml(texts), torch_req)


_METADATA_RE = r"^torch_npu-[^/]+\.dist-info/METADATA\Z"


def _within_budget(origin: Path, members: int, size: int) -> None:
    """InputError when one build would make cannenv read more files or bytes than a real one has
    (300 operator yaml members of 15 MiB each is a 4 GiB read from a 4 MB wheel)."""
    if members > MAX_READ_MEMBERS:
        raise InputError(
            f"{origin}: {members} operator yaml/METADATA files; a torch_npu build has a few, "
            f"cannenv reads at most {MAX_READ_MEMBERS}"
        )
    if size > MAX_READ_BYTES:
        raise InputError(
            f"{origin}: its operator yaml/METADATA files declare {size} bytes together; "
            f"cannenv reads at most {MAX_READ_BYTES} from one build"
        )


def _read_regular(path: Path, root: Path, limit: int) -> str:
    real = Path(os.path.realpath(path))
    if root not in real.parents:
        raise InputError(f"{path} leads outside {root}")
    return records.read_bytes(real, what="torch_npu file", max_bytes=limit, nofollow=True).decode(
        "utf-8", errors="replace"
    )


def from_dir(path: Path, version: str | None = None) -> Registry:
    """Read an unpacked torch_npu: its package folder, or a folder (site-packages) holding it."""
    root = Path(os.path.realpath(path))
    pkg = root if (root / "csrc" / "aten").is_dir() else root / "torch_npu"
    aten = pkg / "csrc" / "aten"
    if not aten.is_dir():
        raise InputError(
            f"{path} holds no torch_npu/csrc/aten folder",
            hint="pass the torch_npu package folder, the site-packages folder holding it, or a wheel",
        )
    texts: dict[str, str] = {}
    entries = [
        e for e in sorted(aten.iterdir()) if re.match(r"^npu_native_functions[A-Za-z0-9_]*\.yaml\Z", e.name)
    ]
    _within_budget(aten, len(entries), 0)
    total = 0
    for entry in entries:
        texts[entry.name] = _read_regular(entry, root, MAX_YAML_BYTES)
        total += len(texts[entry.name])
        _within_budget(aten, len(entries), total)
    if not texts:
        raise InputError(f"{aten} holds no npu_native_functions*.yaml")
    torch_req = None
    site = Path(os.path.realpath(pkg.parent))
    for meta in sorted(pkg.parent.glob("torch_npu-*.dist-info/METADATA")):
        text = _read_regular(meta, site, MAX_METADATA_BYTES)
        m = re.search(r"^Version:\s*(\S+)\s*$", text, re.M)
        if version is None:
            version = m.group(1) if m else None
        torch_req = required_torch(text)
    return Registry(version, str(pkg), tuple(sorted(texts)), parse_yaml(texts), torch_req)


def required_torch(metadata: str) -> str | None:
    """``Requires-Dist: torch==2.8.0+cpu`` / ``torch==2.13.0.*`` -> ``2.8.0`` / ``2.13.0``."""
    m = re.search(r"^Requires-Dist:\s*torch\s*==\s*([0-9]+(?:\.[0-9]+){1,2})", metadata, re.M | re.I)
    return m.group(1) if m else None


def installed() -> Registry | None:
    """The torch_npu of this Python (located by its distribution metadata, never imported), or None."""
    from importlib import metadata

    try:
        dist = metadata.distribution("torch_npu")
    except metadata.PackageNotFoundError:
        return None
    pkg = Path(str(dist.locate_file("torch_npu")))
    return from_dir(pkg, version=dist.version)


def cache_folder() -> Path:
    from cannenv.matrix import cache_dir

    base = cache_dir()
    if base is None:
        raise MissingToolError(
            "no cache folder to download torch_npu into",
            hint="set CANNENV_CACHE_DIR, or pass a wheel file you downloaded",
        )
    return base / "torch_npu"


# Platform tags torch_npu wheels are published under (PyPI listing): the operator yaml is the same
# in every one of a release's wheels, so any wheel will do when this Python has none.
_PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_28_aarch64",
    "manylinux2014_aarch64",
)


def download_wheels(
    requirement: str,
    folder: Path,
    pattern: str,
    platform: list[str],
    *,
    timeout: float,
    hint: str | None = None,
) -> list[Path]:
    """``pip download --no-deps --only-binary=:all:`` of one requirement into a cache ``folder``
    (through the one subprocess door); the wheels matching ``pattern`` there afterwards."""
    import sys

    from cannenv import host

    folder.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    argv += ["--disable-pip-version-check", "--no-input", "-q", "-d", str(folder), *platform, requirement]
    res = host.run(argv, timeout=timeout)
    if res.missing or res.timed_out or res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
        raise ExternalError(
            f"pip download {requirement} failed: " + (" | ".join(tail) or "no output"), hint=hint
        )
    return sorted(folder.glob(pattern))


def from_version(version: str, *, python: str | None = None, download: bool = True) -> Registry:
    """The registry of a torch_npu release: a wheel in the cache, else ``pip download --no-deps``.

    ``python`` (``3.10``): the wheel for that Python (a stack's), when this interpreter's has none.
    """
    if not VERSION_RE.match(version):
        raise InputError(f"{version!r} is not a torch_npu version", hint="e.g. 2.7.1 or 2.1.0.post8")
    if python is not None and not re.match(r"^3\.[0-9]{1,2}\Z", python):
        raise InputError(f"{python!r} is not a Python version (3.X)")
    folder = cache_folder() / version
    wheels = sorted(folder.glob(f"torch_npu-{version}-*.whl")) if folder.is_dir() else []
    if not wheels and download:
        platform = (
            ["--python-version", python, *(a for p in _PLATFORMS for a in ("--platform", p))]
            if python
            else []
        )
        wheels = download_wheels(
            f"torch-npu=={version}",
            folder,
            f"torch_npu-{version}-*.whl",
            platform,
            timeout=900,
            hint="check the version on PyPI (pip index versions torch-npu) and the network, "
            "or pass a wheel file",
        )
    if not wheels:
        raise NotFoundError(f"no torch_npu {version} wheel in {folder}")
    return from_wheel(wheels[0])


def resolve(spec: str | None, *, python: str | None = None) -> Registry:
    """``--torch-npu``: an installed dist folder, a wheel file, a version; None = this Python's.

    ``python`` picks the wheel of a version for that Python (a stack's).
    """
    if spec is None:
        reg = installed()
        if reg is None:
            raise MissingToolError(
                "torch_npu is not installed in this Python",
                hint="pass --torch-npu VERSION (e.g. 2.7.1), a torch_npu wheel file, or its package folder",
            )
        return reg
    path = Path(spec)
    if path.suffix == ".whl" or path.is_file():
        return from_wheel(path)
    if path.is_dir():
        return from_dir(path)
    if VERSION_RE.match(spec):
        return from_version(spec, python=python)
    raise InputError(
        f"--torch-npu {spec!r} is neither a wheel, a folder nor a version",
        hint="e.g. --torch-npu 2.7.1, --torch-npu torch_npu-2.7.1-cp311-...whl, "
        "--torch-npu /path/site-packages",
    )


def diff(old: Registry, new: Registry) -> dict[str, list[str]]:
    """Operators added and removed between two registries."""
    return {
        "added": sorted(set(new.ops) - set(old.ops)),
        "removed": sorted(set(old.ops) - set(new.ops)),
    }
