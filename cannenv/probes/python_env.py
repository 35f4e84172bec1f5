"""The Python environment of a target interpreter or of site-packages directories.

Never imports torch or torch_npu: with torch_npu installed and CANN missing, ``import torch``
itself fails (device-backend autoload, research §7). Instead:

* ``--python PATH`` (default: the running interpreter, live host only) runs
  ``PATH -c <script>`` in ``/`` with the host's environment and ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``;
  the script reads distribution metadata over the interpreter's real ``sys.path`` (PYTHONPATH and
  the user site included, the working directory dropped) with :mod:`importlib.metadata` and
  locates packages with ``find_spec`` (no import);
* ``--site-packages DIR`` (repeatable, paths on the probed host) are read directly;
* a tree under ``--root`` without either has its usual site-packages directories found.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import replace
from typing import Any

from cannenv.facts import PythonFacts
from cannenv.host import Host, run
from cannenv.probes._common import ProbeContext, list_dir
from cannenv.versions import canonicalize_name

# Runs on the target interpreter, which may be as old as 3.7 (no importlib.metadata there): then
# the same metadata is read from each sys.path entry's *.dist-info/METADATA and *.egg-info/PKG-INFO.
_SCRIPT = r"""
import sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]  # -c puts the working directory first: never import from it
import email.parser, glob, json, os, site, importlib.util as iu
pk = {}
try:
    import importlib.metadata as md
except ImportError:
    md = None
if md is not None:
    for d in md.distributions():
        try:
            n = d.metadata["Name"]
        except Exception:
            n = None
        if n and n not in pk:
            pk[n] = d.version
else:
    for entry in sys.path:
        for meta in sorted(glob.glob(os.path.join(glob.escape(entry or "."), "*.dist-info", "METADATA"))
                           + glob.glob(os.path.join(glob.escape(entry or "."), "*.egg-info", "PKG-INFO"))):
            try:
                with open(meta, "rb") as fh:
                    h = email.parser.BytesHeaderParser().parsebytes(fh.read(1 << 20))
            except Exception:
                continue
            if h["Name"] and h["Name"] not in pk:
                pk[h["Name"]] = h["Version"]
def loc(n):
    try:
        s = iu.find_spec(n)
    except Exception:
        return None
    if s is None or not s.submodule_search_locations:
        return None
    return list(s.submodule_search_locations)[0]
extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
if site.ENABLE_USER_SITE:
    extra.append(site.getusersitepackages())
def managed():
    import sysconfig
    m = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix) or not os.path.exists(m):
        return False
    on = ("1", "true", "yes", "on")
    if os.environ.get("PIP_BREAK_SYSTEM_PACKAGES", "").lower() in on:
        return False
    try:
        import configparser
    except ImportError:
        return None
    h = os.path.expanduser("~")
    for f in ("/etc/pip.conf", "/etc/xdg/pip/pip.conf", h + "/.config/pip/pip.conf", h + "/.pip/pip.conf"):
        p = configparser.ConfigParser()
        try:
            p.read(f)
        except Exception:
            continue
        for sec in ("global", "install"):
            v = p.get(sec, "break-system-packages") if p.has_option(sec, "break-system-packages") else ""
            if v.lower() in on:
                return False
    return True
print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
                  "path": [p for p in sys.path if p], "extra": [p for p in extra if p in sys.path],
                  "packages": pk, "torch_npu": loc("torch_npu"), "torch": loc("torch"),
                  "managed": managed()}))
