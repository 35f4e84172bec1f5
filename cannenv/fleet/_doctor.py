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

    from dataclasses import replace

    from cannenv.values import to_json

    # Fleets are homogeneous: nodes whose facts are the same but for their name and collection time
    # are judged once (findings are frozen values, shared). 10,000 nodes in the benchmark: ~8x.
    seen: dict[str, tuple[tuple[Finding, ...], StackChoice]] = {}

    def judge(facts: Facts) -> tuple[list[Finding], StackChoice]:
        key = to_json(replace(facts, hostname=None, collected_at=""), indent=None)
        hit = seen.get(key)
        if hit is None:
            target = choose_target(facts, matrix, stack_id=stack_id, lock=lock_arg)
            hit = seen[key] = (tuple(checks.run(facts, target, selected)), target.choice)
        return list(hit[0]), hit[1]

    return judge


def parse_targets(items: tuple[str, ...]) -> dict[str, str]:
    """``--target a2=ID,310p=ID`` (repeatable): family -> stack id or lock file."""
    from cannenv.errors import InputError
    from cannenv.soc import normalize_family

    out: dict[str, str] = {}
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            fam, sep, target = part.partition("=")
            if not sep or not fam.strip() or not target.strip():
                raise InputError(
                    f"--target {part!r}: expected FAMILY=STACK_ID or FAMILY=LOCK_FILE",
                    hint="e.g. --target a2=a2-cann8.2.rc1-torch2.6.0-py3.11,310p=cannenv-310p.lock.json",
                )
            out[normalize_family(fam)] = target.strip()
    return out


def load_target_file(path: str) -> tuple[dict[str, str], dict[str, str]]:
    """A targets file: ``families: {a2: ID}`` and ``groups: {inventory-group: ID or lock file}``."""
    import yaml

    from cannenv import records
    from cannenv.errors import InputError, NotFoundError
    from cannenv.soc import normalize_family

    text = records.read_text(path, what="targets file", missing=NotFoundError)
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not YAML: {exc}") from None
    if not isinstance(doc, dict) or set(doc) - {"families", "groups"}:
        raise InputError(
            f"{path}: expected a mapping with 'families' and/or 'groups'",
            hint="families: {a2: STACK_ID, 310p: LOCK_FILE}\ngroups: {inference-310p: STACK_ID}",
        )
    sections: list[dict[str, str]] = []
    for key in ("families", "groups"):
        sec = doc.get(key) or {}
        if not isinstance(sec, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in sec.items()
        ):
            raise InputError(f"{path}: field {key!r}: expected a mapping of names to stack ids or lock files")
        sections.append(dict(sec))
    return {normalize_family(k): v for k, v in sections[0].items()}, sections[1]


def inventory_groups(inventory: str) -> dict[str, tuple[str, ...]]:
    """host -> its inventory groups (Ansible's own inventory parser; ``all``/``ungrouped`` left out)."""
    from cannenv.errors import MissingToolError

    try:
        from ansible.inventory.manager import InventoryManager
        from ansible.parsing.dataloader import DataLoader
    except ImportError:
        raise MissingToolError(
            "--inventory needs ansible-core to read the inventory", hint="pip install 'cannenv[fleet]'"
        ) from None
    manager = InventoryManager(loader=DataLoader(), sources=[inventory])
    out: dict[str, tuple[str, ...]] = {}
    for host in manager.get_hosts():
        names = sorted(g.name for g in host.get_groups() if g.name not in ("all", "ungrouped"))
        out[host.name] = tuple(names)
    return out


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
) -> Callable[[str, Facts], tuple[Callable[[Facts], tuple[list[Finding], StackChoice]] | None, str]]:
    """A :data:`cannenv.fleet.report.Router`: an inventory group's target first, then the family's,
    then ``default`` (--stack/--lock); a node none applies to gets None and the reason. Every target
    is resolved up front (an unknown stack id fails before any node is judged)."""

    judges: dict[str, Callable[[Facts], tuple[list[Finding], StackChoice]]] = {}
    for target in {*families.values(), *groups.values()}:
        is_lock = Path(target).is_file() or target.endswith((".json", ".yaml", ".yml"))
        judges[target] = wrap(make_judge(lock=target) if is_lock else make_judge(stack_id=target))

    def route(
        name: str, facts: Facts
    ) -> tuple[Callable[[Facts], tuple[list[Finding], StackChoice]] | None, str]:
        mapped = {g: groups[g] for g in node_groups.get(name, ()) if g in groups}
        if len(set(mapped.values())) > 1:
            named = ", ".join(f"{g} -> {t}" for g, t in sorted(mapped.items()))
            return None, f"its inventory groups name different targets ({named})"
        if mapped:
            group, target = sorted(mapped.items())[0]
            return judges[target], f"group {group}"
        family = node_family(facts)
        if family is not None and family in families:
            return judges[families[family]], f"family {family}"
        if default is not None:
            return default, "default target"
        given = ", ".join(sorted(families)) or "none"
        if family is None:
            return None, f"its family is unknown (no NPU facts, no ops package); targets given for: {given}"
        return None, f"no target for family {family} (targets given for: {given})"

    return route


def node_family(facts: Facts) -> str | None:
    """The node's product family: from its devices, else from the chip of its ops/kernels package."""
    if facts.devices.family:
        return facts.devices.family
    from cannenv.errors import CannenvError
    from cannenv.soc import normalize_family

    for install in facts.cann.installs:
        for ops in install.ops:
            for chip in ops.chips:
                try:
                    return normalize_family(chip)
                except CannenvError:
                    continue
    return None
