"""Judging a built image: the doctor's report from inside it (:func:`judge_verify`), and what the
image records — its architecture, labels, ``/etc/cannenv/image.json`` and SBOM — against each other
and against a lock (:func:`judge_record`). Pure: the command gathers, these judge."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cannenv.image.spec import OCI_ARCH

if TYPE_CHECKING:
    from cannenv.lock import Lock


@dataclass(frozen=True)
class VerifyOutcome:
    ok: bool
    problems: tuple[str, ...]
    software: tuple[tuple[str, str], ...]  # (check id, status)
    device: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = ()


def _nnal_absent(finding: Mapping[str, Any], report: Mapping[str, Any]) -> bool:
    """Whether ``finding`` only says that NNAL, which the image leaves out by design, is not there:
    nnal-cann's one finding without a subject (NNAL absent) and stack-match's line for nnal, on a
    host where the doctor found no NNAL. Anything about an NNAL that is there is judged as usual."""
    host = report.get("host")
    if not isinstance(host, Mapping) or host.get("nnal") is not None:
        return False
    fid, subject = finding.get("id"), finding.get("subject")
    return (fid == "nnal-cann" and not subject) or (fid == "stack-match" and subject == "nnal")


def is_device_finding(finding: Mapping[str, Any]) -> bool:
    """The doctor marks findings about the NPU, its driver/firmware and their mounts ``scope: device``."""
    return finding.get("scope") == "device"


def judge_verify(report: Mapping[str, Any], *, without_nnal: bool = False) -> VerifyOutcome:
    """Judge ``cannenv doctor --json`` run inside an image with no devices.

    Software checks must not fail (``fail``/``error``); device checks must be ``skip`` — a device
    ``pass`` inside a device-less container would be a false pass, a ``fail`` a false alarm.
    ``without_nnal``: the image leaves its stack's NNAL out by design (built without ``--with-nnal``);
    the doctor's findings that NNAL is missing are noted, not failed.
    """
    findings = report.get("findings")
    if not isinstance(findings, list):
        return VerifyOutcome(False, ("the doctor's JSON has no findings list",), (), ())
    problems: list[str] = []
    notes: list[str] = []
    software: list[tuple[str, str]] = []
    device: list[tuple[str, str]] = []
    for f in findings:
        if not isinstance(f, Mapping):
            continue
        fid, status = str(f.get("id", "?")), str(f.get("status", "?"))
        label = fid + (f" [{f['subject']}]" if f.get("subject") else "")
        if without_nnal and _nnal_absent(f, report):
            software.append((fid, status))
            if status in ("fail", "error", "warn"):
                notes.append(f"{label} reported {status!r}, not counted: the image leaves NNAL out by design")
        elif is_device_finding(f):
            device.append((fid, status))
            if status != "skip":
                problems.append(
                    f"device check {label} reported {status!r} in an image with no devices "
                    f"(expected 'skip'): {f.get('detail', '')}"
                )
        else:
            software.append((fid, status))
            if status in ("fail", "error"):
                problems.append(f"software check {label} reported {status!r}: {f.get('detail', '')}")
    if not software:
        problems.append("the doctor reported no software checks")
    return VerifyOutcome(not problems, tuple(problems), tuple(software), tuple(device), tuple(notes))


@dataclass(frozen=True)
class ImageRecord:
    """What an image says about itself, gathered by ``image verify``."""

    ref: str
    image_id: str
    architecture: str  # the image config's (amd64, arm64)
    labels: Mapping[str, str]
    image_info: Mapping[str, Any] | None  # /etc/cannenv/image.json
    sbom_text: str | None  # the file the cannenv.sbom label names
    repo_digests: tuple[str, ...] = ()


def judge_record(record: ImageRecord, lock: Lock | None = None) -> list[str]:
    """Problems with what the image records: each must agree with the others and with ``lock``."""
    from cannenv.gate import LABEL_DRIVER_RANGE, LABEL_STACK

    problems: list[str] = []
    labels = record.labels
    arch = labels.get("cannenv.arch")
    if arch and OCI_ARCH.get(arch, arch) != record.architecture:
        problems.append(
            f"architecture: the image is {record.architecture}, but its label cannenv.arch says {arch} "
            f"({OCI_ARCH.get(arch, arch)})"
        )
    info = record.image_info
    if info is None:
        problems.append("/etc/cannenv/image.json is missing or not JSON")
    else:
        raw_labels = info.get("labels")
        info_labels: Mapping[str, Any] = raw_labels if isinstance(raw_labels, Mapping) else {}
        # every label cannenv wrote must be in the image as recorded (a base image's own labels,
        # e.g. Ubuntu's org.opencontainers.image.ref.name, are not ours to judge)
        ours = set(info_labels) | {k for k in labels if k.startswith("cannenv.")}
        for key in sorted(ours):
            if labels.get(key) != info_labels.get(key):
                problems.append(
                    f"label {key}={labels.get(key)!r}, but image.json records {info_labels.get(key)!r}"
                )
        for inst in info.get("installers") or []:
            if isinstance(inst, Mapping) and not inst.get("sha256"):
                problems.append(f"image.json records no sha256 for the installer {inst.get('file')}")
        sbom_sha = info.get("sbom_sha256")
        if record.sbom_text is not None and sbom_sha:  # noqa: SIM102
            if hashlib.sha256(record.sbom_text.encode()).hexdigest() != sbom_sha:
                problems.append("the SBOM in the image is not the one image.json records (sha256 differs)")
    if labels.get("cannenv.sbom") and record.sbom_text is None:
        problems.append(f"the SBOM {labels['cannenv.sbom']} named by the label cannenv.sbom is missing")
    if lock is None:
        return problems
    want = {
        LABEL_STACK: lock.stack_id,
        "cannenv.matrix-digest": lock.matrix_digest,
        LABEL_DRIVER_RANGE: lock.driver_range,
    }
    if lock.arch:
        want["cannenv.arch"] = lock.arch
    if lock.user:
        want["cannenv.user"] = lock.user
    for inst in lock.installers:
        want[f"cannenv.installer.{inst.component}"] = inst.file
    for key, value in want.items():
        if labels.get(key) != value:
            problems.append(f"label {key}: the lock says {value!r}, the image says {labels.get(key)!r}")
    if lock.image_id and lock.image_id != record.image_id:
        problems.append(f"image id: the lock says {lock.image_id}, the image is {record.image_id}")
    if lock.image_digest:
        digest = lock.image_digest.split("@", 1)[-1]
        if record.repo_digests and not any(d.endswith("@" + digest) for d in record.repo_digests):
            problems.append(
                f"registry digest: the lock says {lock.image_digest}, "
                f"the image has {', '.join(record.repo_digests)}"
            )
    if info is not None:
        locked = {(i.component, i.file, i.sha256) for i in lock.installers}
        recorded = {
            (str(i.get("component")), str(i.get("file")), str(i.get("sha256")))
            for i in info.get("installers") or []
            if isinstance(i, Mapping)
        }
        for c, f, s in sorted(locked - recorded):
            problems.append(f"installer {f} ({c}): the lock says sha256 {s}, image.json records otherwise")
        locked_py = {(r.name, r.version, tuple(r.hashes)) for r in lock.python_requirements}
        recorded_py = {
            (str(r.get("name")), str(r.get("version")), tuple(r.get("hashes") or ()))
            for r in info.get("python_requirements") or []
            if isinstance(r, Mapping)
        }
        for n, v, _ in sorted(locked_py - recorded_py):
            problems.append(f"python {n} {v}: the lock's hashes are not what image.json records")
        if info.get("base_image") != lock.base_image:
            problems.append(
                f"base image: the lock says {lock.base_image}, image.json says {info.get('base_image')}"
            )
    if record.sbom_text is not None:
        from cannenv.image.sbom import inputs_from_lock, sbom_json

        if sbom_json(inputs_from_lock(lock)) != record.sbom_text:
            problems.append(
                "the SBOM in the image differs from the SBOM of the lock (`cannenv image sbom LOCK`)"
            )
    return problems


def parse_image_info(text: str | None) -> Mapping[str, Any] | None:
    if text is None:
        return None
    from cannenv import records
    from cannenv.errors import InputError

    try:
        data = records.parse_json(text, source="image info")
    except InputError:
        return None
    return data if isinstance(data, Mapping) else None
