"""Value classes: our JSON walk (values.dump / to_json) and pydantic's validation agree.

The doctor writes facts and reports with :func:`cannenv.values.to_json` (no pydantic); they are read
back with pydantic (:func:`cannenv.values.validate_json`). Any facts or report that hypothesis can
build must survive that round trip unchanged, and the JSON must satisfy the generated JSON Schema.
"""

from __future__ import annotations

import dataclasses
import json
import typing

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cannenv import facts as facts_module
from cannenv import values
from cannenv.errors import MissingToolError
from cannenv.facts import SCHEMA_VERSION, Facts
from cannenv.matrix import Stack
from cannenv.report import CHECK_ID, Finding, Report, StackChoice
from cannenv.sanitize import TEMPLATE_MARKERS

# Text that JSON carries faithfully (no lone surrogates), including non-ASCII; without a template
# marker ({{, {%, {#), which facts refuse on reading (tests/unit/test_hostile_provision.py).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12).filter(
    lambda s: not any(m in s for m in TEMPLATE_MARKERS)
)
CHECK_IDS = st.from_regex(CHECK_ID, fullmatch=True)

st.register_type_strategy(str, TEXT)
st.register_type_strategy(float, st.floats(allow_nan=False, allow_infinity=False))


def _every_field(cls: type, **fixed: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    """``st.builds`` fills only required fields; fill every one, recursively through from_type."""
    hints = typing.get_type_hints(cls)
    given_ = {f.name: st.from_type(hints[f.name]) for f in dataclasses.fields(cls)}
    return st.builds(cls, **{**given_, **fixed})


def _register(cls: type, **fixed: st.SearchStrategy[object]) -> None:
    st.register_type_strategy(cls, st.deferred(lambda: _every_field(cls, **fixed)))


for _cls in vars(facts_module).values():
    if isinstance(_cls, type) and dataclasses.is_dataclass(_cls) and _cls.__module__ == facts_module.__name__:
        _register(_cls)
# A saved file states the schema it follows; other numbers are refused on reading (test_records.py).
_register(Facts, schema_version=st.just(SCHEMA_VERSION))
FINDINGS = st.builds(Finding, id=CHECK_IDS, title=TEXT, detail=TEXT, remedy=st.none() | TEXT)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.from_type(Facts))
def test_any_facts_survive_to_json_and_back(facts: Facts) -> None:
    # facts as cannenv writes them: the redaction policy applied (loading applies it again, so a
    # generated variable named like a secret, e.g. "public key", would be redacted on the way back)
    facts = facts.redacted()
    text = facts.to_json()
    assert Facts.from_json(text) == facts
    assert values.validate_json(Facts, facts.to_json(indent=None)) == facts
    jsonschema.validate(json.loads(text), values.json_schema(Facts))


def test_facts_with_a_secret_named_variable_are_redacted_on_load() -> None:
    """The case hypothesis found: a variable named like a secret ("public key") is redacted when
    facts are loaded, whoever wrote them; facts cannenv wrote (redacted) come back equal."""
    raw = Facts(env=facts_module.EnvFacts(vars={"public key": "ssh-ed25519 AAAA", "PATH": "/usr/bin"}))
    back = Facts.from_json(raw.to_json())
    assert back.env.vars == {"public key": "<redacted>", "PATH": "/usr/bin"}
    assert back.env.redacted == ("public key",)
    assert Facts.from_json(raw.redacted().to_json()) == raw.redacted() == back


@settings(max_examples=60, deadline=None)
@given(st.lists(FINDINGS, max_size=5), _every_field(StackChoice))
def test_any_report_survives_to_json_and_back(findings: list[Finding], stack: StackChoice) -> None:
    report = Report.build(findings, stack=stack, host={"cann": "8.5.0", "npus": 8})
    back = values.validate_json(Report, report.to_json())
    assert back == report
    assert back.summary["total"] == len(findings)
    jsonschema.validate(json.loads(report.to_json()), values.json_schema(Report))


def test_a_value_is_frozen_and_checks_its_invariants() -> None:
    f = Finding(id="driver-cann", status="pass", severity="high", title="t")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.status = "fail"  # type: ignore[misc]
    with pytest.raises(ValueError, match="finding id 'Driver CANN' does not match"):
        Finding(id="Driver CANN", status="pass", severity="high", title="t")


def test_boundary_errors_name_the_field() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        values.validate(
            Report, {"findings": [{"id": "x", "status": "maybe", "severity": "high", "title": "t"}]}
        )
    (err,) = info.value.errors()
    assert err["loc"] == ("findings", 0, "status")
    with pytest.raises(pydantic.ValidationError) as info:
        values.validate(StackChoice, {"id": "s", "colour": "red"})
    assert info.value.errors()[0]["loc"] == ("colour",)


def test_matrix_version_fields_are_checked_only_at_the_boundary() -> None:
    with pytest.raises(pydantic.ValidationError) as info:
        values.validate(Stack, {"id": "s", "cann": "8.5", "sources": []})
    assert any(e["loc"][0] == "cann" for e in info.value.errors())


def test_without_pydantic_validation_is_a_missing_tool_not_a_traceback() -> None:
    """What the fleet bundle (pure Python, no pydantic) would meet if it validated anything."""
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['pydantic'] = None\n"
        "from cannenv import values\nfrom cannenv.facts import Facts\n"
        "try:\n    values.validate(Facts, {})\n"
        "except Exception as e:\n    print(type(e).__name__, e.exit_code, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.startswith(f"MissingToolError {MissingToolError.exit_code} validating Facts data needs")
