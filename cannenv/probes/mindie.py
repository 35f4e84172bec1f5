"""MindIE: the installed release, from the version file its ``.run`` installer writes.

Where the vendor's own scripts put it (docs/doctor.md cites each):

* the MindIE package (Ascend/MindIE-Motor ``build/mindie/``): installed under ``/usr/local/Ascend/mindie``
  (root) or ``/home/<user>/Ascend/mindie``, as ``<version>/`` with a ``latest`` link; ``version.info``
  there holds ``Ascend-mindie : <version>`` and a ``mindie-<part>: <version>`` line per part
  (``set_env.sh`` tests ``latest/version.info`` to know MindIE is installed). Images print the value
  with the product name: ``Ascend-mindie : MindIE 2.1.RC2.B080``;
* the open-source MindIE-LLM package (Ascend/MindIE-LLM ``scripts/install.sh``): only
  ``<base>/mindie-llm/latest/version.info`` with ``MindIE-LLM Version : <version>``, which names no
  MindIE release.

The pip packages (``mindie_llm``, ``mindie-motor``) are read by the Python probe like any other.
"""

from __future__ import annotations

from typing import Any

from cannenv.facts import MindieFacts
from cannenv.probes import _common as c
from cannenv.probes._common import ProbeContext

MINDIE_BASES = ("/usr/local/Ascend/mindie",)
MAX_VERSION_INFO = 16 << 10
"""a version.info is a few lines; more is not one"""
_MAX_PARTS = 32
_MAX_VALUE = 64


def _clean(value: str) -> str | None:
    """``MindIE 2.1.RC2.B080`` -> ``2.1.RC2.B080``; a value that is not one short token -> None."""
    words = value.split()
    if len(words) == 2 and words[0].lower() == "mindie":
        words = words[1:]
    if len(words) != 1 or len(words[0]) > _MAX_VALUE:
        return None
    return words[0]


def parse_version_info(text: str) -> tuple[str | None, dict[str, str]]:
    """The MindIE package's ``version.info``: (``Ascend-mindie``, {``mindie-<part>``: version})."""
    kv = c.parse_kv(text, seps=":")
    release = c.get_ci(kv, "Ascend-mindie")
    parts: dict[str, str] = {}
    for key, value in kv.items():
        name = key.strip().lower()
        if name.startswith("mindie-") and len(parts) < _MAX_PARTS and len(name) <= _MAX_VALUE:
            v = _clean(value)
            if v is not None:
                parts[name] = v
    return (_clean(release) if release else None), parts


def parse_llm_version_info(text: str) -> str | None:
    """MindIE-LLM's ``version.info``: ``MindIE-LLM Version : 1.0.0`` -> ``1.0.0``."""
    value = c.get_ci(c.parse_kv(text, seps=":"), "MindIE-LLM Version")
    return _clean(value) if value else None


def probe(ctx: ProbeContext) -> dict[str, Any]:
    for base in c.with_home(ctx, MINDIE_BASES, "Ascend/mindie"):
        if not c.is_dir(ctx, base):
            continue
        path = f"{base}/latest/version.info"
        text = c.read_text(ctx, "mindie", path, max_bytes=MAX_VERSION_INFO)
        if text is not None:
            version, parts = parse_version_info(text)
            if version is None:
                ctx.issue("mindie", "malformed", path, f"{path} names no MindIE release (Ascend-mindie)")
            return {"mindie": MindieFacts(path=base, version_file=path, version=version, parts=parts)}
        path = f"{base}/mindie-llm/latest/version.info"
        text = c.read_text(ctx, "mindie", path, max_bytes=MAX_VERSION_INFO)
        if text is not None:
            llm = parse_llm_version_info(text)
            if llm is None:
                ctx.issue("mindie", "malformed", path, f"{path} names no MindIE-LLM version")
            return {
                "mindie": MindieFacts(
                    path=base,
                    version_file=path,
                    layout="mindie-llm",
                    parts={"mindie-llm": llm} if llm else {},
                )
            }
    return {}
