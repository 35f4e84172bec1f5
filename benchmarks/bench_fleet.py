"""Benchmark `cannenv fleet report` over 1,000 and 10,000 facts files against the previous release,
and `fleet collect` forks 1 vs N.

    python benchmarks/bench_fleet.py                        # report: this code and the baseline
    python benchmarks/bench_fleet.py --baseline REF         # another baseline commit (default below)
    python benchmarks/bench_fleet.py --collect              # also collect from the SSH test hosts (Docker)

Realistic facts (issue 31): every example host tree (examples/hosts, with its own host.env: the
environment a user of that host has) is probed once, 6-13 KB of facts each; the collection copies
them with a per-node hostname and collection time. The baseline is the release before the facts
reader's fast paths (``BASELINE``), checked out with ``git worktree`` and run on the same files in
the same run; each line gives both and the ratio. Times are the real CLI in a subprocess: wall
clock and CPU (user + system) of the child, since this machine is shared. Target on 2 cores: 10,000
files < 20 s; the compact `--json` at most 1.5 KB per node.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from cannenv.host import Host  # noqa: E402
from cannenv.probes import collect as probe  # noqa: E402

BASELINE = "f2fba5f"
"""main before the fast paths (issue 31 point 9): the previous release of the facts reader."""


def example_facts() -> list[dict[str, object]]:
    """The facts of every example host tree, probed with its own environment (host.env)."""
    out = []
    for d in sorted((REPO / "examples" / "hosts").iterdir()):
        if not (d / "tree").is_dir():
            continue
        env_file = d / "host.env"
        env = {}
        if env_file.exists():
            env = dict(x.split("=", 1) for x in env_file.read_text().splitlines() if "=" in x)
        out.append(json.loads(probe(Host(d / "tree", env, allow_commands=False)).to_json()))
    return out


def make_collection(directory: Path, count: int, templates: list[dict[str, object]]) -> None:
    rng = random.Random(7)
    directory.mkdir(parents=True, exist_ok=True)
    hosts = []
    for i in range(count):
        doc = json.loads(json.dumps(rng.choice(templates)))
        name = f"node{i:05d}"
        doc["hostname"] = name
        doc["collected_at"] = f"2026-12-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        (directory / f"{name}.json").write_text(json.dumps(doc, indent=2))
        hosts.append({"name": name, "status": "collected", "reason": "", "facts_file": f"{name}.json"})
    manifest = {"schema_version": 1, "hosts": hosts}
    (directory / "collection.json").write_text(json.dumps(manifest))


def time_cli(*args: str, cwd: Path = REPO) -> tuple[float, float, int, bytes]:
    """(wall seconds, child CPU seconds, bytes printed, stdout) of the real CLI run from ``cwd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    proc = subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, check=False, cwd=cwd, env=env
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"cannenv {' '.join(args)} exited {proc.returncode}: {proc.stderr.decode()}")
    return elapsed, cpu, len(proc.stdout), proc.stdout


@contextmanager
def baseline_tree(ref: str) -> Iterator[Path]:
    """The baseline commit checked out beside this one (``git worktree``), removed afterwards."""
    tmp = Path(tempfile.mkdtemp(prefix="cannenv-baseline-"))
    path = tmp / "baseline"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(path), ref], check=True,
                   capture_output=True)  # fmt: skip
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)], check=False,
                       capture_output=True)  # fmt: skip
        shutil.rmtree(tmp, ignore_errors=True)


def bench_report(sizes: list[int], baseline: str | None) -> None:
    targets = {1000: 2.0, 10000: 20.0}
    templates = example_facts()
    sizes_kb = sorted(len(json.dumps(t)) / 1024 for t in templates)
    print(f"facts: {len(templates)} example hosts, {sizes_kb[0]:.1f}-{sizes_kb[-1]:.1f} KB each")
    with tempfile.TemporaryDirectory() as tmp, baseline_tree(baseline) if baseline else _none() as base:
        for n in sizes:
            d = Path(tmp) / f"c{n}"
            make_collection(d, n, templates)
            t, cpu, size, out = time_cli("fleet", "report", str(d), "--json")
            target = targets.get(n)
            verdict = (
                "" if target is None else f" (target < {target:.0f} s: {'met' if t < target else 'MISSED'})"
            )
            line = f"fleet report, {n:>6} facts files: {t:6.2f} s wall, {cpu:6.2f} s CPU{verdict}"
            if base is not None:
                bt, bcpu, _, bout = time_cli("fleet", "report", str(d), "--json", cwd=base)
                same = "same --json" if _comparable(bout) == _comparable(out) else "--json DIFFERS"
                line += f"; baseline {baseline}: {bt:6.2f} s wall, {bcpu:6.2f} s CPU; "
                line += f"ratio {bt / t:4.1f}x wall, {bcpu / cpu:4.1f}x CPU ({same})"
            print(line)
            per_node = size / n / 1024
            print(
                f"  --json {size / 1e6:7.2f} MB, {per_node:5.2f} KB/node "
                f"(target <= 1.5 KB: {'met' if per_node <= 1.5 else 'MISSED'})"
            )


def _comparable(out: bytes) -> object:
    """The report without what a newer check adds (the baseline may know fewer checks)."""
    doc = json.loads(out)
    return [(n["name"], n["family"], n["versions"]) for n in doc["nodes"]]


@contextmanager
def _none() -> Iterator[None]:
    yield None


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
                )[0]
                print(f"fleet collect, {len(fleet.hosts)} hosts, forks {n:>2}: {t:6.2f} s")
        finally:
            fleet.remove()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--baseline", default=BASELINE, help="commit to compare with ('' for none)")
    ap.add_argument("--collect", action="store_true")
    ap.add_argument("--forks", default="1,7")
    args = ap.parse_args()
    bench_report([int(x) for x in args.sizes.split(",")], args.baseline or None)
    if args.collect:
        bench_collect([int(x) for x in args.forks.split(",")])


if __name__ == "__main__":
    main()
