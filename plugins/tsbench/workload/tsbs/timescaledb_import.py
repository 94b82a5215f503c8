"""Parsing TSBS's timescaledb format: a header, then pairs of a ``tags`` line and a data line.

The header (``tags,<tag> <type>,…``, one ``<measurement>,<field>,…`` line per measurement, an empty
line) fixes each measurement's data columns; every row is a ``tags,<tag>=<value>,…`` line followed by
``<measurement>,<timestamp>,<value>,…``. An empty value is a missing one, as TSBS writes nil values.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tsbench.progress import Progress
from tsbench.workload.tsbs.columns import ColumnWriter, ParsedChunk
from tsbench.workload.tsbs.formats import tag_fields_of
from tsbench.workload.tsbs.reader import has_empty
from tsbench.workload.tsbs.series import Problem, SeriesInfo


class TimescaledbParser(ColumnWriter):
    """Reads chunks of timescaledb-format lines into the dataset."""

    def __init__(self, path: Path, fmt: str, use_case: str | None, progress: Progress | None):
        super().__init__(path, fmt, use_case, progress)
        # timescaledb header: measurement -> field index (into Measurement.fields) per data column
        self.columns: dict[str, list[int]] = {}

    def read_header(self, lines: list[str]) -> None:
        """Parse the header lines (without the empty line that ends them)."""
        tag_line, *measurement_lines = lines
        number = 1
        tags = tag_line.split(",")
        if tags[0] != "tags":
            raise self.fail(1, "the timescaledb header must start with 'tags,<tag> <type>,…'", tag_line)
        declared = [t.partition(" ")[0] for t in tags[1:]]
        if not measurement_lines:
            raise self.fail(2, "the timescaledb header lists no measurement")
        for number, text in enumerate(measurement_lines, start=2):
            name, *fields = text.split(",")
            try:
                index = self.measurement_index(name)
            except Problem as problem:
                raise self.fail(number, str(problem), text) from None
            assert self.use_case is not None
            m = self.use_case.measurements[index]
            tag_fields = tag_fields_of(self.use_case)
            columns = []
            for f in fields:
                if f not in m.field_names or f in tag_fields:
                    raise self.fail(
                        number, f"{f!r} is not a field of {self.use_case.name} measurement {name}", text
                    )
                columns.append(m.field_names.index(f))
            self.columns[name] = columns
        assert self.use_case is not None
        known = set(self.use_case.entity_tags) | set(tag_fields_of(self.use_case))
        strange = [t for t in declared if t not in known]
        if strange or self.use_case.entity_key not in declared:
            problem = f"unknown tag {strange[0]!r}" if strange else f"no {self.use_case.entity_key} tag"
            raise self.fail(1, f"{problem} for use case {self.use_case.name}", tag_line)

    def parse_timescaledb(self, chunks: Iterator[tuple[pa.StringArray, np.ndarray]]) -> None:
        carry: tuple[pa.Array, np.ndarray] | None = None
        header: list[str] | None = []
        for lines, numbers in chunks:
            self.lines += len(lines)
            if header is not None:  # the header ends at the first empty line
                empty = pc.equal(lines, "").to_numpy(zero_copy_only=False)
                end = int(np.argmax(empty)) if empty.any() else len(lines)
                header += lines.slice(0, end).to_pylist()
                if end == len(lines):
                    continue
                self.read_header(header)
                header = None
                lines, numbers = lines.slice(end + 1), numbers[end + 1 :]
            if has_empty(lines):
                keep = pc.not_equal(lines, "")
                lines, numbers = lines.filter(keep), numbers[keep.to_numpy(zero_copy_only=False)]
            if carry is not None:
                lines = pa.concat_arrays([carry[0], lines])
                numbers = np.concatenate([carry[1], numbers])
                carry = None
            if len(lines) % 2:
                carry = (lines.slice(len(lines) - 1), numbers[-1:])
                lines, numbers = lines.slice(0, len(lines) - 1), numbers[:-1]
            if len(lines):
                self.timescaledb_chunk(lines, numbers)
        if header is not None:
            raise self.fail(len(header) + 1, "the file ends inside the timescaledb header (no empty line)")
        if carry is not None:
            raise self.fail(
                int(carry[1][0]), "a tags line without its data line at the end", carry[0][0].as_py()
            )

    def timescaledb_chunk(self, lines: pa.StringArray, numbers: np.ndarray) -> None:
        """Rows from an even number of lines (header and empty lines removed): tags line, data line."""
        n = len(lines) // 2
        even = pa.array(np.arange(0, 2 * n, 2, dtype=np.int64))
        tag_lines, data_lines = lines.take(even), lines.take(pc.add(even, 1))
        tag_numbers, data_numbers = numbers[0::2], numbers[1::2]
        is_tags = pc.or_(pc.starts_with(tag_lines, "tags,"), pc.equal(tag_lines, "tags"))
        if is_tags.false_count:
            i = int(np.argmin(is_tags.to_numpy(zero_copy_only=False)))
            raise self.fail(
                int(tag_numbers[i]),
                "expected a 'tags,<tag>=<value>,…' line (rows are pairs of a tags line and a data line)",
                tag_lines[i].as_py(),
            )
        parts = pc.split_pattern(data_lines, ",")
        per_line = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
        starts = parts.offsets.to_numpy(zero_copy_only=False)[:-1].astype(np.int64)
        starts -= starts[0] if len(starts) else 0
        flat = parts.flatten()
        bad = np.flatnonzero(per_line < 2)
        if bad.size:
            i = int(bad[0])
            raise self.fail(
                int(data_numbers[i]), "expected '<measurement>,<timestamp>,<value>,…'", data_lines[i].as_py()
            )

        def data_row(i: int) -> tuple[int, str]:
            return int(data_numbers[i]), data_lines[i].as_py()

        times = self.cast(flat.take(pa.array(starts + 1)), pa.int64(), "timestamp", data_row)
        infos, codes = self.timescaledb_series(tag_lines, tag_numbers, data_lines, data_numbers, flat, starts)
        row_measurement = np.array([s.measurement for s in infos], np.int64)[codes]
        slot_base = self.slot_base()
        item_line, item_slot, values = self.timescaledb_items(
            row_measurement, slot_base, data_lines, data_numbers, flat, starts, per_line
        )

        def text(i: int) -> str:
            return data_lines[i].as_py()

        chunk = ParsedChunk(
            infos, codes, row_measurement, times, item_line, item_slot, values, data_numbers, text
        )
        self.assemble(chunk)

    def timescaledb_series(
        self,
        tag_lines: pa.StringArray,
        tag_numbers: np.ndarray,
        data_lines: pa.StringArray,
        data_numbers: np.ndarray,
        flat: pa.Array,
        starts: np.ndarray,
    ) -> tuple[list[SeriesInfo], np.ndarray]:
        """The distinct series (tags line, measurement) and each row's index into them.

        ``flat`` holds the data lines' comma-separated parts, row ``i``'s from ``starts[i]`` on.
        """
        measure_encoded = pc.dictionary_encode(flat.take(pa.array(starts)))
        measure_codes = measure_encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        measure_names = measure_encoded.dictionary.to_pylist()
        tags_encoded = pc.dictionary_encode(tag_lines)
        tag_codes = tags_encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        tag_texts = tags_encoded.dictionary
        self.check_utf8(tag_texts, tag_codes, tag_numbers)
        tag_texts_py = tag_texts.to_pylist()
        pairs = tag_codes * max(1, len(measure_names)) + measure_codes
        unique, first, codes = np.unique(pairs, return_index=True, return_inverse=True)
        keys = [
            (tag_texts_py[p // max(1, len(measure_names))], measure_names[p % max(1, len(measure_names))])
            for p in unique.tolist()
        ]

        def first_row(k: int) -> tuple[int, str]:
            i = int(first[k])
            return int(data_numbers[i]), f"{tag_lines[i].as_py()} / {data_lines[i].as_py()}"

        for name in measure_names:
            if name not in self.columns:
                i = int(np.argmax(measure_names.index(name) == measure_codes))
                raise self.fail(
                    int(data_numbers[i]),
                    f"measurement {name!r} is not declared in the header",
                    data_lines[i].as_py(),
                )
        return self.resolve_codes(keys, self.parse_timescaledb_series, first_row), codes

    def timescaledb_items(
        self,
        row_measurement: np.ndarray,
        slot_base: np.ndarray,
        data_lines: pa.StringArray,
        data_numbers: np.ndarray,
        flat: pa.Array,
        starts: np.ndarray,
        per_line: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, pa.Array]:
        """The values of every data line in row order: their row, their slot (field) and their text."""
        assert self.use_case is not None
        item_line_parts, item_slot_parts, item_pos_parts = [], [], []
        for mi, m in enumerate(self.use_case.measurements):
            rows = np.flatnonzero(row_measurement == mi)
            if not rows.size:
                continue
            columns = self.columns[m.name]
            wrong = rows[per_line[rows] != 2 + len(columns)]
            if wrong.size:
                i = int(wrong[0])
                raise self.fail(
                    int(data_numbers[i]),
                    f"{m.name} rows need {2 + len(columns)} comma-separated values (measurement, timestamp "
                    f"and {', '.join(m.field_names[c] for c in columns)}), got {per_line[i]}",
                    data_lines[i].as_py(),
                )
            for c, j in enumerate(columns):
                item_line_parts.append(rows)
                item_slot_parts.append(np.full(rows.size, slot_base[mi] + j, np.int64))
                item_pos_parts.append(starts[rows] + 2 + c)
        if not item_line_parts:
            return np.empty(0, np.int64), np.empty(0, np.int64), pa.array([], pa.string())
        order = np.argsort(np.concatenate(item_line_parts), kind="stable")
        item_line = np.concatenate(item_line_parts)[order]
        item_slot = np.concatenate(item_slot_parts)[order]
        values = flat.take(pa.array(np.concatenate(item_pos_parts)[order]))
        return item_line, item_slot, values

    def parse_timescaledb_series(self, key: tuple[str, str]) -> SeriesInfo:
        text, measurement = key
        tags: dict[str, str | None] = {}
        for pair in text.split(",")[1:]:
            tag, sep, value = pair.partition("=")
            if not sep or not tag:
                raise Problem(f"malformed tag {pair!r} (expected <tag>=<value>)")
            if tag in tags:
                raise Problem(f"tag {tag!r} appears twice")
            tags[tag] = value or None
        return self.resolve(measurement, tags)
