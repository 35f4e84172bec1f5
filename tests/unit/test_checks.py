"""Checks on facts from host trees (real formats) and on Facts built directly; shipped matrix."""

from __future__ import annotations

from pathlib import Path

import pytest

from cannenv import checks
from cannenv.checks.stack import choose_target
from cannenv.facts import ContainerFacts, DeviceFacts, Facts, PciDevice
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.probes import collect
from cannenv.report import Finding
from tests.helpers import hosts


def _judge(tree: hosts.HostTree, **kw: str) -> tuple[Facts, list[Finding]]:
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    target = choose_target(f, load(), **kw)
    return f, checks.run(f, target)


def _by(findings: list[Finding], cid: str) -> list[Finding]:
    return [x for x in findings if x.id == cid]


def test_registry_ids_are_unique_kebab_and_documented() -> None:
    ids = [c.id for c in checks.all_checks()]
    assert len(ids) == len(set(ids)) >= 15
    for c in checks.all_checks():
        assert c.title and c.why and c.severity


def test_unknown_check_id_has_a_hint() -> None:
    from cannenv.errors import NotFoundError

    with pytest.raises(NotFoundError) as e:
        checks.select(["driver-can"])
    assert "driver-cann" in (e.value.hint or "")


def test_healthy_new_layout_has_no_failures(tmp_path: Path) -> None:
    _, fs = _judge(hosts.a2_cann85_new(tmp_path))
    assert [x for x in fs if x.status in ("fail", "error")] == []
    assert _by(fs, "driver-cann")[0].status == "pass"


def test_driver_too_old_for_cann(tmp_path: Path) -> None:
    _, fs = _judge(hosts.driver_too_old(tmp_path))
    d = _by(fs, "driver-cann")[0]
    # No vendor statement covers 24.1.rc2.2 for 8.2.RC1 (its HDKs are 25.0.RC1 and 25.2.0; no
    # compatibility table for 8.2.RC1): unknown -> warn with the recommended HDK and what settles it.
    # (Before the vendor-rules rework this was "fail: older than the oldest paired HDK".)
    assert d.status == "warn"
    assert "no vendor statement covers driver 24.1.rc2.2" in d.detail
    assert (
        d.remedy
        and d.remedy.startswith("install the recommended Ascend HDK (25.2.0, 25.0.rc1)")
        and "CANN 8.2.RC1 on Atlas A2" in d.remedy
    )
    assert "release note" in d.detail  # what would settle it


def test_kernels_for_wrong_chip_and_version(tmp_path: Path) -> None:
    _, fs = _judge(hosts.kernels_wrong(tmp_path))
    k = _by(fs, "toolkit-ops")[0]
    assert k.status == "fail" and "310p" in k.detail and "8.2.RC1" in k.detail
    assert k.remedy and "Ascend-cann-kernels-910b_8.3.RC2" in k.remedy


def test_torch_npu_not_matching_cann(tmp_path: Path) -> None:
    _, fs = _judge(hosts.torch_npu_mismatch(tmp_path))
    t = _by(fs, "torch-npu-cann")[0]
    # torch_npu 2.8.0 is TorchNPU 7.2.0 (paired with 8.3.RC1); the vendor's compatibility tables cover
    # 7.2.0 up to CANN 8.3.RC1 and 7.3.X+ with 8.5.X: nothing states 7.2.0 with 8.5.0 -> unknown -> warn
    # (was "fail: built for another CANN" before the vendor-rules rework)
    assert t.status == "warn" and t.remedy == "pip install torch-npu==2.8.0.post2"
    assert "TorchNPU 7.2.0" in t.detail and "no vendor statement covers CANN 8.5.0" in t.detail


def test_env_not_sourced(tmp_path: Path) -> None:
    _, fs = _judge(hosts.env_not_sourced(tmp_path))
    e = _by(fs, "env-sourced")[0]
    assert e.status == "fail" and e.remedy == "source /usr/local/Ascend/ascend-toolkit/set_env.sh"


