"""`cannenv provision` end to end: real Ansible over real SSH to container hosts, fixture installers.

Hosts (tests/helpers/provision.py; containers of the local engine, prefix ``cannenv-prov``):
``bare`` (no Ascend software), ``old`` (driver 24.1.rc1 + CANN 8.2.RC1, sourced at login),
``failing`` (bare, but its NNAL fixture installer fails half way), ``tampered`` (bare; provisioned
from a folder whose driver installer was altered). The target is a fixture stack with real
versions (CANN 8.5.0 in ``.zip`` packages, HDK 25.5.1, firmware 7.7.0.1.231, torch 2.8.0 +
torch_npu 2.8.0.post2 stand-ins) judged by the shipped matrix's rules.

The tests run in file order and share the hosts: --check first, then the tampered host, then the
run that stops for the firmware's (and the replaced driver's) reboot, a real restart of the
containers, the run that finishes, and a last run that has nothing to do.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import Fleet, docker, engine_problem, start_fleet, wait_ssh
from helpers.provision import FAIL_MARKER, STACK_ID, Artifacts, bare, make_artifacts, old_cann

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SPECS = (
    bare("bare"),
    old_cann("old"),
    bare("failing", **{FAIL_MARKER: "fixture: fail NNAL\n"}),
    bare("tampered"),
)


def cannenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=900, check=False
    )


@pytest.fixture(scope="module")
def fleet(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    problem = engine_problem()
    if problem:
        pytest.skip(f"provision hosts need Docker, ssh and ansible-runner: {problem}")
    work = tmp_path_factory.mktemp("provision")
    running = start_fleet(work, SPECS, label="cannenv-provision-test", prefix="cannenv-prov")
    try:
        yield running
    finally:
        running.remove()


@pytest.fixture(scope="module")
def art(fleet: Fleet) -> Artifacts:
    return make_artifacts(fleet.work)


def matrix_args(art: Artifacts) -> list[str]:
    from cannenv.resources import matrices_dir

    return ["--matrix", str(matrices_dir()), "--matrix", str(art.matrix)]


def provision(
    fleet: Fleet, art: Artifacts, out: str, *extra: str, folder: Path | None = None
) -> tuple[int, Any]:
    proc = cannenv(
        "provision",
        "-i",
        str(fleet.inventory),
        "--stack",
        STACK_ID,
        "--artifacts",
        str(folder or art.folder),
        *matrix_args(art),
        "--hdk",  # these containers stand in for machines: plan their driver and firmware too
        "--out",
        str(fleet.work / out),
        "--json",
        *extra,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def hosts(report: Any) -> dict[str, Any]:
    return {h["name"]: h for h in report["hosts"]}


def facts(fleet: Fleet, out: str, limit: str) -> dict[str, Any]:
    folder = fleet.work / out
    proc = cannenv("fleet", "collect", "-i", str(fleet.inventory), "--out", str(folder), "--limit", limit)
    assert proc.returncode == 0, proc.stderr
    got = {}
    for f in folder.glob("*.json"):
        if f.name != "collection.json":
            doc = json.loads(f.read_text())
            doc.pop("collected_at", None)
            got[f.stem] = doc
    return got


def saved(fleet: Fleet, out: str) -> dict[str, Any]:
    """Facts `provision --out` kept (before/ or after/), without their collection time."""
    got = {}
    for f in (fleet.work / out).glob("*.json"):
        if f.name != "collection.json":
            doc = json.loads(f.read_text())
            doc.pop("collected_at", None)
            got[f.stem] = doc
    return got


def test_check_changes_nothing(fleet: Fleet, art: Artifacts) -> None:
    code, report = provision(fleet, art, "run-check", "--check")
    before = saved(fleet, "run-check/before")
    assert code == 1 and report["check"] is True
    by = hosts(report)
    assert {(h["status"], h["cause"]) for h in by.values()} == {("not-run", "check")}
    comps = [s["component"] for s in by["bare"]["plan"]["steps"] if s["action"] != "leave"]
    assert comps == [
        "account",
        "driver",
        "firmware",
        "reboot",
        "cann",
        "ops",
        "nnal",
        "python-packages",
        "environment",
    ]
    assert facts(fleet, "facts-check-after", "all") == before


def test_tampered_installer_is_refused_before_anything_runs(fleet: Fleet, art: Artifacts) -> None:
    """Issue 31: the controller checks its copy against the plan's sha256 before any step runs
    anywhere: the host runs nothing (the role checks the digest on the host again after the copy)."""
    bad = fleet.work / "artifacts-tampered"
    shutil.copytree(art.folder, bad)
    driver = bad / art.files["driver"]
    driver.write_bytes(driver.read_bytes().replace(b"install success", b"install SUCCESS"))
    code, report = provision(fleet, art, "run-tampered", "--limit", "tampered", folder=bad)
    assert code == 1
    h = hosts(report)["tampered"]
    assert (h["status"], h["cause"], h["steps_done"]) == ("not-run", "controller", []), h
    assert f"{art.files['driver']} in --artifacts has sha256" in h["reason"]
    assert art.sha256["driver"] in h["reason"]
    assert not (fleet.work / "run-tampered" / "runner").exists()  # no playbook ran at all
    after = facts(fleet, "facts-tampered-after", "tampered")["tampered"]
    assert after["driver"] is None and after["firmware"] is None and after["cann"]["installs"] == []


def test_first_run_upgrades_the_old_host_and_stops_the_bare_ones_for_the_reboot(
    fleet: Fleet, art: Artifacts
) -> None:
    code, report = provision(fleet, art, "run-1", "--limit", "bare:old:failing", "--forks", "3")
    assert code == 1
    by = hosts(report)
    for name in ("bare", "failing"):  # driver and firmware installed; the firmware needs a reboot
        assert (by[name]["status"], by[name]["cause"]) == ("reboot-required", "planned-reboot"), by[name]
        assert by[name]["steps_done"] == [1, 2, 3] and by[name]["failed_step"] == 4
    # the old host (driver 24.1.rc1, firmware 7.7.0.1.231, CANN 8.2.RC1): the driver first, and a
    # restart (the replaced driver's kernel modules stay loaded until then; the firmware is already
    # the stack's, so no firmware step brings one); the new toolkit and the rest after it
    old = by["old"]
    steps = [s for s in old["plan"]["steps"] if s["action"] != "leave"]
    assert [(s["component"], s["action"]) for s in steps] == [
        ("account", "install"),
        ("driver", "upgrade"),
        ("reboot", "reboot"),
        ("cann", "upgrade"),
        ("ops", "install"),
        ("nnal", "install"),
        ("python-packages", "install"),
        ("environment", "install"),
    ]
    assert "--upgrade" in steps[1]["commands"][0]
    assert "8.2.RC1 stays side by side" in steps[3]["summary"]
    assert (old["status"], old["cause"]) == ("reboot-required", "planned-reboot"), old
    assert old["steps_done"] == [1, 2]
    # not restarted yet: the next run refuses exactly these hosts, nothing runs there
    code, report = provision(fleet, art, "run-1b", "--limit", "bare:old:failing", "--forks", "3")
    assert code == 1
    assert {(h["status"], h["cause"]) for h in report["hosts"]} == {("reboot-required", "awaiting-reboot")}
    after = saved(fleet, "run-1/after")["old"]
    assert after["driver"]["version"] == "25.5.1" and after["firmware"]["version"] == "7.7.0.1.231"


def test_after_a_reboot_the_run_finishes_and_a_failing_host_stops(fleet: Fleet, art: Artifacts) -> None:
    for h in fleet.hosts:
        if h.spec.name in ("bare", "failing", "old"):
            docker("restart", "-t", "1", h.container)
    for h in fleet.hosts:
        if h.spec.name in ("bare", "failing", "old"):
            wait_ssh(h.port)
    code, report = provision(fleet, art, "run-2", "--limit", "bare:old:failing", "--forks", "3")
    assert code == 1  # the failing host
    by = hosts(report)
    old = by["old"]  # the driver is in place: the new toolkit beside the old one, and the rest
    old_steps = [(s["component"], s["action"]) for s in old["plan"]["steps"] if s["action"] != "leave"]
    assert old_steps == [
        ("cann", "upgrade"),
        ("ops", "install"),
        ("nnal", "install"),
        ("python-packages", "install"),
        ("environment", "install"),
    ]
    assert old["status"] == "done" and old["doctor_failures"] == [] and old["remaining"] == 0, old
    assert (by["bare"]["status"], by["bare"]["cause"]) == ("done", "ran"), by["bare"]
    assert by["bare"]["doctor_failures"] == [] and by["bare"]["remaining"] == 0
    bare_steps = [s["component"] for s in by["bare"]["plan"]["steps"] if s["action"] != "leave"]
    assert bare_steps == ["cann", "ops", "nnal", "python-packages", "environment"]
    fail = by["failing"]
    assert (fail["status"], fail["cause"], fail["failed_component"]) == ("failed", "step-failed", "nnal"), (
        fail
    )
    assert fail["failed_step"] == 3 and fail["steps_done"] == [1, 2]  # toolkit and ops; nothing after NNAL
    assert any("fixture failure half way" in line for line in fail["log_tail"]), fail

    after = saved(fleet, "run-2/after")
    assert sorted(i["version"] for i in after["old"]["cann"]["installs"]) == ["8.2.RC1", "8.5.0"]
    links = after["old"]["cann"]["links"]
    assert links["/usr/local/Ascend/ascend-toolkit/latest"] == "/usr/local/Ascend/cann-8.5.0"
    assert after["old"]["python"]["packages"]["torch-npu"] == "2.8.0.post2"
    assert after["bare"]["python"]["packages"]["torch-npu"] == "2.8.0.post2"
    assert after["failing"]["python"]["packages"].get("torch-npu") is None
    doctor = cannenv(
        "doctor",
        "--facts",
        str(fleet.work / "run-2" / "after" / "bare.json"),
        "--stack",
        STACK_ID,
        *matrix_args(art),
        "--no-devices",
        "--json",
    )
    assert doctor.returncode == 0, doctor.stdout


def test_provisioning_again_does_nothing_and_refuses_the_half_installed_host(
    fleet: Fleet, art: Artifacts
) -> None:
    code, report = provision(fleet, art, "run-3", "--limit", "bare:old")
    assert code == 0, report
    assert {h["name"]: (h["status"], h["cause"]) for h in report["hosts"]} == {
        "bare": ("done", "nothing-to-do"),
        "old": ("done", "nothing-to-do"),
    }
    # the failing host's NNAL was left half way: never continue onto it
    code, report = provision(fleet, art, "run-4", "--limit", "failing")
    h = hosts(report)["failing"]
    assert code == 1 and (h["status"], h["cause"]) == ("not-run", "half-installed"), h
    assert "step 3: nnal" in h["reason"] and h["steps_done"] == []
