"""Renderers of an explanation: the human view, JSON (schema version 1, docs/explain.md), JUnit.

Every value printed comes from a hostile log or from facts: the terminal view passes each
through :mod:`cannenv.sanitize`, JUnit through ``sanitize.xml``; JSON carries the exact
(already redacted) text and lets the JSON encoder escape it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cannenv import sanitize
from cannenv.explain.judge import SCHEMA_VERSION, CauseVerdict, Explanation
from cannenv.explain.signatures import (
    FAILED_CHECK_PRIORITY,
    LIBRARY_TABLE_PRIORITY,
    PROGRAM_CODE_PRIORITY,
    SOURCE_PRIORITY,
)

_LABEL = {
    "confirmed": "confirmed",
    "consistent": "consistent",
    "undecided": "undecided",
    "ruled-out": "ruled out",
}
_HOST = {
    "live": "this machine's facts",
    "root": "the facts of the tree under --root",
    "facts": "the saved facts from --facts",
    "none": "no host facts (--no-host)",
}


def _cause_json(c: CauseVerdict) -> dict[str, Any]:
    return {
        "id": c.id,
        "title": c.title,
        "status": c.status,
        "signature": c.signature,
        "why": c.why,
        "basis": list(c.basis),
        "decide": list(c.decide),
        "remedy": c.remedy,
        "version_problem": c.version_problem,
        "tie": c.tie,
        "contradiction": c.contradiction,
        "sources": [{"title": s.title, "url": s.url} for s in c.sources],
    }


def to_dict(ex: Explanation) -> dict[str, Any]:
    scan = ex.scan
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": ex.verdict,
        "exit_code": ex.exit_code,
        "host": {"source": ex.host_source, **ex.host},
        "input": {
            "sources": list(scan.sources),
            "bytes_read": scan.bytes_read,
            "mode": scan.mode,
            "skipped": list(scan.skipped),
        },
        "matches": [
            {
                "signature": m.id,
                "title": m.title,
                "component": m.component,
                "evidence": [
                    {"pattern": e.pattern, "count": e.count, "lines": list(e.lines)} for e in m.evidence
                ],
                "causes": [c.id for c in m.causes],
            }
            for m in ex.matches
        ],
        "causes": [_cause_json(c) for c in ex.causes],
        "log_facts": dict(ex.log_facts or {}),
        "contradictions": list(ex.contradictions),
        "deaths": [
            {
                "signal": d.signal,
                "name": d.name,
                "action": d.action,
                "meaning": d.meaning,
                "said": d.said,
                "line": d.line,
                "count": d.count,
                "sources": [{"title": s.title, "url": s.url} for s in d.sources],
            }
            for d in ex.deaths
        ],
        "error_lines": list(scan.error_lines) if not ex.matches else [],
        "doctor": [
            {"id": f.id, "status": f.status, "detail": f.detail, "remedy": f.remedy, "caused_by": f.caused_by}
            for f in ex.doctor
        ],
    }


def to_json(ex: Explanation) -> str:
    return json.dumps(to_dict(ex), indent=2, ensure_ascii=False)


_VERSIONS = (
    ("driver", "driver"),
    ("cann", "CANN"),
    ("nnal", "NNAL"),
    ("npu", "NPU"),
    ("torch", "torch"),
    ("torch_npu", "torch_npu"),
)


def _host_versions(ex: Explanation) -> str:
    """``: driver … · CANN … · torch_npu …``: the versions the causes were decided on (empty when none)."""
    h = ex.host
    parts = [f"{label} {h[k]}" for k, label in _VERSIONS if h.get(k)]
    if h.get("in_container"):
        parts.append("in a container")
    return f": {' · '.join(parts)}" if parts else ""


SHOWN_SOURCES = 5
SHOWN_SKIPPED = 10


def _first(items: Sequence[str], limit: int | None) -> list[str]:
    """At most ``limit`` of ``items``, then one ``… and N more`` (a folder of 100,000 logs is one
    line, not 100,000: ``--verbose`` and ``--json`` have every one)."""
    if limit is None or len(items) <= limit:
        return list(items)
    return [*items[:limit], f"… and {len(items) - limit} more (--verbose or --json lists every one)"]


def render_text(ex: Explanation, *, verbose: bool = False) -> str:
    L = sanitize.line
    out: list[str] = [f"cannenv explain: {L(ex.verdict)}"]
    scan = ex.scan
    how = "every line" if scan.mode == "full" else "the lines around each error-looking line"
    sources = _first(scan.sources, None if verbose else SHOWN_SOURCES)
    out.append(f"input: {L(', '.join(sources) or '-')} ({scan.bytes_read} bytes; examined {how})")
    for s in _first(scan.skipped, None if verbose else SHOWN_SKIPPED):
        out.append(f"  not read: {L(s)}")
    out.append(f"host: {_HOST.get(ex.host_source, ex.host_source)}{L(_host_versions(ex))}")
    if ex.log_facts:
        shown = " · ".join(f"{k} {v}" for k, v in ex.log_facts.items())
        out.append(f"the log prints: {L(shown)} (facts of the environment that failed)")
    for note in ex.contradictions:
        out.append(f"contradiction: {L(note)}")
    for d in ex.deaths:
        how = f"{d.name} (signal {d.signal}, default action {d.action}: {d.meaning})" if d.name else d.meaning
        reads = "" if d.name == "SIGKILL" else "; a symptom: it names no cause, the other evidence decides"
        out.append(f"a process died: {L(how)}{reads}")
        out.append(f"  > {L(d.line)}")
        if verbose:
            for src in d.sources:
                out.append(f"    source: {L(src.title)} <{L(src.url)}>")
    if not ex.matches:
        out.append("")
        if scan.bytes_read == 0:
            out.append("The input holds no text (0 bytes read): give the log the error was written to")
            out.append("(stderr too: `2>&1`), or pipe it in with `--log -`.")
        else:
            out.append("No known signature matches this text, so cannenv names no cause: nothing in it says")
            out.append("which version, package or device is at fault, and none is blamed.")
        if scan.error_lines:
            out.append("Lines that look like errors:")
            out += [f"  > {L(x)}" for x in scan.error_lines]
        out += _doctor_all_the_same(ex)
        out.append(
            "If this error is common, a signature can be added: docs/explain.md (How to add a signature)."
        )
        return "\n".join(out) + "\n"
    for m in ex.matches:
        out.append("")
        out.append(f"signature {L(m.id)}: {L(m.title)} (raised by {L(m.component)})")
        if m.note and not m.causes:
            out.append(f"  note: {L(m.note)}")
        for e in m.evidence:
            out += [f"  > {L(x)}" for x in e.lines]
            if e.lines and e.count > len(e.lines):
                out.append(f"    (and {e.count - len(e.lines)} more lines like these)")
    if ex.no_ascend is not None and ex.no_ascend.remedy:
        out.append(f"remedy: {L(ex.no_ascend.remedy)}")
    out.append("")
    out.append("causes, most likely first:")
    for i, c in enumerate(ex.causes, 1):
        out.append(f"  {i}. [{_LABEL[c.status]}] {L(c.id)}: {L(c.title)}")
        out.append(f"       why: {L(c.why)}")
        if c.tie and verbose:
            out.append(f"       tied to this error by: {L(c.tie)}")
        for b in c.basis if (verbose or c.status != "ruled-out") else c.basis[:1]:
            out.append(f"       found: {L(b)}")
        if c.status in ("undecided", "consistent") and c.decide:
            out.append(f"       would decide: {L('; '.join(c.decide))}")
        if c.remedy:
            out.append(f"       fix: {L(c.remedy)}")
        if verbose or c.status != "ruled-out":
            for src in c.sources:
                out.append(f"       source: {L(src.title)} <{L(src.url)}>")
    if ex.residual_only:
        out.append("")
        out.append("No known signature matches this text: the reading above is an inference from what its")
        out.append(f"failure lines do not say, never a fact ({L(ex.matches[0].note)}).")
        out += _doctor_all_the_same(ex)
    return "\n".join(out) + "\n"


def _doctor_all_the_same(ex: Explanation) -> list[str]:
    """What the doctor finds on the host, beside an answer no known signature gave (sanitised)."""
    if ex.host_source == "none":
        return []
    if not ex.doctor:
        return ["The doctor finds nothing wrong on this host."]
    line = sanitize.line
    return ["What the doctor finds on this host all the same:"] + [
        f"  - {line(f.id)} [{f.status}] {line(f.detail)}" for f in ex.doctor
    ]


def render_junit(ex: Explanation) -> str:
    """One testcase per cause: confirmed → failure, ruled out → pass, undecided or consistent →
    skipped; no match → one skipped testcase saying so."""
    import xml.etree.ElementTree as ET

    cases = ex.causes
    suite = ET.Element(
        "testsuite",
        name="cannenv explain",
        tests=str(max(len(cases), 1)),
        failures=str(sum(1 for c in cases if c.status == "confirmed")),
        errors="0",
        skipped=str(sum(1 for c in cases if c.status in ("undecided", "consistent")) + (0 if cases else 1)),
    )
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="verdict", value=ex.verdict)
    ET.SubElement(props, "property", name="signatures", value=",".join(m.id for m in ex.matches))
    if not cases:
        case = ET.SubElement(suite, "testcase", classname="cannenv.explain", name="signature")
        ET.SubElement(case, "skipped", message="no known signature matched")
    for c in cases:
        case = ET.SubElement(suite, "testcase", classname=f"cannenv.explain.{c.signature}", name=c.id)
        body = "\n".join([c.why, *c.basis] + ([f"remedy: {c.remedy}"] if c.remedy else []))
        if c.status == "confirmed":
            el = ET.SubElement(case, "failure", message=c.title, type="confirmed")
            el.text = body
        elif c.status in ("undecided", "consistent"):
            ET.SubElement(case, "skipped", message=f"{c.status}: " + "; ".join(c.decide))
    suites = ET.Element("testsuites")
    suites.append(suite)
    ET.indent(suites)
    doc = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    return sanitize.xml(doc)


DOC_BEGIN = "<!-- signatures: generated by `python -m cannenv.explain.render`, kept in sync by a test -->"
DOC_END = "<!-- end of signatures -->"


def render_signature_doc(table: Any) -> str:
    """The signature list of docs/explain.md, from the data (a test keeps the page in sync)."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    def pattern(p: Any) -> str:
        kind, _, value = p.key.partition(":")
        return f"{kind} `{cell(value)}`"

    out = [
        DOC_BEGIN,
        "",
        "| signature | matches | causes (in order) and the sources that established them |",
        "|---|---|---|",
    ]
    for s in table.signatures:
        if s.derived:  # the knowledge tables: summarised below, not one row per vendor code
            continue
        pats = " or ".join(pattern(p) for p in s.any)
        if s.all:
            pats += " — with " + " and ".join(pattern(p) for p in s.all)
        causes = "<br>".join(
            f"`{c.id}`"
            + (f" (when {c.when.describe()})" if c.when else "")
            + ": "
            + ", ".join(
                f"[{cell(table.sources[x].title.split(' ')[0])}]({table.sources[x].url})" for x in c.sources
            )
            for c in s.causes
        )
        out.append(f"| `{s.id}` ({cell(s.component)}, priority {s.priority}) | {pats} | {causes} |")
    k = table.knowledge
    if k is not None:
        families: dict[str, int] = {}
        for code in k.codes:
            families[code.family] = families.get(code.family, 0) + 1
        out += [
            "",
            "From the knowledge tables (`matrices/explain/knowledge.yaml`, ranked below those above): "
            + ", ".join(f"{n} {fam} codes" for fam, n in families.items())
            + f", {len(k.hccl_stages)} HCCL stage keywords, {len(k.libraries)} shared objects mapped to their"
            f" packages, {len(k.symbols)} symbol namespaces, {len(k.extractors)} extractors, "
            f"{k.source_messages_read} messages read out of the vendors' sources "
            f"({sum(1 for m in k.source_messages if m.causes)} with causes, looked for).",
        ]
        if k.faq:
            pages = {r.page for r in k.faq}
            own = sum(1 for r in k.faq if r.signature is None)
            lowest = min(r.priority for r in k.faq)
            out += [
                "",
                f"From the vendors' FAQ pages (`matrices/explain/faq.yaml`): {len(k.faq)} entries of"
                f" {len(pages)} pages, {own} of them signatures of their own (priority {lowest}"
                f" or more; the others were made into the hand-written signatures above),"
                f" {sum(1 for r in k.faq if r.cause is None)} naming no cause.",
            ]
        if k.log_messages is not None:
            lm = k.log_messages
            mapped: dict[str, int] = {}
            for m in lm.messages:
                mapped[m.module] = mapped.get(m.module, 0) + 1
            out += [
                "",
                f"HCCL's own error-log messages (`matrices/explain/hccl_messages.yaml`, priority"
                f" {SOURCE_PRIORITY}): {lm.total} messages of "
                + ", ".join(sorted({f"{m.repo}@{m.commit[:12]}" for m in lm.messages}))
                + f"; {len(lm.messages)} point to a cause through the reviewed module mapping ("
                + ", ".join(f"{name} {n}" for name, n in sorted(mapped.items()))
                + f"), {lm.total - len(lm.messages)} name HCCL's file only.",
            ]
        pc = k.python_code
        if pc is not None:
            out += [
                "",
                f"Python exceptions raised in the program's own code (`python_code`, priority"
                f" {PROGRAM_CODE_PRIORITY}): {len(pc.packages)} packages of the stack ("
                + ", ".join(p.package for p in pc.packages)
                + f"), {len(pc.messages)} message forms of "
                + ", ".join(dict.fromkeys(m.kind for m in pc.messages))
                + ", and a traceback cut before its exception line.",
            ]
        fc = k.failed_checks
        if fc is not None:
            out += [
                "",
                "A failed check printed by a program or tool (`matrices/explain/failed_checks.yaml`,"
                f" priority {FAILED_CHECK_PRIORITY}, `not-a-version-problem`): "
                f"{sum(1 for f in fc.forms if f.kind == 'assertion')} assertion and check-macro forms ("
                + ", ".join(f.printer for f in fc.forms if f.kind == "assertion")
                + f"), {sum(1 for f in fc.forms if f.kind == 'comparison')} comparison forms ("
                + ", ".join(f"`{f.anchor.strip()}`" for f in fc.forms if f.kind == "comparison")
                + "); a line naming "
                + ", ".join(x.what for x in fc.step_aside)
                + " steps aside.",
            ]
        di = k.drv_install
        if di is not None:  # the driver installer's messages (drvinstall.py): a paragraph of their own
            ruled = [m for m in di.messages if m.causes]
            out += [
                "",
                "The NPU driver installer's own error messages (`matrices/explain/drv_install.yaml`, "
                f"{di.repo}@{di.commit[:12]} `scripts/package/`, priority {SOURCE_PRIORITY}): "
                f"{len(di.messages)} forms, {len(ruled)} with causes by the reviewed rules ("
                + ", ".join(dict.fromkeys(f"`{m.rule}`" for m in ruled))
                + ").",
            ]
        if k.op_messages is not None:
            from cannenv.explain.opapi import OpMessages

            om = OpMessages(k.op_messages)
            out += _rule_table_summary(
                "The aclnn operators' own parameter-check messages (`matrices/explain/aclnn_messages.yaml`,"
                f" priority {SOURCE_PRIORITY}): {om.total} distinct messages of "
                + ", ".join(sorted({f"{o.repo}@{o.commit[:12]}" for o in om.messages})),
                om.total,
                [o.rule for o in om.messages],
                rules="errno rules",
                rest="(internal errors) to none",
            )
        libs = [t for t in k.lib_tables if t.priority is None]
        if libs:
            out += [
                "",
                "The error tables of the libraries and tools around the stack"
                f" (`matrices/explain/libtables.yaml`, priority {LIBRARY_TABLE_PRIORITY}): "
                + ", ".join(
                    f"{t.title} {len(t.rows)} categories ({sum(1 for r in t.rows if r.causes)} with causes)"
                    for t in libs
                )
                + f"; {sum(len(t.forms) for t in libs)} printed forms.",
            ]
        for t in (t for t in k.lib_tables if t.id == "msaicerr"):
            out += [
                "",
                f"msaicerr's root-cause conclusions (`matrices/explain/aicerr.yaml`, priority {t.priority}):"
                f" {len(t.rows)} distinct conclusions, {sum(1 for r in t.rows if r.causes)} with causes;"
                f" {len({f.row for f in t.forms})} told apart by {len(t.forms)} clauses.",
            ]
        if k.rtge_messages is not None:
            from cannenv.explain.rtge import RtgeMessages

            rm = RtgeMessages(k.rtge_messages)
            codes = sum(1 for r in rm.messages if not r.rule)
            out += _rule_table_summary(
                "The CANN runtime's and GE's own error messages (`matrices/explain/rtge_messages.yaml`,"
                f" priority {SOURCE_PRIORITY}, GE's one below): {rm.total} messages of "
                + ", ".join(f"{repo}@{commit[:12]}" for repo, commit in k.rtge_messages[1]),
                rm.total - codes,
                [r.rule for r in rm.messages if r.rule],
                rest=f"to none, and {codes} reports of a public error code no rule covers, which the"
                " code's row decides",
            )
        if k.ms_messages is not None:
            from cannenv.explain.msascend import MS_BELOW_RUNTIME, MsMessages

            mm = MsMessages(k.ms_messages)
            out += _rule_table_summary(
                "MindSpore's own Ascend-side error messages (`matrices/explain/mindspore_messages.yaml`,"
                f" priority {SOURCE_PRIORITY - MS_BELOW_RUNTIME}): {mm.total} messages of "
                + ", ".join(f"{repo}@{commit[:12]}" for repo, commit in k.ms_messages[1]),
                mm.total,
                [x.rule for x in mm.messages],
            )
    out += ["", "| cause | decided on a host by | without host facts, decided by |", "|---|---|---|"]
    for c in table.causes.values():
        checks = ", ".join(f"`{x}`" for x in c.checks) or "— (cannot be decided from one host's facts)"
        out.append(f"| `{c.id}` | {checks} | {cell('; '.join(c.facts))} |")
    out += ["", DOC_END]
    return "\n".join(out) + "\n"


