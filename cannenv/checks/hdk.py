"""Driver and firmware (Ascend HDK) checks: installed, new enough for the CANN, firmware paired."""

from __future__ import annotations

from cannenv.checks import Check, Target
from cannenv.checks._util import cann_v, cite, driver_v, family_title
from cannenv.errors import CannenvError
from cannenv.facts import Facts
from cannenv.report import Finding


def _driver_installed(facts: Facts, target: Target) -> list[Finding]:
    c = DRIVER_INSTALLED
    drv = facts.driver
    if drv is None:
        if facts.container.in_container:
            return [
                c.finding(
                    "fail",
                    "/usr/local/Ascend/driver/version.info is missing inside the container; the driver comes from the host",  # noqa: E501
                    "add -v /usr/local/Ascend/driver/lib64/:/usr/local/Ascend/driver/lib64/ "
                    "-v /usr/local/Ascend/driver/version.info:/usr/local/Ascend/driver/version.info to `docker run`",  # noqa: E501
                    caused_by="container-mounts",
                )
            ]
        # A host with no Ascend software and no NPU at all never gets here: checks.run skips it.
        return [
            c.finding(
                "fail",
                "no NPU driver: /usr/local/Ascend/driver/version.info does not exist",
                "install the Ascend HDK driver and firmware matching your CANN: "
                "`sh Ascend-hdk-<chip>-npu-driver_<ver>_linux-<arch>.run --full --install-for-all`, then the firmware "  # noqa: E501
                "`sh Ascend-hdk-<chip>-npu-firmware_<ver>.run --full`",
            )
        ]
    if drv.version is None:
        return [
            c.finding(
                "error", f"{drv.path} exists but gives no driver version (see probe-files)", subject=drv.path
            )
        ]
    if driver_v(drv.version) is None:
        # a version that is not one (``99.9.9 garbage``) says nothing about the driver: never a pass
        return [
            c.finding(
                "error",
                f"{drv.path}: {drv.version[:80]!r} is not a driver version (see probe-files for the line)",
                "re-create the file with its installer (reinstall the Ascend HDK driver)",
                subject=drv.path,
            )
        ]
    return [c.finding("pass", f"driver {drv.version} ({drv.path})")]


