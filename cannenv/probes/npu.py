"""NPU devices: ``npu-smi info`` (A2, A3, 310P layouts), the board query, PCI sysfs and /dev nodes.

npu-smi runs with a timeout through :meth:`cannenv.host.Host.run`; a hung or failing npu-smi
(``dcmi module initialize failed. ret is -8005`` in containers, research §7) is recorded as an
outcome and an issue, never a hang.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from typing import Any

from cannenv.facts import CommandOutcome, DeviceFacts, NpuChip, PciDevice
from cannenv.host import CommandResult
from cannenv.probes._common import (
    NpuSmiCapture,
    ProbeContext,
    exists,
    is_dir,
    list_dir,
    parse_kv,
    read_text,
)

CAPTURE_INFO = "/var/lib/cannenv/npu-smi-info.txt"
"""Where a tree carries the captured ``npu-smi info`` output of its host (docs/doctor.md)."""
CAPTURE_BOARD = "/var/lib/cannenv/npu-smi-board.txt"
"""... and the captured ``npu-smi info -t board -i 0 -c 0`` output (optional)."""
MAX_NPU_SMI_OUTPUT = 1 << 20
"""npu-smi prints a few KB even for 16 NPUs; more is not npu-smi output."""
NPU_SMI_PATHS = ("/usr/local/bin/npu-smi", "/usr/local/sbin/npu-smi", "/usr/bin/npu-smi")
HUAWEI_PCI_VENDOR = "0x19e5"
_HEADER_RE = re.compile(r"npu-smi\s+(?P<smi>\S+)\s+Version:\s*(?P<drv>\S+)")
_NPU_ROW_RE = re.compile(r"^(?P<npu>\d+)\s+(?P<name>\S+)\Z")
_ID_RE = re.compile(r"^\d+\Z")
_NAME_RE = re.compile(r"^[A-Za-z0-9][\w.-]*\Z")
_USAGE_RE = re.compile(r"(?<!\d)(\d+)\s*/\s*(\d+)")
_CHIP_ROW_RE = re.compile(r"^(?P<chip>\d+)(?:\s+(?P<phy>\d+))?\Z")
_BUS_RE = re.compile(r"^[0-9A-Fa-f]{4}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f]\Z")
_DEV_NODE_RE = re.compile(r"^(davinci\d+|davinci_manager|devmm_svm|hisi_hdc|vdavinci\d+)\Z")


def _npu_row(cells: list[str]) -> tuple[int, str, str] | None:
    """(npu id, name, health) of an NPU row in either layout, or None.

    Layout 1 (A2, A3, 310P, 910A; drivers 20.2 to 26.0): ``| <npu> <name> | <health> | ...``.
    Layout 2 (Ascend 950 tables): ``| <npu> | <name> | <health> | ...`` — id and name in
    separate columns.
    """
    first = cells[0]
    m = _NPU_ROW_RE.match(first)
    if m and len(cells) >= 2 and cells[1] and not _BUS_RE.match(cells[1]):
        return int(m.group("npu")), m.group("name"), cells[1].split()[0]
    if (
        _ID_RE.match(first)
        and len(cells) >= 3
        and _NAME_RE.match(cells[1])
        and not _ID_RE.match(cells[1])
        and not _BUS_RE.match(cells[1])
        and cells[2]
    ):
        return int(first), cells[1], cells[2].split()[0]
    return None


def _chip_row(cells: list[str]) -> tuple[int | None, int | None, str | None] | None:
    """(chip id, phy id, bus id) of the second row of an NPU, or None.

    Layout 1: ``| <chip> [<phy-id or device>] | <bus-id> | ...``; layout 2 (Ascend 950): empty
    cells first, then the Bus-Id cell: ``|        | <bus-id> | ...`` or ``|    |    | NA | ...``.
    """
    first, second = cells[0], cells[1]
    if first == "":
        # Ascend 950: one or more empty cells, then the Bus-Id cell (a bus id, or NA)
        rest = [c for c in cells[1:] if c]
        if rest and (_BUS_RE.match(rest[0]) or rest[0] in {"NA", "-"}):
            return None, None, rest[0] if _BUS_RE.match(rest[0]) else None
        return None
    bus = second if _BUS_RE.match(second) else None
    if bus is None and second not in {"", "NA", "-"}:
        return None
    m = _CHIP_ROW_RE.match(first)
    if not m:
        return None
    return int(m.group("chip")), int(m.group("phy")) if m.group("phy") else None, bus


def parse_npu_smi_info(text: str) -> tuple[str | None, str | None, list[NpuChip]]:
    """Parse ``npu-smi info``: (tool version, driver version, chips). Unknown lines are skipped.

    Each NPU is a row, usually followed by a chip row (see :func:`_npu_row`, :func:`_chip_row`).
    An NPU row with no chip row (a 950 summary table) still counts as one chip, id 0. The
    process table that follows is ignored.
    """
    smi = drv = None
    chips: list[NpuChip] = []
    pending: tuple[int, str, str] | None = None
    memory_column = False
    memory: int | None = None

    def emit(chip: int | None, phy: int | None, bus: str | None) -> None:
        assert pending is not None
        npu_id, name, health = pending
        chips.append(
            NpuChip(
                npu_id=npu_id,
                chip_id=chip if chip is not None else 0,
                phy_id=phy,
                name=name,
                health=health,
                bus_id=bus,
                memory_mib=memory,
            )
        )

    for line in text.splitlines():
        if smi is None:
            m = _HEADER_RE.search(line)
            if m:
                smi, drv = m.group("smi"), m.group("drv")
                continue
        if "Process id" in line or "Process name" in line:
            break
        stripped = line.strip()
        if not stripped.startswith("|"):
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        if len(cells) < 2:
            continue
        if "HBM-Usage" in stripped or "Memory-Usage" in stripped:
            memory_column = True
        if pending is not None:
            row = _chip_row(cells)
            if row is not None:
                # the last "used / total" pair of the chip row: HBM-Usage, or Memory-Usage (310P)
                pairs = _USAGE_RE.findall(cells[-1]) if memory_column else []
                memory = int(pairs[-1][1]) if pairs and len(pairs[-1][1]) <= 9 else None
                emit(*row)
                memory = None
                pending = None
                continue
        npu = _npu_row(cells)
        if npu is not None:
            if pending is not None:
                emit(None, None, None)
            pending = npu
    if pending is not None:
        emit(None, None, None)
    return smi, drv, chips


def parse_board(text: str) -> dict[str, str]:
    """``npu-smi info -t board -i N -c C``: ``Key : Value`` lines (research §4.8)."""
    return parse_kv(text, seps=":")


def soc_from_board(board: dict[str, str]) -> str | None:
    from cannenv.errors import CannenvError
    from cannenv.soc import soc_from_board as _soc

    try:
        return _soc(board.get("Chip Type"), board.get("Chip Name"), board.get("NPU Name"))
    except CannenvError:
        return None


def _outcome(res: CommandResult) -> CommandOutcome:
    text = (res.stderr or res.stdout or "").strip()
    tail = text.splitlines()[-1] if text else ""
    return CommandOutcome(
        argv=res.argv,
        returncode=res.returncode,
        timed_out=res.timed_out,
        missing=res.missing,
        duration_s=round(res.duration_s, 3),
        message=res.describe() if not res.ok else tail,
    )


def find_npu_smi(ctx: ProbeContext) -> str | None:
    """Host spelling of npu-smi (found inside the root for a tree, which never runs it), or None."""
    found = ctx.host.which("npu-smi")
    if found is not None:
        return found
    for p in NPU_SMI_PATHS:
        if ctx.host.is_file(p):
            return p
    return None


def _tree_capture(ctx: ProbeContext) -> NpuSmiCapture | None:
    """The captured ``npu-smi`` output a tree carries at the documented place, or None."""
    info = read_text(ctx, "npu", CAPTURE_INFO, max_bytes=MAX_NPU_SMI_OUTPUT)
    if info is None:
        return None
    board = None
    if exists(ctx, CAPTURE_BOARD):
        board = read_text(ctx, "npu", CAPTURE_BOARD, max_bytes=MAX_NPU_SMI_OUTPUT)
    return NpuSmiCapture(info=info, board=board, source=CAPTURE_INFO)


def probe(ctx: ProbeContext) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    smi_host = find_npu_smi(ctx)
    facts["npu_smi_path"] = smi_host
    capture = ctx.npu_smi_capture
    if capture is None and not ctx.host.is_live:
        capture = _tree_capture(ctx)
    if capture is not None:
        # device facts of a tree (or of a host seen through saved output) are data, never a run
        facts["npu_smi"] = CommandOutcome(
            argv=(smi_host or "npu-smi", "info"),
            returncode=0,
            message=f"captured output read from {capture.source} (not run)",
        )
        _from_info(ctx, facts, capture.info, capture.source, lambda _npu, _chip: capture.board)
    elif smi_host is not None and not ctx.host.is_live:
        facts["npu_smi"] = CommandOutcome(
            argv=(smi_host, "info"),
            missing=True,
            message=f"{smi_host} is in the --root tree, and nothing in a tree is run: give its captured "
            f"output with --npu-smi-output FILE (`npu-smi info > FILE` on that host) or place it at "
            f"{CAPTURE_INFO} in the tree",
        )
    elif smi_host is not None:
        res = ctx.host.run([smi_host, "info"], timeout=ctx.npu_smi_timeout, max_output=MAX_NPU_SMI_OUTPUT)
        facts["npu_smi"] = _outcome(res)
        if res.timed_out:
            ctx.issue(
                "npu",
                "command-timeout",
                smi_host,
                f"`{smi_host} info` gave no answer in {ctx.npu_smi_timeout:g} s",
            )
        elif not res.ok:
            ctx.issue("npu", "command-failed", smi_host, facts["npu_smi"].message)
        else:

            def board_of(npu_id: int, chip_id: int | None) -> str | None:
                argv = [smi_host, "info", "-t", "board", "-i", str(npu_id)]
                if chip_id is not None:
                    argv += ["-c", str(chip_id)]
                bres = ctx.host.run(argv, timeout=ctx.npu_smi_timeout, max_output=MAX_NPU_SMI_OUTPUT)
                return bres.stdout if bres.ok else None

            _from_info(ctx, facts, res.stdout, smi_host, board_of)
    _devices_from_sysfs(ctx, facts)
    return {"devices": DeviceFacts(**facts)}


def _from_info(
    ctx: ProbeContext,
    facts: dict[str, Any],
    text: str,
    source: str,
    board_of: Callable[[int, int | None], str | None],
) -> None:
    """Facts from an ``npu-smi info`` output (run or captured) and the first chip's board query."""
    from cannenv.errors import CannenvError
    from cannenv.soc import family_from_npu_name, soc_family

    smi, drv, chips = parse_npu_smi_info(text)
    facts.update(smi_version=smi, driver_version=drv, chips=tuple(chips))
    if not chips:
        ctx.issue(
            "npu", "malformed", source, f"`npu-smi info` ({source}) listed no NPU rows that could be read"
        )
        return
    first = chips[0]
    # Ascend 950's npu-smi refuses `-c` and names the SoC at NPU level.
    chip = None if family_from_npu_name(first.name) == "950" else first.chip_id
    board_text = board_of(first.npu_id, chip)
    if board_text is not None:
        board = parse_board(board_text)
        if "Board ID" not in board and chip is not None:
            # the chip-level query names the SoC; the NPU-level one (`-t board -i N`) carries the
            # Board ID and PCI ids that tell the product (docs/doctor.md)
            npu_text = board_of(first.npu_id, None)
            if npu_text is not None and npu_text != board_text:
                for key, val in parse_board(npu_text).items():
                    board.setdefault(key, val)
        facts["board"] = board
        soc = soc_from_board(board)
        if soc:
            facts["soc"] = soc
            with contextlib.suppress(CannenvError):
                facts["family"], facts["family_source"] = soc_family(soc), f"SoC {soc} (npu-smi board)"
    if "family" not in facts:
        fam = family_from_npu_name(first.name)
        if fam:
            facts["family"], facts["family_source"] = fam, f"npu-smi Name {first.name}"


