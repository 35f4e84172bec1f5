"""CANN toolkit installs, both layouts, and which one is active and why (research §3.3, §4.3–§4.5).

* ≤ 8.3: ``<base>/ascend-toolkit/<ver>/`` with the ``latest`` link and ``set_env.sh`` beside them.
* ≥ 8.5: ``<base>/cann-<ver>/`` and the ``<base>/cann`` link; ``ascend-toolkit/latest`` may still exist.
* ``<base>`` is ``/usr/local/Ascend``, the ``Install_Path`` of ``/etc/Ascend/ascend_cann_install.info``,
  or ``~/Ascend`` for a non-root install.
"""

from __future__ import annotations

import posixpath
from typing import Any

from cannenv.compat import Literal
from cannenv.facts import CannFacts, CannInstall, ComponentInfo
from cannenv.probes import ops
from cannenv.probes._common import (
    ProbeContext,
    bracket_list,
    exists,
    get_ci,
    is_dir,
    list_dir,
    parse_kv,
    read_text,
    realpath,
    with_home,
)

SYSTEM_BASE = "/usr/local/Ascend"
CANN_INSTALL_INFO = "/etc/Ascend/ascend_cann_install.info"
COMPONENTS = ("toolkit", "runtime", "compiler", "opp", "opp_kernel", "hccl")
_SKIP = {"latest", "set_env.sh", "set_env.csh", "set_env.fish"}


def component_info(name: str, path: str, kv: dict[str, str]) -> ComponentInfo:
    """A component's parsed ``version.info`` (``required_package_<name>_version`` lines collected)."""
    required = {
        k[len("required_package_") : -len("_version")]: v
        for k, v in kv.items()
        if k.startswith("required_package_") and k.endswith("_version")
    }
    return ComponentInfo(
        name=name,
        path=path,
        version=get_ci(kv, "Version"),
        version_dir=get_ci(kv, "version_dir"),
        required=required,
    )


ENV_VARS = ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_OPP_PATH")
"""Variables a sourced ``set_env.sh`` sets that name the toolkit (or a directory inside it)."""
_MAX_ENV_PATH = 4096
PIP_PREFIXES = ("/usr/local/lib", "/usr/lib", "/opt/conda/lib")
"""Where ``pip install ascend-cann-toolkit`` puts ``<site-packages>/ascend/cann-<version>/``."""


def env_bases(ctx: ProbeContext) -> list[tuple[str, str]]:
    """(base dir, how it was named) for toolkits a sourced ``set_env.sh`` names at any prefix:
    the directory above ``ascend-toolkit`` / ``cann`` / ``cann-<version>`` in ``ASCEND_HOME_PATH``,
    ``ASCEND_TOOLKIT_HOME`` or ``ASCEND_OPP_PATH`` (``/home/u/cann81/Ascend/ascend-toolkit/latest``
    -> ``/home/u/cann81/Ascend``; a pip install's ``<site-packages>/ascend/cann-9.1.0`` ->
    ``<site-packages>/ascend``). Host paths only: the host reads them inside ``--root``."""
    out: list[tuple[str, str]] = []
    for var in ENV_VARS:
        value = ctx.host.getenv(var) or ""
        if not value.startswith("/") or len(value) > _MAX_ENV_PATH or "\x00" in value:
            continue
        parts = posixpath.normpath(value).split("/")
        for i in range(len(parts) - 1, 0, -1):
            name = parts[i]
            if name in ("ascend-toolkit", "cann") or name.startswith("cann-"):
                out.append(("/".join(parts[:i]) or "/", f"{var}={value}"))
                break
    return out


def pip_bases(ctx: ProbeContext) -> list[tuple[str, str]]:
    """``<site-packages>/ascend`` dirs of the usual Python prefixes and of the active venv/conda env
    (``pip install ascend-cann-toolkit``: CANN 9.1.0 installation guide, instg_0104)."""
    prefixes = list(PIP_PREFIXES)
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        value = ctx.host.getenv(var) or ""
        if value.startswith("/") and len(value) <= _MAX_ENV_PATH:
            prefixes.append(posixpath.normpath(value) + "/lib")
    out: list[tuple[str, str]] = []
    for lib in prefixes:
        for py in list_dir(ctx, lib):
            if not py.startswith("python3"):
                continue
            for sp in ("site-packages", "dist-packages"):
                base = f"{lib}/{py}/{sp}/ascend"
                if is_dir(ctx, base):
                    out.append((base, f"pip layout {base}/cann-<version>"))
    return out


def _bases(ctx: ProbeContext, record: dict[str, str]) -> list[tuple[str, bool]]:
    """(base dir, user install?) in search order, without duplicates."""
    bases = _standard_bases(ctx, record)
    for base, _how in (*env_bases(ctx), *pip_bases(ctx)):
        bases.append((base, base.startswith(("/home/", "/root/"))))
    seen: set[str] = set()
    out = []
    for b, user in bases:
        if b not in seen:
            seen.add(b)
            out.append((b, user))
    return out


