"""The version matrix: value types, the YAML loader, and rule queries.

API note for other modules (all pure; errors are :mod:`cannenv.errors` errors)::

    from cannenv import matrix
    m = matrix.load()                      # shipped matrices/*.yaml, validated, cached
    m = matrix.load(["my.yaml", "dir/"])   # other files (a dir = its top-level *.yaml/*.json)
    m.digest                               # "sha256:<hex>" over the canonical content
    m.stacks                               # tuple[Stack, ...]
    s = m.stack("a2-cann8.3.rc1-torch2.7.1-py3.11")   # NotFoundError with did-you-mean
    s.family, s.arches, s.os, s.status, s.sources, s.certificates
    s.components["cann"].version  # keys: firmware driver cann ops nnal python torch torch_npu (+extras)
    s.version("torch_npu") -> str | None ; s.artifact("ops", "aarch64") -> Artifact | None (file, sha256, url)

    # rules (each answer names its evidence kind: recommended > validated > declared > observed)
    m.driver_requirement("8.2.RC1", "a2")  -> DriverRequirement | None   (.minimum, .range, .evidence, .rows)
    m.hdk_pairs("8.2.RC1", family="a2")    -> list[HdkRow]
    m.cann_accepting_driver("24.1.rc2", family="a2") -> list[DriverRequirement]
    m.torch_npu_rows(cann="8.3.RC1", torch="2.7.1", python="3.11") -> list[TorchNpuRow]
    m.python_support("2.7.1")              -> PythonSupport (.current, .older statements)
    m.wheel_published("2.7.1.post2", "3.12", arch="x86_64") -> bool | None (None = not known)
    m.ops_package("8.5.0", "a3", "aarch64") -> InstallerName (.package, .file)
    m.installer_file(component, version, family, arch, cann=...) -> InstallerName
        # component: cann | ops | nnal | driver | firmware
    m.companion_versions("ops", "9.0.0")   -> tuple[str, ...]   (ops/nnal versions that go with a toolkit)
    m.stack_problems(stack)                -> list[str]  (rules a stack breaks; empty = consistent)

Resolution lives in :mod:`cannenv.resolve` (``resolve(m, keep=..., want=...)``); the torch_npu METADATA
importer in :mod:`cannenv.torch_npu_import`.

File format: every matrix file is a mapping with ``schema_version: 1`` and any of the sections
``sources``, ``hardware``, ``torch_npu``, ``python_support``, ``wheels``, ``lifecycle``, ``hdk``,
``installers``, ``companions``, ``stacks``; the loader merges all files. Load errors are collected
across all entries of all files and reported together with ``file:line``, the entry, the field path
and what was expected. The JSON Schema (``cannenv matrix schema``) is generated from
:class:`MatrixFile`.

The types are frozen value dataclasses (:mod:`cannenv.values`): files are validated by pydantic
(imported on first validation), while a matrix taken from the validated-matrix cache is only
unpickled, so a warm :func:`load` never imports pydantic.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from cannenv import values
from cannenv.errors import InputError, NotFoundError, VersionError, did_you_mean
from cannenv.soc import FAMILY_IDS, FamilyId, Hardware
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


# ---------------------------------------------------------------------------------------------
# errors


@dataclass(frozen=True)
class Problem:
    """One load/lint problem: where (file:line, entry, field path), what, what was expected."""

    file: str
    line: int | None
    entry: str | None
    path: str
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        parts = [where]
        if self.entry:
            parts.append(self.entry)
        if self.path:
            parts.append(self.path)
        text = ": ".join(parts) + f": {self.message}"
        return text + (f" (hint: {self.hint})" if self.hint else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "entry": self.entry,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
        }


class MatrixError(InputError):
    """Invalid matrix data; ``problems`` holds every problem found in one pass."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in matrix data:"
        body = "\n".join(f"  {p}" for p in self.problems[:50])
        more = f"\n  ... and {n - 50} more" if n > 50 else ""
        hints = {p.hint for p in self.problems if p.hint}
        super().__init__(
            f"{head}\n{body}{more}",
            hint="fix the entries above; `cannenv matrix lint FILE` re-checks"
            + ("; quote version numbers ('3.10', not 3.10)" if any("quote" in h for h in hints) else ""),
        )


# ---------------------------------------------------------------------------------------------
# YAML with line numbers (only on the error path: the happy path uses the fast C loader)


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _DuplicateKey(Exception):
    """A mapping repeats a key (PyYAML would silently keep the last one)."""


@cache
def _strict_yaml_loader() -> Any:
    """The YAML loader for matrix files: refuses a repeated mapping key while it builds the document,
    so a valid file is still parsed once; the duplicates are then located by :func:`_duplicate_keys`."""
    import yaml

    class Loader(_yaml_loader()):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            if len(keys) != len(set(keys)):
                raise _DuplicateKey
            return super().construct_mapping(node, deep=deep)

    return Loader


