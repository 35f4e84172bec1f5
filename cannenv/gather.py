"""Gather: a host (or a ``--root`` tree) into :class:`~cannenv.facts.Facts`, without click.

Shared by the doctor's commands (``commands/doctor.py``) and the fleet bundle, whose entry point
is :func:`bundle_main`: ``python3 cannenv.pyz facts --json`` on a host. The bundle runs on the
host's own Python, 3.7 or newer, so this module and everything it imports stay 3.7-compatible
(``tests/unit/test_py37.py`` checks them with vermin, and the bundle tests run them on real old
interpreters); click (8.2+ needs 3.10) is therefore not on this path: the bundle parses its few
options with :mod:`argparse`, the same options ``cannenv facts`` takes.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cannenv.errors import CannenvError, ExitCode, InputError, NotFoundError

if TYPE_CHECKING:
    import argparse

    from cannenv.facts import Facts
    from cannenv.host import Host
    from cannenv.probes._common import HccnCapture, NpuSmiCapture


def read_env_file(path: str) -> dict[str, str]:
    """Parse ``KEY=VALUE`` lines (``export`` prefix, quotes and ``#`` comments allowed)."""
    from cannenv import records

    text = records.read_text(path, what="environment file", missing=NotFoundError)
    env: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].strip()
        key, sep, value = line.partition("=")
        if not sep or not key.replace("_", "a").isalnum():
            raise InputError(
                f"{path}:{lineno}: expected KEY=VALUE, got {raw.strip()!r}",
                hint="one variable per line, e.g. ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest",
            )
        value = value.strip()
        if "\x00" in value:  # no environment can hold it: every program given it would fail
            raise InputError(f"{path}:{lineno}: the value of {key.strip()} holds a NUL byte")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        env[key.strip()] = value
    return env


def read_capture(info_file: str | None, board_file: str | None) -> NpuSmiCapture | None:
    """The captured npu-smi output named on the command line (bounded, regular files only)."""
    from cannenv import records
    from cannenv.probes._common import NpuSmiCapture
    from cannenv.probes.npu import MAX_NPU_SMI_OUTPUT

    if info_file is None:
        if board_file is not None:
            raise InputError("--npu-smi-board needs --npu-smi-output (the `npu-smi info` capture)")
        return None
    info = records.read_text(
        info_file, what="npu-smi output", missing=NotFoundError, max_bytes=MAX_NPU_SMI_OUTPUT
    )
    board = None
    if board_file is not None:
        board = records.read_text(
            board_file, what="npu-smi board output", missing=NotFoundError, max_bytes=MAX_NPU_SMI_OUTPUT
        )
    return NpuSmiCapture(info=info, board=board, source=info_file)


def read_hccn_capture(directory: str | None) -> HccnCapture | None:
    """Captured hccn_tool outputs: ``DIR/<phy id>.txt`` (or ``hccn-<id>.txt``), bounded regular
    files only; other names are ignored (docs/multinode.md)."""
    from cannenv import records
    from cannenv.probes._common import HccnCapture
    from cannenv.probes.hccn import CAPTURE_NAME_RE, MAX_DEVICES, MAX_OUTPUT

    if directory is None:
        return None
    folder = Path(directory)
    if not folder.is_dir():
        raise NotFoundError(f"--hccn-output {directory!r} is not a directory")
    outputs: dict[int, str] = {}
    import itertools

    for name in sorted(p.name for p in itertools.islice(folder.iterdir(), MAX_DEVICES * 16)):
        m = CAPTURE_NAME_RE.match(name)
        if m and len(outputs) < MAX_DEVICES:
            outputs[int(m.group("id"))] = records.read_text(
                folder / name, what="hccn_tool output", max_bytes=MAX_OUTPUT
            )
    if not outputs:
        raise InputError(
            f"--hccn-output {directory!r} holds no <device id>.txt file",
            hint="one file per device: `hccn_tool -i N -ip -g`, `-link -g`, `-net_health -g`, `-tls -g`",
        )
    return HccnCapture(outputs=outputs, source=str(folder))


def make_host(root: str, env_file: str | None, timeout: float) -> Host:
    from cannenv.host import Host

    env = read_env_file(env_file) if env_file else dict(os.environ)
    if root in ("/", ""):
        return Host(Path("/"), env, True, timeout)
    p = Path(root)
    if not p.exists():
        raise NotFoundError(f"--root {root!r} does not exist")
    if not p.is_dir():
        raise InputError(f"--root {root!r} is not a directory")
    return Host(p.resolve(), env, True, timeout)


