"""`--matrix` on the fleet commands (issue 22): a site matrix (here: the shipped one plus a stack of
the site's own) serves `fleet report`, `fleet diff` and the DaemonSet, whose agents get the site
matrix in the ConfigMap and judge with it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import HostSpec, build_tree

from cannenv.resources import matrices_dir

SITE = "site-a2-cann8.2.rc1-torch2.6.0"
BASE = "a2-cann8.2.rc1-torch2.6.0-py3.11"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped matrix with one more stack, the site's (a copy of a shipped one, renamed)."""
    out = tmp_path_factory.mktemp("site") / "matrices"
    shutil.copytree(matrices_dir(), out)
    doc = yaml.safe_load((out / "stacks.yaml").read_text())
    (stack,) = [dict(s) for s in doc["stacks"] if s["id"] == BASE]
    stack["id"] = SITE
    doc["stacks"].append(stack)
    (out / "stacks.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("facts")
    folder = tmp / "coll"
    folder.mkdir()
    tree = build_tree(HostSpec("n1"), tmp / "tree")
    proc = _cli("facts", "--json", "--root", str(tree))
    assert proc.returncode == 0, proc.stderr
    (folder / "n1.json").write_text(proc.stdout)
    return folder


def test_fleet_report_and_diff_judge_with_a_site_matrix(site: Path, facts: Path) -> None:
    assert _cli("fleet", "report", str(facts), "--stack", SITE).returncode == 3  # not in the shipped one
    proc = _cli("fleet", "report", str(facts), "--stack", SITE, "--matrix", str(site), "--json")
    assert proc.returncode in (0, 1), proc.stderr
    (node,) = json.loads(proc.stdout)["nodes"]
    assert node["stack"] == SITE
    diff = _cli("fleet", "diff", str(facts), str(facts), "--stack", SITE, "--matrix", str(site), "--json")
    assert diff.returncode == 0, diff.stderr
    assert _cli("fleet", "diff", str(facts), str(facts), "--stack", SITE).returncode == 3


def _by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (obj,) = [o for o in objects if o["kind"] == kind]
    return obj


def test_the_daemonset_carries_the_site_matrix_and_its_agent_judges_with_it(
    site: Path, tmp_path: Path
) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    proc = _cli(
        "fleet",
        "k8s-manifest",
        "--image",
        "img:1",
        "--allow-tag",
        "--stack",
        SITE,
        "--matrix",
        str(site),
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    objects = json.loads(proc.stdout)["items"]
    for obj in objects:
        kv.validate(obj, "1.30.0", strict=True)
    config = _by_kind(objects, "ConfigMap")
    pod = _by_kind(objects, "DaemonSet")["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert args[args.index("--matrix") + 1] == "/etc/cannenv/matrix"
    (volume,) = [v for v in pod["volumes"] if v["name"] == "target"]
    items = {i["key"]: i["path"] for i in volume["configMap"]["items"]}
    assert items["stack"] == "stack" and set(items) == set(config["data"])
    # the pod's view of the ConfigMap, then the agent's command line as the kubelet runs it
    etc = tmp_path / "etc-cannenv"
    for key, path in items.items():
        (etc / path).parent.mkdir(parents=True, exist_ok=True)
        (etc / path).write_text(config["data"][key])
    tree = build_tree(HostSpec("n1"), tmp_path / "tree")
    argv = [a.replace("/etc/cannenv", str(etc)).replace("$(NODE_NAME)", "n1") for a in args]
    argv = [str(tree) if a == "/host" else a for a in argv]
    argv = [a for a in argv if not a.startswith("/run/cannenv")]
    argv.remove("--ready-file")
    agent = _cli("fleet", "k8s-agent", *argv, "--once", "--dry-run")
    assert agent.returncode == 0, agent.stderr
    assert json.loads(agent.stdout)["metadata"]["labels"]["cannenv.io/stack"] == SITE
    # the shipped matrix alone refuses the site's stack digest
    shipped = [a for a in argv if a not in ("--matrix", str(etc / "matrix"))]
    bad = _cli("fleet", "k8s-agent", *shipped, "--once", "--dry-run")
    assert bad.returncode == 6 and "matrix" in bad.stderr


def test_certify_takes_its_stack_from_a_site_matrix(site: Path, tmp_path: Path) -> None:
    tree = build_tree(HostSpec("n1"), tmp_path / "tree")
    base = ["certify", "--level", "1", "--stack", SITE, "--root", str(tree), "--no-devices", "--json"]
    assert _cli(*base).returncode == 3  # the shipped matrix has no such stack
    proc = _cli(*base, "--matrix", str(site))
    assert proc.returncode in (0, 1), proc.stderr
    cert = json.loads(proc.stdout)["certificate"]
    assert cert["stack"]["id"] == SITE, cert["stack"]
    # and `cert replay --plan` plans toward it from the same site matrix
    path = tmp_path / "cert.json"
    path.write_text(proc.stdout)
    replay = _cli("cert", "replay", str(path), "--plan", "--root", str(tree), "--matrix", str(site), "--json")
    assert replay.returncode in (0, 1), replay.stderr
    assert json.loads(replay.stdout)["stack"] == SITE
    assert _cli("cert", "replay", str(path), "--plan", "--root", str(tree)).returncode == 3
