"""Arrow batch → the column arrays of one GridDB multi-put (no per-row or per-cell Python).

A batch holds rows of many entities (TSBS order: by epoch, then entity). The payload groups them by
container with one stable sort of the entity codes, so each container gets its rows in batch order;
``Bulk.rows`` (Java) then builds the GridDB rows from these arrays and ``GridStore.multiPut`` sends
them all in as few requests as the client can.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.base import TargetError
from tsbench.targets.griddb.layout import LONG, MILLIS_PER_NS, STRING, TIME, Layout, container_name


@dataclass
class StringColumn:
    """A STRING column as a dictionary and one code per row."""

    dictionary: list[str]
    codes: np.ndarray  # int32


@dataclass
class Payload:
    """One multi-put: rows ``offsets[i]:offsets[i + 1]`` go to ``containers[i]`` (entity ``entities[i]``).

    ``millis`` are the row keys (ms since the epoch); ``values`` follow ``layout.columns``: int64 or
    float64 arrays (0 where null) or ``StringColumn``; ``nulls`` is None or a bool mask per column.
    """

    layout: Layout
    containers: list[str]
    entities: list[str]
    offsets: np.ndarray  # int32, len(containers) + 1
    millis: np.ndarray  # int64
    values: list[np.ndarray | StringColumn]
    nulls: list[np.ndarray | None]

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


def shape(layout: Layout, entity_key: str, batch: pa.RecordBatch) -> Payload:
    """Group ``batch`` (a measurement's Arrow schema) into one payload per container."""
    entity_codes, entity_names = _codes(batch.column(entity_key))
    if (entity_codes < 0).any():
        raise TargetError(f"griddb: a {layout.measurement} row has no {entity_key}")
    order = np.argsort(entity_codes, kind="stable")
    sorted_codes = entity_codes[order]
    present, starts = np.unique(sorted_codes, return_index=True)
    offsets = np.append(starts, sorted_codes.size).astype(np.int32)
    entities = [entity_names[code] for code in present]
    millis = _millis(batch.column(TIME))[order]
    values: list[np.ndarray | StringColumn] = []
    nulls: list[np.ndarray | None] = []
    for column in layout.columns:
        data = batch.column(column.name)
        if column.kind == STRING:
            codes, dictionary = _codes(data)
            null = codes < 0
            values.append(StringColumn(dictionary, np.maximum(codes, 0)[order]))
            nulls.append(null[order] if null.any() else None)
        else:
            numbers, null = _numbers(data, column.kind)
            values.append(numbers[order])
            nulls.append(None if null is None else null[order])
    return Payload(
        layout=layout,
        containers=[container_name(layout.measurement, entity) for entity in entities],
        entities=entities,
        offsets=offsets,
        millis=millis,
        values=values,
        nulls=nulls,
    )
