"""QuestDB target: line protocol (ILP) over HTTP ``/write``, queries over REST ``/exec``, admin
over PG wire.

Load path: each Arrow batch becomes line protocol text by the shared vectorised builder
(``targets/lineprotocol.py``: Arrow kernels on whole columns, no per-row Python step; tags in TSBS's
order) — the same text TSBS's QuestDB loader sends. One batch is one HTTP request, which QuestDB
commits to the table's WAL as one transaction before its 204. ``flush()`` then waits until the WAL
apply job has made every committed transaction visible (``wal_tables()``: writerTxn ==
sequencerTxn for every table). The official ``questdb`` client's ``Buffer.dataframe`` (ILP v2,
binary doubles) was measured at 0.40 M rows/s on one core for cpu rows against 0.94 M rows/s for
the vectorised text (``bench/shaping.py``), so the load no longer uses it.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any, ClassVar

import psycopg
import pyarrow as pa
from psycopg.adapt import Loader
from psycopg.pq import Format

from tsbench.runtimes.basic_auth import basic_auth
from tsbench.targets.base import (
    Capabilities,
    Endpoint,
    Footprint,
    Target,
    TargetError,
    send_encoded,
)
from tsbench.targets.httpclient import LeanHttp
from tsbench.targets.lineprotocol import LineBuilder, LineFormat
from tsbench.targets.questdb import dialect, iot_dialect, rollup
from tsbench.targets.questdb.config import HTTP_USER
from tsbench.targets.questdb.rest import QuestDBRestSession
from tsbench.targets.questdb.rollup_target import QuestDBRollups
from tsbench.targets.questdb.server import QuestDBServer
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import INT, Measurement, UseCase

# DEDUP UPSERT KEYS(timestamp, entity, extra tags) on every table: off (README.md, "Schema", says why);
# the switch stays so a run can measure QuestDB with it.
DEDUP = False
FLUSH_TIMEOUT_S = 600.0
# One ILP/HTTP request per batch (server limit line.http.max.recv.buffer.size, 1 GiB, is far above
# any body the load driver sends); a request is never resent (see QuestDBWriter.send).
REQUEST_TIMEOUT_S = 60.0
INGEST = "ILP over HTTP /write: line protocol text (vectorised from Arrow), one request per batch"

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


def http_login(endpoint: Endpoint) -> dict[str, str]:
    """HTTP Basic for REST and ILP over HTTP: the login's user and the endpoint's password."""
    return basic_auth(HTTP_USER, endpoint.secrets.get("password"))


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


class QuestDBWriter:
    """One load worker: one kept-alive HTTP connection to ILP ``/write`` (``LeanHttp``). ``write``
    encodes Arrow batches as it sends them; ``send`` posts a body the wire format made earlier."""

    def __init__(self, endpoint: Endpoint, line_format: LineFormat):
        self.format = line_format
        self.http = LeanHttp(endpoint.host, endpoint.port("http"), http_login(endpoint), REQUEST_TIMEOUT_S)

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        return send_encoded(self, self.format, measurement, batch)

    def send(self, measurement: str, payload: bytes | memoryview) -> None:
        """POST one body; QuestDB commits it as one WAL transaction before its 204. Never resent
        (a resend of a request the server had committed would load its rows twice)."""
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


class QuestDBTarget(QuestDBRollups, Target):
    name = "questdb"
    title = "QuestDB"
    colour = "#CC79A7"
    client_packages = ("psycopg", "httptools")
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=False,
        keeps=Keeps.LAST if DEDUP else Keeps.ALL,  # DEDUP UPSERT KEYS replace the row of a key; else append
        compression="none (native column files; ZFS/Parquet compression not used)",
        rollups=(
            "materialized views (Apache-2): a 1-minute view of cpu (SAMPLE BY 1m; max, sum, count per "
            "host and field), built after the query passes when the run asks (rollup_after_load)"
        ),
        builds_rollups=True,
        unsupported={},
        restartable=True,
        schema_note=(
            "one WAL table per measurement, PARTITION BY DAY on the designated timestamp; entity and "
            "extra tags as SYMBOL, integer fields LONG, float fields DOUBLE; "
            + ("DEDUP UPSERT KEYS(timestamp, entity, extra tags)" if DEDUP else "no dedup")
        ),
        stores_bare_rows=False,
        merges_nameless_instants=DEDUP,
        row_model_note=(
            "a nameless iot row without any field is not sent (an ILP line needs a tag or a field)"
            + ("; nameless rows of one instant are one row (DEDUP)" if DEDUP else "")
        ),
    )

    @staticmethod
    def server_recipe() -> type:
        return QuestDBServer

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()  # guards the target's own PG-wire connection
        self._connection: psycopg.Connection | None = None
        self._format: LineFormat | None = None

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

    def line_format(self) -> LineFormat:
        with self._lock:
            if self._format is None:
                self._format = self.wire_format(self.use_case, self.tags)
            return self._format

    # -- contract ----------------------------------------------------------------------------------

    @property
    def tables(self) -> list[str]:
        return [m.name for m in self.use_case.measurements]

    def create_schema(self) -> None:
        """Empty tables of exactly our schema. A table that already has it (a retried load) is
        truncated; anything else is dropped and created. Truncating avoids piling up dropped table
        directories, which QuestDB purges only later — and dropping and re-creating the same name
        around a restart is the fragile corner of its table registry."""
        self._admin(rollup.drop_view())  # a rollup an earlier attempt built depends on cpu
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
        return QuestDBWriter(self.endpoint, self.line_format())

    @classmethod
    def wire_format(cls, use_case: UseCase, tags: pa.Table) -> LineFormat:
        """Plain line protocol text (loopback needs no gzip), bodies of ≤ 100,000 lines; a row
        without fields is a line of tags and timestamp (stored with NULL fields)."""
        return LineFormat(LineBuilder("questdb", use_case, tags, fieldless_lines=True), gzip_level=0)

    def wal_state(self, tables: list[str] | None = None) -> list[tuple[str, bool, int, int, str]]:
        """``(table, suspended, writerTxn, sequencerTxn, errorMessage)`` of ``tables`` (default:
        the use case's tables)."""
        names = ", ".join(dialect.literal(t) for t in (self.tables if tables is None else tables))
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
        """Devops and YCSB-TS kinds by ``dialect``, TSBS's iot kinds by ``iot_dialect``."""
        iot = iot_dialect.RENDERERS.get(query.query_type.kind)
        return iot(query, query.entity, query.measurement) if iot else dialect.render(query)

    def session(self) -> QuestDBRestSession:
        """REST ``/exec`` (TSBS's protocol for QuestDB), the JSON body received whole as bytes and
        decoded after the timed window (``rest.py`` says why not PG wire)."""
        return QuestDBRestSession(self.endpoint.host, self.endpoint.port("http"), http_login(self.endpoint))

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
            "ingest": INGEST,
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
