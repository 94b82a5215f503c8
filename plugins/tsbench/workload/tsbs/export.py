"""Export a dataset as a TSBS data file, as ``tsbs_generate_data`` would write it.

Rows are written in the dataset's ingestion order. With several measurements (devops, iot) they are
interleaved as TSBS does: per timestamp (epoch), each measurement in use-case order, that
measurement's rows of the epoch in their stored order (for out-of-order iot data, the running
maximum of a measurement's timestamps decides which epoch a row belongs to). The text is built with
vectorised Arrow string kernels, ``EXPORT_BATCH_ROWS`` rows at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.progress import Progress
from tsbench.workload.dataset import Dataset
from tsbench.workload.tsbs.formats import (
    INFLUX_FORMAT,
    TIMESCALEDB_FORMAT,
    Format,
    TsbsFormatError,
    check_format,
    tag_fields_of,
    timescaledb_header,
)
from tsbench.workload.tsbs.sink import Sink
from tsbench.workload.usecases import Measurement, UseCase, per_row

EXPORT_BATCH_ROWS = 1 << 16  # rows formatted at once by an export
_FORBIDDEN_IN_TAGS = r"[,= \n\r\\\"]"


def export_dataset(
    dataset: Dataset,
    fmt: Format,
    out: str | os.PathLike[str] | IO[bytes],
    progress: Progress | None = None,
) -> int:
    """Write ``dataset`` as a TSBS data file in ``fmt``; returns the number of rows written.

    ``out`` is a path (gzip-compressed when it ends with ``.gz``; written to a temporary name and
    renamed when complete) or a binary file object (written as is, not closed).
    """
    check_format(fmt)
    formatter = _Formatter(dataset.use_case, dataset.tags(), fmt)
    with Sink(out) as sink:
        if fmt == TIMESCALEDB_FORMAT:
            sink.write(timescaledb_header(dataset.use_case).encode())
        measurements = [m for m in dataset.use_case.measurements if dataset.rows.get(m.name)]
        blocks = [_formatted_blocks(dataset, m, formatter) for m in measurements]
        if len(blocks) == 1:
            written = 0
            for block in blocks[0]:
                sink.write(block.bytes(0, block.rows))
                written += block.rows
                if progress:
                    progress.update(block.rows)
            return written
        return _write_interleaved(blocks, sink, progress)


@dataclass
class _Block:
    """Formatted rows of one measurement: row i is ``data[offsets[i]:offsets[i + 1]]``."""

    lines: pa.StringArray
    running_max: np.ndarray  # running maximum of the rows' timestamps (carried across blocks)
    offsets: np.ndarray = field(init=False)
    data: memoryview = field(init=False)

    def __post_init__(self) -> None:
        offsets_buffer, data_buffer = self.lines.buffers()[1:3]
        self.offsets = np.frombuffer(offsets_buffer, np.int32, len(self.lines) + 1, self.lines.offset * 4)
        self.data = memoryview(data_buffer) if data_buffer is not None else memoryview(b"")

    @property
    def rows(self) -> int:
        return len(self.lines)

    def bytes(self, start: int, stop: int) -> memoryview:
        return self.data[self.offsets[start] : self.offsets[stop]]


def _formatted_blocks(dataset: Dataset, m: Measurement, formatter: _Formatter) -> Iterator[_Block]:
    carry = np.iinfo(np.int64).min
    for batch in dataset.iter_batches(m.name, EXPORT_BATCH_ROWS):  # a streamed dataset's regenerated
        lines, times = formatter.format(m, batch)
        if not len(lines):
            continue
        running = np.maximum.accumulate(np.maximum(times, carry))
        carry = int(running[-1])
        yield _Block(lines, running)


def _write_interleaved(streams: list[Iterator[_Block]], sink: Sink, progress: Progress | None) -> int:
    """Epoch by epoch: every measurement's rows of the epoch, in measurement order (TSBS's order)."""
    current: list[_Block | None] = [next(s, None) for s in streams]
    cursor = [0] * len(streams)
    written = 0
    while True:
        heads = [b.running_max[cursor[i]] for i, b in enumerate(current) if b is not None]
        if not heads:
            return written
        bound = int(min(heads)) + 1
        for i, stream in enumerate(streams):
            while (block := current[i]) is not None:
                start = cursor[i]
                cut = start + int(np.searchsorted(block.running_max[start:], bound))
                if cut > start:
                    sink.write(block.bytes(start, cut))
                    written += cut - start
                    if progress:
                        progress.update(cut - start)
                if cut < block.rows:
                    cursor[i] = cut
                    break
                current[i], cursor[i] = next(stream, None), 0


def _with_last(prefixes: pa.Array, nameless: str) -> pa.Array:
    """One prefix per entity, then the prefix of a row without an entity."""
    return pa.concat_arrays([prefixes.cast(pa.string()), pa.array([nameless], pa.string())])


class _Formatter:
    """Turns record batches into TSBS text with vectorised string kernels (no per-row Python)."""

    def __init__(self, use_case: UseCase, tags: pa.Table, fmt: str):
        self.use_case, self.fmt = use_case, fmt
        self.tag_fields = tag_fields_of(use_case)
        key = use_case.entity_key
        self.names = tags.column(key).combine_chunks().cast(pa.string())
        columns = {t: tags.column(t).combine_chunks().cast(pa.string()) for t in use_case.entity_tags}
        for tag, column in columns.items():
            _check_tag_values(tag, column)
        pairs = [pc.binary_join_element_wise(f"{t}=", c, "") for t, c in columns.items()]
        if fmt == INFLUX_FORMAT:  # an empty tag value stands for a missing tag: left out of the line
            pairs = [
                pc.if_else(pc.equal(c, ""), pa.scalar(None, pa.string()), p)
                for c, p in zip(columns.values(), pairs, strict=True)
            ]
            self.prefix = {
                m.name: _with_last(
                    pc.binary_join_element_wise(m.name, *pairs, ",", null_handling="skip"), m.name
                )
                for m in use_case.measurements
            }
        else:  # a nameless row: every tag present and empty, as TSBS writes a cleared tag
            common = pc.binary_join_element_wise("tags", *pairs, ",")
            nameless = ",".join(["tags", *(f"{t}=" for t in use_case.entity_tags)])
            self.prefix = {m.name: _with_last(common, nameless) for m in use_case.measurements}
        self._dictionary: pa.Array | None = None
        self._positions: np.ndarray = np.empty(0, np.int64)

    def _entity_rows(self, column: pa.Array) -> np.ndarray:
        """Row of the tags table for every row of the batch; a row without an entity (a nameless
        iot point) gets the position after the last, where each prefix holds the nameless one."""
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        dictionary = column.dictionary
        if self._dictionary is None or not dictionary.equals(self._dictionary):
            found = pc.index_in(dictionary, value_set=self.names)
            if found.null_count:
                missing = dictionary.filter(pc.is_null(found))[0].as_py()
                raise TsbsFormatError(f"entity {missing!r} has no row in the dataset's tags table")
            self._dictionary, self._positions = dictionary, found.to_numpy(zero_copy_only=False)
        return per_row(self._positions, column.indices, len(self.names))

    def format(self, m: Measurement, batch: pa.RecordBatch) -> tuple[pa.StringArray, np.ndarray]:
        """The rows' text (one element per row, newline included) and their timestamps."""
        key = self.use_case.entity_key
        times = batch.column("time").cast(pa.int64())
        stamps = pc.cast(times, pa.string())
        prefix = self.prefix[m.name].take(pa.array(self._entity_rows(batch.column(key))))
        extras = []
        for tag in m.extra_tags:
            column = batch.column(tag)
            if not pa.types.is_dictionary(column.type):
                column = pc.dictionary_encode(column)
            values = column.dictionary.cast(pa.string())
            _check_tag_values(tag, values)
            extras.append(pc.binary_join_element_wise(f",{tag}=", values, "").take(column.indices))
        fields = [(name, kind, number_strings(batch.column(name))) for name, kind in m.fields]
        times_np = times.to_numpy(zero_copy_only=False)
        if self.fmt == INFLUX_FORMAT:
            lines, keep = self._influx(m, prefix, extras, fields, stamps)
            if keep is not None:
                times_np = times_np[keep.to_numpy(zero_copy_only=False)]
            return lines, times_np
        return self._timescaledb(m, prefix, extras, fields, stamps), times_np

    def _influx(self, m, prefix, extras, fields, stamps) -> tuple[pa.StringArray, pa.BooleanArray | None]:
        if not any(values.null_count for _, _, values in fields):  # one kernel call for the row
            parts: list[Any] = [prefix, *extras]
            separator = " "
            for name, kind, values in fields:
                parts += [f"{separator}{name}=", values]
                separator = "i," if pa.types.is_integer(kind) else ","
            parts += [separator[:-1] + " ", stamps, "\n"]
            return _join(parts, ""), None
        # each present field as ",<name>=<value>", missing ones as "", then drop the first comma
        # (not null_handling="skip": pyarrow 26 drops the rows whose inputs are all null)
        pieces = [
            pc.binary_join_element_wise(f",{name}=", values, "i" if pa.types.is_integer(kind) else "", "")
            for name, kind, values in fields
        ]
        joined = pc.utf8_slice_codeunits(
            pc.binary_join_element_wise(*pieces, "", null_handling="replace", null_replacement=""), 1
        )
        keep = pc.not_equal(joined, "")
        lines = pc.binary_join_element_wise(prefix, *extras, " ", joined, " ", stamps, "\n", "")
        if keep.false_count:
            return lines.filter(keep), keep
        return lines, None

    def _timescaledb(self, m, prefix, extras, fields, stamps) -> pa.StringArray:
        parts: list[Any] = [prefix, *extras]
        for name, _, values in fields:
            if name in self.tag_fields:
                parts += [f",{name}=", values]
        parts += [f"\n{m.name},", stamps]
        for name, _, values in fields:
            if name not in self.tag_fields:
                parts += [",", values]
        parts.append("\n")
        return _join(parts, "", null_handling="replace", null_replacement="")