def _devices_from_sysfs(ctx: ProbeContext, facts: dict[str, Any]) -> None:
    from cannenv.soc import family_from_pci

    pci = _pci_devices(ctx)
    facts["pci"] = tuple(pci)
    if "family" not in facts:
        for dev in pci:
            fam = family_from_pci(dev.device)
            if fam:
                facts["family"], facts["family_source"] = fam, f"PCI device {dev.device} at {dev.address}"
                break
    _product(facts, pci)
    _module_version(ctx, facts)
    facts["dev_nodes"] = tuple(f"/dev/{n}" for n in list_dir(ctx, "/dev") if _DEV_NODE_RE.match(n))


DRIVER_MODULES = ("drv_davinci_intf_host", "drv_devmng_host", "drv_devdrv_host")
"""Host-side kernel modules of the Ascend driver (the names its build files give them). Linux shows a
module's ``MODULE_VERSION`` at ``/sys/module/<name>/version``; no public sample shows whether these
modules declare one, so a value counts only when it reads as a driver version."""


def _module_version(ctx: ProbeContext, facts: dict[str, Any]) -> None:
    """The loaded driver's version from its kernel module, where readable (reboot-pending evidence
    when npu-smi gives none)."""
    from cannenv.errors import CannenvError
    from cannenv.versions import DriverVersion

    for name in DRIVER_MODULES:
        path = f"/sys/module/{name}/version"
        if not ctx.host.lexists(path):
            continue
        text = read_text(ctx, "npu", path, max_bytes=256)
        if text is None:
            continue
        try:
            DriverVersion.parse(text.strip())
        except (CannenvError, ValueError):
            continue
        facts["module_version"], facts["module_version_source"] = text.strip(), path
        return


