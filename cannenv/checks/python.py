"""Python stack checks: torch ↔ torch_npu ↔ CANN ↔ Python, and the ABI preflight."""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources

from cannenv.checks import Check, Target
from cannenv.checks._util import cann_v, cite, pep_v, toolkit_set_env
from cannenv.facts import ElfLibrary, Facts
from cannenv.report import Finding
from cannenv.values import value


def _versions(facts: Facts) -> tuple[str | None, str | None, str | None]:
    p = facts.python.packages

    def plain(v: str | None) -> str | None:  # drop a local label: 2.13.0+cpu -> 2.13.0
        return v.split("+")[0] if v else None

    return plain(p.get("torch")), plain(p.get("torch-npu")), facts.python.version


def _torch_torch_npu(facts: Facts, target: Target) -> list[Finding]:
    c = TORCH_TORCH_NPU
    torch, tnpu, _ = _versions(facts)
    pinned = target.stack.version("torch_npu") if target.stack is not None else None
    if tnpu is None:
        if pinned:
            return [
                c.finding(
                    "fail",
                    f"torch_npu is not installed in {_where(facts)}",
                    f"pip install torch-npu=={pinned}",
                )
            ]
        return [c.finding("skip", f"torch_npu is not installed in {_where(facts)}")]
    if torch is None:
        want = _torch_for(target, tnpu)
        return [
            c.finding(
                "fail",
                f"torch_npu {tnpu} is installed without torch",
                f"pip install torch=={want} --index-url https://download.pytorch.org/whl/cpu",
            )
        ]
    vt, vn = pep_v(torch), pep_v(tnpu)
    if vt is None or vn is None:
        return [c.finding("error", f"cannot read versions torch {torch!r} / torch_npu {tnpu!r}")]
    rows = target.matrix.torch_npu_rows(torch_npu=tnpu, include_superseded=True) if target.matrix else []
    if rows:
        ok = any(pep_v(r.torch) is not None and pep_v(r.torch).release[:3] == vt.release[:3] for r in rows)
        basis = "the matrix's torch_npu rows"
    else:
        # every published pairing has the same X.Y.Z (torch_npu 2.1.0.post17 ↔ torch 2.1.0) [PT-COMPAT]
        ok = vn.release[:3] == vt.release[:3]
        basis = "every published torch_npu has its torch's X.Y.Z"
    if ok:
        return [c.finding("pass", f"torch {torch} with torch_npu {tnpu} ({basis})")]
    want = _torch_for(target, tnpu)
    return [
        c.finding(
            "fail",
            f"torch_npu {tnpu} is built for torch {want}, torch {torch} is installed "
            "(`undefined symbol` at import)",
            pair_remedy(target, torch, tnpu),
        )
    ]


def pair_remedy(target: Target, torch: str, tnpu: str) -> str:
    """The one pip command that makes torch and torch_npu agree, derived from the target stack when
    there is one (so it never contradicts stack-match), else the smallest change: keep torch_npu
    and install the torch it is built for."""
    stack = target.stack
    st_torch = stack.version("torch") if stack is not None else None
    st_tnpu = stack.version("torch_npu") if stack is not None else None
    if st_torch and st_tnpu:
        pins = []
        if not _same_release(st_torch, torch):
            pins.append(f"torch=={st_torch}")
        if pep_v(st_tnpu) != pep_v(tnpu):
            pins.append(f"torch-npu=={st_tnpu}")
        if pins:
            index = (
                " --index-url https://download.pytorch.org/whl/cpu" if pins[0].startswith("torch==") else ""
            )
            extra = " --extra-index-url https://pypi.org/simple" if index and len(pins) > 1 else ""
            return f"pip install {' '.join(pins)}{index}{extra} (the versions of target stack {stack.id})"  # type: ignore[union-attr]
    want = _torch_for(target, tnpu)
    return f"pip install torch=={want} --index-url https://download.pytorch.org/whl/cpu"


