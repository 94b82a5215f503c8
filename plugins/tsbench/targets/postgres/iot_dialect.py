"""SQL for TSBS's iot query types over the TSBS relational schema (PostgreSQL and TimescaleDB).

The texts follow TSBS's TimescaleDB ones (``tags`` joined per truck, ``name IS NOT NULL``, LATERAL
last rows, 10-minute buckets, lag/lead over them), restated on our schema: ``load_capacity`` and
``nominal_fuel_consumption`` are fields of each row rather than truck tags, so high-load divides by
the last row's own ``load_capacity`` and avg-load takes the truck's ``max(load_capacity)``; durations
come back in seconds. Thresholds, limits and windows come from the query's type; buckets use the
dialect's ``bucket`` (``date_bin`` on PostgreSQL, ``time_bucket`` on TimescaleDB, both epoch-aligned).
Nameless rows have ``tags_id`` NULL, so every join with ``tags`` leaves them out.
"""

from __future__ import annotations

from tsbench.targets.postgres.sql_text import instant, literal
from tsbench.targets.window import bounded_window
from tsbench.workload.iot_query_types import (
    ACTIVITY_DIVISOR,
    BUCKETS_PER_HOUR,
    DAY_NS,
    TEN_MINUTES_NS,
    fleet_of,
)
from tsbench.workload.queries import LogicalQuery


