"""QuestDB SQL for TSBS's iot query kinds (``workload/iot_query_types.py`` states the semantics).

Schema (``target.py``): one table per measurement, every truck tag a SYMBOL on every row (a
nameless row has all tags NULL), fields DOUBLE (``status`` LONG), designated timestamp ``timestamp``
(µs). Conventions, each checked against the oracle on the real server (tests/integration/
test_questdb.py::test_iot_queries_match_the_oracle):

* Only named rows count: every query filters ``name IS NOT NULL`` (the entity key column).
* "Last row" is ``LATEST ON timestamp PARTITION BY name`` after the ``WHERE`` (greatest designated
  timestamp; QuestDB keeps rows in timestamp order, so late rows take their place by time).
* 10-minute buckets and days are ``timestamp_floor`` strides, aligned to the Unix epoch.
* QuestDB has no ``HAVING``: a filter on an aggregate is a ``WHERE`` on the grouped subquery.
* A comparison with a NULL DOUBLE is false, as in PostgreSQL. But QuestDB booleans cannot be NULL
  (and ``lag``/``lead`` take no BOOLEAN), and ``NULL != 1`` is true for INT: a bucket's state is an
  INT (1, 0, or NULL when its ``avg`` is missing) and a change demands both states present.
* ``LONG / LONG`` is integer division, as in PostgreSQL; real division casts to DOUBLE first.
* ``timestamp - timestamp`` is a LONG of µs.
"""

from __future__ import annotations

from collections.abc import Callable

from tsbench.targets.questdb.dialect import TS, instant, literal, stride
from tsbench.targets.window import bounded_window
from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    by_kind,
    fleet_of,
)
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind

US_PER_S = 1_000_000  # TIMESTAMP is µs: a difference of two is µs


def _named(entity: str) -> str:
    return f"{entity} IS NOT NULL"


def _fleet(query: LogicalQuery, entity: str) -> str:
    return f"{_named(entity)} AND fleet = {literal(fleet_of(query))}"


def _window(query: LogicalQuery) -> str:
    return bounded_window(query, TS, instant)


def _bucket(query: LogicalQuery) -> str:
    """The row's epoch-aligned bucket of the type's width (10 minutes)."""
    return f"timestamp_floor('{stride(query.query_type.bucket_ns)}', {TS})"


def _day(column: str) -> str:
    return f"timestamp_floor('{stride(DAY_NS)}', {column})"


def _threshold(query: LogicalQuery) -> str:
    return repr(float(query.query_type.threshold))


def _last_rows(query: LogicalQuery, entity: str, table: str, columns: str) -> str:
    """Each named truck of the query's fleet, its last row of ``table``."""
    return (
        f"SELECT {entity}, driver, {columns} FROM {table} WHERE {_fleet(query, entity)} "
        f"LATEST ON {TS} PARTITION BY {entity}"
    )


def render_last_loc(query: LogicalQuery, entity: str, table: str) -> str:
    return _last_rows(query, entity, table, "longitude, latitude")


def render_low_fuel(query: LogicalQuery, entity: str, table: str) -> str:
    last = _last_rows(query, entity, table, "fuel_state")
    return f"SELECT {entity}, driver, fuel_state FROM ({last}) WHERE fuel_state < {_threshold(query)}"


def render_high_load(query: LogicalQuery, entity: str, table: str) -> str:
    last = _last_rows(query, entity, table, "current_load, load_capacity")
    return (
        f"SELECT {entity}, driver, current_load FROM ({last}) "
        f"WHERE current_load / load_capacity > {_threshold(query)}"
    )


def render_stationary(query: LogicalQuery, entity: str, table: str) -> str:
    trucks = (
        f"SELECT {entity}, driver, avg(velocity) velocity FROM {table} "
        f"WHERE {_window(query)} AND {_fleet(query, entity)} GROUP BY {entity}, driver"
    )
    return f"SELECT {entity}, driver FROM ({trucks}) WHERE velocity < {_threshold(query)}"


def render_long_sessions(query: LogicalQuery, entity: str, table: str) -> str:
    buckets = (
        f"SELECT {entity}, driver, {_bucket(query)} bucket, avg(velocity) velocity FROM {table} "
        f"WHERE {_window(query)} AND {_fleet(query, entity)} GROUP BY {entity}, driver, bucket"
    )
    trucks = (
        f"SELECT {entity}, driver, count() driving FROM ({buckets}) "
        f"WHERE velocity > {_threshold(query)} GROUP BY {entity}, driver"
    )
    return f"SELECT {entity}, driver FROM ({trucks}) WHERE driving > {int(query.query_type.limit)}"