def test_two_cann_versions_mixed(tmp_path: Path) -> None:
    _, fs = _judge(hosts.two_cann_mixed(tmp_path))
    mixed = _by(fs, "env-mixed")
    assert any(x.status == "fail" and x.subject == "LD_LIBRARY_PATH" and "8.2.RC1" in x.detail for x in mixed)
    assert _by(fs, "cann-installs")[0].status == "warn"


def test_container_without_mounts_gives_exact_flags(tmp_path: Path) -> None:
    _, fs = _judge(hosts.container_no_mounts(tmp_path))
    c = _by(fs, "container-mounts")[0]
    assert c.status == "fail" and c.remedy
    for flag in (
        "--device /dev/davinci0",
        "--device /dev/davinci_manager",
        "--device /dev/devmm_svm",
        "--device /dev/hisi_hdc",
        "-v /usr/local/dcmi:/usr/local/dcmi",
        "-v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi",
        "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info",
    ):
        assert flag in c.remedy


def test_container_with_mounts_passes(tmp_path: Path) -> None:
    _, fs = _judge(hosts.container_ok(tmp_path))
    assert _by(fs, "container-mounts")[0].status == "pass"


def test_bare_machine_says_so_plainly(tmp_path: Path) -> None:
    _, fs = _judge(hosts.bare(tmp_path))
    a = _by(fs, "ascend-software")[0]
    assert a.status == "fail" and "no Ascend software" in a.detail and a.remedy and "driver" in a.remedy
    assert {x.status for x in fs if x.id not in ("ascend-software", "probe-files")} == {"skip"}


def test_an_npu_without_its_driver_is_a_failing_driver_check() -> None:
    """Not "no Ascend software": the NPU is there, and the driver is what it needs first."""
    f = Facts(devices=DeviceFacts(pci=(PciDevice(address="0000:c1:00.0", vendor="0x19e5", device="0xd802"),)))
    d = _by(checks.run(f, checks.Target()), "driver-installed")[0]
    assert d.status == "fail" and "no NPU driver" in d.detail and d.remedy and "npu-driver" in d.remedy


def test_hung_npu_smi_is_a_finding(tmp_path: Path) -> None:
    env = hosts.live_npu_smi(tmp_path / "bin", hosts.NPU_SMI_HUNG)
    f = collect(Host(Path("/"), env, True, 1.0), npu_smi_timeout=0.5, only=("npu",))
    d = _by(checks.run(f, checks.Target()), "npu-devices")[0]
    assert d.status == "fail" and "hung" in d.detail


def test_broken_file_is_an_error_finding_naming_the_path(tmp_path: Path) -> None:
    tree = hosts.a2_cann83_old(tmp_path)
    (tmp_path / "usr/local/Ascend/driver/version.info").write_text("")
    _, fs = _judge(tree)
    p = [x for x in _by(fs, "probe-files") if x.status == "error"]
    assert p and p[0].subject == "/usr/local/Ascend/driver/version.info"


def test_explicit_stack_and_family_mismatch(tmp_path: Path) -> None:
    _, fs = _judge(hosts.a2_cann85_new(tmp_path), stack_id="a3-cann8.5.0-torch2.7.1-py3.11")
    sm = _by(fs, "stack-match")
    assert any(x.subject == "family" and x.status == "fail" for x in sm)
    # refused as a whole: no remedy installs another chip's stack here (issue 22)
    assert not any(x.remedy and "torch==2.7.1" in x.remedy for x in fs)
    assert [x.subject for x in sm if x.status != "skip"] == ["family"]


def test_checks_are_pure_on_built_facts() -> None:
    f = Facts(
        container=ContainerFacts(
            in_container=True, evidence=("/.dockerenv exists",), absent=("/dev/davinci_manager",)
        )
    )
    fs = checks.run(f, checks.Target(), checks.select(["container-mounts"]))
    # no Ascend software at all: the check is skipped with that reason, not failed
    assert fs[0].status == "skip"


