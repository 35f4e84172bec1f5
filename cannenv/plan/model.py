"""The install plan as data: ordered steps, each with its installer, digest, command and check.

A :class:`Plan` is what ``cannenv plan --json`` prints, what ``doctor --plan`` shows, what
``cannenv provision`` hands to the ``cannenv_step`` Ansible role one step at a time, and what
``cert replay --plan`` can print for a certificate. It is a pure value: computing it touches no
host (:func:`cannenv.plan.compute.compute_plan`).
"""

from __future__ import annotations

from typing import Literal, get_args

from cannenv.values import to_json, value

PLAN_SCHEMA_VERSION = 1

Action = Literal["install", "upgrade", "downgrade", "remove", "leave", "reboot"]
"""``leave``: already right, nothing runs. ``reboot``: the host must restart before the next step."""

Component = Literal[
    "account",
    "driver",
    "firmware",
    "reboot",
    "cann",
    "ops",
    "nnal",
    "python",
    "python-packages",
    "environment",
]
"""Step components in plan order (:data:`ORDER`)."""

ORDER: tuple[Component, ...] = get_args(Component)


@value
class Installer:
    """A file the step needs on the host, as the controller must hold it in ``--artifacts``."""

    file: str
    sha256: str | None = None
    """None: the matrix pins no digest (``provision`` refuses it unless ``--allow-unpinned``)."""
    url: str | None = None
    archive: Literal["zip"] | None = None
    """``zip``: a CANN >= 8.5 / HDK >= 25.5 package, a ``.zip`` that holds the ``.run``."""
    run_file: str | None = None
    """The ``.run`` inside the archive."""


@value
class Verify:
    """After the step, this fact must read this value (``cannenv facts`` path, expected)."""

    fact: str
    expect: str


@value
class Step:
    index: int
    """1-based position among the steps that do something; 0 for ``leave`` steps."""
    component: Component
    action: Action
    summary: str
    """One line: what and why."""
    version_from: str | None = None
    version_to: str | None = None
    package: str | None = None
    installers: tuple[Installer, ...] = ()
    commands: tuple[str, ...] = ()
    """Shell lines run in order by bash with ``set -eu`` as root; ``$CANNENV_ARTIFACTS`` is the
    folder holding the installers on the host. Empty for ``leave`` and manual steps."""
    preconditions: tuple[str, ...] = ()
    preflight: tuple[str, ...] = ()
    """Shell lines that check this step's preconditions without changing anything: ``provision`` runs
    every step's preflight on every host before any step runs anywhere."""
    reboot: bool = False
    """The host must restart after this step before the next one runs."""
    manual: bool = False
    """cannenv cannot do this step (e.g. provide another Python): a person must."""
    verify: tuple[Verify, ...] = ()
    sources: tuple[str, ...] = ()

    @property
    def acts(self) -> bool:
        return self.action != "leave"


@value
class Plan:
    schema_version: int = PLAN_SCHEMA_VERSION
    host: str | None = None
    stack: str | None = None
    """Target stack id."""
    target_reason: str = ""
    family: str | None = None
    arch: str | None = None
    cann_policy: Literal["side-by-side", "replace"] = "side-by-side"
    offline: bool = False
    """Python wheels come from ``$CANNENV_ARTIFACTS`` (``--no-index``) instead of the package index."""
    steps: tuple[Step, ...] = ()
    """Every component in order, ``leave`` steps included (they say why nothing is needed)."""
    problems: tuple[str, ...] = ()
    """What the plan could not settle (no installer name known, no arch, ...)."""
    notes: tuple[str, ...] = ()
    """What the plan deliberately left out, and why (e.g. the driver inside a container)."""
    refused: bool = False
    """Nothing is planned for this node, ``problems`` says why: the target does not fit its hardware
    (another family or architecture), or a step would act on a fact a probe could not read
    (``unknown``)."""
    unknown: tuple[str, ...] = ()
    """Facts the plan needed that a probe could not read (``<component>: could not read <what>: the
    <probe> probe: <kind>: <message>``): the plan is ``refused`` until the facts are collected again —
    an unknown fact is never planned as absent (:func:`cannenv.checks.policy.unknown`)."""
    driver_policy: Literal["accepted", "pinned"] = "accepted"
    """What satisfies the stack's driver pin (:mod:`cannenv.checks.policy`)."""
    facts_digest: str | None = None
    """sha256 of the facts the plan was computed from (what the plan reads; collection time, host name
    and probe notes left out): ``provision --plan`` refuses a host whose facts moved since."""
    python: str | None = None
    """The interpreter the Python packages step installs into (``--python``; default: the facts')."""
    venv: str | None = None
    """``--venv DIR``: the Python packages go into this virtual environment (created when missing)."""

    @property
    def actions(self) -> tuple[Step, ...]:
        """The steps that do something, in order."""
        return tuple(s for s in self.steps if s.acts)

    @property
    def empty(self) -> bool:
        return not self.actions and not self.problems

    @property
    def reboot_required(self) -> bool:
        return any(s.reboot or s.action == "reboot" for s in self.actions)

    def to_json(self, *, indent: int | None = 2) -> str:
        return to_json(self, indent=indent)

    @classmethod
    def from_json(cls, text: str, *, source: str = "<plan>") -> Plan:
        from cannenv import records

        raw = records.parse_json(text, source=source, hint="produce plans with `cannenv plan --json`")
        records.check_schema_version(
            raw, source=source, supported=PLAN_SCHEMA_VERSION, what="plan", hint="compute the plan again"
        )
        return records.validate(cls, raw, source=source, hint="produce plans with `cannenv plan --json`")
