"""The packages' real file lists: which shared object each package of the stack installs.

``matrices/explain/filelists.yaml`` keeps, per package, the ``.so`` files it installs, read from the
vendor's own packaging data at a commit (each list names its URL):

* the CANN component repositories (github hicann/*): a package's ``scripts/package/<pkg>/<pkg>.xml``
  and the ``module/ascend/<Block>.xml`` blocks it includes (``<file value="libacl_rt.so"/>`` under a
  ``<file_info install_path="$(TARGET_ENV)/lib64">``);
* a CMake project's install rules (``add_library(atb SHARED …)`` + ``install(TARGETS atb … DESTINATION
  lib)``, NNAL's ATB);
* a wheel's file list (torch_npu from PyPI).

The library table of ``knowledge.yaml`` is refreshed from them: ``python -m cannenv.explain.filelists
--diff`` prints the libraries the table lacks and those whose package moved (docs/explain.md,
"Knowledge tables"). Saving a list: ``--save-xml``, ``--save-cmake``, ``--save-wheel``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cannenv import linre
from cannenv.explain.knowledge import Knowledge, library_stem

MAX_FILELISTS_BYTES = 4 * 1024 * 1024
_SO = re.compile(r"\.so(?:\.[0-9]+)*\Z")


def is_shared_object(name: str) -> bool:
    return bool(_SO.search(name))


def _installed(config: str, blocks: Mapping[str, str]) -> tuple[str, list[str]]:
    """The vendor's package name (``<func_name>``) and every file a CANN package XML installs, as
    ``install_path/file``, from the package's own ``<file_info>`` and from the blocks its
    ``<block_info>`` names (``blocks``: block name → that block's XML)."""
    root = ET.fromstring(config)
    func = root.findtext("package_info/func_name") or root.get("name") or ""
    files: list[str] = []
    elements = [root]
    for b in root.iter("block"):
        name = b.get("name", "")
        if name and name in blocks:
            elements.append(ET.fromstring(blocks[name]))
    for el in elements:
        for info in el.iter("file_info"):
            where = info.get("install_path") or info.get("dst_path") or ""
            for f in info.iter("file"):
                value = f.get("value", "")
                path = f"{where.rstrip('/')}/{value}" if where else value
                if value and path not in files:
                    files.append(path)
    return func, files


def package_xml(config: str, blocks: Mapping[str, str]) -> tuple[str, list[str]]:
    """The vendor's package name and every shared object a CANN package XML installs, as
    ``install_path/file`` (:func:`_installed`)."""
    func, files = _installed(config, blocks)
    return func, [f for f in files if is_shared_object(f.rsplit("/", 1)[-1])]


INCLUDE = "$(TARGET_ENV)/include/"
"""The toolkit's include folder in a CANN package XML (``ascend-toolkit/latest/include``, which the
CANN environment puts on a build's include path)."""


def package_headers(config: str, blocks: Mapping[str, str]) -> list[str]:
    """The headers a CANN package XML installs into the toolkit's include folder, as a build
    includes them (``$(TARGET_ENV)/include/register/tilingdata_base.h`` → ``register/tilingdata_base.h``).
    A bare name in the folder itself (``securec.h``) is left out: other libraries ship one of that
    name too (libboundscheck, MindSpore's copy), so it does not name this package."""
    _, files = _installed(config, blocks)
    out: list[str] = []
    for f in files:
        if f.startswith(INCLUDE) and f.endswith((".h", ".hpp")):
            name = f[len(INCLUDE) :]
            if "/" in name and name not in out:
                out.append(name)
    return out


_ADD = re.compile(r"add_library\(\s*([A-Za-z0-9_]+)\s+SHARED\b")
_INSTALL = linre.compile(
    r"install\(\s*TARGETS\s+([^)]*?)\s+(?:LIBRARY\s+)?DESTINATION\s+([^\s)]+)", what="CMake install()"
)
"""CMake's ``install(TARGETS …)`` (a build file is hostile input: the linear engine)."""
_OUTPUT_NAME = re.compile(
    r'set_target_properties\(\s*([A-Za-z0-9_]+)\s+PROPERTIES\s+OUTPUT_NAME\s+"?([^"\s)]+)'
)


def cmake_installs(files: Mapping[str, str]) -> list[str]:
    """The shared libraries a CMake project installs: targets added ``SHARED`` and named in an
    ``install(TARGETS … DESTINATION …lib…)``, as ``destination/lib<target>.so`` (a target with its own
    ``OUTPUT_NAME``, a Python module such as ``_C``, is left out: the loader never looks it up by a
    ``lib`` name)."""
    shared: set[str] = set()
    renamed: set[str] = set()
    installs: list[tuple[str, str]] = []
    for text in files.values():
        shared.update(_ADD.findall(text))
        renamed.update(m[0] for m in _OUTPUT_NAME.findall(text))
        for m in _INSTALL.finditer(text):
            installs += [(t, m.group(2)) for t in m.group(1).split()]
    out: list[str] = []
    for target, dest in installs:
        if target not in shared or target in renamed:
            continue
        folder = "lib" if dest.rstrip("/").endswith("/lib") or dest == "lib" else dest
        path = f"{folder}/lib{target}.so"
        if path not in out:
            out.append(path)
    return out


def wheel_files(names: Iterable[str]) -> list[str]:
    """The shared objects of a wheel's file list (its ``RECORD`` or the zip's names)."""
    return [n for n in names if is_shared_object(n.rsplit("/", 1)[-1])]


@dataclass(frozen=True)
class FileList:
    id: str
    component: str
    package: str
    reason: str
    title: str
    url: str
    files: tuple[str, ...]
    bundled: tuple[str, ...] = ()
    """Third-party copies the package carries (not mapped to it)."""
    headers: tuple[str, ...] = ()
    """The headers it installs into the toolkit's include folder, as a build includes them."""

    def stems(self) -> list[str]:
        """The library names the loader looks up (``libacl_rt``), in the list's order."""
        out: list[str] = []
        for f in self.files:
            stem = library_stem(f)
            if stem not in out:
                out.append(stem)
        return out


def parse(raw: Any, *, source: str) -> tuple[FileList, ...]:
    from cannenv.explain.models import FileListsFile, validate

    model = validate(
        FileListsFile, raw, source=source, what="file lists", hint="see docs/explain.md (Knowledge tables)"
    )
    return tuple(
        FileList(x.id, x.component, x.package, x.reason, x.title, x.url, x.files, x.bundled, x.headers)
        for x in model.lists
    )


def load(path: str | Path) -> tuple[FileList, ...]:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="file lists", max_bytes=MAX_FILELISTS_BYTES)
    return parse(raw, source=str(p))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "filelists.yaml"


