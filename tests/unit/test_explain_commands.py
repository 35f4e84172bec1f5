"""`cannenv explain`: a command the shell or a tool does not find (issue 29, round 8).

knowledge.yaml's ``command`` extractors read the printers' own forms (bash, dash, zsh, GNU which,
Python's subprocess, the driver installer's list of missing tools); matrices/explain/commands.yaml
says who ships the name, imported from complete lists: the CANN package XMLs' files in the folders
CANN's set_env.sh puts on PATH, the driver's package XMLs, the driver installer's check_tools.conf.
Tested on the working set's real lines, on each printer's format, on the vendor's own XML and
script text (the import), and on names no list holds (no reading).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cannenv import linre
from cannenv.errors import InputError
from cannenv.explain import commands, signatures
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain, known

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None and K.commands is not None
CMDS = K.commands
ERRORS = Path(__file__).resolve().parents[1] / "data" / "errors"


def _readings(text: str) -> list[tuple[str, tuple[str, ...]]]:
    ex = explain(text)
    return [(m.id, tuple(c.id for c in m.causes)) for m in ex.matches if m.id.startswith("command-")]


# --- the data ----------------------------------------------------------------------------------
def test_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "commands.schema.json").read_text())
    assert shipped == commands.json_schema(), (
        "regenerate: python -m cannenv.explain.commands --schema > matrices/explain/commands.schema.json"
    )


def test_every_row_is_sourced_and_every_kind_names_known_causes() -> None:
    for row in CMDS.rows.values():
        for sid in (row.source, row.package_source):
            if sid is not None:
                title, url = K.sources[sid]
                assert title and url.startswith("https://"), sid
        if row.kind in ("cann", "driver"):
            assert row.package in {"cann-toolkit", "driver"}, row
    for kind in CMDS.kinds.values():
        assert kind.causes and all(c in TABLE.causes for c in kind.causes), kind
        assert all(s in K.sources for s in kind.sources)
    assert CMDS.kinds["cann"].causes == ("env-not-sourced",)
    assert CMDS.kinds["driver"].causes == ("device-not-visible",)
    assert CMDS.kinds["os"].causes == ("third-party-library",)


def test_every_command_extractor_is_linear_and_sourced() -> None:
    forms = [e for e in K.extractors if e.kind == "command"]
    assert len(forms) == 6
    for e in forms:
        assert e.source is not None and K.sources[e.source][1].startswith("https://")
        assert linre.compile(e.regex, what="regex") is not None
        assert e.anchor in e.regex.replace("\\", "")


def test_a_row_with_an_unknown_source_is_refused() -> None:
    raw = yaml.safe_load((matrices_dir() / "explain" / "commands.yaml").read_text())
    raw["commands"][0]["source"] = "nowhere"
    with pytest.raises(InputError, match="unknown source 'nowhere'"):
        commands.parse(raw, source="commands.yaml")


def test_a_command_listed_twice_is_refused() -> None:
    raw = yaml.safe_load((matrices_dir() / "explain" / "commands.yaml").read_text())
    raw["commands"].append(dict(raw["commands"][0]))
    with pytest.raises(InputError, match="listed twice"):
        commands.parse(raw, source="commands.yaml")


# --- the import: the vendor's own text ----------------------------------------------------------
# hicann/runtime scripts/package/runtime/set_env.sh line 126 at 681ef7610df1
SET_ENV = (
    '    prepend_env "PATH" "$version_dirpath/bin:$version_dirpath/tools/ccec_compiler/bin:'
    "$version_dirpath/tools/profiler/bin:$version_dirpath/tools/ascend_system_advisor/asys:"
    '$version_dirpath/tools/show_kernel_debug_data:$version_dirpath/tools/msobjdump"\n'
    '    prepend_env "LD_LIBRARY_PATH" "$version_dirpath/lib64:$version_dirpath/lib64/plugin/opskernel"\n'
)
# hicann/ge scripts/package/module/ascend/GeCompilerBin.xml at ffdcbc9f7496 (the block ge-compiler.xml names)
GE_COMPILER_BIN = """<?xml version="1.0" encoding="UTF-8"?>
<block name="GeCompilerBin">
    <file_info value="bin" copy_type="delivery" dst_path="bin" install_path="$(TARGET_ENV)/bin"
        install_type="devel" install_mod="550" optional="true">
        <file value="atc.bin" file_type="executable"/>
        <file value="gen_esb" file_type="executable"/>
    </file_info>
    <file_info value="script" copy_type="source" dst_path="bin" install_path="$(TARGET_ENV)/bin"
        install_type="devel" install_mod="550" optional="true">
        <file value="atc"/>
        <file value="pyatc"/>
    </file_info>
