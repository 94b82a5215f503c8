"""QuestDB target: ILP over HTTP from pandas frames (official ``questdb`` client), SQL over PG wire.

Load path: each Arrow batch becomes a pandas DataFrame without a per-row Python step — numeric
columns and the ``time`` column convert column-wise, the batch's dictionary-encoded tags become
pandas categoricals, and the entity tags (region, datacenter, …) are joined as categoricals whose
codes come from one vectorised lookup (dictionary position → entity row → tag code). The client's
``Sender.dataframe`` serialises the frame to ILP in native code (categoricals → SYMBOL) and one
explicit ``flush`` sends it as one HTTP request, which QuestDB commits to the table's WAL as one
transaction before answering. ``flush()`` then waits until the WAL apply job has made every committed
transaction visible (``wal_tables()``: writerTxn == sequencerTxn for every table).
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import questdb
from psycopg.adapt import Loader
from psycopg.pq import Format
from questdb import QuestDBError, Sender

from tsbench.targets.base import Capabilities, Endpoint, Footprint, Payload, Target, TargetError
from tsbench.targets.httpclient import LeanHttp
from tsbench.targets.questdb import dialect
from tsbench.targets.questdb.rest import QuestDBRestSession
from tsbench.targets.questdb.server import QuestDBServer
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import INT, Measurement, UseCase

with warnings.catch_warnings():  # questdb 6 exports its standalone Buffer only from this module,
    warnings.simplefilter("ignore", DeprecationWarning)  # which it marks deprecated as a whole
    from questdb.ingress import Buffer

# DEDUP UPSERT KEYS(timestamp, entity, extra tags) on every table: off (README.md, "Schema", says why);
# the switch stays so a run can measure QuestDB with it.
DEDUP = False
FLUSH_TIMEOUT_S = 600.0
# ILP/HTTP sender settings: no auto-flush (one explicit flush = one request = one WAL transaction
# per batch), a buffer that holds a 10k-row batch without regrowing, a cap well above any batch the
# load driver sends (server limit: line.http.max.recv.buffer.size, 1 GiB), and no automatic resend of
# a failed request (a resend of a request the server had committed would load its rows twice; the
# failure reaches the load driver as TargetError instead).
SENDER_OPTIONS: dict[str, Any] = {
    "auto_flush": "off",
    "protocol_version": 2,
    "init_buf_size": 8 << 20,
    "max_buf_size": 1 << 30,
    "retry_timeout": 0,
    "request_timeout": 60_000,
}

FOOTPRINT_NOTE = (
    "QuestDB's own accounting: table_storage().diskSize per table = every file of the table's "
    "directory: partitions (column files), symbol maps and their indexes, the sequencer log and WAL "
    "segments not yet purged (applied segments are purged every cairo.wal.purge.interval, 30 s). "
    "While a table writer is open its column files include preallocated append pages (kept small "
    "by the recipe); idle writers are closed and their files truncated after cairo.inactive.writer.ttl."
)

_PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01 in µs since the Unix epoch


class _TimestampNsLoader(Loader):
    """PG binary ``timestamp`` (µs since 2000-01-01, UTC in QuestDB) → int ns since the Unix epoch.

    Exact and independent of the client's time zone (naive datetimes would be read as local time).
    """

    format = Format.BINARY

    def load(self, data: Any) -> int:
        return (int.from_bytes(data, "big", signed=True) + _PG_EPOCH_US) * 1_000


def _conninfo(endpoint: Endpoint) -> dict[str, Any]:
    return {
        "host": endpoint.host,
        "port": endpoint.port("pg"),
        "user": endpoint.user,
        "password": endpoint.secrets.get("password"),
        "dbname": endpoint.database,
        "autocommit": True,
        "connect_timeout": 10,
    }


def _connect(endpoint: Endpoint) -> psycopg.Connection:
    info = _conninfo(endpoint)
    try:
        connection = psycopg.connect(**info)
    except psycopg.Error as error:
        reason = str(error).strip()
        if info["password"]:
            reason = reason.replace(info["password"], "***")
        raise TargetError(
            f"questdb: cannot connect over PG wire to {endpoint.host}:{endpoint.port('pg')}: {reason}"
        ) from None
    connection.adapters.register_loader("timestamp", _TimestampNsLoader)
    return connection


def _symbol_codes(values: pa.ChunkedArray) -> tuple[np.ndarray, pd.Index]:
    """Per entity row: the code of its value among the distinct values (-1 for null)."""
    encoded = pc.dictionary_encode(values).combine_chunks()
    codes = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32)
    return codes, pd.Index(encoded.dictionary.to_pylist(), dtype=object)


class Framer:
    """Arrow batch → pandas frame ready for ``Sender.dataframe`` (tags as categoricals)."""

    def __init__(self, use_case: UseCase, tags: pa.Table):
        self.key = use_case.entity_key
        self.entities = tags.column(self.key).combine_chunks()
        self.entity_tags = {
            name: _symbol_codes(tags.column(name)) for name in use_case.entity_tags if name != self.key
        }
        self.int_fields = {m.name: {n for n, kind in m.fields if kind == INT} for m in use_case.measurements}

    def frame(self, measurement: str, batch: pa.RecordBatch) -> pd.DataFrame:
        frame = batch.to_pandas()
        # Integer fields with nulls (iot) would become float64; keep them integers (nullable Int64).
        for name in self.int_fields.get(measurement, ()):
            column = batch.column(name)
            if column.null_count:
                frame[name] = column.to_pandas(types_mapper={pa.int64(): pd.Int64Dtype()}.get)
        if self.entity_tags:
            entity = self._entity_rows(batch.column(self.key))
            for name, (codes, categories) in self.entity_tags.items():
                picked = np.where(entity >= 0, codes[np.maximum(entity, 0)], -1)
                frame[name] = pd.Categorical.from_codes(picked, categories=categories)
        return frame

    def _entity_rows(self, keys: pa.Array) -> np.ndarray:
        """For every row, the row of its entity in the tags table (-1 when unknown)."""
        if not pa.types.is_dictionary(keys.type):
            keys = keys.dictionary_encode()
        position = pc.index_in(keys.dictionary, value_set=self.entities).fill_null(-1)
        position = position.to_numpy(zero_copy_only=False).astype(np.int64)
        indices = keys.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        return np.where(indices >= 0, position[np.maximum(indices, 0)], -1)


class IlpFormat:
    """Wire-ready ILP bodies: the official client's own encoding (``Buffer.dataframe``, protocol
    version 2: binary doubles, nanosecond timestamps), one body per batch, taken as bytes."""

    precompressed = False

    def __init__(self, use_case: UseCase, tags: pa.Table):
        self.framer = Framer(use_case, tags)
        self.key = f"questdb-ilp/v{SENDER_OPTIONS['protocol_version']}/client-{questdb.__version__}/1"

    def encode(self, measurement: str, batch: pa.RecordBatch) -> list[Payload]:
        if not batch.num_rows:
            return []
        buffer = Buffer(
            protocol_version=SENDER_OPTIONS["protocol_version"], init_buf_size=SENDER_OPTIONS["init_buf_size"]
        )
        buffer.dataframe(self.framer.frame(measurement, batch), table_name=measurement, at="time")
        return [Payload(bytes(buffer), batch.num_rows)]


class QuestDBWriter:
    """One load worker: one ILP/HTTP sender (its own HTTP connection) for Arrow batches, and one
    kept-alive HTTP connection for wire-ready bodies (``send``: POST /write, never resent)."""

    def __init__(self, conf: str, framer: Framer, endpoint: Endpoint):
        self.framer = framer
        self.http = LeanHttp(
            endpoint.host, endpoint.port("http"), timeout_s=SENDER_OPTIONS["request_timeout"] / 1000
        )
        self.conf = conf
        self._sender: Sender | None = None

    def _open_sender(self) -> Sender:
        if self._sender is None:
            self._sender = Sender.from_conf(self.conf)
            try:
                self._sender.establish()
            except QuestDBError as error:
                raise TargetError(f"questdb: cannot open an ILP/HTTP sender: {error}") from None
        return self._sender

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        rows = batch.num_rows
        if not rows:
            return 0
        frame = self.framer.frame(measurement, batch)
        sender = self._open_sender()
        try:
            sender.dataframe(frame, table_name=measurement, at="time")
            # One request, one table: QuestDB commits it as one WAL transaction before answering.
            sender.flush(transactional=True)
        except QuestDBError as error:
            raise TargetError(
                f"questdb: ILP/HTTP write of {rows} rows to {measurement} failed: {error}"
            ) from None
        return rows

    def send(self, measurement: str, payload: bytes) -> None:
        """POST one wire-ready body; QuestDB commits it as one WAL transaction before its 204."""
        try:
            reply = self.http.request("POST", "/write", payload, {"Content-Type": "text/plain"})
        except OSError as error:
            raise TargetError(f"questdb: ILP/HTTP POST to {measurement} failed: {error}") from None
        if reply.status != 204:
            raise TargetError(
                f"questdb: ILP/HTTP write to {measurement} answered {reply.status}: {reply.body[:300]!r}"
            )

    def close(self) -> None:
        self.http.close()
        if self._sender is not None:
            self._sender.close(flush=False)


def _dedup_keys(measurement: Measurement, entity: str) -> list[str]:
    return [dialect.TS, entity, *measurement.extra_tags]


def table_columns(
    measurement: Measurement, use_case: UseCase, dedup: bool | None = None
) -> list[tuple[str, str, bool, bool]]:
    """``(column, type, designated, upsertKey)`` per column, as QuestDB's ``table_columns()`` lists
    them for the table ``table_ddl`` creates."""
    dedup = DEDUP if dedup is None else dedup
    keys = set(_dedup_keys(measurement, use_case.entity_key)) if dedup else set()
    columns = [(tag, "SYMBOL") for tag in (*use_case.entity_tags, *measurement.extra_tags)]
    columns += [(name, "LONG" if kind == INT else "DOUBLE") for name, kind in measurement.fields]
    columns.append((dialect.TS, "TIMESTAMP"))
    return [(name, kind, name == dialect.TS, name in keys) for name, kind in columns]


def table_ddl(measurement: Measurement, use_case: UseCase, dedup: bool | None = None) -> str:
    """``CREATE TABLE`` for one measurement: tags as SYMBOL, ints as LONG, floats as DOUBLE."""
    dedup = DEDUP if dedup is None else dedup
    columns = ", ".join(f"{name} {kind}" for name, kind, *_ in table_columns(measurement, use_case, dedup))
    text = f"CREATE TABLE {measurement.name} ({columns}) TIMESTAMP({dialect.TS}) PARTITION BY DAY WAL"
    if dedup:
        text += f" DEDUP UPSERT KEYS({', '.join(_dedup_keys(measurement, use_case.entity_key))})"
    return text


class QuestDBTarget(Target):
    name = "questdb"
    title = "QuestDB"
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=False,
        compression="none (native column files; ZFS/Parquet compression not used)",
        unsupported={},
        restartable=True,
        schema_note=(
            "one WAL table per measurement, PARTITION BY DAY on the designated timestamp; entity and "
            "extra tags as SYMBOL, integer fields LONG, float fields DOUBLE; "
            + ("DEDUP UPSERT KEYS(timestamp, entity, extra tags)" if DEDUP else "no dedup")
        ),
    )

    @staticmethod
    def server_recipe() -> type:
        return QuestDBServer

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()  # guards the target's own PG-wire connection
        self._connection: psycopg.Connection | None = None
        self._framer: Framer | None = None

    # -- connections -------------------------------------------------------------------------------

    def _admin(self, text: str) -> list[tuple[Any, ...]]:
        """Run one statement on the target's own PG-wire connection (serialised by a lock). A
        connection that broke (e.g. the server was restarted) is replaced once."""
        with self._lock:
            for attempt in (1, 2):
                if self._connection is None or self._connection.closed:
                    self._connection = _connect(self.endpoint)
                try:
                    cursor = self._connection.execute(text, binary=True)
                    return cursor.fetchall() if cursor.description else []
                except psycopg.OperationalError as error:
                    if attempt == 1 and self._connection.broken:
                        self._connection.close()
                        continue
                    raise TargetError(f"questdb: {text[:120]!r} failed: {error}") from None
                except psycopg.Error as error:
                    raise TargetError(f"questdb: {text[:120]!r} failed: {error}") from None
            raise AssertionError("unreachable")

    def ilp_conf(self) -> str:
        """The client configuration string of an ILP/HTTP sender (no secrets: ILP needs none here)."""
        options = "".join(f"{key}={value};" for key, value in SENDER_OPTIONS.items())
        return f"http::addr={self.endpoint.host}:{self.endpoint.port('http')};{options}"

    def framer(self) -> Framer:
        with self._lock:
            if self._framer is None:
                self._framer = Framer(self.use_case, self.tags)
            return self._framer

    # -- contract ----------------------------------------------------------------------------------

    @property
    def tables(self) -> list[str]:
        return [m.name for m in self.use_case.measurements]

    def create_schema(self) -> None:
        """Empty tables of exactly our schema. A table that already has it (a retried load) is
        truncated; anything else is dropped and created. Truncating avoids piling up dropped table
        directories, which QuestDB purges only later — and dropping and re-creating the same name
        around a restart is the fragile corner of its table registry."""
        healthy = {name for name, suspended, *_ in self.wal_state() if not suspended}
        for measurement in self.use_case.measurements:
            name = measurement.name
            if name in healthy and self._columns(name) == table_columns(measurement, self.use_case):
                self._admin(f"TRUNCATE TABLE {name}")
            else:
                self._admin(f"DROP TABLE IF EXISTS {name}")
                self._admin(table_ddl(measurement, self.use_case))
        self.flush()  # the truncations are WAL transactions too

    def _columns(self, table: str) -> list[tuple[str, str, bool, bool]]:
        rows = self._admin(
            f'SELECT "column", type, designated, upsertKey FROM table_columns({dialect.literal(table)})'
        )
        return [(str(c), str(t), bool(d), bool(u)) for c, t, d, u in rows]

    def writer(self) -> QuestDBWriter:
        return QuestDBWriter(self.ilp_conf(), self.framer(), self.endpoint)

    @classmethod
    def wire_format(cls, use_case: UseCase, tags: pa.Table) -> IlpFormat:
        return IlpFormat(use_case, tags)

    def wal_state(self) -> list[tuple[str, bool, int, int, str]]:
        """``(table, suspended, writerTxn, sequencerTxn, errorMessage)`` of our tables."""
        names = ", ".join(dialect.literal(t) for t in self.tables)
        return [
            (str(name), bool(suspended), int(writer), int(sequencer), str(message or ""))
            for name, suspended, writer, sequencer, message in self._admin(
                "SELECT name, suspended, writerTxn, sequencerTxn, errorMessage FROM wal_tables() "
                f"WHERE name IN ({names})"
            )
        ]

    def flush(self) -> None:
        """Wait until the WAL apply job has applied every committed transaction of our tables."""
        deadline = time.monotonic() + FLUSH_TIMEOUT_S
        pause = 0.002
        while True:
            state = self.wal_state()
            broken = [
                f"{name}: {message or 'suspended'}" for name, suspended, *_, message in state if suspended
            ]
            if broken:
                raise TargetError("questdb: WAL apply suspended for " + "; ".join(broken))
            pending = {
                name: sequencer - writer for name, _, writer, sequencer, _ in state if writer < sequencer
            }
            if not pending:
                return
            if time.monotonic() > deadline:
                raise TargetError(f"questdb: WAL not applied after {FLUSH_TIMEOUT_S:.0f} s: {pending}")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def row_count(self, measurement: str) -> int:
        self.use_case.measurement(measurement)  # KeyError for a measurement the use case lacks
        return int(self._admin(f"SELECT count() FROM {measurement}")[0][0])

    def render(self, query: LogicalQuery) -> str:
        return dialect.render(query, self.use_case.entity_key, "cpu")

    def session(self) -> QuestDBRestSession:
        """REST ``/exec`` (TSBS's protocol for QuestDB), the JSON body received whole as bytes and
        decoded after the timed window (``rest.py`` says why not PG wire)."""
        return QuestDBRestSession(self.endpoint.host, self.endpoint.port("http"))

    def footprint(self) -> Footprint:
        names = ", ".join(dialect.literal(t) for t in self.tables)
        rows = self._admin(f"SELECT tableName, diskSize FROM table_storage() WHERE tableName IN ({names})")
        parts = {str(name): int(size) for name, size in rows}
        return Footprint(bytes=sum(parts.values()), note=FOOTPRINT_NOTE, parts=parts)

    def version(self) -> str:
        build = str(self._admin("SELECT build")[0][0])
        match = re.search(r"QuestDB ([^,\s]+)", build)
        return match.group(1) if match else build

    def settings(self) -> dict[str, Any]:
        keys = (
            "shared.worker.count",
            "shared.network.worker.count",
            "shared.query.worker.count",
            "cairo.commit.mode",
            "cairo.max.uncommitted.rows",
            "cairo.wal.purge.interval",
            "cairo.wal.segment.rollover.row.count",
            "cairo.auto.scale.symbol.capacity",
            "line.http.max.recv.buffer.size",
            *QuestDBServer.tuning,  # everything the recipe sets, as the server reports it
        )
        wanted = ", ".join(dialect.literal(k) for k in keys)
        server = dict(
            self._admin(
                f"SELECT property_path, value FROM (SHOW PARAMETERS) WHERE property_path IN ({wanted})"
            )
        )
        return {
            "build": str(self._admin("SELECT build")[0][0]),
            "ingest": "ILP over HTTP (questdb Python client, Sender.dataframe; one request per batch)",
            "sender": dict(SENDER_OPTIONS),
            "query_protocol": "REST /exec (JSON body received whole, decoded after the timed window)",
            "schema": self.capabilities.schema_note,
            "dedup": DEDUP,
            "server": {k: server.get(k) for k in keys},
        }

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


TARGET = QuestDBTarget
