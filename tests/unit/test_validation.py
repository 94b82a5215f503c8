"""Validation suites on synthetic run folders (the exact layout ``runner`` + ``collect`` write).

A small real dataset is generated once; each test copies it before changing it, and builds a run
folder from phase files (``targets/<name>/<phase>.json``) merged by ``collect`` into ``result.json``.
No database server is needed.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tsbench.measure.stats import latency_stats
from tsbench.results.documents import read_result
from tsbench.results.files import read_json, write_json_atomic
from tsbench.results.model import Comparison
from tsbench.results.store import RunStore, spec_match
from tsbench.run.collect import collect
from tsbench.spec import DatasetSpec
from tsbench.validation import validate_run
from tsbench.validation.checks import Check, Frame, SuiteSpec
from tsbench.validation.gx import GxRunner
from tsbench.workload.dataset import Dataset, ensure_dataset

TYPES = {"single-groupby-1-1-1": 2, "lastpoint": 2, "high-cpu-1": 2}
INTERVAL_NS = 10_000_000_000
Phases = dict[str, dict[str, Any]]


# -- building blocks -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def base_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """cpu-only, 4 hosts × 1 hour at 10 s: 1,440 rows in one Parquet file."""
    spec = DatasetSpec.parse(scale=4, end="2016-01-01T01:00:00Z", seed=11)
    dataset, _ = ensure_dataset(spec, tmp_path_factory.mktemp("cache"))
    return dataset


@pytest.fixture
def dataset(base_dataset: Dataset, tmp_path: Path) -> Dataset:
    """A private copy of the base dataset that a test may damage."""
    return Dataset.open(shutil.copytree(base_dataset.path, tmp_path / "dataset"))


def rewrite(dataset: Dataset, change: Callable[[Any], Any], measurement: str = "cpu") -> None:
    """Apply ``change`` to the first Parquet file as a pandas frame; keep the file's schema."""
    path = dataset.files(measurement)[0]
    table = pq.read_table(path)
    frame = change(table.to_pandas())
    pq.write_table(pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False), path)


def _stats(count: int, qps: float, errors: int = 0, mismatches: int = 0) -> dict[str, Any]:
    ok = count - errors
    return latency_stats([4.0] * ok, ok / qps if ok else 1.0, errors=errors, mismatches=mismatches)


def make_run(
    root: Path,
    dataset: Dataset,
    run_id: str = "20260101T000000Z-aaaaaa",
    created_at: str = "2026-01-01T00:00:00Z",
    targets: tuple[str, ...] = ("alpha", "beta"),
    types: dict[str, int] | None = None,
    rows_per_s: float = 100_000.0,
    qps: float = 50.0,
    hot_passes: int = 1,
    tweak: Callable[[str, Phases], None] | None = None,
) -> Path:
    """A collected run folder: ``run.json``, ``queries.jsonl``, phase files, then ``collect``."""
    types = TYPES if types is None else types
    run_dir = root / run_id
    spec = {
        **dataset.manifest.spec,
        "query_types": list(types),
        "queries_per_type": 2,
        "query_seed": None,
        "targets": list(targets),
        "workers": 2,
        "batch_size": 1000,
        "hash_workers": False,
        "trials": 1,
        "hot_runs": hot_passes,
        "settle_seconds": 0.0,
        "runtime": "local",
    }
    write_json_atomic(
        run_dir / "run.json",
        {
            "format": "tsbench-run/1",
            "run_id": run_id,
            "created_at": created_at,
            "spec": spec,
            "dataset": {
                "id": dataset.id,
                "path": str(dataset.path),
                "reused": True,
                "generate_s": 0.0,
                "rows": dataset.rows,
                "rows_total": dataset.manifest.rows_total,
                "files_sha256": [f.sha256 for f in dataset.manifest.files],
                "generator_version": dataset.manifest.generator_version,
            },
            "oracle_s": 0.01,
            "queries": sum(types.values()),
            "machine": {},
            "clients": {},
        },
    )
    lines = [json.dumps({"id": f"{t}#{i}", "type": t}) for t, n in types.items() for i in range(n)]
    (run_dir / "queries.jsonl").write_text("".join(line + "\n" for line in lines))
    rows = sum(dataset.rows.values())
    for name in targets:
        checked = sum(types.values()) * (1 + hot_passes)
        phases: Phases = {
            "provision": {"version": "1.0", "capabilities": {"unsupported": {}}},
            "load": {
                "trials": [
                    {
                        "rows": rows,
                        "metrics": rows * 10,
                        "seconds": rows / rows_per_s,
                        "rows_per_s": rows_per_s,
                        "metrics_per_s": rows_per_s * 10,
                        "resources": {},
                        "row_counts": dict(dataset.rows),
                    }
                ],
                "row_count_ok": True,
                "median_rows_per_s": rows_per_s,
            },
            "queries": {
                "cold": {t: _stats(n, qps) for t, n in types.items()},
                "hot": {t: _stats(n * hot_passes, qps) for t, n in types.items()},
                "hot_passes": hot_passes,
                "unsupported": {},
                "answer_checks": {
                    "checked": checked,
                    "agreed": checked,
                    "mismatches": 0,
                    "mismatch_samples": [],
                },
                "errors": {"count": 0, "samples": []},
                "resources": {},
            },
            "teardown": {"seconds": 0.1},
        }
        if tweak:
            tweak(name, phases)
        for phase, body in phases.items():
            write_json_atomic(
                run_dir / "targets" / name / f"{phase}.json", {"phase": phase, "target": name, **body}
            )
    collect(run_dir)
    return run_dir


