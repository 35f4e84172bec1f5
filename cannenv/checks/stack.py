"""The target stack: ``--stack``, a lock file, or the best match for what is installed; and the
``stack-match`` check that compares the host with it component by component."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cannenv.checks import Check, Target
from cannenv.checks._util import family_title, installer_file, pinned_matches
from cannenv.errors import InputError, NotFoundError
from cannenv.facts import Facts
from cannenv.report import Finding, StackChoice, Status

if TYPE_CHECKING:
    from cannenv.matrix import Matrix, Stack

COMPARED = ("cann", "ops", "nnal", "driver", "python", "torch", "torch_npu")
# Components that live on the host's side of a container: judged only where devices are expected.
DEVICE_KEYS = frozenset({"driver"})


def installed_versions(facts: Facts) -> dict[str, str]:
    """Component key (matrix spelling) -> installed version, for what could be read."""
    out: dict[str, str] = {}
    inst = facts.cann.active_install()
    if inst is not None and inst.version:
        out["cann"] = inst.version
        ops = [v for v in (p.cann_version for p in inst.ops) if v]
        if ops:
            out["ops"] = str(ops[0])
    if facts.cann.nnal is not None and facts.cann.nnal.version:
        out["nnal"] = facts.cann.nnal.version
    if facts.driver is not None and facts.driver.version:
        out["driver"] = facts.driver.version
    if facts.firmware is not None and facts.firmware.version:
        out["firmware"] = facts.firmware.version
    py = facts.python
    if py.version:
        out["python"] = py.version
    for key, dist in (("torch", "torch"), ("torch_npu", "torch-npu")):
        if dist in py.packages:
            out[key] = py.packages[dist].split("+")[0]
    return out


def load_lock_ids(path: str) -> tuple[str, str | None, bool]:
    """(stack_id, matrix_digest, without_nnal) from a lock file: cannenv.lock when it parses, else any
    YAML/JSON mapping with ``stack_id`` (and optionally ``matrix_digest``). ``without_nnal``: the lock
    records the image's installers and NNAL is not among them (built without ``--with-nnal``)."""
    from cannenv.lock import load_lock

    try:
        lock = load_lock(path)
        without_nnal = bool(lock.installers) and not any(i.component == "nnal" for i in lock.installers)
        return lock.stack_id, lock.matrix_digest, without_nnal
    except InputError:
        pass
    import yaml

    from cannenv import records

    text = records.read_text(path, what="lock file", missing=NotFoundError)
    try:
        doc = records.load_yaml(text)
    except (yaml.YAMLError, records.DocumentTooComplexError) as exc:
        raise InputError(f"cannot read lock file {path!r}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("stack_id"), str):
        raise InputError(
            f"lock file {path!r}: field 'stack_id' is missing (expected a string)",
            hint="a lock written by `cannenv image build` has stack_id and matrix_digest",
        )
    digest = doc.get("matrix_digest")
    return doc["stack_id"], digest if isinstance(digest, str) else None, False


def choose_target(
    facts: Facts,
    matrix: Matrix | None,
    *,
    stack_id: str | None = None,
    lock: str | None = None,
    driver_policy: str = "accepted",
) -> Target:
    """Pick the stack to judge against and say why. Raises NotFoundError for an unknown --stack id.

    ``driver_policy``: what satisfies the stack's driver (:mod:`cannenv.checks.policy`)."""
    from dataclasses import replace

    if driver_policy not in ("accepted", "pinned"):
        raise InputError(f"--driver-policy {driver_policy!r}: expected accepted or pinned")
    return replace(_choose(facts, matrix, stack_id=stack_id, lock=lock), driver_policy=driver_policy)


def _choose(
    facts: Facts, matrix: Matrix | None, *, stack_id: str | None = None, lock: str | None = None
) -> Target:
    fam, fam_src = facts.devices.family, facts.devices.family_source
    if matrix is None:
        return Target(None, None, StackChoice(how="none", reason="no matrix loaded"), fam, fam_src)
    if lock is not None:
        sid, digest, without_nnal = load_lock_ids(lock)
        stack = matrix.stack(sid)
        reason = f"from lock file {lock}"
        if without_nnal and stack.version("nnal") is not None:
            # the stack as its image was built: NNAL is judged only where it is installed
            from dataclasses import replace

            stack = replace(stack, components={k: c for k, c in stack.components.items() if k != "nnal"})
            reason += " (its image leaves NNAL out: built without --with-nnal)"
        if digest and digest != matrix.digest:
            reason += f" (the lock was made with matrix {digest[:19]}…, this matrix is {matrix.digest[:19]}…)"
        return _target(matrix, stack, StackChoice(id=stack.id, how="lock", reason=reason), fam, fam_src)
    if stack_id is not None:
        stack = matrix.stack(stack_id)
        return _target(
            matrix, stack, StackChoice(id=stack.id, how="option", reason="given with --stack"), fam, fam_src
        )
    from cannenv.checks.cann import has_ascend_software

    if not has_ascend_software(facts):
        return Target(
            matrix, None, StackChoice(how="none", reason="no Ascend software installed"), fam, fam_src
        )
    have = installed_versions(facts)
    have.pop("firmware", None)
    if not have or not matrix.stacks:
        why = "nothing installed to match" if not have else "the matrix has no stacks"
        return Target(matrix, None, StackChoice(how="none", reason=why), fam, fam_src)
    arch = facts.os.arch
    pool = [
        s for s in matrix.stacks if (fam is None or s.family == fam) and (arch is None or arch in s.arches)
    ]
    if not pool:
        return Target(
            matrix,
            None,
            StackChoice(how="none", reason=f"no stack for {family_title(fam)} on {arch}"),
            fam,
            fam_src,
        )
    ops_fams = _ops_families(facts)
    scored = sorted(
        ((_score(s, have, ops_fams), s) for s in pool), key=lambda t: (t[0], t[1].id), reverse=True
    )
    best_score, best = scored[0]
    n, same = best_score[0], [k for k in have if pinned_matches(k, best.version(k), have[k])]
    if n == 0:
        return Target(
            matrix,
            None,
            StackChoice(
                how="none",
                reason="no stack shares any installed version",
                candidates=tuple(t[1].id for t in scored[:3]),
            ),
            fam,
            fam_src,
        )
    tie = _tie_break(best_score, best, scored[1] if len(scored) > 1 else None, fam, ops_fams)
    others = tuple(t[1].id for t in scored[1:4])
    if n == len(have):
        reason = "best match: same " + ", ".join(f"{k} {have[k]}" for k in same) + tie
        return _target(
            matrix,
            best,
            StackChoice(id=best.id, how="best-match", reason=reason, candidates=others),
            fam,
            fam_src,
        )
    differ = [k for k in have if k not in same]
    reason = (
        f"no stack matches everything installed; nearest valid stack shares {', '.join(same)} and differs in "
        + ", ".join(f"{k} ({have[k]} installed, {best.version(k) or 'not pinned'} in stack)" for k in differ)
        + tie
    )
    return _target(
        matrix, best, StackChoice(id=best.id, how="nearest", reason=reason, candidates=others), fam, fam_src
    )


_STATUS_RANK = {"certified": 3, "published": 2, "deprecated": 1, "eol": 0}


def _ops_families(facts: Facts) -> set[str]:
    """Families the installed ops/kernels packages are built for (evidence of the hardware)."""
    from cannenv.layout import family_of_chip

    chips = {ch for i in facts.cann.installs for p in i.ops for ch in p.chips}
    return {f for f in (family_of_chip(ch) for ch in chips) if f}


def _score(stack: Stack, have: dict[str, str], ops_fams: set[str]) -> tuple[Any, ...]:
    """Rank of a stack for this host, most important first: installed versions it shares, whether
    the installed ops package is built for its family, its status (certified over published over
    end of life), how recent its CANN and torch are, then the hardware table's family order."""
    from cannenv.checks._util import cann_v, pep_v
    from cannenv.soc import FAMILY_IDS

    same = sum(1 for k in have if pinned_matches(k, stack.version(k), have[k]))
    cann = cann_v(stack.version("cann"))
    torch = pep_v(stack.version("torch"))
    return (
        same,
        stack.family in ops_fams,
        _STATUS_RANK.get(stack.status, 0),
        cann.key if cann is not None else (),
        torch.release if torch is not None else (),
        -FAMILY_IDS.index(stack.family) if stack.family in FAMILY_IDS else -99,
    )


def _tie_break(
    score: tuple[Any, ...],
    best: Stack,
    runner: tuple[tuple[Any, ...], Stack] | None,
    fam: str | None,
    ops_fams: set[str],
) -> str:
    """Why ``best`` and not the runner-up that shares as many installed versions: '' when no tie."""
    if runner is None or runner[0][0] != score[0]:
        return ""
    other_score, other = runner
    why = [
        f"the installed ops package is built for {family_title(best.family)}",
        f"it is {best.status}, {other.id} is {other.status}",
        f"its CANN {best.version('cann')} is newer than {other.version('cann')}",
        f"its torch {best.version('torch')} is newer than {other.version('torch')}",
        f"no NPU or ops package tells the family; {family_title(best.family)} comes first in the "
        "hardware table (pass --stack to choose)",
    ]
    for i, text in enumerate(why, start=1):
        if score[i] != other_score[i]:
            if i == 1 and fam is None and not ops_fams:
                continue
            return f"; chosen over {other.id} because {text}"
    return f"; tied with {other.id}, chosen by id"


def _target(
    matrix: Matrix, stack: Stack, choice: StackChoice, fam: str | None, fam_src: str | None
) -> Target:
    if fam is None:
        return Target(matrix, stack, choice, stack.family, f"stack {stack.id}")
    return Target(matrix, stack, choice, fam, fam_src)


_REMEDY = {
    "torch": "pip install torch=={v} --index-url https://download.pytorch.org/whl/cpu",
    "torch_npu": "pip install torch-npu=={v}",
    "cann": "install CANN toolkit {v} ({file}) and source its set_env.sh",
    "ops": "install {file}",
    "nnal": "install {file}",
    "driver": "install the Ascend HDK driver {v}",
    "python": "use Python {v}",
}


_NOT_INSTALLED_CAUSE = {
    "cann": "cann-installs",
    "ops": "cann-installs",
    "nnal": "nnal-cann",
    "driver": "driver-installed",
    "torch_npu": "torch-torch-npu",
    "torch": "torch-torch-npu",
}
"""The check whose finding already says a component is missing (or, for torch and torch_npu, that
the pair disagrees): stack-match's own line for it is that finding's consequence."""


_JUDGED_BY = {
    "cann": "toolkit-ops",
    "ops": "toolkit-ops",
    "nnal": "nnal-cann",
    "driver": "driver-cann",
    "torch": "torch-torch-npu",
    "torch_npu": "torch-torch-npu",
}
"""The check that judges an installed component against the rest of the host."""


def _cause(key: str, got: str | None, explicit: bool) -> str | None:
    """The finding a stack-match line is a consequence of (kept only when that finding is not a
    pass, see checks.link_causes). A missing component: the check that says it is missing. An
    installed one that differs from a *nearest* stack: the check that judges it against the host,
    whose remedy is the smallest consistent change (an explicit --stack is the target itself)."""
    if got is None or key in ("torch", "torch_npu"):
        return _NOT_INSTALLED_CAUSE.get(key)
    if key == "driver":
        return "driver-cann"  # installed but too old for the CANN: that check already says so
    return None if explicit else _JUDGED_BY.get(key)


def _stack_match(facts: Facts, target: Target) -> list[Finding]:
    c = STACK_MATCH
    stack = target.stack
    if stack is None:
        return [c.finding("skip", target.choice.reason or "no target stack")]
    explicit = target.choice.how in ("option", "lock")
    have = installed_versions(facts)
    out: list[Finding] = []
    from cannenv.checks import policy

    mismatch = policy.hardware_mismatch(facts, stack)
    if mismatch is not None:
        fam = facts.devices.family
        out.append(
            c.finding(
                "fail",
                mismatch,
                f"pick a stack for this hardware: `cannenv matrix list --family {fam}`"
                if fam
                else "pick a stack for this hardware: `cannenv matrix list`",
                subject="family",
            )
        )
        # A stack for other hardware is refused as a whole: no remedy installs its packages here.
        return out
    guess = policy.family_inferred(facts, target)
    if guess is not None and not target.no_devices:
        out.append(
            c.finding(
                "warn",
                guess,
                "confirm the hardware (`npu-smi info`, `lspci -d 19e5:`) and name the target: "
                f"--stack ID or --target {target.family}=ID; no driver or firmware is planned from a guess",
                subject="family",
                scope="device",
            )
        )
    for key in COMPARED:
        want = policy.wanted(facts, target, key)
        if want is None:
            continue
        got = have.get(key)
        if got is not None and pinned_matches(key, want, got):
            continue
        if key == "driver" and policy.driver_satisfies(target, got)[0]:
            continue  # the one notion of compliant: the planner leaves such a driver too
        if key not in DEVICE_KEYS and target.no_software:
            # the node carries only the HDK: this component lives in the workloads' images
            detail = f"{key}: stack {stack.id} pins {want}; not judged: {target.no_software}"
            out.append(c.finding("skip", detail, subject=key))
            continue
        if key in DEVICE_KEYS and target.no_devices:
            # The driver comes from the host at run time (an image never holds it): not judged here.
            detail = f"{key}: stack {stack.id} pins {want}; not judged: {target.no_devices}"
            out.append(c.finding("skip", detail, subject=key, scope="device"))
            continue
        unknown = policy.unknown_reason(facts, key)
        if unknown is not None:  # a probe could not read it: never "not installed"
            detail = f"{key}: stack {stack.id} pins {want}; not judged: {unknown}"
            out.append(c.finding("error", detail, policy.RECOLLECT, subject=key))
            continue
        cause = _cause(key, got, explicit)
        if policy.kept(facts, target, key, got, want):
            # a chosen target moves nothing that is installed: no remedy that would (never downward)
            later = policy.newer(key, got, want)
            detail = (
                f"{key}: {got} installed, "
                + (f"newer than {want} in" if later else f"{want} in")
                + f" the nearest stack {stack.id}; kept (a target the doctor chose moves nothing)"
            )
            remedy = (
                "keep it"
                if later
                else f"to move to {want}, name the target: `cannenv plan --stack {stack.id}`"
            )
            out.append(c.finding("warn", detail, remedy, subject=key, caused_by=cause))
            continue
        status: Status = "fail" if explicit else "warn"
        detail = f"{key}: stack {stack.id} pins {want}, " + (f"installed {got}" if got else "not installed")
        if want != stack.version(key):
            detail = (
                f"{key}: {want} (the installed CANN's; stack {stack.id} pins {stack.version(key)} "
                f"with CANN {stack.version('cann')}), " + (f"installed {got}" if got else "not installed")
            )
        remedy = _REMEDY.get(key, "install {v}").format(
            v=want, file=installer_file(target, facts.os.arch, key, want)
        )
        out.append(c.finding(status, detail, remedy, subject=key, caused_by=cause))
    if not any(f.status != "skip" for f in out):
        out.append(c.finding("pass", f"installed versions match stack {stack.id}"))
    return out


def host_summary(facts: Facts) -> dict[str, Any]:
    """The ``host`` block of the report: one line per component, from the facts."""
    from cannenv.checks.policy import loaded_driver

    inst = facts.cann.active_install()
    d = facts.devices
    loaded = loaded_driver(facts)
    npu = None
    if d.chips:
        npu = f"{len({c.npu_id for c in d.chips})}× {d.chips[0].name}" + (f" ({d.soc})" if d.soc else "")
    elif d.pci:
        npu = f"{len(d.pci)} PCI device(s) {d.pci[0].device}"
    os_name = (
        facts.os.pretty_name
        or " ".join(x for x in (facts.os.distro_id, facts.os.distro_version) if x)
        or None
    )
    return {
        "hostname": facts.hostname,
        "root": facts.root,
        "os": os_name,
        "arch": facts.os.arch,
        "in_container": facts.container.in_container,
        "driver": facts.driver.version if facts.driver else None,
        "driver_loaded": loaded[0] if loaded else None,
        "firmware": facts.firmware.version if facts.firmware else None,
        "cann": inst.version if inst else None,
        "cann_installs": [i.version or i.path for i in facts.cann.installs],
        "cann_active_reason": facts.cann.active_reason,
        "ops_chips": sorted({ch for i in facts.cann.installs for p in i.ops for ch in p.chips}),
        "nnal": facts.cann.nnal.version if facts.cann.nnal else None,
        "npu": npu,
        "family": d.family,
        "soc": d.soc,
        "python": facts.python.version,
        "torch": facts.python.packages.get("torch"),
        "torch_npu": facts.python.packages.get("torch-npu"),
    }


STACK_MATCH = Check(
    "stack-match",
    "installed versions match the target stack",
    "A stack is a validated combination; every component that differs from it is a combination nobody tested.",  # noqa: E501
    "medium",
    _stack_match,
)
CHECKS = (STACK_MATCH,)
