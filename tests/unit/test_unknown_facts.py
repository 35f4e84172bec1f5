"""Unknown is not absent: a fact whose probe errored is never planned as missing.

Under load the fleet bundle's Python probe got an empty answer (exit 0, nothing on stdout): the
reader of the one subprocess door took a command that exited during its last wait as done before
reading what it wrote. The facts then said ``python.version: null`` with a ``malformed`` issue, and
the planner planned torch and torch_npu into a Python it had merely not read. These tests build the
facts with the real probes (a tree from ``examples/hosts`` and the Python probe run against a real
interpreter, or a stand-in that answers, answers nothing, or hangs), save and load them as files, and
check every view: the planner refuses the host naming the probe and its issue, ``cannenv plan`` exits
2, ``provision`` leaves the host ``not-run`` (``facts-unknown``), and the doctor, ``fleet report`` and
the Kubernetes labels call it ``failing`` — never ``compliant``, never "not installed".
"""

from __future__ import annotations

import json
import selectors
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cannenv import checks
from cannenv import matrix as matrix_mod
from cannenv.checks.stack import choose_target
from cannenv.facts import Facts, ProbeIssue
from cannenv.fleet.k8s import failing_checks, node_labels
from cannenv.gather import read_env_file
from cannenv.host import Host, run
from cannenv.plan import compute_plan, render_text
from cannenv.plan.provision import ProvisionReport, host_state, render_report, settled_outcome
from cannenv.probes import collect, python_env

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"
A2 = "a2-cann8.5.0-torch2.8.0-py3.11"
HEALTHY = "a2-cann8.5-new-layout"

# What the probe's metadata script prints for a Python that has the stack's torch and torch_npu.
ANSWER = {
    "version": "3.11.9",
    "executable": "/usr/bin/python3",
    "path": ["/usr/lib/python3/dist-packages"],
    "extra": [],
    "packages": {
        "torch": "2.8.0+cpu",
        "torch_npu": "2.8.0.post2",
        **{n: "1.0" for n in ("numpy", "sympy", "decorator", "scipy", "attrs", "psutil", "cloudpickle")},
        **{n: "1.0" for n in ("ml-dtypes", "tornado", "absl-py")},
    },
    "torch_npu": None,
    "torch": None,
    "managed": False,
}


@pytest.fixture(scope="module")
def m() -> matrix_mod.Matrix:
    return matrix_mod.load()


def _interpreter(tmp: Path, name: str, body: str) -> str:
    """A stand-in interpreter: a script that ignores its arguments (``-c <metadata script>``)."""
    path = tmp / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def _facts(tmp: Path, python: str, example: str = HEALTHY) -> Facts:
    """The example host's facts with its Python read by the real probe from ``python``, written to a
    file and read back (what ``fleet collect`` leaves and ``plan --facts`` reads)."""
    d = EXAMPLES / example
    env = read_env_file(str(d / "host.env")) if (d / "host.env").exists() else {}
    tree = collect(Host((d / "tree").resolve(), env, True, 5.0))
    live = collect(Host.live(), python=python, only=("python",))
    facts = replace(tree, hostname="node-1", python=live.python, issues=tree.issues + live.issues)
    path = tmp / "node-1.json"
    path.write_text(facts.to_json())
    return Facts.load(path)


def _answering(tmp: Path) -> str:
    return _interpreter(tmp, "answers", f"echo '{json.dumps(ANSWER)}'")


def _silent(tmp: Path) -> str:
    return _interpreter(tmp, "silent", "exit 0")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=300, check=False
    )


# -- the cause: the subprocess door lost the answer of a command that exited during a wait ------------


class _LateReader(selectors.DefaultSelector):
    """A reader descheduled under load: its first wait 'times out' while the command writes its
    answer and exits (the interleaving threads and a busy machine produce by chance)."""

    waited = False

    def select(self, timeout: float | None = None) -> list[Any]:
        if timeout and not _LateReader.waited:
            _LateReader.waited = True
            time.sleep(2.0)
            return []
        return list(super().select(timeout))


@pytest.fixture
def late_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    _LateReader.waited = False
    monkeypatch.setattr("cannenv.host.selectors.DefaultSelector", _LateReader)


@pytest.mark.usefixtures("late_reader")
def test_a_command_that_exits_while_the_reader_waits_keeps_its_answer() -> None:
    res = run([sys.executable, "-c", "print('the answer')"], timeout=30)
    assert _LateReader.waited
    assert res.ok and res.stdout == "the answer\n", res


@pytest.mark.usefixtures("late_reader")
def test_the_python_probe_reads_an_interpreter_that_answered_during_the_wait(tmp_path: Path) -> None:
    facts = collect(Host.live(), python=_answering(tmp_path), only=("python",))
    assert _LateReader.waited
    assert not facts.issues
    assert facts.python.version == "3.11.9" and facts.python.packages["torch-npu"] == "2.8.0.post2"


