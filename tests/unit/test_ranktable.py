"""`cannenv fleet ranktable`: rank tables written from FIXTURE facts (A2 v1.0, A3 v1.2, 950 v2.0) and
checked against the vendor's own examples (tests/data/ranktable, SOURCES.md) and planted errors."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from cannenv.errors import InputError
from cannenv.fleet.job import select_nodes
from cannenv.fleet.ranktable import check_table, generate
from tests.helpers.cli import cannenv
from tests.helpers.multinode import Dev, NodeSpec, a2_devices, a3_devices, collect_job

DATA = Path(__file__).resolve().parent.parent / "data" / "ranktable"
VENDOR_TABLES = sorted(
    p.name for p in DATA.glob("*_example*.json") if "topo" not in p.name and "template2" not in p.name
)


def _failing(findings: list[Any]) -> dict[str, str]:
    return {f.id: f.detail for f in findings if f.status in ("fail", "error")}


@pytest.mark.parametrize("name", VENDOR_TABLES)
def test_vendor_examples_pass_the_check(name: str) -> None:
    doc = json.loads((DATA / name).read_text())
    assert _failing(check_table(doc)) == {}


def test_template_2_is_a_warning_not_a_failure() -> None:
    doc = json.loads((DATA / "910_template2_example1.json").read_text())
    findings = check_table(doc)
    assert _failing(findings) == {}
    [warn] = [f for f in findings if f.status == "warn"]
    assert warn.id == "ranktable-schema" and "template-2" in warn.detail


def test_vendor_examples_cover_every_version() -> None:
    versions = {json.loads((DATA / n).read_text())["version"] for n in VENDOR_TABLES}
    assert versions == {"1.0", "1.2", "2.0"}


def _a2() -> dict[str, Any]:
    return json.loads((DATA / "a2_example0.json").read_text())


def _a3() -> dict[str, Any]:
    return json.loads((DATA / "a3_example0.json").read_text())


def _a5() -> dict[str, Any]:
    return json.loads((DATA / "a5_example1.json").read_text())


def _plant(doc: dict[str, Any], fn: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    fn(out)
    return out


PLANTED = [
    (
        "v1.0 integer rank_id",
        _a2,
        lambda d: d["server_list"][0]["device"][0].update(rank_id=0),
        "ranktable-schema",
        "must be a string of digits",
    ),
    ("v1.0 server_count", _a2, lambda d: d.update(server_count="3"), "ranktable-schema", "server_count '3'"),
    (
        "v1.0 no device_ip on 2 servers",
        _a2,
        lambda d: d["server_list"][1]["device"][0].pop("device_ip"),
        "ranktable-schema",
        "device_ip is required",
    ),
    (
        "v1.0 interleaved ranks",
        _a2,
        lambda d: (
            d["server_list"][0]["device"][1].update(rank_id="2"),
            d["server_list"][1]["device"][0].update(rank_id="1"),
        ),
        "ranktable-ranks",
        "interleave",
    ),
    (
        "v1.0 duplicate rank",
        _a2,
        lambda d: d["server_list"][1]["device"][1].update(rank_id="2"),
        "ranktable-ranks",
        "twice: 2",
    ),
    (
        "v1.0 duplicate device_ip",
        _a2,
        lambda d: d["server_list"][1]["device"][0].update(device_ip="192.168.1.8"),
        "ranktable-devices",
        "192.168.1.8 on node_0:0, node_1:0",
    ),
    (
        "v1.0 not completed",
        _a2,
        lambda d: d.update(status="initializing"),
        "ranktable-schema",
        "initializing",
    ),
    (
        "v1.2 SDID twice in a SuperPoD",
        _a3,
        lambda d: d["server_list"][1]["device"][0].update(super_device_id="0"),
        "ranktable-superpod",
        "SDID 0 twice in SuperPoD 0",
    ),
    (
        "v1.2 server in two SuperPoDs",
        _a3,
        lambda d: d["super_pod_list"][1]["server_list"].append({"server_id": "node_0"}),
        "ranktable-superpod",
        "node_0 is in SuperPoD 0 and 1",
    ),
    (
        "v1.2 SuperPoD servers apart",
        _a3,
        lambda d: d["server_list"].insert(1, d["server_list"].pop(2)),
        "ranktable-superpod",
        "not listed together",
    ),
    (
        "v2.0 string rank_id",
        _a5,
        lambda d: d["rank_list"][0].update(rank_id="0"),
        "ranktable-schema",
        "rank_id must be an integer",
    ),
    (
        "v2.0 layer 0 not TOPO_FILE_DESC",
        _a5,
        lambda d: d["rank_list"][1]["level_list"][0].update(net_type="CLOS"),
        "ranktable-schema",
        "TOPO_FILE_DESC",
    ),
    ("v2.0 rank_count", _a5, lambda d: d.update(rank_count=5), "ranktable-schema", "rank_count 5"),
    (
        "v2.0 bad port",
        _a5,
        lambda d: d["rank_list"][0]["level_list"][0]["rank_addr_list"][0].update(ports=["die1-port0"]),
        "ranktable-schema",
        "Die/port",
    ),
]


@pytest.mark.parametrize(("what", "base", "plant", "cid", "text"), PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_errors_are_found(what: str, base: Any, plant: Any, cid: str, text: str) -> None:
    failing = _failing(check_table(_plant(base(), plant)))
    assert cid in failing, failing
    assert text in failing[cid]


# ------------------------------------------------------------------ written from facts


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    work = tmp_path_factory.mktemp("rt")
    return {
        "a2": collect_job(
            [NodeSpec(f"node-{x}", a2_devices(i + 1)) for i, x in enumerate("abc")], work / "a2"
        ),
        "a3": collect_job(
            [
                NodeSpec("a3-x", a3_devices(0, "1"), kind="a3"),
                NodeSpec("a3-y", a3_devices(1, "1"), kind="a3"),
            ],
            work / "a3",
        ),
        "950": collect_job(
            [
                NodeSpec("s0", {0: Dev("172.16.0.10"), 1: Dev("172.16.0.28")}, kind="950"),
                NodeSpec("s1", {0: Dev("172.16.1.10"), 1: Dev("172.16.1.28")}, kind="950"),
            ],
            work / "950",
        ),
    }


def test_a2_table_is_v1_0_from_hccn_conf(jobs: dict[str, Path]) -> None:
    nodes, _ = select_nodes(str(jobs["a2"]))
    table = generate(nodes)
    assert table["version"] == "1.0" and table["server_count"] == "3"
    assert table["server_list"][1] == {
        "server_id": "node-b",
        "device": [
            {"device_id": "0", "device_ip": "192.168.2.8", "rank_id": "2"},
            {"device_id": "1", "device_ip": "192.168.2.9", "rank_id": "3"},
        ],
    }
    assert _failing(check_table(table, nodes)) == {}


def test_a3_table_is_v1_2_with_sdids_and_superpods(jobs: dict[str, Path]) -> None:
    nodes, _ = select_nodes(str(jobs["a3"]))
    table = generate(nodes)
    assert table["version"] == "1.2"
    assert table["super_pod_list"] == [
        {"super_pod_id": "1", "server_list": [{"server_id": "a3-x"}, {"server_id": "a3-y"}]}
    ]
    dev = table["server_list"][1]["device"][3]
    assert dev == {"device_id": "3", "device_ip": "10.20.1.13", "super_device_id": "19", "rank_id": "19"}
    assert _failing(check_table(table, nodes)) == {}


def test_950_table_is_v2_0_with_the_topology_ports(jobs: dict[str, Path]) -> None:
    nodes, _ = select_nodes(str(jobs["950"]))
    table = generate(nodes)
    assert table["version"] == "2.0" and table["rank_count"] == 4
    r2 = table["rank_list"][2]
    assert (r2["rank_id"], r2["local_id"], r2["device_id"]) == (2, 0, 0)
    assert r2["level_list"][0] == {
        "net_layer": 0,
        "net_instance_id": "s1",
        "net_type": "TOPO_FILE_DESC",
        "net_attr": "",
        "rank_addr_list": [{"addr_type": "IPV4", "addr": "172.16.1.10", "ports": ["1/0"]}],
    }
    assert r2["level_list"][1]["rank_addr_list"][0]["ports"] == ["0/4", "0/5", "0/6", "0/7", "1/5", "1/6"]
    assert _failing(check_table(table, nodes)) == {}


def test_950_without_topology_file_is_refused(jobs: dict[str, Path]) -> None:
    from dataclasses import replace

    nodes, _ = select_nodes(str(jobs["950"]))
    bare = [
        replace(n, facts=replace(n.facts, multinode=replace(n.facts.multinode, topo_files=()))) for n in nodes
    ]
    with pytest.raises(InputError, match="no topology file"):
        generate(bare)
    table = generate(nodes)
    assert "ranktable-topo" in _failing(check_table(table, bare))


def test_a3_die_in_another_superpod_refuses_a_table(tmp_path: Path) -> None:
    facts = collect_job([NodeSpec("a3-y", a3_devices(1, "1", odd_pod={3: "2"}), kind="a3")], tmp_path)
    nodes, _ = select_nodes(str(facts))
    with pytest.raises(InputError, match="one server needs one SuperPoD"):
        generate(nodes)


def test_check_against_facts_finds_a_wrong_device_ip(jobs: dict[str, Path]) -> None:
    nodes, _ = select_nodes(str(jobs["a2"]))
    table = generate(nodes)
    table["server_list"][0]["device"][1]["device_ip"] = "192.168.1.99"
    failing = _failing(check_table(table, nodes))
    assert "node-a:1 device_ip 192.168.1.99 but hccn.conf address_1=192.168.1.9" in failing["ranktable-facts"]
    only_two = generate(nodes[:2])
    assert "missing from the table: node-c" in _failing(check_table(only_two, nodes))["ranktable-facts"]


def test_cli_writes_and_checks(jobs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "hccl.json"
    res = cannenv("fleet", "ranktable", str(jobs["a3"]), "--out", str(out))
    assert res.returncode == 0, res.stderr
    assert "rank table v1.2, 2 server(s), 32 rank(s)" in res.stdout
    assert cannenv("fleet", "ranktable", str(jobs["a3"]), "--check", str(out)).returncode == 0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_plant(_a2(), PLANTED[3][2])))
    res = cannenv("fleet", "ranktable", "--check", str(bad), "--json")
    assert res.returncode == 1
    assert {f["id"] for f in json.loads(res.stdout)["findings"] if f["status"] == "fail"} == {
        "ranktable-ranks"
    }
    commented = tmp_path / "doc.json"
    commented.write_text('{"version": "1.0" // the docs\' comments\n}')
    res = cannenv("fleet", "ranktable", "--check", str(commented))
    assert res.returncode == 2 and "not valid JSON" in res.stderr


def test_nodes_of_two_families_are_refused_naming_each_side(tmp_path: Path) -> None:
    """The error names which node is of which family and hints at --nodes, not at npu-smi (the
    families are known); found running `fleet ranktable` over examples/hosts a2 + a3."""
    facts = collect_job(
        [NodeSpec("a2-n", a2_devices(1)), NodeSpec("a3-n", a3_devices(0, "1"), kind="a3")], tmp_path
    )
    nodes, _ = select_nodes(str(facts))
    with pytest.raises(InputError, match=r"several chip families \(a2 on a2-n; a3 on a3-n\)") as err:
        generate(nodes)
    assert "--nodes" in (err.value.hint or "") and "npu-smi" not in (err.value.hint or "")


def test_each_passing_check_says_what_it_found(jobs: dict[str, Path]) -> None:
    """Not the schema's "as documented" under every check (ranktable-facts read "v1.0: as documented")."""
    nodes, _ = select_nodes(str(jobs["a3"]))
    passed = {f.id: f.detail for f in check_table(generate(nodes), nodes) if f.status == "pass"}
    assert set(passed) == {f"ranktable-{x}" for x in ("schema", "ranks", "devices", "superpod", "facts")}
    assert passed["ranktable-facts"] == "servers, devices and addresses agree with the facts of 2 node(s)"
    assert passed["ranktable-ranks"] == "32 rank(s) on 2 server(s), numbered in order"
    assert len(set(passed.values())) == len(passed)
