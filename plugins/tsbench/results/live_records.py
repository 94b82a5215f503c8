"""``live.json``, the live phase's record: open-loop ingest and queries at once, then the same queries
without ingest (see ``tsbench.measure.live``). Latencies in ms; ``histogram`` is HdrHistogram's own
compressed text form (µs), from which the report draws percentile curves."""

from __future__ import annotations

from typing import ClassVar

from tsbench.results.phase_records import Resources
from tsbench.results.record import Number, Record


class Latency(Record):
    """Percentiles of one histogram, ms."""

    p50: Number = 0.0
    p95: Number = 0.0
    p99: Number = 0.0
    p99_9: Number = 0.0
    max: Number = 0.0


class OpenLoopFigures(Record):
    """One open-loop stream: what was offered and done, per second and in all; latency from each
    arrival's due time, service time from its send, and how late sends started (lag)."""

    offered: int = 0
    completed: int = 0
    errors: int = 0
    unsent: int = 0  # due in the phase but never sent: the client fell behind
    seconds: Number = 0.0
    offered_per_s: Number = 0.0
    achieved_per_s: Number = 0.0
    latency_ms: Latency = Latency()
    service_ms: Latency = Latency()
    lag_ms: Latency = Latency()
    histogram: str = ""  # latency from due, µs, HdrHistogram's encoded form


class IngestFigures(OpenLoopFigures):
    """The live ingest: one arrival is one batch of ``batch_rows`` rows."""

    batch_rows: int = 0
    workers: int = 0
    offered_rows_per_s: Number = 0.0
    rows_written: int = 0
    achieved_rows_per_s: Number = 0.0
    rate_from: str = ""  # how the offered rate was chosen: "rows/s given", "0.5 × the load's …"


class LiveQueryType(Record):
    """One query type in the live phase: under ingest and, with the same queries on the same
    schedule, without; every answer checked."""

    under_ingest: OpenLoopFigures = OpenLoopFigures()
    without_ingest: OpenLoopFigures | None = None
    p99_ratio: Number | None = None  # under ingest ÷ without, latency from due; None under 20 queries a side
    checked: int = 0
    mismatches: int = 0
    on_live_rows: int = 0  # queries whose window lay in the live rows (the rest: in the history)


class LivePhase(Record):
    """``live.json``."""

    FILE: ClassVar[str] = "live"

    seconds: Number = 0.0
    ingest: IngestFigures = IngestFigures()
    query_workers: int = 0
    offered_queries_per_s: Number = 0.0
    queries: dict[str, LiveQueryType] = {}
    excluded_types: dict[str, str] = {}  # type → why it is not in the live mix
    live_start: str = ""  # the first instant the live rows may have (UTC)
    shift_days: Number = 0.0  # how far cycle 1 moved the history
    mismatch_samples: list[dict[str, object]] = []
    rows_removed: bool = False  # the live rows were removed after the phase (the history left as loaded)
    resources: Resources | None = None  # the server's, over the phase
    note: str = ""
    wall_s: Number | None = None
