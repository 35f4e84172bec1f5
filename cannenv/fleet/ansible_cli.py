"""Where ansible-core's commands are, for the fleet commands that start them (``fleet collect``,
``provision`` through ansible-runner; ``--inventory`` through ``ansible-inventory --list``)."""

from __future__ import annotations

from pathlib import Path

from cannenv.errors import MissingToolError


def ansible_command(name: str) -> str:
    """The path of ansible-core's command ``name`` (:func:`ansible_commands`)."""
    return ansible_commands(name)[0]


def ansible_commands(*names: str) -> list[str]:
    """The paths of ansible-core's commands ``names``: each on ``PATH``, else beside this interpreter
    (a venv that was never activated; the operator's own interpreter, a trusted input). Any of them
    in neither place: MissingToolError (exit 4) naming every one missing, never a bug."""
    import shutil
    import sys

    found: list[str] = []
    missing: list[str] = []
    for name in names:
        beside = Path(sys.executable).parent / name
        path = shutil.which(name) or (str(beside) if beside.is_file() else None)
        if path is None:
            missing.append(name)
        else:
            found.append(path)
    if missing:
        raise MissingToolError(
            f"{', '.join(missing)} not found on PATH nor beside {sys.executable}",
            hint="install the fleet extra in this interpreter: pip install 'cannenv[fleet]' "
            "(ansible-core + ansible-runner), or activate the venv that has it",
        )
    return found
