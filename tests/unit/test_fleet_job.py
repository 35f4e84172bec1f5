"""`cannenv fleet job`: a job's nodes judged as one, on FIXTURE multi-node facts (tests/helpers/multinode.py):
a 3-node A2 job and a 2-node A3 job, clean and with planted defects."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cannenv.fleet.job import JOB_CHECKS, converge_on, judge_job, select_nodes
from tests.helpers.cli import cannenv
from tests.helpers.multinode import Dev, NodeSpec, a2_devices, a3_devices, collect_job


def _by_id(findings: list) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for f in findings:
        out.setdefault(f.id, []).append(f)
    return out


@pytest.fixture(scope="module")
def a2_clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("a2clean")
    return collect_job([NodeSpec(f"node-{x}", a2_devices(i + 1)) for i, x in enumerate("abc")], work)


@pytest.fixture(scope="module")
def a2_planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """node-b: a duplicate of node-a's device 0 IP and TLS on; node-c: another CANN (the 8.3 stack),
    a container without /etc/hccn.conf."""
    work = tmp_path_factory.mktemp("a2planted")
    b_devs = {
        0: Dev("192.168.1.8", gateway="192.168.1.1", tls="1"),
        1: Dev("192.168.2.9", gateway="192.168.2.1", tls="1"),
    }
    specs = [
        NodeSpec("node-a", a2_devices(1)),
        NodeSpec("node-b", b_devs),
        NodeSpec("node-c", a2_devices(3), kind="a2-old", hccn_conf=False, container=True),
    ]
    return collect_job(specs, work)


def test_clean_a2_job_passes(a2_clean: Path) -> None:
    nodes, errors = select_nodes(str(a2_clean))
    findings, plan = judge_job(nodes)
    assert not errors and not plan
    bad = [(f.id, f.detail) for f in findings if f.status in ("fail", "error", "warn")]
    assert bad == []
    got = _by_id(findings)
    assert got["job-cann"][0].detail == "CANN 8.5.0 on every node"
    assert got["job-device-ip"][0].status == "pass" and got["job-tls"][0].status == "pass"
    assert got["job-links"][0].status == "pass"
    assert got["job-superpod"][0].status == "skip"  # A2: no SuperPoD


def test_planted_a2_defects_each_found_with_the_nodes_named(a2_planted: Path) -> None:
    nodes, _ = select_nodes(str(a2_planted))
    findings, plan = judge_job(nodes)
    got = _by_id(findings)
    [cann] = got["job-cann"]
    assert cann.status == "fail" and "EI0005" in cann.detail
    assert "8.5.0 on node-a, node-b" in cann.detail and "8.3.RC2 on node-c" in cann.detail
    assert cann.remedy == "converge on CANN 8.5.0 (held by node-a, node-b): change node-c"
    dup = [f for f in got["job-device-ip"] if f.subject == "duplicate"]
    assert len(dup) == 1 and "192.168.1.8 on node-a:0, node-b:0" in dup[0].detail
    [tls] = got["job-tls"]
    assert tls.status == "fail" and "0 on node-a, node-c; 1 on node-b" in tls.detail
    assert "enable 0" in (tls.remedy or "") and "node-b" in (tls.remedy or "")
    boxed = [f for f in got["job-hccn-conf"] if f.subject == "container"]
    assert len(boxed) == 1 and "node-c" in boxed[0].detail and "-v /etc/hccn.conf" in (boxed[0].remedy or "")
    # node-c's devices lack addresses only because its hccn.conf is not mounted: job-hccn-conf says
    # so; job-device-ip does not add "set them with hccn_tool" for a file that only needs the mount
    assert not [f for f in got["job-device-ip"] if "node-c" in f.detail], got["job-device-ip"]
    # one plan: only node-c moves, toward what the others hold
    assert set(plan) == {"node-c"}
    assert "CANN 8.3.RC2 -> 8.5.0" in plan["node-c"]
    assert any(c.startswith("torch_npu ") for c in plan["node-c"])


@pytest.fixture(scope="module")
def a3_jobs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    clean = collect_job(
        [NodeSpec("a3-x", a3_devices(0, "1"), kind="a3"), NodeSpec("a3-y", a3_devices(1, "1"), kind="a3")],
        tmp_path_factory.mktemp("a3clean"),
    )
    planted = collect_job(
        [
            NodeSpec("a3-x", a3_devices(0, "1"), kind="a3"),
            NodeSpec("a3-y", a3_devices(1, "1", odd_pod={3: "2"}), kind="a3"),
        ],
        tmp_path_factory.mktemp("a3planted"),
    )
    return clean, planted


def test_clean_a3_job_passes(a3_jobs: tuple[Path, Path]) -> None:
    nodes, _ = select_nodes(str(a3_jobs[0]))
    findings, _ = judge_job(nodes)
    assert [(f.id, f.detail) for f in findings if f.status != "pass" and f.status != "skip"] == []
    [pod] = _by_id(findings)["job-superpod"]
    assert pod.status == "pass" and "SuperPoD 1" in pod.detail


def test_a3_die_in_another_superpod_is_found(a3_jobs: tuple[Path, Path]) -> None:
    nodes, _ = select_nodes(str(a3_jobs[1]))
    findings, _ = judge_job(nodes)
    pods = _by_id(findings)["job-superpod"]
    [odd] = [f for f in pods if f.subject == "a3-y"]
    assert odd.status == "fail"
    assert "a3-y: dies in more than one SuperPoD (devices 3 in SuperPoD 2; the others in 1)" in odd.detail
    assert not [f for f in pods if f.subject == "a3-x"]


def test_logical_superpod_over_two_physical_ones_fails() -> None:
    from dataclasses import replace

    from cannenv.facts import EnvFacts, Facts, HccnDevice, MultinodeFacts
    from cannenv.fleet.job import JobNode

    def node(name: str, pod: str, sdid0: int) -> JobNode:
        devs = tuple(HccnDevice(phy_id=i, super_pod_id=pod, sdid=str(sdid0 + i)) for i in range(2))
        facts = replace(
            Facts(),
            multinode=MultinodeFacts(devices=devs),
            env=EnvFacts(vars={"HCCL_LOGIC_SUPERPOD_ID": "sp0"}),
        )
        return JobNode(name, facts)

    findings, _ = judge_job([node("p", "0", 0), node("q", "1", 0)])
    [logical] = [f for f in findings if f.subject == "logical"]
    assert logical.status == "fail" and "EI0006" in logical.detail
    same_sdid, _ = judge_job([node("p", "0", 0), node("q", "0", 1)])
    [dup] = [f for f in same_sdid if f.subject == "sdid"]
    assert "SDID 1 of SuperPoD 0 on p:1, q:0" in dup.detail


def test_hccl_variables_must_agree() -> None:
    from dataclasses import replace

    from cannenv.facts import EnvFacts, Facts
    from cannenv.fleet.job import JobNode

    a = JobNode("a", replace(Facts(), env=EnvFacts(vars={"HCCL_CONNECT_TIMEOUT": "1200"})))
    b = JobNode("b", replace(Facts(), env=EnvFacts(vars={"HCCL_CONNECT_TIMEOUT": "1200"})))
    c = JobNode("c", replace(Facts(), env=EnvFacts(vars={})))
    findings, _ = judge_job([a, b, c])
    [env] = [f for f in findings if f.id == "job-hccl-env"]
    assert env.status == "fail" and "1200 on a, b; none on c" in env.detail
    assert env.remedy == "export HCCL_CONNECT_TIMEOUT=1200 on every node"


@pytest.mark.parametrize(
    ("values", "remedy"),
    [
        # the majority's 60 is below the vendor's range: the remedy is the valid value, never 60
        ({"a": "60", "b": "60", "c": "1200"}, "export HCCL_CONNECT_TIMEOUT=1200 on every node"),
        (
            {"a": "60", "b": None},
            "unset HCCL_CONNECT_TIMEOUT everywhere (no rank holds a value the vendor allows)",
        ),
        (
            {"a": "60", "b": "30"},
            "export HCCL_CONNECT_TIMEOUT=<an integer in [120, 7200] (seconds)> with one value on every node "
            "(no rank holds a valid one)",
        ),
    ],
)
def test_an_hccl_remedy_never_names_a_value_the_same_rule_rejects(
    values: dict[str, str | None], remedy: str
) -> None:
    from dataclasses import replace

    from cannenv.checks.multinode import hccl_env_problems
    from cannenv.facts import EnvFacts, Facts
    from cannenv.fleet.job import JobNode

    nodes = [
        JobNode(n, replace(Facts(), env=EnvFacts(vars={} if v is None else {"HCCL_CONNECT_TIMEOUT": v})))
        for n, v in values.items()
    ]
    findings, _ = judge_job(nodes)
    [differs] = [f for f in findings if f.id == "job-hccl-env" and "differs" in f.detail]
    assert differs.remedy == remedy
    exported = remedy.removeprefix("export HCCL_CONNECT_TIMEOUT=").split(" ", 1)[0]
    if remedy.startswith("export") and not exported.startswith("<"):
        assert hccl_env_problems({"HCCL_CONNECT_TIMEOUT": exported}) == []
    for bad in (f for f in findings if f.id == "job-hccl-env" and "is not an integer" in f.detail):
        assert "an integer in [120, 7200] (seconds)" in (bad.remedy or "")


def test_converge_on_majority_then_newest() -> None:
    assert converge_on({"a": "8.3.RC2", "b": "8.5.0", "c": "8.5.0"}) == "8.5.0"
    assert converge_on({"a": "8.3.RC2", "b": "8.5.0"}) == "8.5.0"
    assert converge_on({"a": "2.10.0", "b": "2.9.0"}) == "2.10.0"
    assert converge_on({"a": None}) is None


def test_job_check_ids_are_stable_kebab_case() -> None:
    ids = [c.id for c in JOB_CHECKS]
    assert len(ids) == len(set(ids)) and all(i.startswith("job-") for i in ids)


# ------------------------------------------------------------------ the command


def test_cli_job_text_json_junit_prometheus(a2_planted: Path, tmp_path: Path) -> None:
    junit, prom = tmp_path / "job.xml", tmp_path / "job.prom"
    res = cannenv(
        "fleet",
        "job",
        str(a2_planted),
        "--name",
        "llm-train",
        "--junit",
        str(junit),
        "--prometheus",
        str(prom),
    )
    assert res.returncode == 1, res.stderr
    assert "converge node-c: CANN 8.3.RC2 -> 8.5.0" in res.stdout
    assert "192.168.1.8 on node-a:0, node-b:0" in res.stdout
    suite = ET.parse(junit).getroot()
    assert int(suite.find("testsuite").get("failures")) >= 4  # type: ignore[union-attr, arg-type]
    text = prom.read_text()
    assert 'cannenv_job_consistent{cannenv_job="llm-train",nodes="3"} 0' in text
    assert 'cannenv_job_check_status{cannenv_job="llm-train",check="job-tls",severity="high"} 2' in text
    assert "npu_chip_info" not in text and "node_base_info" not in text
    js = cannenv("fleet", "job", str(a2_planted), "--json", "--nodes", "node-a,node-b")
    report = json.loads(js.stdout)
    assert report["host"]["nodes"] == ["node-a", "node-b"] and js.returncode == 1
    assert {f["id"] for f in report["findings"] if f["status"] == "fail"} >= {"job-device-ip", "job-tls"}
    assert not [f for f in report["findings"] if f["id"] == "job-cann" and f["status"] == "fail"]


def test_cli_job_clean_exits_0_and_unknown_node_exits_3(a2_clean: Path) -> None:
    ok = cannenv("fleet", "job", str(a2_clean))
    assert ok.returncode == 0
    assert ok.stdout.startswith("job: 3 node(s): node-a, node-b, node-c\n")  # no unnamed "job job:"
    res = cannenv("fleet", "job", str(a2_clean), "--nodes", "node-a,node-x")
    assert res.returncode == 3 and "node-x" in res.stderr
    # every missing node named at once (an inventory group collected elsewhere), one clean hint
    res = cannenv("fleet", "job", str(a2_clean), "--nodes", "node-a,gpu-17,gpu-18")
    assert res.returncode == 3 and "nodes 'gpu-17', 'gpu-18' are not in" in res.stderr
    assert "hint: known: node-a, node-b, node-c" in res.stderr


# ------------------------------------------------------------------ in the fleet report


def test_fleet_report_judges_each_job_group(a2_planted: Path, a2_clean: Path, tmp_path: Path) -> None:
    html, prom = tmp_path / "fleet.html", tmp_path / "fleet.prom"
    checks = "driver-installed"  # the per-node part is not what this test is about
    res = cannenv(
        "fleet", "report", str(a2_planted), "--check", checks, "--json", "--html", str(html),
        "--prometheus", str(prom), "--job", "train=node-a,node-b", "--job", "infer=node-a,node-c",
    )  # fmt: skip
    assert res.returncode == 1, res.stderr
    jobs = {j["name"]: j for j in json.loads(res.stdout)["jobs"]}
    assert jobs["train"]["status"] == "not-ready" and set(jobs["train"]["failing"]) == {
        "job-device-ip",
        "job-tls",
    }
    assert (
        "job-cann" in jobs["infer"]["failing"]
        and jobs["infer"]["converge"]["node-c"][0] == "CANN 8.3.RC2 -> 8.5.0"
    )
    page = html.read_text()
    assert 'data-job="train"' in page and "192.168.1.8 on node-a:0, node-b:0" in page
    text = prom.read_text()
    assert 'cannenv_fleet_job_ready{cannenv_job="train",nodes="2"} 0' in text
    ok = cannenv("fleet", "report", str(a2_clean), "--check", checks, "--job", "all=node-a,node-b,node-c")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "job all (3 nodes): ready" in ok.stdout


def test_a_one_node_job_is_unchecked_in_the_report_as_fleet_job_warns(a2_clean: Path) -> None:
    """One node has nothing to compare: `fleet job` warns (exit 0, 1 with --strict), and the report
    says the same ("unchecked", its words, "1 node"), never "ready"."""
    job = cannenv("fleet", "job", str(a2_clean), "--nodes", "node-a")
    assert job.returncode == 0 and "WARN  job-family" in job.stdout and "nothing to compare" in job.stdout
    args = ("fleet", "report", str(a2_clean), "--check", "driver-installed", "--job", "solo=node-a")
    res = cannenv(*args)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "job solo (1 node): unchecked (a job of 1 node: nothing to compare; name the job's nodes)" in (
        res.stdout
    )
    assert (
        cannenv(*args, "--strict").returncode
        == cannenv("fleet", "job", str(a2_clean), "--nodes", "node-a", "--strict").returncode
        == 1
    )
    (solo,) = json.loads(cannenv(*args, "--json").stdout)["jobs"]
    assert solo["status"] == "unchecked" and solo["failing"] == []


def test_job_by_inventory_group(a2_planted: Path, tmp_path: Path) -> None:
    pytest.importorskip("ansible")
    inv = tmp_path / "inventory.ini"
    inv.write_text("[train]\nnode-a\nnode-c\n[infer]\nnode-b\n")
    res = cannenv("fleet", "job", str(a2_planted), "--group", "train", "--inventory", str(inv), "--json")
    report = json.loads(res.stdout)
    assert report["host"]["job"] == "train" and report["host"]["nodes"] == ["node-a", "node-c"]
    assert res.returncode == 1 and "node-c" in report["host"]["converge"]
    assert cannenv("fleet", "job", str(a2_planted), "--group", "train").returncode == 2  # needs --inventory
    assert (
        cannenv("fleet", "job", str(a2_planted), "--group", "none", "--inventory", str(inv)).returncode == 3
    )


def test_mixed_family_job_never_converges_a_chip_package_onto_another_chip(tmp_path: Path) -> None:
    """A2 + A3 in one job: ops/kernels and the HDK are per chip, so the plan must not move the A3
    node onto the A2's 910b ops or its HDK (found running `fleet job` over examples/hosts)."""
    work = collect_job(
        [
            NodeSpec("a2-n", a2_devices(1)),
            NodeSpec("a2-m", a2_devices(2)),
            NodeSpec("a3-n", a3_devices(0, "1"), kind="a3"),
        ],
        tmp_path,
    )
    nodes, _ = select_nodes(str(work))
    findings, plan = judge_job(nodes)
    got = _by_id(findings)
    assert got["job-family"][0].status == "fail"
    for cid in ("job-ops", "job-hdk"):
        [f] = got[cid]
        assert f.status == "fail" and "converge on" not in (f.remedy or "")
        assert "job-family" in (f.remedy or "")
    changes = plan.get("a3-n", [])
    assert not [c for c in changes if c.startswith(("ops/kernels", "HDK"))], changes
    assert "CANN 8.3.RC2 -> 8.5.0" in changes  # the version-only components still converge


def test_fleet_help_names_the_multi_node_commands() -> None:
    """`cannenv fleet --help` shows a multi-node example beside collect/report/diff (docs/multinode.md)."""
    res = cannenv("fleet", "--help")
    assert res.returncode == 0
    assert "judge a multi-node job" in " ".join(res.stdout.split())
    assert "cannenv fleet job facts/ --nodes n1,n2" in res.stdout
    assert "cannenv fleet ranktable facts/ --nodes n1,n2 --out hccl.json" in res.stdout
