"""A real git repository for tests of the importers that read a clone (`matrix save-*-notes`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


class GitRepo:
    """``git`` run in ``path`` with a fixed identity, no user or system config, and the dates given."""

    def __init__(self, path: Path, date: str) -> None:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.date = date

    def __call__(self, *args: str, date: str | None = None) -> None:
        when = date or self.date
        subprocess.run(
            ["git", *args],
            cwd=self.path,
            check=True,
            env={**_ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when},
            capture_output=True,
        )
