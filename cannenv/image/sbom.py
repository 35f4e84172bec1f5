"""The image's software bill of materials: a CycloneDX 1.6 JSON document made from the lock.

It lists the base image (with its registry digest), every CANN installer that went in (vendor file
name, version, sha256, download URL where the matrix knows it) and every Python distribution (with
the hashes pip enforced, or none when installed from an index by version pin). The document is
built with the CycloneDX project's own library (``cyclonedx-python-lib``) and is deterministic:
its serial number is derived from its content and it carries no time stamp, so the SBOM baked into
an image at ``/etc/cannenv/sbom.cdx.json`` equals ``cannenv image sbom LOCK`` byte for byte.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cannenv.errors import MissingToolError

if TYPE_CHECKING:
    from cannenv.lock import Lock, LockedInstaller, LockedRequirement

SPEC_VERSION = "1.6"
_NAMESPACE = uuid.UUID("6d1f5a52-0f3e-4b1e-9a0c-63616e6e656e")  # fixed: serial numbers from content


@dataclass(frozen=True)
class SbomInputs:
    stack_id: str
    matrix_digest: str
    cannenv_version: str
    arch: str
    base_image: str
    base_image_digest: str | None
    installers: tuple[LockedInstaller, ...]
    python_requirements: tuple[LockedRequirement, ...]


def inputs_from_lock(lock: Lock) -> SbomInputs:
    return SbomInputs(
        stack_id=lock.stack_id,
        matrix_digest=lock.matrix_digest,
        cannenv_version=lock.cannenv_version,
        arch=lock.arch or "x86_64",
        base_image=lock.base_image,
        base_image_digest=lock.base_image_digest,
        installers=lock.installers,
        python_requirements=lock.python_requirements,
    )


def _lib() -> object:
    try:
        import cyclonedx.model  # noqa: F401
    except ImportError:  # pragma: no cover - a dependency
        raise MissingToolError(
            "the CycloneDX library is not installed", hint="pip install 'cyclonedx-python-lib>=8'"
        ) from None
    return None


def sbom_json(inputs: SbomInputs) -> str:
    """The CycloneDX JSON text (sorted keys, two-space indent, trailing newline)."""
    _lib()
    from cyclonedx.model import (
        ExternalReference,
        ExternalReferenceType,
        HashAlgorithm,
        HashType,
        Property,
        XsUri,
    )
    from cyclonedx.model.bom import Bom, BomMetaData
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.output.json import JsonV1Dot6
    from packageurl import PackageURL

    components = []
    base_name, _, digest = inputs.base_image.partition("@")
    base_digest = digest or inputs.base_image_digest
    repo = base_name.rsplit(":", 1)[0] if ":" in base_name.split("/")[-1] else base_name
    components.append(
        Component(
            name=repo,
            version=base_digest or base_name.rpartition(":")[2] or "latest",
            type=ComponentType.CONTAINER,
            bom_ref="base-image",
            hashes=[HashType(alg=HashAlgorithm.SHA_256, content=base_digest.removeprefix("sha256:"))]
            if base_digest
            else None,
            properties=[Property(name="cannenv:base-image", value=inputs.base_image)]
            + ([] if base_digest else [Property(name="cannenv:pinned", value="false (a tag, not a digest)")]),
        )
    )
    for inst in inputs.installers:
        refs = []
        if inst.url:
            refs.append(ExternalReference(type=ExternalReferenceType.DISTRIBUTION, url=XsUri(inst.url)))
        components.append(
            Component(
                name=inst.file,
                version=inst.version,
                group="huawei-ascend",
                type=ComponentType.APPLICATION,
                bom_ref=f"cann-{inst.component}",
                supplier=None,
                description=f"CANN {inst.component} installer (vendor .run file)",
                hashes=[HashType(alg=HashAlgorithm.SHA_256, content=inst.sha256)],
                external_references=refs or None,
                properties=[
                    Property(name="cannenv:component", value=inst.component),
                    Property(name="cannenv:pinned-in-matrix", value=str(inst.pinned).lower()),
                ]
                + [  # the vendor's .zip download it was taken from, verified against the vendor's digest
                    Property(name=f"cannenv:vendor-archive{suffix}", value=value)
                    for suffix, value in (
                        ("", inst.archive),
                        ("-sha256", inst.archive_sha256),
                        ("-source", inst.archive_source),
                    )
                    if value
                ],
            )
        )
    for req in inputs.python_requirements:
        hashes = [HashType(alg=HashAlgorithm.SHA_256, content=h.removeprefix("sha256:")) for h in req.hashes]
        components.append(
            Component(
                name=req.name,
                version=req.version or None,
                type=ComponentType.LIBRARY,
                bom_ref=f"pypi-{req.name}",
                purl=PackageURL(type="pypi", name=req.name, version=req.version or None),
                hashes=hashes or None,
                properties=[Property(name="cannenv:source", value=req.source)]
                + ([] if req.version else [Property(name="cannenv:pinned", value="false (no version pin)")]),
            )
        )
    subject = Component(
        name=f"cannenv-stack-{inputs.stack_id}",
        version=inputs.stack_id,
        type=ComponentType.CONTAINER,
        bom_ref="image",
        properties=[
            Property(name="cannenv:stack", value=inputs.stack_id),
            Property(name="cannenv:matrix-digest", value=inputs.matrix_digest),
            Property(name="cannenv:arch", value=inputs.arch),
            Property(name="cannenv:version", value=inputs.cannenv_version),
        ],
    )
    bom = Bom(components=components, metadata=BomMetaData(component=subject))
    bom.register_dependency(subject, components)
    data = json.loads(JsonV1Dot6(bom).output_as_string())
    # Deterministic: no time stamp (optional in the schema), a serial number derived from content.
    data.get("metadata", {}).pop("timestamp", None)
    data.pop("serialNumber", None)
    body = json.dumps(data, sort_keys=True)
    data["serialNumber"] = uuid.uuid5(_NAMESPACE, body).urn
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def validate(text: str) -> list[str]:
    """Problems found validating ``text`` against the official CycloneDX JSON schema (shipped with the
    library); empty when valid."""
    _lib()
    from cyclonedx.exception import MissingOptionalDependencyException
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator

    try:
        error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    except MissingOptionalDependencyException as exc:
        raise MissingToolError(
            f"validating an SBOM needs the CycloneDX library's JSON validation: {exc}",
            hint="pip install 'cyclonedx-python-lib[json-validation]'",
        ) from None
    return [] if error is None else [str(error)]
