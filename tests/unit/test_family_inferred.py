"""No silent family guess (issue 31 point 7): a family no hardware evidence tells (only the ops
package's chip) is named as an inference by the doctor, fleet report and plan, and no driver or
firmware step is planned from it until the target is named."""

from __future__ import annotations

import json
from pathlib import Path

from cannenv import checks
from cannenv.checks.policy import family_inferred
from cannenv.checks.stack import choose_target
from cannenv.host import Host
from cannenv.matrix import load
from cannenv.plan import compute_plan
from cannenv.probes import collect
from tests.helpers import hosts
from tests.helpers.cli import cannenv


def _node(root: Path, *, smi: str | None) -> hosts.HostTree:
    """A node with no driver yet, CANN 8.3.RC2 with 910B kernels; npu-smi only when ``smi``."""
    t = hosts.HostTree(root).os_release()
    if smi:
        t.npu_smi(smi).dev_nodes(2)
    inst = t.toolkit("8.3.RC2", kernels="910b")
    t.python_stack("2.7.1", "2.7.1").sourced(inst)
    return t


def test_a_family_from_the_ops_package_is_named_and_plans_no_driver(tmp_path: Path) -> None:
    tree = _node(tmp_path / "t", smi=None)
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert facts.devices.family is None
    target = choose_target(facts, load())
    assert target.family == "a2"
    guess = family_inferred(facts, target)
    assert guess and "inferred from its ops/kernels package (built for 910b)" in guess

    fs = checks.run(facts, target)
    [named] = [f for f in fs if f.id == "stack-match" and f.subject == "family"]
    assert named.status == "warn" and named.detail == guess and "--target a2=ID" in (named.remedy or "")

    plan = compute_plan(facts, target)
    assert guess in plan.notes
    assert not [s for s in plan.actions if s.component in ("driver", "firmware", "account")]
    [driver] = [s for s in plan.steps if s.component == "driver"]
    assert driver.action == "leave" and "the family is a guess" in driver.summary

    # named: the same node gets its driver planned
    named_target = choose_target(facts, load(), stack_id=target.stack.id if target.stack else None)
    assert family_inferred(facts, named_target) is None
    acts = {s.component for s in compute_plan(facts, named_target).actions}
    assert "driver" in acts


def test_fleet_report_names_the_inference(tmp_path: Path) -> None:
    tree = _node(tmp_path / "t", smi=None)
    d = tmp_path / "facts"
    d.mkdir()
    (d / "n1.json").write_text(collect(Host(tree.root, dict(tree.env), True, 5.0)).to_json())
    r = cannenv("fleet", "report", str(d), "--json")
    doc = json.loads(r.stdout)
    assert any(g["check"] == "stack-match" and "is inferred from" in g["observed"] for g in doc["groups"])


def test_hardware_evidence_is_no_guess(tmp_path: Path) -> None:
    tree = _node(tmp_path / "t", smi="a2")
    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    assert facts.devices.family == "a2"
    target = choose_target(facts, load())
    assert family_inferred(facts, target) is None
    assert not [f for f in checks.run(facts, target) if f.subject == "family"]
    assert "driver" in {s.component for s in compute_plan(facts, target).actions}
