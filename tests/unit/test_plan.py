"""Install plans (cannenv.plan): one test per example host, the plan an engineer would write by hand.

The target is the doctor's own choice (choose_target), so the plan and the doctor agree on "what
this host needs". Where the matrix decides (is the installed driver accepted for the target
CANN?) the test asks the matrix the same question instead of hard-coding today's data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from cannenv import matrix as matrix_mod
from cannenv.checks import Target
from cannenv.checks.stack import choose_target
from cannenv.facts import Facts
from cannenv.gather import read_env_file
from cannenv.host import Host
from cannenv.plan import ORDER, Plan, compute_plan, render_shell, render_text
from cannenv.probes import collect

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "hosts"


@pytest.fixture(scope="module")
def m() -> matrix_mod.Matrix:
    return matrix_mod.load()


def facts_of(name: str) -> Facts:
    d = EXAMPLES / name
    env = read_env_file(str(d / "host.env")) if (d / "host.env").exists() else {}
    return collect(Host((d / "tree").resolve(), env, True, 5.0), python=None, site_packages=())


def plan_of(name: str, m: matrix_mod.Matrix, stack: str | None = None, **kw: object) -> tuple[Plan, Target]:
    facts = facts_of(name)
    target = choose_target(facts, m, stack_id=stack)
    return compute_plan(facts, target, **kw), target  # type: ignore[arg-type]


def acts(plan: Plan) -> list[tuple[str, str]]:
    return [(s.component, s.action) for s in plan.actions]


def step(plan: Plan, component: str):  # type: ignore[no-untyped-def]
    return next(s for s in plan.steps if s.component == component and s.acts)


def driver_accepted(m: matrix_mod.Matrix, target: Target, driver: str) -> bool:
    assert target.stack is not None
    req = m.driver_requirement(target.stack.version("cann") or "", target.family or target.stack.family)
    return req is not None and req.accepts(driver)


def assert_ordered(plan: Plan) -> None:
    rank = [ORDER.index(s.component) for s in plan.steps]
    assert rank == sorted(rank)
    assert [s.index for s in plan.actions] == list(range(1, len(plan.actions) + 1))


# -- one test per example host -------------------------------------------------------------------


def test_a2_cann85_new_layout_healthy_has_nothing_to_do(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("a2-cann8.5-new-layout", m)
    assert plan.stack == "a2-cann8.5.0-torch2.8.0-py3.11"
    assert plan.empty and not plan.actions and not plan.reboot_required
    assert "nothing to do" in render_text(plan)


def test_broken_torch_npu_vs_cann_only_fixes_python_side_and_nnal(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("broken-torch-npu-vs-cann", m)
    assert plan.stack == "a2-cann8.5.0-torch2.8.0-py3.11"
    # the stack pins NNAL 8.5.0, which this host lacks; torch stays (2.8.0 is right), torch_npu moves
    assert acts(plan) == [("nnal", "install"), ("python-packages", "upgrade")]
    pkgs = step(plan, "python-packages")
    assert pkgs.commands == ("python3 -m pip install torch-npu==2.8.0.post2",)
    nnal = step(plan, "nnal")
    # CANN 8.5.0 is already active here: source the set_env.sh this host has (8.5 keeps one at
    # ascend-toolkit/), the one the doctor names too, not a cann-8.5.0/set_env.sh it lacks
    assert nnal.commands[-1].startswith(". /usr/local/Ascend/ascend-toolkit/set_env.sh && bash ")
    assert nnal.installers[0].file == "Ascend-cann-nnal_8.5.0_linux-aarch64.run"
    assert_ordered(plan)


def test_bare_host_to_a_stack_gets_everything_in_vendor_order(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("bare-no-ascend", m, stack="a2-cann8.5.0-torch2.8.0-py3.11")
    comps = [c for c, _ in acts(plan)]
    assert comps == [
        "account",
        "driver",
        "cann",
        "ops",
        "nnal",
        "python",
        "python-packages",
        "environment",
    ]
    assert all(a == "install" for _, a in acts(plan))
    driver = step(plan, "driver")
    assert driver.installers[0].file == "Ascend-hdk-910b-npu-driver_25.5.1_linux-aarch64.run"
    assert "--full" in driver.commands[0] and "--install-for-all" in driver.commands[0]
    assert driver.preconditions == ("the HwHiAiUser user and group exist",)
    # the vendor's .zip download, with the vendor's digest (ascend-deployer), not the bare .run
    ops = step(plan, "ops").installers[0]
    assert (ops.file, ops.run_file) == (
        "Ascend-cann-910b-ops_8.5.0_linux-aarch64.zip",
        "Ascend-cann-910b-ops_8.5.0_linux-aarch64.run",
    )
    assert ops.sha256 == m.download(ops.file).sha256  # type: ignore[union-attr]
    assert step(plan, "nnal").installers[0].sha256 is None  # no vendor digest for NNAL
    assert step(plan, "python").manual  # no Python in the tree: a person provides one
    env = step(plan, "environment")
    # from 8.5 the cann link selects; the deprecated ascend-toolkit/latest moves only where it exists
    assert "ln -sfn cann-8.5.0 /usr/local/Ascend/cann" in env.commands
    assert (
        "if [ -L /usr/local/Ascend/ascend-toolkit/latest ]; then "
        "ln -sfn ../cann-8.5.0 /usr/local/Ascend/ascend-toolkit/latest; fi" in env.commands
    )
    assert [v.expect for v in env.verify] == ["/usr/local/Ascend/cann-8.5.0"]
    assert_ordered(plan)


def test_a3_cann83_upgrade_keeps_83_side_by_side_and_moves_latest(m: matrix_mod.Matrix) -> None:
    plan, target = plan_of("a3-cann8.3", m, stack="a3-cann8.5.0-torch2.7.1-py3.11")  # a named target
    assert plan.stack == "a3-cann8.5.0-torch2.7.1-py3.11"
    expected = [("cann", "upgrade"), ("ops", "install"), ("nnal", "install"), ("python-packages", "upgrade")]
    expected.append(("environment", "install"))
    if not driver_accepted(m, target, "25.2.1"):
        expected[:0] = [("driver", "upgrade"), ("reboot", "reboot")]
    assert acts(plan) == expected
    assert "8.3.RC2 stays side by side" in step(plan, "cann").summary
    assert step(plan, "ops").installers[0].file == "Ascend-cann-A3-ops_8.5.0_linux-aarch64.zip"
    assert not any(s.action == "remove" for s in plan.steps)


def test_a3_cann83_replace_removes_the_old_cann_after_the_new_one(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("a3-cann8.3", m, stack="a3-cann8.5.0-torch2.7.1-py3.11", cann_policy="replace")
    order = [(s.component, s.action) for s in plan.actions]
    assert order.index(("cann", "upgrade")) < order.index(("cann", "remove"))
    rm = next(s for s in plan.actions if s.action == "remove")
    assert rm.version_from == "8.3.RC2"
    # a guard refuses to remove the version `latest` still points at
    assert "readlink -f /usr/local/Ascend/ascend-toolkit/latest" in rm.commands[0]
    assert (
        rm.commands[1]
        == "bash /usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux/script/uninstall.sh --quiet"
    )


def test_replace_with_an_unknown_arch_lets_the_host_say_it(m: matrix_mod.Matrix) -> None:
    """Neither the old install nor the host tells its arch: the uninstall path asks `uname -m` at run
    time, outside the quotes (quoted, the shell would look for a literal `$(uname -m)-linux` folder)."""
    import platform

    facts = facts_of("a3-cann8.3")
    installs = tuple(replace(i, arch=None) for i in facts.cann.installs)
    facts = replace(facts, os=replace(facts.os, arch=None), cann=replace(facts.cann, installs=installs))
    plan = compute_plan(
        facts, choose_target(facts, m, stack_id="a3-cann8.5.0-torch2.7.1-py3.11"), cann_policy="replace"
    )
    rm = next(s for s in plan.actions if s.action == "remove")
    line = rm.commands[1]
    assert line.startswith("bash ") and line.endswith(" --quiet"), line
    path_words = line.removeprefix("bash ").removesuffix(" --quiet")
    shown = subprocess.run(
        ["bash", "-c", f"printf %s {path_words}"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    expected = f"/usr/local/Ascend/ascend-toolkit/8.3.RC2/{platform.machine()}-linux/script/uninstall.sh"
    assert shown == expected


def test_the_folder_summary_names_a_reboot_once(m: matrix_mod.Matrix, tmp_path: Path) -> None:
    from tests.helpers.cli import cannenv

    (tmp_path / "old-driver.json").write_text(facts_of("broken-driver-too-old").to_json(), encoding="utf-8")
    proc = cannenv("plan", "--facts", str(tmp_path), "--stack", "a2-cann8.5.0-torch2.8.0-py3.11")
    assert ", reboot," in proc.stdout and "reboot reboot" not in proc.stdout, proc.stdout + proc.stderr


def _old_layout_case(name: str, m: matrix_mod.Matrix, *, env_selected: bool = True) -> Plan:
    # the doctor's nearest stack, named: a downgrade needs an explicit target (issue 22 §4)
    plan, target = plan_of(name, m, stack="a2-cann8.3.rc1-torch2.7.1-py3.11")
    assert plan.stack == "a2-cann8.3.rc1-torch2.7.1-py3.11"
    expected = [("cann", "downgrade"), ("ops", "install"), ("nnal", "install"), ("environment", "install")]
    facts = facts_of(name)
    if not facts.container.in_container and not driver_accepted(m, target, facts.driver.version or ""):  # type: ignore[union-attr]
        expected[:0] = [("driver", "upgrade"), ("reboot", "reboot")]
    assert acts(plan) == expected
    cann = step(plan, "cann")
    assert cann.installers[0].file == "Ascend-cann-toolkit_8.3.RC1_linux-aarch64.zip"
    zipped = '"$CANNENV_ARTIFACTS"/Ascend-cann-toolkit_8.3.RC1_linux-aarch64'
    assert cann.commands == (
        f"python3 -m zipfile -e {zipped}.zip {zipped}",
        f"if [ ! -f {zipped}/Ascend-cann-toolkit_8.3.RC1_linux-aarch64.run ] && "
        f"[ -f {zipped}/Ascend-cann-toolkit_8.3.RC1_linux-aarch64.zip ]; "
        f"then python3 -m zipfile -e {zipped}/Ascend-cann-toolkit_8.3.RC1_linux-aarch64.zip {zipped}; fi",
        f"bash {zipped}/Ascend-cann-toolkit_8.3.RC1_linux-aarch64.run --install --install-for-all --quiet",
    )
    ops = step(plan, "ops")
    assert ops.installers[0].file == "Ascend-cann-kernels-910b_8.3.RC1_linux-aarch64.zip"
    assert ops.commands[-1].startswith(". /usr/local/Ascend/ascend-toolkit/set_env.sh && ")
    env = step(plan, "environment")
    assert env.commands[0] == "ln -sfn 8.3.RC1 /usr/local/Ascend/ascend-toolkit/latest"
    assert_ordered(plan)
    return plan


def test_a2_cann83_old_layout(m: matrix_mod.Matrix) -> None:
    _old_layout_case("a2-cann8.3-old-layout", m)


def test_broken_env_not_sourced(m: matrix_mod.Matrix) -> None:
    plan = _old_layout_case("broken-env-not-sourced", m)
    assert "login shells select no CANN" in step(plan, "environment").summary


def test_broken_kernels_wrong_chip(m: matrix_mod.Matrix) -> None:
    plan = _old_layout_case("broken-kernels-wrong-chip", m)
    assert "910b" in step(plan, "ops").summary


def test_broken_two_cann_mixed_keeps_both_old_ones(m: matrix_mod.Matrix) -> None:
    plan = _old_layout_case("broken-two-cann-mixed", m)
    assert "8.2.RC1, 8.3.RC2 stays side by side" in step(plan, "cann").summary


def test_container_with_mounts_never_touches_the_driver(m: matrix_mod.Matrix) -> None:
    plan = _old_layout_case("container-with-mounts", m)
    assert not any(s.component in ("driver", "firmware", "account") for s in plan.actions)


def test_broken_container_no_mounts_never_installs_a_driver_in_the_container(m: matrix_mod.Matrix) -> None:
    plan = _old_layout_case("broken-container-no-mounts", m)
    drv = next(s for s in plan.steps if s.component == "driver")
    assert drv.action == "leave" and "machine it runs on" in drv.summary
    assert "note: driver and firmware not planned" in render_text(plan)


def test_broken_driver_too_old_upgrades_the_driver_first(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("broken-driver-too-old", m)
    assert plan.stack == "a2-cann8.2.rc1-torch2.6.0-py3.11"
    # the firmware is already the stack's; the replaced driver's kernel modules need a restart
    assert acts(plan) == [("driver", "upgrade"), ("reboot", "reboot"), ("nnal", "install")]
    drv = step(plan, "driver")
    assert drv.version_from == "24.1.rc2.2" and drv.version_to == "25.0.rc1.1"
    # the driver .run comes out of the vendor's HDK bundle zip, pinned by ascend-deployer's NPU_*.json
    assert drv.installers[0].file == "Ascend-hdk-910b-npu_25.0.rc1.1_linux-aarch64.zip"
    assert drv.installers[0].run_file == "Ascend-hdk-910b-npu-driver_25.0.rc1.1_linux-aarch64.run"
    assert drv.installers[0].sha256 is not None
    assert any("--upgrade" in c for c in drv.commands)
    assert [(v.fact, v.expect) for v in drv.verify] == [("driver.version", "25.0.rc1.1")]


def test_310p_patch_driver_is_left_alone(m: matrix_mod.Matrix) -> None:
    plan, target = plan_of("310p-cann8.1", m)
    assert plan.stack == "310p-cann8.1.rc1-torch2.5.1-py3.10"
    drv = next(s for s in plan.steps if s.component == "driver")
    # 24.1.rc2.2 is a patch of the pinned 24.1.rc2: an engineer keeps it when the matrix accepts it
    assert drv.acts == (not driver_accepted(m, target, "24.1.rc2.2"))
    assert ("cann", "install") not in acts(plan) and ("ops", "install") not in acts(plan)
    assert acts(plan)[-1] == ("nnal", "install")


# -- properties of plans ---------------------------------------------------------------------------


def test_zip_packages_are_unpacked_with_python_then_run(m: matrix_mod.Matrix) -> None:
    facts = facts_of("bare-no-ascend")
    target = choose_target(facts, m, stack_id="a2-cann8.5.0-torch2.8.0-py3.11")
    assert target.stack is not None
    comps = dict(target.stack.components)
    cann = comps["cann"]
    art = replace(
        cann.artifacts["aarch64"], file="Ascend-cann-toolkit_8.5.0_linux-aarch64.zip", sha256="ab" * 32
    )
    comps["cann"] = replace(cann, artifacts={**cann.artifacts, "aarch64": art})
    target = replace(target, stack=replace(target.stack, components=comps))
    s = step(compute_plan(facts, target), "cann")
    inst = s.installers[0]
    assert (inst.archive, inst.run_file, inst.sha256) == (
        "zip",
        "Ascend-cann-toolkit_8.5.0_linux-aarch64.run",
        "ab" * 32,
    )
    zipped = '"$CANNENV_ARTIFACTS"/Ascend-cann-toolkit_8.5.0_linux-aarch64'
    assert s.commands == (
        f"python3 -m zipfile -e {zipped}.zip {zipped}",
        f"if [ ! -f {zipped}/Ascend-cann-toolkit_8.5.0_linux-aarch64.run ] && "
        f"[ -f {zipped}/Ascend-cann-toolkit_8.5.0_linux-aarch64.zip ]; "
        f"then python3 -m zipfile -e {zipped}/Ascend-cann-toolkit_8.5.0_linux-aarch64.zip {zipped}; fi",
        f"bash {zipped}/Ascend-cann-toolkit_8.5.0_linux-aarch64.run --install --install-for-all --quiet",
    )


def test_offline_python_step_uses_the_artifacts_folder(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("broken-torch-npu-vs-cann", m, offline=True)
    assert step(plan, "python-packages").commands == (
        'python3 -m pip install --no-index --find-links "$CANNENV_ARTIFACTS" torch-npu==2.8.0.post2',
    )


def test_json_round_trip_and_shell_is_valid_bash(m: matrix_mod.Matrix, tmp_path: Path) -> None:
    plan, _ = plan_of("bare-no-ascend", m, stack="a2-cann8.5.0-torch2.8.0-py3.11")
    assert Plan.from_json(plan.to_json()) == plan
    script = tmp_path / "plan.sh"
    script.write_text(render_shell(plan))
    assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    text = script.read_text()
    assert text.index("step 1: account") < text.index("step 2: driver") < text.index("cann install")


def test_no_target_is_a_problem_not_an_empty_plan(m: matrix_mod.Matrix) -> None:
    plan, _ = plan_of("bare-no-ascend", m)
    assert plan.stack is None and plan.problems and not plan.empty


# -- the commands ------------------------------------------------------------------------------------


def _cli(*args: str) -> tuple[int, str]:
    """Run the CLI's real boundary (cannenv.cli.main: error → exit code) in this process."""
    res = CliRunner().invoke(_Main(), list(args))
    return res.exit_code, res.output


