"""Aggregation pipelines over the per-host-hour documents (see ``hourly.py`` for their shape).

Rows are reached in two steps: a ``$match`` on the documents (``_id.hostname``, ``_id.hour`` — both
indexed — plus "has an event that …" conditions), then ``$filter`` keeps the events inside the
window (and above the threshold) before ``$unwind`` makes one item per row.

Where the layout allows less work than one item per row, it is used:

* buckets that are whole hours (cpu-max-all, double-groupby): no ``$unwind``; each document's
  filtered events are reduced in place (``$max`` / ``$sum`` and count of the values), then documents
  are combined per bucket (a bucket of one hour is exactly one document per series);
* lastpoint: the newest document of every host first (``$sort`` + ``$group $first`` on the
  ``{hostname, hour desc}`` index), then the newest event inside it.
"""

from __future__ import annotations

from typing import Any

from tsbench.targets.mongodb import iot_pipelines, pipelines
from tsbench.targets.mongodb.iot_dialect import HourlyIotRows
from tsbench.targets.mongodb.pipelines import (
    RowFilter,
    RowSource,
    Stage,
    bucket_of,
    column_name,
    floor_to,
    hour_multiple,
    project_lastpoint,
    width_ms,
)
from tsbench.timeutil import NS_PER_HOUR
from tsbench.workload.queries import LogicalQuery

MS_PER_HOUR = NS_PER_HOUR // 1_000_000


class HourlyRows(RowSource):
    """Rows of per-(series, hour) documents: after ``rows``, each item is a document whose
    ``events`` is one event."""

    time = "events.time"

    def __init__(self, entity_key: str = "hostname"):
        self.entity = f"_id.{entity_key}"

    def field(self, name: str) -> str:
        return f"events.{name}"

    def document_match(self, where: RowFilter) -> Stage:
        """Documents that can hold a matching row."""
        match = where.host_match(self.entity)
        hour: dict[str, Any] = {}
        if where.nothing:
            hour["$in"] = []
        elif where.at is not None:
            hour["$eq"] = floor_to(where.at, MS_PER_HOUR)
            match["events.time"] = where.at
        else:
            if where.start is not None:
                hour["$gte"] = floor_to(where.start, MS_PER_HOUR)
            if where.end is not None:
                hour["$lt"] = where.end
        if hour:
            match["_id.hour"] = hour
        if where.above is not None:
            field, threshold = where.above
            match[f"events.{field}"] = {"$gt": threshold}
        return match

    @staticmethod
    def event_condition(where: RowFilter) -> Stage | None:
        """``$filter`` condition on ``$$event`` (None when every event of a document qualifies)."""
        time = "$$event.time"
        conditions: list[Stage] = []
        if where.at is not None:
            conditions.append({"$eq": [time, where.at]})
        if where.start is not None:
            conditions.append({"$gte": [time, where.start]})
        if where.end is not None:
            conditions.append({"$lt": [time, where.end]})
        if where.above is not None:
            field, threshold = where.above
            conditions.append({"$gt": [f"$$event.{field}", threshold]})
        return {"$and": conditions} if conditions else None

    def filtered_events(self, where: RowFilter) -> list[Stage]:
        """Matching documents with ``events`` cut down to the matching events (``_id`` kept)."""
        stages: list[Stage] = []
        match = self.document_match(where)
        if match:
            stages.append({"$match": match})
        condition = self.event_condition(where)
        if condition is not None:
            cut = {"$filter": {"input": "$events", "as": "event", "cond": condition}}
            stages.append({"$project": {"events": cut}})
        return stages

    def rows(self, where: RowFilter) -> list[Stage]:
        return [*self.filtered_events(where), {"$unwind": "$events"}]

    def groupby(self, query: LogicalQuery, by_host: bool) -> list[Stage]:
        qtype = query.query_type
        if not hour_multiple(qtype.bucket_ns) or qtype.agg not in ("max", "mean"):
            return super().groupby(query, by_host)
        stages = self.filtered_events(RowFilter.of(query))
        stages.append({"$match": {"events": {"$ne": []}}})
        per_document: Stage = {}
        bucket: Any = "$_id.hour"
        if qtype.bucket_ns != NS_PER_HOUR:
            bucket = bucket_of("$_id.hour", width_ms(qtype.bucket_ns))
        combine: Stage = {"_id": {"bucket": bucket, "hostname": f"${self.entity}"} if by_host else bucket}
        final: Stage = {"_id": 0}
        final.update(
            {"bucket": "$_id.bucket", "hostname": "$_id.hostname"} if by_host else {"bucket": "$_id"}
        )
        for name in query.fields:
            values = f"$events.{name}"
            column = column_name(qtype.agg, name)
            if qtype.agg == "max":
                per_document[column] = {"$max": values}
                combine[column] = {"$max": f"${column}"}
                final[column] = 1
            else:  # mean = sum of values / number of values, both summed over the bucket's documents
                total, count = f"sum_{name}", f"count_{name}"
                per_document[total] = {"$sum": values}
                per_document[count] = {
                    "$size": {"$filter": {"input": values, "cond": {"$isNumber": "$$this"}}}
                }
                combine[total] = {"$sum": f"${total}"}
                combine[count] = {"$sum": f"${count}"}
                final[column] = {
                    "$cond": [{"$eq": [f"${count}", 0]}, None, {"$divide": [f"${total}", f"${count}"]}]
                }
        return [*stages, {"$project": per_document}, {"$group": combine}, {"$project": final}]

    def lastpoint(self, query: LogicalQuery) -> list[Stage]:
        match = RowFilter(hosts=query.hosts).host_match(self.entity)
        newest_row: Stage = {"_id": "$_id", "time": {"$first": "$events.time"}}
        newest_row.update({name: {"$first": f"$events.{name}"} for name in query.fields})
        return [
            *([{"$match": match}] if match else []),
            {"$sort": {self.entity: 1, "_id.hour": -1}},
            {"$group": {"_id": f"${self.entity}", "events": {"$first": "$events"}}},
            {"$unwind": "$events"},
            {"$sort": {"events.time": -1}},
            {"$group": newest_row},
            project_lastpoint(query),
        ]


def render(query: LogicalQuery, entity_key: str = "hostname") -> str:
    """The query as Extended JSON ``{"collection", "columns", "pipeline"}`` over hour documents
    (the iot types: ``iot_pipelines`` over ``iot_dialect.HourlyIotRows``)."""
    if query.query_type.kind in iot_pipelines.PIPELINES:
        return iot_pipelines.render(query, HourlyIotRows(entity_key))
    return pipelines.render(query, HourlyRows(entity_key))
