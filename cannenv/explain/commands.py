"""Who ships a command the shell or a tool does not find: ``matrices/explain/commands.yaml``.

The shells and tools print a command they do not find in their own forms (the ``command``
extractors of knowledge.yaml, each from its printer's source): bash's ``bash: X: command not found``,
dash's ``sh: 1: X: not found``, zsh's ``zsh: command not found: X``, GNU which's ``which: no X in
(…)``, Python's ``FileNotFoundError: [Errno 2] No such file or directory: 'X'`` for a bare command
name (subprocess), and the driver installer's own ``[ERROR]The list of missing tools: lspci,ifconfig``.
The table says who ships X, read from complete lists:

* ``cann``: a file a CANN package XML (github hicann/*) installs into one of the folders CANN's
  ``set_env.sh`` puts on PATH (``path``, read from that script) → ``env-not-sourced``;
* ``driver``: a file the driver's package XMLs (hicann/driver) install into /usr/local/bin,
  /usr/local/sbin or driver/tools → ``device-not-visible`` (a container without the driver's mounts);
* ``os``: a tool the driver's installer checks for (its ``check_tools.conf``) or the vendor's install
  guides name with its OS package → ``third-party-library``.

Any other command is no reading of this table (the residual reading and the signatures decide).

    python -m cannenv.explain.commands --schema > matrices/explain/commands.schema.json
    python -m cannenv.explain.commands --save-xml KIND GIT_DIR COMMIT PACKAGE_XML [FOLDER …]
    python -m cannenv.explain.commands --save-path GIT_DIR COMMIT scripts/package/runtime/set_env.sh
    python -m cannenv.explain.commands --save-tools GIT_DIR COMMIT CHECK_TOOLS_CONF
    python -m cannenv.explain.commands --diff SOURCE_ID GIT_DIR COMMIT PATH
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cannenv.explain.parts import Command, CommandKind, Commands

if TYPE_CHECKING:
    from cannenv.explain.models import CommandsFile

MAX_TABLE_BYTES = 1 << 20
COMMAND_PRIORITY = 5
"""Priority of a command not found that the table knows: below the hand-written signatures of a
message (a tool's own report of what it lacks is the more precise reading), above the vendor's
tables read from their sources and every residual reading."""
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}\Z")
_PREPEND_PATH = re.compile(r'prepend_env\s+"?PATH"?\s+"([^"\n]{1,2000})"')
DRIVER_FOLDERS = ("/usr/local/bin", "/usr/local/sbin", "driver/tools")
"""Where the driver's package XMLs install its commands: the folders its setenv.bash puts on PATH
(/usr/local/sbin, /usr/local/bin) and its tools folder (mounted into a container by Ascend Docker
Runtime, on no PATH the driver sets)."""


class Found(Protocol):
    """What the scan keeps of a value (:class:`cannenv.explain.scan.Value`)."""

    count: int
    line: str


@dataclass(frozen=True)
class CommandReading:
    """A command not found that the table knows: who ships it and what that means."""

    id: str
    title: str
    component: str
    causes: tuple[tuple[str, str, tuple[str, ...]], ...]
    key: str
    line: str
    count: int


def path_folders(set_env: str) -> list[str]:
    """The folders under the install that a CANN ``set_env.sh`` prepends to PATH
    (``prepend_env "PATH" "$version_dirpath/bin:$version_dirpath/tools/profiler/bin:…"``), relative."""
    out: list[str] = []
    for m in _PREPEND_PATH.finditer(set_env):
        for part in m.group(1).split(":"):
            rel = re.sub(r"^\$\{?[A-Za-z_]+\}?/", "", part).strip("/")
            if rel and "$" not in rel and rel not in out:
                out.append(rel)
    return out


def _folder(install_path: str) -> str:
    """A package XML's install folder, without the target's own prefix (``$(TARGET_ENV)/bin`` and
    ``bin`` are the one folder set_env.sh puts on PATH)."""
    return install_path.removeprefix("$(TARGET_ENV)/").rstrip("/")


def package_binaries(config: str, blocks: Mapping[str, str], folders: Iterable[str]) -> list[str]:
    """The names of the files a package XML (with the blocks its ``<block_info>`` names) installs
    directly into one of ``folders``: the commands the package puts where a PATH finds them. A
    ``<file>``'s own ``install_path`` (npu-smi's ``/usr/local/bin``) wins over its ``<file_info>``'s."""
    import xml.etree.ElementTree as ET

    wanted = {f.rstrip("/") for f in folders}
    root = ET.fromstring(config)
    named = [b.get("name", "") for b in root.iter("block")]
    elements = [root, *(ET.fromstring(blocks[n]) for n in named if n in blocks)]
    out: list[str] = []
    for el in elements:
        for info in el.iter("file_info"):
            where = info.get("install_path") or info.get("dst_path") or ""
            for f in info.iter("file"):
                name = f.get("value", "")
                folder = _folder(f.get("install_path", where))
                if folder in wanted and _NAME.match(name) and name not in out:
                    out.append(name)
    return out


