"""`cannenv model ops|memory|check`: is a model ready for a torch_npu build and an Ascend device?

torch and transformers are imported only inside these commands (never on the doctor's path).
Core work lives in :mod:`cannenv.model`; this module gathers the options and renders.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from cannenv.commands.options import QUIET
from cannenv.errors import InputError

if TYPE_CHECKING:
    from rich.console import Console

    from cannenv.model.config import ModelConfig
    from cannenv.model.coverage import Coverage
    from cannenv.model.memory import Plan


def _console() -> Console:
    from rich.console import Console

    return Console(file=sys.stdout, highlight=False, width=None if sys.stdout.isatty() else 160)


def _echo_json(data: Any) -> None:
    import json

    click.echo(json.dumps(data, indent=2, sort_keys=False))


WEIGHT_DTYPES = ["bf16", "fp16", "fp32", "int8", "int4", "fp8", "w8a8"]


def _source_options(f: Any) -> Any:
    f = click.option("--config", "config_file", type=click.Path(dir_okay=False), help="A config.json file.")(
        f
    )
    f = click.option(
        "--model",
        "model_dir",
        type=click.Path(file_okay=False),
        help="A checkpoint folder (its config.json).",
    )(f)
    return f


def _load(model_dir: str | None, config_file: str | None, *, build: bool = True) -> ModelConfig:
    """The validated config (an alias of architectures.yaml read as the type it is); typo warnings
    printed. ``build=False`` (the memory plan): a model type cannenv's own rules plan needs neither
    torch nor transformers; any other needs both (exit 4 otherwise), as every ``build`` does."""
    from cannenv.model import arch, env
    from cannenv.model.config import load

    cfg, note = arch.resolve(load(model_dir, config_file))
    if note:
        _warn(note)
    if not build and arch.plannable(cfg):
        return cfg
    env.require(transformers=cfg.tiny is None)
    from cannenv.model import trace

    for w in trace.config_warnings(cfg):
        _warn(w)
    if trace.TORCH_NPU_BLOCKED:
        _warn(
            "torch_npu is installed in this Python but was not imported (without CANN it cannot load):"
            " the model is traced with torch alone; the torch_npu registry is read from its files"
        )
    return cfg


def _warn(text: str) -> None:
    from cannenv import sanitize

    click.echo(f"warning: {sanitize.line(text)}", err=True)


def _seq_warnings(cfg: ModelConfig, seq_len: int) -> None:
    from cannenv.model.config import NESTED

    scopes = [cfg.raw] + [cfg.raw[k] for k in NESTED if isinstance(cfg.raw.get(k), dict)]
    for scope in scopes:
        for key in ("max_position_embeddings", "n_positions"):
            limit = scope.get(key)
            if isinstance(limit, int) and seq_len > limit:
                _warn(
                    f"--seq-len {seq_len} is past the model's {key} {limit}: positions beyond it were "
                    "never trained (rope_scaling extends it only where the config sets it)"
                )
                return


@click.group("model")
def model() -> None:
    """Model readiness before any NPU is touched: operator coverage and a memory plan."""


# ---------------------------------------------------------------------------------------------
# ops


def _coverage(
    cfg: ModelConfig,
    torch_npu: str | None,
    dtype: str,
    seq_len: int,
    *,
    python: str | None = None,
    family: str | None = None,
    quiet: bool = False,
) -> Coverage:
    from cannenv.model import coverage, registry, trace
    from cannenv.progress import Progress

    shown = Progress.for_cli(quiet)
    with shown.task(f"torch_npu registry ({torch_npu or 'this Python'})", unit="") as task:
        reg = registry.resolve(torch_npu, python=python)
        task.advance(1)
    with shown.task(f"tracing the model on the meta device ({dtype}, {seq_len} tokens)", unit="") as task:
        tr = trace.record(cfg, dtype=dtype, seq_len=seq_len)
        task.advance(1)
    return _fusions_for(coverage.classify(_stack_kernels(tr, reg), reg), cfg, family)


def _fusions_for(cov: Coverage, cfg: ModelConfig, family: str | None) -> Coverage:
    """Fused-operator suggestions only where their documented conditions hold for this model/chip."""
    from cannenv import soc as socs
    from cannenv.model import chips, trace

    keep = []
    chip = chips.of_family(family)
    hf: Any = trace.hf_config(cfg) if cfg.tiny is None else None
    heads = getattr(hf, "num_attention_heads", None)
    hidden = getattr(hf, "hidden_size", None)
    head_dim = getattr(hf, "head_dim", None)
    if not isinstance(head_dim, int) and isinstance(hidden, int) and isinstance(heads, int) and heads:
        head_dim = hidden // heads
    for f in cov.fusions:
        why = None
        if f.id in ("attention", "decode-attention"):
            if getattr(hf, "attn_logit_softcapping", None):
                why = "it cannot soft-cap the scores (attn_logit_softcapping)"
            elif isinstance(head_dim, int) and head_dim % 16:
                why = f"head_dim {head_dim} is not a multiple of 16"
            elif chip is not None and not chip.fused_attention:
                why = f"{socs.family_title(str(family))} has no npu_fusion_attention (Atlas A2/A3 only)"
        elif f.id == "paged-attention":
            if getattr(hf, "attn_logit_softcapping", None):
                why = "it cannot soft-cap the scores (attn_logit_softcapping)"
            elif isinstance(head_dim, int) and head_dim > 512:
                why = f"head_dim {head_dim} is over 512"
        if why:
            _warn(f"{f.target} not suggested: {why}")
        else:
            keep.append(f)
    from cannenv.model.coverage import Fusion, knowledge

    for item in knowledge()["fusions"]:
        key = item.get("config_has")
        if key and getattr(hf, key, None) is not None:
            if chip is not None and not chip.fused_attention:
                _warn(f"{item['target']} not suggested: {socs.family_title(str(family))} is not Atlas A2/A3")
                continue
            target = item["target"]
            keep.append(
                Fusion(
                    item["id"],
                    target,
                    cov.registry.sections("npu::" + target.rsplit(".", 1)[-1]) is not None,
                    ("model.layers.*.self_attn",),
                    item["replaces"],
                    item["conditions"],
                    item["source"],
                )
            )
    return replace(cov, fusions=tuple(keep))


def _stack_kernels(tr: Any, reg: Any) -> Any:
    """Reclassify the traced operators with the dispatch table of the torch ``reg`` requires."""
    from cannenv.errors import CannenvError
    from cannenv.model import stack_torch

    installed = tr.torch.split("+")[0]
    want = reg.torch
    label = f"torch_npu {reg.version or reg.origin}"
    if want is None:
        _warn(
            f"{label} names no torch it requires (no Requires-Dist in its METADATA): operators are "
            f"classified with the installed torch {tr.torch}, which may not be the stack's"
        )
        return tr
    if want == installed:
        return replace(tr, kernels_from=f"torch {tr.torch} (the torch {label} requires)")
    try:
        table, wheel = stack_torch.table_for(want)
    except CannenvError as exc:
        _warn(
            f"{label} requires torch {want}, the trace ran on torch {tr.torch}; its operator table could "
            f"not be read ({exc.message}): operators classified with torch {installed}, not the stack's"
        )
        return tr
    _warn(
        f"traced with torch {tr.torch}; {label} requires torch {want}: operators reclassified with torch "
        f"{want}'s native_functions.yaml"
    )
    kernels = {**tr.kernels, **stack_torch.kernels(table, tr.kernels)}
    return replace(tr, kernels=kernels, kernels_from=f"torch {want} native_functions.yaml ({wheel})")


def render_coverage(cov: Coverage, console: Console, *, all_ops: bool = True) -> None:
    from rich.markup import escape
    from rich.table import Table

    reg = cov.registry
    console.print(
        f"[bold]{escape(cov.trace.model)}[/bold] ({escape(cov.trace.config)}) · steps: "
        f"{', '.join(cov.trace.steps)} · torch_npu {escape(reg.version or '?')} ({escape(reg.origin)}, "
        f"{len(reg.ops)} operators)"
    )
    console.print(
        f"traced with torch {escape(cov.trace.torch)}, transformers {escape(cov.trace.transformers or '-')};"
        f" kernels from {escape(cov.trace.kernels_from)}"
    )
    table = Table(show_lines=False)
    for col in ("operator", "dtypes", "count", "class", "effect", "module", "why / rewrite"):
        table.add_column(col, overflow="fold")
    style = {"native": "green", "composite": "cyan", "fallback": "yellow", "unsupported": "red"}
    for row in cov.rows:
        v = row.verdict
        if not all_ops and v.klass == "native":
            continue
        bad = [f"{p} ({e})" for p, _, e in v.parts if e != "native"]
        why = v.why + (" — parts off the NPU: " + ", ".join(bad) if bad else "")
        if v.rewrite:
            why += f"\nrewrite: {v.rewrite}"
        table.add_row(
            escape(row.record.op),
            escape(",".join(row.record.dtypes) or "-"),
            str(row.record.count),
            f"[{style[v.klass]}]{v.klass}[/]",
            f"[{style[v.effect]}]{v.effect}[/]",
            escape(row.record.modules[0] if row.record.modules else ""),
            escape(why),
        )
    console.print(table)
    if cov.fusions:
        console.print("[bold]Fused-operator opportunities[/bold]")
        for f in cov.fusions:
            avail = "in this torch_npu" if f.available else "[yellow]not in this torch_npu[/]"
            console.print(f"  {escape(f.id)}: {escape(f.target)} ({avail}) at {escape(', '.join(f.modules))}")
            console.print(f"    replaces {escape(f.replaces)}")
            console.print(f"    when: {escape(f.conditions)}  [dim](source: {escape(f.source)})[/dim]")
    for note in cov.trace.notes:
        console.print(f"note: {escape(note)}")
    verdict = {
        "ready": "[green]every operator runs on the NPU[/]",
        "fallbacks": "[yellow]runs with CPU fallbacks:[/] " + escape(", ".join(cov.fallbacks)),
        "unsupported": "[red]not runnable: unsupported operators:[/] " + escape(", ".join(cov.unsupported)),
    }[cov.verdict]
    console.print(verdict)


@model.command("ops")
@_source_options
@click.option(
    "--torch-npu",
    "torch_npu",
    help="torch_npu to judge against: a package folder, a wheel, or a version (downloaded with pip "
    "into the cache). Default: this Python's.",
)
@click.option("--dtype", type=click.Choice(["bf16", "fp16", "fp32"]), default="bf16", show_default=True)
@click.option(
    "--seq-len",
    type=click.IntRange(1, 1 << 20),
    default=16,
    show_default=True,
    help="Prefill length for the trace.",
)
@click.option(
    "--compare",
    "compare_with",
    help="A second torch_npu (folder, wheel or version): show what changes for this model from it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema cannenv.model.ops/1).")
@QUIET
def ops(
    model_dir: str | None,
    config_file: str | None,
    torch_npu: str | None,
    dtype: str,
    seq_len: int,
    compare_with: str | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """List every ATen operator the model calls (prefill + one decode step, on the meta device)
    and classify it against a torch_npu build: native / composite / CPU fallback / unsupported.

    Exit code 1 when an operator is unsupported.
    """
    from cannenv.model import coverage, registry

    cov = _coverage(_load(model_dir, config_file), torch_npu, dtype, seq_len, quiet=quiet)
    changes: dict[str, Any] | None = None
    if compare_with is not None:
        old = coverage.classify(cov.trace, registry.resolve(compare_with))
        diff = registry.diff(old.registry, cov.registry)
        changes = {
            "from": old.registry.to_json(),
            "operators_added": len(diff["added"]),
            "operators_removed": len(diff["removed"]),
            "verdict_before": old.verdict,
            "changes": coverage.compare(old, cov),
        }
    if as_json:
        doc = cov.to_json()
        if changes is not None:
            doc["compare"] = changes
        _echo_json(doc)
    else:
        console = _console()
        render_coverage(cov, console)
        if changes is not None:
            before = changes["from"]["version"] or changes["from"]["origin"]
            console.print(
                f"[bold]From torch_npu {before}[/bold]: +{changes['operators_added']} / "
                f"-{changes['operators_removed']} operators registered;"
                f" verdict was {changes['verdict_before']}"
            )
            for c in changes["changes"]:
                console.print(f"  {c['op']}: {c['old']} -> {c['new']}")
            if not changes["changes"]:
                console.print("  no change for this model")
    if cov.verdict == "unsupported":
        raise click.exceptions.Exit(1)


# ---------------------------------------------------------------------------------------------
# memory


def _hbm(
    soc: str | None, family: str | None, hbm_gib: float | None
) -> tuple[int | None, str | None, tuple[str, ...]]:
    if hbm_gib is not None:
        return int(hbm_gib * (1 << 30)), "--hbm-gib", ("--hbm-gib",)
    if soc is None and family is None:
        return None, None, ()
    from cannenv import soc as socs

    mem = socs.device_memory(soc=soc, family=family)
    name = socs.normalize_soc(soc) if soc else socs.family_title(str(family))
    if mem is None:
        from cannenv.model import chips

        known = [m.soc or socs.family_title(str(m.family)) for m in socs.hardware().memory]
        fam = socs.soc_family(soc) if soc else socs.normalize_family(str(family))
        announced = chips.announced_hbm(fam)
        said = (
            f"; announced, not measured: {announced.text} ({announced.source})"
            if announced is not None
            else ""
        )
        raise InputError(
            f"no sourced HBM size for {name} in the SoC data: unknown{said}",
            hint="pass --soc with one that has a size (" + ", ".join(known) + ") or --hbm-gib N "
            "(the total `npu-smi info` shows in HBM-Usage(MB), / 1024)",
        )
    return mem.hbm_mib << 20, name, mem.sources


def _family(soc: str | None, family: str | None, stack_family: str | None = None) -> str | None:
    """The SoC family the plan is for; --soc, --family and --stack that disagree are refused."""
    from cannenv import soc as socs

    fam = socs.normalize_family(family) if family else None
    if soc is not None:
        of_soc = socs.soc_family(soc)
        if fam is not None and of_soc != fam:
            raise InputError(
                f"--soc {soc} is a {socs.family_title(of_soc)} SoC, not {socs.family_title(fam)} (--family)"
            )
        fam = of_soc
    if stack_family is not None and fam is not None and socs.normalize_family(stack_family) != fam:
        raise InputError(
            f"--stack is for {socs.family_title(stack_family)}, but --soc/--family say"
            f" {socs.family_title(fam)}",
            hint="a stack's torch_npu and CANN are built for its family: pick a stack of the SoC's family",
        )
    return fam or (socs.normalize_family(stack_family) if stack_family else None)


def _scheme(cfg: ModelConfig, dtype: str | None, family: str | None = None) -> tuple[Any, list[str]]:
    """The weight format to plan: --dtype, else the checkpoint's quantization, else its torch_dtype;
    then what the chip computes (310P: fp16, no bf16; A2/A3/310P: no fp8 matmul)."""
    from cannenv import soc as socs
    from cannenv.model import chips, quant

    notes: list[str] = []
    if dtype is not None:  # a what-if: --dtype replaces whatever the checkpoint stores, known or not
        try:
            own = quant.from_config(cfg.raw, cfg.origin)
        except InputError as exc:
            notes.append(f"--dtype {dtype} replaces the checkpoint's own weights ({exc})")
            own = None
        if own is not None and dtype != own.name:
            notes.append(f"--dtype {dtype} replaces the checkpoint's own {own.name} weights")
        sch = quant.DTYPES[dtype]
    elif (own := quant.from_config(cfg.raw, cfg.origin)) is not None:
        notes.append(f"weights as the checkpoint stores them: {own.name} ({own.source})")
        sch = own
    else:
        name = quant.config_dtype(cfg.raw) or "bf16"
        said = (
            " (the config's torch_dtype)"
            if quant.config_dtype(cfg.raw)
            else " (no torch_dtype in the config)"
        )
        notes.append(f"weights in {name}{said}")
        sch = quant.DTYPES[name]
    chip = chips.of_family(family)
    if chip is None:
        return sch, notes
    title = socs.family_title(str(family))
    if not sch.quantised and sch.name not in chip.dtypes:
        if dtype is not None:
            raise InputError(
                f"--dtype {dtype}: {title} computes {', '.join(chip.dtypes)} ({chip.source})",
                hint="plan with --dtype fp16" if "fp16" in chip.dtypes else None,
            )
        size = "same bytes" if sch.dense_bytes == 2 else "half the bytes"
        notes.append(
            f"{title} has no {sch.name}: the {sch.name} checkpoint runs in fp16 there ({size}; values"
            " beyond fp16's range overflow: check the model's outputs)"
        )
        sch = quant.DTYPES["fp16"]
    if sch.needs_format and sch.needs_format not in chip.formats:
        notes.append(
            f"needs conversion: {title} has no {sch.needs_format} matmul ({chip.source}); the"
            f" {sch.name} weights are dequantised to bf16 at load (plan with --dtype bf16) or converted"
            " (--dtype w8a8 with msmodelslim, --dtype int4 for weight-only)"
        )
    if sch.needs_fp8_matmul and not chip.fp8_matmul:
        if dtype is not None:
            raise InputError(
                f"--dtype {dtype}: {title} has no fp8 matmul ({chip.source})",
                hint="plan the converted weights: --dtype w8a8 (msmodelslim) or --dtype bf16 (dequantised)",
            )
        notes.append(
            f"needs conversion: {title} has no fp8 matmul; the {sch.name} weights are dequantised to"
            " bf16 at load (plan with --dtype bf16) or converted to W8A8 with msmodelslim (--dtype w8a8)"
        )
    return sch, notes


def _plan(
    cfg: ModelConfig,
    dtype: str | None,
    seq_len: int,
    batch: int,
    tp: int,
    hbm: tuple[int | None, str | None, tuple[str, ...]],
    kv_dtype: str | None,
    reserve_gib: float | None,
    ep: int = 1,
    family: str | None = None,
    images: int = 0,
) -> Plan:
    from cannenv.model import arch, memory

    _seq_warnings(cfg, seq_len)
    scheme, notes = _scheme(cfg, dtype, family)
    if arch.plannable(cfg):
        read = arch.read(cfg, skip=scheme.skip)
        shp = read.shape
        for w in _key_warnings(cfg, read.keys):
            _warn(w)
    else:
        from cannenv.model import trace

        shp = trace.shape(cfg, skip=scheme.skip)
    reserve = int(reserve_gib * (1 << 30)) if reserve_gib is not None else None
    return memory.plan(
        shp,
        dtype=scheme,
        batch=batch,
        seq_len=seq_len,
        tp=tp,
        ep=ep,
        hbm=hbm[0],
        device=hbm[1],
        hbm_source=hbm[2],
        kv_dtype=kv_dtype,
        reserve=reserve,
        notes=tuple(notes),
        images=images,
    )


def _key_warnings(cfg: ModelConfig, read: frozenset[str]) -> list[str]:
    """Keys close to one cannenv's rules read (a typo would leave that size at its default)."""
    from cannenv.model import config as config_mod

    out = config_mod.key_warnings(cfg.raw, read)
    sub = cfg.raw.get("text_config")
    if isinstance(sub, dict):
        out += [f"text_config.{w}" for w in config_mod.key_warnings(sub, read)]
    return out


