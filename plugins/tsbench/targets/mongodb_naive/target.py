"""MongoDB, naive layout: one document per event in a time-series collection.

Load path: each batch becomes one document per row (built column-wise, see ``events.py``) and goes
out as one ``insert_many(ordered=False)``. Queries are aggregation pipelines (``dialect.py``). The
server, client, flush and footprint are those of ``tsbench.targets.mongodb``.
"""

from __future__ import annotations

from typing import ClassVar

from tsbench.targets.base import Capabilities
from tsbench.targets.mongodb.target_base import MongoTarget
from tsbench.targets.mongodb_naive import dialect
from tsbench.targets.mongodb_naive.events import EventLayout
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery


class MongoNaiveTarget(MongoTarget):
    name = "mongodb_naive"
    title = "MongoDB (event documents)"
    colour = "#AA4499"
    client_packages = ("pymongo",)
    layout_type = EventLayout
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=True,
        keeps=Keeps.ALL,  # a time series collection stores every document inserted
        compression="time-series buckets: column-compressed (BSONColumn) + WiredTiger snappy",
        rollups="on-demand materialized views ($merge): not built by tsbench",
        unsupported={},
        restartable=True,
        schema_note=(
            "one time-series collection per measurement (timeField time, metaField tags, granularity "
            "seconds); one document per event: time, tags {hostname, …}, fields; indexes "
            "{tags.hostname: 1, time: -1} and {time: 1} (plus MongoDB's own {tags: 1, time: 1}); "
            "nameless iot rows: tags {name: null}"
        ),
    )

    def render(self, query: LogicalQuery) -> str:
        return dialect.render(query, self.use_case.entity_key)


TARGET = MongoNaiveTarget
