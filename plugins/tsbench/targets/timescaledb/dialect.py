"""TimescaleDB's SQL: the PostgreSQL dialect with ``time_bucket`` for the buckets.

``time_bucket(width, ts)`` on timestamptz buckets in UTC from the default origin 2000-01-03 00:00 UTC
(a Monday). That origin is a whole number of days after the Unix epoch, so for every width dividing a
day (the catalogue uses 1 minute and 1 hour) the buckets are exactly the epoch-aligned ones of the
oracle. Other widths get an explicit ``origin => 1970-01-01`` so they stay epoch-aligned too.
"""

from __future__ import annotations

from tsbench.targets.postgres.dialect import SqlDialect, interval

DEFAULT_ORIGIN_NS = 946_857_600 * 10**9  # 2000-01-03T00:00:00Z


class TimescaleDialect(SqlDialect):
    def bucket(self, bucket_ns: int, column: str = "time") -> str:
        if DEFAULT_ORIGIN_NS % bucket_ns == 0:
            return f"time_bucket({interval(bucket_ns)}, {column})"
        return f"time_bucket({interval(bucket_ns)}, {column}, origin => TIMESTAMPTZ '1970-01-01 00:00:00+00')"
