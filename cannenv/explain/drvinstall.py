"""The NPU driver installer's own error messages: ``matrices/explain/drv_install.yaml``.

The driver's ``.run`` package installs, upgrades and uninstalls itself with the shell scripts of the
vendor's open driver (github.com/hicann/driver, ``scripts/package/``), and those scripts print their
own errors: ``drvEcho "[ERROR]ERR_NO:0x0091;ERR_DES:${username} not exists! Please add ${username}"``
on the terminal as ``[Driver] [2025-01-01 10:00:00] [ERROR]ERR_NO:0x0091;ERR_DES:HwHiAiUser not
exists! Please add HwHiAiUser``, ``log "[ERROR]…"`` in ``ascend_install.log`` with the user's id
after the date. :func:`import_files` reads the scripts and keeps every double-quoted string printed
at the error level (it holds ``[ERROR]``, or it is the installer's numbered ``ERR_NO:0x…;ERR_DES:``
message) with each file and line that prints it, its form as the script writes it (``text``) and as
a linear pattern: the literal ``pieces`` between its variable parts (``${var}``, ``$var``, ``$(…)``,
a backquoted command: wildcards), matched as a glob (one left-to-right pass of ``str.find``, linear
in the line). Colour escapes (``\\033[31m``) are not part of the form.

The cause a message points to comes only from the table's reviewed ``rules`` (words of the form, the
first rule that fits decides; a rule may name no cause: a failure inside the installer says nothing
of the host by itself). A message no rule covers is kept and read as nothing.

    python -m cannenv.explain.drvinstall --schema > matrices/explain/drv_install.schema.json
    python -m cannenv.explain.drvinstall --diff GIT_DIR_OR_TREE [DRV_INSTALL_YAML]   # exit 1: review
    python -m cannenv.explain.drvinstall --write GIT_DIR_OR_TREE [DRV_INSTALL_YAML]  # after review
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv import linre

if TYPE_CHECKING:
    from cannenv.explain.models import DrvInstallFile

MAX_TABLE_BYTES = 2 << 20
SCRIPTS = "scripts/package/"
"""Where the installer's scripts live in the driver's repository."""
SUFFIXES = (".sh", ".inc")
LEVEL = "[ERROR]"
ERRNO = "ERR_NO:"
MIN_LITERAL = 12
"""The fewest literal characters (outside the wildcards) a readable message holds: ``${msg}`` or
``$1 failed`` says nothing that could tell it from another program's line."""

# through RE2 (linre): a script line is data, and ``${…`` repeated without its brace would make a
# backtracking engine quadratic
_VARIABLE = linre.compile(
    r"\\?(?:\$\{[^}\n]*\}|\$\([^)\n]*\)|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9@#?*!$])|`[^`\n]*`",
    what="shell variable",
)
_COLOUR = re.compile(r"\\(?:033|e|x1[bB])\[[0-9;]*m")
_UNESCAPE = re.compile(r"\\([\"\\$`])")


@dataclass(frozen=True)
class Found:
    """A message a script prints at the error level: its form and where it is printed."""

    text: str
    pieces: tuple[str, ...]
    at: tuple[str, ...]


def _form(string: str) -> str | None:
    """The message a double-quoted shell string prints at the error level, as the script writes it
    (variables kept, colours dropped, whitespace folded), or None."""
    if LEVEL in string:
        text = string.split(LEVEL, 1)[1]
    elif string.lstrip().startswith(ERRNO):
        text = string
    else:
        return None
    text = " ".join(_COLOUR.sub("", text).split()).lstrip(": ")
    return text or None


def pieces(text: str) -> tuple[str, ...]:
    """The literal parts of a form between its variable parts (n variables: n + 1 pieces, the first
    its prefix and the last its suffix, either may be empty)."""
    parts, pos = [], 0
    for m in _VARIABLE.finditer(text):
        parts.append(text[pos : m.start()])
        pos = m.end()
    parts.append(text[pos:])
    return tuple(_UNESCAPE.sub(r"\1", p) for p in parts)


