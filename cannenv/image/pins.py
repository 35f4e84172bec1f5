"""Pinned by default: CANN's Python dependencies resolved to a version and a sha256 each.

Without a wheelhouse, ``image lock`` and ``image build`` ask the package index — through pip itself
(``pip install --dry-run --report``, for the image's Python, implementation, ABI, architecture and
glibc, binary wheels only, ignoring this machine's pip configuration) — which distributions satisfy
CANN's requirements (``dockerfiles/cann_python.yaml``) and their dependencies, and pin every one of
them with the sha256 of the wheel pip chose. The image then installs exactly those
(``--no-deps --require-hashes``): the lock lists every Python requirement with its version, and a
build whose index now serves other bytes fails instead of drifting. ``image build --locked LOCK``
takes the pins from the lock instead of the index.

torch and torch_npu keep the versions the stack pins; they are installed from their own indexes
with their dependencies and without hashes (only ``--wheelhouse`` pins those by hash), which the
lock's notes say.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from cannenv.errors import ExternalError, MissingToolError
from cannenv.lock import LockedRequirement

if TYPE_CHECKING:
    from cannenv.image.spec import ImageSpec

DEFAULT_GLIBC = "2.28"
"""The glibc assumed for a base image whose OS profile does not state one (``preinstalled``)."""
RESOLVE_TIMEOUT_S = 600.0


def platforms(arch: str, glibc: str) -> list[str]:
    """pip ``--platform`` tags a Linux image of ``arch`` with ``glibc`` accepts, best first (pip
    does not expand a manylinux tag to the older ones by itself)."""
    major, minor = (int(x) for x in glibc.split(".")[:2])
    tags = [f"manylinux_{major}_{m}_{arch}" for m in range(minor, 16, -1)]
    return [*tags, f"manylinux2014_{arch}", f"linux_{arch}"]


def base_group(requirements: Sequence[LockedRequirement]) -> tuple[LockedRequirement, ...]:
    """The pins of the first Python layer (CANN's dependencies and theirs) among a lock's
    requirements: everything but torch, torch_npu and cannenv, which have layers of their own."""
    return tuple(r for r in requirements if r.name not in ("torch", "torch-npu", "cannenv"))


def resolve_cann_python(spec: ImageSpec, *, glibc: str | None, index: str) -> tuple[LockedRequirement, ...]:
    """CANN's Python requirements for ``spec`` and their dependencies, each with a version and the
    sha256 of its wheel, from ``index`` (pip's resolver, nothing installed)."""
    from cannenv import host
    from cannenv.image.python import cann_python_pins
    from cannenv.versions import canonicalize_name

    pins = cann_python_pins(spec.cann)
    wanted = [f"{name}=={version}" if version else name for name, version in pins.requirements]
    py = spec.python
    with tempfile.TemporaryDirectory(prefix="cannenv-pins-") as tmp:
        argv = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--isolated",  # this machine's pip.conf, mirrors and constraints are not the image's
            "--dry-run",
            "--ignore-installed",
            "--only-binary=:all:",
            "--quiet",
            "--disable-pip-version-check",
            "--report",
            "-",
            "--target",
            tmp,
            "--python-version",
            py,
            "--implementation",
            "cp",
            "--abi",
            "cp" + py.replace(".", ""),
            *[a for p in platforms(spec.arch, glibc or DEFAULT_GLIBC) for a in ("--platform", p)],
            "--index-url",
            index,
            "--timeout",
            "30",
            "--retries",
            "2",
            *wanted,
        ]
        res = host.run(argv, timeout=RESOLVE_TIMEOUT_S, max_output=32 << 20)
    if res.missing:
        raise MissingToolError(f"cannot run pip to pin the image's Python inputs: {res.stderr.strip()}")
    if not res.ok:
        tail = " ".join(res.stderr.split())[-800:]
        raise ExternalError(
            f"pip could not pin CANN {spec.cann}'s Python requirements from {index}: {tail or 'no output'}",
            hint="give --wheelhouse DIR (local wheels, hash-pinned and offline), or check the index "
            "can be reached; --no-resolve keeps them unpinned (the lock notes which)",
        )
    try:
        report: dict[str, Any] = json.loads(res.stdout)
        out = []
        for item in report["install"]:
            meta, info = item["metadata"], item["download_info"]
            sha = (info.get("archive_info") or {}).get("hashes", {}).get("sha256")
            if not sha:
                raise KeyError(f"no sha256 for {meta['name']} from {info.get('url')}")
            out.append(
                LockedRequirement(
                    name=canonicalize_name(str(meta["name"])),
                    version=str(meta["version"]),
                    hashes=(f"sha256:{sha}",),
                    source=index,
                )
            )
    except (ValueError, KeyError, TypeError) as exc:
        raise ExternalError(f"pip's resolution report could not be read: {exc}") from None
    return tuple(sorted(out, key=lambda r: r.name))
