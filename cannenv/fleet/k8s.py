"""Kubernetes: a DaemonSet that judges every Ascend node and labels it (docs/fleet.md, "Kubernetes").

``render_manifest`` (pure) returns the objects, built from ``templates/k8s-daemonset.yaml``:

* a ServiceAccount, a ClusterRole that may only PATCH nodes, and its binding;
* a ValidatingAdmissionPolicy (and its binding) that lets that account change only
  ``cannenv.io/`` labels and annotations, never a node's spec, and (where the token names it) only
  the node its pod runs on;
* a ConfigMap ``NAME-target`` with what every node is judged against: the lock file itself
  (``lock.json``), or a stack id and the matrix digest it was chosen from;
* the DaemonSet: on its family's nodes only (the Ascend device plugin's ``accelerator`` and
  ``accelerator-type`` labels, :func:`family_affinity`; NFD's per-device label only with ``nfd``; or
  the labels the user names), with only the tolerations asked for. Its container runs ``cannenv fleet
  k8s-agent`` directly (no shell) as ``nobody``, with no capability: it reads, under ``/host``
  (``--root /host``), only the node paths ``templates/k8s-host-paths.yaml`` lists, each mounted
  read-only (nothing there is run, no device node is opened), or, with ``device_resource``, asks
  the Ascend device plugin for devices. A readiness probe is true while the last judgement succeeded.

``name`` names the namespaced objects; cluster-wide ones are ``NAME.NAMESPACE``, so two manifests
(two targets, or one per namespace) never rewrite each other's binding or policy.

Each round the agent (:func:`judge_node`, then :func:`apply_labels`) patches its own node with

* labels ``cannenv.io/stack`` (the stack judged against), ``cannenv.io/status``
  (``compliant`` / ``drifting`` / ``failing``), ``cannenv.io/certificate`` (``sha256-`` + 40 hex
  digits of the certificate file, or ``none``), and the versions the device plugin does not label:
  ``cannenv.io/cann``, ``cannenv.io/nnal``, ``cannenv.io/torch-npu``, ``cannenv.io/ops-chips``;
* annotations ``cannenv.io/failing-checks`` (the ids of the checks that failed, comma-separated,
  or ``none``), ``cannenv.io/certificate-digest``, ``cannenv.io/role`` and ``cannenv.io/last-run``.

A node of another product family than its target's is not labelled by that agent (another
DaemonSet's target is for it). ``node_labels``/``label_patch`` (pure) compute the patch from a
doctor report; ``apply_labels`` is the one network call, to the API server from inside the pod
with the service-account token.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

from cannenv import values
from cannenv.errors import ExternalError, InputError

LABEL_PREFIX = "cannenv.io/"
STACK_LABELS = (("cann", "cann"), ("nnal", "nnal"), ("torch-npu", "torch_npu"))
"""``cannenv.io/<key>`` labels from the doctor report's host block: the versions the Ascend device
plugin does not label (it labels the driver: ``huawei.com/driver.version``)."""
NFD_ASCEND_LABEL = "feature.node.kubernetes.io/pci-1200_19e5.present"
"""What a default Node Feature Discovery sets on a node with a PCI device of class 12 (processing
accelerator) and vendor 0x19e5 (Huawei): ``deviceLabelFields: [class, vendor]``, research notes
vendor-2026-12.md §4.4. The default affinity also takes the vendor-only form and the device
plugin's ``accelerator`` label (templates/k8s-daemonset.yaml)."""
DEFAULT_NAME = "cannenv-doctor"
HOST_ROOT = "/host"
TARGET_DIR = "/etc/cannenv"
READY_FILE = "/run/cannenv/ready"
TEXTFILE_MOUNT = "/var/lib/cannenv/textfile"
MATRIX_SUBDIR = "matrix"
"""Where a site matrix given to ``k8s-manifest --matrix`` appears under TARGET_DIR in the pod."""
ROLES = ("full", "hdk")
"""``full``: the node carries the whole stack. ``hdk``: only driver and firmware (CANN and torch live
in the workloads' images): only what the node is meant to carry is judged."""
NOBODY = 65534
_FORBIDDEN_HOST_PATHS = re.compile(
    r"^/(etc|var|var/lib|var/run|run|root|home|proc|boot|sys)?/?$"
    r"|^/etc/(shadow|gshadow|sudoers|kubernetes|ssh|ssl/private|pki|containerd|docker|crio|cni)(/|-|$)"
    r"|^/var/lib/(kubelet|etcd|containerd|docker|containers|rancher)(/|$)"
    r"|^/(var/)?run/(secrets|containerd|docker|crio|k3s)(/|$)"
    r"|^/root(/|$)|^/proc(/|$)"
)
_LABEL_VALUE_BAD = re.compile(r"[^A-Za-z0-9._-]+")
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*\Z")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
_QUALIFIED = re.compile(
    r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z"
)
_TOLERATION = re.compile(
    r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)\Z"
)
_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
_SAFE_ARG = re.compile(r"^[A-Za-z0-9._/+:-]+\Z")