class IotSql:
    """The iot renderers of ``SqlDialect`` (one method per iot ``Kind``); needs ``bucket`` and
    ``tags_table`` from the dialect."""

    tags_table: str

    def bucket(self, bucket_ns: int, column: str = "time") -> str:
        raise NotImplementedError

    def _trucks(self, query: LogicalQuery) -> str:
        """The named trucks of the query's fleet (a condition on ``tags t``)."""
        return f"t.name IS NOT NULL AND t.fleet = {literal(fleet_of(query))}"

    def _last_rows(self, query: LogicalQuery, columns: str) -> str:
        newest = (
            f"SELECT {columns} FROM {query.measurement} m WHERE m.tags_id = t.id ORDER BY time DESC LIMIT 1"
        )
        return f"FROM {self.tags_table} t INNER JOIN LATERAL ({newest}) d ON true WHERE {self._trucks(query)}"

    def last_loc(self, query: LogicalQuery) -> str:
        rows = self._last_rows(query, "longitude, latitude")
        return f"SELECT t.name, t.driver, d.longitude, d.latitude {rows}"

    def low_fuel(self, query: LogicalQuery) -> str:
        rows = self._last_rows(query, "fuel_state")
        return (
            f"SELECT t.name, t.driver, d.fuel_state {rows} AND d.fuel_state < {query.query_type.threshold!r}"
        )

    def high_load(self, query: LogicalQuery) -> str:
        rows = self._last_rows(query, "current_load, load_capacity")
        above = f"d.current_load / d.load_capacity > {query.query_type.threshold!r}"
        return f"SELECT t.name, t.driver, d.current_load {rows} AND {above}"

    def _window(self, query: LogicalQuery, column: str = "time") -> str:
        return bounded_window(query, column, instant)

    def stationary(self, query: LogicalQuery) -> str:
        return (
            f"SELECT t.name, t.driver FROM {self.tags_table} t INNER JOIN readings r ON r.tags_id = t.id "
            f"WHERE {self._window(query, 'r.time')} AND {self._trucks(query)} GROUP BY 1, 2 "
            f"HAVING avg(r.velocity) < {query.query_type.threshold!r}"
        )

    def long_sessions(self, query: LogicalQuery) -> str:
        qtype = query.query_type
        driving = (
            f"SELECT {self.bucket(TEN_MINUTES_NS)} AS ten_minutes, tags_id FROM readings "
            f"WHERE {self._window(query)} GROUP BY ten_minutes, tags_id "
            f"HAVING avg(velocity) > {qtype.threshold!r}"
        )
        return (
            f"SELECT t.name, t.driver FROM {self.tags_table} t INNER JOIN ({driving}) r ON t.id = r.tags_id "
            f"WHERE {self._trucks(query)} GROUP BY t.name, t.driver "
            f"HAVING count(r.ten_minutes) > {qtype.limit}"
        )

    def fleet_fuel(self, query: LogicalQuery) -> str:
        return (
            "SELECT t.fleet, avg(r.fuel_consumption), avg(r.nominal_fuel_consumption) "
            f"FROM {self.tags_table} t INNER JOIN readings r ON r.tags_id = t.id "
            f"WHERE t.name IS NOT NULL AND r.velocity > {query.query_type.threshold!r} GROUP BY t.fleet"
        )

    def daily_driving(self, query: LogicalQuery) -> str:
        sessions = (
            f"SELECT {self.bucket(TEN_MINUTES_NS)} AS ten_minutes, tags_id FROM readings "
            f"GROUP BY tags_id, ten_minutes HAVING avg(velocity) > {query.query_type.threshold!r}"
        )
        days = (
            f"SELECT {self.bucket(DAY_NS, 'ten_minutes')} AS day, tags_id, count(*) / {BUCKETS_PER_HOUR} "
            "AS hours FROM sessions GROUP BY day, tags_id"
        )
        return (
            f"WITH sessions AS ({sessions}), days AS ({days}) "
            f"SELECT t.fleet, t.name, t.driver, avg(d.hours) FROM days d INNER JOIN {self.tags_table} t "
            "ON t.id = d.tags_id WHERE t.name IS NOT NULL GROUP BY t.fleet, t.name, t.driver"
        )

    def driving_session(self, query: LogicalQuery) -> str:
        status = (
            f"SELECT tags_id, {self.bucket(TEN_MINUTES_NS)} AS ten_minutes, "
            f"avg(velocity) > {query.query_type.threshold!r} AS driving FROM readings "
            "WHERE tags_id IS NOT NULL GROUP BY tags_id, ten_minutes"
        )
        previous = (
            "SELECT tags_id, ten_minutes, driving, "
            "lag(driving) OVER (PARTITION BY tags_id ORDER BY ten_minutes) AS before FROM status"
        )
        changes = (
            "SELECT tags_id, ten_minutes AS start, "
            "lead(ten_minutes) OVER (PARTITION BY tags_id ORDER BY ten_minutes) AS stop, driving "
            f"FROM ({previous}) x WHERE x.driving <> x.before"
        )
        return (
            f"WITH status AS ({status}), changes AS ({changes}) "
            f"SELECT t.name, {self.bucket(DAY_NS, 'd.start')} AS day, "
            "extract(epoch FROM avg(d.stop - d.start)) "
            f"FROM {self.tags_table} t INNER JOIN changes d ON t.id = d.tags_id "
            "WHERE t.name IS NOT NULL AND d.driving GROUP BY t.name, day"
        )

    def fleet_load(self, query: LogicalQuery) -> str:
        trucks = (
            "SELECT tags_id, max(load_capacity) AS capacity, avg(current_load) AS avg_load "
            "FROM diagnostics GROUP BY tags_id"
        )
        return (
            f"SELECT t.fleet, t.model, d.capacity, avg(d.avg_load / d.capacity) FROM {self.tags_table} t "
            f"INNER JOIN ({trucks}) d ON t.id = d.tags_id WHERE t.name IS NOT NULL "
            "GROUP BY t.fleet, t.model, d.capacity"
        )

    def daily_activity(self, query: LogicalQuery) -> str:
        buckets = (
            f"SELECT {self.bucket(DAY_NS)} AS day, {self.bucket(TEN_MINUTES_NS)} AS ten_minutes, tags_id, "
            "count(*) AS n FROM diagnostics GROUP BY day, ten_minutes, tags_id "
            f"HAVING avg(status) < {query.query_type.threshold!r}"
        )
        return (
            f"SELECT t.fleet, t.model, y.day, sum(y.n) / {ACTIVITY_DIVISOR} FROM {self.tags_table} t "
            f"INNER JOIN ({buckets}) y ON y.tags_id = t.id WHERE t.name IS NOT NULL "
            "GROUP BY t.fleet, t.model, y.day"
        )

    def breakdowns(self, query: LogicalQuery) -> str:
        buckets = (
            f"SELECT {self.bucket(TEN_MINUTES_NS)} AS ten_minutes, tags_id, "
            "count(status = 0) / count(*) >= 0.5 AS broken FROM diagnostics GROUP BY ten_minutes, tags_id"
        )
        following = (
            "SELECT tags_id, broken, lead(broken) OVER (PARTITION BY tags_id ORDER BY ten_minutes) AS next "
            "FROM buckets"
        )
        return (
            f"WITH buckets AS ({buckets}), following AS ({following}) "
            f"SELECT t.model, count(*) FROM {self.tags_table} t INNER JOIN following b ON t.id = b.tags_id "
            "WHERE t.name IS NOT NULL AND NOT b.broken AND b.next GROUP BY t.model"
        )
