"""Benchmark `cannenv fleet report` over 1,000 and 10,000 facts files, and `fleet collect` forks 1 vs N.

    python benchmarks/bench_fleet.py                 # report only (no Docker needed)
    python benchmarks/bench_fleet.py --collect       # also collect from the SSH test hosts (Docker)

Facts files are generated from the example hosts of tests/helpers/fleet_hosts.py (probed once,
then copied with per-node driver/CANN variations). Targets on 2 cores: 1,000 files < 2 s,
10,000 < 20 s (linear); the compact `--json` at most 1.5 KB per node (issue 15; `--details`, every
finding of every node, is printed for comparison). Times are wall clock of the real CLI in a
subprocess.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.fleet_hosts import DRIVER_24_1_RC1, FLEET, HostSpec, build_tree  # noqa: E402

from cannenv.host import Host  # noqa: E402
from cannenv.probes import collect as probe  # noqa: E402


def make_collection(directory: Path, count: int) -> None:
    templates = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in (
            *[s for s in FLEET if s.python and not s.stopped],
            HostSpec("old2", driver=DRIVER_24_1_RC1),
        ):
            root = build_tree(spec, Path(tmp) / spec.name)
            env = {"PATH": "/usr/bin"}
            if spec.env_sourced:
                env["ASCEND_HOME_PATH"] = "/usr/local/Ascend/ascend-toolkit/latest"
            templates.append(json.loads(probe(Host(root, env, allow_commands=False)).to_json()))
    rng = random.Random(7)
    directory.mkdir(parents=True, exist_ok=True)
    hosts = []
    for i in range(count):
        doc = json.loads(json.dumps(rng.choice(templates)))
        doc["hostname"] = f"node{i:05d}"
        name = f"node{i:05d}"
        (directory / f"{name}.json").write_text(json.dumps(doc))
        hosts.append({"name": name, "status": "collected", "reason": "", "facts_file": f"{name}.json"})
    manifest = {"schema_version": 1, "hosts": hosts}
    (directory / "collection.json").write_text(json.dumps(manifest))


def time_cli(*args: str) -> tuple[float, int]:
    """(wall seconds, bytes printed) of the real CLI."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cannenv", *args], capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"cannenv {' '.join(args)} exited {proc.returncode}: {proc.stderr.decode()}")
    return elapsed, len(proc.stdout)


def bench_report(sizes: list[int]) -> None:
    targets = {1000: 2.0, 10000: 20.0}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            d = Path(tmp) / f"c{n}"
            make_collection(d, n)
            t, size = time_cli("fleet", "report", str(d), "--json")
            target = targets.get(n)
            verdict = (
                ""
                if target is None
                else (" (target < {:.0f} s: {})".format(target, "met" if t < target else "MISSED"))
            )
            print(f"fleet report, {n:>6} facts files: {t:6.2f} s  {1000 * t / n:5.2f} ms/node{verdict}")
            per_node = size / n / 1024
            print(
                f"  --json {size / 1e6:7.2f} MB, {per_node:5.2f} KB/node "
                f"(target <= 1.5 KB: {'met' if per_node <= 1.5 else 'MISSED'})"
            )
            if n <= 1000:
                _, full = time_cli("fleet", "report", str(d), "--json", "--details")
                print(f"  --json --details {full / 1e6:7.2f} MB, {full / n / 1024:5.2f} KB/node")


def bench_collect(forks: list[int]) -> None:
    from helpers.fleet_hosts import engine_problem, start_fleet

    problem = engine_problem()
    if problem:
        print(f"fleet collect: skipped ({problem})")
        return
    with tempfile.TemporaryDirectory() as tmp:
        fleet = start_fleet(Path(tmp))
        try:
            for n in forks:
                t = time_cli(
                    "fleet", "collect", "-i", str(fleet.inventory), "--out", f"{tmp}/f{n}", "--forks", str(n)
                )
                print(f"fleet collect, {len(fleet.hosts)} hosts, forks {n:>2}: {t:6.2f} s")
        finally:
            fleet.remove()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--collect", action="store_true")
    ap.add_argument("--forks", default="1,7")
    args = ap.parse_args()
    bench_report([int(x) for x in args.sizes.split(",")])
    if args.collect:
        bench_collect([int(x) for x in args.forks.split(",")])


if __name__ == "__main__":
    main()