def _driver_cann(facts: Facts, target: Target) -> list[Finding]:
    c = DRIVER_CANN
    drv = facts.driver.version if facts.driver else None
    inst = facts.cann.active_install()
    images_cann = target.stack.version("cann") if target.no_software and target.stack else None
    if drv is not None and images_cann:
        # a node that carries only the HDK: its driver serves the target stack's CANN (in the images)
        return _driver_cann_in_images(facts, target, drv, images_cann)
    if drv is None or inst is None or inst.version is None:
        cause = "driver-installed" if drv is None else "cann-installs" if inst is None else None
        return [
            c.finding(
                "skip", "needs both a readable driver version and an active CANN toolkit", caused_by=cause
            )
        ]
    cann = inst.version
    family = target.family
    out: list[Finding] = []
    req = None
    # the host's product (never the target stack's: a stack for the Atlas 350 does not make this host one)
    product = facts.devices.product if facts.devices.family == family else None
    candidates = facts.devices.product_candidates if facts.devices.family == family else ()
    if target.matrix is not None and family is not None and cann_v(cann) is not None:
        req = target.matrix.driver_requirement(cann, family, product)
    if req is not None and target.matrix is not None and family is not None and driver_v(drv) is not None:
        # The vendor's own statements decide (matrix.hdk_verdict): the release's HDK -> pass; a named
        # compatibility statement -> pass naming it; a stated "not compatible" -> fail; nothing -> warn.
        # Where HDKs are numbered per product, the product's statements (unknown product: each named).
        # A host that narrows its product to several candidates is judged for each (unknown where
        # their answers differ), so a product's own minima are never skipped by a guess.
        v = target.matrix.hdk_verdict(cann, drv, family, product, candidates)
        where = f"CANN {cann} on {family_title(family)}"
        if product:
            where += (
                f" ({target.matrix.product(product).title}, {facts.devices.product_source or 'the stack'})"
            )
        elif candidates:
            where += (
                " (product unknown within the family: "
                + (f"{facts.devices.product_source} " if facts.devices.product_source else "")
                + "could be "
                + ", ".join(target.matrix.product(c).title for c in candidates)
                + ")"
            )
        srcs = f" ({cite(target, v.sources)})" if v.sources else ""
        rec = (v.recommended or req.hdk or req.range).removeprefix("Ascend HDK ")
        if v.level == "recommended":
            out.append(c.finding("pass", f"driver {drv}: {v.statement}{srcs}"))
        elif v.level == "compatible":
            out.append(
                c.finding(
                    "pass",
                    f"driver {drv} is compatible with {where} per {v.statement}{srcs}; "
                    f"the recommended HDK is {rec}",
                )
            )
        elif v.level == "incompatible":
            out.append(
                c.finding(
                    "fail",
                    f"driver {drv} with {where}: {v.statement}{srcs}",
                    f"install Ascend HDK {rec} for CANN {cann} on {family_title(family)}"
                    + (f" (firmware {req.firmware})" if req.firmware else "")
                    + ", or use a CANN version your driver supports (`cannenv matrix query --driver "
                    + f"{drv} --family {family}`)",
                )
            )
        else:
            out.append(
                c.finding(
                    "warn",
                    f"driver {drv} with {where}: {v.statement}{srcs}; what would settle it: {v.settle}",
                    f"nothing to install: driver {drv} is the HDK recommended elsewhere ({rec}); "
                    f"confirm it in {v.settle}"
                    if _same_driver(drv, rec)
                    else f"install the recommended Ascend HDK ({rec}) for {where}",
                )
            )
        return out
    # No matrix answer: fall back to the install files' own compatibility lists (research §2.6:
    # in every paired sample the driver Innerversion C-code is in the toolkit's compatible_version).
    why = (
        "product family unknown (no npu-smi answer, no PCI device); pass --stack to judge against a stack"
        if family is None
        else f"the matrix has no HDK pairing for CANN {cann} on {family_title(family)}"
    )
    from cannenv.versions import compatible_codes_accept, internal_code

    inner = facts.driver.innerversion if facts.driver else None
    code = internal_code(inner)
    listed = compatible_codes_accept(inst.compatible_version, inner)
    if code is not None and listed is not None:
        code_text = f"{code[0]}C{code[1]}"
        record = ",".join(f"[{e}]" for e in inst.compatible_version)
        if listed:
            return [
                c.finding(
                    "pass",
                    f"{why}; CANN {cann}'s install record lists the driver's internal code {code_text} "
                    f"in compatible_version {record}. This is the weakest evidence: drivers from 2026 "
                    "restart their internal code at C10, which older records also list",
                )
            ]
        return [
            c.finding(
                "warn",
                f"{why}; driver {drv} (internal code {code_text}) is not in CANN {cann}'s "
                f"compatible_version {record} (the toolkit's install record)",
                f"install an Ascend HDK whose driver is listed for CANN {cann} (see `cannenv matrix query --cann {cann}`)",  # noqa: E501
            )
        ]
    return [c.finding("skip", f"{why}; and the install files carry no compatibility list")]


