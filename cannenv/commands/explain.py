"""`cannenv explain`: which known error this is, its causes ranked, each decided on this host.

Nothing here imports torch or docker; the host is judged by the doctor's own probes and checks.
"""

from __future__ import annotations

import sys

import click

from cannenv.commands.options import (
    HCCN_OUTPUT,
    MATRIX,
    MULTINODE,
    QUIET,
    ROOT,
    SMI_BOARD,
    SMI_OUTPUT,
    gc_paused,
    host_options,
)
from cannenv.errors import InputError


@click.command("explain")
@click.argument("error", nargs=-1)
@click.option(
    "--log",
    "logs",
    multiple=True,
    metavar="FILE|DIR|-",
    help="A log, traceback or pasted issue; a folder of logs (e.g. ~/ascend/log/debug/plog); "
    "- for stdin. Repeatable.",
)
@ROOT
@click.option(
    "--facts", "facts_file", metavar="FILE", help="Decide causes with saved facts (`cannenv facts --json`)."
)
@click.option(
    "--no-host",
    is_flag=True,
    help="Decide nothing on a host: explain the text and say which facts would decide.",
)
@MATRIX
@host_options
@SMI_OUTPUT
@SMI_BOARD
@HCCN_OUTPUT
@MULTINODE
@click.option(
    "--signatures",
    "signature_file",
    metavar="FILE",
    help="Use this signature file instead of the shipped one (docs/explain.md).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the explanation as JSON (schema in docs/explain.md)."
)
@click.option("--junit", "junit_file", metavar="FILE", help="Also write a JUnit XML report to FILE.")
@click.option("-v", "--verbose", is_flag=True, help="Show what ruled each cause out, and every source.")
@QUIET
@gc_paused
def explain_cmd(
    error: tuple[str, ...],
    logs: tuple[str, ...],
    root: str,
    facts_file: str | None,
    no_host: bool,
    matrix_paths: tuple[str, ...],
    python: str | None,
    site_packages: tuple[str, ...],
    env_file: str | None,
    npu_smi_timeout: float,
    npu_smi_output: str | None,
    npu_smi_board: str | None,
    hccn_output: str | None,
    multinode: bool,
    signature_file: str | None,
    as_json: bool,
    junit_file: str | None,
    verbose: bool,
    quiet: bool,
) -> int:
    """Explain an Ascend error: the known signature, its causes ranked, each confirmed, ruled out
    or undecided on this host (live, --root or --facts), and the exact remedy.

    \b
    cannenv explain "error code is 561103"
    cannenv explain --log train.log
    cannenv explain --log ~/ascend/log/debug/plog
    python train.py 2>&1 | cannenv explain -
    cannenv explain --facts host.json --log issue.txt --json

    \b
    Exit codes: 0 explained, no cause present on this host · 1 a cause confirmed on this host ·
    2 bad input · 3 no known signature matched.
    """
    from pathlib import Path

    from cannenv.explain import host_findings, inputs, judge, render, signatures
    from cannenv.fsutil import atomic_write_text

    texts = [e for e in error if e != "-"]
    use_stdin = "-" in error or "-" in logs
    log_paths = [p for p in logs if p != "-"]
    if not texts and not log_paths and not use_stdin:
        raise InputError(
            "nothing to explain",
            hint='give the error text (cannenv explain "error code is 561103"), --log FILE|DIR, '
            "or - for stdin",
        )
    if no_host and (facts_file or root not in ("/", "")):
        raise InputError("--no-host decides nothing on a host: leave out --facts and --root")
    table = signatures.load(signature_file) if signature_file else signatures.shipped()
    root_path = Path(root).resolve() if root not in ("/", "") else None
    from cannenv.progress import Progress

    result = inputs.scan(
        table,
        texts=texts,
        logs=log_paths,
        stdin=sys.stdin.buffer if use_stdin else None,
        root=root_path,
        progress=Progress.for_cli(quiet),
    )
    facts = None
    findings = None
    host: dict[str, object] = {}
    source = "none"
    if not no_host:
        from cannenv.checks.stack import host_summary
        from cannenv.gather import gather

        facts = gather(
            root,
            facts_file,
            python,
            site_packages,
            env_file,
            npu_smi_timeout,
            npu_smi_output,
            npu_smi_board,
            hccn_output,
            multinode,
        )
        # an HCCL error says this host runs multi-node jobs: judge hccn.conf, links, TLS, HCCL_* too
        hccl = any(c.id.startswith("hccl-") for s in judge.matched(table, result) for c in s.causes)
        _, findings = host_findings(facts, matrix_paths, multinode=multinode or hccl)
        summary = host_summary(facts)
        host = {
            k: summary.get(k)
            for k in (
                "hostname",
                "driver",
                "firmware",
                "cann",
                "nnal",
                "torch",
                "torch_npu",
                "npu",
                "in_container",
            )
        }
        source = "facts" if facts_file else ("root" if root_path is not None else "live")
    ex = judge.explain(table, result, facts=facts, findings=findings, host_source=source, host=host)
    if junit_file:
        atomic_write_text(junit_file, render.render_junit(ex))
    if as_json:
        click.echo(render.to_json(ex))
    else:
        click.echo(render.render_text(ex, verbose=verbose), nl=False)
    return ex.exit_code


COMMANDS: list[click.Command] = [explain_cmd]
