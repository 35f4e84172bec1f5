"""The DaemonSet's slim doctor-only image, built for real and run against a host tree.

`cannenv fleet k8s-image --wheelhouse` renders the context; the engine builds it offline (pip
--no-index: no package index is reached from the build); the container's own entrypoint then judges
a node's files mounted read-only at /host, as the DaemonSet runs it, and must agree with the same
judgement made here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cannenv.engine import Engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BASE_IMAGE = "cannenv-test/debian:bookworm"
TAG = "cannenv-test/k8s-doctor:latest"
STACK = "a2-cann8.5.0-torch2.8.0-py3.11"


def _run(argv: list[str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def test_the_slim_image_builds_offline_and_labels_a_host_tree(engine: Engine, tmp_path: Path) -> None:
    ctx, house = tmp_path / "ctx", tmp_path / "wheelhouse"
    first = _run(
        [sys.executable, "-m", "cannenv", "fleet", "k8s-image", "--out", str(ctx), "--base-image", BASE_IMAGE]
    )
    assert first.returncode == 0, first.stderr
    wheel = next(ctx.glob("cannenv-*.whl"))
    dl = _run(
        [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(house), str(wheel)]
    )
    if dl.returncode != 0:
        pytest.skip(f"the package index is unreachable for the wheelhouse: {dl.stderr.strip()[-300:]}")
    (house / wheel.name).unlink()
    render = _run(
        [
            sys.executable,
            "-m",
            "cannenv",
            "fleet",
            "k8s-image",
            "--out",
            str(ctx),
            "--base-image",
            BASE_IMAGE,
            "--cannenv-wheel",
            str(wheel),
            "--wheelhouse",
            str(house),
        ]
    )
    assert render.returncode == 0, render.stderr
    assert "--no-index" in (ctx / "Dockerfile").read_text()
    build = _run(["docker", "build", "--network", "none", "-t", TAG, str(ctx)], timeout=900)
    assert build.returncode == 0, build.stdout[-2000:] + build.stderr[-2000:]
    try:
        tree = ROOT / "examples" / "hosts" / "broken-kernels-wrong-chip" / "tree"
        run = _run(
            [
                "docker",
                "run",
                "--rm",
                "--network",
                "none",
                "-v",
                f"{tree}:/host:ro",
                TAG,
                "--node",
                "npu-node-1",
                "--stack",
                STACK,
                "--once",
                "--dry-run",
            ]
        )
        assert run.returncode == 0, run.stderr
        patch = json.loads(run.stdout)
        from cannenv.fleet.k8s import judge_node

        _, here = judge_node(str(tree), stack_id=STACK)
        assert patch["metadata"]["labels"] == here["metadata"]["labels"]
        failing = patch["metadata"]["annotations"]["cannenv.io/failing-checks"]
        assert failing == here["metadata"]["annotations"]["cannenv.io/failing-checks"]
        assert "toolkit-ops" in failing.split(",")  # the tree's 310P kernels on an A2 host
        assert patch["metadata"]["labels"]["cannenv.io/status"] == "failing"
    finally:
        _run(["docker", "image", "rm", "-f", TAG])
