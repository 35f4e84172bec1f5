"""HCCL rank tables: write the version a job's chips need from collected facts, and check a given one.

Formats (hicann/hccl ``docs/zh/user_guide/cluster_info_config/``; docs/multinode.md):

* **v1.0** (``rank_table_config_a2.md``, ``_910.md``, ``_300i_duo.md``): ``server_list`` of servers with
  ``device`` lists; every value a string; ``device_ip`` is ``address_<device_id>`` of hccn.conf and
  is required for more than one server; rank ids from 0, unique, one contiguous block per server in
  server order (not interleaved across servers);
* **v1.2** (``rank_table_config_a3.md``, SuperPoD mode): v1.0 plus ``super_device_id`` (the SDID of
  ``npu-smi info -t spod-info``) per device and ``super_pod_list``; the servers of one SuperPoD listed
  together; each die is a rank;
* **v2.0** (``rank_table_config_a5.md``, Ascend 950): ``rank_count`` and ``rank_list`` with
  ``level_list`` (``net_layer`` 0 is ``TOPO_FILE_DESC``), integers, used with the factory topology
  file in ``/usr/local/Ascend/driver/topo/``.

Pure: facts and parsed JSON in, a table or findings out.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from cannenv.checks import Check, Target
from cannenv.errors import InputError
from cannenv.facts import Facts
from cannenv.fleet.job import JobNode, sides
from cannenv.report import Finding, Severity

VERSION_BY_FAMILY = {"a2": "1.0", "910": "1.0", "310p": "1.0", "a3": "1.2", "950": "2.0"}
_DIGITS = re.compile(r"^\d{1,9}\Z")
_PORT = re.compile(r"^\d{1,2}/\d{1,3}\Z")
_EID = re.compile(r"^[0-9A-Fa-f]{32}\Z")


def table_version(nodes: Sequence[JobNode]) -> str:
    fams = {n.name: n.facts.devices.family for n in nodes}
    unknown = [name for name, f in fams.items() if f is None]
    if unknown:
        raise InputError(
            f"the chip family of {', '.join(unknown)} is unknown: a rank table's format follows the family",
            hint="collect facts with the devices visible (npu-smi)",
        )
    if len(set(fams.values())) > 1:
        raise InputError(
            f"the job's nodes are of several chip families ({sides(fams)}): a rank table is for one family",
            hint="name one job's nodes with --nodes (or --group)",
        )
    family = str(next(iter(fams.values())))
    if family not in VERSION_BY_FAMILY:
        raise InputError(f"no rank table format is documented for family {family}")
    return VERSION_BY_FAMILY[family]


def _address(node: JobNode, phy: int) -> str:
    for d in node.facts.multinode.devices:
        if d.phy_id == phy and d.address:
            return d.address
    raise InputError(
        f"{node.name}: device {phy} has no address_{phy} in /etc/hccn.conf (rank table device_ip)",
        hint="set it with `hccn_tool -i ID -ip -s address IP netmask MASK` and collect the facts again",
    )


def _phys(node: JobNode) -> list[int]:
    ids = sorted(d.phy_id for d in node.facts.multinode.devices)
    if not ids:
        raise InputError(f"{node.name}: no NPU device in its facts", hint="collect them on the host itself")
    return ids


def generate(nodes: Sequence[JobNode], *, device_port: int | None = None) -> dict[str, Any]:
    """The rank table of ``nodes`` in the version their family needs (servers in name order; for
    v1.2 grouped by SuperPoD; devices in physical-id order; rank ids contiguous per server)."""
    if len(nodes) < 1:
        raise InputError("no node to write a rank table for")
    version = table_version(nodes)
    for n in nodes:
        if len(n.name) > 64:
            raise InputError(f"node name {n.name[:64]!r}… is longer than 64 characters (server_id)")
    if version == "2.0":
        return _generate_v2(sorted(nodes, key=lambda n: n.name), device_port)
    order = sorted(nodes, key=lambda n: n.name)
    pods: dict[str, str] = {}
    if version == "1.2":
        for n in order:
            ids = {d.super_pod_id for d in n.facts.multinode.devices}
            if len(ids) != 1 or None in ids:
                raise InputError(
                    f"{n.name}: SuperPoD id {sorted(str(i) for i in ids)}: one server needs one SuperPoD "
                    "(`npu-smi info -t spod-info`)",
                    hint="`cannenv fleet job` names the die in another SuperPoD",
                )
            pods[n.name] = str(next(iter(ids)))
        order.sort(key=lambda n: (_natural_key(pods[n.name]), n.name))
    servers = []
    rank = 0
    for n in order:
        devices = []
        for phy in _phys(n):
            dev: dict[str, str] = {"device_id": str(phy), "device_ip": _address(n, phy)}
            if device_port is not None:
                dev["device_port"] = str(device_port)
            if version == "1.2":
                sdid = next((d.sdid for d in n.facts.multinode.devices if d.phy_id == phy), None)
                if sdid is None:
                    raise InputError(f"{n.name}: device {phy} has no SDID (`npu-smi info -t spod-info`)")
                dev["super_device_id"] = sdid
            dev["rank_id"] = str(rank)
            rank += 1
            devices.append(dev)
        servers.append({"server_id": n.name, "device": devices})
    table: dict[str, Any] = {
        "status": "completed",
        "version": version,
        "server_count": str(len(servers)),
        "server_list": servers,
    }
    if version == "1.2":
        plist: dict[str, list[dict[str, str]]] = {}
        for n in order:
            plist.setdefault(pods[n.name], []).append({"server_id": n.name})
        table["super_pod_list"] = [{"super_pod_id": p, "server_list": s} for p, s in plist.items()]
    return table


def _natural_key(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdecimal() else (1 << 62, text)


def _generate_v2(nodes: Sequence[JobNode], device_port: int | None) -> dict[str, Any]:
    ranks: list[dict[str, Any]] = []
    for n in nodes:
        mn = n.facts.multinode
        if not mn.topo_files:
            raise InputError(
                f"{n.name}: no topology file in /usr/local/Ascend/driver/topo/ (a v2.0 rank table is "
                "used with it)",
                hint="the file is installed with the driver at the factory; mount it into containers",
            )
        for phy in _phys(n):
            addr = _address(n, phy)
            kind = "IPV6" if ":" in addr else "IPV4"
            levels = []
            for layer in sorted({int(k.split(":")[0]) for k in mn.topo_ports if k.endswith(f":{phy}")}):
                ports = list(mn.topo_ports[f"{layer}:{phy}"])
                levels.append(
                    {
                        "net_layer": layer,
                        "net_instance_id": n.name if layer == 0 else "cluster",
                        "net_type": "TOPO_FILE_DESC" if layer == 0 else "CLOS",
                        "net_attr": "",
                        "rank_addr_list": [{"addr_type": kind, "addr": addr, "ports": ports}],
                    }
                )
            if not levels or levels[0]["net_layer"] != 0:
                raise InputError(f"{n.name}: the topology file lists no net_layer 0 port of device {phy}")
            rank: dict[str, Any] = {"rank_id": len(ranks), "local_id": phy, "device_id": phy}
            if device_port is not None:
                rank["device_port"] = device_port
            rank["level_list"] = levels
            ranks.append(rank)
    return {"status": "completed", "version": "2.0", "rank_count": len(ranks), "rank_list": ranks}


# ------------------------------------------------------------------------------------- check


class _Found:
    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, check: Check, status: str, detail: str, remedy: str | None = None) -> None:
        self.items.append(check.finding(status, detail, remedy))  # type: ignore[arg-type]


def _is_str_int(v: Any) -> bool:
    return isinstance(v, str) and bool(_DIGITS.match(v))


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _port_ok(v: Any, *, as_str: bool) -> bool:
    if as_str:
        return _is_str_int(v) and 1 <= int(v) <= 65535
    return _is_int(v) and 1 <= v <= 65535


def check_table(doc: Any, nodes: Sequence[JobNode] = ()) -> list[Finding]:
    """Findings for a rank table: its documented schema, its rank numbering, and (with ``nodes``)
    its agreement with the facts of the job's nodes."""
    found = _Found()
    if not isinstance(doc, dict):
        found.add(SCHEMA, "fail", "a rank table is a JSON object")
        return found.items
    version = doc.get("version")
    if version is None and "group_list" in doc:
        found.add(
            SCHEMA,
            "warn",
            "a template-2 table (group_list, no version): kept by the vendor only for compatibility on "
            "Atlas training series (rank_table_config_910.md); not checked further",
            "write the recommended v1.0 form: `cannenv fleet ranktable FACTS_DIR --out FILE`",
        )
        for check in CHECKS[1:]:
            found.add(check, "skip", "a template-2 table is not checked")
        return found.items
    if version in ("1.0", "1.2"):
        _check_v1(doc, str(version), nodes, found)
    elif version == "2.0":
        _check_v2(doc, nodes, found)
    else:
        found.add(SCHEMA, "fail", f"version {version!r}: not 1.0, 1.2 or 2.0 (a string)")
        return found.items
    for check in CHECKS:
        if any(f.id == check.id for f in found.items):
            continue
        if check is FACTS and not nodes:
            found.add(check, "skip", "no facts given (FACTS_DIR)")
        elif check is SUPERPOD and version != "1.2":
            found.add(check, "skip", f"a v{version} table has no SuperPoDs")
        elif check is TOPO and version != "2.0":
            found.add(check, "skip", f"a v{version} table needs no topology file")
        else:
            found.add(check, "pass", _passed(check, doc, str(version), len(nodes)))
    return found.items


