"""Render a Docker build context for a matrix stack (pure: no Docker, no network).

``render(spec, options) -> BuildContext`` turns an :class:`ImageSpec` (the image's view of a matrix
stack) into a Dockerfile and the files beside it. Same inputs, byte-identical output: no times, no
random names, sorted everything. The Dockerfile comes from the Jinja2 template
``dockerfiles/Dockerfile.j2``; the environment from ``dockerfiles/environment.yaml`` (the vendor's
``set_env.sh`` as data, evaluated by :mod:`cannenv.envscript`, which ``cannenv env`` shares); OS
profiles from ``dockerfiles/os.yaml``.

Every value is validated before it reaches the template — a version, file name, image reference or
label that could inject Dockerfile syntax is refused with an :class:`~cannenv.errors.InputError`
naming the field — and the template environment refuses any value carrying a line break as a last
line of defence.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from cannenv.errors import InputError, NotFoundError, did_you_mean
from cannenv.gate import LABEL_DRIVER_RANGE, LABEL_STACK
from cannenv.lock import LockedRequirement

if TYPE_CHECKING:
    from cannenv.artifacts import VerifiedInstaller
    from cannenv.lock import Lock
    from cannenv.matrix import Matrix, Stack

Arch = Literal["x86_64", "aarch64"]
# Matrix component keys of the CANN installers, in install order: toolkit, chip ops/kernels, NNAL.
Component = Literal["cann", "ops", "nnal"]
COMPONENT_ORDER: tuple[Component, ...] = ("cann", "ops", "nnal")
INSTALL_FLAGS = "--quiet --install --install-for-all"  # [CCI] Dockerfiles, versions.md §3.2
SET_ENV = "/usr/local/Ascend/ascend-toolkit/set_env.sh"  # exists in both layouts (versions.md §3.3)

LABEL_MATRIX_DIGEST = "cannenv.matrix-digest"

# What may reach a Dockerfile. Anything else is refused before rendering.
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")
_SAFE_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
_SAFE_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.(?:run|whl)$")
_SAFE_RANGE = re.compile(r"^[A-Za-z0-9.,<>=!* ]{1,200}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_IMAGE_REF = re.compile(
    r"^(?:(?P<registry>[a-zA-Z0-9][a-zA-Z0-9.-]*(?::[0-9]{1,5})?)/)?"
    r"(?P<path>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)
_LABEL_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InstallerRef(_Frozen):
    """One CANN installer the image needs: which file, and its pinned digest if the matrix has one."""

    component: Component
    version: str
    file: str
    sha256: str | None = None


class ImageSpec(_Frozen):
    """What an image is built from: the parts of a matrix stack that the image needs."""

    stack_id: str
    matrix_digest: str
    cann: str
    chip: str  # chip series as in official image tags: 910b, a3, 310p, 910, 950
    arch: Arch = "x86_64"
    python: str  # "3.11"
    torch: str | None = None
    torch_npu: str | None = None
    driver_range: str  # host driver versions the image accepts, e.g. ">=24.1.rc2"
    components: dict[str, str] = {}  # every component version, for labels
    installers: tuple[InstallerRef, ...] = ()
    base_image_digest: str | None = None  # from the matrix, when it pins one


class Wheel(_Frozen):
    """A wheel file in a local wheelhouse, with its hash."""

    name: str  # normalised project name (PEP 503)
    version: str
    file: str
    sha256: str
    path: Path


@dataclass(frozen=True)
class RenderOptions:
    os: str = "ubuntu22.04"
    base_image: str | None = None
    wheels: tuple[Wheel, ...] | None = None  # a local wheelhouse; None: install pins from indexes
    cannenv_wheel: Wheel | None = None
    verified_installers: tuple[VerifiedInstaller, ...] = ()  # from artifacts.verify_installers
    cannenv_version: str | None = None


@dataclass(frozen=True)
class PythonGroup:
    name: str  # base | torch | torch_npu | cannenv
    pip_args: str
    requirements: tuple[LockedRequirement, ...]
    wheels: tuple[Wheel, ...] = ()

    def requirements_txt(self) -> str:
        lines = []
        for r in self.requirements:
            line = f"{r.name}=={r.version}" if r.version else r.name
            if self.wheels:  # pip reads paths relative to its cwd: spell them out
                line = next(f"/tmp/python/{self.name}/{w.file}" for w in self.wheels if w.name == r.name)
            lines.append(line + "".join(f" --hash={h}" for h in r.hashes))
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class BuildContext:
    """A rendered build context: in-memory files plus large files to link or copy in."""

    dockerfile: str
    files: Mapping[str, bytes]  # relative path -> content (Dockerfile, image.json, requirements)
    links: Mapping[str, Path]  # relative path -> source file (installers, wheels)
    link_digests: Mapping[str, str]  # relative path -> sha256 of the linked file
    labels: Mapping[str, str]
    environment: tuple[tuple[str, str], ...]
    requirements: tuple[LockedRequirement, ...]
    base_image: str
    os: str

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
        """Write the context into ``out`` (created; must be empty or absent), atomically.

        The context is written into a temporary sibling folder and renamed to ``out`` only when
        complete: a failure (a full disk, a changed artefact) leaves no partial context behind,
        so the command can simply be run again. Installers and wheels are COPIED, never
        hard-linked, and hashed while copied: the bytes in the context are exactly the ones that
        were verified (a hard link would let a later edit of the artefact change what
        ``docker build`` reads), and an artefact changed since verification is an IntegrityError.
        """
        import contextlib
        import shutil
        import tempfile

        from cannenv.errors import IntegrityError

        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise InputError(f"{out} is not empty", hint="give an empty or new directory to --out")
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
        except OSError as exc:
            raise InputError(f"cannot write the build context {out}: {exc.strerror or exc}") from None
        try:
            for rel, data in sorted(self.files.items()):
                p = tmp / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(data)
            for rel, src in sorted(self.links.items()):
                p = tmp / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                got = _copy_hashed(src, p)
                want = self.link_digests.get(rel)
                if want is not None and want != "unpinned" and got != want:
                    raise IntegrityError(
                        f"{src} changed after it was verified: sha256 {got}, verified {want}",
                        hint="download the artefact again, then render again",
                    )
            tmp.chmod(0o755)
            if out.exists():
                out.rmdir()  # empty (checked above): the rename replaces it
            tmp.rename(out)
        except OSError as exc:
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)
            raise InputError(f"cannot write the build context {out}: {exc.strerror or exc}") from None
        except BaseException:
            with contextlib.suppress(OSError):
                shutil.rmtree(tmp)
            raise
        return out


def _copy_hashed(src: Path, dst: Path, *, chunk: int = 1 << 20) -> str:
    """Copy ``src`` to ``dst`` (a regular file, never a link) and return the sha256 of the bytes
    written: what was hashed is what the build context holds."""
    from cannenv.host import open_regular

    h = hashlib.sha256()
    fd, _ = open_regular(src)
    with os.fdopen(fd, "rb") as fin, dst.open("wb") as fout:
        while True:
            block = fin.read(chunk)
            if not block:
                break
            h.update(block)
            fout.write(block)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------- data


@cache
def _yaml(name: str) -> Any:
    import yaml

    from cannenv.resources import dockerfiles_dir

    return yaml.safe_load((dockerfiles_dir() / name).read_text(encoding="utf-8"))


def os_profiles() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = _yaml("os.yaml")
    return data


def python_settings() -> dict[str, Any]:
    data: dict[str, Any] = _yaml("python.yaml")
    return data


def layout(cann: str) -> Literal["classic", "cann"]:
    """On-disk layout: ``ascend-toolkit/<ver>`` up to 8.3, ``cann-<ver>`` from 8.5 (versions.md §3.3)."""
    from cannenv.versions import CannVersion

    return "cann" if CannVersion.parse(cann).scheme == "v2" else "classic"


# --------------------------------------------------------------------------------- validation


def _refuse(field_name: str, value: object, expected: str) -> InputError:
    return InputError(
        f"{field_name}: {value!r} is not allowed in an image build (expected {expected})",
        hint="values are checked before they reach the Dockerfile; a character outside that set "
        "could inject Dockerfile syntax",
    )


def _check(regex: re.Pattern[str], field_name: str, value: str, expected: str) -> str:
    if not isinstance(value, str) or not regex.match(value) or "\n" in value:
        raise _refuse(field_name, value, expected)
    return value


def check_image_ref(value: str, field_name: str = "base image") -> str:
    expected = "an image reference like 'ubuntu:22.04' or 'name@sha256:<64 hex>'"
    return _check(_IMAGE_REF, field_name, value, expected)


def validate_spec(spec: ImageSpec) -> None:
    """Refuse any value of ``spec`` that could inject Dockerfile syntax or is not what it claims."""
    from cannenv.errors import VersionError
    from cannenv.versions import CannVersion, VersionRange, parse_pep440

    _check(_SAFE_ID, "stack id", spec.stack_id, "letters, digits and . _ + -")
    _check(_SHA256, "matrix digest", spec.matrix_digest.removeprefix("sha256:"), "a sha256 hex digest")
    _check(_SAFE_VERSION, "CANN version", spec.cann, "a CANN version like 8.3.RC2 or 8.5.0")
    try:
        CannVersion.parse(spec.cann)
        if spec.torch is not None:
            _check(_SAFE_VERSION, "torch version", spec.torch, "a PEP 440 version")
            parse_pep440(spec.torch)
        if spec.torch_npu is not None:
            _check(_SAFE_VERSION, "torch_npu version", spec.torch_npu, "a PEP 440 version")
            parse_pep440(spec.torch_npu)
        _check(_SAFE_RANGE, "driver range", spec.driver_range, "a range like '>=24.1.rc2,<26'")
        VersionRange.parse("driver", spec.driver_range)
    except VersionError as exc:
        raise InputError(f"stack {spec.stack_id}: {exc.message}", hint=exc.hint) from None
    _check(re.compile(r"^[a-z0-9]{1,16}$"), "chip series", spec.chip, "a chip series like 910b")
    _check(re.compile(r"^3\.[0-9]{1,2}$"), "python version", spec.python, "a Python version like 3.11")
    for name, version in spec.components.items():
        _check(_LABEL_KEY, "component name", name, "lower-case letters, digits and . _ -")
        _check(
            _SAFE_RANGE if any(c in version for c in "<>=,") else _SAFE_VERSION,
            f"component {name} version",
            version,
            "a version or a version range",
        )
    for inst in spec.installers:
        _check(_SAFE_FILE, f"{inst.component} installer file", inst.file, "a vendor file name ending in .run")
        _check(_SAFE_VERSION, f"{inst.component} installer version", inst.version, "a version")
        if inst.sha256 is not None:
            _check(_SHA256, f"{inst.component} installer sha256", inst.sha256, "64 lower-case hex digits")
    if spec.base_image_digest is not None:
        digest = spec.base_image_digest.removeprefix("sha256:")
        _check(_SHA256, "base image digest", digest, "a sha256 digest")


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


# ----------------------------------------------------------------------------------- python


def wheel_from_file(path: Path) -> Wheel:
    """A :class:`Wheel` for one ``.whl`` file (name and version from its file name, PEP 427)."""
    from cannenv.fsutil import sha256_file
    from cannenv.versions import canonicalize_name

    if not _SAFE_FILE.match(path.name) or not path.name.endswith(".whl"):
        raise _refuse("wheel file", path.name, "a wheel file name (letters, digits, . _ + -)")
    parts = path.name[:-4].split("-")
    if len(parts) < 5:
        raise InputError(f"{path}: not a wheel file name (name-version-python-abi-platform.whl)")
    return Wheel(
        name=canonicalize_name(parts[0]),
        version=parts[1],
        file=path.name,
        sha256=sha256_file(path),
        path=path,
    )


def scan_wheelhouse(directory: Path) -> tuple[Wheel, ...]:
    """Every wheel in ``directory``, sorted by name; refuses two versions of one project."""
    if not directory.is_dir():
        raise InputError(f"wheelhouse {directory} is not a directory")
    wheels = sorted((wheel_from_file(p) for p in directory.glob("*.whl")), key=lambda w: (w.name, w.file))
    seen: dict[str, Wheel] = {}
    for w in wheels:
        if w.name in seen:
            raise InputError(
                f"wheelhouse {directory} holds two wheels of {w.name}: {seen[w.name].file} and {w.file}",
                hint="keep exactly one wheel per project (the pinned one)",
            )
        seen[w.name] = w
    return tuple(wheels)


_WHEELHOUSE_PIP = "--no-index --no-deps --require-hashes --no-cache-dir"


def _wheel_requirement(w: Wheel) -> LockedRequirement:
    hashes = (f"sha256:{w.sha256}",)
    return LockedRequirement(name=w.name, version=w.version, hashes=hashes, source="wheelhouse")


_PYPI = "https://pypi.org/simple"


def _index_group(group: str, name: str, version: str, index: str) -> PythonGroup:
    """A layer that installs one pinned distribution from ``index`` (no hashes: the lock notes it)."""
    req = LockedRequirement(name=name, version=version, source=index)
    return PythonGroup(group, f"--no-cache-dir --index-url {index}", (req,))


# torch_npu last: its pin changes most often, and every layer before it stays cached.
GROUP_ORDER = ("base", "torch", "cannenv", "torch_npu")


def _group_of(name: str) -> str:
    return {"torch": "torch", "torch-npu": "torch_npu", "cannenv": "cannenv"}.get(name, "base")


def python_groups(spec: ImageSpec, options: RenderOptions) -> tuple[PythonGroup, ...]:
    """Python install layers, in :data:`GROUP_ORDER` (base, torch, cannenv, torch_npu)."""
    settings = python_settings()
    groups: list[PythonGroup] = []
    wheels = list(options.wheels or ())
    if options.cannenv_wheel is not None:
        wheels = [w for w in wheels if w.name != "cannenv"] + [options.cannenv_wheel]
    if options.wheels is not None:
        for pin_name, pin in (("torch", spec.torch), ("torch-npu", spec.torch_npu)):
            have = [w for w in wheels if w.name == pin_name]
            if pin is not None and not have:
                raise InputError(
                    f"the wheelhouse has no {pin_name} wheel, "
                    f"but stack {spec.stack_id} pins {pin_name}=={pin}",
                    hint=f"add the wheel (pip download --no-deps {pin_name}=={pin} -d WHEELHOUSE)",
                )
            if pin is not None and have and have[0].version.split("+")[0] != pin.split("+")[0]:
                raise InputError(
                    f"the wheelhouse has {have[0].file}, but stack {spec.stack_id} pins {pin_name}=={pin}",
                    hint="put the pinned version in the wheelhouse",
                )
        for gname in GROUP_ORDER:
            members = tuple(w for w in wheels if _group_of(w.name) == gname)
            if not members:
                continue
            reqs = tuple(_wheel_requirement(w) for w in members)
            groups.append(PythonGroup(gname, _WHEELHOUSE_PIP, reqs, members))
        return tuple(groups)
    base = tuple(LockedRequirement(name=n, version="", source=_PYPI) for n in settings["cann_requirements"])
    groups.append(PythonGroup("base", "--no-cache-dir", base))
    if spec.torch:
        groups.append(_index_group("torch", "torch", spec.torch, settings["torch_index"]))
    if options.cannenv_wheel is not None:
        w = options.cannenv_wheel
        groups.append(PythonGroup("cannenv", "--no-cache-dir", (_wheel_requirement(w),), (w,)))
    else:
        from cannenv import __version__

        req = LockedRequirement(name="cannenv", version=options.cannenv_version or __version__, source=_PYPI)
        groups.append(PythonGroup("cannenv", "--no-cache-dir", (req,)))
    if spec.torch_npu:
        groups.append(_index_group("torch_npu", "torch-npu", spec.torch_npu, settings["torch_npu_index"]))
    return tuple(groups)


# ----------------------------------------------------------------------------------- labels


def image_labels(spec: ImageSpec, base_image: str, cannenv_version: str) -> dict[str, str]:
    """OCI annotations plus cannenv's own labels (sorted when rendered)."""
    labels = {
        "org.opencontainers.image.title": f"cannenv stack {spec.stack_id}",
        "org.opencontainers.image.description": (
            f"CANN {spec.cann} for {spec.chip} ({spec.arch}), Python {spec.python}"
            + (f", torch {spec.torch}" if spec.torch else "")
            + (f", torch_npu {spec.torch_npu}" if spec.torch_npu else "")
            + "; built by cannenv from checksum-verified installers"
        ),
        "org.opencontainers.image.version": spec.stack_id,
        "org.opencontainers.image.base.name": base_image.split("@")[0],
        "org.opencontainers.image.licenses": "NOASSERTION",
        LABEL_STACK: spec.stack_id,
        LABEL_MATRIX_DIGEST: spec.matrix_digest,
        LABEL_DRIVER_RANGE: spec.driver_range,
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
        if not _LABEL_KEY.match(key) or _CONTROL.search(value):
            raise _refuse(f"label {key}", value, "a single line of printable text")
    return dict(sorted(labels.items()))


# ----------------------------------------------------------------------------------- stacks


def spec_from_stack(stack: Stack, matrix: Matrix, *, arch: str | None = None) -> ImageSpec:
    """The image's view of a matrix stack on one architecture (default: the stack's only/first one).

    Installer file names come from the stack's artifacts, else from the matrix's era patterns
    (versions.md §3.1); digests only from the stack's artifacts (None = not pinned). The driver range
    is the matrix's rule for the stack's CANN on its family, else ``>=`` the stack's own driver.
    """
    from cannenv.soc import family_info

    a = arch or (stack.arches[0] if len(stack.arches) == 1 else _host_arch())
    if a not in stack.arches:
        raise InputError(
            f"stack {stack.id} is for {', '.join(stack.arches)}, not {a}",
            hint="pick one with --arch",
        )
    cann = stack.version("cann")
    if cann is None:
        raise InputError(f"stack {stack.id} has no cann component; an image needs the CANN toolkit")
    installers = []
    for key in COMPONENT_ORDER:
        version = stack.version(key)
        if version is None:
            continue
        art = stack.artifact(key, a)
        if art is not None:
            file, sha = art.file, art.sha256
        else:
            file, sha = matrix.installer_file(key, version, stack.family, a, cann=cann).file, None
        installers.append(InstallerRef(component=key, version=version, file=file, sha256=sha))
    req = matrix.driver_requirement(cann, stack.family)
    driver = stack.version("driver")
    driver_range = req.range if req is not None else (f">={driver}" if driver else "*")
    chip = family_info(stack.family).image_chip or stack.family
    python = stack.version("python")
    if python is None:
        raise InputError(f"stack {stack.id} has no python component; an image needs one")
    return ImageSpec(
        stack_id=stack.id,
        matrix_digest=matrix.digest,
        cann=cann,
        chip=chip,
        arch=a,
        python=".".join(python.split(".")[:2]),
        torch=stack.version("torch"),
        torch_npu=stack.version("torch_npu"),
        driver_range=driver_range,
        components={k: c.version for k, c in sorted(stack.components.items())},
        installers=tuple(installers),
    )


def _host_arch() -> str:
    import platform

    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


# ----------------------------------------------------------------------------------- render


def _finalize(value: object) -> object:
    """Jinja finalize hook: the last guard against a value that breaks out of its line."""
    if isinstance(value, str) and _CONTROL.search(value):
        raise _refuse("template value", value, "a single line without control characters")
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
    profiles = os_profiles()
    if options.os not in profiles:
        raise NotFoundError(
            f"unknown OS {options.os!r} for images",
            hint=did_you_mean(options.os, list(profiles)) or "known: " + ", ".join(sorted(profiles)),
        )
    if options.base_image:
        return check_image_ref(options.base_image, "--base-image")
    default = profiles[options.os]["base_image"]
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


def render(spec: ImageSpec, options: RenderOptions) -> BuildContext:
    """The build context for ``spec``: pure and deterministic."""
    from cannenv import __version__

    validate_spec(spec)
    cannenv_version = options.cannenv_version or __version__
    _check(_SAFE_VERSION, "cannenv version", cannenv_version, "a version")
    base = resolve_base_image(spec, options)
    profile = os_profiles()[options.os]
    install = profile.get("install")
    os_install = str(install).format(python=spec.python) if install else None
    python_exe = str(profile["python"]).format(python=spec.python)
    venv = str(python_settings()["venv"])

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

    groups = python_groups(spec, options)
    files: dict[str, bytes] = {}
    for g in groups:
        files[f"python/{g.name}/requirements.txt"] = g.requirements_txt().encode()
        for w in g.wheels:
            links[f"python/{g.name}/{w.file}"] = w.path
            link_digests[f"python/{g.name}/{w.file}"] = w.sha256

    labels = image_labels(spec, base, cannenv_version)
    environment = cann_environment(spec.cann, spec.arch, nnal="nnal" in by_comp)
    image_info = {
        "schema_version": 1,
        "labels": labels,
        "installers": [i.model_dump() for i in spec.installers],
        "python_requirements": [r.model_dump() for g in groups for r in g.requirements],
    }
    files["image.json"] = (json.dumps(image_info, indent=2, sort_keys=True) + "\n").encode()
    text = _template().render(
        cannenv_version=cannenv_version,
        stack_id=spec.stack_id,
        base_image=base,
        os_install=os_install,
        installers=installers,
        install_flags=INSTALL_FLAGS,
        set_env=SET_ENV,
        python_exe=python_exe,
        python=spec.python,
        venv=venv,
        overlay=f"{venv}-top",
        python_groups=[{"name": g.name, "pip_args": g.pip_args} for g in groups],
        environment=[(k, json.dumps(v)) for k, v in environment],
        labels=[(k, json.dumps(v)) for k, v in labels.items()],
        driver_range_quoted=json.dumps(spec.driver_range),
    )
    files["Dockerfile"] = text.encode()
    files[".dockerignore"] = b"# everything in this context is used by the Dockerfile\n"
    return BuildContext(
        dockerfile=text,
        files=dict(sorted(files.items())),
        links=dict(sorted(links.items())),
        link_digests=dict(sorted(link_digests.items())),
        labels=labels,
        environment=environment,
        requirements=tuple(r for g in groups for r in g.requirements),
        base_image=base,
        os=options.os,
    )


# ------------------------------------------------------------------------------------- lock


def lock_for(
    spec: ImageSpec,
    ctx: BuildContext,
    verified_installers: Iterable[VerifiedInstaller],
    *,
    base_image_digest: str | None = None,
    image_id: str | None = None,
    tag: str | None = None,
    cannenv_version: str | None = None,
) -> Lock:
    """The lock record of a build, with the digests of the installer files used."""
    from cannenv import __version__
    from cannenv.lock import Lock, LockedInstaller

    used = {v.ref.component: (v.sha256, v.pinned) for v in verified_installers}
    installers = []
    notes = []
    for ref in spec.installers:
        digest, pinned = used.get(ref.component, (ref.sha256 or "", ref.sha256 is not None))
        if not digest:
            raise InputError(f"no verified digest for the {ref.component} installer {ref.file}")
        if not pinned:
            notes.append(f"{ref.file}: not pinned in the matrix; sha256 recorded from the file used")
        installers.append(
            LockedInstaller(
                component=ref.component, version=ref.version, file=ref.file, sha256=digest, pinned=pinned
            )
        )
    hashed = any(r.hashes for r in ctx.requirements if r.name in ("torch", "torch-npu"))
    if (spec.torch or spec.torch_npu) and not hashed:
        notes.append(
            "torch/torch_npu installed from indexes by version pin, without hashes "
            "(give --wheelhouse for hash-pinned Python inputs)"
        )
    if "@" not in ctx.base_image:
        notes.append(f"base image {ctx.base_image} is a tag, not a digest")
    return Lock(
        stack_id=spec.stack_id,
        matrix_digest=spec.matrix_digest,
        cannenv_version=cannenv_version or __version__,
        os=ctx.os,
        base_image=ctx.base_image,
        base_image_digest=base_image_digest,
        context_digest=ctx.digest,
        installers=tuple(installers),
        python_requirements=ctx.requirements,
        driver_range=spec.driver_range,
        tag=tag,
        image_id=image_id,
        notes=tuple(notes),
    )


# ----------------------------------------------------------------------------------- verify


@dataclass(frozen=True)
class VerifyOutcome:
    ok: bool
    problems: tuple[str, ...]
    software: tuple[tuple[str, str], ...]  # (check id, status)
    device: tuple[tuple[str, str], ...]


def is_device_finding(finding: Mapping[str, Any]) -> bool:
    """The doctor marks findings about the NPU, its driver/firmware and their mounts ``scope: device``."""
    return finding.get("scope") == "device"


def judge_verify(report: Mapping[str, Any]) -> VerifyOutcome:
    """Judge ``cannenv doctor --json`` run inside an image with no devices.

    Software checks must not fail (``fail``/``error``); device checks must be ``skip`` — a device
    ``pass`` inside a device-less container would be a false pass, a ``fail`` a false alarm.
    """
    findings = report.get("findings")
    if not isinstance(findings, list):
        return VerifyOutcome(False, ("the doctor's JSON has no findings list",), (), ())
    problems: list[str] = []
    software: list[tuple[str, str]] = []
    device: list[tuple[str, str]] = []
    for f in findings:
        if not isinstance(f, Mapping):
            continue
        fid, status = str(f.get("id", "?")), str(f.get("status", "?"))
        label = fid + (f" [{f['subject']}]" if f.get("subject") else "")
        if is_device_finding(f):
            device.append((fid, status))
            if status != "skip":
                problems.append(
                    f"device check {label} reported {status!r} in an image with no devices "
                    f"(expected 'skip'): {f.get('detail', '')}"
                )
        else:
            software.append((fid, status))
            if status in ("fail", "error"):
                problems.append(f"software check {label} reported {status!r}: {f.get('detail', '')}")
    if not software:
        problems.append("the doctor reported no software checks")
    return VerifyOutcome(not problems, tuple(problems), tuple(software), tuple(device))


# --------------------------------------------------------------------------------- run-args


# `docker run` flags an NPU host needs (versions.md §6.3: identical in [CCI], [PT-DOCKER],
# [VA-INSTALL], [ADOCS]): one /dev/davinciN per NPU, the management devices, and the host's
# driver files (the driver is never inside an image). version.info is what `cannenv gate` reads.
def parse_devices(text: str) -> tuple[int, ...]:
    """``0,1`` / ``0-7`` / ``0,2-3`` -> sorted unique NPU ids."""
    ids: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d{1,3})(?:-(\d{1,3}))?", part)
        if not m:
            raise InputError(
                f"--devices: {part!r} is not an NPU id or range",
                hint="give ids like 0,1 or a range like 0-7",
            )
        lo, hi = int(m[1]), int(m[2] if m[2] is not None else m[1])
        if hi < lo:
            raise InputError(f"--devices: range {part!r} runs backwards", hint="write it low-high, e.g. 0-7")
        ids.update(range(lo, hi + 1))
    return tuple(sorted(ids))


def run_args(devices: str) -> list[str]:
    """Flat list of ``docker run`` flags (``--device X`` / ``-v A:B:ro`` pairs) for NPUs ``devices``."""
    from cannenv.layout import DEVICE_NODES, DRIVER_VOLUMES

    flags: list[str] = []
    for n in parse_devices(devices):
        flags += ["--device", f"/dev/davinci{n}"]
    for dev in DEVICE_NODES:
        flags += ["--device", dev]
    for volume in DRIVER_VOLUMES.values():
        flags += ["-v", f"{volume}:ro"]
    return flags
