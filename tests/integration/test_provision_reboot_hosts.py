"""Issue 31 over SSH: the vendor's HDK order as the installers really ran on the hosts, and a driver
upgraded without a reboot seen as "reboot pending" in every view until the node restarts.

Two Atlas A2 hosts (containers of the local engine, prefix ``cannenv-hdk``; real Ansible over real
SSH), each with the FIXTURE "driver loaded at boot" (tests/helpers/fleet_hosts.py,
``driver_loaded_at_boot``): at every start of the container the installed driver's version becomes
the loaded one and the fake npu-smi's header names it until the next start, so ``docker restart``
is the node's reboot.

* ``upgrade``: driver 24.1.rc1 and firmware 7.1.0.11.220, both older than the target's, and CANN
  8.2.RC1 sourced at login — an overwrite installation (the vendor: firmware → driver → CANN);
* ``first``: no Ascend software (no driver, so no npu-smi yet) — a first installation (driver →
  firmware).

The target is the fixture A2 stack (tests/helpers/provision.py: driver 25.5.1, firmware 7.7.0.1.231,
CANN 8.5.0 from ``.zip`` packages), whose fixture installers note each run on the host
(``RUN_LOG``), read back with ``docker exec``. The tests run in file order and share the hosts:
a reviewed plan (``plan --out``, ``provision --plan``) runs the HDK and stops for the reboot
(no ``--reboot``); collected again, the upgraded host is "reboot pending" in doctor, plan,
``fleet report`` (its node metrics and fleet gauges) and the agent's label and metric; restarted, it
is not, and a second reviewed plan finishes CANN, leaving both hosts compliant in every view.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import (
    BOOT,
    DRIVER_24_1_RC1,
    Fleet,
    HostSpec,
    docker,
    driver_loaded_at_boot,
    engine_problem,
    start_fleet,
    wait_ssh,
)
from helpers.hosts import FIRMWARE_7_1_0_11
from helpers.provision import PIP_CONF, RUN_LOG, STACK_ID, _pip_wheel, make_artifacts

from cannenv.checks.cann import CANN_PYTHON_DEPS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"
sys.path.insert(0, str(FIXTURES))
from fixture_stack import standin_wheel  # noqa: E402

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

NAMES = ("upgrade", "first")
HDK_CHECKS = ("driver-installed", "driver-loaded", "driver-cann", "firmware-driver")
"""The device checks a container host can pass (no NPU device nodes): the driver's and firmware's."""
PENDING = "reboot pending: driver 24.1.rc1 is loaded (per npu-smi info's header) but 25.5.1 is installed"
# the fixture installers' package names, as they note them in RUN_LOG
DRIVER, FIRMWARE = "Ascend-hdk-910b-npu-driver", "Ascend-hdk-910b-npu-firmware"
TOOLKIT, OPS, NNAL = "Ascend-cann-toolkit", "Ascend-cann-910b-ops", "Ascend-cann-nnal"


def _specs() -> tuple[HostSpec, ...]:
    boot = driver_loaded_at_boot("a2")
    upgrade = HostSpec(
        "upgrade",
        driver=DRIVER_24_1_RC1,
        boot=BOOT,
        extra={
            **boot,
            "/usr/local/Ascend/firmware/version.info": FIRMWARE_7_1_0_11,
            "/etc/pip.conf": PIP_CONF,
        },
    )
    first = HostSpec("first", bare=True, boot=BOOT, extra={**boot, "/etc/pip.conf": PIP_CONF})
    return upgrade, first


def cannenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=900, check=False
    )


@pytest.fixture(scope="module")
def fleet(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    problem = engine_problem()
    if problem:
        pytest.skip(f"provision hosts need Docker, ssh and ansible-runner: {problem}")
    work = tmp_path_factory.mktemp("hdk-reboot")
    running = start_fleet(work, _specs(), label="cannenv-hdk-test", prefix="cannenv-hdk")
    try:
        # CANN's own Python dependencies, as a host image carries them (stand-in wheels); the
        # upgraded host has the account its installed driver needed
        pre = work / "pre"
        for dist in CANN_PYTHON_DEPS:
            module = {"pyyaml": "yaml", "absl-py": "absl", "protobuf": "google_protobuf_standin"}
            standin_wheel(pre, dist, "1.0", module.get(dist, dist.replace("-", "_")))
        _pip_wheel(pre)
        for h in running.hosts:
            subprocess.run(["docker", "cp", str(pre), f"{h.container}:/tmp/pre"], check=True, timeout=120)
            account = (
                "groupadd HwHiAiUser && useradd -g HwHiAiUser -m HwHiAiUser -s /bin/bash; "
                if h.spec.name == "upgrade"
                else ""
            )
            script = (
                f"set -e; {account}PYTHONPATH=$(ls /tmp/pre/pip-*.whl) python3 -m pip install -q "
                f"--no-index --find-links /tmp/pre {' '.join(CANN_PYTHON_DEPS)}; rm -rf /tmp/pre"
            )
            docker("exec", h.container, "bash", "-c", script, timeout=300)
        yield running
    finally:
        running.remove()


@pytest.fixture(scope="module")
def artifacts(fleet: Fleet) -> Path:
    return make_artifacts(fleet.work, run_log=RUN_LOG).folder


def _mx(fleet: Fleet) -> tuple[str, ...]:
    from cannenv.resources import matrices_dir

    return ("--matrix", str(matrices_dir()), "--matrix", str(fleet.work / "fixture-stack.yaml"))


def _container(fleet: Fleet, name: str) -> str:
    return next(h.container for h in fleet.hosts if h.spec.name == name)


def _ran(fleet: Fleet, name: str) -> list[str]:
    """The fixture installers that ran on the host, in order: their package names."""
    proc = docker("exec", _container(fleet, name), "cat", RUN_LOG, check=False)
    return [line.split()[0] for line in proc.stdout.splitlines()]


def _collect(fleet: Fleet, out: str) -> Path:
    folder = fleet.work / out
    proc = cannenv("fleet", "collect", "-i", str(fleet.inventory), "--out", str(folder), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return folder


def _reviewed_run(
    fleet: Fleet, artifacts: Path, facts: Path, name: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`plan --out` for the collected facts, then `provision --plan` of exactly that file (no
    --reboot): (the plans by host, the rollout's report by host)."""
    plan_file = fleet.work / f"{name}.json"
    proc = cannenv(
        "plan", "--facts", str(facts), "--stack", STACK_ID, *_mx(fleet), "--hdk", "--offline",
        "--out", str(plan_file),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # steps to run
    plans = {p["host"]: p for p in json.loads(plan_file.read_text())["plans"]}
    proc = cannenv(
        "provision", "-i", str(fleet.inventory), "--plan", str(plan_file), "--artifacts", str(artifacts),
        *_mx(fleet), "--out", str(fleet.work / f"run-{name}"), "--json",
    )  # fmt: skip
    assert proc.stdout, proc.stderr
    return plans, {h["name"]: h for h in json.loads(proc.stdout)["hosts"]}


def _acting(plan: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["component"], s["action"]) for s in plan["steps"] if s["action"] != "leave"]


