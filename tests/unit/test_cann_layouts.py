"""CANN 9.x packaging rules and toolkits at any prefix (issue 24 item 2).

Sources (../shared/research/vendor-2026-12.md §1.1): the CANN 9.x installation guide "升级CANN"
(instg_0030: Toolkit/ops window [N-1, N, N+1], lowest 8.5.0, "9.1.0版本的Toolkit兼容8.5.0版本的ops";
an ops-only upgrade keeps the cann-<version> directory: "已安装9.0.0版本的Toolkit和ops后,单独将ops包升级至
9.1.0版本,则安装目录仍为cann-9.0.0"), the pip channel (instg_0104:
<site-packages>/ascend/cann-<ver>/set_env.sh),
the 8.5.0 deprecations (ascend-toolkit/latest/... removed after 2026-12-30), and the real report of a
toolkit under a non-standard prefix selected by `source …/set_env.sh`
(https://github.com/vllm-project/vllm-ascend/issues/1401:
ASCEND_HOME_PATH=/home/<user>/cann81/Ascend/ascend-toolkit/latest).
The trees are fixtures written with the file formats of tests/helpers/hosts.py.
"""

from __future__ import annotations

from pathlib import Path

from cannenv import checks
from cannenv.checks.stack import choose_target
from cannenv.facts import Facts
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.probes import collect
from cannenv.report import Finding
from tests.helpers import hosts
from tests.helpers.hosts import HostTree


def _judge(tree: HostTree, **kw: str) -> tuple[Facts, list[Finding]]:
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    return f, checks.run(f, choose_target(f, load(), **kw))


def _by(findings: list[Finding], cid: str) -> list[Finding]:
    return [x for x in findings if x.id == cid]


def _cann9(tree: HostTree, dirname: str, toolkit: str, ops: str, *, base: str = "/usr/local/Ascend") -> str:
    """A CANN 9.x install: `<base>/cann-<dirname>/` with the toolkit's and the ops package's install
    records (research §4.5 formats), the `cann` link and no `ascend-toolkit/` at all."""
    path = f"{base}/cann-{dirname}"
    arch = tree.arch
    tree.write(
        f"{path}/{arch}-linux/ascend_toolkit_install.info",
        f"package_name=Ascend-cann-toolkit\nversion={toolkit}\narch={arch}\nos=linux\npath={path}/{arch}-linux\n",
    )
    tree.write(f"{path}/opp/version.info", f"Version={toolkit}\nversion_dir={dirname}\n")
    tree.write(
        f"{path}/{arch}-linux/ascend_ops_install.info", f"package_name=Ascend-cann-910b-ops\nversion={ops}\n"
    )
    tree.write(f"{path}/set_env.sh", "# FIXTURE: stands for the toolkit's set_env.sh\n")
    tree.mkdir(f"{path}/lib64")
    tree.link(f"{base}/cann", f"cann-{dirname}")
    return path


def test_ops_only_upgrade_keeps_the_directory_name_and_passes_the_window(tmp_path: Path) -> None:
    """cann-9.0.0/ holding ops 9.1.0: ops is 9.1.0 (the version file), the name is only a hint."""
    tree = HostTree(tmp_path).driver().npu_smi("a2")
    path = _cann9(tree, "9.0.0", "9.0.0", "9.1.0")
    f, fs = _judge(tree)
    inst = f.cann.active_install()
    assert inst is not None and inst.path == path and inst.version == "9.0.0"
    assert [p.cann_version for p in inst.ops] == ["9.1.0"]
    (tk,) = _by(fs, "toolkit-ops")
    assert tk.status == "pass", tk
    assert "9.1.0" in tk.detail and "[N-1, N, N+1]" in tk.detail and "INSTG-UPGRADE-910" in tk.detail
    assert "a hint only" in tk.detail


