"""The facts reader's fast paths (issue 31 point 9) refuse exactly what the full walk refuses, and a
memo'd read is the same facts as a fresh one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cannenv.errors import InputError
from cannenv.facts import Facts
from cannenv.host import Host
from cannenv.probes import collect
from tests.helpers import hosts


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tree = hosts.a2_cann85_new(tmp_path_factory.mktemp("t"))
    return json.loads(collect(Host(tree.root, dict(tree.env), True, 5.0)).to_json())


@pytest.mark.parametrize(
    "value",
    ["{{ lookup('pipe', 'id') }}", "\\u007b\\u007b x }}", "{\\u0025 if %}", "\\u007b# c #}", "a{#b"],
)
def test_a_template_marker_is_refused_however_it_is_spelled(doc: dict[str, object], value: str) -> None:
    text = json.dumps(doc).replace('"hostname": null', f'"hostname": "{value}"')
    assert value in text
    with pytest.raises(InputError, match="field hostname: holds a template marker"):
        Facts.from_json(text)
    with pytest.raises(InputError, match="template marker"):
        Facts.from_json(text, memo={})


@pytest.mark.parametrize("value", ["\\ud800", "x\\udfffy"])
def test_a_lone_surrogate_is_refused_escaped_or_not(doc: dict[str, object], value: str) -> None:
    text = json.dumps(doc).replace('"hostname": null', f'"hostname": "{value}"')
    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        Facts.from_json(text)
    raw = json.dumps(doc).replace('"hostname": null', '"hostname": "a\ud800b"')  # the character itself
    with pytest.raises(InputError, match="lone UTF-16 surrogate"):
        Facts.from_json(raw)


def test_a_memo_read_is_the_fresh_read_with_its_own_name(doc: dict[str, object]) -> None:
    memo: dict[str, Facts] = {}
    for name in ("n1", "n2", "n3"):
        one = dict(doc, hostname=name, collected_at=f"2026-12-01T00:00:0{name[-1]}Z")
        text = json.dumps(one)
        got = Facts.from_json(text, memo=memo)
        assert got == Facts.from_json(text)
        assert got.hostname == name
    assert len(memo) == 1
    other = dict(doc, hostname="n4", root="/elsewhere")
    assert Facts.from_json(json.dumps(other), memo=memo).root == "/elsewhere"
    assert len(memo) == 2


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_memo_never_changes_a_verdict(a: str, b: str) -> None:
    base = {"schema_version": 1, "env": {"vars": {"ASCEND_HOME_PATH": a}}, "hostname": b}
    text = json.dumps(base)
    try:
        fresh: Facts | Exception = Facts.from_json(text)
    except InputError as exc:
        fresh = exc
    memo: dict[str, Facts] = {}
    for _ in range(2):
        try:
            got: Facts | Exception = Facts.from_json(text, memo=memo)
        except InputError as exc:
            got = exc
        assert type(got) is type(fresh)
        if isinstance(fresh, Facts):
            assert got == fresh


def test_fleet_report_output_is_unchanged_by_the_memo(tmp_path: Path, doc: dict[str, object]) -> None:
    from cannenv.fleet.report import judge_with_checks, report_collection

    d = tmp_path / "c"
    d.mkdir()
    for i in range(4):
        (d / f"n{i}.json").write_text(json.dumps(dict(doc, hostname=f"n{i}")))
    (d / "odd.json").write_text(json.dumps(dict(doc, hostname="odd", driver=None)))
    report = report_collection(d, judge_with_checks())
    by = {n.name: n for n in report.nodes}
    assert by["n0"].status == by["n3"].status == "compliant"
    assert by["odd"].status == "failing" and by["odd"].versions["driver"] is None
