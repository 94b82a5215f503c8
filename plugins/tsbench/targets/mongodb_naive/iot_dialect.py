"""The iot rows of the naive layout (one document per event, ``events.py``) for the iot pipelines
of ``tsbench.targets.mongodb.iot_pipelines``.

Every pipeline starts with one ``$match`` on ``tags.name`` (not null), ``tags.fleet`` and ``time``,
which MongoDB applies to the time-series buckets (meta value, min/max time) before it unpacks
events. A truck's last row: ``$sort {tags.name: 1, time: -1}`` + ``$group $first`` (lastpoint's
shape, which MongoDB can answer from the newest bucket per series).
"""

from __future__ import annotations

from tsbench.targets.mongodb.iot_pipelines import IotRows
from tsbench.targets.mongodb.pipelines import Stage, instant
from tsbench.targets.mongodb_naive.events import META
from tsbench.workload.queries import LogicalQuery


class EventIotRows(IotRows):
    """Rows are the documents themselves."""

    time = "time"

    def __init__(self, entity_key: str = "name"):
        self.entity = f"{META}.{entity_key}"

    def tag(self, name: str) -> str:
        return f"{META}.{name}"

    def field(self, name: str) -> str:
        return name

    def match(self, query: LogicalQuery) -> Stage:
        """Named rows of the fleet in the window."""
        match: Stage = {self.entity: {"$ne": None}}
        if query.fleet is not None:
            match[self.tag("fleet")] = query.fleet
        if query.start_ns is not None and query.end_ns is not None:
            match[self.time] = {"$gte": instant(query.start_ns), "$lt": instant(query.end_ns)}
        return match

    def rows(self, query: LogicalQuery, above: tuple[str, float] | None = None) -> list[Stage]:
        match = self.match(query)
        if above is not None:
            field, value = above
            match[field] = {"$gt": value}
        return [{"$match": match}]

    def last_rows(self, query: LogicalQuery, fields: tuple[str, ...]) -> list[Stage]:
        newest: Stage = {"_id": f"${self.entity}", "driver": {"$first": f"${self.tag('driver')}"}}
        newest.update({name: {"$first": f"${name}"} for name in fields})
        return [{"$match": self.match(query)}, {"$sort": {self.entity: 1, self.time: -1}}, {"$group": newest}]
