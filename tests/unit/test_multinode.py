"""Multi-node facts and per-node checks: hccn.conf, hccn_tool outputs (real ones, tests/data/hccn),
spod-info, HCCL's port, and the doctor's `--multinode` checks."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest

from cannenv import checks
from cannenv.checks import Target
from cannenv.checks.multinode import hccl_env_problems, port_range_problem
from cannenv.facts import ContainerFacts, DeviceFacts, EnvFacts, Facts, HccnDevice, MultinodeFacts
from cannenv.gather import gather
from cannenv.host import Host
from cannenv.probes import hccn
from cannenv.probes._common import ProbeContext
from tests.helpers.cli import cannenv
from tests.helpers.hosts import a2_cann85_new
from tests.helpers.multinode import Dev, NodeSpec, a2_devices, build_node

DATA = Path(__file__).resolve().parent.parent / "data" / "hccn"


# ------------------------------------------------------------------ real outputs (SOURCES.md)


def test_real_ip_link_health_output() -> None:
    got = hccn.parse_hccn_output((DATA / "vllm_omni_ip_link_health.txt").read_text())
    assert got == {"ip": "10.86.1.80", "ip_netmask": "255.255.255.0", "link": "UP", "net_health": "Success"}


def test_real_no_ip_output() -> None:
    assert hccn.parse_hccn_output((DATA / "vllm_omni_no_ip.txt").read_text()) == {"ip_missing": True}


def test_real_tls_output_with_fec_and_masked_ip() -> None:
    got = hccn.parse_hccn_output((DATA / "mindcluster_tls_fec_ip.txt").read_text())
    assert got["tls"] == "0"
    assert got["ip"] == "10.xx.xx.10"  # masked by its author: kept as text, judged as not an IP
    assert got["ip_netmask"] == "255.255.255.0"


def test_real_spod_info_output() -> None:
    got = hccn.parse_hccn_output((DATA / "a3_spod_info.txt").read_text())
    assert got == {"sdid": "16777216", "super_pod_size": "384", "super_pod_id": "0", "server_index": "4"}


def test_real_net_health_fault() -> None:
    assert hccn.parse_hccn_output((DATA / "mindspore_net_health_fault.txt").read_text()) == {
        "net_health": "Fault"
    }


def test_real_hccn_conf() -> None:
    conf = hccn.parse_hccn_conf((DATA / "hccn.conf").read_text())
    assert hccn.conf_devices(conf) == {
        0: {
            "address": "29.1.137.205",
            "netmask": "255.255.0.0",
            "netdetect": "29.1.0.1",
            "gateway": "29.1.0.1",
            "send_arp_status": "1",
        }
    }


def test_hccn_conf_drops_what_hccn_tool_never_writes() -> None:
    text = "address_0 = 10.0.0.1\n# comment\naddress_1=$(reboot)\n\x1b[31m=1\nnetmask_0=255.0.0.0\n"
    assert hccn.parse_hccn_conf(text) == {"address_0": "10.0.0.1", "netmask_0": "255.0.0.0"}


# ------------------------------------------------------------------ probe: trees, captures, live


def test_tree_reads_conf_and_captures_and_never_runs_hccn_tool(tmp_path: Path) -> None:
    spec = NodeSpec("n", a2_devices(1, tls="1"))
    tree = build_node(spec, tmp_path / "t")
    marker = tmp_path / "ran"
    tree.write("/usr/local/Ascend/driver/tools/hccn_tool", f"#!/bin/sh\ntouch {marker}\n", mode=0o755)
    facts = gather(str(tree.root), None, None, (), None, 5.0, multinode=True)
    mn = facts.multinode
    assert mn.hccn_conf_path == "/etc/hccn.conf"
    assert mn.hccn_source == "captured"
    assert mn.hccn_tool_path == "/usr/local/Ascend/driver/tools/hccn_tool"
    assert [(d.phy_id, d.address, d.ip, d.link, d.net_health, d.tls) for d in mn.devices] == [
        (0, "192.168.1.8", "192.168.1.8", "UP", "Success", "1"),
        (1, "192.168.1.9", "192.168.1.9", "UP", "Success", "1"),
    ]
    assert not marker.exists()
    assert Facts.from_json(facts.to_json()) == facts


def test_hccn_output_dir_gives_the_values(tmp_path: Path) -> None:
    tree = a2_cann85_new(tmp_path / "t")
    out = tmp_path / "captures"
    out.mkdir()
    (out / "0.txt").write_text((DATA / "vllm_omni_ip_link_health.txt").read_text())
    (out / "hccn-1.txt").write_text((DATA / "vllm_omni_no_ip.txt").read_text())
    (out / "notes.md").write_text("ignored")
    facts = gather(str(tree.root), None, None, (), None, 5.0, hccn_output=str(out))
    devs = {d.phy_id: d for d in facts.multinode.devices}
    assert devs[0].ip == "10.86.1.80" and devs[0].link == "UP"
    assert devs[1].ip_missing
    assert facts.multinode.hccn_conf_path is None


def test_hccn_output_must_hold_captures(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = cannenv("facts", "--json", "--hccn-output", str(tmp_path / "empty"))
    assert result.returncode == 2
    assert "holds no <device id>.txt" in result.stderr


def _live_ctx(bindir: Path, script: str, *, timeout: float = 5.0) -> ProbeContext:
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / "hccn_tool"
    exe.write_text(script, encoding="utf-8")
    exe.chmod(0o755)
    host = Host(Path("/"), {"PATH": f"{bindir}:/usr/bin:/bin"}, True, timeout)
    ctx = ProbeContext(host=host, npu_smi_timeout=timeout, multinode=True)
    ctx.results["devices"] = DeviceFacts(dev_nodes=("/dev/davinci0", "/dev/davinci1", "/dev/davinci_manager"))
    return ctx


FAKE_HCCN_TOOL = """#!/bin/sh
# FIXTURE: answers as hccn_tool does (tests/data/hccn), device 1 without an IP
case "$3" in
  -ip) if [ "$2" = 1 ]; then echo 'Get ipconf failed, because no ip was preset there!'; exit 1; fi
       echo "ipaddr:10.0.0.$2"; echo 'netmask:255.255.255.0' ;;
  -link) echo 'link status: UP' ;;
  -net_health) echo 'net health status: Success' ;;
  -tls) echo "dev_id:$2, tls switch[0](0:disable, 1:enable), tls preconfigured[1](0:non-preset, 1:preset)" ;;
