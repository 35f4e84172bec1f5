"""Driver, firmware and the driver install record (research §4.1, §4.2, §4.6)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from cannenv.facts import DriverFacts, FirmwareFacts
from cannenv.probes._common import ProbeContext, bracket_list, exists, get_ci, parse_kv, read_text

DRIVER_INFO = "/usr/local/Ascend/driver/version.info"
FIRMWARE_INFO = "/usr/local/Ascend/firmware/version.info"
INSTALL_RECORD = "/etc/ascend_install.info"


def parse_driver_info(text: str, path: str = DRIVER_INFO) -> DriverFacts:
    """Parse a driver ``version.info``; prefers ``package_version`` over ``Version`` [research §4.1]."""
    kv = parse_kv(text)
    return DriverFacts(
        path=path,
        version=get_ci(kv, "package_version", "Version", "DriverVersion"),
        innerversion=get_ci(kv, "Innerversion"),
        compatible_version=bracket_list(get_ci(kv, "compatible_version")),
        compatible_version_fw=bracket_list(get_ci(kv, "compatible_version_fw")),
    )


def parse_firmware_info(text: str, path: str = FIRMWARE_INFO) -> FirmwareFacts:
    kv = parse_kv(text)
    return FirmwareFacts(
        path=path,
        version=get_ci(kv, "Version"),
        package_version=get_ci(kv, "package_version"),
        compatible_version_drv=bracket_list(get_ci(kv, "compatible_version_drv")),
    )


def _is_driver_version(text: str) -> bool:
    from cannenv.errors import CannenvError
    from cannenv.versions import DriverVersion

    if len(text) > 64:
        return False
    try:
        DriverVersion.parse(text)
    except (CannenvError, ValueError):
        return False
    return True


def _line_of(text: str, value: str) -> str:
    """``:N`` for the ``KEY=value`` line the version came from (``package_version`` first, as read)."""
    lines = text.splitlines()
    for wanted in ("package_version", "version", "driverversion"):
        for n, raw in enumerate(lines, 1):
            key, sep, rest = raw.partition("=")
            if sep and key.strip().lower() == wanted and rest.strip() == value.strip():
                return f":{n}"
    return ""


def probe(ctx: ProbeContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    text = read_text(ctx, "driver", DRIVER_INFO)
    if text is not None:
        drv = parse_driver_info(text)
        if drv.version is None:
            ctx.issue(
                "driver", "malformed", DRIVER_INFO, f"{DRIVER_INFO} has no Version= or package_version= line"
            )
        elif not _is_driver_version(drv.version):
            ctx.issue(
                "driver",
                "malformed",
                DRIVER_INFO,
                f"{DRIVER_INFO}{_line_of(text, drv.version)}: {drv.version[:80]!r} is not a driver version "
                "(e.g. 25.3.rc1, 24.1.rc2.2)",
            )
        out["driver"] = replace(drv, lib64=exists(ctx, "/usr/local/Ascend/driver/lib64"))
    elif ctx.host.lexists(DRIVER_INFO):
        out["driver"] = DriverFacts(path=DRIVER_INFO, lib64=exists(ctx, "/usr/local/Ascend/driver/lib64"))
    text = read_text(ctx, "firmware", FIRMWARE_INFO)
    if text is not None:
        fw = parse_firmware_info(text)
        if fw.version is None:
            ctx.issue("firmware", "malformed", FIRMWARE_INFO, f"{FIRMWARE_INFO} has no Version= line")
        out["firmware"] = fw
    elif exists(ctx, FIRMWARE_INFO):
        out["firmware"] = FirmwareFacts(path=FIRMWARE_INFO)
    text = read_text(ctx, "driver", INSTALL_RECORD)
    if text is not None:
        out["install_record"] = parse_kv(text)
    return out
