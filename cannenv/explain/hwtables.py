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

* **FaultDiag's fault knowledge** (table ``ascend-fd-faults``): every fault code of the same
  ``kg-config.json`` that is not a device event id (``Comp_Network_Custom_05``, ``AISW_CANN_…``,
  ``Comp_Switch_L1_…``: 800), as the diagnosis report of ``ascend-fd diag`` prints it in its
  ``Status Code`` / ``状态码`` cell (``wrapper/print_wrapper.py``, ``utils/i18n.py``).
* **FaultDiag's own errors** (table ``ascend-fd-errors``): the error classes of ascend-fd's
  ``utils/status.py`` (``FileNotExistError(502): …``), printed as ``ascend-fd`` ends a job or a
  command (``The job ROOT_CLUSTER failed. The error is: [FileNotExistError(502): No plog file …]``).

Causes come from the vendor's own words only, reviewed per row (:data:`DCMI_CAUSES`): a DCMI code
whose solution names a cause (-8020 ``Check whether the device is occupied by other containers or
processes`` → ``device-busy``); an event the fault-diagnosis knowledge classes ``Hardware`` →
``not-a-version-problem``. The rest name none and still match, with the vendor's meaning.

    python -m cannenv.explain.hwtables --import dcmi ~/src/driver [--write]
    python -m cannenv.explain.hwtables --import fault-events ~/src/mind-cluster [--write]
    python -m cannenv.explain.hwtables --import fault-diag ~/src/mind-cluster [--write]
    python -m cannenv.explain.hwtables --import fd-errors ~/src/mind-cluster [--write]
    python -m cannenv.explain.hwtables --import aicore-errors DIR [--write]

* **The runtime's AI Core exception texts** (table ``rt-aicore-errorstr``): every text of the
  runtime's AI Core error-bit maps, which its report prints as ``errorStr: TEXT…``, and ``timeout
  or trap error.`` for no bit (``DIR`` holds one ``git archive`` of hicann/runtime per commit of
  :data:`AICORE_MAPS`, in a folder named by the full hash); causes by the text's words, reviewed
  (:data:`AICORE_HW_WORDS`, :data:`AICORE_UNDECIDED_WORDS`, :data:`AICORE_KERNEL_WORDS`).

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
FD_STATUS = "component/ascend-faultdiag/src/ascend_fd/utils/status.py"

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


# Reviewed per row: FaultDiag's Network-class faults that are the physical link (the port, its optical
# module, the light, the cable, FEC): the hardware of the network, as its Hardware class. The other
# Network rows (the port's health status, the NPU driver missing, no IP on the NIC) name no cause.
FD_LINK_CODES: dict[str, str] = {
    "Comp_Network_Custom_01": "an NPU port's link went down for more than 30 s",
    "Comp_Network_Custom_02": "the NPU port's FEC mode is abnormal",
    "Comp_Network_Custom_05": "the NPU's optical module is not present",
    "Comp_Network_Custom_08": "the optical module's RX/TX power is outside its rated range",
    "Comp_Network_Custom_09": "the optical module has no RX/TX power",
    "Comp_Network_Custom_10": "the optical module's RX/TX power lost lock",
    "Comp_Network_Custom_11": "the fiber or copper cable link is faulty",
}