def _passed(check: Check, doc: dict[str, Any], version: str, n_nodes: int) -> str:
    """What a passing check found, with the table's counts (not the title again)."""
    servers = doc.get("server_list") if version != "2.0" else None
    if isinstance(servers, list):
        ranks = sum(
            len(s["device"]) for s in servers if isinstance(s, dict) and isinstance(s.get("device"), list)
        )
        where = f"{ranks} rank(s) on {len(servers)} server(s)"
    else:
        rank_list = doc.get("rank_list")
        where = f"{len(rank_list) if isinstance(rank_list, list) else 0} rank(s)"
    pod_list = doc.get("super_pod_list")
    pods = len(pod_list) if isinstance(pod_list, list) else 0
    return {
        SCHEMA.id: f"v{version}: fields and value types as documented",
        RANKS.id: f"{where}, numbered in order",
        DEVICES.id: f"{where}, no device address twice",
        SUPERPOD.id: f"{pods} SuperPoD(s): each server in one, each SDID once",
        FACTS.id: f"servers, devices and addresses agree with the facts of {n_nodes} node(s)",
        TOPO.id: f"the topology file of each of {n_nodes} node(s) present",
    }[check.id]


def _check_v1(doc: dict[str, Any], version: str, nodes: Sequence[JobNode], found: _Found) -> None:
    bad: list[str] = []
    status = doc.get("status")
    if status != "completed":
        bad.append(f'status {status!r} (must be "completed" for HCCL to use the table)')
    servers = doc.get("server_list")
    if not isinstance(servers, list) or not servers:
        found.add(SCHEMA, "fail", "server_list must be a non-empty list")
        return
    count = doc.get("server_count")
    if count is None and version == "1.0":
        bad.append("server_count is required in v1.0")
    elif count is not None and (not _is_str_int(count) or int(count) != len(servers)):
        bad.append(f"server_count {count!r} is not the string {str(len(servers))!r} (servers listed)")
    ranks: list[tuple[int, str]] = []
    ips: dict[str, list[str]] = {}
    server_ids: list[str] = []
    sdids: dict[str, dict[str, str]] = {}
    for i, server in enumerate(servers):
        where = f"server_list[{i}]"
        if not isinstance(server, dict):
            bad.append(f"{where} is not an object")
            continue
        sid = server.get("server_id")
        if not isinstance(sid, str) or not 0 < len(sid) <= 64:
            bad.append(f"{where}.server_id must be a string of 1-64 characters")
            sid = f"#{i}"
        server_ids.append(sid)
        devices = server.get("device")
        if not isinstance(devices, list) or not devices:
            bad.append(f"{sid}: device must be a non-empty list")
            continue
        seen_dev: set[str] = set()
        for j, dev in enumerate(devices):
            dwhere = f"{sid}.device[{j}]"
            if not isinstance(dev, dict):
                bad.append(f"{dwhere} is not an object")
                continue
            for key in ("device_id", "rank_id"):
                if not _is_str_int(dev.get(key)):
                    bad.append(f"{dwhere}.{key} must be a string of digits, got {dev.get(key)!r}")
            for key in ("device_port", "backup_device_port", "host_port"):
                if key in dev and not _port_ok(dev[key], as_str=True):
                    bad.append(f"{dwhere}.{key} must be a port in [1, 65535] as a string, got {dev[key]!r}")
            if str(dev.get("device_id")) in seen_dev:  # any JSON value: a list is not hashable
                bad.append(f"{sid}: device_id {dev.get('device_id')} listed twice")
            seen_dev.add(str(dev.get("device_id")))
            ip = dev.get("device_ip")
            if ip is None:
                if len(servers) > 1:
                    bad.append(f"{dwhere}.device_ip is required with more than one server")
            elif not isinstance(ip, str) or not _valid_ip(ip):
                bad.append(f"{dwhere}.device_ip {ip!r} is not an IPv4/IPv6 address string")
            else:
                ips.setdefault(ip, []).append(f"{sid}:{dev.get('device_id')}")
            if _is_str_int(dev.get("rank_id")):
                ranks.append((int(dev["rank_id"]), sid))
            sd = dev.get("super_device_id")
            if sd is not None:
                if not _is_str_int(sd):
                    bad.append(f"{dwhere}.super_device_id must be a string of digits, got {sd!r}")
                elif version == "1.0":
                    bad.append(f"{dwhere}.super_device_id belongs to a v1.2 table")
                else:
                    sdids.setdefault(sid, {})[str(dev.get("device_id"))] = sd
    if len(set(server_ids)) != len(server_ids):
        bad.append("server_id values are not unique")
    if bad:
        found.add(
            SCHEMA, "fail", "; ".join(bad[:20]) + (f" (+{len(bad) - 20} more)" if len(bad) > 20 else "")
        )
    _check_ranks(ranks, server_ids, found)
    dup = {ip: w for ip, w in ips.items() if len(w) > 1}
    if dup:
        found.add(
            DEVICES,
            "fail",
            "device_ip used twice: " + "; ".join(f"{ip} on {', '.join(w)}" for ip, w in sorted(dup.items())),
            "each device_ip is its own device's address_<device_id> of hccn.conf",
        )
    if version == "1.2":
        _check_superpods(doc, server_ids, servers, sdids, found)
    elif "super_pod_list" in doc:
        found.add(SCHEMA, "fail", "super_pod_list belongs to a v1.2 table (A3 SuperPoD mode)")
    if nodes:
        _against_facts_v1(servers, version, nodes, found)


