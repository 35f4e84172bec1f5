"""Images for matrix stacks: render a build context (pure), build it, lock it, verify it.

The package follows the flow ``matrix.stack(ID) -> spec -> render -> engine.build -> lock``:

* :mod:`~cannenv.image.spec`: what an image is built from, OS profiles, input validation;
* :mod:`~cannenv.image.python`: wheels, wheelhouses, CANN's Python dependencies, install layers;
* :mod:`~cannenv.image.render`: the Dockerfile and the files beside it (deterministic);
* :mod:`~cannenv.image.sbom`: the CycloneDX SBOM made from the lock;
* :mod:`~cannenv.image.contract`: the lock record of a build and how two records differ;
* :mod:`~cannenv.image.verify`: judging a built image (doctor report, records, lock);
* :mod:`~cannenv.image.runargs`: the ``docker run`` flags of an NPU host.
"""

from __future__ import annotations

from cannenv.image.contract import differences, lock_for
from cannenv.image.python import (
    PythonGroup,
    cann_python_pins,
    python_groups,
    scan_wheelhouse,
    wheel_from_file,
)
from cannenv.image.render import (
    LABEL_MATRIX_DIGEST,
    LABEL_SBOM,
    SBOM_PATH,
    BuildContext,
    RenderOptions,
    cann_environment,
    image_labels,
    render,
    resolve_base_image,
)
from cannenv.image.runargs import parse_devices, run_args
from cannenv.image.spec import (
    COMPONENT_ORDER,
    ImageSpec,
    InstallerRef,
    VerifiedInstaller,
    Wheel,
    check_image_ref,
    layout,
    os_profiles,
    spec_from_stack,
    validate_spec,
)
from cannenv.image.verify import VerifyOutcome, is_device_finding, judge_record, judge_verify

__all__ = [
    "COMPONENT_ORDER",
    "LABEL_MATRIX_DIGEST",
    "LABEL_SBOM",
    "SBOM_PATH",
    "BuildContext",
    "ImageSpec",
    "InstallerRef",
    "PythonGroup",
    "RenderOptions",
    "VerifiedInstaller",
    "VerifyOutcome",
    "Wheel",
    "cann_environment",
    "cann_python_pins",
    "check_image_ref",
    "differences",
    "image_labels",
    "is_device_finding",
    "judge_record",
    "judge_verify",
    "layout",
    "lock_for",
    "os_profiles",
    "parse_devices",
    "python_groups",
    "render",
    "resolve_base_image",
    "run_args",
    "scan_wheelhouse",
    "spec_from_stack",
    "validate_spec",
    "wheel_from_file",
]
