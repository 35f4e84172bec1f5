"""What satisfies a stack: the one notion of "compliant" the planner, the doctor, ``fleet report``
and the Kubernetes labels all call, so a node that ran its plan is green in every view.

* **The driver** (``--driver-policy``): ``accepted`` (default) — the installed driver satisfies the
  stack when it is the stack's pin *or* the vendor recommends / states it compatible for the stack's
  CANN on this family (:meth:`cannenv.matrix.Matrix.driver_requirement`); the planner leaves such a
  driver in place (no downgrade of a working driver for a pin), so the doctor must pass it too.
  ``pinned`` — only the stack's own driver build satisfies it; the planner then moves the driver
  (and the firmware with it) to the pin.
* **No downgrade without an explicit target**: a target the doctor *chose* (best match / nearest
  stack, not ``--stack``/``--lock``/a per-node ``--target``) never moves an installed component
  downward and never moves the installed CANN: the CANN-bound components (toolkit, ops, NNAL)
  follow the CANN that is installed, so the remedies say "NNAL 8.3.RC2" for an 8.3.RC2 toolkit,
  never the nearest stack's 8.3.RC1; pins the stack makes for another CANN (driver, torch_npu) are
  left too. Missing pieces and later releases of the installed line are still planned.
* **One target per node**: a stack built for another product family (or architecture) than the node's
  hardware is refused with the reason (:func:`hardware_mismatch`), never planned.
* **Unknown is not absent**: a fact whose probe recorded an issue (a version file it could not read,
  an interpreter that timed out or gave no answer, a probe that crashed; not a link to nothing, which
  says its target is absent) is *unknown*
  (:func:`unknown`), never "not installed". The planner refuses a host whose plan would act on an
  unknown fact (nothing is installed over what was merely not read), ``provision`` leaves it
  ``not-run`` (``facts-unknown``), and the doctor judges such a component ``error`` ("could not
  judge"), so ``fleet report``, the labels and the metrics call the node ``failing``, never
  ``compliant``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cannenv.compat import Literal

if TYPE_CHECKING:
    from cannenv.checks import Target
    from cannenv.facts import Facts, ProbeIssue
    from cannenv.matrix import Stack

DriverPolicy = Literal["accepted", "pinned"]
DRIVER_POLICIES: tuple[str, ...] = ("accepted", "pinned")
CANN_BOUND = ("cann", "ops", "nnal")


READ_BY: dict[str, tuple[str, ...]] = {
    "account": ("os",),
    "driver": ("driver", "container"),
    "firmware": ("firmware", "driver", "container"),
    "cann": ("toolkit",),
    "ops": ("toolkit", "ops"),
    "nnal": ("nnal",),
    "python": ("python",),
    "python-packages": ("python",),
    "torch": ("python",),
    "torch_npu": ("python",),
}
"""Component (a stack key or a plan step's component) -> the probes whose issues leave what the host
has of it unknown. An issue is named by the probe that read the file or ran the command (the firmware's
``version.info`` is ``firmware``, the ops packages' ``ops``); a crashed probe by its name in
:data:`cannenv.probes.PROBES`, so ``driver`` covers the firmware too, and ``toolkit`` the ops packages.
The driver and firmware also read ``container`` (inside a container they are not planned)."""

UNKNOWN_WHAT: dict[str, str] = {
    "account": "the HwHiAiUser account",
    "driver": "the installed driver",
    "firmware": "the installed firmware",
    "cann": "the installed CANN toolkits",
    "ops": "the installed ops/kernels packages",
    "nnal": "the installed NNAL",
    "python": "the Python version",
    "python-packages": "the installed Python packages",
    "torch": "the installed torch",
    "torch_npu": "the installed torch_npu",
}

RECOLLECT = (
    "collect the facts again (`cannenv facts --json`, `cannenv fleet collect`); a file that stays "
    "unreadable needs the package that owns it reinstalled"
)
"""What to do about an unknown fact: read it again (a probe that timed out under load answers the
next time); nothing is planned over it meanwhile."""


def unknown(facts: Facts, key: str) -> tuple[ProbeIssue, ...]:
    """The probe issues that leave what the host has of component ``key`` unknown (:data:`READ_BY`);
    empty when it is known (present, or absent as far as a probe that worked can tell)."""
    probes = READ_BY.get(key, ())
    # a link to nothing was read: what it names is absent (a selector left behind by an uninstall,
    # which the environment step points again), unlike a file that could not be read
    return tuple(i for i in facts.issues if i.probe in probes and i.kind != "dangling-symlink")


def unknown_reason(facts: Facts, key: str) -> str | None:
    """``could not read <what>: the <probe> probe: <kind>: <message>`` (the first issue, and how many
    more), or None when :func:`unknown` finds nothing."""
    issues = unknown(facts, key)
    if not issues:
        return None
    first = issues[0]
    more = f" (and {len(issues) - 1} more issue{'s' if len(issues) > 2 else ''})" if len(issues) > 1 else ""
    what = UNKNOWN_WHAT.get(key, key)
    return f"could not read {what}: the {first.probe} probe: {first.kind}: {first.message}{more}"


def explicit(target: Target) -> bool:
    """The target was named (``--stack``, ``--lock``, a per-node ``--target``), not chosen."""
    return target.choice.how in ("option", "lock")


def driver_satisfies(target: Target, have: str | None) -> tuple[bool, str, tuple[str, ...]]:
    """(satisfied, why, sources): does the installed driver ``have`` satisfy ``target.stack``?"""
    from cannenv.checks._util import pinned_matches

    stack = target.stack
    want = stack.version("driver") if stack is not None else None
    if want is None:
        return True, "the stack pins no driver", ()
    if have is None:
        return False, "no driver installed", ()
    if pinned_matches("driver", want, have):
        return True, f"driver {have} is the stack's", ()
    if target.driver_policy == "pinned":
        return False, f"the stack pins driver {want} (--driver-policy pinned)", ()
    cann = stack.version("cann") if stack is not None else None
    family = target.family or (stack.family if stack is not None else None)
    if target.matrix is None or cann is None or family is None:
        return False, f"the stack pins driver {want}", ()
    from cannenv.errors import CannenvError

    try:
        req = target.matrix.driver_requirement(cann, family)
    except CannenvError:
        req = None
    if req is not None and req.accepts(have):
        return (
            True,
            f"driver {have} is accepted for CANN {cann} on {family} (needs {req.range}); "
            f"the stack's {want} is not required (--driver-policy accepted)",
            tuple(req.sources),
        )
    return False, f"driver {have} is not accepted for CANN {cann} on {family}", ()


def _newer(key: str, have: str, want: str) -> bool:
    from cannenv.checks._util import cann_v, driver_v, pep_v

    parse = cann_v if key in CANN_BOUND else driver_v if key in ("driver", "firmware") else pep_v
    a, b = parse(have), parse(want)
    try:
        return a is not None and b is not None and bool(a > b)
    except TypeError:
        return False


def kept(facts: Facts, target: Target, key: str, have: str | None, want: str | None) -> bool:
    """An installed component the plan leaves although it differs from ``want``: only a named target
    moves it downward, and a chosen one never moves it to pins made for another CANN than the one
    installed (missing pieces and later releases of the installed line are still planned)."""
    if explicit(target) or have is None or want is None:
        return False
    if newer(key, have, want):
        return True  # never "fixed" downward without a named target
    if key in CANN_BOUND:
        return False  # ``wanted`` already follows the installed CANN
    stack = target.stack
    line, stack_cann = cann_line(facts, target), stack.version("cann") if stack is not None else None
    from cannenv.checks._util import same_cann

    return line is not None and stack_cann is not None and not same_cann(line, stack_cann)


def newer(key: str, have: str | None, want: str | None) -> bool:
    """``have`` is a later release than ``want`` (in the component's own version grammar)."""
    return have is not None and want is not None and _newer(key, have, want)


def cann_line(facts: Facts, target: Target) -> str | None:
    """The CANN the toolkit, ops and NNAL follow: the stack's, or — for a chosen target — the CANN
    that is installed and active (never moved without a named target)."""
    stack = target.stack
    want = stack.version("cann") if stack is not None else None
    if explicit(target):
        return want
    inst = facts.cann.active_install()
    if inst is not None and inst.version:
        return inst.version
    return want


def wanted(facts: Facts, target: Target, key: str) -> str | None:
    """The version of ``key`` this node must carry under ``target`` (None: the stack pins none)."""
    stack = target.stack
    if stack is None:
        return None
    want = stack.version(key)
    if want is None or key not in CANN_BOUND or explicit(target):
        return want
    line = cann_line(facts, target)
    from cannenv.checks._util import same_cann

    if line is None or same_cann(line, stack.version("cann")):
        return want
    return line  # the stack's ops / NNAL release follow its CANN; the installed CANN's follow it


def hardware_mismatch(facts: Facts, stack: Stack) -> str | None:
    """Why ``stack`` cannot go on this node's hardware (None: it fits, or the hardware is unknown).

    The family comes from the devices, else from the chip of the installed ops/kernels package; the
    architecture from the OS."""
    from cannenv.checks._util import family_title

    fam, src = facts.devices.family, facts.devices.family_source
    if fam is None:
        from cannenv.layout import family_of_chip

        chips = sorted({ch for i in facts.cann.installs for p in i.ops for ch in p.chips})
        fams = sorted({f for f in (family_of_chip(c) for c in chips) if f})
        if len(fams) == 1:
            fam, src = fams[0], f"its ops/kernels package is built for {', '.join(chips)}"
    if fam is not None and fam != stack.family:
        return (
            f"stack {stack.id} is for {family_title(stack.family)}, this node is "
            f"{family_title(fam)} ({src or 'devices'}): refused, another chip's driver and ops would not run "
            f"here (pick a stack of that family: `cannenv matrix list --family {fam}`)"
        )
    arch = facts.os.arch
    if arch is not None and stack.arches and arch not in stack.arches:
        return f"stack {stack.id} is built for {', '.join(stack.arches)}, this node is {arch}: refused"
    return None


def loaded_driver(facts: Facts) -> tuple[str, str] | None:
    """(version, where it was read) of the driver the running kernel has loaded: npu-smi's header
    ``Version:`` (npu-smi talks to the loaded driver), else the kernel module's own version where
    it is readable (``/sys/module/<module>/version``). None when neither tells it."""
    d = facts.devices
    if d.driver_version:
        return d.driver_version, "npu-smi info's header"
    if d.module_version:
        return d.module_version, d.module_version_source or "the loaded kernel module"
    return None


def reboot_unknown(facts: Facts) -> str | None:
    """Why a reboot pending can be neither told nor ruled out (the loaded driver cannot be compared
    with the installed one), or None when it can. The doctor's ``driver-loaded`` is then ``skip``
    with this reason, ``plan`` notes it, and the label, the metric and ``fleet report`` say
    "unknown" — never "no reboot pending" (a false pass)."""
    installed = facts.driver.version if facts.driver else None
    loaded = loaded_driver(facts)
    if installed is None:
        return "no installed driver version (version.info) to compare the loaded driver with"
    if loaded is None:
        return (
            "nothing tells which driver is loaded: no npu-smi header (npu-smi info, or its capture "
            "at /var/lib/cannenv/npu-smi-info.txt) and no readable driver kernel module version "
            "(/sys/module/<module>/version) to compare with the installed one"
        )
    from cannenv.checks._util import driver_v

    bad = [v for v in (loaded[0], installed) if driver_v(v) is None]
    if bad:
        return (
            f"the loaded driver {loaded[0]} (per {loaded[1]}) and the installed {installed} cannot be "
            f"compared: {' and '.join(bad)} {'is' if len(bad) == 1 else 'are'} not a driver version"
        )
    return None


def reboot_pending(facts: Facts) -> tuple[str, str, str] | None:
    """(loaded, installed, where the loaded one was read) when the running kernel still has another
    driver loaded than the one installed (``/usr/local/Ascend/driver/version.info``): the driver
    was upgraded (or replaced) and the node has not restarted since. The planner plans a reboot,
    the doctor fails ``driver-loaded``, ``fleet report``, the labels and the metrics say
    "reboot pending" — one judgement for all of them.

    A build suffix seen on one side only (``25.0.rc1.b033`` in npu-smi, ``25.0.rc1`` in the file)
    is the same release spelled two ways, never a pending reboot. None says "not pending" only where
    :func:`reboot_unknown` is None too: where the two cannot be compared, nothing is pending *as far
    as is known*, and every view says "unknown", never "no reboot pending"."""
    from cannenv.checks._util import driver_v

    installed = facts.driver.version if facts.driver else None
    loaded = loaded_driver(facts)
    if installed is None or loaded is None:  # unknown: reboot_unknown says why
        return None
    a, b = driver_v(loaded[0]), driver_v(installed)
    if a is None or b is None:  # unknown: reboot_unknown says why
        return None
    ka, kb = a.key, b.key
    if (ka[-1] == 0) != (kb[-1] == 0):  # a build number on one side only
        ka, kb = ka[:-1], kb[:-1]
    if ka == kb:
        return None
    return loaded[0], installed, loaded[1]


def family_inferred(facts: Facts, target: Target) -> str | None:
    """Why the node's product family is a guess, or None when the hardware tells it (npu-smi, its
    board, a PCI device) or the target was named (``--stack``, ``--lock``, ``--target FAMILY=…``).

    With no hardware evidence the doctor picks a stack whose family matches the installed
    ops/kernels package — a 310P node carrying 910B kernels would be taken for an A2. The doctor,
    ``fleet report`` and ``plan`` name such a family as an inference, and the planner plans no
    driver or firmware from it (another chip's driver would not load)."""
    if facts.devices.family is not None or target.family is None or explicit(target):
        return None
    chips = sorted({ch for i in facts.cann.installs for p in i.ops for ch in p.chips})
    from cannenv.checks._util import family_title
    from cannenv.layout import family_of_chip

    fams = {f for f in (family_of_chip(c) for c in chips) if f}
    if fams == {target.family}:
        why = f"its ops/kernels package (built for {', '.join(chips)})"
    else:
        why = f"the stack chosen for what is installed ({target.stack.id if target.stack else 'none'})"
    return (
        f"the family {family_title(target.family)} is inferred from {why}: no npu-smi answer, board "
        "or PCI device tells the hardware"
    )
