"""TimescaleDB 2.19.3 (Apache-2 edition): the PostgreSQL target with every measurement table a
hypertable partitioned by ``time`` in 12-hour chunks (TSBS's default), ``time_bucket`` for buckets and
TimescaleDB's own size functions for the footprint. Schema, load path (binary COPY), flush semantics
and sessions are the PostgreSQL target's (``targets/postgres``)."""

from __future__ import annotations

from typing import Any, ClassVar

import psycopg

from tsbench.targets.base import Capabilities
from tsbench.targets.postgres.dialect import SqlDialect
from tsbench.targets.postgres.target import TAGS_TABLE, WAL_COUNTED, PostgresTarget
from tsbench.targets.timescaledb.dialect import TimescaleDialect
from tsbench.targets.timescaledb.server import TimescaleRecipe
from tsbench.workload.kept import Keeps
from tsbench.workload.usecases import Measurement

CHUNK_INTERVAL = "12 hours"


class TimescaleTarget(PostgresTarget):
    name = "timescaledb"
    title = "TimescaleDB"
    colour = "#E69F00"
    client_packages = ("psycopg",)
    capabilities = Capabilities(
        durable=True,
        keeps=Keeps.ALL,  # a hypertable without a unique index: every row sent is a row
        compression=(
            "none: the Apache-2 edition has no native (columnar) compression, a TSL feature; "
            "chunks are plain heap tables"
        ),
        rollups=(
            "none: continuous aggregates are a Timescale License feature, missing from the Apache-2 "
            "edition (the timescaledb_tsl target has them)"
        ),
        unsupported={},
        restartable=True,
        schema_note=(
            "TSBS schema: tags(id, hostname, region, …) + one hypertable per measurement "
            f"(time timestamptz, tags_id int, extra tags text, fields double precision), chunk interval "
            f"{CHUNK_INTERVAL}, B-tree indexes (tags_id, time DESC) and (time DESC) on every chunk"
        ),
    )
    dialect: ClassVar[SqlDialect] = TimescaleDialect()

    @staticmethod
    def server_recipe() -> type[TimescaleRecipe]:
        return TimescaleRecipe

    def _after_create_table(self, cursor: psycopg.Cursor, measurement: Measurement) -> None:
        # 2.x signature with a dimension builder; the indexes are created by the caller (the same
        # two as on plain PostgreSQL), so TimescaleDB's default (time DESC) index is not wanted.
        cursor.execute(
            "SELECT create_hypertable(%s::regclass, by_range('time', %s::interval), "
            "create_default_indexes => false)",
            (measurement.name, CHUNK_INTERVAL),
        )

    def _relation_parts(self, cursor: psycopg.Cursor, table: str) -> dict[str, int]:
        if table == TAGS_TABLE:
            return super()._relation_parts(cursor, table)
        row = cursor.execute(
            "SELECT coalesce(sum(table_bytes), 0), coalesce(sum(index_bytes), 0), "
            "coalesce(sum(toast_bytes), 0) FROM hypertable_detailed_size(%s::regclass)",
            (table,),
        ).fetchone()
        if row is None:
            return {}
        return {f"{table}.table": int(row[0]), f"{table}.indexes": int(row[1]), f"{table}.toast": int(row[2])}

    footprint_note: ClassVar[str] = (
        "TimescaleDB's own accounting: hypertable_detailed_size() of every measurement hypertable "
        "(table, index and TOAST bytes summed over all its chunks and the root table; "
        "= hypertable_size), the plain tags table by pg_table_size / pg_indexes_size / TOAST, plus "
        f"{WAL_COUNTED}. TimescaleDB's catalog tables and the system catalogs are not counted."
    )

    def version(self) -> str:
        with self.connect() as conn:
            row = conn.execute(
                "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'), "
                "current_setting('timescaledb.license', true), current_setting('server_version')"
            ).fetchone()
        extension, license_, server = row if row else ("?", "?", "?")
        return f"TimescaleDB {extension} ({license_} license) on PostgreSQL {server}"

    def settings(self) -> dict[str, Any]:
        body = super().settings()
        with self.connect() as conn:
            row = conn.execute(
                "SELECT extversion, current_setting('timescaledb.license', true) "
                "FROM pg_extension WHERE extname = 'timescaledb'"
            ).fetchone()
        body["timescaledb_version"], body["timescaledb.license"] = row if row else (None, None)
        body["chunk_time_interval"] = CHUNK_INTERVAL
        body["compression"] = "off (Apache-2 edition: no native compression)"
        return body


TARGET = TimescaleTarget
