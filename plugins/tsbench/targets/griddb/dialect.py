"""Logical queries → a GridDB query plan: TQL per container plus the client-side combine step.

TQL runs on one container at a time and has no GROUP BY, no column list (``*`` or one aggregate)
and one aggregate per query. A logical query therefore becomes a *plan* (JSON text, what
``render`` returns and ``GridDBSession.execute`` runs):

* ``steps``: one TQL per container (``cpu_<host>``) — all of them are sent with one
  ``GridStore.fetchAll``, which groups them into as few requests as it can;
* ``combine``: what the client does with the results to produce the answer rows;
* ``fallback`` (groupby-orderby-limit only): the steps to run when the first window holds fewer
  than ``limit`` buckets.

Every step carries its TQL and the same selection as data (``form``: what is selected, the
half-open window, filters, order, limit) so that tests can evaluate a step independently of TQL.

Choices (README.md, "Queries", has the costs):

* Bucketed queries (single-groupby, cpu-max-all, double-groupby, groupby-orderby-limit) fetch the
  window's rows of each container (a row-key range scan) and aggregate per epoch-aligned bucket on
  the client. The alternatives were one aggregate TQL per bucket × field × host (60–3,600 TQLs per
  host for one query) or ``TIME_SAMPLING``, which interpolates values at sampling instants and does
  not aggregate at all.
* Range aggregates (ycsb count/avg/sum) run on the server: ``COUNT(*)`` / ``AVG`` / ``SUM`` with a
  ``COUNT(*) … IS NOT NULL`` companion that tells an empty window (SQL NULL) from a zero.
* lastpoint: ``ORDER BY time DESC LIMIT 1`` per container; high-cpu filters on the server.

Instants: row keys are millisecond TIMESTAMPs. ``t >= start`` over ms data is ``t_ms >=
ceil(start / 1 ms)`` and ``t < end`` is ``t_ms < ceil(end / 1 ms)``, so windows stay exact
half-open intervals for any ns bound; literals are ``TIMESTAMP('YYYY-MM-DDThh:mm:ss.SSSZ')``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from tsbench.targets.griddb.layout import MILLIS_PER_NS, TIME, Layout, container_name
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

Form = dict[str, Any]
Step = dict[str, Any]

_AGGREGATE = {"count": "COUNT", "avg": "AVG", "sum": "SUM"}


def ceil_millis(ns: int) -> int:
    return -(-ns // MILLIS_PER_NS)


def timestamp(millis: int) -> str:
    """``TIMESTAMP('2016-01-01T00:00:00.000Z')`` for ms since the epoch (UTC)."""
    seconds, fraction = divmod(millis, 1000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"TIMESTAMP('{stamp}.{fraction:03d}Z')"


def quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def form(
    select: str = "*",
    column: str | None = None,
    from_ms: int | None = None,
    to_ms: int | None = None,
    at_ms: int | None = None,
    above: tuple[str, float] | None = None,
    not_null: str | None = None,
    latest_first: bool = False,
    limit: int | None = None,
) -> Form:
    """One TQL selection as data. ``select`` is ``*`` or COUNT/AVG/SUM (of ``column``; COUNT(*))."""
    return {
        "select": select,
        "column": column,
        "from_ms": from_ms,
        "to_ms": to_ms,
        "at_ms": at_ms,
        "above": None if above is None else [above[0], float(above[1])],
        "not_null": not_null,
        "latest_first": latest_first,
        "limit": limit,
    }


def tql(selection: Form) -> str:
    """The TQL text of a selection (``form``)."""
    select = selection["select"]
    if select == "*":
        head = "SELECT *"
    elif select == "COUNT":
        head = "SELECT COUNT(*)"
    else:
        head = f"SELECT {select}({quoted(selection['column'])})"
    where = []
    if selection["from_ms"] is not None:
        where.append(f"{quoted(TIME)} >= {timestamp(selection['from_ms'])}")
    if selection["to_ms"] is not None:
        where.append(f"{quoted(TIME)} < {timestamp(selection['to_ms'])}")
    if selection["at_ms"] is not None:
        where.append(f"{quoted(TIME)} = {timestamp(selection['at_ms'])}")
    if selection["above"] is not None:
        column, value = selection["above"]
        where.append(f"{quoted(column)} > {float(value)!r}")
    if selection["not_null"] is not None:
        where.append(f"{quoted(selection['not_null'])} IS NOT NULL")
    text = head + (" WHERE " + " AND ".join(where) if where else "")
    if selection["latest_first"]:
        text += f" ORDER BY {quoted(TIME)} DESC"
    if selection["limit"] is not None:
        text += f" LIMIT {int(selection['limit'])}"
    return text


def _steps(measurement: str, entities: Sequence[str], selection: Form, role: str = "rows") -> list[Step]:
    return [
        {
            "entity": entity,
            "container": container_name(measurement, entity),
            "role": role,
            "form": selection,
            "tql": tql(selection),
        }
        for entity in entities
    ]


def _window(query: LogicalQuery) -> dict[str, int | None]:
    return {
        "from_ms": None if query.start_ns is None else ceil_millis(query.start_ns),
        "to_ms": None if query.end_ns is None else ceil_millis(query.end_ns),
    }


def _buckets(query: LogicalQuery, by_entity: bool = False, limit: int = 0) -> dict[str, Any]:
    qtype = query.query_type
    return {
        "kind": "buckets",
        "agg": qtype.agg,
        "bucket_ns": qtype.bucket_ns,
        "fields": list(query.fields),
        "by_entity": by_entity,
        "limit": limit,
    }


Plan = dict[str, Any]


def _groupby(query: LogicalQuery, layout: Layout, hosts: Sequence[str]) -> Plan:
    return {
        "steps": _steps(layout.measurement, hosts, form(**_window(query))),
        "combine": _buckets(query, by_entity=query.query_type.kind is Kind.GROUPBY_HOST),
    }


def _orderby_limit(query: LogicalQuery, layout: Layout, hosts: Sequence[str]) -> Plan:
    qtype = query.query_type
    if query.end_ns is None:
        raise ValueError(f"{query.id}: groupby-orderby-limit needs end_ns")
    last_bucket = (query.end_ns - 1) // qtype.bucket_ns * qtype.bucket_ns
    first_bucket = last_bucket - (qtype.limit - 1) * qtype.bucket_ns
    to_ms = ceil_millis(query.end_ns)
    return {
        "steps": _steps(layout.measurement, hosts, form(from_ms=ceil_millis(first_bucket), to_ms=to_ms)),
        # Fewer than `limit` non-empty buckets in that window (sparse data): everything before end.
        "fallback": _steps(layout.measurement, hosts, form(to_ms=to_ms)),
        "combine": _buckets(query, limit=qtype.limit),
    }


def _rows(query: LogicalQuery, layout: Layout, hosts: Sequence[str]) -> Plan:
    kind = query.query_type.kind
    if kind is Kind.READ:
        if query.at_ns is None:
            raise ValueError(f"{query.id}: a read needs at_ns")
        # A stored row key is a whole ms: an instant between two ms matches no row.
        exact = query.at_ns % MILLIS_PER_NS == 0
        selection = form(at_ms=query.at_ns // MILLIS_PER_NS)
        steps = _steps(layout.measurement, hosts if exact else [], selection)
    elif kind is Kind.HIGH_CPU:
        above = (query.fields[0], query.query_type.threshold)
        steps = _steps(layout.measurement, hosts, form(**_window(query), above=above))
    else:  # SCAN
        steps = _steps(layout.measurement, hosts, form(**_window(query)))
    return {"steps": steps, "combine": {"kind": "rows", "fields": list(query.fields)}}


def _lastpoint(query: LogicalQuery, layout: Layout, hosts: Sequence[str]) -> Plan:
    steps = _steps(layout.measurement, hosts, form(latest_first=True, limit=1))
    return {"steps": steps, "combine": {"kind": "latest", "fields": list(query.fields)}}


def _range_aggregate(query: LogicalQuery, layout: Layout, hosts: Sequence[str]) -> Plan:
    agg = query.query_type.agg
    field = query.fields[0]
    window = _window(query)
    counted = form(select="COUNT", **window, not_null=field)
    steps = []
    for host in hosts:
        if agg != "count":
            steps += _steps(layout.measurement, [host], form(select=_AGGREGATE[agg], column=field, **window))
        steps += _steps(layout.measurement, [host], counted, role="count")
    combine = {"kind": "aggregate", "agg": agg, "field": field, "field_kind": layout.kind(field)}
    return {"steps": steps, "combine": combine}


PLANNERS: dict[Kind, Callable[[LogicalQuery, Layout, Sequence[str]], Plan]] = {
    Kind.GROUPBY: _groupby,
    Kind.GROUPBY_HOST: _groupby,
    Kind.ORDERBY_LIMIT: _orderby_limit,
    Kind.HIGH_CPU: _rows,
    Kind.READ: _rows,
    Kind.SCAN: _rows,
    Kind.LASTPOINT: _lastpoint,
    Kind.RANGE_AGG: _range_aggregate,
}


def plan(query: LogicalQuery, layout: Layout, entities: Sequence[str]) -> Plan:
    """The plan of ``query`` over ``layout``'s containers; ``entities`` are all of them (used when
    the query names no hosts)."""
    hosts = list(query.hosts) if query.hosts is not None else list(entities)
    body = PLANNERS[query.query_type.kind](query, layout, hosts)
    return {"query": query.id, "type": query.type, "measurement": layout.measurement, **body}


def render(query: LogicalQuery, layout: Layout, entities: Sequence[str]) -> str:
    """The plan as JSON text (compact, keys in a fixed order)."""
    return json.dumps(plan(query, layout, entities), separators=(",", ":"))
