"""The rules both the signature engine and its data models hold to (no import between the two):
the stable cause ids, the id grammar, and which patterns may be signatures (linear-time only)."""

from __future__ import annotations

import re
from collections.abc import Sequence

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


# ------------------------------------------------------------------ rows made from source messages
MIN_FRAGMENT = 20
"""The shortest literal that may identify a message imported from a vendor's source (``Invalid rank ``
is not distinctive)."""
TOOL_FAMILIES = frozenset({"ais-bench", "msit", "msprobe", "pypto", "pypto-check", "triton-ascend"})
"""The message families of the Ascend tools (:func:`cannenv.explain.messages.import_tool`), whose rows
may be told by the two fragments :func:`pattern` matches (``distinctive(…, pair=True)``)."""


def distinctive(frags: Sequence[str], *, pair: bool = False) -> bool:
    """Whether the longest fragment can identify a message: long enough, two words at least. With
    ``pair``, what :func:`pattern` matches may be: the longest fragment and its neighbour together
    (a tool's short ``arg0 tensorsize: %s filesize: %s not match``), the longest 8 characters at
    least."""
    if not frags:
        return False
    longest = max(frags, key=len)
    if pair and len(longest) >= 8:
        k = max(range(len(frags)), key=lambda j: len(frags[j]))
        near = [frags[j] for j in (k - 1, k + 1) if 0 <= j < len(frags) and len(frags[j]) >= 3]
        longest = " ".join([longest, near[0]]) if near else longest
    return len(longest) >= MIN_FRAGMENT and len(re.findall(r"[A-Za-z]{2,}", longest)) >= 2


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in r"\.^$|?*+()[]{}" else ch for ch in text)


def pattern(frags: Sequence[str]) -> tuple[str, str]:
    """(anchor, regex) of a row: the longest fragment, with the fragment before it (else after it)
    on the same line: one unbounded loop, so linear on RE2 and Python's ``re`` alike."""
    k = max(range(len(frags)), key=lambda j: len(frags[j]))
    anchor = frags[k]
    if k > 0 and len(frags[k - 1]) >= 3:
        return anchor, _escape(frags[k - 1]) + "[^\\n]*" + _escape(anchor)
    if k + 1 < len(frags) and len(frags[k + 1]) >= 3:
        return anchor, _escape(anchor) + "[^\\n]*" + _escape(frags[k + 1])
    return anchor, _escape(anchor)
