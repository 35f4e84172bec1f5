"""The run-time gate of a cannenv image: refuse to start on a host whose NPU driver does not fit.

The image's entrypoint runs ``cannenv gate -- CMD...``. The gate reads the host driver version from
the bind-mounted ``/usr/local/Ascend/driver/version.info`` (research §4.1, §6.3: the driver always
comes from the host, never from the image `[CCI]`), compares it with the driver range the image was
built for (its ``cannenv.requires.driver`` label, baked into the image as ``/etc/cannenv/image.json``
and the ``CANNENV_REQUIRE_DRIVER`` variable), and either lets the command start or refuses with one
paragraph: what the image needs, what the host has, how to fix it. This is the counterpart of
NVIDIA's ``NVIDIA_REQUIRE_CUDA``: without it, a too-old driver shows up much later as a hang or an
``error code 507…`` deep inside a job (research §7).

:func:`decide` is pure (facts in, decision out); :func:`read_gate_inputs` does the reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from cannenv.errors import InputError, VersionError

if TYPE_CHECKING:
    from cannenv.host import Host

DRIVER_INFO = "/usr/local/Ascend/driver/version.info"
IMAGE_INFO = "/etc/cannenv/image.json"
# The image labels the gate reads; cannenv.image writes them (and imports them from here, so the
# gate, the image's entrypoint, stays free of the renderer's imports).
LABEL_STACK = "cannenv.stack"
LABEL_DRIVER_RANGE = "cannenv.requires.driver"
ENV_REQUIRE = "CANNENV_REQUIRE_DRIVER"
ENV_DISABLE = "CANNENV_DISABLE_REQUIRE"

# The gate's own runtime inside an image: these sources and the OS's Python, run with `-I -S` (no
# site-packages, no PYTHON* variables), so nothing installed into the workload's venv can stop a
# container from starting. tests/unit/test_image_contract.py runs the gate from exactly these files.
GATE_DIR = "/opt/cannenv/gate"
GATE_PYTHON = GATE_DIR + "/python"  # a link to the OS's interpreter, made at build time
GATE_SCRIPT = GATE_DIR + "/cannenv-gate"
# Python sources only (no data, no byte code): every module of cannenv and packaging, so that a new
# import on the gate's path never breaks the runtime (tests/unit/test_image_contract.py).
GATE_SOURCES = ("cannenv", "packaging")

Action = Literal["start", "warn", "refuse"]


@dataclass(frozen=True)
class GateInputs:
    """What the gate looks at; plain data so tests build it directly."""

    required: str | None  # driver range, e.g. ">=24.1.rc2"; None when the image carries none
    required_from: str  # where the range came from (for messages)
    driver_text: str | None  # contents of version.info; None when not mounted
    driver_path: str = DRIVER_INFO
    disabled: bool = False
    stack_id: str | None = None


@dataclass(frozen=True)
class GateDecision:
    action: Action
    message: str
    host_driver: str | None = None
    required: str | None = None

    @property
    def exit_code(self) -> int:
        return 1 if self.action == "refuse" else 0


def _image_name(inputs: GateInputs) -> str:
    return f"this image (stack {inputs.stack_id})" if inputs.stack_id else "this image"


def decide(inputs: GateInputs) -> GateDecision:
    """Start, start with a warning, or refuse — and say why in one paragraph."""
    from cannenv.probes.driver import parse_driver_info
    from cannenv.versions import DriverVersion, VersionRange

    image = _image_name(inputs)
    if inputs.disabled:
        return GateDecision(
            "warn",
            f"cannenv gate: {ENV_DISABLE}=1 is set, so the host driver is not checked against "
            f"the range {inputs.required or '(none)'} that {image} needs.",
            required=inputs.required,
        )
    if not inputs.required:
        return GateDecision(
            "warn",
            f"cannenv gate: {image} names no driver range ({inputs.required_from}); starting unchecked.",
        )
    try:
        rng = VersionRange.parse("driver", inputs.required)
    except VersionError as exc:
        raise InputError(
            f"the driver range {inputs.required!r} from {inputs.required_from} is invalid: {exc.message}",
            hint=f"rebuild the image with cannenv, or set {ENV_DISABLE}=1 to start without the check",
        ) from None
    if inputs.driver_text is None:
        return GateDecision(
            "warn",
            f"cannenv gate: no NPU driver is mounted ({inputs.driver_path} is absent), so the driver "
            f"range {rng} that {image} needs cannot be checked; starting anyway (fine for a CI build "
            "or a CPU-only run; NPU work needs the host driver mounted — see `cannenv image run-args`).",
            required=str(rng),
        )
    facts = parse_driver_info(inputs.driver_text, inputs.driver_path)
    if facts.version is None:
        return GateDecision(
            "refuse",
            f"cannenv gate: {image} needs an Ascend NPU driver in {rng}, but the mounted "
            f"{inputs.driver_path} has no Version= or package_version= line, so the host driver "
            "version is unknown. Fix: mount the host's real driver directory "
            "(`cannenv image run-args` prints the flags), or reinstall the driver on the host; "
            f"to start anyway, set {ENV_DISABLE}=1.",
            required=str(rng),
        )
    try:
        host = DriverVersion.parse(facts.version)
    except VersionError:
        return GateDecision(
            "refuse",
            f"cannenv gate: {image} needs an Ascend NPU driver in {rng}, but the host driver version "
            f"{facts.version!r} in {inputs.driver_path} is not a driver version cannenv can read. "
            f"Fix: check the host's driver installation; to start anyway, set {ENV_DISABLE}=1.",
            required=str(rng),
        )
    # The host runs the build it runs: order pre-release and B-builds numerically.
    if rng.contains(host, prereleases=True):
        return GateDecision(
            "start",
            f"cannenv gate: host driver {host} is in the range {rng} that {image} needs.",
            host_driver=str(host),
            required=str(rng),
        )
    return GateDecision(
        "refuse",
        f"cannenv gate: refusing to start. {image.capitalize()} needs an Ascend NPU driver in {rng}, "
        f"but the host has driver {host} (from {inputs.driver_path}). Its CANN would fail late with "
        "hangs or `error code 507…` inside the job instead of now. Fix: install an Ascend HDK driver "
        f"in {rng} on the host (driver first, then firmware; `cannenv doctor` on the host names the "
        "exact packages), or use an image built for a stack that supports driver "
        f"{host} (`cannenv matrix` lists them); to start anyway, set {ENV_DISABLE}=1.",
        host_driver=str(host),
        required=str(rng),
    )


def gate_runtime() -> dict[str, bytes]:
    """The gate's runtime as files (relative path -> bytes): the entry script and ``site/``."""
    import importlib.util
    from pathlib import Path

    from cannenv.resources import dockerfiles_dir

    files = {"cannenv-gate": (dockerfiles_dir() / "gate_main.py").read_bytes()}
    roots = {}
    for top in GATE_SOURCES:
        spec = importlib.util.find_spec(top)
        assert spec is not None and spec.origin is not None
        roots[top] = Path(spec.origin).parent.parent
    for top in GATE_SOURCES:
        root = roots[top]
        for p in sorted((root / top).rglob("*.py")):
            if "__pycache__" not in p.parts:
                files["site/" + p.relative_to(root).as_posix()] = p.read_bytes()
    return dict(sorted(files.items()))