class _Main(click.Command):
    def __init__(self) -> None:
        super().__init__("cannenv")

    def main(self, args: list[str] | None = None, *a: object, **kw: object) -> None:  # type: ignore[override]
        from cannenv.cli import main

        main(list(args or []))


def _host_args(name: str) -> list[str]:
    d = EXAMPLES / name
    return ["--root", str(d / "tree"), "--env-file", str(d / "host.env")]


def test_plan_cli_exit_codes() -> None:
    code, out = _cli("plan", *_host_args("a2-cann8.5-new-layout"))
    assert code == 0 and "nothing to do" in out
    code, out = _cli("plan", *_host_args("broken-torch-npu-vs-cann"), "--json")
    assert code == 1 and json.loads(out)["stack"] == "a2-cann8.5.0-torch2.8.0-py3.11"
    code, out = _cli("plan", *_host_args("bare-no-ascend"))
    assert code == 2 and "no target stack" in out


def test_doctor_plan_is_the_same_plan_as_cannenv_plan() -> None:
    args = _host_args("broken-torch-npu-vs-cann")
    code_d, shell_d = _cli("doctor", *args, "--plan", "--shell")
    code_p, shell_p = _cli("plan", *args, "--shell")
    assert code_d == code_p == 1 and shell_d == shell_p
    assert "pip install torch-npu==2.8.0.post2" in shell_d
    code, _ = _cli("doctor", *args, "--shell")
    assert code == 2


