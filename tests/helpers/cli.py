"""``cannenv ARGS`` in a subprocess, as a user runs it, free of this environment's CANNENV_* settings."""

from __future__ import annotations

import os
import subprocess
import sys


def cannenv(*args: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANNENV_")}
    return subprocess.run(
        [sys.executable, "-m", "cannenv", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
