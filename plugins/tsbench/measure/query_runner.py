"""The query runner: a pass over a query set with N workers, one query type at a time (like TSBS,
which runs one type per invocation), every answer checked against the oracle.

Latency = wall time of ``session.fetch(text)``, which sends the query and receives the whole
answer as the server sends it (libpq's result, the HTTP body) — what TSBS's runners time. As in
TSBS, a worker opens its connection inside its first query of each type, so that query's latency
includes the connection. ``qps`` per type = successful queries / wall time of that type's run.
Decoding the answers into Python rows, normalising and comparing them with the oracle's happen
after that type's run has ended (each answer with the session that received it), so neither the
latencies nor the type's wall time include them; the raw answers of one type are held until then.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tsbench.measure.stats import client_cpu, latency_stats
from tsbench.targets.base import Session
from tsbench.workload.answers import Answer, compare
from tsbench.workload.queries import LogicalQuery

log = logging.getLogger("tsbench.queries")
MAX_DIFF_SAMPLES = 5


@dataclass
class Execution:
    query_id: str
    type: str
    latency_ms: float | None  # None when the query failed
    error: str = ""
    answer_ok: bool | None = None  # None when not checked (failed, or no reference)
    diff: dict[str, Any] = field(default_factory=dict)


@dataclass
class PassResult:
    """One pass (cold, or one hot pass) over the query set."""

    name: str
    executions: list[Execution]
    wall_s: dict[str, float]  # per type
    client_cpu_s: dict[str, float] = field(default_factory=dict)  # per type, this process, same window

    def stats(self) -> dict[str, dict[str, Any]]:
        by_type: dict[str, list[Execution]] = {}
        for item in self.executions:
            by_type.setdefault(item.type, []).append(item)
        return {
            qtype: latency_stats(
                [e.latency_ms for e in items if e.latency_ms is not None],
                self.wall_s[qtype],
                errors=sum(bool(e.error) for e in items),
                mismatches=sum(e.answer_ok is False for e in items),
            )
            | client_cpu(self.client_cpu_s.get(qtype), self.wall_s[qtype])
            for qtype, items in by_type.items()
        }


def run_pass(
    name: str,
    queries: list[LogicalQuery],
    rendered: dict[str, str],
    expected: dict[str, Answer],
    open_session: Callable[[], Session],
    workers: int,
    label: str = "",
) -> PassResult:
    """Run every query once; types in order of first appearance, each with ``workers`` workers."""
    types: dict[str, list[LogicalQuery]] = {}
    for query in queries:
        types.setdefault(query.type, []).append(query)
    executions: list[Execution] = []
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for qtype, items in types.items():
        started, cpu_started = time.perf_counter(), time.process_time()
        done, sessions = _fetch_all([(q.id, q.type, rendered[q.id]) for q in items], open_session, workers)
        wall[qtype] = time.perf_counter() - started
        cpu[qtype] = time.process_time() - cpu_started
        by_id = {q.id: q for q in items}
        try:
            for received in done:
                _decode_and_check(received, by_id[received.execution.query_id], expected)
                executions.append(received.execution)
        finally:
            for session in sessions:
                _close_quietly(session)
        ok = sum(1 for r in done if not r.execution.error)
        log.info("queries %s %s %s: %d/%d ok in %.2f s", label, name, qtype, ok, len(items), wall[qtype])
    return PassResult(name, executions, wall, cpu)


@dataclass
class _Received:
    """One query's outcome inside the timed window: the raw answer and the session it came on."""

    execution: Execution
    raw: Any = None
    session: Session | None = None


def _decode_and_check(received: _Received, query: LogicalQuery, expected: dict[str, Answer]) -> None:
    """Decode the raw answer (a failure to decode is the query's error) and check it."""
    execution = received.execution
    if execution.error or received.session is None:
        return
    try:
        rows = received.session.decode(received.raw)
    except Exception as error:
        execution.error = f"{type(error).__name__}: {error}"[:500]
        execution.latency_ms = None
        return
    finally:
        received.raw = None
    if execution.query_id in expected:
        _check(execution, query, rows, expected[execution.query_id])


def _check(execution: Execution, query: LogicalQuery, rows: list[tuple[Any, ...]], expected: Answer) -> None:
    try:
        actual = Answer.build(query.query_type, rows)
    except ValueError as error:
        execution.answer_ok = False
        execution.diff = {"reason": str(error)}
        return
    result = compare(expected, actual)
    execution.answer_ok = result.ok
    if not result.ok:
        execution.diff = {"reason": result.reason, "rows": result.diff[:MAX_DIFF_SAMPLES]}


@dataclass
class TextsResult:
    """Texts run by ``run_texts``: wall and client CPU-seconds of the run, latencies, errors."""

    wall_s: float
    client_cpu_s: float
    latencies_ms: list[float]
    errors: list[str]

    @property
    def qps(self) -> float:
        return len(self.latencies_ms) / self.wall_s if self.wall_s else 0.0


def run_texts(texts: list[str], open_session: Callable[[], Session], workers: int) -> TextsResult:
    """Run query texts of any origin (e.g. TSBS's own) exactly as ``run_pass`` runs one type:
    same workers, same timed ``fetch``; nothing is decoded or checked (there is no reference)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    done, sessions = _fetch_all([(str(i), "texts", t) for i, t in enumerate(texts)], open_session, workers)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    for session in sessions:
        _close_quietly(session)
    latencies = [r.execution.latency_ms for r in done if r.execution.latency_ms is not None]
    return TextsResult(wall, cpu, latencies, [r.execution.error for r in done if r.execution.error])


def _fetch_all(
    items: list[tuple[str, str, str]], open_session: Callable[[], Session], workers: int
) -> tuple[list[_Received], list[Session]]:
    """Fetch every ``(id, type, text)`` with ``workers`` threads; the sessions stay open (their
    answers are decoded later) and are returned for the caller to close."""
    work: queue.Queue[tuple[str, str, str]] = queue.Queue()
    for item in items:
        work.put(item)
    results: list[_Received] = []
    sessions: list[Session] = []
    lock = threading.Lock()

    def worker() -> None:
        session: Session | None = None
        while True:
            try:
                query_id, qtype, text = work.get_nowait()
            except queue.Empty:
                return
            started = time.perf_counter()
            try:
                if session is None:
                    session = open_session()
                    with lock:
                        sessions.append(session)
                raw = session.fetch(text)
                latency = (time.perf_counter() - started) * 1000
                outcome = _Received(Execution(query_id, qtype, latency), raw, session)
            except Exception as error:
                outcome = _Received(
                    Execution(query_id, qtype, None, f"{type(error).__name__}: {error}"[:500])
                )
                session = None  # a new connection for the next query; this one is closed at the end
            with lock:
                results.append(outcome)

    threads = [threading.Thread(target=worker, name=f"query-worker-{i}", daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    order = {query_id: i for i, (query_id, _, _) in enumerate(items)}
    return sorted(results, key=lambda r: order[r.execution.query_id]), sessions


def _close_quietly(session: Session) -> None:
    try:
        session.close()
    except Exception as error:
        log.debug("closing a query session failed: %s", error)
