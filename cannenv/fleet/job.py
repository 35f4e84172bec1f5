"""A job's nodes judged as one: what HCCL needs to be the same (or different) on every rank.

``cannenv fleet job FACTS_DIR [--nodes a,b | --group NAME]`` reads the facts of a job's nodes and
makes findings with stable ids (``job-*``), each naming the nodes on every side of a difference and
one value to converge on (the value most nodes hold; on a tie the newest). Sources (docs/multinode.md):

* EI0005: HCCL exchanges the CANN version between ranks at link setup and refuses a difference
  (hicann/hccl ``docs/zh/user_guide/fault_diagnosis/param_link_stage.md``); the framework and
  libraries beside it (ops, NNAL, torch, torch_npu, HDK) are held to the same rule;
* EI0006: TLS switch differing between ends, unreachable device IPs, A3 ranks of different
  SuperPoDs in one logical SuperPoD; device IPs must be unique (``rank_table_config_*.md``);
* ``cluster_info_verify_fail.md``: two devices with one superDeviceId (SDID) in a SuperPoD.

Pure: facts in, findings out; the command renders them like the doctor (table, JSON, JUnit).
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cannenv.checks import Check, Target
from cannenv.checks.multinode import (
    HCCL_VALUE_RULES,
    MOUNT_REMEDY,
    hccl_env_problems,
    subnet_of,
    valid_ip,
)
from cannenv.facts import Facts
from cannenv.report import Finding, Severity

if TYPE_CHECKING:
    from cannenv.fleet.report import JobResult

SAME_HCCL_VARS = (
    "HCCL_CONNECT_TIMEOUT",
    "HCCL_EXEC_TIMEOUT",
    "HCCL_BUFFSIZE",
    "HCCL_ALGO",
    "HCCL_DETERMINISTIC",
    "HCCL_INTRA_ROCE_ENABLE",
    "HCCL_INTRA_PCIE_ENABLE",
    "HCCL_OP_EXPANSION_MODE",
    "HCCL_SOCKET_FAMILY",
    "HCCL_WHITELIST_DISABLE",
    "HCCL_OP_RETRY_ENABLE",
)
"""HCCL variables every rank of a job must hold alike (hicann/hccl docs/zh/user_guide/hccl_env:
timeouts, buffer size, algorithm, determinism, paths, socket family; ranks that disagree wait on
each other or refuse the operator's parameters). HCCL_IF_IP, HCCL_SOCKET_IFNAME and
HCCL_LOGIC_SUPERPOD_ID are per node by design."""


@dataclass(frozen=True)
class JobNode:
    name: str
    facts: Facts


def _natural(text: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdecimal() else (-1, p.lower()) for p in re.split(r"(\d+)", text) if p)


def converge_on(values: Mapping[str, str | None]) -> str | None:
    """The value most nodes hold (None counts as missing); on a tie the newest-looking one."""
    counts = Counter(v for v in values.values() if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    return max((v for v, c in counts.items() if c == top), key=_natural)


def sides(values: Mapping[str, str | None]) -> str:
    by: dict[str, list[str]] = {}
    for node, v in values.items():
        by.setdefault(v if v is not None else "none", []).append(node)
    return "; ".join(
        f"{v} on {', '.join(nodes)}" for v, nodes in sorted(by.items(), key=lambda kv: -len(kv[1]))
    )


# ------------------------------------------------------------------------------- versions


def _active(facts: Facts) -> tuple[str | None, str | None]:
    inst = facts.cann.active_install()
    if inst is None:
        return None, None
    ops = ", ".join(sorted(f"{'/'.join(o.chips) or '?'} {o.version or '?'}" for o in inst.ops)) or None
    return inst.version, ops


def _versions(facts: Facts) -> dict[str, str | None]:
    cann, ops = _active(facts)
    nnal = facts.cann.nnal
    hdk = None
    if facts.driver is not None or facts.firmware is not None:
        drv = facts.driver.version if facts.driver else None
        fw = facts.firmware.version if facts.firmware else None
        hdk = f"driver {drv or '?'}, firmware {fw or '?'}"
    return {
        "cann": cann,
        "ops": ops,
        "nnal": nnal.version if nnal else None,
        "hdk": hdk,
        "torch": facts.python.packages.get("torch"),
        "torch-npu": facts.python.packages.get("torch-npu"),
    }


_COMPONENTS: tuple[tuple[str, str, Severity, str], ...] = (
    ("cann", "CANN", "critical", "HCCL exchanges the CANN version at link setup and fails with EI0005"),
    ("ops", "ops/kernels", "high", "operators differ between ranks"),
    ("nnal", "NNAL", "high", "ATB operators differ between ranks"),
    ("hdk", "HDK (driver, firmware)", "high", "the driver's HCCL transport differs between ranks"),
    ("torch", "torch", "high", "collective arguments are built by different torch releases"),
    ("torch-npu", "torch_npu", "high", "collective arguments are built by different torch_npu releases"),
)


_PER_CHIP = frozenset({"ops", "hdk"})
"""Components whose packages are per chip family (910b/a3/310p ops, each family's HDK): never
converged from one family onto another."""


def _version_checks(nodes: Sequence[JobNode]) -> tuple[list[Finding], dict[str, list[str]]]:
    """A finding per component and, per node, the changes that converge it (the job's one plan)."""
    table = {n.name: _versions(n.facts) for n in nodes}
    mixed = len({n.facts.devices.family for n in nodes if n.facts.devices.family}) > 1
    findings: list[Finding] = []
    plan: dict[str, list[str]] = {}
    for key, label, severity, why in _COMPONENTS:
        check = _VERSION_CHECKS[key]
        values = {name: v[key] for name, v in table.items()}
        if all(v is None for v in values.values()):
            findings.append(check.finding("skip", f"no node has {label}"))
            continue
        if len(set(values.values())) == 1:
            findings.append(check.finding("pass", f"{label} {next(iter(values.values()))} on every node"))
            continue
        if mixed and key in _PER_CHIP:
            findings.append(
                check.finding(
                    "fail",
                    f"{label} differs across the job ({why}): {sides(values)}",
                    f"{label} is per chip family: run the job on one family first (job-family), "
                    "then converge its nodes",
                    subject=label,
                )
            )
            continue
        want = converge_on(values)
        off = [n for n, v in values.items() if v != want]
        for n in off:
            plan.setdefault(n, []).append(f"{label} {values[n] or 'none'} -> {want}")
        findings.append(
            Finding(
                id=check.id,
                status="fail",
                severity=severity,
                title=check.title,
                detail=f"{label} differs across the job ({why}): {sides(values)}",
                remedy=f"converge on {label} {want} (held by {', '.join(n for n in values if n not in off)}):"
                " "
                f"change {', '.join(off)}",
                subject=label,
            )
        )
    return findings, plan


# ------------------------------------------------------------------------------- network


def _hccn_conf(nodes: Sequence[JobNode]) -> list[Finding]:
    missing = [n for n in nodes if n.facts.multinode.hccn_conf_path is None]
    if not missing:
        return [JOB_HCCN_CONF.finding("pass", f"/etc/hccn.conf on all {len(nodes)} nodes")]
    out = []
    boxed = [n.name for n in missing if n.facts.container.in_container]
    bare = [n.name for n in missing if not n.facts.container.in_container]
    if boxed:
        out.append(
            JOB_HCCN_CONF.finding(
                "fail",
                f"container(s) without /etc/hccn.conf: {', '.join(boxed)}",
                MOUNT_REMEDY,
                subject="container",
            )
        )
    if bare:
        out.append(
            JOB_HCCN_CONF.finding(
                "fail",
                f"no /etc/hccn.conf on {', '.join(bare)}",
                "set each device's address there: `hccn_tool -i ID -ip -s address IP netmask MASK`",
            )
        )
    return out


def _device_ips(nodes: Sequence[JobNode]) -> list[Finding]:
    seen: dict[str, list[str]] = {}
    no_addr: list[str] = []
    bad_subnet: list[str] = []
    count = 0
    for n in nodes:
        for d in n.facts.multinode.devices:
            where = f"{n.name}:{d.phy_id}"
            if not d.address or not valid_ip(d.address):
                if n.facts.multinode.hccn_conf_path is not None:  # else job-hccn-conf names the node
                    no_addr.append(where)
                continue
            count += 1
            seen.setdefault(d.address, []).append(where)
            if subnet_of(d.address, d.netmask) is None:
                bad_subnet.append(f"{where} ({d.address}/{d.netmask or 'no netmask'})")
            elif d.ip and valid_ip(d.ip) and d.ip != d.address:
                bad_subnet.append(f"{where} (hccn.conf {d.address}, device {d.ip})")
    out = []
    dups = {ip: w for ip, w in seen.items() if len(w) > 1}
    if dups:
        out.append(
            JOB_DEVICE_IP.finding(
                "fail",
                "device IP used twice in the job (links to it go to the wrong rank): "
                + "; ".join(f"{ip} on {', '.join(w)}" for ip, w in sorted(dups.items())),
                "give each device its own address: `hccn_tool -i ID -ip -s address IP netmask MASK` on "
                + ", ".join(sorted({w.split(":")[0] for ws in dups.values() for w in ws[1:]})),
                subject="duplicate",
            )
        )
    if no_addr:
        out.append(
            JOB_DEVICE_IP.finding(
                "fail",
                f"devices without an address in hccn.conf: {', '.join(no_addr)}",
                "`hccn_tool -i ID -ip -s address IP netmask MASK` on each device named",
                subject="missing",
            )
        )
    if bad_subnet:
        out.append(
            JOB_DEVICE_IP.finding(
                "fail",
                "device address not a valid address/netmask pair, or not what the device holds: "
                + ", ".join(bad_subnet),
                "set the address and netmask again with hccn_tool on each device named",
                subject="subnet",
            )
        )
    if not out and count == 0:
        return [JOB_DEVICE_IP.finding("skip", "no device address known on any node")]
    return out or [JOB_DEVICE_IP.finding("pass", f"{count} device IPs, unique, each with its netmask")]


def _gateways(nodes: Sequence[JobNode]) -> list[Finding]:
    outside: list[str] = []
    subnets: dict[str, list[str]] = {}
    no_gw: list[str] = []
    for n in nodes:
        for d in n.facts.multinode.devices:
            net = subnet_of(d.address, d.netmask)
            if net is None:
                continue
            where = f"{n.name}:{d.phy_id}"
            subnets.setdefault(str(net), []).append(where)
            for label, value in (("gateway", d.gateway), ("netdetect", d.netdetect)):
                if value is None:
                    continue
                try:
                    inside = ipaddress.ip_address(value) in net
                except ValueError:
                    inside = False
                if not inside:
                    outside.append(f"{where} {label} {value} not in {net}")
            if d.gateway is None:
                no_gw.append(where)
    out = []
    if outside:
        out.append(
            JOB_GATEWAY.finding(
                "fail",
                "; ".join(outside),
                "set gateway_<id>/netdetect_<id> inside each device's subnet: "
                "`hccn_tool -i ID -gateway -s gateway IP`, `hccn_tool -i ID -netdetect -s address IP`",
            )
        )
    if len(subnets) > 1 and no_gw:
        out.append(
            JOB_GATEWAY.finding(
                "warn",
                f"the job's device IPs span {len(subnets)} subnets ({', '.join(sorted(subnets))}) and "
                f"{', '.join(no_gw)} have no gateway: devices of other subnets are unreachable (EI0006)",
                "give those devices a gateway (`hccn_tool -i ID -gateway -s gateway IP`) or one subnet",
            )
        )
    if not subnets:
        return [JOB_GATEWAY.finding("skip", "no device address/netmask known on any node")]
    return out or [
        JOB_GATEWAY.finding("pass", f"{len(subnets)} subnet(s); gateways and netdetect inside them")
    ]


def _tls(nodes: Sequence[JobNode]) -> list[Finding]:
    per_node: dict[str, str | None] = {}
    for n in nodes:
        values = {d.tls if d.tls is not None else d.tls_conf for d in n.facts.multinode.devices} - {None}
        per_node[n.name] = "/".join(sorted(v for v in values if v is not None)) if values else None
    known = {k: v for k, v in per_node.items() if v is not None}
    if not known:
        return [JOB_TLS.finding("skip", "no TLS setting known on any node (hccn_tool -tls -g)")]
    if len(set(known.values())) == 1 and "/" not in next(iter(known.values())):
        return [JOB_TLS.finding("pass", f"TLS switch {next(iter(known.values()))} on every known device")]
    want = converge_on({k: v for k, v in known.items() if "/" not in v}) or "0"
    off = [n for n, v in known.items() if v != want]
    return [
        JOB_TLS.finding(
            "fail",
            f"TLS differs between ranks (links time out, EI0006): {sides(known)}",
            f"converge on TLS switch {want}: `hccn_tool -i ID -tls -s enable {want}` on every device of "
            f"{', '.join(off)}",
        )
    ]


def _superpod(nodes: Sequence[JobNode]) -> list[Finding]:
    pods: dict[str, dict[str, list[int]]] = {}  # node -> pod -> devices
    sdids: dict[tuple[str, str], list[str]] = {}
    for n in nodes:
        for d in n.facts.multinode.devices:
            if d.super_pod_id is None:
                continue
            pods.setdefault(n.name, {}).setdefault(d.super_pod_id, []).append(d.phy_id)
            if d.sdid is not None:
                sdids.setdefault((d.super_pod_id, d.sdid), []).append(f"{n.name}:{d.phy_id}")
    if not pods:
        return [JOB_SUPERPOD.finding("skip", "no SuperPoD facts (A3 only: npu-smi info -t spod-info)")]
    out = []
    for node, by_pod in sorted(pods.items()):
        if len(by_pod) > 1:
            main = max(by_pod, key=lambda p: len(by_pod[p]))
            odd = "; ".join(
                f"devices {', '.join(map(str, by_pod[p]))} in SuperPoD {p}" for p in by_pod if p != main
            )
            out.append(
                JOB_SUPERPOD.finding(
                    "fail",
                    f"{node}: dies in more than one SuperPoD ({odd}; the others in {main})",
                    f"check the SuperPoD configuration of {node} "
                    "(`npu-smi info -t spod-info -i ID -c CHIP`); "
                    "one server belongs to one SuperPoD",
                    subject=node,
                )
            )
    dup = {k: v for k, v in sdids.items() if len(v) > 1}
    if dup:
        out.append(
            JOB_SUPERPOD.finding(
                "fail",
                "one SDID twice in a SuperPoD (HCCL's rank table check refuses it): "
                + "; ".join(
                    f"SDID {s} of SuperPoD {p} on {', '.join(w)}" for (p, s), w in sorted(dup.items())
                ),
                "fix the hardware configuration, or do not put different physical SuperPoDs in one "
                "HCCL_LOGIC_SUPERPOD_ID",
                subject="sdid",
            )
        )
    node_pod = {node: max(bp, key=lambda p: len(bp[p])) for node, bp in pods.items()}
    if len(set(node_pod.values())) > 1:
        logical = {
            n.name: n.facts.env.vars.get("HCCL_LOGIC_SUPERPOD_ID") for n in nodes if n.name in node_pod
        }
        by_logical: dict[str, set[str]] = {}
        for node, lid in logical.items():
            if lid is not None:
                by_logical.setdefault(lid, set()).add(node_pod[node])
        mixed = {lid: p for lid, p in by_logical.items() if len(p) > 1}
        pod_sides = sides(dict(node_pod.items()))
        if mixed:
            out.append(
                JOB_SUPERPOD.finding(
                    "fail",
                    f"ranks of different physical SuperPoDs ({pod_sides}) in one HCCL_LOGIC_SUPERPOD_ID "
                    f"({', '.join(sorted(mixed))}): link setup times out (EI0006)",
                    "a logical SuperPoD may only split a physical one: give each physical SuperPoD its own "
                    "HCCL_LOGIC_SUPERPOD_ID, or place the job in one SuperPoD",
                    subject="logical",
                )
            )
        else:
            out.append(
                JOB_SUPERPOD.finding(
                    "warn",
                    f"the job spans SuperPoDs ({pod_sides}): it needs a v1.2 rank table listing each "
                    "(`cannenv fleet ranktable`), and traffic between them leaves the HCCS fabric",
                    "place the job in one SuperPoD, or use a rank table with super_pod_list",
                    subject="span",
                )
            )
    return out or [
        JOB_SUPERPOD.finding("pass", f"SuperPoD {next(iter(node_pod.values()))}: SDIDs unique on every node")
    ]


def _same_value(var: str, values: Mapping[str, str | None]) -> str:
    """The remedy for ranks that disagree on ``var``: the value most of them hold that the same rule
    that judges each value (:func:`cannenv.checks.multinode.hccl_env_problems`) accepts — never a
    value that rule calls invalid; unset everywhere when none is valid and some rank leaves it unset."""
    valid = {n: v for n, v in values.items() if v is not None and not hccl_env_problems({var: v})}
    want = converge_on(valid)
    if want is not None:
        return f"export {var}={want} on every node"
    if any(v is None for v in values.values()):
        return f"unset {var} everywhere (no rank holds a value the vendor allows)"
    rule = HCCL_VALUE_RULES.get(var, "a value the vendor allows")
    return f"export {var}=<{rule}> with one value on every node (no rank holds a valid one)"


def _hccl_env(nodes: Sequence[JobNode]) -> list[Finding]:
    out = []
    for var in SAME_HCCL_VARS:
        values = {n.name: n.facts.env.vars.get(var) for n in nodes}
        if len(set(values.values())) > 1:
            out.append(
                JOB_HCCL_ENV.finding(
                    "fail",
                    f"{var} differs between ranks: {sides(values)}",
                    _same_value(var, values),
                    subject=var,
                )
            )
    for n in nodes:
        for var, why in hccl_env_problems(n.facts.env.vars):
            out.append(
                JOB_HCCL_ENV.finding(
                    "fail",
                    f"{n.name}: {var}: {why}",
                    f"on {n.name}, set {var} to {HCCL_VALUE_RULES.get(var, 'a value the vendor allows')} "
                    "(the same value on every rank) or unset it",
                    subject=var,
                )
            )
    taken = [
        n.name
        for n in nodes
        if n.facts.multinode.port_16666 == "in-use" and "HCCL_NPU_SOCKET_PORT_RANGE" not in n.facts.env.vars
    ]
    if taken:
        out.append(
            JOB_HCCL_ENV.finding(
                "warn",
                f"port 16666 already in use on {', '.join(taken)} (EI0019 for the next HCCL process)",
                "export HCCL_NPU_SOCKET_PORT_RANGE=auto there, or stop what listens on 16666",
                subject="port 16666",
            )
        )
    return out or [JOB_HCCL_ENV.finding("pass", "HCCL variables equal where they must be, and sane")]


def _links(nodes: Sequence[JobNode]) -> list[Finding]:
    bad = []
    known = 0
    for n in nodes:
        for d in n.facts.multinode.devices:
            if d.link is None and d.net_health is None:
                continue
            known += 1
            if (d.link is not None and d.link.upper() != "UP") or (d.net_health not in (None, "Success")):
                bad.append(f"{n.name}:{d.phy_id} (link {d.link or '?'}, net health {d.net_health or '?'})")
    if not known:
        return [
            JOB_LINKS.finding("skip", "no hccn_tool link facts (collect with --multinode or --hccn-output)")
        ]
    if bad:
        return [
            JOB_LINKS.finding(
                "fail",
                f"devices not ready: {', '.join(bad)}",
                "check cabling/optics and the switch port of each; "
                "`hccn_tool -i ID -cfg recovery` after a fault",
            )
        ]
    return [JOB_LINKS.finding("pass", f"{known} device(s): link UP, net health Success")]


def _families(nodes: Sequence[JobNode]) -> list[Finding]:
    fams = {n.name: n.facts.devices.family for n in nodes}
    if len({f for f in fams.values() if f}) > 1:
        return [
            JOB_FAMILY.finding(
                "fail", f"one job across chip families: {sides(fams)}", "run a job on one family"
            )
        ]
    return [
        JOB_FAMILY.finding("pass", f"{len(nodes)} node(s), family {next(iter(fams.values())) or 'unknown'}")
    ]


def judge_job(nodes: Sequence[JobNode]) -> tuple[list[Finding], dict[str, list[str]]]:
    """Every job check on ``nodes``; with them, per node, the version changes that converge the job."""
    if len(nodes) < 2:
        one = JOB_FAMILY.finding(
            "warn", f"a job of {len(nodes)} node: nothing to compare", "name the job's nodes"
        )
        return [one], {}
    versions, plan = _version_checks(nodes)
    findings = _families(nodes) + versions
    for fn in (_hccn_conf, _device_ips, _gateways, _tls, _links, _superpod, _hccl_env):
        findings.extend(_safe(fn, nodes))
    return findings, plan


def _safe(fn: Callable[[Sequence[JobNode]], list[Finding]], nodes: Sequence[JobNode]) -> list[Finding]:
    try:
        return fn(nodes)
    except Exception as exc:  # a bug in one check is an error finding, never a traceback
        return [
            Finding(
                id="job-internal",
                status="error",
                severity="high",
                title="a job check failed",
                detail=f"{fn.__name__}: {type(exc).__name__}: {exc}",
                remedy="this is a bug in cannenv; rerun with --debug and report it",
            )
        ]


def _check(cid: str, title: str, why: str, severity: Severity = "high") -> Check:
    def never(facts: Facts, target: Target) -> list[Finding]:  # job checks judge many nodes at once
        return []

    return Check(cid, title, why, severity, never)


_VERSION_CHECKS = {
    key: _check(
        f"job-{key}",
        f"same {label} on every rank",
        f"{why.capitalize()} when {label} differs between the job's nodes.",
        severity,
    )
    for key, label, severity, why in _COMPONENTS
}
JOB_FAMILY = _check("job-family", "one chip family in the job", "HCCL does not link different chip families.")
JOB_HCCN_CONF = _check(
    "job-hccn-conf", "/etc/hccn.conf on every node (mounted in containers)", "HCCL finds device IPs there."
)
JOB_DEVICE_IP = _check(
    "job-device-ip",
    "device IPs unique and well-formed across the job",
    "A rank table's device_ip must be unique; a duplicate sends one rank's links to another.",
    "critical",
)
JOB_GATEWAY = _check(
    "job-gateway",
    "gateways and netdetect coherent with the device subnets",
    "A device whose gateway lies outside its subnet, or subnets without gateways, cannot reach peers "
    "(EI0006).",
    "medium",
)
JOB_TLS = _check(
    "job-tls", "one TLS setting across the job", "Links between different TLS switches time out (EI0006)."
)
JOB_LINKS = _check("job-links", "every device link UP and healthy", "A down link makes link setup time out.")
JOB_SUPERPOD = _check(
    "job-superpod",
    "A3 SuperPoD ids and SDIDs coherent",
    "Ranks of different physical SuperPoDs in one logical SuperPoD, or a duplicate SDID, fail link setup.",
)
JOB_HCCL_ENV = _check(
    "job-hccl-env",
    "HCCL variables equal across ranks and sane",
    "Ranks with different HCCL timeouts, buffers or algorithms wait on each other or refuse operators.",
    "medium",
)
JOB_COLLECT = _check(
    "job-collect",
    "facts collected from every node of the job",
    "A rank whose facts are missing cannot be compared; the job is not judged ready.",
)
JOB_CHECKS: tuple[Check, ...] = (
    JOB_COLLECT,
    JOB_FAMILY,
    *_VERSION_CHECKS.values(),
    JOB_HCCN_CONF,
    JOB_DEVICE_IP,
    JOB_GATEWAY,
    JOB_TLS,
    JOB_LINKS,
    JOB_SUPERPOD,
    JOB_HCCL_ENV,
)


# ------------------------------------------------------------------------------- loading


def select_nodes(
    directory: str, *, nodes: Sequence[str] = (), group: str | None = None, inventory: str | None = None
) -> tuple[list[JobNode], list[Finding]]:
    """The job's nodes from a collection folder (``fleet collect`` or ``facts --json`` files), and
    an error finding for each named node without facts (a job with a missing rank is not judged)."""
    from pathlib import Path

    from cannenv.errors import InputError, NotFoundError, did_you_mean
    from cannenv.fleet.collection import load_collection
    from cannenv.fleet.report import load_facts

    collection = load_collection(directory)
    known = [h.name for h in collection.hosts]
    if group is not None:
        if inventory is None:
            raise InputError("--group needs --inventory INVENTORY (the job's group is read from it)")
        from cannenv.fleet._doctor import inventory_groups

        members = [h for h, groups in inventory_groups(inventory).items() if group in groups]
        if not members:
            raise NotFoundError(f"no host of {inventory} is in group {group!r}")
        wanted = sorted(members)
    elif nodes:
        wanted = list(dict.fromkeys(nodes))
    else:
        wanted = known
    missing = [name for name in wanted if collection.host(name) is None]
    if missing:
        names = ", ".join(map(repr, missing))
        what = f"node {names} is" if len(missing) == 1 else f"nodes {names} are"
        raise NotFoundError(
            f"{what} not in {directory}",
            hint=" ".join(filter(None, (did_you_mean(missing[0], known), f"known: {', '.join(known)}"))),
        )
    out: list[JobNode] = []
    errors: list[Finding] = []
    for name in wanted:
        host = collection.host(name)
        assert host is not None  # missing ones were refused above
        if host.status != "collected" or host.facts_file is None:
            errors.append(
                JOB_COLLECT.finding("error", f"{name}: no facts ({host.status}: {host.reason})", subject=name)
            )
            continue
        try:
            out.append(JobNode(name, load_facts(Path(host.facts_file), root=collection.root)))
        except (InputError, OSError) as exc:
            message = exc.message if isinstance(exc, InputError) else str(exc)
            errors.append(JOB_COLLECT.finding("error", f"{name}: {message}", subject=name))
    return out, errors


def job_result(name: str, nodes: Sequence[JobNode], errors: Sequence[Finding] = ()) -> JobResult:
    """One job's verdict for the fleet report (``fleet report --job``)."""
    from cannenv.fleet.report import JobResult

    findings, plan = judge_job(nodes)
    shown = [f for f in [*errors, *findings] if f.status != "pass"]
    failing = tuple(dict.fromkeys(f.id for f in shown if f.status in ("fail", "error")))
    return JobResult(
        name=name,
        nodes=tuple([n.name for n in nodes] + [f.subject for f in errors if f.subject]),
        status="not-ready" if failing else "unchecked" if len(nodes) < 2 else "ready",
        failing=failing,
        findings=tuple(shown),
        converge=plan,
    )


def parse_job_spec(spec: str) -> tuple[str, list[str] | None]:
    """``NAME=a,b,c`` (the nodes named) or ``GROUP`` (an inventory group): (name, nodes or None)."""
    from cannenv.errors import InputError

    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}\Z", name):
        raise InputError(f"--job {spec!r}: a job name is letters, digits and ._- (NAME=a,b or GROUP)")
    if not sep:
        return name, None
    nodes = [n.strip() for n in rest.split(",") if n.strip()]
    if not nodes:
        raise InputError(f"--job {spec!r}: name the job's nodes after '='")
    return name, nodes
