"""MongoDB, recommended layout: one document per host (series) per hour, events in an array.

Load path: each batch's rows are grouped into (series, hour) documents and sent as one unordered
bulk of upserts (``$setOnInsert`` tags, ``$addToSet $each`` events: idempotent, see ``hourly.py``).
Queries are aggregation pipelines (``dialect.py``).
"""

from __future__ import annotations

from typing import ClassVar

from tsbench.targets.base import Capabilities
from tsbench.targets.mongodb import dialect
from tsbench.targets.mongodb.hourly import HourlyLayout
from tsbench.targets.mongodb.target_base import MongoTarget
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery


class MongoHourlyTarget(MongoTarget):
    name = "mongodb"
    title = "MongoDB (host-hour documents)"
    colour = "#56B4E9"
    client_packages = ("pymongo",)
    layout_type = HourlyLayout
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=True,
        keeps=Keeps.DISTINCT,  # events are added with $addToSet: an identical event is skipped
        compression="WiredTiger snappy block compression (collections), prefix compression (indexes)",
        rollups="on-demand materialized views ($merge): not built by tsbench",
        unsupported={},
        restartable=True,
        schema_note=(
            "one collection per measurement; one document per host (+ extra tags) per UTC hour: "
            "_id {hostname, hour}, tags {…}, events [{time, fields…}]; indexes {_id.hostname: 1, "
            "_id.hour: -1} and {_id.hour: 1}; loaded with upserts ($setOnInsert tags, $addToSet events); "
            "nameless iot rows: one document per hour with _id.name null, events appended with $push"
        ),
    )

    def render(self, query: LogicalQuery) -> str:
        return dialect.render(query, self.use_case.entity_key)


TARGET = MongoHourlyTarget
