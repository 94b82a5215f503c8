"""TSBS's iot query types as GridDB SQL: one statement per query, run by GridDB's SQL service.

TQL reads one container per query and has no GROUP BY, no subquery and no window function, so it
can neither bucket by 10 minutes, nor compare a bucket with the previous one (lag/lead), nor
filter a truck's *last* row. GridDB's SQL interface (the ``sql`` service, reached through the
JDBC driver, ``jdbc.py``) has all of these, and reads every container as a table. A plan is
``{"query", "type", "sql"}`` (``GridDBSession.execute`` runs ``sql`` as it is; ``sql`` is None
when the query reads no container, an empty answer).

The key-container model keeps each truck's rows in containers of its own (``readings_truck_3``) whose
rows carry no name. A statement therefore reads the trucks' containers as one UNION ALL, each branch
adding its truck's name as a constant column (``SELECT 'truck_3' AS name, … FROM
"readings_truck_3"``), and joins the tags COLLECTION ``tsbench_tags`` for ``fleet``, ``driver``
and ``model``. The nameless rows (their COLLECTION ``<measurement>_nameless``) are never read:
they belong to no truck (iot_query_types: nameless rows never count).

A fleet query reads the containers of the trucks the dataset's tags put in that fleet (a container
must be named to be read: GridDB SQL has no table pattern); the statement still filters
``g.fleet`` itself on the server, as every other condition. All-data types read every truck.

GridDB SQL rules the texts follow: GROUP BY takes column references only (buckets and days are
computed one level down); a subquery in FROM needs an alias; one window function per SELECT, and a
computed expression beside a window function comes back NULL (the window levels select plain
columns only). Instants: row keys are ms; ``TO_EPOCH_MS("time") / w * w`` is the epoch-aligned
bucket of width ``w`` ms (LONG division truncates: the same as floor for instants after 1970), and
answers carry instants as ns (``× 10⁶`` in SQL).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tsbench.targets.clauses import where_clause
from tsbench.targets.griddb.dialect import ceil_millis, quoted, timestamp
from tsbench.targets.griddb.layout import MILLIS_PER_NS, TAGS_CONTAINER, TIME, container_name
from tsbench.targets.window import window_clauses
from tsbench.workload.iot_query_types import ACTIVITY_DIVISOR, BUCKETS_PER_HOUR, DAY_NS, by_kind, fleet_of
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind

Plan = dict[str, Any]
TAGS = f"{quoted(TAGS_CONTAINER)} g"  # the tags collection, as joined by every statement
DAY_MS = DAY_NS // MILLIS_PER_NS


def literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def number(value: float) -> str:
    return repr(float(value))


def bucket_ms(query: LogicalQuery) -> int:
    width = query.query_type.bucket_ns
    if width % MILLIS_PER_NS:
        raise ValueError(f"{query.id}: a bucket of {width} ns is not a whole number of ms")
    return width // MILLIS_PER_NS


def bucket_column(query: LogicalQuery) -> str:
    width = bucket_ms(query)
    return f"TO_EPOCH_MS({quoted(TIME)}) / {width} * {width} AS bucket_ms"


def day_column() -> str:
    return f"TO_EPOCH_MS({quoted(TIME)}) / {DAY_MS} * {DAY_MS} AS day_ms"


def _window(query: LogicalQuery) -> list[str]:
    """The half-open window over ms row keys (``dialect``'s rounding); none for all-data types."""
    if query.start_ns is None or query.end_ns is None:
        return []
    return window_clauses(query, quoted(TIME), lambda ns: timestamp(ceil_millis(ns)))


def truck_rows(query: LogicalQuery, trucks: Sequence[str], columns: Sequence[str], where: str = "") -> str:
    """``(… UNION ALL …) u``: every truck's rows of the query's measurement in its window, as
    ``name`` + ``columns`` (column names or ``expr AS alias``), filtered by ``where`` per branch."""
    conditions = [*_window(query), *([where] if where else [])]
    tail = where_clause(*conditions)
    selected = ", ".join(columns)
    branches = [
        f"SELECT {literal(truck)} AS name, {selected} "
        f"FROM {quoted(container_name(query.measurement, truck))}{tail}"
        for truck in trucks
    ]
    return "(" + " UNION ALL ".join(branches) + ") u"


def last_rows(query: LogicalQuery, trucks: Sequence[str], columns: Sequence[str]) -> str:
    """``(… UNION ALL …) l``: each truck's last row (greatest row key) as ``name`` + ``columns``."""
    selected = ", ".join(columns)
    branches = [
        f"SELECT * FROM (SELECT {literal(truck)} AS name, {selected} "
        f"FROM {quoted(container_name(query.measurement, truck))} "
        f"ORDER BY {quoted(TIME)} DESC LIMIT 1) t{index}"
        for index, truck in enumerate(trucks)
    ]
    return "(" + " UNION ALL ".join(branches) + ") l"


def in_fleet(query: LogicalQuery) -> str:
    return f"g.fleet = {literal(fleet_of(query))}"


def last_loc(query: LogicalQuery, trucks: Sequence[str]) -> str:
    last = last_rows(query, trucks, ["longitude", "latitude"])
    return (
        f"SELECT g.name, g.driver, l.longitude, l.latitude FROM {last} "
        f"JOIN {TAGS} ON g.name = l.name WHERE {in_fleet(query)}"
    )


def low_fuel(query: LogicalQuery, trucks: Sequence[str]) -> str:
    last = last_rows(query, trucks, ["fuel_state"])
    below = number(query.query_type.threshold)
    return (
        f"SELECT g.name, g.driver, l.fuel_state FROM {last} JOIN {TAGS} ON g.name = l.name "
        f"WHERE {in_fleet(query)} AND l.fuel_state < {below}"
    )


def high_load(query: LogicalQuery, trucks: Sequence[str]) -> str:
    last = last_rows(query, trucks, ["current_load", "load_capacity"])
    above = number(query.query_type.threshold)
    return (
        f"SELECT g.name, g.driver, l.current_load FROM {last} JOIN {TAGS} ON g.name = l.name "
        f"WHERE {in_fleet(query)} AND l.current_load / l.load_capacity > {above}"
    )


def stationary(query: LogicalQuery, trucks: Sequence[str]) -> str:
    rows = truck_rows(query, trucks, ["velocity"])
    below = number(query.query_type.threshold)
    return (
        f"SELECT g.name, g.driver FROM (SELECT name, AVG(velocity) AS speed FROM {rows} GROUP BY name) a "
        f"JOIN {TAGS} ON g.name = a.name WHERE {in_fleet(query)} AND a.speed < {below}"
    )


def long_sessions(query: LogicalQuery, trucks: Sequence[str]) -> str:
    qtype = query.query_type
    rows = truck_rows(query, trucks, [bucket_column(query), "velocity"])
    driving = (
        f"SELECT name, bucket_ms FROM {rows} GROUP BY name, bucket_ms "
        f"HAVING AVG(velocity) > {number(qtype.threshold)}"
    )
    return (
        f"SELECT g.name, g.driver FROM (SELECT name, COUNT(*) AS n FROM ({driving}) d GROUP BY name) s "
        f"JOIN {TAGS} ON g.name = s.name WHERE {in_fleet(query)} AND s.n > {int(qtype.limit)}"
    )


def fleet_fuel(query: LogicalQuery, trucks: Sequence[str]) -> str:
    columns = ["fuel_consumption", "nominal_fuel_consumption"]
    rows = truck_rows(query, trucks, columns, where=f"velocity > {number(query.query_type.threshold)}")
    return (
        f"SELECT g.fleet, AVG(u.fuel_consumption), AVG(u.nominal_fuel_consumption) FROM {rows} "
        f"JOIN {TAGS} ON g.name = u.name GROUP BY g.fleet"
    )


def daily_driving(query: LogicalQuery, trucks: Sequence[str]) -> str:
    rows = truck_rows(query, trucks, [bucket_column(query), day_column(), "velocity"])
    driving = (
        f"SELECT name, day_ms FROM {rows} GROUP BY name, day_ms, bucket_ms "
        f"HAVING AVG(velocity) > {number(query.query_type.threshold)}"
    )
    days = f"SELECT name, COUNT(*) / {BUCKETS_PER_HOUR} AS hours FROM ({driving}) d GROUP BY name, day_ms"
    return (
        f"SELECT g.fleet, g.name, g.driver, h.avg_hours FROM "
        f"(SELECT name, AVG(hours) AS avg_hours FROM ({days}) e GROUP BY name) h "
        f"JOIN {TAGS} ON g.name = h.name"
    )


def driving_session(query: LogicalQuery, trucks: Sequence[str]) -> str:
    rows = truck_rows(query, trucks, [bucket_column(query), "velocity"])
    status = (
        f"SELECT name, bucket_ms, AVG(velocity) > {number(query.query_type.threshold)} AS driving "
        f"FROM {rows} GROUP BY name, bucket_ms"
    )
    previous = (
        "SELECT name, bucket_ms, driving, LAG(driving) OVER (PARTITION BY name ORDER BY bucket_ms) "
        f"AS before FROM ({status}) s"
    )
    changes = (
        "SELECT name, bucket_ms AS start_ms, LEAD(bucket_ms) OVER (PARTITION BY name ORDER BY bucket_ms) "
        f"AS stop_ms, driving FROM ({previous}) p WHERE driving <> before"
    )
    sessions = (
        f"SELECT name, start_ms / {DAY_MS} * {DAY_MS} AS day_ms, CAST(stop_ms - start_ms AS DOUBLE) AS "
        f"length_ms FROM ({changes}) c WHERE driving"
    )
    return (
        f"SELECT name, day_ms * {MILLIS_PER_NS}, AVG(length_ms) / 1000 FROM ({sessions}) x "
        "GROUP BY name, day_ms"
    )


def fleet_load(query: LogicalQuery, trucks: Sequence[str]) -> str:
    rows = truck_rows(query, trucks, ["load_capacity", "current_load"])
    per_truck = (
        "SELECT name, MAX(load_capacity) AS capacity, AVG(current_load) AS avg_load "
        f"FROM {rows} GROUP BY name"
    )
    return (
        f"SELECT g.fleet, g.model, t.capacity, AVG(t.avg_load / t.capacity) FROM ({per_truck}) t "
        f"JOIN {TAGS} ON g.name = t.name GROUP BY g.fleet, g.model, t.capacity"
    )


def daily_activity(query: LogicalQuery, trucks: Sequence[str]) -> str:
    rows = truck_rows(query, trucks, [bucket_column(query), day_column(), "status"])
    idle = (
        f"SELECT name, day_ms, COUNT(*) AS n FROM {rows} GROUP BY name, day_ms, bucket_ms "
        f"HAVING AVG(status) < {query.query_type.threshold!r}"
    )
    return (
        f"SELECT g.fleet, g.model, a.day_ms * {MILLIS_PER_NS}, CAST(SUM(a.n) AS DOUBLE) / {ACTIVITY_DIVISOR} "
        f"FROM ({idle}) a JOIN {TAGS} ON g.name = a.name GROUP BY g.fleet, g.model, a.day_ms"
    )


def breakdowns(query: LogicalQuery, trucks: Sequence[str]) -> str:
    rows = truck_rows(query, trucks, [bucket_column(query), "status"])
    buckets = (
        "SELECT name, bucket_ms, COUNT(status = 0) / COUNT(*) >= 0.5 AS broken "
        f"FROM {rows} GROUP BY name, bucket_ms"
    )
    following = (
        "SELECT name, broken, LEAD(broken) OVER (PARTITION BY name ORDER BY bucket_ms) AS next_broken "
        f"FROM ({buckets}) b"
    )
    return (
        f"SELECT g.model, COUNT(*) FROM ({following}) f JOIN {TAGS} ON g.name = f.name "
        "WHERE NOT f.broken AND f.next_broken GROUP BY g.model"
    )


IOT_SQL: dict[Kind, Callable[[LogicalQuery, Sequence[str]], str]] = by_kind(globals())


def plan(query: LogicalQuery, trucks: Sequence[str], fleets: Mapping[str, Sequence[str]]) -> Plan:
    """The SQL plan of an iot ``query``: over ``fleets[query.fleet]`` (the fleet's trucks) for a
    fleet type, else over every truck of ``trucks``."""
    qtype = query.query_type
    read = list(fleets.get(query.fleet or "", ())) if qtype.fleet else list(trucks)
    sql = IOT_SQL[qtype.kind](query, read) if read else None
    return {"query": query.id, "type": query.type, "sql": sql}
