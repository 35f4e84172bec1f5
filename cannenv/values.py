"""Value types: frozen dataclasses in the code, pydantic v2 at the boundaries.

cannenv's data (facts, findings, the doctor's report, the matrix and the hardware table) are frozen
standard-library dataclasses, declared with :func:`value`. Code that builds them is checked by
mypy, and each class enforces its own invariants in ``__post_init__``. Data that comes from
outside — a matrix file, a saved facts file, a report read back — is validated by pydantic v2,
which supports such dataclasses natively: :func:`validate` and :func:`validate_json` build a
``TypeAdapter`` on first use, honour each class's ``__pydantic_config__`` (``extra="forbid"``,
attribute docstrings as descriptions) and :class:`Check` markers in ``Annotated`` fields, and
report every problem with its field path. JSON Schemas come from the same adapters.

Why not ``pydantic.BaseModel``: importing pydantic and building model classes costs ~100 ms per
process (measured in docs/performance.md), which is most of what ``cannenv doctor`` costs. With
plain dataclasses the doctor's path (probes → checks → JSON report, matrix from its cache) never
imports pydantic; it is imported only where outside data is validated or a schema is written.
``tests/unit/test_doctor.py`` keeps it that way.

Serialisation (:func:`dump`, :func:`to_json`) is our own short walk over dataclasses, tuples,
lists and dicts: pydantic's serializer would need pydantic on the hot path, and the shapes here
are plain (str, int, float, bool, None, Literal strings, nested values).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, TypeVar

from cannenv.compat import Final

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter, ValidationError
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema
    from typing_extensions import dataclass_transform
else:  # typing.dataclass_transform is 3.11+, and only type checkers read it

    def dataclass_transform(**_kwargs: Any) -> Callable[[T], T]:
        return lambda f: f


T = TypeVar("T")

FORBID_EXTRA: Final[Mapping[str, Any]] = {"extra": "forbid", "use_attribute_docstrings": True}
"""The ``__pydantic_config__`` of every value class: unknown keys are errors, and each field's
docstring becomes its description in the JSON Schema."""


@dataclass_transform(frozen_default=True, kw_only_default=True)
def value(cls: type[T]) -> type[T]:
    """Declare a value class: a frozen, slotted, keyword-only dataclass validated as FORBID_EXTRA."""
    if "__pydantic_config__" not in cls.__dict__:
        cls.__pydantic_config__ = FORBID_EXTRA  # type: ignore[attr-defined]
    if sys.version_info >= (3, 10):  # noqa: UP036
        return dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(cls)  # novm: guarded
    return _keyword_only(dataclasses.dataclass(frozen=True, init=False)(cls))


def _keyword_only(cls: type[T]) -> type[T]:
    """The fleet bundle on a host's Python 3.7-3.9 (no ``kw_only``): the same keyword-only
    ``__init__``, written here. Slots only save memory, so the class goes without them there."""
    fields = [f for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
    post_init = getattr(cls, "__post_init__", None)

    def __init__(self: Any, **kwargs: Any) -> None:
        for f in fields:
            if f.name in kwargs:
                val = kwargs.pop(f.name)
            elif f.default is not dataclasses.MISSING:
                val = f.default
            elif f.default_factory is not dataclasses.MISSING:
                val = f.default_factory()
            else:
                raise TypeError(f"{cls.__name__}() missing keyword argument {f.name!r}")
            object.__setattr__(self, f.name, val)
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments {sorted(kwargs)}")
        if post_init is not None:
            post_init(self)

    cls.__init__ = __init__  # type: ignore[method-assign]
    return cls


class Check:
    """An ``Annotated`` marker: at the boundary, validate a field with ``fn`` (which returns the
    value or raises ValueError) and describe it in the JSON Schema. Costs nothing in the code.

        CannStr = Annotated[str, Check(check_cann, "CANN version, e.g. 8.3.RC1")]

    ``min_length`` (strings, tuples, lists, dicts, sets) is checked by pydantic-core itself and
    shows as ``minLength``/``minItems`` in the JSON Schema, like ``pattern`` for strings.
    """

    __slots__ = ("description", "fn", "min_length", "pattern")

    def __init__(
        self,
        fn: Callable[[Any], Any] | None = None,
        description: str | None = None,
        *,
        pattern: str | None = None,
        min_length: int | None = None,
    ) -> None:
        self.fn = fn
        self.description = description
        self.pattern = pattern
        self.min_length = min_length

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        inner = handler(source)
        if self.pattern is not None:
            inner = core_schema.str_schema(pattern=self.pattern)
        if self.min_length is not None:
            if inner.get("type") not in ("str", "tuple", "list", "dict", "set", "frozenset"):
                raise TypeError(f"Check(min_length=...) does not apply to {source!r}")
            inner = {**inner, "min_length": self.min_length}
        if self.fn is None:
            return inner
        return core_schema.no_info_after_validator_function(self.fn, inner)

    def __get_pydantic_json_schema__(self, cs: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        js = handler(cs)
        if self.description:
            js["description"] = self.description
        return js


def check_pattern(pattern: str, text: str, what: str) -> None:
    """Raise ValueError unless ``text`` matches ``pattern`` entirely (for ``__post_init__``)."""
    if re.fullmatch(pattern, text) is None:
        raise ValueError(f"{what} {text!r} does not match {pattern}")


def _pydantic(what: str) -> Any:
    """The pydantic module; a MissingToolError (not a traceback) where it cannot be imported."""
    try:
        import pydantic
    except ImportError:  # the fleet bundle carries only what `cannenv facts` needs
        from cannenv.errors import MissingToolError

        raise MissingToolError(
            f"validating {what} needs pydantic, which this Python cannot import",
            hint="install cannenv with its dependencies (pip install cannenv), or judge saved facts "
            "where it is installed: `cannenv facts --json > host.json` here, "
            "`cannenv doctor --facts host.json` there",
        ) from None
    return pydantic


def validation_error(what: str = "data") -> type[ValidationError]:
    """pydantic's ValidationError class, for ``except`` clauses around :func:`validate`."""
    cls: type[ValidationError] = _pydantic(what).ValidationError
    return cls


