"""The matrix's value types: version fields, rows, stacks, the file model and query answers.

Everything here is a frozen value (:mod:`cannenv.values`); files are validated by pydantic at the
boundary (:mod:`cannenv.matrix.loader`), the rules are asked through :class:`cannenv.matrix.query.Matrix`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from cannenv import values
from cannenv.errors import VersionError
from cannenv.matrix.hardware import FamilyId, Hardware
from cannenv.values import Check, value

if TYPE_CHECKING:
    from cannenv.versions import AnyVersion, Family

SCHEMA_VERSION = 1

CORE_COMPONENTS: tuple[str, ...] = (
    "firmware",
    "driver",
    "cann",
    "ops",
    "nnal",
    "python",
    "torch",
    "torch_npu",
)
COMPONENT_SCHEME: dict[str, Family] = {
    "firmware": "firmware",
    "driver": "driver",
    "cann": "cann",
    "ops": "cann",
    "nnal": "cann",
    "python": "pep440",
    "torch": "pep440",
    "torch_npu": "pep440",
}
"""Version grammar of each core component; extras default to PEP 440 or say ``scheme:``."""

Evidence = Literal["recommended", "validated", "declared", "observed"]
EVIDENCE_RANK: dict[str, int] = {"recommended": 0, "validated": 1, "declared": 2, "observed": 3}
Status = Literal["published", "certified", "deprecated", "eol"]
Arch = Literal["aarch64", "x86_64"]


# ---------------------------------------------------------------------------------------------
# version fields


@lru_cache(maxsize=4096)
def _canonical(family: Family, text: str) -> str:
    from cannenv.versions import parse_version

    return str(parse_version(family, text))


def _canonical_range(family: Family, text: str) -> str:
    from cannenv.versions import VersionRange

    return str(VersionRange.parse(family, text))


def _checker(family: Family, *, ranges: bool = False) -> Any:
    """A field check: the canonical spelling of a ``family`` version (or range, with ``ranges``)."""

    def check(value: str) -> str:
        try:
            return _canonical_range(family, value) if ranges else _canonical(family, value)
        except VersionError as exc:
            raise ValueError(exc.message + (f"; {exc.hint}" if exc.hint else "")) from None

    return check


CannStr = Annotated[str, Check(_checker("cann"), "CANN version, e.g. 8.3.RC1 or 9.0.0")]
DriverStr = Annotated[str, Check(_checker("driver"), "driver/HDK version, e.g. 24.1.rc2")]
FirmwareStr = Annotated[str, Check(_checker("firmware"), "firmware, e.g. 7.3.0.1.231")]
Pep440Str = Annotated[str, Check(_checker("pep440"), "PEP 440 version, e.g. 2.1.0.post17")]
CannRange = Annotated[str, Check(_checker("cann", ranges=True), "CANN range, e.g. '>=8.0.RC3,<8.5'")]
DriverRange = Annotated[str, Check(_checker("driver", ranges=True), "driver range, e.g. '>=25.2.0'")]
Pep440Spec = Annotated[str, Check(_checker("pep440", ranges=True), "PEP 440 specifier")]
SourceIds = Annotated[tuple[str, ...], Check(None, "source ids (see the sources section)", min_length=1)]
NonEmpty = Check(min_length=1)
"""At least one item (``Annotated[tuple[X, ...], NonEmpty]``)."""


@lru_cache(maxsize=8192)
def _parsed(family: Family, text: str) -> AnyVersion:
    from cannenv.versions import parse_version

    return parse_version(family, text)


def _cann(text: str) -> Any:
    return _parsed("cann", text)


def _drv(text: str) -> Any:
    return _parsed("driver", text)


def _pep(text: str) -> Any:
    return _parsed("pep440", text)


@lru_cache(maxsize=8192)
def _in_range(family: Family, spec: str, version: str) -> bool:
    """``version`` in the range ``spec``, pre-releases admitted (rules are asked the same pairs often)."""
    from cannenv.versions import VersionRange

    return VersionRange.parse(family, spec).contains(version, prereleases=True)


def same_python_line(a: str, b: str) -> bool:
    """``3.11`` matches ``3.11.4``: compare major.minor only."""
    pa, pb = _pep(a).release, _pep(b).release
    return bool(pa[:2] == pb[:2])


# ---------------------------------------------------------------------------------------------
# value types (frozen dataclasses; validated by pydantic only when read from files)


@value
class Source:
    """Where facts come from; every row and stack names source ids."""

    id: Annotated[str, Check(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+/-]*$")]
    title: str
    where: str | None = None
    """repository/path/commit or URL of the cited version"""
    url: str | None = None
    """a public address a user can open (shown in the doctor's output with the title)"""
    note: str | None = None


@value
class Artifact:
    """An installer or wheel file for one architecture."""

    file: str
    sha256: Annotated[str, Check(pattern=r"^[0-9a-f]{64}$")] | None = None
    """null: not known yet"""
    url: str | None = None
    sources: tuple[str, ...] = ()


@value
class Component:
    """One pinned component of a stack (exact version)."""

    version: str
    """exact version in the component's grammar"""
    package: str | None = None
    """installer package or pip distribution name"""
    scheme: Literal["cann", "driver", "firmware", "pep440"] | None = None
    """version grammar for extra components (default pep440)"""
    artifacts: dict[Arch, Artifact] = dataclasses.field(default_factory=dict)
    evidence: Evidence | None = None
    sources: SourceIds
    note: str | None = None


@value
class Stack:
    """A concrete, pinned combination of components with a stable id."""

    id: Annotated[str, Check(pattern=r"^[a-z0-9][a-z0-9._+-]*$")]
    family: FamilyId
    arches: Annotated[tuple[Arch, ...], NonEmpty]
    os: tuple[str, ...] = ()
    status: Status
    components: dict[str, Component]
    sources: SourceIds
    certificates: tuple[str, ...] = ()
    """sha256 digests of certificates for this stack"""
    note: str | None = None

    def version(self, key: str) -> str | None:
        comp = self.components.get(key)
        return comp.version if comp is not None else None

    def artifact(self, key: str, arch: str) -> Artifact | None:
        comp = self.components.get(key)
        return comp.artifacts.get(arch) if comp is not None else None  # type: ignore[call-overload]


@value
class TorchNpuRow:
    """torch_npu <-> PyTorch <-> CANN (vendor tables, wheel METADATA)."""

    torch_npu: Pep440Str
    torch: Pep440Str
    cann: CannStr
    branch: str | None = None
    label: str | None = None
    """the vendor's own spelling where it differs, e.g. '1.11.0.rc2 (beta)'"""
    table: Literal["active", "historical", "other"] = "active"
    status: Literal["current", "superseded", "prerelease", "conflict"] = "current"
    evidence: Evidence = "recommended"
    sources: SourceIds
    note: str | None = None


@value
class PythonSupportRow:
    """Python versions a PyTorch line supports; ``statement`` keeps older (narrower) statements."""

    torch: Annotated[tuple[Pep440Str, ...], NonEmpty]
    python: Annotated[tuple[Pep440Str, ...], NonEmpty]
    statement: Literal["current", "older"] = "current"
    sources: SourceIds
    note: str | None = None


@value
class WheelRow:
    """torch-npu versions with a published wheel for one Python (PEP 440 specifiers, any may match)."""

    python: Pep440Str
    arches: Annotated[tuple[Arch, ...], NonEmpty]
    torch_npu: Annotated[tuple[Pep440Spec, ...], NonEmpty]
    sources: SourceIds
    note: str | None = None


@value
class LifecycleRow:
    torch_npu: Pep440Str
    """torch_npu / PyTorch line, e.g. 2.8.0"""
    status: Literal["planned", "development", "maintenance", "eol"]
    released: str | None = None
    eol: str | None = None
    sources: SourceIds
    note: str | None = None


@value
class HdkRow:
    """A CANN <-> HDK (driver + firmware) pairing, with the strength of its evidence."""

    cann: Annotated[tuple[CannStr, ...], NonEmpty]
    families: tuple[FamilyId, ...] | None = None
    """null: the source does not say"""
    driver: tuple[DriverStr, ...] = ()
    driver_range: DriverRange | None = None
    """only where a source states a range"""
    driver_file: DriverStr | None = None
    """driver file version when it differs (25.0.rc1.1)"""
    firmware: FirmwareStr | None = None
    hdk: str | None = None
    """HDK bundle as written by the source"""
    evidence: Evidence
    confidence: str | None = None
    sources: SourceIds
    note: str | None = None


@value
class InstallerPattern:
    """File-name pattern of an installer in one era: placeholders {version} {arch} {hdk_arch}."""

    component: str
    families: tuple[FamilyId, ...] | None = None
    cann: CannRange = "*"
    package: str
    pattern: str
    sources: SourceIds
    note: str | None = None


@value
class CompanionRule:
    """Which ops/kernels or NNAL versions go with a toolkit (default: the same version)."""

    component: Literal["ops", "nnal"]
    cann: CannRange
    same_version: bool = True
    also: tuple[CannStr, ...] = ()
    sources: SourceIds
    note: str | None = None


@value
class MatrixFile:
    """One matrix file. Sections are merged across files."""

    __pydantic_config__: ClassVar[Mapping[str, Any]] = {**values.FORBID_EXTRA, "title": "cannenv matrix file"}

    schema_version: Literal[1]
    sources: tuple[Source, ...] = ()
    hardware: Hardware | None = None
    torch_npu: tuple[TorchNpuRow, ...] = ()
    python_support: tuple[PythonSupportRow, ...] = ()
    wheels: tuple[WheelRow, ...] = ()
    lifecycle: tuple[LifecycleRow, ...] = ()
    hdk: tuple[HdkRow, ...] = ()
    installers: tuple[InstallerPattern, ...] = ()
    companions: tuple[CompanionRule, ...] = ()
    stacks: tuple[Stack, ...] = ()


SECTIONS: tuple[str, ...] = tuple(k for k in values.field_names(MatrixFile) if k != "schema_version")


def json_schema() -> dict[str, Any]:
    """JSON Schema of a matrix file, generated from the model."""
    schema = values.json_schema(MatrixFile)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://cannenv.dev/schema/matrix-v1.json"
    return schema


# ---------------------------------------------------------------------------------------------
# answers


@dataclass(frozen=True)
class DriverRequirement:
    """What driver a CANN version needs on a family, and how strong that statement is."""

    cann: str
    family: str
    minimum: str | None
    range: str
    evidence: Evidence
    rows: tuple[HdkRow, ...]
    hdk: str | None = None
    firmware: str | None = None
    note: str = ""

    def accepts(self, driver: str) -> bool:
        return _in_range("driver", self.range, driver)

    @property
    def sources(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for r in self.rows for s in r.sources))

    def to_json(self) -> dict[str, Any]:
        return {
            "cann": self.cann,
            "family": self.family,
            "minimum": self.minimum,
            "range": self.range,
            "hdk": self.hdk,
            "firmware": self.firmware,
            "evidence": self.evidence,
            "sources": list(self.sources),
            "note": self.note,
        }


