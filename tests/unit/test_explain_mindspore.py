"""MindSpore's own Ascend-side error messages (mindspore_messages.yaml, cannenv.explain.msascend):
the table, the importer on stream statements, the log-line and raised-exception forms with their
values filled in, the reviewed rules, wrappers that decide nothing, and hostile input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cannenv.explain import judge, msascend, signatures, tables
from cannenv.resources import matrices_dir
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
MM = msascend.MsMessages(K.ms_messages) if K.ms_messages is not None else None
WHOLE = msascend.load(msascend.shipped_path(), keep_all=True)
REPO = Path(__file__).resolve().parents[2]
LOG = (
    "[{level}] DEVICE(170414,fffe397fa1e0,python):2024-09-13-15:29:07.465.388 "
    "[mindspore/ccsrc/{path}:{line}] {func}] {msg}"
)
STACK = (
    "\n----------------------------------------------------\n"
    "- C++ Call Stack: (For framework developers)\n"
    "----------------------------------------------------\n"
)


def _log(path: str, line: int, func: str, msg: str, level: str = "ERROR") -> str:
    return LOG.format(level=level, path=path, line=line, func=func, msg=msg) + "\n"


def _ms(text: str) -> list[judge.Match]:
    return [m for m in _explain(text).matches if m.id.startswith("ms-src-")]


# --- the table ----------------------------------------------------------------------------------
def test_table_schema_is_in_sync() -> None:
    shipped = json.loads((matrices_dir() / "explain" / "mindspore_messages.schema.json").read_text())
    assert shipped == msascend.json_schema(), (
        "regenerate: python -m cannenv.explain.msascend --schema"
        " > matrices/explain/mindspore_messages.schema.json"
    )


def test_the_table_is_whole_and_each_row_has_its_source_url() -> None:
    assert WHOLE.total > 1000
    calls = {m.call for m in WHOLE.messages}
    assert calls == {"MS_LOG_EXCEPTION", "MS_LOG_ERROR", "MS_EXCEPTION"}
    for m in WHOLE.messages:
        assert m.path.startswith(msascend.PREFIXES)
        assert m.url == f"https://github.com/{m.repo}/blob/{m.commit}/{m.path}#L{m.line}"
        assert "#umsg#" not in m.format and "#dmsg#" not in m.format
    # MS_EXCEPTION's type is kept; MS_LOG(EXCEPTION) names none
    assert {m.exception for m in WHOLE.messages if m.call == "MS_EXCEPTION"} >= {
        "ValueError",
        "DeviceProcessError",
    }
    assert {m.exception for m in WHOLE.messages if m.call != "MS_EXCEPTION"} == {""}


def test_every_rule_cause_is_a_cause_of_the_signature_file_and_every_rule_is_used() -> None:
    assert MM is not None
    used = {m.rule for m in MM.messages}
    raw = msascend.load(msascend.shipped_path())
    names = {r[0] for r in raw.data[2]}
    assert used == names
    for m in MM.messages:
        assert m.causes and all(c in TABLE.causes for c in m.causes)
        assert any(w.lower() in m.format.lower() for r in raw.data[2] if r[0] == m.rule for w in r[1])


def test_the_cached_table_holds_plain_tuples_and_a_log_without_a_marker_never_imports_it() -> None:
    assert K.ms_messages is not None
    rows, repos, rules, total, files = K.ms_messages
    assert all(type(r) is tuple for r in (*rows, *repos, *rules)) and type(files) is frozenset
    assert total == WHOLE.total and len(rows) < 64  # only the rows a rule gives causes travel
    code = (
        "import sys\n"
        "from cannenv.explain import judge, signatures\n"
        "from cannenv.explain.scan import Scanner\n"
        "t = signatures.shipped()\n"
        "s = Scanner(t, total_hint=100)\n"
        "s.feed(sys.argv[1].encode())\n"
        "s.end_input()\n"
        "judge.explain(t, s.result())\n"
        "print('cannenv.explain.msascend' in sys.modules)\n"
    )

    def imported(text: str) -> bool:
        p = subprocess.run(
            [sys.executable, "-c", code, text],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=120,
        )
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip() == "True"

    imported("warm the cache of this session (CANNENV_CACHE_DIR)\n")
    assert not imported("RuntimeError: Malloc device memory failed, size[1024]\n")
    assert imported(
        _log("runtime/device/kernel_runtime.cc", 494, "Malloc", "Device memory isn't enough and alloc failed")
    )


# --- the importer --------------------------------------------------------------------------------
SOURCE = """\
// MS_LOG(EXCEPTION) << "a comment is not a message";
void F(int size, int ret) {
  if (ret != 0) {
    MS_LOG(EXCEPTION) << "#umsg#Framework Error Message:#umsg#Alloc the pool failed, size[" << size
                      << "], ret[" << ret << "], 100% used";
  }
  MS_EXCEPTION(ValueError) << "The device id " << Id(size, ret) << " is not valid; check the context";
  MS_LOG(WARNING) << "a warning is not an error message of the table";
  MS_LOG(ERROR) << name;
#define CHECK_IT(x) MS_LOG(EXCEPTION) << "inside a macro body: its callers are imported" << x
}
"""


def test_the_importer_reads_stream_statements(tmp_path: Path) -> None:
    calls = msascend.extract(SOURCE, "mindspore/ccsrc/runtime/device/f.cc")
    assert [(c.line, c.call, c.exception) for c in calls] == [
        (4, "MS_LOG_EXCEPTION", None),
        (7, "MS_EXCEPTION", "ValueError"),
    ]
    assert (
        calls[0].format == "%sFramework Error Message:%sAlloc the pool failed, size[%s], ret[%s], 100%% used"
    )
    assert calls[1].format == "The device id %s is not valid; check the context"


def test_the_importer_cli_prints_the_diff_and_writes_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = tmp_path / "tree"
    src = tree / "mindspore/ccsrc/runtime/device/f.cc"
    src.parent.mkdir(parents=True)
    src.write_text(SOURCE, encoding="utf-8")
    (tree / "mindspore/ccsrc/frontend").mkdir(parents=True)
    (tree / "mindspore/ccsrc/frontend/g.cc").write_text(SOURCE, encoding="utf-8")  # outside PREFIXES
    table = tmp_path / "mindspore_messages.yaml"
    head = msascend.shipped_path().read_text(encoding="utf-8").partition("\nrows:\n")[0]
    table.write_text(head + "\nrows:\n", encoding="utf-8")
    monkeypatch.setattr(msascend, "shipped_path", lambda: table)
    assert msascend.main(["--import", str(tree), "mindspore"]) == 1
    assert capsys.readouterr().out.startswith("# mindspore: 2 rows from")
    assert msascend.main(["--import", str(tree), "mindspore", "--write"]) == 0
    assert msascend.main(["--import", str(tree), "mindspore"]) == 0
    assert "0 lacks, 0 changed, 0 gone" in capsys.readouterr().out
    assert msascend.load(table, keep_all=True).total == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mindspore_messages.yaml", "tree"]


# --- logs as the user reads them -------------------------------------------------------------------
def test_a_log_line_is_found_with_its_values_filled_in() -> None:
    line = _log(
        "plugin/device/ascend/hal/device/ascend_memory_adapter.cc",
        266,
        "MallocStaticDevMem",
        "Malloc device memory failed, size[32212254720], ret[207001], Device 6 Available HBM size:31G "
        "free size:2G may be other processes occupying this card, check as: ps -ef|grep python",
        level="EXCEPTION",
    )
    found = _ms(line)
    assert [m.id for m in found] == ["ms-src-card-occupied-ascend-memory-adapter-266"]
    assert [c.id for c in found[0].causes] == ["oom", "device-busy"]
    assert any("32212254720" in x for e in found[0].evidence for x in e.lines)


def test_a_message_moved_to_another_file_in_an_older_release_is_still_found() -> None:
    # MindSpore 1.x logged this from runtime/device/ascend/ascend_memory_manager.cc
    line = _log(
        "runtime/device/ascend/ascend_memory_manager.cc",
        62,
        "MallocDeviceMemory",
        "Malloc device memory failed, size[32212254720], ret[207001], Device 6 may be other processes "
        "occupying this card, check as: ps -ef|grep python",
        level="EXCEPTION",
    )
    # the file's rows do not hold it: any row's, the newer release's first
    assert [m.id for m in _ms(line)] == ["ms-src-card-occupied-ascend-memory-adapter-309"]


def test_a_raised_exception_is_read_with_the_call_stacks_file() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 10, in <module>\n'
        "RuntimeError: Out of Memory!!! Request memory size: 4294967296B, Memory Statistic:\n"
        "Please try to reduce 'batch_size' or check whether exists extra large shape."
        + STACK
        + "mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_memory_adapter.cc:151 MallocDynamicDevMem\n"
    )
    found = _ms(text)
    assert [m.id for m in found] == ["ms-src-device-memory-ascend-memory-adapter-151"]
    assert _explain(text).causes[0].id == "oom"
    # the same exception line without MindSpore's call stack is not read as MindSpore's
    assert _ms(text.partition(STACK)[0]) == []


def test_the_device_count_rule() -> None:
    text = "DeviceProcessError: Call rtGetDeviceCount, ret[507033]" + STACK
    text += "mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:1175 SetRtDevice\n"
    found = _ms(text)
    assert [m.id for m in found] == ["ms-src-device-count-ascend-kernel-runtime-1175"]
    assert [c.id for c in found[0].causes] == ["device-not-visible"]


def test_the_hccl_environment_rule() -> None:
    line = _log(
        "plugin/device/ascend/hal/hardware/ascend_collective_comm_lib.cc",
        83,
        "InitializeHccl",
        "Invalid environment variable 'RANK_ID', it should not be empty.",
    )
    assert [c.id for m in _ms(line) for c in m.causes] == ["hccl-config"]


def test_a_wrapper_gives_no_cause_by_itself() -> None:
    # the generic wrappers are in the table and point to nothing: the detail decides
    wrappers = [m for m in WHOLE.messages if "Ascend kernel runtime initialization failed" in m.format]
    assert wrappers and not any(m.causes for m in wrappers)
    line = _log(
        "plugin/device/ascend/hal/device/ascend_kernel_runtime.cc",
        401,
        "Init",
        "Ascend kernel runtime initialization failed. The details refer to 'Ascend Error Message'.",
    )
    assert _ms(line) == []
    assert not any(m.id.startswith("ms-src-") for m in _explain(line).matches)


def test_a_wrapper_beside_the_detail_that_decides() -> None:
    # the trap: the wrapper's words ("initialization failed", "Device") next to the memory
    # adapter's own message: the detail's rule decides, the wrapper adds nothing
    text = _log(
        "plugin/device/ascend/hal/device/ascend_kernel_runtime.cc",
        401,
        "Init",
        "Ascend kernel runtime initialization failed. The details refer to 'Ascend Error Message'.",
        level="CRITICAL",
    ) + _log(
        "plugin/device/ascend/hal/device/ascend_memory_adapter.cc",
        62,
        "Initialize",
        "Malloc device memory failed, free memory size is less than half of total memory size.Device 0 "
        "Device HBM total size:65536M Device HBM free size:1024M may be other processes occupying this card",
    )
    found = _ms(text)
    assert [m.id for m in found] == ["ms-src-card-occupied-ascend-memory-adapter-62"]
    assert {c.id for c in _explain(text).causes[:2]} == {"oom", "device-busy"}


def test_a_message_no_rule_covers_is_not_looked_for() -> None:
    assert MM is not None
    line = _log(
        "plugin/device/ascend/hal/device/ascend_stream_manager.cc",
        90,
        "Create",
        "Create stream failed, ret:1",
    )
    assert _ms(line) == []
    assert all(m.causes for m in MM.messages)


@pytest.mark.parametrize(
    "text",
    [
        "[mindspore/ccsrc/" * 20000,
        "mindspore/ccsrc/" + "a/" * 50000 + ".cc:1 F\n",
        _log("x" * 5000 + ".cc", 1, "F" * 300, "Out of Memory!!! " * 2000),
        "RuntimeError: " + "Device memory isn't enough " * 3000 + STACK + "mindspore/ccsrc/a.cc:1 F\n" * 500,
        "[ERROR] DEVICE(1,2,python):t [mindspore/ccsrc/\x00\xff.cc:1] F] rank_id cannot be negative\n",
    ],
)
def test_hostile_input_is_bounded_and_never_raises(text: str) -> None:
    found = _ms(text)
    assert len(found) <= len(MM.messages if MM else ())


def test_the_framework_error_message_section_is_read_under_the_call_stack() -> None:
    # MindSpore 2.x prints a #umsg# message under its own heading, not on the exception line
    text = (
        "RuntimeError: Ascend kernel runtime initialization failed. "
        "The details refer to 'Ascend Error Message'.\n"
        "\n----------------------------------------------------\n"
        "- Framework Error Message:\n"
        "----------------------------------------------------\n"
        "Out of Memory!!! Request memory size: 2147483648B, Memory Statistic:\n"
        + STACK
        + "mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:354 Init\n"
        "mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_memory_adapter.cc:151 MallocDynamicDevMem\n"
    )
    # the stack's files hold it (ascend_memory_adapter.cc): that row, not the newer release's
    # ascend_two_pointer_mem_adapter.cc one worded alike
    assert [m.id for m in _ms(text)] == ["ms-src-device-memory-ascend-memory-adapter-151"]
    # without MindSpore's call stack and section heading the same words are not MindSpore's message
    bare = text.partition(STACK)[0].replace("- Framework Error Message:", "")
    assert _ms(bare) == []


def test_the_device_id_range_rule_under_the_section_heading_without_a_call_stack() -> None:
    text = (
        "RuntimeError: Ascend kernel runtime initialization failed, device id: 9. "
        "The details refer to 'Ascend Error Message'.\n\n"
        "---------------------------------------------------\n"
        "-Framework Error Message: (For framework developers)\n"
        "---------------------------------------------------\n"
        "Call aclrtSetDevice failed, ret[107001]. Got device count[8] and device id[9], "
        "please check if device id is valid.\n"
    )
    found = _ms(text)
    assert [m.id for m in found] == ["ms-src-device-id-range-ascend-hal-manager-67"]
    assert [c.id for c in found[0].causes] == ["device-not-visible", "hccl-config"]
    assert any("device count[8] and device id[9]" in x for e in found[0].evidence for x in e.lines)
    # the same line with no MindSpore heading, stack or log line: not looked for
    assert _ms(text.replace("-Framework Error Message: (For framework developers)", "")) == []


def test_every_row_a_rule_covers_is_readable_by_a_message_extractor() -> None:
    assert MM is not None
    anchors = [e.anchor for e in K.extractors if e.kind == "ms-message"]
    for m in MM.messages:
        assert any(a in m.format for a in anchors), f"{m.file}:{m.line} has no ms-message anchor"
