"""VictoriaMetrics' MetricsQL renderings (targets/victoriametrics/dialect.py): the requests that make
an answer equal to the oracle's, and the text that carries them (answers against a real server:
tests/integration/test_victoriametrics.py)."""

from __future__ import annotations

from tsbench.targets.victoriametrics import dialect
from tsbench.targets.victoriametrics.answers import merged_rows
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES

S = 10**9
MIDNIGHT = 1_451_606_400 * S  # 2016-01-01T00:00:00Z


def groupby(start_ns: int, end_ns: int) -> LogicalQuery:
    return LogicalQuery("q", "single-groupby-1-1-1", ("usage_user",), ("host_1",), start_ns, end_ns)


def test_a_window_is_its_partial_first_bucket_its_whole_buckets_and_its_partial_last_bucket() -> None:
    _, requests = dialect.parse(dialect.render(groupby(MIDNIGHT + 7 * S, MIDNIGHT + 3_607 * S)))
    head, whole, tail = requests
    ms = MIDNIGHT // 1_000_000
    assert (head.kind, head.end_ms) == ("instant", ms + 60_000 - 1) and "[53s]" in head.expression
    assert (whole.kind, whole.start_ms, whole.end_ms, whole.step_ms) == (
        "range",
        ms + 120_000 - 1,
        ms + 3_600_000 - 1,
        60_000,
    )
    assert "[60s]" in whole.expression
    assert (tail.kind, tail.end_ms) == ("instant", ms + 3_607_000 - 1) and "[7s]" in tail.expression


def test_windows_on_bucket_edges_or_inside_one_bucket() -> None:
    _, aligned = dialect.parse(dialect.render(groupby(MIDNIGHT, MIDNIGHT + 3_600 * S)))
    assert [r.kind for r in aligned] == ["range"]
    _, inside = dialect.parse(dialect.render(groupby(MIDNIGHT + 7 * S, MIDNIGHT + 43 * S)))
    assert [(r.kind, r.expression.count("[36s]")) for r in inside] == [("instant", 1)]


def test_every_rendering_reads_back_as_written() -> None:
    data = DataRange(MIDNIGHT, MIDNIGHT + 86_400 * S, 10 * S, 12)
    names = [n for n, q in QUERY_TYPES.items() if q.family == "devops" and n not in dialect.UNSUPPORTED]
    for query in generate_queries(data, names, 2, 3):
        text = dialect.render(query)
        header, requests = dialect.parse(text)
        assert dialect.Rendering(header, requests).text() == text


def test_what_it_cannot_express_is_declared_with_its_reason() -> None:
    declared = set(dialect.UNSUPPORTED)
    assert {"high-cpu-1", "high-cpu-all", "groupby-orderby-limit"} <= declared
    assert {n for n, q in QUERY_TYPES.items() if q.family == "iot"} <= declared
    assert not {n for n, q in QUERY_TYPES.items() if q.family == "ycsb-ts"} & declared


def test_series_become_rows_keyed_by_bucket_and_host() -> None:
    query = LogicalQuery("q", "double-groupby-1", ("usage_user",), None, MIDNIGHT, MIDNIGHT + 7_200 * S)
    header, requests = dialect.parse(dialect.render(query))
    series = [
        {
            "metric": {"__name__": "cpu_usage_user", "hostname": h},
            "values": [[1451609999.999, "1.5"], [1451613599.999, "NaN"]],
        }
        for h in ("host_0", "host_1")
    ]
    rows = merged_rows(header, [(requests[0], series)])
    assert sorted(rows) == [(MIDNIGHT, "host_0", 1.5), (MIDNIGHT, "host_1", 1.5)]
