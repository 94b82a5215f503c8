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

import logging
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from tsbench.measure import live_figures as figures
from tsbench.measure.freshness import UNPROBED_MARGIN_S, FreshnessProbe, FreshnessResult
from tsbench.measure.open_loop import OpenLoopResult, Schedule, run_open_loop
from tsbench.results import live_records as live
from tsbench.targets.base import Session, Target
from tsbench.workload.answers import Answer, compare
from tsbench.workload.live_queries import LiveMix, LiveQuery, unshifted
from tsbench.workload.live_rows import Frontier

log = logging.getLogger("tsbench.live")
MISMATCH_SAMPLES = 5
ERROR_SAMPLES = 5
# An arrival not sent this long after the phase's end is given up (``unsent``): one due in the last
# instant while every client was busy is late, not lost.
STOP_GRACE_S = 1.0


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
    ramp: tuple[float, ...] = ()  # query rates of the ramp's steps, each ``seconds`` long
    slo_p99_ms: float = 0.0  # the p99 a ramp step must keep (0: none)


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
    """Answer checks per query type (thread-safe), with a few mismatches kept as samples, and a few
    failed writes and queries with their reasons (``failed``)."""

    def __init__(self, expected: Mapping[str, Answer]):
        self.expected, self.lock = expected, threading.Lock()
        self.checked: dict[str, int] = {}
        self.mismatches: dict[str, int] = {}
        self.on_live_rows: dict[str, int] = {}
        self.samples: list[dict[str, object]] = []
        self.error_samples: list[dict[str, str]] = []

    def failed(self, what: str, error: BaseException) -> None:
        """Keep the reason of a failed write (``what``: "ingest") or query (its type), the first few."""
        log.warning("live: %s failed: %s", what, error)
        with self.lock:
            if len(self.error_samples) < ERROR_SAMPLES:
                self.error_samples.append({"what": what, "reason": f"{type(error).__name__}: {error}"[:500]})

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


class _Driver:
    """One live phase's clients: the writers, the checks and the queries sent under ingest."""

    probe: FreshnessProbe  # the current segment's, made by ``segment()``

    def __init__(
        self, target: Target, frontier: Frontier, mix: LiveMix, checks: _Checks, settings: LiveSettings
    ):
        self.target, self.frontier, self.mix, self.checks, self.settings = (
            target,
            frontier,
            mix,
            checks,
            settings,
        )
        self.writers = _PerThread(target.writer)
        self.sent: dict[int, LiveQuery] = {}
        # copies whose keeping depends on their order: an update waits for its original's write
        self.ordered = target.capabilities.keeps.order_matters and frontier.rows.dataset.copies

    def write(self, index: int) -> int:
        batch = self.frontier.take()
        if batch is None:
            raise StopIteration
        try:
            if self.ordered:
                self.frontier.wait_for_earlier_overlaps(batch)
            self.writers.get().write(batch.measurement, batch.batch)
        except BaseException as error:
            self.frontier.given_up(batch)
            if isinstance(error, Exception):
                self.checks.failed("ingest", error)
            raise
        self.frontier.acknowledged(batch)
        return batch.rows

    def latest_closed(self, index: int) -> LiveQuery:
        """The latest twin whose window a freshness probe saw written (``FreshnessProbe``)."""
        return self.mix.pick(index, self.probe.visible_before())

    def segment(
        self, query_per_s: float, pick: Callable[[int], LiveQuery]
    ) -> tuple[OpenLoopResult, OpenLoopResult | None, int, FreshnessResult]:
        """Ingest at the live rate and queries at ``query_per_s`` for ``seconds``, at once, with
        freshness probes; the three results and the rows written meanwhile."""
        self.probe = FreshnessProbe(self.target, self.frontier, self.target.use_case)
        self.probe.start()
        try:
            ingest, queried, written = self._segment(query_per_s, pick)
        finally:
            freshness = self.probe.stop()
        return ingest, queried, written, freshness

    def _segment(
        self, query_per_s: float, pick: Callable[[int], LiveQuery]
    ) -> tuple[OpenLoopResult, OpenLoopResult | None, int]:
        seconds, results = self.settings.seconds, []
        before = self.frontier.acknowledged_rows

        def ingest() -> None:
            schedule = Schedule(self.settings.rows_per_s / self.settings.batch_rows, seconds)
            results.append(
                run_open_loop(
                    schedule, self.settings.ingest_workers, self.write, stop_s=seconds + STOP_GRACE_S
                )
            )

        ingesting = threading.Thread(target=ingest, name="live-ingest", daemon=True)
        ingesting.start()
        queried = _queries(self.target, self.mix, self.checks, self.settings, query_per_s, pick)
        ingesting.join()
        return results[0], queried, self.frontier.acknowledged_rows - before


