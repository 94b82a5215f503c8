"""Aggregation pipelines for every logical query kind, shared by both document layouts.

A layout's ``RowSource`` (in its ``dialect.py``) yields one item per matching row and says where a
row's time, entity and fields are in that item; the kinds below build on it, and a layout may
override a kind where its documents allow a cheaper pipeline.

Conventions (the oracle's semantics):

* Instants are BSON dates (milliseconds, UTC). Windows are half-open, ``time >= start AND time <
  end``; the logical queries' instants are whole seconds. A bound that is not a whole millisecond is
  rounded up, which keeps ``>=``/``<`` exact over millisecond data; an exact-time read at such an
  instant matches nothing (no stored time can equal it).
* Buckets are aligned to the Unix epoch: ``time - ((time - 1970-01-01) mod width)``. (``$dateTrunc``
  would align widths that do not divide a day to 2000-01-01; this is exact for every width, for
  instants from 1970 on.) Buckets without rows are omitted.
* Every pipeline ends in a ``$project`` that names the columns of ``answers.answer_columns``; the
  session reads them in that order. A column whose value is missing reads as None.
* Single-row aggregates (range-agg) run inside ``$facet``, which yields one document even when no row
  matches: count is then 0, avg and sum are null.

The query text is Extended JSON (relaxed mode: dates as ``{"$date": "…Z"}``) of
``{"collection", "columns", "pipeline"}``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from bson import json_util

from tsbench.timeutil import NS_PER_HOUR
from tsbench.workload.answers import answer_columns
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

EPOCH = datetime(1970, 1, 1)  # naive datetimes are UTC for pymongo and for Extended JSON
NS_PER_MS = 1_000_000
ACCUMULATOR = {"max": "$max", "mean": "$avg", "avg": "$avg", "sum": "$sum"}
Stage = dict[str, Any]


def instant(ns: int) -> datetime:
    """``ns`` since the epoch as a BSON-exact datetime, rounded up to a millisecond."""
    return EPOCH + timedelta(milliseconds=-(-ns // NS_PER_MS))


def floor_to(moment: datetime, width_ms: int) -> datetime:
    """``moment`` floored to a multiple of ``width_ms`` since the epoch."""
    return moment - (moment - EPOCH) % timedelta(milliseconds=width_ms)


def width_ms(ns: int) -> int:
    if ns <= 0 or ns % NS_PER_MS:
        raise ValueError(f"MongoDB buckets are whole milliseconds; got {ns} ns")
    return ns // NS_PER_MS


def bucket_of(time: str, bucket_ms: int) -> dict[str, Any]:
    """Expression: the epoch-aligned bucket start of the date at ``time`` (an expression path)."""
    return {"$subtract": [time, {"$mod": [{"$subtract": [time, EPOCH]}, bucket_ms]}]}


def column_name(agg: str, field: str) -> str:
    return f"{agg}_{field}"


@dataclass(frozen=True)
class RowFilter:
    """Which rows a query reads. ``start``/``end`` bound a half-open window, ``at`` is an exact time,
    ``nothing`` marks an exact time no millisecond instant can equal, ``above`` is (field, threshold)."""

    hosts: tuple[str, ...] | None = None
    start: datetime | None = None
    end: datetime | None = None
    at: datetime | None = None
    nothing: bool = False
    above: tuple[str, float] | None = None

    @classmethod
    def of(cls, query: LogicalQuery) -> RowFilter:
        qtype = query.query_type
        at = None if query.at_ns is None else instant(query.at_ns)
        return cls(
            hosts=query.hosts,
            start=None if query.start_ns is None else instant(query.start_ns),
            end=None if query.end_ns is None else instant(query.end_ns),
            at=at,
            nothing=query.at_ns is not None and query.at_ns % NS_PER_MS != 0,
            above=(query.fields[0], float(qtype.threshold)) if qtype.kind is Kind.HIGH_CPU else None,
        )

    def time_bounds(self) -> dict[str, Any]:
        """Match-language bounds on a time field (empty when the filter has none)."""
        if self.nothing:
            return {"$in": []}
        if self.at is not None:
            return {"$eq": self.at}
        bounds: dict[str, Any] = {}
        if self.start is not None:
            bounds["$gte"] = self.start
        if self.end is not None:
            bounds["$lt"] = self.end
        return bounds

    def host_match(self, path: str) -> dict[str, Any]:
        if self.hosts is None:
            return {}
        if len(self.hosts) == 1:
            return {path: self.hosts[0]}
        return {path: {"$in": list(self.hosts)}}


class RowSource(ABC):
    """The rows of the queried collection as a stream of items; subclasses say how (``rows``) and
    where each item holds a row's time, entity name and fields (paths without ``$``)."""

    time: str
    entity: str

    @abstractmethod
    def field(self, name: str) -> str:
        """Path of a field in an item."""

    @abstractmethod
    def rows(self, where: RowFilter) -> list[Stage]:
        """Stages yielding one item per row that passes ``where``."""

    # -- kinds (a layout may override any) -----------------------------------------------------------

    def groupby(self, query: LogicalQuery, by_host: bool) -> list[Stage]:
        """agg(fields) per epoch-aligned bucket [and host]: GROUPBY and GROUPBY_HOST."""
        qtype = query.query_type
        bucket = bucket_of(f"${self.time}", width_ms(qtype.bucket_ns))
        key: Any = {"bucket": bucket, "hostname": f"${self.entity}"} if by_host else bucket
        group: Stage = {"_id": key}
        for name in query.fields:
            group[column_name(qtype.agg, name)] = {ACCUMULATOR[qtype.agg]: f"${self.field(name)}"}
        return [*self.rows(RowFilter.of(query)), {"$group": group}, _project_buckets(query, by_host)]

    def orderby_limit(self, query: LogicalQuery) -> list[Stage]:
        """max(field) per bucket for the last ``limit`` buckets before ``end`` (newest first)."""
        stages = self.groupby(query, by_host=False)
        project = stages.pop()
        return [*stages, {"$sort": {"_id": -1}}, {"$limit": query.query_type.limit}, project]

    def raw(self, query: LogicalQuery) -> list[Stage]:
        """The rows themselves (HIGH_CPU, READ, SCAN): time, entity, fields."""
        project: Stage = {"_id": 0, "time": f"${self.time}", "hostname": f"${self.entity}"}
        project.update({name: f"${self.field(name)}" for name in query.fields})
        return [*self.rows(RowFilter.of(query)), {"$project": project}]

    def lastpoint(self, query: LogicalQuery) -> list[Stage]:
        """The newest row of every host: sort by host, time descending; first per host."""
        where = RowFilter(hosts=query.hosts)
        group: Stage = {"_id": f"${self.entity}", "time": {"$first": f"${self.time}"}}
        group.update({name: {"$first": f"${self.field(name)}"} for name in query.fields})
        return [
            *self.rows(where),
            {"$sort": {self.entity: 1, self.time: -1}},
            {"$group": group},
            project_lastpoint(query),
        ]

    def range_agg(self, query: LogicalQuery) -> list[Stage]:
        """One aggregate of one field over the window, as exactly one row."""
        qtype = query.query_type
        path = f"${self.field(query.fields[0])}"
        if qtype.agg == "count":  # count(field) counts values, not rows
            accumulator: Any = {"$sum": {"$cond": [{"$isNumber": path}, 1, 0]}}
        else:
            accumulator = {ACCUMULATOR[qtype.agg]: path}
        value: Any = {"$arrayElemAt": ["$result.value", 0]}
        if qtype.agg == "count":
            value = {"$ifNull": [value, 0]}
        return [
            *self.rows(RowFilter.of(query)),
            {"$facet": {"result": [{"$group": {"_id": None, "value": accumulator}}]}},
            {"$project": {column_name(qtype.agg, query.fields[0]): value}},
        ]