def read_fault_diag(tree: Path) -> list[dict[str, Any]]:
    """The rows of table ``ascend-fd-faults``: every fault code of the fault-diagnosis knowledge that
    is not a device event id (those are ``ascend-fault-events``), keyed by the code as the report
    prints it."""
    kg = json.loads(_read(tree / KG_CONFIG))["knowledge-repository"]
    rows = []
    for code in sorted(kg):
        if re.fullmatch(r"0x[0-9A-Fa-f]{8}", code):
            continue
        a = kg[code].get("attribute") or {}
        klass = str(a.get("class") or "")
        where = "/".join(str(a[k]) for k in ("component", "module") if a.get(k))
        advice = " ".join(" ".join(str(s).split()) for s in a.get("suggestion_en") or ())
        meaning = " ".join(str(a.get("description_en") or a.get("cause_en") or "").split())
        if klass == "Hardware":
            causes = ["not-a-version-problem"]
            reason = (
                f"the vendor's fault-diagnosis knowledge classes the fault Hardware ({where}): the"
                " hardware reported it; no package version causes or fixes it — follow the vendor's handling"
            )
        elif klass == "Network" and (a.get("component") == "Switch" or code in FD_LINK_CODES):
            causes = ["not-a-version-problem"]
            what = FD_LINK_CODES.get(code, "a fault of the switch's forwarding chip or its ports")
            reason = (
                f"the vendor classes it Network ({where}): {what} — the network's hardware, no package"
                " version causes or fixes it; follow the vendor's handling"
            )
        else:
            causes = []
            reason = f"the vendor classes it {klass or 'without a class'} ({where}): names no cause by itself"
        rows.append(
            {
                "key": code,
                "name": f"{code}: " + " ".join(str(a.get("cause_en") or "").split()),
                "meaning": f"[{klass}, {where}] {meaning}" + (f" Handling: {advice}" if advice else ""),
                "causes": causes,
                "reason": reason,
                "source": "mc-faultdiag-kg",
            }
        )
    return rows


# Reviewed per row: what each of ascend-fd's own error classes says of the run it ends. The tool
# reads logs collected from a job; its errors are about that input or its own state.
FD_ERROR_CAUSES: dict[str, tuple[tuple[str, ...], str]] = {
    "PathError": (
        ("not-a-version-problem",),
        "the path given to ascend-fd (its -i/-o folders) is not valid for it: the command's input",
    ),
    "FileNotExistError": (
        ("not-a-version-problem",),
        "the collected logs lack a file the job reads (no plog for ROOT_CLUSTER, no npu_detail csv …):"
        " the collection is incomplete for that job (the quick start: a job whose logs were not"
        " collected fails and the others go on) — collect them, or ignore that job",
    ),
    "InfoNotFoundError": (
        ("not-a-version-problem",),
        "the information the job looks for is not in the collected logs: the collection, not a version",
    ),
    "ParamError": (("not-a-version-problem",), "a parameter of the ascend-fd command is not valid"),
    "FileTooLarge": (
        ("not-a-version-problem",),
        "the input folder holds more files than ascend-fd reads: the collection's size",
    ),
}


def read_fd_errors(tree: Path) -> list[dict[str, Any]]:
    """The rows of table ``ascend-fd-errors``: every error class of ascend-fd's ``utils/status.py``
    (a class with ``code`` and ``description``), keyed by the class's name, which it prints."""
    import ast

    rows = []
    for node in ast.parse(_read(tree / FD_STATUS)).body:
        if not isinstance(node, ast.ClassDef):
            continue
        fields: dict[str, object] = {}
        for st in node.body:
            if (
                isinstance(st, ast.Assign)
                and len(st.targets) == 1
                and isinstance(st.targets[0], ast.Name)
                and isinstance(st.value, ast.Constant)
            ):
                fields[st.targets[0].id] = st.value.value
        code, text = fields.get("code"), fields.get("description")
        if not isinstance(code, int) or not isinstance(text, str) or code < 500:
            continue  # SuccessRet (200) is no error
        causes, reason = FD_ERROR_CAUSES.get(node.name, ((), ""))
        rows.append(
            {
                "key": node.name,
                "name": f"{node.name}({code})",
                "meaning": f"{text} (printed '{node.name}({code}): <message>')",
                "causes": list(causes),
                "reason": reason or "ascend-fd's own failure of that kind: names no cause by itself",
                "source": "mc-faultdiag-status",
            }
        )
    return rows


