"""Reading matrix files: YAML/JSON with line numbers, validation, cross-entry checks, the cache.

Load errors are collected across all entries of all files and reported together with
``file:line``, the entry, the field path and what was expected. A valid matrix is kept in the
validated-matrix cache, so a warm :func:`load` only unpickles (no YAML, no pydantic).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from cannenv import records, values
from cannenv.errors import InputError, VersionError, did_you_mean
from cannenv.host import read_regular
from cannenv.matrix.model import (
    COMPONENT_SCHEME,
    CORE_COMPONENTS,
    MatrixFile,
    _parsed,
)
from cannenv.matrix.query import Matrix

# ---------------------------------------------------------------------------------------------
# errors


@dataclass(frozen=True)
class Problem:
    """One load/lint problem: where (file:line, entry, field path), what, what was expected."""

    file: str
    line: int | None
    entry: str | None
    path: str
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        parts = [where]
        if self.entry:
            parts.append(self.entry)
        if self.path:
            parts.append(self.path)
        text = ": ".join(parts) + f": {self.message}"
        return text + (f" (hint: {self.hint})" if self.hint else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "entry": self.entry,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
        }


class MatrixError(InputError):
    """Invalid matrix data; ``problems`` holds every problem found in one pass."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in matrix data:"
        body = "\n".join(f"  {p}" for p in self.problems[:50])
        more = f"\n  ... and {n - 50} more" if n > 50 else ""
        hints = {p.hint for p in self.problems if p.hint}
        super().__init__(
            f"{head}\n{body}{more}",
            hint="fix the entries above; `cannenv matrix lint FILE` re-checks"
            + ("; quote version numbers ('3.10', not 3.10)" if any("quote" in h for h in hints) else ""),
        )


# ---------------------------------------------------------------------------------------------
# YAML with line numbers (only on the error path: the happy path uses the fast C loader)


def _yaml_loader() -> Any:
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _DuplicateKey(Exception):
    """A mapping repeats a key (PyYAML would silently keep the last one)."""


@cache
def _strict_yaml_loader() -> Any:
    """The YAML loader for matrix files: refuses a repeated mapping key while it builds the document,
    so a valid file is still parsed once; the duplicates are then located by :func:`_duplicate_keys`."""
    import yaml

    class Loader(_yaml_loader()):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            if len(keys) != len(set(keys)):
                raise _DuplicateKey
            return super().construct_mapping(node, deep=deep)

    return Loader


def _line_index(text: str) -> dict[tuple[str | int, ...], int]:
    """Map each path (keys and list indexes) to its 1-based line in the YAML text."""
    import yaml

    index: dict[tuple[str | int, ...], int] = {}
    try:
        node = yaml.compose(text, Loader=_yaml_loader())
    except yaml.YAMLError:
        return index

    def walk(n: Any, path: tuple[str | int, ...]) -> None:
        index.setdefault(path, n.start_mark.line + 1)
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark.line)
                child: tuple[str | int, ...] = (*path, key)
                index[child] = k.start_mark.line + 1
                walk(v, child)
                index[child] = k.start_mark.line + 1
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                walk(v, (*path, i))

    if node is not None:
        walk(node, ())
    return index


