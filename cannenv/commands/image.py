"""`cannenv image render|build|lock|verify|run-args` and `cannenv gate` (the image's entrypoint)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cannenv.errors import ChecksFailed, InputError

if TYPE_CHECKING:
    from cannenv.artifacts import VerifiedInstaller
    from cannenv.engine import Engine
    from cannenv.image import BuildContext, ImageSpec

DEFAULT_REPOSITORY = "cannenv/stack"


@dataclass(frozen=True)
class _Prepared:
    spec: ImageSpec
    ctx: BuildContext
    verified: tuple[VerifiedInstaller, ...]


def _stack_options(f: Any) -> Any:
    f = click.option(
        "--matrix",
        "matrix_paths",
        multiple=True,
        type=click.Path(path_type=Path),
        help="Matrix files or folders to use instead of the shipped matrix (repeatable).",
    )(f)
    f = click.option(
        "--arch",
        type=click.Choice(["x86_64", "aarch64"]),
        default=None,
        help="Target architecture (default: the stack's only one, else this machine's).",
    )(f)
    f = click.option(
        "--os",
        "os_id",
        default="ubuntu22.04",
        show_default=True,
        help="Base OS profile from dockerfiles/os.yaml (ubuntu22.04, preinstalled, …).",
    )(f)
    f = click.option(
        "--base-image", default=None, help="Base image reference, ideally pinned: NAME@sha256:<digest>."
    )(f)
    f = click.option(
        "--wheelhouse",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Local wheels (torch, torch_npu, their deps) installed hash-pinned and offline.",
    )(f)
    f = click.option(
        "--cannenv-wheel",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="cannenv wheel to install (default: built from this checkout, else from PyPI).",
    )(f)
    f = click.option(
        "--allow-unpinned",
        is_flag=True,
        help="Accept installers whose sha256 the matrix does not pin (recorded in the lock).",
    )(f)
    return f


def _prepare(
    stack_id: str,
    *,
    matrix_paths: tuple[Path, ...],
    arch: str | None,
    os_id: str,
    base_image: str | None,
    wheelhouse: Path | None,
    cannenv_wheel: Path | None,
    artifacts: Path | None,
    allow_unpinned: bool,
    wheel_dir: Path | None,
) -> _Prepared:
    from cannenv import matrix
    from cannenv.artifacts import build_cannenv_wheel, source_checkout, verify_installers
    from cannenv.image import RenderOptions, render, scan_wheelhouse, spec_from_stack, wheel_from_file

    m = matrix.load(list(matrix_paths) if matrix_paths else None)
    spec = spec_from_stack(m.stack(stack_id), m, arch=arch)
    verified = verify_installers(spec, artifacts, allow_unpinned=allow_unpinned) if artifacts else ()
    wheels = scan_wheelhouse(wheelhouse) if wheelhouse else None
    cw = None
    if cannenv_wheel is not None:
        cw = wheel_from_file(cannenv_wheel)
    elif wheel_dir is not None and (checkout := source_checkout()) is not None:
        cw = wheel_from_file(build_cannenv_wheel(wheel_dir, source=checkout))
    options = RenderOptions(
        os=os_id, base_image=base_image, wheels=wheels, cannenv_wheel=cw, verified_installers=verified
    )
    return _Prepared(spec, render(spec, options), verified)


def _default_tag(stack_id: str) -> str:
    import re

    return f"{DEFAULT_REPOSITORY}:{re.sub(r'[^A-Za-z0-9_.-]', '-', stack_id)[:128]}"


@click.group("image")
def image() -> None:
    """Render, build, lock and verify Docker images for matrix stacks."""


@image.command("render")
@click.argument("stack_id")
@_stack_options
@click.option(
    "--artifacts",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Directory with the vendor's installer files (verified and placed into the context).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Write the build context here (new or empty directory); without it, print the Dockerfile.",
)
def render_cmd(stack_id: str, out: Path | None, **kw: Any) -> int:
    """Render the build context for STACK_ID (pure: no Docker, no network)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cannenv-wheel-") as tmp:
        prep = _prepare(stack_id, wheel_dir=Path(tmp) if out else None, **kw)
        if out is None:
            click.echo(prep.ctx.dockerfile, nl=False)
            return 0
        prep.ctx.write(out)
    click.echo(f"wrote build context for {prep.spec.stack_id} to {out} (context sha256 {prep.ctx.digest})")
    if not prep.verified:
        click.echo(
            "note: no --artifacts given: put the installer files into installers/ before building: "
            + ", ".join(i.file for i in prep.spec.installers),
            err=True,
        )
    return 0