def test_a_python_that_hangs_is_timed_out_not_malformed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(python_env, "PYTHON_TIMEOUT_S", 0.5)
    facts = collect(Host.live(), python=_interpreter(tmp_path, "hangs", "sleep 30"), only=("python",))
    (issue,) = facts.issues
    assert (issue.probe, issue.kind) == ("python", "command-timeout")
    assert "no answer within" in issue.message and "<metadata script>" in issue.message
    assert "import sys" not in issue.message  # the script's text stays out of findings and plans


def test_an_empty_answer_says_so(tmp_path: Path) -> None:
    facts = collect(Host.live(), python=_silent(tmp_path), only=("python",))
    (issue,) = facts.issues
    assert (issue.probe, issue.kind) == ("python", "malformed")
    assert "without an answer" in issue.message and "list index" not in issue.message
    assert facts.python.version is None and facts.python.packages == {}


# -- the planner ---------------------------------------------------------------------------------------


def test_the_same_host_read_whole_needs_nothing(tmp_path: Path, m: matrix_mod.Matrix) -> None:
    facts = _facts(tmp_path, _answering(tmp_path))
    assert not facts.issues
    plan = compute_plan(facts, choose_target(facts, m, stack_id=A2))
    assert plan.empty and not plan.refused and not plan.unknown


@pytest.mark.parametrize(
    ("name", "body", "kind"),
    [("silent", "exit 0", "malformed"), ("fails", "echo boom >&2; exit 1", "command-failed")],
)
def test_an_errored_python_probe_is_never_planned_as_no_python(
    tmp_path: Path, m: matrix_mod.Matrix, name: str, body: str, kind: str
) -> None:
    facts = _facts(tmp_path, _interpreter(tmp_path, name, body))
    assert facts.python.version is None and facts.python.packages == {}  # what misled the planner
    plan = compute_plan(facts, choose_target(facts, m, stack_id=A2))
    assert plan.refused and not plan.actions and not plan.steps
    assert not any("pip install" in line for s in plan.steps for line in s.commands)
    assert [u.split(":")[0] for u in plan.unknown] == ["python", "python-packages"]
    for line in plan.unknown:
        assert f"the python probe: {kind}: " in line, line
    text = render_text(plan)
    assert "collect the facts again" in text and "pip install" not in text


def test_an_unreadable_driver_version_file_is_not_no_driver(tmp_path: Path, m: matrix_mod.Matrix) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES / "broken-driver-too-old" / "tree", tree, symlinks=True)
    host = Host(tree.resolve(), {}, True, 5.0)
    facts = collect(host)
    target = choose_target(facts, m)
    moved = compute_plan(facts, target)
    assert ("driver", "upgrade") in [(s.component, s.action) for s in moved.actions]  # read: upgraded
    (tree / "usr/local/Ascend/driver/version.info").write_text("")  # truncated, as a full disk leaves it
    broken = collect(host)
    assert broken.driver is not None and broken.driver.version is None
    plan = compute_plan(broken, choose_target(broken, m, stack_id=target.stack.id if target.stack else None))
    assert plan.refused and not plan.actions
    assert plan.unknown[0].startswith("driver: could not read the installed driver: the driver probe: empty:")


def test_an_issue_of_a_probe_the_plan_does_not_need_changes_nothing(
    tmp_path: Path, m: matrix_mod.Matrix
) -> None:
    facts = _facts(tmp_path, _answering(tmp_path))
    other = ProbeIssue(probe="mindie", kind="malformed", path="/x", message="/x names no MindIE release")
    facts = replace(facts, issues=(other,))
    plan = compute_plan(facts, choose_target(facts, m, stack_id=A2))
    assert plan.empty and not plan.refused


def test_a_fresh_venv_needs_no_packages_read_but_the_python_version_still_is(
    tmp_path: Path, m: matrix_mod.Matrix
) -> None:
    facts = _facts(tmp_path, _silent(tmp_path))
    plan = compute_plan(facts, choose_target(facts, m, stack_id=A2), venv="/opt/venv")
    assert plan.refused
    assert [u.split(":")[0] for u in plan.unknown] == ["python"]


# -- every view agrees: plan, provision, doctor, fleet report, labels ----------------------------------