def test_a_crashing_check_becomes_an_error_finding() -> None:
    def boom(facts: Facts, target: checks.Target) -> list[Finding]:
        raise RuntimeError("bug")

    c = checks.Check("boom-check", "t", "w", "low", boom)
    out = c.run(Facts(), checks.Target())
    assert out[0].status == "error" and "bug" in out[0].detail


def test_no_devices_turns_every_device_check_into_a_skip_and_keeps_software_judged() -> None:
    """`doctor --no-devices` (image verify, CI runners): device checks skip, never pass or fail."""
    from dataclasses import replace

    root = Path(__file__).resolve().parents[2] / "examples" / "hosts" / "broken-driver-too-old"
    env = dict(line.split("=", 1) for line in (root / "host.env").read_text().splitlines() if "=" in line)
    facts = collect(Host(root / "tree", env, allow_commands=False))
    target = choose_target(facts, load())
    judged = {f.id: f for f in checks.run(facts, target)}
    assert judged["driver-cann"].status == "warn"  # the host's real problem (no statement covers it)
    quiet = checks.run(facts, replace(target, no_devices="image build"))
    device = [f for f in quiet if f.scope == "device"]
    assert {f.id for f in device} >= {"driver-installed", "driver-cann", "firmware-driver", "npu-devices"}
    assert all(f.status == "skip" and "image build" in f.detail for f in device)
    software = {f.id: f.status for f in quiet if f.scope == "software"}
    assert software["toolkit-ops"] == judged["toolkit-ops"].status


def test_installer_remedies_name_the_exact_vendor_file_for_the_host_arch() -> None:
    """Remedies name the era's installer file for the host's arch, not a `<arch>` placeholder."""
    root = Path(__file__).resolve().parents[2] / "examples" / "hosts" / "broken-driver-too-old"
    env = dict(line.split("=", 1) for line in (root / "host.env").read_text().splitlines() if "=" in line)
    facts = collect(Host(root / "tree", env, allow_commands=False))
    findings = checks.run(facts, choose_target(facts, load()))
    nnal = next(f for f in findings if f.id == "nnal-cann")
    arch = facts.os.arch
    assert arch in ("aarch64", "x86_64")
    assert f"Ascend-cann-nnal_8.2.RC1_linux-{arch}.run" in (nnal.remedy or "")
    assert "<arch>" not in (nnal.remedy or "") and "<toolkit>" not in (nnal.remedy or "")


def test_firmware_remedy_names_the_paired_firmware_file_when_the_matrix_knows_it() -> None:
    from cannenv.checks.hdk import _firmware_remedy

    m = load()
    exact = _firmware_remedy(checks.Target(matrix=m), "24.1.rc2", "a2")
    # [ADOCS]: HDK 24.1.RC2 = driver 24.1.rc2 + firmware 7.3.0.1.231 (research §2.1, §3.1)
    assert "Ascend-hdk-910b-npu-firmware_7.3.0.1.231.run --full" in exact and "HDK 24.1.RC2" in exact
    # a hot-fix driver no source pairs with a firmware: no invented version, the generic step
    generic = _firmware_remedy(checks.Target(matrix=m), "24.1.rc2.2", "a2")
    assert "<ver>" in generic and "24.1.rc2.2" in generic


def test_the_library_provider_table_is_valid_data() -> None:
    """cannenv/checks/libraries.json validates as a ProviderTable, and every pattern compiles."""
    import json
    import re
    from importlib import resources

    from cannenv import values
    from cannenv.checks.python import ProviderTable, provider_of, providers

    text = resources.files("cannenv.checks").joinpath("libraries.json").read_text(encoding="utf-8")
    table = values.validate_json(ProviderTable, text)
    assert table.schema_version == 1 and table.sources
    assert table.providers == providers()
    for p in table.providers:
        re.compile(p.match)
        p.step.format(toolkit_set_env="t", nnal_set_env="n", torch="2")
    assert json.loads(text)["providers"][0]["device"] is True
    assert provider_of("libhccl.so") is not None and provider_of("libhccl.so").package.startswith("CANN")
    assert provider_of("libnothing.so") is None
