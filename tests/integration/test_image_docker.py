"""`cannenv image` against a real Docker engine, with TEST-FIXTURE CANN installers.

One image per CANN layout is built per session (module-scoped fixtures): CANN 8.3.RC1 (classic
``ascend-toolkit/<ver>`` layout) through the real CLI, and CANN 8.5.0 (``cann-<ver>`` layout). The
installers are fake self-extracting `.run` files made by tests/fixtures/cann_installer (named as
the vendor's, honouring the real flags and on-disk layout), torch/torch_npu are tiny stand-in wheels
(the real multi-GB torch never goes into a test image); cannenv itself is a wheel of this checkout,
its dependencies come from a local wheelhouse (pip download), and builds run offline.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures" / "cann_installer"))

from conftest import BASE_IMAGE  # noqa: E402

from cannenv.resources import matrices_dir  # noqa: E402

MATRICES = matrices_dir()
from fixture_stack import matrix_yaml, standin_wheel  # noqa: E402
from make_fixture_installer import MARKER, FixtureInstaller, make_installers  # noqa: E402

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}
TOO_OLD = "Version=23.0.7\nInnerversion=V100R001C15SPC012B220\npackage_version=23.0.7\n"
FITS = "Version=25.5.1\npackage_version=25.5.1\n"
# The fixture stacks copy the versions of real shipped stacks (a2-cann8.3.rc1-torch2.6.0-py3.11,
# a2-cann8.5.0-torch2.7.1-py3.11); only the installers and wheels are fixtures. They are loaded
# together with the shipped matrix, so the driver range comes from its real HDK rules.
PINS = {
    "8.3.RC1": {"torch": "2.6.0", "torch_npu": "2.6.0.post3", "driver": "25.3.0"},
    "8.5.0": {"torch": "2.7.1", "torch_npu": "2.7.1.post2", "driver": "25.5.1"},
}
RANGE = {"8.3.RC1": ">=25.3.0", "8.5.0": ">=25.5.1"}
REAL_STACK = "a2-cann8.3.rc1-torch2.6.0-py3.11"


@dataclass
class Built:
    tag: str
    stack_id: str
    cann: str
    installers: dict[str, FixtureInstaller]
    lock: Path
    workdir: Path
    matrix: Path
    wheelhouse: Path
    cannenv_wheel: Path


def cli(*args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


@pytest.fixture(scope="session")
def cannenv_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cannenv.artifacts import build_cannenv_wheel

    return build_cannenv_wheel(tmp_path_factory.mktemp("cannenv-wheel"))


@pytest.fixture(scope="session")
def dependency_wheels(tmp_path_factory: pytest.TempPathFactory, cannenv_wheel: Path) -> Path:
    """cannenv's runtime dependencies as wheels (pip download: local index / cache, no build network)."""
    wh = tmp_path_factory.mktemp("deps")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--only-binary=:all:",
            "-d",
            str(wh),
            str(cannenv_wheel),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if r.returncode != 0:
        pytest.fail(f"pip download of cannenv's dependencies failed: {r.stderr[-1500:]}")
    for p in wh.glob("cannenv-*.whl"):
        p.unlink()
    return wh


def wheelhouse(base: Path, deps: Path, torch: str, torch_npu: str) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    for p in deps.glob("*.whl"):
        os.link(p, base / p.name)
    standin_wheel(base, "torch", torch, "torch")
    standin_wheel(base, "torch_npu", torch_npu, "torch_npu")
    return base


def build_fixture(tmp: Path, cann: str, cannenv_wheel: Path, deps: Path, tag: str) -> Built:
    inst = make_installers(tmp / "artifacts", cann)
    stack_id = f"fixture-a2-cann{cann.lower()}"
    # the NNAL digest is left unpinned on purpose: --allow-unpinned records it in the lock
    pins = {c: (inst[f].path.name, None if c == "nnal" else inst[f].sha256) for c, f in COMP.items()}
    matrix = tmp / "matrix.yaml"
    matrix.write_text(matrix_yaml(stack_id=stack_id, cann=cann, installers=pins, **PINS[cann]))
    wh = wheelhouse(tmp / "wheelhouse", deps, PINS[cann]["torch"], PINS[cann]["torch_npu"])
    lock = tmp / "cannenv.lock.json"
    r = cli(
        "image",
        "build",
        stack_id,
        "--matrix",
        str(MATRICES),
        "--matrix",
        str(matrix),
        "--os",
        "preinstalled",
        "--base-image",
        BASE_IMAGE,
        "--artifacts",
        str(tmp / "artifacts"),
        "--wheelhouse",
        str(wh),
        "--cannenv-wheel",
        str(cannenv_wheel),
        "--allow-unpinned",
        "--tag",
        tag,
        "--lock",
        str(lock),
    )
    assert r.returncode == 0, f"image build failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}"
    return Built(tag, stack_id, cann, inst, lock, tmp, matrix, wh, cannenv_wheel)


