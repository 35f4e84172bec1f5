"""Chip ops/kernels packages installed into a CANN version (research §3.1, §3.3, §4.5).

Which chip a package targets comes from, in order:
1. the package name in an install record (``package_name=Ascend-cann-910b-ops`` for ≥ 8.5,
   ``Ascend-cann-kernels-910b`` / ``Atlas-A3-cann-kernels`` for ≤ 8.3) [research §3.1, §3.3];
2. the per-SoC kernel config directories ``opp/built-in/op_impl/ai_core/tbe/kernel/config/<soc>/``
   (``ascend910b``, ``ascend910_93``, ``ascend310p``) — the loader's error names
   ``binary_info_config.json`` there [research §7]; the directory layout itself is UNVERIFIED.
"""

from __future__ import annotations

import re

from cannenv.facts import OpsPackage
from cannenv.probes._common import ProbeContext, get_ci, is_dir, list_dir, parse_kv, read_text

KERNEL_CONFIG_DIR = "opp/built-in/op_impl/ai_core/tbe/kernel/config"
KERNEL_DIR = "opp/built-in/op_impl/ai_core/tbe/kernel"

# Package-name spellings -> chip series as in package names and image tags [research §3.1].
_PKG_CHIP_RE = (
    re.compile(r"^Ascend-cann-(?P<chip>910b|310p|310b|910|950|a3|A3)-ops", re.IGNORECASE),
    re.compile(r"^Ascend-cann-kernels-(?P<chip>910b|310p|310b|910)", re.IGNORECASE),
    re.compile(r"^Atlas-(?P<chip>A3)-cann-kernels", re.IGNORECASE),
)
# Kernel directory names -> chip series; ascend910_93 is the A3 SoC prefix (UNVERIFIED layout).
_DIR_CHIP = {
    "ascend910b": "910b",
    "ascend910_93": "a3",
    "ascend310p": "310p",
    "ascend310b": "310b",
    "ascend910": "910",
    "ascend950": "950",
}


def chip_from_package_name(name: str) -> str | None:
    for rx in _PKG_CHIP_RE:
        m = rx.match(name.strip())
        if m:
            return m.group("chip").lower()
    return None


def probe_install(ctx: ProbeContext, inst: str, kv: dict[str, str]) -> tuple[OpsPackage, ...]:
    """Ops/kernels packages inside one CANN install directory (host spelling).

    ``kv`` is the install's parsed ``opp_kernel/version.info`` ({} when absent or unreadable),
    which the toolkit probe has already read as one of the install's components.
    """
    found: list[OpsPackage] = []
    records = _install_records(ctx, inst)
    kernel_chips = _kernel_dir_chips(ctx, inst)
    opp_kernel = f"{inst}/opp_kernel/version.info"
    for rec_path, rec in records:
        name = rec.get("package_name", "")
        chip = chip_from_package_name(name)
        found.append(
            OpsPackage(
                path=rec_path,
                package_name=name or None,
                version=get_ci(rec, "version") or get_ci(kv, "Version"),
                version_dir=get_ci(kv, "version_dir"),
                chips=(chip,) if chip else kernel_chips,
                chip_source="package name" if chip else ("kernel directories" if kernel_chips else None),
            )
        )
    if not found and (kv or kernel_chips):
        found.append(
            OpsPackage(
                path=opp_kernel if kv else f"{inst}/{KERNEL_DIR}",
                version=get_ci(kv, "Version"),
                version_dir=get_ci(kv, "version_dir"),
                chips=kernel_chips,
                chip_source="kernel directories" if kernel_chips else None,
            )
        )
    return tuple(found)


def _install_records(ctx: ProbeContext, inst: str) -> list[tuple[str, dict[str, str]]]:
    out: list[tuple[str, dict[str, str]]] = []
    dirs = [inst] + [f"{inst}/{d}" for d in list_dir(ctx, inst) if d.endswith("-linux") or d == "share"]
    for d in dirs:
        for fname in (
            "ascend_ops_install.info",
            "ascend_opp_kernel_install.info",
            "ascend_kernels_install.info",
        ):
            p = f"{d}/{fname}"
            text = read_text(ctx, "ops", p)
            if text:
                out.append((p, parse_kv(text)))
    return out


def _kernel_dir_chips(ctx: ProbeContext, inst: str) -> tuple[str, ...]:
    chips: list[str] = []
    for base in (f"{inst}/{KERNEL_CONFIG_DIR}", f"{inst}/{KERNEL_DIR}"):
        if not is_dir(ctx, base):
            continue
        for name in list_dir(ctx, base):
            chip = _DIR_CHIP.get(name.lower())
            if chip and chip not in chips:
                chips.append(chip)
    return tuple(chips)