def _gib(n: float | None) -> str:
    return "-" if n is None else f"{n / (1 << 30):.2f} GiB"


def render_plan(p: Plan, console: Console) -> None:
    from rich.markup import escape
    from rich.table import Table

    s = p.shape
    console.print(
        f"[bold]{escape(s.model)}[/bold]: {s.params:,} parameters"
        f" ({'tied' if s.tied else 'untied'} embeddings) · attention {', '.join(s.attention_kinds)}"
        f" · {len(s.layers)} layers"
    )
    console.print(
        f"weights {p.dtype}: {p.weights_total / 1e9:.2f} GB ({_gib(p.weights_total)})"
        f" · KV cache {p.kv_dtype}: "
        f"{p.kv_per_token / 1024:.1f} KiB per token, {_gib(p.kv_total)} for batch {p.batch} × {p.seq_len}"
    )
    device = (
        f"{p.device}: {_gib(p.hbm)} HBM per device"
        if p.hbm
        else "no device given (--soc / --family / --hbm-gib)"
    )
    console.print(f"{device} · reserve {_gib(p.reserve)} (runtime + idle device use)")
    if s.vision is not None:
        v = s.vision
        console.print(
            f"vision: {escape(v.kind)} tower, {v.layers} layers of {v.hidden} ·"
            f" {p.images} image(s) per sequence planned ({escape(v.assumption)}; {v.tokens_per_image}"
            " tokens each, part of --seq-len)"
        )
    console.print(f"read by: {escape(s.rules)}")
    table = Table()
    for col in ("TP", "weights", "KV cache", "activations", "total", "fits", "max batch×seq"):
        table.add_column(col, justify="right")
    for d in p.per_tp:
        fits = "-" if d.fits is None else ("[green]yes[/]" if d.fits else "[red]no[/]")
        mark = " *" if d.tp == p.at_tp.tp else ""
        table.add_row(
            f"{d.tp}{mark}",
            _gib(d.weights),
            _gib(d.kv_cache),
            _gib(d.activations),
            _gib(d.total),
            fits,
            "-" if d.max_tokens is None else f"{d.max_tokens:,}",
        )
    console.print(table)
    for note in s.notes + p.notes:
        console.print(f"note: {escape(note)}")
    if p.hbm is not None:
        at = p.at_tp
        verdict = "[green]fits[/]" if at.fits else "[red]does not fit[/]"
        console.print(
            f"at TP {at.tp}: {verdict} ({_gib(at.total)} of {_gib(p.hbm)});"
            f" minimum TP that fits: {p.min_tp or 'none up to 16'}"
        )


