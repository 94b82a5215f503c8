"""Aggregation pipelines for TSBS's 12 iot query types, shared by both document layouts.

The semantics are ``tsbench.workload.iot_query_types``'s. A layout's ``IotRows`` (its
``iot_dialect.py``) yields one item per named row — of the query's fleet and window — and each
truck's last row; the kinds below build on them. Conventions (those of ``pipelines.py`` too):

* Nameless rows (``name`` null) never count: every pipeline starts with ``$match`` on
  ``name: {$ne: null}``; a fleet query adds ``tags.fleet``.
* 10-minute buckets and days are epoch-aligned dates, ``time - ((time - 1970-01-01) mod width)``
  (``pipelines.bucket_of``; exact for any width). Answers carry ``day`` as a date, which the answer
  normalises to ns.
* A missing field is null. ``$avg``/``$max``/``$sum`` skip nulls (``$avg`` of none is null); a
  ``$match`` comparison (``{$lt: 0.1}``) never matches null (type bracketing); an *expression*
  comparison would (null sorts before numbers), so where one decides, the value is tested with
  ``$isNumber`` first — e.g. a bucket whose ``avg`` is null has ``driving: null``, neither true nor
  false.
* lag/lead: ``$setWindowFields`` partitioned by truck, sorted by bucket, with ``$shift`` (by −1 /
  +1; null where there is no such bucket).
* Integer division: ``$floor`` of ``$divide`` (exact for these counts).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from tsbench.targets.mongodb.pipelines import Stage, bucket_of, query_text, width_ms
from tsbench.workload.answers import answer_columns
from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    TEN_MINUTES_NS,
    by_kind,
)
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_kinds import Kind

TEN_MS = width_ms(TEN_MINUTES_NS)
DAY_MS = width_ms(DAY_NS)


class IotRows(ABC):
    """A layout's iot rows: ``rows`` yields one item per named row, where ``time``, ``entity``,
    ``tag(t)`` and ``field(f)`` are the paths (without ``$``) of its time, name, tags and fields."""

    time: str
    entity: str

    def tag(self, name: str) -> str:
        return f"tags.{name}"  # both layouts keep a truck's other tags under ``tags``

    @abstractmethod
    def field(self, name: str) -> str:
        """Path of a field in an item of ``rows``."""

    @abstractmethod
    def rows(self, query: LogicalQuery, above: tuple[str, float] | None = None) -> list[Stage]:
        """One item per named row of the query's measurement (of its fleet, in its window, when the
        query has them; with ``field > value`` when ``above`` is given)."""

    @abstractmethod
    def last_rows(self, query: LogicalQuery, fields: tuple[str, ...]) -> list[Stage]:
        """One document per named truck of the fleet: ``_id`` the name, ``driver``, and ``fields``
        of the truck's row with the greatest time (null where that row lacks them)."""


def _key(source: IotRows, *columns: str) -> dict[str, str]:
    """A ``$group`` ``_id`` of the item's ``name`` and tags, by answer column name."""
    return {c: f"${source.entity}" if c == "name" else f"${source.tag(c)}" for c in columns}


def _project(columns: list[str], values: dict[str, Any]) -> Stage:
    """The final stage: the answer columns in order, from ``_id.<column>`` unless given."""
    return {"$project": {"_id": 0, **{c: values.get(c, f"$_id.{c}") for c in columns}}}


def _ten(source: IotRows) -> dict[str, Any]:
    return bucket_of(f"${source.time}", TEN_MS)


def _threshold(query: LogicalQuery) -> float:
    return float(query.query_type.threshold)


def _if_number(value: Any, then: Any) -> dict[str, Any]:
    """``then`` where ``value`` is a number, else null (a missing value decides nothing)."""
    return {"$cond": [{"$isNumber": value}, then, None]}


def _last_columns(columns: list[str]) -> Stage:
    """The final stage over ``last_rows``'s documents (``_id`` is the name)."""
    return _project(columns, {"name": "$_id", **{c: 1 for c in columns[1:]}})


def last_loc(query: LogicalQuery, source: IotRows) -> list[Stage]:
    last = source.last_rows(query, ("longitude", "latitude"))
    return [*last, _last_columns(["name", "driver", "longitude", "latitude"])]