def _same_release(a: str, b: str) -> bool:
    va, vb = pep_v(a), pep_v(b)
    return bool(va and vb and va.release[:3] == vb.release[:3])


def _torch_for(target: Target, tnpu: str) -> str:
    if target.matrix is not None:
        rows = target.matrix.torch_npu_rows(torch_npu=tnpu, include_superseded=True)
        if rows:
            return rows[0].torch
    v = pep_v(tnpu)
    return ".".join(str(x) for x in v.release[:3]) if v is not None else "?"


def _where(facts: Facts) -> str:
    return facts.python.interpreter or ", ".join(facts.python.site_dirs) or "the target Python"


def _torch_npu_cann(facts: Facts, target: Target) -> list[Finding]:
    c = TORCH_NPU_CANN
    torch, tnpu, _ = _versions(facts)
    inst = facts.cann.active_install()
    if tnpu is not None and not facts.cann.installs:
        return [_torch_npu_without_cann(facts, target, torch, tnpu)]
    if tnpu is None or inst is None or inst.version is None:
        return [c.finding("skip", "needs torch_npu installed and an active CANN toolkit")]
    cann = inst.version
    if target.matrix is None or cann_v(cann) is None:
        return [c.finding("skip", f"no matrix to judge torch_npu {tnpu} against CANN {cann}")]
    m = target.matrix
    # The vendor's statements decide (matrix.torch_npu_verdict): its pairing row -> pass; a TorchNPU
    # release-line compatibility table -> pass naming it; stated incompatible -> fail; else warn.
    v = m.torch_npu_verdict(tnpu, cann, torch=torch)
    srcs = f" ({cite(target, v.sources)})" if v.sources else ""
    fits = m.torch_npu_rows(cann=cann, torch=torch) if torch else m.torch_npu_rows(cann=cann)
    fits = [r for r in fits if r.status == "current" and r.evidence == "recommended"]
    remedy = ""
    if v.recommended:  # the newest recommended build on the installed torch_npu's own torch line
        remedy = f"pip install torch-npu=={v.recommended}"
    elif fits:
        remedy = f"pip install torch-npu=={fits[0].torch_npu}"
        if (
            torch
            and pep_v(fits[0].torch)
            and pep_v(torch)
            and pep_v(fits[0].torch).release[:3] != pep_v(torch).release[:3]
        ):
            remedy = f"pip install torch=={fits[0].torch} torch-npu=={fits[0].torch_npu}"
    if v.level == "recommended":
        return [c.finding("pass", f"torch_npu {tnpu} is {v.statement}{srcs}")]
    if v.level == "compatible":
        alt = f"; the recommended torch_npu for CANN {cann} is {v.recommended}" if v.recommended else ""
        if v.caveat:  # two statements disagree: warn, naming both
            return [
                c.finding(
                    "warn",
                    f"torch_npu {tnpu} with CANN {cann}: {v.statement}{srcs}; but {v.caveat}{alt}",
                    remedy or None,
                )
            ]
        return [c.finding("pass", f"torch_npu {tnpu} with CANN {cann}: {v.statement}{srcs}{alt}")]
    if v.level == "incompatible":
        return [c.finding("fail", f"{v.subject}: {v.statement}{srcs}", remedy or None)]
    hint = remedy or "use a torch_npu listed by `cannenv matrix query --cann " + cann + "`"
    settle = f"; what would settle it: {v.settle}" if v.settle else ""
    return [c.finding("warn", f"{v.subject}: {v.statement}{srcs}{settle}", hint)]


