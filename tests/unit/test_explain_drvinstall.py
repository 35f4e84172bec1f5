"""The NPU driver installer's own error messages (matrices/explain/drv_install.yaml,
cannenv.explain.drvinstall): the importer on the vendor's scripts (two of them vendored whole under
tests/data/drvinstall/, at the commit the table was read at), the refresh diff, the reviewed rules,
and real lines the scripts print, explained."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from cannenv.explain import drvinstall
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain, known

TREE = Path(__file__).parent.parent / "data" / "drvinstall"
ENV_CHECK = "scripts/package/custom/driver/common/scripts/env_check.sh"
RUN_INSTALL = "scripts/package/driver/common/scripts/run_driver_install.sh"
DRV = "[Driver] [2025-03-04 10:11:12] "
RUN = "[root@host ~]# ./Ascend-hdk-910b-npu-driver_24.1.0_linux-aarch64.run --full\n"
USER = "ERR_NO:0x0091;ERR_DES:${username} not exists! Please add ${username}"
GROUP = "ERR_NO:0x0091;ERR_DES:${usergroup} group not exists! Please add ${usergroup} group"


def _files(root: Path = TREE) -> dict[str, str]:
    files, commit = drvinstall.read_source(root)
    assert commit is None
    return files


def test_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "drv_install.schema.json").read_text())
    assert shipped == drvinstall.json_schema(), (
        "regenerate: python -m cannenv.explain.drvinstall --schema > matrices/explain/drv_install.schema.json"
    )


def test_the_vendored_scripts_messages_are_the_shipped_rows_at_the_same_lines() -> None:
    found = drvinstall.import_files(_files())
    shipped = {m.text: m for m in drvinstall.read(drvinstall.shipped_path()).messages}
    assert len(found) > 40
    for f in found:
        assert f.text in shipped, f.text
        assert set(f.at) <= set(shipped[f.text].at), (f.text, f.at)


def test_the_importer_reads_the_scripts_own_lines() -> None:
    found = {f.text: f for f in drvinstall.import_files(_files())}
    # env_check.sh:113: errorUsage 1 "[ERROR]" + USER
    user = found[USER]
    assert f"{ENV_CHECK}:113" in user.at
    assert user.pieces == ("ERR_NO:0x0091;ERR_DES:", " not exists! Please add ", "")
    # run_driver_install.sh:833:
    #   drvColorEcho "[ERROR]\033[31mDrv_dkms_env_check failed, details in : $logFile \033[0m"
    dkms = found["Drv_dkms_env_check failed, details in : $logFile"]
    assert dkms.at == (f"{RUN_INSTALL}:833",)
    # env_check.sh:124 prints at [INFO]: not an error-level message
    assert not any("set username and usergroup" in t for t in found)


def test_the_refresh_diff_is_empty_on_its_own_table_and_names_a_changed_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = drvinstall.read(drvinstall.shipped_path())
    table = tmp_path / "drv_install.yaml"
    table.write_text(drvinstall.dump(model, drvinstall.import_files(_files()), None))
    assert drvinstall.main(["--diff", str(TREE), str(table)]) == 0
    copy = tmp_path / "tree"
    shutil.copytree(TREE, copy)
    script = copy / ENV_CHECK
    text = script.read_text()
    old = "free space only ${freeSpace}, cannot install driver package"
    assert old in text
    script.write_text(text.replace(old, "only ${freeSpace} free, cannot install driver package"))
    capsys.readouterr()
    assert drvinstall.main(["--diff", str(copy), str(table)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert any(x.startswith("+ only ${freeSpace} free") and "[rule: none]" in x for x in out)
    assert any(x.startswith("- free space only ${freeSpace}") and "[rule: disk-space]" in x for x in out)


def test_rules_name_known_causes_and_each_covers_a_message() -> None:
    model = drvinstall.read(drvinstall.shipped_path())
    causes = set(yaml.safe_load((matrices_dir() / "explain" / "signatures.yaml").read_text())["causes"])
    table = drvinstall.build(model)
    for r in model.rules:
        assert set(r.causes) <= causes, r.id
        assert any(m.rule == r.id for m in table.messages), r.id


def test_a_glob_is_matched_whole() -> None:
    parts = drvinstall.pieces(GROUP)
    said = "ERR_NO:0x0091;ERR_DES:HwHiAiUser group not exists! Please add HwHiAiUser group"
    assert drvinstall.fits(parts, said)
    assert not drvinstall.fits(parts, said.replace(" group", ""))
    assert not drvinstall.fits(parts, said + ", and more")


@pytest.mark.parametrize(
    ("line", "sid", "cause"),
    [
        (  # install.sh:438 / env_check.sh:113, as drvEcho prints it on the terminal
            DRV + "[ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser not exists! Please add HwHiAiUser",
            "drv-install-user-group-permission",
            "not-a-version-problem",
        ),
        (  # env_check.sh:117, the group's own message (more literal text than the user's, which it also fits)
            "[ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser group not exists! Please add HwHiAiUser group",
            "drv-install-user-group-permission",
            "not-a-version-problem",
        ),
        (  # install.sh:515, not root
            DRV + "[ERROR]ERR_NO:0x0093;ERR_DES:do not have root permission, operation"
            " failed, please use root permission!",
            "drv-install-user-group-permission",
            "not-a-version-problem",
        ),
        (  # run_driver_install.sh:833 (drvColorEcho: the colour escapes go)
            DRV + "[ERROR]\x1b[31mDrv_dkms_env_check failed, details in :"
            " /var/log/ascend_seclog/ascend_install.log \x1b[0m",
            "drv-install-kernel-modules-not-buildable",
            "third-party-library",
        ),
        (  # run_driver_install.sh:127, the install log's line (the user's id after the date)
            DRV + "[uid=0(root)] [ERROR]driver ko vermagic(5.10.0-60.18.0.50.oe2203.aarch64 SMP mod_unload"
            " modversions aarch64) is different from the os(5.10.0-136.12.0.86.oe2203sp1.aarch64),"
            " need rebuild driver",
            "drv-install-kernel-modules-not-buildable",
            "third-party-library",
        ),
        (  # install.sh:1048
            DRV + "[ERROR]Installation failed, the driver package version=23.0.0 is earlier"
            " than the device flash hardware version=24.1.0.",
            "drv-install-package-older-than-flash",
            "driver-too-old",
        ),
        (  # install.sh:396
            DRV + "[ERROR]free space only 120M, cannot install driver package (greater than"
            " 800M), please make sure enough space under the installation path",
            "drv-install-disk-space",
            "not-a-version-problem",
        ),
        (  # install.sh:386
            DRV + "[ERROR]ERR_NO:0x0094;ERR_DES:There is already a process being executed,"
            "please do not execute multiple tasks at the same time",
            "drv-install-already-installed-or-running",
            "not-a-version-problem",
        ),
    ],
)
def test_a_real_installer_line_is_read_as_its_rule_says(line: str, sid: str, cause: str) -> None:
    ex = explain(RUN + line + "\n")
    ms = known(ex)
    assert ms and ms[0].id == sid, [m.id for m in ms]
    assert ms[0].causes[0].id == cause


def test_a_form_no_rule_covers_is_read_as_nothing() -> None:
    # run_driver_install.sh:936: a step of the installer failed; it names no cause by itself
    ex = explain(
        DRV + "[ERROR]Driver_ko_install failed, details in : /var/log/ascend_seclog/ascend_install.log\n"
    )
    assert not any(m.id.startswith("drv-install-") for m in ex.matches)
