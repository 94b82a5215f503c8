"""A whole comparison on real servers: orchestration, isolation of a failing target, no double load."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tsbench.comparison import parse_comparison, scale_dir
from tsbench.results.files import read_json
from tsbench.run_setup import prepare_run
from tsbench.runner import TargetPhases, run_comparison
from tsbench.runtimes.local import LocalRuntime

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SMALL = {"start": "2016-01-01T00:00:00Z", "end": "2016-01-01T12:00:00Z", "queries_per_type": 2, "hot_runs": 1}


def test_comparison_end_to_end(runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path) -> None:
    specs = parse_comparison({**SMALL, "scales": [10], "targets": ["questdb", "postgres"]})
    folder = run_comparison(specs, tmp_path, "e2e", dataset_cache, runtime)
    comparison = read_json(folder / "comparison.json")
    assert comparison["failed_targets"] == [] and comparison["scales"] == [10]
    result = comparison["results"]["10"]
    for name in ("questdb", "postgres"):
        body = result["targets"][name]
        assert body["status"] == "ok", body.get("error")
        assert body["load"]["row_count_ok"] and body["load"]["trials"][0]["rows"] == 43_200
        assert (
            body["footprint"]["after_load"]["bytes"] > 0 and body["footprint"]["after_load"]["disk_bytes"] > 0
        )
        assert body["cache_reset"]["restarted"] and body["cache_reset"]["was_down"]
        checks = body["queries"]["answer_checks"]
        assert checks["mismatches"] == 0 and checks["agreed"] == checks["checked"] > 0
        assert (
            set(body["queries"]["cold"]) == set(body["queries"]["hot"]) and len(body["queries"]["cold"]) == 20
        )
        assert body["teardown"]["seconds"] >= 0
    assert not (folder / "scale-10" / "samples.jsonl").exists()  # result.json holds every figure
    assert not any(runtime.root.glob("e2e-*")), "teardown left server files behind"


def test_a_killed_server_fails_only_its_target(
    runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path
) -> None:
    """SIGKILL PostgreSQL one second into its load: postgres is reported failed with the reason,
    questdb completes, teardown runs for both."""
    spec = parse_comparison(
        {"scales": [100], "targets": ["postgres", "questdb"], "queries_per_type": 1, "hot_runs": 1}
    )[0]
    run_dir = scale_dir(tmp_path / "fault", 100)
    prepare_run(spec, run_dir, dataset_cache)
    victim = TargetPhases(run_dir, "postgres", runtime)
    outcome: dict[str, bool] = {}
    worker = threading.Thread(target=lambda: outcome.setdefault("ok", victim.run_all()))
    worker.start()
    deadline = time.time() + 120
    while not (victim.dir / "prepare.json").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)
    runtime.attach(victim.instance).kill()
    worker.join(300)
    assert outcome == {"ok": False}
    error = read_json(victim.dir / "error.json")
    assert error["failed_phase"] == "load"
    assert "load into postgres" in error["error"] and "failed" in error["error"]
    assert (victim.dir / "teardown.json").exists() and not (runtime.root / victim.instance).exists()
    assert TargetPhases(run_dir, "questdb", runtime).run_all()
    from tsbench.results.collect import collect

    result = collect(run_dir)
    assert result.targets["postgres"].status == "failed"
    assert result.targets["postgres"].failed_phase == "load"
    assert result.targets["questdb"].status == "ok"


def test_loading_twice_never_duplicates(runtime: LocalRuntime, tmp_path: Path, dataset_cache: Path) -> None:
    spec = parse_comparison({**SMALL, "scales": [10], "targets": ["questdb"], "trials": 2})[0]
    run_dir = scale_dir(tmp_path / "twice", 10)
    prepare_run(spec, run_dir, dataset_cache)
    phases = TargetPhases(run_dir, "questdb", runtime)
    try:
        phases.provision()
        phases.prepare()
        first = phases.load()
        again = phases.load()  # as a retried Airflow task would
        assert [t["row_counts"] for t in first["trials"] + again["trials"]] == [{"cpu": 43_200}] * 4
    finally:
        phases.teardown()


def test_cli_run_prints_the_study_tables(tmp_path: Path, dataset_cache: Path, runtime: LocalRuntime) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins"), "TSBENCH_STATE": str(runtime.root)}
    args = ["--targets", "questdb", "--scales", "10", "--duration", "12h", "--queries-per-type", "1"]
    args += ["--hot-runs", "1", "--results-dir", str(tmp_path), "--cache-dir", str(dataset_cache)]
    result = subprocess.run(
        [sys.executable, "-m", "tsbench", "run", *args], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "| target" in out and "rows/s" in out and "hot qps" in out and "Footprint" in out
    assert "questdb: " in out and "answers agree with the oracle" in out


def test_long_state_paths_still_start_postgres(tmp_path: Path) -> None:
    """PostgreSQL refuses Unix socket paths over 107 bytes; instance homes can be much longer."""
    from tsbench.targets.registry import load_target

    long_root = Path("/var/tmp/tsbench-tests") / ("a-rather-long-state-root-" + "x" * 40)
    runtime = LocalRuntime(long_root)
    instance = "20261122T123702Z-27e877-scale-100-timescaledb"
    server = runtime.provision(load_target("timescaledb"), instance)
    try:
        assert len(str(runtime.root / instance / "sock")) > 107 and server.recipe.ready()
        outside = server.recipe.outside_dirs()
        assert outside and all(len(str(p)) < 60 for p in outside)
    finally:
        runtime.teardown(instance)
    assert not any(p.exists() for p in outside) and not (runtime.root / instance).exists()
