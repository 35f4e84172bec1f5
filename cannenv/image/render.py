"""Render a Docker build context for an :class:`~cannenv.image.spec.ImageSpec` (pure: no Docker,
no network).

``render(spec, options) -> BuildContext``: a Dockerfile and the files beside it. Same inputs,
byte-identical output: no times, no random names, sorted everything. The Dockerfile comes from the
Jinja2 template ``dockerfiles/Dockerfile.j2``; the environment from ``dockerfiles/environment.yaml``
(the vendor's ``set_env.sh`` as data, evaluated by :mod:`cannenv.envscript`, which ``cannenv env``
shares); OS profiles from ``dockerfiles/os.yaml``. The context also carries the image's SBOM
(:mod:`cannenv.image.sbom`) and the gate's own runtime (:mod:`cannenv.gate`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from cannenv.errors import InputError
from cannenv.gate import GATE_DIR, GATE_PYTHON, GATE_SCRIPT, LABEL_DRIVER_RANGE, LABEL_STACK, gate_runtime
from cannenv.image.python import PythonGroup, python_groups
from cannenv.image.spec import (
    COMPONENT_ORDER,
    CONTROL,
    INSTALL_FLAGS,
    LABEL_KEY,
    SAFE_VERSION,
    ImageSpec,
    VerifiedInstaller,
    Wheel,
    check,
    check_image_ref,
    check_os_python,
    layout,
    os_profile,
    python_settings,
    refuse,
    validate_spec,
)
from cannenv.layout import default_set_env
from cannenv.lock import LockedInstaller, LockedRequirement

LABEL_MATRIX_DIGEST = "cannenv.matrix-digest"
LABEL_SBOM = "cannenv.sbom"
LABEL_USER = "cannenv.user"
SBOM_PATH = "/etc/cannenv/sbom.cdx.json"
IMAGE_INFO_PATH = "/etc/cannenv/image.json"
DEFAULT_UID = 1000
DEFAULT_GID = 1000


@dataclass(frozen=True)
class RenderOptions:
    os: str = "ubuntu22.04"
    base_image: str | None = None
    wheels: tuple[Wheel, ...] | None = None  # a local wheelhouse; None: install pins from indexes
    cannenv_wheel: Wheel | None = None
    verified_installers: tuple[VerifiedInstaller, ...] = ()  # from artifacts.verify_installers
    cannenv_version: str | None = None
    uid: int = DEFAULT_UID  # of HwHiAiUser, the image's default user: match the host's
    gid: int = DEFAULT_GID
    root: bool = False  # run as root instead (explicit)
    base_image_digest: str | None = None  # the registry digest the base resolves to, when known
    python_pins: tuple[LockedRequirement, ...] | None = None  # image/pins.py: CANN's Python deps, hashed


@dataclass(frozen=True)
class BuildContext:
    """A rendered build context: in-memory files plus large files to copy in."""

    dockerfile: str
    files: Mapping[str, bytes]  # relative path -> content (Dockerfile, image.json, requirements)
    links: Mapping[str, Path]  # relative path -> source file (installers, wheels)
    link_digests: Mapping[str, str]  # relative path -> sha256 of the file
    labels: Mapping[str, str]
    environment: tuple[tuple[str, str], ...]
    requirements: tuple[LockedRequirement, ...]
    base_image: str
    os: str
    arch: str = "x86_64"
    user: str = "root"
    base_image_digest: str | None = None
    installers: tuple[LockedInstaller, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    @property
    def digest(self) -> str:
        """sha256 over every path and content of the context: equal digests, equal contexts."""
        h = hashlib.sha256()
        entries = {p: hashlib.sha256(b).hexdigest() for p, b in self.files.items()}
        entries.update(self.link_digests)
        for path in sorted(entries):
            h.update(f"{path}\0{entries[path]}\n".encode())
        return h.hexdigest()

    def write(self, out: Path) -> Path:
        """Write the context into ``out`` (created; must be empty or absent), all or nothing.

        Files are written into a new sibling directory that is renamed to ``out`` at the end, so a
        failure leaves no half-written context. Large files are **copied**, never hard-linked (a
        link would let a later change of the source alter the verified bytes), and each copy is
        hashed again against the digest that was verified.
        """
        import shutil
        import tempfile

        from cannenv.errors import IntegrityError
        from cannenv.fsutil import sha256_file

        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise InputError(f"{out} is not empty", hint="give an empty or new directory to --out")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        except OSError as exc:  # --out under a file, a dangling link, no permission: exit 2
            raise InputError(f"cannot write the build context {out}: {exc.strerror or exc}") from None
        try:
            for rel, data in sorted(self.files.items()):
                p = tmp / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
            for rel, src in sorted(self.links.items()):
                p = tmp / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, p)
                want = self.link_digests.get(rel)
                if want is not None and sha256_file(p) != want:
                    raise IntegrityError(
                        f"{src} changed after it was verified (sha256 is no longer {want})",
                        hint="something rewrote the file during the build; verify it and run again",
                    )
            if out.exists():
                out.rmdir()
            tmp.replace(out)
        except OSError as exc:  # a full disk, no permission: the user's to fix (exit 2), not a bug
            shutil.rmtree(tmp, ignore_errors=True)
            raise InputError(f"cannot write the build context {out}: {exc.strerror or exc}") from None
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return out


# ------------------------------------------------------------------------------- environment


def cann_environment(cann: str, arch: str, *, nnal: bool) -> tuple[tuple[str, str], ...]:
    """The variables ``set_env.sh`` sets, fully expanded, in first-set order (as Dockerfile ENV values).

    The operations are ``dockerfiles/environment.yaml``'s, the table ``cannenv env`` also evaluates,
    rooted at the vendor's install paths (its ``image_roots``); see :func:`cannenv.envscript.collapse`
    for how prepended variables keep the base image's value.
    """
    from cannenv.envscript import collapse, table, table_steps

    data = table()
    lay = layout(cann)
    subst = {"cann": cann, "cxx_abi": str(data["layouts"]["nnal"]["cxx_abi"][lay])}

    def rooted(name: str) -> dict[str, str]:
        return {k: v.format(**subst) for k, v in data["image_roots"][name].items()}

    roots = {"arch": arch, **rooted(lay)}
    if nnal:
        roots.update(rooted("nnal"))
    return collapse(table_steps((lay, "nnal") if nnal else (lay,), roots))


# ----------------------------------------------------------------------------------- labels


def image_labels(
    spec: ImageSpec, base_image: str, cannenv_version: str, *, user: str, pinned: bool
) -> dict[str, str]:
    """OCI annotations plus cannenv's own labels (sorted when rendered)."""
    verified = "sha256-pinned" if pinned else "digest-recorded (not pinned in the matrix)"
    labels = {
        "org.opencontainers.image.title": f"cannenv stack {spec.stack_id}",
        "org.opencontainers.image.description": (
            f"CANN {spec.cann} for {spec.chip} ({spec.arch}), Python {spec.python}"
            + (f", torch {spec.torch}" if spec.torch else "")
            + (f", torch_npu {spec.torch_npu}" if spec.torch_npu else "")
            + f"; built by cannenv from {verified} installers"
        ),
        "org.opencontainers.image.version": spec.stack_id,
        "org.opencontainers.image.base.name": base_image.split("@")[0],
        "org.opencontainers.image.licenses": "NOASSERTION",
        LABEL_STACK: spec.stack_id,
        LABEL_MATRIX_DIGEST: spec.matrix_digest,
        LABEL_DRIVER_RANGE: spec.driver_range,
        LABEL_SBOM: SBOM_PATH,
        LABEL_USER: user,
        "cannenv.version": cannenv_version,
        "cannenv.chip": spec.chip,
        "cannenv.arch": spec.arch,
        "cannenv.component.cann": spec.cann,
        "cannenv.component.python": spec.python,
    }
    if "@" in base_image:
        labels["org.opencontainers.image.base.digest"] = base_image.split("@", 1)[1]
    if spec.torch:
        labels["cannenv.component.torch"] = spec.torch
    if spec.torch_npu:
        labels["cannenv.component.torch_npu"] = spec.torch_npu
    for name, version in spec.components.items():
        labels[f"cannenv.component.{name}"] = version
    for inst in spec.installers:
        labels[f"cannenv.installer.{inst.component}"] = inst.file
    for key, value in labels.items():
        if not LABEL_KEY.match(key) or CONTROL.search(value):
            raise refuse(f"label {key}", value, "a single line of printable text")
    return dict(sorted(labels.items()))


