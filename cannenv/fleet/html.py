"""The fleet report as one self-contained HTML page: summary, nodes × checks grid, grouped remedies.

No scripts, stylesheets, fonts or images from anywhere else: the page is read where it is opened,
offline. The template is ``templates/report.html.j2`` (shipped inside the package); Jinja2
autoescaping is on, so values from facts files cannot inject markup.
"""

from __future__ import annotations

from cannenv.fleet.report import NODE_STATUSES, FleetReport, cell_status


def render_html(report: FleetReport) -> str:
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
    return template.render(report=report, statuses=NODE_STATUSES, cell=cell_status)
