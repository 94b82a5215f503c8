"""Timed fetching of query texts by N worker threads, in segments bounded by the memory that the
held raw answers take.

A worker's ``fetch`` is timed; the raw answers are decoded and checked only after the timed window
(``query_runner``). Holding every raw answer of a type until then would hold, at 4,000 hosts, five
high-cpu-all answers of ~1.7 M rows each (~3 GB of libpq results). So a type's run is cut into
segments: once the raw answers held reach ``budget_bytes``, workers take no new query, the segment
ends, the caller decodes and frees what it holds, and the next segment goes on with the same
sessions. Timed figures add up the segments' walls, so no decoding is ever inside them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tsbench.memory import trim_c_heap
from tsbench.targets.base import Session

log = logging.getLogger("tsbench.queries")
RAW_BUDGET_BYTES = 256 * 2**20  # raw answers held before a segment ends and they are decoded
TRIM_ABOVE_BYTES = 32 * 2**20  # after an answer this large is freed, the C heap is trimmed
STOP_WAIT_S = 10.0  # after an interruption, how long running queries get to finish
_ROW_BYTES = 200  # estimate per decoded row for sessions whose client decodes while receiving


@dataclass
class Execution:
    query_id: str
    type: str
    latency_ms: float | None  # None when the query failed
    error: str = ""
    answer_ok: bool | None = None  # None when not checked (failed, or no reference)
    diff: dict[str, Any] = field(default_factory=dict)


@dataclass
class Received:
    """One query's outcome inside the timed window: the raw answer and the session it came on."""

    execution: Execution
    raw: Any = None
    session: Session | None = None
    size: int = 0  # bytes the raw answer held (``raw_size``)


def raw_size(session: Session, raw: Any) -> int:
    """Bytes a raw answer holds: the session's own estimate (``raw_size``) where it has one, the
    length of a bytes body (alone or in a tuple, e.g. ``(text, body)``), an estimate for already
    decoded rows, else 0."""
    sizer = getattr(session, "raw_size", None)
    if sizer is not None:
        return int(sizer(raw))
    if isinstance(raw, list):
        return _ROW_BYTES * len(raw)
    parts = raw if isinstance(raw, tuple) else (raw,)
    return sum(len(part) for part in parts if isinstance(part, bytes | bytearray | memoryview))


@dataclass
class Segment:
    """What one segment fetched (in the order the items were given), its wall and client CPU time."""

    received: list[Received]
    wall_s: float
    cpu_s: float


class FetchPool:
    """``workers`` threads with sessions that live across segments (each worker opens its session
    inside its first query, as TSBS's workers connect inside theirs); ``close`` closes them all."""

    def __init__(
        self, open_session: Callable[[], Session], workers: int, budget_bytes: int = RAW_BUDGET_BYTES
    ):
        self.open_session, self.workers, self.budget_bytes = open_session, workers, budget_bytes
        self.idle: list[Session] = []  # sessions of workers between segments
        self.opened: list[Session] = []  # every session ever opened, closed at the end

    def segment(self, work: deque[tuple[str, str, str]]) -> Segment:
        """Fetch ``(id, type, text)`` items from the left of ``work`` until it is empty or the raw
        answers held reach the budget."""
        order = {item[0]: i for i, item in enumerate(work)}
        results: list[Received] = []
        held = [0]
        lock = threading.Lock()
        started, cpu_started = time.perf_counter(), time.process_time()
        threads = [
            threading.Thread(target=self._worker, args=(work, results, held, lock), daemon=True)
            for _ in range(self.workers)
        ]
        for thread in threads:
            thread.start()
        try:
            for thread in threads:
                thread.join()
        except BaseException:  # an interruption (``tsbench.interrupt``): stop, then unwind
            self._stop(work, lock, threads)
            raise
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        results.sort(key=lambda r: order[r.execution.query_id])
        return Segment(results, wall, cpu)

    def run(
        self, work: deque[tuple[str, str, str]], handle: Callable[[Received], None]
    ) -> tuple[float, float]:
        """Every item of ``work``, segment after segment; ``handle`` gets each outcome after its
        segment's timed window (and drops its raw answer). Returns the segments' summed wall and
        client CPU seconds; closes the sessions at the end."""
        wall = cpu = 0.0
        try:
            while work:
                segment = self.segment(work)
                wall, cpu = wall + segment.wall_s, cpu + segment.cpu_s
                for received in segment.received:
                    handle(received)
        finally:
            self.close()
        return wall, cpu

    def _stop(self, work: deque, lock: threading.Lock, threads: list[threading.Thread]) -> None:
        """No worker takes a new query; the running ones get up to ``STOP_WAIT_S`` to finish. A
        session still inside a query then is not closed (closing it under its worker is unsafe);
        the process's exit drops it."""
        with lock:
            work.clear()
        deadline = time.monotonic() + STOP_WAIT_S
        for thread in threads:
            thread.join(max(deadline - time.monotonic(), 0.0))
        if any(thread.is_alive() for thread in threads):
            self.opened = list(self.idle)

    def _worker(self, work: deque, results: list[Received], held: list[int], lock: threading.Lock) -> None:
        with lock:
            session = self.idle.pop() if self.idle else None
        while True:
            with lock:
                if not work or held[0] >= self.budget_bytes:
                    if session is not None:
                        self.idle.append(session)
                    return
                query_id, qtype, text = work.popleft()
            outcome, session = self._fetch_one(session, query_id, qtype, text)
            if outcome.session is not None:
                outcome.size = raw_size(outcome.session, outcome.raw)
            with lock:
                results.append(outcome)
                held[0] += outcome.size

    def _fetch_one(
        self, session: Session | None, query_id: str, qtype: str, text: str
    ) -> tuple[Received, Session | None]:
        started = time.perf_counter()
        try:
            if session is None:
                session = self.open_session()
                self.opened.append(session)
            raw = session.fetch(text)
            latency = (time.perf_counter() - started) * 1000
            return Received(Execution(query_id, qtype, latency), raw, session), session
        except Exception as error:
            failed = Execution(query_id, qtype, None, f"{type(error).__name__}: {error}"[:500])
            return Received(failed), None  # a new connection next; this one is closed at the end

    def close(self) -> None:
        for session in self.opened:
            try:
                session.close()
            except Exception as error:
                log.debug("closing a query session failed: %s", error)
        self.opened.clear()
        self.idle.clear()


def trim_after_large_answer(received: Received) -> None:
    """After a large raw answer is freed, hand the C heap's free memory back to the system (glibc
    ``malloc_trim``): a libpq result lives on the C heap, which Python's own allocator does not
    reuse, so without it the process's resident size keeps every large answer ever received."""
    if received.size >= TRIM_ABOVE_BYTES:
        trim_c_heap()