</block>"""
GE_COMPILER = """<config name="ge-compiler"><package_info><func_name>ge-compiler</func_name></package_info>
<block_info><block name="GeCompilerBin"/></block_info>
<file_info value="lib" install_path="$(TARGET_ENV)/lib64"><file value="libge_compiler.so"/></file_info>
</config>"""
# hicann/driver scripts/package/custom/driver/ascend910B/driver_atlas.xml at ef377e950a32 (lines 22-26, 43-44)
DRIVER_ATLAS = """<config>
    <file_info value="install_scripts" copy_type="delivery" src_path="lib/tools" dst_path="driver/tools"
        install_path="driver/tools">
        <file value="build.info" install_path="driver"/>
        <file value="version.info" copy_type="source" src_path="scripts/package/custom" install_path=""/>
    </file_info>
    <file_info value="npu_smi" copy_type="delivery" dst_path="driver/tools" install_path="driver/tools">
        <file value="npu-smi" file_type="executable" install_mod="555" install_own="root:root"
            install_type="run;devel" install_path="/usr/local/bin"/>
        <file value="npu-smi" file_type="executable" install_mod="555" install_own="root:root"
            install_type="run;devel" install_path="/usr/local/sbin"/>
    </file_info>
</config>"""
# hicann/driver scripts/package/custom/driver/common/scripts/check_tools.conf at ef377e950a32 (first lines)
CHECK_TOOLS = (
    "which\nupdate-rc.d,chkconfig\ntest\ngroups\nawk\nchattr\nlsattr\nldconfig\nwc\nlspci\nifconfig\n"
)


def test_the_path_folders_are_read_from_set_env() -> None:
    folders = commands.path_folders(SET_ENV)
    assert folders == [
        "bin",
        "tools/ccec_compiler/bin",
        "tools/profiler/bin",
        "tools/ascend_system_advisor/asys",
        "tools/show_kernel_debug_data",
        "tools/msobjdump",
    ]
    raw = yaml.safe_load((matrices_dir() / "explain" / "commands.yaml").read_text())
    assert tuple(raw["path"]) == tuple(folders)


def test_a_package_xml_s_commands_are_the_files_in_a_path_folder() -> None:
    blocks = {"GeCompilerBin": GE_COMPILER_BIN}
    got = commands.package_binaries(GE_COMPILER, blocks, commands.path_folders(SET_ENV))
    assert got == ["atc.bin", "gen_esb", "atc", "pyatc"]  # not libge_compiler.so (lib64 is no PATH folder)
    assert all(CMDS.rows[n].kind == "cann" and CMDS.rows[n].component == "ge-compiler" for n in got)


def test_a_file_s_own_install_path_wins() -> None:
    assert commands.package_binaries(DRIVER_ATLAS, {}, commands.DRIVER_FOLDERS) == ["npu-smi"]
    assert CMDS.rows["npu-smi"].kind == "driver"


def test_the_installer_s_tools_are_the_os_rows() -> None:
    tools = commands.check_tools(CHECK_TOOLS)
    assert tools[:3] == ["which", "update-rc.d", "chkconfig"]
    assert all(CMDS.rows[t].kind == "os" for t in tools)
    assert (CMDS.rows["lspci"].package, CMDS.rows["ifconfig"].package) == ("pciutils", "net-tools")


def test_the_refresh_diff_says_what_the_table_lacks_and_what_is_gone() -> None:
    lacks, gone = commands.diff(CMDS, "xml-ge-compiler", ["atc", "pyatc", "atc.bin", "gen_esb", "atc_new"])
    assert (lacks, gone) == (["atc_new"], [])
    lacks, gone = commands.diff(CMDS, "xml-ge-compiler", ["atc"])
    assert lacks == [] and sorted(gone) == ["atc.bin", "gen_esb", "pyatc"]


# --- the reading --------------------------------------------------------------------------------
def test_the_working_set_s_atc_line_is_the_cann_environment() -> None:
    text = (ERRORS / "csdn-m071340392-132403940-atc-not-found.txt").read_text()
    assert text.startswith("bash: atc: command not found")
    ex = explain(text)
    assert ex.causes[0].id == "env-not-sourced"
    assert ex.causes[0].signature == "command-cann-atc"
    assert "cann-toolkit (ge-compiler)" in ex.causes[0].why
    assert {s.id for s in ex.causes[0].sources} == {"xml-ge-compiler", "cann-set-env"}


def test_the_working_set_s_missing_tools_line_is_the_os_packages() -> None:
    text = (ERRORS / "hia-instg900-0069-missing-lspci.txt").read_text()
    assert _readings(text) == [
        ("command-os-lspci", ("third-party-library",)),
        ("command-os-ifconfig", ("third-party-library",)),
    ]
    ex = explain(text)
    assert ex.causes[0].id == "third-party-library" and "pciutils" in ex.causes[0].why
    assert not ex.residual_only


@pytest.mark.parametrize(
    ("line", "reading"),
    [
        # each printer's own format (its source's format string), the command filled in
        ("bash: msprof: command not found", ("command-cann-msprof", ("env-not-sourced",))),
        ("./run.sh: line 12: atc: command not found", ("command-cann-atc", ("env-not-sourced",))),
        ("sh: 1: msobjdump: not found", ("command-cann-msobjdump", ("env-not-sourced",))),
        ("zsh: command not found: atc", ("command-cann-atc", ("env-not-sourced",))),
        ("which: no hccn_tool in (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin)", None),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: 'msnpureport'",
            ("command-driver-msnpureport", ("device-not-visible",)),
        ),
        ("[ERROR]The list of missing tools: lspci,", ("command-os-lspci", ("third-party-library",))),
        ("[ERROR]The list of missing tools: update-rc.d,chkconfig,", None),
    ],
)
def test_each_printer_s_form_is_read(line: str, reading: tuple[str, tuple[str, ...]] | None) -> None:
    got = _readings(line)
    if reading is not None:
        assert got[0] == reading
    else:
        assert got and all(m[0].startswith("command-") for m in got)
    if line.startswith("which:"):
        assert got == [("command-driver-hccn-tool", ("device-not-visible",))]
    if "update-rc.d" in line:
        assert [m[0] for m in got] == ["command-os-update-rc-d", "command-os-chkconfig"]


@pytest.mark.parametrize(
    "line",
    [
        "bash: foo_tool: command not found",  # a command no list holds: no reading of this table
        "ci/build.sh: line 2: $'\\r': command not found",  # the PyTorch FAQ's CRLF script (working set)
        "sh: 1: source: not found",  # a bash built-in, not a command a package ships
        "FileNotFoundError: [Errno 2] No such file or directory: 'config/atc.json'",  # a path, not a command
        "zsh: no such file or directory: atc",
    ],
)
def test_a_command_no_list_holds_is_no_reading(line: str) -> None:
    assert _readings(line) == []


def test_npu_smi_keeps_its_hand_written_signature() -> None:
    ex = explain("bash: npu-smi: command not found")
    ids = [m.id for m in known(ex)]
    assert ids[0] == "npu-smi-absent" and "command-driver-npu-smi" in ids
    assert ex.causes[0].id == "device-not-visible"


def test_the_crlf_case_keeps_its_reading() -> None:
    text = (ERRORS / "ptdoc-instfaq-build-sh-crlf.txt").read_text()
    assert _readings(text) == []
    assert explain(text).causes[0].id == "not-a-version-problem"