def results_of(outcome: dict[str, Any], suite: str) -> dict[str, dict[str, Any]]:
    body = next(s for s in outcome["suites"] if s["name"] == suite)
    return {r["expectation"]: r for r in body["results"]}


def failed(outcome: dict[str, Any], suite: str) -> list[str]:
    return [name for name, r in results_of(outcome, suite).items() if not r["success"]]


def suite_of(outcome: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in outcome["suites"] if s["name"] == name)


# -- a good run ----------------------------------------------------------------------------------
def test_good_run_passes_every_suite(dataset: Dataset, tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "runs", dataset)
    outcome = validate_run(run_dir, []).to_json()
    assert outcome["success"] is True, outcome["critical_failed"]
    assert outcome["critical_failed"] == [] and outcome["warnings"] == []
    assert [s["name"] for s in outcome["suites"]] == ["dataset", "load", "queries", "live", "history"]
    assert [s["critical"] for s in outcome["suites"]] == [True, True, True, True, False]
    for suite in outcome["suites"][:3]:
        assert suite["success"] and suite["status"] == "passed" and suite["results"]
        for item in suite["results"]:
            assert set(item) >= {"expectation", "success", "observed", "details"}
    dataset_results = results_of(outcome, "dataset")
    assert dataset_results["cpu: row count = 4 hosts × 360 epochs"]["observed"] == {
        "rows": 1440,
        "expected": 1440,
    }
    assert "cpu: (hostname, time) is unique" in dataset_results
    assert "cpu: values in [0, 100] (10 fields)" in dataset_results
    assert "cpu: no nulls (every column)" in dataset_results
    # what validate_run returns is what it wrote; GE's own results are kept per suite
    assert read_json(run_dir / "validation.json") == outcome
    for name in ("dataset", "load", "queries", "history"):
        document = read_json(run_dir / "validation" / f"{name}.json")
        assert document["suite"] == name
        for validation in document["validations"]:
            assert validation["results"][0]["expectation_config"]["type"].startswith("expect_")
    ge_dataset = read_json(run_dir / "validation" / "dataset.json")
    types = {r["expectation_config"]["type"] for v in ge_dataset["validations"] for r in v["results"]}
    assert {
        "expect_compound_columns_to_be_unique",
        "expect_column_values_to_be_between",
        "expect_column_values_to_not_be_null",
        "expect_column_pair_values_to_be_equal",
    } <= types


def test_history_without_earlier_runs_is_skipped(dataset: Dataset, tmp_path: Path) -> None:
    outcome = validate_run(make_run(tmp_path, dataset), []).to_json()
    history = suite_of(outcome, "history")
    assert history["critical"] is False and history["status"] == "skipped" and history["success"]
    for item in history["results"]:
        assert item["skipped"] is True and item["details"].startswith("skipped (not enough history)")