def label_value(text: str | None) -> str:
    """A valid label value (≤ 63 chars of [A-Za-z0-9._-], alphanumeric at both ends); ``none`` if empty."""
    if not text:
        return "none"
    value = _LABEL_VALUE_BAD.sub("-", text)[:63].strip("._-")
    return value or "none"


def parse_toleration(text: str) -> dict[str, str]:
    """``KEY[=VALUE]:EFFECT`` (as ``kubectl taint`` writes taints) as a toleration."""
    m = _TOLERATION.match(text)
    if not m or not _QUALIFIED.match(m["key"]):
        raise InputError(
            f"--toleration {text!r}: expected KEY[=VALUE]:EFFECT",
            hint="EFFECT is NoSchedule, PreferNoSchedule or NoExecute, e.g. huawei.com/npu=true:NoSchedule",
        )
    out = {"key": m["key"], "effect": m["effect"]}
    if m["value"] is None:
        out["operator"] = "Exists"
    else:
        out.update(operator="Equal", value=m["value"])
    return out


def host_paths(role: str = "full") -> list[dict[str, str]]:
    """The node paths the agent mounts read-only for ``role`` (``templates/k8s-host-paths.yaml``)."""
    import yaml

    if role not in ROLES:
        raise InputError(f"--role {role!r}: expected one of {', '.join(ROLES)}")
    text = importlib_resources.files("cannenv.fleet").joinpath("templates/k8s-host-paths.yaml").read_text()
    out = []
    for entry in yaml.safe_load(text):
        path, kind, roles = entry["path"], entry["type"], entry["roles"]
        # the shipped list obeys the rules --host-path is held to: a bug of ours otherwise
        assert (
            kind in ("Directory", "File") and _SAFE_ARG.match(path) and not _FORBIDDEN_HOST_PATHS.match(path)
        )
        assert set(roles) <= set(ROLES) and entry["why"], entry
        if role in roles:
            out.append({"path": path, "type": kind})
    return out


def _checked_host_path(path: str, what: str) -> str:
    if not path.startswith("/") or not _SAFE_ARG.match(path) or ".." in path.split("/"):
        raise InputError(f"{what} {path!r}: expected an absolute host path without '..'")
    path = "/" + path.strip("/")
    if _FORBIDDEN_HOST_PATHS.match(path):
        raise InputError(
            f"{what} {path!r}: the agent never mounts this "
            "(it holds credentials, secrets or the whole system)",
            hint="name the directory or file the probes need, e.g. /etc/Ascend or /opt/venv",
        )
    return path


