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
    host_paths,
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
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
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
    assert "nodeSelector" not in pod
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    # the lock's family (A2) only, by the Ascend device plugin's labels: accelerator AND accelerator-type
    (term,) = terms["nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "accelerator", "operator": "In", "values": ["huawei-Ascend910"]},
        {
            "key": "accelerator-type",
            "operator": "In",
            "values": ["module-910b-8", "module-910b-16", "card-910b-2", "card-910b-infer"],
        },
    ]
    assert NFD_ASCEND_LABEL == "feature.node.kubernetes.io/pci-1200_19e5.present"
    assert pod["tolerations"] == []  # only those asked for
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 65534
    (container,) = pod["containers"]
    assert container["command"] == ["cannenv", "fleet", "k8s-agent"]  # no shell around it
    assert container["readinessProbe"]["exec"]["command"] == ["test", "-f", READY_FILE]
    security = container["securityContext"]
    assert security["privileged"] is False and security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]} and "runAsUser" not in security  # nothing added
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts[TARGET_DIR]["readOnly"] is True
    assert not [m for m in mounts if "davinci" in m]
    volumes = {v["name"]: v for v in pod["volumes"]}
    host = {v["hostPath"]["path"]: v["hostPath"]["type"] for v in volumes.values() if "hostPath" in v}
    assert volumes["textfile"]["hostPath"] == {
        "path": "/var/lib/prometheus/node-exporter",
        "type": "Directory",
    }
    del host["/var/lib/prometheus/node-exporter"]  # the one writable host path
    # only what the probes read, each read-only under /host, never created on the node
    assert host == {p["path"]: p["type"] for p in host_paths("full")}
    assert "/" not in host and "/etc" not in host and not [p for p in host if p.startswith("/var")]
    assert set(host.values()) <= {"Directory", "File"}
    for path in host:
        assert mounts[HOST_ROOT + path]["readOnly"] is True
    assert [m for m in mounts if m.startswith(HOST_ROOT)] == [HOST_ROOT + p for p in host]


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
        "cannenv.io/cann": "8.2.RC1",
        "cannenv.io/nnal": "none",
        "cannenv.io/torch-npu": "none",
        "cannenv.io/ops-chips": "910b",
        # the tree keeps no npu-smi capture and no driver module version: the loaded driver is unknown
        "cannenv.io/reboot-pending": "unknown",
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


# ------------------------------------------------------------------ issue 22: coexisting targets


def _objects(name: str, namespace: str = "kube-system", **kw: Any) -> list[dict[str, Any]]:
    return render_manifest(
        "img:1", stack_id=STACK, matrix_digest=matrix.load().digest, name=name, namespace=namespace, **kw
    )


