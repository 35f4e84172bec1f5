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

from cannenv.errors import ExitCode
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


def report_json_schema() -> dict[str, Any]:
    return json_schema(Report)


# ---------------------------------------------------------------- renderers

_STYLE = {"pass": "green", "warn": "yellow", "fail": "bold red", "skip": "dim", "error": "magenta"}
_ORDER = {"fail": 0, "error": 1, "warn": 2, "skip": 3, "pass": 4}


def render_table(report: Report, *, color: bool = False, width: int = 120, verbose: bool = False) -> str:
    """Human table. ``color`` is decided by the caller (TTY and NO_COLOR); passes hidden unless verbose."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        soft_wrap=False,
    )
    h = report.host
    console.print(Text(_host_line(h)))
    st = report.stack
    console.print(Text(f"target stack: {st.id or '(none)'} — {st.reason}"))
    table = Table(show_header=True, header_style="bold", expand=False, show_lines=False)
    table.add_column("status", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("finding")
    table.add_column("remedy")
    shown = [f for f in report.findings if verbose or f.status != "pass"]
    for f in sorted(shown, key=lambda x: _ORDER[x.status]):
        finding = f.title if not f.detail else f"{f.title}: {f.detail}"
        table.add_row(Text(f.status.upper(), style=_STYLE[f.status]), f.id, finding, f.remedy or "")
    if shown:
        console.print(table)
    s = report.summary
    line = ", ".join(f"{s.get(k, 0)} {k}" for k in STATUSES)
    hidden = "" if verbose else " (passes hidden; --verbose shows them)"
    console.print(Text(f"{line}{hidden}"))
    return buf.getvalue()


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
    return " · ".join(parts)


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
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
