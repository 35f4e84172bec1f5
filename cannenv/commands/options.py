"""Options and printers that several command families share.

Command modules never import each other: what two families share lives here (pip's
``cli/cmdoptions.py``). Importing this module is cheap (click only), so ``cannenv doctor`` stays on
its fast path.
"""

from __future__ import annotations

import functools
import gc
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import click

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.plan.model import Plan

F = TypeVar("F", bound=Callable[..., object])
P = ParamSpec("P")
R = TypeVar("R")

MAX_NPU_SMI_TIMEOUT = 3600.0


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` with the cyclic garbage collector paused, then restore it (doctor, explain).

    Nearly everything these commands allocate (the modules and value classes they import, the
    probes' facts, the matrix and signature tables from the cache) lives until the run ends, so
    collections find little to free but walk every object again: about 70 of them, ~20 ms of a
    ~250 ms doctor run. Reference counting still frees everything else at once (a long log's
    lines too: the scan makes no cycles); the collector is re-enabled (if it was on) afterwards,
    so an in-process caller (tests, CliRunner) keeps its own settings.
    """

    @functools.wraps(fn)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused


ROOT = click.option(
    "--root",
    default="/",
    show_default=True,
    metavar="DIR",
    help="Probe the host tree under DIR (a mounted image, a test tree) instead of this machine.",
)
"""``--root DIR``: the tree the probes read (``doctor``, ``facts``, ``env``, ``plan``)."""

MATRIX = click.option(
    "--matrix", "matrix_paths", multiple=True, metavar="PATH", help="Matrix files/dirs (default: shipped)."
)
"""``--matrix PATH`` (repeatable): a site matrix instead of the shipped one."""

SMI_OUTPUT = click.option(
    "--npu-smi-output",
    "npu_smi_output",
    metavar="FILE",
    help="Device facts from this captured `npu-smi info` output instead of running npu-smi "
    "(nothing under --root is ever run; a tree may also carry it at /var/lib/cannenv/npu-smi-info.txt).",
)
SMI_BOARD = click.option(
    "--npu-smi-board",
    "npu_smi_board",
    metavar="FILE",
    help="With --npu-smi-output: the captured `npu-smi info -t board -i 0 -c 0` output (gives the SoC).",
)

HCCN_OUTPUT = click.option(
    "--hccn-output",
    "hccn_output",
    metavar="DIR",
    help="Multi-node facts from captured hccn_tool outputs, DIR/<device id>.txt (docs/multinode.md) "
    "instead of running hccn_tool.",
)
MULTINODE = click.option(
    "--multinode",
    is_flag=True,
    help="This host runs multi-node jobs: run hccn_tool per device and judge hccn.conf, links, TLS and "
    "HCCL variables (else those checks say skip).",
)
_PYTHON = click.option("--python", "python", metavar="PATH", help="Target interpreter (default: this one).")
_SITE = click.option(
    "--site-packages",
    "site_packages",
    multiple=True,
    metavar="DIR",
    help="Read distributions from DIR (a path on the probed host; repeatable) instead of running an interpreter.",  # noqa: E501
)
_ENV_FILE = click.option(
    "--env-file",
    metavar="FILE",
    help="Judge the environment in FILE (KEY=VALUE lines) instead of this process's environment.",
)


def _timeout_value(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """A finite number of seconds in (0, 3600]: nan, inf, negative or absurd values are refused."""
    if not math.isfinite(value) or not 0 < value <= MAX_NPU_SMI_TIMEOUT:
        raise click.BadParameter(f"{value!r} is not a number of seconds in (0, {MAX_NPU_SMI_TIMEOUT:g}]")
    return value


_TIMEOUT = click.option(
    "--npu-smi-timeout",
    type=float,
    default=10.0,
    show_default=True,
    metavar="SECONDS",
    callback=_timeout_value,
    help="Give up on a hung npu-smi after this long.",
)


def host_options(fn: F) -> F:
    """--python, --site-packages, --env-file, --npu-smi-timeout, in that order: how facts are
    gathered from this host or a --root tree (``doctor``, ``facts``, ``plan``; see
    :func:`cannenv.gather.gather`)."""
    for option in (_TIMEOUT, _ENV_FILE, _SITE, _PYTHON):
        fn = option(fn)
    return fn


def print_plan(facts: Facts, target: Target, *, as_json: bool, as_shell: bool, verbose: bool) -> int:
    """The fix plan toward ``target`` (cannenv.plan; never run): ``doctor --plan``, ``certify --plan``."""
    from cannenv.plan import compute_plan

    return echo_plan(compute_plan(facts, target), as_json=as_json, as_shell=as_shell, verbose=verbose)


def echo_plan(plan: Plan, *, as_json: bool, as_shell: bool, verbose: bool) -> int:
    """Print one host's plan (JSON, a script to review, or the table); exit 0 when it is empty, else 1.

    The one printer of ``cannenv plan``, ``doctor --plan`` and ``certify --plan``."""
    from cannenv.plan import render_shell, render_text

    if as_json:
        click.echo(plan.to_json())
    elif as_shell:
        click.echo(render_shell(plan), nl=False)
    else:
        click.echo(render_text(plan, verbose=verbose), nl=False)
    return 0 if plan.empty else 1


DRIVER_POLICY = click.option(
    "--driver-policy",
    type=click.Choice(["accepted", "pinned"]),
    default="accepted",
    show_default=True,
    help="What satisfies the stack's driver: 'accepted' — its pin or a driver the vendor accepts for "
    "its CANN on this family (left in place by plans); 'pinned' — its pin only (docs/provision.md).",
)
"""``--driver-policy``: the one notion of compliant (:mod:`cannenv.checks.policy`), shared by
``doctor``, ``plan``, ``provision``, ``fleet report``/``diff`` and the k8s agent."""

_TARGET = click.option(
    "--target",
    "target_items",
    multiple=True,
    metavar="FAMILY=ID,...",
    help="Per-family targets (stack id or lock file), e.g. a2=ID,310p=LOCK; --stack/--lock is the "
    "default for other families.",
)
_TARGETS = click.option(
    "--targets",
    "targets_file",
    metavar="FILE",
    help="YAML: families: {a2: ID} and groups: {INVENTORY_GROUP: ID or LOCK} (groups need --inventory).",
)


def target_options(fn: F) -> F:
    """--target FAMILY=ID,... and --targets FILE: one target per node (:mod:`cannenv.fleet.targets`)."""
    for option in (_TARGETS, _TARGET):
        fn = option(fn)
    return fn


ROLE = click.option(
    "--role",
    type=click.Choice(["full", "hdk"]),
    default="full",
    show_default=True,
    help="hdk: the node carries only driver and firmware (CANN and torch live in the images): only "
    "those are judged, the driver against the target's CANN.",
)
"""``--role full|hdk`` (``doctor``, ``fleet report``, the DaemonSet): what a node is meant to carry."""

QUIET = click.option(
    "--quiet",
    "-q",
    "quiet",
    is_flag=True,
    help="No progress on stderr while it runs (only the final report). Progress is live on a terminal, "
    "plain lines otherwise; CANNENV_PROGRESS=live|plain|quiet overrides.",
)
