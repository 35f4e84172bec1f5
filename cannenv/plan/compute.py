"""``compute_plan(facts, target) -> Plan``: the ordered difference between a host and a stack.

Pure: it reads the facts, the target the doctor chose (:func:`cannenv.checks.stack.choose_target`,
the one source of truth for "which stack"), the matrix's queries and the installer flags in
``installers.json`` (research notes §3.2). Order is the vendor's: driver → firmware on a first
installation, firmware → driver on an overwrite or upgrade (``hdk_order``) → reboot → CANN toolkit
→ ops/kernels for the chip → NNAL → Python packages → environment.

Decisions an engineer would make by hand, made the same way here:

* A driver the matrix accepts for the target CANN on this family is left alone, even when the
  stack pins another build (never downgrade a working driver for a pin).
* Firmware changes only when it is missing or the driver changes; a firmware step asks for a reboot.
* Another CANN version is kept side by side by default (``/usr/local/Ascend`` holds several,
  ``set_env.sh`` selects one); ``cann_policy="replace"`` removes the others *after* the target is
  installed and re-pointed, so ``latest`` never points at a removed version.
* ops/kernels and NNAL installers run with the target toolkit's ``set_env.sh`` sourced.
* The driver needs the ``HwHiAiUser`` account: a step creates it when the facts say it is missing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cannenv.plan.model import ORDER, Action, Installer, Plan, Step, Verify

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import CannInstall, Facts
    from cannenv.matrix import Matrix, Stack

CannPolicy = Literal["side-by-side", "replace"]
HdkPolicy = Literal["auto", "yes", "no"]
"""Plan the driver and firmware? ``auto``: yes on a machine, no inside a container (the driver
and firmware belong to the machine the container runs on)."""


@lru_cache(maxsize=1)
def installer_rules() -> dict[str, Any]:
    """``cannenv/plan/installers.json``: flags per component and action, paths, account commands."""
    data: dict[str, Any] = json.loads((Path(__file__).parent / "installers.json").read_text(encoding="utf-8"))
    return data


def _q(text: str) -> str:
    from cannenv.sanitize import shell_word

    return shell_word(text)


@lru_cache(maxsize=4096)
def _cann_v(text: str | None) -> Any:
    from cannenv.checks._util import cann_v

    return cann_v(text)


@lru_cache(maxsize=4096)
def _same_cann(a: str | None, b: str | None) -> bool:
    from cannenv.checks._util import same_cann

    return same_cann(a, b)


def _matches(key: str, pinned: str | None, actual: str | None) -> bool:
    from cannenv.checks._util import pinned_matches

    return pinned_matches(key, pinned, actual)


@lru_cache(maxsize=1024)
def new_layout(cann: str) -> bool:
    """CANN >= 8.5 installs into ``cann-<ver>`` (research §3.3)."""
    v = _cann_v(cann)
    if v is None:
        return False
    try:
        return bool(v >= _cann_v("8.5.0-beta.1"))
    except TypeError:
        return False


def install_home(cann: str, base: str | None = None) -> str:
    """Where CANN ``cann`` lands: ``<base>/cann-<ver>`` (>= 8.5) or ``<base>/ascend-toolkit/<ver>``."""
    base = base or installer_rules()["base"]
    return f"{base}/cann-{cann}" if new_layout(cann) else f"{base}/ascend-toolkit/{cann}"


def set_env_path(cann: str, base: str | None = None) -> str:
    """The ``set_env.sh`` that selects CANN ``cann`` once installed (research §3.3, §5.1, §5.2)."""
    base = base or installer_rules()["base"]
    return (
        f"{install_home(cann, base)}/set_env.sh" if new_layout(cann) else f"{base}/ascend-toolkit/set_env.sh"
    )


def _installer(
    stack: Stack, matrix: Matrix | None, key: str, version: str, family: str, arch: str | None
) -> tuple[Installer | None, str | None, str | None]:
    """(installer, package, problem) for a stack component: the stack's own artifact first, else
    the matrix's file-name pattern for the era."""
    comp = stack.components.get(key)
    package = comp.package if comp is not None else None
    if arch is None:
        return None, package, f"{key}: the host's architecture is unknown, so the installer file is too"
    # the stack's own artifact only for the stack's own version (a chosen target may follow the
    # installed CANN's line instead: then the matrix names that version's file)
    art = stack.artifact(key, arch) if stack.version(key) == version else None
    file = art.file if art is not None else None
    if file is None and matrix is not None:
        from cannenv.errors import CannenvError

        try:
            name = matrix.installer_file(key, version, family, arch, cann=stack.version("cann"))
            file, package = name.file, package or name.package
        except CannenvError as exc:
            return None, package, f"{key}: {exc.message}"
    if file is None:
        return None, package, f"{key}: no installer file known for {version} on {family}/{arch}"
    sha256 = art.sha256 if art is not None else None
    url = art.url if art is not None else None
    run_name = file
    if sha256 is None and matrix is not None and file.endswith(".run"):
        # the vendor's download of it with the vendor's digest (ascend-deployer's manifests): the
        # .zip that holds the .run (whose own digest nobody publishes), the HDK bundle zip that holds
        # the driver and firmware .run, or the .run itself if listed
        vendor = matrix.vendor_archive(file, hdk=stack.version("driver"), arch=arch)
        if vendor is not None:
            file, sha256, url = vendor.file, vendor.sha256, vendor.url or url
    archive: Literal["zip"] | None = "zip" if file.endswith(".zip") else None
    run_file = (run_name if run_name.endswith(".run") else file[: -len(".zip")] + ".run") if archive else None
    inst = Installer(file=file, sha256=sha256, url=url, archive=archive, run_file=run_file)
    return inst, package, None


