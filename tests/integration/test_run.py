"""A whole comparison on real servers through the CLI (every pipeline step, validated report,
publication), isolation of a failing target, no double load."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import killed_during_load

from tsbench.results.files import read_json
from tsbench.run.comparison import parse_comparison, scale_dir
from tsbench.run.point_setup import prepare_run
from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.local import LocalRuntime

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SMALL = {"start": "2016-01-01T00:00:00Z", "end": "2016-01-01T12:00:00Z", "queries_per_type": 2, "hot_runs": 1}


@dataclass(frozen=True)
class CliRun:
    """One ``python -m tsbench run`` of two local targets, shared by the tests that read it."""

    result: subprocess.CompletedProcess[str]
    out: Path  # results root: runs/, latest-cli/, index.html
    state: Path  # the runtime's state root
    folder: Path  # the run's folder


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory, dataset_cache: Path) -> CliRun:
    """questdb and postgres, scale 10 × 12 h, the whole pipeline (validate, report, publish)."""
    tmp = tmp_path_factory.mktemp("cli")
    out, state = tmp / "out", Path("/var/tmp/tsbench-tests") / tmp.name
    run = ["run", "--targets", "questdb,postgres", "--scales", "10", "--duration", "12h"]
    run += ["--queries-per-type", "2", "--hot-runs", "1", "--run-id", "cli", "--runtime", "local"]
    run += ["--results-dir", str(out / "runs"), "--cache-dir", str(dataset_cache), "--state-dir", str(state)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    result = subprocess.run([sys.executable, "-m", "tsbench", *run], capture_output=True, text=True, env=env)
    return CliRun(result, out, state, out / "runs" / "cli")


def test_cli_run_walks_the_pipeline_to_a_published_verdict(cli_run: CliRun) -> None:
    """Every step of the table in its order, then the validated report (HTML + PDF), its
    publication, the study tables and the verdict on stdout."""
    from tsbench.run.pipeline import steps

    result, folder = cli_run.result, cli_run.folder
    assert result.returncode == 0, result.stderr[-3000:]
    walked = [line.removeprefix("· ") for line in result.stderr.splitlines() if line.startswith("· ")]
    branch = [f"{s.name} scale-10 × {t}" for t in ("questdb", "postgres") for s in steps("branch")]
    assert walked == [
        *(s.name for s in steps("run")),
        *(f"{s.name} scale-10" for s in steps("point")),
        *branch,
        *(s.name for s in steps("post")),
    ]
    assert read_json(folder / "validation.json")["success"] is True
    assert (folder / "report" / "report.html").stat().st_size > 10_000
    assert (folder / "report" / "report.pdf").read_bytes()[:5] == b"%PDF-"
    out = cli_run.out
    assert (out / "latest-cli" / "RUN").read_text().strip() == "cli" and (out / "index.html").is_file()
    changes = read_json(folder / "changes.json")  # the report step's change detection, published too
    assert changes["run_id"] == "cli" and changes["runs"] == 1 and changes["series"] > 10
    assert changes["changes"] == [] and (out / "latest-cli" / "changes.json").is_file()
    assert not (out / "latest").exists()  # the nightly's
    stdout = result.stdout
    assert "| target" in stdout and "rows/s" in stdout and "hot qps" in stdout and "Footprint" in stdout
    assert "questdb: " in stdout and "answers agree with the oracle" in stdout
    assert "validation: passed" in stdout and "verdict: passed" in stdout
    assert f"report: {folder}/report/report.html" in stdout
    assert not list(cli_run.state.glob("cli-*")), "a server instance was left behind"


def test_cli_run_measures_every_target_against_the_oracle(cli_run: CliRun) -> None:
    """Exact row counts, footprint, a cold restart, 20 query types cold and hot with every answer
    agreeing with the oracle, teardown timed; result.json holds every figure (no samples file)."""
    assert cli_run.result.returncode == 0, cli_run.result.stderr[-3000:]
    comparison = read_json(cli_run.folder / "comparison.json")
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
    assert not (cli_run.folder / "scale-10" / "samples.jsonl").exists()


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
    victim = killed_during_load(runtime, run_dir, "postgres")
    error = read_json(victim.dir / "error.json")
    assert error["failed_phase"] == "load"
    assert "load into postgres" in error["error"] and "failed" in error["error"]
    assert (victim.dir / "teardown.json").exists() and not (runtime.root / victim.instance).exists()
    assert TargetPhases(run_dir, "questdb", runtime).run_all()
    from tsbench.run.collect import collect

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
        assert [t.row_counts for t in first.trials + again.trials] == [{"cpu": 43_200}] * 4
    finally:
        phases.teardown()


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
