"""TSBS data files: export a dataset as ``tsbs_generate_data`` would write it, and import such files.

Two of TSBS's formats are supported (``FORMATS``):

``influx`` (InfluxDB line protocol; also what the QuestDB and VictoriaMetrics loaders read)
    One line per row: ``<measurement>,<tag>=<value>,… <field>=<value>,… <timestamp ns>``. Tags in TSBS
    order: the entity's tags (``UseCase.entity_tags``), then the measurement's extra tags (diskio
    ``serial``, disk ``path``/``fstype``, …). Integers carry an ``i`` suffix; floats are written in
    plain decimal notation with the fewest digits that read back exactly (Go's ``'f', -1``: ``1500``,
    ``0.25``, never an exponent). A missing (null) field is left out of the line. A row whose fields
    are *all* missing is not written at all: TSBS's serializer drops such a point because InfluxDB
    rejects a line without fields, so in this format such iot rows are lost (a round trip returns
    the other rows). An empty tag value (how an imported TSBS iot row with a cleared tag is kept) is
    left out of the line, as TSBS leaves out nil tags.

``timescaledb`` (also TSBS's ClickHouse format)
    A header: one ``tags,<tag> <type>,…`` line with the entity's tags, then one
    ``<measurement>,<field>,…`` line per measurement sorted by name, then an empty line (for cpu-only
    that is 3 lines). Then two lines per row: ``tags,<tag>=<value>,…`` and
    ``<measurement>,<timestamp ns>,<value>,…`` (values in the header's field order, numbers as in the
    influx format without the ``i``). A missing value is written as nothing (``…,12,,7,…``) and a
    missing tag as ``<tag>=``, as TSBS writes nil values. Decisions for what the header does not
    describe: devops extra tags follow the entity tags on each row's ``tags`` line (as TSBS writes
    every tag of a point there; its loader keeps the ones not in the header as additional tags).
    For iot, TSBS's trucks carry ``load_capacity``, ``fuel_capacity`` and
    ``nominal_fuel_consumption`` as (float32) *tags*: this format lists them in the header's tags
    line and writes them on the ``tags`` line, and they are not in the measurements' field lists;
    in the influx format TSBS writes them as the first fields. tsbench models them as the first
    three fields of ``readings`` and ``diagnostics`` (see ``usecases``), so they move between the
    row's fields and its tags line here.

Rows are written in the dataset's ingestion order. With several measurements (devops, iot) they are
interleaved as TSBS does: per timestamp (epoch), each measurement in use-case order, that
measurement's rows of the epoch in their stored order (for out-of-order iot data, the running
maximum of a measurement's timestamps decides which epoch a row belongs to).

Import reads either format (optionally gzip-compressed; detected from the content) in chunks of
``CHUNK_BYTES``, so memory stays bounded by a few chunks plus one Parquet part per measurement plus
the entity tags, whatever the file's size. Arrow's CSV reader (quoting off) splits the lines on a
helper thread; the rest is vectorised with ``pyarrow.compute`` and numpy, and Python work happens
once per distinct series (tag set) of a chunk, not per line. Line-protocol escapes (a backslash
before a comma or space) and string or boolean fields do not occur in TSBS files and are not
supported (the line is reported). The dataset lands in the cache under a content address made from
the file's sha256, so importing the same file again reuses it.
Rules while importing:

- every measurement, tag and field must belong to the use case (given, or inferred from the
  measurement names: only ``cpu`` → cpu-only, any other devops measurement → devops,
  ``readings``/``diagnostics`` → iot); anything else is an error naming the line;
- an entity's tags are fixed: a tag whose value changes for the same entity is an error naming the
  line. A tag missing from a line (TSBS's iot data clears a random tag on ~1 % of its points) is not a
  change; the entity's value comes from its other lines (empty if no line has it). Rows that lack the
  entity key itself (e.g. an iot point whose ``name`` was cleared) cannot be attributed and are
  skipped; their count is recorded as ``source.skipped_rows`` in the manifest;
- the interval is the smallest positive gap between consecutive distinct timestamps of one entity
  when every observed gap is a multiple of it (regular data), else the most common gap (irregular
  data); ``end_ns`` is the last timestamp plus the interval.
"""

from __future__ import annotations

