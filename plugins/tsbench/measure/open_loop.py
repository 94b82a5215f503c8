"""Open-loop clients: requests fall due on a fixed schedule whatever the server does, and each
latency counts from the moment its request was due, so a stall shows in every request it delayed.

A closed-loop client — each worker sends its next request when the last one returned, as the load
and query phases do today — stops offering work while the server stalls. It then measures only the
few requests in flight, and a stall of a second hides behind a fine p99 (coordinated omission).
Here ``run_open_loop`` records, per request, both the latency from its due time (``latency``, what a
user waiting on a dashboard sees) and the service time from its actual send (``service``, what a
closed-loop client would report), and how late sends started (``lag``: the client could not keep up
with the offered rate, or the workers were all busy waiting on the server). Histograms are
HdrHistogram's (microseconds, 3 significant digits, up to an hour).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

LOWEST_US = 1
HIGHEST_US = 3_600_000_000  # an hour
SIGNIFICANT_DIGITS = 3
PERCENTILES = (50.0, 95.0, 99.0, 99.9)


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST_US, HIGHEST_US, SIGNIFICANT_DIGITS)


@dataclass(frozen=True)
class Schedule:
    """``rate_per_s`` arrivals per second, evenly spaced, for ``duration_s`` seconds."""

    rate_per_s: float
    duration_s: float

    def __post_init__(self) -> None:
        problems = [
            f"{name} must be > 0 (got {value!r})"
            for name, value in (("rate_per_s", self.rate_per_s), ("duration_s", self.duration_s))
            if not value > 0
        ]
        if problems:
            raise ValueError("; ".join(problems))

    @property
    def arrivals(self) -> int:
        return int(self.rate_per_s * self.duration_s)

    def due_s(self, index: int) -> float:
        """Seconds from the start at which arrival ``index`` is due."""
        return index / self.rate_per_s


@dataclass
class Histograms:
    """Latency from the due time, service time from the send and send lag, in µs."""

    latency: HdrHistogram = field(default_factory=new_histogram)
    service: HdrHistogram = field(default_factory=new_histogram)
    lag: HdrHistogram = field(default_factory=new_histogram)
    completed: int = 0
    errors: int = 0
    unsent: int = 0  # due before the run stopped, never sent: latency recorded as at least the wait
    # second of the due time (from the start) → [arrivals done, max latency µs, max lag µs]
    timeline: dict[int, list[int]] = field(default_factory=dict)
    offered: int = 0  # arrivals taken (sent or unsent)

    def record(self, due: float, sent: float, done: float, second: int = 0) -> None:
        latency = max(LOWEST_US, round((done - due) * 1e6))
        lag = max(LOWEST_US, round(max(0.0, sent - due) * 1e6))
        self.latency.record_value(latency)
        self.service.record_value(max(LOWEST_US, round((done - sent) * 1e6)))
        self.lag.record_value(lag)
        point = self.timeline.setdefault(second, [0, 0, 0])
        point[0] += 1
        point[1], point[2] = max(point[1], latency), max(point[2], lag)

    def add(self, other: Histograms) -> None:
        self.latency.add(other.latency)
        self.service.add(other.service)
        self.lag.add(other.lag)
        self.completed += other.completed
        self.errors += other.errors
        self.unsent += other.unsent
        self.offered += other.offered
        for second, (done, latency, lag) in other.timeline.items():
            point = self.timeline.setdefault(second, [0, 0, 0])
            point[0] += done
            point[1], point[2] = max(point[1], latency), max(point[2], lag)

    def record_unsent(self, due: float, stopped: float) -> None:
        self.latency.record_value(max(LOWEST_US, round((stopped - due) * 1e6)))
        self.unsent += 1


@dataclass
class OpenLoopResult:
    """What an open-loop run measured: arrivals offered and completed, errors, the wall time (s) and
    three histograms in µs: latency from the due time, service time from the send, send lag;
    ``by_key`` the same per key of the arrivals (e.g. the query type), when a key was given."""

    offered: int
    completed: int
    errors: int
    wall_s: float
    latency: HdrHistogram
    service: HdrHistogram
    lag: HdrHistogram
    by_key: dict[str, Histograms] = field(default_factory=dict)
    unsent: int = 0
    timeline: dict[int, list[int]] = field(default_factory=dict)  # see ``Histograms.timeline``

    @property
    def achieved_per_s(self) -> float:
        return self.completed / self.wall_s if self.wall_s > 0 else 0.0

    @staticmethod
    def percentiles_ms(histogram: HdrHistogram) -> dict[str, float]:
        """p50, p95, p99, p99.9 and max of a histogram, in milliseconds."""
        found = {f"p{p:g}": histogram.get_value_at_percentile(p) / 1000 for p in PERCENTILES}
        return {**found, "max": histogram.get_max_value() / 1000}


def run_open_loop(
    schedule: Schedule,
    workers: int,
    request: Callable[[int], object],
    clock: Callable[[], float] = time.perf_counter,
    key: Callable[[int], str] | None = None,
    after: Callable[[int, object], bool] | None = None,
    stop_s: float | None = None,
    only: Collection[int] | None = None,
) -> OpenLoopResult:
    """Issue ``schedule``'s arrivals with ``workers`` threads: each takes the next arrival in order,
    waits until it is due, calls ``request(index)`` and records it (an exception counts as an
    error, its latency still recorded) under ``key(index)``. ``after(index, returned)`` runs once
    the arrival is recorded, outside its timed window (e.g. checking an answer); it returns False
    for an arrival that failed after all (counted as an error). A ``request`` that raises
    ``StopIteration`` (no work left) ends its worker's run, unrecorded. With ``stop_s``, arrivals
    not sent ``stop_s`` seconds after the start are not sent at all (``unsent``; each recorded with
    the latency it had reached by then, a lower bound: the client fell behind, and that must show).
    With ``only``, the other arrivals are neither offered nor sent (a replay of an earlier run's sent
    ones, on their due times). Returns when every arrival was issued and answered, or given up."""
    if workers < 1:
        raise ValueError(f"workers must be ≥ 1 (got {workers})")
    chosen = range(schedule.arrivals) if only is None else sorted(set(only) & set(range(schedule.arrivals)))
    lock, taken = threading.Lock(), iter(chosen)
    results: list[dict[str, Histograms]] = [{} for _ in range(workers)]
    start = clock()

    def work(mine: dict[str, Histograms]) -> None:
        while True:
            with lock:
                index = next(taken, None)
            if index is None:
                return
            due = start + schedule.due_s(index)
            figures = mine.setdefault(key(index) if key else "", Histograms())
            figures.offered += 1
            if stop_s is not None and (now := clock()) - start >= stop_s:
                figures.record_unsent(due, now)
                continue
            if (wait := due - clock()) > 0:
                time.sleep(wait)
            sent, returned, failed = clock(), None, False
            try:
                returned = request(index)
            except StopIteration:
                figures.offered -= 1
                return
            except Exception as error:
                returned, failed = error, True
            figures.record(due, sent, clock(), int(due - start))
            if not failed and after is not None:
                failed = not after(index, returned)
            figures.errors += failed
            figures.completed += not failed

    _each_in_a_thread(work, results)
    return _merged(len(chosen), results, clock() - start)


def _each_in_a_thread(
    work: Callable[[dict[str, Histograms]], None], results: list[dict[str, Histograms]]
) -> None:
    """``work(mine)`` for each worker's ``mine`` at once, one thread each; returns when all ended."""
    threads = [threading.Thread(target=work, args=(mine,), daemon=True) for mine in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _merged(offered: int, results: list[dict[str, Histograms]], wall_s: float) -> OpenLoopResult:
    total: Histograms = Histograms()
    by_key: dict[str, Histograms] = {}
    for mine in results:
        for name, figures in mine.items():
            total.add(figures)
            by_key.setdefault(name, Histograms()).add(figures)
    return OpenLoopResult(
        offered=offered,
        completed=total.completed,
        errors=total.errors,
        wall_s=wall_s,
        latency=total.latency,
        service=total.service,
        lag=total.lag,
        by_key=by_key if len(by_key) > 1 or "" not in by_key else {},
        unsent=total.unsent,
        timeline=total.timeline,
    )
