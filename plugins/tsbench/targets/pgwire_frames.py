"""A query's answer over the PostgreSQL wire protocol kept as the bytes the server sent.

Shared client code of the targets that answer SQL over PG wire; no database's own facts here.

``exchange`` writes one extended-protocol query (Parse, Bind with every result column in binary,
Describe, Execute, Sync) on the socket of a connection libpq opened and authenticated, and reads
the reply into one ``bytearray`` until the server's ReadyForQuery: per received block a copy and a
look at the last bytes, nothing per row. The server does exactly what it does for libpq's
``PQexecParams``; the client keeps ~150 B per row of a 12-column answer where a libpq result
keeps ~380 (a pointer and an aligned copy per value), and spends no CPU per value while timed.

``Frames.parse`` walks the messages afterwards (untimed) and checks them; ``Frames.rows`` decodes
the DataRows a column at a time with NumPy. A reply that does not frame exactly is an error,
never a partial answer. libpq's own state stays right: it sent nothing meanwhile, and the
exchange ends where the server waits for the next query, as after any query of libpq's.
"""

from __future__ import annotations

import re
import socket
import struct
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RECEIVE_BYTES = 1 << 20  # the most one recv asks for
_READY = re.compile(rb"Z\x00\x00\x00\x05[ITE]\Z")
# The reply's last two messages when the query succeeded: CommandComplete ('C', its length, a tag
# such as "SELECT 1630000") and ReadyForQuery. Checked on a received block's end before it is
# taken as the reply's end; anything else ending in a ReadyForQuery is confirmed by the walk.
_DONE = re.compile(rb"C\x00\x00\x00[\x05-\x40][A-Z ]+[0-9 ]*\x00Z\x00\x00\x00\x05[ITE]\Z")
EPOCH_2000_NS = 946_684_800 * 10**9  # PostgreSQL's instants count µs from 2000-01-01 UTC
MAX_NS_MICROS = 9 * 10**15  # µs from 2000 still within int64 ns since 1970 (years 1715–2285)


class WireError(Exception):
    """The server refused the query (its message), or the reply did not frame."""


def query_messages(text: str) -> bytes:
    """Parse, Bind (no parameters; all result columns binary), Describe portal, Execute, Sync."""
    sql = text.encode() + b"\x00"

    def message(kind: bytes, body: bytes) -> bytes:
        return kind + struct.pack("!i", len(body) + 4) + body

    return b"".join(
        (
            message(b"P", b"\x00" + sql + b"\x00\x00"),
            message(b"B", b"\x00\x00" + struct.pack("!hhh", 0, 0, 1) + struct.pack("!h", 1)),
            message(b"D", b"P\x00"),
            message(b"E", b"\x00" + struct.pack("!i", 0)),
            message(b"S", b""),
        )
    )


def exchange(sock: socket.socket, text: str) -> bytearray:
    """Send ``text`` as one query and return every byte of the reply, up to and including the
    server's ReadyForQuery. Raises ``ConnectionError`` when the server closes the connection, and
    the socket's own ``OSError`` (e.g. its timeout) otherwise."""
    sock.sendall(query_messages(text))
    reply = bytearray()
    while True:
        block = sock.recv(RECEIVE_BYTES)
        if not block:
            raise ConnectionError("the server closed the connection")
        reply += block
        if _READY.search(reply, max(len(reply) - 6, 0)) and _ends_reply(reply):
            return reply


def completed(reply: bytearray) -> bool:
    """Whether ``reply`` ends as a query that succeeded does: CommandComplete, ReadyForQuery."""
    return _DONE.search(reply, max(len(reply) - 80, 0)) is not None


def _ends_reply(reply: bytearray) -> bool:
    """Whether a ReadyForQuery at the end of ``reply`` is the reply's end: after a CommandComplete
    (the usual reply), else confirmed by walking every message (an error, an empty answer)."""
    if completed(reply):
        return True
    try:
        for _ in _walk(reply):  # every message, to the last
            pass
    except WireError:
        return False
    return True


@dataclass
class Column:
    name: str
    oid: int  # the PostgreSQL type


