"""Findings, the doctor's report, and its renderers (rich table, JSON, JUnit XML).

Renderers return strings; only the CLI prints them. The JSON form is the :class:`Report` value
itself (``report_json_schema()`` is its documented schema, see docs/doctor.md) and carries
``schema_version``; consumers should refuse a higher major version than they know.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Annotated, Any, Literal, get_args

from cannenv import sanitize
from cannenv.errors import ExitCode
from cannenv.sanitize import line as _safe
from cannenv.values import Check, check_pattern, json_schema, to_json, value

REPORT_SCHEMA_VERSION = 1
CHECK_ID = r"^[a-z0-9]+(-[a-z0-9]+)*$"
"""Check ids are stable kebab-case."""

Status = Literal["pass", "warn", "fail", "skip", "error"]
Scope = Literal["software", "device"]
"""pass: fine · warn: works but risky · fail: broken · skip: could not apply (says why) ·
error: the input needed to judge is itself broken (unreadable file, failing tool)."""
STATUSES: tuple[str, ...] = get_args(Status)

Severity = Literal["critical", "high", "medium", "low", "info"]
SEVERITIES: tuple[str, ...] = get_args(Severity)


@value
class Finding:
    """One judgement. ``id`` is the stable kebab-case id of the check that made it."""

    id: Annotated[str, Check(pattern=CHECK_ID)]
    status: Status
    severity: Severity
    title: str
    detail: str = ""
    remedy: str | None = None
    """An exact action (a command to run, a package and version to install), or None."""
    subject: str | None = None
    """What the finding is about when a check makes several (a path, a library, a variable)."""
    scope: Scope = "software"
    """``device`` for what needs the NPU, its driver or their container mounts; ``software`` else."""
    caused_by: str | None = None
    """The id of the check whose finding is the root cause of this one (``cann-installs`` for a
    library that only CANN provides, on a host without CANN). The table lists such consequences
    under their cause; JSON keeps every finding."""

    def __post_init__(self) -> None:
        check_pattern(CHECK_ID, self.id, "finding id")


@value
class StackChoice:
    """The target stack the host was judged against, and why that one."""

    id: str | None = None
    how: Literal["option", "lock", "best-match", "nearest", "none"] = "none"
    reason: str = ""
    candidates: tuple[str, ...] = ()


@value
class Report:
    """What ``cannenv doctor --json`` prints. Documented in docs/doctor.md."""

    schema_version: int = REPORT_SCHEMA_VERSION
    cannenv_version: str = ""
    host: dict[str, Any] = field(default_factory=dict)
    stack: StackChoice = StackChoice()
    findings: tuple[Finding, ...] = ()
    summary: dict[str, int] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        findings: Iterable[Finding],
        *,
        host: Mapping[str, Any] | None = None,
        stack: StackChoice | None = None,
        cannenv_version: str = "",
    ) -> Report:
        items = tuple(findings)
        return cls(
            cannenv_version=cannenv_version,
            host=dict(host or {}),
            stack=stack or StackChoice(),
            findings=items,
            summary=summarize(items),
        )

    def exit_code(self, *, strict: bool = False) -> int:
        """0 when nothing failed; 1 when a finding is ``fail`` or ``error`` (or ``warn`` with strict)."""
        bad = {"fail", "error"} | ({"warn"} if strict else set())
        return (
            int(ExitCode.CHECKS_FAILED) if any(f.status in bad for f in self.findings) else int(ExitCode.OK)
        )

    def to_json(self, *, indent: int | None = 2) -> str:
        return to_json(self, indent=indent)


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    counts = dict.fromkeys(STATUSES, 0)
    total = 0
    for f in findings:
        counts[f.status] += 1
        total += 1
    counts["total"] = total
    return counts


REBOOT_CHECK = "driver-loaded"
"""The doctor's check that fails with "reboot pending" (:func:`cannenv.checks.policy.reboot_pending`)."""

RebootPending = Literal["true", "false", "unknown"]
"""Whether a node needs a restart for its installed driver to run: the value of the label
``cannenv.io/reboot-pending`` and of ``fleet report``'s ``reboot_pending`` (docs/fleet.md)."""


