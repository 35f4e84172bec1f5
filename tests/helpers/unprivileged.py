"""Run a function as the unprivileged user `nobody` (root reads any file whatever its mode, so
permission-denied paths need another user)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any


def as_nobody(fn: Callable[[], Any]) -> Any:
    """``fn()``'s JSON-able result, computed in a forked child whose effective uid/gid is `nobody`.

    The child drops only its effective ids (what file access checks use); import what ``fn``
    needs before calling (the interpreter's prefix may be root-only). Not root: ``fn()`` as is.
    """
    if os.geteuid() != 0:
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            os.close(r)
            os.setegid(65534)
            os.seteuid(65534)
            os.write(w, json.dumps(fn()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the unprivileged child crashed"
    return json.loads(data)
