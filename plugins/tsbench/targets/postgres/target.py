"""Plain PostgreSQL 15 with the TSBS relational schema, loaded by binary COPY (psycopg 3).

Schema (TSBS's, with hypertables switched off): ``tags (id int PRIMARY KEY, hostname text UNIQUE,
region text, …)`` and one table per measurement ``(time timestamptz NOT NULL, tags_id int,
<extra tags text…>, <fields double precision…>)`` with B-tree indexes ``(tags_id, time DESC)`` and
``(time DESC)``. ``TimescaleTarget`` (``targets/timescaledb``) extends this class: it turns each
measurement table into a hypertable and counts storage with TimescaleDB's size functions.

Load path: per batch, the entity dictionary is mapped to ``tags_id`` with Arrow (``index_in`` on the
dictionary + ``take`` on the indices), the rows are encoded into PostgreSQL's binary COPY format with
numpy (``encode.py``) and sent as one ``COPY … FROM STDIN (FORMAT binary)`` that commits on its own
(autocommit): one transaction per batch, durable at commit (``synchronous_commit = on``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
from psycopg import sql

from tsbench.targets.base import (
    Capabilities,
    Endpoint,
    Footprint,
    Payload,
    Target,
    TargetError,
    send_encoded,
)
from tsbench.targets.pgwire import PgWireSession
from tsbench.targets.postgres import encode
from tsbench.targets.postgres.dialect import SqlDialect, instant
from tsbench.targets.postgres.server import DATABASE, SUPERUSER, TUNING, PostgresRecipe
from tsbench.workload.kept import Keeps
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.usecases import Measurement, UseCase

TAGS_TABLE = "tags"
# Facts printed in the report next to the tuning written by the recipe.
REPORTED_SETTINGS = ("server_version", "wal_level", "data_checksums", "block_size", "max_connections")
# create_schema records the LSN at which the new schema's WAL begins as the tags table's comment;
# footprint counts the WAL from there. pg_wal itself keeps earlier loads' segments (recycled, up to
# max_wal_size), so a 3-trial run would otherwise count three loads' WAL as this data's.
WAL_START_MARK = "tsbench: this schema's WAL starts at LSN "
# What the footprint's ``wal`` part counts (in PostgreSQL's and TimescaleDB's footprint notes).
WAL_COUNTED = (
    "the WAL written since the schema was created (pg_wal_lsn_diff from the LSN create_schema recorded "
    "to the current one): this data's WAL, not that of earlier trials, which pg_wal keeps recycled up "
    "to max_wal_size (the disk figure counts all of pg_wal)"
)


def ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def connect(endpoint: Endpoint, autocommit: bool = True, timeout: int = 30) -> psycopg.Connection:
    """A psycopg 3 connection to the benchmark database at ``endpoint`` (TCP)."""
    try:
        return psycopg.connect(
            host=endpoint.host,
            port=endpoint.port("pg"),
            user=endpoint.user or SUPERUSER,
            password=endpoint.secrets.get("password"),
            dbname=endpoint.database or DATABASE,
            autocommit=autocommit,
            connect_timeout=timeout,
            prepare_threshold=None,
        )
    except psycopg.OperationalError as error:
        raise TargetError(f"cannot connect to {endpoint.host}:{endpoint.port('pg')}: {error}") from error


class CopyFormat:
    """Wire-ready binary COPY data: one ``COPY … FROM STDIN (FORMAT binary)`` body per batch.

    ``tags_id`` of a row = 1 + the row of its entity in the dataset's tags table, the ids
    ``create_schema`` gives the tags table; the entity dictionary is mapped once per batch."""

    key = "postgres-copy-binary/tags-id-by-row/1"
    precompressed = False

    def __init__(self, use_case: UseCase, tags: pa.Table):
        self.use_case = use_case
        self.names = tags.column(use_case.entity_key).combine_chunks().cast(pa.string())
        self.ids = pa.array(range(1, len(self.names) + 1), pa.int32())

    def tags_ids(self, entity: pa.Array) -> pa.Array:
        """The ``tags_id`` of every row: the dictionary mapped once, then taken by the indices."""
        if not pa.types.is_dictionary(entity.type):
            entity = pc.dictionary_encode(entity)
        positions = pc.index_in(entity.dictionary.cast(pa.string()), value_set=self.names)
        if positions.null_count:
            unknown = pc.filter(entity.dictionary, pc.is_null(positions)).to_pylist()[:5]
            raise TargetError(f"entities missing from the tags table: {unknown}")
        return pc.take(pc.take(self.ids, positions), entity.indices)

    def encode(self, measurement: str, batch: pa.RecordBatch) -> list[Payload]:
        if not batch.num_rows:
            return []
        m = self.use_case.measurement(measurement)
        columns: list[Any] = [
            encode.timestamptz(batch.column("time")),
            encode.int4(self.tags_ids(batch.column(self.use_case.entity_key))),
        ]
        columns += [encode.text(batch.column(tag)) for tag in m.extra_tags]
        columns += [encode.float8(batch.column(field)) for field in m.field_names]
        return [Payload(encode.copy_binary(columns, batch.num_rows), batch.num_rows)]


class CopyWriter:
    """One load worker: its own connection; one binary COPY (= one transaction) per batch."""

    def __init__(self, target: PostgresTarget):
        self.label = target.name
        self.format = CopyFormat(target.use_case, target.tags)
        self.connection = connect(target.endpoint)
        self.statements = {m.name: self._statement(m) for m in target.use_case.measurements}

    def _statement(self, measurement: Measurement) -> str:
        columns = ["time", "tags_id", *measurement.extra_tags, *measurement.field_names]
        return f"COPY {ident(measurement.name)} ({', '.join(map(ident, columns))}) FROM STDIN (FORMAT binary)"

    def write(self, measurement: str, batch: pa.RecordBatch) -> int:
        return send_encoded(self, self.format, measurement, batch)

    def send(self, measurement: str, payload: bytes) -> None:
        """One COPY of a wire-ready body; it commits on its own (autocommit)."""
        try:
            with self.connection.cursor() as cursor, cursor.copy(self.statements[measurement]) as copy:
                copy.write(payload)
        except psycopg.Error as error:
            raise TargetError(f"{self.label}: COPY into {measurement} failed: {error}") from error

    def close(self) -> None:
        self.connection.close()


class PostgresTarget(Target):
    name = "postgres"
    title = "PostgreSQL"
    colour = "#0072B2"
    client_packages = ("psycopg",)
    capabilities = Capabilities(
        durable=True,
        keeps=Keeps.ALL,  # a heap table without a unique index: every row sent is a row
        compression="none (heap tables; TOAST compresses only values over ~2 kB, none here)",
        rollups="materialized views (refreshed whole, PostgreSQL licence): not built by tsbench",
        unsupported={},
        restartable=True,
        schema_note=(
            "TSBS relational schema: tags(id, hostname, region, …) + one table per measurement "
            "(time timestamptz, tags_id int, extra tags text, fields double precision) with B-tree "
            "indexes (tags_id, time DESC) and (time DESC); plain tables"
        ),
    )
    dialect: ClassVar[SqlDialect] = SqlDialect()

    @staticmethod
    def server_recipe() -> type[PostgresRecipe]:
        return PostgresRecipe

    def connect(self, autocommit: bool = True) -> psycopg.Connection:
        return connect(self.endpoint, autocommit=autocommit)

    def remove_rows_from(self, measurement: str, start_ns: int) -> None:
        with self.connect() as conn:
            conn.execute(f"DELETE FROM {measurement} WHERE time >= {instant(start_ns)}")

    # schema ------------------------------------------------------------------------------------

    def create_schema(self) -> None:
        """Drop every table of the benchmark database's ``public`` schema, then create the tags
        table (filled from ``self.tags``, ids 1…N in row order) and one table per measurement;
        mark where their WAL starts (``WAL_START_MARK``) and checkpoint."""
        with self.connect(autocommit=False) as conn, conn.cursor() as cursor:
            leftovers = cursor.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
            for (table,) in leftovers:
                cursor.execute(f"DROP TABLE IF EXISTS {ident(table)} CASCADE")
            wal_start = cursor.execute("SELECT pg_current_wal_lsn()::text").fetchone()
            self._create_tags(cursor)
            for measurement in self.use_case.measurements:
                self._create_measurement(cursor, measurement)
            mark = WAL_START_MARK + (wal_start[0] if wal_start else "")
            comment = sql.SQL("COMMENT ON TABLE {} IS {}")
            cursor.execute(comment.format(sql.Identifier(TAGS_TABLE), sql.Literal(mark)))
            conn.commit()
        # Every load starts right after a checkpoint: the dropped data's WAL segments are recycled for
        # it, so pg_wal (in the disk figure) holds about one load's WAL whatever the trial count.
        with self.connect() as conn:
            conn.execute("CHECKPOINT")

    def _tag_columns(self) -> list[str]:
        return [tag for tag in self.use_case.entity_tags if tag in self.tags.column_names]

    def _create_tags(self, cursor: psycopg.Cursor) -> None:
        tags = self._tag_columns()
        key = self.use_case.entity_key
        columns = ", ".join(f"{ident(t)} text" + (" NOT NULL UNIQUE" if t == key else "") for t in tags)
        cursor.execute(f"CREATE TABLE {TAGS_TABLE} (id integer PRIMARY KEY, {columns})")
        rows = self.tags.num_rows
        if not rows:
            return
        encoded: list[Any] = [encode.int4(pa.array(range(1, rows + 1), pa.int32()))]
        encoded += [encode.text(self.tags.column(t).combine_chunks().cast(pa.string())) for t in tags]
        statement = f"COPY {TAGS_TABLE} (id, {', '.join(map(ident, tags))}) FROM STDIN (FORMAT binary)"
        with cursor.copy(statement) as copy:
            copy.write(encode.copy_binary(encoded, rows))

    def _create_measurement(self, cursor: psycopg.Cursor, measurement: Measurement) -> None:
        table = ident(measurement.name)
        columns = ["time timestamptz NOT NULL", "tags_id integer"]
        columns += [f"{ident(tag)} text" for tag in measurement.extra_tags]
        columns += [f"{ident(field)} double precision" for field in measurement.field_names]
        cursor.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
        self._after_create_table(cursor, measurement)
        cursor.execute(f"CREATE INDEX ON {table} (tags_id, time DESC)")
        cursor.execute(f"CREATE INDEX ON {table} (time DESC)")

    def _after_create_table(self, cursor: psycopg.Cursor, measurement: Measurement) -> None:
        """Hook between CREATE TABLE and CREATE INDEX (TimescaleDB makes the hypertable here)."""

    # load --------------------------------------------------------------------------------------

    def writer(self) -> CopyWriter:
        return CopyWriter(self)

    @classmethod
    def wire_format(cls, use_case: UseCase, tags: pa.Table) -> CopyFormat:
        return CopyFormat(use_case, tags)

    def flush(self) -> None:
        """Nothing to push: every ``write`` returned after its COPY committed, and a commit with
        ``synchronous_commit = on`` has fsynced its WAL. This only checks, on a new connection, that
        the server answers (so the load window cannot end on a dead server)."""
        with self.connect() as conn:
            conn.execute("SELECT 1")

    def row_count(self, measurement: str) -> int:
        with self.connect() as conn:
            row = conn.execute(f"SELECT count(*) FROM {ident(measurement)}").fetchone()
        return int(row[0]) if row else 0

    # queries -----------------------------------------------------------------------------------

    def render(self, query: LogicalQuery) -> str:
        return self.dialect.render(query)

    def session(self) -> PgWireSession:
        """Receives each answer whole in libpq; rows are decoded after the timed window."""
        return PgWireSession(connect(self.endpoint), self.name)

    # facts -------------------------------------------------------------------------------------

    def _tables(self) -> list[str]:
        return [TAGS_TABLE, *(m.name for m in self.use_case.measurements)]

    def _relation_parts(self, cursor: psycopg.Cursor, table: str) -> dict[str, int]:
        """Bytes of one table: heap (with free-space and visibility maps), indexes, TOAST."""
        row = cursor.execute(
            "SELECT pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0),"
            " pg_indexes_size(c.oid), coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) "
            "FROM pg_class c WHERE c.oid = to_regclass(%s)",
            (table,),
        ).fetchone()
        if row is None:
            return {}
        return {f"{table}.table": int(row[0]), f"{table}.indexes": int(row[1]), f"{table}.toast": int(row[2])}

    footprint_note: ClassVar[str] = (
        "PostgreSQL's own accounting: per table pg_table_size minus TOAST (heap + free-space and "
        "visibility maps), pg_indexes_size (all B-tree indexes) and the TOAST relation with its index "
        "(= pg_total_relation_size), for the tags table and every measurement table; plus "
        f"{WAL_COUNTED}. System catalogs are not counted."
    )

    def footprint(self) -> Footprint:
        with self.connect() as conn, conn.cursor() as cursor:
            parts: dict[str, int] = {}
            for table in self._tables():
                parts.update(self._relation_parts(cursor, table))
            parts["wal"] = self._wal_since_schema(cursor)
        return Footprint(bytes=sum(parts.values()), note=self.footprint_note, parts=parts)

    def _wal_since_schema(self, cursor: psycopg.Cursor) -> int:
        """Bytes of WAL written since ``create_schema`` (its mark on the tags table); all of
        ``pg_wal`` for a schema without the mark."""
        row = cursor.execute("SELECT obj_description(to_regclass(%s), 'pg_class')", (TAGS_TABLE,)).fetchone()
        mark = row[0] if row and row[0] else ""
        if mark.startswith(WAL_START_MARK):
            row = cursor.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", (mark[len(WAL_START_MARK) :],)
            ).fetchone()
        else:
            row = cursor.execute("SELECT coalesce(sum(size), 0) FROM pg_ls_waldir()").fetchone()
        return int(row[0]) if row else 0

    def version(self) -> str:
        with self.connect() as conn:
            row = conn.execute("SELECT current_setting('server_version')").fetchone()
        return f"PostgreSQL {row[0] if row else '?'}"

    def settings(self) -> dict[str, Any]:
        names = [
            *REPORTED_SETTINGS,
            *TUNING,
            *self.server_recipe().extra_settings,
            "shared_preload_libraries",
        ]
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT name, current_setting(name) FROM unnest(%s::text[]) AS name",
                (list(dict.fromkeys(names)),),
            ).fetchall()
        body: dict[str, Any] = dict(rows)
        body["load_path"] = "binary COPY FROM STDIN via psycopg 3, one transaction per batch"
        body["schema"] = self.capabilities.schema_note
        return body


TARGET = PostgresTarget
