"""DVPP / media return codes (VDEC, JPEGD, VPC, VENC, JPEGE, PNGD; the acldvpp operator API) in
``matrices/explain/knowledge.yaml`` (family ``dvpp``): the rows fit the vendor's code layout, the
causes stay on the reviewed error ids, and the codes are read in logs upper or lower case, never
inside a longer number; hostile input stays bounded."""

from __future__ import annotations

import re

from cannenv.explain import judge, signatures, tables
from tests.helpers.explaining import explain as _explain

TABLE = signatures.shipped()
K = tables.shipped()
DVPP = [c for c in K.codes if c.family == "dvpp"]
# hi_mpi's error layout: 0xA0 | module id | 0x80 (error level) | error id; the module of each page
MODULE_OF_SOURCE = {
    "dvpp-vdec-codes": ("05", "VDEC"),
    "dvpp-vpc-codes": ("07", "VPC"),
    "dvpp-venc-codes": ("08", "VENC"),
    "dvpp-pngd-codes": ("40", "PNGD"),
}
# the error ids whose description says what the caller did (channel id, argument, a channel created
# twice or used before it exists or is configured, a null pointer, a forbidden operation, a buffer
# not from the dedicated allocator, a buffer smaller than needed), the device id, and memory
REVIEWED = {
    "01": ("device-not-visible",),
    "02": ("not-a-version-problem",),
    "03": ("not-a-version-problem",),
    "04": ("not-a-version-problem",),
    "05": ("not-a-version-problem",),
    "06": ("not-a-version-problem",),
    "07": ("not-a-version-problem",),
    "09": ("not-a-version-problem",),
    "0C": ("oom",),
    "11": ("not-a-version-problem",),
    "13": ("not-a-version-problem",),
}


def _dvpp_ids(ex: judge.Explanation) -> list[str]:
    return [m.id for m in ex.matches if m.id.startswith("code-0xA0")]


def test_every_hi_mpi_row_fits_the_layout_of_its_page() -> None:
    hexes = [c for c in DVPP if c.code.startswith("0x")]
    assert len(hexes) == 4 * 19  # four pages, 19 codes each (the 0x..3F upper bound is no error)
    for c in hexes:
        mid, short = MODULE_OF_SOURCE[c.source]
        assert re.fullmatch(rf"0xA0{mid}80[0-9A-F]{{2}}", c.code), c.code
        assert c.name.startswith((f"HI_ERR_{short}_", c.component or "?")), c.name
        assert K.sources[c.source][1].startswith(
            "https://www.hiascend.com/document/detail/en/canncommercial/800/"
        )
    assert len({c.code for c in hexes}) == len(hexes)


def test_causes_only_on_the_reviewed_error_ids() -> None:
    for c in DVPP:
        if c.code.startswith("0x"):
            assert c.causes == REVIEWED.get(c.code[-2:], ()), c.code
    acl = {c.code: c.causes for c in DVPP if not c.code.startswith("0x")}
    assert acl == {
        "106001": ("not-a-version-problem",),
        "106002": ("not-a-version-problem",),
        "306001": (),
        "506000": (),
    }
    assert {x for c in DVPP for x in c.causes} <= set(TABLE.causes)


def test_a_code_is_read_upper_or_lower_case() -> None:
    lower = _explain("hi_mpi_vdec_send_stream failed, ret = 0xa0058003\n")
    assert _dvpp_ids(lower) == ["code-0xA0058003"]
    assert lower.causes[0].id == "not-a-version-problem"
    upper = _explain("[ERROR] hi_mpi_vpc_crop_resize return 0xA0078011\n")
    assert _dvpp_ids(upper) == ["code-0xA0078011"]
    assert _explain("jpege failed: 0xA008800C\n").causes[0].id == "oom"


def test_a_code_without_a_cause_or_outside_the_table_names_none() -> None:
    assert not _explain("vdec busy 0xA0058012\n").causes  # Busy system: no cause
    assert not _dvpp_ids(_explain("sys ret 0xA0028003\n"))  # the SYS module is not a media table
    assert not _dvpp_ids(_explain("addr 0xA00580031 len 0x10\n"))  # inside a longer number
    assert not _dvpp_ids(_explain("ptr=x0xA0058003\n"))


def test_the_acldvpp_codes_are_read_as_the_other_six_digit_codes() -> None:
    ex = _explain("acldvppResize failed, error code is 106002\n")
    assert [m.id for m in ex.matches if m.id == "code-106002"] == ["code-106002"]
    assert ex.causes[0].id == "not-a-version-problem"


def test_hostile_huge_line_and_many_lines() -> None:
    huge = "ret 0xa0058003 " + "0xa0" * 500_000 + "\n"
    assert _dvpp_ids(_explain(huge)) in ([], ["code-0xA0058003"])
    many = "".join(f"frame {i} ret 0xA0058003\n" for i in range(100_000))
    ex = _explain(many)
    assert _dvpp_ids(ex) == ["code-0xA0058003"]
    assert ex.causes[0].id == "not-a-version-problem"