@image.command("build")
@click.argument("stack_id")
@_stack_options
@click.option(
    "--artifacts",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Directory with the vendor's installer files.",
)
@click.option("--tag", default=None, help=f"Image tag (default {DEFAULT_REPOSITORY}:<stack id>).")
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the lock file here after the build.",
)
@click.option("--no-cache", is_flag=True, help="Do not reuse cached layers.")
@click.option("--quiet", "-q", is_flag=True, help="Do not stream the build log.")
def build_cmd(
    stack_id: str, tag: str | None, lock_path: Path | None, no_cache: bool, quiet: bool, **kw: Any
) -> int:
    """Build the image for STACK_ID with the local Docker engine."""
    import tempfile

    from rich.console import Console
    from rich.text import Text

    from cannenv.engine import BuildEvent, Engine
    from cannenv.image import lock_for
    from cannenv.lock import write_lock

    console = Console(stderr=True, highlight=False)
    engine = Engine.connect()  # fail fast, before hashing GBs of installers
    with tempfile.TemporaryDirectory(prefix="cannenv-build-") as tmp:
        prep = _prepare(stack_id, wheel_dir=Path(tmp) / "wheel", **kw)
        ctx_dir = prep.ctx.write(Path(tmp) / "context")
        ref = tag or _default_tag(prep.spec.stack_id)

        def show(ev: BuildEvent) -> None:
            if quiet:
                return
            if ev.kind == "step":
                line = Text(f"step {ev.step}/{ev.total} ", style="bold cyan")
                line.append(ev.text)
                console.print(line, soft_wrap=True)
            elif ev.kind == "cached":
                console.print("  [green]cached[/]", markup=True)
            elif ev.kind == "error":
                console.print(Text(ev.text, style="red"))
            else:
                console.print(f"  {ev.text}", markup=False, soft_wrap=True)

        result = engine.build(ctx_dir, ref, on_event=show, nocache=no_cache)
    info = result.info
    if lock_path is not None:
        lock = lock_for(
            prep.spec,
            prep.ctx,
            prep.verified,
            base_image_digest=_base_digest(engine, prep.ctx.base_image),
            image_id=info.id,
            tag=ref,
        )
        write_lock(lock_path, lock)
        click.echo(f"lock: {lock_path}")
    click.echo(f"image: {ref}")
    click.echo(f"id: {info.id}")
    click.echo(f"digest: {info.digest or '(none: local image, not pushed)'}")
    click.echo(f"steps: {len(result.steps)} ({result.cached_steps} from cache) in {result.duration_s:.1f} s")
    return 0


def _base_digest(engine: Engine | None, base_image: str) -> str | None:
    """The pinned digest of ``base_image``, else what the engine knows of it (None without one)."""
    if "@" in base_image:
        return base_image.split("@", 1)[1]
    if engine is None:
        return None
    try:
        info = engine.inspect(base_image)
    except Exception:
        return None
    return str(info.digest or info.id)


@image.command("lock")
@click.argument("stack_id")
@_stack_options
@click.option(
    "--artifacts",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Directory with the vendor's installer files.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("cannenv.lock.json"),
    show_default=True,
    help="Lock file to write or update.",
)
@click.option(
    "--image",
    "image_ref",
    default=None,
    help="Record this built image's id (needs the engine); default: keep the id already in "
    "the lock when nothing else changed.",
)
def lock_cmd(stack_id: str, out: Path, image_ref: str | None, **kw: Any) -> int:
    """Write or update the lock file of STACK_ID (stack, matrix digest, inputs and their digests)."""
    import tempfile

    from cannenv.image import lock_for
    from cannenv.lock import load_lock, write_lock

    with tempfile.TemporaryDirectory(prefix="cannenv-lock-") as tmp:
        prep = _prepare(stack_id, wheel_dir=Path(tmp), **kw)
    engine = image_id = tag = None
    if image_ref is not None or "@" not in prep.ctx.base_image:
        from cannenv.engine import Engine
        from cannenv.errors import MissingToolError

        try:
            engine = Engine.connect(timeout=30)
        except MissingToolError:
            if image_ref is not None:
                raise
    if engine is not None and image_ref is not None:
        image_id, tag = engine.inspect(image_ref).id, image_ref
    new = lock_for(
        prep.spec,
        prep.ctx,
        prep.verified,
        base_image_digest=_base_digest(engine, prep.ctx.base_image),
        image_id=image_id,
        tag=tag,
    )
    if out.exists() and image_id is None:
        old = load_lock(out)
        if old.context_digest == new.context_digest and old.image_id:
            new = new.model_copy(update={"image_id": old.image_id, "tag": old.tag})
    write_lock(out, new)
    click.echo(
        f"wrote {out} (stack {new.stack_id}, context {new.context_digest[:12]}, "
        f"image {new.image_id or 'not built'})"
    )
    for note in new.notes:
        click.echo(f"note: {note}", err=True)
    return 0


