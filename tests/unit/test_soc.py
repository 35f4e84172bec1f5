"""SoC normalisation and family lookup against the shipped hardware table (matrices/socs.yaml)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cannenv import soc
from cannenv.errors import InputError


@pytest.mark.parametrize(
    ("text", "canonical", "family"),
    [
        ("910B4", "Ascend910B4", "a2"),
        ("ascend910b4", "Ascend910B4", "a2"),
        ("Ascend910B4", "Ascend910B4", "a2"),
        ("ASCEND910B2C", "Ascend910B2C", "a2"),
        ("ascend910b4-1", "Ascend910B4-1", "a2"),
        ("ascend910_9392", "Ascend910_9392", "a3"),
        ("Ascend910_9362", "Ascend910_9362", "a3"),
        ("310P3", "Ascend310P3", "310p"),
        ("ascend310p3vir04", "Ascend310P3vir04", "310p"),
        ("Ascend910A", "Ascend910A", "910"),
        ("ascend910premiuma", "Ascend910PremiumA", "910"),
        ("Ascend310B4", "Ascend310B4", "310b"),
        ("ascend950pr_9579", "Ascend950PR_9579", "950"),
        ("Ascend950DT_9582", "Ascend950DT_9582", "950"),
    ],
)
def test_normalize_and_family(text: str, canonical: str, family: str) -> None:
    assert soc.normalize_soc(text) == canonical
    assert soc.soc_family(text) == family


def test_trap_ascend910b_without_digit_is_first_gen_prob() -> None:
    assert soc.normalize_soc("Ascend910B") == "Ascend910B"
    assert soc.soc_family("Ascend910B") == "910"
    assert soc.soc_family("910b") == "910"
    assert soc.soc_family("Ascend910B1") == "a2"
    # npu-smi Name column: a bare "910B" matches the first-gen pattern (mind-cluster default_name.go)
    assert soc.family_from_npu_name("910B") == "910"
    assert soc.family_from_npu_name("910B3") == "a2"


def test_unknown_soc_has_did_you_mean() -> None:
    with pytest.raises(InputError) as info:
        soc.normalize_soc("Ascend910B9")
    assert "Ascend910B9" in info.value.message
    assert info.value.hint is not None and "Perhaps you meant" in info.value.hint


@pytest.mark.parametrize(
    ("chip_type", "chip_name", "npu_name", "expected"),
    [
        ("Ascend", "910B4", None, "Ascend910B4"),  # A2 board output
        (None, "Ascend910", "9392", "Ascend910_9392"),  # A3 board output
        ("Ascend", "310P3", "NA", "Ascend310P3"),
        ("Ascend", "910A", None, "Ascend910A"),
        ("Ascend", "A2G3", None, "Ascend910B1"),  # vllm-ascend maps A2G* to ascend910b1
    ],
)
def test_soc_from_board(chip_type: str | None, chip_name: str, npu_name: str | None, expected: str) -> None:
    assert soc.soc_from_board(chip_type, chip_name, npu_name) == expected


def test_soc_from_board_without_chip_name() -> None:
    with pytest.raises(InputError):
        soc.soc_from_board("Ascend", None, None)


def test_npu_smi_names_and_pci() -> None:
    assert soc.family_from_npu_name("Ascend910") == "a3"
    assert soc.family_from_npu_name("310P3") == "310p"
    assert soc.family_from_npu_name("Ascend950PR") == "950"
    assert soc.family_from_npu_name("xxx") is None
    assert soc.family_from_pci("0xD802") == "a2"
    assert soc.family_from_pci("d801") == "910"
    assert soc.family_from_pci("d500") == "310p"
    assert soc.family_from_pci("zzzz") is None


def test_family_titles_and_aliases() -> None:
    assert soc.family_title("a2") == "Atlas A2"
    assert soc.family_title("A3") == "Atlas A3"
    assert soc.normalize_family("Atlas A2") == "a2"
    assert soc.normalize_family("910b") == "a2"  # image tag chip series
    with pytest.raises(InputError):
        soc.normalize_family("a9")


def test_every_family_has_data_and_every_soc_round_trips() -> None:
    assert {f.id for f in soc.families()} == set(soc.FAMILY_IDS)
    for entry in soc.socs():
        assert soc.normalize_soc(entry.name.lower()) == entry.name
        assert soc.soc_family(entry.name) == entry.family


@given(st.text(max_size=20))
def test_normalize_never_crashes(text: str) -> None:
    try:
        out = soc.normalize_soc(text)
    except InputError:
        return
    assert out.startswith("Ascend")
