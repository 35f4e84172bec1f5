"""The setup a certificate records, and how to rebuild it elsewhere (`cannenv cert replay`).

A certificate is meant to be enough to rebuild what it certifies ("recorded as one whole"):

* ``stack``: the stack the doctor stage judged against, how it was chosen and why (as
  `cannenv doctor` chooses: ``--lock``, ``--stack``, else the best match for what is installed),
  the full pins of that stack (each component's version, package, and per architecture the
  installer or wheel with its sha256 and URL where the matrix knows them), and the whole lock
  file when one was given;
* ``host``: a summary, the sha256 of the full facts and the exact versions found;
* ``image``: the cannenv image it ran in, when it did.

:func:`replay_steps` turns a certificate into the list of what a new machine must install to
match, in install order (driver and firmware, CANN toolkit, ops, NNAL, Python, torch, torch_npu).
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cannenv.certify.certificate import (
    ArtifactPin,
    Certificate,
    ComponentPin,
    HostInfo,
    ImageInfo,
    StackInfo,
    digest_of,
)

if TYPE_CHECKING:
    from cannenv.certify.context import RunContext
    from cannenv.host import Host
    from cannenv.matrix import Stack

IMAGE_ENV = {"CANNENV_IMAGE_REF": "ref", "CANNENV_IMAGE_ID": "id", "CANNENV_IMAGE_DIGEST": "digest"}

INSTALL_ORDER = ("firmware", "driver", "cann", "ops", "nnal", "python", "torch", "torch_npu")
"""The vendor's install order (HDK first, then the CANN toolkit and its kernels, then Python)."""


def pins_of(stack: Stack) -> dict[str, ComponentPin]:
    """Every pinned component of ``stack`` with its files and digests."""
    return {
        name: ComponentPin(
            version=comp.version,
            package=comp.package,
            artifacts={
                arch: ArtifactPin(file=a.file, sha256=a.sha256, url=a.url)
                for arch, a in comp.artifacts.items()
            },
        )
        for name, comp in stack.components.items()
    }


def stack_info(ctx: RunContext) -> StackInfo:
    """The target the run was judged against (the doctor stage's choice), with its full pins."""
    from cannenv.matrix import load

    matrix = load(list(ctx.options.matrix_paths) or None)
    lock: dict[str, Any] | None = None
    if ctx.options.lock:
        from cannenv.lock import load_lock

        lock = load_lock(ctx.options.lock).model_dump(mode="json")
    target = ctx.target()
    if target is None:
        # No facts: only --stack/--lock can name the stack.
        sid = ctx.options.stack_id or (lock or {}).get("stack_id")
        if sid is None:
            return StackInfo(
                matrix_digest=matrix.digest,
                how="none",
                reason=f"the host facts could not be collected ({ctx.facts_error})",
                lock=lock,
            )
        stack = matrix.stack(sid)
        how, reason = ("lock", "from the lock file") if ctx.options.lock else ("option", "given with --stack")
    else:
        choice = target.choice
        if target.stack is None:
            return StackInfo(matrix_digest=matrix.digest, how=choice.how, reason=choice.reason, lock=lock)
        stack, how, reason = target.stack, choice.how, choice.reason
    return StackInfo(
        id=stack.id,
        matrix_digest=matrix.digest,
        versions={name: comp.version for name, comp in stack.components.items()},
        how=how,
        reason=reason,
        pins=pins_of(stack),
        lock=lock,
    )


def host_info(ctx: RunContext) -> HostInfo:
    """Summary, digest and exact versions of the doctor's facts; platform facts if the probes fail."""
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
    from cannenv.checks.stack import installed_versions

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
        versions=installed_versions(facts),
    )


def image_info(env: Any, host: Host) -> ImageInfo | None:
    """The cannenv image this runs in: ``/etc/cannenv/image.json`` (baked in by `cannenv image build`)
    plus ``CANNENV_IMAGE_REF/ID/DIGEST`` from the environment (an image cannot know its own digest;
    pass it with ``docker run -e CANNENV_IMAGE_DIGEST=...``). None outside a cannenv image."""
    from cannenv.gate import IMAGE_INFO, LABEL_STACK

    fields: dict[str, Any] = {}
    labels: dict[str, str] = {}
    sources: list[str] = []
    if host.is_file(IMAGE_INFO):
        from cannenv import records
        from cannenv.errors import InputError

        try:  # bounded, regular files only, resolved inside the root (cannenv/host.py)
            data = records.parse_json(host.read_bytes(IMAGE_INFO, 1 << 20).decode("utf-8"), source=IMAGE_INFO)
        except (OSError, ValueError, InputError):
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
# Replay: what a new machine installs to match a certificate


