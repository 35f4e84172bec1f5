"""`cannenv image render|build|lock|verify|push|pull|sbom|run-args` and `cannenv gate` (the image's
entrypoint, also runnable from the image's own isolated runtime)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cannenv import sanitize
from cannenv.errors import ChecksFailed, InputError

if TYPE_CHECKING:
    from cannenv.engine import Engine
    from cannenv.image import BuildContext, ImageSpec, VerifiedInstaller
    from cannenv.lock import LockedRequirement

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
        help="Target architecture (default: the stack's only one, else this machine's). Another "
        "machine's architecture is built under QEMU user emulation, or refused (exit 4).",
    )(f)
    f = click.option(
        "--os",
        "os_id",
        default="ubuntu22.04",
        show_default=True,
        help="Base OS profile from dockerfiles/os.yaml (debian12, ubuntu22.04, preinstalled, …).",
    )(f)
    f = click.option(
        "--base-image", default=None, help="Base image reference, pinned: NAME@sha256:<digest>."
    )(f)
    f = click.option(
        "--wheelhouse",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="Local wheels (torch, torch_npu, CANN's Python deps, cannenv's deps) installed "
        "hash-pinned and offline.",
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
    f = click.option(
        "--with-nnal",
        is_flag=True,
        help="Also install the stack's NNAL (ATB, for LLM serving, e.g. vllm-ascend); left out by "
        "default. The vendor publishes no sha256 for the NNAL installer, so this needs "
        "--allow-unpinned unless your matrix pins one. `image build --locked` follows the lock.",
    )(f)
    f = click.option(
        "--uid", type=int, default=1000, show_default=True, help="UID of HwHiAiUser (the host's)."
    )(f)
    f = click.option(
        "--gid", type=int, default=1000, show_default=True, help="GID of HwHiAiUser (the host's)."
    )(f)
    f = click.option("--root", "as_root", is_flag=True, help="Run containers as root instead of HwHiAiUser.")(
        f
    )
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
    with_nnal: bool,
    wheel_dir: Path | None,
    uid: int,
    gid: int,
    as_root: bool,
    base_image_digest: str | None = None,
    extract_dir: Path | None = None,
    resolve: bool = False,
    python_pins: tuple[LockedRequirement, ...] | None = None,
) -> _Prepared:
    from cannenv import matrix
    from cannenv.artifacts import build_cannenv_wheel, source_checkout, verify_installers
    from cannenv.image import RenderOptions, render, scan_wheelhouse, spec_from_stack, wheel_from_file
    from cannenv.image.spec import nnal_left_out

    m = matrix.load(list(matrix_paths) if matrix_paths else None)
    stack = m.stack(stack_id)
    spec = spec_from_stack(stack, m, arch=arch, nnal=with_nnal)
    if not with_nnal and stack.version("nnal") is not None:
        click.echo(f"note: {nnal_left_out(spec_from_stack(stack, m, arch=arch, nnal=True))}", err=True)
    verified = (
        verify_installers(spec, artifacts, allow_unpinned=allow_unpinned, extract_dir=extract_dir)
        if artifacts
        else ()
    )
    wheels = scan_wheelhouse(wheelhouse) if wheelhouse else None
    if wheels is None and python_pins is None and resolve:
        from cannenv.image.pins import resolve_cann_python
        from cannenv.image.spec import os_profile, python_settings

        glibc = os_profile(os_id).get("glibc")
        python_pins = resolve_cann_python(spec, glibc=glibc, index=str(python_settings()["index"]))
    cw = None
    if cannenv_wheel is not None:
        cw = wheel_from_file(cannenv_wheel)
    elif wheel_dir is not None and (checkout := source_checkout()) is not None:
        cw = wheel_from_file(build_cannenv_wheel(wheel_dir, source=checkout))
    options = RenderOptions(
        os=os_id,
        base_image=base_image,
        wheels=wheels,
        cannenv_wheel=cw,
        verified_installers=verified,
        uid=uid,
        gid=gid,
        root=as_root,
        base_image_digest=base_image_digest,
        python_pins=python_pins if wheels is None else None,
    )
    return _Prepared(spec, render(spec, options), verified)


def _default_tag(stack_id: str) -> str:
    import re

    return f"{DEFAULT_REPOSITORY}:{re.sub(r'[^A-Za-z0-9_.-]', '-', stack_id)[:128]}"


def _warn(text: str) -> None:
    click.echo(f"warning: {text}", err=True)


@click.group("image")
def image() -> None:
    """Render, build, lock, verify, push and pull Docker images for matrix stacks."""


@image.command("render")
@click.argument("stack_id")
@_stack_options
@click.option(
    "--artifacts",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Directory with the vendor's installer files: the .zip downloads (sha256-checked against the "
    "vendor's digest, then the .run extracted) or the .run files (verified and placed into the context).",
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
        prep = _prepare(
            stack_id, wheel_dir=Path(tmp) if out else None, extract_dir=Path(tmp) / "unzipped", **kw
        )
        for w in prep.ctx.warnings:
            _warn(w)
        if out is None:
            click.echo(prep.ctx.dockerfile, nl=False)
            return 0
        prep.ctx.write(out)
    click.echo(f"wrote build context for {prep.spec.stack_id} to {out} (context sha256 {prep.ctx.digest})")
    if not prep.verified:
        zips = [i.archive for i in prep.spec.installers if i.archive]
        click.echo(
            "note: no --artifacts given, so no installer was verified: the context's installers/ must "
            "get "
            + ", ".join(i.file for i in prep.spec.installers)
            + " before a `docker build` of it"
            + (
                f"; better, render again with --artifacts DIR holding the vendor's downloads "
                f"{', '.join(zips)}, which are checked against the vendor's sha256 first"
                if zips
                else ""
            ),
            err=True,
        )
    return 0


def _refuse_tag(base: str, allow_tag: bool, what: str) -> None:
    """A base image named by a bare tag is refused (exit 5) unless --allow-tag."""
    from cannenv.errors import IntegrityError

    if "@" not in base and not allow_tag:
        raise IntegrityError(
            f"the base image {base} is a tag, not a digest: a tag can name other bytes tomorrow, so the "
            f"{what} would not be reproducible",
            hint="pin it: push the base to your registry (`cannenv image push BASE --to REGISTRY/REPO`) "
            "and give --base-image REGISTRY/REPO@sha256:<digest>; or pass --allow-tag (the lock notes it)",
        )


def _check_base(engine: Engine, base: str, arch: str, allow_tag: bool) -> str | None:
    """Refuse a bare tag (unless allowed) and a base of another architecture; the base's image id."""
    from cannenv.image.spec import OCI_ARCH

    _refuse_tag(base, allow_tag, "build")
    if not engine.exists(base):
        if "@" not in base:
            return None  # the builder pulls it (and fails clearly if it cannot)
        engine.pull(base, platform=None)
    info = engine.inspect(base)
    want = OCI_ARCH[arch]
    if info.architecture and info.architecture != want:
        raise InputError(
            f"the base image {base} is {info.architecture}, but the image is for {arch} ({want})",
            hint=f"give a {want} base image with --base-image",
        )
    return info.id


