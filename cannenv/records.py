"""Reading versioned JSON records (facts, lock files, fleet manifests) with one set of messages.

Every record file cannenv reads back is JSON with a ``schema_version`` and a value class (or a
pydantic model) behind it. A bad file must say which file, which line or field, and what to do —
the same way everywhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cannenv.errors import CannenvError, InputError

if TYPE_CHECKING:
    import os
    import zipfile
    from collections.abc import Callable, Iterator

T = TypeVar("T")


MAX_RECORD_BYTES = 64 << 20
"""The largest record file read (facts of a big host are ~100 KB; a fleet JSON a few MB)."""


def read_bytes(
    path: str | os.PathLike[str],
    *,
    what: str,
    missing: type[CannenvError] = InputError,
    hint: str | None = None,
    max_bytes: int = MAX_RECORD_BYTES,
    nofollow: bool = False,
) -> bytes:
    """The file's bytes: a regular file of at most ``max_bytes`` (a FIFO, a device such as
    /dev/zero, a directory or a larger file is an InputError, never a hang or a MemoryError);
    a missing file raises ``missing`` (exit code per caller). ``nofollow``: a link as the last
    component is refused, not followed (for a path already resolved inside a root)."""
    from cannenv.host import FileTooLargeError, NotRegularFileError, read_regular

    p = Path(path)
    try:
        return read_regular(p, max_bytes, nofollow=nofollow)
    except FileNotFoundError:
        raise missing(f"{what} {p} does not exist", hint=hint) from None
    except FileTooLargeError as exc:
        raise InputError(
            f"{what} {p} is {exc.size} bytes; cannenv reads at most {max_bytes} for one", hint=hint
        ) from None
    except NotRegularFileError as exc:
        raise InputError(
            f"cannot read {what} {p}: it is {exc.strerror}, expected a regular file", hint=hint
        ) from None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read {what} {p}: {reason}", hint=hint) from None


def read_text(
    path: str | os.PathLike[str],
    *,
    what: str,
    missing: type[CannenvError] = InputError,
    hint: str | None = None,
    max_bytes: int = MAX_RECORD_BYTES,
    nofollow: bool = False,
) -> str:
    """The file's UTF-8 text (see :func:`read_bytes`); bytes that are not UTF-8 are an InputError."""
    data = read_bytes(path, what=what, missing=missing, hint=hint, max_bytes=max_bytes, nofollow=nofollow)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"cannot read {what} {Path(path)}: not UTF-8 text (byte {exc.start})", hint=hint
        ) from None