def literal(parts: Sequence[str]) -> int:
    return sum(len(p) for p in parts)


def fits(parts: Sequence[str], text: str) -> bool:
    """Whether ``text`` (whitespace folded) is the form: its pieces in order, the first at its
    start, the last at its end, any text (or none) in between. Linear: one ``find`` per piece."""
    if len(parts) == 1:
        return text == parts[0]
    first, last = parts[0], parts[-1]
    if len(first) + len(last) > len(text) or not text.startswith(first) or not text.endswith(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for p in parts[1:-1]:
        i = text.find(p, pos, end)
        if i < 0:
            return False
        pos = i + len(p)
    return True


def _strings(line: str) -> list[str]:
    """The double-quoted strings of a shell line, their escapes kept (one pass, no regex: a
    backtracking pattern for quoted text with escapes cannot be made unambiguous)."""
    out: list[str] = []
    start = -1
    i = 0
    while i < len(line):
        c = line[i]
        if start < 0:
            if c == '"':
                start = i + 1
        elif c == "\\":
            i += 1  # the escaped character is part of the string
        elif c == '"':
            out.append(line[start:i])
            start = -1
        i += 1
    return out


def messages(path: str, text: str) -> list[tuple[int, str]]:
    """(line, form) of every error-level message one script prints (comments skipped)."""
    out: list[tuple[int, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        for quoted in _strings(line):
            form = _form(quoted)
            if form is not None:
                out.append((n, form))
    return out


def import_files(files: Mapping[str, str]) -> list[Found]:
    """The installer's error messages of the scripts (path → text), one per form with every file
    and line that prints it, in the order of the paths and lines; forms with fewer than
    :data:`MIN_LITERAL` literal characters are not kept."""
    at: dict[str, list[str]] = {}
    for path in sorted(files):
        if not path.startswith(SCRIPTS) or not path.endswith(SUFFIXES):
            continue
        for n, form in messages(path, files[path]):
            if literal(pieces(form)) >= MIN_LITERAL:
                at.setdefault(form, []).append(f"{path}:{n}")
    return [Found(t, pieces(t), tuple(a)) for t, a in at.items()]


# ------------------------------------------------------------------------------ the engine's table
@dataclass(frozen=True)
class Message:
    """A row of the table with the reviewed rule that covers it (none: ``rule`` is None)."""

    text: str
    pieces: tuple[str, ...]
    at: tuple[str, ...]
    rule: str | None
    causes: tuple[str, ...]
    reason: str

    @property
    def literal(self) -> int:
        return literal(self.pieces)


@dataclass(frozen=True)
class DrvInstall:
    """The installer's messages (:func:`build`), with the repository and commit they were read at."""

    repo: str
    commit: str
    title: str
    messages: tuple[Message, ...]

    def url(self, at: str) -> str:
        path, _, line = at.rpartition(":")
        return f"https://github.com/{self.repo}/blob/{self.commit}/{path}#L{line}"

    def match(self, text: str) -> Message | None:
        """The row whose form the printed message is (whitespace folded); of several, the one with
        the most literal text (``${g} group not exists! …`` before ``${u} not exists! …``)."""
        said = " ".join(text.split()).lstrip(": ")
        best: Message | None = None
        for m in self.messages:
            if fits(m.pieces, said) and (best is None or m.literal > best.literal):
                best = m
        return best


SOURCE_PREFIX = "drv-install:"


def source_id(at: str) -> str:
    """The source id of a file and line that prints a message (``drv-install:PATH#LLINE``: the
    file's source, :func:`sources`, at that line)."""
    path, _, line = at.rpartition(":")
    return f"{SOURCE_PREFIX}{path}#L{line}"


def sources(table: DrvInstall) -> dict[str, tuple[str, str]]:
    """A source per script that prints a message of the table: id -> (title, url at the commit)."""
    out: dict[str, tuple[str, str]] = {}
    for m in table.messages:
        for at in m.at:
            path = at.rpartition(":")[0]
            url = f"https://github.com/{table.repo}/blob/{table.commit}/{path}"
            out[SOURCE_PREFIX + path] = (f"{table.repo}: the driver installer's script {path}", url)
    return out


def rule_of(model: DrvInstallFile, text: str) -> Any:
    """The first reviewed rule any of whose words the form holds (any case), or None."""
    low = text.lower()
    for r in model.rules:
        if any(w in low for w in r.words):
            return r
    return None


def build(model: DrvInstallFile) -> DrvInstall:
    rows = []
    for m in model.messages:
        r = rule_of(model, m.text)
        rows.append(
            Message(
                m.text,
                m.pieces,
                m.at,
                None if r is None else r.id,
                () if r is None else r.causes,
                "" if r is None else r.reason,
            )
        )
    s = model.source
    return DrvInstall(s.repo, s.commit, s.title, tuple(rows))


def parse(raw: Any, *, source: str) -> DrvInstallFile:
    from cannenv.errors import InputError
    from cannenv.explain.models import DrvInstallFile, validate

    hint = "see docs/explain.md (The driver installer's own messages)"
    model = validate(DrvInstallFile, raw, source=source, what="driver installer messages", hint=hint)
    problems = [
        f"{source}: message {m.text!r}: "
        + (
            "pieces are not its literal parts"
            if pieces(m.text) != m.pieces
            else f"under {MIN_LITERAL} literal characters"
        )
        for m in model.messages
        if pieces(m.text) != m.pieces or literal(m.pieces) < MIN_LITERAL
    ]
    if problems:
        raise InputError("invalid driver installer messages:\n" + "\n".join(problems), hint=hint)
    return model


def read(path: str | Path) -> DrvInstallFile:
    from cannenv.explain.models import read_yaml

    p, raw = read_yaml(path, what="driver installer messages", max_bytes=MAX_TABLE_BYTES)
    return parse(raw, source=str(p))


def load(path: str | Path) -> DrvInstall:
    return build(read(path))


def shipped_path() -> Path:
    from cannenv.resources import matrices_dir

    return matrices_dir() / "explain" / "drv_install.yaml"


@cache
def shipped() -> DrvInstall:
    return load(shipped_path())


# ------------------------------------------------------------------------------ refresh
@dataclass(frozen=True)
class Change:
    """A difference between the shipped table and the scripts: ``added`` (a form the table lacks),
    ``removed`` (a form the scripts no longer print), ``moved`` (printed at other lines)."""

    kind: str
    text: str
    at: tuple[str, ...]
    rule: str | None


def diff(model: DrvInstallFile, found: Iterable[Found]) -> list[Change]:
    old = {m.text: m for m in model.messages}
    new = {f.text: f for f in found}
    out: list[Change] = []
    for text, f in new.items():
        r = rule_of(model, text)
        rid = None if r is None else r.id
        if text not in old:
            out.append(Change("added", text, f.at, rid))
        elif old[text].at != f.at:
            out.append(Change("moved", text, f.at, rid))
    for text, m in old.items():
        if text not in new:
            r = rule_of(model, text)
            out.append(Change("removed", text, m.at, None if r is None else r.id))
    return out


def read_source(source: str | Path) -> tuple[dict[str, str], str | None]:
    """The scripts of a checkout (a folder holding ``scripts/package/``) or of a git directory's
    HEAD (a bare mirror), with the commit (None for a plain folder)."""
    import subprocess

    root = Path(source)
    if (root / SCRIPTS).is_dir():
        files = {
            p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted((root / SCRIPTS).rglob("*"))
            if p.is_file() and p.name.endswith(SUFFIXES)
        }
        return files, None

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(root), *args], capture_output=True, text=True, check=True, timeout=120
        ).stdout

    commit = git("rev-parse", "HEAD").strip()
    names = [n for n in git("ls-tree", "-r", "--name-only", commit, "--", SCRIPTS).split("\n") if n]
    files = {n: git("show", f"{commit}:{n}") for n in names if n.endswith(SUFFIXES)}
    return files, commit


HEADER = """\
# The NPU driver installer's own error messages (cannenv/explain/drvinstall.py; docs/explain.md, "The
# driver installer's own messages"): every string the driver .run package's scripts (hicann/driver,
# scripts/package/) print at the error level ([ERROR] …, ERR_NO:0x…;ERR_DES: …), each form once with
# every file:line that prints it.
# messages: imported, never edited by hand (python -m cannenv.explain.drvinstall --write GIT_DIR); text:
#   the form as the script writes it (${var}, $var, $(cmd): wildcards; colour escapes dropped); pieces:
#   its literal parts between the wildcards (the linear pattern: matched as a glob).
# rules: reviewed by hand: words of a form (lower case; the first rule any of whose words the form holds
#   decides) and the causes the message points to (none: it names no cause by itself).
# Schema: drv_install.schema.json (python -m cannenv.explain.drvinstall --schema).
"""


def dump(model: DrvInstallFile, found: Sequence[Found], commit: str | None) -> str:
    """The file, refreshed: the reviewed rules kept, the messages the scripts print now."""
    import json

    def q(s: str) -> str:
        return json.dumps(s, ensure_ascii=False)

    src = model.source
    lines = [HEADER.rstrip("\n"), "schema_version: 1", "source:"]
    lines += [
        f"  repo: {src.repo}",
        f"  commit: {commit or src.commit}",
        f"  title: {q(src.title)}",
        "rules:",
    ]
    for r in model.rules:
        lines.append(f"  - id: {r.id}")
        lines.append(f"    words: [{', '.join(q(w) for w in r.words)}]")
        lines.append(f"    causes: [{', '.join(r.causes)}]")
        lines.append(f"    reason: {q(r.reason)}")
    lines.append("messages:")
    for f in found:
        lines.append(f"  - text: {q(f.text)}")
        lines.append(f"    pieces: [{', '.join(q(p) for p in f.pieces)}]")
        lines.append(f"    at: [{', '.join(f.at)}]")
    return "\n".join(lines) + "\n"


def json_schema() -> dict[str, Any]:
    from cannenv.explain.models import DrvInstallFile
    from cannenv.explain.rowtable import schema_of

    return schema_of(DrvInstallFile, "cannenv explain: the NPU driver installer's own error messages")


def main(argv: list[str] | None = None) -> int:
    """``--schema``; ``--diff SOURCE [YAML]``: what the scripts print now that the table does not
    hold (exit 1: something to review); ``--write SOURCE [YAML]``: the refreshed file on stdout."""
    import json
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args == ["--schema"]:
        print(json.dumps(json_schema(), indent=2, sort_keys=True))
        return 0
    if args[:1] in (["--diff"], ["--write"]) and 2 <= len(args) <= 3:
        model = read(args[2] if len(args) == 3 else shipped_path())
        files, commit = read_source(args[1])
        found = import_files(files)
        if args[0] == "--write":
            print(dump(model, found, commit), end="")
            return 0
        changes = diff(model, found)
        for c in changes:
            sign = {"added": "+", "removed": "-", "moved": "~"}[c.kind]
            print(f"{sign} {c.text}  [rule: {c.rule or 'none'}]  {', '.join(c.at[:3])}")
        print(
            f"{len(found)} forms in the scripts, {len(model.messages)} in the table: "
            + ", ".join(f"{sum(c.kind == k for c in changes)} {k}" for k in ("added", "removed", "moved")),
            file=sys.stderr,
        )
        return 1 if changes else 0
    print(
        "usage: python -m cannenv.explain.drvinstall --schema > matrices/explain/drv_install.schema.json\n"
        "       python -m cannenv.explain.drvinstall --diff GIT_DIR_OR_TREE [DRV_INSTALL_YAML]\n"
        "       python -m cannenv.explain.drvinstall --write GIT_DIR_OR_TREE [DRV_INSTALL_YAML]",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