def low_fuel(query: LogicalQuery, source: IotRows) -> list[Stage]:
    last = source.last_rows(query, ("fuel_state",))
    keep = {"$match": {"fuel_state": {"$lt": _threshold(query)}}}
    return [*last, keep, _last_columns(["name", "driver", "fuel_state"])]


def high_load(query: LogicalQuery, source: IotRows) -> list[Stage]:
    last = source.last_rows(query, ("current_load", "load_capacity"))
    share = {"$divide": ["$current_load", "$load_capacity"]}
    both = {"$and": [{"$isNumber": "$current_load"}, {"$isNumber": "$load_capacity"}]}
    keep = {"$match": {"$expr": {"$cond": [both, {"$gt": [share, _threshold(query)]}, False]}}}
    return [*last, keep, _last_columns(["name", "driver", "current_load"])]


def stationary(query: LogicalQuery, source: IotRows) -> list[Stage]:
    average = {"$avg": f"${source.field('velocity')}"}
    return [
        *source.rows(query),
        {"$group": {"_id": _key(source, "name", "driver"), "velocity": average}},
        {"$match": {"velocity": {"$lt": _threshold(query)}}},
        _project(["name", "driver"], {}),
    ]


def _driving_buckets(query: LogicalQuery, source: IotRows, *tags: str) -> list[Stage]:
    """Per truck (with ``tags``) the 10-minute buckets of ``avg(velocity) > threshold``;
    ``_id.ten`` is the bucket's start."""
    key = {**_key(source, *tags), "ten": _ten(source)}
    return [
        *source.rows(query),
        {"$group": {"_id": key, "velocity": {"$avg": f"${source.field('velocity')}"}}},
        {"$match": {"velocity": {"$gt": _threshold(query)}}},
    ]


def long_sessions(query: LogicalQuery, source: IotRows) -> list[Stage]:
    trucks = {"name": "$_id.name", "driver": "$_id.driver"}
    return [
        *_driving_buckets(query, source, "name", "driver"),
        {"$group": {"_id": trucks, "buckets": {"$sum": 1}}},
        {"$match": {"buckets": {"$gt": int(query.query_type.limit)}}},
        _project(["name", "driver"], {}),
    ]


def fleet_fuel(query: LogicalQuery, source: IotRows) -> list[Stage]:
    group = {
        "_id": _key(source, "fleet"),
        "avg_fuel_consumption": {"$avg": f"${source.field('fuel_consumption')}"},
        "projected_fuel_consumption": {"$avg": f"${source.field('nominal_fuel_consumption')}"},
    }
    columns = ["fleet", "avg_fuel_consumption", "projected_fuel_consumption"]
    values = {c: 1 for c in columns[1:]}
    return [
        *source.rows(query, above=("velocity", _threshold(query))),
        {"$group": group},
        _project(columns, values),
    ]


def daily_driving(query: LogicalQuery, source: IotRows) -> list[Stage]:
    truck = {t: f"$_id.{t}" for t in ("fleet", "name", "driver")}
    day = {**truck, "day": bucket_of("$_id.ten", DAY_MS)}
    hours = {"$floor": {"$divide": ["$buckets", BUCKETS_PER_HOUR]}}
    return [
        *_driving_buckets(query, source, "fleet", "name", "driver"),
        {"$group": {"_id": day, "buckets": {"$sum": 1}}},
        {"$group": {"_id": truck, "avg_daily_hours": {"$avg": hours}}},
        _project(["fleet", "name", "driver", "avg_daily_hours"], {"avg_daily_hours": 1}),
    ]


def _per_truck(output: str, value: str, by: int) -> Stage:
    """``output``: ``value`` of the truck's bucket ``by`` places away (null where there is none)."""
    shift = {"$shift": {"output": value, "by": by}}
    return {
        "$setWindowFields": {"partitionBy": "$_id.name", "sortBy": {"_id.ten": 1}, "output": {output: shift}}
    }