# The runtime's AI Core exception texts (errorStr of the report's extend info), from each commit of
# hicann/runtime listed, newest first: a text an older commit has that no newer one has is a row
# too (the release a log comes from may word it so; the texts were reworded in 2026-05, fbab318c).
RT_COMMIT = "681ef7610df13c8128982901142a2c869ddbb53e"
RT_OLD_COMMIT = "494dda3604a35ee34a40c4eca47475475fde5631"  # the first open-source tree (2026-01-27)
RT_TREE = f"https://github.com/hicann/runtime/blob/{RT_COMMIT}/"
RT_OLD_TREE = f"https://github.com/hicann/runtime/blob/{RT_OLD_COMMIT}/"
# commit -> (source id, file, the map's definition, the prefix of its bit names' keys)
AICORE_MAPS: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    RT_COMMIT: (
        (
            "rt-aicore-errmap",
            "src/runtime/core/src/device/device_error_core_proc.cc",
            "DeviceErrorProc::errorMapInfo_ = {",
            "",
        ),
        (
            "rt-aicore-errmap-v200",
            "src/runtime/core/src/device/v200_base/device_error_proc_c.cc",
            "g_davidErrorMapInfo = {",
            "v200.",
        ),
    ),
    RT_OLD_COMMIT: (
        (
            "rt-aicore-errmap-old",
            "src/runtime/feature/src/device/device_error_proc.cc",
            "DeviceErrorProc::errorMapInfo_ = {",
            "old.",
        ),
        (
            "rt-aicore-errmap-v200-old",
            "src/runtime/feature/src/device/v200_base/device_error_proc_c.cc",
            "g_davidErrorMapInfo = {",
            "old.v200.",
        ),
    ),
}
AICORE_NO_BIT = 'errorString = "timeout or trap error.";'
AICORE_HW_PAGE = "https://www.hiascend.com/document/detail/zh/canncommercial/latest/maintenref/troubleshooting/troubleshooting_0011.html"
AICORE_GUIDE = "https://github.com/hicann/docs/blob/c14717642ba24270f72de4d02bcb447c5802b043/docs/en/troubleshooting/ai_core_error_description.md"

# Reviewed: the words of a text that decide its cause, the first group that matches deciding.
# A hardware fault of the AI Core (a multi-bit ECC error, a parity or CRC error, a failed internal
# cache): the vendor's page "AI Core hardware fault" says the hardware, and replacing it.
AICORE_HW_WORDS = ("ECC", "parity", "Parity", "PARIT", "CRC error", "MVF cache fails", "MEM failure")
# The text itself names a binary version among its possible causes, or another device or the bus:
# no cause (a version may be meant; the remote side's fault is not the kernel's).
AICORE_UNDECIDED_WORDS = (
    "binary version",
    "cross-device",
    "does not respond",
    "AXI returns an error",
    "BIU",
    "is abnormal.",
    "need to be further read",
    "compiler bug",
    # an illegal or undefined instruction: the runtime's own texts name a binary that does not
    # match among its causes (a kernel built for another chip or release), so no cause by itself
    "Illegal instruction",
    "illegal instruction",
    "instruction is abnormal",
    "not defined in ISA",
    "not supported by the current",
)
# The kernel's own illegal access or instruction (an address out of bounds, unaligned, an invalid
# parameter or configuration, a conflict of its buffers, a division by 0, INF/NaN input …).
AICORE_KERNEL_WORDS = (
    "out of bounds",
    "out of range",
    "exceeds",
    "overflow",
    "Overflow",
    "not aligned",
    "unaligned",
    "invalid",
    "illegal",
    "Illegal",
    "incorrect",
    "conflict",
    "confilict",
    "by 0",
    "divide-by-zero",
    "DIV0",
    "negative",
    "INF",
    "inf",
    "nan",
    "NAN",
    "not defined in ISA",
    "violates",
    "constraints",
    "is 0",
    "all 0",
    "greater than",
    "less than",
    "contains a non-",
    "Ping/Pong",
    "loop",
    "stack",
    "GM address",
    "not written back",
    "is not a VNOP",
    "L2 code",
    "times out",
    "timeout",
    "already",
    "underflow",
    "do not meet",
    "does not meet",
    "is different from",
    "before the current index",
    "is missed",
    "Decompression exception",
    "misalign",
    "configuration",
    "out of the",
    "NaN/Inf",
    "Divide-by-zero",
    "trap instruction",
    "not correctly sorted",
    "the same address",
    "addresses are the same",
    "an extra ",
    "divide by zero",
    "out of boundary",
    "trap instr",
    "is same as",
    "overwriting",
    "sorted data",
)

