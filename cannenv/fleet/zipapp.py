"""A self-contained copy of cannenv to push to hosts that have none: the fleet *bundle*.

Design (see docs/fleet.md, "Why a bundle"): ``cannenv facts`` needs pydantic, whose core is a native
extension module (pydantic_core), so a pure-Python zipapp cannot carry it, and a wheelhouse pushed
to every host would need pip, a venv and wheels for each host's Python anyway. The bundle instead
is a zipapp (``python3 cannenv.pyz facts --json``) holding cannenv plus every third-party module
that ``cannenv.cli`` imports, copied from the controller's interpreter — native modules included —
and a stdlib-only ``__main__`` (``templates/bundle_main.py.in``). At run time ``__main__`` checks
that the host's interpreter has the same *bundle tag* (CPython minor version, machine, libc) as
the controller; if not it exits 3 with ``cannenv-bundle: python-mismatch: ...`` and the fleet
records that reason for the host. Matching tags extract the payload once per content digest into
a private cache directory (native modules cannot be imported from a zip) and run from there.

The bundle is deterministic: same modules, same bytes (sorted entries, fixed timestamps).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from importlib import resources as importlib_resources
from pathlib import Path

from cannenv.errors import ExternalError

ENTRY_MODULES: tuple[str, ...] = ("cannenv.cli", "cannenv.probes")
"""Imported in a fresh interpreter to find what the bundle must carry."""

LAZY_MODULES: tuple[str, ...] = ("elftools.elf.elffile", "elftools.elf.dynamic", "distro", "yaml")
"""Imported inside functions by the probes (and the doctor): carried when installed here."""

_SKIP_TOP: frozenset[str] = frozenset(
    {"__main__", "site", "sitecustomize", "usercustomize", "_distutils_hack"}
)
_SKIP_DIRS: frozenset[str] = frozenset({"__pycache__", "tests", "test"})
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

_DISCOVER = r"""
import importlib, json, sys
args = sys.argv[1:]
cut = args.index("--optional")
for name in args[:cut]:
    importlib.import_module(name)
for name in args[cut + 1:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
out = {}
for name, mod in sorted(sys.modules.items()):
    top = name.partition(".")[0]
    if top in out or top in sys.builtin_module_names or "." in name and top in sys.modules and top != name:
        continue
    m = sys.modules.get(top)
    spec = getattr(m, "__spec__", None)
    if spec is None:
        continue
    locs = list(spec.submodule_search_locations or [])
    out[top] = {"origin": spec.origin, "locations": locs}
print(json.dumps(out))
"""


@dataclass(frozen=True)
class Bundle:
    """A built bundle: where it is, what it is for, and what it carries."""

    path: Path
    sha256: str
    tag: str
    modules: tuple[str, ...]
    size: int


def bundle_tag() -> str:
    """The tag of this interpreter: ``cp311-x86_64-gnu``. Hosts must match it to run the bundle."""
    name, _ = platform.libc_ver()
    libc = "gnu" if name == "glibc" else (name or "unknown")
    return f"cp{sys.version_info[0]}{sys.version_info[1]}-{platform.machine()}-{libc}"


def _package_root() -> Path:
    return Path(__file__).resolve().parent.parent.parent


def _stdlib_dirs() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    return tuple(Path(paths[k]).resolve() for k in ("stdlib", "platstdlib") if k in paths)


def _is_stdlib(origin: Path) -> bool:
    site_markers = ("site-packages", "dist-packages")
    if any(part in site_markers for part in origin.parts):
        return False
    return any(origin.is_relative_to(d) for d in _stdlib_dirs())


def discover_modules(
    entry_modules: tuple[str, ...] = ENTRY_MODULES, lazy_modules: tuple[str, ...] = LAZY_MODULES
) -> dict[str, list[Path]]:
    """Top-level modules the entry modules import that are not the standard library, with their files."""
    from cannenv.host import run

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(_package_root()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    result = run(
        [sys.executable, "-c", _DISCOVER, *entry_modules, "--optional", *lazy_modules], timeout=120, env=env
    )
    if not result.ok:
        raise ExternalError(
            f"could not import cannenv to build the fleet bundle: {result.describe()}",
            hint=(result.stderr.strip().splitlines() or [""])[-1] or None,
        )
    raw: dict[str, dict[str, object]] = json.loads(result.stdout)
    stdlib_names: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    found: dict[str, list[Path]] = {}
    for top, info in raw.items():
        if top in _SKIP_TOP or top in stdlib_names:
            continue
        locations = [Path(str(p)) for p in info.get("locations") or []]  # type: ignore[attr-defined]
        origin = info.get("origin")
        paths = locations or ([Path(str(origin))] if isinstance(origin, str) and os.sep in origin else [])
        paths = [p for p in paths if p.exists() and not _is_stdlib(p.resolve())]
        if paths:
            found[top] = paths
    return found


def _payload(modules: dict[str, list[Path]]) -> list[tuple[str, Path]]:
    """(archive name, local file) pairs for every file under ``site/``, sorted."""
    files: dict[str, Path] = {}
    for top, paths in modules.items():
        for path in paths:
            if path.is_file():
                files[f"site/{path.name}"] = path
                continue
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
                rel = Path(dirpath).relative_to(path)
                for fn in filenames:
                    if fn.endswith((".pyc", ".pyo")):
                        continue
                    files[f"site/{top}/{(rel / fn).as_posix()}".replace("/./", "/")] = Path(dirpath) / fn
    if "cannenv" in modules:
        from cannenv.resources import matrices_dir

        mdir = matrices_dir()
        for p in sorted(mdir.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                files[f"site/cannenv/_data/matrices/{p.relative_to(mdir).as_posix()}"] = p
    return sorted(files.items())


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def build_bundle(out: str | os.PathLike[str], *, entry_modules: tuple[str, ...] = ENTRY_MODULES) -> Bundle:
    """Write the bundle to ``out`` (atomically) and describe it."""
    from cannenv.fsutil import atomic_write_bytes, sha256_file

    modules = discover_modules(entry_modules)
    payload = _payload(modules)
    digest = hashlib.sha256()
    for name, path in payload:
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    tag = bundle_tag()
    template = importlib_resources.files("cannenv.fleet").joinpath("templates/bundle_main.py.in").read_text()
    main_py = template.replace("@TAG@", tag).replace("@DIGEST@", digest.hexdigest()[:32])

    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(_entry("__main__.py"), main_py)
        for name, path in payload:
            zf.writestr(_entry(name), path.read_bytes())
    data = b"#!/usr/bin/env python3\n" + buf.getvalue()
    target = atomic_write_bytes(out, data, mode=0o755)
    return Bundle(target, sha256_file(target), tag, tuple(sorted(modules)), len(data))