def test_plan_exits_2_naming_the_probe_and_a_folder_names_the_node_refused(tmp_path: Path) -> None:
    _facts(tmp_path, _silent(tmp_path))
    one = cli("plan", "--facts", str(tmp_path / "node-1.json"), "--stack", A2)
    assert one.returncode == 2, one.stderr
    assert "the python probe: malformed" in one.stderr and "collect the facts again" in one.stderr
    folder = tmp_path / "fleet"
    folder.mkdir()
    shutil.copy(tmp_path / "node-1.json", folder)
    many = cli("plan", "--facts", str(folder), "--stack", A2, "--json")
    assert many.returncode == 1, many.stderr
    (doc,) = json.loads(many.stdout)["plans"]
    assert doc["refused"] and doc["unknown"] and not doc.get("steps")


def test_provision_leaves_the_host_not_run_and_says_why(tmp_path: Path, m: matrix_mod.Matrix) -> None:
    facts = _facts(tmp_path, _silent(tmp_path))
    plan = compute_plan(facts, choose_target(facts, m, stack_id=A2), offline=True)
    out = settled_outcome("node-1", plan)
    assert out is not None
    assert (out.status, out.cause) == ("not-run", "facts-unknown")
    assert host_state(out).headline().startswith("not-run: python: could not read the Python version")
    assert "the python probe: malformed" in out.reason and not out.steps_done
    shown = render_report(ProvisionReport(hosts=(out,)))
    assert "node-1  not-run: python: could not read the Python version: the python probe" in shown
    assert "1 not-run" in shown
    assert ProvisionReport(hosts=(out,)).exit_code() == 1
    whole = _facts(tmp_path, _answering(tmp_path))
    done = settled_outcome("node-1", compute_plan(whole, choose_target(whole, m, stack_id=A2), offline=True))
    assert done is not None and (done.status, done.cause) == ("done", "nothing-to-do")


def test_doctor_report_and_labels_call_the_host_failing_not_compliant(
    tmp_path: Path, m: matrix_mod.Matrix
) -> None:
    facts = _facts(tmp_path, _silent(tmp_path))
    findings = checks.run(facts, choose_target(facts, m, stack_id=A2))
    errors = {(f.id, f.subject) for f in findings if f.status == "error"}
    wanted = {("stack-match", "torch"), ("stack-match", "torch_npu"), ("torch-torch-npu", "python-packages")}
    assert wanted <= errors
    assert not [f for f in findings if "not installed" in f.detail], "unknown judged as absent"
    doctor = cli("doctor", "--facts", str(tmp_path / "node-1.json"), "--stack", A2, "--json")
    assert doctor.returncode == 1, doctor.stderr
    report = json.loads(doctor.stdout)
    labels = node_labels(report)
    assert labels["cannenv.io/status"] == "failing"
    assert {"stack-match", "torch-torch-npu"} <= set(failing_checks(report))
    folder = tmp_path / "fleet"
    folder.mkdir()
    shutil.copy(tmp_path / "node-1.json", folder)
    fleet = cli("fleet", "report", str(folder), "--stack", A2, "--json")
    assert fleet.returncode == 1, fleet.stderr
    (node,) = json.loads(fleet.stdout)["nodes"]
    assert node["status"] == "failing"


def test_the_same_host_read_whole_is_compliant_everywhere(tmp_path: Path) -> None:
    _facts(tmp_path, _answering(tmp_path))
    doctor = cli("doctor", "--facts", str(tmp_path / "node-1.json"), "--stack", A2, "--json")
    report = json.loads(doctor.stdout)
    assert not failing_checks(report), report
    assert node_labels(report)["cannenv.io/status"] in ("compliant", "drifting")


def test_an_unreadable_nnal_blocks_its_install_and_a_link_to_nothing_does_not(
    tmp_path: Path, m: matrix_mod.Matrix
) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(EXAMPLES / "broken-driver-too-old" / "tree", tree, symlinks=True)
    host = Host(tree.resolve(), {}, True, 5.0)
    stack = choose_target(collect(host), m).stack
    assert stack is not None
    nnal = tree / "usr/local/Ascend/nnal/atb/latest"
    nnal.mkdir(parents=True)
    (nnal / "version.info").write_bytes(b"\x00\x01\x02")  # half-written, as a full disk leaves it
    facts = collect(host)
    plan = compute_plan(facts, choose_target(facts, m, stack_id=stack.id))
    assert plan.refused and not plan.actions
    (line,) = plan.unknown
    assert line.startswith("nnal: could not read the installed NNAL: the nnal probe: binary:"), line
    (nnal / "version.info").unlink()
    (nnal / "version.info").symlink_to("/usr/local/Ascend/nnal/atb/8.2.RC1/version.info")  # nothing there
    facts = collect(host)
    assert [i.kind for i in facts.issues if i.probe == "nnal"] == ["dangling-symlink"]
    plan = compute_plan(facts, choose_target(facts, m, stack_id=stack.id))
    assert not plan.refused and "nnal" in [s.component for s in plan.actions]