# -- dataset suite: each defect fails its own expectation ------------------------------------------
def test_duplicated_host_time_row_fails_uniqueness(dataset: Dataset, tmp_path: Path) -> None:
    def duplicate(frame: Any) -> Any:
        second = frame.index[(frame["hostname"] == "host_1")][1]  # host_1's second epoch …
        frame.loc[second, "time"] = frame.loc[
            frame.index[frame["hostname"] == "host_1"][0], "time"
        ]  # … → first
        return frame

    rewrite(dataset, duplicate)
    outcome = validate_run(make_run(tmp_path, dataset), []).to_json()
    assert outcome["success"] is False
    assert "dataset: cpu: (hostname, time) is unique" in outcome["critical_failed"]
    unique = results_of(outcome, "dataset")["cpu: (hostname, time) is unique"]
    assert unique["observed"]["duplicated_keys"] == 1 and unique["observed"]["extra_rows"] == 1
    assert unique["observed"]["examples"] == [
        {"hostname": "host_1", "time": "2016-01-01T00:00:00Z", "rows": 2}
    ]
    # the count still holds: only uniqueness (and the file's checksum) catch this one
    assert results_of(outcome, "dataset")["cpu: row count = 4 hosts × 360 epochs"]["success"]
    assert set(failed(outcome, "dataset")) == {
        "cpu: (hostname, time) is unique",
        "Parquet file contents = the manifest's sha256",
    }


def test_duplicate_in_another_file_is_found(dataset: Dataset, tmp_path: Path) -> None:
    """Uniqueness and counts are checked over the whole glob, not per file."""
    first = dataset.files("cpu")[0]
    pq.write_table(pq.read_table(first).slice(42, 1), first.with_name("part-99999.parquet"))
    outcome = validate_run(make_run(tmp_path, dataset), []).to_json()
    results = results_of(outcome, "dataset")
    assert results["cpu: (hostname, time) is unique"]["observed"]["duplicated_keys"] == 1
    assert results["cpu: row count = 4 hosts × 360 epochs"]["observed"] == {"rows": 1441, "expected": 1440}
    files = results["Parquet files on disk = the manifest's files, with the same row counts"]
    assert files["observed"]["not_in_manifest"] == ["cpu/part-99999.parquet"]
    assert set(failed(outcome, "dataset")) == {
        "cpu: (hostname, time) is unique",
        "cpu: row count = 4 hosts × 360 epochs",
        "Parquet files on disk = the manifest's files, with the same row counts",
    }


def test_value_101_fails_the_cpu_range(dataset: Dataset, tmp_path: Path) -> None:
    def too_high(frame: Any) -> Any:
        frame.loc[frame.index[7], "usage_user"] = 101
        return frame

    rewrite(dataset, too_high)
    outcome = validate_run(make_run(tmp_path, dataset), []).to_json()
    assert outcome["success"] is False
    assert "dataset: cpu: values in [0, 100] (10 fields)" in outcome["critical_failed"]
    item = results_of(outcome, "dataset")["cpu: values in [0, 100] (10 fields)"]
    assert (
        item["observed"]["usage_user"]["max"] == 101 and item["observed"]["usage_user"]["rows_outside"] == 1
    )
    assert item["details"].endswith("Failing: usage_user.")


def test_missing_row_fails_the_row_count(dataset: Dataset, tmp_path: Path) -> None:
    rewrite(dataset, lambda frame: frame.drop(index=frame.index[100]))
    outcome = validate_run(make_run(tmp_path, dataset), []).to_json()
    assert outcome["success"] is False
    assert "dataset: cpu: row count = 4 hosts × 360 epochs" in outcome["critical_failed"]
    count = results_of(outcome, "dataset")["cpu: row count = 4 hosts × 360 epochs"]
    assert count["observed"] == {"rows": 1439, "expected": 1440}
    files = results_of(outcome, "dataset")[
        "Parquet files on disk = the manifest's files, with the same row counts"
    ]
    assert not files["success"] and files["observed"]["row_count_differs"] == ["cpu/part-00000.parquet"]


def test_null_and_out_of_window_time_fail(dataset: Dataset, tmp_path: Path) -> None:
    def damage(frame: Any) -> Any:
        frame["usage_idle"] = frame["usage_idle"].astype("float64")
        frame.loc[frame.index[3], "usage_idle"] = None
        frame.loc[frame.index[-1], "time"] = frame["time"].max() + pd.Timedelta(minutes=20)
        return frame

    rewrite(dataset, damage)
    outcome = validate_run(make_run(tmp_path, dataset), []).to_json()
    bad = failed(outcome, "dataset")
    assert "cpu: no nulls (every column)" in bad
    assert results_of(outcome, "dataset")["cpu: no nulls (every column)"]["observed"]["usage_idle"] == 1
    window = "cpu: timestamps inside [2016-01-01T00:00:00Z, 2016-01-01T01:00:00Z)"
    assert window in bad and results_of(outcome, "dataset")[window]["observed"]["rows_outside"] == 1


