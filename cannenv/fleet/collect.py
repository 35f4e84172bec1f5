"""``cannenv fleet collect``: run the ``cannenv_facts`` Ansible role on every host, record the outcome.

cannenv has no remote-execution layer of its own: it drives Ansible (the engine Ascend fleets
already use; the vendor's installer is Ansible-based) through ansible-runner's Python API, running
the same playbook teams can call themselves (``ansible/playbooks/collect_facts.yml``). The role
pushes the cannenv bundle (:mod:`cannenv.fleet.zipapp`), runs ``cannenv facts --json`` and fetches
one ``<host>.json`` per host. This module turns Ansible's per-host events into a status and a reason
per host (:func:`classify_events`, pure) and writes the manifest ``collection.json``.

ansible-runner starts ``ansible-playbook`` itself: that subprocess is Ansible's door, not ours.
"""

from __future__ import annotations

import datetime as _dt
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cannenv.errors import InputError, MissingToolError, NotFoundError
from cannenv.fleet.collection import MANIFEST_NAME, Collection, HostResult

if TYPE_CHECKING:
    from cannenv.progress import Progress

_FLEET_MSG = re.compile(r"cannenv-fleet: (?P<code>[a-z-]+): (?P<reason>.*)", re.DOTALL)
_TIMEOUT_MARKERS = ("expected time frame", "timed out", "Timeout (")


@dataclass(frozen=True)
class Outcome:
    status: str
    reason: str = ""


def _message(res: Mapping[str, Any]) -> str:
    msg = res.get("msg")
    text = str(msg) if msg else ""
    if not text:
        text = str(res.get("stderr") or res.get("stdout") or "")
    return " ".join(text.split())


def classify_events(events: Iterable[Mapping[str, Any]]) -> dict[str, Outcome]:
    """Ansible runner events -> the first failure of each host (hosts that never failed are absent).

    A role failure carries ``cannenv-fleet: <code>: <reason>``; an ``unreachable`` event is the host
    not answering over SSH; a task killed by Ansible's own task timeout is a ``timeout``.
    """
    out: dict[str, Outcome] = {}
    for ev in events:
        kind = ev.get("event")
        data = ev.get("event_data") or {}
        host = data.get("host")
        if not host or host in out:
            continue
        res = data.get("res") or {}
        if kind == "runner_on_unreachable":
            out[host] = Outcome("unreachable", _message(res) or "host unreachable")
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            text = _message(res)
            m = _FLEET_MSG.search(text)
            if m:
                out[host] = Outcome(m.group("code"), m.group("reason").strip())
            elif any(marker in text for marker in _TIMEOUT_MARKERS):
                out[host] = Outcome("timeout", f"task {data.get('task', '?')!r}: {text}")
            else:
                out[host] = Outcome("failed", f"task {data.get('task', '?')!r}: {text or 'failed'}")
    return out


