"""Version grammars of the Ascend stack: CANN, driver/HDK, firmware, and Python packages.

Each family is its own type with its own parser; all of them are frozen, hashable and totally
ordered within the family. Unparsable strings raise :class:`~cannenv.errors.VersionError` naming
the string and the accepted shapes: never a silent ``False`` (``packaging`` >= 26 returns False for
strings it cannot parse, and ``8.0.RC3.alpha001`` or ``24.1.rc2.b030`` are not PEP 440 at all).

CANN ([research versions.md §2.4, §2.5], source ``[PT-CANNINFO]``)
    Old scheme (up to 8.3): ``8.0.RC2``, ``8.0.0``, ``8.1.RC1.alpha001``, ``8.0.0.alpha001``,
    ``8.0.RC3.beta1``, internal ``8.0.T6``, hot-fix ``6.3.RC3.1``. New scheme (from 8.5):
    ``8.5.0``, ``9.0.0-beta.1``, ``9.1.0-rc.1`` and the old-form ``8.5.0.alpha001`` (equal to
    ``8.5.0-alpha.1``). Input is case-insensitive (Docker tags write ``8.3.rc1``).

    Order inside one ``major.minor`` series: internal ``T`` builds < the RC line < the final line;
    inside each release: alpha < beta < rc (new scheme) < the release < its hot-fixes. Across
    series, ``(major, minor)`` decides, so ``8.3.RC2 < 8.5.0-beta.1 < 8.5.0 < 9.0.0-beta.1 < 9.0.0``.

    Deliberate difference from torch_npu: its C++ (``VersionToNum``) sorts ``X.Y.RCn.alphaNNN``
    just *above* ``X.Y.RCn``. Community alphas are published *before* their RC, so cannenv treats
    them as pre-releases of that RC (``8.1.RC1.alpha001 < 8.1.RC1``). torch_npu also rejects
    ``8.0.RC3.beta1`` and ``6.3.RC3.1``; cannenv accepts both.

    Pre-releases: alpha, beta, internal ``T`` builds and new-scheme ``-rc.N``. An old-scheme
    ``RCn`` is a vendor release (it ships with an HDK pairing and docs), not a pre-release.

Driver / HDK ([versions.md §2.4, §2.5], ``DriverVersionToNum``)
    ``23.0.rc3 < 23.0.3 < 24.1.rc1 < 24.1.rc2 < 24.1.rc2.2 < 24.1.rc3 < 24.1.0 < 24.1.0.1 <
    25.0.rc1.1 < 25.2.0 < 25.5.1 < 26.0.rc1``; build suffixes ``25.3.rc1.b020``,
    ``26.1.0.b083`` sort just after the plain release and before its first hot-fix (build metadata,
    not a pre-release: ``>=25.3.rc1`` admits ``25.3.rc1.b020``). ``str()`` is lower case as in
    ``version.info``; :attr:`DriverVersion.hdk` upper-cases the RC as HDK bundle names do.

Firmware: numeric, usually five parts (``7.3.0.1.231``); compared part by part, missing parts
    count as zero. The legacy 310P spelling ``6.0.rc1.2`` is accepted too.

Python packages: PEP 440 through ``packaging``, with pre-release handling always explicit.

Ranges (:class:`VersionRange`): comma-joined clauses ``OP VERSION`` with ``==, !=, >=, <=, >, <``
    (a bare version means ``==``; ``*`` or an empty string means any). A bound of only
    ``major`` or ``major.minor`` (``<26``, ``<=8.2``, ``==8.3``, ``8.3.*``) names the whole series:
    ``<26`` excludes ``26.0.rc1``; ``<=8.2`` admits ``8.2.RC1``. Pre-releases are admitted only
    with ``prereleases=True`` or when a clause of the range itself names a pre-release.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from cannenv.compat import Literal
from cannenv.errors import VersionError

if TYPE_CHECKING:
    from typing import TypeAlias  # novm: annotations only

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

Family = Literal["cann", "driver", "firmware", "pep440"]
FAMILIES: tuple[Family, ...] = ("cann", "driver", "firmware", "pep440")

# Stages inside one release: alpha < beta < rc (new scheme) < the release itself (and hot-fixes).
_ALPHA, _BETA, _RC, _RELEASE = 0, 1, 2, 3
# Lines inside one major.minor series: internal T builds < RC line < final line.
_LINE_T, _LINE_RC, _LINE_FINAL = 0, 1, 2

_V = TypeVar("_V", bound="_Ordered")
if TYPE_CHECKING:  # evaluated by type checkers only: `X | Y` and tuple[...] need 3.10/3.9 at run time
    Key: TypeAlias = tuple[int, ...]


@dataclass(frozen=True, eq=False)
class _Ordered:
    """Comparison, hashing and pydantic support from a sort ``key``; ``text`` is the spelling."""

    key: Key = field(repr=False)
    text: str

    family: ClassVar[Family]
    shapes: ClassVar[str]

    @property
    def major(self) -> int:
        return self.key[0]

    @property
    def minor(self) -> int:
        return self.key[1]

    @property
    def series(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def is_prerelease(self) -> bool:
        return False

    @classmethod
    def parse(cls: type[_V], text: str) -> _V:  # pragma: no cover - overridden
        raise NotImplementedError

    @classmethod
    def _fail(cls, text: object) -> VersionError:
        return VersionError(
            f"{text!r} is not a valid {cls.family} version",
            hint=f"expected a {cls.family} version such as {cls.shapes}",
        )

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.key))

    def _other_key(self, other: object) -> Key | None:
        if type(other) is type(self):
            assert isinstance(other, _Ordered)
            return other.key
        return None

    def __eq__(self, other: object) -> bool:
        k = self._other_key(other)
        return NotImplemented if k is None else self.key == k

    def __lt__(self, other: object) -> bool:
        k = self._other_key(other)
        return NotImplemented if k is None else self.key < k

    def __le__(self, other: object) -> bool:
        k = self._other_key(other)
        return NotImplemented if k is None else self.key <= k

    def __gt__(self, other: object) -> bool:
        k = self._other_key(other)
        return NotImplemented if k is None else self.key > k

    def __ge__(self, other: object) -> bool:
        k = self._other_key(other)
        return NotImplemented if k is None else self.key >= k

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Validate from a string (or an instance); serialise to the canonical string."""
        from pydantic_core import core_schema

        def from_str(value: str) -> _Ordered:
            try:
                return cls.parse(value)
            except VersionError as exc:
                raise ValueError(f"{exc.message}; {exc.hint}") from None

        from_text = core_schema.no_info_after_validator_function(from_str, core_schema.str_schema())
        return core_schema.json_or_python_schema(
            json_schema=from_text,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_text]),
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )


_CANN_V1 = re.compile(
    r"""^(?P<M>\d+)\.(?P<m>\d+)\.
        (?:
            T(?P<t>\d+)
          | (?:RC(?P<rc>\d+)|(?P<p>\d+))
            (?:\.(?:alpha(?P<alpha>\d+)|beta(?P<beta>\d+)|(?P<hot>\d+)))?
        )\Z""",
    re.IGNORECASE | re.VERBOSE,
)
_CANN_V2 = re.compile(
    r"^(?P<M>\d+)\.(?P<m>\d+)\.(?P<p>\d+)-(?P<stage>alpha|beta|rc)(?:\.(?P<n>\d+))?\Z", re.IGNORECASE
)


@dataclass(frozen=True, eq=False, repr=False)
class CannVersion(_Ordered):
    """A CANN release, old (``8.0.RC2``) or new (``9.0.0-beta.1``) scheme."""

    family: ClassVar[Family] = "cann"
    shapes: ClassVar[str] = (
        "8.0.RC2, 8.0.0, 8.1.RC1.alpha001, 8.0.RC3.beta1, 8.0.T6, 6.3.RC3.1, 8.5.0, 9.0.0-beta.1 "
        "or 8.5.0.alpha001"
    )

    @classmethod
    def parse(cls, text: str) -> CannVersion:
        if not isinstance(text, str):
            raise cls._fail(text)
        _check_length(text)
        s = text.strip()
        m = _CANN_V2.match(s)
        if m:
            stage = m["stage"].lower()
            n = int(m["n"]) if m["n"] else 0
            major, minor, patch = int(m["M"]), int(m["m"]), int(m["p"])
            stage_no = {"alpha": _ALPHA, "beta": _BETA, "rc": _RC}[stage]
            key = (major, minor, _LINE_FINAL, patch, stage_no, n, 0)
            spelled = f"{major}.{minor}.{patch}-{stage}" + (f".{n}" if m["n"] else "")
            return cls(key, spelled)
        m = _CANN_V1.match(s)
        if m:
            major, minor = int(m["M"]), int(m["m"])
            if m["t"] is not None:
                t = int(m["t"])
                return cls((major, minor, _LINE_T, t, _RELEASE, 0, 0), f"{major}.{minor}.T{t}")
            if m["rc"] is not None:
                line, rel = _LINE_RC, int(m["rc"])
                base = f"{major}.{minor}.RC{rel}"
            else:
                line, rel = _LINE_FINAL, int(m["p"])
                base = f"{major}.{minor}.{rel}"
            if m["alpha"] is not None:
                a = int(m["alpha"])
                return cls((major, minor, line, rel, _ALPHA, a, 0), f"{base}.alpha{a:03d}")
            if m["beta"] is not None:
                b = int(m["beta"])
                return cls((major, minor, line, rel, _BETA, b, 0), f"{base}.beta{b}")
            hot = int(m["hot"]) if m["hot"] is not None else 0
            spelled = base + (f".{hot}" if m["hot"] is not None else "")
            return cls((major, minor, line, rel, _RELEASE, 0, hot), spelled)
        raise cls._fail(text)

    @property
    def scheme(self) -> Literal["v1", "v2"]:
        """``v2`` (SemVer-like, on-disk ``cann-<ver>`` layout) from 8.5 on, else ``v1``."""
        return "v2" if (self.major, self.minor) >= (8, 5) else "v1"

    @property
    def is_prerelease(self) -> bool:
        return self.key[2] == _LINE_T or self.key[4] != _RELEASE

    @property
    def release(self) -> CannVersion:
        """The release this version belongs to: ``8.1.RC1.alpha001`` → ``8.1.RC1``."""
        major, minor, line, rel = self.key[:4]
        if line == _LINE_T:
            return self
        text = f"{major}.{minor}.RC{rel}" if line == _LINE_RC else f"{major}.{minor}.{rel}"
        return CannVersion((major, minor, line, rel, _RELEASE, 0, 0), text)

    @property
    def tag(self) -> str:
        """Lower-case spelling used in Docker tags (``8.3.rc1``, ``8.0.rc3.beta1``)."""
        return self.text.lower()