def driving_session(query: LogicalQuery, source: IotRows) -> list[Stage]:
    velocity = {"$avg": f"${source.field('velocity')}"}
    driving = _if_number("$velocity", {"$gt": ["$velocity", _threshold(query)]})
    known = [{"$ne": ["$driving", None]}, {"$ne": ["$driving_before", None]}]
    change = {"$and": [*known, {"$ne": ["$driving", "$driving_before"]}]}
    per_day = {"name": "$_id.name", "day": bucket_of("$_id.ten", DAY_MS)}
    length_ms = {"$subtract": ["$next_change", "$_id.ten"]}  # null without a next change
    return [
        *source.rows(query),
        {"$group": {"_id": {**_key(source, "name"), "ten": _ten(source)}, "velocity": velocity}},
        {"$set": {"driving": driving}},
        _per_truck("driving_before", "$driving", -1),
        {"$match": {"$expr": change}},
        _per_truck("next_change", "$_id.ten", 1),
        {"$match": {"driving": True}},
        {"$group": {"_id": per_day, "length_ms": {"$avg": length_ms}}},
        _project(["name", "day", "avg_session_s"], {"avg_session_s": {"$divide": ["$length_ms", 1000]}}),
    ]


def fleet_load(query: LogicalQuery, source: IotRows) -> list[Stage]:
    truck = {
        "_id": _key(source, "name", "fleet", "model"),
        "capacity": {"$max": f"${source.field('load_capacity')}"},
        "load": {"$avg": f"${source.field('current_load')}"},
    }
    share = _if_number("$load", {"$divide": ["$load", "$capacity"]})
    group = {"fleet": "$_id.fleet", "model": "$_id.model", "load_capacity": "$capacity"}
    columns = ["fleet", "model", "load_capacity", "avg_load_share"]
    return [
        *source.rows(query),
        {"$group": truck},
        {"$group": {"_id": group, "avg_load_share": {"$avg": _if_number("$capacity", share)}}},
        _project(columns, {"avg_load_share": 1}),
    ]


def daily_activity(query: LogicalQuery, source: IotRows) -> list[Stage]:
    day = bucket_of(f"${source.time}", DAY_MS)
    bucket = {**_key(source, "fleet", "model", "name"), "day": day, "ten": _ten(source)}
    per_day = {"fleet": "$_id.fleet", "model": "$_id.model", "day": "$_id.day"}
    activity = {"$divide": ["$rows", ACTIVITY_DIVISOR]}
    return [
        *source.rows(query),
        {"$group": {"_id": bucket, "status": {"$avg": f"${source.field('status')}"}, "rows": {"$sum": 1}}},
        {"$match": {"status": {"$lt": _threshold(query)}}},
        {"$group": {"_id": per_day, "rows": {"$sum": "$rows"}}},
        _project(["fleet", "model", "day", "daily_activity"], {"daily_activity": activity}),
    ]


def breakdowns(query: LogicalQuery, source: IotRows) -> list[Stage]:
    # TSBS's integer text, count(status = 0) / count(*): count(status = 0) counts the rows whose
    # status is set (SQL's count skips NULL, and status = 0 is NULL exactly when status is).
    with_status = {"$sum": {"$cond": [{"$isNumber": f"${source.field('status')}"}, 1, 0]}}
    broken = {"$gte": [{"$floor": {"$divide": ["$with_status", "$rows"]}}, 0.5]}
    key = {**_key(source, "name", "model"), "ten": _ten(source)}
    return [
        *source.rows(query),
        {"$group": {"_id": key, "with_status": with_status, "rows": {"$sum": 1}}},
        {"$set": {"broken": broken}},
        _per_truck("next_broken", "$broken", 1),
        {"$match": {"broken": False, "next_broken": True}},
        {"$group": {"_id": {"model": "$_id.model"}, "breakdowns": {"$sum": 1}}},
        _project(["model", "breakdowns"], {"breakdowns": 1}),
    ]


PIPELINES: dict[Kind, Callable[[LogicalQuery, IotRows], list[Stage]]] = by_kind(globals())


def render(query: LogicalQuery, source: IotRows) -> str:
    """The iot query as Extended JSON ``{"collection", "columns", "pipeline"}`` over ``source``."""
    columns, _ = answer_columns(query.query_type, query.fields)
    return query_text(query.measurement, columns, PIPELINES[query.query_type.kind](query, source))