@dataclass(frozen=True)
class Change:
    kind: str
    """``lacks`` (no row of that name in the table) or ``moved`` (the table's package is none of the
    packages whose lists ship it)."""
    name: str
    package: str
    """The package of the first list that ships it."""
    table_package: str | None
    lists: tuple[str, ...]


def diff(lists: Iterable[FileList], knowledge: Knowledge) -> list[Change]:
    """What the library table lacks or maps to another package than the saved lists say. Only
    ``lib*`` names of ``files`` (a Python extension module, ``_C.cpython-311-….so``, is opened by its
    path, never looked up by name; a list's ``bundled`` third-party copies are not the package's)."""
    shipped_by: dict[str, list[FileList]] = {}
    for fl in lists:
        for stem in fl.stems():
            if stem.startswith("lib"):
                shipped_by.setdefault(stem, []).append(fl)
    exact = {lib.name: lib for lib in knowledge.libraries if not lib.prefix}
    out: list[Change] = []
    for stem, by in shipped_by.items():
        packages = {fl.package for fl in by}
        ids = tuple(fl.id for fl in by)
        row = exact.get(stem)
        if row is None:
            out.append(Change("lacks", stem, by[0].package, None, ids))
        elif row.package not in packages:
            out.append(Change("moved", stem, by[0].package, row.package, ids))
    return out


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import FileListsFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(FileListsFile, "cannenv explain: the packages' file lists")


