"""Per-node multi-node readiness (HCCL across servers): hccn.conf, device IPs, links, TLS, HCCL vars.

Sources (docs/multinode.md): hicann/hccl ``docs/zh/user_guide/cluster_info_config`` (device_ip is
``address_N`` of /etc/hccn.conf), ``docs/zh/user_guide/hccl_env`` (HCCL_CONNECT_TIMEOUT in
[120, 7200]; HCCL_NPU_SOCKET_PORT_RANGE ports, ranges or ``auto``; default port 16666), the fault
guide ``param_link_stage.md`` (EI0006 TLS mismatch, EI0019 port taken), and vllm-ascend's
multi-node checklist (link UP, net health Success, hccn.conf mounted into containers).

A host is judged for multi-node jobs only when asked (``doctor --multinode``); otherwise these
checks say ``skip (single node)``: a single-node host is never failed for lacking them.
"""

from __future__ import annotations

import ipaddress
import re

from cannenv.checks import Check, Target
from cannenv.facts import Facts, HccnDevice
from cannenv.report import Finding

SINGLE_NODE = "single node (judge multi-node readiness with --multinode)"
CONNECT_TIMEOUT_RANGE = (120, 7200)
"""hicann/hccl docs/zh/user_guide/hccl_env/HCCL_CONNECT_TIMEOUT.md: an integer in [120, 7200] s."""
_PORT_ITEM_RE = re.compile(r"^(\d{1,5})(?:-(\d{1,5}))?\Z")
MOUNT_REMEDY = "mount it into the container: `docker run ... -v /etc/hccn.conf:/etc/hccn.conf:ro`"


def _ids(devs: list[HccnDevice]) -> str:
    return ", ".join(str(d.phy_id) for d in devs)


def subnet_of(
    address: str | None, netmask: str | None
) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """The network of ``address``/``netmask`` (hccn.conf spelling), or None when either is not valid."""
    if not address or not netmask:
        return None
    try:
        return ipaddress.ip_interface(f"{address}/{netmask}").network
    except ValueError:
        return None


def valid_ip(text: str | None) -> bool:
    try:
        ipaddress.ip_address(text or "")
    except ValueError:
        return False
    return True


def port_range_problem(value: str) -> str | None:
    """Why an ``HCCL_NPU_SOCKET_PORT_RANGE`` value is not one the docs allow, or None."""
    if value.strip() == "auto":
        return None
    spans: list[tuple[int, int]] = []
    for item in value.split(","):
        m = _PORT_ITEM_RE.match(item.strip())
        if not m:
            return f"{item.strip()!r} is not a port, a range a-b, or auto"
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        if not 1 <= lo <= hi <= 65535:
            return f"{item.strip()!r} is outside [1, 65535] or reversed"
        if any(lo <= b and a <= hi for a, b in spans):
            return f"{item.strip()!r} overlaps another item"
        spans.append((lo, hi))
    return None


HCCL_VALUE_RULES = {
    "HCCL_CONNECT_TIMEOUT": "an integer in [120, 7200] (seconds)",
    "HCCL_NPU_SOCKET_PORT_RANGE": "ports or ranges a-b in [1, 65535] that do not overlap, or auto",
    "HCCL_IF_IP": "one IPv4 or IPv6 address",
    "HCCL_LOGIC_SUPERPOD_ID": "at most 127 characters",
}
"""What :func:`hccl_env_problems` accepts for each variable it judges, as a remedy says it."""


def hccl_env_problems(env: dict[str, str]) -> list[tuple[str, str]]:
    """(variable, why) for each HCCL variable whose value the vendor's docs do not allow."""
    out: list[tuple[str, str]] = []
    timeout = env.get("HCCL_CONNECT_TIMEOUT")
    if timeout is not None:
        lo, hi = CONNECT_TIMEOUT_RANGE
        if not timeout.strip().isdecimal() or not lo <= int(timeout) <= hi:
            out.append(("HCCL_CONNECT_TIMEOUT", f"{timeout!r} is not an integer in [{lo}, {hi}] (seconds)"))
    ports = env.get("HCCL_NPU_SOCKET_PORT_RANGE")
    if ports is not None:
        why = port_range_problem(ports)
        if why:
            out.append(("HCCL_NPU_SOCKET_PORT_RANGE", why))
    if_ip = env.get("HCCL_IF_IP")
    if if_ip is not None and not valid_ip(if_ip.strip()):
        out.append(("HCCL_IF_IP", f"{if_ip!r} is not one IPv4 or IPv6 address"))
    superpod = env.get("HCCL_LOGIC_SUPERPOD_ID")
    if superpod is not None and len(superpod) >= 128:
        out.append(("HCCL_LOGIC_SUPERPOD_ID", "longer than 127 characters"))
    return out