def _project_buckets(query: LogicalQuery, by_host: bool) -> Stage:
    qtype = query.query_type
    project: Stage = {"_id": 0}
    if by_host:
        project.update({"bucket": "$_id.bucket", "hostname": "$_id.hostname"})
    else:
        project["bucket"] = "$_id"
    project.update({column_name(qtype.agg, name): 1 for name in query.fields})
    return {"$project": project}


def project_lastpoint(query: LogicalQuery) -> Stage:
    """The final stage of lastpoint: ``_id`` (the host) as ``hostname``, then time and fields."""
    return {"$project": {"_id": 0, "hostname": "$_id", "time": 1, **{name: 1 for name in query.fields}}}


def pipeline(query: LogicalQuery, source: RowSource) -> list[Stage]:
    """The aggregation pipeline of ``query`` over ``source``."""
    kind = query.query_type.kind
    if kind is Kind.GROUPBY:
        return source.groupby(query, by_host=False)
    if kind is Kind.GROUPBY_HOST:
        return source.groupby(query, by_host=True)
    if kind is Kind.ORDERBY_LIMIT:
        return source.orderby_limit(query)
    if kind is Kind.LASTPOINT:
        return source.lastpoint(query)
    if kind is Kind.RANGE_AGG:
        return source.range_agg(query)
    if kind in (Kind.HIGH_CPU, Kind.READ, Kind.SCAN):
        return source.raw(query)
    raise ValueError(f"no MongoDB pipeline for query kind {kind}")


def hour_multiple(bucket_ns: int) -> bool:
    return bucket_ns > 0 and bucket_ns % NS_PER_HOUR == 0


# -- query text -------------------------------------------------------------------------------------


def query_text(collection: str, columns: list[str], stages: list[Stage]) -> str:
    """The rendered query: relaxed Extended JSON of ``{"collection", "columns", "pipeline"}``."""
    body = {"collection": collection, "columns": columns, "pipeline": stages}
    return json_util.dumps(body, json_options=json_util.RELAXED_JSON_OPTIONS)


@dataclass(frozen=True)
class ParsedQuery:
    collection: str
    columns: list[str]
    pipeline: list[Stage]


def parse_query_text(text: str) -> ParsedQuery:
    """Inverse of ``query_text`` (dates come back as naive UTC datetimes)."""
    body = json_util.loads(text)
    return ParsedQuery(body["collection"], list(body["columns"]), list(body["pipeline"]))


def render(query: LogicalQuery, source: RowSource) -> str:
    columns, _ = answer_columns(query.query_type, query.fields)
    return query_text(query.measurement, columns, pipeline(query, source))