def _torch_npu_without_cann(facts: Facts, target: Target, torch: str | None, tnpu: str) -> Finding:
    """torch_npu installed and no CANN: which CANN (and HDK) it pairs with, and the stop-gap that
    keeps plain ``import torch`` working until CANN is installed."""
    c = TORCH_NPU_CANN
    m = target.matrix
    pairs = ""
    install = "install the CANN toolkit torch_npu is built for"
    goal: str | None = None
    if m is not None:
        rows = m.torch_npu_rows(torch_npu=tnpu, include_superseded=True)
        canns = sorted({r.cann for r in rows}, key=lambda v: cann_v(v).key if cann_v(v) else ())
        if canns:
            goal = canns[-1]
            assert goal is not None
            hdk = _hdk_for(target, goal)
            pairs = f"; per the matrix it pairs with CANN {', '.join(canns)}" + (f" ({hdk})" if hdk else "")
            install = f"install CANN {goal}" + (f" and {hdk}" if hdk else "")
            stack = target.stack
            st_cann = stack.version("cann") if stack is not None else None
            st_tnpu = stack.version("torch_npu") if stack is not None else None
            if stack is not None and st_cann and (st_cann in canns or (st_tnpu and st_tnpu != tnpu)):
                goal = st_cann  # the one target every remedy derives from
                hdk = _hdk_for(target, goal)
                install = f"install CANN {goal}" + (f" and {hdk}" if hdk else "")
                if st_cann not in canns:
                    install += f" (target stack {stack.id}, with torch-npu=={st_tnpu})"
        else:
            known = [r.torch_npu for r in m.torch_npu_rows(include_superseded=True)]
            newest = max(known, key=lambda v: pep_v(v) or pep_v("0"), default=None)
            vn, vmax = pep_v(tnpu), pep_v(newest) if newest else None
            if vn is not None and vmax is not None and vn > vmax:
                pairs = (
                    f"; torch_npu {tnpu} is newer than every pairing the matrix knows (newest: {newest}), "
                    "so which CANN it needs is not known here"
                )
                install = f"install the CANN its release notes name, or torch-npu=={newest} with its CANN"
            else:
                pairs = f"; torch_npu {tnpu} is in no row of the matrix"
    autoload = ""
    vt = pep_v(torch) if torch else None
    if vt is not None and vt.release[:2] >= (2, 5):
        autoload = (
            f"; meanwhile plain `import torch` fails too: torch {torch} autoloads installed device "
            "backends, and torch_npu cannot load without CANN"
        )
    return c.finding(
        "fail",
        f"torch_npu {tnpu} is installed but no CANN toolkit is{pairs}{autoload}",
        f"{install}, then `source {toolkit_set_env(facts, goal)}`"
        + (
            "; until then `export TORCH_DEVICE_BACKEND_AUTOLOAD=0` so that `import torch` works"
            if autoload
            else ""
        ),
    )


def _hdk_for(target: Target, cann: str) -> str | None:
    """``Ascend HDK ≥ 25.0.rc1`` for a CANN on the target's family, when the matrix says."""
    from cannenv.errors import CannenvError

    if target.matrix is None or target.family is None:
        return None
    try:
        req = target.matrix.driver_requirement(cann, target.family)
    except (CannenvError, KeyError, ValueError):
        return None
    if req is None:
        return None
    from cannenv.checks._util import family_title

    return f"an Ascend HDK driver {req.range} on {family_title(target.family)}"


def _python_version(facts: Facts, target: Target) -> list[Finding]:
    c = PYTHON_VERSION
    torch, _, py = _versions(facts)
    if py is None:
        return [c.finding("skip", "Python version unknown (pass --python PATH)")]
    out: list[Finding] = []
    pinned = target.stack.version("python") if target.stack is not None else None
    if torch and target.matrix is not None:
        if target.matrix.python_ok(torch, py):
            out.append(c.finding("pass", f"Python {py} is supported by torch {torch}"))
        else:
            sup = target.matrix.python_support(torch).any_statement
            if sup:
                out.append(
                    c.finding(
                        "fail",
                        f"torch {torch} does not support Python {py} (supported: {', '.join(sup)})",
                        f"use Python {sup[-1]} (e.g. `cannenv doctor --python /usr/bin/python{sup[-1]}`)",
                    )
                )
            else:
                out.append(c.finding("skip", f"the matrix has no Python statement for torch {torch}"))
    if pinned and not _same_line(pinned, py):
        out.append(
            c.finding(
                "warn",
                f"stack {target.stack.id if target.stack else ''} uses Python {pinned}, "
                f"this environment is Python {py}",
                f"use Python {pinned}",
            )
        )
    if not out:
        out.append(c.finding("skip", "no torch installed to judge the Python version against"))
    return out