def test_iot_uses_the_manifest_counts_and_allows_missing_fields(tmp_path: Path) -> None:
    spec = DatasetSpec.parse(use_case="iot", scale=6, end="2016-01-01T02:00:00Z", seed=3)
    iot, _ = ensure_dataset(spec, tmp_path / "cache")
    assert sum(iot.rows.values()) < 2 * 6 * 720  # iot drops points
    outcome = validate_run(make_run(tmp_path / "runs", iot, types={}), []).to_json()
    assert outcome["success"] is True, outcome["critical_failed"]
    results = results_of(outcome, "dataset")
    assert "readings: row count = the manifest's count (iot drops points on purpose)" in results
    assert "readings: no nulls (time)" in results
    assert "readings: (name, time) is unique" in results
    nameless = results["readings: rows without name ≤ 1%"]
    assert nameless["success"] and nameless["observed"]["rows_without_entity"] > 0


def test_too_many_nameless_rows_fail_and_nameless_instants_are_no_duplicates(tmp_path: Path) -> None:
    """TSBS clears the name of 0.2 % of iot points: 10 % nameless rows is a broken dataset; two
    nameless rows at one instant are two points of no entity, not a duplicated key."""
    spec = DatasetSpec.parse(use_case="iot", scale=6, end="2016-01-01T02:00:00Z", seed=3)
    iot, _ = ensure_dataset(spec, tmp_path / "cache")

    def damage(frame: Any) -> Any:
        frame["name"] = frame["name"].astype(object)
        frame.loc[frame.index[::10], "name"] = None
        frame.loc[frame.index[1], "time"] = frame.loc[frame.index[0], "time"]
        frame.loc[frame.index[1], "name"] = None
        return frame

    rewrite(iot, damage, "readings")
    outcome = validate_run(make_run(tmp_path / "runs", iot, types={}), []).to_json()
    assert set(outcome["critical_failed"]) == {
        "dataset: readings: rows without name ≤ 1%",
        "dataset: Parquet file contents = the manifest's sha256",  # the rewritten file
    }
    observed = results_of(outcome, "dataset")["readings: rows without name ≤ 1%"]["observed"]
    assert observed["rows_without_entity"] > observed["rows"] / 20


def test_unreadable_dataset_fails_critically(dataset: Dataset, tmp_path: Path) -> None:
    """A dataset folder whose manifest cannot be read (a folder that is gone is generated again,
    byte-identical: ``workload.recorded.run_dataset``)."""
    run_dir = make_run(tmp_path / "runs", dataset)
    (dataset.path / "manifest.json").write_text("{")
    outcome = validate_run(run_dir, []).to_json()
    assert outcome["success"] is False
    assert outcome["critical_failed"][0] == "dataset: dataset folder is readable"


def test_extremes_frame_gives_the_same_verdict_as_every_row(dataset: Dataset) -> None:
    """The scaling argument in ``tsbench.validation.dataset``: checks on the per-file extremes and
    the same checks on all rows agree (here on a good and on a damaged file)."""
    from tsbench.validation.dataset import _values_frame, profile_dataset

    def verdicts(ds: Dataset) -> tuple[dict[str, bool], dict[str, bool]]:
        frame = _values_frame(
            ds, profile_dataset(ds)["cpu"], {"usage_user": (0, 100), "usage_system": (0, 100)}
        )
        rows = ds.read("cpu").to_pandas()
        rows["time"] = rows["time"].astype("int64")
        runner = GxRunner()
        checks = [c for c in frame.checks]
        on_extremes, _ = runner.run_frame(SuiteSpec("x", True), frame)
        on_rows, _ = runner.run_frame(SuiteSpec("y", True), Frame("rows", rows, checks))
        return (
            {p["expectation"]: p["success"] for p in on_extremes},
            {p["expectation"]: p["success"] for p in on_rows},
        )

    extremes, rows = verdicts(dataset)
    assert extremes == rows and all(extremes.values())

    def damage(frame: Any) -> Any:
        frame.loc[frame.index[5], "usage_system"] = -1
        frame["usage_nice"] = frame["usage_nice"].astype("float64")
        frame.loc[frame.index[9], "usage_nice"] = None
        return frame

    rewrite(dataset, damage)
    extremes, rows = verdicts(dataset)
    assert extremes == rows
    assert not extremes["cpu: usage_system in [0, 100]"] and not extremes["cpu: usage_nice has no nulls"]
    assert extremes["cpu: usage_user in [0, 100]"]


