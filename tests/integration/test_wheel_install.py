"""A plain, non-editable install works from any directory: the data folders ship inside the wheel."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_wheel_ships_the_data_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    # --no-build-isolation when hatchling is importable (no network needed), else let pip fetch it
    try:
        import hatchling  # noqa: F401

        isolation = ["--no-build-isolation"]
    except ImportError:
        isolation = []
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", str(wheels), str(ROOT)],
        tmp_path,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("cannenv-*.whl")

    env_dir = tmp_path / "venv"
    # the dependencies come from this interpreter's site-packages; cannenv itself from the wheel only
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    installed = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--force-reinstall",
            "--ignore-installed",
            str(wheel),
        ],
        tmp_path,
    )
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run(
        [
            str(py),
            "-c",
            "import cannenv, cannenv.resources as r; "
            "print(cannenv.__file__); print(r.matrices_dir()); print(r.dockerfiles_dir()); "
            "print(r.smoke_kernels_dir())",
        ],
        elsewhere,
    )
    assert where.returncode == 0, where.stderr
    lines = where.stdout.splitlines()
    assert str(env_dir) in lines[0], "cannenv was imported from the checkout, not the wheel"
    for data in lines[1:]:
        assert data.startswith(str(env_dir)) and "/cannenv/_data/" in data, data

    listed = _run([str(env_dir / "bin" / "cannenv"), "matrix", "list", "--json"], elsewhere)
    assert listed.returncode == 0, listed.stderr
    stacks = json.loads(listed.stdout)
    assert stacks, "no stacks listed from the installed wheel"
