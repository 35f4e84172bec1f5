"""`--arch aarch64` on an x86_64 machine: an arm64 image for real, or exit 4 — never a mismatch.

Where the kernel runs arm64 programs through QEMU user emulation (binfmt_misc entry qemu-aarch64
with the F flag: Debian's qemu-user-static + binfmt-support; .ci/run registers it when it can), an
arm64 Debian base is made locally (debootstrap --foreign + second stage under QEMU, then `docker
import`), and the SHIPPED stack a2-cann8.3.rc1-torch2.6.0-py3.11 is built for aarch64 from
TEST-FIXTURE aarch64 installers and aarch64 wheels of cannenv's dependencies (pip download
--platform). The image must be arm64, and `image verify` (which checks the architecture against the
label and the lock) must pass. It is built without --with-nnal (the default), so it is also the
real image that shows NNAL left out: not in the lock, the labels or the environment, and not held
against the image by `image verify`. Where emulation cannot be registered, the build must exit 4
naming what is missing.
"""

from __future__ import annotations

import functools
import json
import platform
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures" / "cann_installer"))
sys.path.insert(0, str(HERE.parent / "fixtures"))

from fixture_stack import standin_wheel  # noqa: E402
from helpers.cli import cannenv  # noqa: E402
from image_wheels import cann_dep_standins  # noqa: E402
from make_fixture_installer import make_installers  # noqa: E402
from shipped_matrix import inject_digests  # noqa: E402

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

STACK = "a2-cann8.3.rc1-torch2.6.0-py3.11"
COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}


# A ceiling for a hang, not a speed check: the arm64 build runs pip and the installers under QEMU,
# beside the other pytest workers on the same two cores.
cli = functools.partial(cannenv, timeout=2700)


def emulation_missing() -> str | None:
    from cannenv.engine import check_emulation
    from cannenv.errors import MissingToolError

    try:
        check_emulation("aarch64", "x86_64")
    except MissingToolError as exc:
        return exc.message
    return None


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("arm")
    inst = make_installers(
        tmp / "artifacts", "8.3.RC1", arch="aarch64", installed_bytes=1 << 20, padding_bytes=1 << 20
    )
    pins = {c: (inst[f].path.name, inst[f].sha256) for c, f in COMP.items()}
    return {
        "tmp": tmp,
        "artifacts": tmp / "artifacts",
        "matrix": inject_digests(tmp / "matrices", STACK, "aarch64", pins),
    }


def test_aarch64_yields_an_arm64_image_or_exits_4(
    engine: Engine, arm64_base: str | None, inputs: dict[str, Path]
) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("this test emulates aarch64 on an x86_64 machine")
    tmp = inputs["tmp"]
    missing = emulation_missing()
    common = [
        STACK,
        "--matrix",
        str(inputs["matrix"]),
        "--arch",
        "aarch64",
        "--os",
        "preinstalled",
        "--artifacts",
        str(inputs["artifacts"]),
        "--allow-tag",
        "--tag",
        "cannenv-test/i13-arm64:test",
    ]
    if missing is not None:
        r = cli("image", "build", *common, "--base-image", "cannenv-test/debian:bookworm")
        assert r.returncode == 4, (r.returncode, r.stderr)
        assert "binfmt_misc" in r.stderr and "qemu-user-static" in r.stderr and "Traceback" not in r.stderr
        assert not engine.exists("cannenv-test/i13-arm64:test")
        return
    # an amd64 base for an aarch64 image is refused, never built into a mislabelled image
    r = cli("image", "build", *common, "--base-image", "cannenv-test/debian:bookworm")
    assert r.returncode == 2 and "is amd64, but the image is for aarch64" in r.stderr, r.stderr
    assert arm64_base is not None
    assert engine.inspect(arm64_base).architecture == "arm64"
    from cannenv.artifacts import build_cannenv_wheel

    cw = build_cannenv_wheel(tmp / "cw")
    wh = tmp / "wheelhouse"
    d = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--only-binary=:all:",
            "--platform",
            "manylinux2014_aarch64",
            "--platform",
            "manylinux_2_28_aarch64",
            "--python-version",
            "3.11",
            "--implementation",
            "cp",
            "-d",
            str(wh),
            str(cw),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert d.returncode == 0, d.stderr[-2000:]
    for p in wh.glob("cannenv-*.whl"):
        p.unlink()
    standin_wheel(wh, "torch", "2.6.0", "torch")
    standin_wheel(wh, "torch_npu", "2.6.0.post3", "torch_npu")
    cann_dep_standins(wh, "8.3.RC1")
    lock = tmp / "arm.lock.json"
    arm = [*common, "--base-image", arm64_base, "--wheelhouse", str(wh), "--cannenv-wheel", str(cw)]
    r = cli("image", "build", *arm, "--lock", str(lock))
    assert r.returncode == 0, r.stderr[-4000:]
    try:
        info = engine.inspect("cannenv-test/i13-arm64:test")
        assert info.architecture == "arm64" and info.labels["cannenv.arch"] == "aarch64"
        assert json.loads(lock.read_text())["arch"] == "aarch64"
        run = engine.run("cannenv-test/i13-arm64:test", ["uname", "-m"])
        assert run.stdout.strip() == "aarch64"
        v = cli("image", "verify", "cannenv-test/i13-arm64:test", "--lock", str(lock), "--json")
        out = json.loads(v.stdout)
        assert v.returncode == 0 and out["ok"] and out["architecture"] == "arm64", out["problems"]
        # built without --with-nnal: no NNAL in the lock or the image, and verify does not fail it for that
        assert [i["component"] for i in json.loads(lock.read_text())["installers"]] == ["cann", "ops"]
        assert "cannenv.installer.nnal" not in info.labels and "ATB_HOME_PATH" not in str(
            engine.run("cannenv-test/i13-arm64:test", ["env"]).stdout
        )
        assert any(n.startswith("nnal-cann reported 'fail'") for n in out["notes"]), out
        # a lock made without NNAL rebuilds without it (every layer from the cache): the lock's choice
        r = cli("image", "build", *arm, "--locked", str(lock))
        assert r.returncode == 0 and "inputs match the lock" in r.stderr, r.stderr[-3000:]
    finally:
        engine.remove("cannenv-test/i13-arm64:test")
