"""`cannenv certify` (levels 1-3, llm, perf, kernels) and `cannenv cert` (verify, diff, keygen).

Heavy imports (torch, numpy, the probes) stay inside the command functions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import click

from cannenv.commands.kernels import kernels as kernels_cmd
from cannenv.errors import IntegrityError

if TYPE_CHECKING:
    from cannenv.certify.certificate import Certificate
    from cannenv.certify.runner import CertifyOptions, RunContext, Scope
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
                "--out",
                "out",
                type=click.Path(dir_okay=False),
                help="Write the certificate here (atomically), whatever the outcome.",
            ),
            click.option(
                "--sign-key",
                type=click.Path(dir_okay=False),
                help="ed25519 private key (PEM or OpenSSH) to sign the certificate with.",
            ),
            click.option(
                "--json", "as_json", is_flag=True, help="Print the certificate JSON instead of the table."
            ),
            click.option("--strict", is_flag=True, help="A skipped stage counts as failed (exit 1)."),
            click.option(
                "--device",
                type=click.Choice(["npu", "cuda", "cpu"]),
                default="npu",
                show_default=True,
                help="Device to certify; the reference always runs on the CPU in fp32.",
            ),
            click.option(
                "--timeout",
                "timeout_s",
                type=float,
                default=900.0,
                show_default=True,
                help="Seconds each device run may take before it counts as a hang.",
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
    Exit 1 when a stage failed or errored (with --strict, also when one skipped).
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


certify.add_command(kernels_cmd)


def _execute(
    *,
    command: str,
    scope: str,
    level: int,
    stack_id: str | None,
    out: str | None,
    sign_key: str | None,
    as_json: bool,
    strict: bool,
    device: str,
    timeout_s: float,
    dtype: str,
    model_dir: str | None,
    profile: bool,
    seed: int,
) -> int:
    from cannenv.certify import certificate as certmod
    from cannenv.certify import runner
    from cannenv.certify.stages import exit_code
    from cannenv.host import Host

    key = certmod.load_private_key(sign_key) if sign_key else None  # bad key: fail before running anything
    options = runner.CertifyOptions(
        level=level,
        stack_id=stack_id,
        device=device,
        dtype=dtype,
        model_dir=model_dir,
        profile=profile,
        seed=seed,
        timeout_s=timeout_s,
    )
    stack_info = _stack_info(stack_id)
    plans = runner.plan(options, cast("Scope", scope))

    def echo(text: str) -> None:
        click.echo(text, err=as_json)  # with --json, stdout carries only the certificate

    echo(_render_plan(plans, options))
    started = certmod.now()
    ctx = runner.RunContext(options, Host.live())
    results = runner.run(plans, options, on_result=lambda r: echo(_render_result(r)), context=ctx)
    cert = certmod.Certificate.build(
        results,
        command=command,
        level=level if scope == "all" else None,
        started_at=started,
        stack=stack_info,
        host=_host_info(ctx),
        image=image_info(ctx.host.env, ctx.host),
        options=options.model_dump(mode="json"),
    )
    if out:
        path = certmod.write(cert, out, sign_key=key)
        echo(f"certificate: {path}" + (" (signed)" if key else " (unsigned)"))
    if as_json:
        click.echo(certmod.render(certmod.envelope(cert, sign_key=key)), nl=False)
    else:
        echo(_render_verdict(cert))
    return exit_code(results, strict=strict)


def _stack_info(stack_id: str | None) -> Any:
    from cannenv.certify.certificate import StackInfo
    from cannenv.matrix import load

    matrix = load()
    if stack_id is None:
        return StackInfo(matrix_digest=matrix.digest)
    stack = matrix.stack(stack_id)  # unknown id: NotFoundError (exit 3) before anything runs
    versions = {name: comp.version for name, comp in stack.components.items()}
    return StackInfo(id=stack.id, matrix_digest=matrix.digest, versions=versions)


def _host_info(ctx: RunContext) -> Any:
    """Summary + digest of the doctor's facts; falls back to platform facts if the probes fail."""
    import platform

    from cannenv.certify.certificate import HostInfo, digest_of

    facts = ctx.facts()
    summary: dict[str, Any]
    if facts is None:
        summary = {
            "hostname": platform.node(),
            "arch": platform.machine(),
            "kernel": platform.release(),
            "python": platform.python_version(),
        }
        return HostInfo(
            summary=summary, digest=None, source=f"platform module (probes failed: {ctx.facts_error})"
        )
    data = json.loads(facts.to_json())
    data.pop("collected_at", None)
    active = facts.cann.active_install()
    summary = {
        "hostname": facts.hostname,
        "os": facts.os.pretty_name,
        "arch": facts.os.arch,
        "kernel": facts.os.kernel,
        "driver": facts.driver.version if facts.driver else None,
        "firmware": facts.firmware.version if facts.firmware else None,
        "cann": active.version if active else None,
        "soc": facts.devices.soc,
        "family": facts.devices.family,
        "npus": len(facts.devices.chips),
        "in_container": facts.container.in_container,
        "python": facts.python.version,
        "torch": facts.python.packages.get("torch"),
        "torch_npu": facts.python.packages.get("torch-npu"),
        "device": ctx.device_info,
    }
    return HostInfo(
        summary=summary,
        digest="sha256:" + digest_of(data),
        source="cannenv probes (cannenv facts --json, collected_at excluded from the digest)",
    )