def _product(facts: dict[str, Any], pci: list[PciDevice]) -> None:
    """The product where the host tells it: each piece of evidence the vendor's tools read (the PCI
    subsystem id from sysfs or npu-smi's board answer, npu-smi's Board ID, the SoC / npu-smi name)
    names the products it may be; one product left across them is the product, several are the
    candidates (never a guess). A family whose products are versioned apart (950) and tells none
    gets all its products as candidates."""
    from cannenv.soc import hardware, products

    fam = facts.get("family")
    if not fam or not products(fam):
        return
    said = _product_evidence(fam, facts, pci)
    if said:
        order = [p.id for p in products(fam)]
        common = set(said[0][1])
        for _, ids in said[1:]:
            common &= set(ids)
        evidence = "; ".join(e for e, _ in said)
        if len(common) == 1:
            facts["product"], facts["product_source"] = common.pop(), evidence
            return
        if common:
            facts["product_candidates"] = tuple(i for i in order if i in common)
            facts["product_source"] = evidence
            return
        # the pieces disagree: every product one of them names stays a candidate, each piece said
        named = {i for _, ids in said for i in ids}
        facts["product_candidates"] = tuple(i for i in order if i in named)
        facts["product_source"] = "the evidence disagrees: " + "; ".join(
            f"{e} names {', '.join(ids)}" for e, ids in said
        )
        return
    # candidates only where the products' HDKs are numbered apart (950): an A2 host that tells no
    # product is judged as the family, as before
    if any(f.id == fam and f.hdk_line == "own" for f in hardware().families):
        facts["product_candidates"] = tuple(p.id for p in products(fam))


