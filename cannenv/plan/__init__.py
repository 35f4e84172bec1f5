"""Install plans: what a host needs to become a stack, as ordered, checksum-pinned steps.

Public API (used by ``cannenv plan``, ``doctor --plan``, ``cannenv provision`` and
``cert replay --plan``)::

    from cannenv.plan import compute_plan, render_text, render_shell
    target = choose_target(facts, matrix, stack_id=...)    # cannenv.checks.stack, as the doctor does
    plan = compute_plan(facts, target)                     # pure; Plan.steps in vendor order
    plan.empty, plan.actions, plan.reboot_required, plan.to_json()

See docs/provision.md.
"""

from __future__ import annotations

from cannenv.plan.compute import compute_plan, install_home, set_env_path
from cannenv.plan.model import ORDER, Installer, Plan, Step, Verify
from cannenv.plan.render import render_shell, render_text

__all__ = [
    "ORDER",
    "Installer",
    "Plan",
    "Step",
    "Verify",
    "compute_plan",
    "install_home",
    "render_shell",
    "render_text",
    "set_env_path",
]