def render_fleet_fuel(query: LogicalQuery, entity: str, table: str) -> str:
    return (
        f"SELECT fleet, avg(fuel_consumption) avg_fuel_consumption, "
        f"avg(nominal_fuel_consumption) projected_fuel_consumption FROM {table} "
        f"WHERE {_named(entity)} AND velocity > {_threshold(query)} GROUP BY fleet"
    )


def render_daily_driving(query: LogicalQuery, entity: str, table: str) -> str:
    keys = f"fleet, {entity}, driver"
    buckets = (
        f"SELECT {keys}, {_bucket(query)} bucket, avg(velocity) velocity FROM {table} "
        f"WHERE {_named(entity)} GROUP BY {keys}, bucket"
    )
    days = (  # count() is a LONG: "/ 6" is integer division (whole hours), as in TSBS's text
        f"SELECT {keys}, {_day('bucket')} day, count() / {BUCKETS_PER_HOUR} hours FROM ({buckets}) "
        f"WHERE velocity > {_threshold(query)} GROUP BY {keys}, day"
    )
    return f"SELECT {keys}, avg(hours) avg_daily_hours FROM ({days}) GROUP BY {keys}"


def _states(query: LogicalQuery, entity: str, table: str) -> str:
    """Per named truck and bucket: ``state`` 1 (driving), 0 (not) or NULL (no velocity)."""
    buckets = (
        f"SELECT {entity}, {_bucket(query)} bucket, avg(velocity) velocity FROM {table} "
        f"WHERE {_named(entity)} GROUP BY {entity}, bucket"
    )
    above = _threshold(query)
    state = f"CASE WHEN velocity > {above} THEN 1 WHEN velocity <= {above} THEN 0 END state"
    return f"SELECT {entity}, bucket, {state} FROM ({buckets})"


def render_driving_session(query: LogicalQuery, entity: str, table: str) -> str:
    order = f"OVER (PARTITION BY {entity} ORDER BY bucket)"
    previous = (
        f"SELECT {entity}, bucket, state, lag(state) {order} before FROM ({_states(query, entity, table)})"
    )
    changes = (
        f"SELECT {entity}, bucket start, lead(bucket) {order} stop, state FROM ({previous}) "
        "WHERE state IS NOT NULL AND before IS NOT NULL AND state != before"
    )
    return (
        f"SELECT {entity}, {_day('start')} day, avg((stop - start) / {float(US_PER_S)!r}) avg_session_s "
        f"FROM ({changes}) WHERE state = 1 GROUP BY {entity}, day"
    )


def render_fleet_load(query: LogicalQuery, entity: str, table: str) -> str:
    trucks = (
        "SELECT fleet, model, max(load_capacity) capacity, avg(current_load) truck_load "
        f"FROM {table} WHERE {_named(entity)} GROUP BY {entity}, fleet, model"
    )
    return (
        "SELECT fleet, model, capacity load_capacity, avg(truck_load / capacity) avg_load_share "
        f"FROM ({trucks}) GROUP BY fleet, model, capacity"
    )


def render_daily_activity(query: LogicalQuery, entity: str, table: str) -> str:
    buckets = (
        f"SELECT fleet, model, {entity}, {_day(TS)} day, {_bucket(query)} bucket, count() n, "
        f"avg(status) status FROM {table} WHERE {_named(entity)} GROUP BY fleet, model, {entity}, day, bucket"
    )
    return (
        f"SELECT fleet, model, day, sum(n)::double / {ACTIVITY_DIVISOR} daily_activity "
        f"FROM ({buckets}) WHERE status < {query.query_type.threshold!r} GROUP BY fleet, model, day"
    )


def render_breakdowns(query: LogicalQuery, entity: str, table: str) -> str:
    # TSBS's count(status = 0) counts the rows whose status is present (a PostgreSQL count of a
    # non-NULL boolean); QuestDB booleans are never NULL, so it is written count(status). LONG / LONG
    # is integer division, as there. The state is an INT: lead() takes no BOOLEAN.
    broken = "CASE WHEN count(status) / count() >= 0.5 THEN 1 ELSE 0 END broken"
    buckets = (
        f"SELECT {entity}, model, {_bucket(query)} bucket, {broken} FROM {table} "
        f"WHERE {_named(entity)} GROUP BY {entity}, model, bucket"
    )
    following = (
        f"SELECT model, broken, lead(broken) OVER (PARTITION BY {entity} ORDER BY bucket) next "
        f"FROM ({buckets})"
    )
    return f"SELECT model, count() breakdowns FROM ({following}) WHERE broken = 0 AND next = 1 GROUP BY model"


RENDERERS: dict[Kind, Callable[[LogicalQuery, str, str], str]] = by_kind(globals(), "render_")