_DRIVER = re.compile(
    r"""^(?P<M>\d+)\.(?P<m>\d+)\.
        (?:
            T(?P<t>\d+)
          | (?:RC(?P<rc>\d+)|(?P<p>\d+))
            (?:\.(?:alpha(?P<alpha>\d+)|beta(?P<beta>\d+)|spc(?P<spc>\d+)|(?P<hot>\d+)))?
            (?:\.b(?P<build>\d+))?
        )\Z""",
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True, eq=False, repr=False)
class DriverVersion(_Ordered):
    """An NPU driver / Ascend HDK version (``24.1.rc2.2``, ``25.3.rc1.b020``, ``23.0.3``).

    Old drivers carry a service-pack suffix (``20.2.2.spc001``, a 910A ``npu-smi`` header): it
    takes the hot-patch place, after the plain release and before the next one. The two
    spellings are not known to meet in one era, so ``20.2.2.spc001`` and ``20.2.2.1`` compare equal.
    """

    family: ClassVar[Family] = "driver"
    shapes: ClassVar[str] = (
        "23.0.3, 24.1.rc2, 24.1.rc2.2, 24.1.0.1, 25.3.rc1.b020, 26.1.0.b083 or 20.2.2.spc001"
    )

    @classmethod
    def parse(cls, text: str) -> DriverVersion:
        if not isinstance(text, str):
            raise cls._fail(text)
        _check_length(text)
        m = _DRIVER.match(text.strip())
        if not m:
            raise cls._fail(text)
        major, minor = int(m["M"]), int(m["m"])
        if m["t"] is not None:
            t = int(m["t"])
            return cls((major, minor, _LINE_T, t, _RELEASE, 0, 0, 0), f"{major}.{minor}.T{t}")
        if m["rc"] is not None:
            line, rel = _LINE_RC, int(m["rc"])
            text_ = f"{major}.{minor}.rc{rel}"
        else:
            line, rel = _LINE_FINAL, int(m["p"])
            text_ = f"{major}.{minor}.{rel}"
        stage, n, hot = _RELEASE, 0, 0
        if m["alpha"] is not None:
            stage, n = _ALPHA, int(m["alpha"])
            text_ += f".alpha{m['alpha']}"
        elif m["beta"] is not None:
            stage, n = _BETA, int(m["beta"])
            text_ += f".beta{m['beta']}"
        elif m["hot"] is not None:
            hot = int(m["hot"])
            text_ += f".{hot}"
        elif m["spc"] is not None:
            hot = int(m["spc"])
            text_ += f".spc{m['spc']}"
        build = 0
        if m["build"] is not None:
            build = int(m["build"]) + 1  # a build sorts after the plain release
            text_ += f".b{m['build']}"
        return cls((major, minor, line, rel, stage, n, hot, build), text_)

    @property
    def is_prerelease(self) -> bool:
        return self.key[2] == _LINE_T or self.key[4] != _RELEASE

    @property
    def hdk(self) -> str:
        """The HDK bundle spelling: ``24.1.rc2`` → ``24.1.RC2``."""
        return re.sub(r"\.rc(\d)", r".RC\1", self.text)