def _in_runs(seq: list[str]) -> bool:
    """Whether equal items stand together (``a a b b``, not ``a b a``), in one pass."""
    ended: set[str] = set()
    for prev, cur in itertools.pairwise(seq):
        if cur != prev:
            ended.add(prev)
            if cur in ended:
                return False
    return True


def _check_ranks(ranks: list[tuple[int, str]], order: list[str], found: _Found) -> None:
    if not ranks:
        return
    ids = [r for r, _ in ranks]
    problems = []
    if sorted(ids) != list(range(len(ids))):
        dup = sorted(r for r, c in Counter(ids).items() if c > 1)  # linear: a table may hold 150,000 ranks
        missing = sorted(set(range(len(ids))) - set(ids))
        problems.append(
            "rank ids are not 0..N-1 each once"
            + (f" (twice: {', '.join(map(str, dup))})" if dup else "")
            + (f" (missing: {', '.join(map(str, missing[:10]))})" if missing else "")
        )
    # not interleaved: each server's ranks one contiguous block, blocks ascending in server order
    blocks: dict[str, list[int]] = {}
    for r, sid in ranks:
        blocks.setdefault(sid, []).append(r)
    prev = -1
    for sid in dict.fromkeys(order):
        rs = sorted(blocks.get(sid, []))
        if not rs:
            continue
        if rs != list(range(rs[0], rs[0] + len(rs))) or rs[0] < prev:
            problems.append(
                f"{sid}'s rank ids {rs} interleave with another server's (one block per server, in order)"
            )
        prev = rs[-1]
    if problems:
        found.add(
            RANKS, "fail", "; ".join(problems), "number ranks from 0, server after server, devices in order"
        )


