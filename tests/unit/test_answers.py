"""Answer normalisation and comparison: order-free, key-exact, tolerant on floats, catches TSBS bugs."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd

from tsbench.workload.answers import Answer, answer_columns, compare
from tsbench.workload.query_types import QUERY_TYPES

MINUTE = 60_000_000_000
GOL = QUERY_TYPES["groupby-orderby-limit"]


def test_row_order_does_not_matter_but_rows_do() -> None:
    rows = [[i * MINUTE, float(i)] for i in range(100, 105)]
    assert compare(Answer.build(GOL, rows), Answer.build(GOL, rows[::-1])).ok


def test_first_five_minutes_instead_of_last_five_is_caught() -> None:
    """TSBS's InfluxQL/QuestDB groupby-orderby-limit returned the *first* 5 minutes."""
    expected = Answer.build(GOL, [[i * MINUTE, 50.0] for i in range(100, 105)])
    buggy = Answer.build(GOL, [[i * MINUTE, 50.0] for i in range(0, 5)])
    result = compare(expected, buggy)
    assert not result.ok and "5 of 5" in result.reason and len(result.diff) == 5


def test_float_tolerance_and_count_mismatch() -> None:
    qtype = QUERY_TYPES["double-groupby-1"]
    expected = Answer.build(qtype, [[0, "host_0", 1 / 3]])
    assert compare(expected, Answer.build(qtype, [[0, "host_0", 0.3333333333333333 + 1e-12]])).ok
    assert not compare(expected, Answer.build(qtype, [[0, "host_0", 0.3334]])).ok
    assert not compare(expected, Answer.build(qtype, [[0, "host_1", 1 / 3]])).ok
    result = compare(expected, Answer.build(qtype, []))
    assert not result.ok and "expected 1 rows, got 0" in result.reason


def test_cells_normalise_from_database_types() -> None:
    qtype = QUERY_TYPES["high-cpu-1"]
    moment = datetime(2016, 1, 1, tzinfo=UTC)
    ns = 1_451_606_400_000_000_000
    a = Answer.build(qtype, [[moment, "host_0", *range(10)]])
    b = Answer.build(qtype, [[pd.Timestamp(moment), "host_0", *map(float, range(10))]])
    c = Answer.build(qtype, [[ns, "host_0", *range(10)]])
    assert a.rows[0][0] == b.rows[0][0] == c.rows[0][0] == ns
    assert compare(a, b).ok and compare(a, c).ok


def test_sub_second_and_naive_datetimes_are_exact() -> None:
    """0.6 s must not round up to the next second; a naive datetime is UTC, not local time."""
    qtype = QUERY_TYPES["ycsb-read"]
    aware = Answer.build(qtype, [[datetime(2016, 1, 1, 0, 0, 0, 600_000, tzinfo=UTC), "host_0", *range(10)]])
    naive = Answer.build(qtype, [[datetime(2016, 1, 1, 0, 0, 0, 600_000), "host_0", *range(10)]])
    assert aware.rows[0][0] == naive.rows[0][0] == 1_451_606_400_600_000_000


def test_columns_per_kind() -> None:
    assert answer_columns(QUERY_TYPES["lastpoint"])[1] == ["hostname"]
    assert answer_columns(QUERY_TYPES["ycsb-sum"]) == (["sum_usage_user"], [])
    assert answer_columns(QUERY_TYPES["cpu-max-all-1"])[0][1:3] == ["max_usage_user", "max_usage_system"]
