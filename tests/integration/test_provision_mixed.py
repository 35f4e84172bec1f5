"""A mixed fleet end to end (issue 22): an Atlas A2, an A3 and a 310P host as SSH containers, each
with its shipped stack (matrices/stacks.yaml) as its own target, real Ansible over real SSH.

FIXTURES: the hosts' driver files and replayed ``npu-smi`` output (tests/data/npu_smi/SOURCES.md),
stand-in wheels for CANN's Python dependencies, and the CANN toolkit and ops/kernels laid down by
the fixture installers
(tests/fixtures/cann_installer: named like the vendor's files, not CANN) before the test; provision
then adds what each stack still needs (NNAL from a fixture installer, stand-in torch/torch_npu
wheels, the environment). The shipped stacks pin the vendor's toolkit digests, so the toolkit is
never provisioned here — it is installed first, as a host image would carry it.

Shown: a family mismatch refused (one --stack for all), `plan --out` reviewed then run by
`provision --plan` in a canary rollout, a plan refused once the host's facts moved, and after the run
every node green in `doctor`, `fleet report` (per-family targets) and `k8s-agent --dry-run`.

Issue 31: a fourth host, ``deb12``, is Debian 12 as it ships (its system Python externally managed,
PEP 668, no ``/etc/pip.conf`` allowing pip): ``provision --check`` says per host that the controller
refuses it, the reviewed rollout leaves it untouched (not-run, never cordoned) while the others run,
and a plan made with ``--venv`` provisions it (torch, torch_npu and CANN's Python dependencies into
the venv, offline) with the doctor judging the venv's interpreter. The ``a2`` host starts on an older
CANN (8.3.RC1, sourced at login) and its target is the fixture A2 stack (tests/helpers/provision.py:
the shipped stacks pin the vendor's toolkit digest, which a fixture cannot match), so the default
side-by-side policy installs CANN 8.5.0 beside it: after one rollout plan, doctor, `fleet report` and
the agent's labels agree that it is compliant, the inactive 8.3.RC1 named as kept.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import Fleet, HostSpec, docker, engine_problem, start_fleet
from helpers.hosts import (
    DRIVER_25_0_RC1_1,
    FIRMWARE_7_7,
    NPU_SMI_DATA,
    NPU_SMI_SCRIPT,
    driver_like_25_3,
    loaded_driver_set,
)
from helpers.provision import PIP_CONF, STACK_ID, _pip_wheel, make_artifacts
from helpers.streams import start

from cannenv.checks.cann import CANN_PYTHON_DEPS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"
sys.path.insert(0, str(FIXTURES))
from fixture_stack import standin_wheel  # noqa: E402
from make_fixture_installer import make_installers  # noqa: E402

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

A2 = "a2-cann8.5.0-torch2.8.0-py3.11"
A3 = "a3-cann8.5.0-torch2.7.1-py3.11"
P310 = "310p-cann8.2.rc1-torch2.6.0-py3.11"
TARGETS = f"a2={STACK_ID},a3={A3},310p={P310}"
VENV = "/opt/cannenv-venv"
# host -> (npu-smi capture, driver version.info, CANN preinstalled, ops chip, target)
HOSTS: dict[str, tuple[str, str, str, str, str]] = {
    "a2": ("a2", driver_like_25_3("25.5.1"), "8.3.RC1", "910b", STACK_ID),
    "a3": ("a3", driver_like_25_3("25.5.1"), "8.5.0", "a3", A3),
    "p310": ("310p", DRIVER_25_0_RC1_1, "8.2.RC1", "310p", P310),
    "deb12": ("a2", driver_like_25_3("25.5.1"), "8.5.0", "910b", STACK_ID),
}
PEP668 = ("deb12",)
"""Debian 12 as it ships: no /etc/pip.conf allowing pip into the system Python."""


def _spec(name: str) -> HostSpec:
    smi, driver, *_ = HOSTS[name]
    installed = next(x.split("=", 1)[1] for x in driver.splitlines() if x.startswith("Version="))
    # npu-smi's header names the loaded driver: the installed one (no reboot pending here)
    info = loaded_driver_set((NPU_SMI_DATA / f"{smi}_info.txt").read_text(), installed)
    files = {
        "/usr/local/Ascend/driver/version.info": driver,
        "/usr/local/Ascend/firmware/version.info": FIRMWARE_7_7,
        "/usr/local/Ascend/driver/lib64/driver/libascend_hal.so": "FIXTURE placeholder, not a library\n",
        "/usr/local/Ascend/driver/lib64/common/.keep": "",
        "/usr/local/bin/npu-smi": NPU_SMI_SCRIPT,
        "/usr/local/bin/info.txt": info,
        # for the k8s agent's --root copy: a tree carries the captured output here (docs/doctor.md)
        "/var/lib/cannenv/npu-smi-info.txt": info,
    }
    if name not in PEP668:
        files["/etc/pip.conf"] = PIP_CONF
    if name == "a2":  # the older CANN, selected at login as sites do
        files["/etc/profile.d/ascend.sh"] = ". /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
    board = NPU_SMI_DATA / f"{smi}_board.txt"
    if board.exists():
        files["/usr/local/bin/board.txt"] = board.read_text()
        files["/var/lib/cannenv/npu-smi-board.txt"] = board.read_text()
    return HostSpec(name, bare=True, extra=files)


def cannenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=2400, check=False
    )


@pytest.fixture(scope="module")
def fleet(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    problem = engine_problem()
    if problem:
        pytest.skip(f"provision hosts need Docker, ssh and ansible-runner: {problem}")
    work = tmp_path_factory.mktemp("mixed")
    running = start_fleet(
        work, tuple(_spec(n) for n in HOSTS), label="cannenv-mixed-test", prefix="cannenv-mix"
    )
    try:
        for h in running.hosts:
            _, _, cann, chip, _ = HOSTS[h.spec.name]
            pre = work / f"pre-{h.spec.name}"
            inst = make_installers(pre, cann, chip, "x86_64", components=("toolkit", "kernels"))
            # CANN's own Python dependencies, as a host image carries them (stand-in wheels)
            for dist in CANN_PYTHON_DEPS:
                module = {"pyyaml": "yaml", "absl-py": "absl", "protobuf": "google_protobuf_standin"}
                standin_wheel(pre, dist, "1.0", module.get(dist, dist.replace("-", "_")))
            _pip_wheel(pre)
            deps = (  # CANN's Python dependencies (the PEP 668 host gets them into its venv)
                ""
                if h.spec.name in PEP668
                else "PYTHONPATH=$(ls /tmp/pre/pip-*.whl) python3 -m pip install -q --no-index "
                f"--find-links /tmp/pre {' '.join(CANN_PYTHON_DEPS)}; "
            )
            subprocess.run(["docker", "cp", str(pre), f"{h.container}:/tmp/pre"], check=True, timeout=120)
            script = (
                "set -e; chmod 0755 /usr/local/bin/npu-smi; "
                "getent group HwHiAiUser >/dev/null || groupadd HwHiAiUser; "
                "id HwHiAiUser >/dev/null 2>&1 || useradd -g HwHiAiUser -m HwHiAiUser -s /bin/bash; "
                f"bash /tmp/pre/{inst['toolkit'].path.name} --install --install-for-all --quiet; "
                f"bash /tmp/pre/{inst['kernels'].path.name} --install --install-for-all --quiet; "
                + deps
                + "rm -rf /tmp/pre"
            )
            docker("exec", h.container, "bash", "-c", script, timeout=300)
        yield running
    finally:
        running.remove()


@pytest.fixture(scope="module")
def fixture_matrix(artifacts: Path) -> Path:
    return artifacts.parent / "fixture-stack.yaml"


@pytest.fixture(scope="module")
def artifacts(fleet: Fleet) -> Path:
    # the fixture A2 stack's .zip toolkit/ops/NNAL and its matrix (fleet.work/fixture-stack.yaml)
    folder = make_artifacts(fleet.work).folder
    for dist in CANN_PYTHON_DEPS:  # CANN's Python dependencies for the venv (stand-in wheels)
        module = {"pyyaml": "yaml", "absl-py": "absl", "protobuf": "google_protobuf_standin"}
        standin_wheel(folder, dist, "1.0", module.get(dist, dist.replace("-", "_")))
    for cann in ("8.5.0", "8.2.RC1"):
        make_installers(folder, cann, "910b", "x86_64", components=("nnal",))
    for torch, npu in (("2.8.0", "2.8.0.post2"), ("2.7.1", "2.7.1.post2"), ("2.6.0", "2.6.0")):
        standin_wheel(folder, "torch", torch, "torch")
        standin_wheel(folder, "torch-npu", npu, "torch_npu")
    _pip_wheel(folder)
    return folder


def _container(fleet: Fleet, name: str) -> str:
    return next(h.container for h in fleet.hosts if h.spec.name == name)


def _json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def test_one_stack_for_a_mixed_fleet_refuses_the_other_families(fleet: Fleet, artifacts: Path) -> None:
    proc = cannenv(
        "provision",
        "-i",
        str(fleet.inventory),
        "--stack",
        A2,
        "--artifacts",
        str(artifacts),
        "--check",
        "--json",
    )
    assert proc.returncode == 1, proc.stderr
    by = {h["name"]: h for h in _json(proc)["hosts"]}
    for name, fam in (("a3", "Atlas A3"), ("p310", "310P")):
        assert (by[name]["status"], by[name]["cause"]) == ("not-run", "refused"), by[name]
        assert fam in by[name]["reason"], by[name]
        assert not [s for s in by[name]["plan"]["steps"] if s["action"] != "leave"]
    # issue 31: --check says what the real run would meet, per host: the folder's toolkit .zip is the
    # fixture's, not the vendor's bytes the shipped A2 stack pins; NNAL has no published digest; and
    # deb12's Python refuses pip (PEP 668)
    assert (by["a2"]["status"], by["a2"]["cause"]) == ("not-run", "controller"), by["a2"]
    assert "Ascend-cann-toolkit_8.5.0_linux-x86_64.zip in --artifacts has sha256" in by["a2"]["reason"]
    assert "pins no sha256 for Ascend-cann-nnal_8.5.0_linux-x86_64.run" in by["a2"]["reason"]
    assert "externally managed (PEP 668)" in by["deb12"]["reason"], by["deb12"]


def test_reviewed_plans_run_as_a_canary_rollout_and_every_view_is_green(
    fleet: Fleet, artifacts: Path, fixture_matrix: Path
) -> None:
    from cannenv import checks

    work = fleet.work
    from cannenv.resources import matrices_dir

    mx = ("--matrix", str(matrices_dir()), "--matrix", str(fixture_matrix))
    collected = work / "collected"
    # issue 35: the collection read as it comes through a pipe (a CI log): a line per host the moment
    # its facts arrive, while the others still run
    run = start(["fleet", "collect", "-i", str(fleet.inventory), "--out", str(collected)], terminal=False)
    assert run.wait(600) == 0, "\n".join(run.err.texts())
    for name in HOSTS:
        at = run.err.index(f"] {name}")
        assert "collected (" in run.err.lines[at][0] and run.err.lines[at][1], run.err.texts()
    plan_file = work / "plan.json"
    proc = cannenv(
        "plan", "--facts", str(collected), "--target", TARGETS, *mx, "--offline", "--out", str(plan_file)
    )
    assert proc.returncode == 1, proc.stderr
    plans = {p["host"]: p for p in json.loads(plan_file.read_text())["plans"]}
    assert {h: p["stack"] for h, p in plans.items()} == {h: v[4] for h, v in HOSTS.items()}
    for name, p in plans.items():  # what each stack still needs
        comps = [s["component"] for s in p["steps"] if s["action"] != "leave"]
        if name == "a2":  # CANN 8.5.0 beside 8.3.RC1 (the default policy), then what it needs
            assert comps == ["cann", "ops", "nnal", "python-packages", "environment"], p
            assert (
                "8.3.RC1 stays side by side"
                in next(s for s in p["steps"] if s["component"] == "cann")["summary"]
            )
        else:
            assert comps == ["nnal", "python-packages", "environment"], p

    out = work / "run"
    hooks = work / "hooks.log"
    # read as it comes (issue 35): stderr through a pipe, as a CI log reads it
    run = start(
        [
            "provision",
            "-i",
            str(fleet.inventory),
            "--plan",
            str(plan_file),
            "--artifacts",
            str(artifacts),
            *mx,
            "--allow-unpinned",  # NNAL has no published digest: the host checks this machine's copy
            "--canary",
            "--serial",
            "50%",
            "--max-fail",
            "0%",
            "--cordon",
            f'echo "cordon $CANNENV_NODE" >> {hooks}',
            "--uncordon",
            f'echo "uncordon $CANNENV_NODE" >> {hooks}',
            "--out",
            str(out),
            "--json",
        ],
        terminal=False,
    )
    rc = run.wait(2400)
    err = run.err
    proc = subprocess.CompletedProcess(run.proc.args, rc, bytes(run.stdout).decode(), "\n".join(err.texts()))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # deb12 was not run
    # each host that runs shows its first step the moment it starts, over SSH, before the run ends
    for name in HOSTS:
        if name not in PEP668:
            started = re.compile(rf"\] {name} +step \d+ \(1/\d+\) .*: started")
            at = next((i for i, (t, _) in enumerate(err.lines) if started.search(t)), None)
            assert at is not None and err.lines[at][1], (name, proc.stderr)
    # the canary's verdict comes before the next batch starts
    assert (
        err.index("batch 1 (canary): 1 host")
        < err.index("batch 1 (canary) verdict: 1 of 1 ran every step — the next batch starts")
        < err.index("batch 2: ")
    ), proc.stderr
    by = {h["name"]: h for h in _json(proc)["hosts"]}
    for name in HOSTS:
        if name in PEP668:  # refused by the controller: nothing ran there, never cordoned
            assert (by[name]["status"], by[name]["cause"], by[name]["steps_done"]) == (
                "not-run",
                "controller",
                [],
            ), by[name]
            assert "externally managed (PEP 668)" in by[name]["reason"] and "--venv" in by[name]["reason"]
        else:
            got = (by[name]["status"], by[name]["cause"], by[name]["remaining"])
            assert got == ("done", "ran", 0), (
                name,
                by[name]["reason"],
                by[name]["log_tail"],
                proc.stderr[-3000:],
            )
    assert sorted(hooks.read_text().splitlines()) == sorted(
        f"{k} {n}" for n in HOSTS if n not in PEP668 for k in ("cordon", "uncordon")
    )
    # the PEP 668 host through a venv: its own reviewed plan, made with --venv
    only = work / "collected-deb12"
    only.mkdir()
    for n in PEP668:
        (only / f"{n}.json").write_bytes((collected / f"{n}.json").read_bytes())
    venv_plan = work / "plan-venv.json"
    proc = cannenv(
        "plan",
        "--facts",
        str(only),
        "--target",
        TARGETS,
        *mx,
        "--offline",
        "--venv",
        VENV,
        "--out",
        str(venv_plan),
    )
    assert proc.returncode == 1, proc.stderr
    step = next(
        s
        for s in json.loads(venv_plan.read_text())["plans"][0]["steps"]
        if s["component"] == "python-packages"
    )
    assert step["version_to"].split()[:2] == ["torch==2.8.0", "torch-npu==2.8.0.post2"]
    assert set(CANN_PYTHON_DEPS) <= set(step["version_to"].split()), step
    out_venv = work / "run-venv"
    # on a pseudo-terminal, as an operator runs it (issue 35): the live view on stderr, each step
    # shown as it starts; stdout holds the JSON report alone
    run = start(
        [
            "provision",
            "-i",
            str(fleet.inventory),
            "--plan",
            str(venv_plan),
            "--artifacts",
            str(artifacts),
            *mx,
            "--allow-unpinned",
            "--out",
            str(out_venv),
            "--json",
        ],
        terminal=True,
    )
    rc = run.wait(2400)
    proc = subprocess.CompletedProcess(
        run.proc.args, rc, bytes(run.stdout).decode(), "\n".join(run.err.texts())
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    started = re.compile(r"deb12 +step \d+ \(1/\d+\) .*: started")
    at = next((i for i, (t, _) in enumerate(run.err.lines) if started.search(t)), None)
    assert at is not None and run.err.lines[at][1], proc.stderr
    (deb12,) = _json(proc)["hosts"]
    assert (deb12["status"], deb12["doctor_failures"]) == ("done", []), deb12
    venv_facts = json.loads((out_venv / "after" / "deb12.json").read_text())
    assert venv_facts["python"]["interpreter"].startswith(VENV), venv_facts["python"]  # the venv judged
    assert {"torch", "torch-npu", *CANN_PYTHON_DEPS} <= set(venv_facts["python"]["packages"])
    # issue 31: the loop converges — collected again through the venv's interpreter, the same
    # --venv plan has nothing left to do (the Python step does not come back every run)
    again = work / "collected-venv-again"
    proc = cannenv(
        "fleet",
        "collect",
        "-i",
        str(fleet.inventory),
        "--limit",
        ",".join(PEP668),
        "--facts-arg",
        f"--python={VENV}/bin/python",
        "--out",
        str(again),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    proc = cannenv(
        "plan", "--facts", str(again), "--target", TARGETS, *mx, "--offline", "--venv", VENV, "--json"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr  # nothing to do
    # the system Python stays as Debian shipped it
    system = docker("exec", _container(fleet, "deb12"), "python3", "-c", "import torch", check=False)
    assert system.returncode != 0

    # the reviewed plan is stale now: provision --plan refuses it instead of running it again
    proc = cannenv(
        "provision",
        "-i",
        str(fleet.inventory),
        "--plan",
        str(plan_file),
        "--artifacts",
        str(artifacts),
        *mx,
        "--json",
    )
    assert proc.returncode == 1
    assert {(h["status"], h["cause"]) for h in _json(proc)["hosts"]} == {("not-run", "facts-moved")}
    # and a fresh look finds nothing to do: the a2 host's older CANN, inactive, is no drift
    proc = cannenv(
        "provision",
        "-i",
        str(fleet.inventory),
        "--target",
        TARGETS,
        *mx,
        "--artifacts",
        str(artifacts),
        "--limit",
        "a2:a3:p310",
        "--check",
        "--json",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {(h["status"], h["cause"]) for h in _json(proc)["hosts"]} == {("done", "nothing-to-do")}

    afters = {n: (out_venv if n in PEP668 else out) / "after" for n in HOSTS}
    for name, (_, _, _, _, stack) in HOSTS.items():
        doctor = cannenv(
            "doctor",
            "--facts",
            str(afters[name] / f"{name}.json"),
            "--stack",
            stack,
            *mx,
            "--no-devices",
            "--verbose",  # passes are hidden without it, and the line below is a pass
        )
        assert doctor.returncode == 0, doctor.stdout
        if name == "a2":  # the older CANN is judged as what it is: kept beside, inactive
            assert "inactive (nothing points at it): 8.3.RC1" in doctor.stdout, doctor.stdout
    software = ",".join(c.id for c in checks.all_checks() if c.scope == "software")
    for folder in {out / "after", out_venv / "after"}:
        report = cannenv(
            "fleet", "report", str(folder), "--target", TARGETS, *mx, "--check", software, "--json"
        )
        assert report.returncode == 0, report.stdout + report.stderr
        nodes = {n["name"]: n for n in _json(report)["nodes"]}
        for name, node in nodes.items():
            assert node["stack"] == HOSTS[name][4] and node["status"] == "compliant", node

    # the DaemonSet's agent, on a copy of each host's tree (as its read-only hostPath mounts see it);
    # on the venv host it reads the venv's packages (`k8s-manifest --site-packages` mounts that folder
    # and passes it on), not the system interpreter's
    venv_site = f"{VENV}/lib/python3.11/site-packages"
    for h in fleet.hosts:
        name = h.spec.name
        tree = work / f"agent-{name}"
        paths = (
            "/usr/local/Ascend",
            "/etc",
            "/usr/lib/os-release",
            "/var/lib/cannenv",
            "/usr/local/lib/python3.11",
            *((VENV,) if name in PEP668 else ()),
        )
        for path in paths:
            (tree / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                ["docker", "cp", "-L", f"{h.container}:{path}", str(tree / path.lstrip("/"))],
                check=False,
                timeout=120,
            )
        for dev in ("davinci0", "davinci_manager", "devmm_svm", "hisi_hdc"):  # FIXTURE device stand-ins
            (tree / "dev").mkdir(exist_ok=True)
            (tree / "dev" / dev).write_text("")
        agent = cannenv(
            "fleet",
            "k8s-agent",
            "--root",
            str(tree),
            "--node",
            name,
            "--stack",
            HOSTS[name][4],
            *mx,
            *(("--site-packages", venv_site) if name in PEP668 else ()),
            "--once",
            "--dry-run",
        )
        assert agent.returncode == 0, agent.stdout + agent.stderr
        patch = json.loads(agent.stdout.splitlines()[-1])
        labels = patch["metadata"]["labels"]
        assert labels["cannenv.io/status"] == "compliant", (name, patch)
