"""Dataset batches → the Arrow tables the writer inserts (one row per dataset row, table column order).

The entity's tags are joined on vectorised, with no per-row Python: ``index_in`` maps the batch's
entity dictionary (a handful of values) to rows of the tags table, ``take`` maps every row's dictionary
index to its entity row, and ``take`` again maps that to the code of each tag in the tag's own
dictionary. Tags stay dictionary-encoded (Arrow ``dictionary<int32, string>``), which ClickHouse's
Arrow input reads straight into ``LowCardinality(String)``; ``time`` stays ``timestamp[ns, UTC]``,
read into ``DateTime64(9, 'UTC')`` without rounding. A nameless row (iot: null entity key) maps to no
entity row, so every entity tag of it is a null index: NULL in ``LowCardinality(Nullable(String))``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.base import TargetError
from tsbench.targets.clickhouse.schema import Column, table_columns
from tsbench.workload.usecases import UseCase


def _dictionary(values: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    return array if pa.types.is_dictionary(array.type) else pc.dictionary_encode(array)


class InsertShaper:
    """Shapes batches of one use case for ``insert_arrow`` (see the module docstring)."""

    def __init__(self, use_case: UseCase, tags: pa.Table):
        self.use_case = use_case
        self.key = use_case.entity_key
        self.entities = tags.column(self.key).combine_chunks().cast(pa.string())
        # Per entity row: the code of each tag value in that tag's dictionary.
        self.entity_tags = {
            name: _dictionary(tags.column(name)) for name in use_case.entity_tags if name != self.key
        }
        self.columns: dict[str, list[Column]] = {
            m.name: table_columns(m, use_case) for m in use_case.measurements
        }

    def entity_rows(self, keys: pa.Array) -> pa.Array:
        """For every row, its entity's row in the tags table, or null for a row without a key (a
        nameless row: only in a use case with ``nameless_rows``, else TargetError). TargetError
        names entities the tags table lacks."""
        keys = _dictionary(keys)
        dictionary = keys.dictionary.cast(pa.string())
        position = pc.index_in(dictionary, value_set=self.entities)
        rows = pc.take(position, keys.indices)
        if not rows.null_count:
            return rows
        unknown = pc.and_(pc.is_null(position), pc.is_valid(dictionary))  # per dictionary entry
        used = pc.filter(keys.indices, pc.take(unknown, keys.indices))  # a null index is no entity
        if len(used):
            names = pc.unique(pc.take(dictionary, used))
            raise TargetError(
                f"clickhouse: {len(names)} {self.key} value(s) of the batch are not in the tags table, "
                f"e.g. {names[:3].to_pylist()}"
            )
        if not self.use_case.nameless_rows:
            raise TargetError(
                f"clickhouse: {rows.null_count} row(s) of the batch have no {self.key} "
                f"(use case {self.use_case.name!r} has no nameless rows)"
            )
        return rows

    def shape(self, measurement: str, batch: pa.RecordBatch | pa.Table) -> pa.Table:
        """The insert table for ``batch`` of ``measurement``: the table's columns, in its order."""
        try:
            columns = self.columns[measurement]
        except KeyError:
            raise TargetError(f"clickhouse: use case {self.use_case.name!r} has no {measurement!r}") from None
        rows = self.entity_rows(batch.column(self.key))
        arrays: list[pa.Array] = []
        for column in columns:
            if column.name in self.entity_tags:
                tag = self.entity_tags[column.name]
                arrays.append(pa.DictionaryArray.from_arrays(pc.take(tag.indices, rows), tag.dictionary))
                continue
            array = batch.column(column.name)
            if isinstance(array, pa.ChunkedArray):
                array = array.combine_chunks()
            if array.null_count and not column.nullable:
                raise TargetError(
                    f"clickhouse: {measurement}.{column.name} has {array.null_count} null(s) but the column "
                    f"is {column.type} (ClickHouse would store 0 in their place)"
                )
            arrays.append(array)
        return pa.Table.from_arrays(arrays, names=[c.name for c in columns])
