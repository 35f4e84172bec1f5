"""`cannenv certify` (levels 1-3, llm, perf, kernels) and `cannenv cert` (verify, diff, replay, keygen).

Heavy imports (torch, numpy, the probes) stay inside the command functions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import click

from cannenv.errors import InputError, IntegrityError

if TYPE_CHECKING:
    from cannenv.certify.certificate import Certificate
    from cannenv.certify.kernel_toolkit import Flow, Mode
    from cannenv.certify.runner import CertifyOptions, Scope
    from cannenv.certify.stages import StagePlan, StageResult

_STATUS_STYLE = {"pass": "green", "fail": "red", "skip": "yellow", "error": "magenta"}


def _common(fn: Any) -> Any:
    """Options shared by `certify`, `certify llm` and `certify perf`."""
    for deco in reversed(
        (
            click.option(
                "--stack", "stack_id", help="Stack id from the matrix to certify against (recorded)."
            ),
            click.option(
                "--lock",
                "lock",
                metavar="FILE",
                help="Certify against the stack of this lock file (`cannenv image lock`); recorded whole.",
            ),
            click.option(
                "--out",
                "out",
                type=click.Path(dir_okay=False),
                help="Write the certificate here (atomically), whatever the outcome. Its folder must exist.",
            ),
            click.option(
                "--sign-key",
                type=click.Path(dir_okay=False),
                help="ed25519 private key (PEM or OpenSSH) to sign the certificate with.",
            ),
            click.option(
                "--json", "as_json", is_flag=True, help="Print the certificate JSON instead of the table."
            ),
            click.option("--strict", is_flag=True, help="A skipped stage counts as failed: partial exits 1."),
            click.option(
                "--device",
                type=click.Choice(["npu", "cuda", "cpu"]),
                default="npu",
                show_default=True,
                help="Device to certify; the reference always runs on the CPU in fp32. "
                "cpu/cuda: the doctor stage skips its NPU device checks.",
            ),
            click.option(
                "--no-devices",
                is_flag=True,
                envvar="CANNENV_NO_DEVICES",
                help="The doctor stage judges software only (device checks skip), as `cannenv doctor "
                "--no-devices`; env CANNENV_NO_DEVICES=1.",
            ),
            click.option(
                "--root",
                default="/",
                show_default=True,
                metavar="DIR",
                help="Judge the host tree under DIR (doctor stage); device stages then skip.",
            ),
            click.option(
                "--env-file",
                metavar="FILE",
                help="Judge the environment in FILE (KEY=VALUE lines) instead of this process's.",
            ),
            click.option(
                "--timeout",
                "timeout_s",
                type=click.FloatRange(0, 86400, min_open=True),
                default=900.0,
                show_default=True,
                help="Seconds each device run may take before it counts as a hang.",
            ),
            click.option(
                "--matrix",
                "matrix_paths",
                multiple=True,
                metavar="PATH",
                help="Matrix files/dirs (default: shipped): a site matrix the --stack comes from.",
            ),
        )
    ):
        fn = deco(fn)
    return fn


def _llm_options(fn: Any) -> Any:
    for deco in reversed(
        (
            click.option(
                "--dtype",
                type=click.Choice(["auto", "bf16", "fp16", "fp32"]),
                default="auto",
                show_default=True,
                help="Device dtype (auto: bf16; fp16 on 310P).",
            ),
            click.option(
                "--model",
                "model_dir",
                type=click.Path(file_okay=False),
                help="Also certify a local Hugging Face checkpoint (needs transformers).",
            ),
            click.option("--profile", is_flag=True, help="Profile the forward; report the top operators."),
            click.option("--seed", type=int, default=0, show_default=True, help="Seed of weights and input."),
        )
    ):
        fn = deco(fn)
    return fn


@click.group("certify", invoke_without_command=True)
@click.option(
    "--level",
    type=click.IntRange(1, 3),
    default=3,
    show_default=True,
    help="1 = doctor, 2 = + smoke kernels, 3 = + LLM forward pass and performance.",
)
@_common
@_llm_options
@click.pass_context
def certify(ctx: click.Context, /, level: int, **kw: Any) -> int | None:
    """Certify this host: run the stages of a level and write a certificate.

    \b
    The plan is printed first; every stage ends pass, fail, skip or error with its reasons.
    Exit codes by outcome (plain / --strict):
      certified 0/0 · partial 0/1 · failed 1/1 · not-certified 4/4 · nothing-runnable 4/4;
      2 bad input (checked before anything runs) · 3 unknown --stack.
    A skipped stage is recorded as such and never certified.
    """
    if ctx.invoked_subcommand is not None:
        ctx.obj = {**(ctx.obj or {}), "parent": kw}
        return None
    return _execute(command="certify", scope="all", level=level, **kw)


@certify.command("llm")
@_common
@_llm_options
def llm_cmd(**kw: Any) -> int:
    """Tiny Llama-style decoder on the device vs the CPU float32 reference (and torch_npu fused ops)."""
    return _execute(command="certify llm", scope="llm", level=3, **kw)


@certify.command("perf")
@_common
def perf_cmd(**kw: Any) -> int:
    """Matmul throughput and copy bandwidth on the device, as a ratio to its peak."""
    return _execute(
        command="certify perf",
        scope="perf",
        level=3,
        dtype="auto",
        model_dir=None,
        profile=False,
        seed=0,
        **kw,
    )


@certify.command("kernels")
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
def kernels_cmd(
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
    from pathlib import Path

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
        click.echo(_text(render_plan(report.plan)))
        click.echo(_line(report.summary))
    else:
        click.echo(_text(render_report(report, verbose=verbose)))
    if dry_run or self_test:
        # A dry run runs nothing; the harness self-test certifies nothing either way: pass or fail.
        return 1 if report.status in ("fail", "error") else 0
    # As `cannenv certify`: nothing certified is never exit 0 (docs/certify.md, outcome table).
    from cannenv.certify.stages import exit_code

    return exit_code([report.to_stage_result()])


def _check_out(out: str | None) -> None:
    """--out must name a file in an existing folder: refuse before anything runs (exit 2)."""
    from pathlib import Path

    if not out:
        return
    parent = Path(out).parent
    if not parent.is_dir():
        raise InputError(
            f"--out {out!r}: folder {str(parent)!r} does not exist",
            hint=f"create it first (mkdir -p {parent}); cannenv does not create folders for a certificate",
        )
    if Path(out).is_dir():
        raise InputError(f"--out {out!r} is a directory", hint="give a file name, e.g. cert.json")


def _execute(
    *,
    command: str,
    scope: str,
    level: int,
    stack_id: str | None,
    lock: str | None,
    out: str | None,
    sign_key: str | None,
    as_json: bool,
    strict: bool,
    device: str,
    no_devices: bool,
    root: str,
    env_file: str | None,
    timeout_s: float,
    dtype: str,
    model_dir: str | None,
    profile: bool,
    seed: int,
    matrix_paths: tuple[str, ...] = (),
) -> int:
    from cannenv.certify import certificate as certmod
    from cannenv.certify import runner, setup
    from cannenv.certify.stages import exit_code
    from cannenv.gather import make_host

    # Bad input fails here, before anything runs (exit 2; exit 3 for an unknown --stack).
    if stack_id and lock:
        raise InputError("give either --stack or --lock, not both")
    key = certmod.load_private_key(sign_key) if sign_key else None
    _check_out(out)
    checkpoint = None
    if model_dir is not None:
        from cannenv.certify.checkpoint import inspect

        checkpoint = inspect(model_dir)
    if stack_id is not None:
        from cannenv.matrix import load

        load(list(matrix_paths) or None).stack(stack_id)
    if lock is not None:
        from cannenv.lock import load_lock

        load_lock(lock)
    host = make_host(root, env_file, 10.0)
    options = runner.CertifyOptions(
        level=level,
        stack_id=stack_id,
        device=device,
        dtype=dtype,
        model_dir=model_dir,
        profile=profile,
        seed=seed,
        timeout_s=timeout_s,
        no_devices=no_devices,
        lock=lock,
        matrix_paths=tuple(matrix_paths),
    )
    plans = runner.plan(options, cast("Scope", scope))

    def echo(text: str) -> None:
        click.echo(_text(text), err=as_json)  # with --json, stdout carries only the certificate

    echo(_render_plan(plans, options))
    started = certmod.now()
    ctx = runner.RunContext(options, host, checkpoint=checkpoint)
    render = _ResultRenderer()
    results = runner.run(plans, options, on_result=lambda r: echo(render(r)), context=ctx)
    cert = certmod.Certificate.build(
        results,
        command=command,
        level=level if scope == "all" else None,
        started_at=started,
        stack=setup.stack_info(ctx),
        host=setup.host_info(ctx),
        image=setup.image_info(ctx.host.env, ctx.host),
        options=options.model_dump(mode="json"),
    )
    if out:
        path = certmod.write(cert, out, sign_key=key)
        echo(f"certificate: {path}" + (" (signed)" if key else " (unsigned)"))
    if as_json:
        click.echo(certmod.render(certmod.envelope(cert, sign_key=key)), nl=False)
    else:
        echo(_render_verdict(cert, strict=strict))
    return exit_code(results, strict=strict)


# ---------------------------------------------------------------------------------------------
# Rendering (the only printing)


def _render_plan(plans: list[StagePlan], options: CertifyOptions) -> str:
    lines = [
        f"plan: {len(plans)} stage(s), device {options.device}, dtype {options.dtype}"
        + (f", stack {options.stack_id}" if options.stack_id else "")
    ]
    for p in plans:
        lines.append(f"  L{p.level} {p.id:<18} {p.title}  (needs {p.needs})")
    return "\n".join(lines)


class _ResultRenderer:
    """One stage result per call, with its own duration; a hint already shown is not repeated
    (the fused-op and perf stages often share one)."""

    def __init__(self) -> None:
        self.hints_shown: set[str] = set()

    def __call__(self, r: StageResult) -> str:
        badge = click.style(f"{r.status.upper():<5}", fg=_STATUS_STYLE[r.status], bold=True)
        lines = [f"{badge} {r.id:<18} {r.summary}  ({r.duration_s:.1f} s)"]
        lines += [f"        reason: {x}" for x in r.reasons if x not in r.summary]
        lines += [f"        warning: {x}" for x in r.warnings]
        if r.hint and r.status != "pass" and r.hint not in self.hints_shown:
            self.hints_shown.add(r.hint)
            lines.append(f"        hint: {r.hint}")
        return "\n".join(lines)


def _render_verdict(cert: Certificate, *, strict: bool = False) -> str:
    from cannenv.certify.stages import EXIT_CODES

    certified = ", ".join(cert.certified_stages) or "nothing"
    not_cert = ", ".join(f"{k} ({v})" for k, v in cert.not_certified.items()) or "none"
    stack = cert.stack.id or "none"
    if cert.stack.how:
        stack += f" ({cert.stack.how}: {cert.stack.reason})"
    code = EXIT_CODES[cert.outcome][1 if strict else 0]
    return (
        f"stack: {stack}\noutcome: {cert.outcome} (exit {code}{', --strict' if strict else ''})\n"
        f"certified: {certified}\nnot certified: {not_cert}"
    )


# ---------------------------------------------------------------------------------------------
# cannenv cert ...


@click.group("cert")
def cert() -> None:
    """Verify, compare and sign-key helpers for certificates."""


@cert.command("verify")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--pub", type=click.Path(dir_okay=False), help="ed25519 public key the signature must verify against."
)
@click.option("--json", "as_json", is_flag=True, help="Print the verification as JSON.")
def verify_cmd(file: str, pub: str | None, as_json: bool) -> int:
    """Check that FILE is unchanged since it was written (digest, canonical form, signature).

    Exit 5 if not.
    """
    from cannenv.certify.certificate import verify_file

    v = verify_file(file, public_key_path=pub)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": v.ok,
                    "problems": list(v.problems),
                    "sha256": v.sha256,
                    "signed": v.signed,
                    "key_fingerprint": v.key_fingerprint,
                    "outcome": v.certificate.outcome if v.certificate else None,
                },
                indent=2,
            )
        )
    if not v.ok:
        if pub and not v.signed and len(v.problems) == 1:
            raise IntegrityError(
                v.problems[0],
                hint="sign certificates with `cannenv certify --sign-key KEY` to verify them with --pub",
            )
        raise IntegrityError(
            "; ".join(v.problems), hint="the certificate changed after it was written; do not trust it"
        )
    if not as_json:
        assert v.certificate is not None
        how = (
            f"signed by {v.key_fingerprint}"
            + (" (matches --pub)" if pub else " (embedded key; pass --pub to pin it)")
            if v.signed
            else "unsigned: digest intact, but anyone could have rewritten it (sign with --sign-key)"
        )
        click.echo(f"ok: {_line(file)}: sha256 {v.sha256}, {_line(how)}")
        click.echo(
            f"outcome {_line(v.certificate.outcome)}; "
            f"certified: {', '.join(_line(s) for s in v.certificate.certified_stages) or 'nothing'}"
        )
    return 0


@cert.command("diff")
@click.argument("a", type=click.Path(dir_okay=False))
@click.argument("b", type=click.Path(dir_okay=False))
@click.option(
    "--all", "include_volatile", is_flag=True, help="Include timestamps, durations and loop counts."
)
@click.option("--json", "as_json", is_flag=True, help="Print the differences as JSON.")
def diff_cmd(a: str, b: str, include_volatile: bool, as_json: bool) -> int:
    """Show what differs between two certificates (stack, versions, host, stages, metrics).

    Both must verify first (exit 5 otherwise). Exit 0 whether or not they differ.
    """
    from cannenv.certify.certificate import diff, load, stage_summary

    ca, cb = load(a), load(b)
    diffs = diff(ca, cb, include_volatile=include_volatile)
    summary = stage_summary(ca, cb, diffs)
    if as_json:
        click.echo(
            json.dumps(
                {"summary": summary, "differences": [d.model_dump(mode="json") for d in diffs]},
                indent=2,
                default=str,
            )
        )
        return 0
    if not diffs:
        click.echo(
            "no differences"
            + ("" if include_volatile else " (ignoring timestamps and durations; --all to include)")
        )
        return 0
    click.echo(_render_stage_summary(summary))
    # Details: fields of stages present in both, and everything outside the stages. A stage only
    # in one certificate is named once in the summary, not field by field.
    one_sided = {f"stages[{sid}]" for sid in (*summary["only_in_a"], *summary["only_in_b"])}
    details = [d for d in diffs if not any(d.path.startswith(prefix) for prefix in one_sided)]
    if details:
        width = min(60, max(len(d.path) for d in details))
        click.echo(f"\ndetails ({len(details)}):")
        click.echo(f"{'field':<{width}}  A  →  B")
        for d in details:
            extra = f"  [{_line(d.change)}]" if d.change else ""
            click.echo(f"{_line(d.path):<{width}}  {_short(d.a)}  →  {_short(d.b)}{extra}")
    return 0


def _render_stage_summary(summary: dict[str, Any]) -> str:
    lines = [f"outcome: {_line(summary['outcome'][0])}  →  {_line(summary['outcome'][1])}"]
    for key, label in (("only_in_a", "only in A"), ("only_in_b", "only in B")):
        ids = [_line(i) for i in summary[key]]
        lines.append(f"stages {label} ({len(ids)}): {', '.join(ids) if ids else '-'}")
    changed = summary["changed"]
    lines.append(
        f"stages changed ({len(changed)}): "
        + (
            ", ".join(f"{_line(sid)} {_line(x)} → {_line(y)}" for sid, (x, y) in changed.items())
            if changed
            else "-"
        )
    )
    differ = [_line(i) for i in summary["differ"]]
    lines.append(f"stages with other differences ({len(differ)}): {', '.join(differ) or '-'}")
    return "\n".join(lines)


def _text(value: object) -> str:
    """Several terminal lines (a toolkit path from a tree, a compiler's output): escapes visible."""
    from cannenv.sanitize import text

    return text(value)


def _line(value: object) -> str:
    from cannenv.sanitize import line

    return line(value)


def _short(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else _line(v)
    return text if len(text) <= 60 else text[:57] + "..."


@cert.command("replay")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--plan",
    "as_plan",
    is_flag=True,
    help="What THIS machine (or --root/--facts) must install to match: the provisioning plan "
    "toward the certified stack. Without --plan: the setup the certificate records.",
)
@click.option(
    "--root", default="/", show_default=True, metavar="DIR", help="With --plan: plan for this host tree."
)
@click.option(
    "--env-file", metavar="FILE", help="With --plan: the environment of that host (KEY=VALUE lines)."
)
@click.option(
    "--facts",
    "facts_file",
    metavar="FILE",
    help="With --plan: plan for saved facts (`cannenv facts --json`).",
)
@click.option(
    "--arch", help="Without --plan: architecture whose files to list (default: the certified host's)."
)
@click.option("--pub", type=click.Path(dir_okay=False), help="Verify the signature against this key first.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the plan with --plan).")
@click.option(
    "--matrix",
    "matrix_paths",
    multiple=True,
    metavar="PATH",
    help="With --plan: the site matrix the certified stack comes from (default: shipped).",
)
def replay_cmd(
    file: str,
    as_plan: bool,
    root: str,
    env_file: str | None,
    facts_file: str | None,
    arch: str | None,
    pub: str | None,
    as_json: bool,
    matrix_paths: tuple[str, ...] = (),
) -> int:
    """Rebuild the setup FILE certifies: what it records, and what a new machine installs to match.

    \b
    The certificate must verify first (exit 5 otherwise). Nothing is installed.
      cannenv cert replay cert.json          the recorded setup: every pin, file and sha256
      cannenv cert replay cert.json --plan   the ordered plan for this machine toward that stack
                                             (the same plan as `cannenv plan`; exit 1 if not empty)
    """
    from cannenv.certify.certificate import verify_file
    from cannenv.certify.setup import replay_steps

    v = verify_file(file, public_key_path=pub)
    if not v.ok or v.certificate is None:
        raise IntegrityError("; ".join(v.problems), hint="replay only a certificate that verifies")
    cert = v.certificate
    if as_plan and cert.stack.id is not None:
        return _replay_plan(
            file,
            cert,
            root=root,
            env_file=env_file,
            facts_file=facts_file,
            as_json=as_json,
            matrix_paths=matrix_paths,
        )
    replay = replay_steps(cert, arch=arch)
    if as_plan:
        click.echo(
            "note: the certificate names no stack, so there is no plan to compute; its record follows",
            err=True,
        )
    if as_json:
        click.echo(json.dumps(replay.to_json(), indent=2))
        return 0
    # a certificate is hostile input (an unsigned one is self-consistent, not trusted): every value
    # it carries is one terminal line, so it can neither fake an install line nor send escapes
    certified = ", ".join(_line(s) for s in cert.certified_stages) or "nothing"
    click.echo(f"replay of {_line(file)}: outcome {_line(cert.outcome)}, certified {certified}")
    stack = _line(replay.stack_id or "none")
    if replay.how:
        stack += f" ({_line(replay.how)}: {_line(replay.reason)})"
    click.echo(f"stack: {stack}; architecture: {_line(replay.arch or '?')}")
    click.echo("install, in this order:")
    for i, step in enumerate(replay.steps, 1):
        click.echo(f"  {i}. {_line(step.line())}")
    if not replay.steps:
        click.echo("  (nothing recorded to install)")
    for note in replay.notes:
        click.echo(f"note: {_line(note)}")
    return 0


def _replay_plan(
    file: str,
    cert: Certificate,
    *,
    root: str,
    env_file: str | None,
    facts_file: str | None,
    as_json: bool,
    matrix_paths: tuple[str, ...] = (),
) -> int:
    """The provisioning plan (cannenv.plan) from this host's facts toward the certified stack."""
    from cannenv.checks.stack import choose_target
    from cannenv.commands.options import print_plan
    from cannenv.gather import gather
    from cannenv.matrix import load

    matrix = load(list(matrix_paths) or None)
    assert cert.stack.id is not None
    if cert.stack.matrix_digest and cert.stack.matrix_digest != matrix.digest:
        click.echo(
            f"note: certified with matrix {cert.stack.matrix_digest[:19]}…, this cannenv has "
            f"{matrix.digest[:19]}…; the stack's pins are read from this matrix",
            err=True,
        )
    facts = gather(root, facts_file, None, (), env_file, 10.0)
    target = choose_target(facts, matrix, stack_id=cert.stack.id)  # unknown id here: exit 3
    from dataclasses import replace

    why = f"the stack certificate {file} certifies ({cert.outcome})"
    target = replace(target, choice=replace(target.choice, reason=why))
    return print_plan(facts, target, as_json=as_json, as_shell=False, verbose=False)


@cert.command("keygen")
@click.argument("keyfile", type=click.Path(dir_okay=False))
def keygen_cmd(keyfile: str) -> int:
    """Create an ed25519 signing key KEYFILE (mode 0600) and its public half KEYFILE.pub."""
    from cannenv.certify.certificate import generate_keypair

    priv, pub = generate_keypair(keyfile)
    click.echo(f"private key: {priv}\npublic key:  {pub}")
    return 0


COMMANDS: list[click.Command] = [certify, cert]
