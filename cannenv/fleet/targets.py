"""One target per node: ``--target a2=ID,310p=LOCK``, ``--targets FILE`` (families and inventory
groups), ``--stack``/``--lock`` as the default. The one parser and router that ``plan``,
``provision``, ``fleet diff``, ``fleet report`` and the DaemonSet's agent call.

A node's inventory group target wins over its family's; two of its groups naming different targets,
or a family nobody named, leave it untargeted with the reason (never another chip's target).
Whether the chosen stack then *fits* the node's hardware is :func:`cannenv.checks.policy.hardware_mismatch`.

For the DaemonSet (one target per manifest, ``--name`` per target): render one manifest per family
with that family's node selector, each from the same targets file entry (``TargetMap.for_family``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cannenv.facts import Facts


@dataclass(frozen=True)
class TargetSpec:
    """A target as given: a stack id or a lock file (exactly one)."""

    stack_id: str | None = None
    lock: str | None = None

    @property
    def text(self) -> str:
        return self.lock or self.stack_id or ""


def spec_of(text: str) -> TargetSpec:
    """``ID`` or ``LOCK_FILE``: an existing file or a ``.json``/``.yaml``/``.yml`` name is a lock."""
    is_lock = Path(text).is_file() or text.endswith((".json", ".yaml", ".yml"))
    return TargetSpec(lock=text) if is_lock else TargetSpec(stack_id=text)


@dataclass(frozen=True)
class TargetMap:
    """Families and inventory groups -> target; ``default``: ``--stack``/``--lock``."""

    families: dict[str, str] = field(default_factory=dict)
    groups: dict[str, str] = field(default_factory=dict)
    node_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    default: TargetSpec | None = None

    @property
    def per_node(self) -> bool:
        return bool(self.families or self.groups)

    def specs(self) -> list[TargetSpec]:
        """Every distinct target named (to resolve each one up front)."""
        out = {t: spec_of(t) for t in (*self.families.values(), *self.groups.values())}
        if self.default is not None:
            out.setdefault(self.default.text, self.default)
        return list(out.values())

    def for_family(self, family: str) -> TargetSpec | None:
        from cannenv.soc import normalize_family

        text = self.families.get(normalize_family(family))
        return spec_of(text) if text else self.default

    def route(self, name: str, facts: Facts) -> tuple[TargetSpec | None, str]:
        """(this node's target, how it was chosen) or (None, why none applies)."""
        mapped = {g: self.groups[g] for g in self.node_groups.get(name, ()) if g in self.groups}
        if len(set(mapped.values())) > 1:
            named = ", ".join(f"{g} -> {t}" for g, t in sorted(mapped.items()))
            return None, f"its inventory groups name different targets ({named})"
        if mapped:
            group, target = sorted(mapped.items())[0]
            return spec_of(target), f"group {group}"
        family = node_family(facts)
        if family is not None and family in self.families:
            return spec_of(self.families[family]), f"family {family}"
        if self.default is not None:
            return self.default, "default target"
        given = ", ".join(sorted(self.families)) or "none"
        if family is None:
            return None, f"its family is unknown (no NPU facts, no ops package); targets given for: {given}"
        return None, f"no target for family {family} (targets given for: {given})"


def refuse_misfits(tmap: TargetMap, matrix_paths: tuple[str, ...] = ()) -> None:
    """Exit 2 before anything runs when ``--target FAMILY=ID`` names a stack of another family
    (``a3=<an A2 stack>``): such a target could only ever be refused node by node."""
    if not tmap.families:
        return
    from cannenv import matrix as matrix_mod
    from cannenv.errors import InputError

    m = matrix_mod.load(list(matrix_paths) or None)
    for family, text in sorted(tmap.families.items()):
        spec = spec_of(text)
        if spec.stack_id is None:
            continue  # a lock names its stack inside; judged per node (hardware_mismatch)
        stack = m.stack(spec.stack_id)
        if stack.family != family:
            raise InputError(
                f"--target {family}={spec.stack_id}: that stack is for {stack.family}, not {family}",
                hint=f"name a stack for {family}: `cannenv matrix list --family {family}`",
            )


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


def target_map(
    *,
    stack_id: str | None = None,
    lock: str | None = None,
    target_items: tuple[str, ...] = (),
    targets_file: str | None = None,
    inventory: str | None = None,
    node_groups: dict[str, tuple[str, ...]] | None = None,
) -> TargetMap:
    """The command line's targets as one map (``--stack``/``--lock`` the default)."""
    from cannenv.errors import InputError

    if stack_id and lock:
        raise InputError("give either --stack or --lock, not both")
    families, groups = load_target_file(targets_file) if targets_file else ({}, {})
    families.update(parse_targets(target_items))
    if groups and not inventory and node_groups is None:
        raise InputError("the targets file maps inventory groups: give --inventory INVENTORY too")
    if node_groups is None:
        node_groups = inventory_groups(inventory) if inventory and groups else {}
    default = TargetSpec(stack_id=stack_id) if stack_id else TargetSpec(lock=lock) if lock else None
    return TargetMap(families=families, groups=groups, node_groups=node_groups, default=default)


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
    """host -> its inventory groups, parents included (``all``/``ungrouped`` left out), as Ansible's
    own parser reads them: `ansible-inventory --list`, in a subprocess. Importing Ansible here instead
    would replace ``sys.intern`` for the whole process (ansible-core patches it), after which a later
    ``import torch._dynamo`` in the same process fails."""
    import json
    import os

    from cannenv.errors import InputError
    from cannenv.fleet.ansible_cli import ansible_command
    from cannenv.host import run

    exe = ansible_command("ansible-inventory")  # --inventory needs ansible-core: exit 4 without it
    # Group names such as `train-a` are valid for us; without this Ansible warns that it "found
    # invalid characters" in them.
    env = {**os.environ}
    env.setdefault("ANSIBLE_TRANSFORM_INVALID_GROUP_CHARS", "ignore")
    result = run([exe, "-i", inventory, "--list"], env=env, timeout=120)
    try:
        doc = json.loads(result.stdout) if result.ok else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise InputError(f"--inventory {inventory}: Ansible could not read it ({result.describe()})")
    parents: dict[str, set[str]] = {}
    listed: dict[str, set[str]] = {}
    for name, group in doc.items():
        if name == "_meta" or not isinstance(group, dict):
            continue
        for child in group.get("children", ()):
            parents.setdefault(str(child), set()).add(name)
        for host in group.get("hosts", ()):
            listed.setdefault(str(host), set()).add(name)
    out: dict[str, tuple[str, ...]] = {}
    for host, groups in listed.items():
        seen: set[str] = set()
        todo = list(groups)
        while todo:
            g = todo.pop()
            if g not in seen:
                seen.add(g)
                todo.extend(parents.get(g, ()))
        out[host] = tuple(sorted(seen - {"all", "ungrouped"}))
    return out