def gather(
    root: str,
    facts_file: str | None,
    python: str | None,
    site_packages: tuple[str, ...],
    env_file: str | None,
    timeout: float,
    npu_smi_output: str | None = None,
    npu_smi_board: str | None = None,
    hccn_output: str | None = None,
    multinode: bool = False,
) -> Facts:
    from cannenv.facts import Facts
    from cannenv.probes import collect

    if facts_file:
        if npu_smi_output or npu_smi_board or hccn_output:
            raise InputError(
                "--npu-smi-output and --hccn-output judge a host or tree; "
                "saved --facts already hold its devices"
            )
        return Facts.load(facts_file)
    host = make_host(root, env_file, timeout)
    if python and not host.is_live:
        raise InputError(
            "--python runs an interpreter, and nothing of a --root tree is ever run",
            hint="read the tree's packages with --site-packages DIR (a path in the tree), or leave both out",
        )
    check_python_options(host, python, site_packages)
    capture = read_capture(npu_smi_output, npu_smi_board)
    return collect(
        host,
        python=python,
        site_packages=site_packages,
        npu_smi_timeout=timeout,
        npu_smi_capture=capture,
        hccn_capture=read_hccn_capture(hccn_output),
        multinode=multinode,
    )


def check_python_options(host: Host, python: str | None, site_packages: tuple[str, ...]) -> None:
    """Bad ``--python`` / ``--site-packages`` values are bad input (exit 2), not an empty host."""
    if python is not None:
        found = shutil.which(python) if os.sep not in python else python
        if found is None or not Path(found).is_file() or not os.access(found, os.X_OK):
            raise InputError(
                f"--python {python!r}: no such executable on this machine",
                hint="give the path of the interpreter to judge, e.g. --python /opt/venv/bin/python",
            )
    for d in site_packages:
        if host.is_dir(d):
            continue
        if host.is_live:
            raise InputError(f"--site-packages {d!r}: no such directory")
        root = str(host.root)
        inside = d[len(root) :] if d.startswith(root.rstrip("/") + "/") else None
        raise InputError(
            f"--site-packages {d!r}: no such directory under --root {root} "
            f"(--site-packages paths are read inside the root, as {host.path(d)})",
            hint=f"give it as the path on the probed host: --site-packages {inside}"
            if inside
            else "give the directory's path as the probed host sees it (relative to --root)",
        )


# ------------------------------------------------------------------ the fleet bundle's entry point


def _parser() -> argparse.ArgumentParser:
    import argparse

    from cannenv import __version__

    parser = argparse.ArgumentParser(
        prog="cannenv", description="cannenv fleet bundle: runs `cannenv facts --json` only."
    )
    parser.add_argument("--version", action="version", version=f"cannenv, version {__version__}")
    parser.add_argument("--debug", action="store_true", help="Show tracebacks for errors.")
    sub = parser.add_subparsers(dest="command")
    facts = sub.add_parser("facts", help="Print what the probes find on this host, as JSON.")
    facts.add_argument("--root", default="/", metavar="DIR")
    facts.add_argument("--python", metavar="PATH")
    facts.add_argument("--site-packages", dest="site_packages", action="append", default=[], metavar="DIR")
    facts.add_argument("--env-file", dest="env_file", metavar="FILE")
    facts.add_argument("--npu-smi-timeout", dest="npu_smi_timeout", type=float, default=10.0)
    facts.add_argument("--npu-smi-output", dest="npu_smi_output", metavar="FILE")
    facts.add_argument("--npu-smi-board", dest="npu_smi_board", metavar="FILE")
    facts.add_argument("--hccn-output", dest="hccn_output", metavar="DIR")
    facts.add_argument("--multinode", action="store_true", help="Also run hccn_tool per device.")
    facts.add_argument("--json", dest="as_json", action="store_true", help="JSON (the only output here).")
    return parser


def bundle_main(argv: list[str]) -> None:
    """``cannenv facts --json`` in the fleet bundle; exit codes as the CLI's (README's table)."""
    args = _parser().parse_args(argv)  # exits 2 on a bad option, like click
    if args.command != "facts":
        sys.stderr.write("error: this bundle runs only `cannenv facts --json`\n")
        sys.exit(int(ExitCode.BAD_INPUT))
    try:
        facts = gather(
            args.root,
            None,
            args.python,
            tuple(args.site_packages),
            args.env_file,
            args.npu_smi_timeout,
            args.npu_smi_output,
            args.npu_smi_board,
            args.hccn_output,
            args.multinode,
        )
        sys.stdout.write(facts.to_json() + "\n")
    except CannenvError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        sys.stderr.write(f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else ""))
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as exc:
        if args.debug:
            raise
        sys.stderr.write(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "hint: this is a bug in cannenv; rerun with --debug and report the traceback\n"
        )
        sys.exit(int(ExitCode.INTERNAL))
