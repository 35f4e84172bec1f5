"""`cannenv precision run|compare|dumps`: from "the output differs" to the first module that goes wrong.

torch and transformers are imported only inside ``run`` and ``compare`` (exit 4 when absent);
``dumps`` needs torch only to read ``.pt`` tensor files. Core work lives in
:mod:`cannenv.precision`; this module gathers options, renders and returns the exit code
(0 nothing diverged, 1 a divergence, 2 bad input, 4 torch/transformers/device missing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from cannenv.commands.options import QUIET

if TYPE_CHECKING:
    from cannenv.precision.report import PrecisionReport

F = Callable[..., Any]

PURPOSE = "`cannenv precision` runs the model with them"


def _output_options(f: F) -> F:
    f = click.option(
        "--junit", "junit_file", metavar="FILE", help="Also write JUnit XML (one testcase per entry)."
    )(f)
    f = click.option("--json", "as_json", is_flag=True, help="JSON report (schema: docs/precision.md).")(f)
    f = click.option(
        "--tolerances",
        "tolerances_file",
        metavar="FILE",
        help="A tolerance policy file instead of the shipped matrices/precision/tolerances.yaml.",
    )(f)
    return f


def _input_options(f: F) -> F:
    f = QUIET(f)
    f = click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True)(f)
    f = click.option("--seq-len", type=click.IntRange(1, 65536), default=32, show_default=True)(f)
    f = click.option("--batch", type=click.IntRange(1, 1024), default=1, show_default=True)(f)
    f = click.option(
        "--keep-tensors",
        "keep_dir",
        metavar="DIR",
        help="Keep the reference's module outputs (.npy) in DIR instead of a temporary folder.",
    )(f)
    f = click.option(
        "--no-replay", "no_replay", is_flag=True, help="Do not replay the first divergent module alone."
    )(f)
    return f


@click.group("precision")
def precision() -> None:
    """Localise precision differences to the first module that goes wrong (docs/precision.md).

    \b
    Exit codes: 0 nothing diverged · 1 a divergence · 2 bad input ·
    4 torch, transformers or the device missing
    """


def _progress(quiet: bool) -> Callable[[str], None]:
    """Where the runner says what it is doing: stderr through :mod:`cannenv.progress`."""
    from cannenv.progress import Progress

    return Progress.for_cli(quiet).line


def _policy(tolerances_file: str | None) -> Any:
    from cannenv.precision.policy import load_policy

    return load_policy(tolerances_file)


def _emit(report: PrecisionReport, as_json: bool, junit_file: str | None) -> int:
    from cannenv.fsutil import atomic_write_text
    from cannenv.precision.report import render_junit, render_table

    if junit_file:
        atomic_write_text(junit_file, render_junit(report))
    click.echo(report.to_json() if as_json else render_table(report), nl=as_json)
    return report.exit_code


def _runner() -> Any:
    """The torch side (exit 4 when torch is present but cannot be imported: a broken install)."""
    try:
        from cannenv.precision import runner
    except ImportError as exc:
        from cannenv.errors import MissingToolError
        from cannenv.model.env import INSTALL

        raise MissingToolError(f"torch cannot be imported here ({exc})", hint=f"install: {INSTALL}") from None
    return runner


def _checkpoints(*folders: str) -> None:
    """Each folder is a checkpoint (config.json, a weight file): exit 2 before torch is imported."""
    from cannenv.certify.checkpoint import inspect

    for folder in folders:
        inspect(folder, hash_weights=False)


def _check_outputs(junit_file: str | None) -> None:
    from cannenv.fsutil import require_parent_dir

    if junit_file:
        require_parent_dir(junit_file, "--junit")


@precision.command("run")
@click.option("--model", "model_dir", required=True, metavar="DIR", help="A Hugging Face checkpoint folder.")
@click.option(
    "--device",
    type=click.Choice(["auto", "npu", "cpu"]),
    default="auto",
    show_default=True,
    help="Where the candidate runs: auto is the NPU when torch_npu sees one, else the CPU.",
)
@click.option(
    "--dtype",
    type=click.Choice(["auto", "bf16", "fp16", "fp32"]),
    default="auto",
    show_default=True,
    help="The candidate's dtype: auto is bf16 (fp16 on 310P).",
)
@click.option(
    "--from-dump",
    "from_dump",
    metavar="NPU_DUMP",
    help="Compare with an msprobe dump taken on the NPU: this model runs here as its bench (CPU float32).",
)
@_input_options
@_output_options
def run_cmd(
    model_dir: str,
    device: str,
    dtype: str,
    from_dump: str | None,
    no_replay: bool,
    keep_dir: str | None,
    batch: int,
    seq_len: int,
    seed: int,
    tolerances_file: str | None,
    as_json: bool,
    junit_file: str | None,
    quiet: bool,
) -> int:
    """The model on this host's device (or --dtype on the CPU) against the CPU float32 reference."""
    from cannenv.model import env

    _check_outputs(junit_file)
    policy = _policy(tolerances_file)
    _checkpoints(model_dir)
    env.require(purpose=PURPOSE)
    runner = _runner()

    inputs = runner.InputSpec(batch=batch, seq_len=seq_len, seed=seed)
    if from_dump:
        report = runner.from_dump(
            model_dir, from_dump, inputs=inputs, policy=policy, keep_dir=keep_dir, progress=_progress(quiet)
        )
    else:
        report = runner.run(
            model_dir,
            device=device,
            dtype=dtype,
            inputs=inputs,
            policy=policy,
            keep_dir=keep_dir,
            replay=not no_replay,
            progress=_progress(quiet),
        )
    return _emit(report, as_json, junit_file)