def _checks() -> str:
    from cannenv import checks

    return ",".join([*(c.id for c in checks.all_checks() if c.scope == "software"), *HDK_CHECKS])


def _agent(fleet: Fleet, name: str, tree: Path) -> tuple[dict[str, str], str]:
    """`fleet k8s-agent --once --dry-run` on a copy of the host's tree, with the host's `npu-smi
    info` captured now where a tree carries it (docs/doctor.md): (its labels, its metrics)."""
    container = _container(fleet, name)
    for path in ("/usr/local/Ascend", "/etc", "/usr/lib/os-release", "/usr/local/lib/python3.11"):
        (tree / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["docker", "cp", "-L", f"{container}:{path}", str(tree / path.lstrip("/"))],
            check=True,
            timeout=120,
        )
    captures = tree / "var/lib/cannenv"
    captures.mkdir(parents=True)
    info = docker("exec", container, "npu-smi", "info").stdout
    (captures / "npu-smi-info.txt").write_text(info)
    board = docker("exec", container, "npu-smi", "info", "-t", "board", "-i", "0", "-c", "0")
    (captures / "npu-smi-board.txt").write_text(board.stdout)
    (tree / "dev").mkdir()
    for dev in ("davinci0", "davinci_manager", "devmm_svm", "hisi_hdc"):  # FIXTURE device stand-ins
        (tree / "dev" / dev).write_text("")
    metrics = tree.parent / f"{tree.name}.prom"
    agent = cannenv(
        "fleet", "k8s-agent", "--root", str(tree), "--node", name, "--stack", STACK_ID, *_mx(fleet),
        "--prometheus", str(metrics), "--once", "--dry-run",
    )  # fmt: skip
    assert agent.returncode == 0, agent.stdout + agent.stderr
    labels: dict[str, str] = json.loads(agent.stdout.splitlines()[-1])["metadata"]["labels"]
    return labels, metrics.read_text()


