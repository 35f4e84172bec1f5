"""Benchmark: `cannenv precision` localising a bf16 run against float32, module by module, on the CPU.

Two models, built from a config with seeded random weights (nothing is downloaded):

* ``tiny``  Llama, hidden 32, 3 layers, vocab 128 (the test models): seconds.
* ``1b``    Llama with TinyLlama-1.1B's shape (hidden 2048, 22 layers, intermediate 5632, 32 heads,
            4 KV heads, vocab 32000): 1.1 B parameters, minutes on a 2-core CPU.

For each, one copy has ``model.layers.2.mlp.down_proj`` scaled by 2 (the "port that drifts"), and
the run is :func:`cannenv.precision.runner.localise` — reference forward with every module's
output spooled to disk, candidate forward comparing in its hooks, replay of the first divergent
module — exactly what `cannenv precision run|compare` does after loading the checkpoint. Printed:
wall and CPU seconds per phase, the forward alone (the bare minimum: one float32 forward and one
candidate forward, no hooks), peak RSS, the spool size and the module calls compared.

The peer is msprobe, which is not run here: it needs its `PrecisionDebugger` in the script on each
side, writes two dumps through its own hooks, then compares them. Its documentation states the
compare step at 0.1 GB/s of dump data for dumps under 10 GB, on a dedicated 192-core machine with an
SSD (10.accuracy_compare_PyTorch.md, §1). The script prints what that step alone would take for two
tensor dumps the size of cannenv's spool; cannenv compares inside the candidate's forward, so its
cost beyond the forward passes is the honest comparison (``localise`` against ``bare``).

    python benchmarks/bench_precision.py [--only tiny|1b] [--seq-len 32]

Measured on the shared 2-core dev machine, load average ~19 from other engineers' test suites (so
wall clocks are ~7x the CPU seconds; the CPU seconds are what an idle 2-core machine would take):
  tiny  44 module calls; first divergence model.layers.2.mlp.down_proj, replay local;
        localise 4.96 s wall / 0.78 s CPU; bare fp32+bf16 forwards 2.24 s / 0.29 s.
  1b    1.100 B parameters, seq 32: 291 module calls; first divergence model.layers.2.mlp.down_proj,
        replay local; localise 301.5 s wall / 42.4 s CPU (reference + spool 74 s, candidate +
        compare 160 s, replay 64 s); bare fp32+bf16 forwards 192.9 s / 23.2 s -> 1.56x wall,
        1.83x CPU (localise runs three forwards: reference, candidate, and the reference again for
        the replay's inputs). Spool 98 MiB; peak RSS 8.70 GiB for 6.15 GiB of weights (fp32 + bf16).
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"

SHAPES: dict[str, dict[str, Any]] = {
    "tiny": dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64),
    "1b": dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=22,
               num_attention_heads=32, num_key_value_heads=4, max_position_embeddings=2048),
}  # fmt: skip


def bench(name: str, seq_len: int) -> None:
    import torch
    import transformers

    from cannenv.precision import runner
    from cannenv.precision.policy import load_policy

    transformers.utils.logging.set_verbosity_error()
    torch.manual_seed(0)
    t0 = time.perf_counter()
    cfg = transformers.LlamaConfig(**SHAPES[name])
    cfg._attn_implementation = "eager"
    ref = transformers.LlamaForCausalLM(cfg).eval()
    params = sum(p.numel() for p in ref.parameters())
    build_s = time.perf_counter() - t0
    cand = copy.deepcopy(ref).to(torch.bfloat16)
    with torch.no_grad():
        cand.model.layers[2].mlp.down_proj.weight.mul_(2.0)
    ids = runner.InputSpec(batch=1, seq_len=seq_len).ids(cfg.vocab_size)
    fwd = runner.forward_on(ids)
    t0, c0 = time.perf_counter(), time.process_time()
    with torch.no_grad():
        fwd(ref)
        fwd(cand)
    bare_s, bare_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    entries, replay, timings, _ = runner.localise(
        ref,
        cand,
        fwd,
        cand_device=torch.device("cpu"),
        cand_dtype="bf16",
        policy=load_policy(),
        keep_dir=None,
        replay=True,
        progress=lambda _m: None,
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    first = next((e for e in entries if e.status == "diverged"), None)
    rss_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (1 << 20)
    weights_gib = params * (4 + 2) / (1 << 30)
    msprobe_s = 2 * timings["spool_mib"] / 1024 / 0.1  # two tensor dumps of this size at 0.1 GB/s
    print(f"[{name}] {params / 1e9:.3f} B parameters, seq {seq_len}, built in {build_s:.1f} s")
    print(f"  module calls compared: {len(entries)}; first divergence: {first and first.module}; "
          f"replay: {replay and replay.verdict}")  # fmt: skip
    print(f"  localise: {wall:.2f} s wall, {cpu:.2f} s CPU "
          f"(reference+spool {timings['reference_s']} s, candidate+compare {timings['candidate_s']} s, "
          f"replay {timings.get('replay_s', 0)} s)")  # fmt: skip
    print(f"  bare forwards (fp32 + bf16, no hooks): {bare_s:.2f} s wall, {bare_cpu:.2f} s CPU "
          f"-> localise / bare = {wall / bare_s:.2f}x wall, "
          f"{cpu / max(bare_cpu, 1e-9):.2f}x CPU")  # fmt: skip
    print(f"  spool {timings['spool_mib']:.1f} MiB on disk (module outputs, float32); "
          f"msprobe's compare of two tensor dumps that size at its documented 0.1 GB/s: "
          f"{msprobe_s:.1f} s, after both dump runs")  # fmt: skip
    print(f"  peak RSS {rss_gib:.2f} GiB (weights of both sides: {weights_gib:.2f} GiB)")
    print(f"  load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=sorted(SHAPES))
    ap.add_argument("--seq-len", type=int, default=32)
    args = ap.parse_args()
    for name in [args.only] if args.only else ["tiny", "1b"]:
        bench(name, args.seq_len)


if __name__ == "__main__":
    main()