def _run_lines(inst: Installer, flags: Sequence[str], *, set_env: str | None = None) -> tuple[str, ...]:
    """The exact lines that run an installer (unpacking a ``.zip`` first), optionally with the
    toolkit environment sourced in the same shell."""
    lines: list[str] = []
    path = f'"$CANNENV_ARTIFACTS"/{_q(inst.file)}'
    if inst.archive == "zip":
        stem = inst.file[: -len(".zip")]
        out = f'"$CANNENV_ARTIFACTS"/{_q(stem)}'
        run_path = f"{out}/{_q(inst.run_file or stem + '.run')}"
        inner = f"{out}/{_q(stem + '.zip')}"
        # Python's own zipfile: present wherever the facts bundle ran, unlike unzip(1); a payload that
        # is itself a signed zip of the same name is unpacked once more (as ascend-deployer does)
        lines.append(f"python3 -m zipfile -e {path} {out}")
        lines.append(
            f"if [ ! -f {run_path} ] && [ -f {inner} ]; then python3 -m zipfile -e {inner} {out}; fi"
        )
        path = run_path
    run = f"bash {path} " + " ".join(_q(f) for f in flags)
    if set_env:
        run = f". {_q(set_env)} && {run}"
    lines.append(run)
    return tuple(lines)


def _flags(component: str, action: str) -> tuple[list[str], tuple[str, ...]]:
    rules = installer_rules()["flags"][component]
    flags = rules.get(action) or rules["install"]
    return list(flags), tuple(rules.get("sources", ()))


def _change(have: str | None, want: str, key: str) -> Action:
    if have is None:
        return "install"
    if key in ("cann", "ops", "nnal"):
        a, b = _cann_v(have), _cann_v(want)
    else:
        from cannenv.checks._util import driver_v, pep_v

        parse = driver_v if key in ("driver", "firmware") else pep_v
        a, b = parse(have), parse(want)
    try:
        if a is not None and b is not None and a > b:
            return "downgrade"
    except TypeError:
        pass
    return "upgrade"


def _chip_tag(family: str) -> str | None:
    from cannenv.errors import CannenvError
    from cannenv.soc import family_info

    try:
        return family_info(family).image_chip
    except (CannenvError, KeyError):
        return None


_VOLATILE = frozenset({"duration_s", "collected_at"})
_DIGESTED = ("os", "driver", "firmware", "install_record", "cann", "devices", "container", "python", "env")


