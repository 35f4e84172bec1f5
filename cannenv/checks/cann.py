"""CANN checks: anything installed at all, several installs, ops/kernels and NNAL against the toolkit."""

from __future__ import annotations

import re

from cannenv.checks import Check, Target
from cannenv.checks._util import cann_v, cite, family_title, installer_file, same_cann
from cannenv.errors import CannenvError
from cannenv.facts import CannInstall, Facts
from cannenv.report import Finding

# Python packages CANN's own tools import; missing ones give `EH9999 ... init env failed` (research §7).
CANN_PYTHON_DEPS = (
    "numpy",
    "decorator",
    "sympy",
    "cffi",
    "protobuf",
    "attrs",
    "pyyaml",
    "psutil",
    "scipy",
    "requests",
    "absl-py",
)


def _present(facts: Facts) -> list[tuple[str, bool]]:
    return [
        ("driver", facts.driver is not None),
        ("CANN", bool(facts.cann.installs)),
        ("NNAL", facts.cann.nnal is not None),
        ("npu-smi", facts.devices.npu_smi_path is not None),
        ("torch_npu", "torch-npu" in facts.python.packages or facts.python.torch_npu_dir is not None),
        ("MindIE", facts.mindie is not None),
        ("NPU PCI device", bool(facts.devices.pci)),
        ("/dev/davinci* node", bool(facts.devices.dev_nodes)),
    ]


def has_ascend_software(facts: Facts) -> bool:
    return any(ok for _, ok in _present(facts))


def _ascend_software(facts: Facts, target: Target) -> list[Finding]:
    c = ASCEND_SOFTWARE
    has = _present(facts)
    found = [name for name, ok in has if ok]
    if found:
        return [c.finding("pass", "found: " + ", ".join(found))]
    return [
        c.finding(
            "fail",
            f"no Ascend software at all under {facts.root}: no NPU driver, no CANN toolkit, no torch_npu, "
            "no NPU device",
            "install first the NPU driver and firmware (Ascend HDK) on an NPU host, then the CANN toolkit and the "  # noqa: E501
            "ops/kernels package for your chip, then `pip install torch-npu`; "
            "`cannenv matrix list` shows the validated stacks",
        )
    ]


def _cann_installs(facts: Facts, target: Target) -> list[Finding]:
    c = CANN_INSTALLS
    installs = facts.cann.installs
    if not installs:
        if facts.driver is not None or facts.python.torch_npu_dir is not None:
            return [
                c.finding(
                    "fail",
                    "no CANN toolkit under /usr/local/Ascend, ~/Ascend, the prefix ASCEND_HOME_PATH / "
                    "ASCEND_TOOLKIT_HOME / ASCEND_OPP_PATH name (none set to a toolkit: source its "
                    "set_env.sh) or a pip <site-packages>/ascend/cann-<version>",
                    _install_remedy(facts, target),
                )
            ]
        return [c.finding("skip", "no CANN toolkit installed")]
    active = facts.cann.active_install()
    listing = ", ".join(f"{i.version or '?'} ({i.path})" for i in installs)
    if len(installs) == 1:
        via = f"; found through {installs[0].found_via}" if installs[0].found_via else ""
        return [c.finding("pass", f"CANN {listing}; {facts.cann.active_reason}{via}")]
    others = [i for i in installs if i is not active]
    if active is not None and not any(references(facts, i) for i in others):
        # side by side (the vendor's multi-version layout; the planner's default policy): an install
        # nothing selects — no link, no variable, no search path names it — cannot be picked up
        kept = ", ".join(f"{i.version or '?'} ({i.path})" for i in others)
        return [
            c.finding(
                "pass",
                f"CANN {active.version or '?'} ({active.path}) in use — {facts.cann.active_reason}; "
                f"kept beside it, inactive (nothing points at it): {kept}",
            )
        ]
    return [
        c.finding(
            "warn",
            f"{len(installs)} CANN installs: {listing}; in use: {active.version if active else '?'} — "
            f"{facts.cann.active_reason}",
            f"make one explicit: open a new shell and `source {active.set_env}`"
            if active and active.set_env
            else "source exactly one CANN set_env.sh in a fresh shell",
        )
    ]


def references(facts: Facts, install: CannInstall) -> list[str]:
    """What on this host still points at ``install``: selector links and the environment's CANN
    variables and search paths (``LD_LIBRARY_PATH``, ``PATH``, ``PYTHONPATH``), links resolved."""
    root = install.path.rstrip("/")
    links = facts.cann.links

    def hits(path: str) -> bool:
        p = path.rstrip("/")
        for link, dest in links.items():  # a path through a selector link is where the link leads
            if p == link or p.startswith(link + "/"):
                p = dest.rstrip("/") + p[len(link) :]
                break
        return p == root or p.startswith(root + "/")

    out = [f"{link} → {dest}" for link, dest in links.items() if hits(dest)]
    env = facts.env
    for key, val in sorted(env.vars.items()):
        if key.startswith("ASCEND") and val.startswith("/") and hits(val):
            out.append(f"{key}={val}")
    for key, paths in (
        ("LD_LIBRARY_PATH", env.ld_library_path),
        ("PATH", env.path),
        ("PYTHONPATH", env.pythonpath),
    ):
        out.extend(f"{key} entry {p}" for p in paths if hits(p))
    return out