@dataclass
class Frames:
    """One reply, walked: its columns, where each DataRow's fields start, the command tag."""

    data: bytearray
    columns: list[Column] = field(default_factory=list)
    row_starts: array = field(default_factory=lambda: array("q"))  # each row's first field
    tag: str = ""

    @classmethod
    def parse(cls, data: bytearray) -> Frames:
        """Raises ``WireError`` with the server's message when the query failed."""
        frames = cls(data)
        for kind, start, end in _walk(data):
            if kind == 0x44:  # DataRow: its field count, then the fields
                frames.row_starts.append(start + 2)
            elif kind == 0x54:  # RowDescription
                frames.columns = _columns(data, start)
            elif kind == 0x43:  # CommandComplete
                frames.tag = bytes(data[start : end - 1]).decode()
            elif kind == 0x45:  # ErrorResponse
                raise WireError(_error_text(data, start, end))
        return frames

    def rows(
        self, loaders: LoaderLookup, rows_per_part: int, instants_ns: bool = True
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows, ``rows_per_part`` at a time, as tuples of Python values (``decode_column``;
        instants through psycopg's loader unless ``instants_ns``)."""
        buffer = np.frombuffer(self.data, dtype=np.uint8)
        starts = np.frombuffer(self.row_starts, dtype=np.int64)
        for first in range(0, len(starts), rows_per_part):
            offsets = starts[first : first + rows_per_part]
            values = []
            for column in self.columns:
                lengths = _int32(buffer, offsets)
                values.append(decode_column(buffer, offsets + 4, lengths, column.oid, loaders, instants_ns))
                offsets = offsets + 4 + np.maximum(lengths, 0)
            yield list(zip(*values, strict=True))


def _walk(data: bytearray) -> Iterator[tuple[int, int, int]]:
    """``(kind, body start, body end)`` of every message; ``WireError`` unless the messages fill
    ``data`` exactly and the last is ReadyForQuery."""
    position, size, kind = 0, len(data), 0
    unpack = struct.Struct("!i").unpack_from
    while position < size:
        if position + 5 > size:
            raise WireError(f"a message header cut at byte {position} of {size}")
        kind = data[position]
        end = position + 1 + unpack(data, position + 1)[0]
        if end > size:
            raise WireError(f"a message of kind {chr(kind)!r} runs past the reply's {size} bytes")
        yield kind, position + 5, end
        position = end
    if kind != 0x5A:
        raise WireError("the reply does not end with ReadyForQuery")


def _columns(data: bytearray, start: int) -> list[Column]:
    count = struct.unpack_from("!h", data, start)[0]
    position, columns = start + 2, []
    for _ in range(count):
        name_end = data.index(0, position)
        name = bytes(data[position:name_end]).decode()
        oid = struct.unpack_from("!i", data, name_end + 7)[0]  # after table oid (4), attnum (2)
        columns.append(Column(name, oid))
        position = name_end + 19  # table oid, attnum, type oid, typlen, typmod, format
    return columns


def _error_text(data: bytearray, start: int, end: int) -> str:
    fields = {
        part[:1]: part[1:].decode(errors="replace") for part in bytes(data[start:end]).split(b"\x00") if part
    }
    return f"{fields.get(b'S', 'ERROR')}: {fields.get(b'M', 'no message')}"


def _int32(buffer: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The big-endian int32 at each offset of ``buffer``."""
    return _fixed(buffer, offsets, ">i4").astype(np.int64)


def _fixed(buffer: np.ndarray, offsets: np.ndarray, dtype: str) -> np.ndarray:
    """The fixed-width big-endian value of ``dtype`` at each offset."""
    width = np.dtype(dtype).itemsize
    gathered = buffer[offsets[:, None] + np.arange(width)]  # a new (rows, width) array
    return gathered.view(dtype).reshape(-1)


LoaderLookup = Callable[[int], Callable[[memoryview], Any]]  # type oid → binary loader of a value
_NUMBERS = {700: ">f4", 701: ">f8", 20: ">i8", 23: ">i4", 21: ">i2"}  # float4/8, int8/4/2
_INSTANTS = frozenset((1114, 1184))  # timestamp, timestamptz
_TEXTS = frozenset((25, 1043, 19, 1042))  # text, varchar, name, bpchar


def decode_column(
    buffer: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    oid: int,
    loaders: LoaderLookup,
    instants_ns: bool = True,
) -> list[Any]:
    """One column's values as Python objects: numbers as psycopg loads them, instants as int ns
    since the epoch (what an answer normalises psycopg's datetimes to), texts as ``str`` (one
    object per distinct value), NULL as ``None``; other types (and instants unless
    ``instants_ns``) through psycopg's own loader."""
    nulls = lengths < 0
    safe = np.where(nulls, 0, starts)  # a NULL has no bytes: read a harmless place, drop after
    if oid in _NUMBERS:
        values = _fixed(buffer, safe, _NUMBERS[oid]).tolist()
    elif oid in _INSTANTS and instants_ns:
        micros = _fixed(buffer, safe, ">i8")
        if ((micros > MAX_NS_MICROS) | (micros < -MAX_NS_MICROS)).any():  # ±infinity, or past int64 ns
            return _by_value(buffer, starts.tolist(), lengths.tolist(), oid, loaders)
        values = (micros * 1000 + EPOCH_2000_NS).tolist()
    elif oid == 16:  # bool
        values = (buffer[safe] != 0).tolist()
    else:
        return _by_value(buffer, starts.tolist(), lengths.tolist(), oid, loaders)
    if nulls.any():
        return [None if null else value for value, null in zip(values, nulls.tolist(), strict=True)]
    return values


def _by_value(
    buffer: np.ndarray, starts: list[int], lengths: list[int], oid: int, loaders: LoaderLookup
) -> list[Any]:
    view = memoryview(buffer)
    if oid in _TEXTS:
        texts: dict[bytes, str] = {}
        out: list[Any] = []
        for start, length in zip(starts, lengths, strict=True):
            if length < 0:
                out.append(None)
                continue
            raw = bytes(view[start : start + length])
            text = texts.get(raw)
            if text is None:
                text = texts[raw] = raw.decode()
            out.append(text)
        return out
    load = loaders(oid)
    return [None if n < 0 else load(view[s : s + n]) for s, n in zip(starts, lengths, strict=True)]
