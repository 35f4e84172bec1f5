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
from cannenv.hardware import FamilyId, Hardware
from cannenv.sanitize import PLAIN_FILE_NAME
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

Evidence = Literal["recommended", "validated", "downstream", "declared", "observed"]
"""recommended: the vendor's own pairing; validated: a vendor project ran it (MindSpeed-LLM);
downstream: a project built on the stack names it in its release (vllm-ascend), never the vendor's
recommendation; declared: a stated requirement that is not a pairing; observed: seen (weakest)."""
EVIDENCE_RANK: dict[str, int] = {
    "recommended": 0,
    "validated": 1,
    "downstream": 2,
    "declared": 3,
    "observed": 4,
}
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


FileName = Annotated[str, Check(pattern=PLAIN_FILE_NAME)]
"""A file name (never a path): the one rule, :data:`cannenv.sanitize.PLAIN_FILE_NAME`. ``provision``
joins it to ``--artifacts`` on the controller and to its work folder on the host."""


@value
class Artifact:
    """An installer or wheel file for one architecture."""

    file: FileName
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
    excludes: tuple[str, ...] = ()
    """parts of the component this stack does not install, e.g. NNAL's ``torch_atb`` where the
    vendor's installer refuses the stack's Python (``python_limits``)"""


@value
class Stack:
    """A concrete, pinned combination of components with a stable id."""

    id: Annotated[str, Check(pattern=r"^[a-z0-9][a-z0-9._+-]*$")]
    family: FamilyId
    product: str | None = None
    """the product, where the family's HDKs are numbered per product (hardware ``products``)"""
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
    python: tuple[Pep440Str, ...] | None = None
    """the Python versions the source states for this torch_npu build (TorchNPU release notes'
    Python column); null: the source does not say"""
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
    """Versions of a package with a published wheel for one Python and architecture set, exactly
    as the package index lists them (a set of versions, never a range: a range would claim
    versions that were never published)."""

    package: Literal["torch-npu", "torch"] = "torch-npu"
    python: Pep440Str
    arches: Annotated[tuple[Arch, ...], NonEmpty]
    versions: Annotated[tuple[Pep440Str, ...], NonEmpty]
    sources: SourceIds
    note: str | None = None


@value
class WheelMetadata:
    """One wheel file on the package index and what its METADATA declares (the published truth
    about that build: which torch it installs against, which Python it accepts)."""

    file: FileName
    package: Literal["torch-npu"] = "torch-npu"
    version: Pep440Str
    python: Pep440Str
    """the cpXY tag of the file name"""
    arch: Arch
    torch: str | None = None
    """the ``Requires-Dist: torch`` specifier as written (``==2.13.0.*``, ``==2.9.1+cpu``); null: none"""
    requires_python: str | None = None
    sha256: Annotated[str, Check(pattern=r"^[0-9a-f]{64}$")] | None = None
    sources: SourceIds
    note: str | None = None

    def torch_matches(self, torch: str) -> bool:
        """Whether the pinned torch is ``torch`` (release numbers; a ``+cpu`` local label and a
        trailing ``.*`` are the same PyTorch release)."""
        pinned = self.pinned_torch()
        try:
            return pinned is not None and bool(_pep(pinned).release[:3] == _pep(torch).release[:3])
        except VersionError:
            return False

    def pinned_torch(self) -> str | None:
        """The PyTorch release ``Requires-Dist: torch==`` pins (``2.9.1`` for ``==2.9.1+cpu``,
        ``2.13.0`` for ``==2.13.0.*``); None: no exact pin (older wheels name no torch)."""
        spec = (self.torch or "").strip()
        if not spec.startswith("=="):
            return None
        pinned = spec[2:].removesuffix(".*").split("+", 1)[0]
        try:
            return ".".join(str(n) for n in (*_pep(pinned).release, 0, 0)[:3])
        except VersionError:
            return None


@value
class Published:
    """When the package index first received each version of a package (YYYY-MM-DD)."""

    package: Literal["torch-npu", "torch"]
    uploaded: dict[str, str]
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
    products: tuple[str, ...] | None = None
    """the products the statement covers (hardware ``products``); null: every product of the families"""
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


TEMPLATE_FIELDS: tuple[str, ...] = ("version", "arch", "hdk_arch")
"""The only placeholders an installer name template may use."""
_TEMPLATE_PART = re.compile(r"\{([^{}]*)\}|([{}])")


