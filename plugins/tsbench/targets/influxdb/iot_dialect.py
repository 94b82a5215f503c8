"""InfluxQL renderings of TSBS's iot query types (semantics: ``workload/iot_query_types.py``).

Each text starts with ``dialect.py``'s answer header. The truck tags (``name, fleet, driver, model,
device_version``) are tags of every named point; a nameless point has no tag at all, so
``"fleet" = '…'`` or ``"name" != ''`` leaves it out. What InfluxQL lacks is worked around by nesting:

- a "last row" is a raw ``SELECT *`` (every stored point has a field, so every point is a row)
  ``GROUP BY "name", "driver" ORDER BY time DESC LIMIT 1``; a filter on it is an outer query (which
  must be ordered like its subquery);
- ``HAVING`` is an outer query's ``WHERE`` on the subquery's aggregate; 10-minute buckets and days
  are ``GROUP BY time(600s)`` / ``time(86400s)`` (epoch-aligned) with ``fill(none)``;
- integer division is ``floor(a / b)`` (InfluxQL divides integers as floats, and returns 0 for a
  division by zero);
- a bucket's row count is ``count`` of the ``name`` tag selected as a value next to every field in a
  raw subquery (a plain ``count(*)`` counts per field).

Thresholds, limits and windows come from the query's type, the fleet from the query.
"""

from __future__ import annotations

from collections.abc import Callable

from tsbench.targets.influxdb.dialect import bucket_duration, header, ident, literal
from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    IOT_ANSWER_COLUMNS,
    IOT_KINDS,
    by_kind,
    fleet_of,
    window_of,
)
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind
from tsbench.workload.usecases import IOT_MEASUREMENTS

NAMED = "\"name\" != ''"  # a nameless point has no tags
# An all-data query that groups by time() gets an explicit upper bound: without one InfluxDB 1.x ends
# its range at now(), and rows dated later (a dataset in the future, a skewed clock) would be lost.
ALL_TIME = "time <= 9223372036854775806"  # InfluxDB's greatest instant (MaxInt64 − 1 ns)
FIELDS = {m.name: m.field_names for m in IOT_MEASUREMENTS}
DAY = bucket_duration(DAY_NS)
KINDS = frozenset(IOT_KINDS)  # the iot kinds: rendered here (or refused)
TRUCK = '"name", "driver"'  # the tags a fleet type's answer carries


def _head(query: LogicalQuery, equal: tuple[str, str] | None = None) -> str:
    return header(IOT_ANSWER_COLUMNS[query.query_type.kind][0], equal=equal)


def _fleet(query: LogicalQuery) -> str:
    return f'"fleet" = {literal(fleet_of(query))}'


def _fleet_window(query: LogicalQuery) -> str:
    start_ns, end_ns = window_of(query)
    return f"{_fleet(query)} AND time >= {start_ns} AND time < {end_ns}"


def _buckets(query: LogicalQuery) -> str:
    return f"time({bucket_duration(query.query_type.bucket_ns)})"


def _threshold(query: LogicalQuery) -> str:
    return repr(float(query.query_type.threshold))


def _last_rows(query: LogicalQuery) -> str:
    """Each named truck of the fleet, its last point of the query's measurement (all columns)."""
    return (
        f"SELECT * FROM {ident(query.measurement)} WHERE {_fleet(query)} "
        f"GROUP BY {TRUCK} ORDER BY time DESC LIMIT 1"
    )


def last_loc(query: LogicalQuery) -> str:
    return _head(query) + _last_rows(query)


def _last_rows_where(query: LogicalQuery, column: str, condition: str) -> str:
    return _head(query) + (
        f"SELECT {ident(column)} FROM ({_last_rows(query)}) WHERE {condition} "
        f"GROUP BY {TRUCK} ORDER BY time DESC"
    )


def low_fuel(query: LogicalQuery) -> str:
    return _last_rows_where(query, "fuel_state", f'"fuel_state" < {_threshold(query)}')


def high_load(query: LogicalQuery) -> str:
    above = f'"current_load" / "load_capacity" > {_threshold(query)}'
    return _last_rows_where(query, "current_load", above)


def stationary(query: LogicalQuery) -> str:
    mean = f'SELECT mean("velocity") AS "v" FROM "readings" WHERE {_fleet_window(query)} GROUP BY {TRUCK}'
    return _head(query) + f'SELECT "v" FROM ({mean}) WHERE "v" < {_threshold(query)} GROUP BY {TRUCK}'


def long_sessions(query: LogicalQuery) -> str:
    buckets = (
        f'SELECT mean("velocity") AS "v" FROM "readings" WHERE {_fleet_window(query)} '
        f"GROUP BY {_buckets(query)}, {TRUCK} fill(none)"
    )
    driving = f'SELECT count("v") AS "n" FROM ({buckets}) WHERE "v" > {_threshold(query)} GROUP BY {TRUCK}'
    limit = int(query.query_type.limit)
    return _head(query) + f'SELECT "n" FROM ({driving}) WHERE "n" > {limit} GROUP BY {TRUCK}'


def fleet_fuel(query: LogicalQuery) -> str:
    return _head(query) + (
        'SELECT mean("fuel_consumption") AS "avg_fuel_consumption", '
        'mean("nominal_fuel_consumption") AS "projected_fuel_consumption" FROM "readings" '
        f'WHERE {NAMED} AND "velocity" > {_threshold(query)} GROUP BY "fleet"'
    )


