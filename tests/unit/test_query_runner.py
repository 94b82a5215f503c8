"""The query runner on a DuckDB-backed session: statistics per type, mismatch and error recording."""

from __future__ import annotations

import time
from typing import Any

from tsbench.measure.query_runner import run_pass
from tsbench.measure.stats import latency_stats
from tsbench.targets.base import RowSession
from tsbench.workload.dataset import Dataset
from tsbench.workload.oracle import Oracle, oracle_sql
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries


class DuckSession(RowSession):
    """Executes the oracle's own SQL (rendered text = query id); can corrupt or fail answers."""

    def __init__(self, oracle: Oracle, by_id: dict[str, LogicalQuery], corrupt: set[str], broken: set[str]):
        self.oracle, self.by_id, self.corrupt, self.broken = oracle, by_id, corrupt, broken

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        if text in self.broken:
            raise RuntimeError("syntax error at or near SELECT")
        sql, params = oracle_sql(self.by_id[text])
        rows = self.oracle.connection.cursor().execute(sql, params).fetchall()
        if text in self.corrupt:
            rows = rows[1:]  # lose a row
        return rows

    def close(self) -> None:
        pass


def test_stats_checks_and_failures(small_dataset: Dataset) -> None:
    queries = generate_queries(
        DataRange.of(small_dataset), ["lastpoint", "single-groupby-1-1-1", "ycsb-read"], 6, 3
    )
    oracle = Oracle(small_dataset)
    expected = {q.id: oracle.answer(q) for q in queries}
    by_id = {q.id: q for q in queries}
    corrupt, broken = {"lastpoint#2"}, {"ycsb-read#4"}
    result = run_pass(
        "cold",
        queries,
        {q.id: q.id for q in queries},
        expected,
        lambda: DuckSession(oracle, by_id, corrupt, broken),
        workers=2,
    )
    stats = result.stats()
    assert set(stats) == {"lastpoint", "single-groupby-1-1-1", "ycsb-read"}
    assert stats["lastpoint"]["count"] == 6 and stats["lastpoint"]["mismatches"] == 1
    assert stats["ycsb-read"]["errors"] == 1 and stats["ycsb-read"]["count"] == 5
    assert stats["single-groupby-1-1-1"]["mismatches"] == 0 and stats["single-groupby-1-1-1"]["qps"] > 0
    bad = next(e for e in result.executions if e.query_id == "lastpoint#2")
    assert bad.answer_ok is False and "expected 12 rows, got 11" in bad.diff["reason"]
    failed = next(e for e in result.executions if e.query_id == "ycsb-read#4")
    assert failed.latency_ms is None and "syntax error" in failed.error
    assert [e.query_id for e in result.executions][:6] == [f"lastpoint#{i}" for i in range(6)]


def test_latency_stats() -> None:
    stats = latency_stats([1.0, 2.0, 3.0, 4.0], wall_s=2.0, errors=1)
    assert stats["count"] == 4 and stats["qps"] == 2.0 and stats["errors"] == 1
    assert stats["min_ms"] == 1.0 and stats["max_ms"] == 4.0 and stats["p50_ms"] == 2.5
    assert abs(stats["stddev_ms"] - 1.118) < 1e-3
    assert latency_stats([], wall_s=1.0)["count"] == 0


class SlowDecoding(DuckSession):
    """Receives at once; decoding takes 50 ms and fails for the ``broken`` ids (raw = query id)."""

    def fetch(self, text: str) -> Any:
        return text

    def decode(self, raw: Any) -> list[tuple[Any, ...]]:
        time.sleep(0.05)
        if raw in self.broken:
            raise ValueError("body is not JSON")
        return self.execute(raw)


def test_decoding_is_outside_the_timed_window_and_its_failure_is_the_query_error(
    small_dataset: Dataset,
) -> None:
    queries = generate_queries(DataRange.of(small_dataset), ["lastpoint"], 6, 3)
    oracle = Oracle(small_dataset)
    expected = {q.id: oracle.answer(q) for q in queries}
    by_id = {q.id: q for q in queries}
    result = run_pass(
        "cold",
        queries,
        {q.id: q.id for q in queries},
        expected,
        lambda: SlowDecoding(oracle, by_id, set(), {"lastpoint#1"}),
        workers=2,
    )
    stats = result.stats()["lastpoint"]
    assert stats["count"] == 5 and stats["errors"] == 1 and stats["mismatches"] == 0
    assert stats["max_ms"] < 25 and stats["wall_s"] < 0.1  # six decodes take 0.3 s, none timed
    assert stats["client_cpu_s"] >= 0 and 0 <= stats["client_share"] <= 1
    failed = next(e for e in result.executions if e.query_id == "lastpoint#1")
    assert failed.latency_ms is None and "not JSON" in failed.error


def test_a_memory_budget_cuts_a_type_into_segments_with_the_same_results(small_dataset: Dataset) -> None:
    """With a budget smaller than one answer, each worker holds one raw answer at a time: the run
    goes in segments (sessions kept, opened once per worker), every answer is still checked, and the
    type's wall is the sum of the segments' walls."""
    from collections import deque

    from tsbench.measure.fetching import FetchPool

    queries = generate_queries(DataRange.of(small_dataset), ["high-cpu-all"], 6, 3)
    oracle = Oracle(small_dataset)
    by_id = {q.id: q for q in queries}
    opened: list[DuckSession] = []

    def open_session() -> DuckSession:
        opened.append(DuckSession(oracle, by_id, set(), set()))
        return opened[-1]

    pool = FetchPool(open_session, workers=2, budget_bytes=1)
    work = deque((q.id, q.type, q.id) for q in queries)
    segments = []
    while work:
        segments.append(pool.segment(work))
    pool.close()
    # at most one answer per worker per segment (a worker may find the budget spent before it starts)
    assert len(segments) >= 3 and all(1 <= len(s.received) <= 2 for s in segments)
    assert len(opened) <= 2  # each worker's session lives across segments
    got = [r.execution.query_id for s in segments for r in s.received]
    assert got == [q.id for q in queries]
    result = run_pass(
        "cold",
        queries,
        {q.id: q.id for q in queries},
        {q.id: oracle.answer(q) for q in queries},
        open_session,
        2,
    )
    assert all(e.answer_ok for e in result.executions) and len(result.executions) == 6
