"""`cannenv image` against a real Docker engine and a real registry, building SHIPPED stack ids.

One image per CANN layout is built per session (module-scoped fixtures), each from a shipped stack
id: a2-cann8.3.rc1-torch2.6.0-py3.11 (classic ``ascend-toolkit/<ver>`` layout) and
a2-cann8.5.0-torch2.7.1-py3.11 (``cann-<ver>`` layout). The installers are TEST-FIXTURE
self-extracting `.run` files (tests/fixtures/cann_installer: the vendor's names, flags and on-disk
layout, no Huawei code) whose sha256 values are injected into a test copy of the shipped matrix
(tests/fixtures/shipped_matrix.py); the 8.5.0 image is built from them wrapped as the vendor's `.zip`
downloads, whose digests are injected as the vendor manifests' (deployer.json) and verified before
the `.run` is extracted. Both images are built ``--with-nnal`` (NNAL is left out by default); as
from the vendor, the 8.5.0 NNAL comes as a bare `.run` with no digest, so that build passes
--allow-unpinned and its lock records NNAL as ``pinned: false`` (toolkit and ops stay pinned).
torch/torch_npu and CANN's Python dependencies are tiny
stand-in wheels; cannenv is a wheel of this checkout with its real dependencies (pip download).

The base image is pushed to a real registry (Debian's docker-registry on 127.0.0.1) and pinned by
digest; the image is pushed there too, and its lock records ``repo@sha256``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures" / "cann_installer"))
sys.path.insert(0, str(HERE.parent / "fixtures"))
sys.path.insert(0, str(HERE))

import registry  # noqa: E402
from conftest import BASE_IMAGE  # noqa: E402
from fixture_stack import standin_wheel  # noqa: E402
from helpers.cli import cannenv  # noqa: E402
from image_wheels import cann_dep_standins  # noqa: E402
from make_fixture_installer import MARKER, FixtureInstaller, make_installers  # noqa: E402
from shipped_matrix import (  # noqa: E402
    as_the_vendor_serves,
    image_args,
    inject_digests,
    inject_download_digests,
)

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}
TOO_OLD = "Version=23.0.7\nInnerversion=V100R001C15SPC012B220\npackage_version=23.0.7\n"
# SHIPPED stack ids, and the pins they carry (the image must hold exactly these)
STACKS = {
    "8.3.RC1": "a2-cann8.3.rc1-torch2.6.0-py3.11",
    "8.5.0": "a2-cann8.5.0-torch2.7.1-py3.11",
}
PINS = {
    "8.3.RC1": {"torch": "2.6.0", "torch_npu": "2.6.0.post3"},
    "8.5.0": {"torch": "2.7.1", "torch_npu": "2.7.1.post2"},
}
REAL_STACK = STACKS["8.3.RC1"]


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
    base: str  # the pinned base reference (registry@sha256)
    registry: str
    build_args: list[str]


cli = cannenv


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


@pytest.fixture(scope="session")
def local_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    why = registry.available()
    if why:
        pytest.skip(why)
    with registry.running(tmp_path_factory.mktemp("registry")) as address:
        yield address


@pytest.fixture(scope="session")
def pinned_base(engine: Engine, local_registry: str) -> Iterator[str]:
    """The test base image, pushed to the registry with `cannenv image push`: its pinned reference."""
    r = cli("image", "push", BASE_IMAGE, "--to", f"{local_registry}/cannenv-test/debian:bookworm")
    assert r.returncode == 0, r.stderr
    ref = r.stdout.strip()
    assert ref.startswith(f"{local_registry}/cannenv-test/debian@sha256:"), ref
    yield ref
    engine.remove(f"{local_registry}/cannenv-test/debian:bookworm")  # our tag only: the image stays


def wheelhouse(base: Path, deps: Path, cann: str, torch: str, torch_npu: str) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    for p in deps.glob("*.whl"):
        os.link(p, base / p.name)
    standin_wheel(base, "torch", torch, "torch")
    standin_wheel(base, "torch_npu", torch_npu, "torch_npu")
    cann_dep_standins(base, cann)
    return base


def build_shipped(
    tmp: Path,
    cann: str,
    cannenv_wheel: Path,
    deps: Path,
    base: str,
    registry_at: str,
    os_id: str = "preinstalled",
    *,
    zipped: bool = False,
) -> Built:
    """Build the shipped stack of ``cann`` from fixture installers, with NNAL (--with-nnal).
    ``zipped``: toolkit and ops as the vendor's .zip downloads, whose digests are injected as the
    vendor manifests' (the stack pins no .run digest), and NNAL as the bare .run the vendor publishes
    no digest for (--allow-unpinned)."""
    stack_id = STACKS[cann]
    inst = make_installers(tmp / "runs" if zipped else tmp / "artifacts", cann)
    if zipped:
        downloads = as_the_vendor_serves(inst, tmp / "artifacts")
        matrix = inject_download_digests(tmp / "matrices", downloads)
    else:
        pins = {c: (inst[f].path.name, inst[f].sha256) for c, f in COMP.items()}
        matrix = inject_digests(tmp / "matrices", stack_id, "x86_64", pins)
    wh = wheelhouse(tmp / "wheelhouse", deps, cann, PINS[cann]["torch"], PINS[cann]["torch_npu"])
    lock = tmp / "cannenv.lock.json"
    tag = f"cannenv-test/i13-{stack_id}:test"
    args = [
        *image_args(stack_id, matrix, tmp / "artifacts", cannenv_wheel, os_id=os_id, base=base),
        "--wheelhouse",
        str(wh),
        "--with-nnal",
        *(["--allow-unpinned"] if zipped else []),
        "--tag",
        tag,
    ]
    r = cli("image", "build", *args, "--lock", str(lock))
    assert r.returncode == 0, f"image build failed ({r.returncode}):\n{r.stdout}\n{r.stderr[-4000:]}"
    assert "stage cann-installer:" in r.stderr and "stages: os " in r.stdout  # elapsed per stage
    if zipped:  # toolkit and ops came out of zips whose vendor digest matched; NNAL is recorded
        from cannenv.lock import load_lock

        installers = load_lock(lock).installers
        assert [i.component for i in installers] == ["cann", "ops", "nnal"]
        for i in installers:
            assert i.sha256 == inst[COMP[i.component]].sha256, i
            if i.component == "nnal":
                assert not i.pinned and i.archive is None, i
            else:
                assert i.pinned and i.archive is not None and i.archive_sha256 == downloads[i.archive][1], i
    return Built(tag, stack_id, cann, inst, lock, tmp, matrix, wh, cannenv_wheel, base, registry_at, args)


@pytest.fixture(scope="module")
def built83(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    cannenv_wheel: Path,
    dependency_wheels: Path,
    pinned_base: str,
    local_registry: str,
) -> Built:
    return build_shipped(
        tmp_path_factory.mktemp("b83"),
        "8.3.RC1",
        cannenv_wheel,
        dependency_wheels,
        pinned_base,
        local_registry,
    )


@pytest.fixture(scope="module")
def built85(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    cannenv_wheel: Path,
    dependency_wheels: Path,
    pinned_base: str,
    local_registry: str,
) -> Built:
    # the debian12 profile, built for real: its OS packages come from Debian's mirror at build time
    return build_shipped(
        tmp_path_factory.mktemp("b85"),
        "8.5.0",
        cannenv_wheel,
        dependency_wheels,
        pinned_base,
        local_registry,
        os_id="debian12",
        zipped=True,  # the vendor's .zip downloads (8.1.RC1 and later), verified against their digests
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
    m = matrix.load([built83.matrix])
    assert info.labels["cannenv.stack"] == built83.stack_id
    assert info.labels["cannenv.matrix-digest"] == m.digest
    assert info.labels["cannenv.requires.driver"] == m.driver_requirement("8.3.RC1", "a2").range  # type: ignore[union-attr]
    assert info.labels["cannenv.component.cann"] == "8.3.RC1"
    assert info.labels["cannenv.component.torch_npu"] == "2.6.0.post3"
    assert info.labels["org.opencontainers.image.base.digest"] == built83.base.split("@")[1]
    assert "sha256-pinned installers" in info.labels["org.opencontainers.image.description"]
    lock = load_lock(built83.lock)
    assert lock.stack_id == built83.stack_id and lock.matrix_digest == m.digest
    assert lock.image_id == info.id and lock.arch == "x86_64"
    assert lock.base_image == built83.base and lock.base_image_digest == built83.base.split("@")[1]
    assert lock.base_image_id == engine.inspect(BASE_IMAGE).id
    assert all(i.pinned and i.sha256 == built83.installers[COMP[i.component]].sha256 for i in lock.installers)
    names = {r.name for r in lock.python_requirements}
    assert {"torch", "torch-npu", "cannenv", "pydantic", "numpy", "protobuf", "scipy"} <= names
    assert all(r.hashes for r in lock.python_requirements)
    # what the image records is what was verified: digests, never null
    r = run_in(engine, built83.tag, "cat", "/etc/cannenv/image.json")
    recorded = json.loads(r.stdout)
    assert {i["file"]: i["sha256"] for i in recorded["installers"]} == {
        i.path.name: i.sha256 for i in built83.installers.values()
    }
    assert recorded["labels"] == info.labels


def test_the_container_runs_as_hwhiaiuser_with_the_requested_ids(engine: Engine, built83: Built) -> None:
    r = run_in(engine, built83.tag, "sh", "-c", "id -un; id -u; id -g")
    assert r.stdout.split() == ["HwHiAiUser", "1000", "1000"], r.stderr
    assert engine.inspect(built83.tag).labels["cannenv.user"] == "HwHiAiUser(1000:1000)"


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


def test_cannenv_doctor_in_the_image_passes_the_shipped_stack(engine: Engine, built83: Built) -> None:
    r = run_in(engine, built83.tag, "cannenv", "doctor", "--json", "--no-devices", "--stack", REAL_STACK)
    report = json.loads(r.stdout)
    host = report["host"]
    assert (host["cann"], host["nnal"], host["torch"], host["torch_npu"]) == (
        "8.3.RC1",
        "8.3.RC1",
        "2.6.0",
        "2.6.0.post3",
    )
    assert host["ops_chips"] == ["910b"] and host["driver"] is None
    by_id: dict[str, set[str]] = {}
    for f in report["findings"]:
        by_id.setdefault(f["id"], set()).add(f["status"])
    for check in (
        "toolkit-ops",
        "nnal-cann",
        "torch-torch-npu",
        "torch-npu-cann",
        "env-sourced",
        "cann-installs",
    ):
        assert by_id.get(check) == {"pass"}, (check, by_id)
    driver = [f for f in report["findings"] if f["id"] == "stack-match" and f.get("subject") == "driver"]
    assert [f["status"] for f in driver] == ["skip"]  # a device fact, not judged without devices
    assert not [f for f in report["findings"] if f["status"] in ("fail", "error")], report["findings"]


def test_image_verify_passes_on_the_shipped_stack_against_its_lock(built83: Built) -> None:
    r = cli("image", "verify", built83.tag, "--lock", str(built83.lock), "--json", timeout=300)
    out = json.loads(r.stdout)
    assert out["problems"] == [], out["problems"]
    assert out["architecture"] == "amd64"
    # no devices in the container: every device check is a skip, never a pass or a fail
    assert out["device"] and all(st == "skip" for _, st in out["device"]), out["device"]
    assert {i for i, _ in out["device"]} >= {"driver-installed", "npu-devices", "container-mounts"}
    assert r.returncode == 0 and out["ok"], r.stderr


def test_verify_of_a_foreign_image_is_a_clear_refusal(engine: Engine) -> None:
    r = cli("image", "verify", BASE_IMAGE, timeout=300)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert "is not an image built by cannenv" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------- lock, registry, SBOM


def test_lock_push_rebuild_locked_and_a_changed_byte(engine: Engine, built83: Built, tmp_path: Path) -> None:
    from cannenv.lock import load_lock

    # push: the lock records repo@sha256
    repo = f"{built83.registry}/cannenv-test/i13-stack"
    r = cli("image", "push", built83.tag, "--to", f"{repo}:8.3.rc1", "--lock", str(built83.lock))
    assert r.returncode == 0, r.stderr
    pinned = r.stdout.strip()
    assert pinned.startswith(f"{repo}@sha256:") and load_lock(built83.lock).image_digest == pinned
    # skopeo, as a platform team would, sees the same manifest digest in the registry
    sk = subprocess.run(
        ["skopeo", "inspect", "--tls-verify=false", f"docker://{repo}:8.3.rc1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if sk.returncode == 0:
        assert json.loads(sk.stdout)["Digest"] == pinned.split("@")[1]
    # pull --locked: the digest the lock names, checked against the lock
    r = cli("image", "pull", "--locked", str(built83.lock))
    assert r.returncode == 0 and "matches" in r.stdout, r.stderr
    # a base given by tag is refused unless --allow-tag (exit 5), before any build step
    args = list(built83.build_args)
    args[args.index("--base-image") + 1] = BASE_IMAGE
    r = cli("image", "build", *args)
    assert r.returncode == 5 and "is a tag, not a digest" in r.stderr and "step 1/" not in r.stderr
    # a rebuild with --locked: same inputs, accepted; the lock's choice of NNAL holds without --with-nnal
    args = [a for a in built83.build_args if a != "--with-nnal"]
    r = cli("image", "build", *args, "--locked", str(built83.lock))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "inputs match the lock" in r.stderr and "note: NNAL" not in r.stderr
    # a lock made without NNAL: --with-nnal differs from it, refused (exit 5) before any build step
    no_nnal = tmp_path / "no-nnal.lock.json"
    r = cli("image", "lock", *args[:-2], "--out", str(no_nnal))
    assert r.returncode == 0 and "note: NNAL 8.3.RC1" in r.stderr, r.stderr
    assert [i.component for i in load_lock(no_nnal).installers] == ["cann", "ops"]
    r = cli("image", "build", *built83.build_args, "--locked", str(no_nnal))
    assert r.returncode == 5 and "NNAL: the lock leaves it out" in r.stderr and "step 1/" not in r.stderr
    # one byte of one installer changes: refused (exit 5) before any build step, naming the file
    art = tmp_path / "artifacts"
    art.mkdir()
    for i in built83.installers.values():
        if i.component != "kernels":
            os.link(i.path, art / i.path.name)
    kernels = built83.installers["kernels"].path
    data = bytearray(kernels.read_bytes())
    data[len(data) // 2] ^= 0x01
    (art / kernels.name).write_bytes(bytes(data))
    args = list(built83.build_args)
    args[args.index("--artifacts") + 1] = str(art)
    r = cli("image", "build", *args, "--locked", str(built83.lock))
    assert r.returncode == 5, (r.returncode, r.stderr[-2000:])
    assert kernels.name in r.stderr and "step 1/" not in r.stderr
    # `image lock --check` refuses the changed file too
    r = cli("image", "lock", *args[:-2], "--out", str(built83.lock), "--check", "--allow-unpinned")
    assert r.returncode == 5 and kernels.name in r.stderr


def test_a_locked_build_with_an_unpinned_nnal_keeps_the_trust_rule(built85: Built) -> None:
    """The 8.5.0 lock records NNAL as pinned: false. `--locked` follows the lock's choice (NNAL in,
    without --with-nnal), but the lock's digest is no pin: --allow-unpinned is still needed."""
    from cannenv.lock import load_lock

    assert [(i.component, i.pinned) for i in load_lock(built85.lock).installers][-1] == ("nnal", False)
    args = [a for a in built85.build_args if a not in ("--with-nnal", "--allow-unpinned")]
    r = cli("image", "build", *args, "--locked", str(built85.lock))
    assert r.returncode == 5, (r.returncode, r.stderr[-2000:])
    assert "Ascend-cann-nnal_8.5.0_linux-x86_64.run" in r.stderr and "--allow-unpinned" in r.stderr
    assert "step 1/" not in r.stderr
    r = cli("image", "build", *args, "--allow-unpinned", "--locked", str(built85.lock))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "inputs match the lock" in r.stderr and "note: NNAL" not in r.stderr


