"""A query session over the PostgreSQL wire protocol that keeps receiving and decoding apart.

Shared client code of the targets that answer SQL over PG wire (PostgreSQL, TimescaleDB, QuestDB);
no database's own facts live here.

``fetch`` is one libpq ``PQexecParams`` (extended protocol, no parameters, binary result format):
libpq reads the server's whole answer into its own result object in C, with the GIL released, and
nothing is turned into Python objects — what TSBS's Go runner does, which reads every row too.
``decode`` then builds Python rows with the connection's loaders (the caller does it after the
timed window), and frees the libpq result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.adapt import Transformer
from psycopg.pq import ExecStatus, Format

from tsbench.targets.base import TargetError

_ANSWERED = (ExecStatus.TUPLES_OK, ExecStatus.COMMAND_OK, ExecStatus.EMPTY_QUERY)
ROWS_PER_PART = 65_536  # rows decoded at once by decode_parts


class PgWireSession:
    """One query worker on its own autocommit connection (the session owns and closes it)."""

    def __init__(self, connection: psycopg.Connection, label: str):
        """``label`` names the target in error messages."""
        self.connection = connection
        self.label = label

    def fetch(self, text: str) -> Any:
        """The libpq result holding every row of the answer (TargetError when the server refused)."""
        result = self.connection.pgconn.exec_params(text.encode(), [], result_format=Format.BINARY)
        if result.status not in _ANSWERED:
            message = (result.error_message or b"").decode(errors="replace").strip()
            result.clear()
            if self.connection.pgconn.status != 0:  # CONNECTION_OK = 0
                self.connection.close()
            raise TargetError(f"{self.label}: {message or result.status.name}\n{text[:300]}")
        return result

    def raw_size(self, raw: Any) -> int:
        """Estimated bytes a libpq result holds: 16 B of bookkeeping and ~16 B of value per cell."""
        return raw.ntuples * raw.nfields * 32

    def decode(self, raw: Any) -> list[tuple[Any, ...]]:
        """Rows of a result ``fetch`` returned, through the connection's loaders; frees it."""
        return [row for part in self.decode_parts(raw) for row in part]

    def decode_parts(self, raw: Any, rows_per_part: int = ROWS_PER_PART) -> Iterator[list[tuple[Any, ...]]]:
        """``decode`` in parts of ``rows_per_part`` rows, so a caller can shrink each part before
        the next exists; frees the result at the end."""
        try:
            if raw.status != ExecStatus.TUPLES_OK:
                return
            transformer = Transformer(self.connection)
            transformer.set_pgresult(raw, set_loaders=True, format=Format.BINARY)
            for start in range(0, raw.ntuples, rows_per_part):
                yield transformer.load_rows(start, min(raw.ntuples, start + rows_per_part), tuple)
        finally:
            raw.clear()

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        return self.decode(self.fetch(text))

    def close(self) -> None:
        self.connection.close()
