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

import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from cannenv.facts import PythonFacts
from cannenv.host import run
from cannenv.probes._common import ProbeContext
from cannenv.versions import canonicalize_name

_SCRIPT = r"""
import sys
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]  # -c puts the working directory first: never import from it
import json, os, site, importlib.metadata as md, importlib.util as iu
pk = {}
for d in md.distributions():
    try:
        n = d.metadata["Name"]
    except Exception:
        n = None
    if n and n not in pk:
        pk[n] = d.version
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
print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable,
                  "path": [p for p in sys.path if p], "extra": [p for p in extra if p in sys.path],
                  "packages": pk, "torch_npu": loc("torch_npu"), "torch": loc("torch")}))
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


def torch_cxx11_abi(local_torch_dir: Path) -> bool | None:
    """Whether torch was built with the C++11 ABI, from its ``libc10.so`` symbol names (no import).

    Mangled names of the C++11 ABI carry ``St7__cxx11`` (``std::__cxx11::basic_string``); a build
    with ``_GLIBCXX_USE_CXX11_ABI=0`` has none. NNAL ships ``cxx_abi_0``/``cxx_abi_1`` for the two
    (research §5.3).
    """
    lib = local_torch_dir / "lib" / "libc10.so"
    try:
        with lib.open("rb") as fh:
            data = fh.read(64 << 20)
    except OSError:
        return None
    if not data.startswith(b"\x7fELF"):
        return None
    return b"St7__cxx11" in data


def read_site_packages(dirs: list[Path]) -> dict[str, str]:
    packages: dict[str, str] = {}
    for dist in metadata.distributions(path=[str(d) for d in dirs]):
        try:
            meta = dist.metadata  # parsed once: ``dist.version`` would parse METADATA again
            name = meta["Name"]
        except Exception:  # broken METADATA: skip the distribution, keep going
            continue
        if name:
            packages.setdefault(canonicalize_name(name), meta["Version"])
    return packages


def _from_dirs(ctx: ProbeContext, host_dirs: list[str]) -> PythonFacts:
    existing: list[tuple[str, Path]] = []
    for h in host_dirs:
        lp = ctx.host.path(h)
        if lp.is_dir():
            existing.append((h, lp))
        else:
            ctx.issue("python", "not-a-file", h, f"site-packages directory {h} does not exist")
    packages = read_site_packages([lp for _, lp in existing])
    npu_dir = torch_dir = None
    abi = None
    for h, lp in existing:
        if npu_dir is None and (lp / "torch_npu").is_dir():
            npu_dir = f"{h.rstrip('/')}/torch_npu"
        if torch_dir is None and (lp / "torch").is_dir():
            torch_dir = f"{h.rstrip('/')}/torch"
            abi = torch_cxx11_abi(lp / "torch")
    version = None
    for h, _ in existing:
        m = _PYVER_RE.search(h)
        if m:
            version = m.group(1)
            break
    return PythonFacts(
        source="site-packages",
        interpreter=None,
        version=version,
        site_dirs=tuple(h for h, _ in existing),
        packages=packages,
        torch_npu_dir=npu_dir,
        torch_dir=torch_dir,
        torch_cxx11_abi=abi,
        error=None if existing else f"none of {', '.join(host_dirs)} exists",
    )


def _tree_site_dirs(ctx: ProbeContext) -> list[str]:
    out: list[str] = []
    for pattern in _TREE_GLOBS:
        for p in sorted(ctx.host.root.glob(pattern)):
            if p.is_dir():
                out.append(ctx.host.unroot(p))
    return out


def _from_interpreter(ctx: ProbeContext, python: str) -> PythonFacts:
    env = dict(ctx.host.env)
    env["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
    # Not -I: the interpreter's real sys.path, PYTHONPATH and the user site included, is what an
    # `import torch_npu` would see; the script drops the working directory itself.
    res = run([python, "-c", _SCRIPT], timeout=30.0, env=env, cwd="/")
    if not res.ok:
        msg = res.describe()
        ctx.issue("python", "command-timeout" if res.timed_out else "command-failed", python, msg)
        return PythonFacts(source="interpreter", interpreter=python, error=msg)
    try:
        data = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
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
        torch_cxx11_abi=torch_cxx11_abi(Path(torch_dir)) if torch_dir else None,
    )


def probe(ctx: ProbeContext) -> dict[str, Any]:
    if ctx.site_packages:
        return {"python": _from_dirs(ctx, list(ctx.site_packages))}
    if ctx.python is not None:
        return {"python": _from_interpreter(ctx, ctx.python)}
    if not ctx.host.is_live:
        dirs = _tree_site_dirs(ctx)
        if not dirs:
            return {
                "python": PythonFacts(source="none", error="no site-packages directory found in the tree")
            }
        return {"python": _from_dirs(ctx, dirs)}
    return {"python": _from_interpreter(ctx, sys.executable)}