def check_tools(conf: str) -> list[str]:
    """The tools the driver installer checks for (``check_tools.conf``: one a line, ``a,b`` where
    either will do)."""
    out: list[str] = []
    for line in conf.splitlines():
        for name in line.strip().split(","):
            name = name.strip()
            if name and _NAME.match(name) and name not in out:
                out.append(name)
    return out


def build(model: CommandsFile) -> tuple[Commands, dict[str, tuple[str, str]]]:
    """The engine table and the file's sources (id -> (title, url))."""
    rows = {
        c.name: Command(c.name, c.kind, c.package, c.component, c.where, c.source, c.package_source)
        for c in model.commands
    }
    kinds: dict[str, CommandKind] = {
        k: CommandKind(v.causes, v.what, v.reason, v.sources) for k, v in model.kinds.items()
    }
    return Commands(rows, kinds), {k: (v.title, v.url) for k, v in model.sources.items()}


def parse(raw: Any, *, source: str) -> CommandsFile:
    from cannenv.explain.models import CommandsFile, validate

    return validate(
        CommandsFile,
        raw,
        source=source,
        what="command table",
        hint="see docs/explain.md (A command the shell or a tool does not find)",
    )


def load(path: str | Path) -> tuple[Commands, dict[str, tuple[str, str]]]:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="command table", max_bytes=MAX_TABLE_BYTES)
    return build(parse(raw, source=str(p)))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "commands.yaml"


@cache
def shipped() -> tuple[Commands, dict[str, tuple[str, str]]]:
    return load(shipped_path())


def names(value: str) -> list[str]:
    """The command names of an extractor's value: one, or the installer's comma-separated list."""
    return [n for n in (x.strip() for x in value.split(",")) if n and _NAME.match(n)]


def read(table: Commands, found: Mapping[str, Found]) -> list[CommandReading]:
    """A reading per command the table knows, in the order found; any other command: none."""
    out: list[CommandReading] = []
    seen: set[str] = set()
    for value, v in found.items():
        for name in names(value):
            row = table.rows.get(name)
            if row is None or name in seen:
                continue
            seen.add(name)
            kind = table.kinds[row.kind]
            package = row.package or "its OS package"
            if row.component:
                package = f"{package} ({row.component})"
            why = kind.reason.format(command=name, package=package, where=row.where)
            srcs = tuple(dict.fromkeys((row.source, *filter(None, (row.package_source,)), *kind.sources)))
            slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
            out.append(
                CommandReading(
                    id=f"command-{row.kind}-{slug}",
                    title=f"{name}: command not found ({kind.what}: {package})",
                    component=f"the shell or tool that runs {name} ({kind.what})",
                    causes=tuple((c, why, srcs) for c in kind.causes),
                    key=f"derived:command:{name}",
                    line=v.line,
                    count=v.count,
                )
            )
    return out


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import CommandsFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(CommandsFile, "cannenv explain: who ships a command the shell or a tool does not find")


def _git(git_dir: str, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True, timeout=60
    ).stdout


def _git_show(git_dir: str, commit: str, path: str) -> str:
    return _git(git_dir, "show", f"{commit}:{path}")


def _git_ls(git_dir: str, commit: str) -> list[str]:
    return _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines()


