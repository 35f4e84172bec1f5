"""What an image is built from: :class:`ImageSpec` (the image's view of a matrix stack), its inputs'
value types, the OS profiles, and the validation every value passes before it reaches a Dockerfile.

This is the bottom of the image package: :mod:`cannenv.artifacts` (which locates and verifies
installer files) and the renderer both build on it, and it imports neither.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cannenv.errors import InputError, NotFoundError, did_you_mean

if TYPE_CHECKING:
    from cannenv.matrix import Matrix, Stack

Arch = Literal["x86_64", "aarch64"]
ARCHES: tuple[Arch, ...] = ("x86_64", "aarch64")
# The engine's and the OCI image config's names for our architectures.
OCI_ARCH: dict[str, str] = {"x86_64": "amd64", "aarch64": "arm64"}
# Matrix component keys of the CANN installers, in install order: toolkit, chip ops/kernels, NNAL.
Component = Literal["cann", "ops", "nnal"]
COMPONENT_ORDER: tuple[Component, ...] = ("cann", "ops", "nnal")
INSTALL_FLAGS = "--quiet --install --install-for-all"  # [CCI] Dockerfiles, versions.md §3.2

# What may reach a Dockerfile. Anything else is refused before rendering.
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}\Z")
SAFE_VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z")
SAFE_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.(?:run|whl)\Z")
SAFE_RANGE = re.compile(r"^[A-Za-z0-9.,<>=!* ]{1,200}\Z")
SHA256 = re.compile(r"^[0-9a-f]{64}\Z")
IMAGE_REF = re.compile(
    r"^(?:(?P<registry>[a-zA-Z0-9][a-zA-Z0-9.-]*(?::[0-9]{1,5})?)/)?"
    r"(?P<path>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?\Z"
)
LABEL_KEY = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}\Z")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InstallerRef(_Frozen):
    """One CANN installer the image needs: which file, and its pinned digest if the matrix has one."""

    component: Component
    version: str
    file: str
    sha256: str | None = None
    url: str | None = None  # where the vendor publishes it (for the SBOM)
    # The vendor's .zip download that carries ``file``, with the vendor's digest of the zip
    # (Matrix.vendor_archive): accepted in --artifacts in place of the bare .run (cannenv.vendorzip).
    archive: str | None = None
    archive_sha256: str | None = None
    archive_source: str | None = None  # the matrix source ids and manifest path of that digest
    # Without any digest: why the matrix has none (Matrix.digest_gap), for the refusal; not recorded.
    digest_gap: str | None = Field(default=None, exclude=True)


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
class VerifiedInstaller:
    """An installer file found in ``--artifacts`` and hashed (:func:`cannenv.artifacts.verify_installers`)."""

    ref: InstallerRef
    path: Path
    sha256: str
    pinned: bool  # True: matched the matrix's digest; False: no digest pinned (allowed explicitly)
    from_archive: bool = False  # True: extracted from ref.archive after its vendor digest matched


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


def os_profile(os_id: str) -> dict[str, Any]:
    profiles = os_profiles()
    if os_id not in profiles:
        raise NotFoundError(
            f"unknown OS {os_id!r} for images",
            hint=did_you_mean(os_id, list(profiles)) or "known: " + ", ".join(sorted(profiles)),
        )
    return profiles[os_id]


def check_os_python(os_id: str, python: str, stack_id: str) -> None:
    """Refuse a stack whose Python the OS profile cannot provide (its ``pythons`` list)."""
    profile = os_profile(os_id)
    pythons = profile.get("pythons")
    if pythons is None:  # `preinstalled`: whatever the base image has; the python stage checks it
        return
    if python not in [str(p) for p in pythons]:
        fits = [k for k, p in os_profiles().items() if p.get("pythons") and python in map(str, p["pythons"])]
        raise InputError(
            f"OS profile {os_id!r} cannot build stack {stack_id}: it needs Python {python}, "
            f"and {os_id} provides Python {', '.join(map(str, pythons))} "
            f"({profile.get('python_source', '')})",
            hint=("use --os " + " or --os ".join(fits))
            if fits
            else f"use --os preinstalled with a base image that has Python {python}",
        )


def layout(cann: str) -> Literal["classic", "cann"]:
    """On-disk layout: ``ascend-toolkit/<ver>`` up to 8.3, ``cann-<ver>`` from 8.5 (versions.md §3.3)."""
    from cannenv.versions import CannVersion

    return "cann" if CannVersion.parse(cann).scheme == "v2" else "classic"


# --------------------------------------------------------------------------------- validation


def refuse(field_name: str, value: object, expected: str) -> InputError:
    return InputError(
        f"{field_name}: {value!r} is not allowed in an image build (expected {expected})",
        hint="values are checked before they reach the Dockerfile; a character outside that set "
        "could inject Dockerfile syntax",
    )


def check(regex: re.Pattern[str], field_name: str, value: str, expected: str) -> str:
    if not isinstance(value, str) or not regex.match(value) or "\n" in value:
        raise refuse(field_name, value, expected)
    return value


def check_image_ref(value: str, field_name: str = "base image") -> str:
    expected = "an image reference like 'ubuntu:22.04' or 'name@sha256:<64 hex>'"
    return check(IMAGE_REF, field_name, value, expected)


def validate_spec(spec: ImageSpec) -> None:
    """Refuse any value of ``spec`` that could inject Dockerfile syntax or is not what it claims."""
    from cannenv.errors import VersionError
    from cannenv.versions import CannVersion, VersionRange, parse_pep440

    check(SAFE_ID, "stack id", spec.stack_id, "letters, digits and . _ + -")
    check(SHA256, "matrix digest", spec.matrix_digest.removeprefix("sha256:"), "a sha256 hex digest")
    check(SAFE_VERSION, "CANN version", spec.cann, "a CANN version like 8.3.RC2 or 8.5.0")
    try:
        CannVersion.parse(spec.cann)
        if spec.torch is not None:
            check(SAFE_VERSION, "torch version", spec.torch, "a PEP 440 version")
            parse_pep440(spec.torch)
        if spec.torch_npu is not None:
            check(SAFE_VERSION, "torch_npu version", spec.torch_npu, "a PEP 440 version")
            parse_pep440(spec.torch_npu)
        check(SAFE_RANGE, "driver range", spec.driver_range, "a range like '>=24.1.rc2,<26'")
        VersionRange.parse("driver", spec.driver_range)
    except VersionError as exc:
        raise InputError(f"stack {spec.stack_id}: {exc.message}", hint=exc.hint) from None
    check(re.compile(r"^[a-z0-9]{1,16}\Z"), "chip series", spec.chip, "a chip series like 910b")
    check(re.compile(r"^3\.[0-9]{1,2}\Z"), "python version", spec.python, "a Python version like 3.11")
    for name, version in spec.components.items():
        check(LABEL_KEY, "component name", name, "lower-case letters, digits and . _ -")
        check(
            SAFE_RANGE if any(c in version for c in "<>=,") else SAFE_VERSION,
            f"component {name} version",
            version,
            "a version or a version range",
        )
    for inst in spec.installers:
        check(SAFE_FILE, f"{inst.component} installer file", inst.file, "a vendor file name ending in .run")
        check(SAFE_VERSION, f"{inst.component} installer version", inst.version, "a version")
        if inst.sha256 is not None:
            check(SHA256, f"{inst.component} installer sha256", inst.sha256, "64 lower-case hex digits")
    if spec.base_image_digest is not None:
        digest = spec.base_image_digest.removeprefix("sha256:")
        check(SHA256, "base image digest", digest, "a sha256 digest")


# ----------------------------------------------------------------------------------- stacks


def spec_from_stack(
    stack: Stack, matrix: Matrix, *, arch: str | None = None, nnal: bool = False
) -> ImageSpec:
    """The image's view of a matrix stack on one architecture (default: the stack's only/first one).

    Installer file names come from the stack's artifacts, else from the matrix's era patterns
    (versions.md §3.1); digests only from the stack's artifacts (None = not pinned). The driver range
    is the matrix's rule for the stack's CANN on its family, else ``>=`` the stack's own driver.

    NNAL (ATB, for LLM serving) is in the image only with ``nnal=True`` (``--with-nnal``): the vendor
    publishes no sha256 for its installer (no ascend-deployer release lists an NNAL package), so it
    would make every build of a shipped stack unpinned. Left out, the spec names neither its
    installer nor its version.
    """
    from cannenv.soc import family_info

    a = arch or (stack.arches[0] if len(stack.arches) == 1 else host_arch())
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
        if version is None or (key == "nnal" and not nnal):
            continue
        art = stack.artifact(key, a)
        if art is not None:
            file, sha, url = art.file, art.sha256, art.url
        else:
            file, sha, url = matrix.installer_file(key, version, stack.family, a, cann=cann).file, None, None
        if file.endswith(".zip"):
            # a (site) matrix that pins the vendor's .zip download itself, as `provision` installs
            # it: the image installs the .run of the same name inside, verified through the zip
            run = file[: -len(".zip")] + ".run"
            installers.append(
                InstallerRef(
                    component=key,
                    version=version,
                    file=run,
                    url=url,
                    archive=file,
                    archive_sha256=sha,
                    archive_source=f"stack {stack.id} of the matrix" if sha else None,
                    digest_gap=None if sha else matrix.digest_gap(run),
                )
            )
            continue
        zipped = matrix.vendor_archive(file)
        if zipped is not None and zipped.file == file:  # the manifest lists the .run itself
            sha, url, zipped = sha or zipped.sha256, url or zipped.url, None
        installers.append(
            InstallerRef(
                component=key,
                version=version,
                file=file,
                sha256=sha,
                url=url,
                archive=zipped.file if zipped else None,
                archive_sha256=zipped.sha256 if zipped else None,
                archive_source=", ".join(zipped.sources) + (f" {zipped.note}" if zipped.note else "")
                if zipped
                else None,
                digest_gap=None if sha or zipped else matrix.digest_gap(file),
            )
        )
    req = matrix.driver_requirement(cann, stack.family, stack.product)
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
        components={k: c.version for k, c in sorted(stack.components.items()) if k != "nnal" or nnal},
        installers=tuple(installers),
    )


def nnal_left_out(with_nnal: ImageSpec) -> str:
    """The note for an image that leaves out the NNAL of its stack (``with_nnal``: the spec made with
    ``nnal=True``): what is missing, how to add it, and what adding it takes."""
    ref = next(i for i in with_nnal.installers if i.component == "nnal")
    text = f"NNAL {ref.version} (ATB, for LLM serving) is not in this image; add it with --with-nnal."
    if ref.sha256 is not None or ref.archive_sha256 is not None:
        return text + f" The matrix pins the sha256 of {ref.archive or ref.file}."
    return (
        f"{text} No vendor manifest gives a sha256 for {ref.file}, so it then also needs "
        "--allow-unpinned: the sha256 of the file used is recorded in the lock (pinned: false), and "
        "`image build --locked LOCK --allow-unpinned` rebuilds only from those same bytes."
    )


def host_arch() -> str:
    import platform

    machine = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
