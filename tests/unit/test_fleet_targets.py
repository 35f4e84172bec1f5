"""Issue 22 part A: one target per node, one notion of compliant, no downgrade without a target,
review-then-run plans, rollout controls. Mixed fleet: the example hosts (fixtures) of Atlas A2,
A3 and 310P (examples/hosts/), judged against shipped stacks (matrices/stacks.yaml)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cannenv import checks
from cannenv import matrix as matrix_mod
from cannenv.checks import policy
from cannenv.checks.stack import choose_target
from cannenv.facts import Facts
from cannenv.fleet.targets import TargetMap, TargetSpec, target_map
from cannenv.gather import read_env_file
from cannenv.host import Host
from cannenv.plan import compute_plan
from cannenv.plan.compute import _PEP668, facts_digest
from cannenv.plan.provision import load_plans, parse_percent, parse_serial
from cannenv.probes import collect

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"
A2 = "a2-cann8.5.0-torch2.8.0-py3.11"
A3 = "a3-cann8.5.0-torch2.7.1-py3.11"
P310 = "310p-cann8.1.rc1-torch2.5.1-py3.10"
FLEET = {"a2-new": "a2-cann8.5-new-layout", "a2-old": "a2-cann8.3-old-layout", "a3-1": "a3-cann8.3"}
FLEET["p310-1"] = "310p-cann8.1"
PER_FAMILY = f"a2={A2},a3={A3},310p={P310}"


@pytest.fixture(scope="module")
def m() -> matrix_mod.Matrix:
    return matrix_mod.load()


def facts_of(example: str) -> Facts:
    d = EXAMPLES / example
    env = read_env_file(str(d / "host.env")) if (d / "host.env").exists() else {}
    return collect(Host((d / "tree").resolve(), env, True, 5.0), python=None, site_packages=())


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mixed") / "facts"
    out.mkdir()
    for name, example in FLEET.items():
        (out / f"{name}.json").write_text(replace(facts_of(example), hostname=name).to_json())
    return out


def cli(*args: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=300, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


# -- 1. one target per node; another family's stack refused --------------------------------------


def test_plan_gives_every_node_the_target_of_its_family(fleet_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    code, stdout, err = cli("plan", "--facts", str(fleet_dir), "--target", PER_FAMILY, "--out", str(out))
    assert code == 1, err
    plans = {p["host"]: p for p in json.loads(out.read_text())["plans"]}
    assert {h: p["stack"] for h, p in plans.items()} == {
        "a2-new": A2,
        "a2-old": A2,
        "a3-1": A3,
        "p310-1": P310,
    }
    assert not any(p.get("refused") for p in plans.values())
    # the A3 node gets the A3 ops package, never the 910b one
    files = [i["file"] for s in plans["a3-1"]["steps"] for i in s.get("installers", ())]
    assert any("A3-ops" in f for f in files) and not any("910b" in f for f in files)
    assert "a2-new" in stdout and "nothing to do" in stdout


def test_another_familys_stack_is_refused_with_the_reason(fleet_dir: Path, m: matrix_mod.Matrix) -> None:
    code, out, err = cli("plan", "--facts", str(fleet_dir / "p310-1.json"), "--stack", A2)
    assert code == 2 and "refused" in err and "Atlas A2" in err and "310P" in err and not out
    code, out, _ = cli("plan", "--facts", str(fleet_dir), "--stack", A2, "--json")
    plans = {p["host"]: p for p in json.loads(out)["plans"]}
    for node in ("a3-1", "p310-1"):
        assert plans[node]["refused"] and not [s for s in plans[node]["steps"] if s["action"] != "leave"]
        assert "refused" in plans[node]["problems"][0]
    # the same rule in the doctor: stack-match fails on the family, with the reason
    facts = facts_of("a3-cann8.3")
    target = choose_target(facts, m, stack_id=A2)
    fam = [f for f in checks.run(facts, target) if f.id == "stack-match" and f.subject == "family"]
    assert fam and fam[0].status == "fail" and "Atlas A3" in fam[0].detail


def test_untargeted_nodes_are_named_never_planned(fleet_dir: Path) -> None:
    code, out, _ = cli("plan", "--facts", str(fleet_dir), "--target", f"a2={A2}")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert code == 1
    assert "untargeted: no target for family 310p (targets given for: a2)" in lines["p310-1"]
    assert "untargeted: no target for family a3" in lines["a3-1"]


def test_targets_file_and_inventory_groups(fleet_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip("ansible", reason="--inventory reads groups with ansible-core")
    inv = tmp_path / "inv.ini"
    inv.write_text("[inference]\np310-1\n\n[training]\na2-new\na2-old\n")
    tfile = tmp_path / "targets.yaml"
    tfile.write_text(f"families: {{a3: {A3}}}\ngroups: {{training: {A2}, inference: {P310}}}\n")
    code, out, err = cli(
        "plan", "--facts", str(fleet_dir), "--targets", str(tfile), "--inventory", str(inv), "--json"
    )
    assert code == 1, err
    assert {p["host"]: p["stack"] for p in json.loads(out)["plans"]} == {
        "a2-new": A2,
        "a2-old": A2,
        "a3-1": A3,
        "p310-1": P310,
    }
    tmap = target_map(targets_file=str(tfile), inventory=str(inv))
    assert tmap.route("p310-1", Facts())[1] == "group inference"
    assert tmap.for_family("A3") == TargetSpec(stack_id=A3)  # one DaemonSet per family


def test_fleet_report_and_diff_judge_each_node_against_its_own_target(
    fleet_dir: Path, tmp_path: Path
) -> None:
    code, out, err = cli("fleet", "report", str(fleet_dir), "--target", PER_FAMILY, "--json")
    assert code in (0, 1), err
    nodes = {n["name"]: n for n in json.loads(out)["nodes"]}
    assert {n: v["stack"] for n, v in nodes.items()} == {
        "a2-new": A2,
        "a2-old": A2,
        "a3-1": A3,
        "p310-1": P310,
    }
    assert nodes["a2-new"]["status"] == "compliant"
    new = tmp_path / "new"
    shutil.copytree(fleet_dir, new)
    (new / "a2-old.json").write_text(replace(facts_of(FLEET["a2-new"]), hostname="a2-old").to_json())
    code, out, err = cli("fleet", "diff", str(fleet_dir), str(new), "--target", PER_FAMILY, "--json")
    assert code == 0, err
    diff = json.loads(out)
    (node,) = diff["nodes"]
    assert node["name"] == "a2-old" and node["new_status"] == "compliant", node
    assert diff["summary"]["fixed"] >= 1 and diff["summary"]["new_drift"] == 0


# -- 2. one notion of compliant --------------------------------------------------------------------


@pytest.mark.parametrize("driver_policy", ["accepted", "pinned"])
def test_the_planner_moves_the_driver_exactly_when_the_doctor_fails_it(
    m: matrix_mod.Matrix, driver_policy: str
) -> None:
    """For every example host with a driver and every shipped stack of its family: the plan acts on
    the driver iff stack-match does not pass it — under either policy."""
    seen = 0
    for d in sorted(EXAMPLES.iterdir()):
        if not (d / "tree").is_dir():
            continue
        facts = facts_of(d.name)
        if facts.driver is None or facts.devices.family is None or facts.container.in_container:
            continue
        for stack in m.stacks:
            if stack.family != facts.devices.family or policy.hardware_mismatch(facts, stack):
                continue
            target = choose_target(facts, m, stack_id=stack.id, driver_policy=driver_policy)
            plan = compute_plan(facts, target, hdk="yes")
            moves = any(s.component == "driver" and s.acts for s in plan.steps)
            fails = any(
                f.id == "stack-match" and f.subject == "driver" and f.status != "pass"
                for f in checks.run(facts, target)
            )
            assert moves == fails, (d.name, stack.id, driver_policy)
            seen += 1
    assert seen >= 10


def test_accepted_patch_driver_is_green_for_doctor_and_plan_pinned_moves_it(m: matrix_mod.Matrix) -> None:
    facts = facts_of("310p-cann8.1")  # driver 24.1.rc2.2, the stack pins 24.1.rc2
    accepted = choose_target(facts, m, stack_id=P310)
    ok, _why, _ = policy.driver_satisfies(accepted, "24.1.rc2.2")
    drv = [f for f in checks.run(facts, accepted) if f.id == "stack-match" and f.subject == "driver"]
    plan = compute_plan(facts, accepted)
    assert (not drv) == ok and (not any(s.component == "driver" and s.acts for s in plan.steps)) == ok
    pinned = choose_target(facts, m, stack_id=P310, driver_policy="pinned")
    assert not policy.driver_satisfies(pinned, "24.1.rc2.2")[0]
    assert any(s.component == "driver" and s.acts for s in compute_plan(facts, pinned).steps)
    assert compute_plan(facts, pinned).driver_policy == "pinned"


# -- 2/3. coherent remedies, no downgrade without a target ----------------------------------------


def test_without_a_target_nothing_is_moved_down_or_off_its_cann(m: matrix_mod.Matrix) -> None:
    for d in sorted(EXAMPLES.iterdir()):
        if not (d / "tree").is_dir():
            continue
        facts = facts_of(d.name)
        target = choose_target(facts, m)
        if target.stack is None:
            continue
        plan = compute_plan(facts, target)
        assert not [s for s in plan.actions if s.action == "downgrade"], d.name
        active = facts.cann.active_install()
        if active is not None and active.version:
            assert not [s for s in plan.actions if s.component == "cann"], d.name
    healthy = facts_of("a2-cann8.5-new-layout")
    assert compute_plan(healthy, choose_target(healthy, m)).empty


def test_doctor_plan_on_a_healthy_83rc2_host_plans_no_cann_move(fleet_dir: Path) -> None:
    _, out, err = cli("doctor", "--facts", str(fleet_dir / "a2-old.json"), "--plan", "--json")
    plan = json.loads(out)
    acting = [s for s in plan["steps"] if s["action"] != "leave"]
    assert [s["component"] for s in acting] == ["nnal"], err  # NNAL is missing: of the installed CANN
    assert acting[0]["version_to"] == "8.3.RC2"
    assert "8.3.RC2" in acting[0]["installers"][0]["file"]


def _versions_named(text: str, component: str) -> set[str]:
    return set(re.findall(rf"{component}_([0-9][0-9A-Za-z.]*?)_linux", text))


def test_one_nnal_version_per_report_and_no_install_of_what_is_there(m: matrix_mod.Matrix) -> None:
    for d in sorted(EXAMPLES.iterdir()):
        if not (d / "tree").is_dir():
            continue
        facts = facts_of(d.name)
        findings = checks.run(facts, choose_target(facts, m))
        remedies = " ".join(f.remedy or "" for f in findings if f.status in ("warn", "fail"))
        assert len(_versions_named(remedies, "nnal")) <= 1, (d.name, remedies)
        drv = facts.driver.version if facts.driver else None
        if drv:
            assert f"install the recommended Ascend HDK ({drv})" not in remedies, d.name


def test_a_consequence_never_names_a_second_remedy(m: matrix_mod.Matrix) -> None:
    facts = facts_of("broken-driver-too-old")
    for f in checks.run(facts, choose_target(facts, m)):
        if f.caused_by and f.status in ("warn", "fail") and f.remedy:
            assert f.remedy == f"fixed by {f.caused_by}'s remedy", f


def test_every_fix_by_reference_ends_at_a_concrete_remedy(m: matrix_mod.Matrix) -> None:
    """Every example host against every shipped stack of its family (and the doctor's own choice):
    a finding that defers ("fixed by X's remedy") points at a finding X that gives the fix itself,
    never back at itself (nnal-cann and stack-match once each deferred to the other)."""
    for d in sorted(p for p in EXAMPLES.iterdir() if (p / "tree").is_dir()):
        facts = facts_of(d.name)
        fam = facts.devices.family
        ids = [None, *(s.id for s in m.stacks if fam is not None and s.family == fam)]
        for stack_id in ids:
            findings = checks.run(facts, choose_target(facts, m, stack_id=stack_id))
            by_id: dict[str, list[Any]] = {}
            for f in findings:
                by_id.setdefault(f.id, []).append(f)
            for f in findings:
                seen: list[str] = [f.id]  # a chain that comes back to its own check is a cycle
                current = [f]
                while current and all((c.remedy or "").startswith("fixed by ") for c in current):
                    cause = current[0].caused_by or ""
                    assert cause not in seen, ("a cycle of deferred remedies", d.name, stack_id, seen)
                    seen.append(cause)
                    current = [c for c in by_id.get(cause, []) if c.status in ("warn", "fail", "error")]
                    assert current, (d.name, stack_id, f, seen)


def test_a_stack_for_other_hardware_gives_no_remedy_of_its_own(m: matrix_mod.Matrix) -> None:
    """The doctor on an A3 node given an A2 stack: one refusal, and none of the A2 stack's packages."""
    facts = facts_of("a3-cann8.3")
    findings = checks.run(facts, choose_target(facts, m, stack_id=A2))
    matched = [f for f in findings if f.id == "stack-match" and f.status != "skip"]
    assert [f.subject for f in matched] == ["family"]
    remedies = " ".join(f.remedy or "" for f in findings)
    assert "910b" not in remedies and "8.5.0" not in remedies, remedies


def test_a_family_target_naming_another_familys_stack_is_bad_input(fleet_dir: Path) -> None:
    for command in (("fleet", "report", str(fleet_dir)), ("plan", "--facts", str(fleet_dir))):
        code, out, err = cli(*command, "--target", f"a2={A2},a3={A2}")
        assert code == 2 and f"a3={A2}" in err and "for a2, not a3" in err and not out, (command, err)


# -- 3. review, then run ---------------------------------------------------------------------------


def test_plan_out_is_what_provision_plan_reads_with_a_facts_digest(fleet_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    _, stdout, _ = cli(
        "plan", "--facts", str(fleet_dir), "--target", PER_FAMILY, "--offline", "--out", str(out), "--json"
    )
    assert json.loads(stdout) == json.loads(out.read_text())  # plan --json is that data
    plans = load_plans(out)
    assert sorted(plans) == sorted(FLEET)
    a3 = Facts.load(fleet_dir / "a3-1.json")
    assert plans["a3-1"].facts_digest == facts_digest(a3)
    assert facts_digest(replace(a3, collected_at="2030-01-01T00:00:00+00:00")) == facts_digest(a3)
    slow = replace(a3.devices.npu_smi, duration_s=9.5)  # type: ignore[type-var]
    assert facts_digest(replace(a3, devices=replace(a3.devices, npu_smi=slow))) == facts_digest(a3)
    moved = replace(a3, driver=replace(a3.driver, version="25.5.1"))  # type: ignore[type-var]
    assert facts_digest(moved) != facts_digest(a3)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"plans": [{"host": "x", "schema_version": 1}]}))
    from cannenv.errors import InputError

    with pytest.raises(InputError, match="facts_digest"):
        load_plans(bad)


