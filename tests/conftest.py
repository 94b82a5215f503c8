"""Shared fixtures: small real datasets generated once per test session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fatal_signals import kept_fatal_signal_handlers

from tsbench.spec import DatasetSpec
from tsbench.workload.dataset import Dataset, ensure_dataset


@pytest.fixture(scope="module")
def fatal_signal_handlers_kept() -> Iterator[None]:
    """This process's fatal-signal handlers as the module found them, put back after it
    (``fatal_signals.kept_fatal_signal_handlers``: chDB's must not outlive its modules)."""
    with kept_fatal_signal_handlers():
        yield


@pytest.fixture(scope="session")
def dataset_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("datasets")


@pytest.fixture(scope="session")
def day_dataset(dataset_cache: Path) -> Dataset:
    """cpu-only, 100 hosts × 1 day at 10 s (864,000 rows) — the published scale-100 shape."""
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=100), dataset_cache)
    return dataset


@pytest.fixture(scope="session")
def small_dataset(dataset_cache: Path) -> Dataset:
    """cpu-only, 12 hosts × 1 day at 10 s: every query type fits."""
    dataset, _ = ensure_dataset(DatasetSpec.parse(scale=12, seed=7), dataset_cache)
    return dataset


@pytest.fixture(scope="session")
def ycsb_dataset(dataset_cache: Path) -> Dataset:
    """YCSB-TS records (study D's shape): 8 metrics × 6 h at 10 s = 17,280 records."""
    spec = DatasetSpec.parse(use_case="ycsb-ts", scale=8, end="2016-01-01T06:00:00Z")
    dataset, _ = ensure_dataset(spec, dataset_cache)
    return dataset


@pytest.fixture(scope="session")
def iot_dataset(dataset_cache: Path) -> Dataset:
    """iot, 12 trucks × 1 day at 10 s (≈ 187,000 rows in two measurements, nameless and late points
    included): every iot query type fits (long-daily-sessions reads a 24 h window)."""
    spec = DatasetSpec.parse(use_case="iot", scale=12, seed=2, end="2016-01-02T00:00:00Z")
    dataset, _ = ensure_dataset(spec, dataset_cache)
    return dataset


# Folders whose tests share one session-scoped deployment and run in order: one xdist scope each.
SHARED_FOLDERS = ("tests/scheduler/",)
# The scopes that take longest (seconds alone on 2 idle cores), handed out first so that no worker
# starts a long one when the others are nearly done; CPU-bound unit modules go before quick ones.
LONGEST_FIRST = (
    # ~25 s, but first, on a worker that ran nothing before: twice running later (after other
    # scopes in the same worker process) the worker died inside the JVM in the iot payload test,
    # with no hs_err file and nothing in dmesg. A likely cause, since repaired: another signal
    # handler in place of the JVM's (targets/griddb/signals.py: Airflow's DAG importer installs one).
    "tests/targets/test_griddb.py",
    "tests/scheduler/",  # ~280: an Airflow deployment, two triggered runs, a browser
    "tests/celery/test_celery_form.py",  # the Celery form: an aws run, a local run with a killed worker
    "tests/integration/test_griddb_server.py",  # ~210: GridDB node, a killed branch, the CLI pipeline
    "tests/dags/test_dag_aws.py",  # ~140: Terraform against moto; the provider's pollers wait 10 s
    "tests/dags/test_dag_run.py",  # ~130: three dag.test() runs
    "tests/infra/test_terraform.py",  # ~105: plan / apply / destroy against moto
    "tests/integration/test_run.py",  # ~90: the CLI's whole pipeline, a killed server
    "tests/integration/test_timescaledb_editions.py",  # ~130: both editions, the CLI pipeline
    "tests/targets/test_mongodb_iot.py",  # ~110: mongomock runs every iot pipeline on both layouts
    "tests/unit/test_validation.py",  # ~60: great_expectations suites
    "tests/integration/test_docker_engine.py",  # ~50
    "tests/integration/test_remote_server.py",  # ~45
    "tests/integration/test_sweep_run.py",  # ~25: a worker sweep through the CLI
    "tests/unit/test_report.py",  # ~40: WeasyPrint
    "tests/targets/test_mongodb.py",  # ~35: mongomock evaluates every pipeline
    "tests/integration/test_postgres_timescaledb.py",  # ~35
    "tests/unit/test_cli.py",  # ~30
)

# Scopes that wait for a server scripts/test.sh builds in the background (≈ 30 min for GridDB on a
# fresh machine), with the variable naming the build's status file: while that build runs they are
# handed out last, so it goes on while every other test does; once built (a cached machine) they
# take their place by duration like any other scope.
BUILT_IN_THE_BACKGROUND = {
    "tests/integration/test_influxdb_v2.py": "TSBENCH_INFLUXD2_BUILD_STATUS",
    "tests/integration/test_influxdb_releases.py": "TSBENCH_INFLUXDB_RELEASES_BUILD_STATUS",
    "tests/integration/test_griddb_server.py": "TSBENCH_GRIDDB_BUILD_STATUS",
    "tests/targets/test_griddb.py": "TSBENCH_GRIDDB_BUILD_STATUS",  # its nameless-rows server tests
    "tests/targets/test_griddb_iot.py": "TSBENCH_GRIDDB_BUILD_STATUS",  # its iot queries server test
}


def still_building(scope: str) -> bool:
    """True while the background build ``scope`` waits for has not written its status."""
    status = os.environ.get(BUILT_IN_THE_BACKGROUND.get(scope, ""), "")
    return bool(status) and not Path(status).is_file()


def scope_of(nodeid: str) -> str:
    """The xdist scope of a test: its ``SHARED_FOLDERS`` folder, else its module."""
    path = nodeid.split("::")[0]
    return next((folder for folder in SHARED_FOLDERS if path.startswith(folder)), path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``LONGEST_FIRST`` scopes first, scopes whose background build still runs last; file order
    otherwise (the sort is stable)."""
    rank = {scope: position for position, scope in enumerate(LONGEST_FIRST)}
    waiting = {scope for scope in BUILT_IN_THE_BACKGROUND if still_building(scope)}

    def order(item: pytest.Item) -> int:
        scope = scope_of(item.nodeid)
        return len(rank) + 1 if scope in waiting else rank.get(scope, len(rank))

    items.sort(key=order)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under scripts/test.sh (``TSBENCH_SKIPS_FAIL=1``) a skipped test fails the run: that script
    installs and builds everything every test needs, so a skip there means a part is missing (a
    test that needs a build waits for it and fails, it never skips)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if os.environ.get("TSBENCH_SKIPS_FAIL") == "1" and skipped and exitstatus == 0:
        reporter.write_line(f"{len(skipped)} test(s) skipped under scripts/test.sh: failing", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under pytest-xdist (scripts/test.sh) a scope's tests run on one worker in collection order:
    module-scoped servers and Terraform runs are made once, a shared deployment is started once.
    (xdist's own ``loadgroup`` marks do not work with pytest 9.2: it renames ``item._nodeid``.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByScope(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _reschedule(self, node: Any) -> None:
            """The next scope goes to a node only once it holds just its last test (a worker runs
            a test when it knows the next one, so it waits there for it). xdist's own rule (≤ 2
            pending) handed a scope of two long tests — the Celery form's — the next long scope at
            once, before other workers were free: the run's tail (CI: 535 s on that worker, 493 s
            on the others)."""
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
            elif self._pending_of(self.assigned_work[node]) <= 1:
                self._assign_work_unit(node)

    config.option.loadscopereorder = False  # keep LONGEST_FIRST's order
    return ByScope(config, log)