def _install_remedy(facts: Facts, target: Target) -> str:
    """Install the target stack's CANN (toolkit, ops, then its set_env.sh in that version's layout)."""
    from cannenv.checks._util import toolkit_set_env

    cann = target.stack.version("cann") if target.stack is not None else None
    if cann is None:
        return (
            "install the CANN toolkit: `sh Ascend-cann-toolkit_<ver>_linux-<arch>.run --install`, then the "
            "ops/kernels package for your chip (`cannenv matrix list` shows the validated versions)"
        )
    arch = facts.os.arch
    tk = installer_file(target, arch, "cann", cann)
    ops_v = target.stack.version("ops") if target.stack is not None else None
    ops = f", then {installer_file(target, arch, 'ops', ops_v)}" if ops_v else ""
    set_env = toolkit_set_env(facts, cann)
    return f"install CANN {cann} (target stack): `sh {tk} --install`{ops}, then `source {set_env}`"


def _set_env_for_nnal(facts: Facts, target: Target) -> str:
    """NNAL installs on top of a sourced toolkit: the active one's, else the target CANN's."""
    from cannenv.checks._util import toolkit_set_env

    inst = facts.cann.active_install()
    cann = inst.version if inst is not None else None
    if cann is None and target.stack is not None:
        cann = target.stack.version("cann")
    return toolkit_set_env(facts, cann)


def _ops_family(chips: tuple[str, ...]) -> list[str]:
    from cannenv.layout import family_of_chip

    return [f for f in (family_of_chip(ch) for ch in chips) if f]


def _ops_remedy(target: Target, cann: str, family: str | None, arch: str | None) -> str:
    if target.matrix is not None and family and cann_v(cann) is not None:
        try:
            name = target.matrix.ops_package(cann, family, arch or "x86_64")
            return f"install {name.file} (`sh {name.file} --install`) after sourcing the toolkit's set_env.sh"
        except CannenvError:
            pass
    return (
        f"install the ops/kernels package of CANN {cann} for {family_title(family)} "
        "(Ascend-cann-kernels-<chip>_<ver>_linux-<arch>.run up to 8.3, Ascend-cann-<chip>-ops_<ver>_… from 8.5)"  # noqa: E501
    )