def test_rollout_options_parse() -> None:
    from cannenv.errors import InputError

    assert parse_serial(None, canary=False) is None
    assert parse_serial(None, canary=True) == [1, "100%"]
    assert parse_serial("25%", canary=True) == [1, "25%"]
    assert parse_serial("5", canary=False) == [5]
    assert parse_percent("10%", "--max-fail") == 10
    for bad in ("0", "150%", "-1", "a"):
        with pytest.raises(InputError):
            parse_serial(bad, canary=False)
    with pytest.raises(InputError):
        parse_percent("101", "--max-fail")


def test_venv_and_pep668_preflight(m: matrix_mod.Matrix, tmp_path: Path) -> None:
    facts = facts_of("310p-cann8.1")
    target = choose_target(facts, m, stack_id=P310)
    facts = replace(facts, python=replace(facts.python, packages={}))
    plan = compute_plan(facts, target, offline=True, venv="/opt/cannenv-venv")
    step = next(s for s in plan.actions if s.component == "python-packages")
    assert step.commands[0].startswith("[ -x /opt/cannenv-venv/bin/python ] || ")
    assert "python3 -m venv /opt/cannenv-venv" in step.commands[0]  # ensurepip where the host has it
    assert "python3 -m venv --without-pip /opt/cannenv-venv" in step.commands[0]  # else the pip wheel
    assert step.commands[1].startswith("/opt/cannenv-venv/bin/python -m pip install --no-index")
    assert step.preflight and "import venv" in step.preflight[0] and "CANNENV_PIP_WHEEL" in step.preflight[1]
    # a new interpreter: torch, torch_npu and CANN's Python dependencies all go into it (issue 31)
    from cannenv.checks.cann import CANN_PYTHON_DEPS

    reqs = (step.version_to or "").split()
    assert [r.split("==")[0] for r in reqs[:2]] == ["torch", "torch-npu"], reqs
    assert reqs[2:] == list(CANN_PYTHON_DEPS), reqs
    # the venv line, run for real (this machine's python3 has ensurepip): a venv with pip
    made = tmp_path / "made"
    line = step.commands[0].replace("/opt/cannenv-venv", str(made))
    subprocess.run(["bash", "-c", line], check=True, timeout=300)
    assert subprocess.run([str(made / "bin/python"), "-m", "pip", "--version"], check=False).returncode == 0
    plain = next(
        s for s in compute_plan(facts, target, offline=True).actions if s.component == "python-packages"
    )
    # the preflight refuses an externally managed interpreter (PEP 668) and accepts a venv's
    system = Path("/usr/bin/python3")
    managed = [p for p in system.parent.parent.glob("lib/python3*/EXTERNALLY-MANAGED")]
    if system.exists() and managed:
        res = subprocess.run([str(system), "-c", _PEP668], capture_output=True, text=True, check=False)
        assert res.returncode == 3 and "externally managed" in res.stderr
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    res = subprocess.run([str(venv / "bin" / "python"), "-c", _PEP668], text=True, check=False)
    assert res.returncode == 0
    assert any("EXTERNALLY-MANAGED" in line for line in plain.preflight)
    from cannenv.errors import InputError

    with pytest.raises(InputError):
        compute_plan(facts, target, venv="relative/venv")