def _same_line(a: str, b: str) -> bool:
    va, vb = pep_v(a), pep_v(b)
    return bool(va and vb and va.release[:2] == vb.release[:2])


@value
class Provider:
    """The package that provides a shared library torch_npu needs, and the environment step that
    puts it on the loader's path (``step`` is formatted with ``toolkit_set_env``, ``nnal_set_env``
    and ``torch``)."""

    match: str
    """A regular expression on the soname; the first provider that matches wins."""
    package: str
    step: str
    container_step: str | None = None
    device: bool = False
    """The library comes from the host (the driver): without devices its absence is not judged."""


@value
class ProviderTable:
    """``cannenv/checks/libraries.json``: data, with its sources; JSON so that reading it on the
    doctor's path (exactly when a library is missing) costs no PyYAML import."""

    schema_version: int
    about: str
    sources: tuple[str, ...]
    providers: tuple[Provider, ...]


@cache
def providers() -> tuple[Provider, ...]:
    text = resources.files("cannenv.checks").joinpath("libraries.json").read_text(encoding="utf-8")
    return tuple(Provider(**p) for p in json.loads(text)["providers"])


def provider_of(name: str) -> Provider | None:
    return next((p for p in providers() if re.match(p.match, name)), None)


def _abi_preflight(facts: Facts, target: Target) -> list[Finding]:
    c = ABI_PREFLIGHT
    abi = facts.abi
    if not abi.checked:
        return [c.finding("skip", abi.reason or "torch_npu not found")]
    toolkit_env = toolkit_set_env(facts)
    nnal_set_env = (
        facts.cann.nnal.set_env
        if facts.cann.nnal and facts.cann.nnal.set_env
        else "/usr/local/Ascend/nnal/atb/set_env.sh"
    )
    torch = facts.python.packages.get("torch") or "<version>"
    at_import = import_closure(abi.libraries)
    missing: dict[str, list[str]] = {}
    broken = []
    for lib in abi.libraries:
        if lib.error:
            broken.append(lib.path)
        for n in lib.needed:
            if n.found is None:
                missing.setdefault(n.name, []).append(lib.path.rsplit("/", 1)[-1])
    out: list[Finding] = []
    for name, users in sorted(missing.items()):
        p = provider_of(name)
        if p is None:
            pkg, step = (
                "an unknown package",
                f"find the package that ships {name} and add its lib dir to LD_LIBRARY_PATH",
            )
        else:
            pkg = p.package
            step = p.step.format(toolkit_set_env=toolkit_env, nnal_set_env=nnal_set_env, torch=torch)
            if facts.container.in_container and p.container_step:
                step = f"{step} (in a container: {p.container_step})"
            present = _installed(facts, pkg)
            if present is False:
                step = f"install the {pkg}, then {step}"
        detail = (
            f"{name} (needed by {', '.join(sorted(set(users)))}) is not found on LD_LIBRARY_PATH, "
            f"RUNPATH, ld.so.cache or the default dirs; provided by the {pkg}"
        )
        if p is not None and p.device and target.no_devices:
            # The host mounts the driver at run time; without devices this is not judged.
            out.append(
                c.finding("skip", f"{detail}; not judged: {target.no_devices}", subject=name, scope="device")
            )
            continue
        cause = _cause_of(facts, pkg)
        if set(users) & at_import:
            out.append(
                c.finding("fail", f"{detail}: `import torch_npu` fails", step, subject=name, caused_by=cause)
            )
        else:
            later = ", ".join(sorted(set(users)))
            what = "ATB operations" if any("atb" in u for u in users) else "the operations that load " + later
            out.append(
                c.finding(
                    "warn",
                    f"{detail}: `import torch_npu` works, {what} fail until it is found "
                    f"(only {later} needs it, loaded on first use)",
                    step,
                    subject=name,
                    caused_by=cause,
                )
            )
    for path in broken:
        out.append(
            c.finding("error", f"{path} is not a readable ELF library", "reinstall torch-npu", subject=path)
        )
    if not out:
        count = sum(len(lib.needed) for lib in abi.libraries)
        out.append(
            c.finding(
                "pass", f"all {count} libraries needed by {len(abi.libraries)} torch_npu libraries resolve"
            )
        )
    return out


