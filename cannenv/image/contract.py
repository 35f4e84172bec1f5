"""The lock is the contract: what a build records (:func:`lock_for`) and how two records differ
(:func:`differences`).

``image build --locked``, ``image lock --check`` and ``image lock`` (without ``--update``) compare the
lock made from today's inputs with the lock on disk and refuse, naming each difference, when an
input moved: an installer's digest, the base image's digest, a wheel's hash, the rendered context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cannenv.errors import IntegrityError

if TYPE_CHECKING:
    from cannenv.image.render import BuildContext
    from cannenv.image.spec import ImageSpec
    from cannenv.lock import Lock


def lock_for(
    spec: ImageSpec,
    ctx: BuildContext,
    *,
    base_image_id: str | None = None,
    image_id: str | None = None,
    tag: str | None = None,
    cannenv_version: str | None = None,
) -> Lock:
    """The lock record of a build: every input and its digest, as the context was rendered."""
    from cannenv import __version__
    from cannenv.errors import InputError
    from cannenv.lock import Lock

    installers = ctx.installers
    have = {i.component for i in installers}
    for ref in spec.installers:
        if ref.component not in have:
            raise InputError(f"no verified digest for the {ref.component} installer {ref.file}")
    notes = [
        f"{i.file}: not pinned in the matrix; sha256 recorded from the file used"
        for i in installers
        if not i.pinned
    ]
    versionless = sorted(r.name for r in ctx.requirements if not r.version)
    if versionless:
        notes.append(
            f"installed from indexes without a version or hash: {', '.join(versionless)} "
            "(`image lock` without --no-resolve pins them; --wheelhouse pins every Python input)"
        )
    unhashed = sorted(r.name for r in ctx.requirements if r.version and not r.hashes)
    if unhashed:
        notes.append(
            f"installed from indexes by version, without hashes, with their dependencies: "
            f"{', '.join(unhashed)} (give --wheelhouse for hash-pinned Python inputs)"
        )
    if "@" not in ctx.base_image:
        notes.append(f"base image {ctx.base_image} is a tag, not a digest (accepted with --allow-tag)")
    return Lock(
        stack_id=spec.stack_id,
        matrix_digest=spec.matrix_digest,
        cannenv_version=cannenv_version or __version__,
        os=ctx.os,
        arch=ctx.arch,
        user=ctx.user,
        base_image=ctx.base_image,
        base_image_digest=ctx.base_image_digest,
        base_image_id=base_image_id,
        context_digest=ctx.digest,
        installers=installers,
        python_requirements=ctx.requirements,
        driver_range=spec.driver_range,
        tag=tag,
        image_id=image_id,
        notes=tuple(notes),
    )


def _short(value: object) -> str:
    return "(none)" if value in (None, "", ()) else str(value)


def differences(locked: Lock, now: Lock) -> list[str]:
    """Each input in which ``now`` (today's inputs) differs from ``locked``, one line each."""
    out: list[str] = []
    for name in (
        "stack_id",
        "matrix_digest",
        "os",
        "arch",
        "user",
        "base_image",
        "base_image_digest",
        "driver_range",
    ):
        a, b = getattr(locked, name), getattr(now, name)
        if a != b and not (name in ("arch", "user") and a is None):
            out.append(f"{name}: locked {_short(a)}, now {_short(b)}")
    old_i = {i.component: i for i in locked.installers}
    new_i = {i.component: i for i in now.installers}
    for comp in sorted(set(old_i) | set(new_i)):
        a, b = old_i.get(comp), new_i.get(comp)
        if comp == "nnal" and (a is None) != (b is None):  # the one component an image may leave out
            out.append(
                f"NNAL: the lock includes {a.file}, now left out (add --with-nnal)"
                if a is not None
                else f"NNAL: the lock leaves it out, now {b.file if b else ''} is included (drop --with-nnal)"
            )
        elif a is None or b is None:
            out.append(
                f"{comp} installer: locked {a.file if a else '(none)'}, now {b.file if b else '(none)'}"
            )
        elif (a.file, a.sha256) != (b.file, b.sha256):
            if a.file != b.file:
                out.append(f"{comp} installer: locked {a.file}, now {b.file}")
            else:
                out.append(f"{comp} installer {a.file}: locked sha256 {a.sha256}, now {b.sha256}")
    old_p = {r.name: r for r in locked.python_requirements}
    new_p = {r.name: r for r in now.python_requirements}
    for name in sorted(set(old_p) | set(new_p)):
        a_r, b_r = old_p.get(name), new_p.get(name)
        if a_r is None or b_r is None:
            out.append(
                f"python {name}: locked {a_r.version if a_r else '(absent)'}, "
                f"now {b_r.version if b_r else '(absent)'}"
            )
        elif a_r.version != b_r.version:
            out.append(f"python {name}: locked {_short(a_r.version)}, now {_short(b_r.version)}")
        elif a_r.hashes != b_r.hashes:
            out.append(
                f"python {name} {a_r.version}: locked {_short(', '.join(a_r.hashes))}, "
                f"now {_short(', '.join(b_r.hashes))}"
            )
        elif a_r.source != b_r.source:
            out.append(f"python {name}: locked from {a_r.source}, now from {b_r.source}")
    if locked.context_digest != now.context_digest:
        out.append(f"rendered context: locked sha256 {locked.context_digest}, now {now.context_digest}")
    return out


def enforce(locked: Lock, now: Lock, *, lock_path: str, action: str) -> None:
    """Refuse (exit 5) when today's inputs differ from the lock, naming every difference."""
    diffs = differences(locked, now)
    if diffs:
        raise IntegrityError(
            f"{action}: the inputs differ from the lock {lock_path} in {len(diffs)} place(s):\n  "
            + "\n  ".join(diffs),
            hint="restore the locked inputs; or, if the change is intended, record it with "
            f"`cannenv image lock ... --out {lock_path} --update` (it prints what changed)",
        )
