"""``live.json``, the live phase's record: open-loop ingest and queries at once, then the same queries
without ingest (see ``tsbench.measure.live``). Latencies in ms; ``histogram`` is HdrHistogram's own
compressed text form (µs), from which the report draws percentile curves."""

from __future__ import annotations

from typing import ClassVar

from tsbench.results.phase_records import Resources
from tsbench.results.record import Number, Record

# A client is behind its schedule when its sends' p99 lag exceeds this, or arrivals went unsent:
# then the offered load never reached the server in full, and latencies are lower bounds.
CLIENT_LAG_MS = 100.0


# From this share of one core, the client process (Python threads under one interpreter lock) is
# near its own limit: what it offered may be all it could offer.
CLIENT_BUSY_CORES = 0.9


def client_behind(lag_p99_ms: float, unsent: int) -> bool:
    return unsent > 0 or lag_p99_ms > CLIENT_LAG_MS


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
    timeline: list[list[Number]] = []  # per second: [second, arrivals done, max latency ms, max lag ms]


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


class FreshnessFigures(Record):
    """From a write's acknowledgement until a read returned its row (resolution: ``poll_ms`` plus a
    read); rows never seen within 10 s; ``not_probed`` says why there were no probes."""

    probes: int = 0
    not_visible: int = 0
    errors: int = 0
    latency_ms: Latency = Latency()
    histogram: str = ""
    poll_ms: Number = 0.0
    not_probed: str = ""


class RampStep(Record):
    """One step of the query-rate ramp, ingest running at the live rate: every type together."""

    offered_queries_per_s: Number = 0.0
    achieved_queries_per_s: Number = 0.0
    completed: int = 0  # queries the p99 is of (below 100 it is close to the slowest one)
    latency_ms: Latency = Latency()
    lag_ms: Latency = Latency()
    errors: int = 0
    unsent: int = 0
    client_behind: bool = False
    achieved_rows_per_s: Number = 0.0
    within_slo: bool = False
    histogram: str = ""


class LivePhase(Record):
    """``live.json``."""

    FILE: ClassVar[str] = "live"

    seconds: Number = 0.0
    ingest: IngestFigures = IngestFigures()
    query_workers: int = 0
    offered_queries_per_s: Number = 0.0
    queries: dict[str, LiveQueryType] = {}
    query_timeline: list[list[Number]] = []  # every type under ingest, per second (see OpenLoopFigures)
    excluded_types: dict[str, str] = {}  # type → why it is not in the live mix
    live_start: str = ""  # the first instant the live rows may have (UTC)
    shift_days: Number = 0.0  # how far cycle 1 moved the history
    mismatch_samples: list[dict[str, object]] = []
    error_samples: list[dict[str, str]] = []  # the first failed writes and queries: what, and why
    freshness: FreshnessFigures | None = None
    # without freshness probes (iot), the live queries read windows closed this long ago; None: windows
    # a probe saw written (``measure.freshness``)
    visible_after_ms: Number | None = None
    client_cpu_cores: Number | None = None  # this process's CPU-seconds per second over ingest + queries
    slo_p99_ms: Number = 0.0
    ramp: list[RampStep] = []
    sustained_queries_per_s: Number | None = None  # the ramp's highest rate within the SLO
    rows_removed: bool = False  # the live rows were removed after the phase (the history left as loaded)
    resources: Resources | None = None  # the server's, over the phase
    note: str = ""
    wall_s: Number | None = None