# -- 3. the rollout with real ansible-playbook (local connection: no SSH, no Docker) ---------------


def _run(tmp_path: Path, runs: dict[str, list[dict[str, Any]]], **kw: Any) -> tuple[dict[str, Any], str]:
    ansible_runner = pytest.importorskip("ansible_runner")
    from cannenv.plan.provision import _run_playbook, classify

    inv = tmp_path / "inv.ini"
    inv.write_text(
        "".join(f"{h} ansible_connection=local ansible_python_interpreter={sys.executable}\n" for h in runs)
    )
    art = tmp_path / "art"
    art.mkdir(exist_ok=True)
    events = _run_playbook(
        ansible_runner,
        inv,
        runs,
        art,
        tmp_path / "work",
        forks=5,
        reboot=False,
        step_timeout=60,
        connect_timeout=10,
        extra={
            "cannenv_step_failed_marker": str(tmp_path / "failed-marker"),
            "cannenv_step_dir": str(tmp_path / "stepdir"),
        },
        **kw,
    )
    log = tmp_path / "hooks.log"
    return classify(events), log.read_text() if log.exists() else ""


def _step(index: int, line: str, preflight: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "index": index,
        "component": "environment",
        "action": "install",
        "summary": "test step",
        "commands": [line],
        "preflight": list(preflight),
        "reboot": False,
        "files": [],
    }


