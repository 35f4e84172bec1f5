"""Container context: are we in one, and does it have the NPU device nodes and driver mounts?

The expected set is the official ``docker run`` recipe (research §6.3, [CCI] OVERVIEW,
[PT-DOCKER], [VA-INSTALL]); the ``--device``/``-v`` flags for what is absent come from the checks.
"""

from __future__ import annotations

from typing import Any

from cannenv.facts import ContainerFacts
from cannenv.layout import DEVICE_NODES, DRIVER_MOUNTS
from cannenv.probes._common import ProbeContext, exists, read_text

_CGROUP_MARKERS = ("docker", "kubepods", "containerd", "libpod", "lxc")


def probe(ctx: ProbeContext) -> dict[str, Any]:
    evidence: list[str] = []
    for marker in ("/.dockerenv", "/run/.containerenv"):
        if ctx.host.lexists(marker):
            evidence.append(f"{marker} exists")
    if ctx.host.getenv("container"):
        evidence.append(f"container={ctx.host.getenv('container')} in the environment")
    if ctx.host.getenv("KUBERNETES_SERVICE_HOST"):
        evidence.append("KUBERNETES_SERVICE_HOST in the environment")
    if ctx.host.is_live:
        text = read_text(ctx, "container", "/proc/1/cgroup") or ""
        hit = next((m for m in _CGROUP_MARKERS if m in text), None)
        if hit:
            evidence.append(f"/proc/1/cgroup mentions {hit}")
    present: list[str] = []
    absent: list[str] = []
    for p in DEVICE_NODES + DRIVER_MOUNTS:
        (present if exists(ctx, p) else absent).append(p)
    return {
        "container": ContainerFacts(
            in_container=bool(evidence),
            evidence=tuple(evidence),
            present=tuple(present),
            absent=tuple(absent),
        )
    }