@pytest.fixture(scope="module")
def built83(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory, cannenv_wheel: Path, dependency_wheels: Path
) -> Built:
    return build_fixture(
        tmp_path_factory.mktemp("b83"),
        "8.3.RC1",
        cannenv_wheel,
        dependency_wheels,
        "cannenv-test/fixture:8.3.rc1",
    )


@pytest.fixture(scope="module")
def built85(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory, cannenv_wheel: Path, dependency_wheels: Path
) -> Built:
    return build_fixture(
        tmp_path_factory.mktemp("b85"),
        "8.5.0",
        cannenv_wheel,
        dependency_wheels,
        "cannenv-test/fixture:8.5.0",
    )


def run_in(
    engine: Engine,
    tag: str,
    *argv: str,
    driver: str | None = None,
    tmp: Path | None = None,
    env: dict[str, str] | None = None,
) -> Any:
    binds = {}
    if driver is not None:
        assert tmp is not None
        f = tmp / "version.info"
        f.write_text(driver)
        binds[str(f)] = "/usr/local/Ascend/driver/version.info"
    return engine.run(tag, list(argv), binds=binds, environment=env)


# --------------------------------------------------------------------------------- the image


def test_labels_and_lock_describe_the_stack(engine: Engine, built83: Built) -> None:
    from cannenv import matrix
    from cannenv.lock import load_lock

    info = engine.inspect(built83.tag)
    m = matrix.load([MATRICES, built83.matrix])
    assert info.labels["cannenv.stack"] == built83.stack_id
    assert info.labels["cannenv.matrix-digest"] == m.digest
    assert info.labels["cannenv.requires.driver"] == RANGE["8.3.RC1"]
    assert info.labels["cannenv.component.cann"] == "8.3.RC1"
    assert info.labels["cannenv.component.torch_npu"] == "2.6.0.post3"
    assert info.labels["org.opencontainers.image.base.name"] == BASE_IMAGE
    lock = load_lock(built83.lock)
    assert lock.stack_id == built83.stack_id and lock.matrix_digest == m.digest
    assert lock.image_id == info.id
    assert lock.base_image_digest == engine.inspect(BASE_IMAGE).id
    by = {i.component: i for i in lock.installers}
    assert by["nnal"].sha256 == built83.installers["nnal"].sha256 and not by["nnal"].pinned
    assert by["cann"].pinned and by["ops"].pinned
    names = {r.name for r in lock.python_requirements}
    assert {"torch", "torch-npu", "cannenv", "pydantic"} <= names
    assert all(r.hashes for r in lock.python_requirements)


def test_probes_in_the_image_detect_the_fixture_versions(engine: Engine, built83: Built) -> None:
    code = (
        "import json; from cannenv.probes import collect; from cannenv.host import Host; "
        "print(collect(Host.live()).to_json())"
    )
    r = run_in(engine, built83.tag, "python", "-c", code)
    assert r.exit_code == 0, r.stderr
    facts = json.loads(r.stdout)
    versions = {i["version"] for i in facts["cann"]["installs"]}
    assert "8.3.RC1" in versions
    assert facts["cann"]["nnal"]["version"] == "8.3.RC1"
    assert facts["driver"] is None  # no driver in an image: it comes from the host


