"""Small helpers shared by the checks (version parsing that never raises, wording)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from cannenv.errors import CannenvError
from cannenv.facts import Facts


def _parsed(parse: Callable[[str], Any], text: str | None) -> Any:
    """``parse(text)``, or None when ``text`` is empty or does not parse: checks never raise on it."""
    if not text:
        return None
    try:
        return parse(text)
    except (CannenvError, ValueError):
        return None


def cann_v(text: str | None) -> Any:
    from cannenv.versions import CannVersion

    return _parsed(CannVersion.parse, text)


def driver_v(text: str | None) -> Any:
    from cannenv.versions import DriverVersion

    return _parsed(DriverVersion.parse, text)


def pep_v(text: str | None) -> Any:
    from cannenv.versions import parse_pep440

    return _parsed(parse_pep440, text)


def toolkit_set_env(facts: Facts, cann: str | None = None) -> str:
    """The ``set_env.sh`` a remedy names: the active install's when it exists on the host (and is
    the CANN ``cann`` the remedy is about), else the one a root install of that version creates,
    in that version's layout (≤ 8.3 ``ascend-toolkit/set_env.sh``, ≥ 8.5 ``cann-<ver>/set_env.sh``).
    Never a file known to be absent."""
    from cannenv.layout import default_set_env

    inst = facts.cann.active_install()
    if inst is not None and (cann is None or same_cann(inst.version, cann)):
        if inst.set_env:
            return inst.set_env
        # Installed, but no set_env.sh was found beside it: name none; `cannenv env` prints the
        # exports that file would make (bash process substitution keeps `source …` a command).
        return "<(cannenv env)"
    return default_set_env(cann or (inst.version if inst is not None else None))


def family_title(family: str | None) -> str:
    if not family:
        return "this NPU"
    from cannenv.soc import family_title as _title

    try:
        return _title(family)
    except (CannenvError, KeyError):
        return family


def same_cann(a: str | None, b: str | None) -> bool:
    va, vb = cann_v(a), cann_v(b)
    if va is not None and vb is not None:
        return bool(va == vb)
    return bool(a and b and a.lower() == b.lower())


@lru_cache(maxsize=4096)
def pinned_matches(key: str, pinned: str | None, actual: str | None) -> bool:
    """Whether the host's ``actual`` version of component ``key`` is the matrix's ``pinned`` one
    (:func:`cannenv.matrix.component_matches`); a missing or unparsable version is no match."""
    from cannenv.matrix import component_matches

    if pinned is None or actual is None:
        return False
    try:
        return component_matches(key, pinned, actual)
    except CannenvError:
        return False


def installer_file(target: Any, arch: str | None, component: str, version: str) -> str:
    """The vendor installer file name for a remedy: exact when the matrix knows the era's pattern,
    the family and the host's arch (research §3.1), else the pattern with placeholders left in."""
    generic = {
        "cann": f"Ascend-cann-toolkit_{version}_linux-<arch>.run",
        "nnal": f"Ascend-cann-nnal_{version}_linux-<arch>.run",
        "ops": f"the ops/kernels package {version} for the chip",
    }.get(component, f"{component} {version}")
    stack, matrix, family = target.stack, target.matrix, target.family
    if arch is None:
        return generic
    if stack is not None and stack.version(component) == version:
        art = stack.artifact(component, arch)
        if art is not None and art.file:
            return str(art.file)
    if matrix is None or family is None:
        return generic
    try:
        if component == "ops":
            return str(matrix.ops_package(version, family, arch).file)
        return str(matrix.installer_file(component, version, family, arch).file)
    except CannenvError:
        return generic


def cite(target: Any, ids: Any, evidence: str | None = None) -> str:
    """Sources as a user reads them: ``recommended by <title> (<url>)``; internal ids never shown."""
    matrix = getattr(target, "matrix", None)
    names = []
    for sid in ids:
        src = matrix.sources.get(sid) if matrix is not None else None
        if src is None:
            continue
        where = src.url or src.where
        names.append(f"{src.title}, {where}" if where else src.title)
    if not names:
        return evidence or ""
    return (f"{evidence} by " if evidence else "") + "; ".join(names)
