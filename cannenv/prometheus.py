"""Prometheus metrics in the text exposition format, for node_exporter's textfile collector.

``cannenv doctor --prometheus FILE`` (and ``cannenv fleet k8s-agent``, the Ansible role) write
:func:`render_node` to a ``*.prom`` file in node_exporter's ``--collector.textfile.directory``,
atomically (a temp file in the same directory, then a rename: node_exporter never reads half a
file). ``cannenv fleet report --prometheus FILE`` writes :func:`render_fleet`, the fleet-level
gauges. Pure functions of a report; only the callers write files. Example alert rules that use
these series: ``examples/prometheus/cannenv-alerts.yml`` (checked with promtool in the tests).

Series (one node):

* ``cannenv_check_status{check, severity}``: the worst result of each check — 0 pass,
  1 warn, 2 fail, 3 error (the input needed to judge was broken), -1 skip (did not apply);
* ``cannenv_stack_info{stack, cann, driver, torch_npu} 1``: the stack the node was judged
  against and the versions found on it (``none`` where absent);
* ``cannenv_reboot_pending``: 1 when the loaded driver is not the installed one (``driver-loaded``
  fails), 0 when it is (the check passes); **no sample** when the loaded driver is unknown
  (``driver-loaded`` skipped or not run: :func:`cannenv.report.reboot_pending`), so no query reads an
  unknown node as "not pending" and ``sum()`` counts known pending nodes only;
* ``cannenv_findings{status}``: how many findings had each status;
* ``cannenv_last_run_timestamp_seconds``: when the judgement was made (Unix time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cannenv.report import Finding, Report, reboot_pending

STATUS_VALUE: Mapping[str, int] = {"skip": -1, "pass": 0, "warn": 1, "fail": 2, "error": 3}
"""``cannenv_check_status`` values: larger is worse, so ``max`` over findings is the check's result."""


