"""Per-batch facts the load paths share: metrics in a batch, the entity of every row."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.workload.usecases import per_row


def metric_count(batch: pa.RecordBatch, first_field: int) -> int:
    """Non-null field values in ``batch`` (fields are the columns from ``first_field`` on)."""
    return sum(batch.num_rows - batch.column(i).null_count for i in range(first_field, batch.num_columns))


def entity_ids(batch: pa.RecordBatch, key: str, names: pa.Array) -> np.ndarray:
    """Per row, the position of its entity (``key`` column) among ``names`` (the tags table's);
    0 for a row without an entity (a nameless iot point: it goes with the first entity's)."""
    column = batch.column(key)
    if isinstance(column.type, pa.DictionaryType):
        per_entry = pc.index_in(column.dictionary, value_set=names).to_numpy(zero_copy_only=False)
        return per_row(per_entry, column.indices, 0)
    return pc.index_in(column, value_set=names).fill_null(0).to_numpy(zero_copy_only=False)