def _memory_options(f: Any) -> Any:
    f = click.option(
        "--reserve-gib",
        type=click.FloatRange(0),
        help="Override the per-device reserve (default: idle use + runtime workspace, docs/model.md).",
    )(f)
    f = click.option(
        "--kv-dtype",
        type=click.Choice(["bf16", "fp16", "int8", "fp32"]),
        help="KV-cache dtype (default: the weights' 16-bit dtype).",
    )(f)
    f = click.option(
        "--hbm-gib",
        type=click.FloatRange(min=0, min_open=True),
        help="HBM per device, for a SoC the data has no size for.",
    )(f)
    f = click.option("--family", help="SoC family (a2, a3, ...).")(f)
    f = click.option("--soc", help="SoC, e.g. Ascend910B3.")(f)
    f = click.option(
        "--ep",
        type=click.IntRange(1, 1024),
        default=1,
        show_default=True,
        help="Expert-parallel degree: routed experts distributed whole across this many devices "
        "(default: experts sharded across the TP ranks).",
    )(f)
    f = click.option(
        "--tp", type=click.IntRange(1, 64), default=1, show_default=True, help="Tensor-parallel degree."
    )(f)
    f = click.option(
        "--images",
        type=click.IntRange(0, 4096),
        default=0,
        show_default=True,
        help="Images per sequence (multimodal models): the vision tower's activations are planned for"
        " them; their tokens are part of --seq-len.",
    )(f)
    f = click.option("--batch", type=click.IntRange(1), default=1, show_default=True)(f)
    f = click.option("--seq-len", type=click.IntRange(1), default=4096, show_default=True)(f)
    return f


