"""The Ascend device's own fault tables, read whole from the vendor's sources into
``matrices/explain/libtables.yaml`` (docs/explain.md, "Hardware faults as the kernel and the device
report them").

* **DCMI's return codes** (table ``dcmi``): every ``DCMI_ERR_CODE_*`` of the driver's
  ``dcmi_interface_api.h`` (hicann/driver), each with the description and the solution of the DCMI
  API reference's return-code table (``return-codes.md`` of the same tree). npu-smi prints one as
  ``dcmi module initialize failed. ret is -8005``, MindCluster's devmanager as ``dcmi init failed,
  error code: -8005``.
* **The device's fault events** (table ``ascend-fault-events``): every event id of MindCluster's
  fault-diagnosis knowledge (``kg-config.json`` of ascend-faultdiag: class, component, module,
  cause, description, handling and the forms the device logs an event in, ``Event id=0x80e01809``,
  ``event_id=0x…``, ``event_id:  [0x…]``) and every fault code of the device plugin's
  ``faultCode.json`` with the fault level MindCluster handles it at (``SeparateNPU``,
  ``RestartNPU`` …).

Causes come from the vendor's own words only, reviewed per row (:data:`DCMI_CAUSES`): a DCMI code
whose solution names a cause (-8020 ``Check whether the device is occupied by other containers or
processes`` → ``device-busy``); an event the fault-diagnosis knowledge classes ``Hardware`` →
``not-a-version-problem``. The rest name none and still match, with the vendor's meaning.

    python -m cannenv.explain.hwtables --import dcmi ~/src/driver [--write]
    python -m cannenv.explain.hwtables --import fault-events ~/src/mind-cluster [--write]

(``TREE`` a checkout or ``git archive`` of the repository at the commit the table's sources name.)
Without ``--write`` it prints the refresh diff (rows the table lacks, changed, gone; exit 1 while
there is something to review); ``--write`` replaces that table's rows in libtables.yaml.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DCMI_HEADER = "src/custom/include/dcmi_interface_api.h"
DCMI_DOCS = {  # source id -> the reference's return-code page; the first that has a code describes it
    "dcmi-return-codes": "docs/en/Ascend_910B_DCMI_API/Ascend_910B_DCMI_API/return-codes.md",
    "dcmi-return-codes-950": "docs/en/Ascend_950_DCMI_API/Ascend_950_DCMI_API/return_codes.md",
}
KG_CONFIG = "component/ascend-faultdiag/src/ascend_fd/configuration/kg-config.json"
FAULT_CODE_JSON = "component/ascend-device-plugin/build/faultCode.json"

MAX_SOURCE_BYTES = 16 << 20

# Reviewed per row: the causes the DCMI API reference's own description and solution name, and why.
# A code absent here names no cause (internal errors, retry-later, a parameter of the caller).
DCMI_CAUSES: dict[str, tuple[tuple[str, ...], str]] = {
    "DCMI_ERR_CODE_RESOURCE_OCCUPIED": (
        ("device-busy",),
        "the vendor's solution: check whether the device is occupied by other containers or processes",
    ),
    "DCMI_ERR_CODE_DEVICE_NOT_EXIST": (
        ("device-not-visible",),
        "the vendor's description: the device does not exist (verify that it is running or that it exists)",
    ),
    "DCMI_ERR_CODE_INVALID_DEVICE_ID": (
        ("device-not-visible",),
        "the vendor's description: an invalid device id (verify that the id passed is valid) — as the"
        " runtime's ACL_ERROR_RT_INVALID_DEVICEID, a device the process does not see",
    ),
    "DCMI_ERR_CODE_NOT_SUPPORT": (
        ("chip-unsupported",),
        "the vendor's description: the device id or the function is not supported (the device does not"
        " support this function)",
    ),
    "DCMI_ERR_CODE_NOT_SUPPORT_IN_CONTAINER": (
        ("not-a-version-problem",),
        "the vendor's description: this API is not supported in a container environment — run it on the host;"
        " no version changes that",
    ),
    "DCMI_ERR_CODE_MEM_OPERATE_FAIL": (
        ("oom",),
        "the vendor's solution: verify that user space memory is sufficient (the host's memory)",
    ),
}

INNER_ERR_NOTE = (
    "; where sources disagree on -8005 at initialisation: the vendor's table calls it an internal error"
    " (provide logs, contact support); MindCluster's FAQ reads npu-smi's 'dcmi module initialize failed."
    " ret is -8005' as the NPU driver and firmware upgraded without a reboot (signature dcmi-init-failed,"
    " driver-firmware-mismatch, tied by the doctor's driver-loaded check); threads read it as a container"
    " without its devices (device-not-visible)"
)

# The device plugin's fault levels (fault_code.go's comments), in the order of their lists.
FAULT_LEVELS: dict[str, str] = {
    "NotHandleFaultCodes": "NotHandleFault (not handled)",
    "SubHealthFaultCodes": "SubHealthFault (sub-health)",
    "RestartRequestCodes": "RestartRequest (restart the request)",
    "RestartBusinessCodes": "RestartBusiness (restart the business)",
    "FreeRestartNPUCodes": "FreeRestartNPU (wait until free, then restart the NPU)",
    "RestartNPUCodes": "RestartNPU (restart the NPU)",
    "PreSeparateNPUCodes": "PreSeparateNPU (separate the NPU when it is free)",
    "SeparateNPUCodes": "SeparateNPU (separate the NPU)",
}


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_SOURCE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_SOURCE_BYTES} bytes")
    return path.read_text(encoding="utf-8")


def _cells(markdown: str) -> list[list[str]]:
    """The HTML table rows of a vendor page, each as its cells' text (the standard library's HTML
    parser: no regex runs over the page)."""
    from html.parser import HTMLParser

    class Rows(HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.rows: list[list[str]] = []
            self.cell: list[str] | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th") and self.rows:
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th") and self.cell is not None and self.rows:
                self.rows[-1].append(" ".join("".join(self.cell).split()))
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    parser = Rows()
    parser.feed(markdown)
    parser.close()
    return parser.rows


def read_dcmi(tree: Path) -> list[dict[str, Any]]:
    """The rows of table ``dcmi``: the header's codes, with the reference's description and solution
    (a solution cell that spans several rows is theirs too)."""
    header = _read(tree / DCMI_HEADER)
    codes = {"DCMI_OK": 0}
    for name, minus in re.findall(
        r"#define\s+(DCMI_ERR_CODE_\w+)\s+\(DCMI_ERROR_CODE_BASE\s*-\s*(\d+)\)", header
    ):
        codes[name] = -8000 - int(minus)
    doc: dict[str, tuple[str, str, str]] = {}
    for source, page in DCMI_DOCS.items():
        solution = ""
        for cells in _cells(_read(tree / page)):
            at = next((i for i, c in enumerate(cells) if re.fullmatch(r"DCMI_\w+", c)), None)
            if at is None or len(cells) < at + 3:
                continue
            if len(cells) > at + 3:
                solution = cells[at + 3]
            doc.setdefault(cells[at], (cells[at + 2], solution, source))
    rows = []
    for name, value in sorted(codes.items(), key=lambda kv: -kv[1]):
        desc, sol, source = doc.get(name, ("", "", "dcmi-header"))
        if desc:
            meaning = desc + (f" Solution: {sol}" if sol and sol != "N/A" else "")
        else:
            meaning = f"{name} (in the header, not in the reference's return-code table)"
        causes, why = DCMI_CAUSES.get(name, ((), ""))
        if name == "DCMI_OK":
            reason = "not an error (the success value)"
        elif causes:
            reason = why
        else:
            reason = "the vendor's table names no cause for it" + (
                f" ({sol.rstrip('.')})" if sol and sol != "N/A" else ""
            )
            if name == "DCMI_ERR_CODE_INNER_ERR":
                reason += INNER_ERR_NOTE
        rows.append(
            {
                "key": str(value),
                "name": name,
                "meaning": meaning,
                "causes": list(causes),
                "reason": reason,
                "source": source,
            }
        )
    return rows


def read_fault_events(tree: Path) -> list[dict[str, Any]]:
    """The rows of table ``ascend-fault-events``: every event id of the fault-diagnosis knowledge and
    every fault code of faultCode.json, keyed by its eight hex digits (upper case)."""
    kg = json.loads(_read(tree / KG_CONFIG))["knowledge-repository"]
    levels: dict[str, list[str]] = {}
    for field, codes in json.loads(_read(tree / FAULT_CODE_JSON)).items():
        for code in codes:
            levels.setdefault(code.upper(), []).append(FAULT_LEVELS.get(field, field))
    known: dict[str, dict[str, Any]] = {}
    for key, entry in kg.items():
        if re.fullmatch(r"0x[0-9A-Fa-f]{8}", key):
            known[key[2:].upper()] = entry.get("attribute") or {}
    rows = []
    for code in sorted(set(known) | set(levels)):
        level = "; ".join(dict.fromkeys(levels.get(code, ())))
        handled = f" MindCluster's device plugin handles it as {level}." if level else ""
        a = known.get(code)
        if a is None:
            rows.append(
                {
                    "key": code,
                    "name": f"0x{code}",
                    "meaning": f"a fault code of the device plugin's faultCode.json.{handled}",
                    "causes": [],
                    "reason": "the fault-diagnosis knowledge does not describe it:"
                    " its fault level alone names no cause",
                    "source": "mc-fault-code-json",
                }
            )
            continue
        klass = str(a.get("class") or "")
        where = "/".join(str(a[k]) for k in ("component", "module") if a.get(k))
        advice = " ".join(" ".join(str(s).split()) for s in a.get("suggestion_en") or ())
        meaning = " ".join(str(a.get("description_en") or a.get("cause_en") or "").split())
        rows.append(
            {
                "key": code,
                "name": f"0x{code}: " + " ".join(str(a.get("cause_en") or "").split()),
                "meaning": f"[{klass}, {where}] {meaning}{handled}"
                + (f" Handling: {advice}" if advice else ""),
                "causes": ["not-a-version-problem"] if klass == "Hardware" else [],
                "reason": (
                    f"the vendor's fault-diagnosis knowledge classes the event Hardware ({where}):"
                    " the device's hardware reported it; no package version causes or fixes it"
                    " — follow the vendor's handling"
                    if klass == "Hardware"
                    else f"the vendor classes it {klass or 'without a class'} ({where}):"
                    " names no cause by itself"
                ),
                "source": "mc-faultdiag-kg",
            }
        )
    return rows


READERS = {"dcmi": read_dcmi, "fault-events": read_fault_events}
TABLE_IDS = {"dcmi": "dcmi", "fault-events": "ascend-fault-events"}


def main(argv: Sequence[str] | None = None) -> int:
    import yaml

    from cannenv.explain import libtables

    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    rest = [a for a in args if a != "--write"]
    if len(rest) != 3 or rest[0] != "--import" or rest[1] not in READERS:
        print(
            "usage: python -m cannenv.explain.hwtables --import {dcmi|fault-events} TREE [--write]",
            file=sys.stderr,
        )
        return 2
    kind, tree = rest[1], Path(rest[2])
    table_file = libtables.shipped_path()
    raw = yaml.safe_load(table_file.read_text(encoding="utf-8"))
    old = next(t for t in raw["tables"] if t["id"] == TABLE_IDS[kind])["rows"]
    new = READERS[kind](tree)
    d = libtables.diff_rows(old, new)
    if write:
        libtables.write_rows(table_file, TABLE_IDS[kind], new)
    print(
        f"# {TABLE_IDS[kind]}: {len(new)} rows from {tree} ({len(old)} in the table): "
        + ", ".join(f"{len(d[w])} {w}" for w in ("lacks", "changed", "gone"))
    )
    print(yaml.safe_dump(d, sort_keys=False, width=200, allow_unicode=True), end="")
    return 1 if any(d.values()) and not write else 0


if __name__ == "__main__":
    raise SystemExit(main())
