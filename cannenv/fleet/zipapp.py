"""A self-contained copy of cannenv to push to hosts that have none: the fleet *bundle*.

Design (see docs/fleet.md, "The bundle"): ``cannenv facts`` needs pydantic, whose core is a native
extension module (pydantic_core); everything else it imports is pure Python (click, pydantic,
typing_extensions, annotated_types, typing_inspection, pyelftools, distro) or has a pure-Python
fallback for its optional speed-ups (PyYAML's ``_yaml``). The bundle is a zipapp
(``python3 cannenv.pyz facts --json``) holding

* ``site/``: cannenv and every third-party module ``cannenv.cli`` and the probes import, as ``.py``
  sources copied once from the controller's interpreter (native speed-ups left out);
* ``native/<tag>/pydantic_core/``: pydantic_core for each *target tag* (``cp312-aarch64``: CPython
  minor version, machine, ``-musl`` for musl libc, ``t`` after the version for free-threaded builds).
  The controller's own tag is copied from its interpreter; the others come from pydantic_core
  wheels of the exact installed version (pydantic refuses any other), found in ``--wheelhouse`` or
  the controller's wheel cache, else fetched with ``pip download --only-binary=:all:``;
* a stdlib-only ``__main__`` (``templates/bundle_main.py.in``) that picks ``native/<host tag>/`` at
  run time, or exits 3 with ``cannenv-bundle: python-mismatch: ...`` naming the tags carried and the
  ``--target`` option that adds the host's.

The bundle is deterministic: same sources and wheels, same bytes (sorted entries, fixed timestamps).
Built bundles are cached on the controller under a key over their content (:func:`build_bundle`
with ``out=None``), and so are downloaded wheels.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import re
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources as importlib_resources
from pathlib import Path

from cannenv.errors import ExternalError, InputError, NotFoundError, did_you_mean

ENTRY_MODULES: tuple[str, ...] = ("cannenv.cli", "cannenv.commands.doctor", "cannenv.probes")
"""Imported in a fresh interpreter to find what the bundle must carry (``facts`` lives in doctor)."""

LAZY_MODULES: tuple[str, ...] = ("elftools.elf.elffile", "elftools.elf.dynamic", "distro", "yaml")
"""Imported inside functions by the probes (and the doctor): carried when installed here."""

NATIVE_PACKAGES: tuple[str, ...] = ("pydantic_core",)
"""Packages with no pure-Python fallback: carried per target tag. Other native files are left out."""

MIN_PYTHON: tuple[int, int] = (3, 10)
MACHINES: tuple[str, ...] = ("x86_64", "aarch64", "ppc64le", "s390x", "armv7l", "i686")
"""Linux machines pydantic_core publishes wheels for."""
_MACHINE_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}
DEFAULT_TARGETS: tuple[str, ...] = tuple(
    f"cp3{minor}-{machine}" for minor in (10, 11, 12, 13) for machine in ("x86_64", "aarch64")
)
"""CPython 3.10-3.13 on x86_64 and aarch64, glibc (manylinux): the OS Pythons of Ascend fleets."""

_SKIP_TOP: frozenset[str] = frozenset(
    {"__main__", "site", "sitecustomize", "usercustomize", "_distutils_hack"}
)
_SKIP_DIRS: frozenset[str] = frozenset({"__pycache__", "tests", "test"})
_NATIVE_FILE = re.compile(r"\.(so|pyd|dylib)(\.[0-9.]*)?$")
_NOT_CARRIED = (".pyc", ".pyo", ".pyi")
"""Byte code (the host compiles the sources itself) and type stubs (not needed to run)."""
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_TARGET = re.compile(
    r"^cp(?P<major>\d)(?P<minor>\d{1,2})(?P<t>t?)-(?P<machine>[a-z0-9_]+?)(?:-(?P<libc>gnu|musl))?$"
)
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)$")
_MUSLLINUX = re.compile(r"^musllinux_(\d+)_(\d+)$")
_LEGACY_MANYLINUX = {"manylinux2014": "2.17", "manylinux2010": "2.12", "manylinux1": "2.5"}

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


# ------------------------------------------------------------------ targets


@dataclass(frozen=True, order=True)
class Target:
    """An interpreter the bundle carries native modules for; ``tag`` is its name (``cp312-aarch64``)."""

    major: int
    minor: int
    machine: str
    libc: str = "gnu"
    freethreaded: bool = False

    @property
    def tag(self) -> str:
        tag = f"cp{self.major}{self.minor}{'t' if self.freethreaded else ''}-{self.machine}"
        return tag if self.libc == "gnu" else f"{tag}-{self.libc}"

    @property
    def python_version(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def abi(self) -> str:
        return f"cp{self.major}{self.minor}{'t' if self.freethreaded else ''}"

    def pip_platforms(self) -> tuple[str, ...]:
        """``pip download --platform`` values: the oldest glibc/musl policy pydantic_core builds for."""
        if self.libc == "musl":
            return (f"musllinux_1_1_{self.machine}", f"musllinux_1_2_{self.machine}")
        return (f"manylinux2014_{self.machine}", f"manylinux_2_17_{self.machine}")

    def libc_floor(self, platform_tag: str) -> str | None:
        """The libc version a wheel platform tag needs on this target, or None when it does not fit."""
        suffix = f"_{self.machine}"
        if not platform_tag.endswith(suffix):
            return None
        m = (_MANYLINUX if self.libc == "gnu" else _MUSLLINUX).match(platform_tag[: -len(suffix)])
        if m:
            return f"{m.group(1)}.{m.group(2)}"
        if self.libc == "gnu":
            return _LEGACY_MANYLINUX.get(platform_tag[: -len(suffix)])
        return None

    def __str__(self) -> str:
        return self.tag


def parse_target(text: str) -> Target:
    """``cp312-aarch64`` (glibc), ``cp312-x86_64-musl``, ``cp313t-x86_64`` -> a :class:`Target`."""
    raw = text.strip().lower()
    m = _TARGET.match(raw)
    if not m:
        raise InputError(
            f"--target {text!r}: expected cpXY-MACHINE[-musl], e.g. cp312-aarch64 or cp311-x86_64-musl",
            hint="or `default` (CPython 3.10-3.13 on x86_64 and aarch64) or `controller` (this Python)",
        )
    machine = _MACHINE_ALIASES.get(m.group("machine"), m.group("machine"))
    if machine not in MACHINES:
        guess = did_you_mean(machine, MACHINES)
        raise InputError(
            f"--target {text!r}: unknown machine {machine!r}; expected one of {', '.join(MACHINES)}",
            hint=f"did you mean {guess}?" if guess else None,
        )
    target = Target(
        int(m.group("major")), int(m.group("minor")), machine, m.group("libc") or "gnu", m.group("t") == "t"
    )
    if (target.major, target.minor) < MIN_PYTHON:
        raise InputError(
            f"--target {text!r}: cannenv needs Python >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]}",
            hint="hosts with an older Python are recorded `no-python`; install a newer python3 there",
        )
    return target


def controller_target() -> Target:
    """The target of this interpreter (the controller's own tag)."""
    soabi = str(sysconfig.get_config_var("SOABI") or "")
    name, _ = platform.libc_ver()
    libc = "musl" if name == "musl" or soabi.endswith("-musl") else "gnu"
    machine = platform.machine().lower()
    return Target(
        sys.version_info[0],
        sys.version_info[1],
        _MACHINE_ALIASES.get(machine, machine),
        libc,
        bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
    )


def bundle_tag() -> str:
    """The tag of this interpreter, e.g. ``cp311-x86_64`` (what ``__main__`` computes on a host)."""
    return controller_target().tag


def parse_targets(values: Iterable[str]) -> tuple[Target, ...]:
    """``--target`` values (repeatable, comma-separated; ``default``, ``controller``) -> sorted targets.

    No value at all means ``default``.
    """
    out: set[Target] = set()
    words = [w.strip() for v in values for w in v.split(",") if w.strip()]
    for word in words or ["default"]:
        if word.lower() == "default":
            out.update(parse_target(t) for t in DEFAULT_TARGETS)
        elif word.lower() in ("controller", "host"):
            out.add(controller_target())
        else:
            out.add(parse_target(word))
    return tuple(sorted(out))


# ------------------------------------------------------------------ pure-Python payload


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
    """(archive name, local file) of every pure file under ``site/``, sorted; the native files left out."""
    files: dict[str, Path] = {}
    dropped: list[str] = []
    for top, paths in modules.items():
        if top in NATIVE_PACKAGES:
            continue
        for path in paths:
            for rel, local in _walk(top, path):
                if _NATIVE_FILE.search(rel):
                    dropped.append(rel)
                else:
                    files[f"site/{rel}"] = local
    if "cannenv" in modules:
        from cannenv.resources import matrices_dir

        mdir = matrices_dir()
        for p in sorted(mdir.rglob("*")):
            if p.is_file() and "__pycache__" not in p.parts:
                files[f"site/cannenv/_data/matrices/{p.relative_to(mdir).as_posix()}"] = p
    return sorted(files.items()), sorted(dropped)


# ------------------------------------------------------------------ native modules per tag


@dataclass(frozen=True)
class NativeBuild:
    """One target's native packages: where they came from and the files (relative to ``native/<tag>/``)."""

    tag: str
    origin: str
    """``installed`` (the controller's interpreter) or the wheel's file name."""
    sha256: str
    """Of the wheel, or of the installed files."""
    libc_floor: str
    """Oldest glibc/musl the build needs (``2.17``), ``""`` when unknown."""
    files: tuple[tuple[str, bytes], ...]


def cache_root() -> Path | None:
    """The controller's cache for fleet wheels and bundles (``$CANNENV_CACHE_DIR``/... ``/fleet``)."""
    from cannenv.matrix import cache_dir

    base = cache_dir()
    return None if base is None else base / "fleet"


def installed_version(package: str = "pydantic_core") -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError as exc:
        raise NotFoundError(
            f"{package} is not installed on the controller", hint="install cannenv with its dependencies"
        ) from exc


def _wheel_choice(target: Target, package: str, version: str, path: Path) -> str | None:
    """The libc floor when ``path`` is a wheel of ``package==version`` for ``target``, else None."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    try:
        name, ver, _build, tags = parse_wheel_filename(path.name)
    except InvalidWheelFilename:
        return None
    if name != canonicalize_name(package) or ver != Version(version):
        return None
    floors = [
        floor
        for t in tags
        if t.interpreter == target.abi and t.abi == target.abi
        for floor in [target.libc_floor(t.platform)]
        if floor is not None
    ]
    return min(floors, key=_version_key) if floors else None


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def find_wheel(
    target: Target, version: str, dirs: Sequence[Path], package: str = "pydantic_core"
) -> Path | None:
    """The wheel for ``target`` in ``dirs`` needing the oldest libc (ties: file name); None if absent."""
    best: tuple[tuple[int, ...], str, Path] | None = None
    for d in dirs:
        if not d.is_dir():
            continue
        for path in sorted(d.glob("*.whl")):
            floor = _wheel_choice(target, package, version, path)
            if floor is None:
                continue
            key = (_version_key(floor), path.name, path)
            if best is None or key[:2] < best[:2]:
                best = key
    return None if best is None else best[2]


def pip_download_argv(target: Target, version: str, dest: str, package: str = "pydantic-core") -> list[str]:
    argv = [
        "pip",
        "download",
        "--only-binary=:all:",
        "--no-deps",
        "--python-version",
        target.python_version,
        "--implementation",
        "cp",
        "--abi",
        target.abi,
    ]
    for plat in target.pip_platforms():
        argv += ["--platform", plat]
    return [*argv, "--dest", dest, f"{package}=={version}"]


def _download(target: Target, version: str, dest: Path) -> str:
    """Fetch the wheel into ``dest`` (through a private temp folder, so partial files never land there).

    Returns "" on success, else the reason.
    """
    from cannenv.host import run

    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest) as tmp:
        argv = [sys.executable, "-m", *pip_download_argv(target, version, tmp)]
        argv += ["--disable-pip-version-check", "--no-input", "--retries", "1", "--timeout", "20"]
        result = run(argv, timeout=300)
        if not result.ok:
            lines = [ln for ln in (result.stderr or result.stdout).strip().splitlines() if ln.strip()]
            return lines[-1].strip() if lines else result.describe()
        for whl in Path(tmp).glob("*.whl"):
            whl.replace(dest / whl.name)
    return ""


def _installed_native(target: Target, modules: dict[str, list[Path]]) -> NativeBuild:
    from importlib import metadata

    files: list[tuple[str, bytes]] = []
    for top in NATIVE_PACKAGES:
        for path in modules.get(top, []):
            files += [(rel, local.read_bytes()) for rel, local in _walk(top, path)]
    files.sort()
    digest = hashlib.sha256()
    for rel, data in files:
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    floor = ""
    try:
        wheel_meta = metadata.distribution(NATIVE_PACKAGES[0]).read_text("WHEEL") or ""
    except metadata.PackageNotFoundError:
        wheel_meta = ""
    floors = [
        f
        for line in wheel_meta.splitlines()
        if line.startswith("Tag:")
        for f in [target.libc_floor(line.split("-")[-1].strip())]
        if f is not None
    ]
    if floors:
        floor = min(floors, key=_version_key)
    return NativeBuild(target.tag, "installed", digest.hexdigest(), floor, tuple(files))


def _wheel_native(target: Target, wheel: Path) -> NativeBuild:
    from cannenv.fsutil import sha256_file

    files: list[tuple[str, bytes]] = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            top = info.filename.partition("/")[0]
            if top in NATIVE_PACKAGES and not info.is_dir() and not info.filename.endswith(_NOT_CARRIED):
                files.append((info.filename, zf.read(info)))
    if not files:
        raise ExternalError(f"wheel {wheel} holds no {', '.join(NATIVE_PACKAGES)} package")
    floor = None
    from packaging.utils import parse_wheel_filename

    for t in parse_wheel_filename(wheel.name)[3]:
        f = target.libc_floor(t.platform)
        if f is not None and (floor is None or _version_key(f) < _version_key(floor)):
            floor = f
    return NativeBuild(target.tag, wheel.name, sha256_file(wheel), floor or "", tuple(sorted(files)))


def resolve_native(
    targets: Sequence[Target],
    modules: dict[str, list[Path]],
    *,
    wheelhouse: str | os.PathLike[str] | None = None,
    download: bool = True,
) -> dict[str, NativeBuild]:
    """The native packages of every target: the controller's own from its interpreter, the others from
    wheels of the installed version in ``wheelhouse`` or the wheel cache, downloaded when missing.

    Raises :class:`NotFoundError` naming every target it could not get, with the way to get it.
    """
    version = installed_version(NATIVE_PACKAGES[0])
    own = controller_target()
    dirs: list[Path] = []
    if wheelhouse is not None:
        wh = Path(wheelhouse)
        if not wh.is_dir():
            raise NotFoundError(
                f"--wheelhouse {wh}: not a directory", hint="give a folder of pydantic_core wheels"
            )
        dirs.append(wh)
    root = cache_root()
    with tempfile.TemporaryDirectory(prefix="cannenv-wheels-") as scratch:
        cache = root / "wheels" if root is not None else Path(scratch)
        dirs.append(cache)
        out: dict[str, NativeBuild] = {}
        missing: list[tuple[Target, str]] = []
        for target in targets:
            if target == own:
                out[target.tag] = _installed_native(target, modules)
                continue
            wheel = find_wheel(target, version, dirs)
            why = "not in " + " or ".join(str(d) for d in dirs)
            if wheel is None and download:
                why = _download(target, version, cache) or why
                wheel = find_wheel(target, version, dirs)
            if wheel is None:
                missing.append((target, why))
                continue
            out[target.tag] = _wheel_native(target, wheel)
    if missing:
        raise NotFoundError(
            missing_targets_message(missing, version), hint=missing_targets_hint(missing, version)
        )
    return out


def missing_targets_message(missing: Sequence[tuple[Target, str]], version: str) -> str:
    lines = [
        f"no pydantic_core {version} wheel for bundle target(s) "
        + ", ".join(t.tag for t, _ in missing)
        + " (pydantic needs exactly the installed version)"
    ]
    lines += [f"  {t.tag} (CPython {t.python_version}, {t.machine}, {t.libc}): {why}" for t, why in missing]
    return "\n".join(lines)


def missing_targets_hint(missing: Sequence[tuple[Target, str]], version: str) -> str:
    cmds = "; ".join(" ".join(pip_download_argv(t, version, "WHEELHOUSE")) for t, _ in missing)
    return (
        f"on a machine that reaches PyPI run: {cmds}; then pass --wheelhouse WHEELHOUSE "
        "(or leave those targets out with --target)"
    )


# ------------------------------------------------------------------ the archive


@dataclass(frozen=True)
class Bundle:
    """A built bundle: where it is, the tags it carries native modules for, and what it carries."""

    path: Path
    sha256: str
    tag: str
    """The controller's own tag (whose interpreter the pure-Python part was taken from)."""
    modules: tuple[str, ...]
    size: int
    tags: tuple[str, ...] = ()
    native: tuple[tuple[str, str], ...] = ()
    """(tag, origin) per target: ``installed`` or the wheel file name."""
    left_out: tuple[str, ...] = ()
    """Native files of pure-Python packages that were left out (optional speed-ups)."""


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _template() -> str:
    return importlib_resources.files("cannenv.fleet").joinpath("templates/bundle_main.py.in").read_text()


def _content_digest(
    pure: Sequence[tuple[str, bytes]], native: dict[str, NativeBuild], main_template: str
) -> str:
    digest = hashlib.sha256(main_template.encode())
    for name, data in pure:
        digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    for tag in sorted(native):
        b = native[tag]
        digest.update(f"native/{tag}\0{b.libc_floor}\0".encode())
        for rel, data in b.files:
            digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def render_archive(pure: Sequence[tuple[str, bytes]], native: dict[str, NativeBuild]) -> bytes:
    """The bundle's bytes: a shebang line and a zip with sorted entries and fixed timestamps."""
    template = _template()
    content = _content_digest(pure, native, template)
    tags = {tag: native[tag].libc_floor for tag in sorted(native)}
    main_py = template.replace("@TAGS@", json.dumps(tags, sort_keys=True)).replace("@DIGEST@", content[:32])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(_entry("__main__.py"), main_py)
        for name, data in pure:
            zf.writestr(_entry(name), data)
        for tag in sorted(native):
            for rel, data in native[tag].files:
                zf.writestr(_entry(f"native/{tag}/{rel}"), data)
    return b"#!/usr/bin/env python3\n" + buf.getvalue()


def build_bundle(
    out: str | os.PathLike[str] | None,
    *,
    targets: Sequence[Target] | None = None,
    wheelhouse: str | os.PathLike[str] | None = None,
    download: bool = True,
    entry_modules: tuple[str, ...] = ENTRY_MODULES,
) -> Bundle:
    """Write the bundle to ``out`` (atomically) and describe it.

    ``targets``: the tags to carry native modules for (default: only the controller's own, which
    needs no wheel; the CLI passes :data:`DEFAULT_TARGETS`). ``out=None`` keeps it in the
    controller's cache under a key over its content (built only when absent) and returns that path;
    with caching off (``CANNENV_NO_CACHE=1``) it goes to a new temporary file.
    """
    from cannenv.fsutil import atomic_write_bytes, sha256_file

    chosen = tuple(sorted(set(targets))) if targets else (controller_target(),)
    modules = discover_modules(entry_modules)
    files, left_out = _payload(modules)
    pure = [(name, path.read_bytes()) for name, path in files]
    native = resolve_native(chosen, modules, wheelhouse=wheelhouse, download=download)
    if out is None:
        root = cache_root()
        if root is None:
            fd, tmp = tempfile.mkstemp(prefix="cannenv-bundle-", suffix=".pyz")
            os.close(fd)
            target = Path(tmp)
        else:
            key = _content_digest(pure, native, _template())
            target = root / "bundles" / f"cannenv-{key[:40]}.pyz"
        if target.is_file() and target.stat().st_size > 0:
            os.utime(target)  # most recently used: kept by _prune
            data_size = target.stat().st_size
        else:
            target = atomic_write_bytes(target, render_archive(pure, native), mode=0o755)
            data_size = target.stat().st_size
        _prune(target.parent, keep=target)
    else:
        data = render_archive(pure, native)
        target = atomic_write_bytes(out, data, mode=0o755)
        data_size = len(data)
    return Bundle(
        path=target,
        sha256=sha256_file(target),
        tag=controller_target().tag,
        modules=tuple(sorted(modules)),
        size=data_size,
        tags=tuple(sorted(native)),
        native=tuple((tag, native[tag].origin) for tag in sorted(native)),
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
