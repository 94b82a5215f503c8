"""PostgreSQL binary COPY data built from Arrow columns with numpy (no Python loop over rows).

Format (PostgreSQL docs, "COPY … Binary Format"): an 11-byte signature, a 4-byte flags word and a
4-byte header-extension length; then per row a 2-byte field count and per field a 4-byte length
(-1 = NULL) followed by the value in network byte order; a 2-byte -1 ends the data.

Column kinds written here: ``timestamptz`` (int64 µs since 2000-01-01 UTC), ``int4``, ``float8``
and ``text`` (UTF-8 bytes). Rows without NULLs and without text have a fixed width and are written
through one numpy structured array; otherwise every field is scattered to its computed offset.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
TRAILER = b"\xff\xff"
PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01T00:00:00Z in µs since the Unix epoch


@dataclass(frozen=True)
class _Fixed:
    values: np.ndarray  # big-endian values, one per row
    valid: np.ndarray | None  # None: no NULLs


@dataclass(frozen=True)
class _Text:
    data: np.ndarray  # uint8: the UTF-8 bytes of the dictionary's strings, back to back
    starts: np.ndarray  # int64 per row: where the row's string starts in data
    lengths: np.ndarray  # int64 per row
    valid: np.ndarray | None


def _valid(array: pa.Array) -> np.ndarray | None:
    if array.null_count == 0:
        return None
    return array.is_valid().to_numpy(zero_copy_only=False)


def timestamptz(array: pa.Array) -> _Fixed:
    """Arrow timestamp (any unit, any zone) → PostgreSQL timestamptz (µs since 2000-01-01 UTC)."""
    micros = array.cast(pa.timestamp("us", tz="UTC"), safe=False).cast(pa.int64())
    values = pc.fill_null(micros, 0).to_numpy() - PG_EPOCH_US
    return _Fixed(values.astype(">i8"), _valid(array))


def int4(array: pa.Array) -> _Fixed:
    return _Fixed(pc.fill_null(array.cast(pa.int32()), 0).to_numpy().astype(">i4"), _valid(array))


def float8(array: pa.Array) -> _Fixed:
    values = pc.fill_null(array.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
    return _Fixed(values.astype(">f8"), _valid(array))


def text(array: pa.Array) -> _Text:
    """Strings (plain or dictionary-encoded) → the dictionary's bytes plus per-row slices."""
    if not pa.types.is_dictionary(array.type):
        array = pc.dictionary_encode(array)
    dictionary = array.dictionary.cast(pa.large_string())
    offsets = np.frombuffer(dictionary.buffers()[1], dtype=np.int64)[
        dictionary.offset : dictionary.offset + len(dictionary) + 1
    ]
    data_buffer = dictionary.buffers()[2]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    index = pc.fill_null(array.indices, 0).to_numpy().astype(np.int64)
    starts = offsets[:-1][index]
    lengths = (offsets[1:] - offsets[:-1])[index]
    return _Text(data, starts, lengths, _valid(array))


def copy_binary(columns: list[_Fixed | _Text], rows: int) -> bytes:
    """The complete binary COPY stream (signature … trailer) for ``rows`` rows of ``columns``."""
    if all(isinstance(c, _Fixed) and c.valid is None for c in columns):
        body = _fixed_rows(columns, rows)  # type: ignore[arg-type]
    else:
        body = _scattered_rows(columns, rows)
    return SIGNATURE + body + TRAILER


def _fixed_rows(columns: list[_Fixed], rows: int) -> bytes:
    fields: list[tuple[str, str]] = [("count", ">i2")]
    for i, column in enumerate(columns):
        fields += [(f"l{i}", ">i4"), (f"v{i}", column.values.dtype.str)]
    out = np.empty(rows, dtype=np.dtype(fields))
    out["count"] = len(columns)
    for i, column in enumerate(columns):
        out[f"l{i}"] = column.values.dtype.itemsize
        out[f"v{i}"] = column.values
    return out.tobytes()


def _scatter(out: np.ndarray, at: np.ndarray, values: np.ndarray) -> None:
    """Write each row's fixed-width big-endian value at byte offset ``at[row]``."""
    width = values.dtype.itemsize
    out[at[:, None] + np.arange(width)] = values.view(np.uint8).reshape(-1, width)


def _scattered_rows(columns: list[_Fixed | _Text], rows: int) -> bytes:
    sizes = np.full(rows, 2, dtype=np.int64)
    widths = []
    for column in columns:
        data = column.lengths if isinstance(column, _Text) else np.full(rows, column.values.dtype.itemsize)
        if column.valid is not None:
            data = np.where(column.valid, data, 0)
        widths.append(data)
        sizes += 4 + data
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), dtype=np.uint8)
    _scatter(out, starts, np.full(rows, len(columns), dtype=">i2"))
    at = starts + 2
    for column, width in zip(columns, widths, strict=True):
        length = width if column.valid is None else np.where(column.valid, width, -1)
        _scatter(out, at, length.astype(">i4"))
        at = at + 4
        if isinstance(column, _Fixed):
            chosen = slice(None) if column.valid is None else column.valid
            _scatter(out, at[chosen], column.values[chosen])
        else:
            total = int(width.sum())
            if total:
                row = np.repeat(np.arange(rows), width)
                within = np.arange(total) - np.repeat(np.cumsum(width) - width, width)
                out[at[row] + within] = column.data[column.starts[row] + within]
        at = at + width
    return out.tobytes()