@functools.lru_cache(maxsize=None)  # noqa: UP033 - functools.cache is 3.9+
def adapter(cls: Any) -> TypeAdapter[Any]:
    """The (cached) pydantic TypeAdapter of a value class or type; built on first use."""
    made: TypeAdapter[Any] = _pydantic(f"{getattr(cls, '__name__', cls)} data").TypeAdapter(cls)
    return made


def validate(cls: type[T], data: Any) -> T:
    """``cls`` from plain data (pydantic lax mode); raises pydantic.ValidationError."""
    key: Any = cls  # (a class is hashable; mypy does not know it of type[T])
    out: T = adapter(key).validate_python(data)
    return out


def validate_json(cls: type[T], data: str | bytes) -> T:
    """``cls`` from JSON text (parsed and validated in one pass); raises pydantic.ValidationError."""
    key: Any = cls
    out: T = adapter(key).validate_json(data)
    return out


def json_schema(cls: Any) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a value class, as pydantic generates it."""
    schema: dict[str, Any] = adapter(cls).json_schema()
    return schema


def field_names(cls: Any) -> list[str]:
    """The field names of a value class, in declaration order ([] for anything else)."""
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        return [f.name for f in dataclasses.fields(cls)]
    return []


def dump(obj: Any, *, exclude_none: bool = False) -> Any:
    """``obj`` as JSON-ready data: dataclasses become dicts (field order kept), tuples lists."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(obj):
            v = getattr(obj, f.name)
            if v is None and exclude_none:
                continue
            out[f.name] = dump(v, exclude_none=exclude_none)
        return out
    if isinstance(obj, Mapping):
        return {
            str(k): dump(v, exclude_none=exclude_none)
            for k, v in obj.items()
            if not (v is None and exclude_none)
        }
    if isinstance(obj, (tuple, list, frozenset, set)):
        return [dump(v, exclude_none=exclude_none) for v in obj]
    if isinstance(obj, PurePath):
        return str(obj)
    # Version objects and other scalar-like values are spelled by their str().
    return str(obj)


def to_json(obj: Any, *, indent: int | None = 2, exclude_none: bool = False) -> str:
    """``obj`` as JSON text (UTF-8 characters kept as they are)."""
    separators = (",", ":") if indent is None else None
    return json.dumps(
        dump(obj, exclude_none=exclude_none), indent=indent, ensure_ascii=False, separators=separators
    )