def _standard_bases(ctx: ProbeContext, record: dict[str, str]) -> list[tuple[str, bool]]:
    bases: list[tuple[str, bool]] = [(SYSTEM_BASE, False)]
    rec = record.get("Install_Path")
    if rec:
        bases.append((rec.rstrip("/") or "/", False))
    home = ctx.host.getenv("HOME")
    homes = [home] if home else []
    if not ctx.host.is_live:
        homes += ["/root"] + [f"/home/{d}" for d in list_dir(ctx, "/home")]
    for h in homes:
        bases.append((f"{h.rstrip('/')}/Ascend", True))
    return bases


def _install(
    ctx: ProbeContext,
    path: str,
    layout: Literal["toolkit", "cann"],
    name_version: str | None,
    user: bool,
    set_env: str | None,
) -> CannInstall:
    info_path = None
    kv: dict[str, str] = {}
    for entry in list_dir(ctx, path):
        if entry.endswith("-linux"):
            p = f"{path}/{entry}/ascend_toolkit_install.info"
            text = read_text(ctx, "toolkit", p)
            if text is not None:
                info_path, kv = p, parse_kv(text)
                if not get_ci(kv, "version"):
                    ctx.issue("toolkit", "malformed", p, f"{p} has no version= line")
                break
            if exists(ctx, p):
                info_path = p
    components = []
    opp_kernel: dict[str, str] = {}
    for comp in COMPONENTS:
        p = f"{path}/{comp}/version.info"
        text = read_text(ctx, "toolkit", p)
        if text is not None:
            comp_kv = parse_kv(text)
            components.append(component_info(comp, p, comp_kv))
            if comp == "opp_kernel":
                opp_kernel = comp_kv  # the ops probe judges it too: read once
    version = get_ci(kv, "version")
    source = "ascend_toolkit_install.info" if version else None
    if version is None:
        for c in components:
            if c.name == "toolkit" and c.version_dir and c.version_dir != "cann":
                version, source = c.version_dir, "toolkit/version.info version_dir"
                break
    if version is None and name_version:
        version, source = name_version, "directory name"
        ctx.issue(
            "toolkit",
            "malformed",
            path,
            f"{path}: no version file names the toolkit version; the directory name's {name_version} is "
            "only a hint (an ops-only upgrade keeps the cann-<version> name)",
        )
    return CannInstall(
        name_version=name_version,
        path=path,
        layout=layout,
        version=version,
        version_source=source,
        innerversion=get_ci(kv, "innerversion"),
        compatible_version=bracket_list(get_ci(kv, "compatible_version")),
        arch=get_ci(kv, "arch"),
        info_path=info_path,
        user_install=user,
        components=tuple(components),
        ops=ops.probe_install(ctx, path, opp_kernel),
        set_env=set_env,
    )


def discover(ctx: ProbeContext, record: dict[str, str]) -> tuple[list[CannInstall], dict[str, str]]:
    """All installs, plus the links that may select one: {link path: resolved host path}."""
    installs: list[CannInstall] = []
    links: dict[str, str] = {}
    seen_real: set[str] = set()

    def unseen_dir(p: str) -> bool:
        """A directory (not a link to one) not yet found under another name; marks it seen."""
        if ctx.host.is_symlink(p) or not ctx.host.is_dir(p):
            return False
        real = realpath(ctx, p) or p
        if real in seen_real:
            return False
        seen_real.add(real)
        return True

    for base, user in _bases(ctx, record):
        if not is_dir(ctx, base):
            continue
        tk = f"{base}/ascend-toolkit"
        tk_set_env: str | None = f"{tk}/set_env.sh"
        if not exists(ctx, tk_set_env or ""):
            tk_set_env = None  # a remedy must never name a set_env.sh that is not there
        for name in list_dir(ctx, tk):
            p = f"{tk}/{name}"
            if name not in _SKIP and unseen_dir(p):
                installs.append(_install(ctx, p, "toolkit", name, user, tk_set_env))
        for name in list_dir(ctx, base):
            p = f"{base}/{name}"
            if not name.startswith("cann-") or not unseen_dir(p):
                continue
            set_env = next(
                (
                    s
                    for s in (f"{p}/set_env.sh", f"{base}/cann/set_env.sh", tk_set_env)
                    if s and exists(ctx, s)
                ),
                None,
            )
            installs.append(_install(ctx, p, "cann", name[len("cann-") :], user, set_env))
        cann_dir = f"{base}/cann"
        if is_dir(ctx, cann_dir) and not ctx.host.is_symlink(cann_dir):
            real = realpath(ctx, cann_dir) or cann_dir
            if real not in seen_real and any(e.endswith("-linux") for e in list_dir(ctx, cann_dir)):
                seen_real.add(real)
                own = f"{cann_dir}/set_env.sh"
                installs.append(
                    _install(ctx, cann_dir, "cann", None, user, own if exists(ctx, own) else None)
                )
        latest = f"{tk}/latest"
        if is_dir(ctx, latest) and not ctx.host.is_symlink(latest):
            owner = _latest_dir_owner(ctx, latest, installs)
            if owner is not None:
                links[latest] = realpath(ctx, owner.path) or owner.path
        for link in (latest, cann_dir):
            if ctx.host.is_symlink(link):
                target = realpath(ctx, link)
                if target is None:
                    ctx.issue("toolkit", "dangling-symlink", link, f"{link} is a link to a missing directory")
                else:
                    links[link] = target
    return installs, links


