"""The hardware table's value types (product families, SoC names, board aliases).

They sit below both :mod:`cannenv.matrix` (a matrix file may carry a ``hardware`` section) and
:mod:`cannenv.soc` (which answers SoC questions from the shipped table), so neither imports the
other's module to get them; outside the matrix package, because :mod:`cannenv.soc` is on the facts
path, which the fleet bundle runs on host Pythons >= 3.7 without the matrix
(tests/unit/test_py37.py). Frozen value dataclasses (:mod:`cannenv.values`): pydantic validates
``socs.yaml`` at the boundary and is never imported when the table comes from the matrix cache.
"""

from __future__ import annotations

import re
import sys

from cannenv.compat import Literal, get_args
from cannenv.values import Check, value

FamilyId = Literal["a2", "a3", "310p", "910", "310b", "950"]
FAMILY_IDS: tuple[str, ...] = get_args(FamilyId)

PCI_ID_RE = re.compile(r"^(0x)?([0-9a-f]{4})\Z")


def _lower_pci(ids: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for item in ids:
        m = PCI_ID_RE.match(item.lower())
        if not m:
            raise ValueError(f"PCI device id {item!r} is not 4 hex digits")
        out.append(m.group(2))
    return tuple(out)


BOARD_ID_RE = re.compile(r"^0x[0-9a-f]{1,4}\Z")


def _board_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    for item in ids:
        if not BOARD_ID_RE.match(item):
            raise ValueError(f"board id {item!r} is not 0x and 1-4 lower-case hex digits")
    return ids


def _regexes(patterns: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from exc
    return patterns


# Read by pydantic on the controller only; in the fleet bundle (host Pythons >= 3.7, where
# Annotated and tuple[...] do not exist) no annotation is ever evaluated.
if sys.version_info >= (3, 9):  # noqa: UP036
    from typing import Annotated  # novm: guarded by the version test above

    PciIds = Annotated[tuple[str, ...], Check(_lower_pci)]
    Regexes = Annotated[tuple[str, ...], Check(_regexes)]
    BoardIds = Annotated[tuple[str, ...], Check(_board_ids)]
    Sources = Annotated[tuple[str, ...], Check(min_length=1)]


@value
class SocFamily:
    """A product family (Atlas A2, A3, ...): what the matrix's rules and stacks are keyed on."""

    id: FamilyId
    title: str
    image_chip: str | None = None
    """chip series in official image tags (910b, a3, ...)"""
    pci_device_ids: PciIds = ()
    npu_smi_name_patterns: Regexes = ()
    """regexes for the npu-smi Name column"""
    runtime_soc_ids: str | None = None
    """torch_npu runtime numeric SoC ids"""
    soc_patterns: Regexes = ()
    """regexes for SoC names not listed one by one"""
    hdk_line: Literal["shared", "own"] = "shared"
    """``own``: the vendor numbers this family's HDKs per product (Ascend 950: 25.7.RC1, 25.1.RC1 …):
    a CANN <-> HDK statement covers it only where it names the family, never by default"""
    cann_from: str | None = None
    """the first CANN release that supports the family (older ones: incompatible, naming the statement)"""
    cann_from_statement: str | None = None
    accelerator: str | None = None
    """the Ascend device plugin's node label ``accelerator`` on this family's nodes (MindCluster)"""
    accelerator_types: tuple[str, ...] = ()
    """``accelerator-type`` label values that tell this family's nodes apart from the others with
    the same ``accelerator`` (empty: the ``accelerator`` label alone tells it)"""
    sources: Sources
    note: str | None = None


@value
class Product:
    """A product of a family that the vendor versions separately (Atlas 350 card, Atlas 950 SuperPoD):
    its own HDK line, and the host facts that tell it (PCI subsystem ids, SoC names, node labels)."""

    id: Annotated[str, Check(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    title: str
    family: FamilyId
    pci_subsystems: tuple[str, ...] = ()
    """``vendor:device`` subsystem ids of the family's PCI device (``19e5:4003``) that the vendor's
    tools map to this product alone"""
    board_ids: BoardIds = ()
    """``Board ID`` values of ``npu-smi info -t board -i N`` (``0x33``) that the vendor's tools map
    to this product; a value several products of the family list narrows the choice only"""
    soc_patterns: Regexes = ()
    """SoC / npu-smi name regexes that tell this product (``^Ascend950PR``)"""
    accelerator_types: tuple[str, ...] = ()
    """Kubernetes ``accelerator-type`` label values (MindCluster device plugin)"""
    cann_from: str | None = None
    """the first CANN release a statement names for this product (older ones: unknown)"""
    cann_from_statement: str | None = None
    hdk_from: str | None = None
    """the first Ascend HDK a statement pairs with this product's first CANN (older: unknown)"""
    hdk_from_statement: str | None = None
    sources: Sources
    note: str | None = None


@value
class SocEntry:
    """One SoC name in its canonical spelling (as used by SOC_VERSION, e.g. ``Ascend910B4``)."""

    name: Annotated[str, Check(pattern=r"^Ascend[0-9A-Za-z_-]+$")]
    family: FamilyId
    sources: Sources
    note: str | None = None


@value
class BoardAlias:
    """An npu-smi board ``Chip Name`` that is not itself a SoC name (e.g. ``A2G*``)."""

    pattern: str
    soc: str
    sources: Sources
    note: str | None = None


def _positive(n: int) -> int:
    if n <= 0:
        raise ValueError(f"{n} is not a positive size")
    return n


@value
class DeviceMemory:
    """HBM capacity of one device (a SoC, or every SoC of a family), as a tool on the device shows it.

    ``hbm_mib`` is the total ``npu-smi info`` prints in its ``HBM-Usage(MB)`` column (MiB), per
    chip: on Atlas A3 a chip is one of the two dies of an NPU. Exactly one of ``soc``/``family``.
    """

    hbm_mib: Annotated[int, Check(_positive, "MiB, > 0")]
    sources: Sources
    soc: str | None = None
    family: FamilyId | None = None
    note: str | None = None


@value
class Hardware:
    families: tuple[SocFamily, ...] = ()
    socs: tuple[SocEntry, ...] = ()
    board_aliases: tuple[BoardAlias, ...] = ()
    memory: tuple[DeviceMemory, ...] = ()
    """HBM per device (``cannenv model memory``)"""
    products: tuple[Product, ...] = ()
    """products with their own version lines (the Ascend 950 series)"""
