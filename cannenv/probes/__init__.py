"""Probes: read a host (through :class:`cannenv.host.Host`) and return :class:`~cannenv.facts.Facts`.

``PROBES`` is a plain registry: (name, function) pairs run in order; a later probe may read an
earlier one's result from ``ctx.results`` (the ABI preflight needs the Python environment). Each
probe is isolated: an unexpected exception becomes a ``probe-crashed`` issue naming the probe, the
field keeps its empty default, and the next probe runs.
"""

from __future__ import annotations

import datetime as _dt
import socket
from collections.abc import Callable, Sequence
from typing import Any

from cannenv import __version__
from cannenv.facts import Facts
from cannenv.host import Host
from cannenv.probes import container, driver, elf, environ, nnal, npu, os_info, python_env, toolkit
from cannenv.probes._common import ProbeContext

Probe = Callable[[ProbeContext], dict[str, Any]]

PROBES: tuple[tuple[str, Probe], ...] = (
    ("os", os_info.probe),
    ("environ", environ.probe),
    ("driver", driver.probe),
    ("toolkit", toolkit.probe),
    ("nnal", nnal.probe),
    ("npu", npu.probe),
    ("container", container.probe),
    ("python", python_env.probe),
    ("abi", elf.probe),
)


def collect(
    host: Host,
    *,
    python: str | None = None,
    site_packages: Sequence[str] = (),
    npu_smi_timeout: float = 10.0,
    only: Sequence[str] | None = None,
) -> Facts:
    """Run every probe against ``host`` and return the facts. Never raises for a broken host."""
    ctx = ProbeContext(
        host=host, python=python, site_packages=tuple(site_packages), npu_smi_timeout=npu_smi_timeout
    )
    fields: dict[str, Any] = {}
    for name, fn in PROBES:
        if only is not None and name not in only:
            continue
        try:
            result = fn(ctx)
        except Exception as exc:  # isolation: one broken probe must not stop the doctor
            ctx.issue(name, "probe-crashed", None, f"probe {name!r} failed: {type(exc).__name__}: {exc}")
            continue
        ctx.results.update(result)
        fields.update(result)
    cann = fields.get("cann")
    if cann is not None and "nnal" in fields:
        fields["cann"] = cann.model_copy(update={"nnal": fields.pop("nnal")})
    elif "nnal" in fields:
        fields.pop("nnal")
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
