"""Ascend SoC names and product families, from the shipped data file ``matrices/socs.yaml``.

API (pure, data-driven; raises :mod:`cannenv.errors` errors)::

    normalize_soc("910b4")            -> "Ascend910B4"      # also "ascend910_9392" -> "Ascend910_9392"
    normalize_soc("Ascend910B")       -> "Ascend910B"       # first-gen 910 ProB, NOT the 910B series
    soc_family("Ascend910B4")         -> "a2"               # a2 | a3 | 310p | 910 | 310b | 950
    family_title("a2")                -> "Atlas A2"
    soc_from_board(chip_type, chip_name, npu_name)          # `npu-smi info -t board -i N -c C` fields
    family_from_npu_name("910B2C")    -> "a2"               # npu-smi `Name` column, or None
    family_from_pci("0xd802")         -> "a2"               # PCI device id (vendor 0x19e5), or None
    families() / socs() / hardware()                         # the data itself

The trap: ``Ascend910B`` without a digit is the first-generation 910 ProB (family ``910``), not a
member of the 910B (Atlas A2) series; it is a separate SoC name in the vendor's SOC_VERSION lists.
"""

from __future__ import annotations

import json
import re
import threading
from functools import lru_cache
from typing import Any

from cannenv.errors import InputError, did_you_mean
from cannenv.hardware import (
    FAMILY_IDS,
    PCI_ID_RE,
    BoardAlias,
    DeviceMemory,
    FamilyId,
    Hardware,
    Product,
    SocEntry,
    SocFamily,
)
from cannenv.values import validate

__all__ = [
    "FAMILY_IDS",
    "BoardAlias",
    "DeviceMemory",
    "FamilyId",
    "Hardware",
    "Product",
    "SocEntry",
    "SocFamily",
]

_HARDWARE_LOCK = threading.Lock()

BUNDLED_HARDWARE = "hardware.json"
"""Next to the matrices in the fleet bundle: :func:`hardware` as JSON, validated by the controller
that built the bundle (``cannenv.fleet.zipapp``), read there without YAML, matrix or pydantic."""


def hardware_from_plain(doc: dict[str, Any]) -> Hardware:
    """A :class:`Hardware` from its own :func:`cannenv.values.dump` (already validated data)."""

    def entries(cls: Any, items: list[dict[str, Any]]) -> tuple[Any, ...]:
        return tuple(cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in i.items()}) for i in items)

    return Hardware(
        families=entries(SocFamily, doc["families"]),
        socs=entries(SocEntry, doc["socs"]),
        board_aliases=entries(BoardAlias, doc["board_aliases"]),
        products=entries(Product, doc.get("products", [])),
    )


def hardware() -> Hardware:
    """The shipped hardware table (``matrices/socs.yaml``), validated, cached.

    Taken from the shipped matrix when the validated-matrix cache holds it (the matrix validates
    ``socs.yaml`` with this same model, and the cache key covers its bytes and this module's
    source), so a warm ``cannenv doctor`` neither imports YAML nor parses the file; read and
    validated here otherwise. Loaded once even when probes running in threads ask at once.
    """
    with _HARDWARE_LOCK:
        return _hardware()


@lru_cache(maxsize=None)  # noqa: UP033 - on the facts path (Python >= 3.7)
def _hardware() -> Hardware:
    from cannenv.resources import matrices_dir

    bundled = matrices_dir().parent / BUNDLED_HARDWARE
    if bundled.is_file():  # in the fleet bundle: no matrix, YAML or pydantic there
        return hardware_from_plain(json.loads(bundled.read_text(encoding="utf-8")))
    from cannenv.matrix import shipped_if_cached
    from cannenv.matrix.loader import _yaml_loader

    path = matrices_dir() / "socs.yaml"
    shipped = shipped_if_cached()
    if shipped is not None:
        for file, part in zip(shipped.files, shipped.parts):  # noqa: B905 - Python >= 3.7
            if file == path and part.hardware is not None:
                return part.hardware
    import yaml

    with path.open(encoding="utf-8") as fh:
        doc = yaml.load(fh, Loader=_yaml_loader())
    return validate(Hardware, doc["hardware"])


def families() -> tuple[SocFamily, ...]:
    return hardware().families


def socs() -> tuple[SocEntry, ...]:
    return hardware().socs


