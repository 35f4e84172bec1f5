"""Engine fixtures for `docker` tests: a real Docker engine and a registry-free local base image.

If no engine answers, the set-up script (engine_setup.sh) is run to start one and to make the base
image; if that is impossible, the tests skip with the reason (and tests/conftest.py turns such a
skip into a failure in CI, where the engine must be there).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cannenv.engine import Engine

SETUP = Path(__file__).with_name("engine_setup.sh")
BASE_IMAGE = os.environ.get("CANNENV_TEST_BASE_IMAGE", "cannenv-test/debian:bookworm")


def _connect() -> Engine | None:
    from cannenv.engine import Engine
    from cannenv.errors import MissingToolError

    try:
        return Engine.connect(timeout=600)
    except MissingToolError:
        return None


@pytest.fixture(scope="session")
def engine() -> Iterator[Engine]:
    eng = _connect()
    if eng is None or not eng.exists(BASE_IMAGE):
        try:
            r = subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"no Docker engine, and {SETUP.name} could not run: {exc}")
        if r.returncode != 0:
            pytest.skip(
                f"no Docker engine or base image; {SETUP.name} exited {r.returncode}: "
                f"{(r.stderr or r.stdout).strip()[-600:]}"
            )
        eng = _connect()
    if eng is None:
        pytest.skip("no Docker engine is reachable even after engine_setup.sh")
    if not eng.exists(BASE_IMAGE):
        pytest.skip(f"base image {BASE_IMAGE} is missing after engine_setup.sh")
    yield eng
    # Rebuilds leave the previous image of a tag dangling; drop those (never a tagged image).
    subprocess.run(["docker", "image", "prune", "-f"], capture_output=True, timeout=300, check=False)