# -- load suite ----------------------------------------------------------------------------------
def test_load_count_off_by_one_fails_naming_the_target(dataset: Dataset, tmp_path: Path) -> None:
    def short(name: str, phases: Phases) -> None:
        if name == "beta":
            phases["load"]["trials"][-1]["row_counts"]["cpu"] -= 1

    outcome = validate_run(make_run(tmp_path, dataset, tweak=short), []).to_json()
    assert outcome["success"] is False
    assert outcome["critical_failed"] == [
        "load: beta: rows in the database = rows in the dataset, per measurement"
    ]
    item = results_of(outcome, "load")["beta: rows in the database = rows in the dataset, per measurement"]
    assert item["observed"] == {"cpu": 1439} and "cpu 1439 in the database vs 1440" in item["details"]
    assert results_of(outcome, "load")["alpha: rows in the database = rows in the dataset, per measurement"][
        "success"
    ]


def test_load_count_is_checked_against_the_rows_a_model_keeps(dataset: Dataset, tmp_path: Path) -> None:
    """A target that declares rows its model cannot keep (``load.expected_rows``, e.g. InfluxDB's
    field-less iot points) is checked against those rows: equal passes, one off fails."""

    def keeps_fewer(off: int) -> Callable[[str, Phases], None]:
        def tweak(name: str, phases: Phases) -> None:
            if name == "beta":
                phases["load"]["expected_rows"] = {"cpu": 1430}
                phases["load"]["trials"][-1]["row_counts"]["cpu"] = 1430 + off

        return tweak

    name = "beta: rows in the database = rows in the dataset its data model keeps, per measurement"
    passed = validate_run(make_run(tmp_path / "a", dataset, tweak=keeps_fewer(0)), []).to_json()
    assert passed["success"] is True, passed["critical_failed"]
    assert "data model cannot keep" in results_of(passed, "load")[name]["details"]
    failed = validate_run(make_run(tmp_path / "b", dataset, tweak=keeps_fewer(1)), []).to_json()
    assert failed["critical_failed"] == [f"load: {name}"]


def test_failed_target_is_a_failed_expectation_naming_it(dataset: Dataset, tmp_path: Path) -> None:
    def crash(name: str, phases: Phases) -> None:
        if name == "alpha":
            del phases["queries"]
            phases["load"]["trials"][-1]["row_counts"] = {}
            phases["error"] = {"failed_phase": "load", "error": "TargetError: connection refused"}

    outcome = validate_run(make_run(tmp_path, dataset, tweak=crash), []).to_json()
    assert outcome["success"] is False
    load = results_of(outcome, "load")
    assert not load["alpha: finished every phase"]["success"]
    assert load["alpha: finished every phase"]["details"] == "failed in load: TargetError: connection refused"
    assert not load["alpha: rows in the database = rows in the dataset, per measurement"]["success"]
    assert load["beta: finished every phase"]["success"]
    coverage = results_of(outcome, "queries")[
        "alpha: every requested query type ran or is declared unsupported"
    ]
    assert not coverage["success"] and set(coverage["observed"]["not_covered"]) == set(TYPES)


# -- queries suite -------------------------------------------------------------------------------
def test_query_mismatch_fails(dataset: Dataset, tmp_path: Path) -> None:
    def wrong(name: str, phases: Phases) -> None:
        if name == "alpha":
            phases["queries"]["hot"]["lastpoint"] = _stats(2, 50.0, mismatches=1)
            checks = phases["queries"]["answer_checks"]
            checks.update(agreed=checks["checked"] - 1, mismatches=1)
            checks["mismatch_samples"] = [
                {"pass": "hot-1", "query_id": "lastpoint#1", "reason": "row 3 differs"}
            ]

    outcome = validate_run(make_run(tmp_path, dataset, tweak=wrong), []).to_json()
    assert outcome["critical_failed"] == ["queries: alpha: answers agree with the oracle"]
    item = results_of(outcome, "queries")["alpha: answers agree with the oracle"]
    assert item["observed"] == {"mismatches": 1, "by_type": {"lastpoint": 1}}
    assert "lastpoint#1" in item["details"]