def test_two_targets_coexist_without_rewriting_each_others_objects() -> None:
    """Two manifests (an A2 target and an HDK-only 310P one; and the same name in two namespaces)
    share no object: applying one never replaces the other's binding, policy or DaemonSet."""
    kv = pytest.importorskip("kubernetes_validate")
    sets = [
        _objects("cannenv-doctor-a2"),
        _objects("cannenv-doctor-310p", role="hdk", node_selector={"accelerator": "huawei-Ascend310P"}),
        _objects("cannenv-doctor-a2", namespace="npu-monitoring"),
    ]
    keys = [
        {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects}
        for objects in sets
    ]
    assert not keys[0] & keys[1] and not keys[0] & keys[2] and not keys[1] & keys[2]
    for objects in sets:
        for obj in objects:
            kv.validate(obj, K8S_VERSION, strict=True)
        sa = _by_kind(objects, "ServiceAccount")["metadata"]
        binding = _by_kind(objects, "ClusterRoleBinding")
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": sa["name"], "namespace": sa["namespace"]}
        ]
        assert binding["roleRef"]["name"] == _by_kind(objects, "ClusterRole")["metadata"]["name"]
        policy = _by_kind(objects, "ValidatingAdmissionPolicy")
        assert (
            _by_kind(objects, "ValidatingAdmissionPolicyBinding")["spec"]["policyName"]
            == (policy["metadata"]["name"])
        )
        assert (
            f"system:serviceaccount:{sa['namespace']}:{sa['name']}"
            in (policy["spec"]["matchConditions"][0]["expression"])
        )
        ds = _by_kind(objects, "DaemonSet")
        pod = ds["spec"]["template"]
        assert ds["spec"]["selector"]["matchLabels"]["app.kubernetes.io/instance"] == sa["name"]
        assert pod["metadata"]["labels"] == ds["spec"]["selector"]["matchLabels"]
        assert pod["spec"]["serviceAccountName"] == sa["name"]
        (target,) = [v for v in pod["spec"]["volumes"] if v["name"] == "target"]
        assert target["configMap"]["name"] == _by_kind(objects, "ConfigMap")["metadata"]["name"]
    hdk_args = _by_kind(sets[1], "DaemonSet")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert hdk_args[hdk_args.index("--role") + 1] == "hdk"
    hdk_host = {
        v["hostPath"]["path"]
        for v in _by_kind(sets[1], "DaemonSet")["spec"]["template"]["spec"]["volumes"]
        if "hostPath" in v
    }
    assert "/etc/ld.so.cache" not in hdk_host and "/usr" in hdk_host  # an HDK node: no ABI check


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "Cannenv_Doctor"},
        {"name": "x" * 57},
        {"extra_host_paths": ["/etc"]},
        {"extra_host_paths": ["/var/lib/kubelet/pods"]},
        {"extra_host_paths": ["/"]},
        {"extra_host_files": ["/etc/shadow"]},
        {"extra_host_files": ["/etc/kubernetes/admin.conf"]},
        {"extra_host_paths": ["/root/.kube"]},
        {"extra_host_paths": ["/opt/../etc"]},
        {"certificate": "/etc/cannenv.cert.json"},  # its directory, /etc, would be mounted
        {"role": "cann"},
        {"run_as_user": -1},
    ],
)
def test_what_the_agent_may_mount_and_be_is_bounded(bad: dict[str, Any]) -> None:
    with pytest.raises(InputError):
        _objects(**{"name": "cannenv-doctor", **bad})


def test_extra_paths_root_and_groups_when_asked() -> None:
    objects = _objects(
        "cannenv-doctor",
        extra_host_paths=["/etc/Ascend", "/opt/venv/"],
        extra_host_files=["/etc/ascend_install.info"],
        supplemental_groups=[1000, 1000],
        certificate="/etc/cannenv/cert.json",
    )
    pod = _by_kind(objects, "DaemonSet")["spec"]["template"]["spec"]
    host = {v["hostPath"]["path"]: v["hostPath"]["type"] for v in pod["volumes"] if "hostPath" in v}
    assert host["/etc/Ascend"] == "Directory" and host["/opt/venv"] == "Directory"
    assert host["/etc/ascend_install.info"] == "File" and host["/etc/cannenv"] == "Directory"
    assert pod["securityContext"]["supplementalGroups"] == [1000]
    args = pod["containers"][0]["args"]
    assert args[args.index("--certificate") + 1] == HOST_ROOT + "/etc/cannenv/cert.json"
    root = _by_kind(_objects("cannenv-doctor", run_as_user=0), "DaemonSet")["spec"]["template"]["spec"]
    assert root["securityContext"]["runAsNonRoot"] is False
    assert root["containers"][0]["securityContext"]["capabilities"] == {"drop": ["ALL"]}


# ------------------------------------------------------------------ the admission policy, evaluated


def _node(labels: dict[str, str], notes: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "npu-node-1", "labels": labels, "annotations": notes or {}},
        "spec": {"podCIDR": "10.0.1.0/24", **spec},
    }


def _admits(
    policy: dict[str, Any], old: dict[str, Any], new: dict[str, Any], user: dict[str, Any]
) -> bool | None:
    """What the API server decides for the agent's PATCH (an UPDATE old -> new): None when the policy
    does not apply to the request (another user), else whether every validation holds. The CEL
    expressions of the shipped policy, evaluated by cel-python (no API server here)."""
    celpy = pytest.importorskip("celpy", reason="pip install cel-python (test extra)")
    env = celpy.Environment()
    spec = policy["spec"]
    activation: dict[str, Any] = {
        "object": celpy.json_to_cel(new),
        "oldObject": celpy.json_to_cel(old),
        "request": celpy.json_to_cel({"userInfo": user, "operation": "UPDATE"}),
    }

    def evaluate(expression: str) -> Any:
        return env.program(env.compile(expression)).evaluate(activation)

    if not all(bool(evaluate(c["expression"])) for c in spec["matchConditions"]):
        return None
    variables = {v["name"]: evaluate(v["expression"]) for v in spec["variables"]}
    activation["variables"] = celpy.celtypes.MapType(
        {celpy.celtypes.StringType(k): v for k, v in variables.items()}
    )
    return all(bool(evaluate(v["expression"])) for v in spec["validations"])


