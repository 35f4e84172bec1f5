"""Operating system: distribution, arch, kernel, glibc, gcc, cmake, the HwHiAiUser account."""

from __future__ import annotations

import os
import platform
import re
from typing import Any

from cannenv.facts import OsFacts
from cannenv.probes._common import ProbeContext, list_dir, parse_kv, read_text

_VERSION_RE = re.compile(r"(?<!\d)(\d+\.\d+(?:\.\d+)?)")
_LIBC_RE = re.compile(r"^libc-(\d+\.\d+)\.so\Z")


def _os_release(ctx: ProbeContext) -> dict[str, str]:
    for p in ("/etc/os-release", "/usr/lib/os-release"):
        text = read_text(ctx, "os", p)
        if text is not None:
            return parse_kv(text)
    return {}


def _names(ctx: ProbeContext, path: str) -> set[str]:
    text = read_text(ctx, "os", path) or ""
    return {line.split(":", 1)[0] for line in text.splitlines() if ":" in line}


def _glibc_tree(ctx: ProbeContext) -> str | None:
    for d in ("/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib"):
        for n in list_dir(ctx, d):
            m = _LIBC_RE.match(n)
            if m:
                return m.group(1)
    return None


def _tool_version(ctx: ProbeContext, name: str, args: list[str]) -> str | None:
    if not ctx.host.is_live:
        return None  # a tree's compilers are files, never run: their version stays unknown
    exe = ctx.host.which(name)
    if exe is None:
        return None
    res = ctx.host.run([exe, *args], timeout=10.0)
    if not res.ok:
        return None
    m = _VERSION_RE.search(res.stdout)
    return m.group(1) if m else None


def probe(ctx: ProbeContext) -> dict[str, Any]:
    rel = _os_release(ctx)
    live = ctx.host.is_live
    glibc = None
    if live:
        try:
            glibc = os.confstr("CS_GNU_LIBC_VERSION")
        except (ValueError, OSError):
            glibc = None
        if glibc and " " in glibc:
            glibc = glibc.split()[-1]
    else:
        glibc = _glibc_tree(ctx)
    arch = platform.machine() if live else None
    if not live:
        # a tree says its arch through the multiarch lib dir here; the CANN install record's
        # arch= wins over it (probes.collect, once the toolkit probe has read that record)
        for d, a in (("/lib/aarch64-linux-gnu", "aarch64"), ("/lib/x86_64-linux-gnu", "x86_64")):
            if ctx.host.is_dir(d):
                arch = a
                break
    return {
        "os": OsFacts(
            distro_id=rel.get("ID"),
            distro_version=rel.get("VERSION_ID"),
            pretty_name=rel.get("PRETTY_NAME"),
            arch=arch,
            kernel=platform.release() if live else None,
            glibc=glibc,
            gcc=_tool_version(ctx, "gcc", ["-dumpfullversion", "-dumpversion"]),
            cmake=_tool_version(ctx, "cmake", ["--version"]),
            hwhiaiuser_user="HwHiAiUser" in _names(ctx, "/etc/passwd"),
            hwhiaiuser_group="HwHiAiUser" in _names(ctx, "/etc/group"),
        )
    }