def main(argv: list[str], host: Host | None = None) -> int:
    """The gate without click: ``[--require RANGE] [--] CMD...``; exec CMD or return an exit code."""
    import os
    import sys

    from cannenv.errors import CannenvError

    args = list(argv)
    require = None
    if args[:1] == ["--require"] and len(args) > 1:
        require, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    try:
        if host is None:
            from cannenv.host import Host

            host = Host.live()
        decision = decide(read_gate_inputs(host, required=require))
    except CannenvError as exc:
        sys.stderr.write(f"cannenv gate: error: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return int(exc.exit_code)
    if decision.action != "start" or not args:
        sys.stderr.write(decision.message + "\n")
    if decision.action == "refuse":
        return decision.exit_code
    if args:
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            os.execvp(args[0], args)
        except OSError as exc:
            sys.stderr.write(f"cannenv gate: cannot run {args[0]!r}: {exc.strerror}\n")
            return 127
    return 0


MAX_GATE_FILE = 1 << 20
"""image.json and version.info are a few KB."""


def read_gate_inputs(host: Host, *, required: str | None = None) -> GateInputs:
    """Read what the gate needs: the image's range (explicit > env > image.json) and version.info."""
    env: Mapping[str, str] = host.env
    stack_id: str | None = None
    source = "--require"
    if required is None and env.get(ENV_REQUIRE):
        required, source = env[ENV_REQUIRE], f"${ENV_REQUIRE}"
    if host.is_file(IMAGE_INFO):
        from cannenv import records

        try:  # bounded, regular files only, resolved inside the root (cannenv/host.py)
            data = records.parse_json(
                host.read_bytes(IMAGE_INFO, MAX_GATE_FILE).decode("utf-8"), source=IMAGE_INFO
            )
        except InputError as exc:
            raise InputError(
                exc.message, hint=f"rebuild the image with `cannenv image build`, or set {ENV_DISABLE}=1"
            ) from None
        except (OSError, ValueError, RecursionError) as exc:
            raise InputError(
                f"{IMAGE_INFO} is not readable JSON: {exc}",
                hint=f"rebuild the image with `cannenv image build`, or set {ENV_DISABLE}=1",
            ) from None
        labels = data.get("labels") if isinstance(data, dict) else None
        if not isinstance(labels, dict):
            labels = {}
        stack_id = labels.get(LABEL_STACK)
        if required is None and labels.get(LABEL_DRIVER_RANGE):
            required, source = str(labels[LABEL_DRIVER_RANGE]), f"label {LABEL_DRIVER_RANGE} in {IMAGE_INFO}"
    if required is None:
        source = f"no {LABEL_DRIVER_RANGE} label, no ${ENV_REQUIRE}"
    driver_text: str | None = None
    if host.exists(DRIVER_INFO):
        try:
            driver_text = host.read_bytes(DRIVER_INFO, MAX_GATE_FILE).decode("utf-8", "replace")
        except OSError as exc:
            raise InputError(
                f"{DRIVER_INFO} is mounted but not readable: {exc.strerror}",
                hint="mount it read-only with `-v /usr/local/Ascend/driver/version.info:"
                "/usr/local/Ascend/driver/version.info:ro`",
            ) from None
    disabled = env.get(ENV_DISABLE, "").strip().lower() in ("1", "true", "yes")
    return GateInputs(required, source, driver_text, DRIVER_INFO, disabled, stack_id)