def test_plan_facts_file(tmp_path: Path) -> None:
    facts = tmp_path / "host.json"
    facts.write_text(facts_of("broken-driver-too-old").to_json())
    code, out = _cli("plan", "--facts", str(facts), "-v")
    assert code == 1 and "driver          upgrade" in out and "leave" in out


def test_plan_module_does_not_import_heavy_things() -> None:
    heavy = "('torch', 'docker', 'pydantic')"
    code = f"import sys, cannenv.plan; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- issue 12 §2.1: one consistent fix plan for torch 2.8.0 + torch_npu 2.9.0 ---------------------------


def test_torch_280_with_torch_npu_290_gets_one_consistent_plan(m: matrix_mod.Matrix, tmp_path: Path) -> None:
    from tests.helpers.hosts import HostTree

    HostTree(tmp_path).os_release().python_stack("2.8.0", "2.9.0")
    facts = collect(Host(tmp_path, {}, True, 5.0), python=None, site_packages=())
    chosen = choose_target(facts, m)
    assert chosen.stack is not None
    # a chosen target never moves the newer torch_npu down (issue 22 §4); a named one plans one fix
    assert not [a for a in acts(compute_plan(facts, chosen, hdk="no")) if a[0] == "python-packages"] or (
        chosen.stack.version("torch_npu") == "2.9.0"
    )
    target = choose_target(facts, m, stack_id=chosen.stack.id)
    plan = compute_plan(facts, target, hdk="no")
    stack = target.stack
    assert stack is not None
    pins = {f"torch=={stack.version('torch')}", f"torch-npu=={stack.version('torch_npu')}"}
    named = {w for s in plan.actions for line in s.commands for w in line.split() if "==" in w}
    assert named and named <= pins  # every pip pin is the one target's, never a mix of two stacks
    assert ("python-packages", "upgrade") in acts(plan)
    if stack.version("torch") == "2.8.0":  # the installed torch is the target's: it is kept
        assert not any(w.startswith("torch==") for w in named)
    cann = step(plan, "cann")
    assert cann.version_to == stack.version("cann")  # the toolkit the target's torch_npu pairs with
    assert_ordered(plan)