def test_a_reviewed_plan_runs_the_vendors_hdk_order_and_stops_for_the_reboot(
    fleet: Fleet, artifacts: Path
) -> None:
    before = _collect(fleet, "before")
    plans, report = _reviewed_run(fleet, artifacts, before, "plan-hdk")
    rest = [
        ("cann", "upgrade"),
        ("ops", "install"),
        ("nnal", "install"),
        ("python-packages", "install"),
        ("environment", "install"),
    ]
    # an overwrite installation (a driver installed): firmware, then driver, then CANN
    assert _acting(plans["upgrade"]) == [
        ("firmware", "upgrade"),
        ("driver", "upgrade"),
        ("reboot", "reboot"),
        *rest,
    ], plans["upgrade"]
    # a first installation (no driver): driver, then firmware
    assert _acting(plans["first"]) == [
        ("account", "install"),
        ("driver", "install"),
        ("firmware", "install"),
        ("reboot", "reboot"),
        ("cann", "install"),
        *rest[1:],
    ], plans["first"]
    for name, steps_done in (("upgrade", [1, 2]), ("first", [1, 2, 3])):  # stopped at the reboot step
        h = report[name]
        assert (h["status"], h["cause"], h["steps_done"]) == (
            "reboot-required",
            "planned-reboot",
            steps_done,
        ), h
    # what really ran on each host, in order (read back from the host)
    assert _ran(fleet, "upgrade") == [FIRMWARE, DRIVER]
    assert _ran(fleet, "first") == [DRIVER, FIRMWARE]


def test_without_a_reboot_every_view_says_reboot_pending_until_the_restart(fleet: Fleet) -> None:
    pending = _collect(fleet, "pending")
    facts = json.loads((pending / "upgrade.json").read_text())
    assert (facts["driver"]["version"], facts["devices"]["driver_version"]) == ("25.5.1", "24.1.rc1")
    # doctor
    doctor = cannenv(
        "doctor", "--facts", str(pending / "upgrade.json"), "--stack", STACK_ID, *_mx(fleet),
        "--check", "driver-loaded",
    )  # fmt: skip
    assert doctor.returncode == 1 and PENDING in doctor.stdout, doctor.stdout + doctor.stderr
    # plan: the restart first, then what the rollout still owes
    proc = cannenv("plan", "--facts", str(pending), "--stack", STACK_ID, *_mx(fleet), "--hdk", "--json")
    plans = {p["host"]: p for p in json.loads(proc.stdout)["plans"]}
    step = next(s for s in plans["upgrade"]["steps"] if s["action"] != "leave")
    assert (
        step["component"] == "reboot"
        and "reboot pending — driver 25.5.1 is installed but 24.1.rc1" in (step["summary"])
    ), plans["upgrade"]
    # fleet report: the group, the node's metrics and the fleet's gauges
    node_metrics = fleet.work / "pending-metrics"
    gauges = fleet.work / "pending-fleet.prom"
    report = cannenv(
        "fleet", "report", str(pending), "--stack", STACK_ID, *_mx(fleet), "--check", _checks(),
        "--node-metrics", str(node_metrics), "--prometheus", str(gauges), "--json",
    )  # fmt: skip
    assert report.returncode == 1, report.stdout + report.stderr
    doc = json.loads(report.stdout)
    assert {n["name"]: n["status"] for n in doc["nodes"]}["upgrade"] == "failing"
    (group,) = [g for g in doc["groups"] if g["check"] == "driver-loaded"]
    assert (group["status"], group["nodes"]) == ("fail", ["upgrade"]) and PENDING in group["observed"], group
    assert "\ncannenv_reboot_pending 1\n" in (node_metrics / "upgrade.prom").read_text()
    assert (
        'cannenv_fleet_check_failing_nodes{check="driver-loaded",severity="high"} 1\n' in gauges.read_text()
    )
    # the bare host got its first driver and has not started since: nothing tells its loaded driver
    # (no npu-smi before a start with a driver), so it is unknown — never "not pending" — in the
    # report, its metrics (no sample), the fleet gauges and the plan
    first = json.loads((pending / "first.json").read_text())
    assert (first["driver"]["version"], first["devices"]["driver_version"]) == ("25.5.1", None)
    said = {n["name"]: n["reboot_pending"] for n in doc["nodes"]}
    assert said == {"upgrade": "true", "first": "unknown"}, said
    assert "\ncannenv_reboot_pending " not in (node_metrics / "first.prom").read_text()
    for state, n in (("true", 1), ("false", 0), ("unknown", 1)):
        assert f'cannenv_fleet_reboot_pending_nodes{{state="{state}"}} {n}\n' in gauges.read_text()
    assert any(n.startswith("reboot pending unknown: ") for n in plans["first"]["notes"]), plans["first"]
    # the DaemonSet's agent: its label and its metric
    labels, metrics = _agent(fleet, "upgrade", fleet.work / "agent-pending")
    assert labels["cannenv.io/reboot-pending"] == "true", labels
    assert "\ncannenv_reboot_pending 1\n" in metrics

    # the reboot: the kernel loads the installed driver
    for h in fleet.hosts:
        docker("restart", "-t", "1", h.container)
    for h in fleet.hosts:
        wait_ssh(h.port)
    booted = _collect(fleet, "booted")
    for name in NAMES:
        facts = json.loads((booted / f"{name}.json").read_text())
        assert (facts["driver"]["version"], facts["devices"]["driver_version"]) == ("25.5.1", "25.5.1")
        doctor = cannenv(
            "doctor", "--facts", str(booted / f"{name}.json"), "--stack", STACK_ID, *_mx(fleet),
            "--check", "driver-loaded", "--verbose",
        )  # fmt: skip
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "driver 25.5.1 loaded (npu-smi info's header) is the installed 25.5.1" in doctor.stdout


