"""The typed result model (tsbench.results.model) reads every result the runner writes and gives
back exactly the JSON it read; the report, collect and the runner go through it."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError
from test_report import synthetic_history, synthetic_result

from tsbench.results.model import Comparison, LoadPhase, QueryStats, RunResult, TargetResult


def test_a_result_round_trips_exactly() -> None:
    body = synthetic_result()
    assert RunResult.from_json(copy.deepcopy(body)).to_json() == body
    for earlier in synthetic_history():
        assert RunResult.from_json(earlier).to_json() == earlier


def test_a_comparison_round_trips_exactly() -> None:
    result = synthetic_result()
    body = {
        "format": "tsbench-comparison/1",
        "run_id": result["run_id"],
        "created_at": result["created_at"],
        "finished_at": result["finished_at"],
        "use_case": "cpu-only",
        "targets": list(result["targets"]),
        "scales": [result["spec"]["scale"]],
        "failed_targets": ["influxdb"],
        "results": {str(result["spec"]["scale"]): result},
    }
    model = Comparison.from_json(copy.deepcopy(body))
    assert model.to_json() == body
    assert model.results[str(result["spec"]["scale"])].targets["questdb"].ok


def test_typed_access_to_the_figures() -> None:
    run = RunResult.from_json(synthetic_result())
    questdb = run.targets["questdb"]
    assert questdb.load is not None and questdb.queries is not None
    trial, number = questdb.load.median_trial()
    assert trial is not None and trial.rows_per_s == questdb.load.median_rows_per_s == 410_000.0
    assert number == 1
    assert questdb.queries.hot["lastpoint"].qps == 510.0 and questdb.queries.hot["lastpoint"].clean()
    failed = run.targets["influxdb"]
    assert failed.status == "failed" and not failed.ok and failed.queries is None


def test_unknown_keys_are_kept_and_absent_keys_are_not_invented() -> None:
    body = {"trials": [{"rows": 10, "rows_per_s": 5, "progress": [[0.5, 5]]}], "future_key": {"a": 1}}
    load = LoadPhase.from_json(body)
    assert load.to_json() == body
    assert not load.has("median_rows_per_s") and load.median_rows_per_s is None
    assert isinstance(load.trials[0].rows_per_s, int)  # an int stays an int
    assert TargetResult.from_json({}).to_json() == {} and TargetResult.from_json({}).status == "incomplete"


def test_records_are_frozen_and_typed() -> None:
    stats = QueryStats.from_json({"count": 3, "qps": 1.5})
    with pytest.raises(ValidationError):
        stats.count = 4  # type: ignore[misc]
    with pytest.raises(ValidationError):
        QueryStats.from_json({"count": "many"})
