"""Resolution: valid stacks that keep what is pinned, nearest first, or why there are none.

``resolve(m, keep={"driver": "24.1.rc2"}, want={"torch": "2.6.0"}, family="a2", python="3.11")``
works over the listed stacks *and* over the rules (torch_npu rows x Python support x HDK pairings),
so a combination that the rules allow but no listed stack pins is still found (``listed=False``).

``keep`` pins what the user will not change (the host driver/firmware are matched against the
CANN's driver requirement; everything else must match exactly or by series such as ``2.7``);
``want`` is what the user asks for. When nothing satisfies both, the result carries the blocking
rules in words and the nearest valid changes (drop or change one pin, with the best candidates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cannenv.errors import InputError, VersionError, did_you_mean
from cannenv.matrix import (
    COMPONENT_SCHEME,
    CORE_COMPONENTS,
    EVIDENCE_RANK,
    DriverRequirement,
    Matrix,
    Stack,
    _cann,
    _parsed,
    _pep,
    component_matches,
)
from cannenv.soc import FAMILY_IDS


@dataclass(frozen=True)
class Candidate:
    """A valid combination: a listed stack, or one built from the rules."""

    id: str
    family: str
    cann: str
    torch: str
    torch_npu: str
    python: str
    driver: DriverRequirement
    listed: bool
    stack: Stack | None = None
    status: str = "rules"
    torch_npu_status: str = "current"
    sources: tuple[str, ...] = ()

    def version(self, key: str) -> str | None:
        if self.stack is not None and key in self.stack.components:
            return self.stack.version(key)
        return {
            "cann": self.cann,
            "ops": self.cann,
            "nnal": self.cann,
            "torch": self.torch,
            "torch_npu": self.torch_npu,
            "python": self.python,
            "driver": self.driver.minimum,
            "firmware": self.driver.firmware,
        }.get(key)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "listed": self.listed,
            "status": self.status,
            "family": self.family,
            "cann": self.cann,
            "torch": self.torch,
            "torch_npu": self.torch_npu,
            "python": self.python,
            "driver": self.driver.to_json(),
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class Change:
    """A nearest valid change: relax one pin to ``to`` and these candidates become valid."""

    component: str
    pinned: str
    to: str
    message: str
    candidates: tuple[Candidate, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "from": self.pinned,
            "to": self.to,
            "message": self.message,
            "candidates": [c.id for c in self.candidates],
        }


@dataclass(frozen=True)
class Resolution:
    keep: dict[str, str]
    want: dict[str, str]
    family: str | None
    python: str | None
    candidates: tuple[Candidate, ...]
    blockers: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()

    @property
    def ok(self) -> bool:
        return bool(self.candidates)

    def to_json(self) -> dict[str, Any]:
        return {
            "keep": self.keep,
            "want": self.want,
            "family": self.family,
            "python": self.python,
            "ok": self.ok,
            "candidates": [c.to_json() for c in self.candidates],
            "blockers": list(self.blockers),
            "changes": [c.to_json() for c in self.changes],
        }


_HOST_KEYS = ("driver", "firmware")


def _check_keys(pins: dict[str, str]) -> None:
    for key in pins:
        if key not in COMPONENT_SCHEME:
            raise InputError(
                f"unknown component {key!r}",
                hint=(did_you_mean(key, CORE_COMPONENTS) or "")
                + " components: "
                + ", ".join(CORE_COMPONENTS),
            )


def candidates(
    m: Matrix, *, family: str | None = None, python: str | None = None, pins: dict[str, str] | None = None
) -> list[Candidate]:
    """Every valid combination: listed stacks first, then the rules' combinations.

    ``pins`` (optional) pre-filters listed stacks on their exact component versions, which keeps
    resolution fast on large matrices; rule combinations are always all built (they are few).
    """
    out: list[Candidate] = []
    seen: set[tuple[str, str, str, str, str]] = set()
    exact = {k: v for k, v in (pins or {}).items() if k not in _HOST_KEYS}
    for s in m.stacks:
        if family and s.family != family:
            continue
        cann, torch, tnpu, py = (
            s.version("cann"),
            s.version("torch"),
            s.version("torch_npu"),
            s.version("python"),
        )
        if not (cann and torch and tnpu and py):
            continue
        if python and not component_matches("python", python, py):
            continue
        if exact and not all(component_matches(k, v, s.version(k)) for k, v in exact.items()):
            continue
        req = m.driver_requirement(cann, s.family, s.product)
        if req is None:
            continue
        seen.add((s.family, str(_cann(cann)), torch, tnpu, py))
        out.append(
            Candidate(s.id, s.family, cann, torch, tnpu, py, req, True, s, s.status, "current", s.sources)
        )
    fams = [family] if family else list(FAMILY_IDS)
    for row in m.torch_npu:
        if row.status in ("superseded", "prerelease", "conflict"):
            continue
        support = m.python_support(row.torch)
        pys = [p for p in support.any_statement if python is None or component_matches("python", python, p)]
        for fam in fams:
            req = m.driver_requirement(row.cann, fam)
            if req is None:
                continue
            for py in pys:
                # only versions the index publishes for this Python (exact sets): never a
                # version a table names but pip cannot install (2.1.0.post4)
                if m.wheel_published(row.torch_npu, py) is not True:
                    continue
                if m.wheel_published(row.torch, py, package="torch") is False:
                    continue
                key = (fam, str(_cann(row.cann)), row.torch, row.torch_npu, py)
                if key in seen:
                    continue
                seen.add(key)
                cid = f"{fam}-cann{_cann(row.cann).tag}-torch{row.torch}-py{py}"
                out.append(
                    Candidate(
                        cid,
                        fam,
                        row.cann,
                        row.torch,
                        row.torch_npu,
                        py,
                        req,
                        False,
                        None,
                        "rules",
                        row.status,
                        tuple(dict.fromkeys((*row.sources, *req.sources))),
                    )
                )
    return out


def _satisfies(c: Candidate, key: str, pinned: str) -> bool:
    if key == "driver":
        return c.driver.accepts(pinned)
    if key == "firmware":
        fw = c.version("firmware")
        if fw is None:
            return True  # no firmware statement for this pairing: not a blocker
        from cannenv.versions import FirmwareVersion

        return FirmwareVersion.parse(pinned) >= FirmwareVersion.parse(fw)
    return component_matches(key, pinned, c.version(key))


def _rank(c: Candidate, want: dict[str, str]) -> tuple[Any, ...]:
    return (
        not c.listed,
        c.status in ("eol", "deprecated"),
        c.torch_npu_status != "current",
        EVIDENCE_RANK[c.driver.evidence],
        -_distance(c, want),
        tuple(-x for x in _cann(c.cann).key),
        tuple(-x for x in _pep(c.torch_npu).release),
        tuple(-x for x in _pep(c.python).release),
    )


def _distance(c: Candidate, want: dict[str, str]) -> int:
    return sum(1 for k, v in want.items() if _satisfies(c, k, v))


def _filter(cands: list[Candidate], pins: dict[str, str]) -> list[Candidate]:
    return [c for c in cands if all(_satisfies(c, k, v) for k, v in pins.items())]


def resolve(
    m: Matrix,
    *,
    keep: dict[str, str] | None = None,
    want: dict[str, str] | None = None,
    family: str | None = None,
    python: str | None = None,
    limit: int | None = None,
) -> Resolution:
    keep = dict(keep or {})
    want = dict(want or {})
    _check_keys(keep)
    _check_keys(want)
    if python:
        want.setdefault("python", python)
    pins = {**want, **keep}
    found = sorted(_filter(candidates(m, family=family, pins=pins), pins), key=lambda c: _rank(c, want))
    if found:
        return Resolution(keep, want, family, python, tuple(found[:limit] if limit else found))
    pool = candidates(m, family=family)
    blockers = _explain(m, pool, keep, want, family)
    changes = _nearest_changes(pool, keep, want)
    return Resolution(keep, want, family, python, (), tuple(blockers), tuple(changes))


def _nearest_changes(pool: list[Candidate], keep: dict[str, str], want: dict[str, str]) -> list[Change]:
    out: list[Change] = []
    pins = {**want, **keep}
    for key, value in pins.items():
        rest = {k: v for k, v in pins.items() if k != key}
        ok = sorted(_filter(pool, rest), key=lambda c: _rank(c, want))
        if not ok:
            continue
        if key == "driver":  # the smallest driver change first
            ok.sort(key=lambda c: (not c.listed, EVIDENCE_RANK[c.driver.evidence], _min_driver(c)))
        best = ok[0]
        if key == "driver":
            to = f"{best.driver.range} (HDK {_hdk(best.driver)}, {best.driver.evidence})"
            msg = (
                f"install HDK {_hdk(best.driver)} (driver {best.driver.range}; {best.driver.evidence} for "
                f"CANN {best.cann} on {best.family}) to keep {_describe(rest)}"
            )
        else:
            to = _closest([c.version(key) or "" for c in ok if c.version(key)], key, value)
            ok = [c for c in ok if c.version(key) == to] or ok  # (still in rank order)
            kind = "keep" if key in keep else "want"
            msg = (
                f"change {key} from {value} to {to} ({kind}) to keep {_describe(rest)}"
                if rest
                else (f"change {key} from {value} to {to}")
            )
        out.append(Change(key, value, to, msg, tuple(ok[:5])))
    return out


def _min_driver(c: Candidate) -> tuple[int, ...]:
    from cannenv.versions import DriverVersion

    return DriverVersion.parse(c.driver.minimum).key if c.driver.minimum else (1 << 30,)


def _hdk(req: DriverRequirement) -> str:
    text = req.hdk or (req.minimum or "?")
    return text.removeprefix("Ascend HDK ").removeprefix("HDK ")


def _closest(values: list[str], key: str, pinned: str) -> str:
    """The value nearest to ``pinned`` in version order (ties: the lower one)."""
    fam = COMPONENT_SCHEME.get(key, "pep440")
    try:
        target = _parsed(fam, pinned)
    except VersionError:  # a range or series pin: no single point to measure from
        return values[0]
    ordered = sorted(set(values), key=lambda v: _parsed(fam, v))
    below = [v for v in ordered if _parsed(fam, v) < target]
    above = [v for v in ordered if _parsed(fam, v) > target]
    return below[-1] if below else above[0]  # prefer the nearest older value


def _describe(pins: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in pins.items()) or "nothing else"


def _explain(
    m: Matrix, pool: list[Candidate], keep: dict[str, str], want: dict[str, str], family: str | None
) -> list[str]:
    """The rules that block the request, in words."""
    out: list[str] = []
    pins = {**want, **keep}
    if not pool:
        return [f"the matrix has no valid combination for family {family!r} (no HDK pairing known)"]
    # single pins that nothing satisfies
    for key, value in pins.items():
        if not _filter(pool, {key: value}):
            known = sorted({c.version(key) or "" for c in pool} - {""})
            out.append(
                f"no valid combination has {key} {value}"
                + (f" on {family}" if family else "")
                + (f" (known: {', '.join(known[:12])}{' …' if len(known) > 12 else ''})" if known else "")
            )
    if out:
        return out
    torch = pins.get("torch")
    driver = keep.get("driver") or want.get("driver")
    cann = pins.get("cann")
    py = pins.get("python")
    if torch and driver:
        accepting = [c for c in pool if c.driver.accepts(driver)]
        if accepting:
            newest = max(accepting, key=lambda c: _cann(c.cann).key)
            torches = sorted({c.torch for c in accepting if c.cann == newest.cann}, key=_pep)
            with_torch = [c for c in pool if component_matches("torch", torch, c.torch)]
            first = min(with_torch, key=lambda c: (_cann(c.cann).key, EVIDENCE_RANK[c.driver.evidence]))
            out.append(
                f"driver {driver} is accepted up to CANN {newest.cann} "
                f"({newest.driver.evidence} HDK {_hdk(newest.driver)}); "
                f"CANN {newest.cann} carries torch_npu only for torch {_join(torches)}; "
                f"torch {torch} first comes "
                f"with CANN {first.cann}, whose {first.driver.evidence} HDK is "
                f"{_hdk(first.driver)} (driver {first.driver.range})"
            )
    if torch and cann:
        torches = sorted({c.torch for c in pool if component_matches("cann", cann, c.cann)}, key=_pep)
        canns = sorted({c.cann for c in pool if component_matches("torch", torch, c.torch)}, key=_cann)
        if not any(component_matches("torch", torch, t) for t in torches):
            out.append(
                f"CANN {cann} carries torch_npu only for torch {_join(torches)}; "
                f"torch {torch} comes with CANN {_join(canns)}"
            )
    if torch and py:
        support = m.python_support(torch)
        if not any(component_matches("python", py, p) for p in support.any_statement):
            out.append(f"torch {torch} supports Python {_join(list(support.current))} only (PT-COMPAT)")
    if cann and driver and not out:
        hit = next((c for c in pool if component_matches("cann", cann, c.cann)), None)
        if hit is not None and not hit.driver.accepts(driver):
            v = m.hdk_verdict(hit.cann, driver, hit.family)
            out.append(
                f"CANN {cann} with driver {driver} on {hit.family}: {v.level}: {v.statement} "
                f"(recommended HDK {_hdk(hit.driver)}, driver {hit.driver.range})"
            )
    if not out:
        out.append(
            "no single rule blocks it, but no combination satisfies all pins together: " + _describe(pins)
        )
    return out


def _join(items: list[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items) or "none"
    return ", ".join(items[:-1]) + " and " + items[-1]