def facts_digest(facts: Facts) -> str:
    """``sha256:<hex>`` of what a plan reads from the facts (not when or by whom they were collected)."""
    import hashlib

    from cannenv.values import dump

    def steady(value: Any) -> Any:  # how long a probe took is not a fact about the host
        if isinstance(value, dict):
            return {k: steady(v) for k, v in value.items() if k not in _VOLATILE}
        if isinstance(value, list):
            return [steady(v) for v in value]
        return value

    doc = dump(facts)
    body = json.dumps({k: steady(doc.get(k)) for k in _DIGESTED}, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def compute_plan(
    facts: Facts,
    target: Target,
    *,
    cann_policy: CannPolicy = "side-by-side",
    offline: bool = False,
    hdk: HdkPolicy = "auto",
    python: str | None = None,
    venv: str | None = None,
) -> Plan:
    """The ordered steps that turn the host of ``facts`` into ``target.stack``.

    ``offline``: the Python packages step installs wheels from ``$CANNENV_ARTIFACTS`` with
    ``--no-index`` (what ``cannenv provision`` runs) instead of from the package index.
    ``python``: the interpreter (or venv, created when missing) the Python packages go into — on
    PEP 668 hosts (Debian 12, Ubuntu 24.04) the system interpreter refuses ``pip install``.
    """
    from dataclasses import replace

    if python and venv:
        from cannenv.errors import InputError

        raise InputError("give either --python or --venv, not both")
    for what, path in (("--python", python), ("--venv", venv)):
        if path is not None and (not path.startswith("/") or not _SAFE_PATH.match(path)):
            from cannenv.errors import InputError

            raise InputError(f"{what} {path!r}: expected an absolute path of letters, digits and ._+-/")
    plan = _compute(
        facts, target, cann_policy=cann_policy, offline=offline, hdk=hdk, python=python, venv=venv
    )
    return replace(
        plan,
        facts_digest=facts_digest(facts),
        driver_policy="pinned" if target.driver_policy == "pinned" else "accepted",
        python=python,
        venv=venv,
    )


def _compute(
    facts: Facts,
    target: Target,
    *,
    cann_policy: CannPolicy,
    offline: bool,
    hdk: HdkPolicy,
    python: str | None,
    venv: str | None,
) -> Plan:
    stack = target.stack
    if stack is None:
        return Plan(
            host=facts.hostname,
            target_reason=target.choice.reason,
            family=target.family,
            arch=facts.os.arch,
            cann_policy=cann_policy,
            offline=offline,
            problems=(f"no target stack: {target.choice.reason or 'none chosen'}",),
        )
    from cannenv.checks.policy import hardware_mismatch

    mismatch = hardware_mismatch(facts, stack)
    if mismatch is not None:
        return Plan(
            host=facts.hostname,
            stack=stack.id,
            target_reason=target.choice.reason,
            family=target.family,
            arch=facts.os.arch,
            cann_policy=cann_policy,
            offline=offline,
            problems=(mismatch,),
            refused=True,
        )
    b = _Builder(facts, target, stack, cann_policy, offline, hdk)
    b.python_override = f"{venv}/bin/python" if venv else python
    b.venv = venv
    b.build()
    unknown = b.unknown()
    if unknown:  # never act on what was not read: nothing is planned for this host
        from cannenv.checks.policy import RECOLLECT

        return Plan(
            host=facts.hostname,
            stack=stack.id,
            target_reason=target.choice.reason,
            family=b.family,
            arch=b.arch,
            cann_policy=cann_policy,
            offline=offline,
            problems=(*unknown, f"nothing is planned for this host until they are read: {RECOLLECT}"),
            unknown=unknown,
            refused=True,
        )
    return Plan(
        host=facts.hostname,
        stack=stack.id,
        target_reason=target.choice.reason,
        family=b.family,
        arch=b.arch,
        cann_policy=cann_policy,
        offline=offline,
        steps=b.numbered(),
        problems=tuple(b.problems),
        notes=((b.guess,) if b.guess else ())
        + (
            (f"driver and firmware not planned: {b.hdk_skip}" + ("" if b.guess else " (--hdk plans them)"),)
            if b.hdk_skip
            else ()
        )
        + tuple(b.notes),
    )


class _Builder:
    def __init__(
        self, facts: Facts, target: Target, stack: Stack, policy: CannPolicy, offline: bool, hdk: HdkPolicy
    ) -> None:
        self.facts, self.target, self.stack, self.policy, self.offline = facts, target, stack, policy, offline
        if hdk == "auto":
            self.hdk_skip: str | None = (
                "in a container the driver and firmware come from the machine it runs on: plan that machine"
                if facts.container.in_container
                else None
            )
        else:
            self.hdk_skip = "not planned (--no-hdk)" if hdk == "no" else None
        from cannenv.checks.policy import family_inferred

        self.guess = family_inferred(facts, target)
        if self.guess is not None and self.hdk_skip is None:
            # a family no hardware evidence tells is never planned another chip's driver (issue 31)
            self.hdk_skip = "the family is a guess; name the target (--target FAMILY=ID or --stack ID)"
        self.matrix = target.matrix
        self.family: str = target.family or stack.family
        arch = facts.os.arch
        if arch is None and len(stack.arches) == 1:
            arch = stack.arches[0]
        self.arch: str | None = arch
        self.steps: list[Step] = []
        self.problems: list[str] = []
        self.base: str = installer_rules()["base"]
        from cannenv.checks import policy as compliance

        self.explicit = compliance.explicit(target)
        self.cann_want = compliance.cann_line(facts, target)
        self.notes: list[str] = []
        self.cann_changes = False
        self.driver_changes = False
        self.python_override: str | None = None
        self.venv: str | None = None

    # -- helpers -------------------------------------------------------------------------------
    def unknown(self) -> tuple[str, ...]:
        """``<component>: <why>`` for each step that would act on what the host has of its component
        while a probe could not read it (:func:`cannenv.checks.policy.unknown`): a Python that gave no
        answer is not "no torch", an unreadable driver ``version.info`` is not "no driver"."""
        from cannenv.checks.policy import unknown_reason

        out: list[str] = []
        seen: set[str] = set()
        for s in self.steps:
            if not s.acts or s.component in seen:
                continue
            seen.add(s.component)
            if s.component == "python-packages" and self.fresh_interpreter():
                continue  # another interpreter than the probed one: its packages were never read
            why = unknown_reason(self.facts, s.component)
            if why is not None:
                out.append(f"{s.component}: {why}")
        return tuple(out)

    def add(self, step: Step) -> None:
        self.steps.append(step)

    def numbered(self) -> tuple[Step, ...]:
        from dataclasses import replace

        out, n = [], 0
        for s in self.steps:
            if s.acts:
                n += 1
                out.append(replace(s, index=n))
            else:
                out.append(replace(s, index=0))
        return tuple(out)

    def installer(self, key: str, version: str) -> tuple[Installer | None, str | None]:
        inst, package, problem = _installer(self.stack, self.matrix, key, version, self.family, self.arch)
        if problem:
            self.problems.append(problem)
        return inst, package

    def sources(self, key: str) -> tuple[str, ...]:
        comp = self.stack.components.get(key)
        return tuple(comp.sources) if comp is not None else ()

    # -- the steps, in order ---------------------------------------------------------------------
    def build(self) -> None:
        from dataclasses import replace

        driver = self.driver()
        self.account(driver)
        self.add(driver)
        self.firmware()
        self.cann()
        self.ops()
        self.nnal()
        self.python()
        self.environment()
        rank = dict(_RANK)
        # the vendor's order of the driver and firmware: driver → firmware on a first installation,
        # firmware → driver on an overwrite or upgrade (a driver is installed); CANN after both
        order = installer_rules()["hdk_order"]
        scenario = "first-install" if self.facts.driver is None else "overwrite"
        hdk = [s for s in self.steps if s.acts and s.component in ("driver", "firmware")]
        if len(hdk) == 2:  # only an order of the two when both run
            first, second = order[scenario]
            rank[first], rank[second] = sorted((rank["driver"], rank["firmware"]))
        srcs = tuple(order["sources"])
        self.steps = [
            replace(s, sources=s.sources + tuple(x for x in srcs if x not in s.sources))
            if s.acts and s.component in ("driver", "firmware")
            else s
            for s in self.steps
        ]
        self.steps.sort(key=lambda s: rank[s.component])

    def account(self, driver: Step) -> None:
        rules = installer_rules()["account"]
        os_ = self.facts.os
        ok = os_.hwhiaiuser_user and os_.hwhiaiuser_group
        if ok or not driver.acts:
            why = "exists" if ok else "not needed: the driver is left as it is"
            self.add(
                Step(index=0, component="account", action="leave", summary=f"{rules['user']} account {why}")
            )
            return
        self.add(
            Step(
                index=0,
                component="account",
                action="install",
                summary=f"create the {rules['user']} user and group (the driver's services run as it)",
                commands=tuple(rules["commands"]),
                verify=(Verify(fact="os.hwhiaiuser_user", expect="true"),),
                sources=tuple(rules["sources"]),
            )
        )

    def driver(self) -> Step:
        want = self.stack.version("driver")
        have = self.facts.driver.version if self.facts.driver else None
        if want is None:
            return Step(index=0, component="driver", action="leave", summary="the stack pins no driver")
        if self.hdk_skip:
            return Step(
                index=0,
                component="driver",
                action="leave",
                summary=f"driver {have or 'none'}: {self.hdk_skip}",
                version_from=have,
            )
        if have is not None and _matches("driver", want, have):
            return Step(
                index=0,
                component="driver",
                action="leave",
                summary=f"driver {have} is the stack's",
                version_from=have,
                version_to=want,
            )
        from cannenv.checks import policy

        ok, why, req_sources = policy.driver_satisfies(self.target, have)
        if have is not None and ok:
            return Step(
                index=0,
                component="driver",
                action="leave",
                summary=why,
                version_from=have,
                version_to=have,
                sources=req_sources,
            )
        if policy.kept(self.facts, self.target, "driver", have, want):
            self.notes.append(
                f"driver {have} differs from the chosen stack's {want} ({why}): a target the doctor chose "
                f"moves nothing installed; name it to plan the driver (--stack {self.stack.id})"
            )
            return Step(
                index=0,
                component="driver",
                action="leave",
                summary=f"driver {have} kept: the target was chosen, not named",
                version_from=have,
                version_to=have,
            )
        action = _change(have, want, "driver")
        inst, package = self.installer("driver", want)
        flags, srcs = _flags("driver", "install" if action == "install" else "upgrade")
        self.driver_changes = True
        pre = ("the HwHiAiUser user and group exist",)
        if have is None:
            summary = f"install the NPU driver {want}"
        else:
            summary = f"{action} the NPU driver {have} → {want} (not accepted for CANN {self.cann_want})"
        return Step(
            index=0,
            component="driver",
            action=action,
            summary=summary,
            version_from=have,
            version_to=want,
            package=package,
            installers=(inst,) if inst else (),
            commands=_run_lines(inst, flags) if inst else (),
            preconditions=pre,
            verify=(Verify(fact="driver.version", expect=want),),
            sources=srcs + self.sources("driver"),
        )

    def firmware(self) -> None:
        self.firmware_step()
        driver = next((s for s in self.steps if s.component == "driver"), None)
        replaced = driver is not None and driver.acts and driver.version_from is not None
        if not self.hdk_skip and not any(s.component == "reboot" for s in self.steps):
            from cannenv.checks.policy import reboot_pending, reboot_unknown

            pending = None if replaced else reboot_pending(self.facts)
            unknown = None if replaced or self.facts.driver is None else reboot_unknown(self.facts)
            if unknown is not None:  # no reboot planned, and none ruled out: say so (doctor's skip)
                self.notes.append(
                    f"reboot pending unknown: {unknown}; no restart is planned for it, none is ruled out"
                )
            if pending is not None:
                was, now, where = pending
                self.add(
                    Step(
                        index=0,
                        component="reboot",
                        action="reboot",
                        summary=f"restart the host: reboot pending — driver {now} is installed but {was} "
                        f"is loaded (per {where}); the kernel loads the installed driver at the restart",
                        reboot=True,
                        verify=(Verify(fact="devices.driver_version", expect=now),),
                    )
                )
        if replaced and not any(s.component == "reboot" for s in self.steps):
            self.add(
                Step(
                    index=0,
                    component="reboot",
                    action="reboot",
                    summary="restart the host: the driver was replaced and the running kernel keeps the old "
                    "driver's modules loaded until a restart",
                    reboot=True,
                )
            )

    def firmware_step(self) -> None:
        want = self.stack.version("firmware")
        have = self.facts.firmware.version if self.facts.firmware else None
        if want is None or self.hdk_skip:
            why = "the stack pins no firmware" if want is None else f"firmware: {self.hdk_skip}"
            self.add(Step(index=0, component="firmware", action="leave", summary=why))
            return
        if have is not None and (_matches("firmware", want, have) or not self.driver_changes):
            why = "is the stack's" if _matches("firmware", want, have) else "kept: the driver is kept"
            self.add(
                Step(
                    index=0,
                    component="firmware",
                    action="leave",
                    summary=f"firmware {have} {why}",
                    version_from=have,
                    version_to=have,
                )
            )
            return
        action = _change(have, want, "firmware")
        inst, package = self.installer("firmware", want)
        flags, srcs = _flags("firmware", "install" if action == "install" else "upgrade")
        self.add(
            Step(
                index=0,
                component="firmware",
                action=action,
                summary=f"{action} the NPU firmware " + (f"{have} → {want}" if have else want),
                version_from=have,
                version_to=want,
                package=package,
                installers=(inst,) if inst else (),
                commands=_run_lines(inst, flags) if inst else (),
                preconditions=("the NPU driver is installed",),
                reboot=True,
                verify=(Verify(fact="firmware.version", expect=want),),
                sources=srcs + self.sources("firmware"),
            )
        )
        self.add(
            Step(
                index=0,
                component="reboot",
                action="reboot",
                summary="restart the host: new firmware takes effect only after a reboot",
                reboot=True,
            )
        )

    def _target_install(self) -> CannInstall | None:
        for inst in self.facts.cann.installs:
            if _same_cann(inst.version, self.cann_want):
                return inst
        return None

    def cann(self) -> None:
        want = self.cann_want
        if want is None:
            self.add(
                Step(index=0, component="cann", action="leave", summary="the stack pins no CANN toolkit")
            )
            return
        active = self.facts.cann.active_install()
        present = self._target_install()
        others = [i for i in self.facts.cann.installs if i is not present]
        if present is not None:
            why = "is active" if active is present else "is installed (the environment step selects it)"
            self.add(
                Step(
                    index=0,
                    component="cann",
                    action="leave",
                    summary=f"CANN toolkit {want} at {present.path} {why}",
                    version_from=present.version,
                    version_to=want,
                )
            )
        else:
            have = active.version if active else (others[-1].version if others else None)
            action = _change(have, want, "cann")
            inst, package = self.installer("cann", want)
            flags, srcs = _flags("cann", "install")
            self.cann_changes = True
            keep = (
                f"; CANN {', '.join(i.version or i.path for i in others)} stays side by side"
                if others and self.policy == "side-by-side"
                else ""
            )
            self.add(
                Step(
                    index=0,
                    component="cann",
                    action=action,
                    summary=f"{action} the CANN toolkit "
                    + (f"{have} → {want}" if have else want)
                    + f" into {install_home(want, self.base)}{keep}",
                    version_from=have,
                    version_to=want,
                    package=package or "Ascend-cann-toolkit",
                    installers=(inst,) if inst else (),
                    commands=_run_lines(inst, flags) if inst else (),
                    verify=(Verify(fact="cann.installs[].version", expect=want),),
                    sources=srcs + self.sources("cann"),
                )
            )
            self.combined_note(want)
        if self.policy == "replace":
            for old in others:
                self.remove_cann(old, want)

    def combined_note(self, want: str) -> None:
        """Name the vendor's combined driver + toolkit package where its era has one, and why the
        plan installs the separate packages instead (matrices/installers.yaml ``combined``)."""
        if self.matrix is None or self.arch is None:
            return
        from cannenv.errors import CannenvError

        try:
            combined = self.matrix.installer_file("combined", want, self.family, self.arch)
        except CannenvError:
            return
        self.notes.append(
            f"CANN {want} also comes as the combined package {combined.file} (NPU driver + Toolkit) "
            f"[{', '.join(combined.sources)}]: not used, as it cannot be upgraded with --upgrade and its "
            "install flags are not in our sources; the driver and the toolkit are planned as separate "
            "packages"
        )

    def remove_cann(self, old: CannInstall, want: str) -> None:
        rule = installer_rules()["uninstall"]["cann"]
        arch = old.arch or self.arch
        if arch:
            script = _q(rule.format(path=old.path, arch=arch))
        else:  # the host says at run time: quote the path around an unquoted $(uname -m)
            before, _, after = rule.format(path=old.path, arch="\0").partition("\0")
            script = f'{_q(before)}"$(uname -m)"{_q(after)}'
        latest = f"{self.base}/ascend-toolkit/latest"
        guard = (
            f'[ "$(readlink -f {_q(latest)})" != "$(readlink -f {_q(old.path)})" ] '
            f"|| {{ echo {_q(f'refusing: {latest} still points at {old.path}')} >&2; exit 1; }}"
        )
        self.add(
            Step(
                index=0,
                component="cann",
                action="remove",
                summary=f"remove CANN {old.version or '?'} at {old.path} (replaced by {want}; "
                f"{latest} already points at {want})",
                version_from=old.version,
                commands=(guard, f"bash {script} --quiet"),
                preconditions=(f"CANN {want} is installed and {latest} points at it",),
                verify=(Verify(fact="cann.installs[].version", expect=f"not {old.version}"),),
            )
        )

    def kept(self, key: str, have: str | None, want: str | None) -> bool:
        from cannenv.checks.policy import kept

        return kept(self.facts, self.target, key, have, want)

    def wanted(self, key: str) -> str | None:
        from cannenv.checks.policy import wanted

        return wanted(self.facts, self.target, key)

    def ops(self) -> None:
        want = self.wanted("ops")
        if want is None:
            self.add(
                Step(
                    index=0, component="ops", action="leave", summary="the stack pins no ops/kernels package"
                )
            )
            return
        chip = _chip_tag(self.family)
        present = self._target_install()
        have_pkg = None
        if present is not None and not self.cann_changes:
            for pkg in present.ops:
                ver = pkg.cann_version
                if _same_cann(ver, want) and (chip is None or chip in pkg.chips):
                    have_pkg = pkg
                    break
        if have_pkg is not None:
            self.add(
                Step(
                    index=0,
                    component="ops",
                    action="leave",
                    summary=f"ops/kernels {want} for {chip or self.family} present",
                    version_from=want,
                    version_to=want,
                )
            )
            return
        others = [p for p in (present.ops if present is not None else ())]
        have = None
        if others:
            have = others[0].cann_version
        inst, package = self.installer("ops", want)
        flags, srcs = _flags("ops", "install")
        set_env = self.toolkit_env(self.cann_want or want)
        wrong = ""
        if others and chip and not any(chip in p.chips for p in others):
            wrong = f" (the installed one is for {', '.join(c for p in others for c in p.chips) or '?'})"
        self.add(
            Step(
                index=0,
                component="ops",
                action="install" if have is None or wrong else _change(have, want, "ops"),
                summary=f"install the {chip or self.family} ops/kernels package {want}{wrong}",
                version_from=have,
                version_to=want,
                package=package,
                installers=(inst,) if inst else (),
                commands=_run_lines(inst, flags, set_env=set_env) if inst else (),
                preconditions=(f"CANN toolkit {self.cann_want} installed", f"{set_env} sourced"),
                verify=(Verify(fact="cann.active.ops[].chips", expect=chip or self.family),),
                sources=srcs + self.sources("ops"),
            )
        )

    def toolkit_env(self, cann: str) -> str:
        """The ``set_env.sh`` an ops/NNAL step sources: when CANN ``cann`` is already the active
        install, the one the doctor's remedies name (the host's own file, never a missing one);
        else the one the plan's toolkit step creates."""
        from cannenv.checks._util import toolkit_set_env

        inst = self.facts.cann.active_install()
        if inst is not None and _same_cann(inst.version, cann):
            return toolkit_set_env(self.facts, cann)
        return set_env_path(cann, self.base)

    def nnal(self) -> None:
        want = self.wanted("nnal")
        if want is None:
            m = self.target.matrix
            left_out = m is not None and m.stack(self.stack.id).version("nnal") is not None  # by a lock
            why = (
                "the lock's image leaves NNAL out (built without --with-nnal)"
                if left_out
                else "the stack pins no NNAL"
            )
            self.add(Step(index=0, component="nnal", action="leave", summary=why))
            return
        nn = self.facts.cann.nnal
        have = nn.version if nn else None
        if have is not None and self.kept("nnal", have, want) and not _same_cann(have, want):
            self.notes.append(
                f"NNAL {have} kept (the chosen stack's line is {want}); name a target to move it"
            )
            want = have
        if have is not None and _same_cann(have, want):
            self.add(
                Step(
                    index=0,
                    component="nnal",
                    action="leave",
                    summary=f"NNAL {have} present",
                    version_from=have,
                )
            )
            return
        inst, package = self.installer("nnal", want)
        flags, srcs = _flags("nnal", "install")
        set_env = self.toolkit_env(self.cann_want or want)
        action = _change(have, want, "nnal")
        self.add(
            Step(
                index=0,
                component="nnal",
                action=action,
                summary=f"{action} NNAL (ATB) " + (f"{have} → {want}" if have else want),
                version_from=have,
                version_to=want,
                package=package or "Ascend-cann-nnal",
                installers=(inst,) if inst else (),
                commands=_run_lines(inst, flags, set_env=set_env) if inst else (),
                preconditions=(f"CANN toolkit {self.cann_want} installed", f"{set_env} sourced"),
                verify=(Verify(fact="cann.nnal.version", expect=want),),
                sources=srcs + self.sources("nnal"),
            )
        )

    def python(self) -> None:
        from cannenv.matrix import same_python_line

        want = self.stack.version("python")
        py = self.facts.python
        if want is None:
            self.add(Step(index=0, component="python", action="leave", summary="the stack pins no Python"))
            return
        if py.version and (same_python_line(want, py.version) or self.kept("python", py.version, want)):
            if not same_python_line(want, py.version):
                self.notes.append(
                    f"Python {py.version} kept (the chosen stack's line is {want}); name a target to move it"
                )
            self.add(
                Step(
                    index=0,
                    component="python",
                    action="leave",
                    summary=f"Python {py.version} is the stack's line",
                    version_from=py.version,
                )
            )
            return
        self.add(
            Step(
                index=0,
                component="python",
                action="install" if py.version is None else "upgrade",
                summary=f"provide Python {want} (found {py.version or 'none'}): cannenv does not install "
                "interpreters; use the OS package or a venv/conda of that version, then plan again",
                version_from=py.version,
                version_to=want,
                manual=True,
                verify=(Verify(fact="python.version", expect=want),),
            )
        )

    def fresh_interpreter(self) -> bool:
        """The packages go into another interpreter than the one the facts read (``--venv``, or a
        ``--python`` the facts were not collected with): nothing is known of its packages."""
        if self.python_override is None:
            return False
        py = self.facts.python
        return not (py.source == "interpreter" and py.interpreter == self.python_override)

    def python_packages(self) -> tuple[list[str], list[str]]:
        want: list[str] = []
        have: list[str] = []
        fresh = self.fresh_interpreter()
        pkgs = {} if fresh else self.facts.python.packages
        for key, dist in (("torch", "torch"), ("torch_npu", "torch-npu")):
            v = self.stack.version(key)
            if v is None:
                continue
            got = pkgs.get(dist)
            got = got.split("+")[0] if got else None
            if not fresh and not _matches(key, v, got) and self.kept(key, got, v):
                self.notes.append(f"{dist} {got} kept (the chosen stack pins {v}); name a target to move it")
                continue
            if fresh or not _matches(key, v, got):
                want.append(f"{dist}=={v}")
                have.append(f"{dist} {got or 'absent'}")
        if fresh and want and self.cann_want is not None:
            from cannenv.checks.cann import CANN_PYTHON_DEPS

            # the toolkit's own Python dependencies (the doctor's cann-python-deps), into the new
            # interpreter too: from the wheelhouse offline, any version it holds
            want.extend(CANN_PYTHON_DEPS)
        return want, have

    def python_interpreter(self) -> str:
        if self.python_override:
            return self.python_override
        py = self.facts.python
        if py.source == "interpreter" and py.interpreter:
            return py.interpreter
        return "python3"

    def environment(self) -> None:
        self.python_step()
        want = self.cann_want
        if want is None:
            self.add(Step(index=0, component="environment", action="leave", summary="no CANN to select"))
            return
        present = self._target_install()
        home = present.path if present is not None else install_home(want, self.base)
        latest = f"{self.base}/ascend-toolkit/latest"
        links = self.facts.cann.links
        env = self.facts.env.vars
        current = env.get("ASCEND_HOME_PATH") or env.get("ASCEND_TOOLKIT_HOME")
        selects = current is not None and (
            current.rstrip("/") == home or links.get(current.rstrip("/")) == home
        )
        # from CANN 8.5 the `cann` link selects the toolkit; ascend-toolkit/latest is deprecated (removed
        # in releases after 2026-12-30, RN-850-DEPRECATED): kept in step where it exists, never required
        cann_link = f"{self.base}/cann"
        if new_layout(want):
            latest_ok = links.get(cann_link) == home and (latest not in links or links[latest] == home)
        else:
            latest_ok = links.get(latest) == home
        driver_lib = f"{self.base}/driver/lib64"
        # the doctor's env-sourced check: with a driver, its libraries must be on LD_LIBRARY_PATH
        libs_ok = self.facts.driver is None or any(
            p.rstrip("/").startswith(driver_lib) for p in self.facts.env.ld_library_path
        )
        if not self.cann_changes and selects and latest_ok and libs_ok:
            self.add(
                Step(
                    index=0,
                    component="environment",
                    action="leave",
                    summary=f"a login shell selects CANN {want} ({current})",
                )
            )
            return
        rules = installer_rules()
        set_env = set_env_path(want, self.base)
        profile = rules["profile"]
        target = f"../cann-{want}" if new_layout(want) else want
        if new_layout(want):
            # the deprecated link is moved along only where the installer left one
            lines = [
                f"if [ -L {_q(latest)} ]; then ln -sfn {_q(target)} {_q(latest)}; fi",
                f"ln -sfn {_q('cann-' + want)} {_q(cann_link)}",
            ]
        else:
            lines = [f"ln -sfn {_q(target)} {_q(latest)}"]
        body = ["# written by cannenv (install plan for stack " + self.stack.id + ")", f". {set_env}"]
        if self.stack.version("nnal"):
            nnal_env = f"{self.base}/nnal/atb/set_env.sh"
            body.append(f"if [ -f {nnal_env} ]; then . {nnal_env}; fi")
        # the driver's libraries (libascend_hal.so), as the doctor's env-sourced remedy exports them
        body.append(
            f"if [ -d {driver_lib} ]; then export LD_LIBRARY_PATH={driver_lib}/driver:{driver_lib}/common:"
            f"{driver_lib}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}; fi"
        )
        lines.append("printf '%s\\n' " + " ".join(_q(b) for b in body) + f" > {_q(profile)}")
        why = []
        if not libs_ok:
            why.append("the driver's libraries are not on LD_LIBRARY_PATH")
        if not latest_ok:
            selector = cann_link if new_layout(want) and links.get(cann_link) != home else latest
            why.append(f"{selector} → {links.get(selector) or 'absent'}")
        if not selects:
            why.append(f"login shells select {current or 'no CANN'}")
        self.add(
            Step(
                index=0,
                component="environment",
                action="install",
                summary=f"select CANN {want} for login shells ({'; '.join(why) or 'the toolkit changed'})",
                commands=tuple(lines),
                preconditions=(f"CANN toolkit {want} installed",),
                verify=(Verify(fact="env.vars.ASCEND_HOME_PATH", expect=home),),
            )
        )

    def python_step(self) -> None:
        want, have = self.python_packages()
        if not want:
            self.add(
                Step(
                    index=0,
                    component="python-packages",
                    action="leave",
                    summary="torch and torch_npu are the stack's"
                    if self.stack.version("torch_npu")
                    else "none pinned",
                )
            )
            return
        py = self.python_interpreter()
        rules = installer_rules()
        pinned = [w for w in want if "==" in w]
        deps = [w for w in want if "==" not in w]
        reqs = " ".join(_q(w) for w in want)
        if self.offline:
            lines: tuple[str, ...] = (
                f'{_q(py)} -m pip install --no-index --find-links "$CANNENV_ARTIFACTS" {reqs}',
            )
        else:
            torch = [w for w in want if w.startswith("torch==")]
            rest = [w for w in want if not w.startswith("torch==")]
            out = []
            if torch:
                out.append(f"{_q(py)} -m pip install {_q(torch[0])} --index-url {rules['torch_index']}")
            if rest:
                out.append(f"{_q(py)} -m pip install " + " ".join(_q(w) for w in rest))
            lines = tuple(out)
        verify = tuple(
            Verify(fact=f"python.packages.{w.split('==')[0]}", expect=w.split("==")[1]) for w in pinned
        ) + tuple(Verify(fact=f"python.packages.{d}", expect="installed") for d in deps)
        preflight: list[str] = []
        if self.venv:
            venv = _q(self.venv)
            # offline: pip from Python's own ensurepip (Debian: python3-venv) when the host has it, else
            # the venv is made without pip and pip runs from the pip wheel provision copies from
            # --artifacts ($PYTHONPATH); the preflight refuses a host that has neither
            make = (
                f"[ -x {venv}/bin/python ] || {{ if python3 -c 'import ensurepip' 2>/dev/null; "
                f"then python3 -m venv {venv}; else python3 -m venv --without-pip {venv}; fi; }}"
            )
            lines = (make, *lines)
            preflight.append(
                f"[ -x {venv}/bin/python ] || python3 -c 'import venv' "
                "|| { echo 'python3 has no venv module (Debian/Ubuntu: apt install python3-venv)' >&2; "
                "exit 1; }"
            )
            preflight.append(
                f"[ -x {venv}/bin/python ] || python3 -c 'import ensurepip' 2>/dev/null "
                '|| [ -n "${CANNENV_PIP_WHEEL:-}" ] '
                "|| { echo 'python3 has no ensurepip (Debian/Ubuntu: apt install python3-venv) and no pip "
                "wheel is in --artifacts: the venv would have no pip' >&2; exit 1; }"
            )
        else:
            preflight.append(
                f"command -v {_q(py)} >/dev/null "
                f"|| {{ echo {_q(py + ': no such interpreter')} >&2; exit 1; }}"
            )
            preflight.append(f"{_q(py)} -c {_q(_PEP668)}")
        into = f" into {py}" if self.python_override else ""
        named = " ".join(pinned) + (f" and CANN's Python dependencies ({' '.join(deps)})" if deps else "")
        self.add(
            Step(
                index=0,
                component="python-packages",
                action="install" if all(h.endswith("absent") for h in have) else "upgrade",
                summary=f"pip install {named}{into} (now: {', '.join(have)}); torch is the CPU build",
                version_to=" ".join(want),
                commands=lines,
                preconditions=(
                    f"{py} has pip",
                    f"{py} is not externally managed (PEP 668): else --python or --venv",
                ),
                preflight=tuple(preflight),
                verify=verify,
                sources=self.sources("torch_npu") + self.sources("torch"),
            )
        )


def _driver_requirement(matrix: Matrix, cann: str, family: str) -> Any:
    from cannenv.errors import CannenvError

    try:
        return matrix.driver_requirement(cann, family)
    except CannenvError:
        return None


_RANK = {c: i for i, c in enumerate(ORDER)}
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._+/-]{0,250}\Z")
_PEP668 = (
    "import os, sys, sysconfig, configparser as c\n"
    "m = os.path.join(sysconfig.get_path('stdlib'), 'EXTERNALLY-MANAGED')\n"
    "ok = sys.prefix != sys.base_prefix or not os.path.exists(m)\n"
    "ok = ok or os.environ.get('PIP_BREAK_SYSTEM_PACKAGES', '').lower() in ('1', 'true', 'yes', 'on')\n"
    "h = os.path.expanduser('~')\n"
    "for f in ('/etc/pip.conf', '/etc/xdg/pip/pip.conf', h + '/.config/pip/pip.conf',\n"
    "          h + '/.pip/pip.conf'):\n"
    "    p = c.ConfigParser()\n"
    "    try: p.read(f)\n"
    "    except c.Error: continue\n"
    "    for s in ('global', 'install'):\n"
    "        v = p.get(s, 'break-system-packages', fallback='')\n"
    "        ok = ok or v.lower() in ('1', 'true', 'yes', 'on')\n"
    "ok or print(sys.executable + ' is externally managed (PEP 668, ' + m + '): pip refuses it; '\n"
    "    'provision with --venv DIR or --python /path/to/venv/bin/python', file=sys.stderr)\n"
    "sys.exit(0 if ok else 3)\n"
)
"""The PEP 668 preflight: the interpreter pip will use accepts installs — a venv, no
``EXTERNALLY-MANAGED`` marker, or the site allowed it (``break-system-packages`` in pip's
configuration or ``PIP_BREAK_SYSTEM_PACKAGES``)."""
