"""The InfluxDB target's rollup: a continuous query into a retention policy of its own, filled over
what was loaded, brought up to an append, measured (InfluxQL in ``rollup.py``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tsbench.targets.base import Rollup, RollupRefresh, TargetError
from tsbench.targets.influxdb import rollup
from tsbench.targets.influxdb.dialect import ident
from tsbench.targets.rollups import MEASUREMENT, RESOLUTION_NS
from tsbench.workload.queries import LogicalQuery

if TYPE_CHECKING:
    from tsbench.workload.usecases import UseCase

BUILD_NOTE = (
    f"continuous query {rollup.CONTINUOUS_QUERY} (GROUP BY time(1m), * fill(none); max, sum, count per "
    "field) into "
    f"{rollup.RETENTION_POLICY}.{rollup.VIEW}; a continuous query runs only on the interval just ended by "
    "the server's clock, never on a dataset's timestamps, so the build is its SELECT … INTO over the "
    "loaded span, a day per statement (InfluxDB's backfill; tsbench's configuration keeps the continuous "
    "query service off); bytes: the retention policy's TSM files + WAL segments (SHOW STATS), most of a "
    "fresh rollup still in the WAL (snappy-compressed points, not yet TSM-encoded) until the cache is "
    "snapshotted; its share of the database's series file and shard index files is not counted"
)
REFRESH_NOTE = (
    "the continuous query's SELECT … INTO over the appended hour, run by tsbench (the continuous query "
    "service runs it once per interval, by the server's clock: never on these timestamps)"
)


class InfluxDBRollups:
    """Rollup methods of ``InfluxDBTarget`` (which gives ``_run``, ``database``, ``v2``)."""

    if TYPE_CHECKING:
        use_case: UseCase
        database: str
        v2: bool

        def _run(self, text: str, write: bool = False, database: bool = True) -> dict[str, Any]: ...

        def _rollup_bytes(self) -> int: ...

    def _cpu_fields(self) -> tuple[str, ...]:
        return self.use_case.measurement(MEASUREMENT).field_names

    def _refuse_on_v2(self) -> None:
        if self.v2:
            raise TargetError("influxdb 2: no continuous queries (its tasks are Flux): no rollup built")

    def _loaded_span(self) -> tuple[int, int]:
        """``[first, last]`` point time of cpu (ns); TargetError when cpu is empty."""
        field = self._cpu_fields()[0]
        times = []
        for selector in ("first", "last"):
            text = f"SELECT {selector}({ident(field)}) FROM {ident(MEASUREMENT)}"
            series = self._run(text).get("series") or []
            if not series:
                raise TargetError("influxdb: no cpu rows to roll up")
            times.append(int(series[0]["values"][0][0]))
        return times[0], times[1]

    def _count(self, start_ns: int | None = None, end_ns: int | None = None) -> int:
        entity = self.use_case.entity_key
        text = rollup.count_rows(self.database, self._cpu_fields(), entity, start_ns, end_ns)
        series = self._run(text).get("series") or []
        return int(series[0]["values"][0][1]) if series else 0

    def _fill(self, start_ns: int, end_ns: int) -> None:
        for statement in rollup.fill_statements(self.database, self._cpu_fields(), start_ns, end_ns):
            self._run(statement, write=True)

    def build_rollup(self) -> Rollup:
        """Drop an earlier rollup, create the retention policy and the continuous query, fill it
        over every loaded minute: timed as one step."""
        self._refuse_on_v2()
        started = time.perf_counter()
        for statement in rollup.create_statements(self.database, self._cpu_fields()):
            self._run(statement, write=True)
        first, last = self._loaded_span()
        self._fill(first, last + 1)
        seconds = time.perf_counter() - started
        return Rollup(
            rollup.VIEW,
            RESOLUTION_NS // 10**9,
            seconds,
            self._count(),
            self._rollup_bytes(),
            BUILD_NOTE,
            MEASUREMENT,
        )

    def render_on_rollup(self, query: LogicalQuery) -> str | None:
        return None if self.v2 else rollup.render_on_rollup(query, self.database)

    def refresh_rollup(self, start_ns: int, end_ns: int) -> RollupRefresh:
        """The continuous query's statement over the appended span (flushed: visible), timed."""
        self._refuse_on_v2()
        started = time.perf_counter()
        self._fill(start_ns, end_ns)
        seconds = time.perf_counter() - started
        return RollupRefresh(seconds, self._count(start_ns, end_ns), REFRESH_NOTE)

    def remove_rows_from(self, measurement: str, start_ns: int) -> None:
        """``DELETE`` the measurement's points at or after ``start_ns``."""
        self._run(f"DELETE FROM {ident(measurement)} WHERE time >= {int(start_ns)}", write=True)