import gzip
import logging
import os
import queue
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from tsbench.progress import Progress
from tsbench.workload.dataset import (
    Dataset,
    DatasetWriter,
    cache_dir,
    content_id,
    locked_build,
    sha256_file,
)
from tsbench.workload.usecases import USE_CASES, Measurement, UseCase, get_use_case

log = logging.getLogger("tsbench")

Format = Literal["influx", "timescaledb"]
# TSBS's file-format names (the "timescaledb" format is a text layout, not the database).
INFLUX_FORMAT = "influx"
TIMESCALEDB_FORMAT = "timescaledb"
FORMATS: tuple[str, ...] = (INFLUX_FORMAT, TIMESCALEDB_FORMAT)
IMPORTER_VERSION = 1
CHUNK_BYTES = 8 << 20  # bytes of text parsed at once
PART_ROWS = 1 << 20  # rows per Parquet part written by an import
EXPORT_BATCH_ROWS = 1 << 16  # rows formatted at once by an export
GZIP_LEVEL = 1  # fast; TSBS users pipe through gzip themselves when size matters
DEFAULT_INTERVAL_NS = 10_000_000_000  # TSBS's default, used when no entity has two timestamps
# Fields that TSBS's iot trucks carry as (float32) tags: written on the tags line in the
# timescaledb format, as the first fields in the influx format.
TAG_FIELDS: dict[str, tuple[str, ...]] = {
    "iot": ("load_capacity", "fuel_capacity", "nominal_fuel_consumption"),
}
TAG_FIELD_TYPE = "float32"
_FORBIDDEN_IN_TAGS = r"[,= \n\r\\\"]"
_INT_SUFFIXES = "iu"


class TsbsFormatError(ValueError):
    """A TSBS file (or a dataset to export) cannot be read or written; the message names the line."""


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown TSBS format {fmt!r}; known: {', '.join(FORMATS)}")


def _tag_fields(use_case: UseCase) -> tuple[str, ...]:
    return TAG_FIELDS.get(use_case.name, ())


def timescaledb_header(use_case: UseCase) -> str:
    """The header TSBS writes before the rows in the timescaledb format (ends with the empty line)."""
    tag_fields = _tag_fields(use_case)
    tags = [f"{tag} string" for tag in use_case.entity_tags] + [f"{t} {TAG_FIELD_TYPE}" for t in tag_fields]
    lines = [",".join(["tags", *tags])]
    for m in sorted(use_case.measurements, key=lambda m: m.name):
        lines.append(",".join([m.name, *(f for f in m.field_names if f not in tag_fields)]))
    return "\n".join(lines) + "\n\n"


# --------------------------------------------------------------------------------------------------
# export


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
    _check_format(fmt)
    formatter = _Formatter(dataset.use_case, dataset.tags(), fmt)
    with _Sink(out) as sink:
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
    for path in dataset.files(m.name):
        for batch in pq.ParquetFile(path).iter_batches(batch_size=EXPORT_BATCH_ROWS):
            lines, times = formatter.format(m, batch)
            if not len(lines):
                continue
            running = np.maximum.accumulate(np.maximum(times, carry))
            carry = int(running[-1])
            yield _Block(lines, running)


def _write_interleaved(streams: list[Iterator[_Block]], sink: _Sink, progress: Progress | None) -> int:
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


class _Formatter:
    """Turns record batches into TSBS text with vectorised string kernels (no per-row Python)."""

    def __init__(self, use_case: UseCase, tags: pa.Table, fmt: str):
        self.use_case, self.fmt = use_case, fmt
        self.tag_fields = _tag_fields(use_case)
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
                m.name: pc.binary_join_element_wise(m.name, *pairs, ",", null_handling="skip")
                for m in use_case.measurements
            }
        else:
            common = pc.binary_join_element_wise("tags", *pairs, ",")
            self.prefix = {m.name: common for m in use_case.measurements}
        self._dictionary: pa.Array | None = None
        self._positions: np.ndarray = np.empty(0, np.int64)

    def _entity_rows(self, column: pa.Array) -> np.ndarray:
        """Row of the tags table for every row of the batch."""
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(column)
        dictionary = column.dictionary
        if self._dictionary is None or not dictionary.equals(self._dictionary):
            found = pc.index_in(dictionary, value_set=self.names)
            if found.null_count:
                missing = dictionary.filter(pc.is_null(found))[0].as_py()
                raise TsbsFormatError(f"entity {missing!r} has no row in the dataset's tags table")
            self._dictionary, self._positions = dictionary, found.to_numpy(zero_copy_only=False)
        return self._positions[column.indices.to_numpy(zero_copy_only=False)]

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
        fields = [(name, kind, _number_strings(batch.column(name))) for name, kind in m.fields]
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