def test_cannenv_doctor_in_the_image_detects_the_stack(engine: Engine, built83: Built) -> None:
    # the fixture stack has the versions of this shipped stack, which the image's cannenv knows
    r = run_in(engine, built83.tag, "cannenv", "doctor", "--json", "--stack", REAL_STACK)
    report = json.loads(r.stdout)
    host = report["host"]
    assert (host["cann"], host["nnal"], host["torch"], host["torch_npu"]) == (
        "8.3.RC1",
        "8.3.RC1",
        "2.6.0",
        "2.6.0.post3",
    )
    assert host["ops_chips"] == ["910b"] and host["driver"] is None
    status = {
        f["id"]: f["status"] for f in report["findings"] if not f.get("subject") or f["id"] != "stack-match"
    }
    for check in (
        "toolkit-ops",
        "nnal-cann",
        "torch-torch-npu",
        "torch-npu-cann",
        "env-sourced",
        "cann-installs",
    ):
        assert status.get(check) == "pass", (check, status)


def test_image_verify(built83: Built) -> None:
    r = cli("image", "verify", built83.tag, "--json", timeout=300)
    out = json.loads(r.stdout)
    assert out["software"] and not [p for p in out["problems"] if p.startswith("software")], out["problems"]
    # no devices in the container: every device check is a skip, never a pass or a fail
    assert out["device"] and all(st == "skip" for _, st in out["device"]), out["device"]
    assert {i for i, _ in out["device"]} >= {"driver-installed", "npu-devices", "container-mounts"}
    assert r.returncode == 0 and out["ok"], r.stderr


def test_no_installer_bytes_remain_in_any_layer(engine: Engine, built83: Built) -> None:
    samples = [MARKER] + [i.padding_sample for i in built83.installers.values()]
    assert all(s in i.path.read_bytes() for i in built83.installers.values() for s in [MARKER])
    buf = io.BytesIO()
    for chunk in engine.save(built83.tag):
        buf.write(chunk)
    buf.seek(0)
    layers = 0
    with tarfile.open(fileobj=buf) as outer:
        for member in outer.getmembers():
            if not member.name.endswith("layer.tar"):
                continue
            layers += 1
            data = outer.extractfile(member).read()  # type: ignore[union-attr]
            for s in samples:
                assert s not in data, f"installer bytes found in layer {member.name}"
            with tarfile.open(fileobj=io.BytesIO(data)) as layer:
                assert not [n for n in layer.getnames() if n.endswith(".run")], member.name
    assert layers >= 3
    history = " ".join(h.get("CreatedBy", "") for h in engine.history(built83.tag))
    assert "installers/" not in history


def test_cann_layer_is_no_bigger_than_the_installed_tree(engine: Engine, built83: Built) -> None:
    r = run_in(engine, built83.tag, "du", "-sb", "/usr/local/Ascend")
    installed = int(r.stdout.split()[0])
    # docker history (newest first) names COPY sources only by digest: the CANN tree is the first
    # COPY after the `os` stage's user creation, i.e. the first layer on top of the os stage
    history = list(reversed(engine.history(built83.tag)))
    after_os = next(i for i, h in enumerate(history) if "HwHiAiUser" in h.get("CreatedBy", "")) + 1
    cann_layer = history[after_os]
    assert "COPY dir:" in cann_layer["CreatedBy"]
    padding = sum(i.path.stat().st_size for i in built83.installers.values())
    assert cann_layer["Size"] <= installed * 1.05 + 65536, (cann_layer["Size"], installed, padding)
    assert cann_layer["Size"] >= installed * 0.95


def test_environment_equals_what_set_env_sh_sets(engine: Engine, built83: Built, built85: Built) -> None:
    for b, home in (
        (built83, "/usr/local/Ascend/ascend-toolkit/latest"),
        (built85, "/usr/local/Ascend/cann-8.5.0"),
    ):
        script = (
            "env -i PATH=/usr/bin:/bin sh -c '. /usr/local/Ascend/ascend-toolkit/set_env.sh; "
            "echo $ASCEND_TOOLKIT_HOME; echo $ASCEND_OPP_PATH'; echo $ASCEND_TOOLKIT_HOME; "
            "echo $ASCEND_OPP_PATH; test -d $ASCEND_TOOLKIT_HOME && test -d $ATB_HOME_PATH && echo dirs-ok"
        )
        r = run_in(engine, b.tag, "sh", "-c", script)
        lines = r.stdout.split()
        assert lines[:2] == lines[2:4] == [home, f"{home}/opp"], r.stdout
        assert lines[4] == "dirs-ok"


