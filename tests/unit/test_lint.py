"""ruff (lint and format) and mypy --strict are part of the test command, so CI enforces them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


def test_ruff_is_clean() -> None:
    if shutil.which("ruff") is None:
        pytest.fail("ruff is not installed: pip install -e '.[test]'")
    proc = _run("ruff", "check", "cannenv", "tests", "benchmarks", "examples")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = _run("ruff", "format", "--check", "cannenv", "tests", "benchmarks", "examples")
    assert proc.returncode == 0, "run `ruff format cannenv tests benchmarks examples`:\n" + proc.stdout


@pytest.mark.slow
def test_mypy_strict_is_clean() -> None:
    proc = _run(sys.executable, "-m", "mypy")
    assert proc.returncode == 0, proc.stdout + proc.stderr
