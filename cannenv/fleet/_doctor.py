"""The doctor's judgement, reused per node: B's ``choose_target`` + ``checks.run``.

The matrix is loaded once; an explicit ``--stack``/``--lock`` is resolved once, up front, so an
unknown stack id fails before any node is judged (and 10,000 nodes do not re-read the lock).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cannenv.facts import Facts
from cannenv.report import Finding, StackChoice


def make_judge(
    *, stack_id: str | None = None, lock: str | Path | None = None
) -> Callable[[Facts], tuple[list[Finding], StackChoice]]:
    """A :data:`cannenv.fleet.report.Judge` running every doctor check against the chosen stack."""
    from cannenv import checks
    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target
    from cannenv.errors import InputError

    if stack_id and lock:
        raise InputError("give either --stack or --lock, not both")
    matrix = matrix_mod.load()
    lock_arg = str(lock) if lock is not None else None
    # Resolve once (raises NotFoundError for an unknown id, InputError for a bad lock file).
    choose_target(Facts(), matrix, stack_id=stack_id, lock=lock_arg)
    selected = checks.all_checks()

    def judge(facts: Facts) -> tuple[list[Finding], StackChoice]:
        target = choose_target(facts, matrix, stack_id=stack_id, lock=lock_arg)
        return checks.run(facts, target, selected), target.choice

    return judge
