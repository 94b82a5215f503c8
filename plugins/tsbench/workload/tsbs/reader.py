"""Reading a TSBS file's lines: format detection, gzip, chunked splitting on a helper thread.

Either format is read (optionally gzip-compressed; detected from the content) in chunks of
``CHUNK_BYTES``. Arrow's CSV reader (quoting off) splits the lines on a helper thread, so reading,
decompression and tokenising overlap with the importer's parsing.
"""

from __future__ import annotations

import gzip
import os
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from tsbench.workload.tsbs.formats import INFLUX_FORMAT, TIMESCALEDB_FORMAT, Format, TsbsFormatError

CHUNK_BYTES = 8 << 20  # bytes of text parsed at once


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


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as probe:
        return probe.read(2) == b"\x1f\x8b"


def _open_text_source(path: Path) -> IO[bytes]:
    if _is_gzip(path):
        return gzip.open(path, "rb")
    return open(path, "rb")  # the caller closes it


def read_lines(
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


def has_empty(strings: pa.Array) -> bool:
    """Whether any of ``strings`` is empty."""
    return len(strings) > 0 and pc.min(pc.binary_length(strings)).as_py() == 0
