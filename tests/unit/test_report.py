"""Report model, exit codes and renderers (table, JSON + schema, JUnit)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema  # type: ignore[import-untyped]

from cannenv import values
from cannenv.report import Finding, Report, StackChoice, render_junit, render_table, report_json_schema


def _report() -> Report:
    return Report.build(
        [
            Finding(
                id="driver-cann",
                status="fail",
                severity="critical",
                title="driver new enough",
                detail="driver 24.1.rc2.2 is outside >=25.0.rc1",
                remedy="install Ascend HDK ≥ 25.0.RC1.1 for CANN 8.2.RC1 on Atlas A2",
            ),
            Finding(
                id="cann-installs", status="warn", severity="medium", title="one CANN", detail="2 installs"
            ),
            Finding(id="npu-devices", status="skip", severity="critical", title="NPUs", detail="no NPU"),
            Finding(
                id="probe-files",
                status="error",
                severity="high",
                title="files",
                detail="x is empty",
                subject="/x",
            ),
            Finding(id="os-user", status="pass", severity="low", title="user"),
        ],
        host={"hostname": "h", "cann": "8.2.RC1"},
        stack=StackChoice(id="a2-x", how="best-match", reason="best match"),
    )


def test_summary_and_exit_codes() -> None:
    r = _report()
    assert r.summary == {"pass": 1, "warn": 1, "fail": 1, "skip": 1, "error": 1, "total": 5}
    assert r.exit_code() == 1
    only_warn = Report.build([f for f in r.findings if f.status in ("warn", "pass")])
    assert only_warn.exit_code() == 0 and only_warn.exit_code(strict=True) == 1


def test_json_round_trip_and_schema() -> None:
    r = _report()
    doc = json.loads(r.to_json())
    jsonschema.validate(doc, report_json_schema())
    assert doc["schema_version"] == 1
    assert set(doc) >= {"schema_version", "host", "stack", "findings", "summary"}
    assert set(doc["findings"][0]) >= {"id", "status", "severity", "title", "detail", "remedy"}
    assert values.validate(Report, doc) == r


def test_table_has_no_colour_codes_when_off() -> None:
    text = render_table(_report(), color=False)
    assert "\x1b[" not in text and "driver-cann" in text and "os-user" not in text
    assert "os-user" in render_table(_report(), verbose=True)
    assert "\x1b[" in render_table(_report(), color=True)


def test_junit() -> None:
    root = ET.fromstring(render_junit(_report()))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        "5",
        "1",
        "1",
        "1",
    )
    strict = ET.fromstring(render_junit(_report(), strict=True)).find("testsuite")
    assert strict is not None and strict.get("failures") == "2"


def test_prometheus_textfile_escapes_and_takes_the_worst_status() -> None:
    from cannenv.prometheus import render_node
    from cannenv.report import Finding, Report, StackChoice

    findings = [
        Finding(id="stack-match", status="warn", severity="medium", title="t", subject="torch"),
        Finding(id="stack-match", status="fail", severity="medium", title="t", subject="cann"),
        Finding(id="npu-devices", status="skip", severity="critical", title="t"),
    ]
    report = Report.build(
        findings, host={"cann": '8.2"RC1\\\n', "driver": None}, stack=StackChoice(id="a2-x", how="option")
    )
    text = render_node(report, timestamp=1700000000.7)
    assert 'cannenv_check_status{check="stack-match",severity="medium"} 2\n' in text
    assert 'cannenv_check_status{check="npu-devices",severity="critical"} -1\n' in text
    assert (
        'cannenv_stack_info{stack="a2-x",cann="8.2\\"RC1\\\\\\n",driver="none",torch_npu="none"} 1\n' in text
    )
    assert "cannenv_last_run_timestamp_seconds 1700000000\n" in text
    assert 'cannenv_findings{status="fail"} 1\n' in text