def test_the_sbom_lists_every_input_and_validates(engine: Engine, built83: Built) -> None:
    from cannenv.image.sbom import validate
    from cannenv.lock import load_lock

    r = cli("image", "sbom", built83.tag, "--check")
    assert r.returncode == 0, r.stderr
    assert validate(r.stdout) == []
    assert r.stdout == cli("image", "sbom", str(built83.lock)).stdout  # the image's SBOM is the lock's
    doc = json.loads(r.stdout)
    by_name = {c["name"]: c for c in doc["components"]}
    for inst in built83.installers.values():
        assert by_name[inst.path.name]["hashes"][0]["content"] == inst.sha256
    for req in load_lock(built83.lock).python_requirements:
        assert [f"sha256:{h['content']}" for h in by_name[req.name]["hashes"]] == list(req.hashes)
    base = built83.base.split("@")[0]
    assert by_name[base]["hashes"][0]["content"] == built83.base.split("sha256:")[1]
    label = engine.inspect(built83.tag).labels["cannenv.sbom"]
    assert run_in(engine, built83.tag, "cat", label).stdout == r.stdout


def test_the_gate_survives_a_broken_workload_venv(engine: Engine, built83: Built, tmp_path: Path) -> None:
    """A user's `pip install` that breaks click must not stop the container from starting."""
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(
        f"FROM {built83.tag}\nUSER root\n"
        "RUN rm -rf /opt/cannenv/venv/lib/python3.11/site-packages/click\nUSER HwHiAiUser\n"
    )
    broken = "cannenv-test/i13-broken-venv:test"
    engine.build(ctx, broken)
    try:
        r = run_in(engine, broken, "echo", "started")
        assert r.exit_code == 0 and r.stdout.strip() == "started", r.stderr
        r = run_in(engine, broken, "cannenv", "--version")
        assert r.exit_code != 0  # the workload's cannenv is broken; the gate is not
    finally:
        engine.remove(broken)


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
    # COPY after the `os` stage (its last step links the gate's interpreter)
    history = list(reversed(engine.history(built83.tag)))
    after_os = (
        next(i for i, h in enumerate(history) if "/opt/cannenv/gate/python" in h.get("CreatedBy", "")) + 1
    )
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
    from cannenv.lock import load_lock

    rng = load_lock(built83.lock).driver_range
    assert "refusing to start" in r.stderr and "23.0.7" in r.stderr and rng in r.stderr


