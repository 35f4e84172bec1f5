"""The Python side of an image: wheels and wheelhouses, CANN's own Python dependencies per CANN
version (``dockerfiles/cann_python.yaml``), and the install layers (:class:`PythonGroup`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import InputError
from cannenv.image.spec import SAFE_FILE, Wheel, _yaml, python_settings, refuse
from cannenv.lock import LockedRequirement

if TYPE_CHECKING:
    from cannenv.image.spec import ImageSpec


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
class CannPythonPins:
    """CANN's Python dependencies for one CANN version: project -> pinned version (None: unpinned)."""

    cann: str
    requirements: tuple[tuple[str, str | None], ...]
    source: str  # readable source name and URL
    where: str


def cann_python_pins(cann: str) -> CannPythonPins:
    """The first rule of ``dockerfiles/cann_python.yaml`` whose range holds ``cann``."""
    from cannenv.versions import CannVersion, VersionRange, canonicalize_name

    data: dict[str, Any] = _yaml("cann_python.yaml")
    version = CannVersion.parse(cann)
    for rule in data["rules"]:
        if rule["cann"] != "*" and not VersionRange.parse("cann", rule["cann"]).contains(version):
            continue
        src = data["sources"][rule["source"]]
        reqs = tuple(
            sorted(
                (canonicalize_name(k), None if v is None else str(v)) for k, v in rule["requirements"].items()
            )
        )
        return CannPythonPins(cann, reqs, f"{src['title']} <{src['url']}>", str(rule["where"]))
    raise InputError(f"dockerfiles/cann_python.yaml has no rule for CANN {cann}")  # pragma: no cover


def wheel_from_file(path: Path) -> Wheel:
    """A :class:`Wheel` for one ``.whl`` file (name and version from its file name, PEP 427)."""
    from cannenv.fsutil import sha256_file
    from cannenv.versions import canonicalize_name

    if not SAFE_FILE.match(path.name) or not path.name.endswith(".whl"):
        raise refuse("wheel file", path.name, "a wheel file name (letters, digits, . _ + -)")
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


def wheel_requirement(w: Wheel) -> LockedRequirement:
    hashes = (f"sha256:{w.sha256}",)
    return LockedRequirement(name=w.name, version=w.version, hashes=hashes, source="wheelhouse")


def _index_group(group: str, name: str, version: str, index: str) -> PythonGroup:
    """A layer that installs one pinned distribution from ``index`` (no hashes: the lock notes it)."""
    req = LockedRequirement(name=name, version=version, source=index)
    return PythonGroup(group, f"--no-cache-dir --index-url {index}", (req,))


# torch_npu last: its pin changes most often, and every layer before it stays cached.
GROUP_ORDER = ("base", "torch", "cannenv", "torch_npu")


def _group_of(name: str) -> str:
    return {"torch": "torch", "torch-npu": "torch_npu", "cannenv": "cannenv"}.get(name, "base")


def _same_version(have: str, want: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(have.split("+")[0]) == Version(want.split("+")[0])
    except InvalidVersion:
        return have == want


def check_wheelhouse(spec: ImageSpec, wheels: tuple[Wheel, ...]) -> None:
    """Refuse, before any build step, a wheelhouse that lacks a pinned input or holds another version.

    Checked together and named together: CANN's Python dependencies, torch and torch_npu.
    """
    pins = cann_python_pins(spec.cann)
    by_name = {w.name: w for w in wheels}
    groups = (
        (f"CANN {spec.cann} needs ({pins.source}: {pins.where})", pins.requirements),
        (
            f"stack {spec.stack_id} pins",
            tuple((n, v) for n, v in (("torch", spec.torch), ("torch-npu", spec.torch_npu)) if v is not None),
        ),
    )
    problems, fetch = [], []
    for why, wanted in groups:
        missing, wrong = [], []
        for name, version in wanted:
            have = by_name.get(name)
            spelled = f"{name}=={version}" if version else name
            if have is None:
                missing.append(spelled)
                fetch.append(spelled)
            elif version is not None and not _same_version(have.version, version):
                wrong.append(f"{spelled} (the wheelhouse has {have.file})")
                fetch.append(spelled)
        if missing:
            problems.append(f"no wheel for {', '.join(missing)}, which {why}")
        if wrong:
            problems.append(f"another version of {', '.join(wrong)}, which {why}")
    if problems:
        raise InputError(
            "the wheelhouse cannot build this image: " + "; ".join(problems),
            hint="add the pinned wheels, e.g. "
            f"`pip download --only-binary=:all: --no-deps -d WHEELHOUSE {' '.join(fetch)}`",
        )


def python_groups(
    spec: ImageSpec,
    wheels_in: tuple[Wheel, ...] | None,
    cannenv_wheel: Wheel | None,
    cannenv_version: str,
    base_pins: tuple[LockedRequirement, ...] | None = None,
) -> tuple[PythonGroup, ...]:
    """Python install layers, in :data:`GROUP_ORDER` (base, torch, cannenv, torch_npu).

    ``base_pins`` (index mode): CANN's Python requirements and their dependencies, each with its
    version and hash (:mod:`cannenv.image.pins`): the first layer installs exactly those."""
    settings = python_settings()
    groups: list[PythonGroup] = []
    if wheels_in is not None:
        wheels = list(wheels_in)
        if cannenv_wheel is not None:
            wheels = [w for w in wheels if w.name != "cannenv"] + [cannenv_wheel]
        check_wheelhouse(spec, tuple(wheels))
        for gname in GROUP_ORDER:
            members = tuple(w for w in wheels if _group_of(w.name) == gname)
            if not members:
                continue
            reqs = tuple(wheel_requirement(w) for w in members)
            groups.append(PythonGroup(gname, _WHEELHOUSE_PIP, reqs, members))
        return tuple(groups)
    pins = cann_python_pins(spec.cann)
    index = str(settings["index"])
    if base_pins:
        args = f"--no-cache-dir --no-deps --require-hashes --index-url {index}"
        groups.append(PythonGroup("base", args, tuple(sorted(base_pins, key=lambda r: r.name))))
    else:
        base = tuple(LockedRequirement(name=n, version=v or "", source=index) for n, v in pins.requirements)
        groups.append(PythonGroup("base", f"--no-cache-dir --index-url {index}", base))
    if spec.torch:
        groups.append(_index_group("torch", "torch", spec.torch, settings["torch_index"]))
    if cannenv_wheel is not None:
        w = cannenv_wheel
        groups.append(PythonGroup("cannenv", "--no-cache-dir", (wheel_requirement(w),), (w,)))
    else:
        req = LockedRequirement(name="cannenv", version=cannenv_version, source=index)
        groups.append(PythonGroup("cannenv", "--no-cache-dir", (req,)))
    if spec.torch_npu:
        groups.append(_index_group("torch_npu", "torch-npu", spec.torch_npu, settings["torch_npu_index"]))
    return tuple(groups)