@model.command("memory")
@_source_options
@_memory_options
@click.option(
    "--dtype",
    type=click.Choice(WEIGHT_DTYPES),
    help="Weights (int8/int4: weight-only with scales; fp8: 128x128 blocks; w8a8: msmodelslim int8)."
    " Default: the checkpoint's quantization_config, else its torch_dtype.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema cannenv.model.memory/1).")
def memory(
    model_dir: str | None,
    config_file: str | None,
    seq_len: int,
    batch: int,
    images: int,
    tp: int,
    ep: int,
    soc: str | None,
    family: str | None,
    hbm_gib: float | None,
    kv_dtype: str | None,
    reserve_gib: float | None,
    dtype: str | None,
    as_json: bool,
) -> None:
    """Memory plan: weights, KV cache, prefill activations and reserve against the HBM per device.

    Exit code 1 when a device is given and the model does not fit at --tp.
    """
    p = _plan(
        _load(model_dir, config_file, build=False),
        dtype,
        seq_len,
        batch,
        tp,
        _hbm(soc, family, hbm_gib),
        kv_dtype,
        reserve_gib,
        ep,
        _family(soc, family),
        images,
    )
    if as_json:
        _echo_json(p.to_json())
    else:
        render_plan(p, _console())
    if p.at_tp.fits is False:
        raise click.exceptions.Exit(1)


