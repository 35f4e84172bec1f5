"""Multi-node facts: ``/etc/hccn.conf``, ``hccn_tool`` per device, ``npu-smi info -t spod-info``,
HCCL's default port, the 950 topology files (research §5; docs/multinode.md).

``hccn_tool`` and ``npu-smi`` run only on the live host, through :meth:`cannenv.host.Host.run`
with the npu-smi timeout each; the first command that hangs stops the rest (a hung device tool
must not cost minutes per device). A tree is data: its values come from captured outputs
(``--hccn-output DIR`` or ``/var/lib/cannenv/hccn/<id>.txt`` in the tree), never from a run.

A capture file holds what the vendor's own checks print for one device, in any order::

    hccn_tool -i 0 -ip -g; hccn_tool -i 0 -link -g; hccn_tool -i 0 -net_health -g
    hccn_tool -i 0 -tls -g; npu-smi info -t spod-info -i 0 -c 0        # A3 only

Every read is bounded; values are kept only when they look like what the tools print.
"""

from __future__ import annotations

import re
from typing import Any

from cannenv.facts import DeviceFacts, HccnDevice, MultinodeFacts
from cannenv.probes._common import HccnCapture, ProbeContext, list_dir, read_bytes, read_text

HCCN_CONF = "/etc/hccn.conf"
HCCN_TOOL_PATHS = (
    "/usr/local/Ascend/driver/tools/hccn_tool",
    "/usr/local/bin/hccn_tool",
    "/usr/bin/hccn_tool",
)
CAPTURE_DIR = "/var/lib/cannenv/hccn"
"""Where a tree carries captured hccn_tool outputs, one ``<phy id>.txt`` per device."""
TOPO_DIR = "/usr/local/Ascend/driver/topo"
MAX_CONF_BYTES = 256 << 10
MAX_CONF_KEYS = 4096
MAX_OUTPUT = 256 << 10
"""hccn_tool prints a few lines per query; more is not its output."""
MAX_DEVICES = 128
HCCL_PORT = 16666
_KEY_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}\Z")
_VALUE_RE = re.compile(r"^[A-Za-z0-9.:_/,\-]{0,128}\Z")
_CONF_ID_RE = re.compile(r"^(?P<item>[a-z_]+?)_(?P<id>\d{1,3})\Z")
CAPTURE_NAME_RE = re.compile(r"^(?:hccn[-_])?(?P<id>\d{1,3})\.txt\Z")
_TOKEN = r"([A-Za-z0-9.:_\-]{1,64})"
# Each is tried on one line at a time (never on the whole capture under re.M, where a leading \s*
# runs across every following blank line: quadratic in a hostile capture). ``True``: the line,
# left-stripped, must start with it; ``False``: anywhere in the line.
_PATTERNS: tuple[tuple[str, bool, re.Pattern[str]], ...] = (
    ("ip", True, re.compile(r"ipaddr\s*:\s*" + _TOKEN)),
    ("ip_netmask", True, re.compile(r"netmask\s*:\s*" + _TOKEN)),
    ("link", False, re.compile(r"link status\s*:\s*" + _TOKEN, re.I)),
    ("net_health", False, re.compile(r"net health status\s*:\s*([A-Za-z][A-Za-z ]{0,30}[A-Za-z])", re.I)),
    ("tls", False, re.compile(r"tls switch\s*\[\s*(\d)\s*\]", re.I)),
    ("sdid", True, re.compile(r"SDID\s*:\s*" + _TOKEN)),
    ("super_pod_id", True, re.compile(r"Super Pod ID\s*:\s*" + _TOKEN)),
    ("super_pod_size", True, re.compile(r"Super Pod Size\s*:\s*" + _TOKEN)),
    ("server_index", True, re.compile(r"Server Index\s*:\s*" + _TOKEN)),
)
_NO_IP = "Get ipconf failed"


def parse_hccn_conf(text: str) -> dict[str, str]:
    """``key=value`` lines of hccn.conf (spaces around ``=`` allowed, ``#`` comments skipped).

    Keys and values that do not look like hccn_tool's are dropped, never kept raw: the file is
    read from hosts and may hold anything."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, val = line.partition("=")
        key, val = key.strip(), val.strip()
        if _KEY_RE.match(key) and _VALUE_RE.match(val):
            out[key] = val
        if len(out) >= MAX_CONF_KEYS:
            break
    return out


def parse_hccn_output(text: str) -> dict[str, Any]:
    """The values of one device's hccn_tool / spod-info outputs (see the module docstring)."""
    found: dict[str, Any] = {}
    for line in text.split("\n"):
        stripped = line.lstrip()
        for name, at_start, pattern in _PATTERNS:
            if name in found:
                continue
            m = pattern.match(stripped) if at_start else pattern.search(line)
            if m:
                found[name] = m.group(1).strip()
    if _NO_IP in text:
        found["ip_missing"] = True
    return found


