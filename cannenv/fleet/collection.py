"""A collection: one directory with a facts file per host and a manifest saying what happened.

``DIR/collection.json`` is written by ``cannenv fleet collect`` (atomically). It lists every host the
run touched with a status (``collected``, ``unreachable``, ``no-python``, ``python-mismatch``,
``timeout``, ``facts-failed``, ``failed``) and a reason. A directory written by the Ansible role
alone has no manifest: every ``*.json`` beside it is then a collected host named after the file.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from cannenv.errors import NotFoundError

MANIFEST_NAME = "collection.json"
COLLECTION_SCHEMA_VERSION = 1


class HostResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    status: str
    reason: str = ""
    facts_file: str | None = None
    """Relative to the collection directory."""


class Collection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    schema_version: int = COLLECTION_SCHEMA_VERSION
    cannenv_version: str = ""
    started_at: str = ""
    finished_at: str = ""
    inventory: str = ""
    limit: str | None = None
    forks: int | None = None
    bundle_tag: str | None = None
    """``py3-none-any`` for the bundle `collect` built (pure Python, any host); None when none was built."""
    bundle_sha256: str | None = None
    hosts: tuple[HostResult, ...] = ()
    root: Path = Field(default=Path(), exclude=True)

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"

    def host(self, name: str) -> HostResult | None:
        for h in self.hosts:
            if h.name == name:
                return h
        return None


def load_collection(directory: str | Path) -> Collection:
    """Read a collection directory (with or without a manifest)."""
    root = Path(directory)
    if not root.is_dir():
        raise NotFoundError(
            f"collection directory {str(root)!r} does not exist",
            hint="make one with `cannenv fleet collect -i INVENTORY --out DIR`",
        )
    manifest = root / MANIFEST_NAME
    if manifest.is_file():
        from cannenv import records

        hint = "the manifest is written by `cannenv fleet collect`; do not edit it by hand"
        # a link in place of the manifest (a snapshot's too) is refused: nothing read leaves the folder
        text = records.read_text(manifest, what="manifest", nofollow=True)
        raw = records.parse_json(text, source=str(manifest), hint=hint)
        records.check_schema_version(
            raw,
            source=str(manifest),
            supported=COLLECTION_SCHEMA_VERSION,
            what="collection",
            default=1,
            hint="upgrade cannenv",
        )
        return records.validate(Collection, {**raw, "root": root}, source=str(manifest), hint=hint)
    files = sorted(p for p in root.glob("*.json") if p.name != MANIFEST_NAME)
    if not files:
        raise NotFoundError(
            f"{root} holds no facts files (*.json) and no {MANIFEST_NAME}",
            hint="collect with `cannenv fleet collect` or the ansible/ role (one <host>.json per host)",
        )
    hosts = tuple(HostResult(name=p.stem, status="collected", facts_file=p.name) for p in files)
    return Collection(hosts=hosts, root=root)
