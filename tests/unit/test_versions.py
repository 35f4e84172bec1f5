"""Version grammars: every string from the research notes, ordering, ranges, and properties."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from cannenv.errors import VersionError
from cannenv.versions import (
    CannVersion,
    DriverVersion,
    FirmwareVersion,
    VersionRange,
    parse_pep440,
    parse_version,
)

# Every CANN version string that appears in shared/research/versions.md (§1, §2, §3, §4, §6).
CANN_STRINGS = """
5.0.2 5.0.3 5.0.4 5.1.RC1 5.1.RC2 6.0.RC1 6.0.1 6.3.RC1 6.3.RC2 6.3.RC3 6.3.RC3.1 7.0.RC1 7.0.0 7.0.1
7.0.0.beta1 7.0.1.beta1 7.0.T10 8.0.RC1 8.0.RC2 8.0.RC3 8.0.0 8.0.RC3.beta1 8.0.RC2.alpha002 8.0.RC2.beta1
8.0.0.beta1 8.0.rc1.beta1 8.0.rc3.beta1 8.0.T6 8.0.T63 8.1.T6 8.1.RC1 8.1.RC1.alpha001 8.1.RC1.alpha002
8.2.RC1 8.2.RC1.alpha003 8.2.RC2 8.3.RC1 8.3.RC1.alpha001 8.3.RC1.alpha003 8.3.RC2 8.3.rc1 8.3.rc2
8.5.0 8.5.1 8.5.2 8.5.0-beta.1 8.5.0.alpha001 8.5.0.alpha002 8.5.0-alpha.1 8.5.0-rc.1 9.0.0 9.0.1
9.0.0-beta.1 9.0.0-beta.2 9.0.T2 9.0.T511 9.1.T1 9.1.T6 9.1.0 9.1.0-beta.1 9.1.0-beta.3 9.2.0-beta.2
""".split()

DRIVER_STRINGS = """
23.0.rc1 23.0.rc2 23.0.rc3 23.0.1 23.0.3 23.0.5 23.0.7 24.1.rc1 24.1.rc2 24.1.rc2.2 24.1.rc3 24.1.rc3.3
24.1.rc3.7 24.1.0 24.1.0.1 25.0.rc1 25.0.rc1.1 25.1.rc2 25.2.0 25.2.1 25.3.rc1 25.3.rc1.b020 25.3.0 25.5.0
25.5.1 25.5.2 26.0.rc1 26.1.0.b083 24.1.rc2.b010 6.0.rc1.2 23.0.rc2.3 24.1.RC2 25.0.RC1.1 26.0.RC1
""".split()

FIRMWARE_STRINGS = """
6.3.0.1.241 6.4.0.4.220 6.4.12.1.241 7.0.0.5.242 7.1.0.4.220 7.1.0.5.220 7.1.0.6.220 7.1.0.7.220
7.1.0.11.220 7.3.0.1.231 7.5.0.1.129 7.7.0.1.231 7.8.0.6.201 9.0.0.105.229 6.0.rc1.2 7.0.0 7.5.99 8.9.9
""".split()

# torch_npu versions from §1.1/§1.2 and PyPI notes (PEP 440).
TORCH_NPU_STRINGS = """
2.12.0 2.11.0 2.10.0.post4 2.9.0.post6 2.7.1.post8 2.9.0.post2 2.8.0.post4 2.7.1.post4 2.9.0 2.8.0.post2
2.7.1.post2 2.6.0.post5 2.8.0 2.7.1 2.6.0.post3 2.1.0.post17 2.6.0 2.5.1.post1 2.1.0.post13 2.5.1
2.4.0.post4 2.3.1.post6 2.1.0.post12 2.4.0.post2 2.3.1.post4 2.1.0.post10 2.4.0 2.3.1.post2 2.1.0.post8
2.3.1 2.2.0.post2 2.1.0.post6 1.11.0.post14 2.2.0 2.1.0.post4 1.11.0.post11 2.1.0 2.0.1.post1
1.11.0.post8 2.1.0.rc1 2.0.1 1.11.0.post4 1.11.0.post3 1.11.0.post2 2.0.1.rc1 1.11.0.post1 1.8.1.post2
1.11.0 1.8.1.post1 1.5.0.post8 1.8.1 1.11.0.rc2 1.5.0.post7 1.8.1.rc3 1.11.0.rc1 1.5.0.post6 1.8.1.rc2
1.5.0.post5 1.8.1.rc1 1.5.0.post4 1.5.0.post3 1.5.0.post2 2.10.0rc2 2.9.0.post1+git4c901a4
2.7.1.dev20250724 2.5.1.post1.dev20250619 2.13.0 2.14.0
""".split()


@pytest.mark.parametrize("text", CANN_STRINGS)
def test_every_cann_string_in_the_notes_parses_and_round_trips(text: str) -> None:
    v = CannVersion.parse(text)
    again = CannVersion.parse(str(v))
    assert again == v
    assert str(again) == str(v)
    assert v.tag == str(v).lower()


@pytest.mark.parametrize("text", DRIVER_STRINGS)
def test_every_driver_string_in_the_notes_parses_and_round_trips(text: str) -> None:
    v = DriverVersion.parse(text)
    assert DriverVersion.parse(str(v)) == v
    assert str(v) == str(v).lower().replace(".t", ".T")


@pytest.mark.parametrize("text", FIRMWARE_STRINGS)
def test_every_firmware_string_in_the_notes_parses(text: str) -> None:
    v = FirmwareVersion.parse(text)
    assert FirmwareVersion.parse(str(v)) == v


@pytest.mark.parametrize("text", TORCH_NPU_STRINGS)
def test_torch_npu_versions_are_pep440(text: str) -> None:
    assert str(parse_pep440(text))


def _strictly_increasing(parse: type[CannVersion] | type[DriverVersion], texts: str) -> None:
    vs = [parse.parse(t) for t in texts.split()]
    for a, b in itertools.pairwise(vs):
        assert a < b, f"{a} should sort before {b}"
        assert not b < a


def test_cann_order_from_the_issue() -> None:
    _strictly_increasing(
        CannVersion,
        "8.0.T6 8.0.RC1.alpha001 8.0.RC1.beta1 8.0.RC1 8.0.RC2 8.0.RC3.beta1 8.0.RC3 8.0.0.alpha001 8.0.0 "
        "8.1.RC1.alpha001 8.1.RC1 8.2.RC1 8.3.RC1.alpha001 8.3.RC1 8.3.RC2 8.5.0-alpha.1 8.5.0-beta.1 "
        "8.5.0-rc.1 8.5.0 8.5.1 9.0.0-beta.1 9.0.0-beta.2 9.0.0 9.0.1 9.1.0-beta.1 9.1.0-beta.3 9.1.0",
    )


def test_cann_hotfix_sorts_after_its_release() -> None:
    _strictly_increasing(CannVersion, "6.3.RC2 6.3.RC3 6.3.RC3.1 7.0.RC1")


def test_cann_old_alpha_form_equals_new_form_and_is_case_insensitive() -> None:
    assert CannVersion.parse("8.5.0.alpha001") == CannVersion.parse("8.5.0-alpha.1")
    assert CannVersion.parse("8.3.rc1") == CannVersion.parse("8.3.RC1")
    assert str(CannVersion.parse("8.3.rc1")) == "8.3.RC1"
    assert str(CannVersion.parse("9.0.0-BETA.1")) == "9.0.0-beta.1"
    assert len({CannVersion.parse("8.5.0.alpha001"), CannVersion.parse("8.5.0-alpha.1")}) == 1


def test_cann_attributes() -> None:
    v = CannVersion.parse("8.1.RC1.alpha001")
    assert (v.major, v.minor, v.series, v.scheme) == (8, 1, "8.1", "v1")
    assert v.is_prerelease and str(v.release) == "8.1.RC1"
    assert not CannVersion.parse("8.0.RC2").is_prerelease
    assert CannVersion.parse("8.0.T6").is_prerelease
    assert CannVersion.parse("9.0.0-beta.1").scheme == "v2"
    assert CannVersion.parse("8.5.0").scheme == "v2"


def test_driver_order_from_the_issue() -> None:
    _strictly_increasing(
        DriverVersion,
        "23.0.rc3 23.0.3 24.1.rc1 24.1.rc2 24.1.rc2.2 24.1.rc3 24.1.0 24.1.0.1 25.0.rc1.1 25.2.0 25.3.rc1 "
        "25.3.rc1.b020 25.3.rc1.1 25.5.1 26.0.rc1 26.1.0 26.1.0.b083",
    )


def test_driver_hdk_spelling() -> None:
    assert DriverVersion.parse("24.1.rc2").hdk == "24.1.RC2"
    assert DriverVersion.parse("Ascend HDK 24.1.RC2".split()[-1]) == DriverVersion.parse("24.1.rc2")
    assert DriverVersion.parse("25.0.rc1.1").hdk == "25.0.RC1.1"


def test_firmware_order() -> None:
    texts = "6.0.rc1.2 6.3.0.1.241 7.1.0.5.220 7.1.0.11.220 7.3.0.1.231"
    fw = [FirmwareVersion.parse(t) for t in texts.split()]
    assert fw == sorted(fw)


@pytest.mark.parametrize(
    ("family", "text"),
    [
        ("cann", "8.0.RC3.foo"),
        ("cann", "8"),
        ("cann", ""),
        ("cann", "8.0.RC"),
        ("driver", "24.1"),
        ("driver", "24.1.rc2.b"),
        ("firmware", "7"),
        ("pep440", "1.11.0.rc2（beta)"),
        ("pep440", "8.0.RC3.alpha001"),
    ],
)
def test_unparsable_strings_raise_naming_the_string_and_shapes(family: str, text: str) -> None:
    with pytest.raises(VersionError) as info:
        parse_version(family, text)  # type: ignore[arg-type]
    assert repr(text) in info.value.message
    assert info.value.hint


def test_ranges_partial_bounds_name_whole_series() -> None:
    r = VersionRange.parse("driver", ">=24.1.rc2,<26")
    assert r.contains("25.5.1") and r.contains("24.1.rc2")
    assert not r.contains("26.0.rc1") and not r.contains("24.1.rc1")
    assert VersionRange.parse("cann", "<=8.2").contains("8.2.RC1")
    assert VersionRange.parse("cann", "==8.3").contains("8.3.RC2")
    assert VersionRange.parse("cann", "8.3.*").contains("8.3.RC1")
    assert not VersionRange.parse("cann", ">8.2").contains("8.2.RC1")


def test_range_prerelease_rules_are_explicit() -> None:
    r = VersionRange.parse("cann", ">=8.2.RC1")
    assert not r.contains("8.3.RC1.alpha001")
    assert r.contains("8.3.RC1.alpha001", prereleases=True)
    # A range that names a pre-release admits pre-releases.
    assert VersionRange.parse("cann", ">=9.0.0-beta.1").contains("9.0.0-beta.2")
    # PEP 440: explicit too, whatever the installed packaging's default.
    p = VersionRange.parse("pep440", ">=2.1")
    assert not p.contains("2.10.0rc2")
    assert p.contains("2.10.0rc2", prereleases=True)
    assert p.contains("2.1.0.post17")


def test_range_rejects_bad_text() -> None:
    for bad in (">=24.1.rc2,<<26", "~=24.1", ">= 24.x"):
        with pytest.raises(VersionError):
            VersionRange.parse("driver", bad)
    with pytest.raises(VersionError):
        VersionRange.parse("pep440", ">=2.1,=<3")


def test_pydantic_fields_validate_and_serialise_as_strings() -> None:
    class M(BaseModel):
        cann: CannVersion
        driver: DriverVersion

    m = M.model_validate({"cann": "8.3.rc1", "driver": "24.1.RC2"})
    assert m.model_dump(mode="json") == {"cann": "8.3.RC1", "driver": "24.1.rc2"}
    assert M.model_json_schema()["properties"]["cann"]["type"] == "string"
    with pytest.raises(ValidationError) as info:
        M.model_validate({"cann": "8.3", "driver": "24.1.rc2"})
    assert "cann" in str(info.value) and "8.3" in str(info.value)


# --- properties -----------------------------------------------------------------------------

small = st.integers(min_value=0, max_value=30)
pos = st.integers(min_value=1, max_value=9)


@st.composite
def cann_strings(draw: st.DrawFn) -> str:
    major, minor = draw(st.integers(5, 12)), draw(st.integers(0, 9))
    kind = draw(st.sampled_from(["rc", "final", "t", "v2pre"]))
    if kind == "t":
        return f"{major}.{minor}.T{draw(small)}"
    if kind == "v2pre":
        stage = draw(st.sampled_from(["alpha", "beta", "rc"]))
        return f"{major}.{minor}.{draw(small)}-{stage}.{draw(pos)}"
    base = f"{major}.{minor}." + (f"RC{draw(pos)}" if kind == "rc" else str(draw(small)))
    suffix = draw(st.sampled_from(["", f".alpha{draw(pos):03d}", f".beta{draw(pos)}", f".{draw(pos)}"]))
    return base + suffix


@st.composite
def driver_strings(draw: st.DrawFn) -> str:
    major, minor = draw(st.integers(20, 27)), draw(st.integers(0, 5))
    base = f"{major}.{minor}." + draw(st.sampled_from([f"rc{draw(pos)}", str(draw(small))]))
    base += draw(st.sampled_from(["", f".{draw(pos)}", f".alpha{draw(pos)}"]))
    return base + draw(st.sampled_from(["", f".b{draw(st.integers(0, 999)):03d}"]))


@given(st.lists(cann_strings(), min_size=3, max_size=3))
def test_cann_order_is_total_and_transitive(texts: list[str]) -> None:
    a, b, c = (CannVersion.parse(t) for t in texts)
    assert (a < b) + (a == b) + (a > b) == 1
    if a <= b and b <= c:
        assert a <= c


@given(cann_strings())
def test_cann_round_trip(text: str) -> None:
    v = CannVersion.parse(text)
    assert CannVersion.parse(str(v)) == v
    assert CannVersion.parse(text.lower()) == v
    assert hash(CannVersion.parse(str(v))) == hash(v)


@given(st.lists(driver_strings(), min_size=3, max_size=3))
def test_driver_order_is_total_and_transitive(texts: list[str]) -> None:
    a, b, c = (DriverVersion.parse(t) for t in texts)
    assert (a < b) + (a == b) + (a > b) == 1
    assert DriverVersion.parse(str(a)) == a
    if a <= b and b <= c:
        assert a <= c


@given(driver_strings(), driver_strings(), driver_strings())
def test_driver_ranges_agree_with_order(lo: str, hi: str, probe: str) -> None:
    r = VersionRange.parse("driver", f">={lo},<{hi}")
    v, vlo, vhi = DriverVersion.parse(probe), DriverVersion.parse(lo), DriverVersion.parse(hi)
    expected = vlo <= v < vhi
    assert r.contains(v, prereleases=True) == expected
    if not v.is_prerelease:
        assert r.contains(v) == expected


@given(cann_strings(), cann_strings())
def test_cann_ranges_agree_with_order(bound: str, probe: str) -> None:
    b, v = CannVersion.parse(bound), CannVersion.parse(probe)
    assert VersionRange.parse("cann", f">={bound}").contains(v, prereleases=True) == (v >= b)
    assert VersionRange.parse("cann", f"<{bound}").contains(v, prereleases=True) == (v < b)
    assert VersionRange.parse("cann", f"=={bound}").contains(v, prereleases=True) == (v == b)
    assert VersionRange.parse("cann", f"!={bound}").contains(v, prereleases=True) == (v != b)


@given(st.text(max_size=20))
def test_parsers_never_fail_silently(text: str) -> None:
    for family in ("cann", "driver", "firmware", "pep440"):
        try:
            v = parse_version(family, text)  # type: ignore[arg-type]
        except VersionError as exc:
            assert exc.hint
        else:
            assert str(v)
