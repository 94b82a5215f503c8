"""Typed columns from parsed text, queued per measurement and written as Parquet parts.

Both parsers hand over a ``ParsedChunk`` (rows with their series, values with their row and field
slot, all still text); ``ColumnWriter.assemble`` casts the values to the measurement's field types,
keeps rows without an entity key with a null key where the use case has such rows (TSBS's nameless
iot points, counted as ``nameless``) and drops them otherwise (counted as skipped), and queues them.
A measurement's queued rows become one Parquet part of the dataset every ``PART_ROWS`` rows. While
writing it keeps the time range and a sample of the gaps between an entity's timestamps, from which
``interval`` derives the dataset's interval: the smallest positive gap when every observed gap is a
multiple of it (regular data), else the most common gap (irregular data).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.progress import Progress
from tsbench.workload.dataset import DatasetWriter
from tsbench.workload.tsbs.formats import TIMESCALEDB_FORMAT, tag_fields_of
from tsbench.workload.tsbs.series import ImportState, SeriesInfo
from tsbench.workload.usecases import Measurement

PART_ROWS = 1 << 20  # rows per Parquet part written by an import
DEFAULT_INTERVAL_NS = 10_000_000_000  # TSBS's default, used when no entity has two timestamps


@dataclass
class ParsedChunk:
    """A chunk's rows as a parser split them, values still text: per row and per value ("item")."""

    infos: list[SeriesInfo]  # the chunk's distinct series
    codes: np.ndarray  # row → index into infos
    row_measurement: np.ndarray  # row → index into the use case's measurements
    times: pa.Array  # row → timestamp, int64 ns
    item_line: np.ndarray  # item → its row
    item_slot: np.ndarray  # item → first slot of its measurement (``slot_base``) + index of its field
    values: pa.Array  # item → its text
    numbers: np.ndarray  # row → its 1-based line number in the file
    text: Callable[[int], str]  # row → its text, for error messages


@dataclass
class _Pending:
    """Rows of one measurement waiting to be written as one Parquet part."""

    times: list[np.ndarray] = field(default_factory=list)
    entities: list[np.ndarray] = field(default_factory=list)
    extras: list[list[np.ndarray]] = field(default_factory=list)
    fields: list[list[pa.Array]] = field(default_factory=list)
    rows: int = 0


