"""Logical query generation: deterministic, inside the data, TSBS's random parts."""

from __future__ import annotations

from pathlib import Path

from tsbench.timeutil import NS_PER_SECOND
from tsbench.workload.dataset import Dataset
from tsbench.workload.queries import DataRange, generate_queries, read_query_set, write_query_set
from tsbench.workload.query_types import DEVOPS_QUERY_TYPES, QUERY_TYPES, Kind, types_of
from tsbench.workload.usecases import get_use_case

CPU_TYPES = types_of(get_use_case("cpu-only").query_families)  # the types a cpu dataset answers


def test_catalogue_has_15_devops_types_and_5_ycsb_operations() -> None:
    assert len(DEVOPS_QUERY_TYPES) == 15
    assert {n for n, q in QUERY_TYPES.items() if q.family == "ycsb-ts"} == {
        "ycsb-read",
        "ycsb-scan",
        "ycsb-count",
        "ycsb-avg",
        "ycsb-sum",
    }
    q = QUERY_TYPES["single-groupby-5-8-1"]
    assert (q.nfields, q.hosts, q.window_ns, q.bucket_ns) == (5, 8, 3600 * NS_PER_SECOND, 60 * NS_PER_SECOND)
    assert QUERY_TYPES["cpu-max-all-8"].bucket_ns == 3600 * NS_PER_SECOND  # 1 h, not TSBS's old 1 m bug
    assert QUERY_TYPES["double-groupby-all"].nfields == 10


def test_queries_are_deterministic_and_inside_the_data(small_dataset: Dataset) -> None:
    data = DataRange.of(small_dataset)
    queries = generate_queries(data, CPU_TYPES, 20, seed=5)
    assert queries == generate_queries(data, CPU_TYPES, 20, seed=5)
    assert queries != generate_queries(data, CPU_TYPES, 20, seed=6)
    assert len(queries) == 20 * len(CPU_TYPES)
    for q in queries:
        qtype = q.query_type
        if qtype.hosts is not None:
            assert len(q.hosts) == qtype.hosts == len(set(q.hosts))
            assert all(0 <= int(h.removeprefix("host_")) < data.entities for h in q.hosts)
        else:
            assert q.hosts is None
        if qtype.window_ns:
            assert q.end_ns - q.start_ns == qtype.window_ns
            assert data.start_ns <= q.start_ns and q.end_ns <= data.end_ns + NS_PER_SECOND
            assert q.start_ns % NS_PER_SECOND == 0
        if qtype.kind is Kind.READ:
            assert (q.at_ns - data.start_ns) % data.interval_ns == 0 and q.at_ns < data.end_ns
        if qtype.kind is Kind.ORDERBY_LIMIT:
            assert data.start_ns < q.end_ns <= data.end_ns + NS_PER_SECOND


def test_adding_a_type_does_not_change_another(small_dataset: Dataset) -> None:
    data = DataRange.of(small_dataset)
    alone = generate_queries(data, ["high-cpu-1"], 5, seed=1)
    mixed = generate_queries(data, ["lastpoint", "high-cpu-1"], 5, seed=1)
    assert alone == mixed[5:]


def test_windows_spread_over_the_whole_range(small_dataset: Dataset) -> None:
    data = DataRange.of(small_dataset)
    starts = [q.start_ns for q in generate_queries(data, ["single-groupby-1-1-1"], 400, seed=3)]
    span = data.end_ns + NS_PER_SECOND - 3600 * NS_PER_SECOND - data.start_ns
    positions = sorted((s - data.start_ns) / span for s in starts)
    assert positions[0] < 0.02 and positions[-1] > 0.98
    assert 0.4 < positions[len(positions) // 2] < 0.6


def test_jsonl_round_trip(tmp_path: Path, small_dataset: Dataset) -> None:
    queries = generate_queries(DataRange.of(small_dataset), CPU_TYPES, 3, seed=1)
    path = write_query_set(tmp_path / "q.jsonl", queries)
    assert read_query_set(path) == queries
    first = path.read_text().splitlines()[0]
    assert '"type":"single-groupby-1-1-1"' in first and '"start":"2016-01-01T' in first


def test_ycsb_ts_queries_read_the_record_shape(dataset_cache: Path) -> None:
    """On YCSB-TS records the operations read ``usermetric.value`` of one metric; the oracle answers
    them (a read finds exactly one record, a count over 1 h at 10 s is 360, 359 where the window
    reaches past the data's end)."""
    from tsbench.spec import DatasetSpec, RunSpec
    from tsbench.workload.dataset import ensure_dataset
    from tsbench.workload.oracle import Oracle

    spec = DatasetSpec.parse(use_case="ycsb-ts", scale=8, end="2016-01-01T06:00:00Z")
    dataset, _ = ensure_dataset(spec, dataset_cache)
    data = DataRange.of(dataset)
    assert (data.measurement, data.entity_key, data.fields) == ("usermetric", "metric", ("value",))
    ycsb = [n for n, q in QUERY_TYPES.items() if q.family == "ycsb-ts"]
    spec8 = RunSpec.parse(targets=["questdb"], use_case="ycsb-ts", scale=8, end="2016-01-01T06:00:00Z")
    assert spec8.resolved_query_types == ycsb
    oracle = Oracle(dataset)
    try:
        for query in generate_queries(data, ycsb, 3, seed=2):
            assert query.fields == ("value",) and query.hosts[0].startswith("metric_")
            answer = oracle.answer(query)
            if query.type == "ycsb-read":
                assert len(answer.rows) == 1 and answer.columns == ["time", "hostname", "value"]
            if query.type == "ycsb-count":
                assert answer.rows[0][0] in (359.0, 360.0)
    finally:
        oracle.close()
