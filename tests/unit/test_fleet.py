"""Fleet without Docker: bundle, event classification, grouping, JUnit, HTML, diff, k8s manifests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import DRIVER_24_1_RC1, HostSpec, build_tree

from cannenv import values
from cannenv.facts import Facts
from cannenv.fleet.collect import classify_events, hosts_seen
from cannenv.fleet.collection import Collection, HostResult, load_collection
from cannenv.fleet.diff import compare_versions, diff_collections
from cannenv.fleet.diff import render_text as render_diff_text
from cannenv.fleet.html import render_html
from cannenv.fleet.k8s import label_patch, label_value, node_labels
from cannenv.fleet.report import (
    FleetReport,
    NodeResult,
    build_report,
    group_findings,
    judge_with_checks,
    node_status,
    render_junit,
)
from cannenv.host import Host
from cannenv.probes import collect as probe
from cannenv.report import Finding, StackChoice

CHECKS = ("driver-installed", "driver-cann", "firmware-driver", "toolkit-ops", "env-sourced")


def f(cid: str, status: str, detail: str = "", remedy: str | None = None) -> Finding:
    return Finding(id=cid, status=status, severity="high", title=cid, detail=detail, remedy=remedy)  # type: ignore[arg-type]


# ------------------------------------------------------------------ events (real shapes from ansible-runner)


def _ev(kind: str, host: str, res: dict[str, Any], task: str = "t", **extra: Any) -> dict[str, Any]:
    return {"event": kind, "event_data": {"host": host, "task": task, "res": res, **extra}}


def test_classify_events_maps_role_messages_and_unreachable() -> None:
    events = [
        _ev("runner_on_ok", "a", {"stdout": "CANNENV_PYTHON=/usr/bin/python3"}),
        _ev(
            "runner_on_unreachable", "b", {"msg": "Failed to connect to the host via ssh: Connection refused"}
        ),
        _ev("runner_on_failed", "c", {"msg": "cannenv-fleet: no-python: no Python >= 3.10 on the host"}),
        _ev(
            "runner_on_failed",
            "d",
            {"msg": "cannenv-fleet: timeout: `cannenv facts` gave no answer within 5 s"},
        ),
        _ev(
            "runner_on_failed",
            "e",
            {"msg": "The command action failed to execute in the expected time frame (5)"},
        ),
        _ev("runner_on_failed", "f", {"msg": "boom"}, ignore_errors=True),
        _ev("runner_on_failed", "g", {"msg": "", "stderr": "weird\nfailure"}, task="Push"),
        _ev("runner_on_failed", "c", {"msg": "cannenv-fleet: facts-failed: later failure is ignored"}),
    ]
    out = classify_events(events)
    assert "a" not in out and "f" not in out
    assert out["b"].status == "unreachable" and "Connection refused" in out["b"].reason
    assert out["c"].status == "no-python" and out["c"].reason == "no Python >= 3.10 on the host"
    assert out["d"].status == "timeout"
    assert out["e"].status == "timeout"
    assert out["g"].status == "failed" and "'Push'" in out["g"].reason and "weird failure" in out["g"].reason
    assert hosts_seen(events) == ["a", "b", "c", "d", "e", "f", "g"]


# ------------------------------------------------------------------ grouping and statuses


def test_node_status() -> None:
    assert node_status([f("x", "pass"), f("y", "skip")]) == "compliant"
    assert node_status([f("x", "pass"), f("y", "warn")]) == "drifting"
    assert node_status([f("x", "warn"), f("y", "error")]) == "failing"
    assert node_status([f("x", "fail")]) == "failing"


def test_group_findings_folds_identical_findings_across_nodes() -> None:
    old = f("driver-cann", "fail", "driver 24.1.rc2 is outside >=25.0.rc1", "install Ascend HDK ≥ 25.0.RC1")
    nodes = [
        NodeResult(name=f"n{i}", status="failing", findings=(old, f("env-sourced", "pass")))
        for i in range(37)
    ] + [
        NodeResult(name="ok", status="compliant", findings=(f("driver-cann", "pass"),)),
        NodeResult(name="gone", status="unreachable", collect_status="unreachable", reason="refused"),
        NodeResult(name="gone2", status="unreachable", collect_status="unreachable", reason="refused"),
    ]
    groups = group_findings(nodes)
    assert len(groups) == 2
    assert groups[0].check == "driver-cann" and len(groups[0].nodes) == 37 and groups[0].remedy
    assert groups[1].check == "collect" and groups[1].nodes == ("gone", "gone2")
    assert "ansible" in (groups[1].remedy or "")


def _collection(tmp_path: Path, specs: list[HostSpec], extra: tuple[HostResult, ...] = ()) -> Collection:
    hosts = []
    for spec in specs:
        root = build_tree(spec, tmp_path / "trees" / spec.name)
        env = {"PATH": "/usr/bin"}
        if spec.env_sourced:
            env.update(
                ASCEND_HOME_PATH="/usr/local/Ascend/ascend-toolkit/latest",
                ASCEND_TOOLKIT_HOME="/usr/local/Ascend/ascend-toolkit/latest",
                ASCEND_OPP_PATH="/usr/local/Ascend/ascend-toolkit/latest/opp",
                ASCEND_AICPU_PATH="/usr/local/Ascend/ascend-toolkit/latest",
                TOOLCHAIN_HOME="/usr/local/Ascend/ascend-toolkit/latest/toolkit",
                LD_LIBRARY_PATH="/usr/local/Ascend/driver/lib64:/usr/local/Ascend/ascend-toolkit/latest/lib64",
            )
        facts = probe(Host(root, env, allow_commands=False))
        out = tmp_path / "facts" / f"{spec.name}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(facts.to_json())
        hosts.append(HostResult(name=spec.name, status="collected", facts_file=out.name))
    coll = Collection(hosts=(*hosts, *extra), root=tmp_path / "facts")
    (tmp_path / "facts" / "collection.json").write_text(coll.to_json())
    return coll


def _judge() -> Any:
    judge = judge_with_checks()

    def only(facts: Facts) -> tuple[list[Finding], StackChoice]:
        findings, choice = judge(facts)
        return [x for x in findings if x.id in CHECKS], choice

    return only


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Collection, FleetReport]:
    tmp = tmp_path_factory.mktemp("judged")
    coll = _collection(
        tmp,
        [HostSpec("good"), HostSpec("old", driver=DRIVER_24_1_RC1), HostSpec("bare", env_sourced=False)],
        (HostResult(name="down", status="unreachable", reason="ssh: Connection refused"),),
    )
    return coll, build_report(load_collection(coll.root), _judge(), source=str(coll.root))


def test_report_on_real_trees(judged: tuple[Collection, FleetReport]) -> None:
    _, report = judged
    status = {n.name: n.status for n in report.nodes}
    # driver 24.1.rc1 with CANN 8.2.RC1: no vendor statement covers it (the release's HDKs are 25.0.RC1
    # and 25.2.0, and no compatibility table exists for 8.2.RC1) -> a warning, so "old" drifts
    # (it failed before the matrix judged by the vendor's own statements)
    assert status == {"good": "compliant", "old": "drifting", "bare": "drifting", "down": "unreachable"}
    assert report.summary == {
        "nodes": 4,
        "compliant": 1,
        "drifting": 2,
        "failing": 0,
        "unreachable": 1,
        "untargeted": 0,
    }
    assert report.stack.id  # all three judged against the same best match
    warns = [g for g in report.groups if g.status == "warn" and g.check == "driver-cann"]
    assert warns and warns[0].nodes == ("old",)
    assert json.loads(report.to_json())["schema_version"] == 2


def test_junit_and_html(judged: tuple[Collection, FleetReport]) -> None:
    _, report = judged
    root = ET.fromstring(render_junit(report))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"good", "old", "bare", "down"}
    assert suites["old"].get("failures") == "0" and suites["down"].get("errors") == "1"
    assert render_junit(report, strict=True).count("<failure") > render_junit(report).count("<failure")
    page = render_html(report)
    for name in ("good", "old", "bare", "down"):
        assert f'data-node="{name}"' in page
    for check in report.checks:
        assert f'<th class="check" data-check="{check}">' in page
    # self-contained: nothing fetched (a source URL in a finding's text is fine, it is not a link)
    assert not re.search(r"<(script|link|img)\b|(src|href)=[\"']?https?://", page)


def test_html_escapes_values() -> None:
    node = NodeResult(
        name="<b>x</b>", status="failing", findings=(f("driver-cann", "fail", "<script>alert(1)</script>"),)
    )
    report = FleetReport(
        nodes=(node,),
        checks=("driver-cann",),
        groups=group_findings([node]),
        summary={"nodes": 1, "compliant": 0, "drifting": 0, "failing": 1, "unreachable": 0},
    )
    page = render_html(report)
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_html_explained_groups_are_escaped_and_folded() -> None:
    """The page's explained-error section (fleet report --logs; issue 29 item 6) goes through the
    same autoescaped template: a node name from a facts file cannot inject markup."""
    node = NodeResult(name="<b>x</b>", status="failing", findings=(f("driver-cann", "fail", "old"),))
    report = FleetReport(
        nodes=(node,),
        checks=("driver-cann",),
        groups=group_findings([node]),
        summary={"nodes": 1, "compliant": 0, "drifting": 0, "failing": 1, "unreachable": 0},
    )
    assert "Explained errors" not in render_html(report)  # no --logs: no section
    assert "no node has a log in the folder" in render_html(report, [])
    names = ["<b>x</b>", *(f"n{i:02d}" for i in range(13))]
    groups = [
        {"signature": "ops-561103", "cause": "<i>c</i>", "status": "confirmed", "nodes": names},
        {"signature": "oom", "cause": "oom", "status": "undecided", "nodes": ["n99"]},
    ]
    page = render_html(report, groups)
    rows = re.findall(r'<tr class="explained">(.*?)</tr>', page, re.S)
    assert len(rows) == 2
    assert "<b>x</b>" not in page and "<i>c</i>" not in page
    assert "&lt;b&gt;x&lt;/b&gt;" in rows[0] and "&lt;i&gt;c&lt;/i&gt;" in rows[0]
    assert '<td class="fail">confirmed</td>' in rows[0] and '<td class="warn">undecided</td>' in rows[1]
    assert "<b>14</b>" in rows[0] and "<summary>and 2 more</summary>" in rows[0]  # past 12 nodes: folded


def test_collection_without_manifest_and_errors(tmp_path: Path) -> None:
    from cannenv.errors import InputError, NotFoundError

    with pytest.raises(NotFoundError):
        load_collection(tmp_path / "nope")
    with pytest.raises(NotFoundError):
        load_collection(tmp_path)
    (tmp_path / "h1.json").write_text(Facts().to_json())
    (tmp_path / "h2.json").write_text("{not json")
    coll = load_collection(tmp_path)
    assert [h.name for h in coll.hosts] == ["h1", "h2"]
    report = build_report(coll, lambda facts: ([f("x", "pass")], StackChoice()))
    assert {n.name: n.status for n in report.nodes} == {"h1": "compliant", "h2": "unreachable"}
    assert report.nodes[1].collect_status == "invalid-facts" and "h2.json" in report.nodes[1].reason
    (tmp_path / "collection.json").write_text('{"schema_version": 99}')
    with pytest.raises(InputError, match="newer"):
        load_collection(tmp_path)


def test_report_refuses_facts_the_doctor_refuses(tmp_path: Path) -> None:
    """A facts file of a newer schema, or without one, is not judged: `doctor --facts` refuses it too."""
    doc = json.loads(Facts().to_json())
    (tmp_path / "newer.json").write_text(json.dumps({**doc, "schema_version": 2}))
    (tmp_path / "unversioned.json").write_text(
        json.dumps({k: v for k, v in doc.items() if k != "schema_version"})
    )
    (tmp_path / "ok.json").write_text(json.dumps(doc))
    report = build_report(load_collection(tmp_path), lambda facts: ([f("x", "pass")], StackChoice()))
    nodes = {n.name: n for n in report.nodes}
    assert nodes["ok"].status == "compliant"
    assert nodes["newer"].collect_status == "invalid-facts" and "newer" in nodes["newer"].reason
    assert nodes["unversioned"].collect_status == "invalid-facts"
    assert "schema_version None" in nodes["unversioned"].reason


# ------------------------------------------------------------------ diff


def test_compare_versions_uses_vendor_grammars() -> None:
    assert compare_versions("driver", "24.1.rc2", "25.0.rc1.1").kind == "upgraded"  # type: ignore[union-attr]
    assert compare_versions("cann", "8.2.RC1", "8.1.RC1").kind == "downgraded"  # type: ignore[union-attr]
    assert compare_versions("cann", "8.3.RC1", "8.5.0").kind == "upgraded"  # type: ignore[union-attr]
    assert compare_versions("torch_npu", "2.1.0.post17", "2.1.0.post9").kind == "downgraded"  # type: ignore[union-attr]
    assert compare_versions("driver", None, "25.0.rc1").kind == "installed"  # type: ignore[union-attr]
    assert compare_versions("nnal", "8.2.RC1", None).kind == "removed"  # type: ignore[union-attr]
    assert compare_versions("driver", "garbage", "25.0.rc1").kind == "changed"  # type: ignore[union-attr]
    assert compare_versions("cann", "8.2.RC1", "8.2.RC1") is None


def test_diff_collections(tmp_path: Path) -> None:
    old = _collection(
        tmp_path / "a", [HostSpec("n1", driver=DRIVER_24_1_RC1), HostSpec("n2"), HostSpec("n3")]
    )
    new = _collection(tmp_path / "b", [HostSpec("n1"), HostSpec("n2", env_sourced=False), HostSpec("n4")])
    judge = _judge()
    d = diff_collections(old, new, old_report=build_report(old, judge), new_report=build_report(new, judge))
    nodes = {n.name: n for n in d.nodes}
    assert nodes["n1"].versions[0].kind == "upgraded" and nodes["n1"].old_status == "drifting"
    assert nodes["n1"].new_status == "compliant"
    assert "driver-cann" in {x.check for x in nodes["n1"].fixed_findings}
    assert [x.check for x in nodes["n2"].new_findings] == ["env-sourced"]
    assert nodes["n3"].change == "removed" and nodes["n4"].change == "added"
    assert d.summary["upgraded"] == 1 and d.summary["new_drift"] == 1


def test_a_driver_that_improved_but_still_fails_is_changed_not_new_and_fixed(tmp_path: Path) -> None:
    """Issue 15: 24.1.rc1 -> 24.1.rc2.2, both outside what the vendor states for CANN 8.2.RC1 (25.0.RC1+):
    the driver-cann finding stays (a warning today) with another observed value."""
    from helpers.hosts import DRIVER_24_1_RC2_2

    old = _collection(tmp_path / "a", [HostSpec("n1", driver=DRIVER_24_1_RC1)])
    new = _collection(tmp_path / "b", [HostSpec("n1", driver=DRIVER_24_1_RC2_2)])
    judge = _judge()
    d = diff_collections(old, new, old_report=build_report(old, judge), new_report=build_report(new, judge))
    (node,) = d.nodes
    assert node.versions[0].kind == "upgraded" and node.old_status == node.new_status
    (update,) = [u for u in node.changed_findings if u.check == "driver-cann"]
    assert update.old_status == update.new_status != "pass"
    assert "24.1.rc1" in update.old_detail and "24.1.rc2.2" in update.new_detail
    assert "driver-cann" not in {x.check for x in (*node.new_findings, *node.fixed_findings)}
    assert d.summary["new_drift"] == 0 and d.summary["fixed"] == 0 and d.summary["changed_findings"] == 1
    assert f"  changed {update.new_status} driver-cann: " in render_diff_text(d)


# ------------------------------------------------------------------ Kubernetes


def test_node_labels() -> None:
    report = {
        "stack": {"id": "a2-cann8.2.rc1-torch2.6.0-py3.11"},
        "findings": [values.dump(f("driver-cann", "warn"))],
    }
    labels = node_labels(report, "sha256:" + "ab" * 32)
    assert labels == {
        "cannenv.io/stack": "a2-cann8.2.rc1-torch2.6.0-py3.11",
        "cannenv.io/status": "drifting",
        "cannenv.io/certificate": "sha256-" + ("ab" * 20),
        "cannenv.io/cann": "none",
        "cannenv.io/nnal": "none",
        "cannenv.io/torch-npu": "none",
        "cannenv.io/ops-chips": "none",
        # driver-loaded did not run: nothing compared the loaded driver, so unknown (never "false")
        "cannenv.io/reboot-pending": "unknown",
    }
    for v in labels.values():
        assert re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?", v)
    for status, word in (("pass", "false"), ("fail", "true"), ("skip", "unknown"), ("error", "unknown")):
        said = node_labels({"findings": [values.dump(f("driver-loaded", status))]})
        assert said["cannenv.io/reboot-pending"] == word, status
    assert node_labels({"findings": []})["cannenv.io/certificate"] == "none"
    assert label_value("a+b/" + "x" * 80).startswith("a-b-") and len(label_value("x" * 80)) == 63
    assert label_patch(labels)["metadata"]["annotations"]["cannenv.io/certificate-digest"] == "none"


def test_k8s_label_against_a_local_api_server(tmp_path: Path) -> None:
    """The PATCH really goes over HTTP (a local server standing in for the API server)."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: dict[str, Any] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_PATCH(self) -> None:
            seen["path"] = self.path
            seen["auth"] = self.headers["Authorization"]
            seen["type"] = self.headers["Content-Type"]
            seen["body"] = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        report = tmp_path / "doctor.json"
        report.write_text(json.dumps({"stack": {"id": "s1"}, "findings": [values.dump(f("x", "fail"))]}))
        token = tmp_path / "token"
        token.write_text("tok\n")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "cannenv",
                "fleet",
                "k8s-label",
                "--report",
                str(report),
                "--node",
                "node-1",
                "--api",
                f"http://127.0.0.1:{server.server_port}",
                "--token-file",
                str(token),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    assert seen["path"] == "/api/v1/nodes/node-1" and seen["auth"] == "Bearer tok"
    assert seen["type"] == "application/strategic-merge-patch+json"
    assert seen["body"]["metadata"]["labels"]["cannenv.io/status"] == "failing"