def _agent_args(
    *,
    lock: bool,
    stack_id: str | None,
    matrix_digest: str | None,
    interval: int,
    prometheus: bool,
    certificate: str | None,
    role: str,
    site_packages: Sequence[str] = (),
) -> list[str]:
    args = ["--root", HOST_ROOT, "--node", "$(NODE_NAME)", "--interval", str(int(interval))]
    for folder in site_packages:
        args += ["--site-packages", folder]
    if lock:
        args += ["--lock", f"{TARGET_DIR}/lock.json"]
    else:
        args += ["--stack", str(stack_id)]
        if matrix_digest:
            args += ["--matrix-digest", matrix_digest]
    if role != "full":
        args += ["--role", role]
    args += ["--ready-file", READY_FILE]
    if prometheus:
        args += ["--prometheus", f"{TEXTFILE_MOUNT}/cannenv.prom"]
    if certificate:
        args += ["--certificate", f"{HOST_ROOT}{certificate}"]
    return args


def _volume_name(path: str) -> str:
    return ("host" + re.sub(r"[^a-z0-9]+", "-", path.lower())).strip("-")[:63].rstrip("-")


def render_manifest(
    image: str,
    *,
    stack_id: str | None = None,
    lock_text: str | None = None,
    matrix_digest: str | None = None,
    name: str = DEFAULT_NAME,
    namespace: str = "kube-system",
    interval: int = 3600,
    node_selector: Mapping[str, str] | None = None,
    tolerations: Sequence[str] = (),
    device_resource: str | None = None,
    textfile_dir: str | None = None,
    certificate: str | None = None,
    role: str = "full",
    extra_host_paths: Sequence[str] = (),
    extra_host_files: Sequence[str] = (),
    site_packages: Sequence[str] = (),
    run_as_user: int = NOBODY,
    supplemental_groups: Sequence[int] = (),
    matrix_files: Sequence[tuple[str, str]] = (),
    family: str | None = None,
    nfd: bool = False,
    family_selector: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """The Kubernetes objects, as plain dicts (dump them as YAML or JSON).

    ``family`` (the target stack's): the DaemonSet runs only on that family's nodes, told by the
    Ascend device plugin's labels (:func:`family_affinity`); ``nfd`` also accepts Node Feature
    Discovery's PCI device labels for it. ``family_selector`` (``--node-selector FAMILY=KEY=VALUE``)
    names that family's nodes instead of the device plugin's labels; ``node_selector`` narrows every
    family's nodes (both must match). Without ``family`` (a direct call) the vendor-wide default.

    Give the target as ``lock_text`` (a lock file's content, delivered in the ConfigMap) or as
    ``stack_id`` (with ``matrix_digest``: the agent refuses to judge against another matrix).
    ``device_resource`` (``NAME=COUNT``, e.g. ``huawei.com/Ascend910=1``) asks the device plugin
    for devices; ``textfile_dir`` (a host directory, node_exporter's textfile collector) gets
    ``cannenv.prom`` each round. ``extra_host_paths``/``extra_host_files``: more node directories /
    files to read (read-only), e.g. ``/etc/Ascend`` or a venv; never credentials or the whole system.
    ``matrix_files`` ((file name, text), in load order): a site matrix the agents judge with, sent in
    the ConfigMap and read from ``/etc/cannenv/matrix``. ``site_packages``: node folders the
    agent reads the Python packages from (a venv's ``lib/pythonX.Y/site-packages`` on hosts whose
    system Python is externally managed), each mounted read-only like ``extra_host_paths``.
    """
    import yaml

    if not _IMAGE_RE.match(image):
        raise InputError(
            f"--image {image!r} is not an image reference", hint="e.g. registry.example/cannenv-doctor:0.1.0"
        )
    if not _DNS_LABEL.match(name) or len(name) > 56:
        raise InputError(
            f"--name {name!r}: expected a DNS label of at most 56 characters (a-z, 0-9, -)",
            hint="e.g. cannenv-doctor-310p",
        )
    if not _DNS_LABEL.match(namespace):
        raise InputError(f"--namespace {namespace!r} is not a valid namespace name (RFC 1123 label)")
    if interval < 60:
        raise InputError(f"--interval {interval}: expected at least 60 seconds")
    if (lock_text is None) == (stack_id is None):
        raise InputError("give the target as --lock FILE or --stack ID (one of them)")
    if run_as_user < 0 or any(g < 0 for g in supplemental_groups):
        raise InputError("--run-as-user and --supplemental-group take numeric ids >= 0")
    for val, what in ((stack_id, "--stack"), (matrix_digest, "--matrix-digest")):
        if val is not None and not _SAFE_ARG.match(val):
            raise InputError(f"{what} {val!r}: only letters, digits and . _ / + - : are allowed here")
    if certificate is not None and (
        not certificate.startswith("/") or not _SAFE_ARG.match(certificate) or ".." in certificate
    ):
        raise InputError(f"--certificate {certificate!r}: expected an absolute host path without '..'")
    if textfile_dir is not None:
        # writable: held to the --host-path rules, and never created on the node
        textfile_dir = _checked_host_path(textfile_dir, "--textfile-dir")
    selector = dict(node_selector or {})
    own = dict(family_selector or {})
    for key, val in [*selector.items(), *own.items()]:
        if not _QUALIFIED.fullmatch(key):
            raise InputError(f"--node-selector {key!r}: not a label key")
        if not _LABEL_VALUE.fullmatch(val):
            raise InputError(
                f"--node-selector {key}={val!r}: not a label value",
                hint="Kubernetes label values are empty or at most 63 characters of [A-Za-z0-9._-], "
                "beginning and ending with a letter or digit",
            )
    mounts = host_paths(role)
    for extra, kind, what in [
        *((p, "Directory", "--host-path") for p in extra_host_paths),
        *((p, "Directory", "--site-packages") for p in site_packages),
        *((p, "File", "--host-file") for p in extra_host_files),
    ]:
        mounts.append({"path": _checked_host_path(extra, what), "type": kind})
    if certificate:
        cert_dir = _checked_host_path(str(Path(certificate).parent), "--certificate's directory")
        mounts.append({"path": cert_dir, "type": "Directory"})
    cluster_name = f"{name}.{namespace}"
    labels = {"app.kubernetes.io/name": "cannenv-doctor", "app.kubernetes.io/instance": name}
    text = importlib_resources.files("cannenv.fleet").joinpath("templates/k8s-daemonset.yaml").read_text()
    objects: list[dict[str, Any]] = yaml.safe_load(text)
    for obj in objects:
        meta = obj["metadata"]
        meta["labels"] = dict(labels)
        meta["name"] = cluster_name if "namespace" not in meta else meta["name"].replace("NAME", name)
        if "namespace" in meta:
            meta["namespace"] = namespace
        for subject in obj.get("subjects", ()):
            subject.update(name=name, namespace=namespace)
        if obj.get("roleRef"):
            obj["roleRef"]["name"] = cluster_name
    policy = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicy")
    agent = f"system:serviceaccount:{namespace}:{name}"  # both DNS labels: nothing to escape
    policy["spec"]["matchConditions"][0]["expression"] = f"request.userInfo.username == '{agent}'"
    binding = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding")
    binding["spec"]["policyName"] = cluster_name
    config = next(o for o in objects if o["kind"] == "ConfigMap")
    if lock_text is not None:
        config["data"] = {"lock.json": lock_text}
    else:
        config["data"] = {"stack": str(stack_id), "matrix-digest": matrix_digest or ""}
    projected = {key: key for key in config["data"]}
    for i, (file_name, text) in enumerate(matrix_files):
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\Z", file_name):
            raise InputError(f"--matrix file {file_name!r}: its name cannot be a ConfigMap key")
        key = f"matrix.{i:02d}.{file_name}"
        config["data"][key] = text
        projected[key] = f"{MATRIX_SUBDIR}/{i:02d}-{file_name}"
    if sum(len(v.encode()) for v in config["data"].values()) > 900 * 1024:
        raise InputError("the target and the site matrix exceed what one ConfigMap holds (1 MiB)")
    ds = next(o for o in objects if o["kind"] == "DaemonSet")
    ds["spec"]["selector"]["matchLabels"] = dict(labels)
    ds["spec"]["template"]["metadata"]["labels"] = dict(labels)
    pod = ds["spec"]["template"]["spec"]
    pod["serviceAccountName"] = name
    if own:  # the user names this family's nodes: the device plugin's labels are not asked
        del pod["affinity"]
    elif family is not None:
        terms = family_affinity(family, nfd=nfd)
        pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": terms
        }
    elif selector:  # no family: the user's labels replace the vendor-wide default
        del pod["affinity"]
    if selector or own:
        pod["nodeSelector"] = {**selector, **own}
    pod["tolerations"] = [parse_toleration(t) for t in tolerations]
    security = pod["securityContext"]
    security.update(runAsUser=run_as_user, runAsNonRoot=run_as_user != 0)
    if run_as_user == 0:
        security["runAsGroup"] = 0
    if supplemental_groups:
        security["supplementalGroups"] = sorted(set(supplemental_groups))
    container = pod["containers"][0]
    container["image"] = image
    container["args"] = _agent_args(
        lock=lock_text is not None,
        stack_id=stack_id,
        matrix_digest=matrix_digest,
        interval=interval,
        prometheus=textfile_dir is not None,
        certificate=certificate,
        role=role,
        site_packages=[_checked_host_path(p, "--site-packages") for p in site_packages],
    )
    if matrix_files:
        container["args"] += ["--matrix", f"{TARGET_DIR}/{MATRIX_SUBDIR}"]
    seen: set[str] = set()
    for m in mounts:
        if m["path"] in seen:
            continue
        seen.add(m["path"])
        vol = _volume_name(m["path"])
        container["volumeMounts"].append({"name": vol, "mountPath": HOST_ROOT + m["path"], "readOnly": True})
        pod["volumes"].append({"name": vol, "hostPath": {"path": m["path"], "type": m["type"]}})
    for v in pod["volumes"]:
        if v["name"] == "target":
            v["configMap"]["name"] = f"{name}-target"
            if matrix_files:
                v["configMap"]["items"] = [{"key": k, "path": path} for k, path in projected.items()]
    if device_resource:
        dev_name, sep, count = device_resource.partition("=")
        if (
            not sep
            or not _QUALIFIED.match(dev_name)
            or "/" not in dev_name
            or not count.isdecimal()
            or int(count) < 1
        ):
            raise InputError(
                f"--device-resource {device_resource!r}: expected NAME=COUNT, e.g. huawei.com/Ascend910=1"
            )
        container["resources"]["limits"][dev_name] = count
        container["resources"]["requests"][dev_name] = count
    if textfile_dir:
        container["volumeMounts"].append({"name": "textfile", "mountPath": TEXTFILE_MOUNT})
        pod["volumes"].append({"name": "textfile", "hostPath": {"path": textfile_dir, "type": "Directory"}})
    return objects


