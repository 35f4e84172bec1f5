"""`cannenv explain`: from an error message to its root cause on this host, and the exact fix.

scan (:mod:`.scan`, :mod:`.inputs`) → match and judge (:mod:`.judge`, with the doctor's own
findings) → render (:mod:`.render`). Signatures are data (:mod:`.signatures`,
``matrices/explain/signatures.yaml``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts
    from cannenv.report import Finding


def host_findings(facts: Facts, matrix_paths: tuple[str, ...] = ()) -> tuple[Target, list[Finding]]:
    """The doctor's target and findings for ``facts`` (the same checks, the same matrix)."""
    from dataclasses import replace

    from cannenv import checks
    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target
    from cannenv.errors import CannenvError
    from cannenv.report import StackChoice

    try:
        m = matrix_mod.load(list(matrix_paths) or None)
    except CannenvError:
        if matrix_paths:
            raise
        m = None
    target = choose_target(facts, m)
    if m is None:
        target = replace(
            target, choice=StackChoice(how="none", reason="the shipped matrix could not be loaded")
        )
    return target, checks.run(facts, target)