_FW_NUMERIC = re.compile(r"^\d+(?:\.\d+){1,5}\Z")
_FW_PARTS = 5


@dataclass(frozen=True, eq=False, repr=False)
class FirmwareVersion(_Ordered):
    """NPU firmware version: numeric parts (``7.3.0.1.231``); legacy ``6.0.rc1.2`` too."""

    family: ClassVar[Family] = "firmware"
    shapes: ClassVar[str] = "7.3.0.1.231, 7.7.0.1.231 or 7.0.0 (legacy 310P: 6.0.rc1.2)"

    @classmethod
    def parse(cls, text: str) -> FirmwareVersion:
        if not isinstance(text, str):
            raise cls._fail(text)
        _check_length(text)
        s = text.strip()
        if _FW_NUMERIC.match(s):
            parts = [int(p) for p in s.split(".")]
            padded = parts + [0] * (_FW_PARTS + 1 - len(parts))
            # (M, m, kind=1 numeric, rest...) keeps legacy rc spellings below numeric ones.
            return cls((padded[0], padded[1], 1, *padded[2:]), ".".join(str(p) for p in parts))
        try:
            legacy = DriverVersion.parse(s)
        except VersionError:
            raise cls._fail(text) from None
        return cls((legacy.key[0], legacy.key[1], 0, *legacy.key[2:]), legacy.text)


if TYPE_CHECKING:
    AnyVendorVersion: TypeAlias = CannVersion | DriverVersion | FirmwareVersion
    AnyVersion: TypeAlias = CannVersion | DriverVersion | FirmwareVersion | Version

_CLASSES: dict[Family, type[CannVersion] | type[DriverVersion] | type[FirmwareVersion]] = {
    "cann": CannVersion,
    "driver": DriverVersion,
    "firmware": FirmwareVersion,
}


_NAME_SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """PEP 503 normalised project name (what ``packaging.utils.canonicalize_name`` returns).

    Spelled out here because importing :mod:`packaging.utils` pulls in ``packaging.tags`` and the
    ELF/manylinux readers, a few ms of every doctor run for a one-line rule.
    """
    return _NAME_SEPARATORS.sub("-", name).lower()


