"""The recommended layout: one document per series (host + extra tags) per UTC hour.

Document (cpu)::

    {"_id": {"hostname": "host_0", "hour": ISODate("2016-01-01T00:00:00Z")},
     "tags": {"region": "eu-central-1", "datacenter": "eu-central-1a", …},
     "events": [{"time": ISODate("2016-01-01T00:00:00Z"), "usage_user": 58, …, "usage_guest_nice": 38},
                {"time": ISODate("2016-01-01T00:00:10Z"), …}, …]}

A measurement with extra tags (e.g. ``disk``) has them in ``_id`` after the entity key, so each of its
series gets its own documents. A batch rarely holds a whole hour of a series, so every document is
written as an upsert keyed by ``_id``: ``$setOnInsert`` the tags, ``$addToSet`` + ``$each`` the events.
``$addToSet`` makes a write idempotent: a batch sent twice (or two batches overlapping) never stores an
event twice, because an event equal to one already in the array is skipped. The events one upsert
appends are in time order; across batches they stay in arrival order (late rows, as in iot, are not
moved into place — no query depends on the order inside a document).

Nameless rows (iot points without ``name``: no truck, no tags) go into one document per hour (and
extra tags) whose ``_id`` holds ``name: null`` and whose ``tags`` is ``{}``. Its events come from many
trucks, so two of them may be equal (same time, same field values, e.g. both without any field), and
``$addToSet`` would keep one of them: that document's events are appended with ``$push``, which keeps
every row. The price: a batch sent twice stores its nameless rows twice (nothing resends a batch —
pymongo does not retry writes against a standalone server, and a failed load is retried whole after
``create_schema`` dropped everything).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
from pymongo import UpdateOne
from pymongo.collection import Collection

from tsbench.targets.mongodb.layout import IndexSpec, Layout
from tsbench.targets.mongodb.shaping import BatchShaper, ShapedBatch, datetimes
from tsbench.workload.usecases import Measurement

MS_PER_HOUR = 3_600_000
Update = tuple[dict[str, Any], dict[str, Any]]


def hour_updates(shaper: BatchShaper, shaped: ShapedBatch) -> list[Update]:
    """``(filter, update)`` per (series, hour) document the batch touches, each an upsert:
    ``$addToSet`` the events (``$push`` for the nameless series, see the module docstring).

    Rows are grouped with one sort by (series, hour, time); event dicts are built once per row.
    """
    if not shaped.rows:
        return []
    hour_ms = shaped.times_ms - shaped.times_ms % MS_PER_HOUR  # floor to the UTC hour (epoch-aligned)
    hours, hour_index = np.unique(hour_ms, return_inverse=True)
    hour_index = hour_index.reshape(-1)
    document = shaped.series * len(hours) + hour_index
    order = np.lexsort((shaped.times_ms, document))
    grouped = document[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    ends = np.r_[starts[1:], len(grouped)]
    times, columns = shaped.values(order)
    names = ("time", *shaped.columns)
    # Columns have one value per row by construction; strict zips would cost a third of this loop.
    events = [dict(zip(names, row, strict=False)) for row in zip(times, *columns, strict=False)]
    hour_dates = datetimes(hours)
    updates = []
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        row = order[start]
        key = shaped.series_keys[shaped.series[row]]
        identity = {**key, "hour": hour_dates[hour_index[row]]}
        entity = key[shaper.key]
        append = "$addToSet" if entity is not None else "$push"
        update = {
            "$setOnInsert": {"tags": shaper.tags_of(entity)},
            append: {"events": {"$each": events[start:end]}},
        }
        updates.append(({"_id": identity}, update))
    return updates


class HourlyLayout(Layout):
    name: ClassVar[str] = "one document per series per hour (events array)"

    def indexes(self, measurement: Measurement) -> list[IndexSpec]:
        # Host + time windows (and lastpoint's newest document per host), then time-only windows over
        # all hosts. The compound index descends in time so that "$sort hostname, hour desc" +
        # "$group $first" can read the newest document of every host from the index.
        return [[(f"_id.{self.shaper.key}", 1), ("_id.hour", -1)], [("_id.hour", 1)]]

    def collection_options(self, measurement: Measurement) -> dict[str, Any]:
        return {}

    def updates(self, measurement: str, batch: pa.RecordBatch) -> list[Update]:
        return hour_updates(self.shaper, self.shaper.shape(measurement, batch))

    def write(self, collection: Collection, measurement: str, batch: pa.RecordBatch) -> int:
        updates = self.updates(measurement, batch)
        if updates:
            collection.bulk_write([UpdateOne(f, u, upsert=True) for f, u in updates], ordered=False)
        return batch.num_rows

    def count(self, collection: Collection) -> int:
        found = list(
            collection.aggregate([{"$group": {"_id": None, "rows": {"$sum": {"$size": "$events"}}}}])
        )
        return int(found[0]["rows"]) if found else 0
