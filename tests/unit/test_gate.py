"""The run-time gate: host driver (mounted version.info) against the image's driver range."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv.gate import DRIVER_INFO, ENV_DISABLE, GateInputs, decide, read_gate_inputs
from cannenv.host import Host

# Real version.info samples (versions.md §4.1, [MC] and public notes)
from tests.helpers.hosts import DRIVER_23_0_7, DRIVER_24_1_RC1, DRIVER_25_0_RC1_1


def inputs(text: str | None, required: str | None = ">=24.1.rc2", **kw: object) -> GateInputs:
    return GateInputs(required, "test", text, **kw)  # type: ignore[arg-type]


def test_a_fitting_driver_starts() -> None:
    d = decide(inputs(DRIVER_25_0_RC1_1))
    assert d.action == "start" and d.exit_code == 0 and d.host_driver == "25.0.rc1.1"


def test_a_too_old_driver_is_refused_with_one_paragraph() -> None:
    d = decide(inputs(DRIVER_23_0_7, stack_id="a2-x"))
    assert d.action == "refuse" and d.exit_code == 1
    assert "\n" not in d.message
    assert ">=24.1.rc2" in d.message and "23.0.7" in d.message  # what it needs, what the host has
    assert "Fix:" in d.message and ENV_DISABLE in d.message and "a2-x" in d.message


def test_rc_ordering_uses_the_vendor_grammar() -> None:
    assert decide(inputs(DRIVER_24_1_RC1)).action == "refuse"  # 24.1.rc1 < 24.1.rc2, Version= line only
    assert decide(inputs(DRIVER_24_1_RC1, required=">=24.1.rc1,<25")).action == "start"
    assert decide(inputs(DRIVER_25_0_RC1_1, required=">=24.1.rc1,<25")).action == "refuse"


def test_no_driver_mounted_starts_with_a_warning() -> None:
    d = decide(inputs(None))
    assert d.action == "warn" and d.exit_code == 0 and "no NPU driver is mounted" in d.message


def test_the_bypass_starts_with_a_warning() -> None:
    d = decide(inputs(DRIVER_23_0_7, disabled=True))
    assert d.action == "warn" and ENV_DISABLE in d.message


def test_unreadable_versions_are_refused_not_guessed() -> None:
    assert decide(inputs("ascendhal_version=7.35.19\n")).action == "refuse"
    assert decide(inputs("Version=banana\n")).action == "refuse"


def test_an_image_without_a_range_starts_with_a_warning() -> None:
    assert decide(inputs(DRIVER_23_0_7, required=None)).action == "warn"


def host_tree(
    tmp_path: Path, driver: str | None, label: str | None, env: dict[str, str] | None = None
) -> Host:
    if driver is not None:
        p = tmp_path / DRIVER_INFO.lstrip("/")
        p.parent.mkdir(parents=True)
        p.write_text(driver)
    if label is not None:
        p = tmp_path / "etc/cannenv/image.json"
        p.parent.mkdir(parents=True)
        p.write_text(json.dumps({"labels": {"cannenv.requires.driver": label, "cannenv.stack": "s1"}}))
    return Host(root=tmp_path, env=env or {}, allow_commands=False)


def test_inputs_come_from_the_image_labels_and_the_mounted_file(tmp_path: Path) -> None:
    got = read_gate_inputs(host_tree(tmp_path, DRIVER_23_0_7, ">=24.1.rc2"))
    assert got.required == ">=24.1.rc2" and got.driver_text == DRIVER_23_0_7 and got.stack_id == "s1"
    assert not got.disabled


def test_env_range_and_bypass(tmp_path: Path) -> None:
    env = {"CANNENV_REQUIRE_DRIVER": ">=23.0", ENV_DISABLE: "1"}
    host = host_tree(tmp_path, DRIVER_23_0_7, ">=24.1.rc2", env)
    got = read_gate_inputs(host)
    assert got.required == ">=23.0" and got.disabled


def run_gate(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "cannenv", "gate", "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
def test_cli_refuses_or_execs_the_command(tmp_path: Path) -> None:
    old = host_tree(tmp_path / "old", DRIVER_23_0_7, ">=24.1.rc2")
    r = run_gate(old.root, "--", "echo", "started")
    assert r.returncode == 1 and "started" not in r.stdout and "refusing to start" in r.stderr
    r = run_gate(old.root, "--", "echo", "started", env={ENV_DISABLE: "1"})
    assert r.returncode == 0 and r.stdout.strip() == "started"
    new = host_tree(tmp_path / "new", DRIVER_25_0_RC1_1, ">=24.1.rc2")
    r = run_gate(new.root, "--", "sh", "-c", "exit 7")
    assert r.returncode == 7  # exec'd: the command's own status