def run_live(
    target: Target, frontier: Frontier, mix: LiveMix, expected: Mapping[str, Answer], settings: LiveSettings
) -> live.LivePhase:
    """Ingest and queries at once (with freshness probes), then the queries alone, then the ramp's
    steps (see the module docstring); the target is flushed after the ingest. Raises nothing for
    failed writes or queries: they are counted."""
    checks = _Checks(expected)
    driver = _Driver(target, frontier, mix, checks, settings)
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    ingest, under, written, freshness = driver.segment(
        settings.query_per_s, lambda i: driver.sent.setdefault(i, driver.latest_closed(i))
    )
    client_cores = (time.process_time() - cpu_before) / (time.perf_counter() - wall_before)
    target.flush()
    frontier.confirm_all_visible()
    alone = (  # the arrivals sent under ingest, again on their due times (those never sent: not again)
        _queries(target, mix, checks, settings, settings.query_per_s, driver.sent.__getitem__, driver.sent)
        if driver.sent
        else None
    )
    steps = []
    for rate in settings.ramp:
        step_ingest, step_queries, step_written, _ = driver.segment(rate, driver.latest_closed)
        if step_queries is not None:
            steps.append(
                figures.ramp_step(rate, step_queries, step_ingest, step_written, settings.slo_p99_ms)
            )
    driver.writers.close_all()
    return live.LivePhase(
        seconds=settings.seconds,
        ingest=figures.ingest_figures(
            ingest,
            settings.seconds,
            settings.batch_rows,
            settings.ingest_workers,
            settings.rows_per_s,
            written,
        ),
        query_workers=settings.query_workers,
        offered_queries_per_s=settings.query_per_s,
        queries=figures.query_types(under, alone, mix, settings.seconds, checks),
        query_timeline=figures.timeline(figures.whole(under)) if under is not None else [],
        excluded_types=mix.excluded,
        mismatch_samples=checks.samples,
        error_samples=checks.error_samples,
        freshness=figures.freshness_figures(freshness),
        visible_after_ms=UNPROBED_MARGIN_S * 1000 if freshness.not_probed else None,
        client_cpu_cores=client_cores,
        slo_p99_ms=settings.slo_p99_ms,
        ramp=steps,
        sustained_queries_per_s=figures.sustained(steps),
    )


def _queries(
    target: Target,
    mix: LiveMix,
    checks: _Checks,
    settings: LiveSettings,
    query_per_s: float,
    pick: Callable[[int], LiveQuery],
    only: Collection[int] | None = None,
) -> OpenLoopResult | None:
    """One open-loop run of the live queries; ``pick`` says which query arrival ``index`` sends
    (``only``: just those arrivals)."""
    if not query_per_s or not mix.types:
        return None
    sessions = _PerThread(target.session)
    try:

        def send(index: int) -> tuple[LiveQuery, Session, Any]:
            query, session = pick(index), sessions.get()
            try:
                return query, session, session.fetch(target.render(query.query))
            except Exception as error:
                checks.failed(query.type, error)
                raise

        def check(index: int, returned: object) -> bool:
            query, session, raw = returned  # type: ignore[misc]
            return checks.check(query, session, raw)

        return run_open_loop(
            Schedule(query_per_s, settings.seconds),
            settings.query_workers,
            send,
            key=lambda i: mix.types[i % len(mix.types)],
            after=check,
            stop_s=settings.seconds + STOP_GRACE_S,
            only=only,
        )
    finally:
        sessions.close_all()
