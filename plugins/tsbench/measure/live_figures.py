"""The live phase's figures as its record (``results.live_records``): percentiles in ms from the
open-loop histograms, per query type under ingest and without, the ramp's steps and freshness."""

from __future__ import annotations

from typing import Any

from hdrh.histogram import HdrHistogram

from tsbench.measure.freshness import FreshnessResult
from tsbench.measure.open_loop import Histograms, OpenLoopResult
from tsbench.results import live_records as live
from tsbench.workload.live_queries import LiveMix

# A p99 ratio is given only where both sides have this many queries: below it the p99 is one of a
# handful of values (a tie, whatever it says).
MIN_RATIO_SAMPLES = 20


def whole(result: OpenLoopResult) -> Histograms:
    return Histograms(
        result.latency,
        result.service,
        result.lag,
        result.completed,
        result.errors,
        result.unsent,
        result.timeline,
        result.offered,
    )


def timeline(part: Histograms) -> list[list[float]]:
    """Per second of the phase: [second, arrivals done, max latency ms, max lag ms]."""
    return [
        [second, done, lat / 1000, lag / 1000] for second, (done, lat, lag) in sorted(part.timeline.items())
    ]


def latency(histogram: HdrHistogram) -> live.Latency:
    found = OpenLoopResult.percentiles_ms(histogram)
    return live.Latency(
        p50=found["p50"], p95=found["p95"], p99=found["p99"], p99_9=found["p99.9"], max=found["max"]
    )


def encoded(histogram: HdrHistogram) -> str:
    """HdrHistogram's own compressed, base64 form ('' when empty)."""
    return histogram.encode().decode() if histogram.get_total_count() else ""


def figures(part: Histograms, offered: int, seconds: float, wall_s: float) -> live.OpenLoopFigures:
    """One open-loop stream's record: ``offered`` arrivals scheduled over ``seconds``, ``part`` what
    was done of them in ``wall_s`` (a rate over 0 s is 0)."""
    return live.OpenLoopFigures(
        offered=offered,
        completed=part.completed,
        errors=part.errors,
        unsent=part.unsent,
        seconds=wall_s,
        offered_per_s=offered / seconds if seconds else 0.0,
        achieved_per_s=part.completed / wall_s if wall_s else 0.0,
        latency_ms=latency(part.latency),
        service_ms=latency(part.service),
        lag_ms=latency(part.lag),
        histogram=encoded(part.latency),
        timeline=timeline(part),
    )


def per_type(result: OpenLoopResult | None, mix: LiveMix, seconds: float) -> dict[str, live.OpenLoopFigures]:
    """Each query type's stream (none without ``result``; all of it as the mix's first type when it
    has no keys), each with the arrivals it was offered."""
    if result is None:
        return {}
    parts = result.by_key or {mix.types[0]: whole(result)}
    return {qtype: figures(part, part.offered, seconds, result.wall_s) for qtype, part in parts.items()}


def ingest_figures(
    result: OpenLoopResult, seconds: float, batch_rows: int, workers: int, rows_per_s: float, written: int
) -> live.IngestFigures:
    """The ingest stream's record: its open-loop figures (``figures``, one arrival a batch) and the
    rows offered and written."""
    stream = figures(whole(result), result.offered, seconds, result.wall_s)
    return live.IngestFigures(
        **dict(stream),  # every OpenLoopFigures field, nested records as they are (not dumped)
        batch_rows=batch_rows,
        workers=workers,
        offered_rows_per_s=rows_per_s,
        rows_written=written,
        achieved_rows_per_s=written / result.wall_s if result.wall_s else 0.0,
    )


def query_types(
    under: OpenLoopResult | None, alone: OpenLoopResult | None, mix: LiveMix, seconds: float, checks: Any
) -> dict[str, live.LiveQueryType]:
    """Per type: under ingest, without, the p99 ratio (from ``MIN_RATIO_SAMPLES`` a side), checks."""
    with_ingest, without = per_type(under, mix, seconds), per_type(alone, mix, seconds)
    found = {}
    for qtype, under_ingest in with_ingest.items():
        baseline = without.get(qtype)
        ratio = None
        enough = baseline is not None and min(under_ingest.completed, baseline.completed) >= MIN_RATIO_SAMPLES
        if enough and baseline.latency_ms.p99 > 0:  # type: ignore[union-attr]
            ratio = under_ingest.latency_ms.p99 / baseline.latency_ms.p99  # type: ignore[union-attr]
        found[qtype] = live.LiveQueryType(
            under_ingest=under_ingest,
            without_ingest=baseline,
            p99_ratio=ratio,
            checked=checks.checked.get(qtype, 0),
            mismatches=checks.mismatches.get(qtype, 0),
            on_live_rows=checks.on_live_rows.get(qtype, 0),
        )
    return found


def ramp_step(
    query_per_s: float, queries: OpenLoopResult, ingest: OpenLoopResult, written: int, slo_p99_ms: float
) -> live.RampStep:
    """One step of the ramp: every query type together (latency from the due time)."""
    all_types = whole(queries)
    p99 = latency(all_types.latency)
    lag = latency(all_types.lag)
    behind = live.client_behind(lag.p99, all_types.unsent)
    return live.RampStep(
        offered_queries_per_s=query_per_s,
        achieved_queries_per_s=queries.achieved_per_s,
        completed=all_types.completed,
        latency_ms=p99,
        lag_ms=lag,
        errors=all_types.errors,
        unsent=all_types.unsent,
        client_behind=behind,
        achieved_rows_per_s=written / ingest.wall_s if ingest.wall_s else 0.0,
        within_slo=bool(slo_p99_ms) and not behind and not all_types.errors and p99.p99 <= slo_p99_ms,
        histogram=encoded(all_types.latency),
    )


def sustained(steps: list[live.RampStep]) -> float | None:
    """The highest offered rate of the ramp's steps within the SLO before the first that is not."""
    best = None
    for step in steps:
        if not step.within_slo:
            break
        best = step.offered_queries_per_s
    return best


def freshness_figures(result: FreshnessResult) -> live.FreshnessFigures:
    from tsbench.measure.freshness import POLL_S

    return live.FreshnessFigures(
        probes=result.probes,
        not_visible=result.not_visible,
        errors=result.errors,
        latency_ms=latency(result.histogram) if result.histogram.get_total_count() else live.Latency(),
        histogram=encoded(result.histogram),
        poll_ms=POLL_S * 1000,
        not_probed=result.not_probed,
    )