# -- provision's pure parts ---------------------------------------------------------------------------


def test_classify_runner_events() -> None:
    from cannenv.plan.provision import classify

    events = [
        {
            "event": "runner_on_ok",
            "event_data": {"host": "a", "res": {"msg": "cannenv-provision: done: step 1"}},
        },
        {
            "event": "runner_on_ok",
            "event_data": {"host": "a", "res": {"msg": "cannenv-provision: done: step 2"}},
        },
        {
            "event": "runner_on_failed",
            "event_data": {
                "host": "a",
                "res": {
                    "msg": "cannenv-provision: step-failed: step 3: nnal install exited 1\nline 1\nline 2"
                },
            },
        },
        {
            "event": "runner_on_ok",
            "event_data": {"host": "b", "res": {"msg": "cannenv-provision: done: step 1"}},
        },
        {
            "event": "runner_on_failed",
            "event_data": {
                "host": "c",
                "res": {
                    "msg": "One or more items failed",
                    "results": [
                        {"failed": True, "msg": "cannenv-provision: checksum: step 2: x.run has sha256 0"}
                    ],
                },
            },
        },
        {"event": "runner_on_unreachable", "event_data": {"host": "d", "res": {"msg": "Connection refused"}}},
    ]
    got = classify(events)
    assert got["a"]["done"] == [1, 2]
    assert got["a"]["failure"] == ("step-failed", 3, "nnal install exited 1\nline 1\nline 2")
    assert got["b"] == {"done": [1], "failure": None, "reboot": None}
    assert got["c"]["failure"][:2] == ("checksum", 2)
    assert got["d"]["failure"] == ("unreachable", None, "Connection refused")


