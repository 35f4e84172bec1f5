"""A self-contained copy of cannenv to push to hosts that have none: the fleet *bundle*.

Design (see docs/fleet.md, "The bundle"): ``cannenv facts`` imports no native code. Its value types
are standard-library dataclasses (:mod:`cannenv.values`; pydantic is imported lazily, only where
outside data is validated), and everything else it imports is pure Python (cannenv, click,
pyelftools, distro) or has a pure-Python fallback for an optional speed-up (PyYAML's ``_yaml``). So
the bundle is pure Python: **one** zipapp (``python3 cannenv.pyz facts --json``) that runs on any
Python >= :data:`MIN_PYTHON`, whatever the host's machine or libc. It holds

* ``site/``: cannenv and every third-party module ``cannenv.cli``, the doctor and the probes import,
  as ``.py`` sources copied from the controller's interpreter (no byte code, no type stubs, and no
  native files: optional speed-ups are left out, the host runs their pure-Python fallbacks);
* a stdlib-only ``__main__`` (``templates/bundle_main.py.in``) that checks the host's Python (older
  than :data:`MIN_PYTHON`: exit 3 with ``cannenv-bundle: python-mismatch: ...``), extracts ``site/``
  once per content digest into a private cache directory and runs cannenv from there.

What the bundle must carry is found by importing :data:`ENTRY_MODULES` and :data:`LAZY_MODULES` in a
fresh interpreter that cannot load third-party native extension modules, exactly like a host running
the bundle (:func:`discover_modules`). A native module the facts path needs and has no fallback for
would break every remote host, so the build stops instead (:class:`NativeModuleError`), naming it.

The bundle is deterministic: same sources, same bytes (sorted entries, fixed timestamps). Built
bundles are cached on the controller under a key over their content (:func:`build_bundle` with
``out=None``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources as importlib_resources
from pathlib import Path

from cannenv.errors import ExternalError

ENTRY_MODULES: tuple[str, ...] = ("cannenv.gather", "cannenv.probes", "cannenv.soc")
"""Imported in a fresh interpreter to find what the bundle must carry: the bundle's entry point
(:func:`cannenv.gather.bundle_main`, no click), the probes, and the SoC table they consult."""

LAZY_MODULES: tuple[str, ...] = ("elftools.elf.elffile", "elftools.elf.dynamic")
"""Imported inside functions on the facts path (pyelftools by the ABI preflight, which says so
and skips where the host's Python is too old for it): carried when installed here."""

MIN_PYTHON: tuple[int, int] = (3, 7)
"""The oldest Python the bundle runs on: the usual Ascend host OSes ship 3.7 (Kylin V10), 3.8
(Ubuntu 20.04) and 3.9 (openEuler 22.03). Everything the facts path imports stays 3.7-compatible
(``tests/unit/test_py37.py``), although the package itself needs 3.10."""

BUNDLE_TAG = "py3-none-any"
"""What the bundle runs on, in wheel-tag words: any Python 3 (>= :data:`MIN_PYTHON`), any machine."""

_SKIP_TOP: frozenset[str] = frozenset(
    {"__main__", "site", "sitecustomize", "usercustomize", "_distutils_hack"}
)
_SKIP_DIRS: frozenset[str] = frozenset({"__pycache__", "tests", "test"})
_NATIVE_FILE = re.compile(r"\.(so|pyd|dylib)(\.[0-9.]*)?\Z")
_NOT_CARRIED = (".pyc", ".pyo", ".pyi")
"""Byte code (the host compiles the sources itself) and type stubs (not needed to run)."""
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)