def test_gate_starts_on_a_fitting_driver(engine: Engine, built83: Built, tmp_path: Path) -> None:
    from cannenv import matrix

    # the oldest driver the matrix's HDK rule pairs with this CANN fits by definition
    req = matrix.load([built83.matrix]).driver_requirement("8.3.RC1", "a2")
    assert req is not None
    fits = f"Version={req.minimum}\npackage_version={req.minimum}\n"
    r = run_in(engine, built83.tag, "echo", "started", driver=fits, tmp=tmp_path)
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

    pins = {c: (built83.installers[f].path.name, built83.installers[f].sha256) for c, f in COMP.items()}
    mdir = inject_digests(
        tmp_path / "matrices", built83.stack_id, "x86_64", pins, versions={"torch_npu": "2.6.0.post4"}
    )
    m = matrix.load([mdir])
    spec = spec_from_stack(m.stack(built83.stack_id), m, arch="x86_64", nnal=True)
    verified = verify_installers(spec, built83.workdir / "artifacts")
    wh = wheelhouse(tmp_path / "wh", dependency_wheels, "8.3.RC1", "2.6.0", "2.6.0.post4")
    ctx = render(
        spec,
        RenderOptions(
            os="preinstalled",
            base_image=built83.base,
            wheels=scan_wheelhouse(wh),
            cannenv_wheel=wheel_from_file(built83.cannenv_wheel),
            verified_installers=verified,
        ),
    )
    result = engine.build(ctx.write(tmp_path / "ctx"), "cannenv-test/i13-stack:8.3.rc1-npu-post4")
    stage, seen_top_copy, seen_npu_copy = 0, False, False
    for step in result.steps:
        if step.instruction.startswith("FROM"):
            stage += 1
            continue
        if stage in (1, 2, 3):  # os, cann-installer, python (base, torch, cannenv)
            assert step.cached, f"step rebuilt: {step.instruction}"
        elif stage == 4 and "python/torch_npu/" in step.instruction:
            # a cache miss on a fresh engine; where an earlier run of this test built the same
            # post4 layer on this engine it is that layer, reused. Either way the image below must
            # hold torch_npu 2.6.0.post4, not built83's 2.6.0: that is what proves the pin moved
            seen_npu_copy = True
        elif stage == 5:
            seen_top_copy = seen_top_copy or step.instruction.startswith("COPY --from=python-top")
            if not seen_top_copy:
                assert step.cached, f"CANN-side step rebuilt: {step.instruction}"
    assert stage == 5 and seen_npu_copy
    r = engine.run(result.tag, ["python", "-c", "import torch_npu; print(torch_npu.__version__)"])
    assert r.stdout.strip() == "2.6.0.post4"
    engine.remove(result.tag)