def check_template(text: str) -> str:
    """An installer name template: literal text and the placeholders ``{version}``, ``{arch}``,
    ``{hdk_arch}`` only. Anything else in braces (``{foo}``, ``{version.__class__}``,
    ``{version!r}``, ``{version:>9}``) or a lone brace is refused: matrix files may come from
    anywhere, and a template is filled by plain substitution, never by ``str.format``."""
    for m in _TEMPLATE_PART.finditer(text):
        name, lone = m.group(1), m.group(2)
        if lone is not None:
            raise ValueError(
                f"unbalanced {lone!r} in installer name template {text!r}; "
                f"placeholders are {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}"
            )
        if name not in TEMPLATE_FIELDS:
            raise ValueError(
                f"placeholder {{{name}}} is not allowed in installer name template {text!r}; "
                f"only {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}"
            )
    if not text.strip():
        raise ValueError("empty installer name template")
    from cannenv.sanitize import is_plain_file_name

    if not is_plain_file_name(_TEMPLATE_PART.sub("0", text)):
        raise ValueError(
            f"installer name template {text!r} is not a plain file name "
            "(letters, digits and ._+%~- only; no '/', no leading dot or dash)"
        )
    return text


def fill_template(template: str, **fields: str) -> str:
    """Substitute the named placeholders of a template checked by :func:`check_template`."""
    check_template(template)
    return _TEMPLATE_PART.sub(lambda m: fields[m.group(1)], template)


Template = Annotated[str, Check(check_template, "installer file name with {version} {arch} {hdk_arch}")]


@value
class InstallerPattern:
    """File-name pattern of an installer in one era: placeholders {version} {arch} {hdk_arch}."""

    component: str
    families: tuple[FamilyId, ...] | None = None
    cann: CannRange = "*"
    package: str
    pattern: Template
    sources: SourceIds
    note: str | None = None


@value
class CompanionRule:
    """Which ops/kernels or NNAL versions go with a toolkit (default: the same version)."""

    component: Literal["ops", "nnal"]
    cann: CannRange
    same_version: bool = True
    also: tuple[CannStr, ...] = ()
    window: int | None = None
    """major versions either side the companion may be (CANN 9.x: [N-1, N, N+1]); with ``floor``"""
    floor: CannStr | None = None
    """the lowest version the window admits (8.5.0)"""
    sources: SourceIds
    note: str | None = None


@value
class PythonLimit:
    """The Python versions a component's Python library installs on for each CANN release, as the
    vendor's installer states it (sets, never widened): NNAL's ``torch_atb`` (the ATB Python API)
    on Python 3.10 and 3.11 only."""

    component: Literal["nnal"]
    library: str
    """the Python library of the component (``torch_atb``)"""
    cann: Annotated[tuple[CannStr, ...], NonEmpty]
    """the CANN (and same-version NNAL) releases whose installer states it"""
    python: Annotated[tuple[Pep440Str, ...], NonEmpty]
    sources: SourceIds
    note: str | None = None


@value
class Download:
    """A vendor file as the vendor's own download manifests list it, with its sha256."""

    file: FileName
    component: str
    """cann | ops | nnal | nnae | nnrt | toolbox | tfplugin | hdk | mcu | torch | torch_npu"""
    version: str
    families: tuple[FamilyId, ...] | None = None
    arch: Arch | None = None
    python: Pep440Str | None = None
    sha256: Annotated[str, Check(pattern=r"^[0-9a-f]{64}$")]
    url: str | None = None
    sources: SourceIds
    note: str | None = None
    """where in the source (the manifest path inside the artefact)"""


Series = Annotated[str, Check(pattern=r"^[0-9]+\.[0-9]+(\.([0-9A-Za-z]+|[Xx]))+$")]
"""A vendor version or series as the vendor's tables write it: ``25.0.X``, ``26.0.RC1``, ``8.5.2``."""


@value
class HdkCompatRow:
    """A CANN <-> Ascend HDK compatibility statement as the vendor writes it ("Y"/"N" tables,
    "配套Ascend HDK版本" lists): CANN releases or series against HDK releases or series."""

    cann: Annotated[tuple[Series, ...], NonEmpty]
    """CANN releases or series (``8.5.2``, ``9.0.X``)"""
    hdk: Annotated[tuple[Series, ...], NonEmpty]
    """HDK releases or series (``25.0.X``, ``26.0.RC1``)"""
    compatible: bool
    families: tuple[FamilyId, ...] | None = None
    """null: the statement covers every family the release supports that shares the HDK line
    (a family with ``hdk_line: own`` is covered only where it is named)"""
    products: tuple[str, ...] | None = None
    """the products the statement covers; null: every product of the families"""
    statement: str
    """the vendor's words, short: which table of which document"""
    sources: SourceIds
    note: str | None = None