def _check_superpods(
    doc: dict[str, Any],
    server_ids: list[str],
    servers: list[Any],
    sdids: dict[str, dict[str, str]],
    found: _Found,
) -> None:
    pods = doc.get("super_pod_list")
    if pods is None:
        return  # AI Server mode: a v1.2 table may leave SuperPoDs out
    problems = []
    member: dict[str, str] = {}
    if not isinstance(pods, list) or not pods:
        found.add(SUPERPOD, "fail", "super_pod_list must be a non-empty list")
        return
    known = set(server_ids)  # membership in O(1): tables list thousands of servers
    for k, pod in enumerate(pods):
        if not isinstance(pod, dict) or not isinstance(pod.get("super_pod_id"), str):
            problems.append(f"super_pod_list[{k}].super_pod_id must be a string")
            continue
        plist = pod.get("server_list")
        if not isinstance(plist, list) or not plist:
            problems.append(f"SuperPoD {pod['super_pod_id']}: server_list must be a non-empty list")
            continue
        for entry in plist:
            sid = entry.get("server_id") if isinstance(entry, dict) else None
            if sid not in known:
                problems.append(
                    f"SuperPoD {pod['super_pod_id']} lists server {sid!r}, which server_list does not"
                )
            elif sid in member:
                problems.append(f"server {sid} is in SuperPoD {member[sid]} and {pod['super_pod_id']}")
            else:
                member[str(sid)] = pod["super_pod_id"]
    unplaced = [s for s in server_ids if s not in member]
    if unplaced:
        problems.append(f"servers in no SuperPoD: {', '.join(unplaced)}")
    seq = [member[s] for s in server_ids if s in member]
    if not _in_runs(seq):
        problems.append("the servers of one SuperPoD are not listed together in server_list")
    devices_of: dict[Any, list[Any]] = {}
    for sv in servers:
        if isinstance(sv, dict) and isinstance(sv.get("device", []), list):
            devices_of.setdefault(sv.get("server_id"), sv.get("device", []))
    for s in server_ids:
        listed: list[Any] = devices_of.get(s, [])
        if s in member and any(isinstance(d, dict) and "super_device_id" not in d for d in listed):
            problems.append(f"{s}: super_device_id is required on every device with super_pod_list")
    by_pod: dict[str, dict[str, str]] = {}
    for s, devs in sdids.items():
        for dev_id, sd in devs.items():
            pod = member.get(s, "?")
            where = f"{s}:{dev_id}"
            if sd in by_pod.setdefault(pod, {}):
                problems.append(f"SDID {sd} twice in SuperPoD {pod} ({by_pod[pod][sd]}, {where})")
            by_pod[pod][sd] = where
    if problems:
        found.add(
            SUPERPOD, "fail", "; ".join(problems[:20]), "SDIDs from `npu-smi info -t spod-info`, one per die"
        )


