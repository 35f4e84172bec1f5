"""Probes: read a host (through :class:`cannenv.host.Host`) and return :class:`~cannenv.facts.Facts`.

``PROBES`` is a plain registry: (name, function) pairs run in order; a later probe may read an
earlier one's result from ``ctx.results`` (the ABI preflight needs the Python environment). Each
probe is isolated: an unexpected exception becomes a ``probe-crashed`` issue naming the probe, the
field keeps its empty default, and the next probe runs.

Probes that wait on commands and read no other probe's result (``BESIDE``: ``npu-smi``, the target
interpreter, ``gcc``/``cmake``) start at once in threads, each with its own issue list; their
results and issues are merged at their place in ``PROBES`` order, so the facts are exactly those
of a one-by-one run, only the waits overlap.
"""

from __future__ import annotations

import datetime as _dt
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cannenv import __version__
from cannenv.facts import Facts, ProbeIssue
from cannenv.host import Host
from cannenv.probes import (
    container,
    driver,
    elf,
    environ,
    hccn,
    mindie,
    nnal,
    npu,
    os_info,
    python_env,
    toolkit,
)
from cannenv.probes._common import HccnCapture, NpuSmiCapture, ProbeContext

if TYPE_CHECKING:  # dict[...] at run time needs 3.9; the probes also run in the bundle on 3.7
    Probe = Callable[[ProbeContext], dict[str, Any]]

PROBES: tuple[tuple[str, Probe], ...] = (
    ("os", os_info.probe),
    ("environ", environ.probe),
    ("driver", driver.probe),
    ("toolkit", toolkit.probe),
    ("nnal", nnal.probe),
    ("mindie", mindie.probe),
    ("npu", npu.probe),
    ("container", container.probe),
    ("multinode", hccn.probe),
    ("python", python_env.probe),
    ("abi", elf.probe),
)


BESIDE = frozenset({"os", "npu", "python"})
"""Probes that may wait on a command and read no other probe's result: they run in threads."""


def _run_probe(name: str, fn: Probe, ctx: ProbeContext) -> dict[str, Any]:
    try:
        return fn(ctx)
    except Exception as exc:  # isolation: one broken probe must not stop the doctor
        ctx.issue(name, "probe-crashed", None, f"probe {name!r} failed: {type(exc).__name__}: {exc}")
        return {}


class _Beside:
    """One probe running in a thread with its own issue list (merged in order by :func:`collect`)."""

    def __init__(self, name: str, fn: Probe, ctx: ProbeContext) -> None:
        self.ctx = replace(ctx, issues=[], results={})
        self.result: dict[str, Any] = {}
        self.thread = threading.Thread(target=self._run, args=(name, fn), name=f"probe-{name}", daemon=True)
        self.thread.start()

    def _run(self, name: str, fn: Probe) -> None:
        self.result = _run_probe(name, fn, self.ctx)

    def join(self) -> tuple[dict[str, Any], list[ProbeIssue]]:
        self.thread.join()
        return self.result, self.ctx.issues


def collect(
    host: Host,
    *,
    python: str | None = None,
    site_packages: Sequence[str] = (),
    npu_smi_timeout: float = 10.0,
    only: Sequence[str] | None = None,
    npu_smi_capture: NpuSmiCapture | None = None,
    hccn_capture: HccnCapture | None = None,
    multinode: bool = False,
) -> Facts:
    """Run every probe against ``host`` and return the facts. Never raises for a broken host.

    Nothing of a tree (``host.is_live`` False) is run: its device facts come from
    ``npu_smi_capture`` or the capture file the tree carries (:mod:`cannenv.probes.npu`)."""
    ctx = ProbeContext(
        host=host,
        python=python,
        site_packages=tuple(site_packages),
        npu_smi_timeout=npu_smi_timeout,
        npu_smi_capture=npu_smi_capture,
        hccn_capture=hccn_capture,
        multinode=multinode,
    )
    selected = [(name, fn) for name, fn in PROBES if only is None or name in only]
    beside = {name: _Beside(name, fn, ctx) for name, fn in selected if name in BESIDE}
    fields: dict[str, Any] = {}
    for name, fn in selected:
        if name in beside:
            result, issues = beside[name].join()
            ctx.issues.extend(issues)
        else:
            result = _run_probe(name, fn, ctx)
        ctx.results.update(result)
        fields.update(result)
    nnal = fields.pop("nnal", None)  # NNAL is part of the CANN facts
    if nnal is not None and "cann" in fields:
        fields["cann"] = replace(fields["cann"], nnal=nnal)
    if not host.is_live and "os" in fields and "cann" in fields:
        arch = _recorded_arch(fields["cann"])
        if arch is not None:
            fields["os"] = replace(fields["os"], arch=arch)
    try:
        hostname = socket.gethostname() if host.is_live else None
    except OSError:
        hostname = None
    return Facts(
        cannenv_version=__version__,
        collected_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        root=str(host.root),
        live=host.is_live,
        hostname=hostname,
        issues=tuple(ctx.issues),
        **fields,
    )


_ARCHES = {"aarch64": "aarch64", "arm64": "aarch64", "x86_64": "x86_64", "amd64": "x86_64"}


def _recorded_arch(cann: Any) -> str | None:
    """A tree's architecture as its CANN install record states it (``arch=`` in
    ``ascend_toolkit_install.info``; the active install first): what the vendor installed for,
    stronger evidence than a ``/lib/<multiarch>`` directory (which a trimmed tree may lack)."""
    active = cann.active_install()
    for inst in ([active] if active is not None else []) + list(cann.installs):
        arch = _ARCHES.get((inst.arch or "").strip().lower())
        if arch is not None:
            return arch
    return None
