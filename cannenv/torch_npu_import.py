"""Import the "Ascend Auxiliary Software" table that every torch_npu wheel carries in its METADATA.

The table maps CANN versions to supported PyTorch, extension (torch_npu) versions and branches.
Its quirks, as published: a blank CANN cell continues the previous CANN version; cells like
``1.11.0.rc2（beta)`` mix a full-width and an ASCII parenthesis; trailing spaces after the last
``|``; ``CANN`` written in front of every version.

``read_table(path)`` reads a ``.whl`` (zip) or an extracted METADATA file; ``merge_rows(file,
table)`` appends the missing rows to a matrix file, with the wheel named as their source, keeping
the file's comments and layout.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv import records
from cannenv.errors import InputError

_HEADING = re.compile(r"^#{1,6}\s*Ascend Auxiliary Software\s*\Z", re.IGNORECASE)
_VERSION = re.compile(r"^Version:\s*(\S+)\s*$", re.MULTILINE)
_INSTALL_CANN = re.compile(r"Install CANN ([0-9][0-9A-Za-z.-]*[0-9A-Za-z])[^\n.]*")
_TORCH_REQ = re.compile(r"^Requires-Dist:\s*torch\s*==\s*([0-9][0-9.]*[0-9])(\.\*)?\s*$", re.MULTILINE)
_BETA = re.compile(r"^(?P<v>[^\s(（]+)\s*[(（]\s*(?P<tag>beta|alpha)\s*[)）]\s*\Z", re.IGNORECASE)


@dataclass(frozen=True)
class ImportedRow:
    cann: str
    torch: str
    torch_npu: str
    branch: str | None
    raw_torch_npu: str
    prerelease: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "cann": self.cann,
            "torch": self.torch,
            "torch_npu": self.torch_npu,
            "branch": self.branch,
            "as_written": self.raw_torch_npu,
            "prerelease": self.prerelease,
        }


@dataclass(frozen=True)
class ImportedTable:
    source_id: str
    source_title: str
    package_version: str | None
    rows: tuple[ImportedRow, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)
    source_where: str | None = None
    source_url: str | None = None
    evidence: str = "recommended"
    """``declared`` when the METADATA has no table, only an install instruction naming a CANN"""
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": {"id": self.source_id, "title": self.source_title},
            "package_version": self.package_version,
            "rows": [r.to_json() for r in self.rows],
            "warnings": list(self.warnings),
        }


MAX_METADATA_BYTES = 8 << 20
MAX_WHEEL_MEMBERS = 200_000
"""Members of a wheel read (a torch_npu wheel has a few thousand)."""
"""A torch_npu METADATA is ~10 KB (its long description included)."""


def _read_metadata(path: Path) -> tuple[str, str]:
    """(METADATA text, name used for the source id)."""
    hint = "pass a .whl or an extracted METADATA file"
    records.require_regular(path, what="wheel or METADATA file", hint=hint)
    if path.suffix == ".whl" or zipfile.is_zipfile(path):
        try:
            with records.open_zip(path, max_members=MAX_WHEEL_MEMBERS, what="wheel", hint=hint) as zf:
                infos = [i for i in zf.infolist() if i.filename.endswith(".dist-info/METADATA")]
                if not infos:
                    raise InputError(
                        f"{path}: no *.dist-info/METADATA in this wheel", hint="pass a torch_npu wheel"
                    )
                data = records.read_zip_member(zf, infos[0], MAX_METADATA_BYTES, source=str(path))
        except zipfile.BadZipFile as exc:
            raise InputError(f"{path}: not a valid wheel ({exc})", hint=hint) from None
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}", hint=hint) from None
        return records.decode_utf8(data, source=f"{path}!{infos[0].filename}", hint=hint), path.name
    return records.read_text(path, what="METADATA file", hint=hint, max_bytes=MAX_METADATA_BYTES), path.name


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [c.strip() for c in body.split("|")]


def _column(header: list[str], *words: str) -> int | None:
    for i, h in enumerate(header):
        low = h.lower()
        if all(w in low for w in words):
            return i
    return None


def parse_table(text: str, *, source_id: str = "METADATA", source_title: str = "METADATA") -> ImportedTable:
    """Parse the table out of METADATA text (pure)."""
    from cannenv.versions import CannVersion, parse_pep440

    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _HEADING.match(line.strip())), None)
    install = _INSTALL_CANN.search(text)
    version_found = _VERSION.search(text)
    torch_req = _TORCH_REQ.search(text)
    if start is None and install and version_found:
        # Newer wheels (2.13+) carry no table: their README says which CANN to install.
        tnpu = str(parse_pep440(version_found[1]))
        torch = str(parse_pep440(torch_req[1])) if torch_req else re.sub(r"(\.post\d+|rc\d+)\Z", "", tnpu)
        sentence = install[0].strip()
        row = ImportedRow(str(CannVersion.parse(install[1])), torch, tnpu, None, tnpu, False)
        return ImportedTable(
            source_id,
            source_title,
            version_found[1],
            (row,),
            ("no 'Ascend Auxiliary Software' table; the README's install step names the CANN",),
            evidence="declared",
            note=f"no pairing table in the wheel METADATA; its install step says: {sentence!r}",
        )
    if start is None:
        raise InputError(
            "no 'Ascend Auxiliary Software' section in this METADATA",
            hint="torch_npu wheels from PyPI carry it; other wheels do not",
        )
    version_m = _VERSION.search(text)
    table_lines: list[str] = []
    for line in lines[start + 1 :]:
        s = line.strip()
        if s.startswith("|"):
            table_lines.append(s)
        elif table_lines or s.startswith("#"):
            break
    if len(table_lines) < 3:
        raise InputError(
            "the 'Ascend Auxiliary Software' section has no table", hint="is this a torch_npu METADATA?"
        )
    header = _cells(table_lines[0])
    c_cann = _column(header, "cann")
    c_torch = _column(header, "pytorch")
    c_ext = _column(header, "extension")
    c_branch = _column(header, "branch")
    if c_cann is None or c_torch is None or c_ext is None:
        c_cann, c_torch, c_ext, c_branch = 0, 1, 2, 3 if len(header) > 3 else None
    rows: list[ImportedRow] = []
    warnings: list[str] = []
    current_cann: str | None = None
    for n, line in enumerate(table_lines[1:], start=2):
        cells = _cells(line)
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells if c):
            continue

        def get(i: int | None, cells: list[str] = cells) -> str:
            return cells[i] if i is not None and i < len(cells) else ""

        cann_cell = re.sub(r"^CANN\s*", "", get(c_cann), flags=re.IGNORECASE).strip()
        if cann_cell:
            try:
                current_cann = str(CannVersion.parse(cann_cell))
            except InputError as exc:
                warnings.append(f"table row {n}: CANN cell {get(c_cann)!r} skipped: {exc}")
                current_cann = None
                continue
        if current_cann is None:
            warnings.append(f"table row {n}: no CANN version (blank cell with nothing above)")
            continue
        raw = get(c_ext)
        torch_cell = get(c_torch)
        text_v = raw
        prerelease = False
        if m := _BETA.match(raw):
            text_v, prerelease = m["v"], True
        try:
            tv = parse_pep440(text_v)
            torch_v = str(parse_pep440(torch_cell))
        except InputError as exc:
            warnings.append(f"table row {n}: {raw!r} / {torch_cell!r} skipped: {exc.message}")
            continue
        rows.append(
            ImportedRow(
                cann=current_cann,
                torch=torch_v,
                torch_npu=text_v,
                branch=get(c_branch) or None,
                raw_torch_npu=raw,
                prerelease=prerelease or tv.is_prerelease,
            )
        )
    return ImportedTable(
        source_id, source_title, version_m[1] if version_m else None, tuple(rows), tuple(warnings)
    )


def read_table(path: str | Path) -> ImportedTable:
    p = Path(path)
    text, name = _read_metadata(p)
    version_m = _VERSION.search(text)
    version = version_m[1] if version_m else None
    sid = f"WHEEL-torch_npu-{version}" if version else f"WHEEL-{re.sub(r'[^A-Za-z0-9._-]', '-', name)}"
    title = (
        f"'Ascend Auxiliary Software' table in the METADATA of the torch_npu {version or '?'} wheel ({name})"
    )
    import dataclasses

    table = parse_table(text, source_id=sid, source_title=title)
    if table.evidence != "recommended":  # no table: the README's install step
        title = f"install step in the README of the torch_npu {version or '?'} wheel METADATA ({name})"
    return dataclasses.replace(
        table,
        source_title=title,
        source_where=f"{name} (PyPI), *.dist-info/METADATA",
        source_url=f"https://pypi.org/project/torch-npu/{version}/" if version else None,
    )


def _key(cann: str, torch: str, torch_npu: str) -> tuple[str, str, str]:
    from cannenv.versions import CannVersion, parse_pep440

    return str(CannVersion.parse(cann)), str(parse_pep440(torch)), str(parse_pep440(torch_npu))


def _q(text: str) -> str:
    """A YAML double-quoted scalar for any text (JSON's string escapes are YAML's: quotes,
    backslashes, newlines and control characters from a wheel can never break the file)."""
    import json

    return json.dumps(text, ensure_ascii=False)


def merge_rows(matrix_file: str | Path, table: ImportedTable) -> list[dict[str, Any]]:
    """Append rows of ``table`` missing from ``matrix_file`` (kept layout; validated; atomic)."""
    import yaml

    from cannenv.fsutil import atomic_write_text
    from cannenv.matrix import check_file

    path = Path(matrix_file)
    text = records.read_text(path, what="matrix file") if path.exists() else "schema_version: 1\n"
    try:
        doc = records.load_yaml(text) or {}
    except (yaml.YAMLError, records.DocumentTooComplexError) as exc:
        raise InputError(f"{path}: not a matrix file cannenv can merge into: {exc}") from None
    if not isinstance(doc, dict):
        raise InputError(
            f"{path}: not a matrix file (expected a mapping)", hint="pass a matrices/*.yaml file"
        )
    existing = set()
    for row in doc.get("torch_npu") or []:
        try:
            existing.add(_key(str(row["cann"]), str(row["torch"]), str(row["torch_npu"])))
        except (KeyError, TypeError, InputError):
            continue
    declared = {s.get("id") for s in doc.get("sources") or [] if isinstance(s, dict)}
    sibling = path.parent / "sources.yaml"
    if sibling.exists() and sibling != path:
        try:
            sdoc = records.load_yaml(records.read_text(sibling, what="matrix file")) or {}
        except (yaml.YAMLError, records.DocumentTooComplexError) as exc:
            raise InputError(f"{sibling}: not a matrix file cannenv reads: {exc}") from None
        declared |= {s.get("id") for s in sdoc.get("sources") or [] if isinstance(s, dict)}
    added: list[dict[str, Any]] = []
    new_lines: list[str] = []
    for r in table.rows:
        key = _key(r.cann, r.torch, r.torch_npu)
        if key in existing:
            continue
        existing.add(key)
        parts = [f"torch_npu: {_q(r.torch_npu)}", f"torch: {_q(r.torch)}", f"cann: {_q(r.cann)}"]
        if r.branch:
            parts.append(f"branch: {_q(r.branch)}")
        parts.append("table: other")
        if r.prerelease:
            parts.append("status: prerelease")
        if r.raw_torch_npu != r.torch_npu:
            parts.append(f"label: {_q(r.raw_torch_npu)}")
        if table.evidence != "recommended":
            parts.append(f"evidence: {table.evidence}")
        if table.note:
            parts.append(f"note: {_q(table.note)}")
        parts.append(f"sources: [{_q(table.source_id)}]")
        new_lines.append("{" + ", ".join(parts) + "}")
        added.append(r.to_json())
    if not added:
        return []
    text = _insert_items(text, "torch_npu", new_lines)
    if table.source_id not in declared:
        src = f"{{id: {_q(table.source_id)}, title: {_q(table.source_title)}"
        if table.source_where:
            src += f", where: {_q(table.source_where)}"
        if table.source_url:
            src += f", url: {_q(table.source_url)}"
        src += "}"
        text = _insert_items(text, "sources", [src])
    probs = _check_text(path, text, check_file)
    if probs:
        raise InputError(
            f"merging into {path} would make it invalid:\n" + "\n".join(f"  {p}" for p in probs),
            hint="fix the file first (`cannenv matrix lint FILE`)",
        )
    atomic_write_text(path, text)
    return added


def _check_text(path: Path, text: str, check: Any) -> list[Any]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / path.name
        probe.write_text(text, encoding="utf-8")
        # unknown-source checks need the sibling registry; check the schema and versions here
        return [p for p in check(probe) if "unknown source id" not in p.message]


def _insert_items(text: str, section: str, items: list[str]) -> str:
    """Insert flow-style items at the end of a top-level sequence, or add the section at the end."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise InputError(
            f"cannot merge into the {section!r} section: the matrix text does not parse ({exc})",
            hint="fix the file first (`cannenv matrix lint FILE`)",
        ) from None
    lines = text.splitlines(keepends=True)
    if isinstance(root, yaml.MappingNode):
        for k, v in root.value:
            if k.value != section:
                continue
            if isinstance(v, yaml.SequenceNode) and v.value and v.flow_style is False:
                indent = " " * (v.value[0].start_mark.column - 2)
                last = v.value[-1].end_mark.line
                # end_mark of a block item points at the line after it (or its last line if at EOF)
                at = last if v.value[-1].end_mark.column == 0 else last + 1
                block = [f"{indent}- {item}\n" for item in items]
                return "".join(lines[:at]) + "".join(block) + "".join(lines[at:])
            raise InputError(
                f"cannot append to the {section!r} section: it is empty or written in flow style",
                hint=f"write {section}: as a block list ('- ...' items) and retry",
            )
    if text and not text.endswith("\n"):
        text += "\n"
    return text + f"{section}:\n" + "".join(f"  - {item}\n" for item in items)