@lru_cache(maxsize=None)  # noqa: UP033 - on the facts path (Python >= 3.7)
def _by_lower() -> dict[str, SocEntry]:
    return {s.name.lower(): s for s in socs()}


@lru_cache(maxsize=None)  # noqa: UP033 - on the facts path (Python >= 3.7)
def _families_by_id() -> dict[str, SocFamily]:
    return {f.id: f for f in families()}


def _pattern_family(name: str) -> str | None:
    for fam in families():
        for pattern in fam.soc_patterns:
            if re.match(pattern, name, flags=re.IGNORECASE):
                return fam.id
    return None


def _canonical_from_pattern(name: str) -> str:
    # Ascend950pr_9579 -> Ascend950PR_9579: upper-case the letters after the digits, keep the rest.
    body = name[len("ascend") :]
    return "Ascend" + body.upper()


def normalize_soc(name: str) -> str:
    """Canonical SoC name for any common spelling: ``910B4``, ``ascend910b4``, ``Ascend910_9392``.

    Raises InputError (with a did-you-mean hint) for a name that is not a known SoC.
    """
    raw = name.strip()
    key = raw.lower().replace(" ", "")
    if not key.startswith("ascend"):
        key = "ascend" + key
    entry = _by_lower().get(key)
    if entry is not None:
        return entry.name
    if _pattern_family(key) is not None:
        return _canonical_from_pattern(key)
    known = [s.name for s in socs()]
    hint = did_you_mean("Ascend" + key[len("ascend") :].upper(), known) or did_you_mean(raw, known)
    raise InputError(
        f"unknown Ascend SoC {name!r}",
        hint=(hint + " " if hint else "")
        + "known SoCs: "
        + ", ".join(known)
        + " (see `npu-smi info -t board -i 0 -c 0`: Chip Name, and NPU Name on Atlas A3)",
    )


def soc_family(soc: str) -> FamilyId:
    """Product family id of a SoC (any spelling normalize_soc accepts)."""
    canonical = normalize_soc(soc)
    entry = _by_lower().get(canonical.lower())
    fam = entry.family if entry is not None else _pattern_family(canonical)
    if fam is None:  # pragma: no cover - normalize_soc only returns names with a family
        raise InputError(f"SoC {soc!r} has no family in the hardware table")
    return _as_family(fam)


def _as_family(fam: str) -> FamilyId:
    if fam not in FAMILY_IDS:
        raise InputError(
            f"unknown SoC family {fam!r}",
            hint=(did_you_mean(fam, FAMILY_IDS) or "") + " families: " + ", ".join(FAMILY_IDS),
        )
    return fam  # type: ignore[return-value]


def normalize_family(family: str) -> FamilyId:
    """Accept ``a2``, ``A2``, ``Atlas A2``, ``910b`` (image chip tag) ... and return the family id."""
    key = family.strip().lower()
    if key.startswith("atlas "):
        key = key[len("atlas ") :]
    if key in FAMILY_IDS:
        return _as_family(key)
    for fam in families():
        if key in {fam.title.lower(), (fam.image_chip or "").lower()}:
            return fam.id
    return _as_family(key)


def family_title(family: str) -> str:
    """Human title of a family id: ``a2`` -> ``Atlas A2``."""
    return family_info(family).title


def family_info(family: str) -> SocFamily:
    return _families_by_id()[normalize_family(family)]


def soc_from_board(chip_type: str | None, chip_name: str | None, npu_name: str | None) -> str:
    """SoC name from ``npu-smi info -t board -i N -c C`` fields.

    A2/310P: ``Chip Type`` + ``Chip Name`` (``Ascend`` + ``910B4`` -> ``Ascend910B4``);
    A3 (and 950): ``Chip Name`` + ``_`` + ``NPU Name`` (``Ascend910`` + ``9392`` -> ``Ascend910_9392``)
    [VA-SETUP]. Raises InputError when the fields name no known SoC.
    """
    ctype = (chip_type or "").strip()
    cname = (chip_name or "").strip()
    nname = (npu_name or "").strip()
    if not cname:
        raise InputError(
            "npu-smi board output has no 'Chip Name'",
            hint="run `npu-smi info -t board -i 0 -c 0` and pass the Chip Name (and NPU Name on Atlas A3)",
        )
    for alias in hardware().board_aliases:
        if re.match(alias.pattern, cname):
            return alias.soc
    candidates: list[str] = []
    base = cname if cname.lower().startswith("ascend") else (ctype or "Ascend") + cname
    if nname and nname.upper() not in {"NA", "N/A", "-"}:
        candidates.append(f"{base}_{nname}")
    candidates.append(base)
    for cand in candidates:
        try:
            return normalize_soc(cand)
        except InputError:
            continue
    return normalize_soc(candidates[0])  # raises with the did-you-mean hint


