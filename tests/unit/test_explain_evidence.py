"""Evidence weighed over the whole corpus (issue 29 item 2): every "confirmed" has a fact that ties it.

Each excerpt of the working corpus (tests/data/errors/cases.yaml) is decided on real host trees —
the one its thread states, and a set of broken hosts (driver too old, kernels for another chip,
torch_npu of another CANN, set_env.sh not sourced, two CANNs mixed, a container without its
devices) and a sound one — through the doctor's own probes and checks. Whatever is confirmed must
carry the fact that ties it to the error (a failing doctor check, or the version condition the
vendor states for this message, on the log's own versions first), and that fact must be what
``--verbose`` and ``--json`` show; what is not confirmed carries none.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cannenv import sanitize
from cannenv.explain import host_findings, judge
from cannenv.explain.render import render_text, to_dict
from tests.helpers import hosts
from tests.unit.test_explain_corpus import CASES, DATA, TABLE, _host_tree, _scan

BROKEN: dict[str, Callable[[Path], hosts.HostTree]] = {
    "driver-too-old": hosts.driver_too_old,
    "kernels-wrong": hosts.kernels_wrong,
    "torch-npu-mismatch": hosts.torch_npu_mismatch,
    "env-not-sourced": hosts.env_not_sourced,
    "two-cann-mixed": hosts.two_cann_mixed,
    "container-no-mounts": hosts.container_no_mounts,
    "sound": hosts.a2_cann85_new,
}
TIE_FORMS = ("doctor ", "the log shows ", "this host has ")
"""What a tie is: a doctor finding (``doctor <check>: fail: …``) or a version condition decided on
the log's own version or the host's."""


def _decided(tree: hosts.HostTree) -> tuple[Any, list[Any]]:
    from cannenv.host import Host
    from cannenv.probes import collect

    facts = collect(Host(tree.root, dict(tree.env), True, 5.0))
    _, findings = host_findings(facts)
    return facts, findings


def _check_ties(ex: judge.Explanation, where: str) -> int:
    """The confirmed causes of ``ex`` each show their tie in JSON and --verbose; returns how many."""
    doc = to_dict(ex)
    text = render_text(ex, verbose=True)
    plain = render_text(ex, verbose=False)
    confirmed = 0
    for c, cj in zip(ex.causes, doc["causes"], strict=True):
        assert cj["id"] == c.id and cj["status"] == c.status
        if c.status != "confirmed":
            assert c.tie is None and cj["tie"] is None, (where, c)
            continue
        confirmed += 1
        assert c.tie and c.tie.startswith(TIE_FORMS), (where, c.id, c.tie)
        assert cj["tie"] == c.tie, where
        assert c.tie in c.basis, (where, c.id)  # the tie is one of the facts that decided it
        assert f"tied to this error by: {sanitize.line(c.tie)}" in text, (where, c.id)
        assert "tied to this error by:" not in plain  # --verbose only
    return confirmed


def test_every_confirmed_cause_of_the_corpus_shows_the_fact_that_ties_it(tmp_path: Path) -> None:
    decided = {name: _decided(make(tmp_path / name)) for name, make in BROKEN.items()}
    scans = {c["file"]: _scan((DATA / c["file"]).read_bytes()) for c in CASES}
    confirmed = 0
    confirmed_causes: set[str] = set()
    for case in CASES:
        scan = scans[case["file"]]
        runs = list(decided.items())
        if "host" in case:
            tree = _host_tree(tmp_path / "own" / case["file"], case["host"])
            runs.append(("the thread's own host", _decided(tree)))
        for name, (facts, findings) in runs:
            ex = judge.explain(TABLE, scan, facts=facts, findings=findings, host_source="root")
            n = _check_ties(ex, f"{case['file']} on {name}")
            confirmed += n
            confirmed_causes.update(c.id for c in ex.causes if c.status == "confirmed")
    # not vacuous: the broken hosts confirm causes of many kinds across the corpus
    assert confirmed >= 50, (confirmed, sorted(confirmed_causes))
    assert {"driver-too-old", "ops-package-missing-or-wrong", "torch_npu-cann-mismatch"} <= confirmed_causes
    assert {"env-not-sourced", "device-not-visible"} <= confirmed_causes


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        # the log's own version decides, with no host facts at all: the tie says "the log shows"
        (
            "pip list: numpy 2.0.1\nRuntimeError: ... SetPrecisionMode ... error code is 500001\n",
            "python-deps",
        ),
    ],
)
def test_a_condition_on_the_logs_own_version_is_a_tie_without_host_facts(text: str, cause: str) -> None:
    ex = judge.explain(TABLE, _scan(text.encode()))
    [c] = [c for c in ex.causes if c.id == cause]
    assert c.status == "confirmed" and c.tie is not None and c.tie.startswith("the log shows numpy 2.0.1")
    assert _check_ties(ex, "no host") >= 1


def test_a_deciding_check_that_only_warns_is_consistent_never_confirmed(tmp_path: Path) -> None:
    """A fact that allows the cause but does not tie it: ``consistent``, with what would decide it."""
    from cannenv.report import Finding

    warn = Finding(id="toolkit-ops", status="warn", severity="high", title="ops", detail="ops not verified")
    ex = judge.explain(
        TABLE, _scan(b"aclnnFoo failed, error code is 561103\n"), findings=[warn], host_source="facts"
    )
    [ops] = [c for c in ex.causes if c.id == "ops-package-missing-or-wrong"]
    assert ops.status == "consistent" and ops.tie is None and ops.decide
    assert _check_ties(ex, "warn only") == 0


def test_a_log_from_another_environment_leaves_this_hosts_failures_consistent(tmp_path: Path) -> None:
    """The log prints torch_npu 2.1.0.post4, this host has 2.7.1: the host's wrong kernels package
    allows 561103 but does not tie it to this error (the log may come from another environment); the
    same log without the version is confirmed by the same host."""
    facts, findings = _decided(hosts.kernels_wrong(tmp_path / "h"))
    error = b"RuntimeError: call aclnnInplaceZero failed, error code is 561103\n"
    other = judge.explain(
        TABLE, _scan(b"torch_npu 2.1.0.post4\n" + error), facts=facts, findings=findings, host_source="root"
    )
    here = judge.explain(TABLE, _scan(error), facts=facts, findings=findings, host_source="root")
    [ops_other] = [c for c in other.causes if c.id == "ops-package-missing-or-wrong"]
    [ops_here] = [c for c in here.causes if c.id == "ops-package-missing-or-wrong"]
    assert (
        ops_here.status == "confirmed"
        and ops_here.tie
        and ops_here.tie.startswith("doctor toolkit-ops: fail")
    )
    assert ops_other.status == "consistent" and ops_other.tie is None
    assert ops_other.contradiction and "the log shows torch-npu 2.1.0.post4" in ops_other.contradiction
    assert ops_other.decide[0].startswith("the facts of the environment the log comes from")
    assert other.exit_code == 0 and here.exit_code == 1
    assert "contradiction: the log shows torch-npu 2.1.0.post4" in render_text(other)