# Run with ``python -S``: no .pth file or sitecustomize imports anything before the entry modules
# (the controller's search path is passed in and appended after the standard library, as site would).
# A meta path finder refuses every native extension module outside the standard library, as a host
# without them would (ModuleNotFoundError): code with a pure-Python fallback takes it; code without
# one fails, and the refused module is named.
_DISCOVER = r"""
import importlib, importlib.machinery, json, os, sys, sysconfig

args = sys.argv[1:]
cut_lazy, cut_path = args.index("--optional"), args.index("--path")
entry, lazy, extra = args[:cut_lazy], args[cut_lazy + 1:cut_path], args[cut_path + 1:]
root, extra = extra[0], extra[1:]
sys.path.insert(0, root)
sys.path.extend(p for p in extra if p not in sys.path)

paths = sysconfig.get_paths()
STDLIB = sorted({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths})


def in_stdlib(path):
    real = os.path.realpath(path)
    if {"site-packages", "dist-packages"} & set(real.split(os.sep)):
        return False
    return any(real == d or real.startswith(d + os.sep) for d in STDLIB)


refused = []


class NoNativeExtensions:
    def find_spec(self, name, path=None, target=None):
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        native = isinstance(spec.loader, importlib.machinery.ExtensionFileLoader) or (
            spec.origin or ""
        ).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
        if native and spec.origin and not in_stdlib(spec.origin):
            refused.append({"name": name, "origin": spec.origin})
            raise ModuleNotFoundError("No module named %r (native, not carried)" % name, name=name)
        return spec


sys.meta_path.insert(0, NoNativeExtensions())
failed = []
entry_files = []
for name in entry:
    before = len(refused)
    try:
        importlib.import_module(name)
    except Exception as exc:
        error = "%s: %s" % (type(exc).__name__, exc)
        failed.append({"module": name, "error": error, "refused": refused[before:]})
entry_files = sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""})
skipped = []
for name in lazy:
    before = len(refused)
    try:
        importlib.import_module(name)
    except Exception as exc:  # not installed here (ImportError, nothing refused): not carried
        error = "%s: %s" % (type(exc).__name__, exc)
        item = {"module": name, "error": error, "refused": refused[before:]}
        absent = isinstance(exc, ImportError) and not item["refused"]
        (skipped if absent else failed).append(item)
out = {}
for name in sorted(sys.modules):
    top = name.partition(".")[0]
    if top in out or top in sys.builtin_module_names:
        continue
    spec = getattr(sys.modules.get(top), "__spec__", None)
    if spec is None:
        continue
    out[top] = {"origin": spec.origin, "locations": list(spec.submodule_search_locations or [])}
print(json.dumps({"modules": out, "refused": refused, "failed": failed, "skipped": skipped,
                  "entry_files": entry_files}))
"""


class NativeModuleError(ExternalError):
    """The facts path needs a native extension module with no pure-Python fallback.

    The bundle is pure Python so that one file runs on every host; it cannot carry such a module.
    Raised by :func:`discover_modules` (and so :func:`build_bundle`) instead of building a bundle
    that would fail on remote hosts.
    """


# ------------------------------------------------------------------ discovery


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


def _search_path() -> list[str]:
    """This interpreter's import path without the standard library (site-packages, .pth additions)."""
    out: list[str] = []
    for entry in sys.path:
        if not entry or not Path(entry).exists() or _is_stdlib(Path(entry).resolve()):
            continue
        if entry not in out:
            out.append(entry)
    return out


def _native_message(failed: list[dict[str, object]]) -> str:
    lines = ["the fleet bundle is pure Python, but the facts path needs native extension modules:"]
    for item in failed:
        refused = item.get("refused")
        for r in refused if isinstance(refused, list) else []:
            lines.append(f"  {r['name']} ({r['origin']}), imported by {item['module']}")
    return "\n".join(lines)


def discover_modules(
    entry_modules: tuple[str, ...] = ENTRY_MODULES, lazy_modules: tuple[str, ...] = LAZY_MODULES
) -> dict[str, list[Path]]:
    """Top-level modules the entry modules import that are not the standard library, with their files.

    Imported in a fresh interpreter (``python -S``) that refuses third-party native extension modules.
    Raises :class:`NativeModuleError` when an entry module, or an installed lazy module, needs one
    (no pure-Python fallback), and :class:`ExternalError` when an entry module cannot be imported.
    """
    return _discover(entry_modules, lazy_modules)[0]


def facts_path_sources(entry_modules: tuple[str, ...] = ENTRY_MODULES) -> list[Path]:
    """Every non-standard-library source file importing the entry modules loads (the lazy modules
    left out): what must run on every host Python >= :data:`MIN_PYTHON` (tests/unit/test_py37.py)."""
    files = _discover(entry_modules, ())[1]
    return [f for f in files if f.suffix == ".py" and not _is_stdlib(f.resolve())]