def decode_utf8(data: bytes, *, source: str, hint: str | None = None) -> str:
    """UTF-8 text, or an InputError naming ``source`` and the offending byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text (byte {exc.start})", hint=hint) from None


def require_regular(path: str | os.PathLike[str], *, what: str, hint: str | None = None) -> None:
    """InputError unless ``path`` is a regular file (a FIFO would block the reader forever)."""
    import stat

    try:
        st = Path(path).stat()
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist", hint=hint) from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {path}: {exc.strerror or exc}", hint=hint) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} {path} is not a regular file", hint=hint)


def is_regular_member(info: zipfile.ZipInfo) -> bool:
    """A member that is a plain file: no file type recorded (Windows tools, ``zipfile.writestr``)
    or a regular one; a link, device, FIFO or directory is not."""
    import stat

    kind = stat.S_IFMT(info.external_attr >> 16)
    return not info.is_dir() and kind in (0, stat.S_IFREG)


def zip_member_chunks(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, *, source: str, chunk: int = 1 << 20
) -> Iterator[bytes]:
    """Stream one regular zip member in chunks, at most ``limit`` bytes and never more than it declares.

    Checked before any byte is read (an InputError naming ``source`` and the member): a link,
    directory or other non-regular member, an encrypted one, a declared size over ``limit``.
    While streaming: more bytes than declared or than ``limit``, a damaged member (CRC, truncated,
    bad deflate data), a compression method zipfile does not know. The one bounded zip reader.
    """
    where = f"{source}: member {info.filename}"
    if not is_regular_member(info):
        raise InputError(f"{where} is not a regular file (a link?)")
    if info.flag_bits & 0x1:
        raise InputError(f"{where} is encrypted and cannot be read")
    if info.file_size > limit:
        raise InputError(
            f"{where} declares {info.file_size} bytes, over the limit of {limit}: at most {limit} are read"
        )
    return _member_chunks(zf, info, min(limit, info.file_size), where, chunk)


def _member_chunks(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int, where: str, chunk: int
) -> Iterator[bytes]:
    import zipfile
    import zlib

    total = 0
    try:
        with zf.open(info) as fh:
            while True:
                data = fh.read(chunk)
                if not data:
                    return
                total += len(data)
                if total > cap:
                    raise InputError(
                        f"{where} inflates past {cap} bytes (more than it declares or than the limit)"
                    )
                yield data
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise InputError(f"{where} cannot be read: damaged ({exc})") from None
    except NotImplementedError as exc:  # a compression method Python's zipfile does not know
        raise InputError(f"{where} cannot be read: {exc}") from None
    except RuntimeError as exc:  # encrypted without the flag zipfile checks
        raise InputError(f"{where} cannot be read: {exc}") from None


def zip_entry_count(path: str | os.PathLike[str]) -> int | None:
    """The number of members a zip's end-of-central-directory record declares (ZIP64 too), read
    from the file's tail only; None when no such record is found (then not a zip, or a damaged one).

    Hand-written because :mod:`zipfile` has no public way to learn the count before it parses the
    whole central directory into memory, one object per member, which is what a hostile wheel of
    millions of empty members would exploit; the record layout is APPNOTE.TXT §4.3.14-4.3.16.
    """
    import struct

    eocd_sig, loc_sig, z64_sig = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06"
    with Path(path).open("rb") as fh:
        size = fh.seek(0, 2)
        tail_len = min(size, 22 + 0xFFFF + 20)  # EOCD + the largest comment + the ZIP64 locator
        fh.seek(size - tail_len)
        tail = fh.read(tail_len)
        at = tail.rfind(eocd_sig)
        if at < 0 or len(tail) - at < 22:
            return None
        (entries,) = struct.unpack_from("<H", tail, at + 10)
        if entries != 0xFFFF or at < 20 or tail[at - 20 : at - 16] != loc_sig:
            return int(entries)
        (z64_offset,) = struct.unpack_from("<Q", tail, at - 20 + 8)
        if z64_offset + 56 > size:
            return None
        fh.seek(z64_offset)
        record = fh.read(56)
        if record[:4] != z64_sig:
            return None
        (total,) = struct.unpack_from("<Q", record, 32)
        return int(total)


def open_zip(
    path: str | os.PathLike[str], *, max_members: int, what: str, hint: str | None = None
) -> zipfile.ZipFile:
    """A regular zip file opened for reading, refused (InputError naming ``what``) when it is not a
    zip or declares more than ``max_members`` members: checked from its end record before
    :mod:`zipfile` parses anything, and again after (a record can lie)."""
    import zipfile

    require_regular(path, what=what, hint=hint)
    try:
        declared = zip_entry_count(path)
    except OSError as exc:
        raise InputError(f"{what} {path} cannot be read: {exc.strerror or exc}", hint=hint) from None
    if declared is not None and declared > max_members:
        raise InputError(
            f"{what} {path} declares {declared} members, more than the {max_members} read", hint=hint
        )
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"{what} {path} is not a readable zip ({exc})", hint=hint) from None
    if len(zf.infolist()) > max_members:
        zf.close()
        raise InputError(f"{what} {path} holds more than {max_members} members", hint=hint)
    return zf


def read_zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, *, source: str) -> bytes:
    """The bytes of one regular zip member, at most ``limit`` (see :func:`zip_member_chunks`)."""
    return b"".join(zip_member_chunks(zf, info, limit, source=source))


MAX_JSON_DEPTH = 64
"""Nesting depth of a record (facts nest 5 deep); deeper is not one of ours."""
MAX_INT_DIGITS = 40
"""Digits of an integer in a record (a size in bytes has 20 at most)."""
MAX_YAML_NODES = 1_000_000
"""Nodes of a YAML document once its aliases are expanded (the shipped matrix has ~60,000)."""


class DocumentTooComplexError(ValueError):
    """A document nests too deep, holds an absurd number, or expands past the node bound."""


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise DocumentTooComplexError(
            f"an integer of {len(digits.lstrip('-'))} digits (at most {MAX_INT_DIGITS})"
        )
    return int(digits)


def _bounded_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise DocumentTooComplexError(f"the number {text[:20]}... is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise DocumentTooComplexError(f"{name} is not a JSON number")


def json_depth_ok(doc: Any, max_depth: int = MAX_JSON_DEPTH) -> bool:
    """True when ``doc`` nests at most ``max_depth`` containers deep (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > max_depth:
            return False
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return True


def parse_json(text: str | bytes, *, source: str, hint: str | None = None) -> Any:
    """JSON from ``text``; a syntax error names ``source``, the line and the column. A document
    nested deeper than :data:`MAX_JSON_DEPTH`, an integer of more than :data:`MAX_INT_DIGITS`
    digits, or NaN/Infinity is bad input too (never a RecursionError or a crash later on)."""
    try:
        doc = json.loads(
            text, parse_int=_bounded_int, parse_float=_bounded_float, parse_constant=_no_constant
        )
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}:{exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})", hint=hint
        ) from None
    except RecursionError:
        raise InputError(f"{source}: nested deeper than {MAX_JSON_DEPTH} levels", hint=hint) from None
    except (DocumentTooComplexError, UnicodeDecodeError) as exc:
        raise InputError(f"{source}: not a record cannenv reads: {exc}", hint=hint) from None
    except ValueError as exc:  # e.g. the interpreter's own int-digits limit on a float's exponent
        raise InputError(f"{source}: not a record cannenv reads: {exc}", hint=hint) from None
    if not json_depth_ok(doc):
        raise InputError(f"{source}: nested deeper than {MAX_JSON_DEPTH} levels", hint=hint)
    # in text (not bytes: json decodes those with surrogatepass) a lone surrogate in a string is
    # a \u escape or the character itself: text with neither needs no walk over every string
    scan = isinstance(text, bytes) or "\\u" in text or _SURROGATE.search(text) is not None
    where = find_string(doc, _SURROGATE.search) if scan else None
    if where is not None:
        raise InputError(
            f"{source}: field {where or '(top level)'}: a lone UTF-16 surrogate "
            "(\\ud800-\\udfff) is not text",
            hint=hint,
        )
    return doc


