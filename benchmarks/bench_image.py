"""Benchmark `cannenv image build` against a naive single-stage Dockerfile, with a real Docker engine.

Measures, for a TEST-FIXTURE stack (fake CANN installers from tests/fixtures/cann_installer, stand-in
torch/torch_npu wheels; no network, local base image from tests/integration/bases.sh):

1. full build time (no cache), cannenv vs the naive peer;
2. rebuild time after changing only the torch_npu pin, and whether every CANN layer came from the
   cache (target: all of them, and < 20% of the full build);
3. final image size against the size of the installed trees (target: <= 5% over; the peer keeps its
   installers in a COPY layer).

The peer is what a hand-written Dockerfile usually does: one stage, COPY the installers, RUN them,
then `rm` them (the bytes stay in the COPY layer), with torch_npu installed in the same stage.

Usage: python benchmarks/bench_image.py [--installed-mb 24] [--padding-mb 8]
Prints one line per measurement and the ratios; exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "cann_installer"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))

from fixture_stack import matrix_yaml, standin_wheel  # noqa: E402
from image_wheels import cann_dep_standins  # noqa: E402
from make_fixture_installer import make_installers  # noqa: E402

from cannenv import matrix  # noqa: E402
from cannenv.artifacts import build_cannenv_wheel, verify_installers  # noqa: E402
from cannenv.engine import BuildEvent, Engine  # noqa: E402
from cannenv.image import RenderOptions, render, scan_wheelhouse, spec_from_stack, wheel_from_file  # noqa: E402

BASE = os.environ.get("CANNENV_TEST_BASE_IMAGE", "cannenv-test/debian:bookworm")
STACK = "fixture-a2-cann8.3.rc2"
COMP = {"cann": "toolkit", "ops": "kernels", "nnal": "nnal"}

NAIVE = """FROM {base}
COPY installers/ /tmp/installers/
RUN groupadd -f HwHiAiUser && (id -u HwHiAiUser || useradd -g HwHiAiUser -m HwHiAiUser) \\
    && bash /tmp/installers/{toolkit} --quiet --install --install-for-all \\
    && bash /tmp/installers/{kernels} --quiet --install --install-for-all \\
    && . /usr/local/Ascend/ascend-toolkit/set_env.sh \\
    && bash /tmp/installers/{nnal} --quiet --install --install-for-all \\
    && rm -rf /tmp/installers