NFD_PCI_DEVICE_LABEL = "feature.node.kubernetes.io/pci-1200_19e5_{device}.present"
"""Node Feature Discovery's label for a PCI device of class 12 (processing accelerator), vendor
0x19e5 (Huawei) and device ``{device}`` when NFD is configured with ``deviceLabelFields: [class,
vendor, device]`` (its default labels class and vendor only, which cannot tell the families apart)."""


def family_affinity(family: str, *, nfd: bool = False) -> list[dict[str, Any]]:
    """``nodeSelectorTerms`` (ORed) that select this family's nodes only, from the Ascend device
    plugin's labels in the hardware table (``accelerator``, and ``accelerator-type`` where the
    ``accelerator`` value is shared: A2, A3 and the first 910 are all ``huawei-Ascend910``); with
    ``nfd`` also NFD's per-device PCI label (:data:`NFD_PCI_DEVICE_LABEL`). A family whose nodes no
    label tells is refused: name them with ``--node-selector FAMILY=KEY=VALUE``."""
    from cannenv.soc import hardware

    fam = next((f for f in hardware().families if f.id == family), None)
    terms: list[dict[str, Any]] = []
    if fam is not None and fam.accelerator:
        exprs: list[dict[str, Any]] = [{"key": "accelerator", "operator": "In", "values": [fam.accelerator]}]
        if fam.accelerator_types:
            exprs.append({"key": "accelerator-type", "operator": "In", "values": list(fam.accelerator_types)})
        terms.append({"matchExpressions": exprs})
    if nfd and fam is not None:
        for device in fam.pci_device_ids:
            label = NFD_PCI_DEVICE_LABEL.format(device=device.lower().removeprefix("0x"))
            terms.append({"matchExpressions": [{"key": label, "operator": "In", "values": ["true"]}]})
    if not terms:
        raise InputError(
            f"no node label tells the {family} nodes apart (the Ascend device plugin labels none"
            + ("" if nfd else "; --nfd adds Node Feature Discovery's PCI device labels")
            + ")",
            hint=f"label those nodes and name them: --node-selector {family}=KEY=VALUE",
        )
    return terms


