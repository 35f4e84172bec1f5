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
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from cannenv.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable

    from cannenv.explain.knowledge import Knowledge

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
KNOWLEDGE_PRIORITY = -20
"""Priority of the signatures made from the vendor's code tables: below every hand-written one."""
_NOT_RE2 = (
    (re.compile(r"\(\?<?[=!]"), "lookaround ((?=, (?!, (?<=, (?<!)"),
    (re.compile(r"\\[1-9]|\(\?P=|\\k<"), "a backreference"),
    (re.compile(r"\(\?>|[*+?}][+]"), "an atomic group or possessive quantifier"),
)


def re2_subset_problem(rx: str) -> str | None:
    """Why ``rx`` is outside the RE2 subset (so not linear-time), or None. Signature patterns are
    data a user may supply: none may backtrack exponentially (docs/explain.md)."""
    for bad, what in _NOT_RE2:
        if bad.search(rx):
            return f"regex uses {what}, outside the RE2 subset (matching must be linear in the input)"
    try:
        re.compile(rx)
    except re.error as exc:
        return f"regex does not compile: {exc}"
    return None


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
            problem = re2_subset_problem(self.regex)
            if problem:
                raise ValueError(problem)
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
    rules_out: tuple[str, ...] = ()
    """Causes the log's own detail excludes when this signature matches (a trap: the obvious
    keyword of another signature points one way, this detail another)."""
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
            problems += [
                f"signature {sig.id}: rules out unknown cause {c!r}"
                for c in sig.rules_out
                if c not in self.causes
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
    regex: re.Pattern[str] | None
    capture: str | None = None
    """An extractor's id: the scan keeps the values of the regex's groups, not only the lines."""


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
    rules_out: tuple[str, ...] = ()
    derived: bool = False
    """Made from the knowledge tables (a code, a library, a symbol), not written by hand."""


@dataclass(frozen=True)
class SignatureTable:
    sources: dict[str, Source]
    causes: dict[str, Cause]
    signatures: tuple[Signature, ...]
    patterns: tuple[Pattern, ...]
    """Every distinct pattern of every signature, once (and the knowledge's extractors)."""
    knowledge: Knowledge | None = None

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
        rx = re.compile(rf"(?:^|[^0-9A-Za-z]){re.escape(p.code)}(?:[^0-9A-Za-z]|$)")
        return Pattern(key=f"code:{p.code}", anchor=p.code, regex=rx)
    assert p.regex is not None and p.anchor is not None
    return Pattern(key=f"regex:{p.regex}", anchor=p.anchor, regex=re.compile(p.regex))


def _code_signatures(
    knowledge: Knowledge, pat: Callable[[PatternModel], Pattern], patterns: dict[str, Pattern]
) -> list[Signature]:
    """A signature for every code of the vendor's tables that points to a cause: E-codes as whole
    words, numeric codes only after an error word on the same line."""
    out = []
    family_title = {
        "acl-runtime": "CANN runtime (ACL_ERROR_RT_*)",
        "acl": "ACL (acl_base.h)",
        "aclnn": "aclnn operator API (libopapi)",
        "hccl": "HCCL/HCCP",
    }
    for c in knowledge.codes:
        if not c.causes or c.family not in family_title:
            continue
        if c.code[0] == "E":
            p = pat(PatternModel(code=c.code))
        else:
            rx = rf"(?i)(?:code|errno|err|ret|status|fail|result)[^0-9\n]{{0,40}}{c.code}(?:[^0-9]|$)"
            p = patterns.setdefault(
                f"knowledge-code:{c.code}", Pattern(f"knowledge-code:{c.code}", c.code, re.compile(rx))
            )
        out.append(
            Signature(
                id=f"code-{c.code}",
                title=f"{c.code} {c.name}: {c.meaning}",
                component=family_title[c.family],
                any=(p,),
                all=(),
                priority=KNOWLEDGE_PRIORITY,
                causes=tuple(
                    SignatureCause(
                        id=cid,
                        why=f"the vendor's table: {c.code} is {c.name} ({c.meaning})",
                        sources=(c.source,),
                        checks=None,
                        when=None,
                        remedy=None,
                    )
                    for cid in c.causes
                ),
                note="",
                derived=True,
            )
        )
    for st in knowledge.hccl_stages:
        text = f"[{st.stage}][{st.tag}]"
        out.append(
            Signature(
                id=f"hccl-stage-{st.stage.lower()}-{st.tag.lower().replace(' ', '-')}",
                title=f"HCCL {text}: {st.meaning}",
                component="HCCL (plog stage keywords)",
                any=(pat(PatternModel(text=text)),),
                all=(),
                priority=15,
                causes=tuple(
                    SignatureCause(
                        cid,
                        f"HCCL's fault guide: {text} is where {st.meaning}",
                        (st.source,),
                        None,
                        None,
                        None,
                    )
                    for cid in st.causes
                ),
                note="",
                derived=True,
            )
        )
    return out


def build(model: SignatureFile, knowledge: Knowledge | None = None) -> SignatureTable:
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
            rules_out=s.rules_out,
        )
        for s in model.signatures
    )
    sources = {k: Source(k, v.title, v.url) for k, v in model.sources.items()}
    if knowledge is not None:
        _check_knowledge(knowledge, model)
        sources.update({k: Source(k, t, u) for k, (t, u) in knowledge.sources.items()})
        sigs = sigs + tuple(_code_signatures(knowledge, pat, patterns))
        for e in knowledge.extractors:
            key = f"extract:{e.id}"
            patterns[key] = Pattern(key, e.anchor, re.compile(e.regex), capture=e.id)
    return SignatureTable(
        sources=sources,
        causes={
            k: Cause(k, v.title, v.checks, v.facts, v.remedy, v.version_problem)
            for k, v in model.causes.items()
        },
        signatures=sigs,
        patterns=tuple(patterns.values()),
        knowledge=knowledge,
    )


def _check_knowledge(knowledge: Knowledge, model: SignatureFile) -> None:
    """Every cause the knowledge names is a cause of the signature file, every source a source of
    either file."""
    sources = set(model.sources) | set(knowledge.sources)
    problems: list[str] = []
    rows: list[tuple[str, tuple[str, ...], str]] = [
        (f"code {c.code}", c.causes, c.source) for c in knowledge.codes
    ]
    rows += [(f"library {x.name}", x.causes, x.source) for x in knowledge.libraries]
    rows += [(f"symbol {x.prefix}", x.causes, x.source) for x in knowledge.symbols]
    rows += [(f"stage {x.stage}/{x.tag}", x.causes, x.source) for x in knowledge.hccl_stages]
    for what, causes, source in rows:
        problems += [f"{what}: unknown cause {c!r}" for c in causes if c not in model.causes]
        if source not in sources:
            problems.append(f"{what}: unknown source {source!r}")
    if problems:
        raise InputError("invalid knowledge file:\n" + "\n".join(sorted(set(problems))))


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
    from cannenv.explain import knowledge

    return build(model, knowledge.shipped())


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
