"""What the facts path takes from Pythons newer than 3.7, with the stand-ins the fleet bundle uses there.

The package needs Python >= 3.10, but ``cannenv facts`` also runs inside the fleet bundle on the
host's own Python, which on the usual Ascend host OSes is older (Kylin V10: 3.7, Ubuntu 20.04: 3.8,
openEuler 22.03: 3.9). Modules on that path (``tests/unit/test_py37.py`` lists them and checks them
with vermin) take these names from here. On such a Python no annotation is ever evaluated (every
module has ``from __future__ import annotations`` and pydantic is not in the bundle), so a stand-in
that only survives subscripting is enough for ``Literal`` and ``Final``.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["Final", "Literal", "get_args"]

if sys.version_info >= (3, 8):  # noqa: UP036 - the bundle's host Python may be 3.7
    from typing import Final, Literal, get_args  # novm: guarded by the version test above
else:  # pragma: no cover - Python 3.7 only

    class _Alias:
        """``Literal["a", "b"]`` at module level (a type alias) on 3.7: keeps its arguments."""

        def __init__(self, args: tuple[Any, ...] = ()) -> None:
            self.__args__ = args

        def __getitem__(self, item: Any) -> _Alias:
            return _Alias(item if isinstance(item, tuple) else (item,))

    Literal = Final = _Alias()

    def get_args(tp: Any) -> tuple[Any, ...]:
        return tuple(getattr(tp, "__args__", ()))
