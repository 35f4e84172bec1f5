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
    """Whether ``name`` (a variable, a JSON/dict key, a header, a flag) names a secret. Spelled any
    way: ``api_key``, ``api-key``, ``apiKey``, ``X-Api-Key``, ``"Authorization"``."""
    if name in _NOT_SECRET:
        return False
    if SECRET_NAME_RE.search(name):
        return True
    # camelCase and -/./space separated spellings, as the _-separated name the policy is written for
    spaced = _CAMEL.sub("_", name.strip("-")).replace("-", "_").replace(".", "_").replace(" ", "_")
    return spaced not in _NOT_SECRET and bool(SECRET_NAME_RE.search(spaced))


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# --- free text (log lines): every form a secret is printed in ---------------------------------
# Each pattern is linear on any text (tests/unit/test_linre.py lints them): one run per field,
# neighbouring runs over disjoint characters.
_SCHEME_CREDENTIAL = re.compile(
    r"(?i)\b(?P<scheme>bearer|basic|token|bot|apikey|api-key|negotiate|oauth|sso-key)"
    r"(?P<gap>[ \t]+)(?P<cred>[A-Za-z0-9._~+/=:-]{6,})"
)
"""An Authorization header's credential after its scheme (RFC 9110 §11.6.2 and the common ones)."""
_SCHEME_REST = re.compile(
    r"(?i)\b(?P<scheme>digest|aws4-hmac-sha256|hmac-sha256|signature)(?P<gap>[ \t]+)[^\n]+"
)
"""Schemes whose whole parameter list is the credential (Digest's response, AWS SigV4's Signature)."""
_VALUE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?|b'(?:[^'\\\n]|\\.)*'?|[^\s\"',;}\])]+")
_KEYS = (
    re.compile(r"(?P<key>\"[A-Za-z_][A-Za-z0-9_. -]*\"|'[A-Za-z_][A-Za-z0-9_. -]*')[ \t]*(?:=>|[=:])[ \t]*"),
    re.compile(r"(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)[ \t]*(?:=>|[=:])[ \t]*"),
    re.compile(r"(?<![A-Za-z0-9_.-])(?P<key>--?[A-Za-z_][A-Za-z0-9_.-]*)(?:[ \t]+|=)"),
)
"""``name=value``, ``name: value``, ``"name": "value"`` (JSON), ``'name': 'value'`` (a Python dict's
repr), ``name => value`` (Ruby/Perl), ``--name value`` and ``--name=value`` (command lines)."""
_TOKENS = re.compile(
    r"\b(?:"
    r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"  # GitHub
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face (model downloads in training logs)
    r"|sk-[A-Za-z0-9_-]{20,}"  # OpenAI-style API keys
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r")"
)
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
"""Credentials recognisable by shape alone, wherever they stand."""
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----")


def redact_text(line: str) -> str:
    """One line of free text (a log, an error) with every credential replaced by ``<redacted>``:
    URL user-info and secret query values, values of secret-named keys in every spelling (shell,
    JSON, a Python dict's repr, headers, command-line flags), credentials after an auth scheme,
    tokens recognisable by shape, and whatever follows a private-key header."""
    out = redact_value(line)
    at = out.find("-----BEGIN ")
    if at >= 0:
        m = _PRIVATE_KEY.search(out, at)
        if m:
            out = out[: m.end()] + REDACTED
    out = _SCHEME_REST.sub(lambda m: f"{m.group('scheme')}{m.group('gap')}{REDACTED}", out)
    out = _SCHEME_CREDENTIAL.sub(_scheme_credential, out)
    out = _JWT.sub(REDACTED, _TOKENS.sub(REDACTED, out))
    for rx in _KEYS:
        out = _key_values(rx, out)
    return out


def _key_values(rx: re.Pattern[str], text: str) -> str:
    """``text`` with the value after each secret-named key of ``rx`` redacted. Only the key and
    its separator are matched, so a kept value is still searched for keys (``x=token=…``)."""
    out: list[str] = []
    pos = 0
    for m in rx.finditer(text):
        if m.start() < pos or not is_secret_name(m.group("key").strip("\"'").lstrip("-")):
            continue
        v = _VALUE.match(text, m.end())
        if v is None:
            continue
        value = v.group(0)
        if REDACTED in value or value.lower() in _SCHEMES or value.lower() in ("digest", "aws4-hmac-sha256"):
            continue  # already redacted, or a scheme whose credential the scheme patterns redact
        lead = "b'" if value[:2] == "b'" else value[0] if value[0] in "\"'" else ""
        close = lead[-1:] if lead and len(value) > len(lead) and value[-1] == lead[-1] else ""
        out += [text[pos : m.end()], lead, REDACTED, close]
        pos = v.end()
    out.append(text[pos:])
    return "".join(out)


_SCHEMES = frozenset(
    {"bearer", "basic", "token", "bot", "apikey", "api-key", "negotiate", "oauth", "sso-key"}
)


def _scheme_credential(m: re.Match[str]) -> str:
    cred = m.group("cred")
    prose = m.group("scheme").lower() in ("token", "bot") and cred.isalpha() and len(cred) < 20
    if cred == REDACTED or prose:  # "invalid token received" is prose, not a credential
        return m.group(0)
    return f"{m.group('scheme')}{m.group('gap')}{REDACTED}"


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
    elif ":" in authority and not authority.rsplit(":", 1)[1].isdecimal() and "@" in rest:
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