def _packaging_version() -> Any:
    """``packaging.version``, imported on first use: the facts path (the fleet bundle, on host
    Pythons down to 3.7, which packaging >= 22 no longer supports) never parses PEP 440 versions."""
    from packaging import version

    return version


MAX_VERSION_CHARS = 128
"""The longest version text parsed (real ones have under 40 characters): a 5,000-digit "version"
from a facts file or a tree is a VersionError, never Python's int-digits ValueError."""


def _check_length(text: str) -> None:
    if len(text) > MAX_VERSION_CHARS:
        raise VersionError(
            f"{text[:40]!r}... ({len(text)} characters) is not a version: "
            f"at most {MAX_VERSION_CHARS} characters are parsed"
        )


def parse_pep440(text: str) -> Version:
    """A Python package version; raises :class:`VersionError` instead of returning junk."""
    if not isinstance(text, str):
        raise VersionError(
            f"{text!r} is not a version string",
            hint="quote version numbers in YAML (python: '3.10', not python: 3.10)",
        )
    _check_length(text)
    pv = _packaging_version()
    try:
        parsed: Version = pv.Version(text.strip())
        return parsed
    except pv.InvalidVersion:
        raise VersionError(
            f"{text!r} is not a valid PEP 440 version",
            hint="expected a Python package version such as 2.1.0, 2.1.0.post17, 2.10.0rc2 or 3.11",
        ) from None


def parse_version(family: Family, text: str) -> AnyVersion:
    """Parse ``text`` in the grammar of ``family``."""
    if family == "pep440":
        return parse_pep440(text)
    try:
        cls = _CLASSES[family]
    except KeyError:
        raise VersionError(
            f"unknown version family {family!r}", hint="one of: " + ", ".join(FAMILIES)
        ) from None
    return cls.parse(text)


