"""ABI preflight: will torch_npu's shared libraries load? Decided from ELF headers, not by importing.

For ``torch_npu/lib/*.so`` and ``torch_npu/_C*.so`` we read ``DT_NEEDED``, ``DT_RUNPATH`` and
``DT_RPATH`` with pyelftools and resolve every needed name the way the glibc loader does
(``man ld.so``): the object's RPATH (only when it has no RUNPATH), ``LD_LIBRARY_PATH``, RUNPATH,
the loader cache, then the default directories. ``$ORIGIN`` expands to the object's directory.
Libraries that ``import torch`` has already loaded (``torch/lib``) and torch_npu's own siblings
count as found, because the loader matches an already-loaded soname first.

Why parse ``/etc/ld.so.cache`` instead of running ``ldconfig -p``: the cache must be the one of the
probed host, and under ``--root`` (a test tree, a mounted image) ``ldconfig -p`` would print the
cache of the machine cannenv runs on. Reading the file under the root is correct for both, needs no
subprocess (the doctor stays fast) and works in minimal images that lack ``ldconfig``. The format
(``glibc-ld.so.cache1.1``: a 48-byte header, 24-byte entries, string offsets from the header) is
stable since glibc 2.x; an unknown format is reported and the cache is skipped.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path
from typing import IO, Any

from cannenv.facts import AbiFacts, ElfLibrary, NeededLib, PythonFacts
from cannenv.probes._common import ProbeContext, list_dir, read_bytes

LD_CACHE = "/etc/ld.so.cache"
_NEW_MAGIC = b"glibc-ld.so.cache1.1"
_HEADER = struct.Struct("<20sIIB3sI12s")  # magic+version, nlibs, len_strings, flags, pad, ext offset, unused
_ENTRY = struct.Struct("<iIIIQ")  # flags, key, value, osversion, hwcap
MAX_ELF_BYTES = 1 << 30
"""torch_npu's largest library is a few hundred MB; pyelftools reads only the headers it needs."""
MAX_LD_CACHE_BYTES = 64 << 20
"""A loader cache of a big distribution is a few hundred KB."""


def parse_ld_cache(data: bytes) -> dict[str, str]:
    """soname -> path from an ``ld.so.cache`` image (new format); {} when the format is unknown."""
    base = data.find(_NEW_MAGIC)
    if base < 0 or len(data) < base + _HEADER.size:
        return {}
    _, nlibs, _, _, _, _, _ = _HEADER.unpack_from(data, base)
    out: dict[str, str] = {}
    start = base + _HEADER.size
    if nlibs > (len(data) - start) // _ENTRY.size:
        return {}
    for i in range(nlibs):
        _, key, value, _, _ = _ENTRY.unpack_from(data, start + i * _ENTRY.size)
        k = _cstr(data, base + key)
        v = _cstr(data, base + value)
        if k and v and k not in out:
            out[k] = v
    return out


def _cstr(data: bytes, off: int) -> str | None:
    if off < 0 or off >= len(data):
        return None
    end = data.find(b"\x00", off)
    if end < 0:
        return None
    return data[off:end].decode("utf-8", "replace")


def _elftools_problem() -> str | None:
    """Why pyelftools cannot run here, or None. The fleet bundle carries the controller's
    pyelftools (0.32 needs Python 3.10) and also runs on older host Pythons (down to 3.7): there
    the preflight is not run, and says so, instead of calling every library unreadable."""
    try:
        import elftools.elf.dynamic
        import elftools.elf.elffile  # noqa: F401
    except (ImportError, SyntaxError) as exc:
        return (
            f"the ELF preflight needs pyelftools, which cannot run on this Python "
            f"{'.'.join(map(str, sys.version_info[:3]))} ({type(exc).__name__}: {exc})"
        )
    return None


def read_dynamic(fh: IO[bytes]) -> tuple[list[str], list[str], list[str]]:
    """(DT_NEEDED, DT_RUNPATH entries, DT_RPATH entries) of an open ELF file. Raises ELFError/OSError."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    needed: list[str] = []
    runpath: list[str] = []
    rpath: list[str] = []
    with fh:
        elf = ELFFile(fh)
        for section in elf.iter_sections():
            if not isinstance(section, DynamicSection):
                continue
            for tag_obj in section.iter_tags():
                tag: Any = tag_obj
                if tag.entry.d_tag == "DT_NEEDED":
                    needed.append(str(tag.needed))
                elif tag.entry.d_tag == "DT_RUNPATH":
                    runpath.extend(p for p in str(tag.runpath).split(":") if p)
                elif tag.entry.d_tag == "DT_RPATH":
                    rpath.extend(p for p in str(tag.rpath).split(":") if p)
    return needed, runpath, rpath


def _expand(entry: str, origin: str, arch: str) -> str:
    for token in ("${ORIGIN}", "$ORIGIN"):
        entry = entry.replace(token, origin)
    for token in ("${LIB}", "$LIB"):
        entry = entry.replace(token, "lib64")
    for token in ("${PLATFORM}", "$PLATFORM"):
        entry = entry.replace(token, arch)
    return os.path.normpath(entry) if entry.startswith("/") else entry


def default_dirs(arch: str) -> tuple[str, ...]:
    return (
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
        f"/lib/{arch}-linux-gnu",
        f"/usr/lib/{arch}-linux-gnu",
    )


def libraries_of(ctx: ProbeContext, npu_dir: str) -> list[str]:
    """Host paths of torch_npu's shared libraries: ``lib/*.so`` and ``_C*.so``."""
    libs = [f"{npu_dir}/lib/{n}" for n in list_dir(ctx, f"{npu_dir}/lib") if n.endswith(".so") or ".so." in n]
    libs += [f"{npu_dir}/{n}" for n in list_dir(ctx, npu_dir) if n.startswith("_C") and ".so" in n]
    return libs