def _skip(check: Check, target: Target) -> list[Finding] | None:
    if not target.multinode:
        return [check.finding("skip", SINGLE_NODE)]
    return None


def _hccn_conf(facts: Facts, target: Target) -> list[Finding]:
    skipped = _skip(HCCN_CONF, target)
    if skipped is not None:
        return skipped
    mn = facts.multinode
    if mn.hccn_conf_path is None:
        if facts.container.in_container:
            return [
                HCCN_CONF.finding(
                    "fail",
                    "/etc/hccn.conf is not in this container: HCCL finds no device IP",
                    MOUNT_REMEDY,
                )
            ]
        return [
            HCCN_CONF.finding(
                "fail",
                "/etc/hccn.conf is missing: no device has a network address for HCCL",
                "set each device's address: `hccn_tool -i ID -ip -s address IP netmask MASK` "
                "(it writes /etc/hccn.conf)",
            )
        ]
    if not any(k.startswith("address_") for k in mn.hccn_conf):
        return [
            HCCN_CONF.finding(
                "fail",
                f"{mn.hccn_conf_path} holds no address_<id> line",
                "set each device's address: `hccn_tool -i ID -ip -s address IP netmask MASK`",
            )
        ]
    n = sum(1 for k in mn.hccn_conf if k.startswith("address_"))
    return [HCCN_CONF.finding("pass", f"{mn.hccn_conf_path}: {n} device address(es)")]


def _device_ip(facts: Facts, target: Target) -> list[Finding]:
    skipped = _skip(HCCN_DEVICE_IP, target)
    if skipped is not None:
        return skipped
    devs = list(facts.multinode.devices)
    if not devs:
        return [HCCN_DEVICE_IP.finding("skip", "no NPU device seen on this host")]
    out: list[Finding] = []
    no_conf = facts.multinode.hccn_conf_path is None  # hccn-conf fails: that is the cause
    no_addr = [d for d in devs if not d.address or not d.netmask]
    if no_addr and not no_conf:
        out.append(
            HCCN_DEVICE_IP.finding(
                "fail",
                f"device(s) {_ids(no_addr)} have no address_<id>/netmask_<id> in /etc/hccn.conf",
                "`hccn_tool -i ID -ip -s address IP netmask MASK` for each device named",
            )
        )
    bad = [d for d in devs if d.address and not valid_ip(d.address)]
    if bad:
        out.append(
            HCCN_DEVICE_IP.finding("fail", f"device(s) {_ids(bad)}: address_<id> is not an IP address")
        )
    unset = [d for d in devs if d.ip_missing]
    if unset:
        out.append(
            HCCN_DEVICE_IP.finding(
                "fail",
                f"hccn_tool reports no IP on device(s) {_ids(unset)} (`Get ipconf failed`)",
                "`hccn_tool -i ID -ip -s address IP netmask MASK` for each device named",
            )
        )
    differ = [d for d in devs if d.ip and valid_ip(d.ip) and d.address and d.ip != d.address]
    if differ:
        detail = "; ".join(f"device {d.phy_id}: hccn.conf {d.address}, hccn_tool {d.ip}" for d in differ)
        out.append(
            HCCN_DEVICE_IP.finding(
                "warn", f"hccn.conf and the device disagree: {detail}", "set the address again with hccn_tool"
            )
        )
    seen: dict[str, int] = {}
    dup = []
    for d in devs:
        if d.address:
            if d.address in seen:
                dup.append(f"{d.address} (devices {seen[d.address]} and {d.phy_id})")
            seen[d.address] = d.phy_id
    if dup:
        out.append(HCCN_DEVICE_IP.finding("fail", "the same address on two devices: " + ", ".join(dup)))
    if not out and no_conf:
        return [
            HCCN_DEVICE_IP.finding(
                "skip",
                "no /etc/hccn.conf to read device addresses from (see hccn-conf)",
                caused_by="hccn-conf",
            )
        ]
    return out or [HCCN_DEVICE_IP.finding("pass", f"{len(devs)} device(s), each with an address and netmask")]