def _node_for(server_id: str, nodes: Sequence[JobNode]) -> JobNode | None:
    for n in nodes:
        if server_id in (n.name, n.facts.hostname):
            return n
    return None


def _against_facts_v1(servers: list[Any], version: str, nodes: Sequence[JobNode], found: _Found) -> None:
    problems = []
    matched: set[str] = set()
    for server in servers:
        if not isinstance(server, dict):
            continue
        sid = str(server.get("server_id"))
        node = _node_for(sid, nodes)
        if node is None:
            problems.append(f"server {sid}: no facts of a node by that name or hostname")
            continue
        matched.add(node.name)
        devs = {str(d.phy_id): d for d in node.facts.multinode.devices}
        for dev in server.get("device") or []:
            if not isinstance(dev, dict):
                continue
            did = str(dev.get("device_id"))
            have = devs.get(did)
            if have is None:
                problems.append(f"{sid}: device {did} is not a device of {node.name}")
                continue
            if dev.get("device_ip") is not None and dev.get("device_ip") != have.address:
                problems.append(
                    f"{sid}:{did} device_ip {dev.get('device_ip')} "
                    f"but hccn.conf address_{did}={have.address or 'none'}"
                )
            if (
                version == "1.2"
                and "super_device_id" in dev
                and have.sdid is not None
                and dev["super_device_id"] != have.sdid
            ):
                problems.append(f"{sid}:{did} super_device_id {dev['super_device_id']} but SDID {have.sdid}")
    extra = [n.name for n in nodes if n.name not in matched]
    if extra:
        problems.append(f"nodes of the job missing from the table: {', '.join(extra)}")
    if problems:
        found.add(
            FACTS,
            "fail",
            "; ".join(problems[:20]),
            "write the table from the facts: `cannenv fleet ranktable DIR --out FILE`",
        )


