"""The naive layout: one document per row (event) in a MongoDB time-series collection.

Document (cpu)::

    {"time": ISODate("2016-01-01T00:00:00Z"),
     "tags": {"hostname": "host_0", "region": "eu-central-1", …, "service_environment": "test"},
     "usage_user": 58, "usage_system": 2, …, "usage_guest_nice": 38}

The collection is created with ``timeseries: {timeField: "time", metaField: "tags", granularity:
"seconds"}``: MongoDB stores the events of one ``tags`` value (one series) in compressed buckets
(up to one hour and 1,000 events each at this granularity) and unpacks them for queries. ``tags``
holds the entity's tags and the measurement's extra tags (e.g. ``path``, ``fstype``). A null field
(iot) is stored as null; a nameless row (iot, no truck) has ``tags: {name: null}`` — one series of
all nameless rows, each its own document. Writes are ``insert_many(ordered=False)``: plain inserts,
so a batch sent twice is stored twice — ``create_schema`` drops everything first, and a failed load
is retried whole.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from pymongo.collection import Collection

from tsbench.targets.mongodb.layout import IndexSpec, Layout
from tsbench.targets.mongodb.shaping import BatchShaper, ShapedBatch
from tsbench.workload.usecases import Measurement

META = "tags"


def event_documents(shaper: BatchShaper, shaped: ShapedBatch) -> list[dict[str, Any]]:
    """One document per row, in batch order. Each series' ``tags`` dict is built once and shared by
    its documents (pymongo encodes every document on its own, so sharing is safe)."""
    metas = np.empty(len(shaped.series_keys), dtype=object)
    for index, key in enumerate(shaped.series_keys):
        entity = {shaper.key: key[shaper.key], **shaper.tags_of(key[shaper.key])}
        metas[index] = {**entity, **key}
    times, columns = shaped.values()
    names = ("time", META, *shaped.columns)
    # Columns have one value per row by construction; strict zips would cost a third of this loop.
    rows = zip(times, metas[shaped.series].tolist(), *columns, strict=False)
    return [dict(zip(names, row, strict=False)) for row in rows]


class EventLayout(Layout):
    name: ClassVar[str] = "one document per event (time-series collection)"

    def indexes(self, measurement: Measurement) -> list[IndexSpec]:
        # MongoDB (6.3+) creates {tags: 1, time: 1} on its own. Ours: host + time windows and
        # lastpoint (time descending, MongoDB's recommendation for "last point" queries), and
        # time-only windows over all hosts. Both index buckets, not events.
        return [[(f"{META}.{self.shaper.key}", 1), ("time", -1)], [("time", 1)]]

    def collection_options(self, measurement: Measurement) -> dict[str, Any]:
        return {"timeseries": {"timeField": "time", "metaField": META, "granularity": "seconds"}}

    def documents(self, measurement: str, batch: pa.RecordBatch) -> list[dict[str, Any]]:
        return event_documents(self.shaper, self.shaper.shape(measurement, batch))

    def write(self, collection: Collection, measurement: str, batch: pa.RecordBatch) -> int:
        documents = self.documents(measurement, batch)
        if not documents:
            return 0
        return len(collection.insert_many(documents, ordered=False).inserted_ids)

    def count(self, collection: Collection) -> int:
        return int(collection.count_documents({}))
