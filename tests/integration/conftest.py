"""Engine fixtures for `docker` tests: a real Docker engine and registry-free local Debian images.

Every image is made once per engine by bases.sh (debootstrap + `docker import`, under a lock) and
shared by every test and pytest worker that needs it. Ask for it by fixture, never by calling a
script from a test:

* ``engine``          the engine, with the amd64 bookworm base (``BASE_IMAGE``; also the fleet host
                      image ``HOST_IMAGE`` of tests/helpers/fleet_hosts.py: sshd is in it)
* ``arm64_base``      the arm64 bookworm base (made under QEMU), its name; None without emulation
* ``trixie_image``    Debian trixie with sshd (python3 is CPython 3.13), its name
* ``bullseye_image``  Debian bullseye with sshd (python3 is CPython 3.9), its name

At the end of collection the images the selected tests ask for (by these fixture names) start
being made in the background, so debootstrap and QEMU work while other tests run. If an image
cannot be made, its tests skip with the reason (tests/conftest.py turns such a skip into a failure
in CI, where the engine must be there).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cannenv.engine import Engine

BASES = Path(__file__).with_name("bases.sh")
BASE_IMAGE = os.environ.get("CANNENV_TEST_BASE_IMAGE", "cannenv-test/debian:bookworm")
ARM64_IMAGE = os.environ.get("CANNENV_TEST_ARM64_IMAGE", "cannenv-test/i13-debian-arm64:bookworm")
TRIXIE_IMAGE = os.environ.get("CANNENV_FLEET_TRIXIE_IMAGE", "cannenv-test/fleet-host:trixie")
BULLSEYE_IMAGE = os.environ.get("CANNENV_FLEET_BULLSEYE_IMAGE", "cannenv-test/fleet-host:bullseye")

# fixture name -> the bases.sh name of the image it needs
_BASE_OF = {
    "engine": "bookworm",
    "arm64_base": "arm64",
    "trixie_image": "trixie",
    "bullseye_image": "bullseye",
}


def make_bases(*names: str, background: bool = False) -> str | None:
    """Run bases.sh for ``names`` (waiting for a build under way elsewhere); None, or why it failed."""
    argv = ["bash", str(BASES), *(["--background"] if background else []), *names]
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=3600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{BASES.name} could not run: {exc}"
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip()[-800:]
        return f"{BASES.name} {' '.join(names)} exited {r.returncode}: {tail}"
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start making the images the selected tests need, in the background (one worker does it)."""
    worker = getattr(session.config, "workerinput", {}).get("workerid", "gw0")
    if worker != "gw0" or session.config.option.collectonly:
        return
    used = {f for item in session.items for f in getattr(item, "fixturenames", ())}
    wanted = {_BASE_OF[f] for f in used if f in _BASE_OF}
    if wanted:
        # order: the longest first (QEMU's second stage), the one most tests wait for next
        order = [b for b in ("arm64", "bookworm", "trixie", "bullseye") if b in wanted]
        make_bases(*order, background=True)


def _connect() -> Engine | None:
    from cannenv.engine import Engine
    from cannenv.errors import MissingToolError

    try:
        return Engine.connect(timeout=600)
    except MissingToolError:
        return None


def _need(name: str) -> None:
    why = make_bases(name)
    if why:
        pytest.skip(why)


@pytest.fixture(scope="session")
def engine() -> Engine:
    _need("bookworm")
    eng = _connect()
    if eng is None:
        pytest.skip(f"no Docker engine is reachable even after {BASES.name}")
    if not eng.exists(BASE_IMAGE):
        pytest.skip(f"base image {BASE_IMAGE} is missing after {BASES.name}")
    # No `docker image prune` at the end: with several workers (and runs) on one engine, a session
    # that ends would delete the untagged stage images of a multi-stage build another is running
    # (`COPY --from=cann-installer` then fails: "No such image").
    return eng


@pytest.fixture(scope="session")
def arm64_base(engine: Engine) -> str | None:
    """None where the kernel cannot run arm64 programs (no qemu-aarch64 binfmt_misc entry)."""
    from cannenv.engine import check_emulation
    from cannenv.errors import MissingToolError

    try:
        check_emulation("aarch64", "x86_64")
    except MissingToolError:
        return None
    _need("arm64")
    return ARM64_IMAGE


@pytest.fixture(scope="session")
def trixie_image(engine: Engine) -> str:
    _need("trixie")
    return TRIXIE_IMAGE


@pytest.fixture(scope="session")
def bullseye_image(engine: Engine) -> str:
    _need("bullseye")
    return BULLSEYE_IMAGE
