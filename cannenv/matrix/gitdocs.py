"""Every revision of a few documents that the branches and tags of a git clone hold.

The vendor keeps its release notes and version tables per release branch and tag (Ascend/pytorch,
MindSpeed, MindIE ...): ``matrix save-release-notes`` (:mod:`cannenv.matrix.torchnpu_notes`) and
``matrix save-component-notes`` (:mod:`cannenv.matrix.component_notes`) both walk a clone the same
way and differ only in which names they give the saved files and what they keep. Git runs through
:func:`cannenv.host.run` (argument lists, a timeout, bounded output); the clone may be bare.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIT_TIMEOUT_S = 120.0
GIT_OUTPUT_MAX = 16 << 20
COMMIT = re.compile(r"^[0-9a-f]{40}\Z")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([+-][0-9]{2}:[0-9]{2}|Z)\Z")


@dataclass(frozen=True)
class Revision:
    """One distinct blob of a watched document, as the first ref holding it saw it."""

    blob: str
    path: str
    """the document's path in the first ref that holds the blob"""
    commit: str
    """the commit that last changed ``path`` in that ref (full hash)"""
    date: str
    """that commit's committer date (ISO 8601 with offset)"""
    refs: tuple[str, ...]
    """every ``refs/heads/…`` / ``refs/tags/…`` holding the blob, in git's order (a ref that holds
    it at two watched paths is named twice)"""

    @property
    def names(self) -> list[str]:
        """The refs without ``refs/heads/`` / ``refs/tags/``."""
        return [r.split("/", 2)[2] for r in self.refs]

    @property
    def heads(self) -> list[str]:
        """The branches holding the blob (names, in git's order)."""
        return [r.split("/", 2)[2] for r in self.refs if r.startswith("refs/heads/")]


class Clone:
    """A git clone of ``repository`` read through :func:`cannenv.host.run`."""

    def __init__(self, git_dir: Path, repository: str) -> None:
        self.git_dir = git_dir
        self.repository = repository

    def git(self, *args: str, max_output: int = GIT_OUTPUT_MAX) -> str:
        from cannenv.errors import ExternalError
        from cannenv.host import run

        res = run(["git", "-C", str(self.git_dir), *args], timeout=GIT_TIMEOUT_S, max_output=max_output)
        if not res.ok:
            raise ExternalError(res.describe(), hint=f"is {self.git_dir} a clone of {self.repository}?")
        return res.stdout

    def blob_text(self, blob: str, max_output: int) -> str:
        return self.git("cat-file", "blob", blob, max_output=max_output)

    def revisions(
        self, paths: tuple[str, ...], ref_pattern: re.Pattern[str], *, limit: int, what: str
    ) -> list[Revision]:
        """Each distinct blob that a branch or tag whose full name matches ``ref_pattern`` holds at
        one of ``paths``, in the order the walk first meets it (refs in ``for-each-ref`` order).
        More than ``limit`` distinct blobs is bad input (``what`` names them)."""
        from cannenv.errors import ExternalError, InputError

        refs = [
            r for r in self.git("for-each-ref", "--format=%(refname)", "refs/heads", "refs/tags").split() if r
        ]
        found: dict[str, dict[str, Any]] = {}
        for ref in refs:
            if not ref_pattern.match(ref):
                continue  # a ref name the saved folder cannot carry
            for line in self.git("ls-tree", "-r", "--full-tree", ref, "--", *paths).splitlines():
                meta, _, path = line.partition("\t")
                fields = meta.split()
                if len(fields) != 3 or fields[1] != "blob" or path not in paths:
                    continue
                blob = fields[2]
                if blob not in found:
                    log = self.git("log", "-1", "--format=%H %cI", ref, "--", path).split()
                    if len(log) != 2 or not (COMMIT.match(log[0]) and DATE.match(log[1])):
                        raise ExternalError(f"git log of {ref}:{path} gave {log!r}", hint="")
                    found[blob] = {"path": path, "commit": log[0], "date": log[1], "refs": []}
                found[blob]["refs"].append(ref)
        if len(found) > limit:
            raise InputError(f"{self.git_dir}: more than {limit} distinct {what}", hint="")
        return [
            Revision(blob, e["path"], e["commit"], e["date"], tuple(e["refs"])) for blob, e in found.items()
        ]


def strip_tags(text: str) -> str:
    """Text of an HTML fragment (tags dropped), linear: one pass over the characters."""
    out: list[str] = []
    depth = 0
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out).strip()


def instant(date: str) -> str:
    """An ISO date with offset as a sortable UTC string ('' sorts first)."""
    from datetime import datetime, timezone

    try:
        return datetime.fromisoformat(date.replace("Z", "+00:00")).astimezone(timezone.utc).isoformat()
    except ValueError:
        return ""


@dataclass(frozen=True)
class ManifestRules:
    """What a saved folder's ``refs.json`` may hold (each importer has its own names and limits)."""

    name: re.Pattern[str]
    """a saved file's name; its ``commit`` group is a prefix of the entry's commit"""
    path: re.Pattern[str]
    ref: re.Pattern[str]
    max_bytes: int
    max_entries: int
    max_refs: int
    saved_by: str
    """the command that writes such a folder (named in the hints)"""


def read_manifest(p: Path, rules: ManifestRules) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``refs.json`` read within ``rules.max_bytes``, every entry checked (bad input names the field):
    (the document, file name -> {path, commit, date, refs}, in the order of ``notes``, so entry ``n``
    is ``notes[n]``). The caller checks what is its own."""
    from cannenv.errors import InputError

    with p.open("rb") as fh:
        data = fh.read(rules.max_bytes + 1)
    if len(data) > rules.max_bytes:
        raise InputError(f"{p}: more than {rules.max_bytes} bytes", hint="one entry per saved document")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{p}: not JSON ({exc})", hint=f"write it again with `{rules.saved_by}`") from None
    notes = doc.get("notes") if isinstance(doc, dict) else None
    if not isinstance(notes, list) or len(notes) > rules.max_entries:
        raise InputError(
            f"{p}: 'notes' must be a list of at most {rules.max_entries} entries", hint="see README.md"
        )
    out: dict[str, dict[str, Any]] = {}
    for n, e in enumerate(notes):
        where = f"{p}: notes[{n}]"
        if not isinstance(e, dict):
            raise InputError(f"{where}: not an object", hint="see README.md")
        for key, pattern in (("file", rules.name), ("path", rules.path), ("commit", COMMIT), ("date", DATE)):
            v = e.get(key)
            if not isinstance(v, str) or not pattern.match(v):
                raise InputError(f"{where}.{key}: {str(v)[:80]!r} is not a valid {key}", hint="see README.md")
        refs = e.get("refs")
        if (
            not isinstance(refs, list)
            or not 0 < len(refs) <= rules.max_refs
            or not all(isinstance(r, str) and rules.ref.match(r) for r in refs)
        ):
            raise InputError(
                f"{where}.refs: a list of at most {rules.max_refs} refs/heads/… or refs/tags/… names",
                hint="see README.md",
            )
        m = rules.name.match(e["file"])
        assert m is not None
        if not e["commit"].startswith(m["commit"]):
            raise InputError(f"{where}: commit {e['commit']} is not the file name's {m['commit']}", hint="")
        if e["file"] in out:
            raise InputError(f"{where}: {e['file']} named twice", hint="one entry per file")
        out[e["file"]] = {"path": e["path"], "commit": e["commit"], "date": e["date"], "refs": tuple(refs)}
    return doc, out
