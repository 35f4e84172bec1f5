"""Reboot pending (issue 31 point 4): a loaded driver unlike the installed one is one judgement —
the doctor's ``driver-loaded`` check, a reboot step in the plan, ``fleet report``, the node label
and the node metric all say it, from :func:`cannenv.checks.policy.reboot_pending`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cannenv import checks
from cannenv.checks.policy import reboot_pending, reboot_unknown
from cannenv.checks.stack import choose_target
from cannenv.facts import DeviceFacts, DriverFacts, Facts
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.plan import compute_plan
from cannenv.probes import collect
from cannenv.report import reboot_pending as reboot_word
from tests.helpers import hosts
from tests.helpers.cli import cannenv

DRIVER = "/usr/local/Ascend/driver/version.info"


def _facts(installed: str | None, loaded: str | None, module: str | None = None) -> Facts:
    return Facts(
        driver=DriverFacts(path=DRIVER, version=installed) if installed else None,
        devices=DeviceFacts(
            driver_version=loaded, module_version=module, module_version_source="/sys/module/x/version"
        ),
    )


@pytest.mark.parametrize(
    ("installed", "loaded", "module", "status"),
    [
        ("25.5.1", "25.3.rc1", None, "fail"),  # upgraded, not restarted
        ("24.1.rc2.2", "25.3.rc1", None, "fail"),  # downgraded, not restarted
        ("25.5.1", "25.5.1", None, "pass"),
        ("25.0.rc1", "25.0.rc1.b033", None, "pass"),  # a build suffix on one side: the same release
        ("25.0.rc1.1", "25.0.rc1.b033", None, "fail"),  # another hot patch is another driver
        ("25.5.1", None, "25.3.rc1", "fail"),  # the kernel module's version where npu-smi is silent
        ("25.5.1", None, None, "skip"),
        (None, "25.5.1", None, "skip"),
        # unparsable: neither an alarm nor a pass (it was not compared): unknown
        ("25.5.1", "not-a-version", None, "skip"),
    ],
)
def test_driver_loaded_check(
    installed: str | None, loaded: str | None, module: str | None, status: str
) -> None:
    f = _facts(installed, loaded, module)
    (finding,) = checks.run(f, checks.Target(), checks.select(["driver-loaded"]))
    assert finding.status == status, finding.detail
    if status == "fail":
        assert finding.detail.startswith("reboot pending: ") and "restart the node" in (finding.remedy or "")
    assert (reboot_pending(f) is not None) == (status == "fail")
    # a skip is "unknown", with the reason, in the finding and in every view reading it
    assert (reboot_unknown(f) is not None) == (status == "skip")
    if status == "skip" and installed is not None:  # else the cause (no driver) is named instead
        assert finding.detail == f"reboot pending unknown: {reboot_unknown(f)}"
    word = {"fail": "true", "pass": "false", "skip": "unknown"}[status]
    assert reboot_word([finding]) == word


def test_reboot_pending_of_findings_is_false_only_for_a_pass() -> None:
    """Label, metric and fleet report read the findings: only a pass of driver-loaded is "false"."""
    from cannenv.checks.hdk import DRIVER_LOADED

    other = checks.select(["driver-installed"])[0]
    assert reboot_word([]) == "unknown"  # the check did not run
    assert reboot_word([other.finding("pass")]) == "unknown"
    assert reboot_word([DRIVER_LOADED.finding("error", "broken")]) == "unknown"
    assert reboot_word([DRIVER_LOADED.finding("skip", "x")]) == "unknown"
    assert reboot_word([DRIVER_LOADED.finding("pass")]) == "false"
    assert reboot_word([DRIVER_LOADED.finding("fail"), DRIVER_LOADED.finding("pass")]) == "true"


def test_example_host_reboot_pending_fails_in_doctor_plan_report_label_and_metric(tmp_path: Path) -> None:
    tree = hosts.reboot_pending(tmp_path / "tree")
    env_file = tmp_path / "host.env"
    tree.env_file(env_file)
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert facts.driver and facts.driver.version == "25.5.1"
    assert facts.devices.driver_version == "25.3.rc1"
    target = choose_target(facts, load())
    fs = checks.run(facts, target)
    (loaded,) = [x for x in fs if x.id == "driver-loaded"]
    assert loaded.status == "fail" and "driver 25.3.rc1 is loaded" in loaded.detail
    # every other check passes: the reboot is the only thing between this node and compliant
    assert [x.id for x in fs if x.status in ("fail", "error", "warn")] == ["driver-loaded"]

    plan = compute_plan(facts, target)
    (step,) = plan.actions
    assert step.action == "reboot" and "reboot pending" in step.summary and plan.reboot_required

    # the doctor's JSON carries the loaded driver; the label and the metric say reboot pending
    r = cannenv(
        "doctor", "--root", str(tree.root), "--env-file", str(env_file), "--json",
        "--prometheus", str(tmp_path / "node.prom"),
    )  # fmt: skip
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["host"]["driver_loaded"] == "25.3.rc1" and report["host"]["driver"] == "25.5.1"
    from cannenv.fleet.k8s import node_labels

    labels = node_labels(report)
    assert labels["cannenv.io/reboot-pending"] == "true" and labels["cannenv.io/status"] == "failing"
    prom = (tmp_path / "node.prom").read_text()
    assert "\ncannenv_reboot_pending 1\n" in prom
    assert 'cannenv_check_status{check="driver-loaded",severity="high"} 2' in prom

    # fleet report: the node is failing with driver-loaded, named
    facts_dir = tmp_path / "facts"
    facts_dir.mkdir()
    (facts_dir / "n1.json").write_text(facts.to_json())
    r = cannenv("fleet", "report", str(facts_dir), "--json")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["nodes"][0]["status"] == "failing"
    (group,) = out["groups"]
    assert group["check"] == "driver-loaded" and group["observed"].startswith("reboot pending")


def test_no_reboot_step_when_driver_matches(tmp_path: Path) -> None:
    tree = hosts.a2_cann85_new(tmp_path)
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    plan = compute_plan(facts, choose_target(facts, load()))
    assert plan.empty and not plan.reboot_required


def test_every_shipped_example_loads_the_driver_it_installs() -> None:
    """The example trees' npu-smi captures are real outputs of the driver each tree installs (where
    a capture of it exists): only the reboot-pending example shows another driver loaded."""
    for name, build in hosts.SCENARIOS.items():
        root = Path(__file__).resolve().parents[2] / "examples" / "hosts" / name / "tree"
        facts = collect(Host(root, {"PATH": "/usr/local/bin:/usr/bin:/bin"}, True, 5.0))
        assert (reboot_pending(facts) is not None) == (name == "broken-reboot-pending"), name
        capture = root / "var/lib/cannenv/npu-smi-info.txt"
        if capture.exists():  # a real capture, as captured (never one with its version lines changed)
            real = {p.read_text() for p in hosts.NPU_SMI_DATA.glob("*_info.txt")}
            assert capture.read_text() in real, name
        del build


def test_kernel_module_version_is_read_only_when_it_is_a_driver_version(tmp_path: Path) -> None:
    tree = hosts.HostTree(tmp_path).os_release().driver(hosts.driver_like_25_3("25.5.1"))
    tree.write("/sys/module/drv_davinci_intf_host/version", "1.0\n")  # not a driver version
    tree.write("/sys/module/drv_devmng_host/version", "25.3.rc1\n")
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert facts.devices.module_version == "25.3.rc1"
    assert facts.devices.module_version_source == "/sys/module/drv_devmng_host/version"
    assert reboot_pending(facts) == ("25.3.rc1", "25.5.1", "/sys/module/drv_devmng_host/version")


def test_the_agent_sees_a_reboot_pending_through_the_kernel_modules_it_mounts(tmp_path: Path) -> None:
    """The DaemonSet's agent never runs npu-smi, and a node keeps no capture of its output: the
    manifest mounts /sys/module (read-only, every role), where the loaded driver's modules tell their
    version, so the agent's label and metric say "reboot pending" as the doctor and fleet report do."""
    from cannenv.fleet.k8s import host_paths

    for role in ("full", "hdk"):
        assert {"path": "/sys/module", "type": "Directory"} in host_paths(role)
    tree = hosts.a2_cann85_new(tmp_path / "tree")
    (tree.root / hosts.CAPTURE_INFO.lstrip("/")).unlink()  # what the agent sees of a node: no capture

    def agent(name: str) -> tuple[dict[str, str], str]:
        prom = tmp_path / f"{name}.prom"
        r = cannenv(
            "fleet", "k8s-agent", "--root", str(tree.root), "--node", name,
            "--stack", "a2-cann8.5.0-torch2.8.0-py3.11", "--prometheus", str(prom), "--once", "--dry-run",
        )  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
        return json.loads(r.stdout.splitlines()[-1])["metadata"]["labels"], prom.read_text()

    labels, prom = agent("before")  # nothing tells the loaded driver: unknown, never "false"
    assert labels["cannenv.io/reboot-pending"] == "unknown" and "\ncannenv_reboot_pending " not in prom
    assert 'cannenv_check_status{check="driver-loaded",severity="high"} -1' in prom
    tree.write("/sys/module/drv_devmng_host/version", "25.5.1\n")  # the installed driver is loaded
    labels, prom = agent("booted")
    assert labels["cannenv.io/reboot-pending"] == "false" and "\ncannenv_reboot_pending 0\n" in prom
    tree.write("/sys/module/drv_devmng_host/version", "25.3.rc1\n")  # upgraded to 25.5.1, not restarted
    labels, prom = agent("after")
    assert labels["cannenv.io/reboot-pending"] == "true" and "\ncannenv_reboot_pending 1\n" in prom


