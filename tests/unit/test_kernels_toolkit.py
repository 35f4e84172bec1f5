"""Toolkit detection, SoC mapping, command assembly, planning, skip semantics and rendering.

Toolkit trees are FIXTURES built per test with the layout of real installs (research kernels.md
§2): the legacy 8.1.RC1 tree keeps ``ascendc.cmake`` under ``<arch>-linux/tikcpp/`` with
``compiler`` a link to the arch dir; the CANN 9 tree ships ``asc-config.cmake`` beside it.
They hold empty marker files, never a working toolkit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from cannenv.certify import kernel_build as kb
from cannenv.certify import kernels as K
from cannenv.certify.kernel_data import (
    load_manifests,
    select_kernels,
    shipped_manifests,
    shipped_soc_table,
)
from cannenv.certify.kernel_toolkit import (
    NO_TOOLKIT,
    choose_flow,
    detect_flows,
    find_cann_root,
    mode_availability,
    soc_target,
)
from cannenv.errors import InputError, NotFoundError
from cannenv.host import Host
from cannenv.resources import smoke_kernels_dir

TABLE = shipped_soc_table()
TOOLKIT = "/usr/local/Ascend/ascend-toolkit/latest"


def _touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fixture_toolkit(
    root: Path,
    *,
    legacy: bool = True,
    asc: bool = False,
    cpu: bool = False,
    sim_dirs: tuple[str, ...] = (),
    acl: bool = True,
    prefix: str = TOOLKIT,
) -> Path:
    """A FIXTURE toolkit tree laid out like a real install (marker files only)."""
    tk = root / prefix.lstrip("/")
    arch = tk / "aarch64-linux"
    kcm = arch / "tikcpp/ascendc_kernel_cmake"
    kcm.mkdir(parents=True)
    if legacy:
        _touch(kcm / "ascendc.cmake", "# fixture\n")
        _touch(kcm / "host_config.cmake", "# fixture\n")
    if asc:
        _touch(kcm / "asc-config.cmake", "# fixture\n")
        _touch(kcm / "asc_modules/FindASC.cmake", "# fixture\n")
    (tk / "compiler").symlink_to("aarch64-linux")  # [C81]: compiler -> <arch>-linux
    _touch(arch / "ccec_compiler/bin/ccec")
    if acl:
        _touch(tk / "lib64/libascendcl.so")
    if cpu:
        (tk / "tools/tikicpulib/lib/cmake").mkdir(parents=True)
    for d in sim_dirs:
        (tk / "tools/simulator" / d / "lib").mkdir(parents=True)
    return tk


# --------------------------------------------------------------------------------- CANN root
def test_no_toolkit_reason_is_exact(tmp_path: Path) -> None:
    root = find_cann_root(Host(root=tmp_path, env={}, allow_commands=False))
    assert root.path is None
    assert (
        root.reason
        == NO_TOOLKIT
        == "no CANN toolkit: ASCEND_HOME_PATH unset and none under /usr/local/Ascend"
    )


def test_cann_root_from_env_and_defaults(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path)
    found = find_cann_root(Host(root=tmp_path, env={}, allow_commands=False))
    assert (found.path, found.source) == (TOOLKIT, "default")
    env = find_cann_root(Host(root=tmp_path, env={"ASCEND_HOME_PATH": TOOLKIT}, allow_commands=False))
    assert env.source == "ASCEND_HOME_PATH"
    missing = find_cann_root(Host(root=tmp_path, env={"ASCEND_HOME_PATH": "/opt/none"}, allow_commands=False))
    assert (
        missing.path is None and missing.reason is not None and "/opt/none does not exist" in missing.reason
    )


# ------------------------------------------------------------------------------ flow detection
def test_legacy_tree_through_compiler_link(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, legacy=True, asc=False)
    flows = detect_flows(Host(root=tmp_path, env={}), TOOLKIT)
    assert flows.available == ("legacy",)
    assert flows.legacy_cmake == f"{TOOLKIT}/compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake"
    assert flows.compiler is not None and flows.compiler.endswith("ccec")


def test_new_tree_prefers_asc(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, legacy=True, asc=True)
    host = Host(root=tmp_path, env={})
    flows = detect_flows(host, TOOLKIT)
    assert flows.available == ("asc", "legacy")
    assert flows.asc_config_dir == f"{TOOLKIT}/compiler/tikcpp/ascendc_kernel_cmake"
    flow, why = choose_flow(flows, soc_target("910B3", TABLE, source="--soc"))
    assert flow == "asc" and "asc-config.cmake" in why
    # The first-gen 910 has no dav-* arch: the legacy flow is used.
    flow, why = choose_flow(flows, soc_target("Ascend910B", TABLE, source="--soc"))
    assert flow == "legacy"
    assert choose_flow(flows, soc_target("910B3", TABLE, source="--soc"), wanted="legacy")[0] == "legacy"


def test_no_flow_and_no_fit(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, legacy=False, asc=False)
    flows = detect_flows(Host(root=tmp_path, env={}), TOOLKIT)
    flow, why = choose_flow(flows, soc_target("910B3", TABLE, source="--soc"))
    assert flow is None and "neither ascendc.cmake nor asc-config.cmake" in why
    only_asc = flows.model_copy(update={"asc_config_dir": "/x"})
    flow, why = choose_flow(only_asc, soc_target("Ascend910A", TABLE, source="--soc"))
    assert flow is None and "no --npu-arch" in why


# ---------------------------------------------------------------------------------- SoC mapping
@pytest.mark.parametrize(
    ("name", "soc", "family", "legacy", "arch", "cpu"),
    [
        ("910B3", "Ascend910B3", "a2", "Ascend910B3", "dav-2201", "V220"),
        ("ascend910_9392", "Ascend910_9392", "a3", "Ascend910_9392", "dav-2201", "V220"),
        ("310P3", "Ascend310P3", "310p", "Ascend310P3", "dav-2002", "V200"),
        # The trap: Ascend910B is the first-gen 910 ProB, not the 910B (A2) series.
        ("Ascend910B", "Ascend910B", "910", "Ascend910B", None, "V100"),
        ("Ascend310B1", "Ascend310B1", "310b", "Ascend310B1", None, "M300"),
        ("Ascend950PR_9579", "Ascend950PR_9579", "950", None, "dav-3510", None),
    ],
)
def test_soc_mapping(
    name: str, soc: str, family: str, legacy: str | None, arch: str | None, cpu: str | None
) -> None:
    t = soc_target(name, TABLE, source="--soc")
    assert (t.soc, t.family, t.legacy_soc_version, t.npu_arch, t.cpu_debug_family) == (
        soc,
        family,
        legacy,
        arch,
        cpu,
    )


def test_simulator_directories() -> None:
    t = soc_target("910B4", TABLE, source="--soc")
    assert t.simulator_dir_legacy == "Ascend910B4" and t.simulator_dir_asc == "dav_2201"


def test_unknown_soc_is_input_error() -> None:
    with pytest.raises(InputError):
        soc_target("Ascend999Z", TABLE, source="--soc")


def test_soc_table_covers_every_family() -> None:
    from cannenv.soc import FAMILY_IDS

    assert set(TABLE.families) == set(FAMILY_IDS)
    for m in shipped_manifests():
        assert set(m.written_for.families) <= set(TABLE.families), m.name


# ---------------------------------------------------------------------------------- run modes
def test_modes_need_their_libraries(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend910B3",))
    host = Host(root=tmp_path, env={})
    modes = {
        m.mode: m for m in mode_availability(host, TOOLKIT, "legacy", soc_target("910B3", TABLE, source="x"))
    }
    assert not modes["npu"].available and "/dev/davinci" in modes["npu"].reason
    assert modes["cpu"].available and modes["sim"].available
    # The new flow looks for the simulator by arch (dav_2201), which this tree lacks.
    modes = {
        m.mode: m for m in mode_availability(host, TOOLKIT, "asc", soc_target("910B3", TABLE, source="x"))
    }
    assert not modes["sim"].available and "dav_2201" in modes["sim"].reason
    assert not modes["cpu"].available


def test_npu_mode_with_device_and_driver(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path)
    _touch(tmp_path / "dev/davinci0")
    host = Host(root=tmp_path, env={})
    target = soc_target("910B3", TABLE, source="x")
    npu = mode_availability(host, TOOLKIT, "legacy", target)[0]
    assert not npu.available and "driver" in npu.reason
    (tmp_path / "usr/local/Ascend/driver").mkdir(parents=True)
    assert mode_availability(host, TOOLKIT, "legacy", target)[0].available


# ---------------------------------------------------------------------------- command assembly
def _ctx(flow: str, mode: str, soc: str = "910B3") -> kb.BuildContext:
    return kb.BuildContext(
        flow=flow,  # type: ignore[arg-type]
        mode=mode,  # type: ignore[arg-type]
        cann_root=TOOLKIT,
        asc_config_dir=f"{TOOLKIT}/compiler/tikcpp/ascendc_kernel_cmake",
        target=soc_target(soc, TABLE, source="--soc"),
    )


def _vector_add():  # type: ignore[no-untyped-def]
    return next(m for m in shipped_manifests() if m.name == "vector_add")


def test_legacy_configure_command() -> None:
    from pathlib import PurePosixPath as P

    cmd = kb.configure_command(_ctx("legacy", "npu"), P("/k"), _vector_add(), P("/w/build"))
    assert cmd.argv == (
        "cmake",
        "-S",
        "/k/vector_add",
        "-B",
        "/w/build",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCANNENV_FLOW=legacy",
        "-DRUN_MODE=npu",
        "-DSOC_VERSION=Ascend910B3",
        f"-DASCEND_CANN_PACKAGE_PATH={TOOLKIT}",
    )
    cpu = kb.configure_command(_ctx("legacy", "cpu"), P("/k"), _vector_add(), P("/w/build"))
    assert f"-DCMAKE_PREFIX_PATH={TOOLKIT}/tools/tikicpulib/lib/cmake" in cpu.argv


def test_asc_configure_command() -> None:
    from pathlib import PurePosixPath as P

    cmd = kb.configure_command(_ctx("asc", "sim"), P("/k"), _vector_add(), P("/w/build"))
    assert "-DCANNENV_FLOW=asc" in cmd.argv
    assert "-DCMAKE_ASC_ARCHITECTURES=dav-2201" in cmd.argv
    assert "-DCMAKE_ASC_RUN_MODE=sim" in cmd.argv
    assert f"-DASC_DIR={TOOLKIT}/compiler/tikcpp/ascendc_kernel_cmake" in cmd.argv
    assert cmd.env == {"ASCEND_HOME_PATH": TOOLKIT}
    assert cmd.shell.startswith(f"ASCEND_HOME_PATH={TOOLKIT} cmake -S /k/vector_add")
    assert kb.build_command(_ctx("asc", "sim"), P("/w/build")).argv == (
        "cmake",
        "--build",
        "/w/build",
        "--parallel",
        "2",
    )


def test_reference_commands() -> None:
    from pathlib import PurePosixPath as P

    ctx = kb.BuildContext(flow="reference")
    m = _vector_add()
    cmd = kb.configure_command(ctx, P("/k"), m, P("/w/build"))
    assert cmd.argv[:3] == ("cmake", "-S", "/k/vector_add/reference") and cmd.env == {}
    run = kb.run_command(ctx, m, m.cases[0], P("/w/build"), P("/w/data/fp16"))
    assert run.argv == (
        "/w/build/smoke_vector_add_ref",
        "fp16",
        "/w/data/fp16",
        "block_dim=8",
        "total_length=16411",
        "tile_length=1024",
    )
    assert run.shell.startswith("cd /w/data/fp16 && /w/build/smoke_vector_add_ref fp16")


def test_run_environment_per_mode() -> None:
    sim = kb.run_environment(_ctx("legacy", "sim"))
    libs = sim["LD_LIBRARY_PATH"].split(":")
    assert libs[0] == f"{TOOLKIT}/runtime/lib64/stub"  # [S-2024] run.sh: stub first
    assert libs[1] == f"{TOOLKIT}/tools/simulator/Ascend910B3/lib"
    assert sim["CAMODEL_LOG_PATH"] == "sim_log"
    asc_sim = kb.run_environment(_ctx("asc", "sim"))
    assert f"{TOOLKIT}/tools/simulator/dav_2201/lib" in asc_sim["LD_LIBRARY_PATH"]
    cpu = kb.run_environment(_ctx("legacy", "cpu"))
    assert cpu["LD_LIBRARY_PATH"].startswith(f"{TOOLKIT}/tools/simulator/Ascend910B3/lib:")
    npu = kb.run_environment(_ctx("legacy", "npu"))
    assert npu["LD_LIBRARY_PATH"].startswith(f"{TOOLKIT}/lib64")
    merged = kb.merged_env({"LD_LIBRARY_PATH": "/usr/lib", "A": "1"}, npu)
    assert merged["LD_LIBRARY_PATH"].endswith(":/usr/lib") and merged["A"] == "1"


GPP_WALL = (
    """\
