"""``cannenv fleet collective``: a real all-reduce across a job's nodes, started by Ansible.

The playbook (``ansible/playbooks/collective.yml``) copies the standalone harness
(:mod:`cannenv.fleet.collective_worker`) to every host and runs it on all of them at once; it starts
one process per device and they join ``torch.distributed`` (HCCL on NPUs, gloo anywhere). This
module validates the options, runs the playbook through ansible-runner (the same door as ``fleet
collect``) and turns the hosts' events into one result. Never a false pass:

* any host failing or unreachable is ``fail`` with its reason;
* gloo says so: ``gloo (harness only; HCCL not exercised)``;
* HCCL on a node without a usable NPU is ``skip`` with the reason the node gave.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cannenv.errors import InputError, NotFoundError

MARKER = "CANNENV-COLLECTIVE "
GLOO_NOTE = "gloo (harness only; HCCL not exercised)"
_ADDR_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}\Z")
_PYTHON_RE = re.compile(r"^[A-Za-z0-9_./+-]{1,255}\Z")
_ENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")


@dataclass(frozen=True)
class CollectiveResult:
    status: str
    """``pass``, ``fail``, ``skip`` or ``error``."""
    backend: str
    detail: str
    figures: dict[str, Any] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)
    """Per host: ``ok`` or why it failed."""

    def exit_code(self) -> int:
        from cannenv.errors import ExitCode

        if self.status == "fail":
            return int(ExitCode.CHECKS_FAILED)
        if self.status == "error":
            return int(ExitCode.EXTERNAL_FAILURE)
        return int(ExitCode.OK)

    def to_json(self) -> str:
        return json.dumps(
            {
                "status": self.status,
                "backend": self.backend,
                "detail": self.detail,
                "figures": self.figures,
                "hosts": self.hosts,
            },
            indent=2,
            sort_keys=True,
        )


def worker_path() -> Path:
    from cannenv.fleet import collective_worker

    return Path(collective_worker.__file__).resolve()


def playbook_path() -> Path:
    from cannenv.resources import data_dir

    path = data_dir("ansible") / "playbooks" / "collective.yml"
    if not path.is_file():
        raise NotFoundError(f"the collective playbook is missing: {path}", hint="reinstall cannenv")
    return path


def parse_env(items: Iterable[str]) -> dict[str, str]:
    """``KEY=VALUE`` options for the harness's environment (e.g. PYTHONPATH, HCCL_* variables)."""
    env: dict[str, str] = {}
    for item in items:
        key, sep, val = item.partition("=")
        if not sep or not _ENV_KEY_RE.match(key):
            raise InputError(f"--env {item!r}: expected KEY=VALUE with KEY a variable name")
        if "\x00" in val or len(val) > 4096:
            raise InputError(f"--env {key}: the value holds a NUL byte or is over 4096 characters")
        env[key] = val
    return env


def result_from_events(events: Iterable[Mapping[str, Any]], backend: str) -> CollectiveResult:
    """Ansible events -> one result (pure): rank 0's line, and every host's outcome."""
    from cannenv.fleet.collect import classify_events, hosts_seen

    evs = list(events)
    failed = classify_events(evs)
    hosts = {h: (f"{failed[h].status}: {failed[h].reason}" if h in failed else "ok") for h in hosts_seen(evs)}
    payload: dict[str, Any] | None = None
    for ev in evs:
        data = ev.get("event_data") or {}
        if (
            ev.get("event") != "runner_on_ok"
            or data.get("task") != "Run the harness (one process per device)"
        ):
            continue
        for line in str((data.get("res") or {}).get("stdout") or "").splitlines():
            if line.startswith(MARKER):
                try:
                    got = json.loads(line[len(MARKER) :])
                except ValueError:
                    continue
                if isinstance(got, dict):
                    payload = got
    if failed:
        why = "; ".join(f"{h}: {o.status}: {o.reason[-300:]}" for h, o in sorted(failed.items()))
        return CollectiveResult(
            "fail", backend, f"the collective did not complete: {why}", payload or {}, hosts
        )
    if payload is None:
        return CollectiveResult("error", backend, "rank 0 printed no result", {}, hosts)
    if payload.get("status") == "skip":  # the hosts ran nothing either: none of them is "ok"
        skipped = {h: "skip" if outcome == "ok" else outcome for h, outcome in hosts.items()}
        return CollectiveResult("skip", backend, f"{backend} not run: {payload.get('reason')}", {}, skipped)
    if payload.get("status") != "pass" or payload.get("correct") is not True:
        return CollectiveResult(
            "fail", backend, "the all-reduce gave a wrong sum on some rank", payload, hosts
        )
    note = GLOO_NOTE if backend == "gloo" else "HCCL"
    world = payload.get("world_size")
    detail = (
        f"{note}: all-reduce correct on {world} ranks ({payload.get('nnodes')} node(s) x "
        f"{payload.get('nproc_per_node')}); {payload.get('size_bytes')} bytes: algbw "
        f"{payload.get('algbw_gbps')} GB/s, busbw {payload.get('busbw_gbps')} GB/s"
    )
    return CollectiveResult("pass", backend, detail, payload, hosts)


def run_collective(
    inventory: str | Path,
    *,
    backend: str = "gloo",
    limit: str | None = None,
    master_addr: str | None = None,
    master_port: int = 29500,
    nproc_per_node: int = 1,
    size_mb: float = 4.0,
    iters: int = 5,
    timeout: int = 300,
    python: str = "python3",
    env: Mapping[str, str] | None = None,
    connect_timeout: int = 10,
) -> CollectiveResult:
    from cannenv.fleet.collect import (
        import_ansible_runner,
        inventory_hosts,
        refuse_unsafe_host_names,
        run_playbook,
    )

    if backend not in ("gloo", "hccl"):
        raise InputError(f"--backend {backend!r}: gloo or hccl")
    if master_addr is not None and not _ADDR_RE.match(master_addr):
        raise InputError(f"--master-addr {master_addr!r} is not a host name or address")
    if not _PYTHON_RE.match(python):
        raise InputError(f"--python {python!r} is not a plain interpreter path")
    inv = Path(inventory)
    if not inv.exists():
        raise NotFoundError(
            f"inventory {str(inv)!r} does not exist", hint="pass an Ansible inventory file (-i)"
        )
    ansible_runner = import_ansible_runner()
    refuse_unsafe_host_names(ansible_runner, inv)
    count = len(inventory_hosts(ansible_runner, inv))
    variables: dict[str, Any] = {
        "cannenv_collective_worker": str(worker_path()),
        "cannenv_collective_backend": backend,
        "cannenv_collective_master_port": int(master_port),
        "cannenv_collective_nproc": int(nproc_per_node),
        "cannenv_collective_size_mb": float(size_mb),
        "cannenv_collective_iters": int(iters),
        "cannenv_collective_timeout": int(timeout),
        "cannenv_collective_python": python,
        "cannenv_collective_env": dict(env or {}),
    }
    if master_addr is not None:
        variables["cannenv_collective_master_addr"] = master_addr
    with tempfile.TemporaryDirectory(prefix="cannenv-collective-") as work:
        events = run_playbook(
            ansible_runner,
            playbook_path(),
            inv,
            Path(work),
            limit=limit,
            forks=max(1, min(500, count)),  # every node at once: ranks wait for each other
            extravars=variables,
            connect_timeout=connect_timeout,
        )
    return result_from_events(events, backend)