def reboot_pending(findings: Iterable[Finding]) -> RebootPending:
    """The findings' word on a pending reboot: ``true`` when ``driver-loaded`` fails, ``false`` only
    when it passes (the loaded driver was compared with the installed one and is it), ``unknown``
    otherwise — a skip (nothing tells the loaded driver), an error, or the check not run. Never
    ``false`` for what was not compared: that would be a false pass."""
    statuses = {f.status for f in findings if f.id == REBOOT_CHECK}
    if "fail" in statuses:
        return "true"
    if statuses == {"pass"}:
        return "false"
    return "unknown"


def report_json_schema() -> dict[str, Any]:
    return json_schema(Report)


# ---------------------------------------------------------------- renderers

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skip": "dim", "error": "magenta"}
_ORDER = {"fail": 0, "error": 1, "warn": 2, "skip": 3, "pass": 4}


def group_consequences(findings: Iterable[Finding]) -> tuple[list[Finding], dict[str, list[Finding]]]:
    """(findings to show as rows, {cause id: its consequences}). A finding whose ``caused_by``
    names a shown non-pass finding is listed under it instead of on its own row."""
    items = list(findings)
    parent = {f.id: f.caused_by for f in items if f.status in ("fail", "warn", "error")}

    def root(cid: str) -> str | None:
        seen = set()
        while cid in parent and parent[cid] is not None and cid not in seen:
            seen.add(cid)
            cid = parent[cid]  # type: ignore[assignment]
        return cid if cid in parent and parent[cid] is None else None

    rows: list[Finding] = []
    children: dict[str, list[Finding]] = {}
    for f in items:
        top = root(f.caused_by) if f.caused_by is not None else None
        if top is not None and top != f.id:
            children.setdefault(top, []).append(f)
        else:
            rows.append(f)
    return rows, children


def _consequence_line(kids: list[Finding]) -> str:
    """``abi-preflight ×6 (libhccl.so, libascendcl.so, …), torch-npu-cann``: compact, nothing cut off."""
    by_id: dict[str, list[Finding]] = {}
    for k in kids:
        by_id.setdefault(k.id, []).append(k)
    parts = []
    for cid, fs in by_id.items():
        subjects = [f.subject for f in fs if f.subject]
        label = cid if len(fs) == 1 else f"{cid} ×{len(fs)}"
        parts.append(f"{label} ({', '.join(_safe(x) for x in subjects)})" if subjects else label)
    statuses = sorted({k.status for k in kids}, key=lambda st: _ORDER[st])
    return f"because of this ({'/'.join(statuses)}): " + ", ".join(parts)


def render_table(
    report: Report,
    *,
    color: bool = False,
    width: int | None = None,
    verbose: bool = False,
    plain: bool = False,
) -> str:
    """Human report. ``color`` and ``plain`` are decided by the caller (TTY, NO_COLOR): a terminal
    gets a table as wide as ``width`` (cells wrap, nothing is cut off); ``plain`` (stdout is not a
    terminal) gets one block per finding, unwrapped. Passes are hidden unless ``verbose``;
    consequences are listed under their cause unless ``verbose``."""
    shown = [f for f in report.findings if verbose or f.status != "pass"]
    children: dict[str, list[Finding]] = {}
    if verbose:
        rows = shown
    else:
        rows, children = group_consequences(shown)
    rows = sorted(rows, key=lambda x: _ORDER[x.status])
    s = report.summary
    line = ", ".join(f"{s.get(k, 0)} {k}" for k in STATUSES)
    notes = []
    if not verbose:
        notes.append("passes hidden")
    grouped = sum(len(v) for v in children.values())
    if grouped:
        notes.append(f"{grouped} consequences listed under their cause")
    tail = f"{line} ({'; '.join(notes)}; --verbose shows every line)" if notes else line
    st = report.stack
    head = [_host_line(report.host), f"target stack: {_safe(st.id or '(none)')} — {_safe(st.reason)}"]
    listed: set[str] = set()  # consequences go under the first row of their cause
    if plain:
        out = [*head, ""]
        for f in rows:
            out.append(f"{f.status.upper():<5} {_safe(f.id)}: {_finding_text(f)}")
            if f.caused_by and verbose:
                out.append(f"      caused by: {_safe(f.caused_by)}")
            if f.remedy:
                out.append(f"      remedy: {_safe(f.remedy)}")
            if f.id in children and f.id not in listed:
                listed.add(f.id)
                out.append(f"      {_consequence_line(children[f.id])}")
        if rows:
            out.append("")
        out.append(tail)
        return "\n".join(out) + "\n"

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width or 120,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        soft_wrap=False,
    )
    for h in head:
        console.print(Text(h), overflow="fold")
    table = Table(show_header=True, header_style="bold", expand=False, show_lines=False)
    table.add_column("status", no_wrap=True)
    table.add_column("check", overflow="fold")
    table.add_column("finding", overflow="fold", ratio=3)
    table.add_column("remedy", overflow="fold", ratio=2)
    for f in rows:
        finding = _finding_text(f)
        if f.caused_by and verbose:
            finding += f" (caused by {_safe(f.caused_by)})"
        if f.id in children and f.id not in listed:
            listed.add(f.id)
            finding += "; " + _consequence_line(children[f.id])
        table.add_row(
            Text(f.status.upper(), style=_STYLE[f.status]), _safe(f.id), finding, _safe(f.remedy or "")
        )
    if rows:
        console.print(table)
    console.print(Text(tail), overflow="fold")
    return buf.getvalue()