def _line_index(text: str) -> dict[tuple[str | int, ...], int]:
    """Map each path (keys and list indexes) to its 1-based line in the YAML text."""
    import yaml

    index: dict[tuple[str | int, ...], int] = {}
    try:
        node = yaml.compose(text, Loader=_yaml_loader())
    except yaml.YAMLError:
        return index

    def walk(n: Any, path: tuple[str | int, ...]) -> None:
        index.setdefault(path, n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark.line)
                child: tuple[str | int, ...] = (*path, key)
                index[child] = k.start_mark.line + 1
                walk(v, child)
                index[child] = k.start_mark.line + 1
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                walk(v, (*path, i))

    if node is not None:
        walk(node, ())
    return index


def _duplicate_keys(text: str) -> list[tuple[int, tuple[str | int, ...], str]]:
    """(line, path, key) of every duplicated mapping key (PyYAML silently keeps the last)."""
    import yaml

    out: list[tuple[int, tuple[str | int, ...], str]] = []
    try:
        node = yaml.compose(text, Loader=_yaml_loader())
    except yaml.YAMLError:
        return out

    def walk(n: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(n, yaml.MappingNode):
            seen: set[str] = set()
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else ""
                if key in seen:
                    out.append((k.start_mark.line + 1, path, key))
                seen.add(key)
                walk(v, (*path, key))
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                walk(v, (*path, i))

    if node is not None:
        walk(node, ())
    return out


def _line_for(index: dict[tuple[str | int, ...], int], loc: Sequence[str | int]) -> int | None:
    path = tuple(loc)
    while path:
        if path in index:
            return index[path]
        path = path[:-1]
    return index.get(())


def _entry_label(doc: Any, loc: Sequence[str | int]) -> str | None:
    if len(loc) < 2 or not isinstance(loc[0], str) or not isinstance(loc[1], int):
        return None
    section, i = loc[0], loc[1]
    try:
        item = doc[section][i]
    except (KeyError, IndexError, TypeError):
        return f"{section}[{i}]"
    if isinstance(item, dict):
        for key in ("id", "name", "torch_npu", "cann", "torch", "python", "component"):
            if key in item:
                return f"{section}[{i}] ({key} {item[key]})"
    return f"{section}[{i}]"


def _path_text(loc: Sequence[str | int], start: int) -> str:
    out = ""
    for part in loc[start:]:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_UNKNOWN_KEY = frozenset({"unexpected_keyword_argument", "extra_forbidden"})
"""pydantic's error types for a key the type does not have (dataclass / BaseModel spelling)."""
_MISSING = frozenset({"missing", "missing_argument", "missing_keyword_only_argument"})


def _problem_from_pydantic(err: Any, file: str, doc: Any, index: dict[tuple[str | int, ...], int]) -> Problem:
    loc = [
        p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "json-or-python")))
    ]
    entry = _entry_label(doc, loc)
    start = 2 if entry else 0
    typ = err["type"]
    value = err.get("input")
    msg = err["msg"]
    hint = None
    if typ == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
        msg = f"expected a quoted version string, got the number {value!r}"
        hint = "quote version numbers: YAML reads python: 3.10 as the number 3.1"
    elif typ in _UNKNOWN_KEY:
        name = loc[-1] if loc else "?"
        known = _fields_at(loc[:-1])
        suggestion = did_you_mean(str(name), known) if known else None
        msg = f"unknown key {name!r}"
        hint = suggestion or (("expected one of: " + ", ".join(known)) if known else None)
    elif typ in _MISSING:
        msg = "required field is missing"
    elif typ == "dataclass_type":
        msg = f"expected a mapping, got {_kind(value)}"
    elif typ == "literal_error":
        msg = f"got {value!r}; {msg.lower()}"
    elif typ == "value_error":
        msg = msg.removeprefix("Value error, ")
    return Problem(file, _line_for(index, loc), entry, _path_text(loc, start), msg, hint)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return type(value).__name__


def _fields_at(loc: Sequence[str | int]) -> list[str]:
    """Field names of the value type at a location (for did-you-mean on unknown keys)."""
    cls: Any = MatrixFile
    for part in loc:
        if isinstance(part, int):
            continue
        hints = _field_types(cls)
        if part in hints:
            cls = _inner_value_type(hints[part])
            if cls is None:
                return []
        # else: a dict key (components.<key>, artifacts.<arch>) keeps the value type
    return values.field_names(cls)


@cache
def _field_types(cls: type[Any]) -> dict[str, Any]:
    """The resolved field annotations of a value class (they are strings in the class itself)."""
    import typing

    return typing.get_type_hints(cls)


def _inner_value_type(ann: Any) -> Any:
    """The value class inside an annotation (``tuple[Stack, ...]``, ``dict[Arch, Artifact] | None``)."""
    import typing

    if isinstance(ann, type) and dataclasses.is_dataclass(ann):
        return ann
    for arg in typing.get_args(ann):
        found = _inner_value_type(arg)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------------------------
# loading