_OPS = ("==", "!=", ">=", "<=", ">", "<")
_COMPARE: dict[str, Callable[[Key, Key], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
_CLAUSE = re.compile(r"^(==|!=|>=|<=|>|<)?\s*([^\s=!<>]+)\Z")  # on a stripped clause
_SERIES = re.compile(r"^(\d+)(?:\.(\d+))?(?:\.\*)?\Z")


@dataclass(frozen=True)
class _Clause:
    op: str
    bound: AnyVendorVersion | None  # None: series bound given by ``prefix``
    prefix: tuple[int, ...] = ()

    def admits(self, v: AnyVendorVersion) -> bool:
        if self.bound is not None:
            a, b = v.key, self.bound.key
        else:
            a, b = v.key[: len(self.prefix)], self.prefix
        compare = _COMPARE.get(self.op)
        if compare is None:  # pragma: no cover
            raise AssertionError(self.op)
        return compare(a, b)

    def __str__(self) -> str:
        return f"{self.op}{self.bound if self.bound is not None else '.'.join(map(str, self.prefix))}"


@dataclass(frozen=True)
class VersionRange:
    """A set of versions of one family, e.g. ``>=24.1.rc2,<26`` (driver)."""

    family: Family
    text: str
    _clauses: tuple[_Clause, ...] = field(default=(), repr=False)
    _spec: SpecifierSet | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, family: Family, text: str) -> VersionRange:
        if not isinstance(text, str):
            raise VersionError(
                f"{text!r} is not a version range",
                hint="write ranges as quoted strings, e.g. '>=24.1.rc2,<26'",
            )
        raw = text.strip()
        if raw in ("", "*"):
            return cls(family, "*")
        if family == "pep440":
            # Imported here: packaging.specifiers pulls in packaging.utils/tags (~8 ms), which a
            # doctor run that evaluates no Python-package range never needs.
            from packaging.specifiers import InvalidSpecifier, SpecifierSet

            try:
                spec = SpecifierSet(raw)
            except InvalidSpecifier:
                raise VersionError(
                    f"{text!r} is not a valid PEP 440 version range",
                    hint="expected clauses like '>=2.1,<2.5' or '==2.1.0.post17'",
                ) from None
            return cls(family, str(spec), _spec=spec)
        vcls = _CLASSES.get(family)
        if vcls is None:
            raise VersionError(f"unknown version family {family!r}", hint="one of: " + ", ".join(FAMILIES))
        clauses: list[_Clause] = []
        for part in raw.split(","):
            m = _CLAUSE.match(part.strip())
            if not m:
                raise VersionError(
                    f"{text!r} is not a valid {family} version range (clause {part.strip()!r})",
                    hint=f"expected clauses 'OP VERSION' joined by ',' with OP one of {' '.join(_OPS)}, "
                    f"e.g. '>=24.1.rc2,<26'",
                )
            op, ver = m[1] or "==", m[2]
            s = _SERIES.match(ver)
            if s:
                prefix = (int(s[1]),) if s[2] is None else (int(s[1]), int(s[2]))
                clauses.append(_Clause(op, None, prefix))
                continue
            try:
                clauses.append(_Clause(op, vcls.parse(ver)))
            except VersionError as exc:
                raise VersionError(
                    f"{text!r} is not a valid {family} version range: {exc.message}", hint=exc.hint
                ) from None
        return cls(family, ",".join(str(c) for c in clauses), tuple(clauses))

    @property
    def names_prerelease(self) -> bool:
        return any(c.bound is not None and c.bound.is_prerelease for c in self._clauses)

    def contains(self, version: str | AnyVersion, *, prereleases: bool = False) -> bool:
        """Whether ``version`` is in the range; pre-releases only as the docstring says."""
        if self.family == "pep440":
            v = parse_pep440(version) if isinstance(version, str) else version
            version_cls = _packaging_version().Version
            if not isinstance(v, version_cls):
                raise VersionError(f"{version!r} is not a Python package version")
            if self._spec is None:
                return prereleases or not v.is_prerelease
            allow = prereleases or any(version_cls(s.version.rstrip(".*")).is_prerelease for s in self._spec)
            return self._spec.contains(v, prereleases=allow)
        vcls = _CLASSES[self.family]
        vv = vcls.parse(version) if isinstance(version, str) else version
        if not isinstance(vv, vcls):
            raise VersionError(f"{version!r} is not a {self.family} version")
        if vv.is_prerelease and not (prereleases or self.names_prerelease):
            return False
        return all(c.admits(vv) for c in self._clauses)

    def __contains__(self, version: object) -> bool:
        ours = (str, CannVersion, DriverVersion, FirmwareVersion, _packaging_version().Version)
        if not isinstance(version, ours):
            return False
        return self.contains(version)

    def __str__(self) -> str:
        return self.text


# ---------------------------------------------------------------- compatible_version records

_C_CODE = re.compile(r"^\s*(?P<prefix>V\d+R\d+)C(?P<code>\d+)", re.IGNORECASE)


def internal_code(text: str | None) -> tuple[str, int] | None:
    """``V100R001C19SPC001B124`` (an ``Innerversion``) -> ``("V100R001", 19)``; None when absent."""
    m = _C_CODE.match(text or "")
    if not m:
        return None
    return m.group("prefix").upper(), int(m.group("code"))


def compatible_codes_accept(entries: tuple[str, ...], innerversion: str | None) -> bool | None:
    """Does a ``compatible_version`` record list the internal code of ``innerversion``?

    Each entry is one bracket of the record: ``V100R001C30`` (one code) or
    ``V100R001C13,V100R001C19`` (an inclusive range, as in CANN 8.0.RC3's install record). None
    when the inner version or every entry is unreadable. Weak evidence only: drivers from 2026
    restart their internal code at C10, which old records also list, so a hit can be a false pass.
    """
    code = internal_code(innerversion)
    if code is None:
        return None
    readable = False
    for entry in entries:
        bounds = [internal_code(part) for part in entry.split(",")]
        if not bounds or any(b is None for b in bounds) or len(bounds) > 2:
            continue
        readable = True
        lo, hi = bounds[0], bounds[-1]
        assert lo is not None and hi is not None
        if lo[0] == hi[0] == code[0] and lo[1] <= code[1] <= hi[1]:
            return True
    return False if readable else None
