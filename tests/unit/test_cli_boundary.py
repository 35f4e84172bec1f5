"""The CLI boundary: exit codes from the errors table, never a traceback for a user error."""

from __future__ import annotations

import subprocess
import sys

from cannenv.errors import (
    CannenvError,
    ChecksFailed,
    ExitCode,
    ExternalError,
    InputError,
    IntegrityError,
    MissingToolError,
    NotFoundError,
    VersionError,
    did_you_mean,
)


def _cannenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_exit_codes_are_distinct_and_documented() -> None:
    classes = [InputError, NotFoundError, MissingToolError, IntegrityError, ExternalError, ChecksFailed]
    codes = [c.exit_code for c in classes]
    assert len(set(codes)) == len(codes)
    assert VersionError("x").exit_code == ExitCode.BAD_INPUT
    import cannenv.errors as errors_module

    doc = errors_module.__doc__ or ""
    for code in ExitCode:
        assert f"{int(code):<4}  {code.name}" in doc, f"exit code {code.name} is not in the errors table"


def test_error_carries_hint() -> None:
    err = CannenvError("bad", hint="do this")
    assert str(err) == "bad" and err.hint == "do this"
    assert did_you_mean("a2-cann8.3.rc", ["a2-cann8.3.rc1", "zzz"]) == "Perhaps you meant 'a2-cann8.3.rc1'?"
    assert did_you_mean("qqq", ["a2"]) is None


def test_version_and_help() -> None:
    proc = _cannenv("--version")
    assert proc.returncode == 0 and "cannenv" in proc.stdout
    proc = _cannenv("--help")
    assert proc.returncode == 0 and "Exit codes" in proc.stdout


def test_usage_error_is_exit_2_without_traceback() -> None:
    proc = _cannenv("no-such-command")
    assert proc.returncode == ExitCode.BAD_INPUT
    assert "Traceback" not in proc.stderr
