"""Drift history: earlier collections kept beside the latest one, and what changed when.

``cannenv fleet collect --out DIR`` writes the new collection into DIR (``fleet report DIR`` reads
it, as before) and first moves the one DIR held into ``DIR/history/<UTC time>/`` (its manifest and
facts files: a whole collection that ``fleet report``/``fleet diff`` read as any other), keeping the
newest ``keep`` of them. ``cannenv fleet report DIR --since WHEN`` compares each collection taken
since WHEN with the one before it (:func:`history_since`): the nodes that were added or removed, the
versions that moved, and with a target the findings that appeared, went or changed.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from cannenv.errors import InputError
from cannenv.fleet.collection import MANIFEST_NAME, load_collection

if TYPE_CHECKING:
    from cannenv.fleet.diff import FleetDiff
    from cannenv.fleet.report import Judge

HISTORY_DIR = "history"
DEFAULT_KEEP = 30
_STAMP = "%Y%m%dT%H%M%SZ"
_STAMP_RE = re.compile(r"^(\d{8}T\d{6}Z)(?:-\d{1,4})?\Z")
_RELATIVE = re.compile(r"^(\d{1,5})([mhdw])\Z")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def collection_time(directory: Path) -> dt.datetime:
    """When a collection was taken: its manifest's ``finished_at``; else the manifest's (or the
    folder's) modification time (a folder written by the Ansible role alone has no manifest)."""
    manifest = directory / MANIFEST_NAME
    if manifest.is_file():
        try:
            when = load_collection(directory).finished_at
            parsed = _utc(dt.datetime.fromisoformat(when)) if when else None
        except (ValueError, OverflowError, InputError):  # 9999-12-31T23:59:59-23:00 is past year 9999 in UTC
            parsed = None
        if parsed is not None:
            return parsed
    src = manifest if manifest.is_file() else directory
    return dt.datetime.fromtimestamp(src.stat().st_mtime, dt.timezone.utc)


def keep_previous(out: Path, keep: int = DEFAULT_KEEP) -> Path | None:
    """Move the collection in ``out`` into ``out/history/<UTC time>/`` (none kept with ``keep`` 0:
    its files are removed, as before history existed); keep the newest ``keep`` snapshots. Returns
    the snapshot folder, or None."""
    old = load_collection(out)
    from cannenv.sanitize import is_plain_file_name

    # names come from the manifest: only plain names in the folder are moved or removed, never a path
    files = [out / h.facts_file for h in old.hosts if h.facts_file and is_plain_file_name(h.facts_file)]
    if keep <= 0:
        for f in files:
            f.unlink(missing_ok=True)
        (out / MANIFEST_NAME).unlink()
        return None
    base = collection_time(out).astimezone(dt.timezone.utc).strftime(_STAMP)
    history = out / HISTORY_DIR
    history.mkdir(exist_ok=True)
    dest = history / base
    n = 1
    while dest.exists():
        n += 1
        dest = history / f"{base}-{n}"
    dest.mkdir()
    for f in files:
        # names come from the manifest: load_facts refuses any that is not a plain name in the folder
        if f.parent == out and f.is_file() and not f.is_symlink():
            f.rename(dest / f.name)
        else:
            f.unlink(missing_ok=True)
    (out / MANIFEST_NAME).rename(dest / MANIFEST_NAME)
    for stale in snapshots(out)[:-keep]:
        shutil.rmtree(stale)
    return dest


def snapshots(directory: str | Path) -> list[Path]:
    """The kept snapshots of a collection folder, oldest first (not the latest, the folder itself)."""
    history = Path(directory) / HISTORY_DIR
    if not history.is_dir():
        return []
    found = [p for p in history.iterdir() if p.is_dir() and not p.is_symlink() and _STAMP_RE.match(p.name)]
    return sorted(found, key=lambda p: (p.name[:16], len(p.name), p.name))


def parse_since(text: str, now: dt.datetime | None = None) -> dt.datetime:
    """``--since``: an ISO date or time (UTC unless it says otherwise) or ``N`` m/h/d/w ago."""
    now = now or dt.datetime.now(dt.timezone.utc)
    m = _RELATIVE.match(text.strip())
    if m:
        return now - dt.timedelta(**{_UNITS[m[2]]: int(m[1])})
    try:
        when = _utc(dt.datetime.fromisoformat(text.strip()))
    except (ValueError, OverflowError):
        raise InputError(
            f"--since {text!r}: expected an ISO date or time (2026-11-30, 2026-11-30T08:00) "
            "or an age (90m, 12h, 7d, 2w)"
        ) from None
    return when


def _utc(when: dt.datetime) -> dt.datetime:
    """``when`` in UTC (naive means UTC); OverflowError at the edge of the calendar, before any
    comparison or arithmetic meets it."""
    return (when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)


def history_since(
    directory: str | Path, since: dt.datetime, judge: Judge | None = None
) -> list[tuple[dt.datetime, FleetDiff]]:
    """Each collection taken at or after ``since`` (the kept snapshots, then the latest) against the
    one before it: (when the newer one was taken, the diff), oldest first."""
    from cannenv.fleet.diff import diff_collections
    from cannenv.fleet.report import build_report

    chain = [*snapshots(directory), Path(directory)]
    times = [collection_time(p) for p in chain]
    out: list[tuple[dt.datetime, FleetDiff]] = []
    for i in range(1, len(chain)):
        if times[i] < since:
            continue
        old, new = load_collection(chain[i - 1]), load_collection(chain[i])
        old_r = new_r = None
        if judge is not None:
            old_r = build_report(old, judge, source=str(chain[i - 1]))
            new_r = build_report(new, judge, source=str(chain[i]))
        out.append((times[i], diff_collections(old, new, old_report=old_r, new_report=new_r)))
    return out


def render_history(entries: list[tuple[dt.datetime, FleetDiff]], since: dt.datetime) -> str:
    from cannenv import sanitize
    from cannenv.fleet.diff import render_text

    stamp = since.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"changes since {stamp}: {len(entries)} collection(s)"]
    if not entries:
        lines.append("  no collection was taken since then (fleet collect --out keeps the earlier ones)")
    for when, diff in entries:
        lines.append(f"at {when.astimezone(dt.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')}:")
        lines.extend("  " + line for line in render_text(diff).splitlines()[1:])
    return "\n".join(sanitize.line(x) for x in lines) + "\n"