# ----------------------------------------------------------------------------------- render


def _finalize(value: object) -> object:
    """Jinja finalize hook: the last guard against a value that breaks out of its line."""
    if isinstance(value, str) and CONTROL.search(value):
        raise refuse("template value", value, "a single line without control characters")
    return value


@cache
def _template() -> Any:
    import jinja2

    from cannenv.resources import dockerfiles_dir

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(dockerfiles_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # a Dockerfile, not HTML: values are validated instead
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    return env.get_template("Dockerfile.j2")


def resolve_base_image(spec: ImageSpec, options: RenderOptions) -> str:
    profile = os_profile(options.os)
    if options.base_image:
        return check_image_ref(options.base_image, "--base-image")
    default = profile["base_image"]
    if default is None:
        raise InputError(
            f"OS profile {options.os!r} has no default base image",
            hint="give one with --base-image (a local image that has bash, tar, useradd and python3 + venv)",
        )
    ref = check_image_ref(str(default), f"os.yaml {options.os}.base_image")
    if spec.base_image_digest and "@" not in ref:
        digest = spec.base_image_digest
        ref = f"{ref}@{digest if digest.startswith('sha256:') else 'sha256:' + digest}"
    return check_image_ref(ref)


def locked_installers(
    spec: ImageSpec, verified: tuple[VerifiedInstaller, ...]
) -> tuple[LockedInstaller, ...]:
    """The installers as the lock records them: the digest of the file used (or the matrix's pin)."""
    used = {v.ref.component: (v.sha256, v.pinned) for v in verified}
    unzipped = {v.ref.component for v in verified if v.from_archive}
    out = []
    for ref in spec.installers:
        digest, pinned = used.get(ref.component, (ref.sha256 or "", ref.sha256 is not None))
        if not digest:
            continue
        zipped = ref.component in unzipped
        out.append(
            LockedInstaller(
                component=ref.component,
                version=ref.version,
                file=ref.file,
                sha256=digest,
                pinned=pinned,
                url=ref.url,
                archive=ref.archive if zipped else None,
                archive_sha256=ref.archive_sha256 if zipped else None,
                archive_source=ref.archive_source if zipped else None,
            )
        )
    return tuple(out)


def render(spec: ImageSpec, options: RenderOptions) -> BuildContext:
    """The build context for ``spec``: pure and deterministic."""
    from cannenv import __version__
    from cannenv.image.sbom import SbomInputs, sbom_json

    validate_spec(spec)
    cannenv_version = options.cannenv_version or __version__
    check(SAFE_VERSION, "cannenv version", cannenv_version, "a version")
    base = resolve_base_image(spec, options)
    profile = os_profile(options.os)
    check_os_python(options.os, spec.python, spec.stack_id)
    for name, value in (("--uid", options.uid), ("--gid", options.gid)):
        if not isinstance(value, int) or not 0 < value < 2**31 - 1:
            raise refuse(
                name, value, "a positive number (the host's `id -u HwHiAiUser` / `id -g HwHiAiUser`)"
            )
    install = profile.get("install")
    os_install = str(install).format(python=spec.python) if install else None
    python_exe = str(profile["python"]).format(python=spec.python)
    venv = str(python_settings()["venv"])
    user = "root" if options.root else f"HwHiAiUser({options.uid}:{options.gid})"

    links: dict[str, Path] = {}
    link_digests: dict[str, str] = {}
    installers = []
    by_comp = {i.component: i for i in spec.installers}
    verified = {v.ref.component: v for v in options.verified_installers}
    for comp in COMPONENT_ORDER:
        inst = by_comp.get(comp)
        if inst is None:
            continue
        installers.append({"file": inst.file, "source_env": comp == "nnal"})
        rel = f"installers/{inst.file}"
        file = verified.get(comp)
        if file is not None:  # hashed once, by verify_installers
            links[rel] = file.path
            link_digests[rel] = file.sha256
        else:
            link_digests[rel] = inst.sha256 or "unpinned"
    if "cann" not in by_comp:
        raise InputError(f"stack {spec.stack_id} names no CANN toolkit installer; an image needs one")

    groups: tuple[PythonGroup, ...] = python_groups(
        spec, options.wheels, options.cannenv_wheel, cannenv_version, options.python_pins
    )
    files: dict[str, bytes] = {}
    for g in groups:
        files[f"python/{g.name}/requirements.txt"] = g.requirements_txt().encode()
        for w in g.wheels:
            links[f"python/{g.name}/{w.file}"] = w.path
            link_digests[f"python/{g.name}/{w.file}"] = w.sha256
    for rel, data in gate_runtime().items():
        files[f"gate/{rel}"] = data

    locked = locked_installers(spec, options.verified_installers)
    pinned = bool(locked) and len(locked) == len(spec.installers) and all(i.pinned for i in locked)
    labels = image_labels(spec, base, cannenv_version, user=user, pinned=pinned)
    environment = cann_environment(spec.cann, spec.arch, nnal="nnal" in by_comp)
    requirements = tuple(r for g in groups for r in g.requirements)
    base_digest = base.split("@", 1)[1] if "@" in base else options.base_image_digest
    sbom = sbom_json(
        SbomInputs(
            stack_id=spec.stack_id,
            matrix_digest=spec.matrix_digest,
            cannenv_version=cannenv_version,
            arch=spec.arch,
            base_image=base,
            base_image_digest=base_digest,
            installers=locked,
            python_requirements=requirements,
        )
    )
    files["sbom.cdx.json"] = sbom.encode()
    image_info = {
        "schema_version": 2,
        "labels": labels,
        "arch": spec.arch,
        "base_image": base,
        "base_image_digest": base_digest,
        "installers": [i.model_dump(mode="json") for i in locked]
        or [i.model_dump(mode="json") for i in spec.installers],
        "python_requirements": [r.model_dump(mode="json") for r in requirements],
        "sbom": SBOM_PATH,
        "sbom_sha256": hashlib.sha256(sbom.encode()).hexdigest(),
        "user": user,
    }
    files["image.json"] = (json.dumps(image_info, indent=2, sort_keys=True) + "\n").encode()
    text = _template().render(
        cannenv_version=cannenv_version,
        stack_id=spec.stack_id,
        base_image=base,
        os_install=os_install,
        installers=installers,
        install_flags=INSTALL_FLAGS,
        set_env=default_set_env(spec.cann),  # cann-<ver>/set_env.sh from 8.5: no ascend-toolkit/ path
        python_exe=python_exe,
        python=spec.python,
        venv=venv,
        overlay=f"{venv}-top",
        python_groups=[{"name": g.name, "pip_args": g.pip_args} for g in groups],
        environment=[(k, json.dumps(v)) for k, v in environment],
        labels=[(k, json.dumps(v)) for k, v in labels.items()],
        driver_range_quoted=json.dumps(spec.driver_range),
        uid=options.uid,
        gid=options.gid,
        user="root" if options.root else "HwHiAiUser",
        gate_dir=GATE_DIR,
        gate_python=GATE_PYTHON,
        gate_script=GATE_SCRIPT,
        sbom_path=SBOM_PATH,
        image_info_path=IMAGE_INFO_PATH,
    )
    files["Dockerfile"] = text.encode()
    files[".dockerignore"] = b"# everything in this context is used by the Dockerfile\n"
    warnings = []
    if "@" not in base:
        warnings.append(
            f"base image {base} is a tag, not a digest: the same tag can name other bytes tomorrow "
            "(pin it: --base-image NAME@sha256:..., e.g. after `cannenv image push`)"
        )
    return BuildContext(
        dockerfile=text,
        files=dict(sorted(files.items())),
        links=dict(sorted(links.items())),
        link_digests=dict(sorted(link_digests.items())),
        labels=labels,
        environment=environment,
        requirements=requirements,
        base_image=base,
        os=options.os,
        arch=spec.arch,
        user=user,
        base_image_digest=base_digest,
        installers=locked,
        warnings=tuple(warnings),
    )
