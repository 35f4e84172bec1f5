"""`cannenv certify kernels`: compile and run our own Ascend C smoke kernels, compare with goldens.

``kernels`` is a click command; ``cannenv/commands/certify.py`` adds it to the ``certify`` group.
``COMMANDS`` stays empty so the top-level loader does not register it twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

if TYPE_CHECKING:
    from cannenv.certify.kernel_toolkit import Flow, Mode

COMMANDS: list[click.Command] = []


@click.command("kernels")
@click.option(
    "--mode",
    type=click.Choice(["npu", "cpu", "sim"]),
    default="npu",
    show_default=True,
    help="npu: on the device; cpu: CANN's CPU debug libraries; sim: CANN's simulator.",
)
@click.option("--soc", help="SoC to build for (e.g. Ascend910B3); default: npu-smi, via the doctor's facts.")
@click.option(
    "--kernel",
    "kernel_names",
    multiple=True,
    help="Only this kernel (repeatable); the toolchain probe always runs.",
)
@click.option(
    "--keep-build",
    type=click.Path(file_okay=False),
    help="Build here and keep it (default: a temporary directory).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (stable schema).")
@click.option("--dry-run", is_flag=True, help="Print the plan (flow, mode, command lines) and stop.")
@click.option(
    "--root", type=click.Path(file_okay=False), default="/", show_default=True, help="Host root to inspect."
)
@click.option("--cann", help="CANN toolkit root (default: $ASCEND_HOME_PATH, then /usr/local/Ascend/...).")
@click.option(
    "--flow",
    type=click.Choice(["legacy", "asc"]),
    help="Force a build flow (default: what the toolkit ships).",
)
@click.option(
    "--facts", "facts_file", type=click.Path(dir_okay=False), help="Take the SoC from a saved facts file."
)
@click.option(
    "--self-test",
    is_flag=True,
    help="Harness self-test: build the C++ references with the system compiler; certifies nothing.",
)
@click.option("-v", "--verbose", is_flag=True, help="Show every command line, also for passing cases.")
def kernels(
    mode: str,
    soc: str | None,
    kernel_names: tuple[str, ...],
    keep_build: str | None,
    as_json: bool,
    dry_run: bool,
    root: str,
    cann: str | None,
    flow: str | None,
    facts_file: str | None,
    self_test: bool,
    verbose: bool,
) -> int:
    """Build, run and check the Ascend C smoke kernels (toolchain probe, vector add, matmul, softmax).

    Exit code 0 when every kernel that could run passed, 1 when one failed, 4 when none could run
    here (no CANN toolkit, no device for --mode npu: skipped, with the reason), as `cannenv
    certify`. --dry-run and --self-test: 0 unless something failed.
    """
    from cannenv.certify.kernels import render_plan, render_report, run_kernels
    from cannenv.host import Host

    live = Path(root).resolve() == Path("/")
    host = Host.live() if live else Host(root=Path(root), allow_commands=False)
    facts = None
    if facts_file and soc is None:
        from cannenv.facts import Facts

        facts = Facts.load(facts_file)
    report = run_kernels(
        host,
        mode=cast("Mode", mode),
        soc=soc,
        facts=facts,
        cann=cann,
        kernels=kernel_names,
        keep_build=keep_build,
        target="reference" if self_test else "device",
        flow=cast("Flow | None", flow),
        dry_run=dry_run,
    )
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2, sort_keys=True))
    elif dry_run:
        click.echo(render_plan(report.plan))
        click.echo(report.summary)
    else:
        click.echo(render_report(report, verbose=verbose))
    if dry_run or self_test:
        # A dry run runs nothing; the harness self-test certifies nothing either way: pass or fail.
        return 1 if report.status in ("fail", "error") else 0
    # As `cannenv certify`: nothing certified is never exit 0 (docs/certify.md, outcome table).
    from cannenv.certify.stages import exit_code

    return exit_code([report.to_stage_result()])