In file included from /k/vector_add/vector_add_kernel.cpp:18:
/k/common/x.h:3:1: warning: unused variable 'q' [-Wunused-variable]
"""
    + "\n".join(f"noise line {i}" for i in range(200))
    + """
/k/vector_add/vector_add_kernel.cpp:42:9: error: 'Addd' is not a member of 'AscendC'
   42 |         AscendC::Addd(z, x, y, len);
      |         ^~~~~~~~~~~~~
make[2]: *** [CMakeFiles/x.dir/build.make:76: x.o] Error 1
"""
)


def test_relevant_lines_pick_the_error_not_the_wall() -> None:
    lines = kb.relevant_lines(GPP_WALL)
    assert any("error: 'Addd' is not a member" in ln for ln in lines)
    assert any("^~~~" in ln for ln in lines)  # the caret line comes along
    assert not any("noise line" in ln for ln in lines)
    assert len(lines) <= 21
    assert lines[-1].startswith("... (")


def test_parse_kernel_time() -> None:
    assert kb.parse_kernel_time_us("x\ncannenv: kernel_time_us=12.500\n") == 12.5
    assert kb.parse_kernel_time_us("nothing") is None
    assert kb.parse_kernel_time_us("cannenv: kernel_time_us=0.000") is None


# ---------------------------------------------------------------------------------- manifests
def test_shipped_manifests() -> None:
    ms = shipped_manifests()
    assert [m.name for m in ms] == ["toolchain_probe", "vector_add", "matmul", "row_softmax"]
    assert ms[0].role == "toolchain-probe"
    kdir = smoke_kernels_dir()
    for m in ms:
        for rel in (m.kernel_source, m.host_source, "CMakeLists.txt", "reference/CMakeLists.txt"):
            assert (kdir / m.name / rel).is_file(), (m.name, rel)
        for case in m.cases:
            assert case.launch_symbol == f"aclrtlaunch_{case.kernel_symbol}"
            assert case.kernel_symbol in (kdir / m.name / m.kernel_source).read_text()
            assert case.launch_symbol in (kdir / m.name / m.host_source).read_text()
    add = ms[1]
    assert {c.inputs[0].dtype for c in add.cases} == {"float16", "float32"}
    assert all(c.tiling["total_length"] % c.tiling["tile_length"] for c in add.cases)  # ragged tail
    assert ms[2].cases[0].outputs[0].dtype == "float32" and ms[2].cases[0].inputs[0].dtype == "float16"


def test_bad_manifest_names_file_and_field(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(smoke_kernels_dir() / "toolchain_probe", tmp_path / "toolchain_probe")
    path = tmp_path / "toolchain_probe/manifest.yaml"
    path.write_text(
        path.read_text().replace("launch_symbol: aclrtlaunch_copy_probe", "launch_symbol: aclrtlaunch_x")
    )
    with pytest.raises(InputError) as info:
        load_manifests(tmp_path)
    assert str(path) in info.value.message and "cases.0" in info.value.message


def test_select_kernels() -> None:
    ms = shipped_manifests()
    assert [m.name for m in select_kernels(ms, ("matmul",))] == ["toolchain_probe", "matmul"]
    with pytest.raises(NotFoundError) as info:
        select_kernels(ms, ("matmull",))
    assert info.value.hint is not None and "'matmul'" in info.value.hint


# ------------------------------------------------------------------------- plan, skip, report
def _report(host: Host, **kw: object) -> K.KernelsReport:
    return K.run_kernels(host, **kw)  # type: ignore[arg-type]


def test_no_toolkit_means_every_kernel_skips(tmp_path: Path) -> None:
    report = _report(Host(root=tmp_path, env={}, allow_commands=False), soc="910B3")
    assert report.status == "skip" and not report.certifies
    assert report.reasons == (NO_TOOLKIT,)
    assert all(k.status == "skip" and k.reasons == (NO_TOOLKIT,) for k in report.kernels)
    assert all(c.status == "skip" for k in report.kernels for c in k.cases)
    assert report.to_stage_result().status == "skip"
    assert "ASCEND_HOME_PATH" in (report.hint or "")


def test_no_soc_skips_with_hint(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path)
    report = _report(Host(root=tmp_path, env={}, allow_commands=False), dry_run=True)
    assert report.plan.skip_reason is not None and report.plan.skip_reason.startswith("SoC unknown")
    assert "--soc" in (report.plan.hint or "")


def test_impossible_mode_says_which_are_possible(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend910B3",))
    report = _report(Host(root=tmp_path, env={}, allow_commands=False), soc="910B3", mode="npu", dry_run=True)
    plan = report.plan
    assert plan.flow == "legacy"
    assert plan.skip_reason is not None and plan.skip_reason.startswith("run mode npu is not possible here")
    assert plan.hint == "possible here: --mode cpu, --mode sim"
    assert {m.mode for m in plan.modes if m.available} == {"cpu", "sim"}


def test_tree_plan_has_commands_but_does_not_run(tmp_path: Path) -> None:
    fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend310P3",))
    host = Host(root=tmp_path, env={}, allow_commands=False)
    env = K.inspect_environment(host, soc="310P3")
    plan = K.plan_kernels(env, shipped_manifests(), mode="sim", work_dir="/w", kernels_dir="/k")
    # A tree on disk is never executed, but the plan shows what would run.
    assert plan.skip_reason is not None and "tree on disk" in plan.skip_reason
    live_env = env.model_copy(update={"live": True})
    plan = K.plan_kernels(live_env, shipped_manifests(), mode="sim", work_dir="/w", kernels_dir="/k")
    by = {k.name: k for k in plan.kernels}
    assert by["vector_add"].skip_reason == "written for a2, a3; Ascend310P3 is family 310p"
    assert by["matmul"].skip_reason is not None
    probe = by["toolchain_probe"]
    assert probe.skip_reason is None and probe.configure is not None
    assert "-DSOC_VERSION=Ascend310P3" in probe.configure.argv and "-DRUN_MODE=sim" in probe.configure.argv
    text = K.render_plan(plan)
    assert "Ascend310P3" in text and "$ cmake -S /k/toolchain_probe" in text


def test_broken_toolchain_blames_no_smoke_kernel(tmp_path: Path) -> None:
    """For real: a FIXTURE toolkit whose CPU-debug package has no cmake config. The toolchain
    probe's configure fails in real cmake; the report says the toolchain is broken."""
    tk = fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend910B3",), prefix="/cann")
    host = Host(root=Path("/"), env={**os.environ, "ASCEND_HOME_PATH": str(tk)})
    report = K.run_kernels(host, soc="910B3", mode="cpu", keep_build=tmp_path / "work")
    assert report.status == "fail" and not report.certifies
    probe, *others = report.kernels
    assert probe.status == "fail"
    assert probe.reasons[0].startswith("the toolchain or environment is broken: the toolchain probe")
    assert probe.configure is not None and probe.configure.status == "failed"
    assert any("tikicpulib" in ln for ln in probe.configure.excerpt)
    assert len(probe.configure.excerpt) <= 21
    for k in others:
        assert k.status == "skip" and k.reasons[0].startswith(
            "not attempted: the toolchain or environment is broken"
        )
    text = K.render_report(report)
    assert "FAIL" in text and "-DRUN_MODE=cpu" in text and "hint: fix the toolkit first" in text