def test_after_the_restart_the_rollout_finishes_and_every_view_is_compliant(
    fleet: Fleet, artifacts: Path
) -> None:
    plans, report = _reviewed_run(fleet, artifacts, fleet.work / "booted", "plan-cann")
    for name in NAMES:  # the HDK is the stack's and loaded: no reboot left, CANN and the rest
        comps = [c for c, _ in _acting(plans[name])]
        assert comps == ["cann", "ops", "nnal", "python-packages", "environment"], plans[name]
        h = report[name]
        assert (h["status"], h["cause"], h["remaining"], h["doctor_failures"]) == ("done", "ran", 0, []), h
    assert _ran(fleet, "upgrade") == [FIRMWARE, DRIVER, TOOLKIT, OPS, NNAL]
    assert _ran(fleet, "first") == [DRIVER, FIRMWARE, TOOLKIT, OPS, NNAL]

    after = fleet.work / "run-plan-cann" / "after"
    node_metrics = fleet.work / "after-metrics"
    report_proc = cannenv(
        "fleet", "report", str(after), "--stack", STACK_ID, *_mx(fleet), "--check", _checks(),
        "--node-metrics", str(node_metrics), "--json",
    )  # fmt: skip
    assert report_proc.returncode == 0, report_proc.stdout + report_proc.stderr
    nodes = json.loads(report_proc.stdout)["nodes"]
    assert {n["name"]: n["status"] for n in nodes} == dict.fromkeys(NAMES, "compliant")
    assert {n["name"]: n["reboot_pending"] for n in nodes} == dict.fromkeys(NAMES, "false")
    for name in NAMES:
        assert "\ncannenv_reboot_pending 0\n" in (node_metrics / f"{name}.prom").read_text()
        doctor = cannenv(
            "doctor", "--facts", str(after / f"{name}.json"), "--stack", STACK_ID, *_mx(fleet),
            "--check", _checks(),
        )  # fmt: skip
        assert doctor.returncode == 0, doctor.stdout
        labels, metrics = _agent(fleet, name, fleet.work / f"agent-after-{name}")
        assert (labels["cannenv.io/status"], labels["cannenv.io/reboot-pending"]) == ("compliant", "false"), (
            labels
        )
        assert "\ncannenv_reboot_pending 0\n" in metrics
