"""ClickHouse SQL for TSBS's 12 iot query types (one render function per iot ``Kind``).

The semantics are ``tsbench.workload.iot_query_types``'s; checked against the oracle on the real
engine by tests/targets/test_clickhouse_iot.py. The tables are ``schema.py``'s: one per measurement,
the truck's tags (``name, fleet, driver, model, device_version``) denormalised into every row as
``LowCardinality(Nullable(String))`` — all NULL in a nameless row —, fields ``Nullable``.

* Nameless rows never count: every query filters ``name IS NOT NULL`` (a fleet query's
  ``fleet = '…'`` is NULL, so false, for them anyway).
* 10-minute buckets and days are epoch-aligned integer ns: ``intDiv(toUnixTimestamp64Nano(time),
  width)`` (× width where the start is returned).
* A truck's last row: ``argMax(tuple(…), time)``. The tuple matters: an aggregate function skips
  rows where an argument is NULL, and a tuple is never NULL, so a last row with a missing field is
  still the last row (its missing value then fails the filter, as the contract says).
* lag/lead: ``lagInFrame`` / ``leadInFrame`` over an explicit ``ROWS`` frame (their default frame
  ends at the current row, so leadInFrame would see nothing); their argument is made
  ``Nullable`` so that "no previous/next bucket" is NULL, not the type's default 0.
* Comparisons with NULL (a missing field, a bucket whose ``avg`` is NULL) are NULL, which WHERE and
  HAVING treat as false. ``avg`` of no values is NULL; ``/`` is always a Float64 division,
  ``intDiv`` the integer one.
* Aliases never shadow a column name (ClickHouse would substitute the alias inside its own
  definition).
"""

from __future__ import annotations

from collections.abc import Callable

from tsbench.targets.clickhouse.dialect import TS, TS_NS, instant, literal
from tsbench.targets.window import bounded_window
from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    TEN_MINUTES_NS,
    by_kind,
    fleet_of,
)
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind

NAMED = "name IS NOT NULL"
TEN = TEN_MINUTES_NS
BUCKET = f"intDiv({TS_NS}, {TEN})"  # the row's 10-minute bucket number since the epoch
BUCKET_START = f"{BUCKET} * {TEN}"  # … and its start, ns
DAY_START = f"intDiv({TS_NS}, {DAY_NS}) * {DAY_NS}"


def _threshold(query: LogicalQuery) -> str:
    return repr(float(query.query_type.threshold))


def _fleet(query: LogicalQuery) -> str:
    return f"{NAMED} AND fleet = {literal(fleet_of(query))}"


def _window(query: LogicalQuery) -> str:
    return bounded_window(query, TS, instant)


def _last_rows(query: LogicalQuery, fields: tuple[str, ...]) -> str:
    """Each named truck of the fleet with its last row's ``fields`` as ``last_<field>``."""
    values = ", ".join(f"last_row.{i} AS last_{f}" for i, f in enumerate(fields, start=1))
    return (
        f"SELECT name, driver, argMax(tuple({', '.join(fields)}), {TS}) AS last_row, {values} "
        f"FROM {query.measurement} WHERE {_fleet(query)} GROUP BY name, driver"
    )


def last_loc(query: LogicalQuery) -> str:
    last = _last_rows(query, ("longitude", "latitude"))
    return f"SELECT name, driver, last_longitude, last_latitude FROM ({last})"


def low_fuel(query: LogicalQuery) -> str:
    last = _last_rows(query, ("fuel_state",))
    return f"SELECT name, driver, last_fuel_state FROM ({last}) WHERE last_fuel_state < {_threshold(query)}"


def high_load(query: LogicalQuery) -> str:
    last = _last_rows(query, ("current_load", "load_capacity"))
    share = "last_current_load / last_load_capacity"
    return f"SELECT name, driver, last_current_load FROM ({last}) WHERE {share} > {_threshold(query)}"


def stationary(query: LogicalQuery) -> str:
    return (
        f"SELECT name, driver FROM readings WHERE {_window(query)} AND {_fleet(query)} "
        f"GROUP BY name, driver HAVING avg(velocity) < {_threshold(query)}"
    )


def long_sessions(query: LogicalQuery) -> str:
    driving = (
        f"SELECT name, driver, {BUCKET} AS ten FROM readings WHERE {_window(query)} AND {_fleet(query)} "
        f"GROUP BY name, driver, ten HAVING avg(velocity) > {_threshold(query)}"
    )
    return (
        f"SELECT name, driver FROM ({driving}) GROUP BY name, driver "
        f"HAVING count() > {int(query.query_type.limit)}"
    )