# ------------------------------------------------------------------ bundle


def test_bundle_runs_without_site_packages(tmp_path: Path) -> None:
    """The zipapp carries all `cannenv facts` imports, and no pydantic: run it without site-packages."""
    from cannenv.fleet.zipapp import build_bundle

    bundle = build_bundle(tmp_path / "cannenv.pyz")
    assert "cannenv" in bundle.modules
    assert not {"click", "pydantic", "pydantic_core", "torch", "docker"} & set(bundle.modules)
    import zipfile

    with zipfile.ZipFile(bundle.path) as zf:
        names = zf.namelist()
    assert not [n for n in names if n.startswith(("site/pydantic/", "site/pydantic_core/"))]
    again = build_bundle(tmp_path / "again.pyz")
    assert again.sha256 == bundle.sha256  # deterministic
    root = build_tree(HostSpec("b"), tmp_path / "tree")
    env = {"PATH": "/usr/bin:/bin", "CANNENV_BUNDLE_CACHE": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(bundle.path), "facts", "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    facts = Facts.from_json(proc.stdout)
    assert facts.driver is not None and facts.driver.version == "25.0.rc1.1"


def test_bundle_refuses_a_python_older_than_it_needs(tmp_path: Path) -> None:
    """This Python, told by the bundle that it needs 3.99: the one-line refusal the collector records."""
    import platform
    import zipfile

    from cannenv.fleet.zipapp import MIN_PYTHON, build_bundle

    bundle = build_bundle(tmp_path / "cannenv.pyz")
    strict = tmp_path / "strict.pyz"
    with zipfile.ZipFile(bundle.path) as src, zipfile.ZipFile(strict, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "__main__.py":
                old = f"MIN_PYTHON = {MIN_PYTHON!r}".encode()
                assert old in data
                data = data.replace(old, b"MIN_PYTHON = (3, 99)")
            dst.writestr(item, data)
    proc = subprocess.run(
        [sys.executable, str(strict), "facts"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 3
    assert proc.stderr == (
        f"cannenv-bundle: python-mismatch: the host runs {platform.python_implementation()} "
        f"{platform.python_version()} ({sys.executable}); cannenv needs Python >= 3.99: "
        "install a newer python3 there\n"
    )
    role_msg = "cannenv-fleet: " + proc.stderr.split("cannenv-bundle: ", 1)[1]  # what the role fails with
    outcome = classify_events([_ev("runner_on_failed", "h", {"msg": role_msg})])["h"]
    assert outcome.status == "python-mismatch" and "needs Python >= 3.99" in outcome.reason


# ------------------------------------------------------------------ per-family and per-group targets


A2_STACK = "a2-cann8.2.rc1-torch2.6.0-py3.11"
P310_STACK = "310p-cann8.2.rc1-torch2.6.0-py3.11"


def _report_cli(*args: str) -> tuple[int, dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, "-m", "cannenv", "fleet", "report", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_per_family_targets_and_untargeted_nodes(tmp_path: Path) -> None:
    _collection(tmp_path, [HostSpec("a2-1"), HostSpec("p310-1", kernels_chip="310p")])
    facts = str(tmp_path / "facts")
    _, only_a2 = _report_cli(facts, "--target", f"a2={A2_STACK}")
    nodes = {n["name"]: n for n in only_a2["nodes"]}
    assert nodes["a2-1"]["stack"] == A2_STACK and nodes["a2-1"]["target"] == "family a2"
    assert nodes["p310-1"]["status"] == "untargeted" and nodes["p310-1"]["family"] == "310p"
    assert "no target for family 310p" in nodes["p310-1"]["reason"]
    # never another chip's remedies: the 310P node is in no A2 group, only in the "target" one
    (target_group,) = [g for g in only_a2["groups"] if "p310-1" in g["nodes"]]
    assert target_group["check"] == "target" and "--target 310p=" in target_group["remedy"]
    assert only_a2["summary"]["untargeted"] == 1
    # compact: per node status, counts, target, versions and group refs; no findings
    assert "findings" not in nodes["a2-1"] and nodes["a2-1"]["counts"]["fail"] >= 1
    assert nodes["a2-1"]["versions"]["driver"] == "25.0.rc1.1"
    assert {g["id"] for g in only_a2["groups"] if "a2-1" in g["nodes"]} == set(nodes["a2-1"]["groups"])
    gauges = tmp_path / "fleet.prom"
    _report_cli(facts, "--target", f"a2={A2_STACK}", "--prometheus", str(gauges))
    text = gauges.read_text()
    assert 'cannenv_fleet_nodes{status="untargeted"} 1\n' in text
    assert 'cannenv_fleet_check_failing_nodes{check="npu-devices",severity="critical"} 1\n' in text
    _, both = _report_cli(facts, "--target", f"a2={A2_STACK},310p={P310_STACK}", "--details")
    nodes = {n["name"]: n for n in both["nodes"]}
    assert nodes["p310-1"]["stack"] == P310_STACK and nodes["p310-1"]["findings"]
    assert not [f for f in nodes["p310-1"]["findings"] if "910b" in (f.get("remedy") or "")]


def test_inventory_groups_map_to_targets(tmp_path: Path) -> None:
    pytest.importorskip("ansible", reason="--inventory reads groups with ansible-core")
    _collection(tmp_path, [HostSpec("a2-1"), HostSpec("a2-2")])
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("[training]\na2-1\n\n[inference]\na2-2\n")
    targets = tmp_path / "targets.yaml"
    targets.write_text(f"groups:\n  training: {A2_STACK}\nfamilies: {{}}\n")
    _, report = _report_cli(str(tmp_path / "facts"), "--targets", str(targets), "--inventory", str(inventory))
    nodes = {n["name"]: n for n in report["nodes"]}
    assert nodes["a2-1"]["target"] == "group training" and nodes["a2-1"]["stack"] == A2_STACK
    assert nodes["a2-2"]["status"] == "untargeted"


def test_node_metrics_pushed_by_the_playbook(tmp_path: Path) -> None:
    """`fleet report --node-metrics` on the controller, then ansible/playbooks/push_metrics.yml (real
    ansible-playbook, local connection) puts each node's file in its textfile directory."""
    import shutil

    _collection(tmp_path, [HostSpec("a2-1"), HostSpec("a2-2", env_sourced=False)])
    metrics = tmp_path / "metrics"
    code, _ = _report_cli(str(tmp_path / "facts"), "--stack", A2_STACK, "--node-metrics", str(metrics))
    assert code == 1 and sorted(p.name for p in metrics.iterdir()) == ["a2-1.prom", "a2-2.prom"]
    text = (metrics / "a2-2.prom").read_text()
    assert 'cannenv_check_status{check="env-sourced",severity="critical"} 1' in text
    assert (
        f'cannenv_stack_info{{stack="{A2_STACK}",cann="8.2.RC1",driver="25.0.rc1.1",torch_npu="none"}} 1'
        in text
    )
    promtool = shutil.which("promtool")
    if promtool:
        lint = subprocess.run(
            [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False
        )
        assert lint.returncode == 0, lint.stdout + lint.stderr
    playbook_cli = shutil.which("ansible-playbook")
    if playbook_cli is None:
        pytest.skip("ansible-playbook is not installed (pip install 'cannenv[fleet]')")
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(
        "".join(
            f"{n} ansible_connection=local ansible_python_interpreter={sys.executable}\n"
            for n in ("a2-1", "a2-2")
        )
    )
    textfile = tmp_path / "textfile"
    textfile.mkdir()
    playbook = Path(__file__).resolve().parents[2] / "ansible" / "playbooks" / "push_metrics.yml"
    extra = ["-e", f"cannenv_metrics_src={metrics}", "-e", f"cannenv_textfile_dir={textfile}"]
    run = subprocess.run(
        [playbook_cli, "-i", str(inventory), str(playbook), "--limit", "a2-2", *extra],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_NOCOLOR": "1"},
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert (textfile / "cannenv.prom").read_text() == text
