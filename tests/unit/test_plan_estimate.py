"""The plan's estimate from measured costs (``tsbench.sweep.costs``, ``tsbench.sweep.estimate``): the
size rule, the stages a plan runs, the machine rule, and refusals with their numbers."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tsbench.spec import SpecError
from tsbench.spec.load_options import encoding_processes_at
from tsbench.sweep.costs import COSTS_FILE, MeasuredCosts, measured_costs
from tsbench.sweep.estimate import estimate_plan
from tsbench.sweep.plan import SweepLimits, expand_sweep
from tsbench.sweep.plan_text import fit_lines, stage_lines
from tsbench.workload.extract import planned_extract

MEASURED = {
    "date": "2026-12-03",
    "command": "bench/stage_costs.py --sizes 1m,10m",
    "tsbench_commit": "0123456",
    "machine": {"cores": 2, "memory_bytes": 25 * 2**30},
    "workload": {
        "use_case": "cpu-only",
        "duration": "1d",
        "interval_s": 10,
        "query_types": 20,
        "queries_per_type": 2,
        "query_passes": 2,
        "trials": 1,
        "workers": 2,
        "batch_size": 10_000,
    },
}
ROWS = [1_000_000, 10_000_000]


def costs(**stages: dict[str, Any]) -> MeasuredCosts:
    body = {"format": "tsbench-measured-costs/1", "measurements": [MEASURED], "stages": {}}
    for name, figures in stages.items():
        body["stages"][name.replace("_", " ")] = {"measurement": 0, "rows": ROWS, **figures}
    return MeasuredCosts.from_json(body)


SOME = costs(
    generate={"wall_s": [1.0, 10.0], "peak_rss_bytes": [2e8, 2e8], "stored_bytes": [1e7, 1e8]},
    oracle={"wall_s": [4.0, 40.0], "peak_rss_bytes": [3e8, 3e8]},
    encode_questdb={"wall_s": [2.0, 20.0], "stored_bytes": [3e7, 3e8]},
    load_questdb={"wall_s": [5.0, 50.0], "stored_bytes": [3e8, 3e9]},
    queries_questdb={"wall_s": [8.0, 80.0]},
    validate={"wall_s": [5.0, 5.0], "peak_rss_bytes": [6e8, 6e8]},
    report={"wall_s": [10.0, 10.0], "peak_rss_bytes": [8e8, 8e8]},
)


def test_a_figure_is_read_off_the_line_through_the_two_largest_sizes_or_the_power_law_if_it_grew_faster() -> (
    None
):
    curve = costs(generate={"wall_s": [2.0, 11.0], "peak_rss_bytes": [3e8, 2e8]}).stage("generate")
    assert curve is not None
    assert curve.at("wall_s", 100_000_000) == pytest.approx(2.0 + 9.0 * 99 / 9)  # fixed 1 s + 1 µs a row
    assert curve.at("peak_rss_bytes", 10_000_000_000) == 2e8  # a falling figure is held beyond the largest
    assert curve.at("peak_rss_bytes", 5_500_000) == pytest.approx(2.5e8)  # and read off the line between
    # GridDB's load task, 606 → 642 MB from 1 M to 10 M rows: flat (noise), held beyond; a memory
    # that grew by more than 25 % and 100 MB keeps growing on its line
    flat = costs(generate={"wall_s": [1.0, 2.0], "peak_rss_bytes": [606e6, 642e6]}).stage("generate")
    assert flat is not None and flat.at("peak_rss_bytes", 10_000_000_000) == 642e6
    growing = costs(generate={"wall_s": [1.0, 2.0], "peak_rss_bytes": [387e6, 639e6]}).stage("generate")
    assert growing is not None and growing.at("peak_rss_bytes", 100_000_000) == pytest.approx(
        387e6 + 252e6 * 99 / 9
    )
    quadratic = costs(oracle={"wall_s": [1.0, 100.0]}).stage("oracle")
    assert quadratic is not None and quadratic.exponent("wall_s") == pytest.approx(2.0)
    assert quadratic.at("wall_s", 100_000_000) == pytest.approx(10_000.0)  # not the line's 1,090
    assert curve.source() == "measured at 1.0 M and 10.0 M rows on 2026-12-03 (2 cores)"
    three = MeasuredCosts.from_json(
        {
            "format": "tsbench-measured-costs/1",
            "measurements": [MEASURED],
            "stages": {
                "generate": {
                    "measurement": 0,
                    "rows": [1_000_000, 10_000_000, 100_000_000],
                    "wall_s": [1.0, 2.0, 200.0],
                }
            },
        }
    ).stage("generate")
    assert three is not None
    assert three.at("wall_s", 5_500_000) == pytest.approx(1.5)  # between 1 M and 10 M: their line
    assert three.at("wall_s", 55_000_000) == pytest.approx(101.0)  # between 10 M and 100 M
    assert three.at("wall_s", 1_000_000_000) == pytest.approx(200.0 * 10**2)  # beyond: b = 2
    assert three.source(5_500_000) == "measured at 1.0 M and 10.0 M rows on 2026-12-03 (2 cores)"
    assert three.source(10**10).endswith("read ×100 beyond the largest")


def test_the_stages_of_a_local_plan_come_from_the_measured_costs_per_dataset_point_and_query() -> None:
    plan = expand_sweep(
        {
            "targets": ["questdb", "griddb"],
            "scales": [1157],
            "duration": "1d",
            "trials": 3,
            "queries_per_type": 4,
            "hot_runs": 1,
            "runtime": "local",
        }
    )
    estimate = estimate_plan(plan, SOME)
    by_stage = {s.stage: s for s in estimate.stages}
    rows = 1157 * 8640
    assert by_stage[f"generate {rows:,} rows"].seconds == pytest.approx(1.0 + 9.0 * (rows - 1e6) / 9e6)
    oracle = by_stage["oracle, 80 queries"]  # 20 types × 4: twice the measured 40 queries
    assert oracle.seconds == pytest.approx(2 * (4.0 + 36.0 * (rows - 1e6) / 9e6))
    load = by_stage["load questdb × 3"]
    assert load.seconds == pytest.approx(3 * (5.0 + 45.0 * (rows - 1e6) / 9e6))
    assert load.where == "database host" and load.scaled_seconds == load.seconds  # same machine
    queries = by_stage["queries questdb, 160 runs"]  # 80 queries × 2 passes against 40 × 2 measured
    assert queries.seconds == pytest.approx(2 * (8.0 + 72.0 * (rows - 1e6) / 9e6))
    griddb = by_stage["load griddb × 3"]
    assert griddb.seconds == pytest.approx(3 * rows / 100_000)
    assert griddb.source.startswith("assumed (100,000 rows/s")
    assert "as queries questdb: griddb not measured" in by_stage["queries griddb, 160 runs"].source
    assert estimate.shared and estimate.parallel_hosts == 1
    assert estimate.peak_rss_bytes() == pytest.approx(8e8)  # the report's
    assert estimate.orchestrator_disk_bytes() == pytest.approx(
        by_stage[f"generate {rows:,} rows"].stored_bytes
        + by_stage["encode questdb's wire bodies"].stored_bytes
    )


def test_a_streamed_dataset_stores_its_extract_and_every_load_generates_it_again() -> None:
    """``dataset_rows: streamed``: the stored figure and the oracle are read at the rows the
    query set's windows keep; each load trial pays a generation per process that reads the stream
    (each wire encoder; one for a target without a wire format)."""
    params = {"targets": ["questdb", "griddb"], "scales": [100], "duration": "30d", "trials": 2}
    params |= {"queries_per_type": 2, "query_types": ["lastpoint", "high-cpu-1"], "dataset_rows": "streamed"}
    plan = expand_sweep({**params, "runtime": "local"})
    spec = plan.points[0].spec
    _, kept = planned_extract(spec)
    rows = 100 * 30 * 8640
    assert 0 < kept < rows / 10  # two 12 h windows and the last epoch of 30 days
    by_stage = {s.stage: s for s in estimate_plan(plan, SOME).stages}
    generate = by_stage[f"generate {rows:,} rows, keep {kept:,}"]
    assert generate.seconds == pytest.approx(1.0 + 9.0 * (rows - 1e6) / 9e6)  # one pass over every row
    assert generate.stored_bytes == pytest.approx(1e7 + 9e7 * (kept - 1e6) / 9e6)  # the extract
    assert by_stage["oracle, 4 queries"].seconds == pytest.approx(0.1 * (4.0 + 36.0 * (kept - 1e6) / 9e6))
    readers = encoding_processes_at(rows)
    again = by_stage[f"regenerate for questdb's load × {2 * readers}"]
    assert again.seconds == pytest.approx(2 * readers * generate.seconds) and again.stored_bytes == 0
    assert by_stage["regenerate for griddb's load × 2"].seconds == pytest.approx(2 * generate.seconds)


def _aws(**options: Any) -> dict[str, Any]:
    return {
        "targets": ["questdb"],
        "scales": [1000],
        "duration": "30d",
        "runtime": "aws",
        "aws": {"orchestrator_cidr": ["203.0.113.7/32"], "instance_type": "m5.2xlarge", **options},
    }


def test_on_a_declared_cloud_host_the_database_stages_scale_by_its_cores_and_the_cost_counts_host_hours() -> (
    None
):
    plan = expand_sweep(_aws(data_volume_gb=1024))
    estimate = estimate_plan(plan, SOME)
    assert estimate.host.cores == 8 and estimate.speedup == 4.0
    load = next(s for s in estimate.stages if s.stage.startswith("load questdb"))
    assert load.scaled_seconds == pytest.approx(load.seconds / 4)
    generate = next(s for s in estimate.stages if s.stage.startswith("generate"))
    assert generate.scaled_seconds == generate.seconds  # the orchestrator's: not scaled
    assert not estimate.shared
    text = "\n".join(fit_lines(estimate))
    assert (
        "m5.2xlarge (8 vCPU, 32 GiB); database stages ÷ 4 for its 8 cores (linear in cores: optimistic)"
        in text
    )
    assert "1,024.0 GB its 1,024 GB gp3 data volume" in text


def test_a_plan_whose_database_does_not_fit_its_data_volume_is_refused_with_the_numbers() -> None:
    plan = expand_sweep(_aws(data_volume_gb=1024))
    small = estimate_plan(plan, SOME)
    stored = small.host_disk_bytes()
    assert stored == pytest.approx(3e8 + 2.7e9 * (1000 * 259_200 - 1e6) / 9e6)  # 259.2 M rows
    assert not [p for p in small.problems() if "largest database" in p]
    tight = estimate_plan(expand_sweep(_aws(data_volume_gb=math.floor(stored / 1e9))), SOME)
    (problem,) = [p for p in tight.problems() if "largest database" in p]
    assert problem.startswith(f"disk: the largest database need ~{stored / 1e9:,.1f} GB, more than 90 % of")
    assert "GB (its " in problem and "gp3 data volume on m5.2xlarge" in problem


def test_a_plan_whose_orchestrator_would_run_out_of_memory_is_refused() -> None:
    hungry = costs(generate={"wall_s": [1.0, 10.0], "peak_rss_bytes": [1e9, 1e13]})
    plan = expand_sweep({"targets": ["questdb"], "scales": [1157], "duration": "1d", "runtime": "local"})
    (problem,) = estimate_plan(plan, hungry).problems()
    assert problem.startswith("memory: the orchestrating process peaks at ~") and "this machine (" in problem


def test_the_shipped_costs_are_measured_on_a_named_machine_for_the_four_local_servers() -> None:
    shipped = measured_costs(COSTS_FILE)
    for stage in ("generate", "oracle", "validate", "report"):
        assert shipped.stage(stage) is not None, stage
    for target in ("questdb", "postgres", "timescaledb", "influxdb"):
        for stage in ("encode", "load", "queries"):
            curve = shipped.stage(f"{stage} {target}")
            assert curve is not None and len(curve.rows) >= 2, f"{stage} {target}"
            assert curve.measurement.cores and curve.measurement.commit and curve.measurement.date
    generate = shipped.stage("generate")
    assert generate is not None and generate.rows[-1] >= 100_000_000


def test_an_oversized_sweep_is_refused_by_its_measured_hours() -> None:
    params = {"targets": ["questdb"], "scales": [1_000, 10_000], "workers": [1, 2, 4], "trials": 3}
    with pytest.raises(SpecError) as caught:
        expand_sweep(params, SweepLimits(max_hours=0.01))
    assert "h exceed the limit of 0.01 h" in str(caught.value)
    assert "(from measured costs: --plan-only lists each stage)" in str(caught.value)


def test_the_stage_lines_name_each_stage_and_where_its_figures_came_from() -> None:
    plan = expand_sweep({"targets": ["questdb"], "scales": [100], "duration": "1d", "runtime": "local"})
    lines = stage_lines(estimate_plan(plan, SOME))
    assert lines[0].split()[:4] == ["point", "stage", "where", "time"]
    assert any("load questdb × 1" in line and "measured at 1.0 M and 10.0 M rows" in line for line in lines)


def test_plan_only_shows_every_stage_then_refuses_a_size_that_does_not_fit_its_declared_host() -> None:
    """Study A's paper size on the study's own 1 TB data volume: TimescaleDB's measured bytes per row
    at 10,000 hosts × 4 months do not fit it, wherever the plan is made (the preset declares 6 TB)."""
    root = Path(__file__).resolve().parents[2]
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "tsbench",
            "study",
            str(root / "studies" / "a_fixstars_2023.yaml"),
            "--plan-only",
            "--size",
            "paper",
            "--aws",
            '{"orchestrator_cidr": ["203.0.113.7/32"], "data_volume_gb": 1024}',
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root / "plugins"), "PATH": os.environ["PATH"]},
        timeout=300,
    )
    assert shown.returncode == 2, shown.stderr
    assert "load timescaledb × 1" in shown.stdout and "measured at" in shown.stdout  # the table, first
    assert "database host: m5.2xlarge (8 vCPU, 32 GiB)" in shown.stdout
    assert "plan: disk: the largest database need ~" in shown.stderr
    assert "(its 1,024 GB gp3 data volume on m5.2xlarge" in shown.stderr


def test_another_use_case_says_it_was_read_as_cpu_only_rows_and_validation_is_read_at_the_most_hosts() -> (
    None
):
    plan = expand_sweep(
        {
            "targets": ["questdb"],
            "use_case": "devops",
            "scales": [100, 1157],
            "duration": "1d",
            "runtime": "local",
        }
    )
    stages = estimate_plan(plan, SOME).stages
    measured = [s for s in stages if s.seconds]
    assert measured and all(s.source.endswith("; as cpu-only rows (this is devops)") for s in measured)
    (validate,) = [s for s in stages if s.stage == "validate"]
    assert validate.point == "the run" and validate.seconds == pytest.approx(5.0)  # flat, at 1,157 hosts
