"""The merged, validated matrix and its rule queries (pure; errors are :mod:`cannenv.errors` errors)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from cannenv import values
from cannenv.errors import NotFoundError, VersionError, did_you_mean
from cannenv.hardware import FAMILY_IDS, Hardware, Product, SocFamily
from cannenv.matrix.model import (
    EVIDENCE_RANK,
    SCHEMA_VERSION,
    SECTIONS,
    CompanionRule,
    ComponentRow,
    Download,
    DriverRequirement,
    Evidence,
    HdkCompatRow,
    HdkRow,
    InstallerName,
    InstallerPattern,
    Level,
    LifecycleRow,
    MatrixFile,
    Published,
    PythonLimit,
    PythonSupport,
    PythonSupportRow,
    Source,
    Stack,
    TorchNpuCompatRow,
    TorchNpuRow,
    Verdict,
    WheelMetadata,
    WheelRow,
    _cann,
    _drv,
    _in_range,
    _pep,
    component_matches,
    fill_template,
    same_python_line,
    series_matches,
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
            products=tuple(p for h in hw for p in h.products),
        )
        self.torch_npu: tuple[TorchNpuRow, ...] = _merge_rows(r for mf in parts for r in mf.torch_npu)
        self.python_rows: tuple[PythonSupportRow, ...] = tuple(r for mf in parts for r in mf.python_support)
        self.wheels: tuple[WheelRow, ...] = tuple(r for mf in parts for r in mf.wheels)
        self.published: tuple[Published, ...] = tuple(r for mf in parts for r in mf.published)
        self.wheel_metadata: tuple[WheelMetadata, ...] = tuple(r for mf in parts for r in mf.wheel_metadata)
        self.lifecycle: tuple[LifecycleRow, ...] = tuple(r for mf in parts for r in mf.lifecycle)
        self.hdk: tuple[HdkRow, ...] = tuple(r for mf in parts for r in mf.hdk)
        self.hdk_compat: tuple[HdkCompatRow, ...] = tuple(r for mf in parts for r in mf.hdk_compat)
        self.torch_npu_compat: tuple[TorchNpuCompatRow, ...] = tuple(
            r for mf in parts for r in mf.torch_npu_compat
        )
        self.torch_npu_compat_current: tuple[TorchNpuCompatRow, ...] = tuple(
            r for r in self.torch_npu_compat if r.status == "current"
        )
        """the statements verdicts rest on: a superseded one (a later revision of the same release's
        note states otherwise) is kept in ``torch_npu_compat`` and named, never judged by"""
        self.installers: tuple[InstallerPattern, ...] = tuple(r for mf in parts for r in mf.installers)
        self.downloads: tuple[Download, ...] = tuple(r for mf in parts for r in mf.downloads)
        self._downloads_by_file: dict[str, tuple[Download, ...]] = {}
        for d in self.downloads:
            self._downloads_by_file[d.file] = (*self._downloads_by_file.get(d.file, ()), d)
        self.companions: tuple[CompanionRule, ...] = tuple(r for mf in parts for r in mf.companions)
        self.python_limits: tuple[PythonLimit, ...] = tuple(r for mf in parts for r in mf.python_limits)
        self.stacks: tuple[Stack, ...] = tuple(s for mf in parts for s in mf.stacks)
        self.components: tuple[ComponentRow, ...] = tuple(r for mf in parts for r in mf.components)
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

    # -- components (vllm-ascend, MindIE, MindSpeed-LLM, Triton-Ascend …) ----------------------

    def component_rows(
        self, name: str, version: str | None = None, *, include_superseded: bool = False
    ) -> list[ComponentRow]:
        """Every statement about release ``version`` of component ``name`` (all releases: None);
        a statement a later revision of its document replaced only with ``include_superseded``."""
        want = _component_key(version) if version else None
        return [
            r
            for r in self.components
            if r.component == name.lower()
            and (want is None or _component_key(r.version) == want)
            and (include_superseded or r.status == "current")
        ]

    def component_versions(self, name: str) -> list[str]:
        return list(dict.fromkeys(r.version for r in self.components if r.component == name.lower()))

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
        # a downstream row that restates a pairing another source states adds nothing to the answer
        stated = {
            (_pep(r.torch_npu), _pep(r.torch), _cann(r.cann)) for r in out if r.evidence != "downstream"
        }
        return [
            r
            for r in out
            if r.evidence != "downstream" or (_pep(r.torch_npu), _pep(r.torch), _cann(r.cann)) not in stated
        ]

    def cann_versions(self) -> list[str]:
        vals = {r.cann for r in self.torch_npu} | {c for r in self.hdk for c in r.cann}
        vals |= {c for r in self.hdk_compat for c in r.cann if c[-2:] not in (".X", ".x")}
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

    def python_stated(self, torch_npu: str) -> tuple[tuple[str, ...], ...]:
        """The Python versions each source states for this exact torch_npu build (release notes'
        Python column), one tuple per distinct statement."""
        want = _pep(torch_npu)
        out: dict[tuple[str, ...], None] = {}
        for r in self.torch_npu:
            if r.python and _pep(r.torch_npu) == want:
                out[tuple(r.python)] = None
        return tuple(out)

    def python_ok(self, torch: str, python: str) -> bool:
        """Python supported by the torch line (current statement; older statements are narrower)."""
        support = self.python_support(torch)
        return any(same_python_line(p, python) for p in support.any_statement)

    def wheel_published(
        self, version: str, python: str, *, arch: str | None = None, package: str = "torch-npu"
    ) -> bool | None:
        """Whether the package index has a wheel of ``package`` ``version`` for this Python (and
        arch), from the exact sets recorded from the index; None: no data for that Python/arch."""
        by_arch = self._wheel_index().get((package, _python_line(python)), {})
        sets = [v for a, v in by_arch.items() if arch is None or a == arch]
        if not sets:
            return None
        want = _canonical_pep(version)
        return any(want in versions for versions in sets)

    def _wheel_index(self) -> dict[tuple[str, str], dict[str, set[str]]]:
        """(package, Python major.minor) -> arch -> canonical versions, built once per matrix."""
        hit: dict[tuple[str, str], dict[str, set[str]]] | None = self._memo.get(("wheel_index",))
        if hit is None:
            hit = {}
            for r in self.wheels:
                per = hit.setdefault((r.package, _python_line(r.python)), {})
                for a in r.arches:
                    per.setdefault(a, set()).update(_canonical_pep(v) for v in r.versions)
            self._memo[("wheel_index",)] = hit
        return hit

    def wheel_requires(
        self, torch_npu: str, *, python: str | None = None, arch: str | None = None
    ) -> list[WheelMetadata]:
        """The published wheels of torch_npu ``torch_npu`` (for a Python / arch) with what their
        METADATA declares; empty: no such build on the index (or no METADATA imported)."""
        want = _canonical_pep(torch_npu)
        return [
            w
            for w in self.wheel_metadata
            if _canonical_pep(w.version) == want
            and (python is None or same_python_line(w.python, python))
            and (arch is None or w.arch == arch)
        ]

    def published_for_torch(self, torch: str) -> list[str]:
        """torch_npu versions whose published wheels pin ``torch`` (oldest first)."""
        return sorted({w.version for w in self.wheel_metadata if w.torch_matches(torch)}, key=_pep)

    def published_versions(
        self, package: str = "torch-npu", *, python: str | None = None, arch: str | None = None
    ) -> list[str]:
        """Every version of ``package`` the index publishes (for a Python/arch), oldest first."""
        vals = {
            v
            for r in self.wheels
            if r.package == package
            and (python is None or same_python_line(r.python, python))
            and (arch is None or arch in r.arches)
            for v in r.versions
        }
        return sorted(vals, key=_pep)

    def uploaded(self, package: str, version: str) -> str | None:
        """The date the index first received ``version`` of ``package`` (None: not recorded)."""
        want = _pep(version)
        for row in self.published:
            if row.package == package:
                for v, date in row.uploaded.items():
                    if _pep(v) == want:
                        return date
        return None

    # -- torch_npu <-> CANN -------------------------------------------------------------------

    def torchnpu_release(self, torch_npu: str) -> str | None:
        """The TorchNPU release (7.3.0, 26.0.0) a torch_npu package version belongs to, from the
        branch its rows name (``v2.7.1-7.3.0``); None when no row names one."""
        for row in self.torch_npu_rows(torch_npu=torch_npu, include_superseded=True):
            if row.branch and "-" in row.branch:
                return row.branch.rsplit("-", 1)[1]
        return None

    def torch_of(self, torch_npu: str) -> tuple[str, ...]:
        """The PyTorch release(s) (major.minor.patch) torch_npu ``torch_npu`` is built for: its
        published wheels' ``Requires-Dist: torch==`` (the published truth) where they pin one, else
        the vendor's rows' torch column, else a downstream row's; empty: not recorded."""
        want = _canonical_pep(torch_npu)
        pinned = {
            p for w in self.wheel_metadata if _canonical_pep(w.version) == want and (p := w.pinned_torch())
        }
        if pinned:
            return tuple(sorted(pinned, key=_pep))
        rows = self.torch_npu_rows(torch_npu=torch_npu, include_superseded=True)
        rows = [r for r in rows if _pep(r.torch_npu) == _pep(torch_npu)]
        vendor = [r for r in rows if r.evidence != "downstream"] or rows
        return tuple(sorted({_release3(r.torch) for r in vendor}, key=_pep))

    def recommended_instead(
        self, torch_npu: str, cann: str, *, torch: str | None = None
    ) -> tuple[str | None, str | None]:
        """The torch_npu to recommend with CANN ``cann`` in place of ``torch_npu``: the newest build
        on the **same PyTorch release** (:meth:`torch_of`; ``torch`` where none is recorded) that a
        current vendor row pairs with that CANN as its own pairing — never a pre-release, beta,
        superseded, conflicting or downstream row. Returns (build, None), (None, None) when
        ``torch_npu`` is itself that build, or (None, why none is named — and with which CANN that
        line is recommended instead)."""
        line = self.torch_of(torch_npu) or ((_release3(torch),) if torch else ())
        if not line:
            return None, (
                f"the PyTorch release torch_npu {torch_npu} is built for is not recorded "
                "(no wheel METADATA, no row), so no build on its line is named"
            )
        line_set = set(line)

        def good(r: TorchNpuRow) -> bool:
            return (
                r.status == "current"
                and r.evidence == "recommended"
                and not _pep(r.torch_npu).is_prerelease
                and not _cann(r.cann).is_prerelease
                and "beta" not in (r.label or "").lower()
                and _release3(r.torch) in line_set
            )

        here = [r for r in self.torch_npu_rows(cann=cann) if good(r)]
        torches = " / ".join(line)
        if here:
            best = max(here, key=lambda r: _pep(r.torch_npu))
            return (None, None) if _pep(best.torch_npu) == _pep(torch_npu) else (best.torch_npu, None)
        newest: dict[str, str] = {}
        for r in sorted(
            (r for r in self.torch_npu if good(r)),
            key=lambda r: (_cann(r.cann), _pep(r.torch_npu)),
            reverse=True,
        ):
            newest.setdefault(r.cann, r.torch_npu)
        if not newest:
            return None, f"no torch_npu for torch {torches} is the vendor's recommended pairing of any CANN"
        named = list(newest.items())
        shown = "; ".join(f"CANN {c}: torch_npu {v}" for c, v in named[:6])
        more = f" (and {len(named) - 6} older CANN releases)" if len(named) > 6 else ""
        return None, (
            f"no torch_npu for torch {torches} is recommended with CANN {cann}; "
            f"the vendor recommends that line with {shown}{more}"
        )

    def torch_npu_verdict(self, torch_npu: str, cann: str, *, torch: str | None = None) -> Verdict:
        """The vendor's word on torch_npu ``torch_npu`` with CANN ``cann`` (see :class:`Verdict`)."""
        subject = f"torch_npu {torch_npu} with CANN {cann}"
        rows = [
            r
            for r in self.torch_npu_rows(torch_npu=torch_npu, include_superseded=True)
            if component_matches("torch_npu", torch_npu, r.torch_npu)
        ]
        rec, no_rec = self.recommended_instead(torch_npu, cann, torch=torch)
        asked = _cann(cann)
        same = [r for r in rows if r.status != "conflict" and _cann(r.cann).release == asked.release]
        release = self.torchnpu_release(torch_npu)
        if same:
            # the exact CANN before its release line, a current row before a superseded one
            best = sorted(
                same,
                key=lambda r: (_cann(r.cann) != asked, r.status != "current", EVIDENCE_RANK[r.evidence]),
            )[0]
            exact = _cann(best.cann) == asked
            # a beta/alpha CANN, a superseded or pre-release row is never "recommended" (issue 30)
            level: Level = (
                "recommended"
                if best.evidence == "recommended"
                and best.status == "current"
                and (exact or not asked.is_prerelease)
                else "compatible"
            )
            said = f"paired with CANN {best.cann}" + (f" (branch {best.branch})" if best.branch else "")
            if best.status != "current":
                said += f", a {best.status} row" + (f": {best.note}" if best.note else "")
            if not exact and asked.is_prerelease:
                said += f"; CANN {cann} is a pre-release of {best.cann}, which no row pairs by itself"
            if best.evidence == "downstream":
                said = f"validated downstream with CANN {best.cann}" + (f": {best.note}" if best.note else "")
            elif best.evidence != "recommended":
                said += f", {best.evidence}" + (f": {best.note}" if best.note else "")
            caveat = None
            if best.evidence == "downstream":
                caveat = self._vendor_table_silent(release, cann)
            return Verdict(
                level,
                subject,
                said,
                best.sources,
                recommended=None if level == "recommended" else rec,
                caveat=caveat,
                no_recommended=None if level == "recommended" else no_rec,
            )
        if release is not None:
            hits = [
                r
                for r in self.torch_npu_compat_current
                if any(_line_matches(t, release) for t in r.torchnpu)
                and any(series_matches("cann", c, cann) for c in r.cann)
            ]
            yes = [r for r in hits if r.compatible]
            no = [r for r in hits if not r.compatible]
            if yes and not no:
                srcs = tuple(dict.fromkeys(s for r in yes for s in r.sources))
                return Verdict(
                    "compatible",
                    subject,
                    f"TorchNPU {release} is compatible with CANN {cann}: "
                    + "; ".join(r.statement for r in yes),
                    srcs,
                    recommended=rec,
                    no_recommended=no_rec,
                )
            if yes and no:
                srcs = tuple(dict.fromkeys(s for r in (*yes, *no) for s in r.sources))
                return Verdict(
                    "unknown",
                    subject,
                    f"the vendor's statements on TorchNPU {release} with CANN {cann} disagree: "
                    + "; ".join(r.statement for r in (*yes, *no)),
                    srcs,
                    recommended=rec,
                    no_recommended=no_rec,
                    settle="the vendor's current release note for this TorchNPU release",
                )
            if no and not yes:
                srcs = tuple(dict.fromkeys(s for r in no for s in r.sources))
                return Verdict(
                    "incompatible",
                    subject,
                    f"TorchNPU {release} is not compatible with CANN {cann}: "
                    + "; ".join(r.statement for r in no),
                    srcs,
                    recommended=rec,
                    no_recommended=no_rec,
                )
        if rows:
            paired = ", ".join(sorted({r.cann for r in rows}, key=_cann))
            return Verdict(
                "unknown",
                subject,
                f"torch_npu {torch_npu} is paired with CANN {paired}"
                + (f" (TorchNPU {release})" if release else "")
                + f"; no vendor statement covers CANN {cann}",
                tuple(dict.fromkeys(s for r in rows for s in r.sources)),
                recommended=rec,
                no_recommended=no_rec,
                settle="the TorchNPU release notes' compatibility table (版本兼容性说明) "
                "for this release line",
            )
        return Verdict(
            "unknown",
            subject,
            self.unpaired_note(torch_npu),
            recommended=rec,
            no_recommended=no_rec,
            settle="the wheel's own METADATA (`cannenv matrix import-torch-npu WHEEL`) "
            "or the TorchNPU release notes",
        )

    def _vendor_table_silent(self, release: str | None, cann: str) -> str | None:
        """The vendor's TorchNPU compatibility statement for ``release`` when it names CANN series
        but not ``cann`` (a downstream pairing then goes beyond what the vendor declares)."""
        if release is None:
            return None
        rows = [
            r for r in self.torch_npu_compat_current if any(_line_matches(t, release) for t in r.torchnpu)
        ]
        if not rows or any(any(series_matches("cann", c, cann) for c in r.cann) for r in rows):
            return None
        series = ", ".join(dict.fromkeys(c for r in rows for c in r.cann))
        srcs = ", ".join(dict.fromkeys(s for r in rows for s in r.sources))
        return (
            f"the vendor declares TorchNPU {release} only for CANN {series} [{srcs}]; "
            f"CANN {cann} rests on the downstream statement alone"
        )

    def torch_not_yet(self, torch: str) -> str | None:
        """For a PyTorch with no torch_npu at all: say so plainly, naming the newest pair the package
        index publishes (None when some torch_npu row names this torch line)."""
        want = _pep(torch).release[:2]
        if any(_pep(r.torch).release[:2] == want for r in self.torch_npu_rows(include_superseded=True)):
            return None
        if self.published_for_torch(torch):
            return None  # a published wheel pins this torch (its METADATA): not "not yet"
        published = [v for v in self.published_versions("torch-npu") if not _pep(v).is_prerelease]
        torch_out = any(_pep(v).release[:2] == want for v in self.published_versions("torch"))
        text = f"not yet: no torch_npu for torch {torch} is published"
        if torch_out:
            text += f" (torch {torch} is on the package index, torch-npu {want[0]}.{want[1]}.x is not)"
        if published:
            newest = published[-1]
            rows = self.torch_npu_rows(torch_npu=newest, include_superseded=True)
            pair_torch = rows[0].torch if rows else newest
            text += f"; newest published pair: torch {pair_torch} + torch_npu {newest}"
        plans = [r for r in self.lifecycle if _pep(r.torch_npu).release[:2] == want]
        if plans:
            p = plans[0]
            text += (
                f"; the vendor's support policy lists {p.torch_npu} as {p.status} [{', '.join(p.sources)}]"
            )
        return text

    def cann_not_covered(self, cann: str) -> str | None:
        """For a CANN newer than every TorchNPU compatibility table: which table stops where, and
        what would settle it (None when a table covers it)."""
        if any(any(series_matches("cann", c, cann) for c in r.cann) for r in self.torch_npu_compat_current):
            return None
        newest = max(
            self.torch_npu_compat_current,
            key=lambda r: max(_cann(c.replace("X", "0")) for c in r.cann),
            default=None,
        )
        if newest is None:
            return None
        return (
            f"no TorchNPU compatibility table covers CANN {cann}: the newest ({newest.statement}) "
            f"stops at CANN {newest.cann[-1]} [{', '.join(newest.sources)}]"
            + (f"; {newest.note}" if newest.note else "")
            + "; unknown: a newer TorchNPU release note's compatibility table (版本兼容性说明) or a "
            "torch_npu wheel naming this CANN would settle it"
        )

    def unpaired_note(self, torch_npu: str) -> str:
        """What is known about a torch_npu with no CANN pairing: published where, nearest pairing."""
        arches_of: dict[str, set[str]] = {}  # one entry per Python: its rows may split the arches
        for r in self.wheels:
            if r.package == "torch-npu" and any(_pep(v) == _pep(torch_npu) for v in r.versions):
                arches_of.setdefault(r.python, set()).update(r.arches)
        published = [f"Python {py} ({'/'.join(sorted(arches))})" for py, arches in arches_of.items()]
        want = _pep(torch_npu)
        same_line = [
            r
            for r in self.torch_npu_rows(include_superseded=False)
            if _pep(r.torch_npu).release[:3] == want.release[:3]
        ]
        pool = same_line or list(self.torch_npu_rows())
        nearest = min(
            pool, key=lambda r: abs(_pep_ordinal(_pep(r.torch_npu)) - _pep_ordinal(want)), default=None
        )
        text = f"torch_npu {torch_npu} has no published CANN pairing"
        when = self.uploaded("torch-npu", torch_npu)
        if when:
            text += f"; published on the package index {when}"
        text += (
            "; it is on the package index for " + ", ".join(published)
            if published
            else "; the recorded index listing does not have it either"
        )
        if nearest is not None:
            text += f"; nearest known pairing: torch_npu {nearest.torch_npu} with CANN {nearest.cann}" + (
                f" (branch {nearest.branch})" if nearest.branch else ""
            )
        return text

    # -- HDK -------------------------------------------------------------------------------

    # -- products ---------------------------------------------------------------------------

    def family_info(self, family: str | None) -> SocFamily | None:
        return next((f for f in self.hardware.families if f.id == family), None)

    def own_hdk_line(self, family: str | None) -> bool:
        """The vendor numbers this family's HDKs per product: statements naming no family skip it."""
        info = self.family_info(family)
        return info is not None and info.hdk_line == "own"

    def products_of(self, family: str | None) -> tuple[Product, ...]:
        return tuple(p for p in self.hardware.products if family is not None and p.family == family)

    def product(self, product_id: str) -> Product:
        for p in self.hardware.products:
            if p.id == product_id:
                return p
        raise NotFoundError(
            f"no product {product_id!r} in the hardware table",
            hint=did_you_mean(product_id, [p.id for p in self.hardware.products])
            or "products: " + ", ".join(p.id for p in self.hardware.products),
        )

    def _covers(
        self,
        families: tuple[str, ...] | None,
        products: tuple[str, ...] | None,
        family: str | None,
        product: str | None,
    ) -> bool:
        """Whether a statement naming ``families``/``products`` covers ``family`` (and ``product``)."""
        if family is not None:
            if families is None and self.own_hdk_line(family):
                return False
            if families is not None and family not in families:
                return False
        return product is None or products is None or product in products

    # -- HDK -------------------------------------------------------------------------------

    def hdk_pairs(
        self,
        cann: str,
        *,
        family: str | None = None,
        include_unstated: bool = True,
        product: str | None = None,
    ) -> list[HdkRow]:
        """HDK rows for a CANN version (exact, else its release), strongest evidence first."""
        target = _cann(cann)
        keys = {str(target)}
        if target.release != target:
            keys.add(str(target.release))
        by_cann = self._hdk_by_cann()
        rows = dict.fromkeys(r for k in keys for r in by_cann.get(k, ()))
        out: list[HdkRow] = []
        for row in (r for r in self.hdk if r in rows):
            if not self._covers(row.families, row.products, family, product):
                continue
            if family and row.families is None and not include_unstated:
                continue
            out.append(row)
        return sorted(out, key=lambda r: (EVIDENCE_RANK[r.evidence], r.families is None))

    def _hdk_by_cann(self) -> dict[str, list[HdkRow]]:
        """Canonical CANN version -> the HDK rows that name it (built once per matrix)."""
        hit: dict[str, list[HdkRow]] | None = self._memo.get(("hdk_by_cann",))
        if hit is None:
            hit = {}
            for row in self.hdk:
                for c in row.cann:
                    hit.setdefault(str(_cann(c)), []).append(row)
            self._memo[("hdk_by_cann",)] = hit
        return hit

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

    def driver_requirement(
        self, cann: str, family: str, product: str | None = None
    ) -> DriverRequirement | None:
        key = ("driver_requirement", cann, family, product)
        if key not in self._memo:
            self._memo[key] = self._driver_requirement(cann, family, product)
        result: DriverRequirement | None = self._memo[key]
        return result

    def hdk_compat_rows(
        self, cann: str, family: str | None = None, product: str | None = None
    ) -> list[HdkCompatRow]:
        """The vendor's CANN <-> HDK compatibility statements that cover ``cann`` on ``family``."""
        return [
            r
            for r in self.hdk_compat
            if self._covers(r.families, r.products, family, product)
            and any(series_matches("cann", c, cann) for c in r.cann)
        ]

    def _driver_requirement(self, cann: str, family: str, product: str | None) -> DriverRequirement | None:
        """What the vendor says about drivers for a CANN version on a family.

        The pairing rows of the strongest evidence that name the family (the release's own HDK),
        the compatibility statements (HDK series Y/N) and the drivers vendor projects validated.
        Nothing is assumed about HDKs no statement names: they are ``unknown``.
        """
        rows = [
            r
            for r in self.hdk_pairs(cann, family=family, include_unstated=False, product=product)
            if r.driver or r.driver_range
        ]
        compat = tuple(self.hdk_compat_rows(cann, family, product))
        validated = tuple(
            r
            for r in self.hdk_pairs(cann, family=family, product=product)
            if r.evidence == "validated" and r.families is None
        )
        if not rows and not compat and not validated:
            return None
        chosen: tuple[HdkRow, ...] = ()
        if rows:
            best = min(EVIDENCE_RANK[r.evidence] for r in rows)
            chosen = tuple(r for r in rows if EVIDENCE_RANK[r.evidence] == best)
        drivers = sorted({d for r in chosen for d in r.driver}, key=_drv)
        minimum = drivers[0] if drivers else None
        good = [*drivers, *(d for r in validated for d in r.driver)]
        good += [h for r in compat if r.compatible for h in r.hdk]
        explicit = [r.driver_range for r in chosen if r.driver_range]
        rng = explicit[0] if explicit and not compat else _covering_range(good)
        lines = {r.products for r in chosen if r.products is not None}
        lines |= {r.products for r in compat if r.products is not None}
        if product is None and len(lines) > 1:
            # HDKs of several products' own lines (25.7.RC1, 25.1.RC1) are not one numeric range
            rng, minimum = "*", None
        evidence: Evidence = chosen[0].evidence if chosen else ("validated" if validated else "declared")
        notes = []
        if chosen:
            notes.append(f"{evidence}: {', '.join(drivers) or rng}")
        if compat:
            notes.append("compatibility statement: " + "; ".join(r.statement for r in compat))
        else:
            notes.append("no compatibility statement: other HDKs are unknown")
        first = next((r for r in chosen if minimum and minimum in r.driver), chosen[0] if chosen else None)
        return DriverRequirement(
            cann=str(_cann(cann)),
            family=family,
            product=product,
            minimum=minimum,
            range=rng,
            evidence=evidence,
            rows=chosen,
            hdk=(first.hdk if first else None) or (_drv(minimum).hdk if minimum else None),
            firmware=first.firmware if first else None,
            note="; ".join(notes),
            compat=compat,
            validated=validated,
        )

    def hdk_verdict(
        self,
        cann: str,
        driver: str,
        family: str,
        product: str | None = None,
        candidates: Sequence[str] = (),
    ) -> Verdict:
        """The vendor's word on ``driver`` with CANN ``cann`` on ``family`` (see :class:`Verdict`).

        For a family whose HDKs are numbered per product (``hdk_line: own``) the answer is the
        product's; when the product is not known and the products' answers differ, it is
        ``unknown`` and names each candidate's answer. ``candidates``: the products the host may
        be (it told no one product), judged the same way in any family."""
        prods = self.products_of(family)
        if product is None and prods and self.own_hdk_line(family):
            if candidates:
                prods = tuple(self.product(c) for c in candidates)
            return self._any_product_verdict(cann, driver, family, prods)
        if product is None and candidates:
            per = [self.hdk_verdict(cann, driver, family, c) for c in candidates]
            if len({(v.level, v.statement) for v in per}) == 1:
                # one answer whichever of the candidates the host is
                return replace(per[0], subject=f"driver {driver} with CANN {cann} on {family}")
            return self._any_product_verdict(cann, driver, family, tuple(self.product(c) for c in candidates))
        where = family if product is None else f"{family} ({self.product(product).title})"
        subject = f"driver {driver} with CANN {cann} on {where}"
        early = self._cann_predates(cann, family, product, subject)
        if early is not None:
            return early
        v = self._stated_verdict(cann, driver, family, product, subject)
        # a pairing the family's statements accept, with a driver older than the first HDK a
        # statement pairs with the product, is not known for the product (a stated "N" stays)
        low = self._driver_predates(driver, product, subject) if v.ok else None
        return v if low is None else low

    def _stated_verdict(
        self, cann: str, driver: str, family: str, product: str | None, subject: str
    ) -> Verdict:
        req = self.driver_requirement(cann, family, product)
        settle = (
            f"the CANN {cann} release note's CANN/Ascend HDK compatibility table "
            "(hiascend 'CANN与驱动版本配套关系'), or `cannenv matrix refresh` with the newest ascend-deployer"
        )
        if req is None:
            return Verdict(
                "unknown",
                subject,
                f"the matrix has no HDK statement for CANN {cann} on {family}",
                settle=settle,
            )
        level, basis = req.level(driver)
        rec = ", ".join(req.recommended_drivers) or None
        srcs = tuple(dict.fromkeys(s for r in basis for s in r.sources))
        if level == "recommended":
            hdk = next((r.hdk for r in basis if isinstance(r, HdkRow) and r.hdk), None) or f"driver {driver}"
            return Verdict(level, subject, f"{hdk} is the HDK released with CANN {cann}", srcs)
        if level == "compatible":
            said = "; ".join(
                r.statement if isinstance(r, HdkCompatRow) else f"validated: {r.note or r.hdk or ''}".strip()
                for r in basis
            )
            return Verdict(level, subject, said, srcs, recommended=rec)
        if level == "incompatible":
            said = "; ".join(r.statement for r in basis if isinstance(r, HdkCompatRow))
            return Verdict(level, subject, f"not compatible: {said}", srcs, recommended=rec)
        if basis:
            said = " / ".join(
                f"{'Y' if r.compatible else 'N'} per {r.statement}"
                for r in basis
                if isinstance(r, HdkCompatRow)
            )
            return Verdict(
                level, subject, f"the sources disagree: {said}", srcs, recommended=rec, settle=settle
            )
        known = ", ".join((*req.recommended_drivers, *req.compatible_series)) or "none"
        return Verdict(
            level,
            subject,
            f"no vendor statement covers driver {driver} for CANN {cann} on {family} (stated good: {known})",
            req.sources,
            recommended=rec,
            settle=settle,
        )

    def _cann_predates(self, cann: str, family: str, product: str | None, subject: str) -> Verdict | None:
        """CANN older than the first release that supports the family (incompatible) or that a
        statement names for the product (unknown); None otherwise."""
        info = self.family_info(family)
        if info is not None and info.cann_from and _cann(cann).release < _cann(info.cann_from).release:
            named = [r.statement for r in self.hdk_compat_rows(cann, family, product) if r.compatible]
            first = info.cann_from_statement or f"first supported {info.cann_from}"
            said = f"CANN {cann} predates the {info.title}: {first}"
            if named:
                said += "; the compatibility table marks it Y: " + "; ".join(named) + " (both recorded)"
            return Verdict("incompatible", subject, said, info.sources)
        if product is not None:
            prod = self.product(product)
            if prod.cann_from and _cann(cann).release < _cann(prod.cann_from).release:
                return Verdict(
                    "unknown",
                    subject,
                    f"no statement names CANN {cann} for the {prod.title}: "
                    + (prod.cann_from_statement or f"statements start at CANN {prod.cann_from}"),
                    prod.sources,
                    settle=f"a vendor statement pairing CANN {cann} with the {prod.title}",
                )
        return None

    def _driver_predates(self, driver: str, product: str | None, subject: str) -> Verdict | None:
        """A driver older than the first Ascend HDK a statement pairs with the product (unknown:
        no statement names it for the product); None otherwise or where a version does not parse."""
        if product is None:
            return None
        prod = self.product(product)
        if not prod.hdk_from:
            return None
        try:
            older = bool(_drv(driver) < _drv(prod.hdk_from))
        except VersionError:
            return None
        if not older:
            return None
        return Verdict(
            "unknown",
            subject,
            f"no statement names driver {driver} for the {prod.title}: "
            + (prod.hdk_from_statement or f"statements start at Ascend HDK {prod.hdk_from}"),
            prod.sources,
            recommended=prod.hdk_from,
            settle=f"a vendor statement pairing Ascend HDK {driver} with the {prod.title}",
        )

    def _any_product_verdict(
        self, cann: str, driver: str, family: str, prods: tuple[Product, ...]
    ) -> Verdict:
        per = [(p, self.hdk_verdict(cann, driver, family, p.id)) for p in prods]
        subject = f"driver {driver} with CANN {cann} on {family}"
        srcs = tuple(dict.fromkeys(s for _, v in per for s in v.sources))
        levels = {v.level for _, v in per}
        each = "; ".join(f"{p.title}: {v.level}: {v.statement}" for p, v in per)
        if len(levels) == 1:
            only = per[0][1]
            return Verdict(only.level, subject, f"the same for every product: {each}", srcs, only.recommended)
        return Verdict(
            "unknown",
            subject,
            "the answer depends on the product, which is not known (candidates: "
            + ", ".join(p.title for p in prods)
            + f"): {each}",
            srcs,
            settle="the product: PCI subsystem id (lspci -nn -v), npu-smi board / chip name, or the "
            "accelerator-type node label (`matrix query --product ID`)",
        )

    def cann_accepting_driver(
        self, driver: str, *, family: str | None = None, product: str | None = None
    ) -> list[DriverRequirement]:
        """CANN releases the vendor recommends or states compatible with ``driver`` (newest first).

        For a family whose HDKs are numbered per product, each product is asked on its own."""
        fams = [family] if family else list(FAMILY_IDS)
        out = []
        for cann in self.cann_versions():
            for fam in fams:
                prods: list[str | None] = [product]
                if product is None and self.own_hdk_line(fam) and self.products_of(fam):
                    prods = [p.id for p in self.products_of(fam)]
                for prod in prods:
                    req = self.driver_requirement(cann, fam, prod)
                    if req is None or not req.accepts(driver):
                        continue
                    if self._cann_predates(cann, fam, prod, "") is not None:
                        continue
                    out.append(req)
        return sorted(out, key=lambda r: (_cann(r.cann), r.family, r.product or ""), reverse=True)

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
        file = fill_template(pat.pattern, version=version, arch=arch, hdk_arch=hdk_arch)
        return InstallerName(component, pat.package, file, pat.sources, pat.note)

    def download(self, file: str) -> Download | None:
        """The vendor manifest entry (sha256, URL) of an installer file, if any manifest lists it.

        Where the vendor's releases disagree on a file's sha256 (:meth:`downloads_of` gives every
        statement), this is the one the newest release states; its note names the others."""
        rows = self._downloads_by_file.get(file, ())
        if len(rows) <= 1:
            return rows[0] if rows else None
        from cannenv.matrix.deployer import release_key

        def newest(d: Download) -> Any:
            return max(release_key(s.removeprefix("DEPLOYER-")) for s in d.sources)

        return max(rows, key=newest)

    def downloads_of(self, file: str) -> tuple[Download, ...]:
        """Every vendor statement about ``file`` (more than one where releases disagree)."""
        return self._downloads_by_file.get(file, ())

    def vendor_archive(
        self, file: str, *, hdk: str | None = None, arch: str | None = None
    ) -> Download | None:
        """The vendor download that carries the installer ``file``, with its sha256: the file itself
        when a manifest lists it, else the ``.zip`` of the same name. From CANN 8.1.RC1 the vendor
        ships ``<name>.run`` (with its ``.cms``/``.crl`` signature) inside ``<name>.zip`` and publishes
        the digest of the zip only (ascend-deployer ``downloader/software/CANN_<v>.json``; its
        ``jobs.py`` extracts the members named after the zip)."""
        listed = self.download(file)
        if listed is not None or not file.endswith(".run"):
            return listed
        zipped = self.download(file[: -len(".run")] + ".zip")
        if zipped is not None:
            return zipped
        return self._hdk_bundle(file, hdk=hdk, arch=arch)

    def _hdk_bundle(self, file: str, *, hdk: str | None, arch: str | None) -> Download | None:
        """The HDK bundle zip (``Ascend-hdk-<chip>-npu_<hdk>_linux-<arch>.zip``, ascend-deployer
        ``NPU_<hdk>.json``) that carries a driver or firmware ``.run`` (driver and firmware are both
        inside it). A firmware file names its own version, not the HDK's: ``hdk`` (the stack's
        driver) and ``arch`` say which bundle."""
        m = _DRIVER_RUN.match(file)
        if m is not None:
            return self.download(f"Ascend-hdk-{m['chip']}-npu_{m['v']}_linux-{m['arch']}.zip")
        m = _FIRMWARE_RUN.match(file)
        if m is not None and hdk and arch:
            hdk_arch = "x86-64" if arch in ("x86_64", "x86-64") else arch
            return self.download(f"Ascend-hdk-{m['chip']}-npu_{hdk.lower()}_linux-{hdk_arch}.zip")
        return None

    def digest_gap(self, file: str) -> str | None:
        """Why no vendor digest is known for installer ``file`` (None when one is): which vendor
        manifests the matrix holds and what they cover, so the user knows what would settle it."""
        if self.vendor_archive(file) is not None:
            return None
        from cannenv.matrix.deployer import classify, release_key

        releases = sorted(
            (sid.removeprefix("DEPLOYER-") for sid in self.sources if sid.startswith("DEPLOYER-")),
            key=release_key,
        )
        if not releases:
            return "the matrix holds no vendor download manifest (cannenv matrix refresh --from DIR --write)"
        held = (
            f"ascend-deployer {releases[0]} … {releases[-1]}"
            if len(releases) > 1
            else f"ascend-deployer {releases[0]}"
        )
        drv = _DRIVER_RUN.match(file)
        if drv is not None:
            bundle = f"Ascend-hdk-{drv['chip']}-npu_{drv['v']}_linux-{drv['arch']}.zip"
            hdks = sorted(
                {
                    d.version
                    for d in self.downloads
                    if d.component == "hdk" and d.file.startswith(f"Ascend-hdk-{drv['chip']}-npu_")
                },
                key=_drv,
            )
            said = (
                f"HDK {hdks[0]} … {hdks[-1]} for {drv['chip']}, not {drv['v']}"
                if hdks
                else f"no {drv['chip']} HDK bundle"
            )
            return (
                f"no vendor manifest lists {file} or the HDK bundle {bundle} that carries it: the matrix "
                f"holds the download manifests (NPU_*.json) of {held}, which list {said}; a later "
                "ascend-deployer that lists it settles it (cannenv matrix refresh --from DIR --write)"
            )
        info = classify(file) or {}
        comp = str(info.get("component", ""))
        label = {"cann": "CANN toolkit", "ops": "ops/kernels", "nnal": "NNAL"}.get(comp, comp)
        same = sorted(
            {d.version for d in self.downloads if d.component == comp and d.arch in (None, info.get("arch"))},
            key=_cann,
        )
        if not comp:
            said = "no file of that name"
        elif not same:
            said = f"no {label} package at all"
        else:
            said = f"{label} {same[0]} … {same[-1]}, not {info.get('version')}"
        return (
            f"no vendor manifest lists {file} or its .zip: the matrix holds the download manifests of "
            f"{held}, which list {said}; a later ascend-deployer that lists it settles it "
            "(cannenv matrix refresh --from DIR --write)"
        )

    def ops_package(self, cann: str, family: str, arch: str) -> InstallerName:
        """The chip ops/kernels package for a toolkit version (renamed at 8.5)."""
        return self.installer_file("ops", str(_cann(cann)), family, arch)

    def companion_verdict(self, component: str, cann: str, version: str) -> tuple[bool | None, str]:
        """Whether ``component`` (ops/nnal) ``version`` goes with toolkit ``cann``, and the rule that
        says so: a window rule (CANN 9.x: [N-1, N, N+1] by major version, lowest 8.5.0) where one
        covers the toolkit, else the same version (or the named alternatives). None: no rule."""
        canon = str(_cann(cann))
        rules = [r for r in self.companions if r.component == component and _in_range("cann", r.cann, canon)]
        if not rules:
            return None, f"no rule for {component} with toolkit {cann}"
        have = _cann(version)
        for r in rules:
            if r.window is None or r.floor is None or _cann(canon).release < _cann(r.floor).release:
                continue
            low = _cann(r.floor).release
            major_t, major_v = _cann(canon).major, have.major
            ok = have.release >= low and abs(major_t - major_v) <= r.window
            said = (
                f"toolkit {cann} and {component} {version}: the window [N-1, N, N+1] around major "
                f"version {major_t}, lowest {r.floor} [{', '.join(r.sources)}]"
            )
            return ok, said
        allowed = self.companion_versions(component, cann)
        ok = any(have == _cann(a) for a in allowed)
        srcs = ", ".join(dict.fromkeys(s for r in rules for s in r.sources))
        return ok, f"{component} must be {' or '.join(allowed)} with toolkit {cann} [{srcs}]"

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
        if cann and tnpu:
            tv = self.torch_npu_verdict(tnpu, cann, torch=torch)
            if not tv.ok:
                out.append(f"{tv.subject}: {tv.level}: {tv.statement}")
        if (
            torch
            and tnpu
            and not any(
                _pep(r.torch).release[:3] == _pep(torch).release[:3]
                for r in self.torch_npu_rows(torch_npu=tnpu, include_superseded=True)
            )
        ):
            out.append(f"no torch_npu row pairs torch_npu {tnpu} with torch {torch}")
        if torch and py and not self.python_ok(torch, py):
            out.append(f"torch {torch} does not support Python {py}")
        out.extend(self.python_limit_lines(stack)[0])
        for package, version in (("torch-npu", tnpu), ("torch", torch)):
            if version and py:
                for arch in stack.arches:
                    if self.wheel_published(version, py, arch=arch, package=package) is False:
                        out.append(
                            f"no {package} {version} wheel for Python {py} on {arch} on the package index"
                        )
        if cann and drv:
            hv = self.hdk_verdict(cann, drv, stack.family, stack.product)
            if not hv.ok:
                out.append(f"{hv.subject}: {hv.level}: {hv.statement}")
        for key in ("ops", "nnal"):
            companion = v(key)
            if cann and companion:
                ok, said = self.companion_verdict(key, cann, companion)
                if ok is False:
                    out.append(f"{key} {companion} does not go with toolkit CANN {cann}: {said}")
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
        for key, comp in stack.components.items():
            for arch, art in comp.artifacts.items():
                listed = self.download(art.file)
                if listed is not None and art.sha256 is not None and art.sha256 != listed.sha256:
                    out.append(
                        f"{key} file {art.file} for {arch}: sha256 {art.sha256} differs from the vendor "
                        f"manifest's {listed.sha256} ({', '.join(listed.sources)})"
                    )
        return out

    def python_limits_broken(self, component: str, version: str, python: str) -> list[PythonLimit]:
        """The vendor's statements that ``component`` ``version``'s Python library does not install
        on ``python`` (empty: none says so, or no statement covers that release)."""
        try:
            want = _cann(version)
        except VersionError:
            return []
        return [
            r
            for r in self.python_limits
            if r.component == component
            and any(_cann(c) == want for c in r.cann)
            and not any(same_python_line(p, python) for p in r.python)
        ]

    def python_limit_lines(self, stack: Stack) -> tuple[list[str], list[str]]:
        """(problems, notes): a stack pinning a component whose Python library the vendor's installer
        refuses on the stack's Python is a problem unless the stack excludes that library (a note)."""
        problems: list[str] = []
        notes: list[str] = []
        py = stack.version("python")
        if not py:
            return problems, notes
        for key, comp in stack.components.items():
            for lim in self.python_limits_broken(key, comp.version, py):
                said = (
                    f"{key} {comp.version}'s Python library {lim.library} installs only on Python "
                    f"{', '.join(lim.python)} [{', '.join(lim.sources)}]"
                )
                if lim.library in comp.excludes:
                    notes.append(f"{said}: this stack (Python {py}) installs {key} without {lim.library}")
                else:
                    problems.append(
                        f"{said}; the stack pins Python {py} "
                        f"(exclude it: `excludes: [{lim.library}]` on {key})"
                    )
        return problems, notes

    def stack_notes(self, stack: Stack, *, today: str | None = None) -> list[str]:
        """What the vendor's support policy says about the stack's torch_npu line (EOL, maintenance)."""
        import datetime

        now = today or datetime.date.today().strftime("%Y/%m/%d")
        tnpu = stack.version("torch_npu")
        out: list[str] = []
        for row in self.lifecycle_of(tnpu) if tnpu else []:
            eol = _date_key(row.eol) if row.eol else None
            if row.status == "eol" or (eol is not None and eol <= _date_key(now)):
                out.append(
                    f"torch_npu line {row.torch_npu} is past its end of life"
                    + (f" ({row.eol})" if row.eol else "")
                    + f" [{', '.join(row.sources)}]"
                )
            else:
                out.append(
                    f"torch_npu line {row.torch_npu}: {row.status}"
                    + (f"; {row.note}" if row.note else "")
                    + f" [{', '.join(row.sources)}]"
                )
        return list(dict.fromkeys(out))

    def lifecycle_of(self, torch_npu: str) -> list[LifecycleRow]:
        """The support-policy rows of the torch_npu line of ``torch_npu`` (2.7.1.post8 -> 2.7.1)."""
        want = _pep(torch_npu).release[:3]
        return [r for r in self.lifecycle if _pep(r.torch_npu).release[:3] == want]

    def lint_problems(self) -> list[str]:
        """Cross-entry consistency of the whole matrix (used by `cannenv matrix lint` and tests)."""
        out: list[str] = []
        for s in self.stacks:
            out.extend(f"stack {s.id}: {p}" for p in self.stack_problems(s))
        return out


