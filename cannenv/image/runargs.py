"""`docker run` flags an NPU host needs (versions.md §6.3: identical in [CCI], [PT-DOCKER],
[VA-INSTALL], [ADOCS]): one /dev/davinciN per NPU, the management devices, and the host's driver
files (the driver is never inside an image). version.info is what `cannenv gate` reads."""

from __future__ import annotations

import re

from cannenv.errors import InputError


def parse_devices(text: str) -> tuple[int, ...]:
    """``0,1`` / ``0-7`` / ``0,2-3`` -> sorted unique NPU ids."""
    ids: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d{1,3})(?:-(\d{1,3}))?", part)
        if not m:
            raise InputError(
                f"--devices: {part!r} is not an NPU id or range",
                hint="give ids like 0,1 or a range like 0-7",
            )
        lo, hi = int(m[1]), int(m[2] if m[2] is not None else m[1])
        if hi < lo:
            raise InputError(f"--devices: range {part!r} runs backwards", hint="write it low-high, e.g. 0-7")
        ids.update(range(lo, hi + 1))
    return tuple(sorted(ids))


def run_args(devices: str) -> list[str]:
    """Flat list of ``docker run`` flags (``--device X`` / ``-v A:B:ro`` pairs) for NPUs ``devices``."""
    from cannenv.layout import DEVICE_NODES, DRIVER_VOLUMES

    flags: list[str] = []
    for n in parse_devices(devices):
        flags += ["--device", f"/dev/davinci{n}"]
    for dev in DEVICE_NODES:
        flags += ["--device", dev]
    for volume in DRIVER_VOLUMES.values():
        flags += ["-v", f"{volume}:ro"]
    return flags