def test_role_steps_copy_only_what_each_step_needs(m: matrix_mod.Matrix, tmp_path: Path) -> None:
    from cannenv.plan.provision import role_steps

    plan, _ = plan_of("broken-torch-npu-vs-cann", m, offline=True)
    art = tmp_path / "art"
    art.mkdir()
    (art / "Ascend-cann-nnal_8.5.0_linux-aarch64.run").write_text("fixture\n")
    # nothing pinned: refused without --allow-unpinned; the wheels are missing: every reason is named
    steps, refused = role_steps(plan, art, allow_unpinned=False)
    assert [(s.index, s.component) for s, _ in refused] == [(1, "nnal"), (2, "python-packages")]
    assert "pins no sha256" in refused[0][1] and "no wheel" in refused[1][1]
    # unpinned allowed: the NNAL step could run; the wheel step is still refused (no wheel in the folder)
    steps, refused = role_steps(plan, art, allow_unpinned=True)
    assert [s["component"] for s in steps] == ["nnal"]
    assert [f["name"] for f in steps[0]["files"]] == ["Ascend-cann-nnal_8.5.0_linux-aarch64.run"]
    assert [s.component for s, _ in refused] == ["python-packages"] and "no wheel" in refused[0][1]
    (art / "torch_npu-2.8.0.post2-cp311-cp311-manylinux_2_28_aarch64.whl").write_text("w")
    (art / "torch-2.8.0-cp311-none-any.whl").write_text("w")  # not needed: torch stays
    steps, refused = role_steps(plan, art, allow_unpinned=True)
    assert refused == []
    assert [f["name"] for f in steps[1]["files"]] == [
        "torch_npu-2.8.0.post2-cp311-cp311-manylinux_2_28_aarch64.whl"
    ]