_DRIVER_RUN = re.compile(
    r"^Ascend-hdk-(?P<chip>[0-9a-z]+)-npu-driver_(?P<v>[^_]+)_linux-(?P<arch>aarch64|x86-64)\.run\Z"
)
_FIRMWARE_RUN = re.compile(r"^Ascend-hdk-(?P<chip>[0-9a-z]+)-npu-firmware_(?P<v>[^_]+)\.run\Z")


def _covering_range(items: Sequence[str]) -> str:
    """The smallest ``>=low,<high`` range holding every driver or HDK series in ``items``
    (``25.0.X`` counts from 25.0; the upper end is the next series after the newest item)."""
    keyed = []
    for item in items:
        parts = item.split(".")
        try:
            series = (int(parts[0]), int(parts[1]))
        except (ValueError, IndexError):
            continue
        low = f"{series[0]}.{series[1]}" if parts[-1] in ("X", "x") else item.lower()
        keyed.append((series, low, parts[-1] in ("X", "x")))
    if not keyed:
        return "*"

    def order(k: tuple[tuple[int, int], str, bool]) -> tuple[Any, ...]:
        # within a series: a whole-series item first, then the lowest version (25.5.0 before 25.5.1)
        try:
            v: Any = _drv(k[1]) if not k[2] else None
        except VersionError:
            v = None
        return (k[0], not k[2], v is None, v if v is not None else 0)

    keyed.sort(key=order)
    low = keyed[0][1]
    top = max(k[0] for k in keyed)
    return f">={low},<{top[0]}.{top[1] + 1}"