# ---------------------------------------------------------------------------------------------
# check


def _detected_soc() -> tuple[str | None, int | None]:
    """This host's SoC and the smallest device memory its npu-smi shows (MiB), where present."""
    from cannenv.host import Host
    from cannenv.probes import collect

    found = collect(Host(), only=("npu",))  # probes report a missing npu-smi as a fact, never raise
    devices = getattr(found, "devices", None)
    soc = getattr(devices, "soc", None)
    sizes = [c.memory_mib for c in getattr(devices, "chips", ()) or () if getattr(c, "memory_mib", None)]
    return (str(soc) if soc else None), (min(sizes) if sizes else None)


@model.command("check")
@_source_options
@_memory_options
@click.option(
    "--torch-npu", "torch_npu", help="torch_npu to judge against (default: the stack's, else this Python's)."
)
@click.option(
    "--stack",
    "stack_id",
    help="A stack of the matrix: its torch_npu (downloaded into the cache) and its SoC family.",
)
@click.option(
    "--dtype",
    type=click.Choice(WEIGHT_DTYPES),
    help="Weights; default: the checkpoint's quantization_config, else its torch_dtype.",
)
@click.option("--strict", is_flag=True, help="Fail (exit 1) on CPU fallbacks too.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (schema cannenv.model.check/1).")
@QUIET
@click.option(
    "--matrix", "matrix_paths", multiple=True, metavar="PATH", help="Matrix files/dirs (default: shipped)."
)
def check(
    model_dir: str | None,
    config_file: str | None,
    seq_len: int,
    batch: int,
    images: int,
    tp: int,
    ep: int,
    soc: str | None,
    family: str | None,
    hbm_gib: float | None,
    kv_dtype: str | None,
    reserve_gib: float | None,
    torch_npu: str | None,
    stack_id: str | None,
    dtype: str | None,
    strict: bool,
    as_json: bool,
    quiet: bool = False,
    matrix_paths: tuple[str, ...] = (),
) -> None:
    """One readiness verdict: operators (ready / runs with CPU fallbacks / not runnable) and memory
    (fits at --tp or not), against this host's torch_npu and detected SoC unless told otherwise
    (--stack: the stack's torch_npu and family).

    Exit code 1 when not runnable or it does not fit (with --strict also for CPU fallbacks).
    """
    cfg = _load(model_dir, config_file)
    python = None
    if stack_id is not None:
        from cannenv import matrix

        stack = matrix.load(list(matrix_paths) or None).stack(stack_id)
        pinned = stack.components.get("torch_npu")
        if torch_npu is None and pinned is not None:
            torch_npu = pinned.version
            py = stack.components.get("python")
            python = py.version if py is not None else None
        stack_family: str | None = stack.family
        if soc is None and family is None and hbm_gib is None:
            family = stack.family
    else:
        stack_family = None
    host_hbm: tuple[int | None, str | None, tuple[str, ...]] | None = None
    if soc is None and family is None and hbm_gib is None:
        soc, host_mib = _detected_soc()
        if soc is None:
            raise InputError(
                "no NPU detected here to plan memory for",
                hint="pass --soc (e.g. Ascend910B3), --family or --hbm-gib",
            )
        if host_mib is not None:  # the host's own total, as its npu-smi shows it
            host_hbm = (host_mib << 20, soc, ("npu-smi info on this host",))
    fam = _family(soc, family, stack_family)
    hbm = host_hbm or _hbm(soc, family, hbm_gib)
    p = _plan(cfg, dtype, seq_len, batch, tp, hbm, kv_dtype, reserve_gib, ep, fam, images)
    op_dtype = p.dtype if p.dtype in ("bf16", "fp16") else "bf16"
    cov = _coverage(cfg, torch_npu, op_dtype, 16, python=python, family=fam, quiet=quiet)
    ops_verdict = {"ready": "ready", "fallbacks": "runs with CPU fallbacks", "unsupported": "not runnable"}[
        cov.verdict
    ]
    scheme, _ = _scheme(cfg, dtype, fam)
    if scheme.matmul_op and not cov.registry.sections(scheme.matmul_op):
        ops_verdict = (
            f"not runnable: the {scheme.name} weights need {scheme.matmul_op}, absent from this torch_npu"
        )
        cov = replace(cov, unsupported=(*cov.unsupported, scheme.matmul_op))
    fits = bool(p.at_tp.fits)
    mem = f"fits at TP {tp}" if fits else f"does not fit at TP {tp}"
    if not fits and p.min_tp:
        mem += f" (fits at TP {p.min_tp})"
    if as_json:
        _echo_json(
            {
                "schema": "cannenv.model.check/1",
                "verdict": f"{ops_verdict}; {mem}",
                "operators": ops_verdict,
                "fallbacks": list(cov.fallbacks),
                "unsupported": list(cov.unsupported),
                "torch_npu": cov.registry.to_json(),
                "tp": tp,
                "fits": fits,
                "min_tp": p.min_tp,
                "memory": p.to_json(),
            }
        )
    else:
        console = _console()
        render_coverage(cov, console, all_ops=False)
        console.print()
        render_plan(p, console)
        console.print()
        mem = (
            f"fits at TP {tp}"
            if fits
            else f"does not fit at TP {tp}" + (f" (fits at TP {p.min_tp})" if p.min_tp else "")
        )
        console.print(f"[bold]verdict:[/bold] {ops_verdict}; {mem}")
    failed = cov.verdict == "unsupported" or not fits or (strict and cov.verdict == "fallbacks")
    if failed:
        raise click.exceptions.Exit(1)


COMMANDS: list[click.Command] = [model]