def _number_strings(column: pa.Array) -> pa.StringArray:
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


class _Sink:
    """Buffered output; writing (and gzip compression, which releases the GIL) runs on a thread."""

    FLUSH_BYTES = 4 << 20

    def __init__(self, out: str | os.PathLike[str] | IO[bytes]):
        self.path: Path | None = None
        self._files: list[IO[bytes]] = []
        if isinstance(out, str | os.PathLike):
            self.path = Path(out)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.tmp = self.path.with_name(f".{self.path.name}.partial")
            raw = open(self.tmp, "wb")  # noqa: SIM115 (closed in close())
            self._files.append(raw)
            if self.path.name.endswith(".gz"):
                self._files.insert(
                    0,
                    gzip.GzipFile(self.path.name, mode="wb", compresslevel=GZIP_LEVEL, fileobj=raw, mtime=0),
                )
            self.handle: IO[bytes] = self._files[0]
        else:
            self.handle = out
        self._pending: list[bytes | memoryview] = []
        self._pending_bytes = 0
        self._queue: queue.Queue[bytes | memoryview | None] = queue.Queue(4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name="tsbs-export", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self.handle.write(item)
                except BaseException as error:  # surfaced by the next write() or close()
                    self._error = error

    def _send(self, item: bytes | memoryview) -> None:
        if self._error is not None:
            raise TsbsFormatError(f"writing the TSBS file failed: {self._error}") from self._error
        self._queue.put(item)

    def write(self, data: bytes | memoryview) -> None:
        if len(data) >= self.FLUSH_BYTES and not self._pending:
            self._send(data)
            return
        self._pending.append(data)
        self._pending_bytes += len(data)
        if self._pending_bytes >= self.FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._send(b"".join(self._pending))
            self._pending, self._pending_bytes = [], 0

    def __enter__(self) -> _Sink:
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        failure: BaseException | None = None
        try:
            if error is None:
                self.flush()
        except BaseException as problem:
            failure = problem
        self._queue.put(None)
        self._thread.join()
        try:
            for handle in self._files:  # the gzip stream first, then the file under it
                handle.close()
            if self.path is None and error is None and failure is None and self._error is None:
                self.handle.flush()
        except BaseException as problem:
            failure = failure or problem
        failure = failure or self._error
        if self.path is not None:
            if error is None and failure is None:
                os.replace(self.tmp, self.path)
            else:
                self.tmp.unlink(missing_ok=True)
        if failure is not None and error is None:
            raise TsbsFormatError(f"writing the TSBS file failed: {failure}") from failure


# --------------------------------------------------------------------------------------------------
# import


def detect_format(path: str | os.PathLike[str]) -> Format:
    """``timescaledb`` when the first line is a TSBS ``tags`` header line, else ``influx``."""
    first = b""
    with _open_text_source(Path(path)) as handle:
        while not first:  # the first line that is not empty
            line = handle.readline(1 << 20)
            if not line:
                raise TsbsFormatError(f"{Path(path).name}: the file is empty")
            first = line.strip()
    return TIMESCALEDB_FORMAT if first == b"tags" or first.startswith(b"tags,") else INFLUX_FORMAT


def import_tsbs(
    path: str | os.PathLike[str],
    fmt: Format | None = None,
    use_case: str | None = None,
    cache: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> tuple[Dataset, bool]:
    """Import a TSBS data file (plain or gzip) as a dataset in the cache; returns ``(dataset, reused)``.

    ``fmt`` defaults to the detected format; ``use_case`` to the one the measurement names imply.
    A second import of the same file (same content, format and use-case choice) reuses the dataset.
    """
    source = Path(path)
    if not source.is_file():
        raise FileNotFoundError(f"TSBS file {source} does not exist")
    detected = detect_format(source)
    if fmt is None:
        fmt = detected
    _check_format(fmt)
    if fmt != detected:
        raise TsbsFormatError(
            f"{source.name}: asked to read the {fmt} format, but the file looks like {detected}"
        )
    if use_case is not None:
        get_use_case(use_case)
    digest = sha256_file(source)
    key = {"import": digest, "format": fmt, "use_case": use_case or "auto", "importer": IMPORTER_VERSION}
    folder = cache_dir(cache) / f"tsbs-import-{content_id(key)}"

    def build(final: Path) -> Dataset:
        importer = _Importer(source, fmt, use_case, progress)
        return importer.run(
            final, {"kind": "tsbs-import", "file": source.name, "sha256": digest, "format": fmt}
        )

    return locked_build(folder, build)


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def _open_text_source(path: Path) -> IO[bytes]:
    if _is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")  # the caller closes it


def _read_lines(
    path: Path,
    columns: tuple[str, ...],
    delimiter: str,
    prepare: Callable[[pa.RecordBatch], Any] = lambda batch: batch,
) -> Iterator[tuple[Any, np.ndarray]]:
    """The file's lines, each split at ``delimiter`` into ``columns`` (strings), in chunks of about
    ``CHUNK_BYTES``, passed through ``prepare``; with the chunk's 1-based line numbers (every line
    is a row, empty ones too).

    Arrow's CSV reader (quoting off) does the splitting; it and ``prepare`` run on a helper thread, so
    that reading, decompression and tokenising overlap with the caller's parsing.
    """
    invalid: list[tuple[int, str]] = []

    def invalid_row(row: Any) -> str:
        invalid.append((row.number, row.text))
        return "error"

    def batches() -> Iterator[pa.RecordBatch]:
        stream = pa.input_stream(str(path), compression="gzip" if _is_gzip(path) else None)
        try:
            reader = pa_csv.open_csv(
                stream,
                read_options=pa_csv.ReadOptions(
                    column_names=list(columns), block_size=CHUNK_BYTES, use_threads=False
                ),
                parse_options=pa_csv.ParseOptions(
                    delimiter=delimiter,
                    quote_char=False,
                    ignore_empty_lines=False,
                    invalid_row_handler=invalid_row,
                ),
                convert_options=pa_csv.ConvertOptions(
                    column_types=dict.fromkeys(columns, pa.string()), check_utf8=False
                ),
            )
            for batch in reader:
                yield batch.num_rows, prepare(batch)
        finally:
            stream.close()

    line = 1
    try:
        for rows, prepared in _in_background(batches):
            yield prepared, np.arange(line, line + rows, dtype=np.int64)
            line += rows
    except pa.ArrowInvalid as error:
        if invalid:
            number, text = invalid[0]
            expected = " ".join(f"<{c}>" for c in columns) if delimiter == " " else "one line"
            raise TsbsFormatError(
                f"{path.name} line {number}: not of the form {expected}: {text[:300]!r}"
            ) from None
        raise TsbsFormatError(f"{path.name}: cannot read the file: {error}") from error


def _in_background(produce: Callable[[], Iterator[Any]], depth: int = 2) -> Iterator[Any]:
    """Iterate ``produce()`` on a helper thread, ``depth`` items ahead of the consumer."""
    items: queue.Queue[Any] = queue.Queue(depth)
    stop = threading.Event()
    done = object()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in produce():
                if not put(item):
                    return
            put(done)
        except BaseException as error:
            put(error)

    thread = threading.Thread(target=run, name="tsbs-read", daemon=True)
    thread.start()
    try:
        while (item := items.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


@dataclass
class _SeriesInfo:
    """What a distinct tag set (series) of a chunk resolves to."""

    measurement: int  # index into the use case's measurements
    entity: int  # entity id, -1 when the row has no entity key (skipped)
    extras: tuple[int, ...]  # interned ids of the measurement's extra tag values
    tag_fields: tuple[float | None, ...] = ()  # timescaledb iot: fields carried on the tags line


@dataclass
class _InfluxChunk:
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
    def tokenize(cls, batch: pa.RecordBatch) -> _InfluxChunk:
        series, fields, stamps = batch.columns
        keep = None
        if _has_empty(series) and (blank := _all_empty(series, fields, stamps)).true_count:
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


class _Problem(Exception):
    """A problem found in a distinct value; the caller turns it into a TsbsFormatError with the line."""


@dataclass
class _Pending:
    """Rows of one measurement waiting to be written as one Parquet part."""

    times: list[np.ndarray] = field(default_factory=list)
    entities: list[np.ndarray] = field(default_factory=list)
    extras: list[list[np.ndarray]] = field(default_factory=list)
    fields: list[list[pa.Array]] = field(default_factory=list)
    rows: int = 0


class _Importer:
    def __init__(self, path: Path, fmt: str, use_case: str | None, progress: Progress | None):
        self.path, self.fmt, self.progress = path, fmt, progress
        self.explicit = use_case is not None
        self.use_case: UseCase | None = get_use_case(use_case) if use_case else None
        self.writer: DatasetWriter | None = None
        self.final: Path | None = None
        # entities
        self.entity_ids: dict[str, int] = {}
        self.entity_names: list[str] = []
        self.entity_tags: list[list[str | None]] = []
        # extra tag values, interned per (measurement, tag)
        self.extra_ids: dict[tuple[str, str], dict[str, int]] = {}
        self.extra_values: dict[tuple[str, str], list[str]] = {}
        self.series_cache: dict[Any, _SeriesInfo] = {}
        self.pending: dict[str, _Pending] = {}
        # statistics
        self.time_min: int | None = None
        self.time_max: int | None = None
        self.gaps: Counter[int] = Counter()
        self.skipped = 0
        self.lines = 0
        # timescaledb header: measurement -> field index (into Measurement.fields) per data column
        self.columns: dict[str, list[int]] = {}

    # ---- helpers -------------------------------------------------------------------------------

    def fail(self, line: int, message: str, text: str | None = None) -> TsbsFormatError:
        shown = f": {text[:300]!r}" if text is not None else ""
        return TsbsFormatError(f"{self.path.name} line {line}: {message}{shown}")

    def measurement_index(self, name: str) -> int:
        """Index of measurement ``name`` in the use case, inferring / widening the use case."""
        if self.use_case is None:
            for candidate in ("cpu-only", "devops", "iot"):
                if name in _names(candidate):
                    self.use_case = USE_CASES[candidate]
                    break
        names = _names(self.use_case.name) if self.use_case is not None else []
        if name in names:
            return names.index(name)
        if not self.explicit:
            if self.use_case is not None and self.use_case.name == "cpu-only" and name in _names("devops"):
                self._widen(USE_CASES["devops"])  # only cpu so far, then another devops measurement
                return _names("devops").index(name)
            if not any(name in _names(u) for u in USE_CASES):
                raise _Problem(f"unknown measurement {name!r} (neither cpu, a devops nor an iot measurement)")
        assert self.use_case is not None
        raise _Problem(
            f"measurement {name!r} is not part of use case {self.use_case.name} ({', '.join(names)})"
        )

    def _widen(self, use_case: UseCase) -> None:
        log.info("tsbs import: %s holds devops measurements; importing it as devops", self.path.name)
        self.use_case = use_case
        if self.writer is not None:
            self.writer.use_case = use_case
            for m in use_case.measurements:
                self.writer.rows.setdefault(m.name, 0)

    def resolve(self, measurement: str, tags: dict[str, str | None]) -> _SeriesInfo:
        """Check a series' tags against the use case and the entity's known tags."""
        index = self.measurement_index(measurement)
        assert self.use_case is not None
        m = self.use_case.measurements[index]
        entity_tags = self.use_case.entity_tags
        tag_fields = _tag_fields(self.use_case) if self.fmt == TIMESCALEDB_FORMAT else ()
        unknown = [t for t in tags if t not in entity_tags and t not in m.extra_tags and t not in tag_fields]
        if unknown:
            raise _Problem(f"tag {unknown[0]!r} is not a tag of {self.use_case.name} measurement {m.name}")
        extras = []
        for tag in m.extra_tags:
            value = tags.get(tag)
            if value is None:
                raise _Problem(f"measurement {m.name} needs tag {tag!r}")
            ids = self.extra_ids.setdefault((m.name, tag), {})
            if value not in ids:
                ids[value] = len(ids)
                self.extra_values.setdefault((m.name, tag), []).append(value)
            extras.append(ids[value])
        fields = tuple(_float_or_none(tags.get(t), t) for t in tag_fields)
        name = tags.get(entity_tags[0])
        if name is None:
            return _SeriesInfo(index, -1, tuple(extras), fields)
        values = [tags.get(t) for t in entity_tags]
        entity = self.entity_ids.get(name)
        if entity is None:
            entity = self.entity_ids[name] = len(self.entity_names)
            self.entity_names.append(name)
            self.entity_tags.append(values)
        else:
            known = self.entity_tags[entity]
            for j, value in enumerate(values):
                if value is None:
                    continue
                if known[j] is None:
                    known[j] = value
                elif known[j] != value:
                    raise _Problem(
                        f"{entity_tags[0]} {name}: tag {entity_tags[j]} changed from {known[j]!r} to "
                        f"{value!r} (an entity's tags must stay the same)"
                    )
        return _SeriesInfo(index, entity, tuple(extras), fields)

    def resolve_codes(
        self, keys: list[Any], parse: Callable[[Any], _SeriesInfo], rows_of: Callable[[int], tuple[int, str]]
    ) -> list[_SeriesInfo]:
        """Resolve each distinct key (cached across chunks); errors name the first line using it."""
        infos = []
        for k, key in enumerate(keys):
            info = self.series_cache.get(key)
            if info is None:
                try:
                    info = parse(key)
                except _Problem as problem:
                    line, text = rows_of(k)
                    raise self.fail(line, str(problem), text) from None
                if len(self.series_cache) > 2_000_000:
                    self.series_cache.clear()
                self.series_cache[key] = info
            infos.append(info)
        return infos

    # ---- driving -------------------------------------------------------------------------------

    def run(self, final: Path, source: dict[str, Any]) -> Dataset:
        self.final = final
        try:
            if self.fmt == TIMESCALEDB_FORMAT:
                chunks = _read_lines(self.path, ("line",), "\x1f", lambda batch: batch.column(0))
                try:
                    self.parse_timescaledb(chunks)
                finally:
                    chunks.close()
            else:
                chunks = _read_lines(self.path, ("series", "fields", "timestamp"), " ", _InfluxChunk.tokenize)
                try:
                    self.parse_influx(chunks)
                finally:
                    chunks.close()
            for name in list(self.pending):
                self.flush(name)
            if self.writer is None or self.time_min is None or self.time_max is None:
                raise TsbsFormatError(f"{self.path.name}: no rows to import")
            interval = self.interval()
            tags = self.tags_table()
            manifest = {
                "source": {**source, "lines": self.lines, "skipped_rows": self.skipped},
                "time_range": {
                    "start_ns": self.time_min,
                    "end_ns": self.time_max + interval,
                    "interval_ns": interval,
                },
                "entities": tags.num_rows,
            }
            if self.skipped:
                log.warning("tsbs import: skipped %d rows without an entity key", self.skipped)
            return self.writer.commit(tags, manifest)
        except BaseException:
            if self.writer is not None:
                self.writer.abort()
            raise

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

    # ---- influx --------------------------------------------------------------------------------

    def parse_influx(self, chunks: Iterator[tuple[_InfluxChunk, np.ndarray]]) -> None:
        for chunk, numbers in chunks:
            self.lines += len(numbers)
            if chunk.keep is not None:
                numbers = numbers[chunk.keep]
            if len(chunk.series):
                self.influx_chunk(chunk, numbers)

    def influx_chunk(self, chunk: _InfluxChunk, numbers: np.ndarray) -> None:
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
        slot_base = np.cumsum([0] + [len(m.fields) for m in measurements])
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
            infos,
            codes,
            row_measurement,
            times,
            item_line,
            item_slot,
            values,
            slot_base,
            numbers,
            text,
            empty_is_null=False,
        )

    def parse_influx_series(self, text: str) -> _SeriesInfo:
        measurement, *pairs = text.split(",")
        tags: dict[str, str | None] = {}
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key or not value:
                raise _Problem(f"malformed tag {pair!r} (expected <tag>=<value>)")
            if key in tags:
                raise _Problem(f"tag {key!r} appears twice")
            tags[key] = value
        return self.resolve(measurement, tags)

    # ---- timescaledb ---------------------------------------------------------------------------

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
            except _Problem as problem:
                raise self.fail(number, str(problem), text) from None
            assert self.use_case is not None
            m = self.use_case.measurements[index]
            tag_fields = _tag_fields(self.use_case)
            columns = []
            for f in fields:
                if f not in m.field_names or f in tag_fields:
                    raise self.fail(
                        number, f"{f!r} is not a field of {self.use_case.name} measurement {name}", text
                    )
                columns.append(m.field_names.index(f))
            self.columns[name] = columns
        assert self.use_case is not None
        known = set(self.use_case.entity_tags) | set(_tag_fields(self.use_case))
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
            if _has_empty(lines):
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
        infos = self.resolve_codes(keys, self.parse_timescaledb_series, first_row)
        row_measurement = np.array([s.measurement for s in infos], np.int64)[codes]
        assert self.use_case is not None
        measurements = self.use_case.measurements
        slot_base = np.cumsum([0] + [len(m.fields) for m in measurements])
        # the values of every data line, with their slot (measurement field)
        item_line_parts, item_slot_parts, item_pos_parts = [], [], []
        for mi, m in enumerate(measurements):
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
        if item_line_parts:
            order = np.argsort(np.concatenate(item_line_parts), kind="stable")
            item_line = np.concatenate(item_line_parts)[order]
            item_slot = np.concatenate(item_slot_parts)[order]
            values = flat.take(pa.array(np.concatenate(item_pos_parts)[order]))
        else:
            item_line = item_slot = np.empty(0, np.int64)
            values = pa.array([], pa.string())
        self.assemble(
            infos,
            codes,
            row_measurement,
            times,
            item_line,
            item_slot,
            values,
            slot_base,
            data_numbers,
            lambda i: data_lines[i].as_py(),
            empty_is_null=True,
        )

    def parse_timescaledb_series(self, key: tuple[str, str]) -> _SeriesInfo:
        text, measurement = key
        tags: dict[str, str | None] = {}
        for pair in text.split(",")[1:]:
            tag, sep, value = pair.partition("=")
            if not sep or not tag:
                raise _Problem(f"malformed tag {pair!r} (expected <tag>=<value>)")
            if tag in tags:
                raise _Problem(f"tag {tag!r} appears twice")
            tags[tag] = value or None
        return self.resolve(measurement, tags)

    # ---- shared --------------------------------------------------------------------------------

    def check_utf8(self, dictionary: pa.StringArray, codes: np.ndarray, numbers: np.ndarray) -> None:
        try:
            dictionary.validate(full=True)
        except pa.ArrowInvalid:
            for k, value in enumerate(dictionary.cast(pa.binary()).to_pylist()):
                try:
                    value.decode("utf-8")
                except UnicodeDecodeError:
                    i = int(np.argmax(codes == k))
                    raise self.fail(int(numbers[i]), "tags are not valid UTF-8") from None

    def cast(
        self, strings: pa.Array, kind: pa.DataType, what: str, row: Callable[[int], tuple[int, str]]
    ) -> pa.Array:
        try:
            return pc.cast(strings, kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        low, high = 0, len(strings)  # bisect to the first value that does not convert
        while high - low > 1:
            middle = (low + high) // 2
            try:
                pc.cast(strings.slice(low, middle - low), kind)
                low = middle
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                high = middle
        line, text = row(low)
        name = "an integer" if pa.types.is_integer(kind) else "a number"
        raise self.fail(line, f"{what} {strings[low].as_py()!r} is not {name}", text)

    def assemble(
        self,
        infos: list[_SeriesInfo],
        codes: np.ndarray,
        row_measurement: np.ndarray,
        times: pa.Array,
        item_line: np.ndarray,
        item_slot: np.ndarray,
        values: pa.Array,
        slot_base: np.ndarray,
        numbers: np.ndarray,
        text: Callable[[int], str],
        empty_is_null: bool,
    ) -> None:
        """Per measurement: typed columns for the chunk's rows, queued for writing."""
        assert self.use_case is not None
        row_entity = np.array([s.entity for s in infos], np.int64)[codes]
        times_np = times.to_numpy(zero_copy_only=False)
        n_slots = int(slot_base[-1])
        narrow = item_slot.astype(np.int16) if n_slots < 32_000 else item_slot  # radix sort
        order = np.argsort(narrow, kind="stable")
        bounds = np.searchsorted(item_slot[order], np.arange(n_slots + 1))
        position = np.empty(len(row_measurement), np.int64)
        tag_fields = _tag_fields(self.use_case) if self.fmt == TIMESCALEDB_FORMAT else ()
        for mi, m in enumerate(self.use_case.measurements):
            rows = np.flatnonzero(row_measurement == mi)
            if not rows.size:
                continue
            position[rows] = np.arange(rows.size)
            columns: list[pa.Array] = []
            for j, (name, kind) in enumerate(m.fields):
                slot = int(slot_base[mi]) + j
                chosen = order[bounds[slot] : bounds[slot + 1]]
                if name in tag_fields:
                    columns.append(self.tag_field_column(infos, codes[rows], tag_fields.index(name)))
                    continue
                if not chosen.size:
                    columns.append(pa.nulls(rows.size, kind))
                    continue
                owners = item_line[chosen]
                twice = np.flatnonzero(np.diff(owners) == 0)
                if twice.size:
                    i = int(owners[twice[0]])
                    raise self.fail(int(numbers[i]), f"field {name!r} appears twice", text(i))
                strings = values.take(pa.array(chosen))
                if empty_is_null:
                    empty = pc.equal(strings, "")
                    if empty.true_count:
                        strings = pc.if_else(empty, pa.scalar(None, pa.string()), strings)
                typed = self.cast(
                    strings,
                    kind,
                    f"{m.name} field {name}",
                    lambda i, o=owners: (int(numbers[o[i]]), text(int(o[i]))),
                )
                if chosen.size == rows.size and typed.null_count == 0:
                    columns.append(typed)
                    continue
                dense = np.zeros(rows.size, np.int64 if pa.types.is_integer(kind) else np.float64)
                missing = np.ones(rows.size, bool)
                where = position[owners]
                filled = typed.is_valid().to_numpy(zero_copy_only=False)
                dense[where[filled]] = typed.filter(typed.is_valid()).to_numpy(zero_copy_only=False)
                missing[where[filled]] = False
                columns.append(pa.array(dense, kind, mask=missing))
            entities = row_entity[rows]
            extras = [
                np.array([s.extras[k] if k < len(s.extras) else -1 for s in infos], np.int64)[codes[rows]]
                for k in range(len(m.extra_tags))
            ]
            row_times = times_np[rows]
            attributed = entities >= 0
            if not attributed.all():
                self.skipped += int((~attributed).sum())
                keep = pa.array(attributed)
                entities, row_times = entities[attributed], row_times[attributed]
                extras = [e[attributed] for e in extras]
                columns = [c.filter(keep) for c in columns]
            if not entities.size:
                continue
            self.queue(m.name, row_times, entities, extras, columns)

    def tag_field_column(self, infos: list[_SeriesInfo], codes: np.ndarray, k: int) -> pa.Array:
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
        self.observe_gaps(times, entities)
        present = np.zeros(len(self.entity_names), bool)
        present[entities] = True
        used = np.flatnonzero(present)
        remap = np.cumsum(present) - 1
        entity_column = pa.DictionaryArray.from_arrays(
            pa.array(remap[entities].astype(np.int32)),
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
        batch = pa.RecordBatch.from_arrays(columns, schema=m.arrow_schema(self.use_case.entity_key))
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


def _has_empty(strings: pa.Array) -> bool:
    return len(strings) > 0 and pc.min(pc.binary_length(strings)).as_py() == 0


def _all_empty(*columns: pa.Array) -> pa.BooleanArray:
    result = pc.equal(columns[0], "")
    for column in columns[1:]:
        result = pc.and_(result, pc.equal(column, ""))
    return result


def _names(use_case: str) -> list[str]:
    return [m.name for m in USE_CASES[use_case].measurements]


def _float_or_none(text: str | None, tag: str) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise _Problem(f"tag {tag} value {text!r} is not a number") from None


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _natural_key(name: str) -> tuple[str, int, str]:
    match = _NUMBERED.match(name)
    if match:
        return match.group(1), int(match.group(2)), name
    return name, -1, name


__all__ = [
    "FORMATS",
    "TsbsFormatError",
    "detect_format",
    "export_dataset",
    "import_tsbs",
    "timescaledb_header",
]
