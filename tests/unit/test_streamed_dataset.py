"""A streamed dataset: its loads read the rows generated again, exactly as stored; its folder keeps
the rows its queries read, over which the oracle answers as over the whole dataset; what it cannot
answer is refused before any work."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from tsbench.spec import RunSpec
from tsbench.workload.dataset import DatasetError, ensure_dataset
from tsbench.workload.dataset_spec import SpecError
from tsbench.workload.extract import (
    Coverage,
    ExtractError,
    ReadWindow,
    RowFilter,
    epochs_inside,
    merged,
    planned_extract,
    read_windows,
    unkept,
)
from tsbench.workload.oracle import Oracle
from tsbench.workload.queries import DataRange, generate_queries
from tsbench.workload.stored_rows import stored_rows
from tsbench.workload.streamed_dataset import ensure_streamed_dataset

TWO_WEEKS = {"scale": 12, "end": "2016-01-15T00:00:00Z", "queries_per_type": 3}


def _run(**fields: object) -> RunSpec:
    return RunSpec.parse(**{"targets": ["questdb"], "dataset_rows": "streamed", **TWO_WEEKS, **fields})


def _queries(spec: RunSpec) -> list:
    data = DataRange.of_spec(spec.dataset)
    return generate_queries(data, spec.resolved_query_types, spec.queries_per_type, spec.effective_query_seed)


@pytest.mark.parametrize("use_case", ["cpu-only", "ycsb-ts"])
def test_the_oracle_answers_from_the_extract_as_from_the_whole_dataset(use_case: str, tmp_path: Path) -> None:
    spec = _run(use_case=use_case)
    whole, _ = ensure_dataset(spec.dataset, tmp_path)
    streamed, reused = ensure_streamed_dataset(spec.dataset, planned_extract(spec)[0], tmp_path)
    assert not reused and streamed.extract is not None and streamed.path != whole.path
    kept, rows = sum(streamed.extract.rows.values()), sum(whole.rows.values())
    assert streamed.rows == whole.rows and 0 < kept < rows  # the manifest states the whole dataset
    assert kept == planned_extract(spec)[1]  # the plan's figure is the extract's
    queries = _queries(spec)
    assert {q.type for q in queries} == set(spec.resolved_query_types)
    expected = [answer.to_json() for _, answer in Oracle(whole).answers(queries)]
    answered = [answer.to_json() for _, answer in Oracle(streamed).answers(queries)]
    assert answered == expected and any(a.get("rows") for a in answered)
    # a query whose window the extract did not keep is refused, never answered from a part
    other = generate_queries(DataRange.of_spec(spec.dataset), spec.resolved_query_types, 3, seed=99)
    refused = [q for q in other if unkept(streamed.extract, [q], streamed.end_ns, streamed.interval_ns)]
    assert refused, "another seed's windows fall outside the extract"
    with pytest.raises(ExtractError, match="did not keep"):
        Oracle(streamed).answer(refused[0])


def test_a_load_reads_the_rows_generated_again_exactly_as_stored(tmp_path: Path) -> None:
    spec = _run(ingestion="per-host-runs", run_length=10)
    whole, _ = ensure_dataset(spec.dataset, tmp_path)
    streamed, _ = ensure_streamed_dataset(spec.dataset, planned_extract(spec)[0], tmp_path)
    stored = pa.Table.from_batches(list(whole.iter_batches("cpu", 7_777)))
    again = list(streamed.iter_batches("cpu", 7_777))
    assert [b.num_rows for b in again] == [b.num_rows for b in whole.iter_batches("cpu", 7_777)]
    assert pa.Table.from_batches(again).equals(stored)
    # what the manifest says of the whole rows was counted over them, not over the extract
    assert streamed.manifest.lateness_ns == whole.manifest.lateness_ns > 0
    assert streamed.complete_fields("cpu") == whole.complete_fields("cpu")
    assert stored_rows(streamed, keeps_fieldless=False) == whole.rows


def test_read_windows_and_what_they_keep() -> None:
    spec = _run(query_types=["lastpoint", "groupby-orderby-limit", "ycsb-read", "high-cpu-1"], scale=8)
    windows = read_windows(_queries(spec), spec.end, spec.interval)
    by_type = dict(zip([q.type for q in _queries(spec)], windows, strict=True))
    last = by_type["lastpoint"]
    assert (last.end_ns - last.start_ns, last.coverage) == (spec.interval, Coverage.EVERY_ENTITY)
    limit = by_type["groupby-orderby-limit"]
    assert limit.coverage is Coverage.EVERY_BUCKET and limit.end_ns - limit.start_ns <= 5 * 60 * 10**9
    assert by_type["ycsb-read"].end_ns - by_type["ycsb-read"].start_ns == 1
    assert merged([ReadWindow(0, 10), ReadWindow(5, 20), ReadWindow(30, 40)]) == [(0, 20), (30, 40)]
    assert epochs_inside([(0, 20), (30, 41)], start_ns=0, interval_ns=10) == 2 + 2
    times = pa.array([0, 10, 20, 29, 30, 40, 50, 60], pa.timestamp("ns", tz="UTC"))
    hosts = pa.array(["a", "b", "a", "b", "a", "b", "a", "b"]).dictionary_encode()
    batch = pa.record_batch({"time": times, "hostname": hosts})
    rows = RowFilter([(0, 20), (30, 41)], {"a": [(45, 55)], "c": [(0, 100)]}, "hostname").kept(batch)
    assert rows.column("time").cast(pa.int64()).to_pylist() == [0, 10, 30, 40, 50]  # b's 60: not read
    by_host = read_windows(_queries(_run(query_types=["single-groupby-1-8-1"], scale=20)), 0, 1)
    assert all(w.entities is not None and len(w.entities) == 8 for w in by_host)


def test_an_extract_whose_coverage_fails_is_refused_and_left_behind(tmp_path: Path) -> None:
    """A window must hold a row of every entity (lastpoint) or of every bucket (orderby-limit) for
    its query to be answered as over the whole data: windows past the data's end do not."""
    spec, minute = _run(query_types=["lastpoint"]), 60 * 10**9
    past_end = [
        ReadWindow(spec.end - minute, spec.end + 2 * minute, Coverage.EVERY_BUCKET, minute),
        ReadWindow(spec.end, spec.end + spec.interval, Coverage.EVERY_ENTITY),
    ]
    with pytest.raises(DatasetError) as refused:
        ensure_streamed_dataset(spec.dataset, past_end, tmp_path)
    assert "has 1 of the 3 buckets it needs" in str(refused.value)
    assert "has 0 of the 12 entities it needs" in str(refused.value)
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]  # nothing half-written stays


def test_what_cannot_stream_is_refused_before_any_work() -> None:
    with pytest.raises(SpecError) as refused:
        _run(use_case="iot", late_fraction=0.1, lateness="1m", max_lateness="5m", live_seconds=5)
    text = str(refused.value)
    for reason in ("the rows arrive late", "iot drops rows", "last-loc, low-fuel", "a live phase"):
        assert f"dataset_rows: streamed, but {reason}" in text
    assert "breakdown-frequency read all of the data, not a window" in text
    with pytest.raises(ExtractError, match="last-loc reads all of the data"):
        read_windows(_queries(RunSpec.parse(targets=["questdb"], use_case="iot", scale=4)), 0, 1)
    auto = RunSpec.parse(targets=["questdb"], scale=12)
    assert auto.dataset_rows == "auto" and not auto.streams_dataset and _run().streams_dataset