@dataclass(frozen=True)
class PythonSupport:
    torch: str
    current: tuple[str, ...]
    older: tuple[tuple[str, ...], ...] = ()
    rows: tuple[PythonSupportRow, ...] = ()

    @property
    def any_statement(self) -> tuple[str, ...]:
        seen = dict.fromkeys(self.current)
        for group in self.older:
            seen.update(dict.fromkeys(group))
        return tuple(seen)


@dataclass(frozen=True)
class InstallerName:
    component: str
    package: str
    file: str
    sources: tuple[str, ...]
    note: str | None = None


def component_matches(key: str, pinned: str, actual: str | None) -> bool:
    """Whether ``actual`` satisfies a pin: exact version, a series (``2.7``, ``8.3``) or a range."""
    return actual is not None and _component_matches(key, pinned, actual)


@lru_cache(maxsize=1 << 16)
def _component_matches(key: str, pinned: str, actual: str) -> bool:
    # Cached: resolution asks the same (pin, version) pairs for every stack of a large matrix.
    family = COMPONENT_SCHEME.get(key, "pep440")
    pinned = pinned.strip()
    if key == "python":
        return same_python_line(pinned, actual)
    if pinned[:1] in "<>=!" or "," in pinned:
        return _in_range(family, pinned, actual)
    if family == "pep440":
        p = _pep(pinned)
        a = _pep(actual)
        if len(p.release) < 3 and not (p.pre or p.post or p.dev):
            return bool(a.release[: len(p.release)] == p.release)
        return bool(a == p)
    if re.fullmatch(r"\d+(\.\d+)?", pinned):
        return _in_range(family, f"=={pinned}", actual)
    return bool(_parsed(family, pinned) == _parsed(family, actual))
