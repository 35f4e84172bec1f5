"""Reboot pending (issue 31 point 4): a loaded driver unlike the installed one is one judgement —
the doctor's ``driver-loaded`` check, a reboot step in the plan, ``fleet report``, the node label
and the node metric all say it, from :func:`cannenv.checks.policy.reboot_pending`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cannenv import checks
from cannenv.checks.policy import reboot_pending
from cannenv.checks.stack import choose_target
from cannenv.facts import DeviceFacts, DriverFacts, Facts
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.plan import compute_plan
from cannenv.probes import collect
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
        ("25.5.1", "not-a-version", None, "pass"),  # unparsable says nothing: never a false alarm
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

    labels, prom = agent("before")  # nothing tells the loaded driver
    assert labels["cannenv.io/reboot-pending"] == "false" and "\ncannenv_reboot_pending 0\n" in prom
    tree.write("/sys/module/drv_devmng_host/version", "25.3.rc1\n")  # upgraded to 25.5.1, not restarted
    labels, prom = agent("after")
    assert labels["cannenv.io/reboot-pending"] == "true" and "\ncannenv_reboot_pending 1\n" in prom
