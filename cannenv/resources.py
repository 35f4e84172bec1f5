"""The one module that knows where shipped data lives.

In a wheel the repository's data folders are shipped as ``cannenv/_data/<name>``; in a source
checkout (editable install, tests) they sit at the repository root beside the package.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)  # noqa: UP033 - on the facts path (Python >= 3.7)
def data_dir(name: str) -> Path:
    """Directory of one shipped data folder: ``matrices``, ``dockerfiles`` or ``smoke_kernels``."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    from cannenv.errors import InternalDataError

    raise InternalDataError(name)


def matrices_dir() -> Path:
    return data_dir("matrices")


def dockerfiles_dir() -> Path:
    return data_dir("dockerfiles")


def smoke_kernels_dir() -> Path:
    return data_dir("smoke_kernels")


def model_ops_file() -> Path:
    """Fused-operator patterns and rewrites for `cannenv model ops` (shipped inside the package)."""
    return _PACKAGE_DIR / "model" / "ops.yaml"


def model_config_rules_file() -> Path:
    """Sizes and keys `cannenv model` accepts in a config.json (shipped inside the package)."""
    return _PACKAGE_DIR / "model" / "config_rules.yaml"


def model_architectures_file() -> Path:
    """Model types `cannenv model memory` plans by its own rules (shipped inside the package)."""
    return _PACKAGE_DIR / "model" / "architectures.yaml"


def model_chips_file() -> Path:
    """What each SoC family computes, for `cannenv model` (shipped inside the package)."""
    return _PACKAGE_DIR / "model" / "chips.yaml"