def _driver_loaded(facts: Facts, target: Target) -> list[Finding]:
    """Reboot pending: the running kernel has another driver loaded than the one installed."""
    from cannenv.checks.policy import loaded_driver, reboot_pending, reboot_unknown

    c = DRIVER_LOADED
    installed = facts.driver.version if facts.driver else None
    loaded = loaded_driver(facts)
    unknown = reboot_unknown(facts)
    if unknown is not None or installed is None or loaded is None:
        # neither told nor ruled out: a skip that says "unknown", never a pass (label and metric
        # read it as unknown: cannenv.report.reboot_pending)
        return [
            c.finding(
                "skip",
                f"reboot pending unknown: {unknown or 'the loaded driver is not told'}",
                "capture `npu-smi info` on the node to /var/lib/cannenv/npu-smi-info.txt (the DaemonSet "
                "mounts it with --host-path /var/lib/cannenv), or run the doctor where npu-smi runs"
                if installed is not None and loaded is None
                else None,
                caused_by="driver-installed" if installed is None else None,
            )
        ]
    pending = reboot_pending(facts)
    if pending is None:
        return [c.finding("pass", f"driver {loaded[0]} loaded ({loaded[1]}) is the installed {installed}")]
    was, now, where = pending
    return [
        c.finding(
            "fail",
            f"reboot pending: driver {was} is loaded (per {where}) but {now} is installed "
            f"({facts.driver.path if facts.driver else 'version.info'}); until the node restarts, "
            f"the NPU runs the old driver and CANN is judged against one that is not running",
            f"restart the node (`reboot`, after draining its workloads), then check that `npu-smi info` "
            f"says Version: {now}",
            subject=f"{was}->{now}",
        )
    ]


def _same_driver(drv: str, rec: str) -> bool:
    """The installed driver is the recommended HDK (never tell a node to install what it has)."""
    from cannenv.checks._util import pinned_matches

    return any(pinned_matches("driver", r.strip(), drv) for r in rec.split(","))


def _driver_cann_in_images(facts: Facts, target: Target, drv: str, cann: str) -> list[Finding]:
    """The driver of an HDK-only node against the CANN of the target stack, by the vendor's statements."""
    c = DRIVER_CANN
    family = target.family
    m = target.matrix
    if m is None or family is None or cann_v(cann) is None or driver_v(drv) is None:
        return [c.finding("skip", f"cannot judge driver {drv} against CANN {cann}: no matrix answer")]
    req = m.driver_requirement(cann, family)
    if req is None:
        why = f"the matrix has no HDK pairing for CANN {cann} on {family_title(family)}"
        return [c.finding("skip", f"{why} (the target stack's CANN, in the images)")]
    v = m.hdk_verdict(cann, drv, family)
    where = f"CANN {cann} of the target stack (in the images) on {family_title(family)}"
    srcs = f" ({cite(target, v.sources)})" if v.sources else ""
    rec = (v.recommended or req.hdk or req.range).removeprefix("Ascend HDK ")
    if v.level in ("recommended", "compatible"):
        return [c.finding("pass", f"driver {drv} with {where}: {v.statement}{srcs}")]
    remedy = f"install Ascend HDK {rec} for {where}" + (f" (firmware {req.firmware})" if req.firmware else "")
    if v.level == "incompatible":
        return [c.finding("fail", f"driver {drv} with {where}: {v.statement}{srcs}", remedy)]
    return [
        c.finding(
            "warn",
            f"driver {drv} with {where}: {v.statement}{srcs}; what would settle it: {v.settle}",
            remedy,
        )
    ]


def _in_fw_range(fw: str, entry: str) -> bool | None:
    """``7.0.0,7.2.99`` inclusive range on dotted numbers; None when unparsable."""
    try:
        lo, hi = (tuple(int(x) for x in part.strip().split(".")) for part in entry.split(","))
        v = tuple(int(x) for x in fw.split(".")[: max(len(lo), len(hi))])
    except ValueError:
        return None
    return lo <= v <= hi


