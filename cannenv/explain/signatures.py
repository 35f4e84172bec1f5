"""Error signatures as data: ``matrices/explain/signatures.yaml``, validated at load.

The file holds three tables:

* ``sources``: the public threads and vendor pages that established a cause (id → title, URL);
* ``causes``: the root causes ``cannenv explain`` can name (a stable id, the doctor checks and
  facts that decide it on a host, a remedy when no check supplies one);
* ``signatures``: what an error looks like (exact strings, regexes over normalised text, vendor
  error codes), the component that raised it, and its causes in order, each with its sources.

pydantic validates the file (every problem named by field); the engine works on the frozen
dataclasses below, with every regex compiled once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cannenv import linre
from cannenv.errors import InputError

REQUIRED_CAUSES: tuple[str, ...] = (
    "env-not-sourced",
    "torch-torch_npu-mismatch",
    "torch_npu-cann-mismatch",
    "nnal-mismatch",
    "ops-package-missing-or-wrong",
    "driver-too-old",
    "driver-firmware-mismatch",
    "device-not-visible",
    "hccl-link",
    "hccl-consistency",
    "hccl-port",
    "oom",
    "python-deps",
    "not-a-version-problem",
)
"""Cause ids of the stable JSON schema: more may be added, none renamed or removed."""

MAX_SIGNATURE_BYTES = 4 << 20
_ID = r"^[a-z0-9][a-z0-9_-]*[a-z0-9]$"
_MAX_REGEX = 400


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SourceModel(_Frozen):
    title: str = Field(min_length=1)
    url: str = Field(pattern=r"^https://[^\s]+$")


class CauseModel(_Frozen):
    title: str = Field(min_length=1)
    checks: tuple[str, ...] = ()
    """Doctor checks whose findings decide the cause (fail: confirmed; pass: ruled out)."""
    facts: tuple[str, ...] = Field(min_length=1)
    """What would decide it, said to a user without host facts."""
    remedy: str = Field(min_length=1)
    version_problem: bool = True


class PatternModel(_Frozen):
    """One thing to look for in a line: ``text`` (exact), ``code`` (a vendor code as a whole
    word) or ``regex`` (with ``anchor``, a literal every match contains)."""

    text: str | None = Field(None, min_length=3)
    code: str | None = Field(None, pattern=r"^(E[0-9A-Z]{2}\d{3}|ERR\d{5}|[1-5]\d{5}|-?\d{4,6})$")
    regex: str | None = Field(None, min_length=3, max_length=_MAX_REGEX)
    anchor: str | None = Field(None, min_length=3)

    @model_validator(mode="after")
    def _one(self) -> PatternModel:
        given = [k for k in ("text", "code", "regex") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of text, code, regex")
        if self.regex is not None:
            if self.anchor is None:
                raise ValueError("a regex needs an anchor: a literal every match contains")
            try:  # the linear-time engine: no pattern in data can hang a scan
                linre.compile(self.regex, what="regex")
            except InputError as exc:
                raise ValueError(exc.message) from None
        elif self.anchor is not None:
            raise ValueError("anchor goes with regex only")
        return self


class ComponentCondition(_Frozen):
    """A fact about one component that decides a cause for one signature: the driver (HDK),
    CANN, or a Python distribution, compared with the project's own version grammars."""

    component: str = Field(min_length=2)
    below: str | None = None
    at_least: str | None = None

    @model_validator(mode="after")
    def _one(self) -> ComponentCondition:
        if (self.below is None) == (self.at_least is None):
            raise ValueError("give exactly one of below, at_least")
        return self


class SignatureCauseModel(_Frozen):
    id: str
    why: str = Field(min_length=1)
    sources: tuple[str, ...] = Field(min_length=1)
    checks: tuple[str, ...] | None = None
    when: ComponentCondition | None = None
    remedy: str | None = None


class SignatureModel(_Frozen):
    id: str = Field(pattern=_ID)
    title: str = Field(min_length=1)
    component: str = Field(min_length=1)
    any: tuple[PatternModel, ...] = Field(min_length=1)
    all: tuple[PatternModel, ...] = ()
    priority: int = Field(0, ge=-100, le=100)
    causes: tuple[SignatureCauseModel, ...] = Field(min_length=1)
    note: str = ""


class SignatureFile(_Frozen):
    schema_version: Literal[1] = 1
    sources: dict[str, SourceModel]
    causes: dict[str, CauseModel]
    signatures: tuple[SignatureModel, ...] = Field(min_length=1)

    @field_validator("causes")
    @classmethod
    def _stable_ids(cls, v: dict[str, CauseModel]) -> dict[str, CauseModel]:
        missing = [c for c in REQUIRED_CAUSES if c not in v]
        if missing:
            raise ValueError(f"the stable cause ids are missing: {', '.join(missing)}")
        bad = [c for c in v if not re.match(_ID, c)]
        if bad:
            raise ValueError(f"cause ids must be lower-case ids: {', '.join(bad)}")
        return v

    @model_validator(mode="after")
    def _references(self) -> SignatureFile:
        from cannenv.checks import all_checks

        known_checks = {c.id for c in all_checks()}
        problems: list[str] = []
        seen: set[str] = set()
        for cid, cause in self.causes.items():
            problems += [f"cause {cid}: unknown check {c!r}" for c in cause.checks if c not in known_checks]
        for sig in self.signatures:
            if sig.id in seen:
                problems.append(f"signature {sig.id}: id used twice")
            seen.add(sig.id)
            for sc in sig.causes:
                if sc.id not in self.causes:
                    problems.append(f"signature {sig.id}: unknown cause {sc.id!r}")
                problems += [
                    f"signature {sig.id}: unknown source {s!r}" for s in sc.sources if s not in self.sources
                ]
                problems += [
                    f"signature {sig.id}: unknown check {c!r}"
                    for c in sc.checks or ()
                    if c not in known_checks
                ]
            if len({sc.id for sc in sig.causes}) != len(sig.causes):
                problems.append(f"signature {sig.id}: a cause listed twice")
        if problems:
            raise ValueError("; ".join(problems))
        return self


