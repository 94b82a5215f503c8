"""The live phase's driver: ingest and queries at once, both open-loop, then the same queries alone.

- **Ingest**: batches of the live rows (``tsbench.workload.live_rows``) fall due at the offered
  rate (rows/s ÷ rows per batch) and are written by ``ingest_workers`` writers; a batch's write
  latency counts from its due time (``measure.open_loop``), so a server that stalls or cannot keep
  up shows as latency and lag, never as a quietly lower offered rate. A batch is acknowledged when
  the target's ``Writer.write`` returned (what that means per target: its ``durable`` capability and
  notes); encoding the batch is part of its write, as in any ingest client.
- **Queries**: arrivals at ``query_per_s`` with ``query_workers`` clients, the types in turn
  (``tsbench.workload.live_queries.LiveMix``), each reading the latest window the ingest has closed;
  latency from the due time. Every answer is decoded and checked after its latency was recorded.
- **Without ingest**: once the ingest ended and the target flushed, the very same queries (the same
  windows, in the same order) on the same schedule: the ratio of the two p99s per type is what the
  ingest costs the queries.
"""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tsbench.measure.open_loop import Histograms, OpenLoopResult, Schedule, run_open_loop
from tsbench.results import live_records as live
from tsbench.targets.base import Session, Target
from tsbench.workload.answers import Answer, compare
from tsbench.workload.live_queries import LiveMix, LiveQuery, unshifted
from tsbench.workload.live_rows import Frontier

log = logging.getLogger("tsbench.live")
MISMATCH_SAMPLES = 5
# A p99 ratio is given only where both sides have this many queries: below it the p99 is one of a
# handful of values (a tie, whatever it says).
MIN_RATIO_SAMPLES = 20


@dataclass(frozen=True)
class LiveSettings:
    """How hard the live phase drives the target: ``seconds`` of ingest at ``rows_per_s`` in
    batches of ``batch_rows`` by ``ingest_workers``, while ``query_workers`` send ``query_per_s``
    queries (0: none)."""

    seconds: float
    rows_per_s: float
    batch_rows: int
    ingest_workers: int
    query_per_s: float
    query_workers: int


class _PerThread:
    """One object per client thread (a writer, a session), all closed at the end."""

    def __init__(self, make: Callable[[], Any]):
        self._make, self._local, self._all, self._lock = make, threading.local(), [], threading.Lock()

    def get(self) -> Any:
        made = getattr(self._local, "made", None)
        if made is None:
            made = self._local.made = self._make()
            with self._lock:
                self._all.append(made)
        return made

    def close_all(self) -> None:
        for made in self._all:
            made.close()
        self._all.clear()


class _Checks:
    """Answer checks per query type (thread-safe), with a few mismatches kept as samples."""

    def __init__(self, expected: Mapping[str, Answer]):
        self.expected, self.lock = expected, threading.Lock()
        self.checked: dict[str, int] = {}
        self.mismatches: dict[str, int] = {}
        self.on_live_rows: dict[str, int] = {}
        self.samples: list[dict[str, object]] = []

    def check(self, sent: LiveQuery, session: Session, raw: Any) -> bool:
        actual = unshifted(
            Answer.adopt(sent.query.query_type, session.decode(raw), sent.query.fields), sent.shift_ns
        )
        streamed = getattr(self.expected, "compare_with", None)
        result = (
            streamed(sent.answer_id, actual) if streamed else compare(self.expected[sent.answer_id], actual)
        )
        with self.lock:
            qtype = sent.type
            self.checked[qtype] = self.checked.get(qtype, 0) + 1
            self.on_live_rows[qtype] = self.on_live_rows.get(qtype, 0) + bool(sent.shift_ns)
            if not result.ok:
                self.mismatches[qtype] = self.mismatches.get(qtype, 0) + 1
                if len(self.samples) < MISMATCH_SAMPLES:
                    self.samples.append({"query_id": sent.query.id, "reason": result.reason})
        return result.ok


def run_live(
    target: Target, frontier: Frontier, mix: LiveMix, expected: Mapping[str, Answer], settings: LiveSettings
) -> live.LivePhase:
    """Ingest and queries at once, then the queries alone (see the module docstring); the target is
    flushed after the ingest. Raises nothing for failed writes or queries: they are counted."""
    checks = _Checks(expected)
    sent: dict[int, LiveQuery] = {}
    writers = _PerThread(target.writer)
    ingest_result: list[OpenLoopResult] = []

    def write(index: int) -> int:
        batch = frontier.take()
        if batch is None:
            raise StopIteration
        writers.get().write(batch.measurement, batch.batch)
        frontier.acknowledged(batch)
        return batch.rows

    def ingest() -> None:
        batches_per_s = settings.rows_per_s / settings.batch_rows
        try:
            schedule = Schedule(batches_per_s, settings.seconds)
            ingest_result.append(
                run_open_loop(schedule, settings.ingest_workers, write, stop_s=settings.seconds)
            )
        finally:
            writers.close_all()

    ingesting = threading.Thread(target=ingest, name="live-ingest", daemon=True)
    ingesting.start()
    under = _queries(
        target, mix, checks, settings, lambda i: sent.setdefault(i, mix.pick(i, frontier.closed_before()))
    )
    ingesting.join()
    target.flush()
    alone = _queries(target, mix, checks, settings, lambda i: sent[i]) if sent else None
    return _record(settings, ingest_result[0], frontier, under, alone, checks, mix)


