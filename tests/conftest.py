"""Suite-wide policy. Area fixtures live in tests/<area>/conftest.py or tests/helpers/."""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(autouse=True, scope="session")
def _private_matrix_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the validated-matrix cache of this test session away from the user's ~/.cache."""
    os.environ.setdefault("CANNENV_CACHE_DIR", str(tmp_path_factory.mktemp("cannenv-cache")))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    """In CI (CI=true) a skipped `docker` test is a failure: the engine must be there."""
    outcome = yield
    report = outcome.get_result()
    if IN_CI and report.skipped and item.get_closest_marker("docker") is not None:
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.longrepr = f"docker test skipped in CI (CI=true), which counts as a failure: {reason}"
