"""What the model commands need in this Python (torch, transformers) and which versions they are.

No torch here: this is checked before :mod:`cannenv.model.trace` imports it, so a missing library is
exit 4 with the command that installs it, never a crash.
"""

from __future__ import annotations

import importlib.util
from importlib import metadata

from cannenv.errors import MissingToolError

INSTALL = "pip install 'cannenv[model]' --extra-index-url https://download.pytorch.org/whl/cpu"
"""the model extra (CPU torch + transformers); the extra index serves the CPU-only torch build"""


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(
    *, transformers: bool = True, purpose: str = "`cannenv model` builds the model from its config with them"
) -> None:
    """Exit 4 (MissingToolError) naming the install command when torch/transformers are absent."""
    missing = [m for m in ("torch", "transformers" if transformers else "") if m and not _has(m)]
    if missing:
        raise MissingToolError(
            " and ".join(missing) + " not installed in this Python (" + _python() + "): " + purpose,
            hint=f"install the model extra: {INSTALL}",
        )


def _python() -> str:
    import sys

    return sys.executable


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
