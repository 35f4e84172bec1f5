"""The fleet report as one self-contained HTML page: summary, nodes × checks grid, grouped remedies.

Per node its target stack (and how it was chosen) and key versions (driver, CANN, torch_npu); a
node whose reboot pending is unknown shows ``?`` in the ``driver-loaded`` column (why in its
tooltip) and is listed with why under "Reboot pending unknown"; each
grid cell links to the group that holds the node's finding for that check (``#g<id>``); long node
lists fold into a ``<details>`` element. Laid out for 1400 px and for fleets of 1,000 nodes
(``tests/integration/test_fleet_html.py`` screenshots it with headless Chromium).

No scripts, stylesheets, fonts or images from anywhere else: the page is read where it is opened,
offline. The template is ``templates/report.html.j2`` (shipped inside the package); Jinja2
autoescaping is on, so values from facts files cannot inject markup.
"""

from __future__ import annotations

from typing import Any

from cannenv.fleet.report import NODE_STATUSES, FleetReport, cell_status, reboot_unknown
from cannenv.report import REBOOT_CHECK

MARKS = {"pass": "✓", "warn": "!", "fail": "✗", "error": "E", "skip": "–", "none": "–"}


def cell_links(report: FleetReport) -> dict[tuple[str, str], int]:
    """(node, check) -> the id of the group holding that node's finding of that check (worst first)."""
    by_id = {g.id: g for g in report.groups}
    out: dict[tuple[str, str], int] = {}
    for node in report.nodes:
        for gid in node.groups:  # group ids are in report order: worst status first
            g = by_id.get(gid)
            if g is not None:
                out.setdefault((node.name, g.check), gid)
    return out


def render_html(report: FleetReport, explained: list[dict[str, Any]] | None = None) -> str:
    """The page; with ``explained`` (``fleet report --logs``: :func:`cannenv.explain.group_by_error`)
    a section of nodes grouped by the error their log explains."""
    import jinja2

    from cannenv import sanitize

    env = jinja2.Environment(
        finalize=sanitize.html,  # ESC and other controls from facts files never reach the page
        loader=jinja2.PackageLoader("cannenv.fleet", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    template = env.get_template("report.html.j2")
    unknown = reboot_unknown(report.nodes)
    return template.render(
        reboot_check=REBOOT_CHECK,
        reboot_unknown=unknown,
        reboot_why={name: why for (why, _), names in unknown.items() for name in names},
        report=report,
        statuses=NODE_STATUSES,
        cell=cell_status,
        links=cell_links(report),
        marks=MARKS,
        explained=explained,
    )