def _join(parts: list[Any], separator: str, **options: Any) -> pa.StringArray:
    merged: list[Any] = []
    for part in parts:  # adjacent literals become one
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return pc.binary_join_element_wise(*merged, separator, **options)


def _check_tag_values(tag: str, values: pa.Array) -> None:
    bad = pc.match_substring_regex(values, _FORBIDDEN_IN_TAGS)
    if bad.true_count:
        value = values.filter(bad)[0].as_py()
        raise TsbsFormatError(
            f"tag {tag} value {value!r} contains a character TSBS files cannot hold (comma, '=', space, "
            "quote, backslash or newline)"
        )


def number_strings(column: pa.Array) -> pa.StringArray:
    """Numbers as TSBS writes them: integers in decimal, floats in Go's shortest plain notation."""
    text = pc.cast(column, pa.string())
    if not pa.types.is_floating(column.type):
        return text
    # Arrow's shortest form switches to exponent notation for tiny and large magnitudes (1e-7,
    # 1.2345678901e+10); Go's 'f' format never does. Such values are rare: format them one by one.
    magnitude = pc.abs(column)
    odd = pc.or_(
        pc.and_(pc.less(magnitude, 1e-4), pc.not_equal(magnitude, 0)),
        pc.or_(pc.greater_equal(magnitude, 1e9), pc.is_nan(column)),
    )
    odd = pc.fill_null(odd, False)
    if not odd.true_count:
        return text
    values = text.to_pylist()
    numbers = column.to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(odd.to_numpy(zero_copy_only=False)):
        values[i] = _go_float(float(numbers[i]))
    return pa.array(values, pa.string())


def _go_float(x: float) -> str:
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return np.format_float_positional(x, unique=True, trim="-")