@value
class TorchNpuCompatRow:
    """A TorchNPU release line <-> CANN series compatibility statement (TorchNPU release notes,
    "版本兼容性说明"). TorchNPU releases are the second half of a branch name (v2.7.1-**7.3.0**)."""

    torchnpu: Annotated[tuple[Series, ...], NonEmpty]
    """TorchNPU releases or lines (``7.3.X``, ``26.0.X``)"""
    cann: Annotated[tuple[Series, ...], NonEmpty]
    compatible: bool = True
    statement: str
    status: Literal["current", "superseded"] = "current"
    """superseded: a later revision of the same release's note states otherwise (``note`` names it);
    kept as the vendor's earlier word, never used for a verdict"""
    sources: SourceIds
    note: str | None = None


ComponentName = Literal[
    "vllm-ascend", "mindie", "mindie-motor", "mindspeed", "mindspeed-llm", "triton-ascend"
]
COMPONENT_NAMES: tuple[str, ...] = (
    "vllm-ascend",
    "mindie",
    "mindie-motor",
    "mindspeed",
    "mindspeed-llm",
    "triton-ascend",
)


@value
class ComponentRow:
    """What one release of a serving / training component names as its stack (vllm-ascend,
    MindIE, MindSpeed-LLM, Triton-Ascend …), as one source states it. ``requires`` keeps each
    value as written: a list is a set the source names, never widened to a range."""

    component: ComponentName
    version: str
    """the component's release, as its source spells it (``2.2.RC1``, ``0.18.0``, ``v0.23.0``)"""
    requires: dict[str, tuple[str, ...]]
    """cann | torch_npu | torchnpu (the TorchNPU release) | torch | python | hdk | triton-ascend |
    vllm | mindcluster | mindspeed-core -> the values the source names"""
    statement: str
    """which table of which document"""
    evidence: Evidence = "validated"
    status: Literal["current", "superseded"] = "current"
    """superseded: a later revision of the same document states another stack for this release
    (both kept; the note names the later one)"""
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
    published: tuple[Published, ...] = ()
    wheel_metadata: tuple[WheelMetadata, ...] = ()
    lifecycle: tuple[LifecycleRow, ...] = ()
    hdk: tuple[HdkRow, ...] = ()
    hdk_compat: tuple[HdkCompatRow, ...] = ()
    torch_npu_compat: tuple[TorchNpuCompatRow, ...] = ()
    installers: tuple[InstallerPattern, ...] = ()
    downloads: tuple[Download, ...] = ()
    companions: tuple[CompanionRule, ...] = ()
    python_limits: tuple[PythonLimit, ...] = ()
    stacks: tuple[Stack, ...] = ()
    components: tuple[ComponentRow, ...] = ()


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
    """What the vendor says about drivers for a CANN version on a family.

    ``rows``: the pairing rows of the strongest evidence (the release's own HDK); ``compat``: the
    compatibility statements that cover this CANN (HDK series marked compatible or not);
    ``validated``: drivers a vendor project ran this CANN with. :meth:`level` judges a driver;
    ``range`` is the smallest version range that holds every driver stated good (for image labels
    and the runtime gate, which need one range), never wider.
    """

    cann: str
    family: str
    minimum: str | None
    range: str
    evidence: Evidence
    rows: tuple[HdkRow, ...]
    hdk: str | None = None
    firmware: str | None = None
    note: str = ""
    compat: tuple[HdkCompatRow, ...] = ()
    validated: tuple[HdkRow, ...] = ()
    product: str | None = None
    """the product asked about (families whose HDKs are numbered per product)"""

    @property
    def recommended_drivers(self) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for r in self.rows:
            if r.evidence == "recommended":
                out.update(dict.fromkeys(r.driver))
        return tuple(out)

    def level(self, driver: str) -> tuple[Level, tuple[HdkRow | HdkCompatRow, ...]]:
        """How the vendor rates ``driver`` for this CANN, and the statements it rests on."""
        rec = tuple(
            r
            for r in self.rows
            if r.evidence == "recommended"
            and any(series_matches("driver", d, driver) for d in (*r.driver, *filter(None, [r.driver_file])))
        )
        if rec:
            return "recommended", rec
        hits = [r for r in self.compat if any(series_matches("driver", h, driver) for h in r.hdk)]
        yes = tuple(r for r in hits if r.compatible)
        no = tuple(r for r in hits if not r.compatible)
        if no and not yes:
            return "incompatible", no
        if yes and not no:
            return "compatible", yes
        if yes and no:
            return "unknown", yes + no  # the sources disagree: both are named
        val = tuple(
            r
            for r in (*self.validated, *(r for r in self.rows if r.evidence == "validated"))
            if any(series_matches("driver", d, driver) for d in r.driver)
        )
        if val:
            return "compatible", val
        return "unknown", ()

    def accepts(self, driver: str) -> bool:
        """The vendor recommends or states compatible ``driver`` for this CANN (unknown: False)."""
        return self.level(driver)[0] in ("recommended", "compatible")

    @property
    def sources(self) -> tuple[str, ...]:
        rows: tuple[HdkRow | HdkCompatRow, ...] = (*self.rows, *self.compat, *self.validated)
        return tuple(dict.fromkeys(s for r in rows for s in r.sources))

    @property
    def compatible_series(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(h for r in self.compat if r.compatible for h in r.hdk))

    @property
    def incompatible_series(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(h for r in self.compat if not r.compatible for h in r.hdk))

    def to_json(self) -> dict[str, Any]:
        return {
            "cann": self.cann,
            "family": self.family,
            "product": self.product,
            "minimum": self.minimum,
            "range": self.range,
            "hdk": self.hdk,
            "firmware": self.firmware,
            "evidence": self.evidence,
            "recommended": list(self.recommended_drivers),
            "compatible": list(self.compatible_series),
            "incompatible": list(self.incompatible_series),
            "statements": [
                {
                    "compatible": r.compatible,
                    "hdk": list(r.hdk),
                    "statement": r.statement,
                    "sources": list(r.sources),
                }
                for r in self.compat
            ],
            "sources": list(self.sources),
            "note": self.note,
        }