def conf_devices(conf: dict[str, str]) -> dict[int, dict[str, str]]:
    """Per physical device id, its hccn.conf items (``address``, ``netmask``, ``tls_enable`` ...)."""
    out: dict[int, dict[str, str]] = {}
    for key, val in conf.items():
        m = _CONF_ID_RE.match(key)
        if m:
            out.setdefault(int(m.group("id")), {})[m.group("item")] = val
    return out


def listening_ports(text: str) -> set[int]:
    """Ports in LISTEN state (``0A``) of a ``/proc/net/tcp`` or ``tcp6`` table."""
    ports: set[int] = set()
    for line in text.splitlines()[1:]:
        cols = line.split()
        if len(cols) < 4 or cols[3] != "0A":
            continue
        _, _, port = cols[1].rpartition(":")
        try:
            ports.add(int(port, 16))
        except ValueError:
            continue
    return ports


def _device_ids(ctx: ProbeContext, devices: DeviceFacts | None, conf: dict[int, dict[str, str]]) -> list[int]:
    """Physical device ids: /dev/davinciN, else npu-smi's phy ids, else hccn.conf's, else captures."""
    ids: set[int] = set()
    for node in devices.dev_nodes if devices else ():
        m = re.match(r"^/dev/davinci(\d+)\Z", node)
        if m:
            ids.add(int(m.group(1)))
    if not ids and devices:
        ids = {c.phy_id for c in devices.chips if c.phy_id is not None}
        if not ids and len({c.npu_id for c in devices.chips}) == len(devices.chips):
            ids = {c.npu_id for c in devices.chips}
    if not ids:
        ids = set(conf)
    if not ids and ctx.hccn_capture is not None:
        ids = set(ctx.hccn_capture.outputs)
    return sorted(ids)[:MAX_DEVICES]


def _chip_of(devices: DeviceFacts | None, phy: int) -> tuple[int, int]:
    """(npu id, chip id) of a physical device id for ``npu-smi info -t spod-info -i N -c C``."""
    for chip in devices.chips if devices else ():
        if chip.phy_id == phy:
            return chip.npu_id, chip.chip_id
    return phy, 0


def find_hccn_tool(ctx: ProbeContext) -> str | None:
    found = ctx.host.which("hccn_tool")
    if found is not None:
        return found
    for p in HCCN_TOOL_PATHS:
        if ctx.host.is_file(p):
            return p
    return None


def _tree_capture(ctx: ProbeContext) -> HccnCapture | None:
    outputs: dict[int, str] = {}
    for name in list_dir(ctx, CAPTURE_DIR)[:MAX_DEVICES]:
        m = CAPTURE_NAME_RE.match(name)
        if not m:
            continue
        text = read_text(ctx, "multinode", f"{CAPTURE_DIR}/{name}", max_bytes=MAX_OUTPUT)
        if text is not None:
            outputs[int(m.group("id"))] = text
    return HccnCapture(outputs=outputs, source=CAPTURE_DIR) if outputs else None


def _run_device(
    ctx: ProbeContext, tool: str, smi: str | None, phy: int, chip: tuple[int, int] | None
) -> tuple[str, list[str], bool]:
    """(joined output, errors, timed out) of the vendor's per-device queries on the live host."""
    texts: list[str] = []
    errors: list[str] = []
    argvs = [[tool, "-i", str(phy), item, "-g"] for item in ("-ip", "-link", "-net_health", "-tls")]
    if smi is not None and chip is not None:
        argvs.append([smi, "info", "-t", "spod-info", "-i", str(chip[0]), "-c", str(chip[1])])
    for argv in argvs:
        res = ctx.host.run(argv, timeout=ctx.npu_smi_timeout, max_output=MAX_OUTPUT)
        # hccn_tool prints "Get ipconf failed ..." and exits non-zero when no IP is set: keep it
        texts.append(res.stdout + "\n" + res.stderr)
        if res.timed_out:
            errors.append(res.describe())
            return "\n".join(texts), errors, True
        if not res.ok and _NO_IP not in res.stdout + res.stderr:
            errors.append(res.describe())
    return "\n".join(texts), errors, False


