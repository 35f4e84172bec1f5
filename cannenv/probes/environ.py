"""Environment variables the stack reads (research §5), with secrets redacted.

Only stack-relevant variables are kept; any variable whose name suggests a secret is reported by
name only, its value replaced by ``<redacted>`` — in facts, reports and every renderer. Credentials
embedded in URLs (``https://user:pass@host``) are redacted too.
"""

from __future__ import annotations

from typing import Any

from cannenv.facts import EnvFacts
from cannenv.probes._common import ProbeContext

# The policy lives in cannenv.redact (below facts and the probes); these names stay importable here.
from cannenv.redact import REDACTED as REDACTED
from cannenv.redact import redact_env as redact_env


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
