"""The version matrix: value types, the loader, and rule queries (a small package).

Layout (downhill; nothing here imports :mod:`cannenv.soc`, which sits above)::

    (cannenv/hardware.py, outside: product family / SoC value types, shared with soc.py)
    model.py      version fields, rows, stacks, the file model, query answers
    query.py      Matrix: the merged data and its rule queries
    loader.py     files -> validated Matrix: YAML with line numbers, cross-entry checks, the cache

API note for other modules (all pure; errors are :mod:`cannenv.errors` errors)::

    from cannenv import matrix
    m = matrix.load()                      # shipped matrices/*.yaml, validated, cached
    m = matrix.load(["my.yaml", "dir/"])   # other files (a dir = its top-level *.yaml/*.json)
    m.digest                               # "sha256:<hex>" over the canonical content
    m.stacks                               # tuple[Stack, ...]
    s = m.stack("a2-cann8.3.rc1-torch2.7.1-py3.11")   # NotFoundError with did-you-mean
    s.family, s.arches, s.os, s.status, s.sources, s.certificates
    s.components["cann"].version  # keys: firmware driver cann ops nnal python torch torch_npu (+extras)
    s.version("torch_npu") -> str | None ; s.artifact("ops", "aarch64") -> Artifact | None (file, sha256, url)

    # rules (each answer names its evidence kind: recommended > validated > declared > observed)
    m.driver_requirement("8.2.RC1", "a2")  -> DriverRequirement | None   (.minimum, .range, .evidence, .rows)
    m.hdk_pairs("8.2.RC1", family="a2")    -> list[HdkRow]
    m.cann_accepting_driver("24.1.rc2", family="a2") -> list[DriverRequirement]
    m.torch_npu_rows(cann="8.3.RC1", torch="2.7.1", python="3.11") -> list[TorchNpuRow]
    m.python_support("2.7.1")              -> PythonSupport (.current, .older statements)
    m.wheel_published("2.7.1.post2", "3.12", arch="x86_64") -> bool | None (None = not known)
    m.ops_package("8.5.0", "a3", "aarch64") -> InstallerName (.package, .file)
    m.installer_file(component, version, family, arch, cann=...) -> InstallerName
        # component: cann | ops | nnal | driver | firmware
    m.companion_versions("ops", "9.0.0")   -> tuple[str, ...]   (ops/nnal versions that go with a toolkit)
    m.stack_problems(stack)                -> list[str]  (rules a stack breaks; empty = consistent)

Resolution lives in :mod:`cannenv.resolve` (``resolve(m, keep=..., want=...)``); the torch_npu METADATA
importer in :mod:`cannenv.torch_npu_import`.

File format: every matrix file is a mapping with ``schema_version: 1`` and any of the sections
``sources``, ``hardware``, ``torch_npu``, ``python_support``, ``wheels``, ``lifecycle``, ``hdk``,
``installers``, ``companions``, ``stacks``; the loader merges all files. Load errors are collected
across all entries of all files and reported together with ``file:line``, the entry, the field path
and what was expected. The JSON Schema (``cannenv matrix schema``) is generated from
:class:`MatrixFile`.

The types are frozen value dataclasses (:mod:`cannenv.values`): files are validated by pydantic
(imported on first validation), while a matrix taken from the validated-matrix cache is only
unpickled, so a warm :func:`load` never imports pydantic.
"""

from __future__ import annotations

from cannenv.hardware import FAMILY_IDS, FamilyId, Hardware
from cannenv.matrix.loader import (
    CACHE_FORMAT,
    MatrixError,
    Problem,
    _line_index,
    _matrix_files,
    _yaml_loader,
    cache_dir,
    check_file,
    load,
    load_files,
    shipped_if_cached,
)
from cannenv.matrix.model import (
    COMPONENT_SCHEME,
    CORE_COMPONENTS,
    EVIDENCE_RANK,
    SCHEMA_VERSION,
    SECTIONS,
    Arch,
    Artifact,
    CompanionRule,
    Component,
    DriverRequirement,
    Evidence,
    HdkRow,
    InstallerName,
    InstallerPattern,
    LifecycleRow,
    MatrixFile,
    PythonSupport,
    PythonSupportRow,
    Source,
    Stack,
    Status,
    TorchNpuRow,
    WheelRow,
    _cann,
    _canonical,
    _component_matches,
    _drv,
    _in_range,
    _parsed,
    _pep,
    component_matches,
    json_schema,
    same_python_line,
)
from cannenv.matrix.query import Matrix

__all__ = [
    "CACHE_FORMAT",
    "COMPONENT_SCHEME",
    "CORE_COMPONENTS",
    "EVIDENCE_RANK",
    "FAMILY_IDS",
    "SCHEMA_VERSION",
    "SECTIONS",
    "Arch",
    "Artifact",
    "CompanionRule",
    "Component",
    "DriverRequirement",
    "Evidence",
    "FamilyId",
    "Hardware",
    "HdkRow",
    "InstallerName",
    "InstallerPattern",
    "LifecycleRow",
    "Matrix",
    "MatrixError",
    "MatrixFile",
    "Problem",
    "PythonSupport",
    "PythonSupportRow",
    "Source",
    "Stack",
    "Status",
    "TorchNpuRow",
    "WheelRow",
    "_cann",
    "_canonical",
    "_component_matches",
    "_drv",
    "_in_range",
    "_line_index",
    "_matrix_files",
    "_parsed",
    "_pep",
    "_yaml_loader",
    "cache_dir",
    "check_file",
    "component_matches",
    "json_schema",
    "load",
    "load_files",
    "same_python_line",
    "shipped_if_cached",
]