class _Progress:
    """Step N/M lines with the build's output, and the elapsed time of each stage."""

    def __init__(self, quiet: bool) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, highlight=False)
        self.quiet = quiet
        self.stage: str | None = None
        self.stage_start = time.monotonic()
        self.stages: list[tuple[str, float]] = []
        self.count = 0

    def _close_stage(self) -> None:
        if self.stage is not None:
            elapsed = time.monotonic() - self.stage_start
            self.stages.append((self.stage, elapsed))
            if not self.quiet:
                self.console.print(f"  [dim]stage {self.stage}: {elapsed:.1f} s[/]", markup=True)

    def __call__(self, ev: Any) -> None:
        from rich.text import Text

        if ev.kind == "step" and ev.text.upper().startswith("FROM "):
            self._close_stage()
            words = ev.text.split()
            self.count += 1
            self.stage = words[3] if len(words) >= 4 and words[2].upper() == "AS" else "final"
            self.stage_start = time.monotonic()
        if self.quiet:
            return
        if ev.kind == "step":
            line = Text(f"step {ev.step}/{ev.total} ", style="bold cyan")
            line.append(ev.text)
            self.console.print(line, soft_wrap=True)
        elif ev.kind == "cached":
            self.console.print("  [green]cached[/]", markup=True)
        elif ev.kind == "error":
            self.console.print(Text(sanitize.text(ev.text), style="red"))
        else:
            self.console.print(f"  {sanitize.text(ev.text)}", markup=False, soft_wrap=True)

    def finish(self) -> str:
        self._close_stage()
        self.stage = None
        return ", ".join(f"{name} {s:.1f} s" for name, s in self.stages)