def _product_evidence(
    fam: str, facts: dict[str, Any], pci: list[PciDevice]
) -> list[tuple[str, tuple[str, ...]]]:
    """``(evidence, ids of the products it may be)`` for each piece that names any product of ``fam``."""
    from cannenv.soc import family_from_pci, products_from_board_id, products_from_pci, products_from_soc

    said: list[tuple[str, tuple[str, ...]]] = []
    seen = set()
    for dev in pci:
        if dev.subsystem is None or dev.subsystem in seen or family_from_pci(dev.device) != fam:
            continue
        seen.add(dev.subsystem)
        hits = products_from_pci(dev.device, dev.subsystem)
        if hits:
            said.append(
                (
                    f"PCI {dev.vendor}:{dev.device} subsystem {dev.subsystem} at {dev.address}",
                    tuple(p.id for p in hits),
                )
            )
    board: dict[str, str] = facts.get("board") or {}
    device = _board_hex(board.get("PCI Device ID"))
    sub = "{}:{}".format(
        _board_hex(board.get("Subsystem Vendor ID")), _board_hex(board.get("Subsystem Device ID"))
    )
    if device and sub not in seen and family_from_pci(device) == fam:
        hits = products_from_pci(device, sub)
        if hits:
            said.append((f"npu-smi board PCI Device ID {device} subsystem {sub}", tuple(p.id for p in hits)))
    board_id = board.get("Board ID")
    if board_id:
        hits = products_from_board_id(fam, board_id)
        if hits:
            said.append((f"npu-smi Board ID {board_id.strip().lower()}", tuple(p.id for p in hits)))
    for name in (facts.get("soc"), *(ch.name for ch in facts.get("chips", ()))):
        if not name:
            continue
        named = tuple(p.id for p in products_from_soc(name) if p.family == fam)
        if named:
            said.append((f"name {name}", named))
            break
    return said


