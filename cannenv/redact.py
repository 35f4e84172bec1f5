"""The one redaction policy: which values are secrets, and how a kept value loses them.

Facts, reports, fleet files and every renderer (and `explain`'s quoted log lines) apply it: any
variable whose name suggests a secret is kept by name only, its value replaced by ``<redacted>``;
credentials embedded in URLs (``https://user:pass@host``) and secret query values are redacted in
every kept value. It sits below :mod:`cannenv.facts` and the probes, which both need it.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
SECRET_NAME_RE = re.compile(
    r"(TOKEN|SECRET|PASS|(^|_)PWD(_|$)|API_?KEY|(^|_)KEYS?($|_)|CRED|AUTH|COOKIE|SESSION|PRIVATE"
    r"|SIGNATURE|(^|_)SIG($|_)|(^|_)PAT($|_)|ACCESS_?KEY|(^|_)OTP($|_)|BEARER)",
    re.IGNORECASE,
)
"""A variable whose NAME says it holds a secret: its value is never kept. Over-matching costs a
value in the facts; under-matching leaks a credential, so the net is wide (``HCCL_PASS``,
``*_PASSPHRASE``, ``*_CREDS``, ``*_PAT`` ...)."""
# Linear on any text (cannenv.linre's lint): a scheme starts where no scheme character precedes it,
# and a query key is one run of key characters, judged by name afterwards.
_SCHEME_RE = re.compile(r"(?<![a-z0-9+.-])(?P<scheme>[a-z][a-z0-9+.-]*://)", re.IGNORECASE)
_QUERY_RE = re.compile(r"(?P<key>[?&;](?P<name>[^=?&;#\s]*)=)(?P<value>[^&;#\s]*)")
_QUERY_SECRET_WORDS = (
    "token",
    "secret",
    "pass",
    "pwd",
    "key",
    "sig",
    "auth",
    "cred",
    "session",
    "cookie",
    "code",
)
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


_NOT_SECRET = frozenset({"PWD", "OLDPWD"})  # the shell's working directories


def is_secret_name(name: str) -> bool:
    return name not in _NOT_SECRET and bool(SECRET_NAME_RE.search(name))


def redact_value(value: str) -> str:
    """Remove credentials embedded in URLs: the user-info (``user:pass@``, even when the password
    holds ``/``, ``@`` or ``:``) and query parameters named like a secret (``?token=...``)."""
    out: list[str] = []
    pos = 0
    for m in _SCHEME_RE.finditer(value):
        start = m.end()
        if start < pos:
            continue
        out.append(value[pos:start])
        end = start
        while end < len(value) and not value[end].isspace() and value[end] not in ",;\"'":
            end += 1
        out.append(_redact_url_rest(value[start:end]))
        pos = end
    out.append(value[pos:])
    return "".join(out)


def _redact_url_rest(rest: str) -> str:
    """``rest`` is a URL after ``scheme://``: redact its user-info and secret query values."""
    slash = rest.find("/")
    authority = rest if slash < 0 else rest[:slash]
    at = -1
    if "@" in authority:
        at = authority.rfind("@")
    elif ":" in authority and not authority.rsplit(":", 1)[1].isdigit() and "@" in rest:
        # ``user:pa/ss@host``: an unencoded '/' in the password. The user-info then ends at the
        # last '@' (an '@' in the path is redacted with it: more hidden, nothing leaked)
        at = rest.rfind("@")
    if at >= 0:
        rest = f"{REDACTED}@{rest[at + 1 :]}"

    def query(m: re.Match[str]) -> str:
        name = m.group("name").lower()
        return f"{m.group('key')}{REDACTED}" if any(w in name for w in _QUERY_SECRET_WORDS) else m.group(0)

    return _QUERY_RE.sub(query, rest)


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


def redact_kept(env: dict[str, str] | Any) -> tuple[dict[str, str], tuple[str, ...]]:
    """The same policy on variables already chosen (saved facts from any source): every name is
    kept, secret ones as ``<redacted>``, credentials in values removed."""
    kept: dict[str, str] = {}
    redacted: list[str] = []
    for name in sorted(env):
        if is_secret_name(name):
            kept[name] = REDACTED
            redacted.append(name)
        else:
            kept[name] = redact_value(str(env[name]))
    return kept, tuple(redacted)
