"""The merged, validated matrix and its rule queries (pure; errors are :mod:`cannenv.errors` errors)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from cannenv import values
from cannenv.errors import NotFoundError, did_you_mean
from cannenv.matrix.hardware import FAMILY_IDS, Hardware
from cannenv.matrix.model import (
    EVIDENCE_RANK,
    SCHEMA_VERSION,
    SECTIONS,
    CompanionRule,
    DriverRequirement,
    HdkRow,
    InstallerName,
    InstallerPattern,
    LifecycleRow,
    MatrixFile,
    PythonSupport,
    PythonSupportRow,
    Source,
    Stack,
    TorchNpuRow,
    WheelRow,
    _cann,
    _drv,
    _in_range,
    _pep,
    component_matches,
    same_python_line,
)


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
