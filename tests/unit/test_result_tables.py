"""The plain-text tables of a run's results (``results/tables.py``) hold up when a target's queries
all failed: the figure is shown as missing and flagged, never a crash that would take the report of
the other targets down."""

from __future__ import annotations

from tsbench.results.model import QueriesPhase, QueryStats, RunResult, TargetResult
from tsbench.results.tables import query_table


def test_a_type_whose_every_query_failed_is_flagged_not_fatal() -> None:
    failed = QueryStats(count=0, errors=2, mismatches=0, qps=0.0, wall_s=0.01)
    fine = QueryStats(count=2, errors=0, mismatches=0, qps=120.5, p50_ms=8.25, wall_s=0.02)
    result = RunResult(
        targets={
            "broken": TargetResult(status="ok", queries=QueriesPhase(hot={"lastpoint": failed})),
            "healthy": TargetResult(status="ok", queries=QueriesPhase(hot={"lastpoint": fine})),
        }
    )
    table = query_table(result, figure="p50_ms")
    row = next(line for line in table.splitlines() if "lastpoint" in line)
    assert "– ✗" in row and "8.2" in row
    assert "0.0 ✗" in query_table(result)  # qps: 0.0 and flagged