def hosts_seen(events: Iterable[Mapping[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for ev in events:
        host = (ev.get("event_data") or {}).get("host")
        if host and str(ev.get("event", "")).startswith("runner_on_"):
            seen.setdefault(host, None)
    return list(seen)


def playbook_path() -> Path:
    from cannenv.resources import data_dir

    path = data_dir("ansible") / "playbooks" / "collect_facts.yml"
    if not path.is_file():
        raise NotFoundError(f"the collect playbook is missing: {path}", hint="reinstall cannenv")
    return path


def import_ansible_runner() -> Any:
    """The ``ansible_runner`` module, imported lazily; a clear MissingToolError without it."""
    try:
        import ansible_runner
    except ImportError as exc:
        raise MissingToolError(
            "ansible-runner is not installed",
            hint="install the fleet extra: pip install 'cannenv[fleet]' (ansible-core + ansible-runner)",
        ) from exc
    _ansible_commands_on_path()
    return ansible_runner


def _ansible_commands_on_path() -> None:
    """ansible-runner starts ``ansible-playbook`` and ``ansible-inventory`` from ``PATH``: where
    they lie beside this interpreter only (a venv never activated), that folder goes first on
    ``PATH`` for this process."""
    import os

    from cannenv.fleet.ansible_cli import ansible_commands

    for found in ansible_commands("ansible-playbook", "ansible-inventory"):
        folder = str(Path(found).parent)
        if folder not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = os.pathsep.join([folder, os.environ.get("PATH", "")])


def run_playbook(
    ansible_runner: Any,
    playbook: Path,
    inventory: str | Path,
    private: Path,
    *,
    limit: str | None,
    forks: int,
    extravars: Mapping[str, Any],
    connect_timeout: int,
    on_event: Callable[[Mapping[str, Any]], object] | None = None,
    cancel: Callable[[], bool] | None = None,
) -> list[Mapping[str, Any]]:
    """Run ``playbook`` over ``inventory`` quietly (no colour, no retry files); return its events.

    ``on_event`` sees each event as ansible-runner receives it (its ``event_handler``: live
    progress, :mod:`cannenv.fleet.live`); every event is kept whatever it returns.

    ``cancel``: ansible-runner's ``cancel_callback``. Without it ansible-runner installs its own
    SIGINT/SIGTERM handler that kills ``ansible-playbook`` at once (right for a read-only
    collection); a rollout passes its own (:class:`cannenv.fleet.live.Interrupt`), which never kills
    a running step.

    One way to run a playbook for ``fleet collect`` and ``provision``. A run that produced no
    events and did not finish is an InputError carrying the tail of ansible's output.

    ``extravars`` reach ansible-playbook as a file (``env/extravars``, read with ``-e @``) in which
    every string is tagged ``!unsafe`` (:func:`cannenv.sanitize.ansible_vars_yaml`): plan steps
    quote what hosts reported, and Ansible renders ``{{ … }}`` in extra vars as trusted templates.
    """
    from cannenv.fsutil import atomic_write_text
    from cannenv.sanitize import ansible_vars_yaml

    private.mkdir(parents=True, exist_ok=True)
    (private / "env").mkdir(exist_ok=True)
    atomic_write_text(private / "env" / "extravars", ansible_vars_yaml(dict(extravars)), mode=0o600)
    runner = ansible_runner.run(
        private_data_dir=str(private),
        playbook=str(playbook),
        inventory=str(Path(inventory).resolve()),
        limit=limit,
        forks=forks,
        envvars={
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_TIMEOUT": str(connect_timeout),
            "ANSIBLE_DEPRECATION_WARNINGS": "False",
        },
        quiet=True,
        timeout=None,
        event_handler=None if on_event is None else _keep_all(on_event),
        **({"cancel_callback": cancel} if cancel is not None else {}),
    )
    events = list(runner.events)
    if runner.status not in ("successful", "failed") and not events:
        tail = "".join(runner.stdout.read().splitlines(keepends=True)[-5:]) if runner.stdout else ""
        raise InputError(
            f"ansible-playbook did not run ({runner.status}): {tail.strip() or 'no output'}",
            hint="check the inventory file and --limit pattern",
        )
    return events


def _keep_all(on_event: Callable[[Mapping[str, Any]], object]) -> Callable[[Mapping[str, Any]], bool]:
    def handler(event: Mapping[str, Any]) -> bool:
        on_event(event)
        return True  # ansible-runner stores an event only when its handler returns True

    return handler


def inventory_hosts(ansible_runner: Any, inventory: Path) -> list[str]:
    """Every host name of ``inventory`` (``ansible-inventory --list`` through ansible-runner)."""
    try:
        out, err = ansible_runner.get_inventory(
            action="list", inventories=[str(inventory.resolve())], response_format="json", quiet=True
        )
    except (RuntimeError, ValueError, OSError) as exc:  # what ansible-runner raises for a CLI failure
        raise InputError(f"inventory {inventory} cannot be read: {exc}") from None
    if not isinstance(out, dict):
        tail = " ".join(str(err or out or "").split())[-300:]
        raise InputError(f"inventory {inventory} cannot be read: {tail or 'no output'}")
    names: dict[str, None] = dict.fromkeys(str(h) for h in (out.get("_meta") or {}).get("hostvars") or {})
    for group in out.values():
        if isinstance(group, dict):
            names.update(dict.fromkeys(str(h) for h in group.get("hosts") or ()))
    return list(names)


def refuse_unsafe_host_names(ansible_runner: Any, inventory: Path) -> None:
    """InputError naming every inventory host whose name is not a plain file name, before anything
    runs: a host's facts are written to ``<out>/<name>.json`` (and removed there when it fails)."""
    from cannenv.sanitize import is_plain_file_name, line

    bad = [h for h in inventory_hosts(ansible_runner, inventory) if not is_plain_file_name(h)]
    if bad:
        raise InputError(
            f"inventory {inventory}: host name {', '.join(repr(line(b)) for b in bad[:5])}"
            + (f" (and {len(bad) - 5} more)" if len(bad) > 5 else "")
            + " is not a plain file name; each host's facts are written to <out>/<host>.json",
            hint="name the host with letters, digits and ._+%~- and give its address as ansible_host",
        )


def _prepare_out(out: Path, keep: int) -> None:
    """Refuse a directory that is not a collection; move a previous collection into its history
    (``history/<UTC time>/``, the newest ``keep`` kept; :mod:`cannenv.fleet.history`)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} exists and is not a directory")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MANIFEST_NAME).is_file():
            raise InputError(
                f"--out {out} is not empty and holds no {MANIFEST_NAME}",
                hint="give an empty or new directory, or one written by an earlier `cannenv fleet collect`",
            )
        from cannenv.fleet.history import keep_previous

        keep_previous(out, keep)
    out.mkdir(parents=True, exist_ok=True)


def collect(
    inventory: str | Path,
    out: str | Path,
    *,
    limit: str | None = None,
    forks: int = 5,
    timeout: int = 120,
    bundle: str | Path | None = None,
    use_bundle: bool = True,
    login_shell: bool = True,
    facts_args: tuple[str, ...] = (),
    extravars: Mapping[str, Any] | None = None,
    connect_timeout: int = 10,
    keep: int = 30,
    progress: Progress | None = None,
) -> Collection:
    """Collect facts from the inventory's hosts into ``out``; every host gets a status and a reason.

    Without ``bundle`` the bundle (pure Python: one for every host) is built from this cannenv and
    kept in the controller's cache, keyed by content. The collection ``out`` held is kept as
    ``out/history/<UTC time>/`` (the newest ``keep``; none with 0).
    """
    ansible_runner = import_ansible_runner()
    from cannenv import __version__
    from cannenv.fleet.zipapp import build_bundle

    inv = Path(inventory)
    if not inv.exists():
        raise NotFoundError(
            f"inventory {str(inv)!r} does not exist", hint="pass an Ansible inventory file (-i)"
        )
    if forks < 1:
        raise InputError(f"--forks {forks}: expected 1 or more")
    out_dir = Path(out).resolve()
    refuse_unsafe_host_names(ansible_runner, inv)

    with tempfile.TemporaryDirectory(prefix="cannenv-fleet-") as work:
        bundle_tag = bundle_sha = None
        bundle_file = ""
        if use_bundle:
            if bundle is None:
                # before the output folder is touched: a failed build leaves the last collection intact
                from cannenv.fleet.zipapp import cache_root

                dest = None if cache_root() is not None else Path(work) / "cannenv.pyz"
                built = build_bundle(dest)
                bundle_file, bundle_tag, bundle_sha = str(built.path), built.tag, built.sha256
            else:
                from cannenv.fsutil import sha256_file

                if not Path(bundle).is_file():
                    raise NotFoundError(
                        f"bundle {bundle} does not exist", hint="build one: cannenv fleet bundle"
                    )
                bundle_file, bundle_sha = str(Path(bundle).resolve()), sha256_file(bundle)
        _prepare_out(out_dir, keep)
        started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        variables: dict[str, Any] = {
            "cannenv_facts_dest": str(out_dir),
            "cannenv_facts_bundle": bundle_file,
            "cannenv_facts_timeout": int(timeout),
            "cannenv_facts_login_shell": bool(login_shell),
            "cannenv_facts_args": list(facts_args),
            **dict(extravars or {}),
        }
        from cannenv.fleet.live import CollectView
        from cannenv.progress import QUIET

        view = CollectView(progress or QUIET, classify_events)
        with view.out.region(view.render):
            events = run_playbook(
                ansible_runner,
                playbook_path(),
                inv,
                Path(work) / "runner",
                limit=limit,
                forks=forks,
                extravars=variables,
                connect_timeout=connect_timeout,
                on_event=view.feed,
            )
    failures = classify_events(events)
    hosts: list[HostResult] = []
    from cannenv.sanitize import is_plain_file_name

    for name in hosts_seen(events):
        if not is_plain_file_name(name):  # refused above; never joined to a path
            continue
        facts = out_dir / f"{name}.json"
        outcome = failures.get(name)
        if outcome is None:
            if facts.is_file() and facts.stat().st_size > 0:
                hosts.append(HostResult(name=name, status="collected", facts_file=facts.name))
                continue
            outcome = Outcome("failed", "the playbook succeeded but no facts file came back")
        facts.unlink(missing_ok=True)
        hosts.append(HostResult(name=name, status=outcome.status, reason=outcome.reason))
    collection = Collection(
        cannenv_version=__version__,
        started_at=started,
        finished_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        inventory=str(inv),
        limit=limit,
        forks=forks,
        bundle_tag=bundle_tag,
        bundle_sha256=bundle_sha,
        hosts=tuple(sorted(hosts, key=lambda h: h.name)),
        root=out_dir,
    )
    from cannenv.fsutil import atomic_write_text

    atomic_write_text(out_dir / MANIFEST_NAME, collection.to_json())
    if not hosts:
        raise NotFoundError(
            f"no host of {inv} matched" + (f" --limit {limit!r}" if limit else ""),
            hint="list them with `ansible-inventory -i INVENTORY --graph`",
        )
    return collection
