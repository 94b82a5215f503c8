"""Reference answers to the iot query types: DuckDB SQL over one view per measurement.

The views (``Oracle`` creates them) are ``readings_rows`` and ``diagnostics_rows``: every row of
the measurement with its time as integer ns ``t``, its fields, and its truck's tags (``name, fleet,
driver, model, device_version``; all NULL for a nameless row). The semantics are
``iot_query_types``'s; integer division is DuckDB's ``//``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    TEN_MINUTES_NS,
    by_kind,
)
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind

TEN = TEN_MINUTES_NS
NAMED = "name IS NOT NULL"


def _fleet(query: LogicalQuery, params: list[Any]) -> str:
    params.append(query.fleet)
    return f"{NAMED} AND fleet = ?"


def _window(query: LogicalQuery, params: list[Any]) -> str:
    params.extend([query.start_ns, query.end_ns])
    return "t >= ? AND t < ?"


def _last_rows(query: LogicalQuery, params: list[Any], columns: str) -> str:
    """Each named truck of the query's fleet, its last row of the query's measurement."""
    return (
        f"SELECT name, driver, {columns} FROM {query.measurement}_rows WHERE {_fleet(query, params)} "
        "QUALIFY row_number() OVER (PARTITION BY name ORDER BY t DESC) = 1"
    )


def last_loc(query: LogicalQuery, params: list[Any]) -> str:
    return _last_rows(query, params, "longitude, latitude")


def low_fuel(query: LogicalQuery, params: list[Any]) -> str:
    last = _last_rows(query, params, "fuel_state")
    return f"SELECT * FROM ({last}) WHERE fuel_state < {query.query_type.threshold!r}"


def high_load(query: LogicalQuery, params: list[Any]) -> str:
    last = _last_rows(query, params, "current_load, load_capacity")
    return (
        f"SELECT name, driver, current_load FROM ({last}) "
        f"WHERE current_load / load_capacity > {query.query_type.threshold!r}"
    )


def stationary(query: LogicalQuery, params: list[Any]) -> str:
    where = f"{_window(query, params)} AND {_fleet(query, params)}"
    return (
        f"SELECT name, driver FROM readings_rows WHERE {where} GROUP BY name, driver "
        f"HAVING avg(velocity) < {query.query_type.threshold!r}"
    )


def long_sessions(query: LogicalQuery, params: list[Any]) -> str:
    qtype = query.query_type
    where = f"{_window(query, params)} AND {_fleet(query, params)}"
    driving = (
        f"SELECT name, driver, t // {TEN} AS b FROM readings_rows WHERE {where} "
        f"GROUP BY name, driver, b HAVING avg(velocity) > {qtype.threshold!r}"
    )
    return f"SELECT name, driver FROM ({driving}) GROUP BY name, driver HAVING count(*) > {qtype.limit}"


def fleet_fuel(query: LogicalQuery, params: list[Any]) -> str:
    return (
        "SELECT fleet, avg(fuel_consumption), avg(nominal_fuel_consumption) FROM readings_rows "
        f"WHERE {NAMED} AND velocity > {query.query_type.threshold!r} GROUP BY fleet"
    )


def daily_driving(query: LogicalQuery, params: list[Any]) -> str:
    buckets = (
        f"SELECT fleet, name, driver, t // {TEN} * {TEN} AS b FROM readings_rows WHERE {NAMED} "
        f"GROUP BY fleet, name, driver, b HAVING avg(velocity) > {query.query_type.threshold!r}"
    )
    days = (
        f"SELECT fleet, name, driver, b // {DAY_NS} AS day, count(*) // {BUCKETS_PER_HOUR} AS hours "
        f"FROM ({buckets}) GROUP BY fleet, name, driver, day"
    )
    return f"SELECT fleet, name, driver, avg(hours)::DOUBLE FROM ({days}) GROUP BY fleet, name, driver"


def driving_session(query: LogicalQuery, params: list[Any]) -> str:
    status = (
        f"SELECT name, t // {TEN} * {TEN} AS b, avg(velocity) > {query.query_type.threshold!r} AS driving "
        f"FROM readings_rows WHERE {NAMED} GROUP BY name, b"
    )
    previous = (
        f"SELECT name, b, driving, lag(driving) OVER (PARTITION BY name ORDER BY b) AS before FROM ({status})"
    )
    changes = (
        "SELECT name, b AS start, lead(b) OVER (PARTITION BY name ORDER BY b) AS stop, driving "
        f"FROM ({previous}) WHERE driving <> before"
    )
    return (
        f"SELECT name, start // {DAY_NS} * {DAY_NS} AS day, avg(stop - start)::DOUBLE / 1e9 "
        f"FROM ({changes}) WHERE driving GROUP BY name, day"
    )


def fleet_load(query: LogicalQuery, params: list[Any]) -> str:
    trucks = (
        "SELECT fleet, model, max(load_capacity) AS capacity, avg(current_load) AS load "
        f"FROM diagnostics_rows WHERE {NAMED} GROUP BY name, fleet, model"
    )
    return (
        f"SELECT fleet, model, capacity, avg(load / capacity) FROM ({trucks}) GROUP BY fleet, model, capacity"
    )


def daily_activity(query: LogicalQuery, params: list[Any]) -> str:
    buckets = (
        f"SELECT fleet, model, t // {DAY_NS} * {DAY_NS} AS day, count(*) AS n FROM diagnostics_rows "
        f"WHERE {NAMED} GROUP BY fleet, model, name, day, t // {TEN} "
        f"HAVING avg(status) < {query.query_type.threshold!r}"
    )
    return (
        f"SELECT fleet, model, day, sum(n)::DOUBLE / {ACTIVITY_DIVISOR} FROM ({buckets}) "
        "GROUP BY fleet, model, day"
    )


def breakdowns(query: LogicalQuery, params: list[Any]) -> str:
    buckets = (
        f"SELECT name, model, t // {TEN} AS b, count(status = 0) // count(*) >= 0.5 AS broken "
        f"FROM diagnostics_rows WHERE {NAMED} GROUP BY name, model, b"
    )
    following = (
        f"SELECT model, broken, lead(broken) OVER (PARTITION BY name ORDER BY b) AS next FROM ({buckets})"
    )
    return f"SELECT model, count(*) FROM ({following}) WHERE NOT broken AND next GROUP BY model"


IOT_ORACLE: dict[Kind, Callable[[LogicalQuery, list[Any]], str]] = by_kind(globals())


def measurement_view(name: str, relation: str, entity_key: str) -> str:
    """``CREATE VIEW <name>_rows``: the measurement's rows (the DuckDB ``relation``) with time as
    ns ``t`` and its entity's tags (from the view ``entity_tags``; NULL for a nameless row)."""
    return (
        f"CREATE VIEW {name}_rows AS SELECT epoch_ns(r.time) AS t, r.* EXCLUDE (time), "
        f'g.* EXCLUDE ("{entity_key}") FROM {relation} r '
        f'LEFT JOIN entity_tags g ON g."{entity_key}" = r."{entity_key}"'
    )