def test_query_error_fails(dataset: Dataset, tmp_path: Path) -> None:
    def broken(name: str, phases: Phases) -> None:
        if name == "beta":
            phases["queries"]["cold"]["high-cpu-1"] = _stats(2, 50.0, errors=1)
            phases["queries"]["answer_checks"]["checked"] -= 1
            phases["queries"]["answer_checks"]["agreed"] -= 1
            phases["queries"]["errors"] = {"count": 1, "samples": [{"error": "SyntaxError: near WHERE"}]}

    outcome = validate_run(make_run(tmp_path, dataset, tweak=broken), []).to_json()
    assert outcome["critical_failed"] == ["queries: beta: no query errors"]
    item = results_of(outcome, "queries")["beta: no query errors"]
    assert item["observed"] == {"errors": 1, "by_type": {"high-cpu-1": 1}}
    assert item["details"] == "first error: SyntaxError: near WHERE"


def test_declared_unsupported_types_pass_and_missing_ones_fail(dataset: Dataset, tmp_path: Path) -> None:
    def unsupported(name: str, phases: Phases) -> None:
        for pass_kind in ("cold", "hot"):
            del phases["queries"][pass_kind]["high-cpu-1"]
        if name == "alpha":
            phases["queries"]["unsupported"] = {"high-cpu-1": "no threshold filter in this dialect"}
        checks = phases["queries"]["answer_checks"]
        checks.update(checked=checks["checked"] - 4, agreed=checks["agreed"] - 4)

    outcome = validate_run(make_run(tmp_path, dataset, tweak=unsupported), []).to_json()
    queries = results_of(outcome, "queries")
    alpha = queries["alpha: every requested query type ran or is declared unsupported"]
    assert alpha["success"] and alpha["observed"]["unsupported"] == 1
    assert "high-cpu-1 (no threshold filter in this dialect)" in alpha["details"]
    beta = queries["beta: every requested query type ran or is declared unsupported"]
    assert not beta["success"] and beta["observed"]["not_covered"] == {"high-cpu-1": "not run"}
    assert outcome["critical_failed"] == [
        "queries: beta: every requested query type ran or is declared unsupported"
    ]


# -- history suite -------------------------------------------------------------------------------
def _earlier(root: Path, dataset: Dataset, count: int, **kwargs: Any) -> list[dict[str, Any]]:
    runs = []
    for day in range(1, count + 1):
        run_dir = make_run(
            root,
            dataset,
            run_id=f"202512{day:02d}T000000Z-h{day:05d}",
            created_at=f"2025-12-{day:02d}T00:00:00Z",
            **kwargs,
        )
        runs.append(read_json(run_dir / "result.json"))
    return runs


def test_history_warns_on_a_50_percent_drop(dataset: Dataset, tmp_path: Path) -> None:
    history = _earlier(tmp_path / "old", dataset, 5, rows_per_s=100_000.0)
    outcome = validate_run(make_run(tmp_path / "new", dataset, rows_per_s=50_000.0), history).to_json()
    assert outcome["success"] is True  # warnings never fail a run
    suite = suite_of(outcome, "history")
    assert suite["critical"] is False and suite["success"] is False and suite["status"] == "warning"
    assert len(outcome["warnings"]) == 2
    assert outcome["warnings"][0].startswith("history: alpha: load rows/s within ±30% of the trailing median")
    item = results_of(outcome, "history")["alpha: load rows/s within ±30% of the trailing median"]
    assert item["observed"] == {"value": 50_000.0, "median": 100_000.0, "ratio": 0.5, "runs": 5}
    assert item["details"] == "-50.0 % vs the median of 5 earlier run(s)"
    assert results_of(outcome, "history")["beta: hot qps lastpoint within ±30% of the trailing median"][
        "success"
    ]


def test_history_with_two_earlier_runs_is_skipped(dataset: Dataset, tmp_path: Path) -> None:
    history = _earlier(tmp_path / "old", dataset, 2, rows_per_s=100_000.0)
    outcome = validate_run(make_run(tmp_path / "new", dataset, rows_per_s=50_000.0), history).to_json()
    suite = suite_of(outcome, "history")
    assert suite["status"] == "skipped" and outcome["warnings"] == []
    item = results_of(outcome, "history")["alpha: figures vs the trailing median"]
    assert item["skipped"] and item["details"].startswith("skipped (not enough history)")
    assert item["observed"]["skipped"]["load rows/s"] == "not enough history (2 earlier value(s), need 3)"