@precision.command("compare")
@click.option(
    "--model",
    "model_dir",
    required=True,
    metavar="DIR",
    help="The copy: converted, quantised, merged, fine-tuned.",
)
@click.option(
    "--against", "against", required=True, metavar="DIR", help="The original checkpoint (the reference)."
)
@click.option(
    "--dtype",
    type=click.Choice(["fp32", "bf16", "fp16"]),
    default="fp32",
    show_default=True,
    help="Both checkpoints run in this dtype on the CPU.",
)
@_input_options
@_output_options
def compare_cmd(
    model_dir: str,
    against: str,
    dtype: str,
    no_replay: bool,
    keep_dir: str | None,
    batch: int,
    seq_len: int,
    seed: int,
    tolerances_file: str | None,
    as_json: bool,
    junit_file: str | None,
    quiet: bool,
) -> int:
    """Two checkpoints of one architecture, same inputs, same dtype: where does the copy drift?"""
    from cannenv.model import env

    _check_outputs(junit_file)
    policy = _policy(tolerances_file)
    _checkpoints(model_dir, against)
    env.require(purpose=PURPOSE)
    runner = _runner()

    report = runner.compare(
        model_dir,
        against,
        dtype=dtype,
        inputs=runner.InputSpec(batch=batch, seq_len=seq_len, seed=seed),
        policy=policy,
        keep_dir=keep_dir,
        replay=not no_replay,
        progress=_progress(quiet),
    )
    return _emit(report, as_json, junit_file)


@precision.command("dumps")
@click.argument("npu_dump", metavar="NPU_DUMP")
@click.argument("bench_dump", metavar="BENCH_DUMP")
@_output_options
def dumps_cmd(
    npu_dump: str, bench_dump: str, tolerances_file: str | None, as_json: bool, junit_file: str | None
) -> int:
    """Two msprobe dumps (dump.json or its folder; statistics or tensor mode): the first divergent entry."""
    from cannenv.precision import dumps
    from cannenv.precision.report import Side, build

    _check_outputs(junit_file)
    policy = _policy(tolerances_file)
    npu = dumps.load_dump(npu_dump)
    bench = dumps.load_dump(bench_dump)
    entries = dumps.compare_dumps(npu, bench, policy)
    dtypes = [dumps.policy_dtype(e.outputs[0]) for e in npu.entries if e.outputs]
    dtype = max(sorted(set(dtypes)), key=dtypes.count) if dtypes else "fp32"
    notes = []
    if npu.skipped or bench.skipped:
        notes.append(
            f"{npu.skipped} NPU and {bench.skipped} bench entries not compared "
            "(backward, gradients, other names)"
        )
    if npu.task != bench.task:
        notes.append(
            f"modes differ: {npu.task} (NPU) and {bench.task} (bench); entries fall back to statistics"
        )
    report = build(
        mode="dumps",
        reference=Side(label=bench_dump, device="bench dump", dtype="-", source=f"msprobe {bench.task} dump"),
        candidate=Side(label=npu_dump, device="npu dump", dtype=dtype, source=f"msprobe {npu.task} dump"),
        dtype=dtype,
        policy=policy,
        entries=entries,
        notes=notes,
    )
    return _emit(report, as_json, junit_file)


COMMANDS: list[click.Command] = [precision]
