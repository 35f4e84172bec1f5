"""The DaemonSet: rendered for a real lock, validated offline against the Kubernetes schemas
(kubernetes-validate, strict), and its container command run against a host tree: the labels and
annotations it would apply are checked (``--once --dry-run`` print the patch instead of sending
it; the sending itself is tested against a local HTTP server in test_fleet.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers.fleet_hosts import DRIVER_24_1_RC1, HostSpec, build_tree

from cannenv import matrix
from cannenv.errors import InputError
from cannenv.fleet.k8s import (
    HOST_ROOT,
    NFD_ASCEND_LABEL,
    READY_FILE,
    TARGET_DIR,
    TEXTFILE_MOUNT,
    parse_toleration,
    render_manifest,
)
from cannenv.lock import Lock, write_lock

STACK = "a2-cann8.2.rc1-torch2.6.0-py3.11"  # a shipped stack id
K8S_VERSION = "1.30.0"


def _lock(path: Path) -> Path:
    lock = Lock(
        stack_id=STACK,
        matrix_digest=matrix.load().digest,
        cannenv_version="0.1.0",
        os="ubuntu22.04",
        base_image="ubuntu:22.04",
        context_digest="sha256:" + "0" * 64,
        driver_range=">=25.0.rc1",
    )
    return write_lock(path, lock)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """What `cannenv fleet k8s-manifest --lock FILE --json` prints, as the docs write it."""
    lock = _lock(tmp_path_factory.mktemp("lock") / "cannenv.lock.json")
    proc = _cli(
        "fleet",
        "k8s-manifest",
        "--image",
        "registry.example/cannenv-doctor@sha256:" + "1" * 64,
        "--lock",
        str(lock),
        "--textfile-dir",
        "/var/lib/prometheus/node-exporter",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    items: list[dict[str, Any]] = json.loads(proc.stdout)["items"]
    return items


def _by_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (obj,) = [o for o in objects if o["kind"] == kind]
    return obj


def test_every_object_validates_against_the_kubernetes_schema(manifest: list[dict[str, Any]]) -> None:
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate (test extra)")
    assert [o["kind"] for o in manifest] == [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "DaemonSet",
    ]
    for obj in manifest:
        kv.validate(obj, K8S_VERSION, strict=True)
    broken = json.loads(json.dumps(_by_kind(manifest, "DaemonSet")))
    broken["spec"]["template"]["spec"]["containers"][0]["volumeMount"] = []
    with pytest.raises(kv.ValidationError):
        kv.validate(broken, K8S_VERSION, strict=True)


def test_the_daemonset_is_what_issue_15_asks(manifest: list[dict[str, Any]], tmp_path: Path) -> None:
    role = _by_kind(manifest, "ClusterRole")
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["patch"]}]
    config = _by_kind(manifest, "ConfigMap")
    assert json.loads(config["data"]["lock.json"])["stack_id"] == STACK
    pod = _by_kind(manifest, "DaemonSet")["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {NFD_ASCEND_LABEL: "true"}
    assert pod["tolerations"] == []  # only those asked for
    (container,) = pod["containers"]
    assert container["command"] == ["cannenv", "fleet", "k8s-agent"]  # no shell around it
    assert container["readinessProbe"]["exec"]["command"] == ["test", "-f", READY_FILE]
    security = container["securityContext"]
    assert security["privileged"] is False and security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"], "add": ["DAC_READ_SEARCH"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts[HOST_ROOT]["readOnly"] is True and mounts[TARGET_DIR]["readOnly"] is True
    assert not [m for m in mounts if "davinci" in m]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["host-root"]["hostPath"] == {"path": "/", "type": "Directory"}
    assert volumes["textfile"]["hostPath"]["path"] == "/var/lib/prometheus/node-exporter"
    assert not [v for v in volumes.values() if v.get("hostPath", {}).get("type") == "CharDevice"]


def test_tolerations_devices_and_selectors_only_when_asked() -> None:
    objects = render_manifest(
        "img:1",
        stack_id=STACK,
        matrix_digest="sha256:" + "2" * 64,
        node_selector={"accelerator": "huawei-Ascend910"},
        tolerations=["huawei.com/npu=true:NoSchedule", "dedicated:NoExecute"],
        device_resource="huawei.com/Ascend910=1",
    )
    pod = _by_kind(objects, "DaemonSet")["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"accelerator": "huawei-Ascend910"}
    assert pod["tolerations"] == [
        {"key": "huawei.com/npu", "effect": "NoSchedule", "operator": "Equal", "value": "true"},
        {"key": "dedicated", "effect": "NoExecute", "operator": "Exists"},
    ]
    container = pod["containers"][0]
    assert container["resources"]["limits"]["huawei.com/Ascend910"] == "1"
    args = container["args"]
    assert args[args.index("--stack") + 1] == STACK and args[args.index("--matrix-digest") + 1].endswith(
        "2" * 64
    )
    assert _by_kind(objects, "ConfigMap")["data"] == {"stack": STACK, "matrix-digest": "sha256:" + "2" * 64}
    kv = pytest.importorskip("kubernetes_validate")
    for obj in objects:
        kv.validate(obj, K8S_VERSION, strict=True)


@pytest.mark.parametrize(
    "bad",
    [
        {"image": "img; rm -rf /"},
        {"stack_id": "x$(reboot)"},
        {"namespace": "Bad_NS"},
        {"tolerations": ["key:Sometimes"]},
        {"device_resource": "davinci=all"},
        {"textfile_dir": "../etc"},
        {"node_selector": {"bad key!": "x"}},
    ],
)
def test_bad_values_are_refused(bad: dict[str, Any]) -> None:
    kwargs: dict[str, Any] = {"image": "img:1", "stack_id": STACK, **bad}
    with pytest.raises(InputError):
        render_manifest(**kwargs)


def test_parse_toleration() -> None:
    assert parse_toleration("a/b:PreferNoSchedule") == {
        "key": "a/b",
        "effect": "PreferNoSchedule",
        "operator": "Exists",
    }


def _container_argv(manifest: list[dict[str, Any]], tmp_path: Path, tree: Path, node: str) -> list[str]:
    """The container's command as the kubelet would run it, with the pod's paths mapped to files here:
    /host -> the host tree, /etc/cannenv -> the ConfigMap's data, the emptyDir/hostPath mounts -> tmp."""
    pod = _by_kind(manifest, "DaemonSet")["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    config = tmp_path / "configmap"
    config.mkdir()
    for key, text in _by_kind(manifest, "ConfigMap")["data"].items():
        (config / key).write_text(text)
    paths = {
        HOST_ROOT: str(tree),
        TARGET_DIR: str(config),
        READY_FILE: str(tmp_path / "ready"),
        TEXTFILE_MOUNT: str(tmp_path / "textfile"),
    }
    (tmp_path / "textfile").mkdir()
    argv = []
    for arg in [*container["command"], *container["args"]]:
        arg = arg.replace("$(NODE_NAME)", node)  # the kubelet expands $(VAR) from the env
        for pod_path, here in sorted(paths.items(), key=lambda kv: -len(kv[0])):
            if arg == pod_path or arg.startswith(pod_path + "/"):
                arg = here + arg[len(pod_path) :]
                break
        argv.append(arg)
    assert argv[0] == "cannenv"
    return [sys.executable, "-m", "cannenv", *argv[1:]]


def test_the_container_command_labels_a_host_tree(manifest: list[dict[str, Any]], tmp_path: Path) -> None:
    tree = build_tree(HostSpec("old-driver", driver=DRIVER_24_1_RC1), tmp_path / "tree")
    argv = _container_argv(manifest, tmp_path, tree, "npu-node-7")
    proc = subprocess.run(
        [*argv, "--once", "--dry-run"], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    patch = json.loads(proc.stdout)
    labels = patch["metadata"]["labels"]
    assert labels == {
        "cannenv.io/stack": STACK,
        "cannenv.io/status": "failing",
        "cannenv.io/certificate": "none",
    }
    notes = patch["metadata"]["annotations"]
    failing = notes["cannenv.io/failing-checks"].split(",")
    assert "npu-devices" in failing and failing == sorted(set(failing))  # no NPU in a tree
    assert notes["cannenv.io/certificate-digest"] == "none"
    assert notes["cannenv.io/last-run"].endswith("Z")
    # the doctor says the same of the same tree
    doctor = _cli(
        "doctor", "--root", str(tree), "--lock", str(tmp_path / "configmap" / "lock.json"), "--json"
    )
    report = json.loads(doctor.stdout)
    from cannenv.fleet.k8s import NODE_AGENT_SKIPS

    doctor_failing = {f["id"] for f in report["findings"] if f["status"] in ("fail", "error")}
    assert failing == sorted(doctor_failing - set(NODE_AGENT_SKIPS))
    assert (tmp_path / "ready").is_file()  # readiness: the judgement succeeded
    metrics = (tmp_path / "textfile" / "cannenv.prom").read_text()
    assert 'cannenv_check_status{check="npu-devices",severity="critical"} 2' in metrics
    assert f'cannenv_stack_info{{stack="{STACK}",cann="8.2.RC1",driver="24.1.rc1"' in metrics


def test_the_agent_does_not_judge_its_own_pods_environment() -> None:
    """A healthy node whose files are all right: the pod's environment never sourced set_env.sh
    (workloads do that), so the doctor without the host's environment fails env-sourced, and the
    agent must not label the node failing for it."""
    from cannenv.fleet.k8s import judge_node

    tree = Path(__file__).resolve().parents[2] / "examples" / "hosts" / "a2-cann8.5-new-layout" / "tree"
    stack = "a2-cann8.5.0-torch2.8.0-py3.11"
    doctor = _cli("doctor", "--root", str(tree), "--stack", stack, "--json")
    assert "env-sourced" in {
        f["id"] for f in json.loads(doctor.stdout)["findings"] if f["status"] in ("fail", "error")
    }
    report, patch = judge_node(str(tree), stack_id=stack)
    failing = patch["metadata"]["annotations"]["cannenv.io/failing-checks"]
    assert "env-" not in failing
    assert not [f for f in report.findings if f.id.startswith("env-")]


def test_a_judgement_that_fails_makes_the_pod_unready(manifest: list[dict[str, Any]], tmp_path: Path) -> None:
    tree = build_tree(HostSpec("ok"), tmp_path / "tree")
    argv = _container_argv(manifest, tmp_path, tree, "npu-node-8")
    (tmp_path / "ready").write_text("stale\n")
    (tmp_path / "configmap" / "lock.json").write_text("{not json")
    proc = subprocess.run(
        [*argv, "--once", "--dry-run"], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 6 and proc.stdout == ""
    assert "error: " in proc.stderr and "lock" in proc.stderr
    assert not (tmp_path / "ready").exists()


def test_the_doctor_image_is_a_small_python_base_plus_the_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "cannenv-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip: only its name matters here
    base = "python:3.12-slim@sha256:" + "3" * 64
    proc = _cli(
        "fleet",
        "k8s-image",
        "--out",
        str(tmp_path / "ctx"),
        "--base-image",
        base,
        "--cannenv-wheel",
        str(wheel),
    )
    assert proc.returncode == 0, proc.stderr
    dockerfile = (tmp_path / "ctx" / "Dockerfile").read_text()
    assert f"FROM {base}\n" in dockerfile and "COPY cannenv-0.1.0-py3-none-any.whl " in dockerfile
    assert 'ENTRYPOINT ["cannenv", "fleet", "k8s-agent"]' in dockerfile
    steps = [line for line in dockerfile.splitlines() if line and not line.startswith("#")]
    assert not [line for line in steps if "torch" in line or "Ascend" in line or "apt-get" in line]
    assert (tmp_path / "ctx" / wheel.name).read_bytes() == wheel.read_bytes()
    bad = _cli(
        "fleet",
        "k8s-image",
        "--out",
        str(tmp_path / "x"),
        "--base-image",
        "a b",
        "--cannenv-wheel",
        str(wheel),
    )
    assert bad.returncode == 2 and "not an image reference" in bad.stderr