COPY wheels/ /tmp/wheels/
RUN python3 -m venv /opt/cannenv/venv \\
    && /opt/cannenv/venv/bin/pip install --no-index --no-deps /tmp/wheels/*.whl \\
    && rm -rf /tmp/wheels
"""


def wheelhouse(dest: Path, deps: Path, torch_npu: str) -> Path:
    dest.mkdir(parents=True)
    for p in deps.glob("*.whl"):
        os.link(p, dest / p.name)
    standin_wheel(dest, "torch", "2.5.1", "torch")
    standin_wheel(dest, "torch_npu", torch_npu, "torch_npu")
    cann_dep_standins(dest, "8.3.RC2")  # CANN's Python deps (stand-ins where cannenv has no real wheel)
    return dest


def context(
    tmp: Path,
    name: str,
    art: Path,
    pins: dict[str, tuple[str, str | None]],
    wh: Path,
    cw: Path,
    torch_npu: str,
) -> Path:
    mfile = tmp / f"{name}.yaml"
    mfile.write_text(matrix_yaml(stack_id=STACK, cann="8.3.RC2", installers=pins, torch_npu=torch_npu))
    m = matrix.load([mfile])
    spec = spec_from_stack(m.stack(STACK), m, nnal=True)  # as the naive Dockerfile: with NNAL
    verified = verify_installers(spec, art)
    ctx = render(
        spec,
        RenderOptions(
            os="preinstalled",
            base_image=BASE,
            wheels=scan_wheelhouse(wh),
            cannenv_wheel=wheel_from_file(cw),
            verified_installers=verified,
        ),
    )
    return ctx.write(tmp / f"ctx-{name}")


def du(engine: Engine, tag: str, *paths: str) -> int:
    r = engine.run(tag, ["du", "-sbc", *paths])
    return int(r.stdout.strip().splitlines()[-1].split()[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--installed-mb", type=int, default=24)
    ap.add_argument("--padding-mb", type=int, default=8)
    ap.add_argument("--steps", action="store_true", help="print the time of each rebuild step")
    args = ap.parse_args()
    engine = Engine.connect()
    if not engine.exists(BASE):
        print(f"base image {BASE} missing: run tests/integration/bases.sh bookworm", file=sys.stderr)
        return 4
    with tempfile.TemporaryDirectory(prefix="cannenv-bench-") as t:
        tmp = Path(t)
        inst = make_installers(
            tmp / "art",
            "8.3.RC2",
            installed_bytes=args.installed_mb << 20,
            padding_bytes=args.padding_mb << 20,
        )
        pins: dict[str, tuple[str, str | None]] = {
            c: (inst[f].path.name, inst[f].sha256) for c, f in COMP.items()
        }
        cw = build_cannenv_wheel(tmp / "cw")
        deps = tmp / "deps"
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(deps), str(cw)],
            check=True,
        )
        for p in deps.glob("cannenv-*.whl"):
            p.unlink()
        wh1 = wheelhouse(tmp / "wh1", deps, "2.5.1")
        wh2 = wheelhouse(tmp / "wh2", deps, "2.5.1.post1")
        tags = {"a": "cannenv-bench/stack:a", "b": "cannenv-bench/stack:b", "naive": "cannenv-bench/naive:a"}
        for tag in tags.values():
            engine.remove(tag)

        ctx_a = context(tmp, "a", tmp / "art", pins, wh1, cw, "2.5.1")
        full = engine.build(ctx_a, tags["a"], nocache=True)
        ctx_b = context(tmp, "b", tmp / "art", pins, wh2, cw, "2.5.1.post1")
        marks: list[tuple[float, str]] = [(time.monotonic(), "context upload")]

        def mark(ev: BuildEvent) -> None:
            if ev.kind == "step":
                marks.append((time.monotonic(), f"step {ev.step}: {ev.text[:70]}"))

        rebuild = engine.build(ctx_b, tags["b"], on_event=mark)
        marks.append((time.monotonic(), "end"))
        if args.steps:
            for (t0, what), (t1, _) in itertools.pairwise(marks):
                print(f"  rebuild {t1 - t0:5.2f} s  {what}")

        naive_dir = tmp / "naive"
        (naive_dir / "installers").mkdir(parents=True)
        (naive_dir / "wheels").mkdir()
        for i in inst.values():
            os.link(i.path, naive_dir / "installers" / i.path.name)
        for p in [*wh1.glob("*.whl"), cw]:
            os.link(p, naive_dir / "wheels" / p.name)
        (naive_dir / "Dockerfile").write_text(
            NAIVE.format(
                base=BASE,
                toolkit=inst["toolkit"].path.name,
                kernels=inst["kernels"].path.name,
                nnal=inst["nnal"].path.name,
            )
        )
        naive_s = engine.build(naive_dir, tags["naive"], nocache=True).duration_s

        base_size = engine.inspect(BASE).size
        trees = ("/usr/local/Ascend", "/opt/cannenv/venv", "/etc/Ascend", "/opt/cannenv/gate", "/etc/cannenv")
        installed = du(engine, tags["a"], *trees)
        added = engine.inspect(tags["a"]).size - base_size
        naive_added = engine.inspect(tags["naive"]).size - base_size
        naive_installed = du(engine, tags["naive"], *trees)

        # CANN-side steps: the os and cann-installer stages, and the final stage before any Python copy
        stage, cann_steps, cann_cached, after_python = 0, 0, 0, False
        for s in rebuild.steps:
            if s.instruction.startswith("FROM"):
                stage += 1
                continue
            after_python = after_python or s.instruction.startswith("COPY --from=python")
            if stage in (1, 2) or (stage == 5 and not after_python):
                cann_steps += 1
                cann_cached += s.cached

        ratio_rebuild = rebuild.duration_s / full.duration_s
        over = added / installed - 1
        naive_over = naive_added / naive_installed - 1
        print(
            f"installers: {sum(i.path.stat().st_size for i in inst.values()) / 2**20:.1f} MiB; "
            f"installed trees: {installed / 2**20:.1f} MiB"
        )
        print(
            f"full build      cannenv {full.duration_s:6.1f} s   naive {naive_s:6.1f} s   "
            f"ratio {full.duration_s / naive_s:.2f}"
        )
        print(
            f"torch_npu-only rebuild  {rebuild.duration_s:6.1f} s = {ratio_rebuild:.0%} of the full build "
            f"(target < 20%); CANN steps from cache: {cann_cached}/{cann_steps}"
        )
        print(
            f"image size over installed trees: cannenv {over:+.1%}   naive {naive_over:+.1%} "
            f"(target <= +5%); naive/cannenv added bytes {naive_added / added:.2f}x"
        )
        for tag in tags.values():
            engine.remove(tag)
        ok = cann_cached == cann_steps and ratio_rebuild < 0.20 and over <= 0.05
        print("targets met" if ok else "TARGET MISSED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
