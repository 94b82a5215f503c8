"""The live phase (run option ``live_seconds``): per target, the offered ingest beside what it
achieved and the write latency from each batch's due time; per query type, the latency under
ingest beside the same queries without it. A caveat wherever the client fell behind its schedule:
then the offered load never reached the server in full, and the latencies are lower bounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hdrh.histogram import HdrHistogram

from tsbench.report.charts import MUTED, PERCENTILES_SHOWN, percentile_chart, sweep_chart, timeline_chart
from tsbench.report.sections.status import TargetView
from tsbench.results.live_records import (
    CLIENT_BUSY_CORES,
    LivePhase,
    LiveQueryType,
    OpenLoopFigures,
    RampStep,
    client_behind,
)
from tsbench.results.model import RunResult


def client_fell_behind(figures: OpenLoopFigures) -> bool:
    return client_behind(figures.lag_ms.p99, figures.unsent)


@dataclass(frozen=True)
class LiveTypeRow:
    """One query type's live figures (under ingest, without, the ratio, the checks)."""

    qtype: str
    figures: LiveQueryType


@dataclass(frozen=True)
class LiveRow:
    """One target's live phase, its query types, and what went wrong with the client, if anything."""

    target: TargetView
    live: LivePhase
    types: list[LiveTypeRow]
    caveats: list[str]

    @property
    def sustained_step(self) -> RampStep | None:
        """The ramp's step at the rate sustained within the SLO (what it ingested meanwhile)."""
        rate = self.live.sustained_queries_per_s
        return next((s for s in self.live.ramp if s.offered_queries_per_s == rate), None)


def _caveats(live: LivePhase) -> list[str]:
    found = []
    ingest = live.ingest
    busy = live.client_cpu_cores is not None and live.client_cpu_cores >= CLIENT_BUSY_CORES
    if client_fell_behind(ingest):
        who = (
            f"the client was busy {live.client_cpu_cores:.2f} cores, near its own limit: it may not have "
            "been able to offer more"
            if busy
            else "the client had CPU to spare: the server did not take the offered rate"
        )
        found.append(
            f"the ingest fell behind its schedule (send lag p99 {ingest.lag_ms.p99:,.0f} ms, "
            f"{ingest.unsent:,} of {ingest.offered:,} batches never sent); {who}; the write latencies "
            "are lower bounds"
        )
    behind = [qtype for qtype, row in live.queries.items() if client_fell_behind(row.under_ingest)]
    if behind:
        found.append(
            f"the query clients fell behind their schedule for {', '.join(behind)}: more query_workers, "
            "or the server's limit; their latencies are lower bounds"
        )
    mismatched = sum(row.mismatches for row in live.queries.values())
    if mismatched:
        found.append(f"{mismatched} live answers differed from the reference")
    if live.error_samples:
        first = live.error_samples[0]
        found.append(f"writes or queries failed; the first: {first['what']}: {first['reason']}")
    if not live.rows_removed:
        found.append("the live rows stayed in the database after the phase (the target cannot remove rows)")
    return found


@dataclass(frozen=True)
class LiveSection:
    """The live phase's rows and charts: write latency and query latency under ingest against
    percentile, one line per target, and the ramp's p99 against the offered query rate."""

    rows: list[LiveRow]
    write_chart: str
    query_chart: str
    ingest_over_time: str
    queries_over_time: str
    ramp_chart: str
    slo_p99_ms: float


def _curve(encoded: Sequence[str]) -> list[tuple[float, float]]:
    """Percentiles (ms) of the histograms (HdrHistogram's encoded form, µs) added together."""
    total: HdrHistogram | None = None
    for text in encoded:
        if not text:
            continue
        one = HdrHistogram.decode(text.encode())
        if total is None:
            total = one
        else:
            total.add(one)
    if total is None:
        return []
    return [(p, total.get_value_at_percentile(p) / 1000) for p in PERCENTILES_SHOWN]


def live_section(prefix: str, run: RunResult, targets: Sequence[TargetView]) -> LiveSection | None:
    """The section, or None when no target ran a live phase."""
    rows = live_rows(run, targets)
    if not rows:
        return None
    colours = {row.target.label: row.target.colour for row in rows}
    writes = {row.target.label: _curve([row.live.ingest.histogram]) for row in rows}
    queries = {
        row.target.label: _curve([t.figures.under_ingest.histogram for t in row.types]) for row in rows
    }
    slo = max((float(row.live.slo_p99_ms) for row in rows), default=0.0)
    return LiveSection(
        rows=rows,
        write_chart=percentile_chart(
            f"{prefix}live-writes", _drawn(writes), colours, "Write latency from due"
        ),
        query_chart=percentile_chart(
            f"{prefix}live-queries",
            _drawn(queries),
            colours,
            "Query latency from due, under ingest",
            slo or None,
        ),
        ingest_over_time=timeline_chart(
            f"{prefix}live-ingest-time",
            {
                r.target.label: [(t[0], t[1] * r.live.ingest.batch_rows) for t in r.live.ingest.timeline]
                for r in rows
            },
            colours,
            "Rows written per second (offered: the table's rate)",
            "rows/s",
        ),
        queries_over_time=timeline_chart(
            f"{prefix}live-query-time",
            {r.target.label: [(t[0], t[2]) for t in r.live.query_timeline] for r in rows},
            colours,
            "Slowest query of each second, from its due time, under ingest",
            "ms",
        ),
        ramp_chart=_ramp_chart(prefix, rows, colours, slo),
        slo_p99_ms=slo,
    )


def _drawn(curves: dict[str, list[tuple[float, float]]]) -> dict[str, list[tuple[float, float]]]:
    return {label: points for label, points in curves.items() if points}


def _ramp_chart(prefix: str, rows: list[LiveRow], colours: dict[str, str], slo: float) -> str:
    rates = sorted({float(step.offered_queries_per_s) for row in rows for step in row.live.ramp})
    if not rates:
        return ""
    series: dict[str, list[float | None]] = {}
    for row in rows:
        by_rate = {float(step.offered_queries_per_s): float(step.latency_ms.p99) for step in row.live.ramp}
        series[row.target.label] = [by_rate.get(rate) for rate in rates]
    if slo:
        series["SLO"] = [slo] * len(rates)
        colours = {**colours, "SLO": MUTED}
    title = "Query p99 from due against offered queries/s, ingest running"
    return sweep_chart(f"{prefix}live-ramp", rates, series, {}, colours, title, "ms", "offered queries/s")


def live_rows(run: RunResult, targets: Sequence[TargetView]) -> list[LiveRow]:
    """A row per target whose live phase ran (empty when the run had none)."""
    rows = []
    for target in targets:
        live = run.targets[target.name].live
        if live is None or not live.seconds:
            continue
        types = [LiveTypeRow(qtype, figures) for qtype, figures in live.queries.items()]
        rows.append(LiveRow(target, live, types, _caveats(live)))
    return rows