def test_cli_dry_run_and_json(tmp_path: Path) -> None:
    from cannenv.commands.certify import COMMANDS
    from cannenv.commands.certify import kernels_cmd as kernels

    assert kernels not in COMMANDS  # a subcommand of `certify`, not a top-level command
    runner = CliRunner()
    res = runner.invoke(kernels, ["--dry-run", "--soc", "910B3", "--root", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "no CANN toolkit" in res.output and "dry run" in res.output
    res = runner.invoke(kernels, ["--json", "--soc", "Ascend910B", "--root", str(tmp_path)])
    assert res.exit_code == 0, res.output  # the bare command: its return value is not an exit code
    doc = json.loads(res.output)
    assert doc["status"] == "skip" and doc["certifies"] is False and doc["schema_version"] == 1
    assert doc["plan"]["env"]["soc"]["family"] == "910"
    assert [k["status"] for k in doc["kernels"]] == ["skip"] * 4


FIXTURE_ASCENDC_CMAKE = """\
# FIXTURE, not CANN: records the call the real ascendc.cmake would compile, so our CMake logic
# (flow switch, SOC_VERSION check, ascendc_kernel_cmake discovery, targets) configures for real.
if(NOT SOC_VERSION)
    message(FATAL_ERROR "SOC_VERSION not set")
endif()
function(ascendc_library name type)
    add_library(${name} INTERFACE)
    file(WRITE ${CMAKE_BINARY_DIR}/fixture_ascendc_library.txt "${name};${type};${ARGN};${SOC_VERSION}")
endfunction()
"""


def test_legacy_cmake_configures_against_a_fixture_ascendc_cmake(tmp_path: Path) -> None:
    tk = fixture_toolkit(tmp_path, prefix="/cann")
    (tk / "aarch64-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake").write_text(FIXTURE_ASCENDC_CMAKE)
    host = Host(root=Path("/"), env={**os.environ, "ASCEND_HOME_PATH": str(tk)})
    env = K.inspect_environment(host, soc="910B3")
    assert env.toolkit is not None and env.toolkit.available == ("legacy",)
    probe = shipped_manifests()[0]
    ctx = kb.BuildContext(flow="legacy", mode="npu", cann_root=str(tk), target=env.soc)
    build = tmp_path / "build"
    cmd = kb.configure_command(ctx, Path(str(smoke_kernels_dir())), probe, build)  # type: ignore[arg-type]
    from cannenv.host import run

    result = run(cmd.argv, timeout=120)
    assert result.ok, result.stdout + result.stderr
    recorded = (build / "fixture_ascendc_library.txt").read_text()
    assert recorded == "cannenv_toolchain_probe_kernels;SHARED;copy_probe.cpp;Ascend910B3"
    # Without SOC_VERSION the legacy flow refuses to configure, naming the variable.
    bad = run(
        [a for a in cmd.argv if not a.startswith("-DSOC_VERSION")] + ["-B", str(tmp_path / "b2")], timeout=120
    )
    assert not bad.ok and "SOC_VERSION is not set" in bad.stderr


def test_soc_from_saved_facts(tmp_path: Path) -> None:
    from cannenv.facts import DeviceFacts, Facts

    fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend910B4",))
    host = Host(root=tmp_path, env={}, allow_commands=False)
    facts = Facts(devices=DeviceFacts(soc="Ascend910B4"))
    report = K.run_kernels(host, facts=facts, mode="cpu", dry_run=True)
    assert report.plan.env.soc is not None
    assert (report.plan.env.soc.soc, report.plan.env.soc.source) == ("Ascend910B4", "facts")
    # A SoC the table does not know, coming from facts, is a skip reason, not a crash.
    odd = K.run_kernels(host, facts=Facts(devices=DeviceFacts(soc="Ascend999")), dry_run=True)
    assert odd.plan.skip_reason is not None and "Ascend999" in odd.plan.skip_reason
    # The same name typed by the user is bad input (exit 2) with a hint.
    with pytest.raises(InputError):
        K.run_kernels(host, soc="Ascend999", dry_run=True)


def test_missing_numpy_is_a_skip_not_a_crash(tmp_path: Path) -> None:
    """The goldens need numpy (not a core dependency): without it nothing runs, and the plan says why."""
    fixture_toolkit(tmp_path, cpu=True, sim_dirs=("Ascend910B3",))
    env = K.inspect_environment(Host(root=tmp_path, env={}, allow_commands=False), soc="910B3")
    assert env.missing_modules == ()  # numpy is installed here
    env = env.model_copy(update={"live": True, "missing_modules": ("numpy",)})
    plan = K.plan_kernels(env, shipped_manifests(), mode="cpu", work_dir="/w", kernels_dir="/k")
    assert plan.skip_reason is not None and plan.skip_reason.startswith("numpy not installed")
    assert "pip install numpy" in (plan.hint or "")
    assert all(k.skip_reason == plan.skip_reason for k in plan.kernels)
