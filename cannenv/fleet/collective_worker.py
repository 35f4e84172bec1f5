"""The all-reduce harness ``cannenv fleet collective`` copies to each node and runs there.

Standalone on purpose: it runs on the job's hosts with *their* Python and torch (and torch_npu for
HCCL), imports nothing of cannenv, and is started once per node by Ansible. That launcher starts one
worker process per device (``--nproc-per-node``), ranks ``node_rank * nproc + local_rank``, all
joining ``torch.distributed`` at ``tcp://MASTER_ADDR:MASTER_PORT``. Each worker all-reduces a tensor
of ones, checks every element equals the world size, then times ``--iters`` all-reduces of
``--size-mb`` for a bandwidth figure (nccl-tests' algbw and busbw = algbw * 2(n-1)/n). Rank 0
prints one line ``CANNENV-COLLECTIVE <json>``; the launcher exits non-zero when a worker failed.

With ``--backend hccl`` a node without a usable NPU says so (``status: skip`` and the reason) and
runs nothing: never a pass for what was not exercised.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

MARKER = "CANNENV-COLLECTIVE "


def _emit(payload: dict) -> None:  # type: ignore[type-arg]
    sys.stdout.write(MARKER + json.dumps(payload, sort_keys=True) + "\n")
    sys.stdout.flush()


def _hccl_problem() -> str | None:
    """Why HCCL cannot run on this node, or None."""
    import importlib

    try:
        import torch

        importlib.import_module("torch_npu")  # registers torch.npu
    except Exception as exc:  # no torch_npu, or it fails to load (CANN absent)
        return f"torch_npu cannot be imported here ({type(exc).__name__}: {exc})"
    npu = getattr(torch, "npu", None)
    if npu is None or not npu.is_available():
        return "torch_npu sees no NPU on this node"
    return None


def worker(args: argparse.Namespace) -> int:
    from datetime import timedelta

    os.environ.setdefault("TORCH_DEVICE_BACKEND_AUTOLOAD", "0" if args.backend == "gloo" else "1")
    import torch
    import torch.distributed as dist

    rank = args.node_rank * args.nproc_per_node + args.local_rank
    world = args.nnodes * args.nproc_per_node
    device = "cpu"
    npu = None
    if args.backend == "hccl":
        import importlib

        importlib.import_module("torch_npu")
        npu = getattr(torch, "npu")  # noqa: B009 - torch.npu exists only once torch_npu is imported
        npu.set_device(args.local_rank)
        device = f"npu:{args.local_rank}"
    dist.init_process_group(
        args.backend,
        init_method=f"tcp://{args.master_addr}:{args.master_port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=args.timeout),
    )
    try:
        probe = torch.ones(1024, dtype=torch.float32, device=device)
        dist.all_reduce(probe)
        correct = bool(torch.all(probe == float(world)).item())
        numel = max(1, int(args.size_mb * (1 << 20)) // 4)
        data = torch.ones(numel, dtype=torch.float32, device=device)
        for _ in range(2):  # warm-up: connections, buffers
            dist.all_reduce(data)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(args.iters):
            dist.all_reduce(data)
        if npu is not None:
            npu.synchronize()
        dist.barrier()
        elapsed = (time.perf_counter() - start) / max(1, args.iters)
        flags = torch.tensor([1 if correct else 0], dtype=torch.int32, device=device)
        dist.all_reduce(flags, op=dist.ReduceOp.MIN)
        if rank == 0:
            size = numel * 4
            algbw = size / elapsed / 1e9
            _emit(
                {
                    "status": "pass" if int(flags.item()) == 1 else "fail",
                    "backend": args.backend,
                    "world_size": world,
                    "nnodes": args.nnodes,
                    "nproc_per_node": args.nproc_per_node,
                    "correct": int(flags.item()) == 1,
                    "size_bytes": size,
                    "iters": args.iters,
                    "time_per_iter_s": round(elapsed, 6),
                    "algbw_gbps": round(algbw, 4),
                    "busbw_gbps": round(algbw * 2 * (world - 1) / world, 4) if world > 1 else 0.0,
                    "torch": torch.__version__,
                }
            )
    finally:
        dist.destroy_process_group()
    return 0


def launch(args: argparse.Namespace) -> int:
    """Start one worker per device on this node and wait for them all."""
    if args.backend == "hccl":
        problem = _hccl_problem()
        if problem:
            if args.node_rank == 0:
                _emit({"status": "skip", "backend": "hccl", "reason": problem})
            else:
                sys.stderr.write(f"hccl skipped on node {args.node_rank}: {problem}\n")
            return 0
    base = [sys.executable, str(Path(__file__).resolve()), "--worker"]
    common = [
        "--backend", args.backend, "--master-addr", args.master_addr, "--master-port", str(args.master_port),
        "--nnodes", str(args.nnodes), "--node-rank", str(args.node_rank),
        "--nproc-per-node", str(args.nproc_per_node), "--size-mb", str(args.size_mb),
        "--iters", str(args.iters), "--timeout", str(args.timeout),
    ]  # fmt: skip
    procs = [subprocess.Popen([*base, *common, "--local-rank", str(i)]) for i in range(args.nproc_per_node)]
    deadline = time.monotonic() + args.timeout + 60
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=max(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(124)
    bad = [c for c in codes if c != 0]
    if bad:
        sys.stderr.write(
            f"collective: {len(bad)} of {len(codes)} workers on node {args.node_rank} failed: {codes}\n"
        )
        return 1
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="cannenv all-reduce harness (one node)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--backend", choices=("gloo", "hccl"), default="gloo")
    p.add_argument("--master-addr", required=True)
    p.add_argument("--master-port", type=int, default=29500)
    p.add_argument("--nnodes", type=int, required=True)
    p.add_argument("--node-rank", type=int, required=True)
    p.add_argument("--nproc-per-node", type=int, default=1)
    p.add_argument("--local-rank", type=int, default=0)
    p.add_argument("--size-mb", type=float, default=4.0)
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--timeout", type=int, default=300)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return worker(args) if args.worker else launch(args)


if __name__ == "__main__":
    sys.exit(main())