def daily_driving(query: LogicalQuery) -> str:
    trucks = '"fleet", "name", "driver"'
    buckets = (
        f'SELECT mean("velocity") AS "v" FROM "readings" WHERE {NAMED} AND {ALL_TIME} '
        f"GROUP BY {_buckets(query)}, {trucks} fill(none)"
    )
    days = (
        f'SELECT count("v") AS "n" FROM ({buckets}) WHERE "v" > {_threshold(query)} '
        f"GROUP BY time({DAY}), {trucks} fill(none)"
    )
    hours = f'SELECT floor("n" / {BUCKETS_PER_HOUR}) AS "h" FROM ({days})'
    return _head(query) + f'SELECT mean("h") AS "avg_daily_hours" FROM ({hours}) GROUP BY {trucks}'


def fleet_load(query: LogicalQuery) -> str:
    """Grouped by fleet and model: InfluxQL groups by tags only, and ``load_capacity`` is a field.
    In the iot data a truck's model fixes its load capacity, so each group has one; the header's
    ``equal`` makes the session refuse an answer where a group's capacities differ."""
    trucks = (
        'SELECT mean("current_load") AS "load", max("load_capacity") AS "capacity" FROM "diagnostics" '
        f'WHERE {NAMED} GROUP BY "name", "fleet", "model"'
    )
    shares = f'SELECT "load" / "capacity" AS "share", "capacity" FROM ({trucks})'
    return _head(query, equal=("load_capacity", "lowest_capacity")) + (
        'SELECT max("capacity") AS "load_capacity", min("capacity") AS "lowest_capacity", '
        f'mean("share") AS "avg_load_share" FROM ({shares}) GROUP BY "fleet", "model"'
    )


def _bucket_rows(query: LogicalQuery, aggregates: str, tags: str) -> str:
    """Per named truck's 10-minute bucket: ``aggregates`` over its points, where ``count("n")`` is
    the bucket's row count (the name selected as a value: every point has it)."""
    fields = ", ".join(ident(f) for f in FIELDS[query.measurement])
    points = f'SELECT {fields}, "name" AS "n" FROM {ident(query.measurement)} WHERE {NAMED} AND {ALL_TIME}'
    return f"SELECT {aggregates} FROM ({points}) GROUP BY {_buckets(query)}, {tags} fill(none)"


def daily_activity(query: LogicalQuery) -> str:
    buckets = _bucket_rows(query, 'mean("status") AS "s", count("n") AS "k"', '"name", "fleet", "model"')
    return _head(query) + (
        f'SELECT sum("k") / {float(ACTIVITY_DIVISOR)!r} AS "daily_activity" FROM ({buckets}) '
        f'WHERE "s" < {query.query_type.threshold!r} GROUP BY time({DAY}), "fleet", "model" fill(none)'
    )


def breakdowns(query: LogicalQuery) -> str:
    buckets = _bucket_rows(query, 'count("status") AS "ks", count("n") AS "k"', '"name", "model"')
    broken = f'SELECT floor("ks" / "k") AS "broken" FROM ({buckets})'
    changes = f'SELECT difference("broken") AS "change" FROM ({broken}) GROUP BY "name", "model"'
    return _head(query) + (
        f'SELECT count("change") AS "breakdowns" FROM ({changes}) WHERE "change" = 1 GROUP BY "model"'
    )


# The iot types an InfluxDB target cannot answer as the contract says (``Capabilities.unsupported``).
_FIELDLESS = (
    "InfluxDB cannot store a point without any field (line protocol needs one; Capabilities."
    "stores_fieldless_rows = False), and 1 % of the iot rows have none"
)
_LAST_ROW = (
    "takes each truck's last row, which may carry no field (TSBS's generator empties 1 % of the iot "
    f"points; the oracle's last row is then one with missing values); {_FIELDLESS}, so its last point "
    "can be an older one (found by review: 100 trucks × 1 h, seed 1, truck_0's last reading). The "
    "InfluxQL (iot_dialect.{}) answers as the oracle over the rows InfluxDB keeps"
)
UNSUPPORTED = {
    "last-loc": _LAST_ROW.format("last_loc"),
    "low-fuel": _LAST_ROW.format("low_fuel"),
    "high-load": _LAST_ROW.format("high_load"),
    "avg-daily-driving-session": (
        "InfluxQL's difference()/elapsed() see only the previous point in the query's time order and a "
        "subquery must be ordered like its outer query, so no query finds both a 10-minute bucket's "
        "change of driving state (needs the previous bucket) and its session's end (the next change); "
        "nor can a point's time be shifted or used as a value to group a session by its start's day "
        "(TSBS's InfluxQL writes points with SELECT INTO and groups by the end's day)"
    ),
    "daily-activity": (
        f"counts all rows of a 10-minute bucket, rows without any field included; {_FIELDLESS}. The "
        "InfluxQL (iot_dialect.daily_activity) answers as the oracle over the rows InfluxDB keeps"
    ),
    "breakdown-frequency": (
        "a bucket is broken down when all its rows have a status (count(status) = count(*)), rows "
        f"without any field included; {_FIELDLESS}. The InfluxQL (iot_dialect.breakdowns) answers as "
        "the oracle over the rows InfluxDB keeps"
    ),
}

RENDERERS: dict[Kind, Callable[[LogicalQuery], str]] = by_kind(globals())


def render(query: LogicalQuery) -> str:
    """The InfluxQL of an iot query (NotImplementedError for a type in ``UNSUPPORTED``; the texts of
    the refused types that have one stay reachable as ``RENDERERS``, checked over the stored rows)."""
    name = query.query_type.name
    if name in UNSUPPORTED or query.query_type.kind not in RENDERERS:
        raise NotImplementedError(f"influxdb: {name}: {UNSUPPORTED.get(name, 'no rendering')}")
    return RENDERERS[query.query_type.kind](query)