@image.command("build")
@click.argument("stack_id")
@_stack_options
@click.option(
    "--artifacts",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Directory with the vendor's installer files (.zip downloads or .run files).",
)
@click.option("--tag", default=None, help=f"Image tag (default {DEFAULT_REPOSITORY}:<stack id>).")
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the lock file here after the build.",
)
@click.option(
    "--locked",
    "locked_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Build only if every input equals this lock's (else exit 5, naming each difference); "
    "the built image's id is recorded in it.",
)
@click.option("--allow-tag", is_flag=True, help="Accept a base image given by tag instead of digest.")
@click.option("--no-cache", is_flag=True, help="Do not reuse cached layers.")
@click.option("--quiet", "-q", is_flag=True, help="Do not stream the build log.")
def build_cmd(
    stack_id: str,
    tag: str | None,
    lock_path: Path | None,
    locked_path: Path | None,
    allow_tag: bool,
    no_cache: bool,
    quiet: bool,
    **kw: Any,
) -> int:
    """Build the image for STACK_ID with the local Docker engine."""
    import tempfile

    from cannenv.engine import PLATFORM, Engine, check_emulation
    from cannenv.errors import ExternalError
    from cannenv.image import lock_for
    from cannenv.image.contract import enforce
    from cannenv.image.spec import OCI_ARCH, host_arch
    from cannenv.lock import load_lock, write_lock

    locked = load_lock(locked_path) if locked_path is not None else None
    if locked is not None and any(i.component == "nnal" for i in locked.installers):
        kw["with_nnal"] = True  # the lock's choice; a --with-nnal the lock lacks is a difference below
    if locked is not None:
        from cannenv.image.pins import base_group

        pinned = base_group(locked.python_requirements)
        if pinned and all(r.version and r.hashes and r.source != "wheelhouse" for r in pinned):
            kw["python_pins"] = pinned  # what `image lock` pinned, not what the index serves today
    engine = Engine.connect()  # fail fast, before hashing GBs of installers
    with tempfile.TemporaryDirectory(prefix="cannenv-build-") as tmp:
        prep = _prepare(stack_id, wheel_dir=Path(tmp) / "wheel", extract_dir=Path(tmp) / "unzipped", **kw)
        arch = prep.spec.arch
        here = host_arch()
        check_emulation(arch, here)
        base_id = _check_base(engine, prep.ctx.base_image, arch, allow_tag)
        for w in prep.ctx.warnings:
            _warn(w)
        ref = tag or _default_tag(prep.spec.stack_id)
        if locked is not None:
            assert locked_path is not None
            enforce(
                locked,
                lock_for(prep.spec, prep.ctx),
                lock_path=str(locked_path),
                action="image build --locked",
            )
            click.echo(f"inputs match the lock {locked_path}", err=True)
        ctx_dir = prep.ctx.write(Path(tmp) / "context")
        progress = _Progress(quiet)
        result = engine.build(
            ctx_dir,
            ref,
            on_event=progress,
            nocache=no_cache,
            platform=PLATFORM[arch] if arch != here else None,
        )
        stages = progress.finish()
    info = result.info
    if info.architecture != OCI_ARCH[arch]:
        engine.remove(ref)
        raise ExternalError(
            f"the engine built a {info.architecture} image for a {arch} build; removed {ref} rather than "
            "leave a mislabelled image",
        )
    lock = lock_for(prep.spec, prep.ctx, base_image_id=base_id, image_id=info.id, tag=ref)
    if locked is not None and locked_path is not None:
        same = locked.image_id == info.id  # a pushed digest stays true only for the same image
        update = {"image_id": info.id, "tag": ref, "image_digest": locked.image_digest if same else None}
        write_lock(locked_path, locked.model_copy(update=update))
        click.echo(f"lock: {locked_path} (image id recorded)")
    if lock_path is not None:
        write_lock(lock_path, lock)
        click.echo(f"lock: {lock_path}")
    click.echo(f"image: {ref}")
    click.echo(f"id: {info.id}")
    click.echo(f"arch: {arch} ({info.architecture})")
    click.echo(f"steps: {len(result.steps)} ({result.cached_steps} from cache) in {result.duration_s:.1f} s")
    click.echo(f"stages: {stages}")
    return 0


