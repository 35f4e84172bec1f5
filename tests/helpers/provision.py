"""Provisioning test fixtures: a fixture stack, its fixture installers, stand-in wheels, fleet hosts.

Nothing here is CANN: the installers are tests/fixtures/cann_installer's fake, self-extracting
scripts (named like the vendor's files; CANN 8.5 packages wrapped in ``.zip``), the torch and
torch_npu wheels are tiny stand-ins, and the stack id starts with ``fixture-``. Versions are real
ones (CANN 8.5.0, HDK 25.5.1) so the shipped matrix's rules judge the result like a real host.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cann_installer"
sys.path.insert(0, str(FIXTURES))

from fixture_stack import FIXTURE_SOURCE, standin_wheel  # noqa: E402
from make_fixture_installer import make_hdk_installers, make_installers  # noqa: E402

from .fleet_hosts import DRIVER_24_1_RC1, HostSpec  # noqa: E402

STACK_ID = "fixture-a2-cann8.5.0-torch2.8.0-py3.11"
CANN, DRIVER, FIRMWARE, TORCH, TORCH_NPU = "8.5.0", "25.5.1", "7.7.0.1.231", "2.8.0", "2.8.0.post2"
FAIL_MARKER = "/etc/cannenv-fixture-fail-nnal"
RUN_LOG = "/var/log/cannenv-fixture-installers-ran.log"
"""Where the fixture installers made with ``run_log`` note each run on the host, in the order they ran."""
PIP_CONF = "[global]\nbreak-system-packages = true\n"
"""Debian's system Python refuses pip installs (PEP 668) unless its owner allows them."""


@dataclass(frozen=True)
class Artifacts:
    folder: Path
    matrix: Path
    sha256: dict[str, str]
    files: dict[str, str]


def make_artifacts(work: Path, *, arch: str = "x86_64", run_log: str | None = None) -> Artifacts:
    """Fixture installers (+ wheels, + pip) in ``work/artifacts``, and a matrix file pinning them.
    ``run_log``: a path on the host where each installer notes that it ran (:data:`RUN_LOG`)."""
    folder = work / "artifacts"
    cann = make_installers(
        folder,
        CANN,
        "910b",
        arch,
        archive="zip",
        installed_bytes=32 << 10,
        padding_bytes=16 << 10,
        fail_marker={"nnal": FAIL_MARKER},
        run_log=run_log,
    )
    hdk = make_hdk_installers(folder, DRIVER, FIRMWARE, "910b", arch, run_log=run_log)
    standin_wheel(folder, "torch", TORCH, "torch")
    standin_wheel(folder, "torch-npu", TORCH_NPU, "torch_npu")
    _pip_wheel(folder)
    by_key = {
        "cann": cann["toolkit"],
        "ops": cann["kernels"],
        "nnal": cann["nnal"],
        "driver": hdk["driver"],
        "firmware": hdk["firmware"],
    }
    sha = {k: v.sha256 for k, v in by_key.items()}
    files = {k: v.path.name for k, v in by_key.items()}
    matrix = work / "fixture-stack.yaml"
    matrix.write_text(matrix_yaml(files, sha, arch))
    return Artifacts(folder, matrix, sha, files)


def _pip_wheel(folder: Path) -> None:
    """A pip wheel for hosts without pip (Debian's python3 has none): the role runs pip from it.
    Python's own bundled wheel when present (ensurepip), else one from the package index."""
    import subprocess

    try:
        import ensurepip

        bundled = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    except ImportError:
        bundled = []
    if bundled:
        shutil.copy(bundled[-1], folder / bundled[-1].name)
        return
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), "pip"],
        check=True,
        timeout=300,
    )


def matrix_yaml(files: dict[str, str], sha: dict[str, str], arch: str) -> str:
    def comp(version: str, key: str | None = None, **extra: object) -> dict[str, object]:
        c: dict[str, object] = {"version": version, "sources": [FIXTURE_SOURCE], **extra}
        if key is not None:
            c["artifacts"] = {arch: {"file": files[key], "sha256": sha[key]}}
        return c

    doc = {
        "schema_version": 1,
        "sources": [{"id": FIXTURE_SOURCE, "title": "cannenv test fixture (not a real source)"}],
        "stacks": [
            {
                "id": STACK_ID,
                "family": "a2",
                "arches": [arch],
                "os": ["debian12"],
                "status": "published",
                "components": {
                    "driver": comp(DRIVER, "driver"),
                    "firmware": comp(FIRMWARE, "firmware", package="Ascend-hdk-910b-npu-firmware"),
                    "cann": comp(CANN, "cann", package="Ascend-cann-toolkit"),
                    "ops": comp(CANN, "ops", package="Ascend-cann-910b-ops"),
                    "nnal": comp(CANN, "nnal", package="Ascend-cann-nnal"),
                    "python": comp("3.11"),
                    "torch": comp(TORCH, package="torch"),
                    "torch_npu": comp(TORCH_NPU, package="torch-npu"),
                },
                "sources": [FIXTURE_SOURCE],
                "note": "TEST FIXTURE stack: fake installers, stand-in torch wheels",
            }
        ],
    }
    return yaml.safe_dump(doc, sort_keys=False)


def bare(name: str, **extra: str) -> HostSpec:
    """A host with no Ascend software (Debian's Python 3.11 only)."""
    return HostSpec(name, bare=True, extra={"/etc/pip.conf": PIP_CONF, **extra})


def old_cann(name: str) -> HostSpec:
    """A host with an older HDK (driver 24.1.rc1, which no rule accepts for CANN 8.5.0; firmware
    7.7.0.1.231) and CANN 8.2.RC1 sourced at login."""
    return HostSpec(name, driver=DRIVER_24_1_RC1, extra={"/etc/pip.conf": PIP_CONF})


def reviewed_plan(path: Path, steps: dict[str, list[str]], facts_of: Callable[[str], Path]) -> Path:
    """A reviewed plan file (``provision --plan``) whose steps are plain shell lines, one per step,
    made for the facts each host reported (``facts_of(host)``: its facts file), so that the whole
    rollout runs: facts before, preflight, batches, facts after."""
    import json

    from cannenv.facts import Facts
    from cannenv.plan.compute import facts_digest

    plans = [
        {
            "schema_version": 1,
            "host": host,
            "offline": True,
            "facts_digest": facts_digest(Facts.load(facts_of(host))),
            "steps": [
                {
                    "index": i,
                    "component": "cann",
                    "action": "install",
                    "summary": f"line {i}",
                    "commands": [c],
                }
                for i, c in enumerate(cmds, start=1)
            ],
        }
        for host, cmds in steps.items()
    ]
    path.write_text(json.dumps({"plans": plans}))
    return path
