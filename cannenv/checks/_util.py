"""Small helpers shared by the checks (version parsing that never raises, wording)."""

from __future__ import annotations

from typing import Any

from cannenv.errors import CannenvError


def cann_v(text: str | None) -> Any:
    from cannenv.versions import CannVersion

    if not text:
        return None
    try:
        return CannVersion.parse(text)
    except (CannenvError, ValueError):
        return None


def driver_v(text: str | None) -> Any:
    from cannenv.versions import DriverVersion

    if not text:
        return None
    try:
        return DriverVersion.parse(text)
    except (CannenvError, ValueError):
        return None


def pep_v(text: str | None) -> Any:
    from cannenv.versions import parse_pep440

    if not text:
        return None
    try:
        return parse_pep440(text)
    except (CannenvError, ValueError):
        return None


def family_title(family: str | None) -> str:
    if not family:
        return "this NPU"
    from cannenv.soc import family_title as _title

    try:
        return _title(family)
    except (CannenvError, KeyError):
        return family


def canonical_cann(text: str | None) -> str | None:
    v = cann_v(text)
    return str(v) if v is not None else text


def same_cann(a: str | None, b: str | None) -> bool:
    va, vb = cann_v(a), cann_v(b)
    if va is not None and vb is not None:
        return bool(va == vb)
    return bool(a and b and a.lower() == b.lower())
