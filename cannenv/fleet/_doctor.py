"""The doctor's judgement, reused per node: B's ``choose_target`` + ``checks.run``.

The matrix is loaded once; an explicit ``--stack``/``--lock`` is resolved once, up front, so an
unknown stack id fails before any node is judged (and 10,000 nodes do not re-read the lock).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from cannenv.facts import Facts
from cannenv.fleet.targets import inventory_groups, load_target_file, node_family, parse_targets
from cannenv.report import Finding, StackChoice

__all__ = [
    "inventory_groups",
    "load_target_file",
    "make_judge",
    "make_router",
    "node_family",
    "parse_targets",
]


def make_judge(
    *,
    stack_id: str | None = None,
    lock: str | Path | None = None,
    driver_policy: str = "accepted",
    matrix_paths: Sequence[str] = (),
    role: str = "full",
) -> Callable[[Facts], tuple[list[Finding], StackChoice]]:
    """A :data:`cannenv.fleet.report.Judge` running every doctor check against the chosen stack
    (of ``matrix_paths``, a site matrix, when given; else of the shipped matrix)."""
    from cannenv import checks
    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target
    from cannenv.errors import InputError

    if stack_id and lock:
        raise InputError("give either --stack or --lock, not both")
    matrix = matrix_mod.load(list(matrix_paths) or None)
    lock_arg = str(lock) if lock is not None else None
    # Resolve once (raises NotFoundError for an unknown id, InputError for a bad lock file).
    choose_target(Facts(), matrix, stack_id=stack_id, lock=lock_arg, driver_policy=driver_policy)
    selected = checks.all_checks()

    from dataclasses import fields, replace

    from cannenv.values import to_json

    # Fleets are homogeneous: nodes whose facts are the same but for their name and collection time
    # are judged once (findings are frozen values, shared). 10,000 nodes in the benchmark: ~8x.
    seen: dict[str, tuple[tuple[Finding, ...], StackChoice]] = {}
    # Facts read through one memo (Facts.from_json) share their sections: the same section objects
    # are the same facts, told without serialising them. The facts are kept, so ids stay theirs.
    parts = [f.name for f in fields(Facts) if f.name not in ("hostname", "collected_at")]
    by_parts: dict[tuple[int, ...], tuple[Facts, tuple[tuple[Finding, ...], StackChoice]]] = {}

    def judge(facts: Facts) -> tuple[list[Finding], StackChoice]:
        ident = tuple(id(getattr(facts, n)) for n in parts)
        known = by_parts.get(ident)
        if known is not None and all(getattr(known[0], n) is getattr(facts, n) for n in parts):
            return list(known[1][0]), known[1][1]
        key = to_json(replace(facts, hostname=None, collected_at=""), indent=None)
        hit = seen.get(key)
        if hit is None:
            target = choose_target(
                facts, matrix, stack_id=stack_id, lock=lock_arg, driver_policy=driver_policy
            )
            if role == "hdk":
                target = replace(target, no_software=checks.HDK_ONLY)
            hit = seen[key] = (tuple(checks.run(facts, target, selected)), target.choice)
            if len(by_parts) < 256:  # a fleet has few pools; distinct nodes are not kept alive
                by_parts[ident] = (facts, hit)
        return list(hit[0]), hit[1]

    return judge


def make_router(
    families: dict[str, str],
    groups: dict[str, str],
    node_groups: dict[str, tuple[str, ...]],
    *,
    default: Callable[[Facts], tuple[list[Finding], StackChoice]] | None,
    wrap: Callable[
        [Callable[[Facts], tuple[list[Finding], StackChoice]]],
        Callable[[Facts], tuple[list[Finding], StackChoice]],
    ] = lambda j: j,
    driver_policy: str = "accepted",
    matrix_paths: Sequence[str] = (),
    role: str = "full",
) -> Callable[[str, Facts], tuple[Callable[[Facts], tuple[list[Finding], StackChoice]] | None, str]]:
    """A :data:`cannenv.fleet.report.Router`: an inventory group's target first, then the family's,
    then ``default`` (--stack/--lock); a node none applies to gets None and the reason. Every target
    is resolved up front (an unknown stack id fails before any node is judged)."""
    from cannenv.fleet.targets import TargetMap

    tmap = TargetMap(families=families, groups=groups, node_groups=node_groups)
    judges: dict[str, Callable[[Facts], tuple[list[Finding], StackChoice]]] = {}
    for spec in tmap.specs():
        judges[spec.text] = wrap(
            make_judge(
                stack_id=spec.stack_id,
                lock=spec.lock,
                driver_policy=driver_policy,
                matrix_paths=matrix_paths,
                role=role,
            )
        )

    def route(
        name: str, facts: Facts
    ) -> tuple[Callable[[Facts], tuple[list[Finding], StackChoice]] | None, str]:
        spec, how = tmap.route(name, facts)
        if spec is None:
            conflict = how.startswith("its inventory groups")
            return (default, "default target") if default is not None and not conflict else (None, how)
        return judges[spec.text], how

    return route