def _matrix_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files.extend(
                sorted(
                    f
                    for f in path.iterdir()
                    if f.is_file() and f.suffix in {".yaml", ".yml", ".json"} and f.name != "schema.json"
                )
            )
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(
                f"matrix file {str(path)!r} does not exist", hint="pass a matrix .yaml file or a folder"
            )
    return files


def _decode(raw: bytes) -> str:
    """Bytes to text as ``Path.read_text(encoding="utf-8")`` reads them (universal newlines)."""
    text = raw.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _read_doc(path: Path, raw: bytes | None = None) -> tuple[Any, str, list[Problem]]:
    import yaml

    try:
        text = _decode(path.read_bytes() if raw is None else raw)
    except (OSError, UnicodeDecodeError) as exc:
        return None, "", [Problem(str(path), None, None, "", f"cannot read file: {exc}")]
    try:
        if path.suffix == ".json":
            return json.loads(text), text, []
        try:
            return yaml.load(text, Loader=_strict_yaml_loader()), text, []
        except _DuplicateKey:  # reported beside any other problem of the file (the last key is kept)
            return yaml.load(text, Loader=_yaml_loader()), text, _dup_problems(path, text)
    except json.JSONDecodeError as exc:
        return None, text, [Problem(str(path), exc.lineno, None, "", f"invalid JSON: {exc.msg}")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        return None, text, [Problem(str(path), line, None, "", f"invalid YAML: {problem}")]


def _validate_file(path: Path, raw: bytes | None = None) -> tuple[MatrixFile | None, Any, str, list[Problem]]:
    """Validate one file (``raw``: its bytes, already read). ``doc`` is None for a valid JSON file.

    JSON is validated straight from the bytes (pydantic's JSON parser, no intermediate objects);
    only when that fails is it parsed again the slow way, so that errors read exactly the same.
    """
    ValidationError = values.validation_error(f"matrix file {path}")

    if path.suffix == ".json":
        try:
            data = path.read_bytes() if raw is None else raw
            return values.validate_json(MatrixFile, data), None, "", []
        except (OSError, ValidationError):
            pass  # the slow path below reports it, with the entry labels
    doc, text, problems = _read_doc(path, raw)
    if problems and doc is None:
        return None, doc, text, problems
    if not isinstance(doc, dict):
        return (
            None,
            doc,
            text,
            [
                Problem(
                    str(path), 1, None, "", "expected a mapping with schema_version: 1 and matrix sections"
                )
            ],
        )
    try:
        valid = values.validate(MatrixFile, doc)
    except ValidationError as exc:
        index = _line_index(text) if path.suffix != ".json" else {}
        out = [_problem_from_pydantic(e, str(path), doc, index) for e in exc.errors(include_url=False)]
        return None, doc, text, out + problems  # problems: the duplicate keys, if any
    return (None if problems else valid), doc, text, problems


def _dup_problems(path: Path, text: str) -> list[Problem]:
    if path.suffix == ".json":
        return []
    return [
        Problem(
            str(path), line, None, _path_text(list(p), 0), f"duplicate key {key!r} (the last one would win)"
        )
        for line, p, key in _duplicate_keys(text)
    ]


class Matrix:
    """The merged, validated matrix with indexes and rule queries. Treat as read-only."""

    def __init__(self, files: Sequence[tuple[Path, MatrixFile]]) -> None:
        self.files: tuple[Path, ...] = tuple(p for p, _ in files)
        self.parts: tuple[MatrixFile, ...] = tuple(mf for _, mf in files)
        """The validated files, in the order of :attr:`files`."""
        parts = self.parts
        self.sources: dict[str, Source] = {s.id: s for mf in parts for s in mf.sources}
        hw = [mf.hardware for mf in parts if mf.hardware is not None]
        self.hardware = Hardware(
            families=tuple(f for h in hw for f in h.families),
            socs=tuple(s for h in hw for s in h.socs),
            board_aliases=tuple(a for h in hw for a in h.board_aliases),
            memory=tuple(m for h in hw for m in h.memory),
        )
        self.torch_npu: tuple[TorchNpuRow, ...] = tuple(r for mf in parts for r in mf.torch_npu)
        self.python_rows: tuple[PythonSupportRow, ...] = tuple(r for mf in parts for r in mf.python_support)
        self.wheels: tuple[WheelRow, ...] = tuple(r for mf in parts for r in mf.wheels)
        self.lifecycle: tuple[LifecycleRow, ...] = tuple(r for mf in parts for r in mf.lifecycle)
        self.hdk: tuple[HdkRow, ...] = tuple(r for mf in parts for r in mf.hdk)
        self.installers: tuple[InstallerPattern, ...] = tuple(r for mf in parts for r in mf.installers)
        self.companions: tuple[CompanionRule, ...] = tuple(r for mf in parts for r in mf.companions)
        self.stacks: tuple[Stack, ...] = tuple(s for mf in parts for s in mf.stacks)
        self._stacks_by_id = {s.id: s for s in self.stacks}
        self._memo: dict[tuple[Any, ...], Any] = {}

    # -- identity ---------------------------------------------------------------------------

    @cached_property
    def canonical_json(self) -> str:
        """Canonical JSON of the merged content (sections concatenated in file-name order)."""
        merged: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        dumps = [values.dump(mf, exclude_none=True) for mf in self.parts]
        for section in SECTIONS:
            if section == "hardware":
                merged[section] = values.dump(self.hardware, exclude_none=True)
                continue
            merged[section] = [item for d in dumps for item in d.get(section, ())]
        return json.dumps(merged, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @cached_property
    def digest(self) -> str:
        """``sha256:<hex>`` of :attr:`canonical_json` (goes into image labels and certificates)."""
        return "sha256:" + hashlib.sha256(self.canonical_json.encode("utf-8")).hexdigest()

    # -- stacks -----------------------------------------------------------------------------

    def stack(self, stack_id: str) -> Stack:
        try:
            return self._stacks_by_id[stack_id]
        except KeyError:
            pass
        lowered = stack_id.strip().lower()
        if lowered in self._stacks_by_id:
            return self._stacks_by_id[lowered]
        raise NotFoundError(
            f"no stack {stack_id!r} in the matrix",
            hint=did_you_mean(stack_id, list(self._stacks_by_id)) or "list them with `cannenv matrix list`",
        )

    def find_stacks(self, *, family: str | None = None, arch: str | None = None, **pins: str) -> list[Stack]:
        """Stacks matching a family, arch and exact component pins (python by major.minor)."""
        out = []
        for s in self.stacks:
            if family and s.family != family:
                continue
            if arch and arch not in s.arches:
                continue
            if all(component_matches(k, v, s.version(k)) for k, v in pins.items()):
                out.append(s)
        return out

    # -- torch_npu / python ------------------------------------------------------------------

    def torch_npu_rows(
        self,
        *,
        cann: str | None = None,
        torch: str | None = None,
        torch_npu: str | None = None,
        python: str | None = None,
        include_superseded: bool = False,
    ) -> list[TorchNpuRow]:
        out = []
        for row in self.torch_npu:
            if row.status == "superseded" and not include_superseded:
                continue
            if cann and not component_matches("cann", cann, row.cann):
                continue
            if torch and not component_matches("torch", torch, row.torch):
                continue
            if torch_npu and not component_matches("torch_npu", torch_npu, row.torch_npu):
                continue
            if python and not self.python_ok(row.torch, python):
                continue
            out.append(row)
        return out

    def cann_versions(self) -> list[str]:
        vals = {r.cann for r in self.torch_npu} | {c for r in self.hdk for c in r.cann}
        return sorted(vals, key=_cann)

    def python_support(self, torch: str) -> PythonSupport:
        rows = [r for r in self.python_rows if any(component_matches("torch", t, torch) for t in r.torch)]
        current: tuple[str, ...] = ()
        older: list[tuple[str, ...]] = []
        for r in rows:
            if r.statement == "current":
                current = tuple(dict.fromkeys((*current, *r.python)))
            else:
                older.append(r.python)
        return PythonSupport(torch, current, tuple(older), tuple(rows))

    def python_ok(self, torch: str, python: str) -> bool:
        """Python supported by the torch line (current statement; older statements are narrower)."""
        support = self.python_support(torch)
        return any(same_python_line(p, python) for p in support.any_statement)

    def wheel_published(self, torch_npu: str, python: str, *, arch: str | None = None) -> bool | None:
        """Whether PyPI has a torch-npu wheel for this Python (None: no data for that Python/arch)."""
        rows = [
            r
            for r in self.wheels
            if same_python_line(r.python, python) and (arch is None or arch in r.arches)
        ]
        if not rows:
            return None
        return any(_in_range("pep440", spec, torch_npu) for r in rows for spec in r.torch_npu)

    # -- HDK -------------------------------------------------------------------------------

    def hdk_pairs(
        self, cann: str, *, family: str | None = None, include_unstated: bool = True
    ) -> list[HdkRow]:
        """HDK rows for a CANN version (exact, else its release), strongest evidence first."""
        target = _cann(cann)
        candidates = [target]
        if target.release != target:
            candidates.append(target.release)
        out: list[HdkRow] = []
        for row in self.hdk:
            if not any(_cann(c) in candidates for c in row.cann):
                continue
            if family and row.families is not None and family not in row.families:
                continue
            if family and row.families is None and not include_unstated:
                continue
            out.append(row)
        return sorted(out, key=lambda r: (EVIDENCE_RANK[r.evidence], r.families is None))

    def firmware_for_driver(self, driver: str, *, family: str | None = None) -> HdkRow | None:
        """The HDK row that pairs ``driver`` (or its driver file version) with a firmware version,
        strongest evidence first; None when no source names that firmware."""
        want = _drv(driver)
        rows = [
            r
            for r in self.hdk
            if r.firmware is not None
            and (want in {_drv(d) for d in r.driver} or (r.driver_file and _drv(r.driver_file) == want))
            and (family is None or r.families is None or family in r.families)
        ]
        rows.sort(key=lambda r: (EVIDENCE_RANK[r.evidence], r.families is None))
        return rows[0] if rows else None

    def driver_requirement(self, cann: str, family: str) -> DriverRequirement | None:
        key = ("driver_requirement", cann, family)
        if key not in self._memo:
            self._memo[key] = self._driver_requirement(cann, family)
        result: DriverRequirement | None = self._memo[key]
        return result

    def _driver_requirement(self, cann: str, family: str) -> DriverRequirement | None:
        """Driver range a CANN version needs on a family, from the strongest evidence available.

        The minimum is the oldest driver paired with that CANN by the strongest kind of evidence;
        newer drivers are assumed to be accepted (no source states an upper bound) unless a row
        states ``driver_range``. Rows that do not name a family are not used here.
        """
        rows = [
            r
            for r in self.hdk_pairs(cann, family=family, include_unstated=False)
            if r.driver or r.driver_range
        ]
        if not rows:
            return None
        best = min(EVIDENCE_RANK[r.evidence] for r in rows)
        chosen = tuple(r for r in rows if EVIDENCE_RANK[r.evidence] == best)
        explicit = [r.driver_range for r in chosen if r.driver_range]
        drivers = sorted({d for r in chosen for d in r.driver}, key=_drv)
        minimum = drivers[0] if drivers else None
        note = "minimum = oldest paired HDK; newer HDKs assumed compatible (no upper bound published)"
        if explicit:
            rng = explicit[0]
            note = "range stated by the source"
        elif minimum:
            rng = f">={minimum}"
        else:  # pragma: no cover - rows have driver or driver_range
            return None
        first = next((r for r in chosen if minimum and minimum in r.driver), chosen[0])
        return DriverRequirement(
            cann=str(_cann(cann)),
            family=family,
            minimum=minimum,
            range=rng,
            evidence=chosen[0].evidence,
            rows=chosen,
            hdk=first.hdk or (_drv(minimum).hdk if minimum else None),
            firmware=first.firmware,
            note=note,
        )

    def cann_accepting_driver(self, driver: str, *, family: str | None = None) -> list[DriverRequirement]:
        """CANN releases whose driver requirement admits ``driver`` (newest first)."""
        fams = [family] if family else list(FAMILY_IDS)
        out = []
        for cann in self.cann_versions():
            for fam in fams:
                req = self.driver_requirement(cann, fam)
                if req is not None and req.accepts(driver):
                    out.append(req)
        return sorted(out, key=lambda r: (_cann(r.cann), r.family), reverse=True)

    # -- installers ----------------------------------------------------------------------------

    def installer_file(
        self, component: str, version: str, family: str, arch: str, *, cann: str | None = None
    ) -> InstallerName:
        """The installer file name for a component in the era of ``cann`` (default: ``version``)."""
        era = cann or version
        hits = [
            p
            for p in self.installers
            if p.component == component
            and (p.families is None or family in p.families)
            and _in_range("cann", p.cann, era)
        ]
        if not hits:
            raise NotFoundError(
                f"no installer name pattern for {component} {version} on {family} (CANN era {era})",
                hint="installer name patterns live in matrices/installers.yaml; add one there",
            )
        pat = sorted(hits, key=lambda p: p.families is None)[0]
        hdk_arch = "x86-64" if arch == "x86_64" else arch
        file = pat.pattern.format(version=version, arch=arch, hdk_arch=hdk_arch)
        return InstallerName(component, pat.package, file, pat.sources, pat.note)

    def ops_package(self, cann: str, family: str, arch: str) -> InstallerName:
        """The chip ops/kernels package for a toolkit version (renamed at 8.5)."""
        return self.installer_file("ops", str(_cann(cann)), family, arch)

    def companion_versions(self, component: str, cann: str) -> tuple[str, ...]:
        """Versions of ``ops``/``nnal`` that go with toolkit ``cann``."""
        canon = str(_cann(cann))
        rules = [r for r in self.companions if r.component == component and _in_range("cann", r.cann, canon)]
        if not rules:
            return ()
        out: dict[str, None] = {}
        for r in rules:
            if r.same_version:
                out[canon] = None
            out.update(dict.fromkeys(r.also))
        return tuple(out)

    # -- consistency ----------------------------------------------------------------------------

    def stack_problems(self, stack: Stack) -> list[str]:
        """Rules the stack breaks (empty list: consistent with the matrix's rules)."""
        out: list[str] = []
        v = stack.version
        cann, torch, tnpu, py, drv = v("cann"), v("torch"), v("torch_npu"), v("python"), v("driver")
        if cann and torch and tnpu:
            rows = self.torch_npu_rows(cann=cann, torch=torch)
            if not rows:
                out.append(f"no torch_npu row pairs torch {torch} with CANN {cann}")
            elif not any(_pep(r.torch_npu) == _pep(tnpu) for r in rows):
                out.append(
                    f"torch_npu {tnpu} is not the torch_npu listed for torch {torch} + CANN {cann} "
                    f"({', '.join(r.torch_npu for r in rows)})"
                )
        if torch and py and not self.python_ok(torch, py):
            out.append(f"torch {torch} does not support Python {py}")
        if tnpu and py:
            for arch in stack.arches:
                if self.wheel_published(tnpu, py, arch=arch) is False:
                    out.append(f"no torch-npu {tnpu} wheel for Python {py} on {arch}")
        if cann and drv:
            req = self.driver_requirement(cann, stack.family)
            if req is None:
                out.append(f"no HDK pairing for CANN {cann} on {stack.family}")
            elif not req.accepts(drv):
                out.append(
                    f"driver {drv} outside {req.range} required by CANN {cann} on {stack.family} "
                    f"({req.evidence})"
                )
        for key in ("ops", "nnal"):
            companion = v(key)
            if cann and companion:
                allowed = self.companion_versions(key, cann)
                if allowed and not any(_cann(companion) == _cann(a) for a in allowed):
                    out.append(
                        f"{key} {companion} does not go with toolkit CANN {cann} "
                        f"(allowed: {', '.join(allowed)})"
                    )
        for key, comp in stack.components.items():
            if key not in ("cann", "ops", "nnal", "driver", "firmware") or not cann:
                continue
            for arch, art in comp.artifacts.items():
                try:
                    expected = self.installer_file(key, comp.version, stack.family, arch, cann=cann).file
                except NotFoundError:
                    continue
                if art.file != expected:
                    out.append(
                        f"{key} file {art.file!r} for {arch} does not match the era's name {expected!r}"
                    )
        return out

    def lint_problems(self) -> list[str]:
        """Cross-entry consistency of the whole matrix (used by `cannenv matrix lint` and tests)."""
        out: list[str] = []
        for s in self.stacks:
            out.extend(f"stack {s.id}: {p}" for p in self.stack_problems(s))
        return out


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


# ---------------------------------------------------------------------------------------------
# cross-entry checks


class _Checker:
    """Cross-entry problems, located (file:line, entry) in the file being checked."""

    def __init__(self, sources: set[str]) -> None:
        self.sources = sources
        self.good: set[tuple[str, ...]] = set()
        """source-id tuples found all declared (checked once)"""
        self.problems: list[Problem] = []
        self._file, self._text, self._doc = "", "", None
        self._index: dict[tuple[str | int, ...], int] | None = None

    def open(self, path: Path, text: str, doc: Any) -> None:
        """Locate the problems added from now on in this file."""
        self._file, self._text, self._doc, self._index = str(path), text, doc, None

    def add(self, loc: list[str | int], msg: str, hint: str | None = None) -> None:
        if self._index is None:  # composed once per file, on its first problem (not once per problem)
            self._index = _line_index(self._text) if self._text and not self._file.endswith(".json") else {}
        if self._doc is None:  # a JSON file validated straight from bytes: parse it now, for the labels
            self._doc = _read_doc(Path(self._file))[0]
        entry = _entry_label(self._doc, loc)
        self.problems.append(
            Problem(
                self._file, _line_for(self._index, loc), entry, _path_text(loc, 2 if entry else 0), msg, hint
            )
        )

    def check_sources(self, loc: list[str | int], ids: tuple[str, ...]) -> None:
        """Each id is declared in a sources section (not checked when no file declares any)."""
        if not self.sources or ids in self.good:
            return
        if all(sid in self.sources for sid in ids):
            self.good.add(ids)
            return
        for j, sid in enumerate(ids):
            if sid not in self.sources:
                self.add(
                    [*loc, j],
                    f"unknown source id {sid!r}",
                    did_you_mean(sid, self.sources)
                    or "declare it in the sources section (matrices/sources.yaml)",
                )


_COMPONENT_KEY_RE = re.compile(r"[a-z][a-z0-9_-]*")
_DIGEST_RE = re.compile(r"(sha256:)?[0-9a-f]{64}")


def _semantic_checks(loaded: list[tuple[Path, MatrixFile, Any, str]]) -> list[Problem]:
    chk = _Checker({s.id for _, mf, _, _ in loaded for s in mf.sources})
    seen_stacks: dict[str, str] = {}
    seen_sources: dict[str, str] = {}
    seen_socs: dict[str, str] = {}
    family_defs = {f.id for _, mf, _, _ in loaded if mf.hardware for f in mf.hardware.families}
    good_keys: set[str] = set()

    for path, mf, doc, text in loaded:
        f = str(path)
        chk.open(path, text, doc)
        for i, s in enumerate(mf.sources):
            if s.id in seen_sources:
                chk.add(["sources", i, "id"], f"source id {s.id!r} already defined in {seen_sources[s.id]}")
            seen_sources[s.id] = f
        if mf.hardware:
            for i, soc_entry in enumerate(mf.hardware.socs):
                key = soc_entry.name.lower()
                if key in seen_socs:
                    chk.add(["hardware", "socs", i, "name"], f"SoC {soc_entry.name!r} listed twice")
                seen_socs[key] = f
                chk.check_sources(["hardware", "socs", i, "sources"], soc_entry.sources)
            for i, fam in enumerate(mf.hardware.families):
                chk.check_sources(["hardware", "families", i, "sources"], fam.sources)
            for i, mem in enumerate(mf.hardware.memory):
                chk.check_sources(["hardware", "memory", i, "sources"], mem.sources)
                if (mem.soc is None) == (mem.family is None):
                    chk.add(["hardware", "memory", i], "name exactly one of soc or family")
        for section in (
            "torch_npu",
            "python_support",
            "wheels",
            "lifecycle",
            "hdk",
            "installers",
            "companions",
        ):
            for i, row in enumerate(getattr(mf, section)):
                chk.check_sources([section, i, "sources"], row.sources)
        # (the `not in chk.good` tests below skip building a location list for known-good sources)
        for i, st in enumerate(mf.stacks):
            if st.id in seen_stacks:
                chk.add(["stacks", i, "id"], f"stack id {st.id!r} already defined in {seen_stacks[st.id]}")
            seen_stacks[st.id] = f
            if st.sources not in chk.good:
                chk.check_sources(["stacks", i, "sources"], st.sources)
            if family_defs and st.family not in family_defs:
                chk.add(["stacks", i, "family"], f"family {st.family!r} has no hardware entry")
            for key, comp in st.components.items():
                loc: list[str | int] = ["stacks", i, "components", key]
                if key not in good_keys and not _COMPONENT_KEY_RE.fullmatch(key):
                    chk.add(
                        loc,
                        f"bad component key {key!r}",
                        "lower-case letters, digits, '_' and '-' (core: " + ", ".join(CORE_COMPONENTS) + ")",
                    )
                    continue
                good_keys.add(key)
                if (
                    comp.scheme is not None
                    and key in COMPONENT_SCHEME
                    and comp.scheme != COMPONENT_SCHEME[key]
                ):
                    chk.add(
                        [*loc, "scheme"],
                        f"{key} versions use the {COMPONENT_SCHEME[key]} grammar, not {comp.scheme}",
                    )
                try:
                    _parsed(comp.scheme or COMPONENT_SCHEME.get(key, "pep440"), comp.version)
                except VersionError as exc:
                    chk.add([*loc, "version"], exc.message, exc.hint)
                if comp.sources not in chk.good:
                    chk.check_sources([*loc, "sources"], comp.sources)
                for arch, art in comp.artifacts.items():
                    if arch not in st.arches:
                        chk.add(
                            [*loc, "artifacts", arch],
                            f"artifact for {arch}, but the stack's arches are {', '.join(st.arches)}",
                        )
                    if art.sources not in chk.good:
                        chk.check_sources([*loc, "artifacts", arch, "sources"], art.sources)
            for j, digest in enumerate(st.certificates):
                if not _DIGEST_RE.fullmatch(digest):
                    chk.add(
                        ["stacks", i, "certificates", j],
                        f"{digest!r} is not a sha256 digest",
                        "expected sha256:<64 hex digits>",
                    )
    return chk.problems


@contextlib.contextmanager
def _gc_paused(freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects that all stay alive.

    Validation allocates hundreds of thousands of containers; each allocation burst triggers a
    collection that walks everything built so far (2.5x slower on 10,000 stacks). Nothing built
    here is garbage, so nothing is lost by collecting later. With ``freeze`` (large matrices) the
    objects are moved to the permanent generation (:func:`gc.freeze`) before collection resumes:
    they live as long as the matrix, and otherwise the next collections walk them all again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


def load_files(files: Sequence[Path], *, use_cache: bool = True) -> Matrix:
    """Load and validate matrix files; all problems of all files are reported in one error.

    A valid matrix is kept in the on-disk cache (:func:`cache_dir`) under a key that covers the
    exact bytes and names of the files and the code that validates them, so a later load of the
    same content skips parsing and validation; invalid data is never cached.
    """
    raws: list[bytes | None] = []
    for path in files:
        try:
            raws.append(path.read_bytes())
        except OSError:
            raws.append(None)
    key = _cache_key(files, raws) if use_cache else None
    if key is not None:
        hit = _cache_read(key)
        if hit is not None:
            return hit
    problems: list[Problem] = []
    loaded: list[tuple[Path, MatrixFile, Any, str]] = []
    large = sum(len(r or b"") for r in raws) > _CACHE_MAX_INPUT
    with _gc_paused(freeze=large):
        for path, raw in zip(files, raws, strict=True):
            mf, doc, text, probs = _validate_file(path, raw)
            problems.extend(probs)
            if mf is not None:
                loaded.append((path, mf, doc, text))
        problems.extend(_semantic_checks(loaded))
        if problems:
            raise MatrixError(problems)
        result = Matrix([(p, mf) for p, mf, _, _ in loaded])
        if key is not None:
            _cache_write(key, result)
    return result


# ---------------------------------------------------------------------------------------------
# the validated-matrix cache

CACHE_FORMAT = 1
"""Bump when the cached object layout changes without a change in the files hashed below."""
_CACHE_MAX_INPUT = 4 << 20
"""Inputs larger than this are not cached: unpickling them costs about as much as validating."""
_CACHE_KEEP = 32
"""Cache files kept per folder (oldest removed first)."""


def cache_dir() -> Path | None:
    """Where validated matrices are cached; None when caching is off (``CANNENV_NO_CACHE=1``).

    ``$CANNENV_CACHE_DIR``, else ``$XDG_CACHE_HOME/cannenv``, else ``~/.cache/cannenv``.
    """
    if os.environ.get("CANNENV_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("CANNENV_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "cannenv"
    try:
        return Path.home() / ".cache" / "cannenv"
    except (RuntimeError, KeyError):  # no home directory
        return None


@cache
def _code_fingerprint() -> bytes | None:
    """Hash of everything that shapes a loaded Matrix besides the data: the code and its versions.

    None (no caching) when a module's source cannot be read (e.g. running from a zipapp).

    pydantic is identified by its ``version.py`` (its version and the one pydantic-core version it
    runs with), read without importing pydantic: a warm load must not pay for that import.
    """
    from importlib.util import find_spec

    from cannenv import __version__

    try:
        spec = find_spec("pydantic")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    h = hashlib.sha256()
    h.update(f"{CACHE_FORMAT}|{__version__}|{sys.version}".encode())
    here = Path(__file__)
    for module_file in (
        here,
        here.with_name("soc.py"),
        here.with_name("values.py"),
        here.with_name("versions.py"),  # (by path: importing it for its name costs ~15 ms)
        Path(spec.origin).with_name("version.py"),
    ):
        try:
            h.update(module_file.read_bytes())
        except OSError:
            return None
    return h.digest()


def _cache_key(files: Sequence[Path], raws: Sequence[bytes | None]) -> str | None:
    if any(r is None for r in raws) or sum(len(r or b"") for r in raws) > _CACHE_MAX_INPUT:
        return None
    code = _code_fingerprint()
    if code is None or cache_dir() is None:
        return None
    h = hashlib.sha256(code)
    for path, raw in zip(files, raws, strict=True):
        name = str(path).encode("utf-8", "surrogateescape")
        h.update(len(name).to_bytes(8, "big") + name)
        h.update(len(raw or b"").to_bytes(8, "big") + (raw or b""))
    return h.hexdigest()


def _cache_read(key: str) -> Matrix | None:
    import pickle

    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = (folder / f"matrix-{key}.pickle").read_bytes()
    except OSError:
        return None
    try:
        obj = pickle.loads(data)
    except Exception:  # corrupt or written by other code: validate instead
        return None
    return obj if isinstance(obj, Matrix) else None


def _cache_write(key: str, m: Matrix) -> None:
    import pickle

    from cannenv.fsutil import atomic_write_bytes

    folder = cache_dir()
    if folder is None:
        return
    try:
        atomic_write_bytes(folder / f"matrix-{key}.pickle", pickle.dumps(m, pickle.HIGHEST_PROTOCOL))
        old = sorted(folder.glob("matrix-*.pickle"), key=lambda f: f.stat().st_mtime)
        for f in old[:-_CACHE_KEEP]:
            f.unlink()
    except Exception:  # unwritable, full, raced by another process: the cache is only a shortcut
        return


def load(paths: Sequence[str | Path] | None = None) -> Matrix:
    """The matrix from ``paths`` (files or folders), or the shipped one (cached) when None."""
    if paths is None:
        return _load_shipped()
    return load_files(_matrix_files(paths))


_SHIPPED: dict[str, Matrix] = {}
"""The shipped matrix once loaded in this process (from the cache or validated): loaded once."""


def _load_shipped() -> Matrix:
    hit = _SHIPPED.get("matrix")
    if hit is None:
        from cannenv.resources import matrices_dir

        hit = _SHIPPED["matrix"] = load_files(_matrix_files([matrices_dir()]))
    return hit


def shipped_if_cached() -> Matrix | None:
    """The shipped matrix when it is already loaded or the validated-matrix cache holds it, else None.

    Never parses or validates: for callers that only need part of the matrix (``soc.hardware()``)
    and have a cheaper way of their own when the cache is cold. A hit is kept, so a later
    :func:`load` in the same process reuses it instead of reading the cache again.
    """
    hit = _SHIPPED.get("matrix")
    if hit is not None:
        return hit
    from cannenv.errors import CannenvError
    from cannenv.resources import matrices_dir

    try:
        files = _matrix_files([matrices_dir()])
        raws: list[bytes | None] = [path.read_bytes() for path in files]
    except (CannenvError, OSError):
        return None
    key = _cache_key(files, raws)
    hit = _cache_read(key) if key is not None else None
    if hit is not None:
        _SHIPPED["matrix"] = hit
    return hit


def check_file(path: str | Path) -> list[Problem]:
    """Problems of one file on its own (schema + entries), without raising."""
    mf, doc, text, probs = _validate_file(Path(path))
    if mf is None:
        return probs
    return _semantic_checks([(Path(path), mf, doc, text)])