@dataclass(frozen=True)
class ReplayStep:
    component: str
    version: str
    package: str | None = None
    file: str | None = None
    sha256: str | None = None
    url: str | None = None
    found: str | None = None
    """The version the certified host had (``host.versions``), for comparison."""
    source: str = "stack"
    """Where the pin comes from: ``lock`` (installer digest from the lock) or ``stack``."""

    def line(self) -> str:
        what = f"{self.component} {self.version}"
        if self.package:
            what += f" ({self.package})"
        if self.file:
            what += f": {self.file}"
            what += f" sha256 {self.sha256}" if self.sha256 else " (sha256 not in the matrix)"
        if self.found and self.found != self.version:
            what += f"  [certified host had {self.found}]"
        return what


@dataclass(frozen=True)
class Replay:
    stack_id: str | None
    how: str | None
    reason: str | None
    arch: str | None
    steps: tuple[ReplayStep, ...]
    image: ImageInfo | None
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "stack_id": self.stack_id,
            "how": self.how,
            "reason": self.reason,
            "arch": self.arch,
            "steps": [asdict(s) for s in self.steps],
            "image": self.image.model_dump(mode="json") if self.image else None,
            "notes": list(self.notes),
        }


def replay_steps(cert: Certificate, *, arch: str | None = None) -> Replay:
    """What to install, in order, to match the setup ``cert`` certifies (pure)."""
    st = cert.stack
    found = cert.host.versions
    arch = arch or cert.host.summary.get("arch")
    notes: list[str] = []
    locked: dict[str, dict[str, Any]] = {}
    if st.lock:
        for inst in st.lock.get("installers") or ():
            if isinstance(inst, dict) and isinstance(inst.get("component"), str):
                locked[inst["component"]] = inst
        for req in st.lock.get("python_requirements") or ():
            if isinstance(req, dict) and isinstance(req.get("name"), str):
                locked.setdefault(req["name"].replace("-", "_"), req)
    steps: list[ReplayStep] = []
    names = sorted(st.pins, key=lambda n: (INSTALL_ORDER.index(n) if n in INSTALL_ORDER else 99, n))
    for name in names:
        pin = st.pins[name]
        art = pin.artifacts.get(arch or "")
        lk = locked.get(name)
        if lk and isinstance(lk.get("sha256"), str):
            steps.append(
                ReplayStep(
                    component=name,
                    version=str(lk.get("version") or pin.version),
                    package=pin.package,
                    file=str(lk.get("file")) if lk.get("file") else None,
                    sha256=lk["sha256"],
                    url=art.url if art else None,
                    found=found.get(name),
                    source="lock",
                )
            )
            continue
        steps.append(
            ReplayStep(
                component=name,
                version=pin.version,
                package=pin.package,
                file=art.file if art else None,
                sha256=art.sha256 if art else None,
                url=art.url if art else None,
                found=found.get(name),
            )
        )
    if not st.pins:
        if st.id is None:
            notes.append(
                f"the certificate names no stack ({st.reason or 'none chosen'}): "
                "only the versions found on the certified host can guide a rebuild"
            )
            for name in sorted(
                found, key=lambda n: (INSTALL_ORDER.index(n) if n in INSTALL_ORDER else 99, n)
            ):
                steps.append(ReplayStep(component=name, version=found[name], source="host"))
        else:
            notes.append(f"the certificate records stack {st.id} without its pins (an older certificate)")
            for name, version in st.versions.items():
                steps.append(ReplayStep(component=name, version=version))
    missing = [s.component for s in steps if s.file and not s.sha256]
    if missing:
        notes.append(f"no sha256 recorded for {', '.join(missing)}: verify those downloads by hand")
    if cert.image is not None:
        notes.append("it ran in a cannenv image: running that image (by digest) is the simplest rebuild")
    return Replay(st.id, st.how, st.reason, arch, tuple(steps), cert.image, tuple(notes))