def test_history_uses_only_comparable_earlier_valid_runs(dataset: Dataset, tmp_path: Path) -> None:
    good = _earlier(tmp_path / "old", dataset, 3, rows_per_s=100_000.0)
    other_targets = _earlier(tmp_path / "other", dataset, 3, rows_per_s=10.0, targets=("alpha",))
    failed_runs = [dict(copy.deepcopy(r), validation={"success": False}) for r in good]
    for r in failed_runs:
        r["run_id"] += "-f"
    later = [
        dict(copy.deepcopy(r), created_at="2027-01-01T00:00:00Z", run_id=r["run_id"] + "-l") for r in good
    ]
    for r in later:
        r["targets"]["alpha"]["load"]["median_rows_per_s"] = 1.0
    history = [*good, *other_targets, *failed_runs, *later]
    outcome = validate_run(make_run(tmp_path / "new", dataset, rows_per_s=95_000.0), history).to_json()
    suite = suite_of(outcome, "history")
    assert suite["info"]["earlier_runs"] == [r["run_id"] for r in good]
    assert suite["status"] == "passed" and outcome["warnings"] == []


def test_history_from_the_run_store(dataset: Dataset, tmp_path: Path) -> None:
    store = RunStore(tmp_path / "store")
    for day in range(1, 5):
        run_dir = make_run(
            store.root,
            dataset,
            run_id=f"202512{day:02d}T000000Z-s{day:05d}",
            created_at=f"2025-12-{day:02d}T00:00:00Z",
        )
        validate_run(run_dir, store.history(spec_match(read_result(run_dir))))
        store.record(run_dir)
    current = make_run(store.root, dataset, run_id="20260101T000000Z-now000", rows_per_s=40_000.0)
    result = read_result(current)
    history = store.history(spec_match(result), n=7, before=result)
    assert [r.run_id for r in history] == [f"202512{d:02d}T000000Z-s{d:05d}" for d in range(1, 5)]
    assert all(r.validation is not None and r.validation.success for r in history)
    outcome = validate_run(current, history).to_json()
    summary = store.record(current)
    assert summary.verdict == "passed" and summary.validation.warnings == len(outcome["warnings"]) == 2
    index = read_json(store.index_path)
    assert index["runs"][0]["run_id"] == "20260101T000000Z-now000"
    assert index["runs"][0]["load_rows_per_s"] == {"alpha": 40_000.0, "beta": 40_000.0}
    assert [line.to_json() for line in store.index()] == index["runs"] and len(index["runs"]) == 5


# -- the GE runner itself --------------------------------------------------------------------------
def test_runner_maps_every_expectation_back_to_its_check() -> None:
    frame = pd.DataFrame({"target": ["a", "a", "b"], "x": [1, 2, 30]})
    checks = [
        Check(
            "a small",
            "ExpectColumnValuesToBeBetween",
            {"column": "x", "min_value": 0, "max_value": 5},
            ("target", "a"),
        ),
        Check(
            "b small",
            "ExpectColumnValuesToBeBetween",
            {"column": "x", "min_value": 0, "max_value": 5},
            ("target", "b"),
        ),
        Check("no nulls", "ExpectColumnValuesToNotBeNull", {"column": "x"}, group="all", part="x"),
        Check(
            "all small",
            "ExpectColumnValuesToBeBetween",
            {"column": "x", "max_value": 5},
            group="all",
            part="range",
        ),
    ]
    body, document = GxRunner().run(SuiteSpec("demo", critical=False, frames=[Frame("f", frame, checks)]))
    assert [(r["expectation"], r["success"]) for r in body["results"]] == [
        ("a small", True),
        ("b small", False),
        ("all", False),
    ]
    assert body["results"][1]["observed"] == {"checked": 1, "unexpected": 1, "examples": [30]}
    assert body["results"][2]["details"] == "Failing: range."
    assert body["status"] == "warning" and not body["critical"]
    severities = {r["expectation_config"]["severity"] for r in document["validations"][0]["results"]}
    assert severities == {"warning"}