def _link(facts: Facts, target: Target) -> list[Finding]:
    skipped = _skip(HCCN_LINK, target)
    if skipped is not None:
        return skipped
    mn = facts.multinode
    devs = [d for d in mn.devices if d.link is not None or d.net_health is not None]
    if not devs:
        return [HCCN_LINK.finding("skip", mn.hccn_note or "no hccn_tool output for any device")]
    down = [d for d in devs if d.link is not None and d.link.upper() != "UP"]
    sick = [d for d in devs if d.net_health is not None and d.net_health != "Success"]
    out = []
    if down:
        out.append(
            HCCN_LINK.finding(
                "fail",
                "link not UP on device(s) " + ", ".join(f"{d.phy_id} ({d.link})" for d in down),
                "check the cable/optics and switch port of each device named (`hccn_tool -i ID -link -g`)",
            )
        )
    if sick:
        out.append(
            HCCN_LINK.finding(
                "fail",
                "net health not Success on device(s) "
                + ", ".join(f"{d.phy_id} ({d.net_health})" for d in sick),
                "check netdetect_<id>/gateway_<id> are reachable (`hccn_tool -i ID -netdetect -g`); "
                "`hccn_tool -i ID -cfg recovery` after a link fault",
            )
        )
    return out or [HCCN_LINK.finding("pass", f"{len(devs)} device(s): link UP, net health Success")]


def _tls(facts: Facts, target: Target) -> list[Finding]:
    skipped = _skip(HCCN_TLS, target)
    if skipped is not None:
        return skipped
    values = {d.phy_id: d.tls if d.tls is not None else d.tls_conf for d in facts.multinode.devices}
    known = {k: v for k, v in values.items() if v is not None}
    if not known:
        return [HCCN_TLS.finding("skip", "no TLS setting known (hccn_tool -tls -g not captured)")]
    if len(set(known.values())) > 1:
        detail = ", ".join(f"device {k}: {v}" for k, v in sorted(known.items()))
        return [
            HCCN_TLS.finding(
                "fail",
                f"devices disagree on TLS ({detail}): links between them time out (EI0006)",
                "one setting on every device, e.g. `hccn_tool -i ID -tls -s enable 0`",
            )
        ]
    return [HCCN_TLS.finding("pass", f"TLS switch {next(iter(known.values()))} on {len(known)} device(s)")]


def _hccl_env(facts: Facts, target: Target) -> list[Finding]:
    skipped = _skip(HCCL_ENV, target)
    if skipped is not None:
        return skipped
    env = facts.env.vars
    out = [
        HCCL_ENV.finding(
            "fail",
            f"{name}: {why}",
            f"set {name} to {HCCL_VALUE_RULES.get(name, 'a value the vendor allows')}, or unset it",
            subject=name,
        )
        for name, why in hccl_env_problems(env)
    ]
    if facts.multinode.port_16666 == "in-use" and "HCCL_NPU_SOCKET_PORT_RANGE" not in env:
        out.append(
            HCCL_ENV.finding(
                "warn",
                "port 16666 (HCCL's default NPU port) is already in use: a second HCCL process fails "
                "with EI0019",
                "export HCCL_NPU_SOCKET_PORT_RANGE=auto (or a free range), or stop the process on 16666",
                subject="port 16666",
            )
        )
    return out or [HCCL_ENV.finding("pass", "HCCL variables within their documented ranges")]


HCCN_CONF = Check(
    "hccn-conf",
    "/etc/hccn.conf present (mounted in containers)",
    "HCCL takes each device's IP from /etc/hccn.conf (address_<id>); without it, or in a container "
    "that does not mount it, multi-node links cannot be set up.",
    "high",
    _hccn_conf,
    scope="device",
)
HCCN_DEVICE_IP = Check(
    "hccn-device-ip",
    "every device has an address and netmask",
    "A rank table's device_ip is address_<id> of hccn.conf; a device without one (or one hccn_tool "
    "reports as `Get ipconf failed`) cannot join a multi-node job.",
    "high",
    _device_ip,
    scope="device",
)
HCCN_LINK = Check(
    "hccn-link",
    "device links UP and net health Success",
    "A device whose link is down or whose net health is not Success makes HCCL link setup time out (EI0006).",
    "high",
    _link,
    scope="device",
)
HCCN_TLS = Check(
    "hccn-tls",
    "one TLS setting on every device",
    "HCCL links between devices with different TLS switches time out (EI0006, hicann/hccl "
    "param_link_stage.md).",
    "medium",
    _tls,
    scope="device",
)
HCCL_ENV = Check(
    "hccl-env",
    "HCCL variables sane, port 16666 free",
    "Out-of-range HCCL variables are refused at init; a taken port 16666 fails with EI0019.",
    "medium",
    _hccl_env,
)

CHECKS: tuple[Check, ...] = (HCCN_CONF, HCCN_DEVICE_IP, HCCN_LINK, HCCN_TLS, HCCL_ENV)