DEFAULT_DOCTOR_BASE = "python:3.12-slim"
"""A tag, not a pin: give ``--base-image NAME@sha256:...`` for a reproducible image."""


def render_image_dockerfile(
    wheel_name: str, base_image: str = DEFAULT_DOCTOR_BASE, *, offline: bool = False
) -> str:
    """The Dockerfile of the doctor-only image (``templates/doctor.Dockerfile``).

    ``offline``: dependencies come only from the context's ``wheels/`` folder (pip ``--no-index``).
    """
    if not _IMAGE_RE.match(base_image):
        raise InputError(f"--base-image {base_image!r} is not an image reference")
    if not re.match(r"^cannenv-[A-Za-z0-9_.+-]+-py3-none-any\.whl\Z", wheel_name):
        raise InputError(
            f"{wheel_name!r} is not a cannenv wheel file name (cannenv-VERSION-py3-none-any.whl)"
        )
    text = importlib_resources.files("cannenv.fleet").joinpath("templates/doctor.Dockerfile").read_text()
    pip_source = "--no-index --find-links /tmp/wheels" if offline else "--find-links /tmp/wheels"
    return text.replace("@BASE@", base_image).replace("@WHEEL@", wheel_name).replace("@PIP@", pip_source)


def dump_manifest(objects: Sequence[Mapping[str, Any]]) -> str:
    import yaml

    return "---\n".join(yaml.safe_dump(dict(o), sort_keys=False, width=1000) for o in objects)