# -- comparisons: one run folder per scale ---------------------------------------------------------
def make_comparison(
    root: Path, datasets: list[Dataset], run_id: str, created_at: str, **kwargs: Any
) -> tuple[Path, Comparison]:
    """A comparison folder (``tsbench.run.comparison`` layout): ``scale-<N>/`` run folders, then
    ``comparison.json`` by ``collect_comparison``."""
    from tsbench.run.comparison import collect_comparison

    folder = root / run_id
    for ds in datasets:
        make_run(folder, ds, run_id=f"scale-{ds.scale}", created_at=created_at, **kwargs)
    return folder, collect_comparison(folder)


@pytest.fixture(scope="module")
def second_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    spec = DatasetSpec.parse(scale=6, end="2016-01-01T01:00:00Z", seed=11)
    dataset, _ = ensure_dataset(spec, tmp_path_factory.mktemp("cache6"))
    return dataset


def test_comparison_is_validated_scale_by_scale(
    base_dataset: Dataset, second_dataset: Dataset, tmp_path: Path
) -> None:
    def short(name: str, phases: Phases) -> None:
        counts = phases["load"]["trials"][-1]["row_counts"]
        if name == "beta" and counts["cpu"] == 6 * 360:
            counts["cpu"] -= 1

    folder, _ = make_comparison(
        tmp_path,
        [base_dataset, second_dataset],
        "20260101T000000Z-cmp001",
        "2026-01-01T00:00:00Z",
        tweak=short,
    )
    outcome = validate_run(folder, []).to_json()
    assert outcome["success"] is False
    assert outcome["critical_failed"] == [
        "scale 6: load: beta: rows in the database = rows in the dataset, per measurement"
    ]
    assert outcome["scales"]["4"]["success"] and not outcome["scales"]["6"]["success"]
    assert [s["name"] for s in outcome["suites"]][:5] == [
        "scale 4: dataset",
        "scale 4: load",
        "scale 4: queries",
        "scale 4: live",
        "scale 4: history",
    ]
    assert read_json(folder / "validation.json") == outcome
    assert read_json(folder / "scale-4" / "validation.json")["success"] is True
    assert read_json(folder / "scale-6" / "validation.json")["success"] is False
    assert (folder / "scale-6" / "validation" / "dataset.json").is_file()


def test_comparisons_in_the_store_give_per_scale_history(
    base_dataset: Dataset, second_dataset: Dataset, tmp_path: Path
) -> None:
    store = RunStore(tmp_path / "store")
    for day in (1, 2, 3):
        folder, _ = make_comparison(
            store.root,
            [base_dataset, second_dataset],
            f"202512{day:02d}T000000Z-c{day:05d}",
            f"2025-12-0{day}T00:00:00Z",
        )
        if day == 1:  # one earlier run validated (passed), two not yet: history keeps all three
            validate_run(folder, [])
        summary = store.record(folder)
        assert summary.kind == "comparison" and summary.scales == [4, 6]
    folder, comparison = make_comparison(
        store.root,
        [base_dataset, second_dataset],
        "20260101T000000Z-cnow01",
        "2026-01-01T00:00:00Z",
        rows_per_s=40_000.0,
    )
    scale4 = comparison.results["4"]
    history = store.history(spec_match(scale4), before=comparison)
    assert [(r.store_id, r.result.spec["scale"]) for r in history] == [
        (f"202512{d:02d}T000000Z-c{d:05d}", 4) for d in (1, 2, 3)
    ]
    everything = [store.results(s.run_id) for s in store.index()]  # results of all scales
    outcome = validate_run(folder, [r for rs in everything for r in rs]).to_json()
    assert outcome["success"] is True
    assert len(outcome["warnings"]) == 4  # load rows/s of both targets at both scales
    assert outcome["warnings"][0].startswith("scale 4: history: alpha: load rows/s within ±30%")
    history_suite = next(s for s in outcome["suites"] if s["name"] == "scale 6: history")
    assert history_suite["info"]["earlier_runs"] == [f"202512{d:02d}T000000Z-c{d:05d}" for d in (1, 2, 3)]
    summary = store.record(folder)
    assert summary.load_rows_per_s == {"alpha": 40_000.0, "beta": 40_000.0}
    assert summary.load_rows_per_s_by_scale["4"] == {"alpha": 40_000.0, "beta": 40_000.0}
    assert store.index()[0].run_id == "20260101T000000Z-cnow01"