def test_shipped_stacks_provision_from_the_vendor_zips_pinned_by_the_vendor(
    m: matrix_mod.Matrix, tmp_path: Path
) -> None:
    """Toolkit and ops come as the vendor's .zip downloads with the vendor's sha256 (no
    --allow-unpinned); only NNAL, for which no digest is published, still needs it. The step's own
    lines, run by bash as the role runs them, unpack a flat zip and a signed inner zip alike."""
    import hashlib
    import zipfile

    from cannenv.plan.provision import role_steps

    plan, _ = plan_of("bare-no-ascend", m, stack="a2-cann8.5.0-torch2.8.0-py3.11")
    cann, ops = step(plan, "cann"), step(plan, "ops")
    for s in (cann, ops):
        inst = s.installers[0]
        listed = m.download(inst.file)
        assert inst.archive == "zip" and listed is not None and inst.sha256 == listed.sha256
        assert "DEPLOYER-26.0.0" in listed.sources
    # in a container (the driver is the machine's): toolkit and ops pass without --allow-unpinned,
    # the host stops at NNAL, whose installer nobody publishes a digest for
    cplan, _ = plan_of("container-with-mounts", m, stack="a2-cann8.5.0-torch2.8.0-py3.11")
    art = tmp_path / "art"
    art.mkdir()
    for s in cplan.actions:
        for inst in s.installers:
            (art / inst.file).write_text("TEST FIXTURE, not the vendor's bytes\n")
    steps, refused = role_steps(cplan, art, allow_unpinned=False)
    c_inst = step(cplan, "cann").installers[0]
    # the fixture zips are not the vendor's bytes: the controller refuses them before any host runs
    # anything (the host checks the digest again after the copy); NNAL has no published digest
    why = dict((s.component, r) for s, r in refused)
    assert [x["component"] for x in steps] == ["environment"] and {"cann", "ops", "nnal"} <= set(why), why
    assert f"{c_inst.file} in --artifacts has sha256" in why["cann"] and str(c_inst.sha256) in why["cann"]
    assert "pins no sha256 for Ascend-cann-nnal_8.5.0_linux-aarch64.run" in why["nnal"]
    # the commands themselves, on a fixture installer in a flat zip and in a signed inner zip
    for nested in (False, True):
        work = tmp_path / f"run-{nested}"
        work.mkdir()
        run = cann.installers[0].run_file
        assert run is not None
        marker = work / "RAN"
        payload = f'#!/bin/bash\necho "$@" > {marker}\n'.encode()
        outer = work / cann.installers[0].file
        with zipfile.ZipFile(outer, "w") as zf:
            if nested:
                inner = work / "inner.zip"
                with zipfile.ZipFile(inner, "w") as izf:
                    izf.writestr(run, payload)
                    izf.writestr(run + ".cms", b"fixture signature")
                zf.write(inner, cann.installers[0].file)
                zf.writestr(cann.installers[0].file + ".cms", b"fixture signature")
            else:
                zf.writestr(run, payload)
        assert hashlib.sha256(outer.read_bytes()).hexdigest() != cann.installers[0].sha256
        proc = subprocess.run(
            ["bash", "-c", "set -eu\n" + "\n".join(cann.commands)],
            env={"CANNENV_ARTIFACTS": str(work), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert marker.read_text().split() == ["--install", "--install-for-all", "--quiet"]


def test_provision_playbook_and_role_pass_ansible_syntax_check(tmp_path: Path) -> None:
    import shutil

    exe = shutil.which("ansible-playbook")
    if exe is None:
        pytest.skip("ansible-playbook not installed (pip install 'cannenv[fleet]')")
    from cannenv.plan.provision import playbook_path

    inv = tmp_path / "inv.ini"
    inv.write_text("h ansible_host=127.0.0.1\n")
    proc = subprocess.run(
        [exe, "--syntax-check", "-i", str(inv), str(playbook_path())],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_provision_bad_input_is_exit_2_before_any_host_is_touched(tmp_path: Path) -> None:
    inv = tmp_path / "inv.ini"
    inv.write_text("h ansible_host=127.0.0.1\n")
    code, out = _cli("provision", "-i", str(inv), "--artifacts", str(tmp_path))
    assert code == 2 and "--stack ID, --lock FILE" in out
    code, out = _cli("provision", "-i", str(inv), "--stack", "x", "--artifacts", str(tmp_path / "nope"))
    assert code == 2 and "is not a directory" in out
    code, out = _cli(
        "provision", "-i", str(tmp_path / "none.ini"), "--stack", "x", "--artifacts", str(tmp_path)
    )
    assert code == 2 and "inventory" in out
    code, out = _cli("provision", "-i", str(inv), "--stack", "no-such-stack", "--artifacts", str(tmp_path))
    assert code == 3 and "no-such-stack" in out


def test_plan_for_a_folder_of_facts(tmp_path: Path) -> None:
    folder = tmp_path / "collected"
    folder.mkdir()
    for name in ("broken-driver-too-old", "a2-cann8.5-new-layout"):
        (folder / f"{name}.json").write_text(facts_of(name).to_json())
    (folder / "collection.json").write_text("{}")  # the manifest is not a host
    code, out = _cli("plan", "--facts", str(folder), "--stack", "a2-cann8.5.0-torch2.8.0-py3.11", "--json")
    assert code == 1
    plans = {p["host"]: p for p in json.loads(out)["plans"]}
    assert set(plans) == {"broken-driver-too-old", "a2-cann8.5-new-layout"}
    assert all(s["action"] == "leave" for s in plans["a2-cann8.5-new-layout"]["steps"])
    code, out = _cli("plan", "--facts", str(folder), "--stack", "a2-cann8.5.0-torch2.8.0-py3.11")
    assert code == 1 and "a2-cann8.5-new-layout" in out and "nothing to do" in out
    code, out = _cli("plan", "--facts", str(folder), "--shell")
    assert code == 2


def test_nnal_step_sources_the_same_existing_set_env_as_the_doctor_remedy() -> None:
    """CANN 8.5.0 already active, its set_env.sh at ascend-toolkit/ (8.5 keeps it there): the plan's
    NNAL step and the doctor's NNAL remedy name that one file, never a cann-8.5.0/set_env.sh the
    host does not have."""
    name = "broken-torch-npu-vs-cann"
    code, out = _cli("plan", *_host_args(name), "--json")
    assert code == 1
    (step,) = [s for s in json.loads(out)["steps"] if s["component"] == "nnal"]
    sourced = [p for p in step["preconditions"] if p.endswith(" sourced")]
    assert sourced == ["/usr/local/Ascend/ascend-toolkit/set_env.sh sourced"]
    assert (EXAMPLES / name / "tree" / "usr/local/Ascend/ascend-toolkit/set_env.sh").is_file()
    code, out = _cli("doctor", *_host_args(name), "--json")
    (nnal,) = [f for f in json.loads(out)["findings"] if f["id"] == "nnal-cann"]
    assert "/usr/local/Ascend/ascend-toolkit/set_env.sh" in nnal["remedy"]


def test_hdk_driver_comes_from_the_vendor_hdk_zip_pinned_by_the_vendor(
    m: matrix_mod.Matrix, tmp_path: Path
) -> None:
    """An A2 stack on HDK 25.3.RC1: the driver .run comes out of the vendor's HDK bundle
    Ascend-hdk-910b-npu_25.3.rc1_linux-<arch>.zip, whose sha256 ascend-deployer's NPU_25.3.RC1.json
    gives (7.3.0, 26.0.0), so provisioning needs --allow-unpinned for NNAL alone."""
    from cannenv.plan.provision import role_steps

    plan, _ = plan_of("bare-no-ascend", m, stack="a2-cann8.3.rc1-torch2.7.1-py3.11")
    drv = step(plan, "driver").installers[0]
    listed = m.download(drv.file)
    assert drv.file.startswith("Ascend-hdk-910b-npu_25.3.rc1_linux-") and drv.archive == "zip"
    assert listed is not None and drv.sha256 == listed.sha256 and "NPU_25.3.RC1.json" in (listed.note or "")
    assert drv.run_file is not None and drv.run_file.startswith("Ascend-hdk-910b-npu-driver_25.3.rc1_linux-")
    art = tmp_path / "art"
    art.mkdir()
    for s in plan.actions:
        for inst in s.installers:
            (art / inst.file).write_text("TEST FIXTURE, not the vendor's bytes\n")
    steps, refused = role_steps(plan, art, allow_unpinned=False)
    why = dict((s.component, r) for s, r in refused)
    assert {"driver", "cann", "ops", "nnal"} <= set(why), why  # fixture bytes: not the pinned digests
    assert "pins no sha256" in why["nnal"] and "pins no sha256" not in why["driver"]
    assert "account" in [s["component"] for s in steps]


def test_the_combined_package_is_known_and_not_used(m: matrix_mod.Matrix, tmp_path: Path) -> None:
    """CANN 9.0.0 release note: the combined 合一包 Ascend-cann_<version>_linux-<arch>.run holds the NPU
    driver and the Toolkit; instg_0030: it cannot be upgraded with --upgrade. The installers data names
    it, the plan says why it installs the separate packages, provisioning says it is no stand-in."""
    from cannenv.plan.provision import step_files

    name = m.installer_file("combined", "9.1.0", "a2", "aarch64")
    assert name.file == "Ascend-cann_9.1.0_linux-aarch64.run" and "RN-900" in name.sources
    plan, _ = plan_of("bare-no-ascend", m, stack="a2-cann9.1.0-torch2.12.0-py3.11")
    assert any("Ascend-cann_9.1.0_linux-aarch64.run" in n and "--upgrade" in n for n in plan.notes)
    old, _ = plan_of("bare-no-ascend", m, stack="a2-cann8.5.0-torch2.8.0-py3.11")
    assert not any("combined" in n for n in old.notes)  # no combined package before 9.0.0
    art = tmp_path / "art"
    art.mkdir()
    (art / "Ascend-cann_9.1.0_linux-aarch64.run").write_text("FIXTURE\n")
    _, why = step_files(step(plan, "cann"), art)
    assert why is not None and "combined driver + toolkit package" in why


def test_a_cann_only_tree_needs_no_ascend_toolkit_link(tmp_path: Path) -> None:
    """CANN 8.5.0 deprecations: ascend-toolkit/latest/... go in releases after 2026-12-30. On a tree
    with only cann-9.1.0/ and the cann link, the environment step neither needs nor creates it."""
    from tests.helpers.hosts import HostTree

    tree = HostTree(tmp_path).driver()
    tree.npu_smi("a2")
    path = "/usr/local/Ascend/cann-9.1.0"
    tree.write(
        f"{path}/aarch64-linux/ascend_toolkit_install.info",
        f"package_name=Ascend-cann-toolkit\nversion=9.1.0\narch=aarch64\nos=linux\npath={path}/aarch64-linux\n",
    )
    tree.write(
        f"{path}/aarch64-linux/ascend_ops_install.info", "package_name=Ascend-cann-910b-ops\nversion=9.1.0\n"
    )
    tree.write(f"{path}/set_env.sh", "# FIXTURE\n")
    tree.link("/usr/local/Ascend/cann", "cann-9.1.0")
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0), python=None, site_packages=())
    m = matrix_mod.load()
    plan = compute_plan(facts, choose_target(facts, m, stack_id="a2-cann9.1.0-torch2.12.0-py3.11"))
    assert not any(
        "ascend-toolkit/latest" in c and not c.startswith("if [ -L") for s in plan.steps for c in s.commands
    )
    assert not any("ascend-toolkit/latest" in s.summary for s in plan.steps)


def test_driver_and_firmware_in_the_vendors_order(tmp_path: Path) -> None:
    """Issue 31: first installation driver → firmware; overwrite or upgrade firmware → driver, then
    one restart, then CANN; each HDK step names the vendor's statement (HDK-ORDER). The fixture
    stack (tests/helpers/provision.py) pins a driver and a firmware the hosts do not have."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from helpers.provision import STACK_ID, matrix_yaml

    keys = ("driver", "firmware", "cann", "ops", "nnal")
    files = {k: f"FIXTURE-{k}.run" for k in keys}
    plans = []
    for name in ("bare-no-ascend", "broken-driver-too-old"):
        facts = facts_of(name)
        extra = tmp_path / f"{name}.yaml"
        doc = matrix_yaml(files, {k: "0" * 64 for k in keys}, facts.os.arch or "x86_64")
        extra.write_text(doc.replace("7.7.0.1.231", "7.8.0.2.212"))  # a firmware neither host has
        fm = matrix_mod.load([str(extra)])
        plans.append(compute_plan(facts, choose_target(facts, fm, stack_id=STACK_ID), hdk="yes"))
    first, up = plans
    comps = [s.component for s in first.actions]
    assert comps.index("driver") < comps.index("firmware") < comps.index("reboot") < comps.index("cann")
    comps = [s.component for s in up.actions]
    assert up.steps[0].component == "account" and step(up, "driver").version_from is not None
    assert comps.index("firmware") < comps.index("driver") < comps.index("reboot") < comps.index("cann")
    assert comps.count("reboot") == 1
    for p in (first, up):
        for c in ("driver", "firmware"):
            assert "HDK-ORDER" in step(p, c).sources


def test_an_inactive_older_cann_nothing_points_at_is_compliant(m: matrix_mod.Matrix) -> None:
    """Issue 31 item 6: the default policy (side by side) keeps the older CANN; once nothing points
    at it, the doctor's cann-installs passes it (named as kept), so plan ("nothing to do") and the
    doctor agree; a search path still into it keeps the warning."""
    from dataclasses import replace

    from cannenv import checks
    from cannenv.facts import CannInstall

    facts = facts_of("a2-cann8.5-new-layout")
    old = CannInstall(path="/usr/local/Ascend/ascend-toolkit/8.3.RC1", layout="toolkit", version="8.3.RC1")
    two = replace(facts, cann=replace(facts.cann, installs=(*facts.cann.installs, old)))
    target = choose_target(two, m, stack_id="a2-cann8.5.0-torch2.8.0-py3.11")
    found = [f for f in checks.run(two, target) if f.id == "cann-installs"]
    assert [f.status for f in found] == ["pass"]
    assert "inactive (nothing points at it): 8.3.RC1" in found[0].detail
    assert not [s for s in compute_plan(two, target).actions if s.component in ("cann", "environment")]
    stale = replace(
        two, env=replace(two.env, ld_library_path=(*two.env.ld_library_path, f"{old.path}/lib64"))
    )
    assert [f.status for f in checks.run(stale, target) if f.id == "cann-installs"] == ["warn"]
