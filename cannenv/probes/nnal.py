"""NNAL / ATB: version and C++ ABI variants (research §3.3, §4.5, §5.3)."""

from __future__ import annotations

import re
from typing import Any

from cannenv.facts import NnalFacts
from cannenv.probes import _common as c
from cannenv.probes._common import ProbeContext

NNAL_BASES = ("/usr/local/Ascend/nnal/atb",)
_ABI_RE = re.compile(r"^cxx_abi_[01]\Z")


def parse_atb_version_info(text: str) -> str | None:
    """``Ascend-cann-atb : 8.2.RC1`` (colon separated, indented) -> ``8.2.RC1``."""
    kv = c.parse_kv(text, seps=":=")
    return c.get_ci(kv, "Ascend-cann-atb", "version", "Version")


def probe(ctx: ProbeContext) -> dict[str, Any]:
    for base in c.with_home(ctx, NNAL_BASES, "Ascend/nnal/atb"):
        if not c.is_dir(ctx, base):
            continue
        versions = tuple(
            n
            for n in c.list_dir(ctx, base)
            if n not in {"latest", "set_env.sh"} and c.is_dir(ctx, f"{base}/{n}")
        )
        latest = f"{base}/latest"
        version = None
        text = c.read_text(ctx, "nnal", f"{latest}/version.info")
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
            target = c.realpath(ctx, latest)
            if target:
                version = target.rstrip("/").rsplit("/", 1)[-1]
            elif len(versions) == 1:
                version = versions[0]
        abi_root = (
            f"{latest}/atb"
            if c.exists(ctx, f"{latest}/atb")
            else (f"{base}/{version}/atb" if version else f"{base}/atb")
        )
        abis = tuple(n for n in c.list_dir(ctx, abi_root) if _ABI_RE.match(n))
        set_env = f"{base}/set_env.sh"
        return {
            "nnal": NnalFacts(
                path=base,
                version=version,
                versions=versions,
                abis=abis,
                set_env=set_env if c.exists(ctx, set_env) else None,
            )
        }
    return {}
