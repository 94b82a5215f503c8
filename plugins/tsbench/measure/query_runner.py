"""The query runner: a pass over a query set with N workers, one query type at a time (like TSBS,
which runs one type per invocation), every answer checked against the oracle.

Latency = wall time of ``session.execute(text)``, which includes fetching all result rows to the
client. As in TSBS, a worker opens its connection inside its first query of each type, so that
query's latency includes the connection. Answer normalisation and comparison happen after the
clock stops. ``qps`` per type = successful queries / wall time of that type's run.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tsbench.measure.stats import latency_stats
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
    for qtype, items in types.items():
        started = time.perf_counter()
        done = _run_type(items, rendered, open_session, workers)
        wall[qtype] = time.perf_counter() - started
        for execution, rows in done:
            if rows is not None and execution.query_id in expected:
                query = next(q for q in items if q.id == execution.query_id)
                _check(execution, query, rows, expected[execution.query_id])
            executions.append(execution)
        ok = sum(1 for e, _ in done if not e.error)
        log.info("queries %s %s %s: %d/%d ok in %.2f s", label, name, qtype, ok, len(items), wall[qtype])
    return PassResult(name, executions, wall)


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


def _run_type(
    items: list[LogicalQuery], rendered: dict[str, str], open_session: Callable[[], Session], workers: int
) -> list[tuple[Execution, list[tuple[Any, ...]] | None]]:
    work: queue.Queue[LogicalQuery] = queue.Queue()
    for query in items:
        work.put(query)
    results: list[tuple[Execution, list[tuple[Any, ...]] | None]] = []
    lock = threading.Lock()

    def worker() -> None:
        session: Session | None = None
        try:
            while True:
                try:
                    query = work.get_nowait()
                except queue.Empty:
                    return
                started = time.perf_counter()
                try:
                    if session is None:
                        session = open_session()
                    rows = session.execute(rendered[query.id])
                    latency = (time.perf_counter() - started) * 1000
                    outcome = (Execution(query.id, query.type, latency), rows)
                except Exception as error:
                    outcome = (
                        Execution(query.id, query.type, None, f"{type(error).__name__}: {error}"[:500]),
                        None,
                    )
                    if session is not None:  # a broken connection is replaced for the next query
                        _close_quietly(session)
                        session = None
                with lock:
                    results.append(outcome)
        finally:
            if session is not None:
                _close_quietly(session)

    threads = [threading.Thread(target=worker, name=f"query-worker-{i}", daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    order = {q.id: i for i, q in enumerate(items)}
    return sorted(results, key=lambda item: order[item[0].query_id])


def _close_quietly(session: Session) -> None:
    try:
        session.close()
    except Exception as error:
        log.debug("closing a query session failed: %s", error)