@pytest.mark.skipif(shutil.which("ansible-playbook") is None, reason="needs ansible-core")
def test_preflight_failure_on_one_host_stops_every_host_before_any_step(tmp_path: Path) -> None:
    done = tmp_path / "ran"
    done.mkdir()
    runs = {
        h: [_step(1, f"touch {done}/{h}", ("false" if h == "n2" else "true",))] for h in ("n1", "n2", "n3")
    }
    seen, _ = _run(tmp_path, runs)
    assert not list(done.iterdir())  # nothing ran anywhere
    assert seen["n2"]["failure"][0] == "preflight"


@pytest.mark.skipif(shutil.which("ansible-playbook") is None, reason="needs ansible-core")
def test_canary_failure_stops_the_rollout_and_hooks_run_around_each_host(tmp_path: Path) -> None:
    done = tmp_path / "ran"
    done.mkdir()
    log = tmp_path / "hooks.log"
    runs = {
        h: [_step(1, f"touch {done}/{h}" + ("; exit 7" if h == "n1" else ""))] for h in ("n1", "n2", "n3")
    }
    seen, hooks = _run(
        tmp_path,
        runs,
        serial=[1, "100%"],
        cordon=f'echo "cordon $CANNENV_NODE" >> {log}',
        uncordon=f'echo "uncordon $CANNENV_NODE" >> {log}',
    )
    assert sorted(p.name for p in done.iterdir()) == ["n1"]  # the canary failed: nobody else ran
    assert seen["n1"]["failure"][0] == "step-failed"
    assert hooks.splitlines() == ["cordon n1"]  # a failed host stays cordoned
    # n1 is now marked half-installed: the next run refuses every host in the preflight
    assert (tmp_path / "failed-marker").is_file()
    (tmp_path / "failed-marker").unlink()
    # the same fleet healthy: every host, one hook pair each
    shutil.rmtree(done)
    done.mkdir()
    log.unlink()
    runs = {h: [_step(1, f"touch {done}/{h}")] for h in ("n1", "n2", "n3")}
    seen, hooks = _run(
        tmp_path,
        runs,
        serial=[1, "100%"],
        max_fail=0,
        cordon=f'echo "cordon $CANNENV_NODE" >> {log}',
        uncordon=f'echo "uncordon $CANNENV_NODE" >> {log}',
    )
    assert sorted(p.name for p in done.iterdir()) == ["n1", "n2", "n3"]
    assert all(seen[h]["done"] == [1] for h in runs)
    assert sorted(hooks.splitlines()) == sorted(f"{k} {h}" for h in runs for k in ("cordon", "uncordon"))


