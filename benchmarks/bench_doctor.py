"""Benchmark: `cannenv doctor --json --root <realistic tree>` vs `python -m torch.utils.collect_env`.

Both run as fresh subprocesses in the same run (cold interpreter each time, like a user typing the
command); the best of N wall-clock times is printed for each, with the ratio. Target: ≥ 10×.

    python benchmarks/bench_doctor.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def best_of(argv: list[str], repeat: int, env: dict[str, str]) -> tuple[float, int]:
    times = []
    rc = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO)
        times.append(time.perf_counter() - t0)
        rc = p.returncode
    return min(times), rc


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from tests.helpers.hosts import a2_cann85_new

    with tempfile.TemporaryDirectory() as tmp:
        tree = a2_cann85_new(Path(tmp) / "tree")
        env_file = tree.env_file(Path(tmp) / "host.env")
        env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
        doctor = [
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
        peer = [sys.executable, "-m", "torch.utils.collect_env"]
        t_doc, rc_doc = best_of(doctor, args.repeat, env)
        t_peer, rc_peer = best_of(peer, args.repeat, env)
    print(f"cannenv doctor --json --root <A2 CANN 8.5.0 tree>: {t_doc:.3f} s (exit {rc_doc})")
    print(f"python -m torch.utils.collect_env:                 {t_peer:.3f} s (exit {rc_peer})")
    ratio = t_peer / t_doc if t_doc else float("inf")
    print(f"ratio: {ratio:.1f}x faster (target >= 10x) -> {'MET' if ratio >= 10 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