"""

_TREE_GLOBS = (
    "usr/local/lib/python3*/site-packages",
    "usr/local/lib/python3*/dist-packages",
    "usr/lib/python3*/site-packages",
    "usr/lib/python3/dist-packages",
    "usr/local/python3*/lib/python3*/site-packages",
    "opt/conda/lib/python3*/site-packages",
    "root/.local/lib/python3*/site-packages",
)
_PYVER_RE = re.compile(r"python(3\.\d+)")
MAX_METADATA_HEAD = 256 << 10
"""Bytes read from a METADATA file: its header (Name, Version) is at the top."""
MAX_LIBC10_BYTES = 512 << 20
"""libc10.so is tens of MB; a larger file is not scanned further."""
MAX_FIELD = 200
PYTHON_TIMEOUT_S = 30.0
"""How long the target interpreter may take to list its distributions (a cold start on a loaded
host reading thousands of them takes seconds); past it the probe says ``command-timeout``."""
_FIELD_RE = re.compile(r"^[\x21-\x7e][\x20-\x7e]{0,199}\Z")  # MAX_FIELD printable ASCII


def torch_cxx11_abi(host: Host, torch_dir: str) -> bool | None:
    """Whether torch was built with the C++11 ABI, from its ``libc10.so`` symbol names (no import).

    Mangled names of the C++11 ABI carry ``St7__cxx11`` (``std::__cxx11::basic_string``); a build
    with ``_GLIBCXX_USE_CXX11_ABI=0`` has none. NNAL ships ``cxx_abi_0``/``cxx_abi_1`` for the two
    (research §5.3). The library is scanned in chunks, at most :data:`MAX_LIBC10_BYTES`.
    """
    needle = b"St7__cxx11"
    try:
        fh = host.open_binary(f"{torch_dir.rstrip('/')}/lib/libc10.so", MAX_LIBC10_BYTES)
    except (OSError, ValueError):
        return None
    with fh:
        try:
            head = fh.read(1 << 16)
            if not head.startswith(b"\x7fELF"):
                return None
            block = head
            seen = len(head)
            while block:
                if needle in block:
                    return True
                tail = block[-len(needle) :]
                chunk = fh.read(1 << 20)
                seen += len(chunk)
                if not chunk or seen > MAX_LIBC10_BYTES:
                    break
                block = tail + chunk
        except OSError:
            return None
    return False


def _dist_header(host: Host, meta_path: str) -> tuple[str | None, str | None]:
    """(Name, Version) from the header of a METADATA/PKG-INFO file (read at most
    :data:`MAX_METADATA_HEAD` bytes: the header comes first, the long description after)."""
    try:
        fd, _ = host.open_regular(meta_path)
    except (OSError, ValueError):
        return None, None
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(MAX_METADATA_HEAD)
        except OSError:
            return None, None
    name = version = None
    for raw in data.decode("utf-8", "replace").splitlines():
        if not raw.strip():
            break
        key, sep, value = raw.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key == "name" and name is None:
            name = value.strip()
        elif key == "version" and version is None:
            version = value.strip()
    return name, version


def read_site_packages(ctx: ProbeContext, host_dirs: list[str]) -> dict[str, str]:
    """canonical name -> version of the distributions in ``host_dirs`` (first one wins), read from
    their ``*.dist-info/METADATA`` and ``*.egg-info`` inside the root. A name or version that is not
    one (too long, control characters) is reported and skipped."""
    host = ctx.host
    packages: dict[str, str] = {}
    for d in host_dirs:
        for entry in list_dir(ctx, d):
            low = entry.lower()
            base = f"{d.rstrip('/')}/{entry}"
            if low.endswith(".dist-info"):
                meta = f"{base}/METADATA"
            elif low.endswith(".egg-info"):
                meta = f"{base}/PKG-INFO" if host.is_dir(base) else base
            else:
                continue
            name, version = _dist_header(host, meta)
            if not name or version is None:
                continue
            if not _FIELD_RE.match(name) or not _FIELD_RE.match(version):
                ctx.issue(
                    "python",
                    "malformed",
                    meta,
                    f"{meta}: Name/Version is not a distribution name and version "
                    f"(at most {MAX_FIELD} printable characters)",
                )
                continue
            packages.setdefault(canonicalize_name(name), version)
    return packages


def _from_dirs(ctx: ProbeContext, host_dirs: list[str]) -> PythonFacts:
    existing: list[str] = []
    for h in host_dirs:
        if ctx.host.is_dir(h):
            existing.append(h)
        else:
            ctx.issue("python", "not-a-file", h, f"site-packages directory {h} does not exist")
    packages = read_site_packages(ctx, existing)
    npu_dir = torch_dir = None
    abi = None
    for h in existing:
        if npu_dir is None and ctx.host.is_dir(f"{h.rstrip('/')}/torch_npu"):
            npu_dir = f"{h.rstrip('/')}/torch_npu"
        if torch_dir is None and ctx.host.is_dir(f"{h.rstrip('/')}/torch"):
            torch_dir = f"{h.rstrip('/')}/torch"
            abi = torch_cxx11_abi(ctx.host, torch_dir)
    version = None
    for h in existing:
        m = _PYVER_RE.search(h)
        if m:
            version = m.group(1)
            break
    return PythonFacts(
        source="site-packages",
        interpreter=None,
        version=version,
        site_dirs=tuple(existing),
        packages=packages,
        torch_npu_dir=npu_dir,
        torch_dir=torch_dir,
        torch_cxx11_abi=abi,
        error=None if existing else f"none of {', '.join(host_dirs)} exists",
    )


def _glob(ctx: ProbeContext, pattern: str) -> list[str]:
    """Host paths matching a glob of directory names, each component listed inside the root."""
    found = ["/"]
    for part in pattern.split("/"):
        nxt: list[str] = []
        for base in found:
            prefix = base.rstrip("/")
            if any(ch in part for ch in "*?["):
                nxt += [f"{prefix}/{n}" for n in list_dir(ctx, base) if fnmatch.fnmatchcase(n, part)]
            else:
                nxt.append(f"{prefix}/{part}")
        found = [p for p in nxt if ctx.host.is_dir(p)]
    return sorted(found)


def _tree_site_dirs(ctx: ProbeContext) -> list[str]:
    out: list[str] = []
    for pattern in _TREE_GLOBS:
        out += _glob(ctx, pattern)
    return out


def _from_interpreter(ctx: ProbeContext, python: str) -> PythonFacts:
    env = dict(ctx.host.env)
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    # On this machine, not -I: the interpreter's real sys.path, PYTHONPATH and the user site
    # included, is what an `import torch_npu` would see (the script drops the working directory
    # itself). For a tree under --root the environment comes from the tree (--env-file): -I keeps
    # its PYTHONPATH from putting the tree's code on the path, since nothing from a tree runs.
    flags = [] if ctx.host.is_live else ["-I"]
    res = run([python, *flags, "-c", _SCRIPT], timeout=PYTHON_TIMEOUT_S, env=env, cwd="/")
    if not res.ok:
        # named without the script's text: the message goes into findings, plans and reports
        msg = replace(res, argv=(python, *flags, "-c", "<metadata script>")).describe()
        ctx.issue("python", "command-timeout" if res.timed_out else "command-failed", python, msg)
        return PythonFacts(source="interpreter", interpreter=python, error=msg)
    from cannenv.errors import InputError
    from cannenv.records import parse_json

    lines = res.stdout.strip().splitlines()
    if not lines:  # exit 0 and nothing on stdout: no answer, whatever the reason
        msg = f"{python}: the metadata script exited 0 without an answer on stdout"
        ctx.issue("python", "malformed", python, msg)
        return PythonFacts(source="interpreter", interpreter=python, error=msg)
    try:
        data = parse_json(lines[-1], source=f"{python}'s answer")
    except InputError as exc:
        ctx.issue(
            "python", "malformed", python, f"{python}: unreadable answer from the metadata script: {exc}"
        )
        return PythonFacts(source="interpreter", interpreter=python, error=str(exc))
    packages: dict[str, str] = {}
    for name, ver in data.get("packages", {}).items():
        packages.setdefault(canonicalize_name(name), str(ver))
    torch_dir = data.get("torch")
    return PythonFacts(
        source="interpreter",
        interpreter=str(data.get("executable") or python),
        version=data.get("version"),
        site_dirs=tuple(
            p
            for p in data.get("path", [])
            if p.endswith(("site-packages", "dist-packages")) or p in data.get("extra", [])
        ),
        packages=packages,
        torch_npu_dir=data.get("torch_npu"),
        torch_dir=torch_dir,
        torch_cxx11_abi=torch_cxx11_abi(Host(), str(torch_dir)) if torch_dir else None,
        externally_managed=data.get("managed") if isinstance(data.get("managed"), bool) else None,
    )


def probe(ctx: ProbeContext) -> dict[str, Any]:
    if ctx.site_packages:
        return {"python": _from_dirs(ctx, list(ctx.site_packages))}
    if ctx.python is not None:
        if not ctx.host.is_live:  # an interpreter is a program: nothing of a tree is run
            msg = f"--python {ctx.python} is not run for a --root tree; use --site-packages DIR"
            return {"python": PythonFacts(source="none", error=msg)}
        return {"python": _from_interpreter(ctx, ctx.python)}
    if not ctx.host.is_live:
        dirs = _tree_site_dirs(ctx)
        if not dirs:
            return {
                "python": PythonFacts(source="none", error="no site-packages directory found in the tree")
            }
        return {"python": _from_dirs(ctx, dirs)}
    return {"python": _from_interpreter(ctx, sys.executable)}