def node_labels(report: Mapping[str, Any], certificate_digest: str | None = None) -> dict[str, str]:
    """Labels for a node from its ``cannenv doctor --json`` report (a dict)."""
    from cannenv.fleet.report import node_status
    from cannenv.report import reboot_pending

    findings = _findings(report)
    stack = (report.get("stack") or {}).get("id")
    cert = "none"
    if certificate_digest:
        hexdigest = (
            certificate_digest[len("sha256:") :]
            if certificate_digest.startswith("sha256:")
            else certificate_digest
        )
        cert = f"sha256-{hexdigest[:40]}"
    host = report.get("host") or {}
    ops = host.get("ops_chips")
    return {
        f"{LABEL_PREFIX}stack": label_value(stack),
        f"{LABEL_PREFIX}status": node_status(findings),
        f"{LABEL_PREFIX}certificate": cert,
        # what the device plugin's labels lack (docs/multinode.md): the software stack's versions
        **{f"{LABEL_PREFIX}{key}": label_value(host.get(field)) for key, field in STACK_LABELS},
        f"{LABEL_PREFIX}ops-chips": label_value("_".join(ops) if isinstance(ops, list) else None),
        # the driver was replaced and the node has not restarted (the doctor's driver-loaded check):
        # true, false, or unknown when nothing told the loaded driver (never false for that)
        f"{LABEL_PREFIX}reboot-pending": reboot_pending(findings),
    }