def test_the_admission_policy_lets_the_agent_change_only_cannenv_keys_of_its_node() -> None:
    policy = _by_kind(_objects("cannenv-doctor-a2", namespace="npu"), "ValidatingAdmissionPolicy")
    agent = {
        "username": "system:serviceaccount:npu:cannenv-doctor-a2",
        "extra": {"authentication.kubernetes.io/node-name": ["npu-node-1"]},
    }
    vendor = {"accelerator": "huawei-Ascend910", "node.kubernetes.io/npu.chip.name": "910B3"}
    old = _node(vendor, {"baseDeviceInfos": "{}"})
    ours = _node(
        {**vendor, "cannenv.io/status": "failing"}, {"baseDeviceInfos": "{}", "cannenv.io/role": "full"}
    )
    assert _admits(policy, old, ours, agent) is True
    assert _admits(policy, ours, _node(vendor, {"baseDeviceInfos": "{}"}), agent) is True  # removes ours
    # the vendor's labels and annotations, the spec and other nodes are out of its reach
    assert (
        _admits(policy, old, _node({**vendor, "accelerator": "x"}, {"baseDeviceInfos": "{}"}), agent) is False
    )
    assert (
        _admits(policy, old, _node({"accelerator": "huawei-Ascend910"}, {"baseDeviceInfos": "{}"}), agent)
        is False
    )
    assert _admits(policy, old, _node(vendor, {}), agent) is False
    assert _admits(policy, old, _node(vendor, {"baseDeviceInfos": "{}"}, unschedulable=True), agent) is False
    tainted = _node(vendor, {"baseDeviceInfos": "{}"}, taints=[{"key": "k", "effect": "NoSchedule"}])
    assert _admits(policy, old, tainted, agent) is False
    elsewhere = {**agent, "extra": {"authentication.kubernetes.io/node-name": ["npu-node-2"]}}
    assert _admits(policy, old, ours, elsewhere) is False
    assert _admits(policy, old, ours, {"username": agent["username"]}) is True  # token without a node
    # other users (kubelet, admins, the other target's agent) are not this policy's business
    other = {"username": "system:serviceaccount:kube-system:cannenv-doctor-a2"}
    assert _admits(policy, old, _node({}, {}), other) is None


# ------------------------------------------------------------------ HDK-only nodes, other families


def _hdk_node(tmp_path: Path, family: str, driver: str) -> Path:
    from helpers.hosts import HostTree

    tree = HostTree(tmp_path).driver(driver).npu_smi(family).dev_nodes(8).os_release()
    return tree.root


def test_an_hdk_only_node_is_judged_on_what_it_carries(tmp_path: Path) -> None:
    """Driver + firmware only (CANN and torch live in the images): with --role hdk the node is
    compliant when its driver is the target's; with the whole stack expected it is failing."""
    from helpers.hosts import DRIVER_25_0_RC1_1

    from cannenv.fleet.k8s import judge_node

    root = str(_hdk_node(tmp_path / "ok", "a2", DRIVER_25_0_RC1_1))
    report, patch = judge_node(root, stack_id=STACK, role="hdk")
    assert patch is not None
    judged = {f.id: f.status for f in report.findings}
    assert patch["metadata"]["labels"]["cannenv.io/status"] == "compliant", report.findings
    assert patch["metadata"]["annotations"]["cannenv.io/role"] == "hdk"
    assert judged["driver-cann"] == "pass" and judged["driver-installed"] == "pass"
    assert judged["cann-installs"] == "skip" and judged["torch-torch-npu"] == "skip"
    driver_cann = next(f for f in report.findings if f.id == "driver-cann")
    assert "CANN 8.2.RC1 of the target stack" in driver_cann.detail
    _, full = judge_node(root, stack_id=STACK)
    assert full is not None and full["metadata"]["labels"]["cannenv.io/status"] == "failing"
    # an HDK-only node with a driver the vendor does not pair with the images' CANN still fails
    old = str(_hdk_node(tmp_path / "old", "a2", DRIVER_24_1_RC1))
    report, patch = judge_node(old, stack_id=STACK, role="hdk")
    assert patch is not None and patch["metadata"]["labels"]["cannenv.io/status"] == "failing"
    assert patch["metadata"]["annotations"]["cannenv.io/failing-checks"] == "stack-match"
    assert {f.id: f.status for f in report.findings}["driver-cann"] == "warn"  # no vendor statement