def _discover(
    entry_modules: tuple[str, ...], lazy_modules: tuple[str, ...]
) -> tuple[dict[str, list[Path]], list[Path]]:
    from cannenv.host import run

    argv = [sys.executable, "-S", "-c", _DISCOVER, *entry_modules, "--optional", *lazy_modules]
    result = run([*argv, "--path", str(_package_root()), *_search_path()], timeout=120)
    if not result.ok:
        raise ExternalError(
            f"could not import cannenv to build the fleet bundle: {result.describe()}",
            hint=(result.stderr.strip().splitlines() or [""])[-1] or None,
        )
    raw = json.loads(result.stdout)
    failed: list[dict[str, object]] = raw["failed"]
    native = [item for item in failed if item.get("refused")]
    if native:
        names = sorted({str(r["name"]) for item in native for r in item["refused"]})  # type: ignore[attr-defined]
        raise NativeModuleError(
            _native_message(native),
            hint=f"{', '.join(names)}: native code built for this Python and machine only, which one "
            "bundle for every host cannot carry; import it lazily, off the facts path (cannenv.cli, "
            "cannenv.commands.doctor, cannenv.probes), or give it a pure-Python fallback "
            '(docs/fleet.md, "The bundle")',
        )
    if failed:
        raise ExternalError(
            "could not import cannenv to build the fleet bundle: "
            + "; ".join(f"{item['module']}: {item['error']}" for item in failed),
            hint="install cannenv with its dependencies on the controller",
        )
    modules: dict[str, dict[str, object]] = raw["modules"]
    stdlib_names: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    found: dict[str, list[Path]] = {}
    for top, info in modules.items():
        if top in _SKIP_TOP or top in stdlib_names:
            continue
        locations = info.get("locations")
        origin = info.get("origin")
        paths = [Path(str(p)) for p in locations] if isinstance(locations, list) and locations else []
        if not paths and isinstance(origin, str) and os.sep in origin:
            paths = [Path(origin)]
        paths = [p for p in paths if p.exists() and not _is_stdlib(p.resolve())]
        if paths:
            found[top] = paths
    return found, [Path(f) for f in raw["entry_files"]]


# ------------------------------------------------------------------ the payload


def _walk(top: str, path: Path) -> Iterable[tuple[str, Path]]:
    """(name relative to the import root, file) for a module file or every file of a package."""
    if path.is_file():
        yield path.name, path
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        rel = Path(dirpath).relative_to(path)
        for fn in sorted(filenames):
            if fn.endswith(_NOT_CARRIED):
                continue
            yield (Path(top) / rel / fn).as_posix(), Path(dirpath) / fn


def _payload(modules: dict[str, list[Path]]) -> tuple[list[tuple[str, Path]], list[str]]:
    """(archive name, local file) of every file under ``site/``, sorted; the native files left out."""
    files: dict[str, Path] = {}
    dropped: list[str] = []
    for top, paths in modules.items():
        for path in paths:
            for rel, local in _walk(top, path):
                if _NATIVE_FILE.search(rel):
                    dropped.append(rel)
                else:
                    files[f"site/{rel}"] = local
    return sorted(files.items()), sorted(dropped)


BUNDLE_LEAVES_OUT = ("explain",)
"""Folders of the matrices the facts path never reads: ``explain/`` (error signatures and the
vendors' message tables, several MB) is read by ``cannenv explain`` on the controller only."""


def _data_files() -> list[tuple[str, bytes]]:
    """Data the facts path reads in the bundle: the SoC table as JSON (validated here, by the
    controller; the host needs neither YAML nor pydantic for it) and the shipped matrices (less
    :data:`BUNDLE_LEAVES_OUT`)."""
    from cannenv import soc
    from cannenv.resources import matrices_dir
    from cannenv.values import to_json

    out = [(f"site/cannenv/_data/{soc.BUNDLED_HARDWARE}", to_json(soc.hardware()).encode())]
    mdir = matrices_dir()
    for p in sorted(mdir.rglob("*")):
        if p.relative_to(mdir).parts[0] in BUNDLE_LEAVES_OUT:
            continue
        if p.is_file() and "__pycache__" not in p.parts:
            out.append((f"site/cannenv/_data/matrices/{p.relative_to(mdir).as_posix()}", p.read_bytes()))
    return out