def _line_matches(pattern: str, release: str) -> bool:
    """TorchNPU release line ``7.3.X`` matches 7.3.0 and 7.3.1; ``26.1.0`` only itself."""
    p = pattern.lower().split(".")
    r = release.lower().split(".")
    if p[-1] == "x":
        return r[: len(p) - 1] == p[:-1]
    return r == p


def _pep_ordinal(v: Any) -> float:
    """A number that orders PEP 440 versions of one line by distance (release, then post)."""
    rel = (*v.release, 0, 0, 0)
    return float(rel[0] * 1e6 + rel[1] * 1e4 + rel[2] * 1e2 + (v.post or 0) * 1e-2)


_TABLE_RANK = {"active": 0, "historical": 1, "other": 2}


def _merge_rows(rows: Iterable[TorchNpuRow]) -> tuple[TorchNpuRow, ...]:
    """One row per (torch_npu, torch, CANN, status, evidence): the same pairing stated by several
    sources (a table and the vendor installer) is one row naming all of them."""
    import dataclasses

    out: dict[tuple[str, ...], TorchNpuRow] = {}
    for r in rows:
        key = (str(_pep(r.torch_npu)), str(_pep(r.torch)), str(_cann(r.cann)), r.status, r.evidence)
        have = out.get(key)
        if have is None:
            out[key] = r
            continue
        if _TABLE_RANK[r.table] < _TABLE_RANK[have.table]:  # the vendor table's row leads
            have, r = r, have
        notes = "; ".join(n for n in (have.note, r.note) if n) or None
        out[key] = dataclasses.replace(
            have,
            branch=have.branch or r.branch,
            python=have.python or r.python,
            sources=tuple(dict.fromkeys((*have.sources, *r.sources))),
            note=notes,
        )
    return tuple(out.values())


def _component_key(version: str) -> str:
    """``v0.23.0`` / ``0.23.0`` / ``2.2.RC1`` / ``2.2.rc1``: one key (PEP 440 where it reads as one)."""
    text = version.strip().lower().removeprefix("v")
    try:
        return str(_pep(text))
    except VersionError:
        return text


@lru_cache(maxsize=256)
def _python_line(python: str) -> str:
    """``3.11.4`` -> ``3.11``."""
    rel = _pep(python).release
    return f"{rel[0]}.{rel[1] if len(rel) > 1 else 0}"


@lru_cache(maxsize=8192)
def _release3(version: str) -> str:
    """major.minor.patch of a PEP 440 version (2.7.1.post4 -> 2.7.1, 2.9 -> 2.9.0)."""
    return ".".join(str(n) for n in (*_pep(version).release, 0, 0)[:3])


def _canonical_pep(version: str) -> str:
    return str(_pep(version))


def _date_key(text: str) -> tuple[int, ...]:
    """``2026/7/22`` -> (2026, 7, 22), as the support policy writes dates."""
    try:
        return tuple(int(p) for p in text.replace("-", "/").split("/"))
    except ValueError:
        return (9999,)
