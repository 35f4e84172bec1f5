"""`cannenv fleet`: collect facts from many hosts through Ansible, judge them centrally, report drift."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

import click

from cannenv.commands.options import DRIVER_POLICY, MATRIX, QUIET, ROLE, target_options
from cannenv.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable

    from cannenv.facts import Facts
    from cannenv.fleet.report import FleetReport, JobResult, Judge, Router
    from cannenv.report import Finding, StackChoice

    F = TypeVar("F", bound=Callable[..., object])


def _label_api_options(fn: F) -> F:
    """--certificate, --api, --token-file, in that order: what `k8s-agent` and `k8s-label` label and
    where they send it."""
    for option in (
        click.option(
            "--token-file", metavar="FILE", help="Bearer token file (default: the service account's)."
        ),
        click.option("--api", metavar="URL", help="API server (default: the in-cluster one)."),
        click.option(
            "--certificate", metavar="FILE", help="The node's cannenv certificate (its sha256 is labelled)."
        ),
    ):
        fn = option(fn)
    return fn


@click.group()
def fleet() -> None:
    """Collect facts from many hosts (Ansible), report drift per node, judge a multi-node job, render
    Kubernetes manifests.

    \b
    cannenv fleet collect -i inventory.ini --out facts/
    cannenv fleet report facts/ --lock cannenv.lock.json --html fleet.html
    cannenv fleet diff facts-monday/ facts-friday/ --stack ID
    cannenv fleet job facts/ --nodes n1,n2            # same stack, device IPs, TLS (docs/multinode.md)
    cannenv fleet ranktable facts/ --nodes n1,n2 --out hccl.json
    """


@fleet.command("collect")
@click.option(
    "-i", "--inventory", required=True, metavar="INVENTORY", help="Ansible inventory (file or directory)."
)
@click.option("--limit", metavar="PATTERN", help="Ansible host pattern to restrict the run to.")
@click.option("--forks", type=click.IntRange(1, 500), default=5, show_default=True, help="Hosts in parallel.")
@click.option(
    "--out", "out", default="cannenv-facts", show_default=True, metavar="DIR", help="Where facts land."
)
@click.option(
    "--timeout",
    type=click.IntRange(1),
    default=120,
    show_default=True,
    help="Seconds `cannenv facts` may run on one host.",
)
@click.option("--bundle", metavar="FILE", help="Push this bundle (default: build one from this cannenv).")
@click.option(
    "--no-bundle", is_flag=True, help="Use the `cannenv` installed on each host instead of pushing one."
)
@click.option(
    "--no-login-shell", is_flag=True, help="Do not run through a login shell (/etc/profile not read)."
)
@click.option(
    "--facts-arg",
    "facts_args",
    multiple=True,
    metavar="ARG",
    help="Extra argument for `cannenv facts` on the hosts (repeatable), "
    "e.g. --facts-arg=--python=/opt/venv/bin/python.",
)
@click.option(
    "--keep",
    type=click.IntRange(0),
    default=30,
    show_default=True,
    help="Earlier collections kept in DIR/history/<UTC time>/ (drift history; 0 keeps none).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the manifest (collection.json) instead of a table."
)
@QUIET
def collect_cmd(
    inventory: str,
    limit: str | None,
    forks: int,
    out: str,
    timeout: int,
    bundle: str | None,
    no_bundle: bool,
    no_login_shell: bool,
    facts_args: tuple[str, ...],
    keep: int,
    as_json: bool,
    quiet: bool,
) -> int:
    """Run `cannenv facts --json` on every host of INVENTORY through Ansible; one facts file per host.

    Hosts that are unreachable, have no Python >= 3.7, or time out are recorded with the reason in
    DIR/collection.json; the run carries on. The collection DIR held before moves to
    DIR/history/<UTC time>/ (`fleet report DIR --since 7d` shows what changed when).

    \b
    Exit codes: 0 every host collected · 1 some hosts not collected (DIR/collection.json says why) ·
    6 no host collected · 3 no host matched · 2 bad input.
    """
    from cannenv.fleet.collect import collect
    from cannenv.progress import Progress

    if bundle and no_bundle:
        raise InputError("give either --bundle or --no-bundle, not both")
    collection = collect(
        inventory,
        out,
        limit=limit,
        forks=forks,
        timeout=timeout,
        bundle=bundle,
        use_bundle=not no_bundle,
        login_shell=not no_login_shell,
        facts_args=facts_args,
        keep=keep,
        progress=Progress.for_cli(quiet),
    )
    got = sum(1 for h in collection.hosts if h.status == "collected")
    code = 0 if got == len(collection.hosts) else 1 if got else 6
    if as_json:
        click.echo(collection.to_json(), nl=False)
    else:
        from cannenv import sanitize

        width = max(len(h.name) for h in collection.hosts)
        for h in collection.hosts:
            click.echo(sanitize.line(f"{h.name:<{width}}  {h.status:<16} {h.reason}".rstrip()))
        click.echo(f"{got}/{len(collection.hosts)} hosts collected into {out}")
    if code:
        click.echo(
            f"error: {len(collection.hosts) - got} of {len(collection.hosts)} hosts not collected "
            f"(reasons in {out}/collection.json)",
            err=True,
        )
    return code


def _judge(
    stack_id: str | None,
    lock: str | None,
    check_ids: tuple[str, ...],
    driver_policy: str = "accepted",
    matrix_paths: tuple[str, ...] = (),
    role: str = "full",
) -> Judge:
    from cannenv.fleet.report import judge_with_checks

    return _only(judge_with_checks(stack_id, lock, driver_policy, matrix_paths, role), check_ids)


def _router(
    default: Judge,
    *,
    stack_id: str | None,
    lock_file: str | None,
    target_items: tuple[str, ...],
    targets_file: str | None,
    inventory: str | None,
    check_ids: tuple[str, ...],
    driver_policy: str,
    matrix_paths: tuple[str, ...] = (),
    role: str = "full",
) -> Router | None:
    """One target per node (:mod:`cannenv.fleet.targets`): None when no per-node target is given."""
    if not (target_items or targets_file):
        return None
    from cannenv.fleet._doctor import make_router
    from cannenv.fleet.targets import refuse_misfits, target_map

    tmap = target_map(target_items=target_items, targets_file=targets_file, inventory=inventory)
    refuse_misfits(tmap, matrix_paths)
    return make_router(
        tmap.families,
        tmap.groups,
        tmap.node_groups,
        default=default if (stack_id or lock_file) else None,
        wrap=lambda j: _only(j, check_ids),
        driver_policy=driver_policy,
        matrix_paths=matrix_paths,
        role=role,
    )


def _only(judge: Judge, check_ids: tuple[str, ...]) -> Judge:
    from cannenv import checks

    if not check_ids:
        return judge
    wanted = {c.id for c in checks.select(list(check_ids))}

    def only(facts: Facts) -> tuple[list[Finding], StackChoice]:
        findings, choice = judge(facts)
        return [f for f in findings if f.id in wanted], choice

    return only


@fleet.command("report")
@click.argument("directory", metavar="DIR")
@click.option("--stack", "stack_id", metavar="ID", help="Judge every node against this stack.")
@click.option(
    "--lock", "lock_file", metavar="FILE", help="Judge every node against the stack of this lock file."
)
@click.option(
    "--check", "check_ids", multiple=True, metavar="ID", help="Only these checks (repeatable or a,b)."
)
@target_options
@DRIVER_POLICY
@click.option("--inventory", metavar="INVENTORY", help="Ansible inventory: the groups of each node.")
@click.option("--json", "as_json", is_flag=True, help="Print the fleet report as JSON (compact).")
@click.option("--details", is_flag=True, help="With --json: every finding of every node, too.")
@click.option("--junit", "junit_file", metavar="FILE", help="Also write JUnit XML (a testsuite per node).")
@click.option("--html", "html_file", metavar="FILE", help="Also write a self-contained HTML page.")
@click.option(
    "--prometheus",
    "prometheus_file",
    metavar="FILE",
    help="Also write fleet-level Prometheus gauges to FILE.",
)
@click.option(
    "--node-metrics",
    "node_metrics_dir",
    metavar="DIR",
    help="Also write DIR/<node>.prom per judged node (the doctor's metrics; "
    "ansible/playbooks/push_metrics.yml puts them in node_exporter's textfile directory).",
)
@click.option("--strict", is_flag=True, help="Drifting, unreachable and untargeted nodes also fail.")
@click.option(
    "--job",
    "job_specs",
    multiple=True,
    metavar="NAME=A,B|GROUP",
    help="Also judge these nodes (or this inventory group, with --inventory) as one multi-node job "
    "(`fleet job`, docs/multinode.md); a job that is not ready fails the report. Repeatable.",
)
@click.option(
    "--logs",
    "logs_dir",
    metavar="DIR",
    help="Also group nodes by the error their log explains: DIR/<node>.log or DIR/<node>/ (docs/explain.md).",
)
@click.option(
    "--since",
    metavar="WHEN",
    help="Also show what changed when since WHEN (ISO date/time or 90m, 12h, 7d, 2w), from the "
    "collections `fleet collect --out DIR` kept in DIR/history/.",
)
@MATRIX
@ROLE
def report_cmd(
    directory: str,
    stack_id: str | None,
    lock_file: str | None,
    check_ids: tuple[str, ...],
    target_items: tuple[str, ...],
    targets_file: str | None,
    inventory: str | None,
    as_json: bool,
    details: bool,
    junit_file: str | None,
    html_file: str | None,
    prometheus_file: str | None,
    strict: bool,
    node_metrics_dir: str | None = None,
    driver_policy: str = "accepted",
    since: str | None = None,
    logs_dir: str | None = None,
    job_specs: tuple[str, ...] = (),
    matrix_paths: tuple[str, ...] = (),
    role: str = "full",
) -> int:
    """Judge every facts file of DIR and group the findings by check, observed value and remedy.

    Without --stack/--lock each node is judged against its own best match from the matrix.

    \b
    Exit codes (first that applies): 2 a facts file could not be read (or bad input) ·
    6 no node has facts (nothing collected) · 1 a node fails (with --strict also one that
    drifts, is unreachable or untargeted) · 0 otherwise.
    """
    from cannenv.fleet.report import report_collection
    from cannenv.fsutil import atomic_write_text, require_parent_dir

    for out_file, option in ((junit_file, "--junit"), (prometheus_file, "--prometheus")):
        if out_file:
            require_parent_dir(out_file, option)
    since_at = None
    if since:
        from cannenv.fleet.history import parse_since

        since_at = parse_since(since)

    default = _judge(stack_id, lock_file, check_ids, driver_policy, matrix_paths, role)
    router = _router(
        default,
        stack_id=stack_id,
        lock_file=lock_file,
        target_items=target_items,
        targets_file=targets_file,
        inventory=inventory,
        check_ids=check_ids,
        driver_policy=driver_policy,
        matrix_paths=matrix_paths,
        role=role,
    )
    report = report_collection(directory, default, router=router)
    if job_specs:
        report = report.model_copy(update={"jobs": _jobs(directory, job_specs, inventory)})
    if prometheus_file:
        import time

        from cannenv.prometheus import render_fleet

        failing: dict[tuple[str, str], int] = {}
        for node in report.nodes:
            for key in {(f.id, f.severity) for f in node.findings if f.status in ("fail", "error")}:
                failing[key] = failing.get(key, 0) + 1
        counts = {k: v for k, v in report.summary.items() if k != "nodes"}
        from cannenv.fleet.report import reboot_counts

        reboot = reboot_counts(report.nodes)
        text = render_fleet(counts, failing, timestamp=time.time(), reboot_pending=reboot)
        if report.jobs:
            from cannenv.prometheus import render_jobs

            text += render_jobs(report.jobs, timestamp=time.time())
        atomic_write_text(prometheus_file, text)
    if node_metrics_dir:
        _write_node_metrics(report, node_metrics_dir)
    if junit_file:
        from cannenv.fleet.report import render_junit

        atomic_write_text(junit_file, render_junit(report, strict=strict))
    explained = None
    if logs_dir:
        from cannenv.explain import group_by_error
        from cannenv.progress import Progress

        explained = group_by_error(report.nodes, logs_dir, progress=Progress.for_cli())
    if html_file:
        from cannenv.fleet.html import render_html

        atomic_write_text(html_file, render_html(report, explained))
    history = None
    if since_at is not None:
        from cannenv.fleet.history import history_since

        history = history_since(directory, since_at, default if (stack_id or lock_file) else None)
    if as_json:
        text = report.to_json(indent=None if not details else 2, details=details)
        if explained is not None:
            import json

            data = json.loads(text)
            data["explained"] = explained
            text = json.dumps(data, indent=None if not details else 2)
        if history is not None:
            import json

            data = json.loads(text)
            data["history"] = [
                {"at": when.isoformat(timespec="seconds"), "diff": diff.model_dump(mode="json")}
                for when, diff in history
            ]
            text = json.dumps(data, indent=None if not details else 2)
        click.echo(text)
    else:
        click.echo(render_text(report), nl=False)
        if explained is not None:
            from cannenv.explain import render_groups

            click.echo(render_groups(explained), nl=False)
        if history is not None and since_at is not None:
            from cannenv.fleet.history import render_history

            click.echo(render_history(history, since_at), nl=False)
    return report.exit_code(strict=strict)


def _jobs(directory: str, specs: tuple[str, ...], inventory: str | None) -> tuple[JobResult, ...]:
    """Each ``--job`` judged as one (cannenv.fleet.job)."""
    from cannenv.fleet.job import job_result, parse_job_spec, select_nodes

    out = []
    for spec in specs:
        name, names = parse_job_spec(spec)
        if names is None:
            nodes, errors = select_nodes(directory, group=name, inventory=inventory)
        else:
            nodes, errors = select_nodes(directory, nodes=names)
        out.append(job_result(name, nodes, errors))
    return tuple(out)


def _write_node_metrics(report: FleetReport, directory: str) -> None:
    """DIR/<node>.prom for every judged node: the same series `cannenv doctor --prometheus` writes."""
    import re
    import time
    from pathlib import Path

    from cannenv.fsutil import atomic_write_text
    from cannenv.prometheus import render_node
    from cannenv.report import Report, StackChoice

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for node in report.nodes:
        if node.status in ("unreachable", "untargeted"):
            continue
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,252}\Z", node.name):  # a file name, never a path
            raise InputError(f"node name {node.name!r} cannot name a metrics file")
        doctor = Report.build(node.findings, host=dict(node.versions), stack=StackChoice(id=node.stack))
        atomic_write_text(out / f"{node.name}.prom", render_node(doctor, timestamp=now))


def render_text(report: FleetReport) -> str:
    lines = [f"target stack: {report.stack.id or '(per node)'} — {report.stack.reason}"]
    s = report.summary
    lines.append(
        f"{s['nodes']} nodes: {s['compliant']} compliant, {s['drifting']} drifting, "
        f"{s['failing']} failing, {s['unreachable']} unreachable"
        + (f", {s['untargeted']} untargeted" if s.get("untargeted") else "")
    )
    from cannenv.fleet.report import reboot_counts, reboot_unknown

    r = reboot_counts(report.nodes)
    if sum(r.values()):
        lines.append(
            f"reboot pending: {r['true']} node(s), not pending: {r['false']}, unknown: {r['unknown']}"
        )
    for g in report.groups:
        lines.append(f"{g.status.upper():5} {g.check}: {len(g.nodes)} node(s): {g.observed}")
        if g.remedy:
            lines.append(f"      remedy: {g.remedy}")
        lines.append(f"      nodes: {', '.join(g.nodes)}")
    for (why, remedy), names in reboot_unknown(report.nodes).items():
        lines.append(f"UNKNOWN driver-loaded: {len(names)} node(s): {why}")
        if remedy:
            lines.append(f"      remedy: {remedy}")
        lines.append(f"      nodes: {', '.join(names)}")
    for n in report.nodes:
        lines.append(f"{n.name}: {n.status}" + (f" ({n.reason})" if n.reason else ""))
    for j in report.jobs:
        why = ""
        if j.failing:
            why = f" (failing: {', '.join(j.failing)}; `cannenv fleet job` shows why)"
        elif j.status == "unchecked":  # the words of `fleet job`'s warning
            why = "".join(f" ({f.detail}; {f.remedy})" for f in j.findings[:1])
        count = f"{len(j.nodes)} node" + ("" if len(j.nodes) == 1 else "s")
        lines.append(f"job {j.name} ({count}): {j.status}{why}")
    from cannenv import sanitize

    return "\n".join(sanitize.line(x) for x in lines) + "\n"  # values from facts files: no controls


@fleet.command("job")
@click.argument("directory", metavar="FACTS_DIR")
@click.option(
    "--nodes", "node_list", metavar="A,B,C", help="The job's nodes (names of facts files); default all."
)
@click.option("--group", metavar="NAME", help="The job's nodes are this inventory group (needs --inventory).")
@click.option("--inventory", metavar="INVENTORY", help="Ansible inventory holding --group.")
@click.option(
    "--name", "job_name", metavar="NAME", help="The job's name in metrics (default: --group, or 'job')."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the job report as JSON (the doctor's report schema)."
)
@click.option("--junit", "junit_file", metavar="FILE", help="Also write JUnit XML.")
@click.option(
    "--prometheus", "prometheus_file", metavar="FILE", help="Also write the job's gauges (cannenv_job_*)."
)
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@click.option("-v", "--verbose", is_flag=True, help="Show passing checks too.")
def job_cmd(
    directory: str,
    node_list: str | None,
    group: str | None,
    inventory: str | None,
    job_name: str | None,
    as_json: bool,
    junit_file: str | None,
    prometheus_file: str | None,
    strict: bool,
    verbose: bool,
) -> int:
    """Judge the nodes of one multi-node job as one: same CANN/ops/NNAL/HDK/torch/torch_npu on every
    rank (EI0005), unique device IPs in their subnets, gateways, one TLS setting, A3 SuperPoDs, HCCL
    variables (docs/multinode.md). Exit 0 ready · 1 a job check failed · 2 bad input · 3 no such node.
    """
    from cannenv import __version__
    from cannenv.fleet.job import judge_job, select_nodes
    from cannenv.fsutil import atomic_write_text
    from cannenv.report import Report, render_junit, render_table

    if node_list and group:
        raise InputError("give the job's nodes as --nodes A,B or --group NAME, not both")
    names = [n.strip() for n in (node_list or "").split(",") if n.strip()]
    nodes, errors = select_nodes(directory, nodes=names, group=group, inventory=inventory)
    findings, plan = judge_job(nodes)
    name = job_name or group or "job"
    members = [n.name for n in nodes] + [f.subject for f in errors if f.subject]
    host = {"job": name, "nodes": members, "converge": plan}
    report = Report.build([*errors, *findings], host=host, cannenv_version=__version__)
    if junit_file:
        atomic_write_text(junit_file, render_junit(report, suite="cannenv fleet job", strict=strict))
    if prometheus_file:
        import time

        from cannenv.prometheus import render_job

        atomic_write_text(prometheus_file, render_job(name, report, timestamp=time.time()))
    if as_json:
        click.echo(report.to_json())
    else:
        from cannenv import sanitize

        table = render_table(report, color=False, width=None, verbose=verbose, plain=True).splitlines()
        title = f"job {name}" if job_name or group else "job"
        click.echo(sanitize.line(f"{title}: {len(members)} node(s): {', '.join(members)}"))
        click.echo("\n".join(table[2:]))  # the doctor's host and stack lines say nothing of a job
        for node, changes in sorted(plan.items()):
            click.echo(sanitize.line(f"converge {node}: " + "; ".join(changes)))
    return report.exit_code(strict=strict)


@fleet.command("ranktable")
@click.argument("directory", metavar="[FACTS_DIR]", required=False)
@click.option(
    "--out", "out_file", metavar="FILE", help="Write the rank table the chips need (e.g. hccl.json)."
)
@click.option(
    "--check", "check_file", metavar="FILE", help="Check this rank table (against FACTS_DIR when given)."
)
@click.option(
    "--nodes", "node_list", metavar="A,B,C", help="The job's nodes (default: every node of FACTS_DIR)."
)
@click.option("--group", metavar="NAME", help="The job's nodes are this inventory group (needs --inventory).")
@click.option("--inventory", metavar="INVENTORY", help="Ansible inventory holding --group.")
@click.option(
    "--device-port", type=click.IntRange(1, 65535), help="Also write this device_port for every device."
)
@click.option("--json", "as_json", is_flag=True, help="With --check: print the findings as JSON.")
@click.option("--junit", "junit_file", metavar="FILE", help="With --check: also write JUnit XML.")
def ranktable_cmd(
    directory: str | None,
    out_file: str | None,
    check_file: str | None,
    node_list: str | None,
    group: str | None,
    inventory: str | None,
    device_port: int | None,
    as_json: bool,
    junit_file: str | None,
) -> int:
    """Write an HCCL rank table from collected facts (v1.0 A2/910/300I Duo, v1.2 A3, v2.0 Ascend 950
    with its topology file), or check one against its documented format and the facts.

    \b
    cannenv fleet ranktable facts/ --out hccl.json
    cannenv fleet ranktable facts/ --check hccl.json      # format + facts
    cannenv fleet ranktable --check hccl.json              # format only
    """
    import json

    from cannenv import __version__, records
    from cannenv.errors import NotFoundError
    from cannenv.fleet.job import JobNode, select_nodes
    from cannenv.fleet.ranktable import check_table, generate
    from cannenv.fsutil import atomic_write_text
    from cannenv.report import Report, render_junit, render_table

    if bool(out_file) == bool(check_file):
        raise InputError("give --out FILE (write a table) or --check FILE (check one)")
    if node_list and group:
        raise InputError("give the job's nodes as --nodes A,B or --group NAME, not both")
    names = [n.strip() for n in (node_list or "").split(",") if n.strip()]
    nodes: list[JobNode] = []
    if directory:
        nodes, errors = select_nodes(directory, nodes=names, group=group, inventory=inventory)
        if errors and out_file:
            raise InputError("no facts for " + ", ".join(f.detail for f in errors))
    elif out_file:
        raise InputError("--out writes the table from the facts: give FACTS_DIR")
    if out_file:
        table = generate(nodes, device_port=device_port)
        text = json.dumps(table, indent=2) + "\n"
        problems = [f for f in check_table(json.loads(text), nodes) if f.status in ("fail", "error")]
        if problems:  # never write a table that its own check refuses
            raise InputError("the generated table fails its check: " + "; ".join(f.detail for f in problems))
        atomic_write_text(out_file, text)
        ranks = table.get("rank_count") or sum(len(s["device"]) for s in table["server_list"])
        click.echo(
            f"wrote {out_file}: rank table v{table['version']}, {len(nodes)} server(s), {ranks} rank(s)"
        )
        return 0
    assert check_file is not None
    hint = "a rank table is JSON (rank_table_config_*.md); remove the // comments of the docs' examples"
    text = records.read_text(check_file, what="rank table", missing=NotFoundError)
    doc = records.parse_json(text, source=check_file, hint=hint)
    findings = check_table(doc, nodes)
    report = Report.build(findings, host={"rank_table": check_file}, cannenv_version=__version__)
    if junit_file:
        atomic_write_text(junit_file, render_junit(report, suite="cannenv fleet ranktable"))
    if as_json:
        click.echo(report.to_json())
    else:
        from cannenv import sanitize

        click.echo(sanitize.line(f"rank table {check_file}" + (f" against {directory}" if directory else "")))
        table_lines = render_table(report, color=False, width=None, verbose=True, plain=True).splitlines()
        click.echo("\n".join(table_lines[2:]))
    return report.exit_code()


@fleet.command("collective")
@click.option(
    "-i", "--inventory", required=True, metavar="INVENTORY", help="The job's hosts (Ansible inventory)."
)
@click.option("--limit", metavar="PATTERN", help="Ansible host pattern: the job's nodes.")
@click.option("--backend", type=click.Choice(["hccl", "gloo"]), default="hccl", show_default=True)
@click.option(
    "--nproc-per-node",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Processes (devices) per node.",
)
@click.option(
    "--master-addr", metavar="ADDR", help="Rank 0's address (default: the first host's ansible_host)."
)
@click.option("--master-port", type=click.IntRange(1024, 65535), default=29500, show_default=True)
@click.option(
    "--size-mb", type=click.FloatRange(0.001, 4096), default=4.0, show_default=True, help="All-reduce size."
)
@click.option("--iters", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option(
    "--timeout",
    type=click.IntRange(10, 7200),
    default=300,
    show_default=True,
    help="Seconds for ranks to meet.",
)
@click.option(
    "--python", "python", default="python3", show_default=True, help="The hosts' interpreter (with torch)."
)
@click.option(
    "--env", "env_items", multiple=True, metavar="KEY=VALUE", help="Environment for the harness (repeatable)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def collective_cmd(
    inventory: str,
    limit: str | None,
    backend: str,
    nproc_per_node: int,
    master_addr: str | None,
    master_port: int,
    size_mb: float,
    iters: int,
    timeout: int,
    python: str,
    env_items: tuple[str, ...],
    as_json: bool,
) -> int:
    """Run an all-reduce (and a bandwidth figure) through torch.distributed across the inventory's
    hosts, one process per device, started by Ansible (docs/multinode.md).

    HCCL on NPU nodes; gloo anywhere, reported as "gloo (harness only; HCCL not exercised)". A node
    without a usable NPU makes the HCCL run `skip` with its reason. Exit 0 passed or skipped ·
    1 the collective failed (a host failed or a wrong sum) · 6 no result came back.
    """
    from cannenv import sanitize
    from cannenv.fleet.collective import parse_env, run_collective

    result = run_collective(
        inventory,
        backend=backend,
        limit=limit,
        master_addr=master_addr,
        master_port=master_port,
        nproc_per_node=nproc_per_node,
        size_mb=size_mb,
        iters=iters,
        timeout=timeout,
        python=python,
        env=parse_env(env_items),
    )
    if as_json:
        click.echo(result.to_json())
    else:
        click.echo(sanitize.line(f"{result.status.upper():5} collective ({result.backend}): {result.detail}"))
        for host, outcome in sorted(result.hosts.items()):
            click.echo(sanitize.line(f"      {host}: {outcome}"))
    return result.exit_code()


@fleet.command("diff")
@click.argument("old_dir", metavar="OLD_DIR")
@click.argument("new_dir", metavar="NEW_DIR")
@click.option(
    "--stack", "stack_id", metavar="ID", help="Also judge both against this stack (new drift, fixed)."
)
@click.option("--lock", "lock_file", metavar="FILE", help="Also judge both against this lock file's stack.")
@target_options
@click.option("--inventory", metavar="INVENTORY", help="Ansible inventory: the groups of each node.")
@DRIVER_POLICY
@MATRIX
@click.option("--json", "as_json", is_flag=True, help="Print the diff as JSON.")
def diff_cmd(
    old_dir: str,
    new_dir: str,
    stack_id: str | None,
    lock_file: str | None,
    target_items: tuple[str, ...],
    targets_file: str | None,
    inventory: str | None,
    driver_policy: str,
    matrix_paths: tuple[str, ...],
    as_json: bool,
) -> int:
    """Show what changed between two collections: nodes upgraded, added, removed, new drift.

    Without --stack/--lock/--target(s) only versions and reachability are compared; with them each
    node is judged against its own target (per family or inventory group) in both collections.
    """
    from cannenv.fleet.collection import load_collection
    from cannenv.fleet.diff import diff_collections
    from cannenv.fleet.diff import render_text as diff_text
    from cannenv.fleet.report import build_report

    old, new = load_collection(old_dir), load_collection(new_dir)
    old_r = new_r = None
    if stack_id or lock_file or target_items or targets_file:
        judge = _judge(stack_id, lock_file, (), driver_policy, matrix_paths)
        router = _router(
            judge,
            stack_id=stack_id,
            lock_file=lock_file,
            target_items=target_items,
            targets_file=targets_file,
            inventory=inventory,
            check_ids=(),
            driver_policy=driver_policy,
            matrix_paths=matrix_paths,
        )
        old_r = build_report(old, judge, source=old_dir, router=router)
        new_r = build_report(new, judge, source=new_dir, router=router)
    result = diff_collections(old, new, old_report=old_r, new_report=new_r)
    click.echo(result.to_json() if as_json else diff_text(result), nl=not as_json)
    return 0


@fleet.command("k8s-manifest")
@click.option(
    "--image",
    required=True,
    metavar="IMAGE",
    help="The doctor image (`cannenv fleet k8s-image` renders its build context), by digest "
    "(REGISTRY/REPO@sha256:<digest>); a tag is refused unless --allow-tag.",
)
@click.option(
    "--allow-tag",
    is_flag=True,
    help="Accept an --image given by tag instead of digest (a note on stderr says so).",
)
@click.option("--stack", "stack_id", metavar="ID", help="Judge every node against this stack.")
@click.option(
    "--lock",
    "lock_file",
    metavar="FILE",
    help="Judge every node against this lock file (sent as a ConfigMap).",
)
@click.option("--namespace", default="kube-system", show_default=True)
@click.option(
    "--name",
    default="cannenv-doctor",
    show_default=True,
    help="Name of the objects; cluster-wide ones are NAME.NAMESPACE. One name per target: two "
    "manifests with two names coexist.",
)
@click.option(
    "--role",
    type=click.Choice(["full", "hdk"]),
    default="full",
    show_default=True,
    help="hdk: the nodes carry only driver and firmware (CANN and torch live in the images); "
    "only those are judged, the driver against the target's CANN.",
)
@click.option(
    "--interval", type=click.IntRange(1), default=3600, show_default=True, help="Seconds between two checks."
)
@click.option(
    "--node-selector",
    "selectors",
    multiple=True,
    metavar="KEY=VALUE",
    help="KEY=VALUE: run only on nodes that also carry this label (repeatable, every family). "
    "FAMILY=KEY=VALUE: the nodes of FAMILY are those with this label (instead of the Ascend device "
    "plugin's accelerator / accelerator-type labels, the default).",
)
@click.option(
    "--nfd",
    is_flag=True,
    help="Also select a family's nodes by Node Feature Discovery's PCI device label "
    "(pci-1200_19e5_<device>.present; NFD configured with deviceLabelFields [class, vendor, device]).",
)
@click.option(
    "--host-path",
    "host_dirs",
    multiple=True,
    metavar="DIR",
    help="Also mount this node directory read-only (repeatable), e.g. /etc/Ascend or a venv.",
)
@click.option(
    "--host-file",
    "host_files",
    multiple=True,
    metavar="FILE",
    help="Also mount this node file read-only (repeatable), e.g. /etc/ascend_install.info.",
)
@click.option(
    "--site-packages",
    "site_dirs",
    multiple=True,
    metavar="DIR",
    help="The agents read the node's Python packages from this node folder (repeatable), mounted "
    "read-only: a venv's lib/pythonX.Y/site-packages where the system Python is externally managed.",
)
@click.option(
    "--run-as-user",
    type=click.IntRange(0),
    default=65534,
    show_default=True,
    metavar="UID",
    help="The agent's user (0 only where the install files are readable by root alone; no capability "
    "is added either way).",
)
@click.option(
    "--supplemental-group",
    "groups",
    multiple=True,
    type=click.IntRange(0),
    metavar="GID",
    help="Also run in this group (repeatable): HwHiAiUser's, for installs readable by that group only.",
)
@click.option(
    "--toleration",
    "tolerations",
    multiple=True,
    metavar="KEY[=VALUE]:EFFECT",
    help="Tolerate this taint (repeatable; none by default).",
)
@click.option(
    "--device-resource",
    metavar="NAME=COUNT",
    help="Ask the Ascend device plugin for devices (e.g. huawei.com/Ascend910=1) instead of reading the "
    "node's /dev read-only.",
)
@click.option(
    "--textfile-dir",
    metavar="DIR",
    help="Host directory of node_exporter's textfile collector: cannenv.prom is written there each round.",
)
@click.option("--certificate", metavar="PATH", help="Host path of the node's cannenv certificate file.")
@click.option("--json", "as_json", is_flag=True, help="JSON (a v1 List) instead of YAML.")
@MATRIX
@target_options
def k8s_manifest_cmd(
    image: str,
    allow_tag: bool,
    stack_id: str | None,
    lock_file: str | None,
    namespace: str,
    name: str,
    role: str,
    interval: int,
    selectors: tuple[str, ...],
    nfd: bool,
    host_dirs: tuple[str, ...],
    host_files: tuple[str, ...],
    site_dirs: tuple[str, ...],
    run_as_user: int,
    groups: tuple[int, ...],
    tolerations: tuple[str, ...],
    device_resource: str | None,
    textfile_dir: str | None,
    certificate: str | None,
    as_json: bool,
    matrix_paths: tuple[str, ...] = (),
    target_items: tuple[str, ...] = (),
    targets_file: str | None = None,
) -> int:
    """Render a DaemonSet (+ RBAC, + the target as a ConfigMap) that judges and labels every NPU node.

    With --target a2=ID,310p=LOCK (or --targets FILE) one DaemonSet per family, NAME-FAMILY: each
    agent labels only the nodes of its family. With --matrix the site matrix travels in the
    ConfigMap and every agent judges with it."""
    import json

    from cannenv import matrix
    from cannenv.fleet.k8s import dump_manifest, render_manifest

    _refuse_image_tag(image, allow_tag)
    from cannenv.hardware import FAMILY_IDS

    node_selector: dict[str, str] = {}
    per_family_selector: dict[str, dict[str, str]] = {}
    for item in selectors:
        head, sep, rest = item.partition("=")
        if head in FAMILY_IDS and "=" in rest:  # FAMILY=KEY=VALUE
            key, _, value = rest.partition("=")
            if not key:
                raise InputError(f"--node-selector {item!r}: expected FAMILY=KEY=VALUE")
            per_family_selector.setdefault(head, {})[key] = value
            continue
        if not sep or not head:
            raise InputError(f"--node-selector {item!r}: expected KEY=VALUE or FAMILY=KEY=VALUE")
        node_selector[head] = rest
    per_family: list[tuple[str, str | None, str | None, str | None]] = []  # name, stack, lock, family
    if target_items or targets_file:
        from cannenv.fleet.targets import spec_of, target_map

        if stack_id or lock_file:
            raise InputError(
                "give the targets as --target/--targets or one target as --stack/--lock, not both",
                hint="a default target would judge the other families' nodes too; name each family",
            )
        tmap = target_map(target_items=target_items, targets_file=targets_file, node_groups={})
        if tmap.groups:
            raise InputError(
                "inventory groups have no meaning in a cluster: the DaemonSets take families only",
                hint="map families (families: {a2: ID}); select nodes with --node-selector",
            )
        for family, text in sorted(tmap.families.items()):
            spec = spec_of(text)
            per_family.append((f"{name}-{family}", spec.stack_id, spec.lock, family))
    elif bool(stack_id) == bool(lock_file):
        raise InputError("give the target as --lock FILE or --stack ID (one of them), or --target FAMILY=…")
    else:
        per_family.append((name, stack_id, lock_file, None))
    named = {f for _, _, _, f in per_family if f is not None}
    unknown = sorted(set(per_family_selector) - named) if named else []
    if unknown:
        raise InputError(
            f"--node-selector {unknown[0]}=…: no --target for {unknown[0]}",
            hint="name a family's nodes only for a family the manifest has a target for",
        )
    site: list[tuple[str, str]] = []
    if matrix_paths:
        from cannenv import records
        from cannenv.matrix.loader import matrix_files

        matrix.load(list(matrix_paths))  # a site matrix that does not load is refused here
        site = [(f.name, records.read_text(f, what="matrix file")) for f in matrix_files(matrix_paths)]
    objects = []
    for object_name, one_stack, one_lock, for_family in per_family:
        lock_text = None
        digest = None
        m = matrix.load(list(matrix_paths) or None)
        if one_lock:
            from cannenv import records
            from cannenv.checks.stack import load_lock_ids
            from cannenv.errors import NotFoundError

            locked_id = load_lock_ids(one_lock)[0]  # a lock it cannot read is refused here, not in every pod
            lock_text = records.read_text(one_lock, what="lock file", missing=NotFoundError)
            stack = m.stack(locked_id)
        else:
            stack = m.stack(str(one_stack))  # unknown id: NotFoundError with a did-you-mean hint
            digest = m.digest
        if for_family is None and per_family_selector and set(per_family_selector) != {stack.family}:
            raise InputError(
                f"--node-selector {', '.join(sorted(per_family_selector))}=…: the target is for "
                f"{stack.family} only",
                hint=f"name {stack.family}'s nodes (--node-selector {stack.family}=KEY=VALUE) or give one "
                "target per family (--target FAMILY=ID)",
            )
        if for_family is not None and stack.family != for_family:
            raise InputError(
                f"--target {for_family}={one_lock or one_stack}: stack {stack.id} is for "
                f"{stack.family}, not {for_family}",
                hint=f"pick a stack for {for_family}: `cannenv matrix list --family {for_family}`",
            )
        objects += render_manifest(
            image,
            stack_id=one_stack,
            lock_text=lock_text,
            matrix_digest=digest,
            name=object_name,
            namespace=namespace,
            role=role,
            extra_host_paths=host_dirs,
            extra_host_files=host_files,
            site_packages=site_dirs,
            run_as_user=run_as_user,
            supplemental_groups=groups,
            interval=interval,
            node_selector=node_selector or None,
            family=stack.family,
            nfd=nfd,
            family_selector=per_family_selector.get(stack.family),
            tolerations=tolerations,
            device_resource=device_resource,
            textfile_dir=textfile_dir,
            certificate=certificate,
            matrix_files=site,
        )
    if as_json:
        click.echo(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2))
    else:
        click.echo(dump_manifest(objects), nl=False)
    return 0


def _refuse_image_tag(image: str, allow_tag: bool) -> None:
    """The agent's image named by a tag is refused (exit 5) unless --allow-tag, as `image lock` does
    for a base image: every node pulls it, and a tag can name other bytes on each pull."""
    from cannenv.errors import IntegrityError
    from cannenv.lock import is_digest_ref
    from cannenv.sanitize import line

    if is_digest_ref(image):
        return
    if not allow_tag:
        raise IntegrityError(
            f"--image {line(image)} is a tag, not a digest: a tag can name other bytes tomorrow, so "
            "the nodes would not all run the same agent",
            hint="push the image and give --image REGISTRY/REPO@sha256:<digest> (`docker inspect "
            "--format '{{index .RepoDigests 0}}' IMAGE`); or pass --allow-tag",
        )
    click.echo(f"note: --image {line(image)} is a tag, not a digest (accepted with --allow-tag)", err=True)


def _read_token(token_file: str | None) -> str | None:
    """A service-account token file: bounded, regular files only (a token is a few KiB)."""
    if not token_file:
        return None
    from cannenv.records import read_text

    return read_text(token_file, what="token file", max_bytes=64 * 1024).strip()


@fleet.command("k8s-image")
@click.option("--out", required=True, metavar="DIR", help="Where to write the build context.")
@click.option(
    "--base-image",
    default="python:3.12-slim",
    show_default=True,
    metavar="IMAGE",
    help="A small Python base; pin it: NAME@sha256:<digest>.",
)
@click.option(
    "--cannenv-wheel", metavar="FILE", help="The cannenv wheel (default: built from this checkout)."
)
@click.option(
    "--wheelhouse",
    metavar="DIR",
    help="Install cannenv's dependencies from these wheels only (pip --no-index): for builders "
    "without access to a package index.",
)
def k8s_image_cmd(out: str, base_image: str, cannenv_wheel: str | None, wheelhouse: str | None) -> int:
    """Write the build context of the slim doctor-only image the DaemonSet runs (then `docker build`)."""
    import shutil
    from pathlib import Path

    from cannenv.fleet.k8s import render_image_dockerfile
    from cannenv.fsutil import atomic_write_text

    dest = Path(out)
    dest.mkdir(parents=True, exist_ok=True)
    if cannenv_wheel:
        wheel = Path(cannenv_wheel)
        if not wheel.is_file():
            raise InputError(f"--cannenv-wheel {cannenv_wheel!r} is not a file")
        if wheel.resolve() != (dest / wheel.name).resolve():
            shutil.copyfile(wheel, dest / wheel.name)
    else:
        from cannenv.artifacts import build_cannenv_wheel

        wheel = build_cannenv_wheel(dest)
    wheels = dest / "wheels"
    wheels.mkdir(exist_ok=True)
    if wheelhouse:
        house = Path(wheelhouse)
        if not house.is_dir():
            raise InputError(f"--wheelhouse {wheelhouse!r} is not a directory")
        found = sorted(w for w in house.glob("*.whl") if w.is_file() and not w.is_symlink())
        if not found:
            raise InputError(f"--wheelhouse {wheelhouse!r} holds no .whl file")
        for w in found:
            shutil.copyfile(w, wheels / w.name)
    atomic_write_text(
        dest / "Dockerfile", render_image_dockerfile(wheel.name, base_image, offline=bool(wheelhouse))
    )
    click.echo(f"wrote {dest / 'Dockerfile'} and {dest / wheel.name}")
    from cannenv.lock import is_digest_ref

    if not is_digest_ref(base_image):
        click.echo(
            f"note: {base_image} is a tag, not a pin; give --base-image NAME@sha256:<digest>", err=True
        )
    click.echo(f"next: docker build -t REGISTRY/cannenv-doctor:TAG {dest}")
    return 0


@fleet.command("k8s-agent")
@click.option("--root", default="/host", show_default=True, metavar="DIR", help="The node's filesystem.")
@click.option("--node", required=True, metavar="NAME", help="This node's name (spec.nodeName).")
@click.option("--stack", "stack_id", metavar="ID", help="Judge against this stack.")
@click.option("--matrix-digest", metavar="DIGEST", help="With --stack: refuse to judge with another matrix.")
@click.option("--lock", "lock_file", metavar="FILE", help="Judge against this lock file.")
@click.option(
    "--role",
    type=click.Choice(["full", "hdk"]),
    default="full",
    show_default=True,
    help="hdk: the node carries only driver and firmware; CANN and torch are not judged.",
)
@click.option("--interval", type=click.IntRange(1), default=3600, show_default=True, metavar="SECONDS")
@click.option("--once", is_flag=True, help="One round, then exit (status 0 when the node was judged).")
@click.option("--ready-file", metavar="FILE", help="Present while the last judgement succeeded (readiness).")
@click.option("--prometheus", "prometheus_file", metavar="FILE", help="Write node metrics here each round.")
@click.option(
    "--site-packages",
    "site_dirs",
    multiple=True,
    metavar="DIR",
    help="Read the Python packages from this folder on the node (repeatable; e.g. a venv's "
    "site-packages) instead of the system interpreter's.",
)
@_label_api_options
@click.option("--dry-run", is_flag=True, help="Print each round's patch (JSON) instead of sending it.")
@DRIVER_POLICY
@MATRIX
def k8s_agent_cmd(
    root: str,
    node: str,
    stack_id: str | None,
    matrix_digest: str | None,
    lock_file: str | None,
    role: str,
    interval: int,
    once: bool,
    ready_file: str | None,
    prometheus_file: str | None,
    site_dirs: tuple[str, ...],
    certificate: str | None,
    api: str | None,
    token_file: str | None,
    dry_run: bool,
    driver_policy: str = "accepted",
    matrix_paths: tuple[str, ...] = (),
) -> int:
    """The DaemonSet's container: judge this node, label it, write metrics; again every --interval."""
    import json
    import sys
    import time
    from pathlib import Path

    from cannenv.errors import CannenvError, ExternalError
    from cannenv.fleet.k8s import apply_labels, judge_node
    from cannenv.fsutil import atomic_write_text

    if bool(stack_id) == bool(lock_file):
        raise InputError("give the target as --lock FILE or --stack ID (one of them)")
    token = _read_token(token_file)
    while True:
        ok = False
        try:
            report, patch = judge_node(
                root,
                stack_id=stack_id,
                lock=lock_file,
                matrix_digest=matrix_digest,
                certificate=certificate,
                driver_policy=driver_policy,
                role=role,
                matrix_paths=matrix_paths,
                site_packages=site_dirs,
            )
            if prometheus_file:
                from cannenv.prometheus import render_node

                try:
                    atomic_write_text(prometheus_file, render_node(report, timestamp=time.time()))
                except OSError as exc:
                    raise ExternalError(
                        f"cannot write the metrics file {prometheus_file}: {exc.strerror or exc}",
                        hint="the textfile directory must be writable by the agent's user "
                        "(--run-as-user, --supplemental-group)",
                    ) from None
            if patch is None:
                family = report.host.get("family")
                click.echo(
                    f"not labelled: {node} is a {family} node and this target is for another family "
                    "(another DaemonSet's target is for it)"
                )
            elif dry_run:
                click.echo(json.dumps(patch, sort_keys=True))
            else:
                apply_labels(node, patch, api=api, token=token)
                labels = patch["metadata"]["labels"]
                click.echo(f"labelled {node}: " + ", ".join(f"{k}={v}" for k, v in labels.items()))
            ok = True
        except CannenvError as exc:  # this round failed: say so, stay up, try again next round
            click.echo(f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else ""), err=True)
        if ready_file:
            if ok:
                atomic_write_text(ready_file, time.strftime("%Y-%m-%dT%H:%M:%SZ\n", time.gmtime()))
            else:
                Path(ready_file).unlink(missing_ok=True)
        if once:
            return 0 if ok else 6
        sys.stdout.flush()
        time.sleep(interval)


