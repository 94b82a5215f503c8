"""What a query computes: the kinds every target's renderer switches on (never on type names)."""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """What a query computes (the renderer of every target switches on this, never on names)."""

    GROUPBY = "groupby"  # agg(first M fields) over the chosen hosts, per bucket
    GROUPBY_HOST = "groupby-host"  # agg(first M fields) per host per bucket, all hosts
    HIGH_CPU = "high-cpu"  # all rows with usage_user > threshold
    LASTPOINT = "lastpoint"  # most recent row of every host
    ORDERBY_LIMIT = "orderby-limit"  # max(usage_user) per bucket, last N buckets before end
    READ = "read"  # one row of one host by exact timestamp
    SCAN = "scan"  # all rows of one host in a window
    RANGE_AGG = "range-agg"  # one aggregate of one field of one host over a window
    # TSBS iot (one kind per semantics; ``iot_query_types`` says what each computes)
    LAST_LOC = "last-loc"
    LOW_FUEL = "low-fuel"
    HIGH_LOAD = "high-load"
    STATIONARY = "stationary"
    LONG_SESSIONS = "long-sessions"
    FLEET_FUEL = "fleet-fuel"
    DAILY_DRIVING = "daily-driving"
    DRIVING_SESSION = "driving-session"
    FLEET_LOAD = "fleet-load"
    DAILY_ACTIVITY = "daily-activity"
    BREAKDOWNS = "breakdowns"
