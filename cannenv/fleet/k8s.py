"""Kubernetes: a DaemonSet that runs ``cannenv doctor --json`` on every Ascend node and labels it.

``render_manifest`` (pure) returns the objects — ServiceAccount, ClusterRole (nodes get/patch),
ClusterRoleBinding, DaemonSet — built from ``templates/k8s-daemonset.yaml`` with the device nodes
and driver mounts of research §6.3 (``/dev/davinciN``, ``davinci_manager``, ``devmm_svm``,
``hisi_hdc``, driver ``lib64``, ``version.info``, ``/usr/local/dcmi``, ``npu-smi``,
``/etc/ascend_install.info``). Each pod loops: doctor, then ``cannenv fleet k8s-label`` patches its
own node with

* ``cannenv.io/stack``: the stack the node was judged against;
* ``cannenv.io/status``: ``compliant`` / ``drifting`` / ``failing``;
* ``cannenv.io/certificate``: ``sha256-`` + the first 40 hex digits of the certificate file's sha256
  (label values are at most 63 characters; the full digest goes into the annotation
  ``cannenv.io/certificate-digest``), or ``none``.

``node_labels`` (pure) computes them from a doctor report; ``apply_labels`` is the one network call,
to the API server from inside the pod with the service-account token (standard library only).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

from cannenv import values
from cannenv.errors import ExternalError, InputError

LABEL_PREFIX = "cannenv.io/"
_LABEL_VALUE_BAD = re.compile(r"[^A-Za-z0-9._-]+")
_IMAGE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_SA_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def label_value(text: str | None) -> str:
    """A valid label value (≤ 63 chars of [A-Za-z0-9._-], alphanumeric at both ends); ``none`` if empty."""
    if not text:
        return "none"
    value = _LABEL_VALUE_BAD.sub("-", text)[:63].strip("._-")
    return value or "none"


def _script(stack_id: str | None, lock: str | None, interval: int, certificate: str | None) -> str:
    doctor = ["cannenv", "doctor", "--json"]
    if stack_id:
        doctor += ["--stack", stack_id]
    if lock:
        doctor += ["--lock", lock]
    label = ["cannenv", "fleet", "k8s-label", "--report", "/tmp/doctor.json", "--node", '"$NODE_NAME"']
    if certificate:
        label += ["--certificate", certificate]
    return (
        "while true; do\n"
        f"  {' '.join(doctor)} > /tmp/doctor.json\n"
        f"  {' '.join(label)} || echo 'cannenv: labelling failed' >&2\n"
        f"  sleep {int(interval)}\n"
        "done\n"
    )


def render_manifest(
    image: str,
    *,
    stack_id: str | None = None,
    lock: str | None = None,
    namespace: str = "kube-system",
    devices: int = 8,
    interval: int = 3600,
    node_selector: Mapping[str, str] | None = None,
    certificate: str | None = None,
) -> list[dict[str, Any]]:
    """The Kubernetes objects, as plain dicts (dump them as YAML or JSON)."""
    import yaml

    if not _IMAGE_RE.match(image):
        raise InputError(
            f"--image {image!r} is not an image reference", hint="e.g. registry.example/cannenv:0.1.0"
        )
    if not _DNS_LABEL.match(namespace):
        raise InputError(f"--namespace {namespace!r} is not a valid namespace name (RFC 1123 label)")
    if not 0 <= devices <= 64:
        raise InputError(f"--devices {devices}: expected 0..64 (one /dev/davinciN per NPU)")
    if interval < 60:
        raise InputError(f"--interval {interval}: expected at least 60 seconds")
    for value, what in ((stack_id, "--stack"), (lock, "--lock"), (certificate, "--certificate")):
        if value is not None and not re.match(r"^[A-Za-z0-9._/+-]+$", value):
            raise InputError(f"{what} {value!r}: only letters, digits and . _ / + - are allowed here")
    text = importlib_resources.files("cannenv.fleet").joinpath("templates/k8s-daemonset.yaml").read_text()
    objects: list[dict[str, Any]] = yaml.safe_load(text)
    for obj in objects:
        if "namespace" in obj["metadata"]:
            obj["metadata"]["namespace"] = namespace
        for subject in obj.get("subjects", ()):
            subject["namespace"] = namespace
    ds = next(o for o in objects if o["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    container = pod["containers"][0]
    container["image"] = image
    container["args"] = [_script(stack_id, lock, interval, certificate)]
    for n in range(devices):
        name = f"davinci{n}"
        container["volumeMounts"].append({"name": name, "mountPath": f"/dev/{name}"})
        pod["volumes"].append({"name": name, "hostPath": {"path": f"/dev/{name}", "type": "CharDevice"}})
    if certificate:
        container["volumeMounts"].append({"name": "certificate", "mountPath": certificate, "readOnly": True})
        pod["volumes"].append({"name": "certificate", "hostPath": {"path": certificate, "type": "File"}})
    if node_selector:
        pod["nodeSelector"] = dict(node_selector)
    return objects


def dump_manifest(objects: Sequence[Mapping[str, Any]]) -> str:
    import yaml

    return "---\n".join(yaml.safe_dump(dict(o), sort_keys=False, width=1000) for o in objects)


def node_labels(report: Mapping[str, Any], certificate_digest: str | None = None) -> dict[str, str]:
    """Labels for a node from its ``cannenv doctor --json`` report (a dict)."""
    from cannenv.fleet.report import node_status
    from cannenv.report import Finding

    findings = [values.validate(Finding, f) for f in report.get("findings", ())]
    stack = (report.get("stack") or {}).get("id")
    cert = "none"
    if certificate_digest:
        hexdigest = certificate_digest.removeprefix("sha256:")
        cert = f"sha256-{hexdigest[:40]}"
    return {
        f"{LABEL_PREFIX}stack": label_value(stack),
        f"{LABEL_PREFIX}status": node_status(findings),
        f"{LABEL_PREFIX}certificate": cert,
    }


def label_patch(labels: Mapping[str, str], certificate_digest: str | None = None) -> dict[str, Any]:
    """The strategic-merge patch body for the node."""
    annotations = {f"{LABEL_PREFIX}certificate-digest": certificate_digest or "none"}
    return {"metadata": {"labels": dict(labels), "annotations": annotations}}


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

    if not _DNS_LABEL.match(node) and not re.match(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", node):
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
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp:
            resp.read()
    except urllib.error.HTTPError as exc:
        raise ExternalError(
            f"PATCH {url}: HTTP {exc.code} {exc.reason}", hint="check the ClusterRole"
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        raise ExternalError(f"PATCH {url}: {exc}") from None
