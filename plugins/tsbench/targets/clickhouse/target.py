"""ClickHouse: one MergeTree table per measurement, loaded with Arrow over HTTP (clickhouse-connect).

Schema: ``schema.py`` (DDL), load shaping: ``batches.py``, SQL: ``dialect.py`` (the iot types:
``iot_dialect.py``); README.md says why.
Every connection is a ``clickhouse_connect`` client built by ``connect``: HTTP to the endpoint's
``http`` port, or whatever ``Endpoint.extra["client_options"]`` adds (e.g. ``secure`` for TLS, or
``interface="chdb"`` — the official client's in-process engine, which the tests use).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, ClassVar

import clickhouse_connect
import pyarrow as pa
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from tsbench.targets.base import Capabilities, Endpoint, Footprint, RowSession, Target, TargetError
from tsbench.targets.clickhouse import dialect, iot_dialect
from tsbench.targets.clickhouse.batches import InsertShaper
from tsbench.targets.clickhouse.schema import quote_ident, sorting_key, table_ddl
from tsbench.targets.clickhouse.server import DATABASE, USER, ClickHouseServer
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import UseCase

# Client options (clickhouse_connect.get_client) of every connection, before the endpoint's own.
CLIENT_OPTIONS: dict[str, Any] = {
    "connect_timeout": 10,
    "send_receive_timeout": 600,
    # No server-side session per client: sessions serialise a client's queries and hold state we
    # do not use; every worker has its own client anyway.
    "autogenerate_session_id": False,
}
# Per insert: synchronous (the default of a self-managed server, stated because chDB and ClickHouse
# Cloud default to asynchronous inserts): the INSERT answers once its part is written and visible.
INSERT_SETTINGS: dict[str, Any] = {"async_insert": 0}

FOOTPRINT_NOTE = (
    "system.parts bytes_on_disk of the use case's tables: every part's compressed column files, marks, "
    "primary index, partition/min-max files and checksums. Active parts are the data; parts already "
    "merged away stay on disk until old_parts_lifetime (480 s) has passed and are listed as "
    "'<table> (outdated parts)'. Not counted: table metadata (a few kB), detached parts (none) and "
    "system tables (the recipes configure no background system logs). MergeTree keeps no WAL."
)

# Settings worth printing in the report, by system table.
REPORTED_SETTINGS = (
    "max_threads",
    "max_memory_usage",
    "max_insert_block_size",
    "async_insert",
    "insert_deduplicate",
    "optimize_read_in_order",
    "use_query_cache",
    "compile_expressions",
)
REPORTED_MERGE_TREE_SETTINGS = (
    "fsync_after_insert",
    "fsync_part_directory",
    "old_parts_lifetime",
    "index_granularity",
    "min_bytes_for_wide_part",
    "parts_to_throw_insert",
)
REPORTED_SERVER_SETTINGS = (
    "max_server_memory_usage",
    "mark_cache_size",
    "uncompressed_cache_size",
    "background_pool_size",
    "max_concurrent_queries",
    "database_atomic_delay_before_drop_table_sec",
)


def _scrub(text: str, endpoint: Endpoint) -> str:
    for secret in endpoint.secrets.values():
        if secret:
            text = text.replace(secret, "***")
    return " ".join(text.split())


def client_options(endpoint: Endpoint, database: str | None) -> dict[str, Any]:
    """Keyword arguments of ``clickhouse_connect.get_client`` for ``endpoint`` (with the password)."""
    extra: Mapping[str, Any] = endpoint.extra.get("client_options") or {}
    return {
        "host": endpoint.host,
        "port": endpoint.ports.get("http"),
        "username": endpoint.user or USER,
        "password": endpoint.secrets.get("password", ""),
        "database": database,
        **CLIENT_OPTIONS,
        **extra,
    }


def connect(endpoint: Endpoint, database: str | None = None) -> Client:
    """A clickhouse-connect client; TargetError (no credentials in it) when the server is not there."""
    try:
        return clickhouse_connect.get_client(**client_options(endpoint, database))
    except ClickHouseError as error:
        where = f"{endpoint.host}:{endpoint.ports.get('http')}"
        raise TargetError(
            f"clickhouse: cannot connect to {where} (HTTP): {_scrub(str(error), endpoint)[:500]}"
        ) from None


class ClickHouseWriter:
    """One load worker: its own client; one ``INSERT … FORMAT Arrow`` per batch."""

    def __init__(self, endpoint: Endpoint, database: str, shaper: InsertShaper):
        self.endpoint = endpoint
        self.database = database
        self.shaper = shaper
        self.client = connect(endpoint, database)

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        rows = batch.num_rows
        if not rows:
            return 0
        table = self.shaper.shape(measurement, batch)
        try:
            summary = self.client.insert_arrow(
                measurement, table, database=self.database, settings=INSERT_SETTINGS
            )
        except ClickHouseError as error:
            raise TargetError(
                f"clickhouse: insert of {rows} rows into {measurement} failed: "
                f"{_scrub(str(error), self.endpoint)[:500]}"
            ) from None
        written = summary.written_rows
        if written and written != rows:
            raise TargetError(f"clickhouse: {measurement}: the server wrote {written} of {rows} rows")
        return rows

    def close(self) -> None:
        self.client.close()


class ClickHouseSession(RowSession):
    """One query worker: its own client; rows come back as tuples in the SELECT's column order."""

    def __init__(self, endpoint: Endpoint, database: str):
        self.endpoint = endpoint
        self.client = connect(endpoint, database)

    def execute(self, text: str) -> list[tuple[Any, ...]]:
        try:
            return list(self.client.query(text).result_rows)
        except ClickHouseError as error:
            raise TargetError(
                f"clickhouse: query failed: {_scrub(str(error), self.endpoint)[:500]}\n  query: {text[:300]}"
            ) from None

    def close(self) -> None:
        self.client.close()


