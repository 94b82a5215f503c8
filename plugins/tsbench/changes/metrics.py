"""The figures of a target in one run that change detection follows, each a ``Metric``: its name,
unit and which direction is better.

Per target: the load rate (rows/s, only when every row count agreed), the footprint after the
load (bytes, after settling when the run settled), each query type's hot and cold median latency
(ms, only when every answer of that type agreed and none failed), and, in runs with a live phase,
the achieved ingest rate, the write p99, the freshness p99 and each live query type's p99 under
ingest (only when its answers agreed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tsbench.results.model import QueryStats, TargetResult

HIGHER, LOWER = "higher", "lower"


@dataclass(frozen=True)
class Metric:
    """A followed figure: ``name`` (unique within a target), ``unit``, ``better`` (HIGHER/LOWER)."""

    name: str
    unit: str
    better: str

    def verdict(self, relative: float) -> str:
        """``improvement`` or ``regression`` for a relative change of the mean."""
        return "improvement" if (relative > 0) == (self.better == HIGHER) else "regression"


LOAD = Metric("load rows/s", "rows/s", HIGHER)
FOOTPRINT = Metric("footprint", "bytes", LOWER)
LIVE_INGEST = Metric("live rows/s achieved", "rows/s", HIGHER)
LIVE_WRITE_P99 = Metric("live write p99", "ms", LOWER)
LIVE_FRESHNESS_P99 = Metric("live freshness p99", "ms", LOWER)


def hot_latency(qtype: str) -> Metric:
    return Metric(f"hot p50 {qtype}", "ms", LOWER)


def cold_latency(qtype: str) -> Metric:
    return Metric(f"cold p50 {qtype}", "ms", LOWER)


def live_latency(qtype: str) -> Metric:
    return Metric(f"live p99 {qtype}", "ms", LOWER)


def figures(body: TargetResult) -> Iterator[tuple[Metric, float]]:
    """Every followed figure ``body`` has, as (metric, value); figures that are not comparable
    (wrong row counts, errors, wrong answers, absent phases) are left out."""
    yield from _load_figures(body)
    yield from _query_figures(body)
    yield from _live_figures(body)


def _load_figures(body: TargetResult) -> Iterator[tuple[Metric, float]]:
    load = body.load
    if load is not None and load.row_count_ok and load.median_rows_per_s:
        yield LOAD, float(load.median_rows_per_s)
    footprint = body.footprint
    if footprint is not None:
        figures = footprint.after_settle or footprint.after_load
        if figures is not None and figures.bytes:
            yield FOOTPRINT, float(figures.bytes)


def _median(stats: QueryStats | None) -> float | None:
    if stats is None or not stats.clean() or stats.p50_ms is None:
        return None
    return float(stats.p50_ms)


def _query_figures(body: TargetResult) -> Iterator[tuple[Metric, float]]:
    queries = body.queries
    if queries is None:
        return
    for qtype, stats in queries.hot.items():
        if (value := _median(stats)) is not None:
            yield hot_latency(qtype), value
    for qtype, stats in queries.cold.items():
        if (value := _median(stats)) is not None:
            yield cold_latency(qtype), value


def _live_figures(body: TargetResult) -> Iterator[tuple[Metric, float]]:
    live = body.live
    if live is None:
        return
    ingest = live.ingest
    if ingest.rows_written:
        yield LIVE_INGEST, float(ingest.achieved_rows_per_s)
        if ingest.completed and not ingest.errors:
            yield LIVE_WRITE_P99, float(ingest.latency_ms.p99)
    freshness = live.freshness
    if freshness is not None and freshness.probes and not freshness.errors:
        yield LIVE_FRESHNESS_P99, float(freshness.latency_ms.p99)
    for qtype, figures in live.queries.items():
        under = figures.under_ingest
        if under.completed and not under.errors and not figures.mismatches:
            yield live_latency(qtype), float(under.latency_ms.p99)
