"""`cannenv explain`: MindCluster FaultDiag's (ascend-fd's) own output (issue 29, round 7).

Two tables of matrices/explain/libtables.yaml read whole from ascend-faultdiag's source by
`cannenv.explain.hwtables`: the fault codes of its knowledge (`kg-config.json`) as its diagnosis
report prints them (`| Status Code | CODE |`, `| 状态码 | CODE |`), and its own error classes
(`utils/status.py`: `FileNotExistError(502): …`). Each form is tested on the printer's wording,
near misses, a version signature beside it and hostile input; the importers on the vendor's files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cannenv import linre
from cannenv.explain import hwtables, signatures
from tests.helpers.explaining import explain

TABLE = signatures.shipped()
K = TABLE.knowledge
assert K is not None
TABLES = {t.id: t for t in K.lib_tables}
FD = ("ascend-fd-faults", "ascend-fd-errors")


def _top(text: str) -> tuple[str | None, str | None]:
    ex = explain(text)
    return (ex.causes[0].id, ex.causes[0].signature) if ex.causes else (None, None)


def _matches(text: str) -> list[str]:
    return [m.id for m in explain(text).matches]


# --- the data: whole tables ---------------------------------------------------------------------
def test_the_fault_knowledge_is_every_code_that_is_not_a_device_event() -> None:
    t = TABLES["ascend-fd-faults"]
    assert len(t.rows) >= 800
    assert not any(re.fullmatch(r"0x[0-9A-Fa-f]{8}", r.key) for r in t.rows)  # those: ascend-fault-events
    optical = t.lookup("Comp_Network_Custom_05")
    assert optical is not None and optical.causes == ("not-a-version-problem",)
    assert "optical module" in optical.name and optical.meaning.startswith("[Network, Network")
    for r in t.rows:
        klass = r.meaning[1 : r.meaning.find(",")]
        link = klass == "Network" and (", Switch" in r.meaning[:40] or r.key in hwtables.FD_LINK_CODES)
        # the class decides (Hardware, the network's links and switches); Software, User, mixed: none
        assert (r.causes == ("not-a-version-problem",)) == (klass == "Hardware" or link), r.key
    # a User-class row that names a version mismatch is not read as the code's
    user = t.lookup("AISW_MindSpore_DP_08")
    assert user is not None and user.causes == ()


def test_ascend_fds_own_errors_are_its_status_classes() -> None:
    t = TABLES["ascend-fd-errors"]
    assert {r.key for r in t.rows} == {
        "BaseError",
        "PathError",
        "FileNotExistError",
        "InfoNotFoundError",
        "InfoIncorrectError",
        "FileOpenError",
        "InnerError",
        "ParamError",
        "FileTooLarge",
    }
    assert {r.key for r in t.rows if r.causes} == set(hwtables.FD_ERROR_CAUSES)


def test_every_row_and_form_cites_a_source_at_a_commit() -> None:
    for tid in FD:
        t = TABLES[tid]
        for sid in {r.source for r in t.rows} | {f.source for f in t.forms}:
            _, url = K.sources[sid]
            assert re.search(r"/blob/[0-9a-f]{40}/", url), (tid, sid, url)


# --- the forms on ascend-fd's own output --------------------------------------------------------
REPORT_ZH = """\
| 疑似根因故障 |   状态码   | Comp_Network_Custom_05                                     |
|              |  故障分类  | 类型:Network 组件:Network 模块:Network                      |
|              |  故障名称  | NPU光模块不在位                                             |
"""
REPORT_EN = """\
| Suspected Root Cause Fault | Status Code | Comp_Switch_L1_18                          |
|                            | Fault Name  | Forwarding chip port down error            |
"""
PARSE_WARN = (
    "Warn: The job ROOT_CLUSTER failed. The error is: [FileNotExistError(502): No plog file that meets "
    "the path specifications is found.].\n"
)


@pytest.mark.parametrize(
    ("text", "sig"),
    [
        (REPORT_ZH, "lib-ascend-fd-faults-comp-network-custom-05"),
        (REPORT_EN, "lib-ascend-fd-faults-comp-switch-l1-18"),
        (PARSE_WARN, "lib-ascend-fd-errors-filenotexisterror"),
        ("Execute cmd [ascend-fd parse] failed. The error is: [PathError(501): Invalid Path.].\n", None),
    ],
)
def test_a_printed_form_is_its_row(text: str, sig: str | None) -> None:
    cause, got = _top(text)
    assert cause == "not-a-version-problem"
    assert got == (sig or "lib-ascend-fd-errors-patherror")


def test_a_software_fault_matches_and_names_no_cause() -> None:
    ex = explain("|              |   状态码   | AISW_CANN_HCCL_001                |\n")
    assert [m.id for m in ex.matches] == ["lib-ascend-fd-faults-aisw-cann-hccl-001"]
    assert not ex.causes


@pytest.mark.parametrize(
    "text",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: 'x'\n",  # Python's own, not ascend-fd's
        "HTTP/1.1 Status Code | 200 OK\n",  # not a fault code of the knowledge
        "| Status Code | Comp_Unknown_Fault_99 |\n",
        "raise FileNotExistError(f'The {worker_name} dir is not exist.')\n",  # the source, no code printed
    ],
)
def test_near_misses_are_not_the_forms(text: str) -> None:
    assert not [m for m in _matches(text) if m.startswith("lib-ascend-fd")]


def test_a_version_signature_beside_a_faultdiag_report_stays_first() -> None:
    text = REPORT_ZH + "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n"
    assert _top(text)[0] == "env-not-sourced"


def _forms() -> list[tuple[str, str, str]]:
    # the loaded forms: an each_row form already made one per row
    return [(tid, f.anchor, f.regex) for tid in FD for f in TABLES[tid].forms]


@pytest.mark.parametrize("form", _forms(), ids=lambda f: f"{f[0]}:{f[1]}")
def test_each_form_is_linear_on_a_line_of_its_anchor(form: tuple[str, str, str]) -> None:
    _, anchor, regex = form
    assert linre.ambiguity(regex, mode="search") is None
    compiled = linre.compile(regex)
    for filler in (anchor * max(1, 500_000 // len(anchor)), "| 状态码 | " * 50_000):
        m = compiled.search(filler)
        assert m is None or anchor in m.group(0)


# --- the importers read the vendor's files ------------------------------------------------------
def test_the_importers_read_the_knowledge_and_the_status_classes(tmp_path: Path) -> None:
    kg = {
        "knowledge-repository": {
            "0x80E01809": {"attribute": {"class": "Hardware", "component": "NPU"}},
            "Comp_Network_Custom_05": {
                "attribute": {
                    "class": "Network",
                    "component": "Network",
                    "module": "Network",
                    "cause_en": "NPU optical module not detected",
                    "description_en": "The NPU optical module cannot be detected.",
                    "suggestion_en": ["1. Contact technical support."],
                }
            },
            "Comp_Network_Custom_07": {"attribute": {"class": "Network", "component": "Network"}},
            "AISW_X_01": {"attribute": {"class": "User", "component": "AI Framework", "cause_en": "x"}},
        }
    }
    (tmp_path / hwtables.KG_CONFIG).parent.mkdir(parents=True)
    (tmp_path / hwtables.KG_CONFIG).write_text(json.dumps(kg))
    rows = {r["key"]: r for r in hwtables.read_fault_diag(tmp_path)}
    assert set(rows) == {"Comp_Network_Custom_05", "Comp_Network_Custom_07", "AISW_X_01"}
    assert rows["Comp_Network_Custom_05"]["causes"] == ["not-a-version-problem"]
    assert "Handling: 1. Contact technical support." in rows["Comp_Network_Custom_05"]["meaning"]
    assert rows["Comp_Network_Custom_07"]["causes"] == [] and rows["AISW_X_01"]["causes"] == []

    status = (
        "class BaseError(Exception):\n    code = 500\n    description = 'Internal Server Error.'\n\n"
        "class FileNotExistError(BaseError):\n    code = 502\n    description = 'File not exist.'\n\n"
        "class SuccessRet:\n    code = 200\n    description = 'Successful operation.'\n"
    )
    (tmp_path / hwtables.FD_STATUS).parent.mkdir(parents=True)
    (tmp_path / hwtables.FD_STATUS).write_text(status)
    errs = {r["key"]: r for r in hwtables.read_fd_errors(tmp_path)}
    assert set(errs) == {"BaseError", "FileNotExistError"}
    assert errs["FileNotExistError"]["name"] == "FileNotExistError(502)"
    assert (
        errs["FileNotExistError"]["causes"] == ["not-a-version-problem"] and errs["BaseError"]["causes"] == []
    )