def import_closure(libraries: tuple[ElfLibrary, ...]) -> set[str]:
    """File names of torch_npu's own libraries that ``import torch_npu`` loads: its extension
    modules (``_C*.so``) and what they need among torch_npu's libraries, transitively. The rest
    (``libop_plugin_atb.so``) is loaded by later operations."""
    by_name = {lib.path.rsplit("/", 1)[-1]: lib for lib in libraries}
    roots = [n for n in by_name if n.startswith("_C")] or [n for n in by_name if n == "libtorch_npu.so"]
    if not roots:
        return set(by_name)  # nothing to start from: treat every library as needed at import
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [n.name for n in by_name[name].needed if n.name in by_name]
    return seen


def _cause_of(facts: Facts, package: str) -> str | None:
    """The check whose finding is the root cause of a missing library: the package is not installed."""
    if _installed(facts, package) is not False:
        return None
    if package.startswith("CANN"):
        return "cann-installs"
    if package.startswith("NPU driver"):
        return "driver-installed"
    if package.startswith("NNAL"):
        return "nnal-cann"
    return None


def _installed(facts: Facts, package: str) -> bool | None:
    if package.startswith("CANN"):
        return bool(facts.cann.installs)
    if package.startswith("NNAL"):
        return facts.cann.nnal is not None
    if package.startswith("NPU driver"):
        return facts.driver is not None
    return None


TORCH_TORCH_NPU = Check(
    "torch-torch-npu",
    "torch_npu is built for the installed torch",
    "torch_npu is compiled against one PyTorch release; another torch gives `undefined symbol` at import.",
    "critical",
    _torch_torch_npu,
    reads=("python-packages",),
)
TORCH_NPU_CANN = Check(
    "torch-npu-cann",
    "torch_npu is paired with the active CANN",
    "torch_npu does no hard CANN version check itself: a mismatch shows up later as "
    "`500001` or missing-function errors. Judged by the vendor's pairing rows and the TorchNPU release "
    "notes' compatibility tables (release line x CANN series).",
    "critical",
    _torch_npu_cann,
    reads=("python-packages",),
)
PYTHON_VERSION = Check(
    "python-version",
    "Python supported by torch and the stack",
    "torch/torch_npu wheels exist only for some Python versions; pip then falls back or fails.",
    "high",
    _python_version,
    reads=("python",),
)
ABI_PREFLIGHT = Check(
    "abi-preflight",
    "torch_npu's shared libraries will load",
    "`import torch_npu` fails with `libhccl.so: cannot open shared object file` when a library its extension "
    "module needs is not on the loader path (fail); a library only later operations load (libatb.so for ATB "
    "ops) fails those operations (warn). Found from the ELF headers without importing anything.",
    "critical",
    _abi_preflight,
    reads=("python-packages",),
)
CHECKS = (TORCH_TORCH_NPU, TORCH_NPU_CANN, PYTHON_VERSION, ABI_PREFLIGHT)