AICORE_CAUSES = {
    "hw": (
        ("not-a-version-problem",),
        "a hardware fault of the AI Core (a multi-bit ECC, parity or CRC error of its memories or"
        " caches, which the runtime's texts send to the RAS alarm handling); the vendor's page 'AI Core"
        " hardware fault' (AI Core硬件故障, " + AICORE_HW_PAGE + ") has the hardware replaced — the"
        " hardware, not a release",
    ),
    "kernel": (
        ("not-a-version-problem",),
        "the kernel's own illegal access or instruction (an address out of bounds or not aligned, an"
        " invalid parameter, a conflict of its buffers, a division by 0, INF/NaN data …): the"
        " operator's code or its inputs, which the vendor's AI Core error guide (" + AICORE_GUIDE + ")"
        " locates with msaicerr; no release is named",
    ),
    "timeout": (
        ("not-a-version-problem",),
        "no error bit is set: the kernel ran past the AI Core's execution timeout or stopped at a trap"
        " (an assert of the operator's code); the vendor's operator docs give 'timeout or trap error'"
        " for a computation too large (split the axes), its AI Core error guide (" + AICORE_GUIDE + ")"
        " the hardware first, then the operator's input data — a kernel's run, not a release",
    ),
    "none": (
        (),
        "the text names neither a kernel's fault nor the hardware, or names a version among other"
        " causes: no cause by itself",
    ),
}


def _aicore_kind(text: str) -> str:
    if any(w in text for w in AICORE_HW_WORDS):
        return "hw"
    if any(w in text for w in AICORE_UNDECIDED_WORDS):
        return "none"
    if any(w in text for w in AICORE_KERNEL_WORDS):
        return "kernel"
    return "none"


def _map_entries(src: str, start: str) -> list[tuple[str, str, int]]:
    """The ``{NAME, "text" "text"}`` entries of a C++ map literal starting at ``start``: (name,
    the concatenated text, the entry's 1-based line). String handling, no regex."""
    at = src.index(start) + len(start)
    end = src.index("\n};", at)
    out: list[tuple[str, str, int]] = []
    i = at
    while True:
        b = src.find("{", i, end)
        if b < 0:
            return out
        e = src.find("}", b, end)
        body = src[b + 1 : e]
        name, _, rest = body.partition(",")
        parts: list[str] = []
        j = 0
        while True:
            q = rest.find('"', j)
            if q < 0:
                break
            r = rest.find('"', q + 1)
            parts.append(rest[q + 1 : r])
            j = r + 1
        out.append((name.strip(), "".join(parts).strip(), src.count("\n", 0, b) + 1))
        i = e + 1


def read_aicore_errors(tree: Path) -> list[dict[str, Any]]:
    """The rows of table ``rt-aicore-errorstr``: every text of the runtime's AI Core error-bit maps
    (``errorMapInfo_``, and the v200 chips' ``g_davidErrorMapInfo``), which it joins into the
    report's ``errorStr: …``, and its ``timeout or trap error.`` when no bit is set. ``tree`` holds
    one folder per commit of :data:`AICORE_MAPS` (its ``git archive``). A text several bits share is
    one row (its names joined), the first map's line; a text a newer commit has is not added again."""
    rows: list[dict[str, Any]] = []
    by_text: dict[str, dict[str, Any]] = {}
    for commit, maps in AICORE_MAPS.items():
        for source, path, start, prefix in maps:
            for name, text, line in _map_entries(_read(tree / commit / path), start):
                printed = text.rstrip(" .")
                if printed in by_text:
                    if by_text[printed]["source"] in {m[0] for m in maps}:
                        by_text[printed]["name"] += f", {prefix}{name}"
                    continue
                causes, reason = AICORE_CAUSES[_aicore_kind(text)]
                row = {
                    "key": prefix + name,
                    "name": prefix + name,
                    "printed": printed,
                    "meaning": f"AI Core error bit {name}: {text}",
                    "causes": list(causes),
                    "reason": reason,
                    "source": source,
                    "line": line,
                }
                by_text[printed] = row
                rows.append(row)
    source, path = AICORE_MAPS[RT_COMMIT][0][:2]
    src = _read(tree / RT_COMMIT / path)
    causes, reason = AICORE_CAUSES["timeout"]
    rows.append(
        {
            "key": "TIMEOUT_OR_TRAP",
            "name": "no error bit (errorString = timeout or trap error.)",
            "printed": "timeout or trap error",
            "meaning": "the AI Core reported an exception with no error bit set: the runtime prints"
            " 'timeout or trap error.' (ProcessStarsCoreErrorMapInfo)",
            "causes": list(causes),
            "reason": reason,
            "source": source,
            "line": src.count("\n", 0, src.rindex(AICORE_NO_BIT)) + 1,
        }
    )
    return rows