def test_classic_and_new_layouts_are_laid_down(engine: Engine, built83: Built, built85: Built) -> None:
    r = run_in(
        engine,
        built85.tag,
        "sh",
        "-c",
        "readlink /usr/local/Ascend/cann; "
        "cat /usr/local/Ascend/cann/x86_64-linux/ascend_toolkit_install.info",
    )
    assert r.stdout.splitlines()[0] == "cann-8.5.0"
    assert "path=/usr/local/Ascend/cann-8.5.0/x86_64-linux" in r.stdout
    r = run_in(engine, built83.tag, "readlink", "/usr/local/Ascend/ascend-toolkit/latest")
    assert r.stdout.strip() == "8.3.RC1"


# --------------------------------------------------------------------------------------- gate


def test_gate_refuses_a_too_old_host_driver(engine: Engine, built83: Built, tmp_path: Path) -> None:
    r = run_in(engine, built83.tag, "echo", "started", driver=TOO_OLD, tmp=tmp_path)
    assert r.exit_code == 1 and "started" not in r.stdout
    assert "refusing to start" in r.stderr and "23.0.7" in r.stderr and RANGE["8.3.RC1"] in r.stderr


def test_gate_starts_on_a_fitting_driver(engine: Engine, built83: Built, tmp_path: Path) -> None:
    r = run_in(engine, built83.tag, "echo", "started", driver=FITS, tmp=tmp_path)
    assert r.exit_code == 0 and r.stdout.strip() == "started" and r.stderr == ""


def test_gate_without_a_driver_warns_and_bypass_works(engine: Engine, built83: Built, tmp_path: Path) -> None:
    r = run_in(engine, built83.tag, "echo", "started")
    assert r.exit_code == 0 and r.stdout.strip() == "started" and "no NPU driver is mounted" in r.stderr
    r = run_in(
        engine,
        built83.tag,
        "echo",
        "started",
        driver=TOO_OLD,
        tmp=tmp_path,
        env={"CANNENV_DISABLE_REQUIRE": "1"},
    )
    assert r.exit_code == 0 and r.stdout.strip() == "started"


# ------------------------------------------------------------------------------------ rebuild


def test_changing_only_the_torch_npu_pin_reuses_every_cann_layer(
    engine: Engine, built83: Built, dependency_wheels: Path, tmp_path: Path
) -> None:
    from cannenv import matrix
    from cannenv.artifacts import verify_installers
    from cannenv.image import RenderOptions, render, scan_wheelhouse, spec_from_stack, wheel_from_file

    pins = {
        c: (built83.installers[f].path.name, None if c == "nnal" else built83.installers[f].sha256)
        for c, f in COMP.items()
    }
    mfile = tmp_path / "matrix.yaml"
    mfile.write_text(
        matrix_yaml(
            stack_id=built83.stack_id,
            cann="8.3.RC1",
            installers=pins,
            **{**PINS["8.3.RC1"], "torch_npu": "2.6.0.post4"},
        )
    )
    m = matrix.load([MATRICES, mfile])
    spec = spec_from_stack(m.stack(built83.stack_id), m)
    verified = verify_installers(spec, built83.workdir / "artifacts", allow_unpinned=True)
    wh = wheelhouse(tmp_path / "wh", dependency_wheels, "2.6.0", "2.6.0.post4")
    ctx = render(
        spec,
        RenderOptions(
            os="preinstalled",
            base_image=BASE_IMAGE,
            wheels=scan_wheelhouse(wh),
            cannenv_wheel=wheel_from_file(built83.cannenv_wheel),
            verified_installers=verified,
        ),
    )
    result = engine.build(ctx.write(tmp_path / "ctx"), "cannenv-test/fixture:8.3.rc1-npu-post4")
    stage, seen_top_copy = 0, False
    for step in result.steps:
        if step.instruction.startswith("FROM"):
            stage += 1
            continue
        if stage in (1, 2, 3):  # os, cann-installer, python (base, torch, cannenv)
            assert step.cached, f"step rebuilt: {step.instruction}"
        elif stage == 4 and "python/torch_npu/" in step.instruction:
            assert not step.cached
        elif stage == 5:
            seen_top_copy = seen_top_copy or step.instruction.startswith("COPY --from=python-top")
            if not seen_top_copy:
                assert step.cached, f"CANN-side step rebuilt: {step.instruction}"
    assert stage == 5
    r = engine.run(result.tag, ["python", "-c", "import torch_npu; print(torch_npu.__version__)"])
    assert r.stdout.strip() == "2.6.0.post4"