def _unknown_tree(root: Path) -> hosts.HostTree:
    """A healthy A2 (driver 25.5.1 installed) where nothing tells the loaded driver: no npu-smi
    capture, no driver kernel module version — what the DaemonSet's agent sees of many nodes."""
    tree = hosts.a2_cann85_new(root)
    (tree.root / hosts.CAPTURE_INFO.lstrip("/")).unlink()
    return tree


def test_an_unknown_loaded_driver_is_unknown_in_doctor_plan_label_and_metric(tmp_path: Path) -> None:
    """Nothing tells the loaded driver: the doctor skips driver-loaded saying "reboot pending
    unknown" and why, the plan notes it (no reboot planned, none ruled out), the label says
    ``unknown`` and the metric has no sample — never "false" / 0, which would be a false pass."""
    tree = _unknown_tree(tmp_path / "tree")
    env_file = tmp_path / "host.env"
    tree.env_file(env_file)
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert facts.driver and facts.driver.version == "25.5.1" and facts.devices.driver_version is None
    why = reboot_unknown(facts)
    assert why is not None and "nothing tells which driver is loaded" in why

    # the stack named: with no npu-smi answer the family alone would be a guess (no HDK planned)
    target = choose_target(facts, load(), stack_id="a2-cann8.5.0-torch2.8.0-py3.11")
    plan = compute_plan(facts, target, hdk="yes")
    assert plan.empty and not plan.reboot_required
    assert [n for n in plan.notes if n.startswith("reboot pending unknown: ")] == [
        f"reboot pending unknown: {why}; no restart is planned for it, none is ruled out"
    ]

    prom_file = tmp_path / "node.prom"
    r = cannenv(
        "doctor", "--root", str(tree.root), "--env-file", str(env_file), "--json",
        "--prometheus", str(prom_file),
    )  # fmt: skip
    doc = json.loads(r.stdout)
    (loaded,) = [x for x in doc["findings"] if x["id"] == "driver-loaded"]
    assert (loaded["status"], loaded["detail"]) == ("skip", f"reboot pending unknown: {why}")
    assert "npu-smi-info.txt" in loaded["remedy"]
    assert doc["host"]["driver_loaded"] is None

    from cannenv.fleet.k8s import node_labels

    assert node_labels(doc)["cannenv.io/reboot-pending"] == "unknown"
    prom = prom_file.read_text()
    assert "# TYPE cannenv_reboot_pending gauge\n" in prom and "no sample when" in prom
    assert not [line for line in prom.splitlines() if line.startswith("cannenv_reboot_pending")]
    assert 'cannenv_check_status{check="driver-loaded",severity="high"} -1\n' in prom
    promtool = shutil.which("promtool")
    if promtool:  # a family with HELP and TYPE but no sample is valid exposition text
        check = subprocess.run(
            [promtool, "check", "metrics"], input=prom, capture_output=True, text=True, check=False
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_fleet_report_says_pending_not_pending_and_unknown_per_node(tmp_path: Path) -> None:
    """Three nodes — reboot pending, the installed driver loaded, nothing telling the loaded one —
    read true / false / unknown in the JSON, the text, the HTML page, each node's metrics and the
    fleet gauges; the unknown one is never counted "not pending"."""
    facts_dir = tmp_path / "facts"
    facts_dir.mkdir()
    trees = (("pending", hosts.reboot_pending), ("loaded", hosts.a2_cann85_new), ("unknown", _unknown_tree))
    for name, build in trees:
        tree = build(tmp_path / name)
        facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
        (facts_dir / f"{name}.json").write_text(facts.to_json())
    metrics, gauges, html = tmp_path / "metrics", tmp_path / "fleet.prom", tmp_path / "report.html"
    r = cannenv(
        "fleet", "report", str(facts_dir), "--json", "--node-metrics", str(metrics),
        "--prometheus", str(gauges), "--html", str(html),
    )  # fmt: skip
    assert r.returncode == 1, r.stdout + r.stderr  # the pending node fails
    doc = json.loads(r.stdout)
    by_name = {n["name"]: n for n in doc["nodes"]}
    assert {k: n["reboot_pending"] for k, n in by_name.items()} == {
        "pending": "true",
        "loaded": "false",
        "unknown": "unknown",
    }

    # each node's metrics: 1, 0, and no sample
    def sample(name: str) -> list[str]:
        text = (metrics / f"{name}.prom").read_text()
        return [line for line in text.splitlines() if line.startswith("cannenv_reboot_pending")]

    assert (sample("pending"), sample("loaded"), sample("unknown")) == (
        ["cannenv_reboot_pending 1"],
        ["cannenv_reboot_pending 0"],
        [],
    )
    fleet = gauges.read_text()
    for state, n in (("true", 1), ("false", 1), ("unknown", 1)):
        assert f'cannenv_fleet_reboot_pending_nodes{{state="{state}"}} {n}\n' in fleet

    # the text: the counts, and the unknown node named with why
    text = cannenv("fleet", "report", str(facts_dir)).stdout
    assert "reboot pending: 1 node(s), not pending: 1, unknown: 1\n" in text
    assert "UNKNOWN driver-loaded: 1 node(s): reboot pending unknown: nothing tells which driver" in text
    assert "      nodes: unknown\n" in text

    # the page: per node its word, driver-loaded's cell ✗ / ✓ / ?, and the unknown one listed with why
    page = html.read_text()
    for name, word, mark in (("pending", "true", "✗"), ("loaded", "false", "✓"), ("unknown", "unknown", "?")):
        row = page.split(f'<tr data-node="{name}" data-reboot="{word}">', 1)[1].split("</tr>", 1)[0]
        cell = row.split('data-check="driver-loaded"', 1)[1].split("</td>", 1)[0]
        assert cell.endswith(f"{mark}</a>" if word == "true" else mark), cell
    assert 'id="reboot-unknown"' in page and "nothing tells which driver is loaded" in page