def escape(value: str) -> str:
    """A label value in the exposition format: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(pairs: Mapping[str, str | None]) -> str:
    return ",".join(f'{k}="{escape(v if v not in (None, "") else "none")}"' for k, v in pairs.items())


def _family(name: str, kind: str, help_text: str, samples: Iterable[tuple[Mapping[str, Any], float]]) -> str:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for labels, val in samples:
        text = f"{val:g}" if isinstance(val, float) and not val.is_integer() else f"{int(val)}"
        lines.append(f"{name}{{{_labels(labels)}}} {text}" if labels else f"{name} {text}")
    return "\n".join(lines) + "\n"


def check_results(findings: Iterable[Finding]) -> dict[str, tuple[str, int]]:
    """check id -> (severity, worst status value) over the findings of that check."""
    out: dict[str, tuple[str, int]] = {}
    for f in findings:
        val = STATUS_VALUE[f.status]
        if f.id not in out or val > out[f.id][1]:
            out[f.id] = (f.severity, val)
    return out


REBOOT_VALUE: Mapping[str, float] = {"true": 1.0, "false": 0.0}
"""``cannenv_reboot_pending`` per :func:`cannenv.report.reboot_pending`; ``unknown`` has no sample."""
REBOOT_HELP = (
    "1 when the loaded NPU driver is not the installed one (restart the node), 0 when it is the "
    "installed one; no sample when the loaded driver is unknown (cannenv_check_status "
    'check="driver-loaded" is then -1), so sum() counts only known pending nodes and == 0 matches '
    "none of them."
)


def render_node(report: Report, *, timestamp: float) -> str:
    """The textfile of one node's judgement (``cannenv doctor``'s report)."""
    results = check_results(report.findings)
    host = report.host
    pending = reboot_pending(report.findings)
    parts = [
        _family(
            "cannenv_check_status",
            "gauge",
            "Worst result of each cannenv check: -1 skip, 0 pass, 1 warn, 2 fail, 3 error.",
            (({"check": cid, "severity": sev}, float(val)) for cid, (sev, val) in sorted(results.items())),
        ),
        _family(
            "cannenv_stack_info",
            "gauge",
            "The stack the node was judged against and the versions found on it.",
            [
                (
                    {
                        "stack": report.stack.id,
                        "cann": host.get("cann"),
                        "driver": host.get("driver"),
                        "torch_npu": host.get("torch_npu"),
                    },
                    1.0,
                )
            ],
        ),
        _family(
            "cannenv_reboot_pending",
            "gauge",
            REBOOT_HELP,
            [({}, REBOOT_VALUE[pending])] if pending in REBOOT_VALUE else [],
        ),
        _family(
            "cannenv_findings",
            "gauge",
            "Findings of the last judgement, by status.",
            (({"status": s}, float(report.summary.get(s, 0))) for s in STATUS_VALUE),
        ),
        _family(
            "cannenv_last_run_timestamp_seconds",
            "gauge",
            "When cannenv last judged this node (Unix time).",
            [({}, float(int(timestamp)))],
        ),
    ]
    return "".join(parts)


def render_fleet(
    node_status_counts: Mapping[str, int],
    failing_checks: Mapping[tuple[str, str], int],
    *,
    timestamp: float,
    reboot_pending: Mapping[str, int] | None = None,
) -> str:
    """Fleet-level gauges of ``cannenv fleet report``: nodes per status, nodes failing each check,
    judged nodes per reboot pending state (``true`` / ``false`` / ``unknown``, all three always)."""
    reboot = (
        [
            _family(
                "cannenv_fleet_reboot_pending_nodes",
                "gauge",
                "Judged nodes by reboot pending: true (restart them), false, unknown (nothing told the "
                "loaded driver).",
                (({"state": s}, float(n)) for s, n in reboot_pending.items()),
            )
        ]
        if reboot_pending is not None
        else []
    )
    return "".join(
        [
            _family(
                "cannenv_fleet_nodes",
                "gauge",
                "Nodes in the fleet report, by status (compliant, drifting, failing, or why not collected).",
                (({"status": s}, float(n)) for s, n in sorted(node_status_counts.items())),
            ),
            *reboot,
            _family(
                "cannenv_fleet_check_failing_nodes",
                "gauge",
                "Nodes on which a check failed (or errored), by check and severity.",
                (
                    ({"check": cid, "severity": sev}, float(n))
                    for (cid, sev), n in sorted(failing_checks.items())
                ),
            ),
            _family(
                "cannenv_fleet_last_report_timestamp_seconds",
                "gauge",
                "When the fleet report was made (Unix time).",
                [({}, float(int(timestamp)))],
            ),
        ]
    )


def render_job(job: str, report: Report, *, timestamp: float) -> str:
    """Gauges of ``cannenv fleet job``: the job's verdict and each job check's worst result.

    Named ``cannenv_job_*``: beside npu-exporter's ``npu_chip_info_*`` / ``node_base_info``, never
    one of them (docs/multinode.md). The job's name is the label ``cannenv_job``, never ``job``:
    Prometheus sets ``job`` to the scrape job and renames a scraped ``job`` to ``exported_job``, so
    ``{job="train-a"}`` would match nothing."""
    results = check_results(report.findings)
    ok = 0.0 if report.exit_code() else 1.0
    return "".join(
        [
            _family(
                "cannenv_job_consistent",
                "gauge",
                "1 when the job's nodes agree on everything HCCL needs (no job check failed), else 0.",
                [({"cannenv_job": job, "nodes": str(len(report.host.get("nodes", ())))}, ok)],
            ),
            _family(
                "cannenv_job_check_status",
                "gauge",
                "Worst result of each job check: -1 skip, 0 pass, 1 warn, 2 fail, 3 error.",
                (
                    ({"cannenv_job": job, "check": cid, "severity": sev}, float(val))
                    for cid, (sev, val) in sorted(results.items())
                ),
            ),
            _family(
                "cannenv_job_last_run_timestamp_seconds",
                "gauge",
                "When cannenv last judged the job (Unix time).",
                [({"cannenv_job": job}, float(int(timestamp)))],
            ),
        ]
    )


def render_jobs(jobs: Iterable[Any], *, timestamp: float) -> str:
    """``fleet report --job``: each job's verdict (``cannenv_fleet_job_ready{cannenv_job}``)."""
    items = list(jobs)
    return "".join(
        [
            _family(
                "cannenv_fleet_job_ready",
                "gauge",
                "1 when a multi-node job's nodes agree on what HCCL needs, else 0 (fleet report --job).",
                (
                    ({"cannenv_job": j.name, "nodes": str(len(j.nodes))}, 1.0 if j.status == "ready" else 0.0)
                    for j in items
                ),
            ),
            _family(
                "cannenv_fleet_job_failing_checks",
                "gauge",
                "Job checks that failed, per job.",
                (({"cannenv_job": j.name}, float(len(j.failing))) for j in items),
            ),
        ]
    )