@image.command("verify")
@click.argument("tag")
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def verify_cmd(tag: str, as_json: bool) -> int:
    """Run `cannenv doctor --json` inside image TAG with no devices and judge the result.

    Software checks must pass; device checks must report skip (never fail, never pass).
    """
    from cannenv.engine import Engine
    from cannenv.errors import ExitCode, ExternalError
    from cannenv.gate import LABEL_STACK
    from cannenv.image import judge_verify

    engine = Engine.connect()
    info = engine.inspect(tag)
    argv = ["cannenv", "doctor", "--json", "--no-devices"]
    stack = info.labels.get(LABEL_STACK)
    res = engine.run(tag, [*argv, "--stack", stack] if stack else argv)
    if stack and res.exit_code == ExitCode.NOT_FOUND:
        # built from a matrix file the image's cannenv does not ship: judge against the best match
        res = engine.run(tag, argv)
    try:
        report = json.loads(res.stdout)
    except ValueError:
        raise ExternalError(
            f"`{' '.join(argv)}` in {tag} printed no JSON (exit {res.exit_code})",
            hint=(res.stderr or res.stdout).strip()[-1500:] or None,
        ) from None
    outcome = judge_verify(report)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "image": tag,
                    "ok": outcome.ok,
                    "problems": list(outcome.problems),
                    "software": [list(x) for x in outcome.software],
                    "device": [list(x) for x in outcome.device],
                },
                indent=2,
            )
        )
    else:
        click.echo(f"{tag}: {len(outcome.software)} software checks, {len(outcome.device)} device checks")
        for p in outcome.problems:
            click.echo(f"  problem: {p}")
        click.echo("verified" if outcome.ok else "NOT verified")
    if not outcome.ok:
        raise ChecksFailed(f"image {tag} failed verification ({len(outcome.problems)} problems)")
    return 0


@image.command("run-args")
@click.option("--devices", default="0", show_default=True, help="NPU ids, e.g. 0,1 or 0-7.")
@click.option("--image", "image_ref", default=None, help="Append this image to the printed command.")
@click.option("--json", "as_json", is_flag=True, help="Print the flags as a JSON list.")
def run_args_cmd(devices: str, image_ref: str | None, as_json: bool) -> int:
    """Print the `docker run` device and mount flags an NPU host needs (versions.md §6.3)."""
    import re

    from cannenv.image import run_args

    if image_ref is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,511}", image_ref):
        raise InputError(
            f"--image {image_ref!r} is not an image reference",
            hint="e.g. --image registry.example/cannenv/a2:8.5.0 or name@sha256:<digest>",
        )
    flags = run_args(devices)
    if as_json:
        click.echo(json.dumps(flags))
    else:
        import shlex

        parts = ["docker run", *(f"{flags[i]} {shlex.quote(flags[i + 1])}" for i in range(0, len(flags), 2))]
        if image_ref:
            parts.append(shlex.quote(image_ref))  # a shell line: the value is data, never code
        click.echo(" \\\n    ".join(parts))
    return 0


@click.command("gate", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--require", default=None, help="Driver range to enforce (default: the image's label).")
@click.option(
    "--root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Judge a host tree under this directory instead of / (tests).",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def gate_cmd(require: str | None, root: Path | None, command: tuple[str, ...]) -> int:
    """Refuse to start when the host NPU driver does not fit the image; else run COMMAND.

    The image's entrypoint: `cannenv gate -- CMD...`. CANNENV_DISABLE_REQUIRE=1 bypasses it.
    """
    import os

    from cannenv.gate import decide, read_gate_inputs
    from cannenv.host import Host

    host = Host.live() if root is None else Host(root=root, env=dict(os.environ), allow_commands=False)
    decision = decide(read_gate_inputs(host, required=require))
    if decision.action != "start" or not command:
        click.echo(decision.message, err=True)
    if decision.action == "refuse":
        raise ChecksFailed("the host NPU driver does not fit this image (see above)")
    if command:
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            os.execvp(command[0], list(command))
        except OSError as exc:
            raise InputError(f"cannot run {command[0]!r}: {exc.strerror}") from None
    return 0


COMMANDS: list[click.Command] = [image, gate_cmd]
