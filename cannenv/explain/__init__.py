"""`cannenv explain`: from an error message to its root cause on this host, and the exact fix.

scan (:mod:`.scan`, :mod:`.inputs`) → match and judge (:mod:`.judge`, with the doctor's own
findings) → render (:mod:`.render`). Signatures are data (:mod:`.signatures`,
``matrices/explain/signatures.yaml``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.progress import Progress
    from cannenv.report import Finding


def host_findings(
    facts: Facts, matrix_paths: tuple[str, ...] = (), *, multinode: bool = False
) -> tuple[Target, list[Finding]]:
    """The doctor's target and findings for ``facts`` (the same checks, the same matrix); with
    ``multinode`` the multi-node checks judge too, as ``doctor --multinode``."""
    from dataclasses import replace

    from cannenv import checks
    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target
    from cannenv.errors import CannenvError
    from cannenv.report import StackChoice

    try:
        m = matrix_mod.load(list(matrix_paths) or None)
    except CannenvError:
        if matrix_paths:
            raise
        m = None
    target = choose_target(facts, m)
    if m is None:
        target = replace(
            target, choice=StackChoice(how="none", reason="the shipped matrix could not be loaded")
        )
    if multinode:
        target = replace(target, multinode=True)
    return target, checks.run(facts, target)


def log_findings(
    logs: tuple[str, ...], facts: Facts, findings: list[Finding], root: str = "/"
) -> list[Finding]:
    """``doctor --log``: the causes explained in ``logs``, decided with the doctor's own facts and
    findings, as findings of their own (id ``explained-error``, subject the cause id).

    A confirmed cause is a ``fail`` under the check that confirmed it (``caused_by``), so the
    table lists it beside its root cause; an undecided one is a ``warn`` naming what would decide;
    ruled-out causes are left out. A log that matches no signature (or only the residual reading,
    :mod:`cannenv.explain.residual`) gives one ``skip``."""
    import sys
    from pathlib import Path

    from cannenv.explain import inputs, judge, signatures
    from cannenv.report import Finding

    table = signatures.shipped()
    paths = [p for p in logs if p != "-"]
    root_path = Path(root).resolve() if root not in ("/", "") else None
    stdin = sys.stdin.buffer if "-" in logs else None
    scan = inputs.scan(table, logs=paths, stdin=stdin, root=root_path)
    ex = judge.explain(
        table, scan, facts=facts, findings=findings, host_source="root" if root_path else "live"
    )
    title = "error in the log explained on this host"
    if not ex.matches or ex.residual_only:
        detail = "no known error signature in " + ", ".join(scan.sources or ("the log",))
        if ex.residual_only:  # the residual reading knows no message: a skip that says what it reads
            quoted = next((line for e in ex.matches[0].evidence for line in e.lines), "")
            detail += f"; its failure reads as not a version problem (undecided, an inference): {quoted}"
        return [Finding(id="explained-error", status="skip", severity="info", title=title, detail=detail)]
    out: list[Finding] = []
    for c in ex.causes:
        if c.status == "ruled-out":
            continue
        match = next(m for m in ex.matches if m.id == c.signature)
        quoted = next((line for e in match.evidence for line in e.lines), "")
        detail = f"{c.status}: {c.title} ({c.why}); signature {c.signature}: {quoted}"
        if c.tie:
            detail += f"; tied to this error by: {c.tie}"
        if c.contradiction:
            detail += f"; contradiction: {c.contradiction}"
        if c.status in ("undecided", "consistent") and c.decide:
            detail += "; would decide: " + "; ".join(c.decide)
        out.append(
            Finding(
                id="explained-error",
                status="fail" if c.status == "confirmed" else "warn",
                severity="high",
                title=title,
                detail=detail,
                remedy=c.remedy,
                subject=c.id,
                caused_by=c.confirmed_by[0] if c.confirmed_by else None,
            )
        )
    return out


def group_by_error(nodes: Any, logs_dir: str, *, progress: Progress | None = None) -> list[dict[str, Any]]:
    """``fleet report --logs DIR``: nodes grouped by the error their log explains.

    A node's log is ``DIR/<node>`` (a file, or a folder such as its plog) or ``DIR/<node>.log``,
    read inside DIR (a link cannot leave it). Each node's causes are decided with the findings the
    fleet report already made for it; the group key is the first matched signature, its first
    cause and that cause's status. Nodes without a log are left out; a log that matches nothing
    forms the group ``no known signature``."""
    from pathlib import Path

    from cannenv.errors import CannenvError, InputError
    from cannenv.explain import inputs, judge, signatures

    top = Path(logs_dir)
    if not top.is_dir():
        raise InputError(
            f"--logs {logs_dir!r} is not a folder", hint="DIR/<node>.log or DIR/<node>/ per node"
        )
    root = top.resolve()
    table = signatures.shipped()
    groups: dict[tuple[str, str, str], list[str]] = {}
    from cannenv.progress import QUIET

    nodes = list(nodes)
    shown = progress if progress is not None and len(nodes) >= inputs.PROGRESS_FILES else QUIET
    with shown.task(f"explaining the logs of {len(nodes)} nodes", total=len(nodes), unit="nodes") as task:
        for node in nodes:
            task.advance(1)
            name = str(node.name)
            if not name or "/" in name or name in (".", ".."):
                continue
            found = [p for p in (root / name, root / f"{name}.log") if p.exists() or p.is_symlink()]
            if not found:
                continue
            try:
                scan = inputs.scan(table, logs=[str(found[0])], root=root)
            except CannenvError as exc:
                groups.setdefault(("unreadable log", "-", exc.message), []).append(name)
                continue
            ex = judge.explain(
                table, scan, findings=list(getattr(node, "findings", ()) or ()), host_source="facts"
            )
            if not ex.matches:
                key = ("no known signature", "-", "-")
            else:
                c = ex.causes[0]
                key = (ex.matches[0].id, c.id, c.status)
            groups.setdefault(key, []).append(name)
    return [
        {"signature": sig, "cause": cause, "status": status, "nodes": sorted(names)}
        for (sig, cause, status), names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def render_groups(groups: list[dict[str, Any]]) -> str:
    """The text block ``fleet report --logs`` appends (sanitised)."""
    from cannenv import sanitize

    out = ["", "explained errors (nodes grouped by the error in their logs):"]
    if not groups:
        out.append("  no node has a log in the folder")
    for g in groups:
        nodes = ", ".join(g["nodes"])
        out.append(
            sanitize.line(f"  {g['signature']}: {g['cause']} [{g['status']}] ×{len(g['nodes'])}: {nodes}")
        )
    return "\n".join(out) + "\n"
