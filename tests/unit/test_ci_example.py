"""examples/ci/gitlab-ci.yml as written (issue 22): cannenv comes from a wheel built from this
repository (it is not on the package index), its install steps run as the jobs write them in a
fresh directory, and every `cannenv` command of the jobs parses with this cannenv's CLI. The Docker,
registry and NPU steps themselves are what tests/integration/test_image_docker.py runs for real."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ci" / "gitlab-ci.yml"


def _jobs() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    return {k: v for k, v in data.items() if isinstance(v, dict) and "script" in v}


def _install_lines(script: list[str]) -> list[str]:
    """The lines before the first that runs cannenv: how the job gets cannenv."""
    out = []
    for line in script:
        if re.search(r"(^|[\s(\"])cannenv ", line):
            break
        out.append(line)
    return out


def test_no_job_installs_cannenv_from_the_package_index() -> None:
    for name, job in _jobs().items():
        install = _install_lines(job["script"])
        assert install, name
        assert not [x for x in install if re.search(r"pip install (-U )?cannenv\b", x)], name
        assert any("$CANNENV_WHEEL" in x for x in install), name


@pytest.mark.slow
def test_the_install_steps_run_as_written(tmp_path: Path) -> None:
    from cannenv import __version__
    from cannenv.artifacts import build_cannenv_wheel

    variables = yaml.safe_load(EXAMPLE.read_text())["variables"]
    wheel = build_cannenv_wheel(tmp_path / "wheels")
    assert wheel.relative_to(tmp_path).as_posix() == variables["CANNENV_WHEEL"]  # the name the file gives
    install = _install_lines(_jobs()["build-image"]["script"])
    script = "\n".join([*install, "cannenv --version", "cannenv image lock --help >/dev/null"])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env.update({k: str(v) for k, v in variables.items()})
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"cannenv, version {__version__}" in proc.stdout
    assert (tmp_path / ".cannenv" / "bin" / "cannenv").is_file()  # its own venv, not this machine's


def test_every_cannenv_command_of_the_jobs_parses() -> None:
    import click

    from cannenv.cli import cli as root

    seen = 0
    for job in _jobs().values():
        for line in (x for item in job["script"] for x in item.splitlines()):
            for m in re.finditer(r"(?:^|\$\(|\s)cannenv ((?:[^\"$)]|\"[^\"]*\"|\$\w+|\$\{\w+\})+)", line):
                words = shlex.split(m[1].split(" >")[0].split(" #")[0])
                words = [re.sub(r"\$\{?(\w+)\}?", r"\1", w) for w in words]
                if words[0] == "image":
                    group = root.get_command(click.Context(root), "image")
                    assert isinstance(group, click.Group)
                    cmd, args = group.get_command(click.Context(group), words[1]), words[2:]
                else:
                    cmd, args = root.get_command(click.Context(root), words[0]), words[1:]
                assert cmd is not None, words
                try:
                    cmd.make_context(f"cannenv {words[0]}", list(args))
                except click.UsageError as exc:
                    raise AssertionError(f"`cannenv {' '.join(words)}` does not parse: {exc}") from None
                seen += 1
    assert seen >= 9