class ClickHouseTarget(Target):
    name = "clickhouse"
    title = "ClickHouse"
    colour = "#8C7A00"
    client_packages = ("clickhouse-connect",)
    capabilities: ClassVar[Capabilities] = Capabilities(
        durable=False,
        keeps=Keeps.ALL,  # a MergeTree keeps every row inserted (no ReplacingMergeTree)
        compression="LZ4 (server default) per column; time column DoubleDelta + LZ4",
        rollups="materialized views and projections (Apache-2): not built by tsbench",
        unsupported={},
        restartable=True,
        schema_note=(
            "one MergeTree table per measurement, PARTITION BY toDate(time), ORDER BY (entity key, time); "
            "time DateTime64(9, 'UTC'); entity tags denormalised into every row and all tags "
            "LowCardinality(String) (iot's entity tags LowCardinality(Nullable(String)), NULL in its "
            "nameless rows, with allow_nullable_key = 1); fields Int64/Float64 (Nullable where the "
            "use case has nulls). "
            "Inserts are synchronous (visible when acknowledged) but not fsynced "
            "(fsync_after_insert = 0): acknowledged data survives a server crash, not a power loss."
        ),
    )

    @staticmethod
    def server_recipe() -> type:
        return ClickHouseServer

    def __init__(self, endpoint: Endpoint, use_case: UseCase, tags: pa.Table):
        super().__init__(endpoint, use_case, tags)
        self._lock = threading.Lock()  # guards the target's own client and the shaper
        self._client: Client | None = None
        self._shaper: InsertShaper | None = None

    # -- helpers -----------------------------------------------------------------------------------

    @property
    def database(self) -> str:
        return self.endpoint.database or DATABASE

    @property
    def tables(self) -> list[str]:
        return [m.name for m in self.use_case.measurements]

    def qualified(self, table: str) -> str:
        return f"{quote_ident(self.database)}.{quote_ident(table)}"

    def _admin_client(self) -> Client:
        if self._client is None:
            self._client = connect(self.endpoint)  # no database: it may not exist yet
        return self._client

    def _admin(self, text: str) -> list[tuple[Any, ...]]:
        """Run one statement on the target's own client (serialised by a lock)."""
        with self._lock:
            client = self._admin_client()
            try:
                return list(client.query(text).result_rows)
            except ClickHouseError as error:
                raise TargetError(
                    f"clickhouse: {text[:120]!r} failed: {_scrub(str(error), self.endpoint)[:500]}"
                ) from None

    def _command(self, text: str) -> None:
        with self._lock:
            client = self._admin_client()
            try:
                client.command(text)
            except ClickHouseError as error:
                raise TargetError(
                    f"clickhouse: {text[:120]!r} failed: {_scrub(str(error), self.endpoint)[:500]}"
                ) from None

    def shaper(self) -> InsertShaper:
        with self._lock:
            if self._shaper is None:
                self._shaper = InsertShaper(self.use_case, self.tags)
            return self._shaper

    def _in_list(self, names: list[str]) -> str:
        return ", ".join(dialect.literal(name) for name in names)

    # -- contract ----------------------------------------------------------------------------------

    def create_schema(self) -> None:
        """Drop and create every measurement table. ``DROP … SYNC`` removes the old data at once (an
        Atomic database would otherwise keep it on disk for 480 s)."""
        self._command(f"CREATE DATABASE IF NOT EXISTS {quote_ident(self.database)}")
        for measurement in self.use_case.measurements:
            self._command(f"DROP TABLE IF EXISTS {self.qualified(measurement.name)} SYNC")
            self._command(table_ddl(measurement, self.use_case, self.database))

    def writer(self) -> ClickHouseWriter:
        return ClickHouseWriter(self.endpoint, self.database, self.shaper())

    def flush(self) -> None:
        """Nothing to wait for: every INSERT is synchronous, so its rows are in a committed part and
        visible to queries when ``write()`` returns. Not fsynced (see ``capabilities``)."""

    def row_count(self, measurement: str) -> int:
        self.use_case.measurement(measurement)  # KeyError for a measurement the use case lacks
        return int(self._admin(f"SELECT count() FROM {self.qualified(measurement)}")[0][0])

    def render(self, query: LogicalQuery) -> str:
        if query.query_type.kind in iot_dialect.RENDERERS:
            return iot_dialect.render(query)
        return dialect.render(query)

    def session(self) -> ClickHouseSession:
        return ClickHouseSession(self.endpoint, self.database)

    def footprint(self) -> Footprint:
        rows = self._admin(
            "SELECT table, active, sum(bytes_on_disk) FROM system.parts "
            f"WHERE database = {dialect.literal(self.database)} AND table IN ({self._in_list(self.tables)}) "
            "GROUP BY table, active ORDER BY table, active DESC"
        )
        parts: dict[str, int] = {}
        for table, active, size in rows:
            if active:
                parts[str(table)] = int(size)
            elif size:
                parts[f"{table} (outdated parts)"] = int(size)
        return Footprint(bytes=sum(parts.values()), note=FOOTPRINT_NOTE, parts=parts)

    def version(self) -> str:
        return str(self._admin("SELECT version()")[0][0])

    def _named(self, table: str, names: tuple[str, ...]) -> dict[str, str]:
        rows = self._admin(f"SELECT name, value FROM {table} WHERE name IN ({self._in_list(list(names))})")
        found = {str(name): str(value) for name, value in rows}
        return {name: found.get(name, "(not reported)") for name in names}

    def settings(self) -> dict[str, Any]:
        engines = self._admin(
            "SELECT name, engine_full FROM system.tables "
            f"WHERE database = {dialect.literal(self.database)} AND name IN ({self._in_list(self.tables)})"
        )
        return {
            "version": self.version(),
            "ingest": "HTTP INSERT … FORMAT Arrow (clickhouse-connect insert_arrow; one request per batch)",
            "insert_settings": dict(INSERT_SETTINGS),
            "query_protocol": "HTTP, Native format results (clickhouse-connect query)",
            "client": {**CLIENT_OPTIONS, "clickhouse_connect": clickhouse_connect.__version__},
            "schema": self.capabilities.schema_note,
            "sorting_key": ", ".join(sorting_key(self.use_case)),
            "tables": {str(name): str(engine) for name, engine in engines},
            "settings": self._named("system.settings", REPORTED_SETTINGS),
            "merge_tree_settings": self._named("system.merge_tree_settings", REPORTED_MERGE_TREE_SETTINGS),
            "server_settings": self._named("system.server_settings", REPORTED_SERVER_SETTINGS),
        }

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


TARGET = ClickHouseTarget