def _duplicate_keys(text: str) -> list[tuple[int, tuple[str | int, ...], str]]:
    """(line, path, key) of every duplicated mapping key (PyYAML silently keeps the last)."""
    import yaml

    out: list[tuple[int, tuple[str | int, ...], str]] = []
    try:
        node = yaml.compose(text, Loader=_yaml_loader())
    except yaml.YAMLError:
        return out

    def walk(n: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(n, yaml.MappingNode):
            seen: set[str] = set()
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else ""
                if key in seen:
                    out.append((k.start_mark.line + 1, path, key))
                seen.add(key)
                walk(v, (*path, key))
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                walk(v, (*path, i))

    if node is not None:
        walk(node, ())
    return out


def _line_for(index: dict[tuple[str | int, ...], int], loc: Sequence[str | int]) -> int | None:
    path = tuple(loc)
    while path:
        if path in index:
            return index[path]
        path = path[:-1]
    return index.get(())


def _entry_label(doc: Any, loc: Sequence[str | int]) -> str | None:
    if len(loc) < 2 or not isinstance(loc[0], str) or not isinstance(loc[1], int):
        return None
    section, i = loc[0], loc[1]
    try:
        item = doc[section][i]
    except (KeyError, IndexError, TypeError):
        return f"{section}[{i}]"
    if isinstance(item, dict):
        for key in ("id", "name", "torch_npu", "cann", "torch", "python", "component"):
            if key in item:
                return f"{section}[{i}] ({key} {item[key]})"
    return f"{section}[{i}]"


def _path_text(loc: Sequence[str | int], start: int) -> str:
    out = ""
    for part in loc[start:]:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_UNKNOWN_KEY = frozenset({"unexpected_keyword_argument", "extra_forbidden"})
"""pydantic's error types for a key the type does not have (dataclass / BaseModel spelling)."""
_MISSING = frozenset({"missing", "missing_argument", "missing_keyword_only_argument"})


def _problem_from_pydantic(err: Any, file: str, doc: Any, index: dict[tuple[str | int, ...], int]) -> Problem:
    loc = [
        p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "json-or-python")))
    ]
    entry = _entry_label(doc, loc)
    start = 2 if entry else 0
    typ = err["type"]
    value = err.get("input")
    msg = err["msg"]
    hint = None
    if typ == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
        msg = f"expected a quoted version string, got the number {value!r}"
        hint = "quote version numbers: YAML reads python: 3.10 as the number 3.1"
    elif typ in _UNKNOWN_KEY:
        name = loc[-1] if loc else "?"
        known = _fields_at(loc[:-1])
        suggestion = did_you_mean(str(name), known) if known else None
        msg = f"unknown key {name!r}"
        hint = suggestion or (("expected one of: " + ", ".join(known)) if known else None)
    elif typ in _MISSING:
        msg = "required field is missing"
    elif typ == "dataclass_type":
        msg = f"expected a mapping, got {_kind(value)}"
    elif typ == "literal_error":
        msg = f"got {value!r}; {msg.lower()}"
    elif typ == "value_error":
        msg = msg.removeprefix("Value error, ")
    return Problem(file, _line_for(index, loc), entry, _path_text(loc, start), msg, hint)


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return f"the number {value!r}"
    return type(value).__name__


def _fields_at(loc: Sequence[str | int]) -> list[str]:
    """Field names of the value type at a location (for did-you-mean on unknown keys)."""
    cls: Any = MatrixFile
    for part in loc:
        if isinstance(part, int):
            continue
        hints = _field_types(cls)
        if part in hints:
            cls = _inner_value_type(hints[part])
            if cls is None:
                return []
        # else: a dict key (components.<key>, artifacts.<arch>) keeps the value type
    return values.field_names(cls)


@cache
def _field_types(cls: type[Any]) -> dict[str, Any]:
    """The resolved field annotations of a value class (they are strings in the class itself)."""
    import typing

    return typing.get_type_hints(cls)


def _inner_value_type(ann: Any) -> Any:
    """The value class inside an annotation (``tuple[Stack, ...]``, ``dict[Arch, Artifact] | None``)."""
    import typing

    if isinstance(ann, type) and dataclasses.is_dataclass(ann):
        return ann
    for arg in typing.get_args(ann):
        found = _inner_value_type(arg)
        if found is not None:
            return found
    return None


# ---------------------------------------------------------------------------------------------
# loading


def matrix_files(paths: Iterable[str | Path]) -> list[Path]:
    """The matrix files of ``paths`` (a folder: its top-level *.yaml/*.yml/*.json, not schema.json)."""
    return _matrix_files(paths)


def _matrix_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            files.extend(
                sorted(
                    f
                    for f in path.iterdir()
                    if f.is_file() and f.suffix in {".yaml", ".yml", ".json"} and f.name != "schema.json"
                )
            )
        elif path.is_file():
            files.append(path)
        else:
            raise InputError(
                f"matrix file {str(path)!r} does not exist", hint="pass a matrix .yaml file or a folder"
            )
    return files


MAX_MATRIX_BYTES = 32 << 20
"""The largest matrix file read (the shipped ones are ~300 KB together)."""


def _read_bytes(path: Path) -> bytes:
    """A matrix file's bytes: a regular file of at most :data:`MAX_MATRIX_BYTES` (a FIFO or
    /dev/zero raises OSError here, like a missing file, instead of hanging)."""
    return read_regular(path, MAX_MATRIX_BYTES)


