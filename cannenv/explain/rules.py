"""The rules both the signature engine and its data models hold to (no import between the two):
the stable cause ids, the id grammar, and which patterns may be signatures (linear-time only)."""

from __future__ import annotations

from cannenv import linre
from cannenv.errors import InputError

REQUIRED_CAUSES: tuple[str, ...] = (
    "env-not-sourced",
    "torch-torch_npu-mismatch",
    "torch_npu-cann-mismatch",
    "nnal-mismatch",
    "ops-package-missing-or-wrong",
    "driver-too-old",
    "driver-firmware-mismatch",
    "device-not-visible",
    "hccl-link",
    "hccl-consistency",
    "hccl-port",
    "oom",
    "python-deps",
    "not-a-version-problem",
)
"""Cause ids of the stable JSON schema: more may be added, none renamed or removed."""


def re2_subset_problem(rx: str) -> str | None:
    """Why ``rx`` cannot be a signature pattern (not linear-time: outside RE2, or too long), or
    None. Signature patterns are data a user may supply: none may backtrack (docs/explain.md)."""
    try:
        linre.compile(rx, what="regex")
    except InputError as exc:
        return exc.message
    return None


ID_RULE = r"^[a-z0-9][a-z0-9_-]*[a-z0-9]$"
MAX_REGEX = 400