def probe(ctx: ProbeContext) -> dict[str, Any]:
    host = ctx.host
    facts: dict[str, Any] = {}
    conf: dict[str, str] = {}
    if host.exists(HCCN_CONF):
        data = read_bytes(ctx, "multinode", HCCN_CONF, max_bytes=MAX_CONF_BYTES, what="hccn.conf")
        facts["hccn_conf_path"] = HCCN_CONF
        if data is not None:
            conf = parse_hccn_conf(data.decode("utf-8", "replace"))
    facts["hccn_conf"] = conf
    by_id = conf_devices(conf)
    devices = ctx.results.get("devices")
    devices = devices if isinstance(devices, DeviceFacts) else None
    ids = _device_ids(ctx, devices, by_id)
    tool = find_hccn_tool(ctx)
    facts["hccn_tool_path"] = tool
    capture = ctx.hccn_capture
    if capture is None and not host.is_live:
        capture = _tree_capture(ctx)
    outputs: dict[int, tuple[str, list[str], str]] = {}
    if capture is not None:
        facts["hccn_source"] = "captured"
        facts["hccn_note"] = f"captured outputs read from {capture.source} (not run)"
        for phy, text in capture.outputs.items():
            outputs[phy] = (text, [], capture.source)
        ids = sorted(set(ids) | set(capture.outputs))[:MAX_DEVICES]
    elif not host.is_live:
        facts["hccn_note"] = (
            f"nothing in a --root tree is run: give captured hccn_tool outputs with --hccn-output DIR "
            f"or place them at {CAPTURE_DIR}/<id>.txt in the tree"
        )
    elif not ctx.multinode:
        facts["hccn_note"] = "hccn_tool not run (it runs per device only with --multinode)"
    elif tool is None:
        facts["hccn_note"] = (
            "hccn_tool not found (it ships with the driver in /usr/local/Ascend/driver/tools)"
        )
    elif ids:
        facts["hccn_source"] = "run"
        smi = devices.npu_smi_path if devices and devices.family == "a3" else None
        for phy in ids:
            text, errors, hung = _run_device(ctx, tool, smi, phy, _chip_of(devices, phy) if smi else None)
            outputs[phy] = (text, errors, "run")
            if hung:
                ctx.issue("multinode", "command-timeout", tool, errors[-1])
                facts["hccn_note"] = f"stopped after device {phy}: {errors[-1]}"
                break
    facts["devices"] = tuple(_device(phy, by_id.get(phy, {}), outputs.get(phy)) for phy in ids)
    facts["port_16666"], facts["port_source"] = _port_state(ctx)
    facts["topo_files"] = tuple(
        f"{TOPO_DIR}/{n}" for n in list_dir(ctx, TOPO_DIR)[:64] if n.endswith(".json")
    )
    facts["topo_ports"] = _topo_ports(ctx, facts["topo_files"])
    return {"multinode": MultinodeFacts(**facts)}


def _device(phy: int, conf: dict[str, str], output: tuple[str, list[str], str] | None) -> HccnDevice:
    values: dict[str, Any] = {}
    source = ""
    errors: tuple[str, ...] = ()
    if output is not None:
        text, errs, source = output
        values = parse_hccn_output(text)
        errors = tuple(errs)
    return HccnDevice(
        phy_id=phy,
        address=conf.get("address"),
        netmask=conf.get("netmask"),
        gateway=conf.get("gateway"),
        netdetect=conf.get("netdetect"),
        tls_conf=conf.get("tls_enable"),
        source=source,
        errors=errors,
        **values,
    )


def _port_state(ctx: ProbeContext) -> tuple[str, str]:
    """Whether something listens on HCCL's default port 16666 (from /proc/net/tcp{,6})."""
    seen = 0
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            data = ctx.host.read_bytes(path, 16 << 20)
        except FileNotFoundError:
            continue  # no IPv6 (or no /proc in a tree): the other table decides
        except (OSError, ValueError):
            return "unknown", f"{path} could not be read whole"  # never "free" from half the tables
        seen += 1
        if HCCL_PORT in listening_ports(data.decode("ascii", "replace")):
            return "in-use", path
    return ("free", "/proc/net/tcp, /proc/net/tcp6") if seen else ("unknown", "")


_PORT_RE = re.compile(r"^\d{1,2}/\d{1,3}\Z")
MAX_TOPO_BYTES = 8 << 20


def topo_ports(doc: Any) -> dict[str, tuple[str, ...]]:
    """``<net_layer>:<local_id>`` -> ports, from a topology file's ``edge_list`` (rank_table_config_a5.md).
    Anything not shaped as documented is left out."""
    out: dict[str, list[str]] = {}
    edges = doc.get("edge_list") if isinstance(doc, dict) else None
    for edge in edges if isinstance(edges, list) else []:
        if not isinstance(edge, dict) or not isinstance(edge.get("net_layer"), int):
            continue
        for end in ("a", "b"):
            local, ports = edge.get(f"local_{end}"), edge.get(f"local_{end}_ports")
            if isinstance(local, int) and not isinstance(local, bool) and isinstance(ports, list):
                have = out.setdefault(f"{edge['net_layer']}:{local}", [])
                have += [p for p in ports if isinstance(p, str) and _PORT_RE.match(p) and p not in have]
    return {k: tuple(v[:16]) for k, v in out.items() if v}


def _topo_ports(ctx: ProbeContext, files: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    import json

    merged: dict[str, tuple[str, ...]] = {}
    for path in files[:8]:
        text = read_text(ctx, "multinode", path, max_bytes=MAX_TOPO_BYTES)
        if text is None:
            continue
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            ctx.issue("multinode", "malformed", path, f"{path} is not JSON")
            continue
        merged.update(topo_ports(doc))
    return merged