def _queries(
    target: Target, mix: LiveMix, checks: _Checks, settings: LiveSettings, pick: Callable[[int], LiveQuery]
) -> OpenLoopResult | None:
    """One open-loop run of the live queries; ``pick`` says which query arrival ``index`` sends."""
    if not settings.query_per_s or not mix.types:
        return None
    sessions = _PerThread(target.session)
    try:

        def send(index: int) -> tuple[LiveQuery, Session, Any]:
            query, session = pick(index), sessions.get()
            return query, session, session.fetch(target.render(query.query))

        def check(index: int, returned: object) -> bool:
            query, session, raw = returned  # type: ignore[misc]
            return checks.check(query, session, raw)

        schedule = Schedule(settings.query_per_s, settings.seconds)
        return run_open_loop(
            schedule,
            settings.query_workers,
            send,
            key=lambda i: mix.types[i % len(mix.types)],
            after=check,
            stop_s=settings.seconds,
        )
    finally:
        sessions.close_all()


def _whole(result: OpenLoopResult) -> Histograms:
    return Histograms(
        result.latency, result.service, result.lag, result.completed, result.errors, result.unsent
    )


def _latency(histogram: Any) -> live.Latency:
    found = OpenLoopResult.percentiles_ms(histogram)
    return live.Latency(
        p50=found["p50"], p95=found["p95"], p99=found["p99"], p99_9=found["p99.9"], max=found["max"]
    )


def _figures(part: Histograms, offered: int, seconds: float, wall_s: float) -> dict[str, Any]:
    return {
        "offered": offered,
        "completed": part.completed,
        "errors": part.errors,
        "unsent": part.unsent,
        "seconds": wall_s,
        "offered_per_s": offered / seconds if seconds else 0.0,
        "achieved_per_s": part.completed / wall_s if wall_s else 0.0,
        "latency_ms": _latency(part.latency),
        "service_ms": _latency(part.service),
        "lag_ms": _latency(part.lag),
        "histogram": base64.b64encode(part.latency.encode()).decode() if part.completed + part.errors else "",
    }


def _per_type(result: OpenLoopResult | None, mix: LiveMix, seconds: float) -> dict[str, live.OpenLoopFigures]:
    if result is None:
        return {}
    per_type = result.offered / len(mix.types)
    parts = result.by_key or {mix.types[0]: _whole(result)}
    return {
        qtype: live.OpenLoopFigures(**_figures(part, round(per_type), seconds, result.wall_s))
        for qtype, part in parts.items()
    }


def _record(
    settings: LiveSettings,
    ingest: OpenLoopResult,
    frontier: Frontier,
    under: OpenLoopResult | None,
    alone: OpenLoopResult | None,
    checks: _Checks,
    mix: LiveMix,
) -> live.LivePhase:
    whole = _whole(ingest)
    written = frontier.acknowledged_rows
    ingest_figures = live.IngestFigures(
        **_figures(whole, ingest.offered, settings.seconds, ingest.wall_s),
        batch_rows=settings.batch_rows,
        workers=settings.ingest_workers,
        offered_rows_per_s=settings.rows_per_s,
        rows_written=written,
        achieved_rows_per_s=written / ingest.wall_s if ingest.wall_s else 0.0,
    )
    with_ingest, without = _per_type(under, mix, settings.seconds), _per_type(alone, mix, settings.seconds)
    queries = {}
    for qtype, figures in with_ingest.items():
        baseline = without.get(qtype)
        ratio = None
        enough = baseline is not None and min(figures.completed, baseline.completed) >= MIN_RATIO_SAMPLES
        if enough and baseline.latency_ms.p99 > 0:  # type: ignore[union-attr]
            ratio = figures.latency_ms.p99 / baseline.latency_ms.p99  # type: ignore[union-attr]
        queries[qtype] = live.LiveQueryType(
            under_ingest=figures,
            without_ingest=baseline,
            p99_ratio=ratio,
            checked=checks.checked.get(qtype, 0),
            mismatches=checks.mismatches.get(qtype, 0),
            on_live_rows=checks.on_live_rows.get(qtype, 0),
        )
    return live.LivePhase(
        seconds=settings.seconds,
        ingest=ingest_figures,
        query_workers=settings.query_workers,
        offered_queries_per_s=settings.query_per_s,
        queries=queries,
        excluded_types=mix.excluded,
        mismatch_samples=checks.samples,
    )
