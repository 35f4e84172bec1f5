"""cannenv beside the vendor's Kubernetes labels and Prometheus metrics (docs/multinode.md §6):
our node labels never write a key the Ascend device plugin sets, our metric names never reuse one of
npu-exporter's. The vendor names are those of research notes §4.1-4.2 (Ascend/mind-cluster
``docs/en/scheduling/api/k8s.md`` Table 4 and ``component/npu-exporter``)."""

from __future__ import annotations

import json
import re

from cannenv.checks.stack import host_summary
from cannenv.facts import Facts
from cannenv.fleet.k8s import label_patch, node_labels
from cannenv.prometheus import render_fleet, render_job, render_node
from cannenv.report import Finding, Report, StackChoice

DEVICE_PLUGIN_LABELS = {
    "accelerator",
    "node.kubernetes.io/npu.chip.name",
    "servertype",
    "huawei.com/driver.version",
    "accelerator-type",
    "infer-card-type",
    "mind-cluster/npu-chip-memory",
    "huawei.com/topotree.superpodid",
    "huawei.com/topotree.rackid",
    "huawei.com/topotree.serverid",
    "host-arch",
    "workerselector",
    "masterselector",
    "nodeDEnable",
    "huawei.com/Ascend910-Recover",
    "huawei.com/npu-Recover",
    "huawei.com/scheduler.chip1softsharedev.enable",
}
NPU_EXPORTER_METRICS = {
    "machine_npu_nums",
    "npu_exporter_version_info",
    "node_base_info",
    "npu_container_info",
    "npu_plugin_info",
    "npu_plugin_label",
    "container_npu_total_memory",
    "container_npu_used_memory",
    "container_npu_utilization",
}
NPU_EXPORTER_PREFIXES = ("npu_chip_", "npu_exporter_", "container_npu_", "machine_npu", "node_base_info")


def _report() -> Report:
    facts = Facts()
    f = Finding(id="job-cann", status="fail", severity="critical", title="t")
    host = {**host_summary(facts), "cann": "8.5.0", "nnal": "8.5.0", "torch_npu": "2.8.0.post2"}
    host["ops_chips"] = ["910b"]
    return Report.build([f], host=host, stack=StackChoice(id="s"))


def test_our_labels_and_annotations_are_ours_only() -> None:
    report = _report()
    labels = node_labels(json.loads(report.to_json()))
    patch = label_patch(labels, failing=["x"], last_run="2026-12-01T00:00:00Z")
    keys = set(patch["metadata"]["labels"]) | set(patch["metadata"]["annotations"])
    assert all(k.startswith("cannenv.io/") for k in keys)
    assert not keys & DEVICE_PLUGIN_LABELS
    assert labels["cannenv.io/cann"] == "8.5.0" and labels["cannenv.io/torch-npu"] == "2.8.0.post2"
    assert labels["cannenv.io/nnal"] == "8.5.0" and labels["cannenv.io/ops-chips"] == "910b"


def test_our_metric_names_never_collide_with_npu_exporter() -> None:
    report = _report()
    text = render_node(report, timestamp=0) + render_fleet({"compliant": 1}, {}, timestamp=0)
    text += render_job("j", report, timestamp=0)
    names = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    assert "cannenv_job_consistent" in names
    assert all(n.startswith("cannenv_") for n in names)
    assert not names & NPU_EXPORTER_METRICS
    assert not [n for n in names if n.startswith(NPU_EXPORTER_PREFIXES)]