def _findings(report: Mapping[str, Any]) -> list[Any]:
    from cannenv.report import Finding

    return [values.validate(Finding, f) for f in report.get("findings", ())]


def failing_checks(report: Mapping[str, Any]) -> list[str]:
    """Ids of the checks that failed (or errored) in a doctor report, sorted, once each."""
    return sorted({str(f["id"]) for f in report.get("findings", ()) if f.get("status") in ("fail", "error")})


def label_patch(
    labels: Mapping[str, str],
    certificate_digest: str | None = None,
    *,
    failing: Sequence[str] = (),
    last_run: str | None = None,
) -> dict[str, Any]:
    """The strategic-merge patch body for the node: labels plus annotations naming what failed."""
    annotations = {
        f"{LABEL_PREFIX}certificate-digest": certificate_digest or "none",
        f"{LABEL_PREFIX}failing-checks": ",".join(failing) or "none",
    }
    if last_run:
        annotations[f"{LABEL_PREFIX}last-run"] = last_run
    return {"metadata": {"labels": dict(labels), "annotations": annotations}}


NODE_AGENT_SKIPS = ("env-sourced", "env-stale", "env-mixed")
"""Checks of the judging process's own environment variables. In the agent's pod that environment is
the pod's, not the node's (a workload's image or shell sources set_env.sh), so judging it would mark
every healthy node failing; the agent leaves these to the doctor run inside the workloads."""