Level = Literal["recommended", "compatible", "incompatible", "unknown"]
"""How strong the vendor's word is on a pairing: recommended (the release's own pairing) >
compatible (a named vendor compatibility statement) ; incompatible (stated "N") ; unknown."""


@dataclass(frozen=True)
class Verdict:
    """The rules' answer on one pairing (driver with CANN, torch_npu with CANN)."""

    level: Level
    subject: str
    """e.g. 'driver 25.3.rc1 with CANN 8.5.0 on a2'"""
    statement: str
    """what is known, naming the statement it rests on"""
    sources: tuple[str, ...] = ()
    recommended: str | None = None
    """the recommended alternative, when the pairing is not the recommended one"""
    settle: str | None = None
    """for unknown: what would settle it"""
    caveat: str | None = None
    """another statement that disagrees with the one the level rests on (the doctor warns, naming both)"""
    no_recommended: str | None = None
    """why no alternative is named although the pairing is not the recommended one (e.g. nothing on
    the asked torch_npu's PyTorch line is recommended with this CANN; where it is)"""

    @property
    def ok(self) -> bool:
        return self.level in ("recommended", "compatible")

    def to_json(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "subject": self.subject,
            "statement": self.statement,
            "sources": list(self.sources),
            "recommended": self.recommended,
            "settle": self.settle,
            "caveat": self.caveat,
            "no_recommended": self.no_recommended,
        }


def series_matches(family: Family, pattern: str, version: str) -> bool:
    """``25.0.X`` matches every 25.0 release (25.0.rc1, 25.0.rc1.1); ``26.0.RC1`` matches 26.0.rc1
    and its patch builds (26.0.rc1.1); ``8.5.2`` only 8.5.2 (and its betas)."""
    return _series_matches(family, pattern.strip(), version.strip())


@lru_cache(maxsize=8192)
def _series_matches(family: Family, pattern: str, version: str) -> bool:
    try:
        v = _parsed(family, version)
    except VersionError:
        return False
    if pattern[-2:] in (".X", ".x"):
        return bool(getattr(v, "series", None) == pattern[:-2])
    try:
        p = _parsed(family, pattern)
    except VersionError:
        return False
    if p == v or version.lower().startswith(pattern.lower() + "."):
        return True
    release = getattr(v, "release", None)  # a CANN pre-release (9.1.0-beta.3) is not 9.1.0
    return bool(family == "driver" and release is not None and release == p)


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
