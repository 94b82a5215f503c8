"""Releases as an axis on real InfluxDB 1.x servers: a run with ``versions`` starts the pinned influxd
(1.8) and the newest 1.x release (built with Flux's Rust library) side by side, each its own branch,
loads both and checks every answer of both against the oracle; the result and the report name both
versions. The releases are built by scripts/test.sh in the background (≈ 8 min each on a fresh
machine); the test waits for that build and fails if it failed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from builds import wait_for_build
from release_runs import ROOT, ReleaseRun, check_both_branches, run_with_release

from tsbench.targets.influxdb.definition import DEFINITION, RELEASES

pytestmark = pytest.mark.integration
NEWEST = RELEASES[0]
INSTANCE = f"influxdb@{NEWEST}"


@pytest.fixture(scope="module")
def release_run(tmp_path_factory: pytest.TempPathFactory, dataset_cache: Path) -> ReleaseRun:
    """Once the background build of the declared releases ended, a run of the pin and the newest
    release at scale 10 × 12 h (``release_runs.run_with_release``)."""
    wait_for_build("TSBENCH_INFLUXDB_RELEASES_BUILD_STATUS", "InfluxDB's other 1.x releases (install.sh)")
    return run_with_release(tmp_path_factory.mktemp("influx-releases"), dataset_cache, "influxdb", NEWEST)


def test_both_releases_load_and_answer_every_query_right(release_run: ReleaseRun) -> None:
    """Two branches, one per release: every row loaded, all 20 query types cold and hot with every
    answer agreeing with the oracle; each records the version its server reported, and the newest
    runs the one configuration (the in-memory index included)."""
    targets = check_both_branches(release_run, {"influxdb": DEFINITION.version, INSTANCE: NEWEST})
    assert 'index-version = "inmem"' in targets[INSTANCE]["provision"]["config"]


def test_the_report_names_both_versions(release_run: ReleaseRun) -> None:
    assert release_run.result.returncode == 0, release_run.result.stderr[-3000:]
    html = (release_run.folder / "report" / "report.html").read_text()
    assert f"InfluxDB {DEFINITION.version}" in html and f"InfluxDB {NEWEST}" in html


def test_an_undeclared_release_is_refused_before_any_work(tmp_path: Path) -> None:
    """A version the recipe does not build is refused by validation, naming the ones it can."""
    run = ["run", "--targets", "influxdb", "--versions", '{"influxdb": ["1.12.9"]}', "--scales", "10"]
    run += ["--results-dir", str(tmp_path / "runs"), "--state-dir", str(tmp_path / "state")]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    assert result.returncode != 0
    assert "1.12.9" in result.stderr and NEWEST in result.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").rglob("*.json"))