@image.command("lock")
@click.argument("stack_id")
@_stack_options
@click.option(
    "--artifacts",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Directory with the vendor's installer files (.zip downloads or .run files).",
)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=Path("cannenv.lock.json"),
    show_default=True,
    help="Lock file to write, check or update.",
)
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Only compare today's inputs with the lock (exit 5 if they differ).",
)
@click.option("--update", is_flag=True, help="Rewrite a lock whose inputs changed (prints what changed).")
@click.option(
    "--image",
    "image_ref",
    default=None,
    help="Record this built image's id (needs the engine).",
)
@click.option(
    "--allow-tag",
    is_flag=True,
    help="Accept a base image given by tag instead of digest (the lock notes it).",
)
@click.option(
    "--no-resolve",
    is_flag=True,
    help="Do not ask the index for the versions and hashes of CANN's Python requirements (without "
    "--wheelhouse they then stay unpinned, and the lock's notes name them).",
)
def lock_cmd(
    stack_id: str,
    out: Path,
    check_only: bool,
    update: bool,
    image_ref: str | None,
    allow_tag: bool,
    no_resolve: bool,
    **kw: Any,
) -> int:
    """Write, check or update the lock file of STACK_ID (every input and its digest).

    An existing lock is the contract: if today's inputs differ from it, `image lock` refuses (exit 5)
    and names each difference, unless --update.
    """
    import tempfile

    from cannenv.errors import NotFoundError
    from cannenv.image import differences, lock_for
    from cannenv.image.contract import enforce
    from cannenv.lock import load_lock, write_lock

    with tempfile.TemporaryDirectory(prefix="cannenv-lock-") as tmp:
        prep = _prepare(
            stack_id, wheel_dir=Path(tmp), extract_dir=Path(tmp) / "unzipped", resolve=not no_resolve, **kw
        )
    _refuse_tag(prep.ctx.base_image, allow_tag, "lock")
    image_id = tag = None
    if image_ref is not None:
        from cannenv.engine import Engine

        image_id, tag = Engine.connect(timeout=30).inspect(image_ref).id, image_ref
    new = lock_for(prep.spec, prep.ctx, image_id=image_id, tag=tag)
    old = load_lock(out) if out.exists() else None
    if check_only:
        if old is None:
            raise NotFoundError(f"no lock file {out} to check", hint="write one with `cannenv image lock`")
        enforce(old, new, lock_path=str(out), action="image lock --check")
        click.echo(f"{out}: the inputs match the lock (context {old.context_digest[:12]})")
        return 0
    if old is not None:
        diffs = differences(old, new)
        if not update:
            enforce(old, new, lock_path=str(out), action="image lock")
        for d in diffs:
            click.echo(f"changed: {d}", err=True)
        if not diffs and image_id is None:
            new = new.model_copy(
                update={
                    "image_id": old.image_id,
                    "tag": old.tag,
                    "image_digest": old.image_digest,
                    "base_image_id": old.base_image_id,
                }
            )
    write_lock(out, new)
    click.echo(
        f"wrote {out} (stack {new.stack_id}, context {new.context_digest[:12]}, "
        f"image {new.image_id or 'not built'})"
    )
    for note in new.notes:
        click.echo(f"note: {note}", err=True)
    return 0


def _record(engine: Engine, ref: str) -> Any:
    from cannenv.image.render import IMAGE_INFO_PATH, LABEL_SBOM
    from cannenv.image.verify import ImageRecord, parse_image_info

    info = engine.inspect(ref)
    sbom_path = info.labels.get(LABEL_SBOM)
    return ImageRecord(
        ref=ref,
        image_id=info.id,
        architecture=info.architecture,
        labels=info.labels,
        image_info=parse_image_info(engine.read_file(ref, IMAGE_INFO_PATH)),
        sbom_text=engine.read_file(ref, sbom_path) if sbom_path else None,
        repo_digests=info.repo_digests,
    )


def _require_cannenv_image(ref: str, labels: Any) -> None:
    from cannenv.errors import NotFoundError
    from cannenv.gate import LABEL_STACK

    if LABEL_STACK not in labels:
        raise NotFoundError(
            f"{ref} is not an image built by cannenv: it has no {LABEL_STACK} label, so there is no "
            "stack, lock or gate to verify",
            hint="verify an image made with `cannenv image build` (its labels start with cannenv.)",
        )


