"""Parsing TSBS's influx format (line protocol): ``<series> <fields> <timestamp>`` per line.

Line-protocol escapes (a backslash before a comma or space) and string or boolean fields do not
occur in TSBS files and are not supported (the line is reported). An empty line is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.workload.tsbs.columns import ColumnWriter, ParsedChunk
from tsbench.workload.tsbs.reader import has_empty
from tsbench.workload.tsbs.series import Problem, SeriesInfo

_INT_SUFFIXES = "iu"


@dataclass
class InfluxChunk:
    """A chunk of influx lines split into parts, done on the reader's thread (no importer state)."""

    series: pa.Array  # "<measurement>,<tag>=<value>,…" per line
    fields: pa.Array  # "<field>=<value>,…" per line
    stamps: pa.Array
    keep: np.ndarray | None  # lines kept (None: all), empty lines are dropped
    codes: np.ndarray  # series → index into dictionary
    dictionary: pa.Array  # the distinct series
    per_line: np.ndarray  # tokens (keys and values) per line
    values: pa.Array  # field values, integer suffixes removed
    key_codes: np.ndarray  # field name of each value → index into key_names
    key_names: list[str]

    @classmethod
    def tokenize(cls, batch: pa.RecordBatch) -> InfluxChunk:
        series, fields, stamps = batch.columns
        keep = None
        if has_empty(series) and (blank := _all_empty(series, fields, stamps)).true_count:
            mask = pc.invert(blank)
            series, fields, stamps = series.filter(mask), fields.filter(mask), stamps.filter(mask)
            keep = mask.to_numpy(zero_copy_only=False)
        encoded = pc.dictionary_encode(series)
        # "k=v,k=v" → tokens k, v, k, v …
        tokens = pc.split_pattern(pc.replace_substring(fields, "=", ","), ",")
        flat = tokens.flatten()
        keys = flat.take(pa.array(np.arange(0, len(flat) - 1, 2, dtype=np.int64)))
        values = flat.take(pa.array(np.arange(1, len(flat), 2, dtype=np.int64)))
        key_encoded = pc.dictionary_encode(keys)
        return cls(
            series,
            fields,
            stamps,
            keep,
            encoded.indices.to_numpy(zero_copy_only=False),
            encoded.dictionary,
            pc.list_value_length(tokens).to_numpy(zero_copy_only=False),
            pc.utf8_rtrim(values, characters=_INT_SUFFIXES),
            key_encoded.indices.to_numpy(zero_copy_only=False),
            [key.decode("utf-8", "replace") for key in key_encoded.dictionary.cast(pa.binary()).to_pylist()],
        )


def _all_empty(*columns: pa.Array) -> pa.BooleanArray:
    result = pc.equal(columns[0], "")
    for column in columns[1:]:
        result = pc.and_(result, pc.equal(column, ""))
    return result


class InfluxParser(ColumnWriter):
    """Reads chunks of influx lines into the dataset."""

    def parse_influx(self, chunks: Iterator[tuple[InfluxChunk, np.ndarray]]) -> None:
        for chunk, numbers in chunks:
            self.lines += len(numbers)
            if chunk.keep is not None:
                numbers = numbers[chunk.keep]
            if len(chunk.series):
                self.influx_chunk(chunk, numbers)

    def influx_chunk(self, chunk: InfluxChunk, numbers: np.ndarray) -> None:
        series, fields, stamps = chunk.series, chunk.fields, chunk.stamps
        n = len(series)

        def text(i: int) -> str:  # line i, for error messages
            return f"{series[i].as_py()} {fields[i].as_py()} {stamps[i].as_py()}"

        times = self.cast(stamps, pa.int64(), "timestamp", lambda i: (int(numbers[i]), text(i)))
        codes, dictionary = chunk.codes, chunk.dictionary
        self.check_utf8(dictionary, codes, numbers)

        def first_row(k: int) -> tuple[int, str]:
            i = int(np.argmax(codes == k))
            return int(numbers[i]), text(i)

        infos = self.resolve_codes(dictionary.to_pylist(), self.parse_influx_series, first_row)
        row_measurement = np.array([s.measurement for s in infos], np.int64)[codes]
        per_line = chunk.per_line
        bad = np.flatnonzero((per_line % 2) != 0)
        if bad.size:
            i = int(bad[0])
            raise self.fail(int(numbers[i]), "fields must be '<field>=<value>,…'", text(i))
        values, key_codes, key_names = chunk.values, chunk.key_codes, chunk.key_names
        item_line = np.repeat(np.arange(n, dtype=np.int64), per_line // 2)
        assert self.use_case is not None
        measurements = self.use_case.measurements
        slot_base = self.slot_base()
        table = np.full((len(measurements), max(1, len(key_names))), -1, np.int64)
        for mi, m in enumerate(measurements):
            names = m.field_names
            for c, key in enumerate(key_names):
                if key in names:
                    table[mi, c] = slot_base[mi] + names.index(key)
        item_slot = table[row_measurement[item_line], key_codes] if len(key_codes) else key_codes
        unknown = np.flatnonzero(item_slot < 0)
        if unknown.size:
            item = int(unknown[0])
            i = int(item_line[item])
            m = measurements[int(row_measurement[i])]
            raise self.fail(
                int(numbers[i]),
                f"field {key_names[key_codes[item]]!r} is not a field of {self.use_case.name} "
                f"measurement {m.name}",
                text(i),
            )
        self.assemble(
            ParsedChunk(infos, codes, row_measurement, times, item_line, item_slot, values, numbers, text)
        )

    def parse_influx_series(self, text: str) -> SeriesInfo:
        measurement, *pairs = text.split(",")
        tags: dict[str, str | None] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key or not value:
                raise Problem(f"malformed tag {pair!r} (expected <tag>=<value>)")
            if key in tags:
                raise Problem(f"tag {key!r} appears twice")
            tags[key] = value
        return self.resolve(measurement, tags)