def _decode(raw: bytes) -> str:
    """Bytes to text as ``Path.read_text(encoding="utf-8")`` reads them (universal newlines)."""
    text = raw.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _read_doc(path: Path, raw: bytes | None = None) -> tuple[Any, str, list[Problem]]:
    import yaml

    try:
        text = _decode(_read_bytes(path) if raw is None else raw)
    except (OSError, UnicodeDecodeError) as exc:
        return None, "", [Problem(str(path), None, None, "", f"cannot read file: {exc}")]
    try:
        if path.suffix == ".json":  # the one bounded reader: depth, integer digits, NaN, surrogates
            try:
                return records.parse_json(text, source=str(path)), text, []
            except InputError as exc:
                first = exc.message.partition("\n")[0]
                line = re.search(r":(\d+): not valid JSON \(", first)
                detail, found, _ = first[line.end() :].rpartition(", column") if line else ("", "", "")
                if line is not None and found:
                    return (
                        None,
                        text,
                        [Problem(str(path), int(line[1]), None, "", f"invalid JSON: {detail}")],
                    )
                reason = exc.message.removeprefix(f"{path}: ").removeprefix("not a record cannenv reads: ")
                return (
                    None,
                    text,
                    [Problem(str(path), None, None, "", f"not a matrix file cannenv reads: {reason}")],
                )
        try:  # alias expansion bounded: a "billion laughs" file is a problem, not a hang
            return records.load_yaml(text, _strict_yaml_loader()), text, []
        except _DuplicateKey:  # reported beside any other problem of the file (the last key is kept)
            return records.load_yaml(text, _yaml_loader()), text, _dup_problems(path, text)
    except json.JSONDecodeError as exc:
        return None, text, [Problem(str(path), exc.lineno, None, "", f"invalid JSON: {exc.msg}")]
    except (records.DocumentTooComplexError, RecursionError, ValueError) as exc:
        reason = str(exc) if not isinstance(exc, RecursionError) else "the document nests too deep"
        return None, text, [Problem(str(path), None, None, "", f"not a matrix file cannenv reads: {reason}")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        return None, text, [Problem(str(path), line, None, "", f"invalid YAML: {problem}")]


def _validate_file(path: Path, raw: bytes | None = None) -> tuple[MatrixFile | None, Any, str, list[Problem]]:
    """Validate one file (``raw``: its bytes, already read). ``doc`` is None for a valid JSON file.

    JSON is validated straight from the bytes (pydantic's JSON parser, no intermediate objects);
    only when that fails is it parsed again the slow way, so that errors read exactly the same.
    """
    ValidationError = values.validation_error(f"matrix file {path}")

    if path.suffix == ".json":
        try:
            data = _read_bytes(path) if raw is None else raw
            return values.validate_json(MatrixFile, data), None, "", []
        except (OSError, ValidationError):
            pass  # the slow path below reports it, with the entry labels
    doc, text, problems = _read_doc(path, raw)
    if problems and doc is None:
        return None, doc, text, problems
    if not isinstance(doc, dict):
        return (
            None,
            doc,
            text,
            [
                Problem(
                    str(path), 1, None, "", "expected a mapping with schema_version: 1 and matrix sections"
                )
            ],
        )
    try:
        valid = values.validate(MatrixFile, doc)
    except ValidationError as exc:
        index = _line_index(text) if path.suffix != ".json" else {}
        out = [_problem_from_pydantic(e, str(path), doc, index) for e in exc.errors(include_url=False)]
        return None, doc, text, out + problems  # problems: the duplicate keys, if any
    return (None if problems else valid), doc, text, problems


def _dup_problems(path: Path, text: str) -> list[Problem]:
    if path.suffix == ".json":
        return []
    return [
        Problem(
            str(path), line, None, _path_text(list(p), 0), f"duplicate key {key!r} (the last one would win)"
        )
        for line, p, key in _duplicate_keys(text)
    ]


# ---------------------------------------------------------------------------------------------
# cross-entry checks


class _Checker:
    """Cross-entry problems, located (file:line, entry) in the file being checked."""

    def __init__(self, sources: set[str]) -> None:
        self.sources = sources
        self.good: set[tuple[str, ...]] = set()
        """source-id tuples found all declared (checked once)"""
        self.problems: list[Problem] = []
        self._file, self._text, self._doc = "", "", None
        self._index: dict[tuple[str | int, ...], int] | None = None

    def open(self, path: Path, text: str, doc: Any) -> None:
        """Locate the problems added from now on in this file."""
        self._file, self._text, self._doc, self._index = str(path), text, doc, None

    def add(self, loc: list[str | int], msg: str, hint: str | None = None) -> None:
        if self._index is None:  # composed once per file, on its first problem (not once per problem)
            self._index = _line_index(self._text) if self._text and not self._file.endswith(".json") else {}
        if self._doc is None:  # a JSON file validated straight from bytes: parse it now, for the labels
            self._doc = _read_doc(Path(self._file))[0]
        entry = _entry_label(self._doc, loc)
        self.problems.append(
            Problem(
                self._file, _line_for(self._index, loc), entry, _path_text(loc, 2 if entry else 0), msg, hint
            )
        )

    def check_sources(self, loc: list[str | int], ids: tuple[str, ...]) -> None:
        """Each id is declared in a sources section (not checked when no file declares any)."""
        if not self.sources or ids in self.good:
            return
        if all(sid in self.sources for sid in ids):
            self.good.add(ids)
            return
        for j, sid in enumerate(ids):
            if sid not in self.sources:
                self.add(
                    [*loc, j],
                    f"unknown source id {sid!r}",
                    did_you_mean(sid, self.sources)
                    or "declare it in the sources section (matrices/sources.yaml)",
                )


_COMPONENT_KEY_RE = re.compile(r"[a-z][a-z0-9_-]*")
_DIGEST_RE = re.compile(r"(sha256:)?[0-9a-f]{64}")


def _semantic_checks(loaded: list[tuple[Path, MatrixFile, Any, str]]) -> list[Problem]:
    chk = _Checker({s.id for _, mf, _, _ in loaded for s in mf.sources})
    seen_stacks: dict[str, str] = {}
    seen_sources: dict[str, str] = {}
    seen_socs: dict[str, str] = {}
    family_defs = {f.id for _, mf, _, _ in loaded if mf.hardware for f in mf.hardware.families}
    good_keys: set[str] = set()

    for path, mf, doc, text in loaded:
        f = str(path)
        chk.open(path, text, doc)
        for i, s in enumerate(mf.sources):
            if s.id in seen_sources:
                chk.add(["sources", i, "id"], f"source id {s.id!r} already defined in {seen_sources[s.id]}")
            seen_sources[s.id] = f
        if mf.hardware:
            for i, soc_entry in enumerate(mf.hardware.socs):
                key = soc_entry.name.lower()
                if key in seen_socs:
                    chk.add(["hardware", "socs", i, "name"], f"SoC {soc_entry.name!r} listed twice")
                seen_socs[key] = f
                chk.check_sources(["hardware", "socs", i, "sources"], soc_entry.sources)
            for i, fam in enumerate(mf.hardware.families):
                chk.check_sources(["hardware", "families", i, "sources"], fam.sources)
            for i, mem in enumerate(mf.hardware.memory):
                chk.check_sources(["hardware", "memory", i, "sources"], mem.sources)
                if (mem.soc is None) == (mem.family is None):
                    chk.add(["hardware", "memory", i], "name exactly one of soc or family")
        for section in (
            "torch_npu",
            "python_support",
            "wheels",
            "lifecycle",
            "hdk",
            "installers",
            "companions",
            "python_limits",
        ):
            for i, row in enumerate(getattr(mf, section)):
                chk.check_sources([section, i, "sources"], row.sources)
        # (the `not in chk.good` tests below skip building a location list for known-good sources)
        for i, st in enumerate(mf.stacks):
            if st.id in seen_stacks:
                chk.add(["stacks", i, "id"], f"stack id {st.id!r} already defined in {seen_stacks[st.id]}")
            seen_stacks[st.id] = f
            if st.sources not in chk.good:
                chk.check_sources(["stacks", i, "sources"], st.sources)
            if family_defs and st.family not in family_defs:
                chk.add(["stacks", i, "family"], f"family {st.family!r} has no hardware entry")
            for key, comp in st.components.items():
                loc: list[str | int] = ["stacks", i, "components", key]
                if key not in good_keys and not _COMPONENT_KEY_RE.fullmatch(key):
                    chk.add(
                        loc,
                        f"bad component key {key!r}",
                        "lower-case letters, digits, '_' and '-' (core: " + ", ".join(CORE_COMPONENTS) + ")",
                    )
                    continue
                good_keys.add(key)
                if (
                    comp.scheme is not None
                    and key in COMPONENT_SCHEME
                    and comp.scheme != COMPONENT_SCHEME[key]
                ):
                    chk.add(
                        [*loc, "scheme"],
                        f"{key} versions use the {COMPONENT_SCHEME[key]} grammar, not {comp.scheme}",
                    )
                try:
                    _parsed(comp.scheme or COMPONENT_SCHEME.get(key, "pep440"), comp.version)
                except VersionError as exc:
                    chk.add([*loc, "version"], exc.message, exc.hint)
                if comp.sources not in chk.good:
                    chk.check_sources([*loc, "sources"], comp.sources)
                for arch, art in comp.artifacts.items():
                    if arch not in st.arches:
                        chk.add(
                            [*loc, "artifacts", arch],
                            f"artifact for {arch}, but the stack's arches are {', '.join(st.arches)}",
                        )
                    if art.sources not in chk.good:
                        chk.check_sources([*loc, "artifacts", arch, "sources"], art.sources)
            for j, digest in enumerate(st.certificates):
                if not _DIGEST_RE.fullmatch(digest):
                    chk.add(
                        ["stacks", i, "certificates", j],
                        f"{digest!r} is not a sha256 digest",
                        "expected sha256:<64 hex digits>",
                    )
    return chk.problems


@contextlib.contextmanager
def _gc_paused(freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects that all stay alive.

    Validation allocates hundreds of thousands of containers; each allocation burst triggers a
    collection that walks everything built so far (2.5x slower on 10,000 stacks). Nothing built
    here is garbage, so nothing is lost by collecting later. With ``freeze`` (large matrices) the
    objects are moved to the permanent generation (:func:`gc.freeze`) before collection resumes:
    they live as long as the matrix, and otherwise the next collections walk them all again.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


def load_files(files: Sequence[Path], *, use_cache: bool = True) -> Matrix:
    """Load and validate matrix files; all problems of all files are reported in one error.

    A valid matrix is kept in the on-disk cache (:func:`cache_dir`) under a key that covers the
    exact bytes and names of the files and the code that validates them, so a later load of the
    same content skips parsing and validation; invalid data is never cached.
    """
    raws: list[bytes | None] = []
    for path in files:
        try:
            raws.append(_read_bytes(path))
        except OSError:
            raws.append(None)
    key = _cache_key(files, raws) if use_cache else None
    if key is not None:
        hit = _cache_read(key)
        if hit is not None:
            return hit
    problems: list[Problem] = []
    loaded: list[tuple[Path, MatrixFile, Any, str]] = []
    large = sum(len(r or b"") for r in raws) > _CACHE_MAX_INPUT
    with _gc_paused(freeze=large):
        for path, raw in zip(files, raws, strict=True):
            mf, doc, text, probs = _validate_file(path, raw)
            problems.extend(probs)
            if mf is not None:
                loaded.append((path, mf, doc, text))
        problems.extend(_semantic_checks(loaded))
        if problems:
            raise MatrixError(problems)
        result = Matrix([(p, mf) for p, mf, _, _ in loaded])
        if key is not None:
            _cache_write(key, result)
    return result


# ---------------------------------------------------------------------------------------------
# the validated-matrix cache

CACHE_FORMAT = 2
"""Bump when the cached object layout changes without a change in the files hashed below."""
_CACHE_MAX_INPUT = 4 << 20
"""Inputs larger than this are not cached: unpickling them costs about as much as validating."""
_CACHE_KEEP = 32
"""Cache files kept per folder (oldest removed first)."""


def cache_dir() -> Path | None:
    """Where validated matrices are cached; None when caching is off (``CANNENV_NO_CACHE=1``).

    ``$CANNENV_CACHE_DIR``, else ``$XDG_CACHE_HOME/cannenv``, else ``~/.cache/cannenv``.
    """
    if os.environ.get("CANNENV_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("CANNENV_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "cannenv"
    try:
        return Path.home() / ".cache" / "cannenv"
    except (RuntimeError, KeyError):  # no home directory
        return None


_MODEL_MODULES = ("model.py", "query.py", "loader.py")
"""The modules whose code is in a cached Matrix (its classes and how they were built)."""


@cache
def _code_fingerprint() -> bytes | None:
    """Hash of everything that shapes a loaded Matrix besides the data: the code and its versions.

    None (no caching) when a module's source cannot be read (e.g. running from a zipapp).

    pydantic is identified by its ``version.py`` (its version and the one pydantic-core version it
    runs with), read without importing pydantic: a warm load must not pay for that import.
    """
    from importlib.util import find_spec

    from cannenv import __version__

    try:
        spec = find_spec("pydantic")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    h = hashlib.sha256()
    h.update(f"{CACHE_FORMAT}|{__version__}|{sys.version}".encode())
    package = Path(__file__).parent
    for module_file in (
        *(package / name for name in _MODEL_MODULES),
        package.parent / "hardware.py",
        package.parent / "values.py",
        package.parent / "versions.py",  # (by path: importing it for its name costs ~15 ms)
        Path(spec.origin).with_name("version.py"),
    ):
        try:
            h.update(module_file.read_bytes())
        except OSError:
            return None
    return h.digest()


def _cache_key(files: Sequence[Path], raws: Sequence[bytes | None]) -> str | None:
    if any(r is None for r in raws) or sum(len(r or b"") for r in raws) > _CACHE_MAX_INPUT:
        return None
    code = _code_fingerprint()
    if code is None or cache_dir() is None:
        return None
    h = hashlib.sha256(code)
    for path, raw in zip(files, raws, strict=True):
        name = str(path).encode("utf-8", "surrogateescape")
        h.update(len(name).to_bytes(8, "big") + name)
        h.update(len(raw or b"").to_bytes(8, "big") + (raw or b""))
    return h.hexdigest()


def _cache_read(key: str) -> Matrix | None:
    import pickle

    folder = cache_dir()
    if folder is None:
        return None
    try:
        data = (folder / f"matrix-{key}.pickle").read_bytes()
    except OSError:
        return None
    try:
        obj = pickle.loads(data)
    except Exception:  # corrupt or written by other code: validate instead
        return None
    return obj if isinstance(obj, Matrix) else None


def _cache_write(key: str, m: Matrix) -> None:
    import pickle

    from cannenv.fsutil import atomic_write_bytes

    folder = cache_dir()
    if folder is None:
        return
    try:
        atomic_write_bytes(folder / f"matrix-{key}.pickle", pickle.dumps(m, pickle.HIGHEST_PROTOCOL))
        old = sorted(folder.glob("matrix-*.pickle"), key=lambda f: f.stat().st_mtime)
        for f in old[:-_CACHE_KEEP]:
            f.unlink()
    except Exception:  # unwritable, full, raced by another process: the cache is only a shortcut
        return


def load(paths: Sequence[str | Path] | None = None) -> Matrix:
    """The matrix from ``paths`` (files or folders), or the shipped one (cached) when None."""
    if paths is None:
        return _load_shipped()
    return load_files(_matrix_files(paths))


_SHIPPED: dict[str, Matrix] = {}
"""The shipped matrix once loaded in this process (from the cache or validated): loaded once."""


def _load_shipped() -> Matrix:
    hit = _SHIPPED.get("matrix")
    if hit is None:
        from cannenv.resources import matrices_dir

        hit = _SHIPPED["matrix"] = load_files(_matrix_files([matrices_dir()]))
    return hit


def shipped_if_cached() -> Matrix | None:
    """The shipped matrix when it is already loaded or the validated-matrix cache holds it, else None.

    Never parses or validates: for callers that only need part of the matrix (``soc.hardware()``)
    and have a cheaper way of their own when the cache is cold. A hit is kept, so a later
    :func:`load` in the same process reuses it instead of reading the cache again.
    """
    hit = _SHIPPED.get("matrix")
    if hit is not None:
        return hit
    from cannenv.errors import CannenvError
    from cannenv.resources import matrices_dir

    try:
        files = _matrix_files([matrices_dir()])
        raws: list[bytes | None] = [_read_bytes(path) for path in files]
    except (CannenvError, OSError):
        return None
    key = _cache_key(files, raws)
    hit = _cache_read(key) if key is not None else None
    if hit is not None:
        _SHIPPED["matrix"] = hit
    return hit


def check_file(path: str | Path) -> list[Problem]:
    """Problems of one file on its own (schema + entries), without raising."""
    mf, doc, text, probs = _validate_file(Path(path))
    if mf is None:
        return probs
    return _semantic_checks([(Path(path), mf, doc, text)])
