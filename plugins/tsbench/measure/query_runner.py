"""The query runner: a pass over a query set with N workers, one query type at a time (like TSBS,
which runs one type per invocation), every answer checked against the oracle.

Latency = wall time of ``session.fetch(text)``, which sends the query and receives the whole
answer as the server sends it (libpq's result, the HTTP body) — what TSBS's runners time. As in
TSBS, a worker opens its connection inside its first query of each type, so that query's latency
includes the connection. ``qps`` per type = successful queries / wall time of that type's run.
Decoding the answers into Python rows, normalising and comparing them with the oracle's happen
outside the timed window (each answer with the session that received it), so neither the latencies
nor the type's wall time include them: the raw answers of a type are held until its run ends, or
until they reach a memory budget, which cuts the run into timed segments (``fetching.FetchPool``).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tsbench.measure.fetching import Execution, FetchPool, Received, trim_after_large_answer
from tsbench.measure.stats import client_cpu, latency_stats
from tsbench.targets.base import Session
from tsbench.workload.answers import Answer, AnswerShapeError, compare
from tsbench.workload.queries import LogicalQuery

log = logging.getLogger("tsbench.queries")
MAX_DIFF_SAMPLES = 5


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


def pooled(name: str, passes: list[PassResult]) -> PassResult:
    """``passes`` as one pass named ``name``: every execution, wall and client CPU seconds summed
    per type (so its qps is over all of them)."""

    def summed(field: str) -> dict[str, float]:
        total: dict[str, float] = {}
        for one in passes:
            for qtype, seconds in getattr(one, field).items():
                total[qtype] = total.get(qtype, 0.0) + seconds
        return total

    return PassResult(
        name, [e for p in passes for e in p.executions], summed("wall_s"), summed("client_cpu_s")
    )


def per_pass(passes: list[PassResult], key: str) -> dict[str, list[float]]:
    """``key`` (a ``latency_stats`` figure: ``qps``, ``mean_ms`` …) of each pass, per query type,
    in pass order: the repeats the noise rule compares (``tsbench.verdicts.noise``)."""
    found: dict[str, list[float]] = {}
    for one in passes:
        for qtype, stats in one.stats().items():
            if stats.get(key) is not None:
                found.setdefault(qtype, []).append(stats[key])
    return found


def run_pass(
    name: str,
    queries: list[LogicalQuery],
    rendered: dict[str, str],
    expected: Mapping[str, Answer],
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
    by_id = {q.id: q for q in queries}

    def check(received: Received) -> None:
        _decode_and_check(received, by_id[received.execution.query_id], expected)
        trim_after_large_answer(received)
        executions.append(received.execution)

    for qtype, items in types.items():
        first = len(executions)
        work = deque((q.id, q.type, rendered[q.id]) for q in items)
        wall[qtype], cpu[qtype] = FetchPool(open_session, workers).run(work, check)
        ok = sum(not e.error for e in executions[first:])
        log.info("queries %s %s %s: %d/%d ok in %.2f s", label, name, qtype, ok, len(items), wall[qtype])
    return PassResult(name, executions, wall, cpu)


def _decoded(received: Received) -> Iterator[list[Any]]:
    """The raw answer decoded in parts where the session can (``decode_parts``), else at once. The
    raw answer is taken out of ``received``, so the decoder holds its only reference and can free
    it as it goes."""
    session = received.session
    raw, received.raw = received.raw, None
    parts = getattr(session, "decode_parts", None)
    if parts is None:
        yield session.decode(raw)
        return
    decoding = parts(raw)
    del raw
    yield from decoding


def _decode_and_check(received: Received, query: LogicalQuery, expected: Mapping[str, Answer]) -> None:
    """Decode the raw answer (a failure to decode is the query's error) and check it. The answer is
    decoded in parts, each normalised before the next exists, the raw form freed at the end, and the
    reference answer read only then: about two copies of one answer are alive at most."""
    execution = received.execution
    if execution.error or received.session is None:
        return
    try:
        actual = Answer.adopt_parts(query.query_type, _decoded(received), query.fields)
    except AnswerShapeError as error:
        execution.answer_ok = False
        execution.diff = {"reason": str(error)}
        return
    except Exception as error:
        execution.error = f"{type(error).__name__}: {error}"[:500]
        execution.latency_ms = None
        return
    finally:
        received.raw = None
    if execution.query_id not in expected:
        return
    streamed = getattr(expected, "compare_with", None)  # an answers file streams large answers
    if streamed is not None:
        result = streamed(execution.query_id, actual)
    else:
        result = compare(expected[execution.query_id], actual)
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
    done: list[Received] = []

    def keep(received: Received) -> None:
        received.raw = None  # nothing to check: free it
        done.append(received)

    work = deque((str(i), "texts", text) for i, text in enumerate(texts))
    wall, cpu = FetchPool(open_session, workers).run(work, keep)
    latencies = [r.execution.latency_ms for r in done if r.execution.latency_ms is not None]
    return TextsResult(wall, cpu, latencies, [r.execution.error for r in done if r.execution.error])
