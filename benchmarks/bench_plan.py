"""Benchmark install planning over 1,000 facts files, and `cannenv provision` of 7 hosts at forks 1 and 7.

    python benchmarks/bench_plan.py                 # planning only (no Docker needed)
    python benchmarks/bench_plan.py --provision     # also provision 7 SSH container hosts (Docker)

Planning: `cannenv plan --facts DIR --stack ID --json` over a `fleet collect`-shaped folder of
1,000 facts files (bench_fleet's generator), wall clock of the real CLI in a subprocess, beside
`cannenv fleet report` over the same folder (the doctor's judgement of the same hosts) for scale.
Target on 2 cores: < 2 s. No other tool computes such a plan (the vendor's ascend-deployer
installs what it is told), so there is no peer to run.

Provisioning: 7 fresh container hosts (tests/helpers/fleet_hosts.py, prefix cannenv-provbench),
each with the fixture stack's HDK already in place, provisioned to the fixture stack (CANN 8.5.0
toolkit, ops, NNAL from .zip packages, torch/torch_npu stand-in wheels, environment) once with
--forks 1 and once, on new hosts, with --forks 7. Each run includes both fact collections and the
doctor's judgement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_fleet import make_collection  # noqa: E402


def time_cli(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, check=False
    )
    return time.perf_counter() - start, proc


def bench_planning(count: int = 1000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "facts"
        make_collection(folder, count)
        stack = "a2-cann8.5.0-torch2.8.0-py3.11"
        times: dict[str, float] = {}
        for label, extra in (("table", ()), ("--json", ("--json",))):
            for _ in range(3):
                t, proc = time_cli("plan", "--facts", str(folder), "--stack", stack, *extra)
                assert proc.returncode in (0, 1), proc.stderr
                times[label] = min(times.get(label, t), t)
        _, proc = time_cli("plan", "--facts", str(folder), "--stack", stack, "--json")
        plans = json.loads(proc.stdout)["plans"]
        steps = sum(sum(1 for s in p["steps"] if s["action"] != "leave") for p in plans)
        t_rep, proc = time_cli("fleet", "report", str(folder), "--stack", stack, "--json")
        assert proc.returncode in (0, 1), proc.stderr
        for label, t in times.items():
            print(f"plan {label:<7} {count} facts files: {t:.2f} s (best of 3; {steps} steps)")
        print(f"fleet report {count} facts files: {t_rep:.2f} s (the doctor over the same folder, for scale)")
        print(f"target < 2 s: {'ok' if max(times.values()) < 2 else 'MISSED'}")


def bench_provision() -> None:
    from helpers.fleet_hosts import HostSpec, engine_problem, start_fleet
    from helpers.provision import FIRMWARE, PIP_CONF, STACK_ID, make_artifacts

    problem = engine_problem()
    if problem:
        print(f"provision benchmark skipped: {problem}")
        return
    # HDK 25.5.1 + firmware 7.7.0.1.231 in place (no reboot in the run), no CANN, no torch
    from helpers.hosts import FIRMWARE_7_7, driver_like_25_3

    from cannenv.resources import matrices_dir

    assert FIRMWARE in FIRMWARE_7_7
    extra = {
        "/usr/local/Ascend/driver/version.info": driver_like_25_3("25.5.1"),
        "/usr/local/Ascend/firmware/version.info": FIRMWARE_7_7,
        "/etc/pip.conf": PIP_CONF,
    }
    for forks in (1, 7):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            specs = tuple(HostSpec(f"h{i}", bare=True, extra=extra) for i in range(7))
            fleet = start_fleet(work, specs, label="cannenv-provbench", prefix="cannenv-provbench")
            try:
                art = make_artifacts(work)
                args = [
                    "provision",
                    "-i",
                    str(fleet.inventory),
                    "--stack",
                    STACK_ID,
                    "--artifacts",
                    str(art.folder),
                    "--matrix",
                    str(matrices_dir()),
                    "--matrix",
                    str(art.matrix),
                    "--hdk",
                    "--forks",
                    str(forks),
                    "--json",
                ]
                t, proc = time_cli(*args)
                report = json.loads(proc.stdout)
                status = sorted({h["status"] for h in report["hosts"]})
                steps = {
                    len([s for s in h["plan"]["steps"] if s["action"] != "leave"]) for h in report["hosts"]
                }
                print(f"provision 7 hosts --forks {forks}: {t:.1f} s (statuses {status}, steps/host {steps})")
            finally:
                fleet.remove()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--provision", action="store_true", help="also provision 7 container hosts (Docker)")
    args = ap.parse_args()
    bench_planning(args.count)
    if args.provision:
        bench_provision()


if __name__ == "__main__":
    main()