def test_target_map_default_and_conflicting_groups() -> None:
    tmap = TargetMap(
        groups={"g1": A2, "g2": P310}, node_groups={"n": ("g1", "g2")}, default=TargetSpec(stack_id=A2)
    )
    spec, how = tmap.route("n", Facts())
    assert spec is None and "different targets" in how
    assert tmap.route("other", Facts()) == (TargetSpec(stack_id=A2), "default target")


@pytest.mark.skipif(shutil.which("ansible-playbook") is None, reason="needs ansible-core")
def test_each_host_runs_its_own_steps_in_order_when_plans_differ(tmp_path: Path) -> None:
    """Ansible merges identical includes of different hosts: a host whose step 1 differs from the
    others' must still run it before the step 2 they share (found by the SSH-container test)."""
    ansible_runner = pytest.importorskip("ansible_runner")
    from cannenv.plan.provision import _run_playbook, classify

    inv = tmp_path / "inv.ini"
    inv.write_text(
        "".join(
            f"{h} ansible_connection=local ansible_python_interpreter={sys.executable} "
            f"cannenv_step_dir={tmp_path}/{h}/work\n"
            for h in ("n1", "n2")
        )
    )
    shared = 'echo "$1" >> "$CANNENV_ARTIFACTS/../order"'
    line = f"f() {{ {shared}; }}; f "
    runs = {
        "n1": [_step(1, line + "one-a"), _step(2, line + "two"), _step(3, line + "three")],
        "n2": [_step(1, line + "one-b"), _step(2, line + "two"), _step(3, line + "three")],
    }
    events = _run_playbook(
        ansible_runner,
        inv,
        runs,
        tmp_path,
        tmp_path / "runner",
        forks=2,
        reboot=False,
        step_timeout=60,
        connect_timeout=10,
        extra={"cannenv_step_failed_marker": str(tmp_path / "failed-marker")},
    )
    seen = classify(events)
    assert (tmp_path / "n1" / "order").read_text().split() == ["one-a", "two", "three"]
    assert (tmp_path / "n2" / "order").read_text().split() == ["one-b", "two", "three"]
    assert seen["n1"]["done"] == [1, 2, 3] and seen["n2"]["done"] == [1, 2, 3]


