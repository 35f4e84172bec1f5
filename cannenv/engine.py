"""The one module that talks to a Docker engine (through the docker SDK, imported lazily).

The docker SDK drives the classic builder (not BuildKit), which is why the rendered Dockerfiles use
no BuildKit syntax. Builds stream :class:`BuildEvent` values to a callback; rendering them (rich)
is the command's job. Builds use the host network by default: our CI engines run with
``--bridge=none``, and a build needs no network when every input is local.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cannenv.errors import ExternalError, MissingToolError, NotFoundError

if TYPE_CHECKING:
    from pathlib import Path

_STEP = re.compile(r"^Step (\d+)/(\d+) : (.*)\Z")

EventKind = Literal["step", "cached", "log", "error"]


@dataclass(frozen=True)
class BuildEvent:
    kind: EventKind
    text: str
    step: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class BuildStep:
    number: int
    instruction: str
    cached: bool


@dataclass(frozen=True)
class ImageInfo:
    id: str
    tags: tuple[str, ...]
    repo_digests: tuple[str, ...]
    labels: Mapping[str, str]
    size: int
    architecture: str = ""  # the image config's: amd64, arm64
    os: str = "linux"

    @property
    def digest(self) -> str | None:
        """Registry digest when the image was pushed or pulled; None for a local build."""
        return self.repo_digests[0].split("@", 1)[1] if self.repo_digests else None


@dataclass(frozen=True)
class BuildResult:
    info: ImageInfo  # of the image just built
    tag: str
    steps: tuple[BuildStep, ...]
    duration_s: float

    @property
    def cached_steps(self) -> int:
        return sum(1 for s in self.steps if s.cached)


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    stdout: str
    stderr: str


@dataclass
class Engine:
    """A connected Docker engine."""

    client: Any
    server_version: str = ""

    @classmethod
    def connect(cls, *, timeout: int = 600) -> Engine:
        """Connect to the engine named by DOCKER_HOST (default: the local socket)."""
        try:
            import docker
        except ImportError:  # pragma: no cover - docker is a dependency
            raise MissingToolError(
                "the docker Python SDK is not installed", hint="pip install 'docker>=7'"
            ) from None
        try:
            client = docker.from_env(timeout=timeout)
            version = client.version().get("Version", "")
        except docker.errors.DockerException as exc:
            raise MissingToolError(
                f"no Docker engine is reachable: {exc}",
                hint="start one (`sudo systemctl start docker`, or `dockerd &`), or point DOCKER_HOST "
                "at one; `docker version` must show a Server section",
            ) from None
        return cls(client, version)

    # -- build -----------------------------------------------------------------------------

    def build(
        self,
        context: Path,
        tag: str,
        *,
        on_event: Callable[[BuildEvent], None] | None = None,
        nocache: bool = False,
        network_mode: str = "host",
        platform: str | None = None,
    ) -> BuildResult:
        """Build ``context`` (its Dockerfile) into ``tag`` with the classic builder.

        ``platform`` (``linux/arm64``) builds for another architecture: its ``RUN`` steps need the
        kernel to run that architecture's programs (QEMU user emulation, :func:`check_emulation`).
        """
        import docker

        emit = on_event or (lambda _e: None)
        steps: list[BuildStep] = []
        current: tuple[int, str] | None = None
        cached = False
        image_id: str | None = None
        error: str | None = None
        start = time.monotonic()
        try:
            stream = self.client.api.build(
                path=str(context),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                nocache=nocache,
                decode=True,
                network_mode=network_mode,
                platform=platform,
            )
            for chunk in stream:
                if "error" in chunk:
                    error = str(chunk.get("error", "")).strip()
                    emit(BuildEvent("error", error))
                    continue
                if "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
                    image_id = str(chunk["aux"]["ID"])
                text = chunk.get("stream")
                if not text:
                    continue
                for line in str(text).splitlines():
                    m = _STEP.match(line.strip())
                    if m:
                        if current is not None:
                            steps.append(BuildStep(current[0], current[1], cached))
                        current, cached = (int(m[1]), m[3]), False
                        emit(BuildEvent("step", m[3], int(m[1]), int(m[2])))
                    elif "---> Using cache" in line:
                        cached = True
                        emit(BuildEvent("cached", line.strip(), current[0] if current else None))
                    elif line.strip():
                        emit(BuildEvent("log", line.rstrip(), current[0] if current else None))
                        if line.startswith("Successfully built ") and image_id is None:
                            image_id = line.split()[-1]
        except docker.errors.APIError as exc:
            raise ExternalError(f"the Docker engine refused the build: {exc.explanation or exc}") from None
        if current is not None:
            steps.append(BuildStep(current[0], current[1], cached))
        if error is not None:
            raise ExternalError(
                f"image build failed at step {current[0] if current else '?'} "
                f"({current[1] if current else ''}): {error}",
                hint="the build log above shows the failing command's output",
            )
        if image_id is None:
            raise ExternalError("the Docker engine finished the build without an image id")
        return BuildResult(self.inspect(tag), tag, tuple(steps), time.monotonic() - start)

    # -- images ----------------------------------------------------------------------------

    def inspect(self, ref: str) -> ImageInfo:
        import docker

        try:
            attrs = self.client.api.inspect_image(ref)
        except docker.errors.ImageNotFound:
            raise NotFoundError(
                f"no image {ref!r} in the local engine", hint="build it with `cannenv image build`"
            ) from None
        cfg = attrs.get("Config") or {}
        return ImageInfo(
            id=str(attrs["Id"]),
            tags=tuple(attrs.get("RepoTags") or ()),
            repo_digests=tuple(attrs.get("RepoDigests") or ()),
            labels=dict(cfg.get("Labels") or {}),
            size=int(attrs.get("Size") or 0),
            architecture=str(attrs.get("Architecture") or ""),
            os=str(attrs.get("Os") or "linux"),
        )

    def read_file(self, ref: str, path: str, *, limit: int = 8 << 20) -> str | None:
        """The text of one regular file inside image ``ref`` (None when absent); nothing runs.

        A container is created (never started) and the file is read with the engine's archive API,
        so this works on any image, with or without a shell or Python.
        """
        import io

        import docker

        from cannenv.archive import tar_members

        container = self.client.containers.create(ref, ["/nonexistent"], network_mode="none")
        try:
            try:
                stream, stat = container.get_archive(path)
            except docker.errors.NotFound:
                return None
            if int(stat.get("size", 0)) > limit:
                raise ExternalError(f"{path} in {ref} is larger than {limit} bytes")
            # the engine streams a tar of the path; a directory there would stream all of it
            chunks: list[bytes] = []
            total, cap = 0, limit + (1 << 20)  # the file and its tar headers
            for piece in stream:
                total += len(piece)
                if total > cap:
                    raise ExternalError(f"{path} in {ref} is larger than {limit} bytes")
                chunks.append(piece)
            members = tar_members(
                io.BytesIO(b"".join(chunks)),
                lambda _name: True,
                what=f"{path} in {ref}",
                max_member=limit,
                max_total=cap,
                compression="",
                stop_after=1,
            )
            first = next(iter(members), None)
            return None if first is None else first.data.decode("utf-8", "replace")
        finally:
            container.remove(force=True)

    def tag(self, ref: str, repository: str, tag: str | None) -> None:
        import docker

        try:
            self.client.api.tag(ref, repository, tag=tag)
        except docker.errors.APIError as exc:
            raise ExternalError(
                f"tagging {ref} as {repository}:{tag} failed: {exc.explanation or exc}"
            ) from None

    def push(self, repository: str, tag: str) -> str:
        """Push ``repository:tag``; the registry's manifest digest (``sha256:…``) it answered with."""
        import docker

        digest = None
        try:
            for chunk in self.client.api.push(repository, tag=tag, stream=True, decode=True):
                if "error" in chunk:
                    raise ExternalError(
                        f"pushing {repository}:{tag} failed: {chunk['error']}",
                        hint="is the registry running and reachable from the engine? "
                        "(127.0.0.0/8 registries may use plain HTTP; others need TLS)",
                    )
                aux = chunk.get("aux")
                if isinstance(aux, dict) and aux.get("Digest"):
                    digest = str(aux["Digest"])
        except docker.errors.APIError as exc:
            raise ExternalError(f"pushing {repository}:{tag} failed: {exc.explanation or exc}") from None
        if digest is None:
            raise ExternalError(f"the engine pushed {repository}:{tag} but reported no digest")
        return digest

    def pull(self, ref: str, *, platform: str | None = None) -> ImageInfo:
        """Pull ``ref`` (``repo@sha256:…`` pulls exactly those bytes: the engine checks the digest)."""
        import docker

        repository, _, digest = ref.partition("@")
        try:
            self.client.api.pull(repository, tag=digest or None, platform=platform)
        except docker.errors.APIError as exc:
            raise ExternalError(f"pulling {ref} failed: {exc.explanation or exc}") from None
        return self.inspect(ref)

    def exists(self, ref: str) -> bool:
        try:
            self.inspect(ref)
        except NotFoundError:
            return False
        return True

    def history(self, ref: str) -> list[dict[str, Any]]:
        """``docker history``: one dict per layer, newest first (CreatedBy, Size, Id)."""
        return list(self.client.api.history(ref))

    def save(self, ref: str) -> Iterator[bytes]:
        """The ``docker save`` tar stream of an image (every layer it consists of)."""
        image = self.client.images.get(ref)
        yield from image.save(named=True)

    def remove(self, ref: str) -> None:
        import docker

        with contextlib.suppress(docker.errors.ImageNotFound):
            self.client.api.remove_image(ref, force=True, noprune=False)

    # -- run -------------------------------------------------------------------------------

    def run(
        self,
        ref: str,
        command: Sequence[str],
        *,
        environment: Mapping[str, str] | None = None,
        binds: Mapping[str, str] | None = None,
        network_mode: str = "none",
        timeout: int = 300,
    ) -> RunResult:
        """Run ``command`` in a fresh container of ``ref`` (no devices); stdout and stderr apart."""
        import docker

        volumes = {src: {"bind": dst, "mode": "ro"} for src, dst in (binds or {}).items()}
        try:
            container = self.client.containers.create(
                ref,
                list(command),
                environment=dict(environment or {}),
                volumes=volumes,
                network_mode=network_mode,
                detach=True,
            )
        except docker.errors.ImageNotFound:
            raise NotFoundError(f"no image {ref!r} in the local engine") from None
        try:
            container.start()
            status = container.wait(timeout=timeout)
            out = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
            err = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
            return RunResult(int(status.get("StatusCode", -1)), out, err)
        finally:
            container.remove(force=True)


