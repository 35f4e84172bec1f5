"""Parts of the cached signature table that are read on first use, not when the table is loaded.

The knowledge tables grew to thousands of rows (the vendor's codes, the messages read out of its
sources, the FAQ entries, HCCL's log messages); a short excerpt touches a few of them, if any. In
the validated-table cache (:func:`cannenv.explain.signatures.shipped`) each such part is pickled as
one blob of its own inside the table's pickle: loading the table copies the blob's bytes and builds
no row; the first lookup unpickles the part (docs/performance.md, "explain on a short log").

:class:`Rows` stands for a tuple and :class:`Table` for a read-only mapping; both behave as their
values (iteration, indexing, ``len``, ``in``, equality with a tuple or a dict) whether loaded or not.
:class:`Value` stands for one frozen value (the signal table, the errno table …): reading any of its
attributes or methods unpickles it; it compares and hashes as that value.
The blobs are the cache's own (written by :func:`cannenv.explain.signatures._cache_write` from a
table it validated), never a user's input.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class Rows(Sequence[T]):
    """An immutable sequence of rows, pickled as one blob and unpickled on first use."""

    __slots__ = ("_blob", "_items")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items: tuple[T, ...] | None = tuple(items)
        self._blob: bytes | None = None

    def _rows(self) -> tuple[T, ...]:
        items = self._items
        if items is None:
            assert self._blob is not None
            items = self._items = pickle.loads(self._blob)
            self._blob = None
        return items

    @property
    def loaded(self) -> bool:
        """Whether the rows were built (a part of a cached table is not until first used)."""
        return self._items is not None

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._rows()[index]

    def __len__(self) -> int:
        return len(self._rows())

    def __iter__(self) -> Iterator[T]:
        return iter(self._rows())

    def __contains__(self, value: object) -> bool:
        return value in self._rows()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rows):
            return self._rows() == other._rows()
        if isinstance(other, tuple):
            return self._rows() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._rows())

    def __repr__(self) -> str:
        if not self.loaded:
            return f"Rows(<{len(self._blob or b'')} bytes, not loaded>)"
        return f"Rows({self._rows()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rows_later, (pickle.dumps(self._rows(), pickle.HIGHEST_PROTOCOL),))


class Table(Mapping[K, V]):
    """A read-only mapping, pickled as one blob and unpickled on first use."""

    __slots__ = ("_blob", "_items")

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        self._items: dict[K, V] | None = dict(items or {})
        self._blob: bytes | None = None

    def _dict(self) -> dict[K, V]:
        items = self._items
        if items is None:
            assert self._blob is not None
            items = self._items = pickle.loads(self._blob)
            self._blob = None
        return items

    @property
    def loaded(self) -> bool:
        return self._items is not None

    def __getitem__(self, key: K) -> V:
        return self._dict()[key]

    def get(self, key: K, default: Any = None) -> Any:
        return self._dict().get(key, default)

    def __len__(self) -> int:
        return len(self._dict())

    def __iter__(self) -> Iterator[K]:
        return iter(self._dict())

    def __contains__(self, key: object) -> bool:
        return key in self._dict()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._dict() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping, like dict

    def __repr__(self) -> str:
        if not self.loaded:
            return f"Table(<{len(self._blob or b'')} bytes, not loaded>)"
        return f"Table({self._dict()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_table_later, (pickle.dumps(self._dict(), pickle.HIGHEST_PROTOCOL),))


class Value:
    """One frozen value, pickled as a blob and unpickled when an attribute is first read.

    It stands where the value's own class would (a field of :class:`cannenv.explain.knowledge.
    Knowledge`): attribute and method reads go to the value, equality and hashing are the value's.
    Only the cache makes one (:func:`value` in ``Knowledge.__reduce__``), so code that builds a
    table never sees it; ``isinstance`` against the value's class is not used on these fields."""

    __slots__ = ("_blob", "_obj")

    def __init__(self, obj: object) -> None:
        self._obj: object | None = obj
        self._blob: bytes | None = None

    def _value(self) -> object:
        obj = self._obj
        if obj is None:
            assert self._blob is not None
            obj = self._obj = pickle.loads(self._blob)
            self._blob = None
        return obj

    @property
    def loaded(self) -> bool:
        return self._obj is not None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probing a bare proxy: not the value's
            raise AttributeError(name)
        return getattr(self._value(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Value):
            other = other._value()
        return self._value() == other

    def __hash__(self) -> int:
        return hash(self._value())

    def __repr__(self) -> str:
        if not self.loaded:
            return f"Value(<{len(self._blob or b'')} bytes, not loaded>)"
        return f"Value({self._value()!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_value_later, (pickle.dumps(self._value(), pickle.HIGHEST_PROTOCOL),))


def value(obj: object) -> Value:
    """``obj`` as a :class:`Value` (the same object when it already is)."""
    return obj if isinstance(obj, Value) else Value(obj)


def rows(items: Sequence[T]) -> Rows[T]:
    """``items`` as :class:`Rows` (the same object when it already is)."""
    return items if isinstance(items, Rows) else Rows(items)


def table(items: Mapping[K, V]) -> Table[K, V]:
    """``items`` as a :class:`Table` (the same object when it already is)."""
    return items if isinstance(items, Table) else Table(items)


def _rows_later(blob: bytes) -> Rows[Any]:
    r: Rows[Any] = Rows.__new__(Rows)
    r._items, r._blob = None, blob
    return r


def _table_later(blob: bytes) -> Table[Any, Any]:
    t: Table[Any, Any] = Table.__new__(Table)
    t._items, t._blob = None, blob
    return t


def _value_later(blob: bytes) -> Value:
    v: Value = Value.__new__(Value)
    v._obj, v._blob = None, blob
    return v