@fleet.command("k8s-label")
@click.option(
    "--report", "report_file", required=True, metavar="FILE", help="`cannenv doctor --json` output."
)
@click.option("--node", required=True, metavar="NAME", help="This node's name (spec.nodeName).")
@_label_api_options
@click.option("--dry-run", is_flag=True, help="Print the patch instead of sending it.")
def k8s_label_cmd(
    report_file: str,
    node: str,
    certificate: str | None,
    api: str | None,
    token_file: str | None,
    dry_run: bool,
) -> int:
    """Label this node from a doctor report (used inside the DaemonSet)."""
    import json
    from pathlib import Path

    from cannenv import records
    from cannenv.fleet.k8s import apply_labels, failing_checks, label_patch, node_labels
    from cannenv.fsutil import sha256_file

    text = records.read_text(report_file, what="doctor report")
    report = records.parse_json(text, source=f"doctor report {report_file}")
    if not isinstance(report, dict):
        raise InputError(f"doctor report {report_file}: expected a JSON object (`cannenv doctor --json`)")
    digest = None
    if certificate and Path(certificate).is_file():
        digest = "sha256:" + sha256_file(certificate)
    patch = label_patch(node_labels(report, digest), digest, failing=failing_checks(report))
    if dry_run:
        click.echo(json.dumps(patch, indent=2, sort_keys=True))
        return 0
    token = _read_token(token_file)
    apply_labels(node, patch, api=api, token=token)
    click.echo(f"labelled {node}: " + ", ".join(f"{k}={v}" for k, v in patch["metadata"]["labels"].items()))
    return 0


@fleet.command("bundle")
@click.option("--out", default="cannenv.pyz", show_default=True, metavar="FILE")
def bundle_cmd(out: str) -> int:
    """Build the self-contained cannenv (a zipapp) that `fleet collect` and the Ansible role push.

    Pure Python, no native code: one file runs on any Python >= 3.7, whatever the host's machine
    or libc (`python3 cannenv.pyz facts --json`). An older Python is told what it needs (exit 3).
    """
    from cannenv.fleet.zipapp import MIN_PYTHON, build_bundle

    b = build_bundle(out)
    click.echo(f"{b.path}  {b.size} bytes  {b.files} files  sha256 {b.sha256}")
    click.echo(f"runs on: Python >= {MIN_PYTHON[0]}.{MIN_PYTHON[1]}, any machine and libc (pure Python)")
    click.echo("carries: " + ", ".join(b.modules))
    if b.left_out:
        click.echo("left out (native speed-ups with a pure-Python fallback): " + ", ".join(b.left_out))
    return 0


COMMANDS: list[click.Command] = [fleet]
