"""GridDB 5.9.0 against a real server: built from the pinned source by the project's own recipe
(``targets/griddb/build.sh``; scripts/test.sh builds it in the background on a fresh machine and these
tests wait for it) and started by the local runtime.

One node serves the module: loopback-only sockets, the admin password's handling, load with row
counts, every query type against the oracle, GridDB's own footprint, a reload that never double-loads,
a cold restart, a killed node, then the devops and YCSB-TS use cases.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from builds import wait_for_build
from conftest import check_all_queries, check_ycsb_ts, killed_during_load, load_all, retargeted

from tsbench.results.files import read_json
from tsbench.run.collect import collect
from tsbench.run.comparison import parse_comparison, scale_dir
from tsbench.run.point_setup import prepare_run
from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.local import LocalRuntime, LocalServer
from tsbench.spec import DatasetSpec
from tsbench.targets.base import Target, TargetError
from tsbench.workload.dataset import Dataset, ensure_dataset
from tsbench.workload.query_types import types_of

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def griddb(serve, small_dataset: Dataset) -> Iterator[tuple[LocalServer, Target]]:
    wait_for_build("TSBENCH_GRIDDB_BUILD_STATUS", "GridDB 5.9.0 (targets/griddb/build.sh)")
    with serve("griddb", small_dataset) as (server, target):
        yield server, target


@pytest.fixture(scope="module")
def loaded(griddb: tuple[LocalServer, Target], small_dataset: Dataset) -> tuple[LocalServer, Target]:
    server, target = griddb
    assert load_all(target, small_dataset) == small_dataset.rows["cpu"]
    return server, target


def _assert_rows(target: Target, dataset: Dataset) -> None:
    for measurement, rows in dataset.rows.items():
        assert target.row_count(measurement) == rows, measurement


def test_every_socket_the_node_holds_listens_on_loopback(griddb: tuple[LocalServer, Target]) -> None:
    server, _ = griddb
    listening = server.listening
    assert listening, "the local runtime recorded no listening socket"
    assert {listener.address for listener in listening} == {"127.0.0.1"}
    # every service GridDB opens is one tsbench allocated (free ports, not GridDB's defaults)
    assert {listener.port for listener in listening} <= set(server.recipe.ports.values())
    assert {10001, 10010, 10020, 10040, 20001}.isdisjoint(listener.port for listener in listening)
    assert server.facts()["listening"] == [str(listener) for listener in listening]


def test_the_admin_password_is_generated_private_and_never_logged(
    griddb: tuple[LocalServer, Target],
) -> None:
    server, target = griddb
    secret_file = server.home / "admin.password"
    password = secret_file.read_text().strip()
    assert len(password) >= 20 and password != "admin"
    for private in (secret_file, server.recipe.conf_dir / "password"):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600, private
    shown = [server.log_tail(10_000), server.recipe.config_text(), repr(target.settings())]
    shown += [path.read_text(errors="replace") for path in (server.recipe.gs_home / "log").glob("*.log")]
    assert not [text for text in shown if password in text]
    assert "secrets" not in server.endpoint().to_json()


def test_the_server_is_the_pinned_build(griddb: tuple[LocalServer, Target]) -> None:
    server, target = griddb
    assert target.version().startswith("5.9.0")
    assert "griddb-5.9.0-838eda4.tar.gz" in server.recipe.version()
    assert "5.9.0" in target.settings()["client"]


def test_load_then_every_query_type_matches_the_oracle(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    _, target = loaded
    _assert_rows(target, small_dataset)
    assert not target.capabilities.unsupported
    nonempty = check_all_queries(target, small_dataset)
    assert set(nonempty) == set(types_of(small_dataset.use_case.query_families))  # all 20, compared
    empty = [name for name, count in nonempty.items() if count == 0]
    assert not empty, f"no non-empty answer for {empty}"


def test_footprint_is_griddbs_own_accounting(loaded: tuple[LocalServer, Target]) -> None:
    server, target = loaded
    footprint = target.footprint()
    # at least the raw values: 8 B time + 10 × 8 B LONG per row
    assert footprint.bytes >= 103_680 * 88
    assert set(footprint.parts) >= {"storeTotalUse", "dataFileSize"}
    assert server.disk_bytes() > 0


def test_reload_never_double_loads(loaded: tuple[LocalServer, Target], small_dataset: Dataset) -> None:
    _, target = loaded
    target.create_schema()
    assert target.row_count("cpu") == 0
    load_all(target, small_dataset)
    _assert_rows(target, small_dataset)


def test_cold_restart_keeps_the_data(loaded: tuple[LocalServer, Target], small_dataset: Dataset) -> None:
    server, target = loaded
    outcome = server.restart_cold()
    assert outcome["was_down"] and server.recipe.ready()
    assert {listener.address for listener in server.listening} == {"127.0.0.1"}
    _assert_rows(target, small_dataset)
    check_all_queries(target, small_dataset, per_type=1, seed=11)


def test_a_killed_node_fails_clearly_then_recovers_its_data(
    loaded: tuple[LocalServer, Target], small_dataset: Dataset
) -> None:
    server, target = loaded
    # Committed rows reach the transaction log on disk within logWriteMode = 1 s (target.flush):
    # a node killed sooner may rightly lose that last second (seen when this test ran right after
    # the load, alone).
    time.sleep(1.5)
    server.kill()
    with pytest.raises(TargetError) as failure:
        target.row_count("cpu")
    assert server.recipe.password() not in str(failure.value)
    server.start()  # recovers from its transaction log
    _assert_rows(target, small_dataset)


def test_devops_loads_every_measurement(griddb: tuple[LocalServer, Target], dataset_cache: Path) -> None:
    server, cpu_target = griddb
    spec = DatasetSpec.parse(use_case="devops", scale=8, end="2016-01-01T12:00:00Z")
    devops, _ = ensure_dataset(spec, dataset_cache)
    with retargeted(server, cpu_target, devops) as target:
        assert load_all(target, devops) == sum(devops.rows.values())
        _assert_rows(target, devops)
        check_all_queries(target, devops, per_type=1, seed=3)


def test_ycsb_ts_records_load_and_answer_like_the_oracle(
    griddb: tuple[LocalServer, Target], ycsb_dataset: Dataset
) -> None:
    server, cpu_target = griddb
    with retargeted(server, cpu_target, ycsb_dataset) as target:
        check_ycsb_ts(target, ycsb_dataset)


def test_a_killed_griddb_node_fails_only_its_branch(
    runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path
) -> None:
    """SIGKILL the GridDB node one second into its load: griddb is reported failed in the load
    phase with the reason, postgres completes, teardown runs for both."""
    wait_for_build("TSBENCH_GRIDDB_BUILD_STATUS", "GridDB 5.9.0 (targets/griddb/build.sh)")
    spec = parse_comparison(
        {"scales": [100], "targets": ["griddb", "postgres"], "queries_per_type": 1, "hot_runs": 1}
    )[0]
    run_dir = scale_dir(tmp_path / "fault", 100)
    prepare_run(spec, run_dir, dataset_cache)
    victim = killed_during_load(runtime, run_dir, "griddb")
    error = read_json(victim.dir / "error.json")
    assert error["failed_phase"] == "load", error
    assert (victim.dir / "teardown.json").exists() and not (runtime.root / victim.instance).exists()
    assert TargetPhases(run_dir, "postgres", runtime).run_all()
    result = collect(run_dir)
    assert result.targets["griddb"].status == "failed"
    assert result.targets["postgres"].status == "ok"


def test_the_pipeline_measures_griddb_and_reports_it_like_the_others(
    tmp_path: Path, dataset_cache: Path
) -> None:
    """``python -m tsbench run`` with griddb and postgres (the cheapest partner to start): every
    phase, every answer checked, the report (HTML + PDF) shows GridDB with its version and a
    real-server row."""
    wait_for_build("TSBENCH_GRIDDB_BUILD_STATUS", "GridDB 5.9.0 (targets/griddb/build.sh)")
    out, state = tmp_path / "out", Path("/var/tmp/tsbench-tests") / f"griddb-cli-{tmp_path.name}"
    run = ["run", "--targets", "griddb,postgres", "--scales", "10", "--duration", "12h"]
    run += ["--queries-per-type", "2", "--hot-runs", "1", "--run-id", "griddb", "--runtime", "local"]
    run += ["--results-dir", str(out / "runs"), "--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    folder = out / "runs" / "griddb"
    assert read_json(folder / "validation.json")["success"] is True
    body = read_json(folder / "comparison.json")["results"]["10"]["targets"]["griddb"]
    assert body["status"] == "ok", body.get("error")
    assert body["load"]["row_count_ok"] and body["load"]["trials"][0]["rows"] == 43_200
    assert body["footprint"]["after_load"]["bytes"] > 0 and body["cache_reset"]["was_down"]
    checks = body["queries"]["answer_checks"]
    assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
    assert len(body["queries"]["hot"]) == 20
    html = (folder / "report" / "report.html").read_text()
    assert "GridDB" in html and "5.9.0" in html
    assert (folder / "report" / "report.pdf").read_bytes()[:5] == b"%PDF-"
