"""`cannenv env`: the exports the detected CANN's ``set_env.sh`` would make, for sh or fish.

The steps come from ``dockerfiles/environment.yaml`` — the one table of the vendor's environment,
which :mod:`cannenv.image` also evaluates for an image's ``ENV`` — in file order: toolkit
``set_env.sh`` up to 8.3 (research §5.1), the CANN ≥ 8.5 environment as captured by the official
images (§5.2), the driver's libraries (§5.4) and NNAL/ATB's ``set_env.sh`` (§5.3). Paths are written
out (no ``${ASCEND_TOOLKIT_HOME}`` indirection) so the output is what the variables end up holding.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from cannenv.errors import NotFoundError
from cannenv.facts import CannInstall, Facts

Shell = Literal["sh", "fish"]
Layout = Literal["classic", "cann", "nnal"]
# CannInstall.layout -> the layout's name in dockerfiles/environment.yaml.
_TABLE_LAYOUT: dict[str, Layout] = {"toolkit": "classic", "cann": "cann"}
_PLACEHOLDER = re.compile(r"(?<!\$)\{([a-z_]+)\}")
_VARIABLE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)\}")


@dataclass(frozen=True)
class EnvStep:
    kind: Literal["set", "prepend"]
    name: str
    values: tuple[str, ...]


@cache
def table() -> dict[str, Any]:
    """``dockerfiles/environment.yaml``: the one table of what the vendor's ``set_env.sh`` sets."""
    import yaml

    from cannenv.resources import dockerfiles_dir

    text = (dockerfiles_dir() / "environment.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def table_steps(layouts: Sequence[Layout], roots: Mapping[str, str]) -> list[EnvStep]:
    """The table's operations for ``layouts`` (in order), every value fully expanded.

    ``roots`` fills the ``{placeholders}`` (``arch``, ``toolkit_home``, ``latest_home``, ``atb_home``);
    ``${VAR}`` is the value a ``set`` earlier in the same evaluation gave ``VAR``.
    """
    scalars: dict[str, str] = {}

    def expand(text: object) -> str:
        def placeholder(m: re.Match[str]) -> str:
            if m[1] in roots:
                return roots[m[1]]
            raise ValueError(f"environment.yaml: {{{m[1]}}} has no value here")

        def variable(m: re.Match[str]) -> str:
            if m[1] in scalars:
                return scalars[m[1]]
            raise ValueError(f"environment.yaml: ${{{m[1]}}} used before it is set")

        return _VARIABLE.sub(variable, _PLACEHOLDER.sub(placeholder, str(text)))

    out: list[EnvStep] = []
    for lay in layouts:
        for op in table()["layouts"][lay]["ops"]:
            if "set" in op:
                scalars[op["set"]] = expand(op["value"])
                out.append(EnvStep("set", op["set"], (scalars[op["set"]],)))
            else:
                out.append(EnvStep("prepend", op["prepend"], tuple(expand(v) for v in op["values"])))
    return out


def _base_of(inst: CannInstall) -> str:
    parts = inst.path.rstrip("/").split("/")
    if inst.layout == "toolkit":
        return "/".join(parts[:-2]) or "/"
    return "/".join(parts[:-1]) or "/"


def toolkit_steps(inst: CannInstall, *, latest_exists: bool, arch: str) -> list[EnvStep]:
    """Steps of the toolkit environment for one install (layout decides the recipe).

    Up to 8.3 the script points at ``ascend-toolkit/latest`` (the install itself when that link is
    missing); from 8.5 at ``cann-<ver>``, with ``latest`` beside it (research §5.1, §5.2).
    """
    latest = f"{_base_of(inst)}/ascend-toolkit/latest" if latest_exists else inst.path
    if inst.layout == "toolkit":
        roots = {"arch": arch, "toolkit_home": latest}
    else:
        roots = {"arch": arch, "toolkit_home": inst.path, "latest_home": latest}
    return table_steps((_TABLE_LAYOUT[inst.layout],), roots)


def nnal_steps(atb_home: str) -> list[EnvStep]:
    """Steps of NNAL/ATB's ``set_env.sh`` for one ``.../atb/cxx_abi_<N>`` directory (research §5.3)."""
    return table_steps(("nnal",), {"atb_home": atb_home})


def collapse(steps: Sequence[EnvStep]) -> tuple[tuple[str, str], ...]:
    """The variables ``steps`` leave behind, in first-set order, as Dockerfile ``ENV`` values.

    Prepended variables keep the previous value through ``${VAR:+:${VAR}}`` (``PATH`` with a plain
    ``:${PATH}``), so an unset variable never gains an empty entry (an empty ``LD_LIBRARY_PATH``
    entry means the working directory).
    """
    scalars: dict[str, str] = {}
    paths: dict[str, list[str]] = {}
    order: list[str] = []
    for step in steps:
        if step.kind == "set":
            scalars[step.name] = step.values[0]
        else:
            paths[step.name] = [*step.values, *paths.get(step.name, [])]
        if step.name not in order:
            order.append(step.name)
    out: list[tuple[str, str]] = []
    for name in order:
        if name in scalars:
            out.append((name, scalars[name]))
        else:
            tail = f":${{{name}}}" if name == "PATH" else f"${{{name}:+:${{{name}}}}}"
            out.append((name, ":".join(paths[name]) + tail))
    return tuple(out)


def atb_abi(facts: Facts) -> int:
    """The ABI NNAL's set_env.sh picks: torch's C++11 ABI, 1 when torch is absent (research §5.3)."""
    return 0 if facts.python.torch_cxx11_abi is False else 1


def steps_for(facts: Facts) -> list[EnvStep]:
    inst = facts.cann.active_install()
    if inst is None:
        raise NotFoundError(
            "no CANN toolkit found to build an environment for",
            hint="install the CANN toolkit (Ascend-cann-toolkit_<ver>_linux-<arch>.run --install), "
            "or point --root at the tree that holds it",
        )
    latest_exists = f"{_base_of(inst)}/ascend-toolkit/latest" in facts.cann.links
    arch = inst.arch or facts.os.arch or "x86_64"
    out = toolkit_steps(inst, latest_exists=latest_exists, arch=arch)
    nnal = facts.cann.nnal
    if nnal is not None:
        out += nnal_steps(f"{nnal.path}/latest/atb/cxx_abi_{atb_abi(facts)}")
    return out


def render(env_steps: Sequence[EnvStep], shell: Shell, *, header: str | None = None) -> str:
    lines = [f"# {line}" for line in (header or "").splitlines()]
    for step in env_steps:
        if shell == "sh":
            if step.kind == "set":
                lines.append(f"export {step.name}={shlex.quote(step.values[0])}")
            else:
                joined = ":".join(step.values)
                lines.append(f'export {step.name}={shlex.quote(joined)}"${{{step.name}:+:${{{step.name}}}}}"')
        else:
            if step.kind == "set":
                lines.append(f"set -gx {step.name} {_fish_quote(step.values[0])}")
            else:
                vals = " ".join(_fish_quote(v) for v in step.values)
                lines.append(f"set -gx {step.name} {vals} ${step.name}")
    return "\n".join(lines) + "\n"


def _fish_quote(value: str) -> str:
    if value and all(c.isalnum() or c in "/._-+:=,@" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
