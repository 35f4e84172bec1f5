"""Benchmark: `cannenv doctor --json --root <realistic tree>` vs `python -m torch.utils.collect_env`.

Both run as fresh subprocesses in the same run (a cold interpreter each time, like a user typing
the command), interleaved so that load from other processes hits both alike. Each is run once to
warm up (compiles bytecode as an installed package has it, and fills cannenv's validated-matrix
cache as any second run finds it), then ``--repeat`` times; the median and the best wall-clock
time, the median CPU time (user + system of the child) and the peak resident memory of each child
(``ru_maxrss`` from ``os.wait4``) are printed, with the ratios. Targets: the doctor ≥ 10x faster
(median wall clock) and its peak memory < 60 MiB.

``--cold-cache`` also times the doctor with the matrix cache disabled (``CANNENV_NO_CACHE=1``),
i.e. parsing and validating the shipped matrix on every run.

    python benchmarks/bench_doctor.py [--repeat 9] [--cold-cache]

Measured on the 2-core shared dev machine (medians, wall clock):
  before (matrix parsed + validated every run, all command modules imported):
      doctor 0.45 s vs peer 2.23 s -> 4.9x (best of 5)
  round 1 (see docs/performance.md): doctor 0.278 s vs peer 2.135 s -> 7.7x (median of 7, quiet)
  round 2 (hardware table from the matrix cache, GC paused, command probes in threads):
      ~45 ms less than round 1 in interleaved A/B runs; 8.0x at load average 2.4 (median of 9)
  round 3 (values are dataclasses, pydantic only where outside data is validated):
      doctor 0.178 s vs peer 2.177 s -> 12.3x (median of 9, load ~1.2; best/best 13.7x)
  round 4 (issue 12: peak memory measured; pyelftools imported only when there is ELF to read):
      doctor 0.552 s vs peer 7.655 s -> 13.9x (median of 7 at load average 10; cpu 14.1x);
      doctor peak RSS 25.4 MiB (target < 60), collect_env 219 MiB
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEMORY_TARGET_MIB = 60
sys.path.insert(0, str(REPO))


class Timing:
    def __init__(self, name: str) -> None:
        self.name = name
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.rss_mib: list[float] = []
        self.rc = 0

    def run(self, argv: list[str], env: dict[str, str]) -> None:
        """Run once; wall clock, CPU (user + system) and peak RSS come from this child alone
        (``os.wait4`` returns its own resource usage: ``ru_maxrss`` in KiB on Linux)."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            t0 = time.perf_counter()
            p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=REPO)
            _, status, usage = os.wait4(p.pid, 0)
            self.wall.append(time.perf_counter() - t0)
            p.returncode = os.waitstatus_to_exitcode(status)
            self.cpu.append(usage.ru_utime + usage.ru_stime)
            self.rss_mib.append(usage.ru_maxrss / 1024)
            self.rc = p.returncode
            if p.returncode not in (0, 1):
                err.seek(0)
                tail = err.read().decode("utf-8", "replace")[-2000:]
                raise SystemExit(f"{self.name} failed (exit {p.returncode}):\n{tail}")

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    def line(self) -> str:
        return (
            f"{self.name:<46} median {self.median:6.3f} s  best {min(self.wall):6.3f} s  "
            f"cpu median {statistics.median(self.cpu):6.3f} s  peak RSS max {max(self.rss_mib):6.1f} MiB  "
            f"(exit {self.rc}, n={len(self.wall)})"
        )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--cold-cache", action="store_true", help="also time the doctor without the matrix cache")
    args = ap.parse_args()
    from tests.helpers.hosts import a2_cann85_new

    with tempfile.TemporaryDirectory() as tmp:
        tree = a2_cann85_new(Path(tmp) / "tree")
        env_file = tree.env_file(Path(tmp) / "host.env")
        env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode compiled
        env["CANNENV_CACHE_DIR"] = str(Path(tmp) / "cache")  # a fresh cache, filled by the warm-up
        no_cache_env = {**env, "CANNENV_NO_CACHE": "1"}
        doctor_argv = [
            sys.executable,
            "-m",
            "cannenv",
            "doctor",
            "--json",
            "--root",
            str(tree.root),
            "--env-file",
            str(env_file),
        ]
        peer_argv = [sys.executable, "-m", "torch.utils.collect_env"]
        doctor = Timing("cannenv doctor --json --root <A2 CANN 8.5.0>")
        cold = Timing("  same, matrix cache off (CANNENV_NO_CACHE=1)")
        peer = Timing("python -m torch.utils.collect_env")
        warm = Timing("warm-up")
        warm.run(doctor_argv, env)
        warm.run(peer_argv, env)
        for _ in range(args.repeat):
            doctor.run(doctor_argv, env)
            peer.run(peer_argv, env)
            if args.cold_cache:
                cold.run(doctor_argv, no_cache_env)
    print(doctor.line())
    if args.cold_cache:
        print(cold.line())
    print(peer.line())
    ratio = peer.median / doctor.median if doctor.median else float("inf")
    cpu_ratio = statistics.median(peer.cpu) / max(statistics.median(doctor.cpu), 1e-9)
    print(
        f"ratio (median wall): {ratio:.1f}x faster (target >= 10x) -> {'MET' if ratio >= 10 else 'NOT MET'};"
        f"  best/best {min(peer.wall) / min(doctor.wall):.1f}x;  median cpu {cpu_ratio:.1f}x"
    )
    if args.cold_cache:
        print(f"ratio with the matrix cache off: {peer.median / cold.median:.1f}x")
    peak = max(doctor.rss_mib)
    print(
        f"doctor peak memory (max RSS over the runs): {peak:.1f} MiB (target < {MEMORY_TARGET_MIB} MiB) -> "
        f"{'MET' if peak < MEMORY_TARGET_MIB else 'NOT MET'};  collect_env: {max(peer.rss_mib):.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
