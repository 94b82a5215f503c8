"""The QuestDB target's rollup: its 1-minute materialized view of cpu (SQL in ``rollup.py``) built,
waited for, measured, refreshed after an append."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tsbench.targets.base import Rollup, RollupRefresh, TargetError
from tsbench.targets.questdb import rollup
from tsbench.targets.questdb.dialect import TS, instant
from tsbench.targets.rollups import RESOLUTION_NS
from tsbench.workload.queries import LogicalQuery

if TYPE_CHECKING:
    from tsbench.workload.usecases import UseCase

VIEW_TIMEOUT_S = 600.0


class QuestDBRollups:
    """Rollup methods of ``QuestDBTarget`` (which gives ``_admin``, ``wal_state``, ``flush``)."""

    if TYPE_CHECKING:
        use_case: UseCase

        def _admin(self, text: str) -> list[tuple[Any, ...]]: ...

        def wal_state(self, tables: list[str] | None = None) -> list[tuple[str, bool, int, int, str]]: ...

        def flush(self) -> None: ...

    def build_rollup(self) -> Rollup:
        """Create the 1-minute materialized view of cpu and wait until its refresh has caught up
        with every transaction of cpu and its own WAL is applied: timed as one step. Rows and bytes
        are the view's (``table_storage().diskSize``)."""
        fields = next(m.field_names for m in self.use_case.measurements if m.name == rollup.MEASUREMENT)
        started = time.perf_counter()
        self._admin(rollup.drop_view())
        self._admin(rollup.create_view(fields, self.use_case.entity_key))
        self._wait_for_view()
        seconds = time.perf_counter() - started
        rows = int(self._admin(f"SELECT count() FROM {rollup.VIEW}")[0][0])
        note = (
            f"materialized view {rollup.VIEW} (SAMPLE BY 1m × host; max, sum, count per field), "
            "incremental refresh; table_storage().diskSize of the view once settled (the writer's "
            "preallocated append pages released; not in the build time) — like the raw table's figure it "
            "counts the open WAL segment, ~1 MiB per column (~32 MiB for cpu's 10 fields)"
        )
        stored = self._settled_bytes(rollup.VIEW)
        return Rollup(rollup.VIEW, RESOLUTION_NS // 10**9, seconds, rows, stored, note, rollup.MEASUREMENT)

    def _settled_bytes(self, table: str) -> int:
        """``table_storage().diskSize`` of ``table`` once it has shrunk and stays: right after a
        write it counts 2 MiB append pages per column file of the open writer, released within
        ``cairo.inactive.writer.ttl`` (30 s) — measured 102 → 38 MB for the view at 12 hosts × 1
        day. Polled every 5 s, at most 90 s."""
        started, readings = time.monotonic(), []
        while True:
            size = self._admin(f"SELECT diskSize FROM table_storage() WHERE tableName = '{table}'")
            readings.append(int(size[0][0]) if size else 0)
            shrunk = min(readings) < readings[0] and readings[-1] == readings[-2]
            if shrunk or time.monotonic() - started >= 90:
                return readings[-1]
            time.sleep(5)

    def _wait_for_view(self) -> None:
        """Until the view is valid, refreshed up to cpu's last transaction, its WAL applied."""
        deadline = time.monotonic() + VIEW_TIMEOUT_S
        while True:
            found = self._admin(rollup.refresh_state())
            status, refreshed, base, reason = found[0] if found else ("missing", -1, 0, "")
            if status == "invalid":
                raise TargetError(f"questdb: materialized view {rollup.VIEW} invalid: {reason}")
            view_wal = self.wal_state([rollup.VIEW])
            applied = bool(view_wal) and view_wal[0][2] >= view_wal[0][3]
            if status == "valid" and int(refreshed) >= int(base) and applied:
                return
            if time.monotonic() > deadline:
                raise TargetError(f"questdb: {rollup.VIEW} not refreshed after {VIEW_TIMEOUT_S:.0f} s")
            time.sleep(0.05)

    def render_on_rollup(self, query: LogicalQuery) -> str | None:
        return rollup.render_on_rollup(query)

    def refresh_rollup(self, start_ns: int, end_ns: int) -> RollupRefresh:
        """The view refreshes itself after every committed transaction of cpu: timed from here (the
        appended rows flushed: visible in cpu) until it has caught up and its WAL is applied."""
        started = time.perf_counter()
        self._wait_for_view()
        seconds = time.perf_counter() - started
        span = f"{TS} >= {instant(start_ns)} AND {TS} < {instant(end_ns)}"
        rows = int(self._admin(f"SELECT count() FROM {rollup.VIEW} WHERE {span}")[0][0])
        note = "incremental refresh (REFRESH IMMEDIATE): from the append's flush until the view caught up"
        return RollupRefresh(seconds, rows, note)

    def remove_rows_from(self, measurement: str, start_ns: int) -> None:
        """Drop the partitions (days) from ``start_ns`` on (appended rows are in days of their own)."""
        self._admin(f"ALTER TABLE {measurement} DROP PARTITION WHERE {TS} >= {instant(start_ns)}")
        self.flush()