def _check_v2(doc: dict[str, Any], nodes: Sequence[JobNode], found: _Found) -> None:
    bad: list[str] = []
    if "status" in doc and doc["status"] != "completed":
        bad.append(f'status {doc["status"]!r} (must be "completed")')
    ranks = doc.get("rank_list")
    if not isinstance(ranks, list) or not ranks:
        found.add(SCHEMA, "fail", "rank_list must be a non-empty list")
        return
    count = doc.get("rank_count")
    if not _is_int(count) or count != len(ranks) or not 1 <= count <= 65536:
        bad.append(f"rank_count {count!r} is not the integer {len(ranks)} (ranks listed)")
    ids: list[tuple[int, str]] = []
    addrs: dict[str, list[str]] = {}
    for i, rank in enumerate(ranks):
        where = f"rank_list[{i}]"
        if not isinstance(rank, dict):
            bad.append(f"{where} is not an object")
            continue
        for key, hi in (("rank_id", 65535), ("local_id", 64), ("device_id", 64)):
            if not _is_int(rank.get(key)) or not 0 <= rank[key] <= hi:
                bad.append(f"{where}.{key} must be an integer in [0, {hi}], got {rank.get(key)!r}")
        for key in ("device_port", "host_port"):
            if key in rank and not _port_ok(rank[key], as_str=False):
                bad.append(f"{where}.{key} must be an integer port in [1, 65535], got {rank[key]!r}")
        if _is_int(rank.get("rank_id")):
            ids.append((rank["rank_id"], f"rank {rank['rank_id']}"))
        levels = rank.get("level_list")
        if not isinstance(levels, list) or not 0 < len(levels) <= 8:
            bad.append(f"{where}.level_list must hold 1-8 levels")
            continue
        layers: list[Any] = [lv.get("net_layer") if isinstance(lv, dict) else None for lv in levels]
        if (
            not all(_is_int(x) and 0 <= x <= 7 for x in layers)
            or layers != sorted(set(layers))
            or layers[0] != 0
        ):
            bad.append(f"{where}: net_layer values {layers} must be integers from 0, ascending, each once")
        for lv in levels:
            if not isinstance(lv, dict):
                continue
            lwhere = f"{where}.net_layer {lv.get('net_layer')}"
            nid = lv.get("net_instance_id")
            if not isinstance(nid, str) or not 0 < len(nid) <= 1024:
                bad.append(f"{lwhere}: net_instance_id must be a string of 1-1024 characters")
            ntype = lv.get("net_type")
            if lv.get("net_layer") == 0 and ntype != "TOPO_FILE_DESC":
                bad.append(f"{lwhere}: net_type must be TOPO_FILE_DESC at net_layer 0, got {ntype!r}")
            elif ntype not in ("TOPO_FILE_DESC", "CLOS"):
                bad.append(f"{lwhere}: net_type {ntype!r} is not CLOS or TOPO_FILE_DESC")
            addr_list = lv.get("rank_addr_list")
            if not isinstance(addr_list, list) or not 0 < len(addr_list) <= 24:
                bad.append(f"{lwhere}: rank_addr_list must hold 1-24 addresses")
                continue
            seen_ports: set[str] = set()
            for a in addr_list:
                if not isinstance(a, dict):
                    bad.append(f"{lwhere}: an address is not an object")
                    continue
                kind, addr, ports = a.get("addr_type"), a.get("addr"), a.get("ports")
                if kind not in ("EID", "IPV4", "IPV6"):
                    bad.append(f"{lwhere}: addr_type {kind!r} is not EID, IPV4 or IPV6")
                elif not isinstance(addr, str) or not _addr_ok(kind, addr):
                    bad.append(f"{lwhere}: addr {addr!r} is not an {kind} address")
                else:
                    addrs.setdefault(f"{lv.get('net_layer')}/{addr}", []).append(
                        f"rank {rank.get('rank_id')}"
                    )
                if (
                    not isinstance(ports, list)
                    or not 0 < len(ports) <= 16
                    or not all(isinstance(p, str) and (_PORT.match(p) or p == "d2h") for p in ports)
                ):
                    bad.append(f'{lwhere}: ports {ports!r} must be 1-16 "Die/port" strings')
                    continue
                for p in ports:
                    if p in seen_ports:
                        bad.append(f"{lwhere}: port {p} bound to two addresses")
                    seen_ports.add(p)
    if bad:
        found.add(
            SCHEMA, "fail", "; ".join(bad[:20]) + (f" (+{len(bad) - 20} more)" if len(bad) > 20 else "")
        )
    if ids and sorted(r for r, _ in ids) != list(range(len(ids))):
        found.add(RANKS, "fail", "rank ids are not 0..N-1 each once", "number ranks from 0")
    shared = {a: w for a, w in addrs.items() if len(w) > 1 and a.startswith("0/")}
    if shared:
        found.add(
            DEVICES,
            "fail",
            "one net_layer 0 address on two ranks: "
            + "; ".join(f"{a.split('/', 1)[1]} on {', '.join(w)}" for a, w in sorted(shared.items())),
        )
    if nodes:
        lacking = [n.name for n in nodes if not n.facts.multinode.topo_files]
        if lacking:
            found.add(
                TOPO,
                "fail",
                f"no topology file in /usr/local/Ascend/driver/topo/ on {', '.join(lacking)}",
                "install or mount the driver's topo folder",
            )
        mine = {d.address for n in nodes for d in n.facts.multinode.devices if d.address}
        foreign = sorted({a.split("/", 1)[1] for a in addrs if a.startswith("0/")} - mine)
        if mine and foreign:
            found.add(
                FACTS, "fail", f"net_layer 0 addresses not in the nodes' hccn.conf: {', '.join(foreign[:10])}"
            )
    else:
        found.add(
            TOPO,
            "skip",
            "no facts given: the topology file must be on every node (/usr/local/Ascend/driver/topo/)",
        )


