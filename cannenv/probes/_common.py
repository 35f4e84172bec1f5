"""Shared pieces of the probes: the context, safe file reading and vendor file parsers.

Every file read goes through :func:`read_text`, which turns each way a file can be broken (empty,
binary, oversized, permission denied, dangling symlink, symlink loop, directory instead of file)
into a :class:`~cannenv.facts.ProbeIssue` naming the path, so one bad file never stops the doctor.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.facts import IssueKind, ProbeIssue
from cannenv.host import FileTooLargeError, Host, NotRegularFileError

MAX_TEXT_BYTES = 1 << 20
"""Version and info files are a few hundred bytes; anything over 1 MiB is not one of them."""


@dataclass(frozen=True)
class NpuSmiCapture:
    """Saved ``npu-smi`` output: device facts for a tree (or a host) without running anything."""

    info: str
    board: str | None = None
    source: str = "a captured npu-smi output"


@dataclass(frozen=True)
class HccnCapture:
    """Saved ``hccn_tool`` / ``spod-info`` outputs, one text per physical device id (docs/multinode.md)."""

    outputs: dict[int, str]
    source: str = "captured hccn_tool outputs"


@dataclass
class ProbeContext:
    """What a probe gets: the host, the options, issues collected so far, earlier probes' results."""

    host: Host
    python: str | None = None
    site_packages: tuple[str, ...] = ()
    npu_smi_timeout: float = 10.0
    npu_smi_capture: NpuSmiCapture | None = None
    hccn_capture: HccnCapture | None = None
    multinode: bool = False
    """Run ``hccn_tool`` and ``spod-info`` per device on the live host (``--multinode``)."""
    issues: list[ProbeIssue] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)

    def issue(self, probe: str, kind: IssueKind, path: str | None, message: str) -> None:
        self.issues.append(ProbeIssue(probe=probe, kind=kind, path=path, message=message))


def read_bytes(
    ctx: ProbeContext,
    probe: str,
    host_path: str,
    *,
    max_bytes: int = MAX_TEXT_BYTES,
    what: str = "a version file",
) -> bytes | None:
    """Bytes of a regular host file, or None. Absent files are silently None; broken ones add an
    issue. The path is resolved inside the root (:meth:`cannenv.host.Host.resolve`)."""
    host = ctx.host
    try:
        data = host.read_bytes(host_path, max_bytes)
    except FileNotFoundError:
        if host.is_symlink(host_path):
            target = _readlink(host, host_path)
            ctx.issue(
                probe,
                "dangling-symlink",
                host_path,
                f"{host_path} is a symlink to {target}, which does not exist",
            )
        return None
    except FileTooLargeError as exc:
        ctx.issue(
            probe, "oversized", host_path, f"{host_path} is {exc.size} bytes; {what} is under {max_bytes}"
        )
        return None
    except NotRegularFileError as exc:
        if exc.strerror == "a directory":
            ctx.issue(probe, "not-a-file", host_path, f"{host_path} is a directory, expected a file")
        else:
            ctx.issue(probe, "not-a-file", host_path, f"{host_path} is not a regular file")
        return None
    except PermissionError:
        ctx.issue(
            probe,
            "permission-denied",
            host_path,
            f"{host_path}: permission denied (run as its owner or root)",
        )
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            ctx.issue(probe, "symlink-loop", host_path, f"{host_path} is a symlink loop")
        elif exc.errno == errno.ENOTDIR:
            return None
        else:
            ctx.issue(probe, "unreadable", host_path, f"{host_path}: {exc.strerror or exc}")
        return None
    return data


def read_text(
    ctx: ProbeContext, probe: str, host_path: str, *, max_bytes: int = MAX_TEXT_BYTES
) -> str | None:
    """Text of a host file, or None. Absent files are silently None; broken ones add an issue."""
    data = read_bytes(ctx, probe, host_path, max_bytes=max_bytes)
    if data is None:
        return None
    if not data.strip():
        ctx.issue(probe, "empty", host_path, f"{host_path} is empty")
        return None
    if b"\x00" in data:
        ctx.issue(probe, "binary", host_path, f"{host_path} holds binary data, expected text")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        ctx.issue(probe, "binary", host_path, f"{host_path} is not UTF-8 text")
        return None


def _readlink(host: Host, host_path: str) -> str:
    try:
        return host.readlink(host_path)
    except (OSError, ValueError):
        return "?"


def exists(ctx: ProbeContext, host_path: str) -> bool:
    """True when the host path exists (following links inside the root); never raises."""
    return ctx.host.exists(host_path)


def is_dir(ctx: ProbeContext, host_path: str) -> bool:
    return ctx.host.is_dir(host_path)


def list_dir(ctx: ProbeContext, host_path: str) -> list[str]:
    """Sorted entry names of a host directory, [] when absent or unreadable."""
    try:
        return ctx.host.listdir(host_path)
    except (OSError, ValueError):
        return []


def realpath(ctx: ProbeContext, host_path: str) -> str | None:
    """Host spelling of the resolved path (links inside a tree resolve inside the tree), or None."""
    return ctx.host.realpath(host_path)


def parse_kv(text: str, *, seps: str = "=") -> dict[str, str]:
    """Parse ``key=value`` lines (vendor info files). Quotes around values are removed.

    Keys keep their case; the first occurrence of a key wins. Lines without a separator, comments
    and blank lines are skipped.
    """
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        idx = -1
        for sep in seps:
            i = line.find(sep)
            if i > 0 and (idx < 0 or i < idx):
                idx = i
        if idx <= 0:
            continue
        key = line[:idx].strip()
        value = line[idx + 1 :].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key and key not in out:
            out[key] = value
    return out


def get_ci(values: dict[str, str], *names: str) -> str | None:
    """First non-empty value among ``names``, matching keys case-insensitively."""
    lower = {k.lower(): v for k, v in values.items()}
    for name in names:
        v = lower.get(name.lower())
        if v:
            return v
    return None


_BRACKET_RE = re.compile(r"\[([^\[\]]*)\]")


def bracket_list(value: str | None) -> tuple[str, ...]:
    """``[V100R001C13],[V100R001C15]`` -> ``("V100R001C13", "V100R001C15")``."""
    if not value:
        return ()
    return tuple(m.group(1).strip() for m in _BRACKET_RE.finditer(value) if m.group(1).strip())


def host_join(*parts: str) -> str:
    return str(Path(parts[0]).joinpath(*parts[1:]))


def first_existing(ctx: ProbeContext, candidates: Sequence[str]) -> str | None:
    for c in candidates:
        if exists(ctx, c):
            return c
    return None


def with_home(ctx: ProbeContext, system_paths: Sequence[str], under_home: str) -> list[str]:
    """``system_paths``, then ``$HOME/<under_home>`` when the host has a HOME (a non-root install)."""
    paths = list(system_paths)
    home = ctx.host.getenv("HOME")
    if home:
        paths.append(f"{home.rstrip('/')}/{under_home}")
    return paths