_SURROGATE = re.compile("[\ud800-\udfff]")


def find_string(doc: Any, bad: Callable[[str], object]) -> str | None:
    """The dotted path of the first string (value or key) of ``doc`` for which ``bad`` is truthy,
    ``""`` for the document itself; None when there is none. Walked without recursion."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if bad(value):
                return path
        elif isinstance(value, dict):
            for k, v in value.items():
                sub = f"{path}.{k}" if path else str(k)
                if bad(str(k)):
                    return sub
                stack.append((v, sub))
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(value))
    return None


def load_yaml(text: str, loader: Any = None, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """A YAML document whose alias expansion is bounded ("billion laughs" is refused).

    The document is composed first (a node graph in which each alias is a shared node, so this
    is linear in the text), its expanded size counted with the shared nodes counted once per
    use, and only then constructed. Raises DocumentTooComplexError past ``max_nodes`` nodes, for
    an alias cycle, or for nesting that exhausts the stack; yaml.YAMLError as PyYAML does.
    """
    import yaml

    cls = loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    ld = cls(text)
    try:
        try:
            node = ld.get_single_node()
        except RecursionError:
            raise DocumentTooComplexError("the document nests too deep") from None
        if node is None:
            return None
        expanded_size(node, max_nodes)
        try:
            return ld.construct_document(node)
        except RecursionError:
            raise DocumentTooComplexError("the document nests too deep") from None
    finally:
        ld.dispose()


def expanded_size(root: Any, limit: int) -> int:
    """Nodes of a composed YAML graph with every alias expanded; raises DocumentTooComplexError
    past ``limit`` or on a cycle. Each distinct node is visited once (sizes are memoised)."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        value = node.value
        kids: list[Any] = []
        if isinstance(value, list):
            for item in value:
                if isinstance(item, tuple):
                    kids.extend(item)
                else:
                    kids.append(item)
        if done:
            on_path.discard(key)
            total = 1 + sum(sizes[id(k)] for k in kids)
            if total > limit:
                raise DocumentTooComplexError(
                    f"the document expands to more than {limit} nodes (YAML aliases)"
                )
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise DocumentTooComplexError("a YAML alias refers to itself (a cycle)")
        on_path.add(key)
        stack.append((node, True))
        for k in kids:
            if id(k) in on_path:
                raise DocumentTooComplexError("a YAML alias refers to itself (a cycle)")
            if id(k) not in sizes:
                stack.append((k, False))
    return sizes[id(root)]


def check_schema_version(
    raw: Any, *, source: str, supported: int, what: str, default: int | None = None, hint: str | None = None
) -> None:
    """Refuse a record whose ``schema_version`` is missing (unless ``default``), odd, or newer."""
    if not isinstance(raw, dict):
        raise InputError(f"{source}: expected a JSON object ({what})", hint=hint)
    version = raw.get("schema_version", default)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= supported:
        reads = f"this cannenv reads 1..{supported}"
        why = f"it is newer than {reads}" if isinstance(version, int) and version > supported else reads
        raise InputError(
            f"{source}: {what} schema_version {version!r} is not supported: {why}",
            hint=hint or "upgrade cannenv, or write the file again with this version",
        )


def validate(model: type[T], raw: Any, *, source: str, hint: str | None = None) -> T:
    """``model`` (a value class or pydantic model) from ``raw``; a validation error names the first
    field and counts the rest."""
    from cannenv import values

    ValidationError = values.validation_error(source)
    try:
        return values.validate(model, raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise InputError(f"{source}: field {where}: {first['msg']}{more}", hint=hint) from None