def cache_root() -> Path | None:
    """The controller's cache for fleet bundles (``$CANNENV_CACHE_DIR``/... ``/fleet``)."""
    from cannenv.matrix import cache_dir

    base = cache_dir()
    return None if base is None else base / "fleet"


# ------------------------------------------------------------------ the archive


@dataclass(frozen=True)
class Bundle:
    """A built bundle: where it is and what it carries."""

    path: Path
    sha256: str
    modules: tuple[str, ...]
    """Top-level modules under ``site/``."""
    size: int
    files: int
    """Entries in the archive (``__main__.py`` and ``site/``)."""
    left_out: tuple[str, ...] = ()
    """Native files of carried packages that were left out (optional speed-ups with a fallback)."""
    tag: str = BUNDLE_TAG


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _template() -> str:
    return importlib_resources.files("cannenv.fleet").joinpath("templates/bundle_main.py.in").read_text()


def _content_digest(pure: Sequence[tuple[str, bytes]], main_template: str) -> str:
    digest = hashlib.sha256(main_template.encode())
    digest.update(repr(MIN_PYTHON).encode())
    for name, data in pure:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def render_main(pure: Sequence[tuple[str, bytes]]) -> str:
    """The bundle's ``__main__.py``: the template with the content digest and :data:`MIN_PYTHON`."""
    template = _template()
    return template.replace("@DIGEST@", _content_digest(pure, template)[:32]).replace(
        "@MIN_PYTHON@", repr(MIN_PYTHON)
    )


def render_archive(pure: Sequence[tuple[str, bytes]]) -> bytes:
    """The bundle's bytes: a shebang line and a zip with sorted entries and fixed timestamps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(_entry("__main__.py"), render_main(pure))
        for name, data in pure:
            zf.writestr(_entry(name), data)
    return b"#!/usr/bin/env python3\n" + buf.getvalue()


def build_bundle(
    out: str | os.PathLike[str] | None, *, entry_modules: tuple[str, ...] = ENTRY_MODULES
) -> Bundle:
    """Write the bundle to ``out`` (atomically) and describe it.

    ``out=None`` keeps it in the controller's cache under a key over its content (built only when
    absent) and returns that path; with caching off (``CANNENV_NO_CACHE=1``) it goes to a new
    temporary file. Raises :class:`NativeModuleError` when the facts path needs native code.
    """
    from cannenv.fsutil import atomic_write_bytes, sha256_file

    modules = discover_modules(entry_modules)
    files, left_out = _payload(modules)
    pure = sorted([(name, path.read_bytes()) for name, path in files] + _data_files())
    if out is None:
        root = cache_root()
        if root is None:
            fd, tmp = tempfile.mkstemp(prefix="cannenv-bundle-", suffix=".pyz")
            os.close(fd)
            target = Path(tmp)
        else:
            key = _content_digest(pure, _template())
            target = root / "bundles" / f"cannenv-{key[:40]}.pyz"
        if target.is_file() and target.stat().st_size > 0:
            os.utime(target)  # most recently used: kept by _prune
        else:
            target = atomic_write_bytes(target, render_archive(pure), mode=0o755)
        _prune(target.parent, keep=target)
    else:
        target = atomic_write_bytes(out, render_archive(pure), mode=0o755)
    return Bundle(
        path=target,
        sha256=sha256_file(target),
        modules=tuple(sorted(modules)),
        size=target.stat().st_size,
        files=1 + len(pure),
        left_out=tuple(left_out),
    )


_BUNDLES_KEPT = 8


def _prune(folder: Path, keep: Path) -> None:
    """Keep the newest few cached bundles."""
    if folder.name != "bundles":
        return
    old = sorted(folder.glob("cannenv-*.pyz"), key=lambda p: p.stat().st_mtime, reverse=True)
    for p in old[_BUNDLES_KEPT:]:
        if p != keep:
            p.unlink(missing_ok=True)