READERS = {
    "dcmi": read_dcmi,
    "fault-events": read_fault_events,
    "fault-diag": read_fault_diag,
    "fd-errors": read_fd_errors,
    "aicore-errors": read_aicore_errors,
}
TABLE_IDS = {
    "dcmi": "dcmi",
    "fault-events": "ascend-fault-events",
    "fault-diag": "ascend-fd-faults",
    "fd-errors": "ascend-fd-errors",
    "aicore-errors": "rt-aicore-errorstr",
}
MC_TREE = "https://github.com/Ascend/mind-cluster/blob/22bb3d987bc0208c3eb7395e222b661276133c58/"
# A table the file lacks yet: its header, forms and sources (written with its rows on --write).
NEW_TABLES: dict[str, dict[str, Any]] = {
    "ascend-fd-faults": {
        "header": {
            "title": "MindCluster FaultDiag's fault knowledge (its diagnosis report)",
            "component": "MindCluster ascend-fd (the fault-diagnosis report)",
        },
        "forms": [
            {
                "id": "fd-report-status-code",
                "anchor": "Status Code",
                "regex": r"Status Code {0,40}\| {0,4}([A-Za-z][A-Za-z0-9_.-]{1,59})",
                "source": "mc-faultdiag-report",
            },
            {
                "id": "fd-report-status-code-zh",
                "anchor": "状态码",
                "regex": r"状态码 {0,40}\| {0,4}([A-Za-z][A-Za-z0-9_.-]{1,59})",
                "source": "mc-faultdiag-report",
            },
        ],
        "sources": {
            "mc-faultdiag-report": {
                "title": "MindCluster ascend-fd's diagnosis report (wrapper/print_wrapper.py"
                " _format_fault_attr, labels of utils/i18n.py): each fault's row '| Suspected Root Cause"
                " Fault | Status Code | CODE |' ('疑似根因故障 | 状态码 | CODE' in Chinese)",
                "url": MC_TREE + "component/ascend-faultdiag/src/ascend_fd/wrapper/print_wrapper.py",
            }
        },
    },
    "ascend-fd-errors": {
        "header": {
            "title": "MindCluster FaultDiag's own errors",
            "component": "MindCluster ascend-fd (its parse and diag jobs)",
        },
        "forms": [
            {
                "id": "fd-error",
                "anchor": "{key}(",
                "regex": r"\b({key})\(5[0-9]{2}\): ",
                "each_row": True,
                "source": "mc-faultdiag-status",
            }
        ],
        "sources": {
            "mc-faultdiag-status": {
                "title": "MindCluster ascend-fd's error classes (utils/status.py: BaseError's __str__"
                " 'Name(code): description', PathError 501 … FileTooLarge 508), which the controller"
                " prints as 'The job %s failed. The error is: [%s].' (controller/controller.py)",
                "url": MC_TREE + "component/ascend-faultdiag/src/ascend_fd/utils/status.py",
            }
        },
    },
}


