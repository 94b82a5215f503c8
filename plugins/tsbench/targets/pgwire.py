"""A query session over the PostgreSQL wire protocol that keeps receiving and decoding apart.

Shared client code of the targets that answer SQL over PG wire (PostgreSQL, TimescaleDB, QuestDB);
no database's own facts live here.

``fetch`` sends the query on the connection's own socket and keeps the reply as the bytes the
server sent (``pgwire_frames``): nothing is turned into Python objects, nothing per row or value
is done while timed — as TSBS's Go runner, which reads every row too. ``decode_parts`` walks and
decodes those bytes after the timed window. Where the connection is encrypted (TLS: its bytes are
not the protocol's) ``fetch`` is one libpq ``PQexecParams`` instead (extended protocol, binary
results, the whole answer in libpq's result in C with the GIL released), decoded through the
connection's loaders.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import psycopg
from psycopg.adapt import Transformer
from psycopg.pq import ExecStatus, Format

from tsbench.targets.base import TargetError
from tsbench.targets.pgwire_frames import Frames, WireError, completed, exchange

_ANSWERED = (ExecStatus.TUPLES_OK, ExecStatus.COMMAND_OK, ExecStatus.EMPTY_QUERY)
ROWS_PER_PART = 65_536  # rows decoded at once by decode_parts
REPLY_TIMEOUT_S = 3600.0  # the longest a query's reply may pause between two received blocks


class PgWireSession:
    """One query worker on its own autocommit connection (the session owns and closes it)."""

    def __init__(self, connection: psycopg.Connection, label: str):
        """``label`` names the target in error messages."""
        self.connection = connection
        self.label = label
        self._socket: socket.socket | None = None
        if not connection.pgconn.ssl_in_use:
            # A second descriptor of libpq's socket; with a timeout Python waits in poll() and
            # leaves the socket non-blocking, as libpq keeps it.
            self._socket = socket.socket(fileno=os.dup(connection.pgconn.socket))
            self._socket.settimeout(REPLY_TIMEOUT_S)

    def fetch(self, text: str) -> Any:
        """The reply's bytes (``bytearray``), or on an encrypted connection libpq's result; a
        TargetError when the server refused the query or the connection broke."""
        if self._socket is None:
            return self._fetch_result(text)
        try:
            reply = exchange(self._socket, text)
            if not completed(reply):  # an error, or an unusual reply: its messages say
                Frames.parse(reply)
        except OSError as error:  # ConnectionError included
            self.close()
            raise TargetError(f"{self.label}: connection lost: {error}\n{text[:300]}") from error
        except WireError as error:
            raise TargetError(f"{self.label}: {error}\n{text[:300]}") from error
        return reply

    def _fetch_result(self, text: str) -> Any:
        result = self.connection.pgconn.exec_params(text.encode(), [], result_format=Format.BINARY)
        if result.status not in _ANSWERED:
            message = (result.error_message or b"").decode(errors="replace").strip()
            result.clear()
            if self.connection.pgconn.status != 0:  # CONNECTION_OK = 0
                self.connection.close()
            raise TargetError(f"{self.label}: {message or result.status.name}\n{text[:300]}")
        return result

    def raw_size(self, raw: Any) -> int:
        """Bytes a raw answer holds: the reply's length; for a libpq result an estimate (16 B of
        bookkeeping and ~16 B of value per cell)."""
        if isinstance(raw, bytearray):
            return len(raw)
        return raw.ntuples * raw.nfields * 32

    def decode(self, raw: Any) -> list[tuple[Any, ...]]:
        """Rows of an answer ``fetch`` returned, every value as psycopg loads it; frees it."""
        return [row for part in self.decode_parts(raw, instants_ns=False) for row in part]

    def decode_parts(
        self, raw: Any, rows_per_part: int = ROWS_PER_PART, instants_ns: bool = True
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Rows in parts of ``rows_per_part``, so a caller can shrink each part before the next
        exists (the answer check). From a reply's bytes: numbers as psycopg loads them, instants
        as int ns since the epoch (what an answer normalises datetimes to; psycopg's datetimes
        unless ``instants_ns``), other types through psycopg's loaders; from a libpq result:
        psycopg's values throughout, the result freed at the end."""
        if isinstance(raw, bytearray):
            try:
                yield from Frames.parse(raw).rows(self._loaders(), rows_per_part, instants_ns)
            except WireError as error:
                raise TargetError(f"{self.label}: {error}") from error
            return
        try:
            if raw.status != ExecStatus.TUPLES_OK:
                return
            transformer = Transformer(self.connection)
            transformer.set_pgresult(raw, set_loaders=True, format=Format.BINARY)
            for start in range(0, raw.ntuples, rows_per_part):
                yield transformer.load_rows(start, min(raw.ntuples, start + rows_per_part), tuple)
        finally:
            raw.clear()

    def _loaders(self) -> Callable[[int], Callable[[Any], Any]]:
        transformer = Transformer(self.connection)

        @cache
        def load_of(oid: int) -> Callable[[Any], Any]:
            return transformer.get_loader(oid, Format.BINARY).load

        return load_of

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        return self.decode(self.fetch(text))

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self.connection.close()