def test_toolkit_83_with_ops_82_fails_before_the_window(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver().npu_smi("a2")
    tree.toolkit("8.3.RC1", kernels="910b", kernels_version="8.2.RC1", records=True)
    _, fs = _judge(tree)
    (tk,) = _by(fs, "toolkit-ops")
    assert tk.status == "fail" and "8.2.RC1" in tk.detail and "8.3.RC1" in tk.detail


def test_window_lowest_is_850() -> None:
    m = load()
    assert m.companion_verdict("ops", "9.1.0", "8.5.0")[0] is True  # the vendor's own example
    assert m.companion_verdict("ops", "9.1.0", "8.3.RC1")[0] is False  # below 8.5.0
    assert m.companion_verdict("ops", "8.3.RC1", "8.2.RC1")[0] is False  # before 8.5.0: equal only
    assert m.companion_verdict("ops", "10.0.0", "8.5.0")[0] is False  # N-2


def test_toolkit_named_by_ascend_home_path_at_any_prefix(tmp_path: Path) -> None:
    """vllm-ascend#1401: the only CANN is under /home/<user>/cann81/Ascend, selected by set_env.sh."""
    tree = HostTree(tmp_path).driver().npu_smi("a2")
    tree.mkdir("/home/alice")
    install = tree.toolkit("8.1.RC1", base="/home/alice/cann81/Ascend", records=True)
    (tmp_path / "etc/Ascend/ascend_cann_install.info").unlink()  # nothing but the environment names it
    tree.env["ASCEND_HOME_PATH"] = "/home/alice/cann81/Ascend/ascend-toolkit/latest"
    f, fs = _judge(tree)
    inst = f.cann.active_install()
    assert inst is not None and inst.path == install and inst.version == "8.1.RC1"
    assert inst.found_via == "ASCEND_HOME_PATH=/home/alice/cann81/Ascend/ascend-toolkit/latest"
    assert "ASCEND_HOME_PATH" in (f.cann.active_reason or "")
    assert _by(fs, "cann-installs")[0].status != "fail"
    assert _by(fs, "toolkit-ops")[0].status == "pass"
    assert _by(fs, "driver-cann")[0].status in ("pass", "warn", "fail")  # judged, not skipped


def test_without_the_variable_that_prefix_is_not_searched(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver()
    tree.toolkit("8.1.RC1", base="/home/alice/cann81/Ascend")
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.cann.installs == ()


def test_ascend_opp_path_names_a_cann_9_install(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver()
    path = _cann9(tree, "9.1.0", "9.1.0", "9.1.0", base="/opt/vendor/Ascend")
    tree.env["ASCEND_OPP_PATH"] = f"{path}/opp"
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert [i.path for i in f.cann.installs] == [path]
    assert f.cann.installs[0].found_via == f"ASCEND_OPP_PATH={path}/opp"


def test_pip_layout_site_packages_ascend_cann(tmp_path: Path) -> None:
    """pip install ascend-cann-toolkit==9.1.0 -> <site-packages>/ascend/cann-9.1.0/ (instg_0104)."""
    tree = HostTree(tmp_path).driver()
    sp = "/usr/local/lib/python3.11/site-packages/ascend"
    path = _cann9(tree, "9.1.0", "9.1.0", "9.1.0", base=sp)
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert [i.path for i in f.cann.installs] == [path]
    assert f.cann.installs[0].found_via == f"pip layout {sp}/cann-<version>"


def test_env_paths_stay_inside_the_root(tmp_path: Path) -> None:
    """A hostile variable (`..` walking out, NUL, relative) finds nothing outside the tree."""
    outside = tmp_path / "outside"
    tree = HostTree(tmp_path / "root").driver()
    HostTree(outside).toolkit("8.1.RC1", base="/x/Ascend")
    tree.env["ASCEND_HOME_PATH"] = "/../../outside/x/Ascend/ascend-toolkit/latest"
    tree.env["ASCEND_TOOLKIT_HOME"] = "relative/Ascend/ascend-toolkit"
    f = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert f.cann.installs == ()


def test_only_the_cann_layout_no_ascend_toolkit(tmp_path: Path) -> None:
    """After 2026-12-30 the ascend-toolkit/latest paths go (CANN 8.5.0 deprecations): a tree with only
    cann-<ver>/ and the cann link is found, judged, and its env export names no ascend-toolkit path."""
    tree = HostTree(tmp_path).driver().npu_smi("a2")
    path = _cann9(tree, "9.1.0", "9.1.0", "9.1.0")
    assert not (tmp_path / "usr/local/Ascend/ascend-toolkit").exists()
    f, fs = _judge(tree)
    inst = f.cann.active_install()
    assert inst is not None and inst.path == path
    assert _by(fs, "toolkit-ops")[0].status == "pass"
    assert not [x for x in _by(fs, "cann-installs") if x.status == "fail"]
    from cannenv.envscript import toolkit_steps

    steps = toolkit_steps(inst, latest_exists=False, arch=tree.arch)
    assert steps and not any("ascend-toolkit" in v for st in steps for v in st.values)


def test_a2_cann85_fixture_still_reads_the_toolkit_from_its_version_file(tmp_path: Path) -> None:
    f = collect(Host(hosts.a2_cann85_new(tmp_path).root, {"HOME": "/root"}, True, 5.0))
    inst = f.cann.active_install()
    assert inst is not None and inst.version_source == "ascend_toolkit_install.info"


def test_stack_rules_follow_the_window() -> None:
    """`matrix lint` (and so image and plan inputs) judge a stack's ops by the same window."""
    import dataclasses

    m = load()
    base = m.stack("a2-cann9.1.0-torch2.12.0-py3.11")

    def with_ops(version: str) -> list[str]:
        ops = dataclasses.replace(base.components["ops"], version=version, artifacts={})
        s = dataclasses.replace(base, components={**base.components, "ops": ops})
        return [p for p in m.stack_problems(s) if p.startswith("ops ")]

    assert with_ops("8.5.0") == []  # the vendor's example: 9.1.0 Toolkit with 8.5.0 ops
    (problem,) = with_ops("8.3.RC1")
    assert "INSTG-UPGRADE-910" in problem and "lowest 8.5.0" in problem


def test_950_host_is_judged_for_its_product(tmp_path: Path) -> None:
    """An Atlas 350 (PCI 19e5:d806, subsystem 19e5:4003) on driver 25.7.rc1 with CANN 9.1.0: the
    MindCluster 26.1.0 pairing decides, naming the product and how it was told."""
    tree = HostTree(tmp_path).driver(hosts.driver_like_25_3("25.7.rc1"))
    base = "/sys/bus/pci/devices/0000:01:00.0"
    for name, value in (("vendor", "0x19e5"), ("device", "0xd806"), ("subsystem_vendor", "0x19e5")):
        tree.write(f"{base}/{name}", value + "\n")
    tree.write(f"{base}/subsystem_device", "0x4003\n")
    _cann9(tree, "9.1.0", "9.1.0", "9.1.0")
    f, fs = _judge(tree)
    assert f.devices.family == "950" and f.devices.product == "atlas-350"
    (d,) = _by(fs, "driver-cann")
    assert d.status == "pass" and "Atlas 350" in d.detail and "25.7.RC1" in d.detail, d


def test_950_host_without_a_product_says_so_and_names_the_candidates(tmp_path: Path) -> None:
    tree = HostTree(tmp_path).driver(hosts.driver_like_25_3("25.7.rc1"))
    tree.write("/sys/bus/pci/devices/0000:01:00.0/vendor", "0x19e5\n")
    tree.write("/sys/bus/pci/devices/0000:01:00.0/device", "0xd806\n")
    _cann9(tree, "9.1.0", "9.1.0", "9.1.0")
    f, fs = _judge(tree)
    assert f.devices.product is None
    (d,) = _by(fs, "driver-cann")
    assert d.status == "warn" and "product unknown within the family" in d.detail
    assert "Atlas 350" in d.detail and "Atlas 950 SuperPoD" in d.detail
