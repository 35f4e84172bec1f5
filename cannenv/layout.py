"""The Ascend install layout as plain data and pure helpers, shared by the probes (which read a
host) and the checks (which judge facts): neither depends on the other.

Kept Python-3.7-syntax-compatible: it is on the ``cannenv facts`` path.
"""

from __future__ import annotations

from pathlib import PurePosixPath

DEVICE_NODES: tuple[str, ...] = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
"""The shared NPU device nodes (each NPU adds its own ``/dev/davinciN``)."""

DRIVER_VOLUMES: dict[str, str] = {
    "/usr/local/dcmi": "/usr/local/dcmi:/usr/local/dcmi",
    "/usr/local/bin/npu-smi": "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
    "/usr/local/Ascend/driver/lib64": "/usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/",
    "/usr/local/Ascend/driver/version.info": "/usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info",  # noqa: E501
    "/etc/ascend_install.info": "/etc/ascend_install.info:/etc/ascend_install.info",
}
"""Each driver mount a container expects (the path probed) and its ``docker run -v`` value: the
single copy of the recipe, used by the container probe, the container-mounts check and
`cannenv image run-args` (research §6.3, official ``docker run`` recipes)."""

DRIVER_MOUNTS: tuple[str, ...] = tuple(DRIVER_VOLUMES)


def version_of_path(path: str) -> str | None:
    """``/usr/local/Ascend/ascend-toolkit/8.3.RC2/...`` -> ``8.3.RC2``; ``.../cann-8.5.0/...`` -> ``8.5.0``."""  # noqa: E501
    parts = PurePosixPath(path).parts
    for i, part in enumerate(parts):
        if part.startswith("cann-"):
            return part[len("cann-") :]
        if part == "ascend-toolkit" and i + 1 < len(parts) and parts[i + 1] != "latest":
            return parts[i + 1]
    return None


def family_of_chip(chip: str) -> str | None:
    """Chip series (``910b``) -> family id (``a2``) through the shipped hardware table."""
    from cannenv.errors import CannenvError
    from cannenv.soc import normalize_family

    try:
        return normalize_family(chip)
    except CannenvError:
        return None


TOOLKIT_SET_ENV_OLD = "/usr/local/Ascend/ascend-toolkit/set_env.sh"
"""Where CANN ≤ 8.3 puts its ``set_env.sh`` (research §3.3, §5.1)."""
TOOLKIT_SET_ENV_NEW = "/usr/local/Ascend/cann/set_env.sh"
"""CANN ≥ 8.5 installs into ``cann-<ver>/`` with its own ``set_env.sh``; ``/usr/local/Ascend/cann``
links to the selected one (research §3.3; the vendor's install guide and MindSpeed-LLM 2.3.0
source this path). Used when the version is unknown."""


def default_set_env(cann: str | None) -> str:
    """The system ``set_env.sh`` a root install of CANN ``cann`` creates: ``cann-<ver>/set_env.sh``
    for 8.5 and later (the install plan's path too), ``ascend-toolkit/set_env.sh`` before; the
    ``cann`` link's for an unreadable version."""
    from cannenv.errors import CannenvError
    from cannenv.versions import CannVersion

    try:
        v = CannVersion.parse(cann or "")
    except (CannenvError, ValueError):
        return TOOLKIT_SET_ENV_NEW
    if (v.major, v.minor) >= (8, 5):
        return f"/usr/local/Ascend/cann-{cann}/set_env.sh"
    return TOOLKIT_SET_ENV_OLD