def device_memory(soc: str | None = None, family: str | None = None) -> DeviceMemory | None:
    """The HBM fact for a SoC (its own entry first, then its family's), or for a family; else None."""
    if soc is not None:
        canonical = normalize_soc(soc)
        for mem in hardware().memory:
            if mem.soc is not None and mem.soc.lower() == canonical.lower():
                return mem
        family = soc_family(canonical)
    if family is not None:
        fam = normalize_family(family)
        for mem in hardware().memory:
            if mem.family == fam and mem.soc is None:
                return mem
    return None


def family_from_npu_name(name: str) -> FamilyId | None:
    """Family from the npu-smi ``Name`` column (``910B3``, ``Ascend910``, ``310P3``), or None.

    Patterns are checked family by family in data order, so ``910B3`` (A2) is tried before the
    first-gen ``^910`` pattern; a bare ``910B`` falls through to first-gen 910 [MC].
    """
    text = name.strip()
    for fam in families():
        for pattern in fam.npu_smi_name_patterns:
            if re.match(pattern, text):
                return fam.id
    return None


def family_from_pci(device_id: str) -> FamilyId | None:
    """Family from a PCI device id (``d802``, ``0xD802``) of vendor 0x19e5, or None."""
    m = PCI_ID_RE.match(device_id.strip().lower())
    if not m:
        return None
    for fam in families():
        if m.group(2) in fam.pci_device_ids:
            return fam.id
    return None


def products(family: str | None = None) -> tuple[Product, ...]:
    """The products the vendor versions separately (all, or those of one family)."""
    return tuple(p for p in hardware().products if family is None or p.family == family)


def product_title(product_id: str) -> str:
    for p in hardware().products:
        if p.id == product_id:
            return p.title
    return product_id


def products_from_pci(device_id: str, subsystem: str | None) -> tuple[Product, ...]:
    """The products a PCI device (vendor 0x19e5) with its ``vendor:device`` subsystem id may be:
    one when the id tells it, several when it narrows the choice only, none when nothing lists it."""
    fam = family_from_pci(device_id)
    if fam is None or not subsystem:
        return ()
    want = subsystem.strip().lower().replace("0x", "")
    return tuple(p for p in products(fam) if want in (s.lower() for s in p.pci_subsystems))


def product_from_pci(device_id: str, subsystem: str | None) -> Product | None:
    """The product a PCI device (vendor 0x19e5) with its ``vendor:device`` subsystem id tells, or None."""
    hits = products_from_pci(device_id, subsystem)
    return hits[0] if len(hits) == 1 else None


def products_from_board_id(family: str, board_id: str) -> tuple[Product, ...]:
    """The products of ``family`` an ``npu-smi info -t board`` Board ID (``0x33``) may be (one,
    several, or none). Board ids are read within a family only: a 300I Duo shows ids an A3 lists."""
    m = re.match(r"^0x([0-9a-f]{1,8})\Z", board_id.strip().lower())
    if m is None:
        return ()
    want = int(m.group(1), 16)
    return tuple(p for p in products(family) if want in (int(b, 16) for b in p.board_ids))


def products_from_soc(name: str) -> tuple[Product, ...]:
    """The products a SoC or npu-smi name (``Ascend950PR_9579``, ``Ascend950DT``) may be: one when
    the name tells it, several when it narrows the choice only, none when nothing matches."""
    text = name.strip()
    return tuple(
        p for p in hardware().products if any(re.match(rx, text, re.IGNORECASE) for rx in p.soc_patterns)
    )


def product_from_accelerator_type(label: str) -> Product | None:
    """The product a Kubernetes ``accelerator-type`` label value (``350-Atlas-8``) names, or None."""
    text = label.strip()
    for p in hardware().products:
        if text in p.accelerator_types:
            return p
    return None