def _listed(kind: str, git_dir: str, commit: str, path: str, folders: Iterable[str]) -> list[str]:
    """The commands a source lists: a package XML's files in ``folders`` (its blocks read from
    ``scripts/package/module/ascend/`` at the same commit), or a check_tools.conf's tools."""
    text = _git_show(git_dir, commit, path)
    if kind == "os":
        return check_tools(text)
    folder = path.rsplit("/", 2)[0] + "/module/ascend/"
    blocks = {
        p.rsplit("/", 1)[-1][: -len(".xml")]: _git_show(git_dir, commit, p)
        for p in _git_ls(git_dir, commit)
        if p.startswith(folder) and p.endswith(".xml")
    }
    return package_binaries(text, blocks, folders)


def diff(table: Commands, source: str, listed: Iterable[str]) -> tuple[list[str], list[str]]:
    """What the table lacks of a source's list, and its rows of that source the list no longer has."""
    names_listed = list(listed)
    lacks = [n for n in names_listed if n not in table.rows]
    gone = [r.name for r in table.rows.values() if r.source == source and r.name not in names_listed]
    return lacks, gone


def main(argv: list[str] | None = None) -> int:
    """``--schema``; ``--save-xml KIND GIT_DIR COMMIT XML [FOLDER …]`` (the folders: the table's
    ``path`` for ``cann``, :data:`DRIVER_FOLDERS` for ``driver``) and ``--save-tools GIT_DIR COMMIT
    CONF`` print rows for a person to file with their package and source; ``--diff SOURCE GIT_DIR
    COMMIT PATH``: what the table lacks of that source's list and what it lists no more (exit 1)."""
    import json
    import sys

    import yaml

    from cannenv.explain.models import read_yaml

    args = sys.argv[1:] if argv is None else argv
    if args == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
        return 0
    if len(args) >= 5 and args[0] == "--save-xml" and args[1] in ("cann", "driver"):
        kind, git_dir, commit, xml_path = args[1:5]
        folders: tuple[str, ...] = tuple(args[5:]) or DRIVER_FOLDERS
        if kind == "cann" and not args[5:]:
            _, raw = read_yaml(shipped_path(), what="command table", max_bytes=MAX_TABLE_BYTES)
            folders = parse(raw, source=str(shipped_path())).path
        rows = [{"name": n, "kind": kind} for n in _listed(kind, git_dir, commit, xml_path, folders)]
        print(yaml.safe_dump(rows, sort_keys=False, width=200), end="")
        return 0
    if len(args) == 4 and args[0] == "--save-path":
        on_path = path_folders(_git_show(args[1], args[2], args[3]))
        print(yaml.safe_dump({"path": on_path}, sort_keys=False, width=200), end="")
        return 0
    if len(args) == 4 and args[0] == "--save-tools":
        rows = [{"name": n, "kind": "os"} for n in _listed("os", args[1], args[2], args[3], ())]
        print(yaml.safe_dump(rows, sort_keys=False, width=200), end="")
        return 0
    if len(args) == 5 and args[0] == "--diff":
        source, git_dir, commit, path = args[1:]
        _, raw = read_yaml(shipped_path(), what="command table", max_bytes=MAX_TABLE_BYTES)
        model = parse(raw, source=str(shipped_path()))
        table, _ = build(model)
        kinds = {r.kind for r in table.rows.values() if r.source == source}
        kind = next(iter(kinds), "os" if path.endswith(".conf") else "cann")
        folders = model.path if kind == "cann" else DRIVER_FOLDERS
        lacks, gone = diff(table, source, _listed(kind, git_dir, commit, path, folders))
        for n in lacks:
            print(f"- {{name: {n}, kind: {kind}, source: {source}}}  # lacks")
        for n in gone:
            print(f"# gone: {n}: {source} no longer lists it")
        return 1 if lacks or gone else 0
    print(
        "usage: python -m cannenv.explain.commands --schema > matrices/explain/commands.schema.json\n"
        "       python -m cannenv.explain.commands --save-xml cann|driver GIT_DIR COMMIT XML [FOLDER ...]\n"
        "       python -m cannenv.explain.commands --save-path GIT_DIR COMMIT .../runtime/set_env.sh\n"
        "       python -m cannenv.explain.commands --save-tools GIT_DIR COMMIT CHECK_TOOLS_CONF\n"
        "       python -m cannenv.explain.commands --diff SOURCE_ID GIT_DIR COMMIT PATH",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