class ColumnWriter(ImportState):
    """Turns parsed chunks into the dataset's Parquet parts (see the module docstring)."""

    def __init__(self, path: Path, fmt: str, use_case: str | None, progress: Progress | None):
        super().__init__(path, fmt, use_case, progress)
        self.pending: dict[str, _Pending] = {}
        # statistics
        self.time_min: int | None = None
        self.time_max: int | None = None
        self.gaps: Counter[int] = Counter()

    def slot_base(self) -> np.ndarray:
        """Each measurement's first slot: slots number the use case's fields, measurement by measurement."""
        assert self.use_case is not None
        return np.cumsum([0] + [len(m.fields) for m in self.use_case.measurements])

    def assemble(self, chunk: ParsedChunk) -> None:
        """Per measurement: typed columns for the chunk's rows, queued for writing."""
        assert self.use_case is not None
        row_entity = np.array([s.entity for s in chunk.infos], np.int64)[chunk.codes]
        times = chunk.times.to_numpy(zero_copy_only=False)
        slot_base = self.slot_base()
        n_slots = int(slot_base[-1])
        narrow = chunk.item_slot.astype(np.int16) if n_slots < 32_000 else chunk.item_slot  # radix sort
        order = np.argsort(narrow, kind="stable")
        bounds = np.searchsorted(chunk.item_slot[order], np.arange(n_slots + 1))
        position = np.empty(len(chunk.row_measurement), np.int64)
        tag_fields = tag_fields_of(self.use_case) if self.fmt == TIMESCALEDB_FORMAT else ()
        for mi, m in enumerate(self.use_case.measurements):
            rows = np.flatnonzero(chunk.row_measurement == mi)
            if not rows.size:
                continue
            position[rows] = np.arange(rows.size)
            columns: list[pa.Array] = []
            for j, (name, kind) in enumerate(m.fields):
                slot = int(slot_base[mi]) + j
                if name in tag_fields:
                    columns.append(
                        self.tag_field_column(chunk.infos, chunk.codes[rows], tag_fields.index(name))
                    )
                    continue
                chosen = order[bounds[slot] : bounds[slot + 1]]
                columns.append(self.field_column(chunk, m, name, kind, chosen, position, rows.size))
            self.queue_attributed(chunk, m, rows, row_entity[rows], times[rows], columns)

    def field_column(
        self,
        chunk: ParsedChunk,
        m: Measurement,
        name: str,
        kind: pa.DataType,
        chosen: np.ndarray,
        position: np.ndarray,
        n_rows: int,
    ) -> pa.Array:
        """Field ``name`` of the measurement's ``n_rows`` rows, typed, null where a row has no value.

        ``chosen`` are the field's items (in row order), ``position`` maps a chunk row to its row
        among the measurement's rows.
        """
        if not chosen.size:
            return pa.nulls(n_rows, kind)
        numbers, text = chunk.numbers, chunk.text
        owners = chunk.item_line[chosen]
        twice = np.flatnonzero(np.diff(owners) == 0)
        if twice.size:
            i = int(owners[twice[0]])
            raise self.fail(int(numbers[i]), f"field {name!r} appears twice", text(i))
        strings = chunk.values.take(pa.array(chosen))
        if self.fmt == TIMESCALEDB_FORMAT:  # an empty value is a missing one (influx: not a number)
            empty = pc.equal(strings, "")
            if empty.true_count:
                strings = pc.if_else(empty, pa.scalar(None, pa.string()), strings)
        typed = self.cast(
            strings,
            kind,
            f"{m.name} field {name}",
            lambda i, o=owners: (int(numbers[o[i]]), text(int(o[i]))),
        )
        if chosen.size == n_rows and typed.null_count == 0:
            return typed
        dense = np.zeros(n_rows, np.int64 if pa.types.is_integer(kind) else np.float64)
        missing = np.ones(n_rows, bool)
        where = position[owners]
        filled = typed.is_valid().to_numpy(zero_copy_only=False)
        dense[where[filled]] = typed.filter(typed.is_valid()).to_numpy(zero_copy_only=False)
        missing[where[filled]] = False
        return pa.array(dense, kind, mask=missing)

    def queue_attributed(
        self,
        chunk: ParsedChunk,
        m: Measurement,
        rows: np.ndarray,
        entities: np.ndarray,
        times: np.ndarray,
        columns: list[pa.Array],
    ) -> None:
        """Queue the measurement's ``rows``; rows without an entity (-1) are kept (nameless) where the
        use case has such rows, else dropped and counted as skipped."""
        extras = [
            np.array([s.extras[k] if k < len(s.extras) else -1 for s in chunk.infos], np.int64)[
                chunk.codes[rows]
            ]
            for k in range(len(m.extra_tags))
        ]
        attributed = entities >= 0
        if self.use_case.nameless_rows:
            self.nameless += int((~attributed).sum())
        elif not attributed.all():
            self.skipped += int((~attributed).sum())
            keep = pa.array(attributed)
            entities, times = entities[attributed], times[attributed]
            extras = [e[attributed] for e in extras]
            columns = [c.filter(keep) for c in columns]
        if not entities.size:
            return
        self.queue(m.name, times, entities, extras, columns)

    def tag_field_column(self, infos: list[SeriesInfo], codes: np.ndarray, k: int) -> pa.Array:
        per_series = [s.tag_fields[k] for s in infos]
        values = np.array([v if v is not None else 0.0 for v in per_series], np.float64)[codes]
        missing = np.array([v is None for v in per_series], bool)[codes]
        return pa.array(values, pa.float64(), mask=missing if missing.any() else None)

    def queue(
        self,
        name: str,
        times: np.ndarray,
        entities: np.ndarray,
        extras: list[np.ndarray],
        columns: list[pa.Array],
    ) -> None:
        pending = self.pending.setdefault(name, _Pending())
        pending.times.append(times)
        pending.entities.append(entities)
        pending.extras.append(extras)
        pending.fields.append(columns)
        pending.rows += len(times)
        low, high = int(times.min()), int(times.max())
        self.time_min = low if self.time_min is None else min(self.time_min, low)
        self.time_max = high if self.time_max is None else max(self.time_max, high)
        if self.progress:
            self.progress.update(len(times))
        if pending.rows >= PART_ROWS:
            self.flush(name)

    def flush(self, name: str) -> None:
        pending = self.pending.pop(name, None)
        if pending is None or not pending.rows:
            return
        assert self.use_case is not None and self.final is not None
        m = self.use_case.measurement(name)
        times = np.concatenate(pending.times)
        entities = np.concatenate(pending.entities)
        named = entities >= 0
        self.observe_gaps(times[named], entities[named])
        present = np.zeros(len(self.entity_names), bool)
        present[entities[named]] = True
        used = np.flatnonzero(present)
        remap = np.cumsum(present) - 1
        entity_column = pa.DictionaryArray.from_arrays(
            pa.array(remap[entities].astype(np.int32), mask=None if named.all() else ~named),
            pa.array([self.entity_names[i] for i in used], pa.string()),
        )
        columns: list[pa.Array] = [pa.array(times, pa.timestamp("ns", tz="UTC")), entity_column]
        for k, tag in enumerate(m.extra_tags):
            ids = np.concatenate([e[k] for e in pending.extras])
            values = self.extra_values[(name, tag)]
            present = np.zeros(len(values), bool)
            present[ids] = True
            used = np.flatnonzero(present)
            remap = np.cumsum(present) - 1
            columns.append(
                pa.DictionaryArray.from_arrays(
                    pa.array(remap[ids].astype(np.int32)), pa.array([values[i] for i in used], pa.string())
                )
            )
        for j in range(len(m.fields)):
            columns.append(pa.concat_arrays([f[j] for f in pending.fields]))
        batch = pa.RecordBatch.from_arrays(columns, schema=self.use_case.row_schema(m.name))
        if self.writer is None:
            self.writer = DatasetWriter(self.final, self.use_case)
        self.writer.write(name, batch)

    def observe_gaps(self, times: np.ndarray, entities: np.ndarray) -> None:
        """Gaps between consecutive distinct timestamps of one entity, on a sample of entities."""
        step = max(1, min(len(self.entity_names), len(times) // 200_000))
        if step > 1:
            sample = entities % step == 0
            times, entities = times[sample], entities[sample]
        if len(times) < 2:
            return
        order = np.lexsort((times, entities))
        times, entities = times[order], entities[order]
        gaps = np.diff(times)
        gaps = gaps[(np.diff(entities) == 0) & (gaps > 0)]
        if gaps.size:
            values, counts = np.unique(gaps, return_counts=True)
            self.gaps.update(dict(zip(values.tolist(), counts.tolist(), strict=True)))
            if len(self.gaps) > 100_000:
                self.gaps = Counter(dict(self.gaps.most_common(10_000)))

    def tags_table(self) -> pa.Table:
        assert self.use_case is not None
        order = sorted(range(len(self.entity_names)), key=lambda i: _natural_key(self.entity_names[i]))
        columns = {
            tag: pa.array([self.entity_tags[i][j] or "" for i in order], pa.string())
            for j, tag in enumerate(self.use_case.entity_tags)
        }
        return pa.table(columns, schema=self.use_case.tags_schema())

    def interval(self) -> int:
        if not self.gaps:
            return DEFAULT_INTERVAL_NS
        smallest = min(self.gaps)
        if all(gap % smallest == 0 for gap in self.gaps):
            return smallest
        return self.gaps.most_common(1)[0][0]


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _natural_key(name: str) -> tuple[str, int, str]:
    match = _NUMBERED.match(name)
    if match:
        return match.group(1), int(match.group(2)), name
    return name, -1, name
