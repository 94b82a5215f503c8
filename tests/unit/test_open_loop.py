"""The open-loop client (``tsbench.measure.open_loop``) against a real endpoint in this process that
stalls: the stall shows in the latencies counted from each request's due time, while the service
times a closed-loop client would report hide it (coordinated omission). Bounds are generous: the
assertions are about which figure sees the stall, not about speed."""

from __future__ import annotations

import threading
import time

import pytest

from tsbench.measure.open_loop import OpenLoopResult, Schedule, run_open_loop


class StallingEndpoint:
    """Answers in about 1 ms; between ``stall_from`` and ``stall_to`` seconds after ``start`` every
    request blocks until the stall ends (a server stopped with SIGSTOP behaves so)."""

    def __init__(self, stall_from: float, stall_to: float) -> None:
        self.start = time.perf_counter()
        self.stall_from, self.stall_to = stall_from, stall_to
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, index: int) -> None:
        with self.lock:
            self.calls += 1
        now = time.perf_counter() - self.start
        if self.stall_from <= now < self.stall_to:
            time.sleep(self.stall_to - now)
        time.sleep(0.001)


def test_a_stall_shows_in_open_loop_latency_and_hides_in_service_time() -> None:
    endpoint = StallingEndpoint(stall_from=0.5, stall_to=1.1)
    result = run_open_loop(Schedule(rate_per_s=100, duration_s=2.0), workers=2, request=endpoint)
    assert (result.offered, result.completed, result.errors, endpoint.calls) == (200, 200, 0, 200)
    latency = OpenLoopResult.percentiles_ms(result.latency)
    service = OpenLoopResult.percentiles_ms(result.service)
    # ~60 arrivals fall due inside the 0.6 s stall: from their due time they waited up to 0.6 s
    assert latency["p95"] >= 250, latency
    assert latency["max"] >= 500, latency
    # only the two requests in flight when it began waited in the server itself
    assert service["p95"] < 100 and service["max"] >= 500, service
    assert OpenLoopResult.percentiles_ms(result.lag)["p95"] >= 200  # the sends fell behind, visibly


def test_a_steady_endpoint_is_served_at_the_offered_rate() -> None:
    result = run_open_loop(Schedule(rate_per_s=200, duration_s=1.0), workers=2, request=lambda _: None)
    assert result.completed == 200 and 150 <= result.achieved_per_s <= 220


def test_a_failing_request_counts_as_an_error_and_keeps_its_latency() -> None:
    def flaky(index: int) -> None:
        if index % 2:
            raise ConnectionError("refused")

    result = run_open_loop(Schedule(rate_per_s=100, duration_s=0.2), workers=1, request=flaky)
    assert (result.completed, result.errors, result.latency.get_total_count()) == (10, 10, 20)


def test_bad_rates_and_durations_are_named_together() -> None:
    with pytest.raises(ValueError, match=r"rate_per_s must be > 0 \(got 0\); duration_s must be > 0"):
        Schedule(rate_per_s=0, duration_s=-1)
    with pytest.raises(ValueError, match="workers must be ≥ 1"):
        run_open_loop(Schedule(1, 1), workers=0, request=lambda _: None)


def test_a_replay_sends_only_the_arrivals_the_first_run_sent_each_on_its_due_time() -> None:
    """The live phase replays, without ingest, the queries it sent under ingest: arrivals a client
    that fell behind never sent are not offered again (they were once counted as failed)."""
    sent: list[int] = []

    def slow(index: int) -> None:
        sent.append(index)
        time.sleep(0.02)

    first = run_open_loop(Schedule(rate_per_s=100, duration_s=0.5), workers=1, request=slow, stop_s=0.5)
    assert first.unsent > 0 and first.completed == len(sent) and first.offered == 50
    again: list[tuple[int, float]] = []
    start = time.perf_counter()
    replay = run_open_loop(
        Schedule(rate_per_s=100, duration_s=0.5),
        workers=2,
        request=lambda index: again.append((index, time.perf_counter() - start)),
        key=lambda index: "odd" if index % 2 else "even",
        only=sent,
    )
    assert sorted(index for index, _ in again) == sorted(sent)
    assert (replay.offered, replay.completed, replay.errors, replay.unsent) == (len(sent), len(sent), 0, 0)
    assert sum(part.offered for part in replay.by_key.values()) == len(sent)
    assert all(at >= index / 100 - 0.005 for index, at in again), "an arrival went before its due time"