# Names of the architectures in binfmt_misc (qemu-user-static's entries) and in OCI platforms.
_QEMU = {"aarch64": "qemu-aarch64", "x86_64": "qemu-x86_64"}
PLATFORM = {"x86_64": "linux/amd64", "aarch64": "linux/arm64"}


def check_emulation(arch: str, host_arch: str, *, binfmt_dir: str = "/proc/sys/fs/binfmt_misc") -> None:
    """Refuse (exit 4, naming what is missing) to build ``arch`` on ``host_arch`` without emulation.

    Building for another architecture runs its programs in ``RUN`` steps; the kernel does that
    through a binfmt_misc entry for QEMU user emulation with the ``F`` flag (the interpreter is
    opened at registration, so it works inside containers): Debian's qemu-user-static +
    binfmt-support register it.
    """
    from pathlib import Path

    if arch == host_arch:
        return
    name = _QEMU.get(arch)
    if name is None:
        raise MissingToolError(f"no emulation is known for {arch}")
    root = Path(binfmt_dir)
    entry = root / name
    how = (
        "install Debian's qemu-user-static and binfmt-support (apt-get install qemu-user-static "
        "binfmt-support), mount binfmt_misc (mount -t binfmt_misc binfmt_misc "
        f"{binfmt_dir}) and enable the entry (update-binfmts --enable {name})"
    )
    if not (root / "status").is_file():
        raise MissingToolError(
            f"cannot build {arch} images on this {host_arch} machine: "
            f"binfmt_misc is not mounted at {binfmt_dir}",
            hint=how,
        )
    if not entry.is_file():
        raise MissingToolError(
            f"cannot build {arch} images on this {host_arch} machine: no binfmt_misc entry {entry} "
            "(QEMU user emulation is not registered)",
            hint=how,
        )
    text = entry.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("enabled"):
        raise MissingToolError(f"the binfmt_misc entry {entry} is disabled", hint=how)
    flags = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("flags:")), "")
    if "F" not in flags:
        raise MissingToolError(
            f"the binfmt_misc entry {entry} lacks the F (fix binary) flag, so emulation does not work "
            "inside containers",
            hint="use Debian's qemu-user-static (its entries are registered with F) and re-register: "
            f"update-binfmts --disable {name} && update-binfmts --enable {name}",
        )