def _valid_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _addr_ok(kind: str, addr: str) -> bool:
    if kind == "EID":
        return bool(_EID.match(addr))
    try:
        ip = ipaddress.ip_address(addr)
    except ValueError:
        return False
    return ip.version == (4 if kind == "IPV4" else 6)


def _check(cid: str, title: str, why: str, severity: Severity = "high") -> Check:
    def never(facts: Facts, target: Target) -> list[Finding]:
        return []

    return Check(cid, title, why, severity, never)


SCHEMA = _check(
    "ranktable-schema",
    "rank table as documented for its version",
    "HCCL refuses a table whose fields or value types differ from its version's format.",
    "critical",
)
RANKS = _check(
    "ranktable-ranks",
    "rank ids 0..N-1, one block per server",
    "Rank ids must be unique from 0 and not interleave across servers.",
)
DEVICES = _check(
    "ranktable-devices", "device IPs unique", "Two ranks on one device IP link to the wrong rank."
)
SUPERPOD = _check(
    "ranktable-superpod",
    "SuperPoDs and SDIDs coherent (v1.2)",
    "Each server in one SuperPoD, servers of a SuperPoD together, an SDID once per SuperPoD.",
)
FACTS = _check(
    "ranktable-facts",
    "table agrees with the nodes' facts",
    "device_ip must be the device's address_<id>, SDIDs the dies' own, every node of the job present.",
)
TOPO = _check(
    "ranktable-topo",
    "topology file present (v2.0)",
    "A v2.0 table is used with the factory topology file in /usr/local/Ascend/driver/topo/.",
)
CHECKS: tuple[Check, ...] = (SCHEMA, RANKS, DEVICES, SUPERPOD, FACTS, TOPO)