@image.command("verify")
@click.argument("tag")
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Also check the image's recorded inputs and labels against this lock.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def verify_cmd(tag: str, lock_path: Path | None, as_json: bool) -> int:
    """Check image TAG: what it records (architecture, labels, image.json, SBOM; against --lock),
    then run `cannenv doctor --json --no-devices` inside it and judge the result.

    Software checks must pass; device checks must report skip (never fail, never pass).
    """
    from cannenv.engine import Engine
    from cannenv.errors import ExitCode, ExternalError, MissingToolError
    from cannenv.gate import LABEL_STACK
    from cannenv.image import judge_record, judge_verify
    from cannenv.lock import load_lock

    lock = load_lock(lock_path) if lock_path is not None else None
    engine = Engine.connect()
    record = _record(engine, tag)
    _require_cannenv_image(tag, record.labels)
    record_problems = judge_record(record, lock)
    argv = ["cannenv", "doctor", "--json", "--no-devices"]
    stack = record.labels.get(LABEL_STACK)
    res = engine.run(tag, [*argv, "--stack", stack] if stack else argv)
    if res.exit_code == 127 or "cannot run 'cannenv'" in res.stderr:
        raise MissingToolError(
            f"{tag} has no cannenv command on its PATH, so the doctor cannot run inside it",
            hint="build the image with `cannenv image build` (it installs cannenv into the image's venv)",
        )
    if stack and res.exit_code == ExitCode.NOT_FOUND:
        # built from a matrix file the image's cannenv does not ship: judge against the best match
        res = engine.run(tag, argv)
    from cannenv import records

    try:  # printed inside the image: bounded like any other record
        report = records.parse_json(res.stdout, source=f"the report of {tag}")
    except InputError:
        raise ExternalError(
            f"`{' '.join(argv)}` in {tag} printed no JSON (exit {res.exit_code})",
            hint=(res.stderr or res.stdout).strip()[-1500:] or None,
        ) from None
    # an image made without --with-nnal records no NNAL installer: its absence is by design
    outcome = judge_verify(report, without_nnal="cannenv.installer.nnal" not in record.labels)
    problems = [*record_problems, *outcome.problems]
    ok = not problems
    if as_json:
        click.echo(
            json.dumps(
                {
                    "image": tag,
                    "ok": ok,
                    "architecture": record.architecture,
                    "lock": str(lock_path) if lock_path else None,
                    "problems": problems,
                    "notes": list(outcome.notes),
                    "software": [list(x) for x in outcome.software],
                    "device": [list(x) for x in outcome.device],
                },
                indent=2,
            )
        )
    else:
        click.echo(
            f"{tag} ({record.architecture}): {len(outcome.software)} software checks, "
            f"{len(outcome.device)} device checks" + (f", lock {lock_path}" if lock_path else "")
        )
        from cannenv.sanitize import line

        for p in problems:  # from the image's labels and files: one sanitised line each
            click.echo(f"  problem: {line(p)}")
        for n in outcome.notes:
            click.echo(f"  note: {line(n)}")
        click.echo("verified" if ok else "NOT verified")
    if not ok:
        raise ChecksFailed(f"image {tag} failed verification ({len(problems)} problems)")
    return 0


def _split_repo(ref: str) -> tuple[str, str | None]:
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        repo, _, t = ref.rpartition(":")
        return repo, t
    return ref, None


@image.command("push")
@click.argument("image_ref")
@click.option(
    "--to", "target", required=True, help="Registry repository, e.g. 127.0.0.1:5000/team/cann[:TAG]."
)
@click.option(
    "--lock",
    "lock_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Record the pushed REPO@sha256 digest in this lock (its image id must be IMAGE_REF's).",
)
def push_cmd(image_ref: str, target: str, lock_path: Path | None) -> int:
    """Push IMAGE_REF to a registry and print its pinned reference REPO@sha256:….

    Use it for base images too: the printed reference is what --base-image should be.
    """
    from cannenv.engine import Engine
    from cannenv.errors import IntegrityError
    from cannenv.image.spec import IMAGE_REF
    from cannenv.lock import load_lock, write_lock
    from cannenv.sanitize import line

    if "@" in target:
        raise InputError("--to takes a repository (and tag), not a digest")
    if IMAGE_REF.fullmatch(target) is None:
        raise InputError(
            f"--to {line(target)!r} is not a registry repository",
            hint="expected REGISTRY/REPO[:TAG] in the OCI reference grammar, e.g. "
            "127.0.0.1:5000/team/cann:8.5 (lower-case path components; a tag of letters, digits, . _ -)",
        )
    repo, tag = _split_repo(target)
    engine = Engine.connect()
    info = engine.inspect(image_ref)
    lock = load_lock(lock_path) if lock_path is not None else None
    if lock is not None and lock.image_id and lock.image_id != info.id:
        raise IntegrityError(
            f"{image_ref} is image {info.id}, but the lock {lock_path} records {lock.image_id}",
            hint="push the image the lock describes, or rebuild with `cannenv image build --locked`",
        )
    tag = tag or (_split_repo(info.tags[0])[1] if info.tags else None) or "latest"
    engine.tag(image_ref, repo, tag)
    digest = engine.push(repo, tag)
    pinned = f"{repo}@{digest}"
    if lock is not None and lock_path is not None:
        write_lock(lock_path, lock.model_copy(update={"image_digest": pinned, "image_id": info.id}))
        click.echo(f"lock: {lock_path} (image_digest {pinned})", err=True)
    click.echo(pinned)
    return 0