# ------------------------------------------------------------------------------ engine values
@dataclass(frozen=True)
class Pattern:
    """A compiled pattern: ``anchor`` (a literal every match contains) finds candidate lines
    with a substring test; ``regex`` then confirms on those lines only."""

    key: str
    anchor: str
    regex: linre.LinearPattern | None


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    url: str


@dataclass(frozen=True)
class Cause:
    id: str
    title: str
    checks: tuple[str, ...]
    facts: tuple[str, ...]
    remedy: str
    version_problem: bool


@dataclass(frozen=True)
class Condition:
    component: str
    below: str | None
    at_least: str | None

    def describe(self) -> str:
        if self.below:
            return f"{self.component} is below {self.below}"
        return f"{self.component} is {self.at_least} or newer"


@dataclass(frozen=True)
class SignatureCause:
    id: str
    why: str
    sources: tuple[str, ...]
    checks: tuple[str, ...] | None
    when: Condition | None
    remedy: str | None


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    component: str
    any: tuple[Pattern, ...]
    all: tuple[Pattern, ...]
    priority: int
    causes: tuple[SignatureCause, ...]
    note: str


@dataclass(frozen=True)
class SignatureTable:
    sources: dict[str, Source]
    causes: dict[str, Cause]
    signatures: tuple[Signature, ...]
    patterns: tuple[Pattern, ...]
    """Every distinct pattern of every signature, once."""

    def signature(self, sid: str) -> Signature:
        for s in self.signatures:
            if s.id == sid:
                return s
        raise KeyError(sid)


def _pattern(p: PatternModel) -> Pattern:
    if p.text is not None:
        return Pattern(key=f"text:{p.text}", anchor=p.text, regex=None)
    if p.code is not None:
        # a code as a whole word: 561103 but not 5611030, EI0005 but not EI00051
        rx = linre.compile(rf"(?:^|[^0-9A-Za-z]){re.escape(p.code)}(?:[^0-9A-Za-z]|$)", what="code")
        return Pattern(key=f"code:{p.code}", anchor=p.code, regex=rx)
    assert p.regex is not None and p.anchor is not None
    return Pattern(key=f"regex:{p.regex}", anchor=p.anchor, regex=linre.compile(p.regex, what="regex"))


def build(model: SignatureFile) -> SignatureTable:
    patterns: dict[str, Pattern] = {}

    def pat(p: PatternModel) -> Pattern:
        compiled = _pattern(p)
        return patterns.setdefault(compiled.key, compiled)

    sigs = tuple(
        Signature(
            id=s.id,
            title=s.title,
            component=s.component,
            any=tuple(pat(p) for p in s.any),
            all=tuple(pat(p) for p in s.all),
            priority=s.priority,
            causes=tuple(
                SignatureCause(
                    id=c.id,
                    why=c.why,
                    sources=c.sources,
                    checks=c.checks,
                    when=Condition(c.when.component, c.when.below, c.when.at_least) if c.when else None,
                    remedy=c.remedy,
                )
                for c in s.causes
            ),
            note=s.note,
        )
        for s in model.signatures
    )
    return SignatureTable(
        sources={k: Source(k, v.title, v.url) for k, v in model.sources.items()},
        causes={
            k: Cause(k, v.title, v.checks, v.facts, v.remedy, v.version_problem)
            for k, v in model.causes.items()
        },
        signatures=sigs,
        patterns=tuple(patterns.values()),
    )


def parse(raw: Any, *, source: str) -> SignatureTable:
    try:
        model = SignatureFile.model_validate(raw)
    except ValidationError as exc:
        problems = "\n".join(
            f"{source}: field {'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}"
            for err in exc.errors()
        )
        raise InputError(
            f"invalid signature file:\n{problems}", hint="see docs/explain.md (How to add a signature)"
        ) from None
    return build(model)


def load(path: str | Path) -> SignatureTable:
    """A signature file (YAML or JSON), read bounded and validated."""
    from cannenv.records import decode_utf8, load_yaml, read_bytes

    p = Path(path)
    text = decode_utf8(read_bytes(p, what="signature file", max_bytes=MAX_SIGNATURE_BYTES), source=str(p))
    try:
        raw = load_yaml(text)
    except Exception as exc:  # yaml.YAMLError and the node-count bound
        raise InputError(f"{p}: not valid YAML: {exc}") from None
    return parse(raw, source=str(p))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "signatures.yaml"


@cache
def shipped() -> SignatureTable:
    return load(shipped_path())


def json_schema() -> dict[str, Any]:
    """The JSON Schema of a signature file (``matrices/explain/schema.json``; a test keeps it in sync)."""
    schema = SignatureFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "cannenv error signatures"
    return schema


def main(argv: list[str] | None = None) -> int:
    """``python -m cannenv.explain.signatures --schema``: print the JSON Schema of a signature file."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args != ["--schema"]:
        print(
            "usage: python -m cannenv.explain.signatures --schema > matrices/explain/schema.json",
            file=sys.stderr,
        )
        return 2
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
