"""Environment variables the stack reads (research §5), with secrets redacted.

Only stack-relevant variables are kept; any variable whose name suggests a secret is reported by
name only, its value replaced by ``<redacted>`` — in facts, reports and every renderer. Credentials
embedded in URLs (``https://user:pass@host``) are redacted too.
"""

from __future__ import annotations

import re
from typing import Any

from cannenv.facts import EnvFacts
from cannenv.probes._common import ProbeContext

REDACTED = "<redacted>"
SECRET_NAME_RE = re.compile(
    r"(TOKEN|SECRET|PASSW(OR)?D|PASSWD|PWD_|API_?KEY|(^|_)KEY($|_)|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE)",
    re.IGNORECASE,
)
_URL_CRED_RE = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<cred>[^/@\s:]+(:[^/@\s]*)?)@", re.IGNORECASE)
KEEP_NAMES = frozenset(
    {
        "ASCEND_HOME_PATH",
        "ASCEND_TOOLKIT_HOME",
        "ASCEND_TOOLKIT_LATEST_HOME",
        "ASCEND_OPP_PATH",
        "ASCEND_AICPU_PATH",
        "ASCEND_CUSTOM_OPP_PATH",
        "TOOLCHAIN_HOME",
        "ATB_HOME_PATH",
        "CMAKE_PREFIX_PATH",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "PATH",
        "PYTHONPATH",
        "SOC_VERSION",
        "TORCH_DEVICE_BACKEND_AUTOLOAD",
        "PYTORCH_NPU_ALLOC_CONF",
        "TASK_QUEUE_ENABLE",
        "HOME",
        "container",
    }
)
KEEP_PREFIXES = ("ASCEND_", "ATB_", "HCCL_", "ASDOPS_", "LCCL_", "NPU_", "TORCH_NPU")


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME_RE.search(name))


def redact_value(value: str) -> str:
    """Remove credentials embedded in URLs."""
    return _URL_CRED_RE.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", value)


def redact_env(env: dict[str, str] | Any) -> tuple[dict[str, str], tuple[str, ...]]:
    """(kept variables with secrets redacted, names of redacted variables)."""
    kept: dict[str, str] = {}
    redacted: list[str] = []
    for name in sorted(env):
        value = str(env[name])
        if is_secret_name(name):
            redacted.append(name)
            kept[name] = REDACTED
            continue
        if name in KEEP_NAMES or name.startswith(KEEP_PREFIXES):
            kept[name] = redact_value(value)
    return kept, tuple(redacted)


def split_path(value: str | None) -> tuple[str, ...]:
    return tuple(p for p in (value or "").split(":") if p)


def probe(ctx: ProbeContext) -> dict[str, Any]:
    kept, redacted = redact_env(dict(ctx.host.env))
    return {
        "env": EnvFacts(
            vars=kept,
            redacted=redacted,
            ld_library_path=split_path(kept.get("LD_LIBRARY_PATH")),
            path=split_path(kept.get("PATH")),
            pythonpath=split_path(kept.get("PYTHONPATH")),
        )
    }
