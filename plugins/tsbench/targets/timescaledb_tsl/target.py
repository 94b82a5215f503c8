"""TimescaleDB's full edition (Apache-2 core + Timescale License): the timescaledb target — same
hypertables, dialect, load path and footprint — on the full edition's server, plus native
compression (``compress``: every chunk of every hypertable, segmented by ``tags_id`` and ordered by
``time DESC``, TSBS's and Timescale's recommended layout for per-host series) and a continuous
aggregate of cpu (``build_rollup``: see ``rollup.py``)."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, ClassVar

from tsbench.targets.base import Compression, Rollup, RollupRefresh
from tsbench.targets.postgres.dialect import SqlDialect, instant
from tsbench.targets.postgres.target import TAGS_TABLE
from tsbench.targets.timescaledb.target import TimescaleTarget
from tsbench.targets.timescaledb_tsl import rollup
from tsbench.targets.timescaledb_tsl.rollup import RollupDialect
from tsbench.targets.timescaledb_tsl.server import TimescaleTslRecipe
from tsbench.workload.queries import LogicalQuery

SEGMENT_BY = "tags_id"
ORDER_BY = "time DESC"


class TimescaleTslTarget(TimescaleTarget):
    name = "timescaledb_tsl"
    title = "TimescaleDB (full edition)"
    colour = "#8C564B"
    capabilities = replace(
        TimescaleTarget.capabilities,
        compression=(
            "native columnar compression (Timescale License): available; chunks stay uncompressed "
            "unless compressed after the load (segment by tags_id, order by time DESC)"
        ),
        compresses_after_load=True,
        rollups=(
            "continuous aggregates (Timescale License): a 1-minute rollup of cpu (max, sum, count per "
            "host and field), built after the query passes when the run asks (rollup_after_load)"
        ),
        builds_rollups=True,
    )
    dialect: ClassVar[SqlDialect] = RollupDialect()

    @staticmethod
    def server_recipe() -> type[TimescaleTslRecipe]:
        return TimescaleTslRecipe

    def hypertables(self) -> list[str]:
        return [m.name for m in self.use_case.measurements if m.name != TAGS_TABLE]

    def _hypertable_bytes(self) -> int:
        with self.connect() as conn:
            return sum(
                int(conn.execute("SELECT hypertable_size(%s::regclass)", (name,)).fetchone()[0] or 0)
                for name in self.hypertables()
            )

    def compress(self) -> Compression:
        """Enable compression on every hypertable and compress all its chunks (timed as one step,
        with a CHECKPOINT); ``units`` = chunks compressed."""
        before = self._hypertable_bytes()
        started = time.perf_counter()
        chunks = 0
        with self.connect() as conn:
            for name in self.hypertables():
                conn.execute(
                    f"ALTER TABLE {name} SET (timescaledb.compress, "
                    f"timescaledb.compress_segmentby = '{SEGMENT_BY}', "
                    f"timescaledb.compress_orderby = '{ORDER_BY}')"
                )
                row = conn.execute(
                    "SELECT count(compress_chunk(c, if_not_compressed => true)) "
                    "FROM show_chunks(%s::regclass) c",
                    (name,),
                ).fetchone()
                chunks += int(row[0]) if row else 0
            conn.execute("CHECKPOINT")
        seconds = time.perf_counter() - started
        note = f"compress_chunk on every chunk, segment by {SEGMENT_BY}, order by {ORDER_BY}; hypertable_size"
        return Compression(chunks, seconds, before, self._hypertable_bytes(), note)

    def build_rollup(self) -> Rollup:
        """Create the 1-minute continuous aggregate of cpu and materialise every row loaded
        (``refresh_continuous_aggregate`` over the whole range), then CHECKPOINT: timed as one step.
        Rows and bytes are the view's (``hypertable_size`` of its materialisation hypertable)."""
        fields = next(m.field_names for m in self.use_case.measurements if m.name == rollup.MEASUREMENT)
        started = time.perf_counter()
        with self.connect() as conn:
            conn.execute(f"DROP MATERIALIZED VIEW IF EXISTS {rollup.VIEW}")  # an earlier try's
            conn.execute(rollup.create_view(fields))
            conn.execute(f"CALL refresh_continuous_aggregate('{rollup.VIEW}', NULL, NULL)")
            conn.execute("CHECKPOINT")
            seconds = time.perf_counter() - started
            rows = conn.execute(f"SELECT count(*) FROM {rollup.VIEW}").fetchone()
            size = conn.execute(
                "SELECT hypertable_size(format('%%I.%%I', materialization_hypertable_schema, "
                "materialization_hypertable_name)::regclass) "
                "FROM timescaledb_information.continuous_aggregates WHERE view_name = %s",
                (rollup.VIEW,),
            ).fetchone()
        note = (
            f"continuous aggregate {rollup.VIEW} (time_bucket 1 minute × host; max, sum, count per field), "
            "materialised only; hypertable_size of its materialisation"
        )
        return Rollup(
            rollup.VIEW,
            rollup.RESOLUTION_NS // 10**9,
            seconds,
            int(rows[0]) if rows else 0,
            int(size[0] or 0) if size else 0,
            note,
            rollup.MEASUREMENT,
        )

    def render_on_rollup(self, query: LogicalQuery) -> str | None:
        return self.dialect.render_on_rollup(query)

    def refresh_rollup(self, start_ns: int, end_ns: int) -> RollupRefresh:
        """``refresh_continuous_aggregate`` over the appended window, then CHECKPOINT (timed)."""
        window = f"{instant(start_ns)}, {instant(end_ns)}"
        started = time.perf_counter()
        with self.connect() as conn:
            conn.execute(f"CALL refresh_continuous_aggregate('{rollup.VIEW}', {window})")
            conn.execute("CHECKPOINT")
            seconds = time.perf_counter() - started
            rows = conn.execute(
                f"SELECT count(*) FROM {rollup.VIEW} WHERE minute >= {instant(start_ns)} "
                f"AND minute < {instant(end_ns)}"
            ).fetchone()
        note = "refresh_continuous_aggregate over the appended window, then CHECKPOINT"
        return RollupRefresh(seconds, int(rows[0]) if rows else 0, note)

    def settings(self) -> dict[str, Any]:
        body = super().settings()
        body["compression"] = (
            f"available (TSL): segment by {SEGMENT_BY}, order by {ORDER_BY} when compressed after the load"
        )
        return body


TARGET = TimescaleTslTarget
