"""Arrow batch → the column arrays of one GridDB multi-put (no per-row or per-cell Python).

A batch holds rows of many entities (TSBS order: by epoch, then entity). The payload groups them by
container with one stable sort of the entity codes, so each container gets its rows in batch order;
``Bulk.rows`` (Java) then builds the GridDB rows from these arrays and ``GridStore.multiPut`` sends
them all in as few requests as the client can. Rows without an entity (nameless iot points) form a
second payload for the measurement's nameless COLLECTION (``layout.nameless_container``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.base import TargetError
from tsbench.targets.griddb.layout import (
    LONG,
    MILLIS_PER_NS,
    STRING,
    TIME,
    Layout,
    container_name,
    nameless_container,
)


@dataclass
class StringColumn:
    """A STRING column as a dictionary and one code per row."""

    dictionary: list[str]
    codes: np.ndarray  # int32


@dataclass
class Payload:
    """Rows of one multi-put: rows ``offsets[i]:offsets[i + 1]`` go to ``containers[i]`` (entity
    ``entities[i]``; None: the measurement's rows without an entity, in its nameless COLLECTION).

    ``millis`` are the times (ms since the epoch: the row keys when ``keyed``, i.e. TIME_SERIES
    containers); ``values`` follow ``layout.columns``: int64 or float64 arrays (0 where null) or
    ``StringColumn``; ``nulls`` is None or a bool mask per column.
    """

    layout: Layout
    containers: list[str]
    entities: list[str | None]
    offsets: np.ndarray  # int32, len(containers) + 1
    millis: np.ndarray  # int64
    values: list[np.ndarray | StringColumn]
    nulls: list[np.ndarray | None]
    keyed: bool = True  # False: the nameless COLLECTION (no row key)

    @property
    def rows(self) -> int:
        return int(self.millis.size)


def _codes(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """Dictionary codes (int32, -1 for null) and the dictionary of a tag column."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    codes = column.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return codes, [str(value) for value in column.dictionary.to_pylist()]


def _millis(column: pa.Array) -> np.ndarray:
    if column.null_count:
        raise TargetError("griddb: a row has no time (the row key cannot be null)")
    nanos = column.cast(pa.int64()).to_numpy(zero_copy_only=False)
    if (nanos % MILLIS_PER_NS).any():
        raise TargetError(
            "griddb: a time is not a whole millisecond; tsbench creates TIMESTAMP row keys with GridDB's "
            "default millisecond precision and refuses to round data"
        )
    return nanos // MILLIS_PER_NS


def _numbers(column: pa.Array, kind: str) -> tuple[np.ndarray, np.ndarray | None]:
    dtype = np.int64 if kind == LONG else np.float64
    nulls = None
    if column.null_count:
        nulls = column.is_null().to_numpy(zero_copy_only=False)
        column = column.fill_null(0)
    return column.to_numpy(zero_copy_only=False).astype(dtype, copy=False), nulls


Values = np.ndarray | StringColumn


def _columns(layout: Layout, batch: pa.RecordBatch) -> list[tuple[Values, np.ndarray | None]]:
    """Every non-key column of ``layout`` as (values, null mask or None), in batch order."""
    columns: list[tuple[Values, np.ndarray | None]] = []
    for column in layout.columns:
        data = batch.column(column.name)
        if column.kind == STRING:
            codes, dictionary = _codes(data)
            null = codes < 0
            columns.append((StringColumn(dictionary, np.maximum(codes, 0)), null if null.any() else None))
        else:
            columns.append(_numbers(data, column.kind))
    return columns


def _take(values: Values, rows: np.ndarray) -> Values:
    if isinstance(values, StringColumn):
        return StringColumn(values.dictionary, values.codes[rows])
    return values[rows]


def _payload(
    layout: Layout,
    entities: list[str | None],
    offsets: np.ndarray,
    rows: np.ndarray,
    millis: np.ndarray,
    columns: list[tuple[Values, np.ndarray | None]],
) -> Payload:
    """The payload of the batch rows ``rows`` (in that order) for ``entities``' containers."""
    return Payload(
        layout=layout,
        containers=[
            nameless_container(layout.measurement)
            if entity is None
            else container_name(layout.measurement, entity)
            for entity in entities
        ],
        entities=entities,
        offsets=offsets.astype(np.int32),
        millis=millis[rows],
        values=[_take(values, rows) for values, _ in columns],
        nulls=[None if null is None else null[rows] for _, null in columns],
        keyed=entities[0] is not None,
    )


def shape(layout: Layout, entity_key: str, batch: pa.RecordBatch) -> list[Payload]:
    """``batch`` (a measurement's Arrow schema) as multi-put payloads, each container's rows in batch
    order: first one over the entities' TIME_SERIES containers (if any row has an entity), then one
    for the measurement's nameless COLLECTION (if any row has none); none for an empty batch."""
    entity_codes, entity_names = _codes(batch.column(entity_key))
    order = np.argsort(entity_codes, kind="stable")  # the nameless rows (code -1) first
    sorted_codes = entity_codes[order]
    nameless = int(np.searchsorted(sorted_codes, 0))
    millis = _millis(batch.column(TIME))
    columns = _columns(layout, batch)
    payloads = []
    if nameless < sorted_codes.size:
        present, starts = np.unique(sorted_codes[nameless:], return_index=True)
        offsets = np.append(starts, sorted_codes.size - nameless)
        entities: list[str | None] = [entity_names[code] for code in present]
        payloads.append(_payload(layout, entities, offsets, order[nameless:], millis, columns))
    if nameless:
        payloads.append(_payload(layout, [None], np.array([0, nameless]), order[:nameless], millis, columns))
    return payloads
