"""Prometheus, for real: Debian's prometheus and prometheus-node-exporter scrape what cannenv writes.

`cannenv doctor --prometheus FILE` writes node_exporter's textfile format into a directory; the
test starts node_exporter (textfile collector on that directory) and Prometheus (scraping it every
second) on free 127.0.0.1 ports with temporary configuration and storage, asks Prometheus's HTTP API
with PromQL for the series, and stops both. The shipped alert rules are checked with
`promtool check rules` and unit-tested with `promtool test rules`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import DRIVER_24_1_RC1, HostSpec, build_tree, free_port

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "examples" / "prometheus" / "cannenv-alerts.yml"
PROMETHEUS, NODE_EXPORTER, PROMTOOL = (
    shutil.which(n) for n in ("prometheus", "prometheus-node-exporter", "promtool")
)


def _need(*tools: str | None) -> None:
    if not all(tools):
        msg = "needs Debian's prometheus and prometheus-node-exporter (apt-get install, see .ci/run)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


def _cannenv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=300, check=False
    )


def _get(url: str) -> dict:  # type: ignore[type-arg]
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


def _wait_http(url: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{what} did not answer at {url}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def textfile_dir(tmp_path: Path) -> Path:
    d = tmp_path / "textfile"
    d.mkdir()
    return d


@pytest.fixture
def scraping(textfile_dir: Path, tmp_path: Path) -> Iterator[str]:
    """node_exporter reading ``textfile_dir`` and Prometheus scraping it; yields Prometheus's URL."""
    _need(PROMETHEUS, NODE_EXPORTER)
    assert PROMETHEUS and NODE_EXPORTER
    ne_port, prom_port = free_port(), free_port()
    log = (tmp_path / "node_exporter.log").open("wb")
    exporter = subprocess.Popen(
        [
            NODE_EXPORTER,
            f"--web.listen-address=127.0.0.1:{ne_port}",
            "--collector.disable-defaults",
            "--collector.textfile",
            f"--collector.textfile.directory={textfile_dir}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: node\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{ne_port}']\n        labels: {{instance: npu-node-1}}\n"
        f"rule_files: ['{RULES}']\n"
    )
    prometheus = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
        stdout=(tmp_path / "prometheus.log").open("wb"),
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
    )
    try:
        _wait_http(f"http://127.0.0.1:{ne_port}/metrics", exporter, "node_exporter")
        _wait_http(f"http://127.0.0.1:{prom_port}/-/ready", prometheus, "prometheus")
        yield f"http://127.0.0.1:{prom_port}"
    finally:
        _stop(prometheus)
        _stop(exporter)
        log.close()
    assert prometheus.returncode is not None and exporter.returncode is not None


def _query(base: str, promql: str, want: int, timeout: float = 90) -> list[dict]:  # type: ignore[type-arg]
    """Poll the HTTP API until the instant query returns ``want`` series."""
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    deadline = time.monotonic() + timeout
    result: list[dict] = []  # type: ignore[type-arg]
    while time.monotonic() < deadline:
        answer = _get(url)
        assert answer["status"] == "success", answer
        result = answer["data"]["result"]
        if len(result) == want:
            return result
        time.sleep(0.5)
    raise AssertionError(f"{promql}: {len(result)} series after {timeout} s, expected {want}: {result}")


def test_prometheus_scrapes_what_the_doctor_writes(scraping: str, textfile_dir: Path, tmp_path: Path) -> None:
    tree = build_tree(HostSpec("old", driver=DRIVER_24_1_RC1), tmp_path / "tree")
    stack = "a2-cann8.2.rc1-torch2.6.0-py3.11"
    before = int(time.time())
    prom = str(textfile_dir / "cannenv.prom")
    proc = _cannenv("doctor", "--root", str(tree), "--stack", stack, "--json", "--prometheus", prom)
    assert proc.returncode == 1, proc.stderr  # checks fail on this tree
    assert [p.name for p in textfile_dir.iterdir()] == ["cannenv.prom"]  # no temp file left behind
    failed = {f["id"] for f in json.loads(proc.stdout)["findings"] if f["status"] in ("fail", "error")}
    assert "npu-devices" in failed  # no NPU in a tree

    (npu,) = _query(scraping, 'cannenv_check_status{check="npu-devices"}', 1)
    assert npu["metric"]["severity"] == "critical" and npu["metric"]["instance"] == "npu-node-1"
    assert npu["value"][1] == "2"  # fail
    (driver,) = _query(scraping, 'cannenv_check_status{check="driver-cann"}', 1)
    assert driver["value"][1] == "1"  # warn: no vendor statement covers driver 24.1.rc1 for CANN 8.2.RC1
    (info,) = _query(scraping, "cannenv_stack_info", 1)
    assert info["metric"]["stack"] == stack and info["value"][1] == "1"
    assert info["metric"]["cann"] == "8.2.RC1" and info["metric"]["driver"] == "24.1.rc1"
    assert info["metric"]["torch_npu"] == "none"
    (last,) = _query(scraping, "cannenv_last_run_timestamp_seconds", 1)
    assert before - 1 <= float(last["value"][1]) <= time.time() + 1
    failing = _query(scraping, "max by (check) (cannenv_check_status) >= 2", len(failed))
    assert {s["metric"]["check"] for s in failing} == failed
    # the alert rule is loaded and pending (it fires after 10 minutes)
    rules = [r for g in _get(f"{scraping}/api/v1/rules")["data"]["groups"] for r in g["rules"]]
    assert {r["name"] for r in rules} >= {"CannenvCheckFailing", "CannenvStale"}
    alerts = _query(scraping, 'ALERTS{alertname="CannenvCheckFailing"}', len(failed))
    assert {a["metric"]["alertstate"] for a in alerts} == {"pending"}


def test_the_alert_rules_pass_promtool() -> None:
    """Every rule checked; the shipped unit tests (examples/prometheus/cannenv-alerts.test.yml) cover
    failing checks at each Alertmanager severity, drifting and stale nodes, and the fleet's failing,
    unreachable, untargeted and drifting nodes and a stale fleet report."""
    _need(PROMTOOL)
    assert PROMTOOL
    check = subprocess.run(
        [PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    import yaml

    groups = yaml.safe_load(RULES.read_text())["groups"]
    rules = [r for g in groups for r in g["rules"]]
    # promtool found every rule the file holds (none dropped as unparsable)
    want = f"SUCCESS: {len(rules)} rules found"
    assert check.returncode == 0 and want in check.stdout, check.stdout + check.stderr
    assert "CannenvJobNotReady" in {r["alert"] for r in rules}
    assert {r["labels"]["severity"] for r in rules} == {"critical", "warning", "info"}  # Alertmanager's
    names = {r["alert"] for r in rules}
    assert {
        "CannenvFleetNodesUnreachable",
        "CannenvFleetNodesUntargeted",
        "CannenvFleetNodesDrifting",
    } <= names
    assert {"CannenvNodeDrifting", "CannenvStale", "CannenvFleetReportStale"} <= names
    unit = RULES.with_name("cannenv-alerts.test.yml")
    tested = {
        t["alertname"] for case in yaml.safe_load(unit.read_text())["tests"] for t in case["alert_rule_test"]
    }
    assert tested == names  # every alert has a unit test
    test = subprocess.run(
        [PROMTOOL, "test", "rules", unit.name], capture_output=True, text=True, timeout=60, cwd=unit.parent
    )
    assert test.returncode == 0 and "SUCCESS" in test.stdout, test.stdout + test.stderr