def test_a_node_of_another_family_is_left_to_its_own_target(tmp_path: Path) -> None:
    """Two DaemonSets on the default selector (NFD says only "Huawei NPU") both run on every NPU
    node: the A2 target's agent must not label a 310P node, or the two would overwrite each other."""
    from helpers.hosts import DRIVER_25_0_RC1_1

    root = _hdk_node(tmp_path / "p", "310p", DRIVER_25_0_RC1_1)
    proc = _cli(
        "fleet",
        "k8s-agent",
        "--root",
        str(root),
        "--node",
        "n1",
        "--stack",
        STACK,
        "--once",
        "--dry-run",
        "--ready-file",
        str(tmp_path / "ready"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "not labelled: n1 is a 310p node" in proc.stdout and "{" not in proc.stdout
    assert (tmp_path / "ready").is_file()


def test_one_manifest_with_a_target_per_family_renders_a_daemonset_per_family(tmp_path: Path) -> None:
    """`--target a2=ID,310p=ID` (i22a's target parser): one DaemonSet per family, NAME-FAMILY, with
    nothing shared; a stack of another family for a family key is refused, never rendered."""
    kv = pytest.importorskip("kubernetes_validate")
    p310 = "310p-cann8.2.rc1-torch2.6.0-py3.11"
    proc = _cli(
        "fleet",
        "k8s-manifest",
        "--image",
        "img:1",
        "--allow-tag",
        "--target",
        f"a2={STACK},310p={p310}",
        "--role",
        "hdk",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    objects = json.loads(proc.stdout)["items"]
    for obj in objects:
        kv.validate(obj, K8S_VERSION, strict=True)
    daemonsets = {o["metadata"]["name"]: o for o in objects if o["kind"] == "DaemonSet"}
    assert set(daemonsets) == {"cannenv-doctor-a2", "cannenv-doctor-310p"}
    keys = [(o["kind"], o["metadata"]["name"]) for o in objects]
    assert len(keys) == len(set(keys)) == 14
    for name, ds in daemonsets.items():
        args = ds["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--stack") + 1] == (STACK if name.endswith("a2") else p310)
    wrong = _cli("fleet", "k8s-manifest", "--image", "img:1", "--allow-tag", "--target", f"310p={STACK}")
    assert wrong.returncode == 2 and "is for a2, not 310p" in wrong.stderr
    both = _cli(
        "fleet",
        "k8s-manifest",
        "--image",
        "img:1",
        "--allow-tag",
        "--target",
        f"a2={STACK}",
        "--stack",
        STACK,
    )
    assert both.returncode == 2


def test_doctor_report_and_agent_agree_on_an_hdk_only_node(tmp_path: Path) -> None:
    """One notion of what an HDK-only node must carry: `doctor --role hdk`, `fleet report --role hdk`
    and the agent (above) all pass it; without the role all three fail it (no CANN toolkit)."""
    from helpers.hosts import DRIVER_25_0_RC1_1

    root = _hdk_node(tmp_path / "n", "a2", DRIVER_25_0_RC1_1)
    assert _cli("doctor", "--root", str(root), "--stack", STACK).returncode == 1
    doctor = _cli("doctor", "--root", str(root), "--stack", STACK, "--role", "hdk", "--json")
    assert doctor.returncode == 0, doctor.stdout
    skipped = {f["id"] for f in json.loads(doctor.stdout)["findings"] if f["status"] == "skip"}
    assert {"cann-installs", "toolkit-ops", "torch-torch-npu"} <= skipped
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "n.json").write_text(_cli("facts", "--json", "--root", str(root)).stdout)
    report = _cli("fleet", "report", str(facts), "--stack", STACK, "--role", "hdk", "--json")
    assert report.returncode == 0, report.stdout
    assert json.loads(report.stdout)["summary"]["compliant"] == 1
    assert _cli("fleet", "report", str(facts), "--stack", STACK).returncode == 1


def test_an_agent_image_by_tag_is_refused_unless_allow_tag(tmp_path: Path) -> None:
    """As `image lock` does for a base image: every node pulls --image, and a tag can name other bytes
    on each pull, so a tag is refused (exit 5) unless --allow-tag, which then says so on stderr."""
    tagged = "registry.example/cannenv-doctor:latest"
    refused = _cli("fleet", "k8s-manifest", "--image", tagged, "--stack", STACK)
    assert refused.returncode == 5 and refused.stdout == ""
    assert "is a tag, not a digest" in refused.stderr and "--allow-tag" in refused.stderr
    bare = _cli("fleet", "k8s-manifest", "--image", "registry.example/cannenv-doctor", "--stack", STACK)
    assert bare.returncode == 5
    allowed = _cli("fleet", "k8s-manifest", "--image", tagged, "--allow-tag", "--stack", STACK, "--json")
    assert allowed.returncode == 0, allowed.stderr
    assert "note: --image registry.example/cannenv-doctor:latest is a tag" in allowed.stderr
    pinned = "registry.example/cannenv-doctor@sha256:" + "1" * 64
    quiet = _cli("fleet", "k8s-manifest", "--image", pinned, "--stack", STACK, "--json")
    assert quiet.returncode == 0 and "tag" not in quiet.stderr


# ------------------------------------------------------------------ mixed clusters (issue 31 point 5)

DIGEST_IMAGE = "registry.example/cannenv-doctor@sha256:" + "1" * 64


def _stack_of(family: str) -> str:
    return next(s.id for s in matrix.load().stacks if s.family == family)


def _schedules(pod: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether the scheduler may place ``pod`` on a node with ``labels``: nodeSelector AND one of the
    required nodeAffinity terms (In / NotIn / Exists / DoesNotExist), as the scheduler reads them."""
    if any(labels.get(k) != v for k, v in pod.get("nodeSelector", {}).items()):
        return False
    affinity = pod.get("affinity", {}).get("nodeAffinity", {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not required:
        return True

    def holds(e: dict[str, Any]) -> bool:
        op, key = e["operator"], e["key"]
        if op == "In":
            return labels.get(key) in e["values"]
        if op == "NotIn":
            return labels.get(key) not in e["values"]
        if op == "Exists":
            return key in labels
        if op == "DoesNotExist":
            return key not in labels
        raise AssertionError(op)

    return any(all(holds(e) for e in t.get("matchExpressions", ())) for t in required["nodeSelectorTerms"])


NODES = {
    # labels as the Ascend device plugin sets them (MindCluster k8s.md, "Node labels")
    "a2-800t": {"accelerator": "huawei-Ascend910", "accelerator-type": "module-910b-8"},
    "a2-card": {"accelerator": "huawei-Ascend910", "accelerator-type": "card-910b-2"},
    "a3-800": {"accelerator": "huawei-Ascend910", "accelerator-type": "module-a3-16"},
    "a3-superpod": {"accelerator": "huawei-Ascend910", "accelerator-type": "module-a3-16-super-pod"},
    "310p-duo": {"accelerator": "huawei-Ascend310P", "infer-card-type": "card-300i-duo"},
    "910a-old": {"accelerator": "huawei-Ascend910", "accelerator-type": "module"},  # no target for 910
    "cpu-only": {"kubernetes.io/os": "linux"},
}
EXPECTED = {
    "a2-800t": "a2",
    "a2-card": "a2",
    "a3-800": "a3",
    "a3-superpod": "a3",
    "310p-duo": "310p",
    "910a-old": None,
    "cpu-only": None,
}


def _three_families(*extra: str) -> list[dict[str, Any]]:
    targets = ",".join(f"{f}={_stack_of(f)}" for f in ("a2", "a3", "310p"))
    proc = _cli("fleet", "k8s-manifest", "--image", DIGEST_IMAGE, "--target", targets, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    items: list[dict[str, Any]] = json.loads(proc.stdout)["items"]
    return items


def test_three_families_put_one_agent_on_each_npu_node() -> None:
    objects = _three_families("--textfile-dir", "/var/lib/node-exporter")
    daemonsets = {o["metadata"]["name"]: o for o in objects if o["kind"] == "DaemonSet"}
    assert set(daemonsets) == {"cannenv-doctor-a2", "cannenv-doctor-a3", "cannenv-doctor-310p"}
    # render against labelled node objects: exactly one agent on each NPU node, of its own family
    for node, labels in NODES.items():
        on = [n for n, ds in daemonsets.items() if _schedules(ds["spec"]["template"]["spec"], labels)]
        want = EXPECTED[node]
        assert on == ([] if want is None else [f"cannenv-doctor-{want}"]), (node, on)
    kv = pytest.importorskip("kubernetes_validate")
    node_objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": labels}}
        for n, labels in NODES.items()
    ]
    for obj in [*objects, *node_objects]:
        kv.validate(obj, K8S_VERSION, strict=True)


def test_a_family_named_by_its_own_selector_and_nfd_only_when_asked() -> None:
    objects = _three_families("--node-selector", "310p=pool=edge", "--node-selector", "zone=z1", "--nfd")
    pods = {o["metadata"]["name"]: o["spec"]["template"]["spec"] for o in objects if o["kind"] == "DaemonSet"}
    # 310p: its own label replaces the device plugin's; every family: zone=z1 too
    assert pods["cannenv-doctor-310p"]["nodeSelector"] == {"zone": "z1", "pool": "edge"}
    assert "affinity" not in pods["cannenv-doctor-310p"]
    assert pods["cannenv-doctor-a2"]["nodeSelector"] == {"zone": "z1"}
    terms = pods["cannenv-doctor-a2"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    keys = [e["key"] for t in terms["nodeSelectorTerms"] for e in t["matchExpressions"]]
    assert keys == [
        "accelerator",
        "accelerator-type",
        "feature.node.kubernetes.io/pci-1200_19e5_d802.present",
    ]
    assert _schedules(
        pods["cannenv-doctor-a2"],
        {"zone": "z1", "feature.node.kubernetes.io/pci-1200_19e5_d802.present": "true"},
    )
    assert not _schedules(pods["cannenv-doctor-a2"], {**NODES["a2-800t"]})  # not in zone z1
    # without --nfd no NFD label selects a node
    plain = _three_families()
    a2 = next(o for o in plain if o["kind"] == "DaemonSet" and o["metadata"]["name"] == "cannenv-doctor-a2")
    a2 = a2["spec"]["template"]["spec"]
    assert "pci-" not in json.dumps(a2["affinity"])
    proc = _cli(
        "fleet", "k8s-manifest", "--image", DIGEST_IMAGE, "--target", f"a2={_stack_of('a2')}",
        "--node-selector", "a3=pool=x", "--json",
    )  # fmt: skip
    assert proc.returncode == 2 and "no --target for a3" in proc.stderr


@pytest.mark.parametrize("path", ["/", "/etc", "/var/lib/kubelet", "/root/x", "/var/run/secrets/k", "/proc"])
def test_textfile_dir_is_refused_where_host_path_is(path: str) -> None:
    with pytest.raises(InputError, match="--textfile-dir"):
        render_manifest(DIGEST_IMAGE, stack_id=STACK, textfile_dir=path)
    with pytest.raises(InputError, match="--host-path"):
        render_manifest(DIGEST_IMAGE, stack_id=STACK, extra_host_paths=[path])


def test_site_packages_is_mounted_read_only_and_passed_to_the_agent() -> None:
    """A venv host (PEP 668): the agent reads the venv's packages, from a read-only mount of exactly
    that folder; the same folders are refused as for --host-path."""
    site = "/opt/cannenv-venv/lib/python3.11/site-packages"
    objects = render_manifest(DIGEST_IMAGE, stack_id=STACK, site_packages=[site])
    pod = next(o for o in objects if o["kind"] == "DaemonSet")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = container["args"]
    assert args[args.index("--site-packages") + 1] == site
    mount = next(m for m in container["volumeMounts"] if m["mountPath"] == f"/host{site}")
    assert mount["readOnly"] is True
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    assert volume["hostPath"] == {"path": site, "type": "Directory"}
    for path in ("/", "/etc", "/var/lib/kubelet"):
        with pytest.raises(InputError, match="--site-packages"):
            render_manifest(DIGEST_IMAGE, stack_id=STACK, site_packages=[path])