def preflight(ctx: ProbeContext, python: PythonFacts, arch: str) -> AbiFacts:
    if python.torch_npu_dir is None:
        return AbiFacts(checked=False, reason="torch_npu is not installed in the target Python environment")
    libs = libraries_of(ctx, python.torch_npu_dir)
    if not libs:
        return AbiFacts(
            checked=False, reason=f"no shared libraries under {python.torch_npu_dir}/lib or _C*.so"
        )
    unusable = _elftools_problem()  # imports pyelftools (~0.1 s): only when there is ELF to read
    if unusable:
        return AbiFacts(checked=False, reason=unusable)
    ld_path = tuple(p for p in (ctx.host.getenv("LD_LIBRARY_PATH") or "").split(":") if p)
    cache: dict[str, str] = {}
    cache_path = None
    if ctx.host.exists(LD_CACHE):
        data = read_bytes(ctx, "abi", LD_CACHE, max_bytes=MAX_LD_CACHE_BYTES, what="a loader cache")
        if data is not None:
            cache = parse_ld_cache(data)
            cache_path = LD_CACHE
            if not cache:
                ctx.issue(
                    "abi", "malformed", LD_CACHE, f"{LD_CACHE} is not in the glibc-ld.so.cache1.1 format"
                )
    preloaded: dict[str, str] = {}
    for d, why in (
        (python.torch_dir and f"{python.torch_dir}/lib", "loaded by `import torch`"),
        (f"{python.torch_npu_dir}/lib", "torch_npu library loaded alongside"),
    ):
        if d:
            for n in list_dir(ctx, d):
                if ".so" in n:
                    preloaded.setdefault(n, f"{d}/{n}|{why}")
    results = []
    for lib in libs:
        try:
            needed, runpath, rpath = read_dynamic(ctx.host.open_binary(lib, MAX_ELF_BYTES))
        except Exception as exc:  # pyelftools raises many types on damaged files
            ctx.issue("abi", "malformed", lib, f"{lib}: not a readable ELF shared library ({exc})")
            results.append(ElfLibrary(path=lib, error=str(exc)))
            continue
        origin = str(Path(lib).parent)
        order: list[tuple[str, str]] = []
        if not runpath:
            order += [(_expand(p, origin, arch), "RPATH") for p in rpath]
        order += [(p, "LD_LIBRARY_PATH") for p in ld_path]
        order += [(_expand(p, origin, arch), "RUNPATH") for p in runpath]
        resolved = []
        for name in needed:
            found = via = None
            if name in preloaded:
                found, via = preloaded[name].split("|", 1)
            else:
                for d, how in order:
                    cand = f"{d.rstrip('/')}/{name}"
                    if d.startswith("/") and ctx.host.exists(cand):
                        found, via = cand, how
                        break
                if found is None and name in cache and ctx.host.exists(cache[name]):
                    found, via = cache[name], "ld.so.cache"
                if found is None:
                    for d in default_dirs(arch):
                        cand = f"{d}/{name}"
                        if ctx.host.exists(cand):
                            found, via = cand, "default directory"
                            break
            resolved.append(NeededLib(name=name, found=found, via=via))
        results.append(
            ElfLibrary(path=lib, needed=tuple(resolved), runpath=tuple(runpath), rpath=tuple(rpath))
        )
    return AbiFacts(
        checked=True,
        reason=f"{len(libs)} torch_npu libraries read",
        libraries=tuple(results),
        search_ld_library_path=ld_path,
        ld_cache=cache_path,
        ld_cache_entries=len(cache),
    )


def probe(ctx: ProbeContext) -> dict[str, Any]:
    python = ctx.results.get("python")
    if not isinstance(python, PythonFacts):
        return {"abi": AbiFacts(checked=False, reason="the Python environment could not be probed")}
    os_facts = ctx.results.get("os")
    arch = getattr(os_facts, "arch", None) or "x86_64"
    return {"abi": preflight(ctx, python, arch)}
