"""NNAL / ATB: version and C++ ABI variants (research §3.3, §4.5, §5.3)."""

from __future__ import annotations

import re
from typing import Any

from cannenv.facts import NnalFacts
from cannenv.probes._common import (
    ProbeContext,
    exists,
    get_ci,
    is_dir,
    list_dir,
    parse_kv,
    read_text,
    realpath,
)

NNAL_BASES = ("/usr/local/Ascend/nnal/atb",)
_ABI_RE = re.compile(r"^cxx_abi_[01]$")


def parse_atb_version_info(text: str) -> str | None:
    """``Ascend-cann-atb : 8.2.RC1`` (colon separated, indented) -> ``8.2.RC1``."""
    kv = parse_kv(text, seps=":=")
    return get_ci(kv, "Ascend-cann-atb", "version", "Version")


def probe(ctx: ProbeContext) -> dict[str, Any]:
    bases = list(NNAL_BASES)
    home = ctx.host.getenv("HOME")
    if home:
        bases.append(f"{home.rstrip('/')}/Ascend/nnal/atb")
    for base in bases:
        if not is_dir(ctx, base):
            continue
        versions = tuple(
            n for n in list_dir(ctx, base) if n not in {"latest", "set_env.sh"} and is_dir(ctx, f"{base}/{n}")
        )
        latest = f"{base}/latest"
        version = None
        text = read_text(ctx, "nnal", f"{latest}/version.info")
        if text is not None:
            version = parse_atb_version_info(text)
            if version is None:
                ctx.issue(
                    "nnal",
                    "malformed",
                    f"{latest}/version.info",
                    f"{latest}/version.info names no ATB version",
                )
        if version is None:
            target = realpath(ctx, latest)
            if target:
                version = target.rstrip("/").rsplit("/", 1)[-1]
            elif len(versions) == 1:
                version = versions[0]
        abi_root = (
            f"{latest}/atb"
            if exists(ctx, f"{latest}/atb")
            else (f"{base}/{version}/atb" if version else f"{base}/atb")
        )
        abis = tuple(n for n in list_dir(ctx, abi_root) if _ABI_RE.match(n))
        set_env = f"{base}/set_env.sh"
        return {
            "nnal": NnalFacts(
                path=base,
                version=version,
                versions=versions,
                abis=abis,
                set_env=set_env if exists(ctx, set_env) else None,
            )
        }
    return {}
