"""The image's promises without an engine: the lock as a contract, the SBOM, the isolated gate
runtime, the architecture guard, and judging what an image records."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))

from helpers.cli import cannenv
from image_wheels import cann_dep_standins
from make_fixture_installer import FixtureInstaller, make_installers
from shipped_matrix import inject_digests

from cannenv.errors import IntegrityError, MissingToolError
from cannenv.image import RenderOptions, differences, judge_record, lock_for, render, spec_from_stack
from cannenv.image.sbom import inputs_from_lock, sbom_json, validate
from cannenv.image.verify import ImageRecord

STACK = "a2-cann8.3.rc1-torch2.6.0-py3.11"  # a SHIPPED stack id
COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}
BASE = "127.0.0.1:5000/cannenv-test/debian@sha256:" + "5" * 64


@pytest.fixture(scope="module")
def installers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FixtureInstaller]:
    return make_installers(
        tmp_path_factory.mktemp("art"), "8.3.RC1", installed_bytes=4096, padding_bytes=4096
    )


@pytest.fixture(scope="module")
def matrix_dir(tmp_path_factory: pytest.TempPathFactory, installers: dict[str, FixtureInstaller]) -> Path:
    pins = {c: (installers[f].path.name, installers[f].sha256) for c, f in COMP.items()}
    return inject_digests(tmp_path_factory.mktemp("m") / "matrices", STACK, "x86_64", pins)


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from fixture_stack import standin_wheel

    wh = tmp_path_factory.mktemp("wh")
    standin_wheel(wh, "torch", "2.6.0", "torch")
    standin_wheel(wh, "torch_npu", "2.6.0.post3", "torch_npu")
    standin_wheel(wh, "cannenv", "0.1.0", "cannenv_standin")
    cann_dep_standins(wh, "8.3.RC1")
    return wh


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return cannenv(*args, timeout=300)


def lock_args(matrix_dir: Path, installers: dict[str, FixtureInstaller], wh: Path, out: Path) -> list[str]:
    return [
        "image",
        "lock",
        STACK,
        "--matrix",
        str(matrix_dir),
        "--arch",
        "x86_64",
        "--os",
        "preinstalled",
        "--base-image",
        BASE,
        "--artifacts",
        str(installers["toolkit"].path.parent),
        "--wheelhouse",
        str(wh),
        "--cannenv-wheel",
        str(next(wh.glob("cannenv-*.whl"))),
        "--with-nnal",  # the test matrix pins the fixture NNAL's digest
        "--out",
        str(out),
    ]


def _ctx(matrix_dir: Path, installers: dict[str, FixtureInstaller], wh: Path):  # type: ignore[no-untyped-def]
    from cannenv import matrix
    from cannenv.artifacts import verify_installers
    from cannenv.image import scan_wheelhouse

    m = matrix.load([matrix_dir])
    spec = spec_from_stack(m.stack(STACK), m, arch="x86_64", nnal=True)  # the test matrix pins NNAL
    verified = verify_installers(spec, installers["toolkit"].path.parent)
    opts = RenderOptions(
        os="preinstalled", base_image=BASE, wheels=scan_wheelhouse(wh), verified_installers=verified
    )
    return spec, render(spec, opts)


# ------------------------------------------------------------------------------- the contract


def test_lock_check_update_and_refusal_name_each_difference(
    matrix_dir: Path, installers: dict[str, FixtureInstaller], wheelhouse: Path, tmp_path: Path
) -> None:
    out = tmp_path / "cannenv.lock.json"
    args = lock_args(matrix_dir, installers, wheelhouse, out)
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    lock = json.loads(out.read_text())
    assert all(i["pinned"] and len(i["sha256"]) == 64 for i in lock["installers"])
    assert lock["base_image_digest"] == "sha256:" + "5" * 64 and lock["arch"] == "x86_64"
    assert cli(*args, "--check").returncode == 0
    # one wheel changes: --check and a plain re-lock refuse (exit 5) naming it; --update records it
    from fixture_stack import standin_wheel

    (wheelhouse / "torch_npu-2.6.0.post3-py3-none-any.whl").unlink()
    standin_wheel(wheelhouse, "torch_npu", "2.6.0.post3", "torch_npu_changed")
    try:
        before = out.read_bytes()
        for extra in (("--check",), ()):
            r = cli(*args, *extra)
            assert r.returncode == 5, r.stderr
            assert "python torch-npu 2.6.0.post3: locked sha256:" in r.stderr
            assert "rendered context: locked sha256" in r.stderr
            assert out.read_bytes() == before  # never silently rewritten
        r = cli(*args, "--update")
        assert r.returncode == 0 and "changed: python torch-npu" in r.stderr
        assert cli(*args, "--check").returncode == 0
    finally:
        (wheelhouse / "torch_npu-2.6.0.post3-py3-none-any.whl").unlink()
        standin_wheel(wheelhouse, "torch_npu", "2.6.0.post3", "torch_npu")


def test_a_changed_installer_byte_is_named_in_the_differences(
    matrix_dir: Path, installers: dict[str, FixtureInstaller], wheelhouse: Path, tmp_path: Path
) -> None:
    spec, ctx = _ctx(matrix_dir, installers, wheelhouse)
    locked = lock_for(spec, ctx)
    first = locked.installers[0]
    changed = (first.model_copy(update={"sha256": "0" * 64}), *locked.installers[1:])
    tampered = locked.model_copy(update={"installers": changed})
    diffs = differences(tampered, locked)
    assert diffs == [f"cann installer {first.file}: locked sha256 {'0' * 64}, now {first.sha256}"]
    from cannenv.image.contract import enforce

    with pytest.raises(IntegrityError) as exc:
        enforce(tampered, locked, lock_path="x.lock", action="image build --locked")
    assert exc.value.exit_code == 5 and locked.installers[0].file in exc.value.message


# ------------------------------------------------------------------------------------- SBOM


def test_the_sbom_lists_every_input_with_its_digest_and_validates(
    matrix_dir: Path, installers: dict[str, FixtureInstaller], wheelhouse: Path
) -> None:
    spec, ctx = _ctx(matrix_dir, installers, wheelhouse)
    text = ctx.files["sbom.cdx.json"].decode()
    assert validate(text) == []
    doc = json.loads(text)
    assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.6"
    by_name = {c["name"]: c for c in doc["components"]}
    for inst in installers.values():
        comp = by_name[inst.path.name]
        assert comp["hashes"] == [{"alg": "SHA-256", "content": inst.sha256}]
        assert any(r["type"] == "distribution" for r in comp["externalReferences"])
    for req in ctx.requirements:
        comp = by_name[req.name]
        assert comp["version"] == req.version and comp["purl"].startswith(f"pkg:pypi/{req.name}@")
        assert [f"sha256:{h['content']}" for h in comp["hashes"]] == list(req.hashes)
    assert {"numpy", "protobuf", "torch", "torch-npu"} <= set(by_name)
    assert by_name["127.0.0.1:5000/cannenv-test/debian"]["hashes"][0]["content"] == "5" * 64
    # the SBOM baked into the image is the lock's SBOM, byte for byte
    assert sbom_json(inputs_from_lock(lock_for(spec, ctx))) == text
    assert '"cannenv.sbom": "/etc/cannenv/sbom.cdx.json"' in ctx.files["image.json"].decode()


def test_the_sbom_validates_against_the_official_schema_with_jsonschema(
    matrix_dir: Path, installers: dict[str, FixtureInstaller], wheelhouse: Path
) -> None:
    """Independent of the library's validator: the schema file the CycloneDX project publishes."""
    import importlib.resources

    import jsonschema
    from referencing import Registry, Resource

    _, ctx = _ctx(matrix_dir, installers, wheelhouse)
    res = importlib.resources.files("cyclonedx.schema._res")
    schema = json.loads(res.joinpath("bom-1.6.SNAPSHOT.schema.json").read_text())
    registry = Registry().with_resources(
        (uri, Resource.from_contents(json.loads(res.joinpath(name).read_text())))
        for uri, name in (
            ("spdx.schema.json", "spdx.SNAPSHOT.schema.json"),
            ("jsf-0.82.schema.json", "jsf-0.82.SNAPSHOT.schema.json"),
            ("cryptography-defs.schema.json", "cryptography-defs.SNAPSHOT.schema.json"),
        )
    )
    jsonschema.Draft7Validator(schema, registry=registry).validate(json.loads(ctx.files["sbom.cdx.json"]))
    bad = json.loads(ctx.files["sbom.cdx.json"])
    bad["components"][0]["hashes"] = [{"alg": "SHA-256", "content": "not-hex"}]
    assert validate(json.dumps(bad))