def _board_hex(text: str | None) -> str:
    """``0xD802`` -> ``d802`` (npu-smi's spelling of a PCI id -> the hardware table's); ``""`` when
    it is not four hex digits."""
    from cannenv.hardware import PCI_ID_RE

    m = PCI_ID_RE.match((text or "").strip().lower())
    return m.group(2) if m else ""


def _pci_devices(ctx: ProbeContext) -> list[PciDevice]:
    base = "/sys/bus/pci/devices"
    if not is_dir(ctx, base):
        return []
    out = []
    for addr in list_dir(ctx, base):
        vendor = _sysfs_value(ctx, f"{base}/{addr}/vendor")
        if vendor is None or vendor.lower() != HUAWEI_PCI_VENDOR:
            continue
        device = _sysfs_value(ctx, f"{base}/{addr}/device") or "?"
        sub_v = _sysfs_value(ctx, f"{base}/{addr}/subsystem_vendor")
        sub_d = _sysfs_value(ctx, f"{base}/{addr}/subsystem_device")
        sub = None
        if sub_v and sub_d:
            sub = f"{_hex4(sub_v)}:{_hex4(sub_d)}"
        out.append(PciDevice(address=addr, vendor=vendor.lower(), device=device.lower(), subsystem=sub))
    return out


def _hex4(text: str) -> str:
    """``0x19e5`` -> ``19e5`` (sysfs spelling -> the hardware table's)."""
    low = text.strip().lower()
    return low[2:] if low.startswith("0x") else low


def _sysfs_value(ctx: ProbeContext, path: str) -> str | None:
    """A sysfs attribute (a regular file of a few bytes; a FIFO or device there is not read)."""
    try:
        fd, _ = ctx.host.open_regular(path)
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(64)
        except OSError:
            return None
    return data.decode("ascii", "replace").strip() or None
