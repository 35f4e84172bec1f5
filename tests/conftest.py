"""Suite-wide policy. Area fixtures live in tests/<area>/conftest.py or tests/helpers/.

The whole suite (`python -m pytest`, paths from ``testpaths``) runs on pytest-xdist workers
(``-n auto --dist loadgroup`` in pyproject.toml); a run naming paths (`python -m pytest
tests/unit/test_x.py`) stays in one process unless it passes ``-n N``. Tests are distributed one by
one, except that every test of a module under tests/integration/, and every test of a module that
uses a module- or class-scoped fixture, goes to one worker (an ``xdist_group`` named after the
module, e.g. ``integration/test_fleet_hosts``), so that fixture is built once; modules that share
something else (containers, a registry) name one group: ``pytest.mark.xdist_group("NAME")``.
Rules for tests (docs/performance.md, "The test suite"): each test owns its ports (bind port 0),
folders (tmp_path) and container names (a unique suffix), and never relies on another test having
run before it.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"
# docker tests wait on debootstrap, image builds and SSH hosts more than they compute: more workers
# than cores keep both cores busy while some wait (CANNENV_TEST_WORKERS overrides).
WORKERS_PER_CORE = 2
# Integration modules whose chain is longest on a cold machine go to the workers first (xdist hands
# out work in collection order here: --no-loadscope-reorder); the rest follow in file order, then
# the unit tests fill the gaps. docs/performance.md has the measured durations behind this order.
LONGEST_FIRST = (
    "test_image_docker",  # registry, two image builds (one with Debian's apt), rebuilds, pushes
    "test_provision_hosts",  # four SSH hosts, five Ansible runs, a restart
    "test_fleet_hosts",  # seven SSH hosts, Ansible collections
    "test_provision_mixed",
    "test_image_arch",  # waits for the arm64 base (QEMU), then an arm64 build under QEMU
    "test_provision_reboot_hosts",  # two SSH hosts, two rollouts, a restart: 111 s alone, ~2.5 min in CI
    "test_collective_hosts",
    "test_fleet_bundle_hosts",  # waits for the trixie and bullseye bases
    "test_fleet_k8s_image",
)


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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: workers for the whole suite, none for a run that names its tests."""
    if os.environ.get("CANNENV_TEST_WORKERS"):
        return int(os.environ["CANNENV_TEST_WORKERS"])
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return 0
    return WORKERS_PER_CORE * len(os.sched_getaffinity(0))


def _shares_a_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs[-1].scope in ("module", "class", "package") for defs in info.name2fixturedefs.values())


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns xdist_group marks into scopes
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Group what must share a worker, and order the run: integration modules first (they wait
    longest), then grouped unit modules, then single tests (xdist runs units in this order)."""
    shared = {item.nodeid.split("::", 1)[0] for item in items if _shares_a_fixture(item)}
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if item.get_closest_marker("xdist_group") is None and (
            module.startswith("tests/integration/") or module in shared
        ):
            item.add_marker(pytest.mark.xdist_group(module.removeprefix("tests/").removesuffix(".py")))

    if not hasattr(config, "workerinput"):
        return  # one process: file order

    def rank(item: pytest.Item) -> tuple[int, int]:
        module = item.nodeid.split("::", 1)[0].removeprefix("tests/")
        if module.startswith("integration/"):
            name = module.removeprefix("integration/").removesuffix(".py")
            return (0, LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST))
        return (1 if item.get_closest_marker("xdist_group") is not None else 2, 0)

    items.sort(key=rank)  # stable: file order inside each rank