esac
"""


def test_live_host_runs_hccn_tool_per_device(tmp_path: Path) -> None:
    ctx = _live_ctx(tmp_path / "bin", FAKE_HCCN_TOOL)
    mn = hccn.probe(ctx)["multinode"]
    assert mn.hccn_source == "run"
    d0, d1 = mn.devices
    assert (d0.ip, d0.link, d0.net_health, d0.tls, d0.errors) == ("10.0.0.0", "UP", "Success", "0", ())
    assert d1.ip_missing and d1.ip is None


def test_live_hung_hccn_tool_stops_after_the_first_timeout(tmp_path: Path) -> None:
    ctx = _live_ctx(tmp_path / "bin", "#!/bin/sh\nexec sleep 30\n", timeout=0.5)
    mn = hccn.probe(ctx)["multinode"]
    assert mn.devices[0].errors and "no answer" in mn.devices[0].errors[0]
    assert mn.devices[1].errors == () and mn.devices[1].source == ""  # never asked
    assert "stopped after device 0" in mn.hccn_note
    assert [i.kind for i in ctx.issues] == ["command-timeout"]


def test_live_without_multinode_runs_nothing(tmp_path: Path) -> None:
    ctx = replace(_live_ctx(tmp_path / "bin", f"#!/bin/sh\ntouch {tmp_path}/ran\n"), multinode=False)
    ctx.results["devices"] = DeviceFacts(dev_nodes=("/dev/davinci0",))
    mn = hccn.probe(ctx)["multinode"]
    assert mn.hccn_source == "none" and "--multinode" in mn.hccn_note
    assert not (tmp_path / "ran").exists()


def test_listening_port_is_seen_in_proc_net_tcp() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        text = Path("/proc/net/tcp").read_text()
        assert port in hccn.listening_ports(text)


def test_port_16666_state_from_a_tree(tmp_path: Path) -> None:
    tree = a2_cann85_new(tmp_path / "t")
    header = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    )
    tree.write(
        "/proc/net/tcp",
        header
        + "   0: 00000000:411A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1\n",
    )
    facts = gather(str(tree.root), None, None, (), None, 5.0)
    assert (facts.multinode.port_16666, facts.multinode.port_source) == ("in-use", "/proc/net/tcp")


# ------------------------------------------------------------------ per-node checks


def _facts(**mn: object) -> Facts:
    return Facts(multinode=MultinodeFacts(**mn))  # type: ignore[arg-type]


def _run(facts: Facts, *, multinode: bool = True) -> dict[str, list[tuple[str, str]]]:
    from cannenv.checks import multinode as m

    out: dict[str, list[tuple[str, str]]] = {}
    for check in m.CHECKS:
        for f in check.run(facts, Target(multinode=multinode)):
            out.setdefault(f.id, []).append((f.status, f.detail))
    return out


def test_single_node_hosts_skip_every_multinode_check() -> None:
    got = _run(Facts(), multinode=False)
    assert set(got) == {"hccn-conf", "hccn-device-ip", "hccn-link", "hccn-tls", "hccl-env"}
    assert all(s == "skip" and "single node" in d for v in got.values() for s, d in v)


def test_container_without_hccn_conf_is_told_to_mount_it() -> None:
    from cannenv.checks.multinode import HCCN_CONF

    facts = replace(Facts(), container=ContainerFacts(in_container=True))
    [f] = HCCN_CONF.run(facts, Target(multinode=True))
    assert f.status == "fail" and "container" in f.detail
    assert f.remedy is not None and "-v /etc/hccn.conf:/etc/hccn.conf:ro" in f.remedy


def test_devices_without_address_link_down_and_tls_mismatch_fail() -> None:
    devs = (
        HccnDevice(
            phy_id=0, address="10.0.0.1", netmask="255.255.255.0", link="UP", net_health="Success", tls="0"
        ),
        HccnDevice(phy_id=1, link="DOWN", net_health="Init", tls="1", ip_missing=True),
        HccnDevice(phy_id=2, address="10.0.0.1", netmask="255.255.255.0", tls="0"),
    )
    got = _run(_facts(hccn_conf_path="/etc/hccn.conf", hccn_conf={"address_0": "10.0.0.1"}, devices=devs))
    assert got["hccn-conf"][0][0] == "pass"
    ip = dict((d, s) for s, d in got["hccn-device-ip"])
    assert any("device(s) 1 have no address" in d for d in ip)
    assert any("Get ipconf failed" in d for d in ip)
    assert any("10.0.0.1 (devices 0 and 2)" in d for d in ip)
    assert [s for s, _ in got["hccn-link"]] == ["fail", "fail"]
    assert "1 (DOWN)" in got["hccn-link"][0][1] and "1 (Init)" in got["hccn-link"][1][1]
    assert got["hccn-tls"][0][0] == "fail" and "EI0006" in got["hccn-tls"][0][1]


def test_clean_multinode_host_passes() -> None:
    devs = tuple(
        HccnDevice(
            phy_id=i,
            address=f"10.0.0.{i + 2}",
            netmask="255.255.255.0",
            link="UP",
            net_health="Success",
            tls="0",
        )
        for i in range(2)
    )
    facts = replace(
        _facts(
            hccn_conf_path="/etc/hccn.conf",
            hccn_conf={"address_0": "x", "address_1": "y"},
            devices=devs,
            port_16666="free",
        ),
        env=EnvFacts(vars={"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_NPU_SOCKET_PORT_RANGE": "auto"}),
    )
    assert {k: [s for s, _ in v] for k, v in _run(facts).items()} == {
        "hccn-conf": ["pass"],
        "hccn-device-ip": ["pass"],
        "hccn-link": ["pass"],
        "hccn-tls": ["pass"],
        "hccl-env": ["pass"],
    }


@pytest.mark.parametrize(
    ("value", "bad"),
    [
        ("auto", False),
        ("61000-61050", False),
        ("61000,61050-61100,61200-61210", False),
        ("57000,57005", False),
        ("0-10", True),
        ("61000-60000", True),
        ("61000-61050,61040", True),
        ("a-b", True),
        ("70000", True),
    ],
)
def test_port_range_values_from_the_docs(value: str, bad: bool) -> None:
    assert (port_range_problem(value) is not None) is bad


def test_hccl_env_problems_and_taken_port() -> None:
    env = {"HCCL_CONNECT_TIMEOUT": "60", "HCCL_IF_IP": "10.0.0.1,10.0.0.2", "HCCL_NPU_SOCKET_PORT_RANGE": "x"}
    assert [n for n, _ in hccl_env_problems(env)] == [
        "HCCL_CONNECT_TIMEOUT",
        "HCCL_NPU_SOCKET_PORT_RANGE",
        "HCCL_IF_IP",
    ]
    facts = _facts(port_16666="in-use")
    [(status, detail)] = _run(facts)["hccl-env"]
    assert status == "warn" and "EI0019" in detail


def test_doctor_multinode_on_a_tree(tmp_path: Path) -> None:
    tree = build_node(
        NodeSpec("n", {0: Dev("192.168.1.8"), 1: Dev("192.168.1.9", link="DOWN")}), tmp_path / "t"
    )
    plain = cannenv("doctor", "--root", str(tree.root), "--json", "--check", "hccn-link")
    assert '"single node' in plain.stdout
    res = cannenv(
        "doctor", "--root", str(tree.root), "--multinode", "--json", "--check", "hccn-link,hccn-conf"
    )
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 (DOWN)" in res.stdout
    host = Host(tree.root, dict(tree.env), True, 5.0)
    facts = gather(str(host.root), None, None, (), None, 5.0)
    assert [f.status for f in checks.run(facts, Target(multinode=True), checks.select(["hccn-conf"]))] == [
        "pass"
    ]


# ------------------------------------------------------------------ hostile inputs (docs/security.md)


def test_fifo_and_oversized_hccn_conf_are_issues_not_hangs(tmp_path: Path) -> None:
    import os

    tree = a2_cann85_new(tmp_path / "t")
    os.mkfifo(tree.root / "etc/hccn.conf")
    facts = gather(str(tree.root), None, None, (), None, 5.0)
    assert facts.multinode.hccn_conf == {}
    assert [i.kind for i in facts.issues if i.probe == "multinode"] == ["not-a-file"]
    (tree.root / "etc/hccn.conf").unlink()
    with (tree.root / "etc/hccn.conf").open("wb") as fh:
        fh.truncate(hccn.MAX_CONF_BYTES + 1)  # sparse: costs nothing, refused by size
    facts = gather(str(tree.root), None, None, (), None, 5.0)
    assert [i.kind for i in facts.issues if i.probe == "multinode"] == ["oversized"]


def test_hccn_output_fifo_is_bad_input(tmp_path: Path) -> None:
    import os

    out = tmp_path / "captures"
    out.mkdir()
    os.mkfifo(out / "0.txt")
    res = cannenv("facts", "--json", "--hccn-output", str(out))
    assert res.returncode == 2, res.stderr


def test_hccn_conf_link_out_of_the_root_stays_inside(tmp_path: Path) -> None:
    tree = a2_cann85_new(tmp_path / "t")
    secret = tmp_path / "secret.conf"
    secret.write_text("address_0=10.9.9.9\n")
    (tree.root / "etc/hccn.conf").symlink_to(secret)  # absolute: resolved inside the root, so absent
    facts = gather(str(tree.root), None, None, (), None, 5.0)
    assert facts.multinode.hccn_conf == {} and facts.multinode.hccn_conf_path is None


def test_missing_hccn_conf_is_one_failure_not_two(tmp_path: Path) -> None:
    """A container without /etc/hccn.conf: hccn-conf fails with "mount it"; hccn-device-ip is its
    consequence, not a second failure telling the user to set addresses with hccn_tool (found running
    `doctor --multinode` on examples/hosts/container-with-mounts)."""
    tree = build_node(NodeSpec("c", a2_devices(1), hccn_conf=False, container=True), tmp_path / "t")
    facts = gather(str(tree.root), None, None, (), None, 5.0)
    got = {
        f.id: f
        for f in checks.run(facts, Target(multinode=True), checks.select(["hccn-conf", "hccn-device-ip"]))
    }
    assert got["hccn-conf"].status == "fail" and "-v /etc/hccn.conf" in (got["hccn-conf"].remedy or "")
    ip = got["hccn-device-ip"]
    assert ip.status == "skip" and ip.caused_by == "hccn-conf", ip


def test_a_masked_device_ip_is_not_compared_with_hccn_conf(tmp_path: Path) -> None:
    """hccn_tool output pasted with its IP masked (``10.xx.xx.10``, as in mindcluster_tls_fec_ip.txt) is
    not an IP: it is not "disagreeing" with hccn.conf (fleet job already skips it the same way)."""
    tree = build_node(NodeSpec("n", {0: Dev("10.0.1.10"), 1: Dev("10.0.1.11")}), tmp_path / "t")
    tree.write("/var/lib/cannenv/hccn/0.txt", (DATA / "mindcluster_tls_fec_ip.txt").read_text())
    facts = gather(str(tree.root), None, None, (), None, 5.0)
    assert [d.ip for d in facts.multinode.devices] == ["10.xx.xx.10", "10.0.1.11"]
    [ip] = checks.run(facts, Target(multinode=True), checks.select(["hccn-device-ip"]))
    assert ip.status == "pass", ip