IMAGE_ENV = {"CANNENV_IMAGE_REF": "ref", "CANNENV_IMAGE_ID": "id", "CANNENV_IMAGE_DIGEST": "digest"}


def image_info(env: Any, host: Any) -> Any:
    """The cannenv image this runs in: ``/etc/cannenv/image.json`` (baked in by `cannenv image build`)
    plus ``CANNENV_IMAGE_REF/ID/DIGEST`` from the environment (an image cannot know its own digest;
    pass it with ``docker run -e CANNENV_IMAGE_DIGEST=...``). None outside a cannenv image."""
    from cannenv.certify.certificate import ImageInfo
    from cannenv.gate import IMAGE_INFO, LABEL_STACK

    fields: dict[str, Any] = {}
    labels: dict[str, str] = {}
    sources: list[str] = []
    p = host.path(IMAGE_INFO)
    if p.is_file():
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict):
            sources.append(IMAGE_INFO)
            for key in ("ref", "id", "digest"):
                if isinstance(data.get(key), str):
                    fields[key] = data[key]
            raw_labels = data.get("labels")
            if isinstance(raw_labels, dict):
                labels = {str(k): str(v) for k, v in raw_labels.items()}
            stack = data.get("stack") or labels.get(LABEL_STACK)
            if isinstance(stack, str):
                fields["stack"] = stack
    for var, key in IMAGE_ENV.items():
        if env.get(var):
            fields[key] = env[var]
            sources.append(f"${var}")
    if not sources:
        return None
    return ImageInfo(labels=labels, sources=tuple(sources), **fields)


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


def _render_result(r: StageResult) -> str:
    badge = click.style(f"{r.status.upper():<5}", fg=_STATUS_STYLE[r.status], bold=True)
    lines = [f"{badge} {r.id:<18} {r.summary}"]
    lines += [f"        reason: {x}" for x in r.reasons if x not in r.summary]
    lines += [f"        warning: {x}" for x in r.warnings]
    if r.hint and r.status != "pass":
        lines.append(f"        hint: {r.hint}")
    return "\n".join(lines)


def _render_verdict(cert: Certificate) -> str:
    certified = ", ".join(cert.certified_stages) or "nothing"
    not_cert = ", ".join(f"{k} ({v})" for k, v in cert.not_certified.items()) or "none"
    return f"outcome: {cert.outcome}\ncertified: {certified}\nnot certified: {not_cert}"


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
        click.echo(f"ok: {file}: sha256 {v.sha256}, {how}")
        click.echo(
            f"outcome {v.certificate.outcome}; "
            f"certified: {', '.join(v.certificate.certified_stages) or 'nothing'}"
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
    from cannenv.certify.certificate import diff, load

    diffs = diff(load(a), load(b), include_volatile=include_volatile)
    if as_json:
        click.echo(json.dumps([d.model_dump(mode="json") for d in diffs], indent=2, default=str))
        return 0
    if not diffs:
        click.echo(
            "no differences"
            + ("" if include_volatile else " (ignoring timestamps and durations; --all to include)")
        )
        return 0
    width = min(60, max(len(d.path) for d in diffs))
    click.echo(f"{'field':<{width}}  A  →  B")
    for d in diffs:
        extra = f"  [{d.change}]" if d.change else ""
        click.echo(f"{d.path:<{width}}  {_short(d.a)}  →  {_short(d.b)}{extra}")
    return 0


def _short(v: Any) -> str:
    text = json.dumps(v, default=str) if not isinstance(v, str) else v
    return text if len(text) <= 60 else text[:57] + "..."


@cert.command("keygen")
@click.argument("keyfile", type=click.Path(dir_okay=False))
def keygen_cmd(keyfile: str) -> int:
    """Create an ed25519 signing key KEYFILE (mode 0600) and its public half KEYFILE.pub."""
    from cannenv.certify.certificate import generate_keypair

    priv, pub = generate_keypair(keyfile)
    click.echo(f"private key: {priv}\npublic key:  {pub}")
    return 0


COMMANDS: list[click.Command] = [certify, cert]