def judge_node(
    root: str,
    *,
    stack_id: str | None = None,
    lock: str | None = None,
    matrix_digest: str | None = None,
    certificate: str | None = None,
    now: float | None = None,
    role: str = "full",
    driver_policy: str = "accepted",
    matrix_paths: Sequence[str] = (),
    site_packages: Sequence[str] = (),
) -> tuple[Any, dict[str, Any] | None]:
    """One round of the agent: gather the node under ``root``, judge it, and the patch to apply.

    Returns (the doctor :class:`~cannenv.report.Report`, the patch). The patch is None when the
    node is of another product family than the target's: another DaemonSet's target is for it, and
    labelling it here would overwrite that one's labels. Raises a CannenvError when it cannot judge
    (no such lock, another matrix than the one named): the agent then reports not-ready and
    patches nothing. ``role`` ``hdk``: the node carries only driver and firmware
    (:attr:`cannenv.checks.Target.no_software`). ``site_packages``: the node's Python packages are
    read from these folders (paths on the node, e.g. a venv's) instead of the system interpreter's.
    """
    import datetime
    import time

    from cannenv import __version__, checks
    from cannenv import matrix as matrix_mod
    from cannenv.checks.stack import choose_target, host_summary
    from cannenv.fsutil import sha256_file
    from cannenv.gather import gather
    from cannenv.report import Report

    matrix = matrix_mod.load(list(matrix_paths) or None)
    if matrix_digest and matrix.digest != matrix_digest:
        raise InputError(
            f"the target names matrix {matrix_digest}, this cannenv carries {matrix.digest}",
            hint="render the manifest with the cannenv of the image (`cannenv fleet k8s-manifest`), "
            "or build the image from the cannenv that rendered it",
        )
    if role not in ROLES:
        raise InputError(f"--role {role!r}: expected one of {', '.join(ROLES)}")
    facts = gather(root, None, None, tuple(site_packages), None, 10.0)
    target = choose_target(facts, matrix, stack_id=stack_id, lock=lock, driver_policy=driver_policy)
    if role == "hdk":
        target = dataclasses.replace(target, no_software=checks.HDK_ONLY)
    node_checks = tuple(c for c in checks.all_checks() if c.id not in NODE_AGENT_SKIPS)
    findings = checks.run(facts, target, node_checks)
    report = Report.build(
        findings, host=host_summary(facts), stack=target.choice, cannenv_version=__version__
    )
    node_family = facts.devices.family
    if node_family and target.stack is not None and target.stack.family != node_family:
        return report, None
    data = values.dump(report)
    digest = None
    if certificate and Path(certificate).is_file():
        digest = "sha256:" + sha256_file(certificate)
    stamp = datetime.datetime.fromtimestamp(time.time() if now is None else now, datetime.timezone.utc)
    patch = label_patch(
        node_labels(data, digest),
        digest,
        failing=failing_checks(data),
        last_run=stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    patch["metadata"]["annotations"][f"{LABEL_PREFIX}role"] = role
    return report, patch


def apply_labels(
    node: str,
    patch: Mapping[str, Any],
    *,
    api: str | None = None,
    token: str | None = None,
    timeout: float = 30,
) -> None:
    """PATCH the node through the API server, authenticated with the pod's service account."""
    import os
    import ssl
    import urllib.error
    import urllib.parse
    import urllib.request

    if not _DNS_LABEL.match(node) and not re.match(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\Z", node):
        raise InputError(f"--node {node!r} is not a node name")
    context: ssl.SSLContext | None = None
    if api is None:
        host, port = (
            os.environ.get("KUBERNETES_SERVICE_HOST"),
            os.environ.get("KUBERNETES_SERVICE_PORT", "443"),
        )
        if not host:
            raise InputError(
                "not inside a Kubernetes pod (KUBERNETES_SERVICE_HOST is unset)",
                hint="k8s-label runs in the DaemonSet; elsewhere pass --api URL and --token-file",
            )
        api = f"https://{host}:{port}"
        context = ssl.create_default_context(cafile=str(_SA_DIR / "ca.crt"))
    if token is None:
        token = (_SA_DIR / "token").read_text().strip()
    url = f"{api.rstrip('/')}/api/v1/nodes/{urllib.parse.quote(node)}"
    req = urllib.request.Request(
        url,
        data=json.dumps(patch).encode(),
        method="PATCH",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/strategic-merge-patch+json",
        },
    )

    def call() -> None:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            _read_bounded(resp, url)

    try:
        _within(timeout, call, f"PATCH {url}")
    except urllib.error.HTTPError as exc:
        raise ExternalError(
            f"PATCH {url}: HTTP {exc.code} {exc.reason}", hint="check the ClusterRole"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise ExternalError(f"PATCH {url}: {exc}") from None


MAX_API_REPLY = 1 << 20
"""The most bytes of an API server's reply read (a node object is a few KB)."""


def _read_bounded(resp: Any, url: str) -> bytes:
    """The reply body, at most :data:`MAX_API_REPLY` bytes (an endless body is an ExternalError)."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = resp.read1(64 << 10)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_API_REPLY:
            raise ExternalError(
                f"PATCH {url}: the reply is larger than {MAX_API_REPLY} bytes; not read further"
            )
        chunks.append(chunk)


def _within(seconds: float, fn: Callable[[], None], what: str) -> None:
    """Run ``fn`` with a deadline on the whole of it: a server that answers one byte a second never
    trips a per-read socket timeout, so the request runs in a daemon thread that is abandoned
    (ExternalError) once ``seconds`` pass. Exceptions of ``fn`` are raised here."""
    import threading

    outcome: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=run, name="cannenv-api-request", daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise ExternalError(f"{what}: no complete reply within {seconds:g} s (the request is abandoned)")
    if outcome:
        raise outcome[0]
