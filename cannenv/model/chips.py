"""What a SoC family computes (dtypes, fp8 matmul, fused attention), from ``chips.yaml`` (no torch)."""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel, ConfigDict


class Chip(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    dtypes: list[str]
    fp8_matmul: bool
    fused_attention: bool
    formats: list[str] = []
    """low-precision weight formats the cube computes natively (mxfp4, nvfp4 ...); none listed for
    A2/A3/310P"""
    source: str


class Announced(BaseModel):
    """A device memory size the vendor announced but no device output shows yet: said in the
    answer, never planned with (the usable total npu-smi shows is smaller and unknown)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str
    source: str


class Chips(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int
    families: dict[str, Chip]
    announced_hbm: dict[str, Announced] = {}


@cache
def chips() -> Chips:
    from cannenv import records
    from cannenv.resources import model_chips_file

    path = model_chips_file()
    return records.validate(Chips, records.load_yaml(path.read_text(encoding="utf-8")), source=str(path))


def of_family(family: str | None) -> Chip | None:
    return chips().families.get(str(family)) if family else None


def announced_hbm(family: str | None) -> Announced | None:
    return chips().announced_hbm.get(str(family)) if family else None