def _version_series(text: str | None) -> tuple[int, ...] | None:
    m = re.match(r"^(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _range_admits(spec: str, series: tuple[int, ...]) -> bool | None:
    """``>=7.6, <=8.2`` on major.minor (the form in component version.info files)."""
    ok = True
    for part in (p.strip() for p in spec.split(",")):
        m = re.match(r"^(>=|<=|==|>|<)?\s*(\d+)\.(\d+)\Z", part)
        if not m:
            return None
        op, v = m.group(1) or "==", (int(m.group(2)), int(m.group(3)))
        ok = (
            ok
            and {"<": series < v, "<=": series <= v, ">": series > v, ">=": series >= v, "==": series == v}[
                op
            ]
        )
    return ok


def _toolkit_ops(facts: Facts, target: Target) -> list[Finding]:
    c = TOOLKIT_OPS
    inst = facts.cann.active_install()
    if inst is None:
        return [c.finding("skip", "no active CANN toolkit", caused_by="cann-installs")]
    cann = inst.version or "?"
    family = target.family
    remedy = _ops_remedy(target, cann, family, inst.arch or facts.os.arch)
    if not inst.ops:
        return [
            c.finding(
                "fail",
                f"no ops/kernels package in {inst.path} (operators fail with "
                "`binary_info_config.json ... opp_kernel package` errors)",
                remedy,
            )
        ]
    out: list[Finding] = []
    tk = next((comp for comp in inst.components if comp.name == "toolkit"), None)
    judge = target.matrix is not None and cann_v(cann) is not None
    hint = _dir_name_hint(inst)
    for pkg in inst.ops:
        version = pkg.cann_version  # from the version files, never the directory name
        problems = []
        rule_ok: bool | None = None
        said = ""
        if judge and target.matrix is not None and version and cann_v(version) is not None:
            rule_ok, said = target.matrix.companion_verdict("ops", cann, version)
        if rule_ok is False:
            problems.append(f"ops {version} does not go with toolkit {cann}: {said}")
        elif (
            rule_ok is None
            and pkg.version_dir
            and inst.version
            and not same_cann(pkg.version_dir, inst.version)
        ):
            problems.append(f"kernels version_dir {pkg.version_dir} ≠ toolkit {inst.version}")
        if tk is not None and "opp_kernel" in tk.required and pkg.version:
            series = _version_series(pkg.version)
            verdict = _range_admits(tk.required["opp_kernel"], series) if series else None
            if verdict is False:
                problems.append(
                    f"toolkit requires opp_kernel {tk.required['opp_kernel']}, kernels are {pkg.version}"
                )
        fams = _ops_family(pkg.chips)
        if family and pkg.chips and family not in fams:
            problems.append(
                f"kernels are for {', '.join(pkg.chips)}, but this host is {family_title(family)}"
            )
        label = (
            f"{pkg.package_name or 'kernels'} {version or '?'} for {', '.join(pkg.chips) or 'unknown chip'}"
        )
        if hint and version and inst.name_version and not same_cann(version, inst.name_version):
            label += f" ({hint})"
        if problems:
            out.append(c.finding("fail", f"{label}: " + "; ".join(problems), remedy, subject=pkg.path))
        elif family and not pkg.chips:
            out.append(
                c.finding("warn", f"{label}: cannot tell which chip the kernels target", subject=pkg.path)
            )
        elif rule_ok and version and not same_cann(version, cann):
            out.append(c.finding("pass", f"{label} with toolkit {cann}: {said}", subject=pkg.path))
        else:
            out.append(c.finding("pass", f"{label} matches toolkit {cann}", subject=pkg.path))
    return out


def _dir_name_hint(inst: CannInstall) -> str:
    """What the install's directory name says, as a hint only (an ops-only upgrade keeps the
    ``cann-<version>`` name, CANN 9.x installation guide)."""
    if not inst.name_version:
        return ""
    return (
        f"the directory {inst.path.rsplit('/', 1)[-1]} names {inst.name_version}, a hint only: an ops-only "
        "upgrade keeps the cann-<version> directory name"
    )


def _nnal_cann(facts: Facts, target: Target) -> list[Finding]:
    c = NNAL_CANN
    nnal = facts.cann.nnal
    inst = facts.cann.active_install()
    pinned = target.stack.version("nnal") if target.stack is not None else None
    if nnal is None:
        explicit = target.choice.how in ("option", "lock")
        what = f"pins NNAL {pinned}"
        if (
            pinned
            and not explicit
            and inst is not None
            and inst.version
            and not same_cann(pinned, inst.version)
        ):
            # NNAL must be the CANN's own version: with a nearest stack whose CANN differs from the
            # installed one, the consistent NNAL is the installed CANN's
            pinned = inst.version
            what = f"has NNAL, which must be the installed CANN's version {pinned}"
        if pinned:
            return [
                c.finding(
                    "fail" if explicit else "warn",
                    f"NNAL is not installed; stack {target.stack.id if target.stack else ''} "
                    f"{what} (torch_npu/vllm-ascend need libatb.so)",
                    f"install {installer_file(target, facts.os.arch, 'nnal', pinned)} "
                    f"(`source {_set_env_for_nnal(facts, target)}` first, then `--install`)",
                )
            ]
        return [
            c.finding(
                "skip", "NNAL/ATB is not installed (only needed for libatb.so users such as vllm-ascend)"
            )
        ]
    out: list[Finding] = []
    cann = inst.version if inst else None
    if cann and nnal.version:
        allowed: tuple[str, ...] = ()
        if target.matrix is not None and cann_v(cann) is not None:
            allowed = target.matrix.companion_versions("nnal", cann)
        ok = any(same_cann(nnal.version, a) for a in allowed) if allowed else same_cann(nnal.version, cann)
        if ok:
            out.append(c.finding("pass", f"NNAL {nnal.version} goes with CANN {cann}", subject="version"))
        else:
            want = allowed[0] if allowed else cann
            out.append(
                c.finding(
                    "fail",
                    f"NNAL {nnal.version} does not go with CANN {cann}",
                    f"install {installer_file(target, facts.os.arch, 'nnal', want)}",
                    subject="version",
                )
            )
    elif nnal.version is None:
        out.append(c.finding("error", f"cannot tell the NNAL version under {nnal.path}", subject="version"))
    out.extend(_nnal_python(facts, target, nnal.version))
    atb_home = facts.env.vars.get("ATB_HOME_PATH")
    torch_abi = facts.python.torch_cxx11_abi
    m = re.search(r"cxx_abi_([01])", atb_home or "")
    set_env = nnal.set_env or f"{nnal.path}/set_env.sh"
    if torch_abi is not None:
        abi_want = 1 if torch_abi else 0
        if m is None:
            out.append(
                c.finding(
                    "warn",
                    "ATB_HOME_PATH is not set: NNAL's environment is not sourced",
                    f"source {set_env} --cxx_abi={abi_want}",
                    subject="abi",
                )
            )
        elif int(m.group(1)) != abi_want:
            out.append(
                c.finding(
                    "fail",
                    f"ATB_HOME_PATH selects cxx_abi_{m.group(1)} but torch is built with "
                    f"_GLIBCXX_USE_CXX11_ABI={abi_want} (`undefined symbol …__cxx11…` at import)",
                    f"source {set_env} --cxx_abi={abi_want}",
                    subject="abi",
                )
            )
        elif nnal.abis and f"cxx_abi_{abi_want}" not in nnal.abis:
            out.append(
                c.finding(
                    "fail",
                    f"NNAL has no cxx_abi_{abi_want} variant ({', '.join(nnal.abis)})",
                    "reinstall NNAL (it ships both ABIs)",
                    subject="abi",
                )
            )
        else:
            out.append(c.finding("pass", f"ATB cxx_abi_{abi_want} matches torch's C++ ABI", subject="abi"))
    return out


def _nnal_python(facts: Facts, target: Target, version: str | None) -> list[Finding]:
    """NNAL's Python library (torch_atb) against the host's Python: the vendor's installer installs it
    only on the Python versions ``python_limits`` states for that release."""
    c = NNAL_CANN
    py = facts.python.version
    if target.matrix is None or not version or not py:
        return []
    broken = target.matrix.python_limits_broken("nnal", version, py)
    if not broken:
        return []
    lim = broken[0]
    said = (
        f"NNAL {version}'s Python library {lim.library} installs only on Python {', '.join(lim.python)} "
        f"({cite(target, lim.sources)})"
    )
    have = facts.python.packages.get(lim.library.replace("_", "-")) or facts.python.packages.get(lim.library)
    if have:
        return [
            c.finding(
                "warn",
                f"{lim.library} {have} is installed on Python {py}: {said}",
                f"use Python {' or '.join(lim.python)} where {lim.library} is needed",
                subject="python",
            )
        ]
    return [
        c.finding(
            "pass",
            f"NNAL {version} on Python {py}: libatb.so is usable; {said}, "
            f"so `import {lim.library}` is not available here",
            subject="python",
        )
    ]


def _cann_python_deps(facts: Facts, target: Target) -> list[Finding]:
    c = CANN_PYTHON_DEPS_CHECK
    if not facts.cann.installs:
        return [c.finding("skip", "no CANN toolkit installed", caused_by="cann-installs")]
    if facts.python.source == "none" or not facts.python.packages:
        return [c.finding("skip", "the Python environment could not be read")]
    missing = [p for p in CANN_PYTHON_DEPS if p not in facts.python.packages]
    if not missing:
        return [c.finding("pass", "CANN's Python dependencies are installed")]
    return [c.finding("warn", "missing: " + ", ".join(missing), "pip install " + " ".join(missing))]


ASCEND_SOFTWARE = Check(
    "ascend-software",
    "Ascend software present",
    "Nothing else can be judged on a host with no driver, no CANN and no torch_npu; say so plainly.",
    "critical",
    _ascend_software,
)
CANN_INSTALLS = Check(
    "cann-installs",
    "one CANN toolkit, clearly selected",
    "With several CANN versions side by side, the one in use depends on links and the sourced set_env.sh; "
    "mixing them gives version-mismatch errors that are hard to trace.",
    "medium",
    _cann_installs,
)
TOOLKIT_OPS = Check(
    "toolkit-ops",
    "ops/kernels package matches the toolkit (version and chip)",
    "Operators ship in a separate per-chip package; a missing, older or other-chip package fails at the first "  # noqa: E501
    "operator call (`aclnn… failed`, `binary_info_config.json`).",
    "critical",
    _toolkit_ops,
)
NNAL_CANN = Check(
    "nnal-cann",
    "NNAL/ATB matches CANN and torch's C++ ABI",
    "NNAL must be the CANN's version, and its cxx_abi_0/1 variant must match torch; otherwise "
    "`undefined symbol` errors at import.",
    "high",
    _nnal_cann,
)
CANN_PYTHON_DEPS_CHECK = Check(
    "cann-python-deps",
    "CANN's Python dependencies installed",
    "CANN's compiler imports numpy, sympy, decorator … at run time; missing ones give `EH9999 init env failed`.",  # noqa: E501
    "medium",
    _cann_python_deps,
    reads=("python-packages",),
)
CHECKS = (ASCEND_SOFTWARE, CANN_INSTALLS, TOOLKIT_OPS, NNAL_CANN, CANN_PYTHON_DEPS_CHECK)