def _rule_table_summary(
    head: str, total: int, ruled: list[str], *, rules: str = "word rules", rest: str = "to none"
) -> list[str]:
    """The summary paragraph of a message table read out of a source: what it holds (``head``),
    how many of its ``total`` messages each reviewed rule gives a cause (``ruled``: the rule of
    each message with one), and how many get none."""
    by_rule: dict[str, int] = {}
    for name in ruled:
        by_rule[name] = by_rule.get(name, 0) + 1
    return [
        "",
        head
        + f"; {len(ruled)} point to a cause through the reviewed {rules} ("
        + ", ".join(f"{name} {n}" for name, n in sorted(by_rule.items()))
        + f"), {total - len(ruled)} {rest}.",
    ]


def main(argv: list[str] | None = None) -> int:
    """Print the generated signature section of docs/explain.md, or with ``--write PAGE`` replace
    it in the page (between its markers)."""
    import sys
    from pathlib import Path

    from cannenv.explain.signatures import shipped

    args = sys.argv[1:] if argv is None else argv
    section = render_signature_doc(shipped())
    if len(args) == 2 and args[0] == "--write":
        page = Path(args[1])
        text = page.read_text(encoding="utf-8")
        start, end = text.index(DOC_BEGIN), text.index(DOC_END) + len(DOC_END) + 1
        page.write_text(text[:start] + section + text[end:], encoding="utf-8")
        return 0
    print(section, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
