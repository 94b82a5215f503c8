"""The iot rows of the hourly layout (one document per truck per hour, ``hourly.py``) for the iot
pipelines of ``iot_pipelines.py``.

Documents are chosen first — ``_id.name`` not null, ``tags.fleet``, ``_id.hour`` within the window
(the ``{_id.name: 1, _id.hour: -1}`` and ``{_id.hour: 1}`` indexes) —, then ``$filter`` keeps the
events inside the window and ``$unwind`` makes one item per row. A truck's last row is the newest
event of its newest document (``$sort`` + ``$group $first``, lastpoint's shape): a late row is stored
in the document of its own hour, so the newest document holds the truck's greatest time.
"""

from __future__ import annotations

from typing import Any

from tsbench.targets.mongodb.iot_pipelines import IotRows
from tsbench.targets.mongodb.pipelines import Stage, floor_to, instant
from tsbench.timeutil import NS_PER_HOUR
from tsbench.workload.queries import LogicalQuery

MS_PER_HOUR = NS_PER_HOUR // 1_000_000


class HourlyIotRows(IotRows):
    """Rows of per-(truck, hour) documents: after ``rows`` each item is a document whose
    ``events`` is one event."""

    time = "events.time"

    def __init__(self, entity_key: str = "name"):
        self.entity = f"_id.{entity_key}"

    def field(self, name: str) -> str:
        return f"events.{name}"

    def document_match(self, query: LogicalQuery) -> Stage:
        """Named documents of the fleet that can hold a row of the window."""
        match: Stage = {self.entity: {"$ne": None}}
        if query.fleet is not None:
            match[self.tag("fleet")] = query.fleet
        if query.start_ns is not None and query.end_ns is not None:
            start = floor_to(instant(query.start_ns), MS_PER_HOUR)
            match["_id.hour"] = {"$gte": start, "$lt": instant(query.end_ns)}
        return {"$match": match}

    def rows(self, query: LogicalQuery, above: tuple[str, float] | None = None) -> list[Stage]:
        stages = [self.document_match(query)]
        if query.start_ns is not None and query.end_ns is not None:
            window: Any = [
                {"$gte": ["$$event.time", instant(query.start_ns)]},
                {"$lt": ["$$event.time", instant(query.end_ns)]},
            ]
            cut = {"$filter": {"input": "$events", "as": "event", "cond": {"$and": window}}}
            stages.append({"$set": {"events": cut}})
        stages.append({"$unwind": "$events"})
        if above is not None:
            field, value = above
            stages.append({"$match": {self.field(field): {"$gt": value}}})
        return stages

    def last_rows(self, query: LogicalQuery, fields: tuple[str, ...]) -> list[Stage]:
        newest: Stage = {"_id": "$_id", "driver": {"$first": "$driver"}}
        newest.update({name: {"$first": f"$events.{name}"} for name in fields})
        return [
            self.document_match(query),
            {"$sort": {self.entity: 1, "_id.hour": -1}},
            {
                "$group": {
                    "_id": f"${self.entity}",
                    "driver": {"$first": "$tags.driver"},
                    "events": {"$first": "$events"},
                }
            },
            {"$unwind": "$events"},
            {"$sort": {"events.time": -1}},
            {"$group": newest},
        ]
