"""One error family for cannenv, with one exit-code table.

Every error carries a ``hint`` (what to do next). Only the CLI catches these: it prints the
message and the hint and exits with ``exit_code``; a traceback is shown only with ``--debug``.

Exit codes (documented in README and ``cannenv --help``):

====  ====================  ============================================================
code  name                  meaning
====  ====================  ============================================================
0     OK                    everything asked for was done and nothing failed
1     CHECKS_FAILED         a check, stage or gate failed (warnings too with ``--strict``)
2     BAD_INPUT             bad usage, an unreadable or invalid file, value or version string
3     NOT_FOUND             nothing matched: unknown stack id, no valid stack, no such check
4     MISSING_TOOL          a needed tool, service or device is missing; certify: nothing certified
5     INTEGRITY             a digest or signature does not match (artefact, certificate)
6     EXTERNAL_FAILURE      an external step failed (image build, subprocess) for its own reasons
70    INTERNAL              a bug in cannenv; rerun with --debug and report it
====  ====================  ============================================================
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    CHECKS_FAILED = 1
    BAD_INPUT = 2
    NOT_FOUND = 3
    MISSING_TOOL = 4
    INTEGRITY = 5
    EXTERNAL_FAILURE = 6
    INTERNAL = 70


class CannenvError(Exception):
    """Base of every error cannenv raises on purpose."""

    exit_code: ExitCode = ExitCode.BAD_INPUT

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class InputError(CannenvError):
    """Bad usage or invalid input: a file, a field, a value, a version string."""

    exit_code = ExitCode.BAD_INPUT


class VersionError(InputError):
    """A version string that does not fit the grammar of its family."""


class NotFoundError(CannenvError):
    """Nothing matched what was asked for."""

    exit_code = ExitCode.NOT_FOUND


class MissingToolError(CannenvError):
    """A needed tool or service is missing or unreachable."""

    exit_code = ExitCode.MISSING_TOOL


class IntegrityError(CannenvError):
    """A digest or a signature does not match."""

    exit_code = ExitCode.INTEGRITY


class ExternalError(CannenvError):
    """An external step (a build, a subprocess) failed for its own reasons."""

    exit_code = ExitCode.EXTERNAL_FAILURE


class ChecksFailed(CannenvError):
    """Raised by commands whose checks, stages or gate failed and that have nothing else to say."""

    exit_code = ExitCode.CHECKS_FAILED


def did_you_mean(word: str, choices: list[str] | tuple[str, ...] | set[str]) -> str | None:
    """A 'Perhaps you meant ...?' hint for an unknown name, or None."""
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=3, cutoff=0.6)
    if not close:
        return None
    return "Perhaps you meant " + ", ".join(repr(c) for c in close) + "?"


class InternalDataError(CannenvError):
    """Shipped data is missing: the installation is broken."""

    exit_code = ExitCode.INTERNAL

    def __init__(self, name: str) -> None:
        super().__init__(
            f"shipped data folder {name!r} is missing from this cannenv installation",
            hint="reinstall cannenv (pip install --force-reinstall cannenv)",
        )