@pytest.mark.skipif(shutil.which("ansible-playbook") is None, reason="needs ansible-core")
def test_a_planned_reboot_ends_the_host_cordoned_and_the_next_run_waits_for_the_restart(
    tmp_path: Path,
) -> None:
    """Issue 31: a reboot step without --reboot is no failure (the other hosts and batches go on),
    the host is not uncordoned, and until its boot identity changes the next run refuses it alone;
    a host stopped part way by a failed step keeps its marker."""
    ansible_runner = pytest.importorskip("ansible_runner")
    from cannenv.plan.provision import _run_playbook, classify, run_outcome

    done = tmp_path / "ran"
    done.mkdir()
    log = tmp_path / "hooks.log"
    inv = tmp_path / "inv.ini"
    inv.write_text(
        "".join(
            f"{h} ansible_connection=local ansible_python_interpreter={sys.executable} "
            f"cannenv_step_failed_marker={tmp_path}/{h}.part "
            f"cannenv_step_reboot_marker={tmp_path}/{h}.reboot\n"
            for h in ("n1", "n2", "n3")
        )
    )
    reboot = {**_step(2, "true"), "component": "reboot", "action": "reboot", "reboot": True}

    def run(runs: dict[str, list[dict[str, Any]]], boot: str) -> dict[str, Any]:
        events = _run_playbook(
            ansible_runner,
            inv,
            runs,
            tmp_path,
            tmp_path / f"runner-{boot}",
            forks=3,
            reboot=False,
            step_timeout=60,
            connect_timeout=10,
            serial=[1, "100%"],
            max_fail=0,
            cordon=f'echo "cordon $CANNENV_NODE" >> {log}',
            uncordon=f'echo "uncordon $CANNENV_NODE" >> {log}',
            extra={
                "cannenv_step_dir": str(tmp_path / "stepdir"),
                "cannenv_step_boot_identity": f"echo {boot}",
            },
        )
        return classify(events)

    runs = {
        "n1": [_step(1, f"touch {done}/n1-1"), reboot, _step(3, f"touch {done}/n1-3")],
        "n2": [_step(1, f"touch {done}/n2-1")],
        "n3": [_step(1, f"touch {done}/n3-1"), _step(2, "exit 5"), _step(3, f"touch {done}/n3-3")],
    }
    seen = run(runs, "boot-1")
    assert sorted(p.name for p in done.iterdir()) == ["n1-1", "n2-1", "n3-1"]
    assert seen["n1"]["reboot"][0] == 2 and seen["n1"]["failure"] is None  # the canary's reboot: no failure
    n1 = run_outcome("n1", None, seen["n1"], [])
    assert n1 is not None and (n1.status, n1.cause, n1.failed_step, n1.steps_done) == (
        "reboot-required",
        "planned-reboot",
        2,
        (1,),
    )
    n3 = run_outcome("n3", None, seen["n3"], [])
    assert n3 is not None and (n3.status, n3.failed_step, n3.steps_done) == ("failed", 2, (1,))
    assert sorted(log.read_text().splitlines()) == ["cordon n1", "cordon n2", "cordon n3", "uncordon n2"]
    assert "boot-1" in (tmp_path / "n1.reboot").read_text() and not (tmp_path / "n1.part").exists()
    assert "step 2" in (tmp_path / "n3.part").read_text()  # stopped part way: marked
    assert not (tmp_path / "n2.part").exists()

    # not restarted yet: n1 alone is refused, n2 runs; after the restart n1 goes on
    (tmp_path / "n3.part").unlink()
    again = {"n1": [_step(3, f"touch {done}/n1-3")], "n2": [_step(1, f"touch {done}/n2-again")]}
    seen = run(again, "boot-1")
    assert seen["n1"]["failure"][0] == "awaiting-reboot" and seen["n2"]["done"] == [1]
    assert not (done / "n1-3").exists()
    seen = run(again, "boot-2")
    assert seen["n1"]["done"] == [3] and (done / "n1-3").exists()
    assert not (tmp_path / "n1.reboot").exists()