def _finding_text(f: Finding) -> str:
    """Title and detail for a terminal: control characters from the data made visible."""
    return _safe(f.title if not f.detail else f"{f.title}: {f.detail}")


def _host_line(h: Mapping[str, Any]) -> str:
    parts = [
        f"host: {h.get('hostname') or h.get('root') or '?'}",
        f"os {h.get('os') or '?'}",
        f"driver {h.get('driver') or '-'}",
        f"CANN {h.get('cann') or '-'}",
        f"NPU {h.get('npu') or '-'}",
        f"python {h.get('python') or '-'}",
        f"torch {h.get('torch') or '-'}",
        f"torch_npu {h.get('torch_npu') or '-'}",
    ]
    if h.get("in_container"):
        parts.append("in a container")
    return _safe(" · ".join(parts))


def render_junit(report: Report, *, suite: str = "cannenv doctor", strict: bool = False) -> str:
    """JUnit XML: one testcase per finding; fail → <failure>, error → <error>, skip → <skipped>.

    ``warn`` is a passing testcase with the warning in ``system-out``, or a failure with ``strict``.
    """
    import xml.etree.ElementTree as ET  # only for --junit: keeps `doctor --json` imports small

    failures = sum(1 for f in report.findings if f.status == "fail" or (strict and f.status == "warn"))
    errors = sum(1 for f in report.findings if f.status == "error")
    skipped = sum(1 for f in report.findings if f.status == "skip")
    suite_el = ET.Element(
        "testsuite",
        name=suite,
        tests=str(len(report.findings)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
    )
    props = ET.SubElement(suite_el, "properties")
    ET.SubElement(props, "property", name="stack", value=report.stack.id or "")
    ET.SubElement(props, "property", name="schema_version", value=str(report.schema_version))
    for f in report.findings:
        name = f.title if f.subject is None else f"{f.title} [{f.subject}]"
        case = ET.SubElement(suite_el, "testcase", classname=f"cannenv.doctor.{f.id}", name=name)
        body = f.detail + (f"\nremedy: {f.remedy}" if f.remedy else "")
        if f.status == "fail" or (strict and f.status == "warn"):
            el = ET.SubElement(case, "failure", message=f.detail or f.title, type=f.status)
            el.text = body
        elif f.status == "error":
            el = ET.SubElement(case, "error", message=f.detail or f.title, type="error")
            el.text = body
        elif f.status == "skip":
            ET.SubElement(case, "skipped", message=f.detail or f.title)
        elif f.status == "warn":
            out = ET.SubElement(case, "system-out")
            out.text = f"warning: {body}"
    suites = ET.Element("testsuites")
    suites.append(suite_el)
    ET.indent(suites)
    doc = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    return sanitize.xml(doc)  # control characters from the data would make it not well-formed
