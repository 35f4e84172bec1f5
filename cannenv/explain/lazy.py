"""Parts of the cached signature table that are read on first use, not when the table is loaded.

The knowledge tables grew to thousands of rows (the vendor's codes, the messages read out of its
sources, the FAQ entries, HCCL's log messages); a short excerpt touches a few of them, if any. In
the validated-table cache (:func:`cannenv.explain.signatures.shipped`) each such part is pickled as
one blob of its own: with protocol 5 a buffer kept out of band, after the table's pickle in the
cache file, which is mapped, so loading the table neither reads nor copies the blob and builds no
row; the first lookup unpickles the part (docs/performance.md, "explain on a short log").

:class:`Rows` stands for a tuple and :class:`Table` for a read-only mapping; both behave as their
values (iteration, indexing, ``len``, ``in``, equality with a tuple or a dict) whether loaded or not.
:class:`Each` (a tuple) and :class:`Keyed` (a mapping) keep one blob per row or value, for tables a
log reads a few rows of by key (the codes, the sources an answer cites, the patterns of the anchors
a log holds). :class:`Value` stands for one frozen value (the signal table, the errno table …):
reading any of its attributes or methods unpickles it; it compares and hashes as that value.
The blobs are the cache's own (written by :func:`cannenv.explain.signatures._cache_write` from a
table it validated), never a user's input.
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
H = TypeVar("H")


class _Later(Generic[H]):
    """What the three share: the value held, or the blob it is unpickled from on first use."""

    __slots__ = ("_blob", "_held")

    def __init__(self, held: H) -> None:
        self._held: H | None = held
        self._blob: bytes | memoryview | None = None

    def _load(self) -> H:
        held = self._held
        if held is None:
            assert self._blob is not None
            held = self._held = pickle.loads(self._blob)
            self._blob = None
        return held

    @property
    def loaded(self) -> bool:
        """Whether the value was built (a part of a cached table is not until first used)."""
        return self._held is not None

    def __repr__(self) -> str:
        if not self.loaded:
            return f"{type(self).__name__}(<{len(self._blob or b'')} bytes, not loaded>)"
        return f"{type(self).__name__}({self._load()!r})"

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        blob = pickle.dumps(self._load(), pickle.HIGHEST_PROTOCOL)
        # protocol 5: a buffer the pickler may keep out of band (the cache file's blobs, mapped and
        # read only when used); in band it reads back as bytes, as with older protocols
        return (_later, (type(self).__name__, pickle.PickleBuffer(blob) if protocol >= 5 else blob))


class Rows(_Later[tuple[T, ...]], Sequence[T]):
    """An immutable sequence of rows, pickled as one blob and unpickled on first use."""

    __slots__ = ()

    def __init__(self, items: Iterable[T] = ()) -> None:
        super().__init__(tuple(items))

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._load()[index]

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[T]:
        return iter(self._load())

    def __contains__(self, value: object) -> bool:
        return value in self._load()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Rows):
            return self._load() == other._load()
        if isinstance(other, tuple):
            return self._load() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._load())


class Table(_Later[dict[K, V]], Mapping[K, V]):
    """A read-only mapping, pickled as one blob and unpickled on first use."""

    __slots__ = ()

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        super().__init__(dict(items or {}))

    def __getitem__(self, key: K) -> V:
        return self._load()[key]

    def get(self, key: K, default: Any = None) -> Any:
        return self._load().get(key, default)

    def __len__(self) -> int:
        return len(self._load())

    def __iter__(self) -> Iterator[K]:
        return iter(self._load())

    def __contains__(self, key: object) -> bool:
        return key in self._load()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._load() == dict(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping, like dict


class Value(_Later[object]):
    """One frozen value, pickled as a blob and unpickled when an attribute is first read.

    It stands where the value's own class would (a field of :class:`cannenv.explain.knowledge.
    Knowledge`): attribute and method reads go to the value, equality and hashing are the value's.
    Only the cache makes one (:func:`value` in ``Knowledge.__reduce__``), so code that builds a
    table never sees it; ``isinstance`` against the value's class is not used on these fields."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy/pickle probing a bare proxy: not the value's
            raise AttributeError(name)
        return getattr(self._load(), name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Value):
            other = other._load()
        return self._load() == other

    def __hash__(self) -> int:
        return hash(self._load())


_UNREAD: Any = object()
"""A row of :class:`Each` not unpickled yet."""


class Each(Sequence[T]):
    """An immutable sequence pickled one blob per row, with the position of the first row for each
    value of some attributes (``keys``): ``rows[i]`` and :meth:`first` unpickle that one row (the
    code a log printed, the patterns of an anchor it holds), iteration every row.

    A table of a thousand codes or patterns costs a tuple of blobs to load; a short log reads the
    few rows it names. It compares and hashes as the tuple of its rows."""

    __slots__ = ("_data", "_ends", "_held", "_index")

    def __init__(self, items: Iterable[T] = (), *, keys: Sequence[str] = ()) -> None:
        self._held: list[Any] = list(items)
        self._data: memoryview | None = None
        """The rows' blobs one after another (read back from the cache), row ``i`` ending at
        ``_ends[i]``."""
        self._ends: array[int] = array("Q")
        self._index: dict[str, dict[Any, int]] = {}
        for name in keys:
            first = self._index[name] = {}
            for i, row in enumerate(self._held):
                first.setdefault(getattr(row, name), i)

    def _row(self, i: int) -> T:
        row = self._held[i]
        if row is _UNREAD:
            assert self._data is not None
            row = self._held[i] = pickle.loads(self._data[self._ends[i - 1] if i else 0 : self._ends[i]])
        return row  # type: ignore[no-any-return]

    @property
    def loaded(self) -> bool:
        """Whether any row was built (a part of a cached table is not until a row is read)."""
        return self._data is None or any(row is not _UNREAD for row in self._held)

    def first(self, key: str, value: object) -> T | None:
        """The first row whose attribute ``key`` equals ``value`` (None if none): from the index
        when the rows were made with that key, else by looking at each row in order."""
        index = self._index.get(key)
        if index is not None:
            i = index.get(value)
            return None if i is None else self._row(i)
        for row in self:
            if getattr(row, key) == value:
                return row
        return None

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self._row(i) for i in range(len(self._held))[index])
        return self._row(range(len(self._held))[index])  # IndexError as a tuple raises it

    def __len__(self) -> int:
        return len(self._held)

    def __iter__(self) -> Iterator[T]:
        return (self._row(i) for i in range(len(self._held)))

    def __contains__(self, value: object) -> bool:
        return any(row == value for row in self)

    def _all(self) -> tuple[T, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Each):
            return self._all() == other._all()
        if isinstance(other, (Rows, tuple)):
            return self._all() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    @property
    def read(self) -> int:
        """How many rows were built."""
        return sum(row is not _UNREAD for row in self._held)

    def __repr__(self) -> str:
        return f"Each(<{len(self._held)} rows, {self.read} read>)"

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        blobs = [pickle.dumps(row, pickle.HIGHEST_PROTOCOL) for row in self]
        data = b"".join(blobs)
        ends = array("Q", accumulate(map(len, blobs)))
        # as a part's blob (_Later): out of band with protocol 5, so the cache maps it, not reads it
        return (_each, (pickle.PickleBuffer(data) if protocol >= 5 else data, ends, self._index))


def _each(data: bytes | memoryview, ends: array[int], index: dict[str, dict[Any, int]]) -> Each[Any]:
    """Rows read back from the cache: their blobs, none unpickled yet."""
    rows: Each[Any] = Each.__new__(Each)
    rows._held, rows._data, rows._ends, rows._index = [_UNREAD] * len(ends), memoryview(data), ends, index
    return rows


class Keyed(Mapping[K, V]):
    """A read-only mapping pickled one blob per value (its values an :class:`Each`): looking a key
    up unpickles its value alone (the sources an answer cites, of the hundreds of the table). It
    compares as a dict."""

    __slots__ = ("_at", "_values")

    def __init__(self, items: Mapping[K, V] | None = None) -> None:
        held = dict(items or {})
        self._at: dict[K, int] = {k: i for i, k in enumerate(held)}
        self._values: Each[V] = Each(held.values())

    def __getitem__(self, key: K) -> V:
        return self._values[self._at[key]]

    def get(self, key: K, default: Any = None) -> Any:
        at = self._at.get(key)
        return default if at is None else self._values[at]

    def __len__(self) -> int:
        return len(self._at)

    def __iter__(self) -> Iterator[K]:
        return iter(self._at)

    def __contains__(self, key: object) -> bool:
        return key in self._at

    @property
    def loaded(self) -> bool:
        """Whether any value was built (a part of a cached table is not until a key is read)."""
        return self._values.loaded

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping, like dict

    def __repr__(self) -> str:
        return f"Keyed(<{len(self)} keys, {self._values.read} read>)"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_keyed, (self._at, self._values))


def _keyed(at: dict[Any, int], values: Each[Any]) -> Keyed[Any, Any]:
    """A mapping read back from the cache: its values' blobs, none unpickled yet."""
    part: Keyed[Any, Any] = Keyed.__new__(Keyed)
    part._at, part._values = at, values
    return part


def each(items: Sequence[T], *, keys: Sequence[str] = ()) -> Each[T]:
    """``items`` as :class:`Each` (the same object when it already is)."""
    return items if isinstance(items, Each) else Each(items, keys=keys)


def keyed(items: Mapping[K, V]) -> Keyed[K, V]:
    """``items`` as :class:`Keyed` (the same object when it already is)."""
    return items if isinstance(items, Keyed) else Keyed(items)


def value(obj: object) -> Value:
    """``obj`` as a :class:`Value` (the same object when it already is)."""
    return obj if isinstance(obj, Value) else Value(obj)


def rows(items: Sequence[T]) -> Rows[T]:
    """``items`` as :class:`Rows` (the same object when it already is)."""
    return items if isinstance(items, Rows) else Rows(items)


def table(items: Mapping[K, V]) -> Table[K, V]:
    """``items`` as a :class:`Table` (the same object when it already is)."""
    return items if isinstance(items, Table) else Table(items)


_KINDS: dict[str, type[_Later[Any]]] = {"Rows": Rows, "Table": Table, "Value": Value}


def _later(kind: str, blob: bytes | memoryview) -> _Later[Any]:
    """A part read back from the cache: its blob (bytes, or a view of the mapped cache file), not
    yet unpickled."""
    part = _KINDS[kind].__new__(_KINDS[kind])
    part._held, part._blob = None, blob
    return part