def _firmware_remedy(target: Target, driver: str | None, family: str | None) -> str:
    """Install the firmware of the driver's own HDK: exact version and file when the matrix pairs them."""
    generic = (
        f"install the firmware of the same Ascend HDK as driver {driver} "
        "(`sh Ascend-hdk-<chip>-npu-firmware_<ver>.run --full`, then reboot)"
    )
    m = target.matrix
    if m is None or driver is None:
        return generic
    try:
        row = m.firmware_for_driver(driver, family=family)
        if row is None or row.firmware is None:
            return generic
        fw = str(row.firmware)
        file = f"Ascend-hdk-<chip>-npu-firmware_{fw}.run"
        if family is not None:
            file = m.installer_file("firmware", fw, family, "any", cann=str(row.cann[0])).file
    except CannenvError:
        return generic
    hdk = f" (HDK {row.hdk})" if row.hdk else ""
    return f"install firmware {fw}{hdk}, paired with driver {driver}: `sh {file} --full`, then reboot"


def _firmware_driver(facts: Facts, target: Target) -> list[Finding]:
    c = FIRMWARE_DRIVER
    fw = facts.firmware.version if facts.firmware else None
    drv = facts.driver
    if facts.firmware is None:
        if drv is not None and not facts.container.in_container:
            return [
                c.finding(
                    "warn",
                    "no /usr/local/Ascend/firmware/version.info next to the driver",
                    _firmware_remedy(target, drv.version, facts.devices.family or target.family),
                )
            ]
        return [c.finding("skip", "no firmware version file (normal inside a container)")]
    if fw is None:
        return [c.finding("error", f"{facts.firmware.path} gives no firmware version (see probe-files)")]
    if drv is None or not drv.compatible_version_fw:
        return [c.finding("skip", "the driver's version.info has no compatible_version_fw to compare with")]
    verdicts = [_in_fw_range(fw, e) for e in drv.compatible_version_fw]
    ranges = ", ".join(f"[{e}]" for e in drv.compatible_version_fw)
    if any(v is True for v in verdicts):
        return [c.finding("pass", f"firmware {fw} is within the driver's compatible_version_fw {ranges}")]
    if all(v is None for v in verdicts):
        return [c.finding("skip", f"cannot read the driver's compatible_version_fw {ranges}")]
    # warn, not fail: the range semantics of compatible_version_fw are UNVERIFIED (research §2.6)
    return [
        c.finding(
            "warn",
            f"firmware {fw} is outside driver {drv.version}'s compatible_version_fw {ranges} "
            "(the driver's install record)",
            _firmware_remedy(target, drv.version, facts.devices.family or target.family),
            # when the driver itself is too old for the CANN, its fix (a whole HDK, driver and
            # firmware) is this one's too: one root cause, one remedy
            caused_by="driver-cann",
        )
    ]


DRIVER_INSTALLED = Check(
    "driver-installed",
    "NPU driver installed",
    "Every CANN runtime call goes through the driver (libascend_hal.so); without it nothing runs on the NPU.",
    "critical",
    _driver_installed,
    scope="device",
)
DRIVER_CANN = Check(
    "driver-cann",
    "driver the vendor pairs with the CANN toolkit",
    "Each CANN release names its Ascend HDK and the HDK series it is compatible with (release notes, "
    "the vendor installer); a driver outside them gives hangs or `561103`/`507018` errors.",
    "critical",
    _driver_cann,
    scope="device",
)
DRIVER_LOADED = Check(
    "driver-loaded",
    "the loaded driver is the installed one (no reboot pending)",
    "A driver upgrade takes effect only when the node restarts: until then the kernel runs the old "
    "driver's modules while version.info names the new one, so every other check judges a driver "
    "that is not running. npu-smi's header Version is the loaded driver.",
    "high",
    _driver_loaded,
    scope="device",
)
FIRMWARE_DRIVER = Check(
    "firmware-driver",
    "firmware matches the driver",
    "Driver and firmware ship together as an Ascend HDK; a firmware outside the driver's range can fail "
    "device initialisation.",
    "high",
    _firmware_driver,
    scope="device",
)
CHECKS = (DRIVER_INSTALLED, DRIVER_LOADED, DRIVER_CANN, FIRMWARE_DRIVER)
