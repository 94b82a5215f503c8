"""Aggregation pipelines over one-document-per-event time-series collections.

Every query starts with one ``$match`` on ``tags.hostname``, ``time`` and the threshold, which
MongoDB applies to the buckets (by their min/max time and meta value, through the indexes) before it
unpacks events; the kinds are the shared ones of ``tsbench.targets.mongodb.pipelines``. lastpoint is
``$sort {tags.hostname: 1, time: -1}`` + ``$group $first``, the shape MongoDB rewrites into a scan of
the newest bucket per series.
"""

from __future__ import annotations

from tsbench.targets.mongodb import iot_pipelines, pipelines
from tsbench.targets.mongodb.pipelines import RowFilter, RowSource, Stage
from tsbench.targets.mongodb_naive.events import META
from tsbench.targets.mongodb_naive.iot_dialect import EventIotRows
from tsbench.workload.queries import LogicalQuery


class EventRows(RowSource):
    """Rows are the documents themselves."""

    time = "time"

    def __init__(self, entity_key: str = "hostname"):
        self.entity = f"{META}.{entity_key}"

    def field(self, name: str) -> str:
        return name

    def rows(self, where: RowFilter) -> list[Stage]:
        match = where.host_match(self.entity)
        bounds = where.time_bounds()
        if bounds:
            match[self.time] = bounds
        if where.above is not None:
            field, threshold = where.above
            match[field] = {"$gt": threshold}
        return [{"$match": match}] if match else []


def render(query: LogicalQuery, entity_key: str = "hostname") -> str:
    """The query as Extended JSON ``{"collection", "columns", "pipeline"}`` over event documents
    (the iot types: ``iot_pipelines`` over ``iot_dialect.EventIotRows``)."""
    if query.query_type.kind in iot_pipelines.PIPELINES:
        return iot_pipelines.render(query, EventIotRows(entity_key))
    return pipelines.render(query, EventRows(entity_key))
