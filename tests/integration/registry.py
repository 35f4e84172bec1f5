"""A real registry for tests: Debian's ``docker-registry`` (the reference implementation,
``distribution``) on 127.0.0.1 at a free port, with its own config and storage folder.

Docker engines treat registries on 127.0.0.0/8 as insecure-allowed (plain HTTP), so no TLS is needed.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REGISTRY = "/usr/bin/docker-registry"

CONFIG = """version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
http:
  addr: 127.0.0.1:{port}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def available() -> str | None:
    """None when a registry can be started here, else why not."""
    if shutil.which(REGISTRY) is None and shutil.which("docker-registry") is None:
        return "Debian's docker-registry is not installed (apt-get install docker-registry)"
    return None


@contextmanager
def running(workdir: Path) -> Iterator[str]:
    """Start a registry; yield its address (``127.0.0.1:PORT``); stop it."""
    exe = shutil.which(REGISTRY) or shutil.which("docker-registry") or REGISTRY
    port = _free_port()
    (workdir / "data").mkdir(parents=True, exist_ok=True)
    config = workdir / "config.yml"
    config.write_text(CONFIG.format(root=workdir / "data", port=port))
    log = (workdir / "registry.log").open("wb")
    proc = subprocess.Popen([exe, "serve", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None:
                    tail = (workdir / "registry.log").read_text()[-800:]
                    raise RuntimeError(f"docker-registry exited {proc.returncode}: {tail}") from None
                time.sleep(0.1)
        else:
            raise RuntimeError("docker-registry did not answer on /v2/ within 10 s")
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