def test_every_host_is_in_one_of_four_states_and_the_report_says_what_ran() -> None:
    from cannenv.plan.provision import ProvisionReport, outcome, render_report, run_outcome
    from cannenv.plan.state import CAUSES, STATE_OF, STATES

    assert set(STATE_OF) == set(CAUSES) and set(STATE_OF.values()) == set(STATES)
    assert STATES == ("done", "failed", "not-run", "reboot-required")
    hosts = (
        outcome(
            "a",
            "step-failed",
            "nnal install exited 1",
            failed_step=3,
            failed_component="nnal",
            steps_done=(1, 2),
        ),
        outcome(
            "b", "controller", "refused by the controller, nothing ran: step 2 (python-packages): no wheel"
        ),
        outcome("c", "planned-reboot", "restart the host", failed_step=3, steps_done=(1, 2)),
        outcome("d", "nothing-to-do"),
    )
    text = render_report(ProvisionReport(hosts=hosts))
    assert "a  failed at step 3 (nnal), after steps 1, 2: nnal install exited 1" in text
    assert "b  not-run: refused by the controller, nothing ran" in text
    assert "c  reboot-required at step 3, after steps 1, 2: restart the host" in text
    assert "d  done: nothing to do" in text
    assert text.rstrip().endswith("1 done, 1 failed, 1 not-run, 1 reboot-required")
    assert ProvisionReport(hosts=hosts).exit_code() == 1
    # what Ansible reported -> the state: a host whose batch never came, one cut off part way
    assert run_outcome("e", None, {"done": [], "failure": None}, []).cause == "rollout-stopped"  # type: ignore[union-attr]
    pre = run_outcome("f", None, {"done": [], "failure": None}, ["g"])
    assert pre is not None and pre.cause == "preflight" and "nothing ran on any host" in pre.reason


def test_reading_inventory_groups_leaves_this_process_alone(tmp_path: Path) -> None:
    """Ansible reads the inventory in a subprocess: importing it here would replace sys.intern for
    the whole process (ansible-core patches it), and a later `import torch._dynamo` would fail."""
    import os

    from cannenv.fleet.targets import inventory_groups

    pytest.importorskip("ansible", reason="--inventory reads groups with ansible-core")
    inv = tmp_path / "inv.ini"
    inv.write_text("[training]\na2-1\n\n[gpu:children]\ntraining\n\n[train-b]\nx\n")
    intern, env = sys.intern, dict(os.environ)
    assert inventory_groups(str(inv)) == {"a2-1": ("gpu", "training"), "x": ("train-b",)}
    assert sys.intern is intern and dict(os.environ) == env
