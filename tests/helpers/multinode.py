"""Multi-node host trees for tests: /etc/hccn.conf and captured hccn_tool / spod-info outputs.

FIXTURE: the file formats are the real ones (tests/data/hccn/SOURCES.md: hccn.conf lines as
research §5.1 quotes them, hccn_tool and spod-info outputs as public guides show them); the
addresses, ids and settings are made up per test. Nothing here is run: a tree carries captures at
/var/lib/cannenv/hccn/<id>.txt, which the probe reads as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tests.helpers.hosts import HostTree, a2_cann83_old, a2_cann85_new, a3_cann83, driver_like_25_3

RANKTABLE_DATA = Path(__file__).resolve().parent.parent / "data" / "ranktable"

CAPTURE_DIR = "/var/lib/cannenv/hccn"


@dataclass(frozen=True)
class Dev:
    """One device's network settings as hccn.conf and hccn_tool would show them."""

    ip: str
    netmask: str = "255.255.255.0"
    gateway: str | None = None
    tls: str = "0"
    link: str = "UP"
    health: str = "Success"
    spod: tuple[str, str] | None = None
    """(Super Pod ID, SDID) for A3 dies."""


@dataclass
class NodeSpec:
    name: str
    devices: Mapping[int, Dev]
    kind: str = "a2"
    """``a2`` (CANN 8.5.0), ``a2-old`` (CANN 8.3.RC2 stack), ``a3`` (CANN 8.3.RC2, 16 dies)."""
    hccn_conf: bool = True
    container: bool = False
    env: dict[str, str] = field(default_factory=dict)


def hccn_conf_text(devices: Mapping[int, Dev]) -> str:
    lines = []
    for i, d in sorted(devices.items()):
        lines += [f"address_{i}={d.ip}", f"netmask_{i}={d.netmask}"]
        if d.gateway:
            lines += [f"netdetect_{i}={d.gateway}", f"gateway_{i}={d.gateway}"]
        lines.append(f"send_arp_status_{i}=1")
    return "\n".join(lines) + "\n"


def capture_text(i: int, d: Dev) -> str:
    """``hccn_tool -i N -ip -g; -link -g; -net_health -g; -tls -g`` (+ spod-info) as they print."""
    out = [
        f"ipaddr:{d.ip}",
        f"netmask:{d.netmask}",
        f"link status: {d.link}",
        f"net health status: {d.health}",
        f"dev_id:{i}, tls switch[{d.tls}](0:disable, 1:enable), "
        "tls preconfigured[1](0:non-preset, 1:preset), tls alarm time threshold[60]days",
    ]
    if d.spod is not None:
        pod, sdid = d.spod
        out += [f"SDID : {sdid}", "Super Pod Size : 384", f"Super Pod ID : {pod}", "Server Index : 4"]
    return "\n".join(out) + "\n"


def a950_node(root: Path) -> HostTree:
    """An Ascend 950PR server (its npu-smi capture, tests/data/npu_smi) with the vendor's example
    topology file (hicann/hccl rank_table_config_a5.md) as its factory topo file."""
    tree = HostTree(root).os_release().driver(driver_like_25_3("26.0.0")).npu_smi("950pr_25.x").dev_nodes(2)
    tree.write(
        "/usr/local/Ascend/driver/topo/topo.json", (RANKTABLE_DATA / "a5_topo_example0.json").read_text()
    )
    return tree


def build_node(spec: NodeSpec, root: Path) -> HostTree:
    tree = {"a2": a2_cann85_new, "a2-old": a2_cann83_old, "a3": a3_cann83, "950": a950_node}[spec.kind](root)
    if spec.container:
        tree.container()
    if spec.hccn_conf:
        tree.write("/etc/hccn.conf", hccn_conf_text(spec.devices))
    for i, d in spec.devices.items():
        tree.write(f"{CAPTURE_DIR}/{i}.txt", capture_text(i, d))
    tree.env.update(spec.env)
    return tree


def collect_job(specs: list[NodeSpec], work: Path) -> Path:
    """Facts of every node as ``fleet collect`` leaves them: DIR/<node>.json. Returns DIR."""
    from cannenv.host import Host
    from cannenv.probes import collect

    out = work / "facts"
    out.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        tree = build_node(spec, work / "trees" / spec.name)
        facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
        (out / f"{spec.name}.json").write_text(facts.to_json(), encoding="utf-8")
    return out


def a2_devices(third_octet: int, *, tls: str = "0", gateway: bool = True) -> dict[int, Dev]:
    """Two A2 devices: 192.168.<n>.8 and .9 (the addressing of hicann/hccl's A2 rank table example)."""
    gw = f"192.168.{third_octet}.1" if gateway else None
    return {
        0: Dev(f"192.168.{third_octet}.8", gateway=gw, tls=tls),
        1: Dev(f"192.168.{third_octet}.9", gateway=gw, tls=tls),
    }


def a3_devices(server: int, pod: str, *, odd_pod: dict[int, str] | None = None) -> dict[int, Dev]:
    """16 A3 dies of one server, SDIDs unique per server inside the SuperPoD."""
    out = {}
    for i in range(16):
        out[i] = Dev(
            f"10.20.{server}.{10 + i}",
            gateway=f"10.20.{server}.1",
            spod=((odd_pod or {}).get(i, pod), str(server * 16 + i)),
        )
    return out