NEW_TABLES["rt-aicore-errorstr"] = {
    "header": {
        "title": "the CANN runtime's AI Core exception texts (errorStr of the report's extend info)",
        "component": "CANN runtime (AI Core / Vector Core exception)",
        "priority": -45,
    },
    "forms": [
        {
            "id": "rt-errorstr",
            "anchor": "{printed}",
            # the report joins the texts of every bit set after 'errorStr: ', each ending in '.'
            "regex": r"(?:errorStr: |\.)({printed})",
            "each_row": True,
            "source": "rt-aicore-report-extend",
        }
    ],
    "sources": {
        "rt-aicore-report-extend": {
            "title": "CANN runtime (hicann/runtime) device_error_core_proc.cc PrintCoreInfo: the AI Core"
            " exception report's extend info 'The extend info: errcode:(%#x, %#x, %#x) errorStr: %s"
            " fixp_error0 info: …', errorStr the texts of errorMapInfo_ of every error bit set, or"
            " 'timeout or trap error.' when none is (ProcessStarsCoreErrorMapInfo)",
            "url": RT_TREE + "src/runtime/core/src/device/device_error_core_proc.cc#L1201",
        },
        "rt-aicore-errmap": {
            "title": "CANN runtime (hicann/runtime) device_error_core_proc.cc:"
            " DeviceErrorProc::errorMapInfo_, the AI Core error bits' texts, and 'timeout or trap error.'"
            " for no bit",
            "url": RT_TREE + AICORE_MAPS[RT_COMMIT][0][1],
        },
        "rt-aicore-errmap-v200": {
            "title": "CANN runtime (hicann/runtime) v200_base/device_error_proc_c.cc: g_davidErrorMapInfo,"
            " the AI Core error bits' texts of the v200 (Ascend 950) chips",
            "url": RT_TREE + AICORE_MAPS[RT_COMMIT][1][1],
        },
        "rt-aicore-errmap-old": {
            "title": "CANN runtime (hicann/runtime, its first open-source tree 2026-01-27)"
            " device_error_proc.cc: DeviceErrorProc::errorMapInfo_, the AI Core error bits' texts before"
            " the 2026-05 rewording",
            "url": RT_OLD_TREE + AICORE_MAPS[RT_OLD_COMMIT][0][1],
        },
        "rt-aicore-errmap-v200-old": {
            "title": "CANN runtime (hicann/runtime, its first open-source tree 2026-01-27)"
            " v200_base/device_error_proc_c.cc: g_davidErrorMapInfo before the 2026-05 rewording",
            "url": RT_OLD_TREE + AICORE_MAPS[RT_OLD_COMMIT][1][1],
        },
    },
}


def main(argv: Sequence[str] | None = None) -> int:
    import yaml

    from cannenv.explain import libtables

    args = list(sys.argv[1:] if argv is None else argv)
    write = "--write" in args
    rest = [a for a in args if a != "--write"]
    if len(rest) != 3 or rest[0] != "--import" or rest[1] not in READERS:
        print(
            "usage: python -m cannenv.explain.hwtables"
            " --import {dcmi|fault-events|fault-diag|fd-errors|aicore-errors} TREE [--write]",
            file=sys.stderr,
        )
        return 2
    kind, tree = rest[1], Path(rest[2])
    table_file = libtables.shipped_path()
    raw = yaml.safe_load(table_file.read_text(encoding="utf-8"))
    table = next((t for t in raw["tables"] if t["id"] == TABLE_IDS[kind]), None)
    old = table["rows"] if table is not None else []
    new = READERS[kind](tree)
    d = libtables.diff_rows(old, new)
    if write:
        extra = NEW_TABLES.get(TABLE_IDS[kind], {}) if table is None else {}
        libtables.write_rows(table_file, TABLE_IDS[kind], new, **extra)
    print(
        f"# {TABLE_IDS[kind]}: {len(new)} rows from {tree} ({len(old)} in the table): "
        + ", ".join(f"{len(d[w])} {w}" for w in ("lacks", "changed", "gone"))
    )
    print(yaml.safe_dump(d, sort_keys=False, width=200, allow_unicode=True), end="")
    return 1 if any(d.values()) and not write else 0


if __name__ == "__main__":
    raise SystemExit(main())
