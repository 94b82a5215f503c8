"""The iot query types: catalogue, generation, and the oracle's semantics on rows built by hand.

The oracle is every target's yardstick, so its rules are checked here against answers worked out
by hand: the last row by time (a late row counts where its time puts it), nameless rows never
count, missing values fail filters, integer division where TSBS's text has it, TSBS's
breakdown quirk, driving sessions between changes of 10-minute buckets.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from tsbench.workload.answers import Answer, answer_columns
from tsbench.workload.iot_oracle import IOT_ORACLE
from tsbench.workload.iot_query_types import DAY_NS, IOT_ANSWER_COLUMNS, TEN_MINUTES_NS
from tsbench.workload.oracle import oracle_sql
from tsbench.workload.queries import DataRange, LogicalQuery, generate_queries
from tsbench.workload.query_types import QUERY_TYPES
from tsbench.workload.usecases import IOT_FLEETS, get_use_case

IOT = [name for name, q in QUERY_TYPES.items() if q.family == "iot"]
T0 = 1_451_606_400 * 10**9  # 2016-01-01T00:00:00Z
MIN = 60 * 10**9
TRUCKS = {  # name → fleet, driver, model
    "truck_0": ("East", "Derek", "F-150"),
    "truck_1": ("East", "Seth", "H-2"),
    "truck_2": ("West", "Andy", "F-150"),
}
READINGS = ("longitude", "latitude", "velocity", "fuel_consumption", "nominal_fuel_consumption")
DIAGNOSTICS = ("fuel_state", "current_load", "load_capacity", "status")


def test_the_catalogue_has_tsbs_twelve_iot_types_in_order() -> None:
    assert IOT == [
        "last-loc",
        "low-fuel",
        "high-load",
        "stationary-trucks",
        "long-driving-sessions",
        "long-daily-sessions",
        "avg-vs-projected-fuel-consumption",
        "avg-daily-driving-duration",
        "avg-daily-driving-session",
        "avg-load",
        "daily-activity",
        "breakdown-frequency",
    ]
    assert QUERY_TYPES["long-driving-sessions"].limit == 22 and QUERY_TYPES["long-daily-sessions"].limit == 60
    for name in IOT:
        qtype = QUERY_TYPES[name]
        assert qtype.kind in IOT_ORACLE and qtype.kind in IOT_ANSWER_COLUMNS, name
        assert qtype.measurement in ("readings", "diagnostics") and qtype.describe, name
        assert set(qtype.reads) <= set(get_use_case("iot").measurement(qtype.measurement).field_names)
    assert get_use_case("iot").query_families == ("iot",)


def test_iot_queries_draw_fleets_and_windows_deterministically() -> None:
    use_case = get_use_case("iot")
    day = DataRange(
        T0, T0 + DAY_NS, 10**10, 12, "truck_", "readings", "name", use_case.query_fields, IOT_FLEETS
    )
    queries = generate_queries(day, IOT, 20, seed=4)
    assert queries == generate_queries(day, IOT, 20, seed=4)
    by_type: dict[str, list[LogicalQuery]] = {}
    for query in queries:
        by_type.setdefault(query.type, []).append(query)
    assert {q.fleet for q in by_type["last-loc"]} == set(IOT_FLEETS)  # all four drawn in 20
    assert all(q.fleet is None and q.start_ns is None for q in by_type["avg-load"])
    for query in by_type["long-driving-sessions"]:
        assert query.end_ns - query.start_ns == 4 * 3_600 * 10**9 and query.start_ns >= T0
        assert query.end_ns <= T0 + DAY_NS + 10**9 and query.measurement == "readings"
    assert by_type["low-fuel"][0].measurement == "diagnostics" and by_type["low-fuel"][0].entity == "name"
    alone = generate_queries(day, ["avg-load", "last-loc"], 20, seed=4)
    assert [q for q in alone if q.type == "last-loc"] == by_type["last-loc"]  # a stream per type
    assert (
        LogicalQuery.from_json(by_type["stationary-trucks"][3].to_json()) == by_type["stationary-trucks"][3]
    )


def _connection(readings: list[tuple[Any, ...]], diagnostics: list[tuple[Any, ...]]) -> Any:
    """Views ``readings_rows`` / ``diagnostics_rows`` as ``Oracle`` builds them, from rows
    ``(t, name, fields…)``; tags come from ``TRUCKS`` (NULL for a nameless row)."""
    connection = duckdb.connect()
    connection.execute("CREATE TABLE tags (name VARCHAR, fleet VARCHAR, driver VARCHAR, model VARCHAR)")
    connection.executemany("INSERT INTO tags VALUES (?, ?, ?, ?)", [(n, *tags) for n, tags in TRUCKS.items()])
    for table, fields, rows in (("readings", READINGS, readings), ("diagnostics", DIAGNOSTICS, diagnostics)):
        columns = ", ".join(f"{f} DOUBLE" for f in fields)
        connection.execute(f"CREATE TABLE {table} (t BIGINT, name VARCHAR, {columns})")
        width = 2 + len(fields)
        rows = [row + (None,) * (width - len(row)) for row in rows]
        if rows:
            connection.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * width)})", rows)
        connection.execute(
            f"CREATE VIEW {table}_rows AS SELECT r.*, g.fleet, g.driver, g.model FROM {table} r "
            "LEFT JOIN tags g ON g.name = r.name"
        )
    return connection


def _answer(connection: Any, name: str, **parts: Any) -> list[tuple[Any, ...]]:
    qtype = QUERY_TYPES[name]
    query = LogicalQuery(
        f"{name}#0", name, qtype.reads, measurement=qtype.measurement, entity="name", **parts
    )
    sql, params = oracle_sql(query)
    answer = Answer.build(qtype, connection.execute(sql, params).fetchall(), query.fields)
    assert answer.columns == answer_columns(qtype)[0]
    return list(answer.rows)


def test_last_rows_go_by_time_and_skip_nameless_and_missing_values() -> None:
    readings = [
        (T0 + 2 * MIN, "truck_0", 10.0, 20.0),
        (T0 + MIN, "truck_0", 11.0, 21.0),  # arrives late: older, not last
        (T0 + 9 * MIN, None, 99.0, 99.0),  # nameless: no truck's
        (T0, "truck_2", 5.0, 6.0),  # another fleet
    ]
    diagnostics = [
        (T0, "truck_0", 0.05, 100.0, 2000.0),  # low before, not last
        (T0 + MIN, "truck_0", 0.5, 1900.0, 2000.0),  # last: high load (0.95)
        (T0, "truck_1", 0.02, None, 1500.0),  # last: low fuel; load missing → not high
        (T0 + 5 * MIN, None, 0.01, 5000.0, 5000.0),
    ]
    connection = _connection(readings, diagnostics)
    assert _answer(connection, "last-loc", fleet="East") == [("truck_0", "Derek", 10.0, 20.0)]
    assert _answer(connection, "low-fuel", fleet="East") == [("truck_1", "Seth", 0.02)]
    assert _answer(connection, "high-load", fleet="East") == [("truck_0", "Derek", 1900.0)]


def _velocities(name: str, per_bucket: list[float | None], start: int = T0) -> list[tuple[Any, ...]]:
    """One reading per 10-minute bucket with the given velocity."""
    return [(start + i * TEN_MINUTES_NS, name, 0.0, 0.0, v, 10.0, 12.0) for i, v in enumerate(per_bucket)]


def test_sessions_count_buckets_and_durations_run_between_changes() -> None:
    truck_0 = [0.0, 8.0, 8.0, 0.0, 8.0, None, 8.0, 0.0]  # changes at 1 (drive), 3 (stop), 4 (drive)
    truck_1 = [2.0] * 23 + [0.5]
    connection = _connection(_velocities("truck_0", truck_0) + _velocities("truck_1", truck_1), [])
    day_end = T0 + DAY_NS
    # 23 buckets over 1 km/h: more than 22
    assert _answer(connection, "long-driving-sessions", fleet="East", start_ns=T0, end_ns=day_end) == [
        ("truck_1", "Seth")
    ]
    # truck_0: drive 1→3 (20 min), 4→… the missing bucket 5 is no change and bucket 6's previous is
    # missing, so 4's session ends at 7 (stop): (1200 + 1800) / 2; truck_1 never drives over 5 km/h
    assert _answer(connection, "avg-daily-driving-session") == [("truck_0", T0, 1_500.0)]
    # whole hours per day: truck_1 drove 23 buckets → 3 h; truck_0 4 buckets → 0 h
    assert _answer(connection, "avg-daily-driving-duration") == [
        ("East", "truck_0", "Derek", 0.0),
        ("East", "truck_1", "Seth", 3.0),
    ]
    window = {"start_ns": T0 + 23 * TEN_MINUTES_NS, "end_ns": T0 + 24 * TEN_MINUTES_NS}
    assert _answer(connection, "stationary-trucks", fleet="East", **window) == [("truck_1", "Seth")]
    # fuel while over 1 km/h: truck_0's 4 driving readings and truck_1's 23, all 10.0 vs 12.0
    assert _answer(connection, "avg-vs-projected-fuel-consumption") == [("East", 10.0, 12.0)]


def test_diagnostics_types_keep_tsbs_arithmetic() -> None:
    def status(name: str, bucket: int, values: list[float | None], load: float = 100.0) -> list[tuple]:
        start = T0 + bucket * TEN_MINUTES_NS
        return [(start + i * 10**10, name, 0.5, load, 2000.0, s) for i, s in enumerate(values)]

    rows = [
        *status("truck_0", 0, [0.0, 0.0]),  # complete
        *status("truck_0", 1, [0.0, None]),  # a missing status: "not broken down" in TSBS's integers
        *status("truck_0", 2, [3.0, 0.0], load=300.0),  # complete again: one "breakdown"
        *status("truck_2", 0, [0.0, 0.0, 0.0]),
        (T0, None, 0.5, 1.0, 2000.0, 0.0),  # nameless
    ]
    connection = _connection([], rows)
    assert _answer(connection, "breakdown-frequency") == [("F-150", 1)]
    # buckets with avg(status) < 1: truck_0's 0 and 1 (2 + 2 rows), truck_2's 0 (3 rows) → / 144
    assert _answer(connection, "daily-activity") == [
        ("East", "F-150", T0, 4 / 144),
        ("West", "F-150", T0, 3 / 144),
    ]
    # truck_0: avg load (4 × 100 + 2 × 300) / 6 over 2000; truck_2: 100 / 2000
    assert _answer(connection, "avg-load") == [
        ("East", "F-150", 2000.0, 1000 / 6 / 2000),
        ("West", "F-150", 2000.0, 0.05),
    ]


@pytest.mark.parametrize("name", IOT)
def test_every_iot_type_answers_on_empty_data(name: str) -> None:
    """No rows: every type answers with no rows rather than failing."""
    qtype = QUERY_TYPES[name]
    parts: dict[str, Any] = {"fleet": "East"} if qtype.fleet else {}
    if qtype.window_ns:
        parts |= {"start_ns": T0, "end_ns": T0 + qtype.window_ns}
    assert _answer(_connection([], []), name, **parts) == []