def _git_show(git_dir: str, commit: str, path: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout


def _git_ls(git_dir: str, commit: str) -> list[str]:
    import subprocess

    out = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    return out.splitlines()


def main(argv: list[str] | None = None) -> int:
    """``--schema``: the JSON Schema of filelists.yaml; ``--diff [FILELISTS]``: the refresh diff
    against the shipped library table;
    ``--save-xml GIT_DIR COMMIT PACKAGE_XML``: the shared objects of a hicann package XML (and its
    blocks, read from ``scripts/package/module/ascend/`` at the same commit);
    ``--save-cmake GIT_DIR COMMIT``: a CMake project's installed shared libraries (tests/ and
    examples left out); ``--save-wheel WHEEL``: a wheel's shared objects. The ``--save-*`` commands
    print the ``files`` of a list entry (YAML) for a person to file with its id, package and URL."""
    import json
    import sys
    import zipfile

    import yaml

    from cannenv.explain.tables import shipped

    args = sys.argv[1:] if argv is None else argv
    if args == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
        return 0
    if args[:1] == ["--diff"] and len(args) <= 2:
        lists = load(args[1]) if len(args) == 2 else load(shipped_path())
        k = shipped()
        changes = diff(lists, k)
        for fl in lists:
            if fl.id not in k.sources:
                print(f"# source: {fl.id}: {{title: {json.dumps(fl.title)}, url: {json.dumps(fl.url)}}}")
        for c in changes:
            where = ", ".join(c.lists)
            if c.kind == "lacks":
                print(f"- {{name: {c.name}, package: {c.package}, source: {c.lists[0]}}}  # lacks ({where})")
            else:
                print(f"# moved: {c.name}: the table says {c.table_package}, the lists {c.package} ({where})")
        return 1 if changes else 0
    if len(args) == 4 and args[0] == "--save-xml":
        git_dir, commit, xml_path = args[1:]
        folder = xml_path.rsplit("/", 2)[0] + "/module/ascend/"
        blocks = {
            p.rsplit("/", 1)[-1][: -len(".xml")]: _git_show(git_dir, commit, p)
            for p in _git_ls(git_dir, commit)
            if p.startswith(folder) and p.endswith(".xml")
        }
        config = _git_show(git_dir, commit, xml_path)
        func, files = package_xml(config, blocks)
        headers = package_headers(config, blocks)
        saved = {"component": func, "files": files, **({"headers": headers} if headers else {})}
        print(yaml.safe_dump(saved, sort_keys=False, width=200), end="")
        return 0
    if len(args) == 3 and args[0] == "--save-cmake":
        git_dir, commit = args[1:]
        paths = [
            p
            for p in _git_ls(git_dir, commit)
            if (p.endswith("CMakeLists.txt") or p.endswith(".cmake"))
            and not re.search(r"(?:^|/)(?:tests?|examples?)/", p)
        ]
        files = cmake_installs({p: _git_show(git_dir, commit, p) for p in paths})
        print(yaml.safe_dump({"files": files}, sort_keys=False, width=200), end="")
        return 0
    if len(args) == 2 and args[0] == "--save-wheel":
        with zipfile.ZipFile(args[1]) as z:
            files = wheel_files(z.namelist())
        print(yaml.safe_dump({"files": files}, sort_keys=False, width=200), end="")
        return 0
    print(
        "usage: python -m cannenv.explain.filelists --schema > matrices/explain/filelists.schema.json\n"
        "       python -m cannenv.explain.filelists --diff [FILELISTS_YAML]\n"
        "       python -m cannenv.explain.filelists --save-xml GIT_DIR COMMIT scripts/package/PKG/PKG.xml\n"
        "       python -m cannenv.explain.filelists --save-cmake GIT_DIR COMMIT\n"
        "       python -m cannenv.explain.filelists --save-wheel WHEEL",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