def _latest_dir_owner(ctx: ProbeContext, latest: str, installs: list[CannInstall]) -> CannInstall | None:
    """The install an ``ascend-toolkit/latest`` *directory* of symlinks points into.

    Some installers make ``latest`` a real directory whose entries (``runtime``, ``compiler``,
    ``<arch>-linux`` ...) are links into one version's directory, instead of one link. The install
    most entries point into wins; an unknown target leaves ``latest`` unexplained (None).
    """
    counts: dict[str, int] = {}
    by_path = {inst.path: inst for inst in installs}
    for name in list_dir(ctx, latest):
        entry = f"{latest}/{name}"
        if not ctx.host.is_symlink(entry):
            continue
        target = realpath(ctx, entry)
        owner = _owner(installs, ctx, target) if target else None
        if owner is not None:
            counts[owner.path] = counts.get(owner.path, 0) + 1
    if not counts:
        return None
    if len(counts) > 1:
        ctx.issue(
            "toolkit",
            "malformed",
            latest,
            f"{latest} holds links into {len(counts)} CANN installs: " + ", ".join(sorted(counts)),
        )
    return by_path[max(counts, key=lambda p: counts[p])]


def _through_links(value: str, links: dict[str, str]) -> str:
    """A path through a known selector (``.../ascend-toolkit/latest/...``) -> the same path in its target."""
    for link, target in links.items():
        if value == link or value.startswith(link + "/"):
            return target + value[len(link) :]
    return value


def _owner(installs: list[CannInstall], ctx: ProbeContext, target: str) -> CannInstall | None:
    real_target = realpath(ctx, target) or target
    for inst in installs:
        real = realpath(ctx, inst.path) or inst.path
        if real_target == real or real_target.startswith(real + "/"):
            return inst
    return None


def choose_active(
    ctx: ProbeContext, installs: list[CannInstall], links: dict[str, str]
) -> tuple[str | None, str]:
    """Which install is in use and why: environment first, then links, then the only/newest one."""
    if not installs:
        return None, "no CANN toolkit found"
    for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = ctx.host.getenv(var)
        if value:
            owner = _owner(installs, ctx, value) or _owner(installs, ctx, _through_links(value, links))
            if owner is not None:
                return owner.path, f"{var}={value} points into it (its set_env.sh was sourced)"
    for link, target in links.items():
        owner = _owner(installs, ctx, target)
        if owner is not None:
            how = (
                f"`source {owner.set_env}` would select it" if owner.set_env else "set_env.sh would select it"
            )
            return owner.path, f"{link} links to it; {how} (environment not set)"
    if len(installs) == 1:
        return installs[0].path, "the only CANN toolkit installed (environment not set, no `latest` link)"
    newest = _newest(installs)
    return (
        newest.path,
        f"newest of {len(installs)} installs; nothing selects one (no environment, no `latest` link)",
    )


def _newest(installs: list[CannInstall]) -> CannInstall:
    """The install with the highest readable CANN version; the last path when none is readable."""
    from cannenv.errors import CannenvError
    from cannenv.versions import CannVersion

    versioned: list[tuple[CannVersion, CannInstall]] = []
    for inst in installs:
        try:
            versioned.append((CannVersion.parse(inst.version or ""), inst))
        except (CannenvError, ValueError):
            continue
    if versioned:
        return max(versioned, key=lambda pair: pair[0])[1]
    return max(installs, key=lambda i: i.path)


def probe(ctx: ProbeContext) -> dict[str, Any]:
    record: dict[str, str] = {}
    record_path = None
    for cand in with_home(ctx, (CANN_INSTALL_INFO,), "Ascend/ascend_cann_install.info"):
        text = read_text(ctx, "toolkit", cand)
        if text is not None:
            record, record_path = parse_kv(text), cand
            break
    installs, links = discover(ctx, record)
    installs = _mark_found_via(ctx, installs, [b for b, _ in _standard_bases(ctx, record)])
    active, reason = choose_active(ctx, installs, links)
    return {
        "cann": CannFacts(
            installs=tuple(installs),
            active=active,
            active_reason=reason,
            links=links,
            install_record=record,
            install_record_path=record_path,
        )
    }


def _mark_found_via(ctx: ProbeContext, installs: list[CannInstall], standard: list[str]) -> list[CannInstall]:
    """Say how an install outside the standard bases was found (the variable or the pip layout)."""
    import dataclasses

    def under(path: str, base: str) -> bool:
        return path.startswith(base.rstrip("/") + "/")

    named = [*env_bases(ctx), *pip_bases(ctx)]
    out = []
    for inst in installs:
        how = next((h for b, h in named if under(inst.path, b)), None)
        if how and not any(under(inst.path, b) for b in standard):
            inst = dataclasses.replace(inst, found_via=how)
        out.append(inst)
    return out


def arch_dir(inst: CannInstall) -> str:
    return f"{inst.arch or 'x86_64'}-linux"
