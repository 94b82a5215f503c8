"""Arrow batches → Python values for BSON documents, built column-wise (shared by both layouts).

Per-row values come from whole-column conversions (``numpy.tolist`` / ``pyarrow.Array.to_pylist``,
both in native code); the layouts then zip them into documents, one Python step per row and none
per cell. Times become naive ``datetime`` objects, which pymongo encodes as BSON dates in UTC:
BSON dates hold milliseconds, so a batch whose times are not whole milliseconds is refused.

A *series* is one entity plus the measurement's extra tags (e.g. ``host_3`` + ``path=/`` +
``fstype=ext4`` for ``disk``); ``series_keys`` holds its tag values, the entity key first. In a use
case with ``nameless_rows`` (iot) a row may lack the entity key: its series key holds ``None`` there
(one series of all nameless rows), and it has no entity tags. Anywhere else a null tag is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.targets.base import TargetError
from tsbench.workload.usecases import UseCase

NS_PER_MS = 1_000_000


def _codes(column: pa.Array | pa.ChunkedArray, nullable: bool = False) -> tuple[np.ndarray, list[str | None]]:
    """``(code per row, value per code)`` of a tag column (dictionary-encoded or plain strings).

    A null row gets the code ``len(dictionary)``, whose value is ``None`` — only where ``nullable``;
    otherwise a null (row or dictionary value) raises TargetError.
    """
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type) or column.dictionary.null_count:
        column = pc.dictionary_encode(column.cast(pa.string()))  # every null a null index
    if column.null_count and not nullable:
        raise TargetError(f"a tag column has {column.null_count} null values; tags must be set")
    values: list[str | None] = column.dictionary.to_pylist()
    indices = column.indices
    if indices.null_count:
        indices, values = indices.fill_null(len(values)), [*values, None]
    return indices.to_numpy(zero_copy_only=False).astype(np.int64), values


def python_values(column: pa.Array) -> list[Any]:
    """A column as a list of Python values (None for null), converted in native code."""
    if column.null_count or not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return column.to_pylist()
    return column.to_numpy(zero_copy_only=False).tolist()


def datetimes(ms: np.ndarray) -> list[datetime]:
    """Milliseconds since the epoch → naive UTC datetimes (exact; numpy converts in native code)."""
    return ms.astype("datetime64[ms]").tolist()


@dataclass(frozen=True)
class ShapedBatch:
    """One batch of one measurement, ready to become documents.

    ``times_ms`` (int64, ms since the epoch) and ``series`` (index into ``series_keys``) are per row;
    ``columns`` holds the field columns as Arrow arrays (converted to Python by ``values``).
    """

    measurement: str
    times_ms: np.ndarray
    series: np.ndarray
    series_keys: list[dict[str, str | None]]
    columns: dict[str, pa.Array]

    @property
    def rows(self) -> int:
        return len(self.times_ms)

    def values(self, order: np.ndarray | None = None) -> tuple[list[datetime], list[list[Any]]]:
        """Row times and field values (one list per field, in field order), optionally reordered."""
        times_ms = self.times_ms if order is None else self.times_ms[order]
        columns = self.columns.values() if order is None else (c.take(order) for c in self.columns.values())
        return datetimes(times_ms), [python_values(c) for c in columns]


class BatchShaper:
    """Knows the use case's entities and measurements; shapes their Arrow batches."""

    def __init__(self, use_case: UseCase, tags: pa.Table):
        self.use_case = use_case
        self.key = use_case.entity_key
        others = [t for t in use_case.entity_tags if t != self.key]
        self.entity_tags: dict[str, dict[str, str]] = {
            row[self.key]: {t: row[t] for t in others} for row in tags.select([self.key, *others]).to_pylist()
        }
        self.fields = {m.name: m.field_names for m in use_case.measurements}
        self.extra_tags = {m.name: m.extra_tags for m in use_case.measurements}

    def tags_of(self, entity: str | None) -> dict[str, str]:
        """The entity's tags other than its name (TargetError for an entity the tags table lacks);
        none (``{}``) for ``None``, the entity of nameless rows."""
        if entity is None:
            return {}
        try:
            return self.entity_tags[entity]
        except KeyError:
            raise TargetError(f"mongodb: entity {entity!r} is not in the dataset's tags table") from None

    def field_names(self, measurement: str) -> Sequence[str]:
        try:
            return self.fields[measurement]
        except KeyError:
            raise TargetError(f"mongodb: use case {self.use_case.name!r} has no {measurement!r}") from None

    def shape(self, measurement: str, batch: pa.RecordBatch) -> ShapedBatch:
        names = self.field_names(measurement)
        time_ns = pc.cast(batch.column("time"), pa.int64()).to_numpy(zero_copy_only=False)
        off_ms = np.flatnonzero(time_ns % NS_PER_MS)
        if len(off_ms):
            raise TargetError(
                f"mongodb: {len(off_ms)} {measurement} rows have times that are not whole milliseconds "
                f"(first: {int(time_ns[off_ms[0]])} ns); BSON dates hold milliseconds"
            )
        tag_names = (self.key, *self.extra_tags[measurement])
        nameless = self.use_case.nameless_rows  # only the entity key (first) may be null
        coded = [_codes(batch.column(name), i == 0 and nameless) for i, name in enumerate(tag_names)]
        if len(coded) == 1:
            series, (values,) = coded[0][0], [coded[0][1]]
            keys = [{self.key: value} for value in values]
        else:
            stacked = np.stack([codes for codes, _ in coded], axis=1)
            unique, series = np.unique(stacked, axis=0, return_inverse=True)
            series = series.reshape(-1)
            keys = [
                {name: coded[i][1][code] for i, (name, code) in enumerate(zip(tag_names, row, strict=True))}
                for row in unique.tolist()
            ]
        columns = {name: batch.column(name) for name in names}
        return ShapedBatch(measurement, time_ns // NS_PER_MS, series, keys, columns)
