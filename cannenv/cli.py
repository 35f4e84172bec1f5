"""Command-line entry point: the only place that prints errors and chooses exit codes.

Each command family lives in ``cannenv/commands/<family>.py`` (its click commands in ``COMMANDS``)
and keeps heavy imports (docker, torch, jinja2) inside its functions; :class:`LazyGroup` imports a
family's module only when one of its commands runs, so ``cannenv doctor`` starts fast and never
imports torch or docker.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import sys
from typing import NoReturn

import click

from cannenv import __version__
from cannenv.errors import CannenvError, ExitCode

FAMILIES: tuple[str, ...] = (
    "matrix",
    "doctor",
    "image",
    "certify",
    "fleet",
    "plan",
    "model",
    "explain",
    "precision",
)
"""Command families: each ``cannenv/commands/<family>.py`` lists its click commands in ``COMMANDS``."""


class LazyGroup(click.Group):
    """A group that imports a family's module only when one of its commands is looked up.

    ``cannenv doctor`` imports ``cannenv.commands.doctor`` alone (the family named like the
    command is tried first, then the others in order); listing the commands (``--help``) imports
    them all. The ``COMMANDS`` list of each module stays the contract.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._loaded: set[str] = set()

    def _load(self, family: str) -> None:
        if family in self._loaded:
            return
        self._loaded.add(family)
        module = importlib.import_module(f"cannenv.commands.{family}")
        for command in module.COMMANDS:
            self.add_command(command)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        order = ([cmd_name] if cmd_name in FAMILIES else []) + [f for f in FAMILIES if f != cmd_name]
        for family in order:
            if cmd_name in self.commands:
                break
            self._load(family)
        return self.commands.get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        for family in FAMILIES:
            self._load(family)
        return sorted(self.commands)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cannenv")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Validated version matrices, host doctor, images and certification for Ascend NPU stacks.

    \b
    Exit codes: 0 ok · 1 checks failed · 2 bad input · 3 nothing matched ·
    4 tool or service missing · 5 digest/signature mismatch · 6 external step failed · 70 bug
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _unencodable_shown_escaped() -> None:
    """A file name that is not UTF-8 reaches Python as lone surrogates (``\\udcff``); a strict UTF-8
    terminal or pipe would refuse it (UnicodeEncodeError, exit 70). The terminal sanitiser already
    shows them escaped; for what is not sanitised (JSON, whose strings carry the exact value) the
    streams write ``\\udcff``, which inside a JSON string is that same value's escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            # a detached or closed stream: nothing to configure
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; map errors to exit codes. Never shows a traceback for a user error."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    _unencodable_shown_escaped()
    try:
        rv = cli.main(args=args, prog_name="cannenv", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except click.ClickException as exc:
        exc.show()
        sys.exit(ExitCode.BAD_INPUT)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except CannenvError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        from cannenv import sanitize

        click.secho(f"error: {sanitize.text(exc.message)}", fg="red", err=True)
        if exc.hint:
            click.echo(f"hint: {sanitize.text(exc.hint)}", err=True)
        sys.exit(int(exc.exit_code))
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            _internal(exc, debug)
        _output_failed(exc)
    except Exception as exc:
        _internal(exc, debug)
    try:
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not at interpreter exit
    except OSError as exc:
        _output_failed(exc)
    sys.exit(int(rv) if isinstance(rv, int) else 0)


_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EPIPE, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""Errors of writing the output (stdout on /dev/full, a closed pipe): the environment's, not ours."""


def _output_failed(exc: OSError) -> NoReturn:
    """The output could not be written: exit 2 with one line on stderr (stdout is dropped)."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115, PTH123 - nothing more goes to the broken stdout
    with contextlib.suppress(OSError):
        click.secho(f"error: cannot write the output: {exc.strerror or exc}", fg="red", err=True)
    sys.exit(ExitCode.BAD_INPUT)


def _internal(exc: BaseException, debug: bool) -> NoReturn:
    if debug:
        raise exc
    click.secho(f"internal error: {type(exc).__name__}: {exc}", fg="red", err=True)
    click.echo("hint: this is a bug in cannenv; rerun with --debug and report the traceback", err=True)
    sys.exit(ExitCode.INTERNAL)
