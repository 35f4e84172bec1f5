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
        self._blob: bytes | None = None

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

    def __reduce__(self) -> tuple[Any, ...]:
        return (_later, (type(self).__name__, pickle.dumps(self._load(), pickle.HIGHEST_PROTOCOL)))


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


def _later(kind: str, blob: bytes) -> _Later[Any]:
    """A part read back from the cache: its blob, not yet unpickled."""
    part = _KINDS[kind].__new__(_KINDS[kind])
    part._held, part._blob = None, blob
    return part