# --------------------------------------------------------------------------------- the gate


def test_the_gate_runs_from_its_own_runtime_without_site_packages(tmp_path: Path) -> None:
    from cannenv.gate import gate_runtime

    for rel, data in gate_runtime().items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    # a "workload" that shadows what the gate imports: -I -S keeps it off the gate's path
    poison = tmp_path / "poison"
    (poison / "packaging").mkdir(parents=True)
    (poison / "packaging" / "__init__.py").write_text("raise SystemExit('poisoned')\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(poison)}
    argv = [sys.executable, "-I", "-S", str(tmp_path / "cannenv-gate"), "--require", ">=25.3.0", "--"]
    r = subprocess.run([*argv, "echo", "started"], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0 and r.stdout.strip() == "started", r.stderr
    assert "no NPU driver is mounted" in r.stderr
    r = subprocess.run(
        [*argv[:-3], "--require", "not a range", "--", "true"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert r.returncode == 2 and "cannenv gate: error:" in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------------------ architecture


def test_another_architecture_without_emulation_is_refused_with_exit_4(tmp_path: Path) -> None:
    from cannenv.engine import check_emulation

    check_emulation("x86_64", "x86_64", binfmt_dir=str(tmp_path / "absent"))  # native: nothing needed
    with pytest.raises(MissingToolError, match="binfmt_misc is not mounted") as exc:
        check_emulation("aarch64", "x86_64", binfmt_dir=str(tmp_path / "absent"))
    assert exc.value.exit_code == 4 and "qemu-user-static" in (exc.value.hint or "")
    (tmp_path / "status").write_text("enabled\n")
    with pytest.raises(MissingToolError, match=r"no binfmt_misc entry .*qemu-aarch64"):
        check_emulation("aarch64", "x86_64", binfmt_dir=str(tmp_path))
    entry = tmp_path / "qemu-aarch64"
    entry.write_text("enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: P\n")
    with pytest.raises(MissingToolError, match="lacks the F"):
        check_emulation("aarch64", "x86_64", binfmt_dir=str(tmp_path))
    entry.write_text("enabled\ninterpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P\nflags: PF\n")
    check_emulation("aarch64", "x86_64", binfmt_dir=str(tmp_path))


def test_judge_record_catches_a_mislabelled_architecture_and_contradicting_records(
    matrix_dir: Path, installers: dict[str, FixtureInstaller], wheelhouse: Path
) -> None:
    spec, ctx = _ctx(matrix_dir, installers, wheelhouse)
    info = json.loads(ctx.files["image.json"])
    sbom = ctx.files["sbom.cdx.json"].decode()
    good = ImageRecord("img", "sha256:" + "1" * 64, "amd64", dict(ctx.labels), info, sbom)
    lock = lock_for(spec, ctx, image_id="sha256:" + "1" * 64)
    assert judge_record(good, lock) == []
    # a base image's own labels are not judged; a cannenv label the record lacks is
    inherited = ImageRecord(
        "img",
        good.image_id,
        "amd64",
        {**ctx.labels, "org.opencontainers.image.ref.name": "ubuntu"},
        info,
        sbom,
    )
    assert judge_record(inherited, lock) == []
    extra = ImageRecord("img", good.image_id, "amd64", {**ctx.labels, "cannenv.stack": "other"}, info, sbom)
    assert any("label cannenv.stack='other'" in p for p in judge_record(extra))
    arm = ImageRecord("img", good.image_id, "arm64", dict(ctx.labels), info, sbom)
    assert any("architecture: the image is arm64" in p for p in judge_record(arm))
    unpinned = {**info, "installers": [{**info["installers"][0], "sha256": None}]}
    bad = ImageRecord("img", good.image_id, "amd64", dict(ctx.labels), unpinned, sbom)
    assert any("records no sha256" in p for p in judge_record(bad))
    other = lock.model_copy(update={"image_id": "sha256:" + "2" * 64, "arch": "aarch64"})
    problems = judge_record(good, other)
    assert any(p.startswith("image id:") for p in problems) and any("cannenv.arch" in p for p in problems)


def test_context_files_are_copies_and_a_changed_source_is_caught(
    matrix_dir: Path, installers: dict[str, FixtureInstaller], wheelhouse: Path, tmp_path: Path
) -> None:
    _, ctx = _ctx(matrix_dir, installers, wheelhouse)
    out = ctx.write(tmp_path / "ctx")
    for rel, src in ctx.links.items():
        assert (out / rel).stat().st_ino != src.stat().st_ino
    assert (out / "sbom.cdx.json").is_file() and (out / "gate" / "cannenv-gate").is_file()
    src = installers["nnal"].path
    original = src.read_bytes()
    try:
        src.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
        with pytest.raises(IntegrityError, match="changed after it was verified"):
            ctx.write(tmp_path / "ctx2")
        assert not (tmp_path / "ctx2").exists()  # all or nothing
    finally:
        src.write_bytes(original)


def test_doctor_without_devices_skips_the_driver_pin_of_a_shipped_stack(tmp_path: Path) -> None:
    """An image holds no driver: in --no-devices mode stack-match must not judge it (a device fact)."""
    import shutil
    from dataclasses import replace

    from cannenv import checks
    from cannenv.checks.stack import choose_target
    from cannenv.host import Host
    from cannenv.matrix import load
    from cannenv.probes import collect
    from tests.helpers import hosts

    tree = hosts.a2_cann83_old(tmp_path)
    shutil.rmtree(tmp_path / "usr/local/Ascend/driver")
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    target = replace(choose_target(facts, load(), stack_id=STACK), no_devices="--no-devices")
    found = [f for f in checks.run(facts, target) if f.id == "stack-match"]
    driver = [f for f in found if f.subject == "driver"]
    assert driver and driver[0].status == "skip" and driver[0].scope == "device", found
    # with devices expected, the same missing driver is a finding
    target = choose_target(facts, load(), stack_id=STACK)
    assert any(
        f.subject == "driver" and f.status == "fail"
        for f in checks.run(facts, target)
        if f.id == "stack-match"
    )


# ----------------------------------------------------------------------------- docs as written


def _commands(text: str) -> list[list[str]]:
    """`cannenv image …` command lines of a README code block or a CI script, as argv lists."""
    import re
    import shlex

    text = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in text.splitlines():
        line = line.strip().removeprefix("- ")
        for part in re.split(r"\s*(?:&&|;|\|)\s*", line):
            part = part.split(" #")[0].strip()
            m = re.search(r"(?:^|\$\(|\")cannenv (image .*)", part)
            if not m or "..." in part:
                continue
            words = shlex.split(re.sub(r'\)"$', "", m[1]), posix=True)
            if ">" in words:
                words = words[: words.index(">")]
            out.append([w.replace("…", "0" * 64).replace("$", "") for w in words])
    return out


@pytest.mark.parametrize("doc", ["README.md", "examples/ci/gitlab-ci.yml"])
def test_image_commands_in_the_docs_parse_as_written(doc: str) -> None:
    import click

    from cannenv.cli import cli as root

    text = (Path(__file__).resolve().parents[2] / doc).read_text(encoding="utf-8")
    commands = _commands(text)
    assert len(commands) >= 4, commands
    for argv in commands:
        ctx = root.make_context("cannenv", list(argv), resilient_parsing=True)
        group = root.get_command(ctx, argv[0])
        assert isinstance(group, click.Group), argv
        sub = group.get_command(ctx, argv[1])
        assert sub is not None, f"{doc}: no command `cannenv image {argv[1]}`"
        try:
            sub.make_context(f"cannenv image {argv[1]}", argv[2:])
        except click.UsageError as exc:
            raise AssertionError(f"{doc}: `cannenv {' '.join(argv)}` does not parse: {exc}") from None