def fleet_fuel(query: LogicalQuery) -> str:
    return (
        "SELECT fleet, avg(fuel_consumption), avg(nominal_fuel_consumption) FROM readings "
        f"WHERE {NAMED} AND velocity > {_threshold(query)} GROUP BY fleet"
    )


def daily_driving(query: LogicalQuery) -> str:
    buckets = (
        f"SELECT fleet, name, driver, {BUCKET_START} AS ten_start FROM readings WHERE {NAMED} "
        f"GROUP BY fleet, name, driver, ten_start HAVING avg(velocity) > {_threshold(query)}"
    )
    days = (
        f"SELECT fleet, name, driver, intDiv(ten_start, {DAY_NS}) AS day_number, "
        f"intDiv(count(), {BUCKETS_PER_HOUR}) AS hours FROM ({buckets}) "
        "GROUP BY fleet, name, driver, day_number"
    )
    return f"SELECT fleet, name, driver, avg(hours) FROM ({days}) GROUP BY fleet, name, driver"


def _per_truck(order: str, frame: str) -> str:
    """A window over one truck's rows in ``order`` with an explicit ``ROWS`` frame."""
    return f"OVER (PARTITION BY name ORDER BY {order} ROWS BETWEEN {frame})"


PREVIOUS_ROW = "1 PRECEDING AND CURRENT ROW"
NEXT_ROW = "CURRENT ROW AND 1 FOLLOWING"


def driving_session(query: LogicalQuery) -> str:
    status = (
        f"SELECT name, {BUCKET_START} AS ten_start, avg(velocity) > {_threshold(query)} AS driving "
        f"FROM readings WHERE {NAMED} GROUP BY name, ten_start"
    )
    previous = (
        "SELECT name, ten_start, driving, lagInFrame(toNullable(driving)) "
        f"{_per_truck('ten_start', PREVIOUS_ROW)} AS driving_before FROM ({status})"
    )
    changes = (
        "SELECT name, ten_start AS change_start, driving, leadInFrame(toNullable(ten_start)) "
        f"{_per_truck('ten_start', NEXT_ROW)} AS next_change "
        f"FROM ({previous}) WHERE driving != driving_before"
    )
    day = f"intDiv(change_start, {DAY_NS}) * {DAY_NS}"
    return (
        f"SELECT name, {day} AS day, avg(next_change - change_start) / 1e9 "
        f"FROM ({changes}) WHERE driving GROUP BY name, day"
    )


def fleet_load(query: LogicalQuery) -> str:
    trucks = (
        "SELECT fleet, model, max(load_capacity) AS capacity, avg(current_load) AS mean_load "
        f"FROM diagnostics WHERE {NAMED} GROUP BY name, fleet, model"
    )
    return (
        "SELECT fleet, model, capacity, avg(mean_load / capacity) "
        f"FROM ({trucks}) GROUP BY fleet, model, capacity"
    )


def daily_activity(query: LogicalQuery) -> str:
    buckets = (
        f"SELECT fleet, model, {DAY_START} AS day, count() AS rows_in_bucket FROM diagnostics "
        f"WHERE {NAMED} GROUP BY fleet, model, name, day, {BUCKET} HAVING avg(status) < {_threshold(query)}"
    )
    return (
        f"SELECT fleet, model, day, sum(rows_in_bucket) / {ACTIVITY_DIVISOR} FROM ({buckets}) "
        "GROUP BY fleet, model, day"
    )


def breakdowns(query: LogicalQuery) -> str:
    # TSBS's integer text: count(status = 0) counts the rows whose status is set (count(x) skips
    # NULL x, and ``status = 0`` is NULL exactly when status is), intDiv by all the bucket's rows.
    buckets = (
        f"SELECT name, model, {BUCKET} AS ten, intDiv(count(status = 0), count()) >= 0.5 AS broken "
        f"FROM diagnostics WHERE {NAMED} GROUP BY name, model, ten"
    )
    following = (
        f"SELECT model, broken, leadInFrame(toNullable(broken)) {_per_truck('ten', NEXT_ROW)} "
        f"AS next_broken FROM ({buckets})"
    )
    return f"SELECT model, count() FROM ({following}) WHERE NOT broken AND next_broken GROUP BY model"


RENDERERS: dict[Kind, Callable[[LogicalQuery], str]] = by_kind(globals())


def render(query: LogicalQuery) -> str:
    """The iot query as ClickHouse SQL over the ``readings`` / ``diagnostics`` tables."""
    return RENDERERS[query.query_type.kind](query)