@image.command("pull")
@click.argument("image_ref", required=False)
@click.option(
    "--locked",
    "locked_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Pull the lock's REPO@sha256 and check the image against the lock (exit 5 on a difference).",
)
def pull_cmd(image_ref: str | None, locked_path: Path | None) -> int:
    """Pull an image; with --locked, exactly the digest the lock records, checked against the lock."""
    from cannenv.engine import Engine
    from cannenv.errors import IntegrityError
    from cannenv.image import judge_record
    from cannenv.lock import load_lock

    if locked_path is None:
        if image_ref is None:
            raise InputError("give IMAGE_REF or --locked LOCK")
        info = Engine.connect().pull(image_ref)
        click.echo(f"{image_ref}: {info.id}")
        return 0
    lock = load_lock(locked_path)
    if not lock.image_digest:
        raise IntegrityError(
            f"the lock {locked_path} records no registry digest",
            hint="push the image with `cannenv image push IMAGE --to REPO --lock LOCK` first",
        )
    if (
        image_ref is not None
        and image_ref != lock.image_digest
        and _split_repo(image_ref.split("@")[0])[0] != lock.image_digest.split("@")[0]
    ):
        raise IntegrityError(f"{image_ref} is not the lock's image {lock.image_digest}")
    engine = Engine.connect()
    engine.pull(lock.image_digest)
    problems = judge_record(_record(engine, lock.image_digest), lock)
    if problems:
        raise IntegrityError(
            f"{lock.image_digest} does not match the lock {locked_path}:\n  " + "\n  ".join(problems),
            hint="the registry holds another image under this name; rebuild with --locked and push again",
        )
    click.echo(f"{lock.image_digest}: matches {locked_path}")
    return 0


@image.command("sbom")
@click.argument("source")
@click.option("--check", "check_schema", is_flag=True, help="Validate against the CycloneDX JSON schema.")
def sbom_cmd(source: str, check_schema: bool) -> int:
    """Print the CycloneDX SBOM of SOURCE: a lock file, or an image built by cannenv."""
    from cannenv.errors import IntegrityError
    from cannenv.image.sbom import inputs_from_lock, sbom_json, validate
    from cannenv.lock import load_lock

    if Path(source).is_file():
        text = sbom_json(inputs_from_lock(load_lock(source)))
    else:
        from cannenv.engine import Engine
        from cannenv.errors import NotFoundError

        engine = Engine.connect()
        record = _record(engine, source)
        _require_cannenv_image(source, record.labels)
        if record.sbom_text is None:
            raise NotFoundError(f"{source} carries no SBOM (built by an older cannenv?)")
        text = record.sbom_text
    if check_schema:
        problems = validate(text)
        if problems:
            raise IntegrityError(
                "the SBOM does not validate against the CycloneDX schema: " + "; ".join(problems)
            )
    click.echo(text, nl=False)
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

    Images run it from their own runtime (/opt/cannenv/gate). CANNENV_DISABLE_REQUIRE=1 bypasses it.
    """
    import os

    from cannenv.gate import main
    from cannenv.host import Host

    host = None if root is None else Host(root=root, env=dict(os.environ), allow_commands=False)
    code = main([*(["--require", require] if require else []), "--", *command], host=host)
    if code:
        sys.exit(code)
    return 0


COMMANDS: list[click.Command] = [image, gate_cmd]
