"""What a per-minute rollup of max, sum and count per host and field can answer exactly, and which
part of a window it answers — shared by the targets that build one (``timescaledb_tsl/rollup.py``,
``questdb/rollup.py``, ``influxdb/rollup.py``)."""

from __future__ import annotations

from tsbench.timeutil import NS_PER_MINUTE
from tsbench.workload.queries import LogicalQuery
from tsbench.workload.query_types import Kind

MEASUREMENT = "cpu"  # the measurement the rollups summarise
RESOLUTION_NS = NS_PER_MINUTE
KINDS = (Kind.GROUPBY, Kind.GROUPBY_HOST)  # per bucket, over all hosts asked or per host
AGGREGATIONS = ("max", "mean")  # max of maxima; mean = sum of sums / sum of counts


def whole_minutes(query: LogicalQuery) -> tuple[int, int]:
    """``(first, last)`` in ns: the whole rollup intervals inside the query's bounded window,
    ``[first, last)`` (none when ``first >= last``); the rest of the window — its partial edge
    minutes — is read from the raw rows."""
    assert query.start_ns is not None and query.end_ns is not None
    first = -(-query.start_ns // RESOLUTION_NS) * RESOLUTION_NS
    last = query.end_ns // RESOLUTION_NS * RESOLUTION_NS
    return first, last


def answerable(query: LogicalQuery) -> bool:
    """A bucketed max or mean over cpu in whole minutes, with a bounded window (its partial edge
    minutes are read from the raw rows)."""
    qtype = query.query_type
    return (
        query.measurement == MEASUREMENT
        and qtype.kind in KINDS
        and qtype.agg in AGGREGATIONS
        and qtype.bucket_ns % RESOLUTION_NS == 0
        and query.start_ns is not None
        and query.end_ns is not None
    )
