"""The rollup step of the queries phase (run option ``rollup_after_load``): after the raw passes,
build the target's rollup (timed by the target: create and materialise everything loaded), then run
every query of the types it can answer on it — as many passes as the hot passes, so the rollup's
rate stands beside the raw hot rate — with every answer checked against the same reference answers
as the raw queries'. The rollup's passes follow warm raw passes: they are hot too."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import asdict

from tsbench.measure.query_runner import PassResult, pooled, run_pass
from tsbench.results import model as records
from tsbench.targets.base import Target
from tsbench.workload.answers import Answer
from tsbench.workload.queries import LogicalQuery

log = logging.getLogger("tsbench.queries")


def measure_rollup(
    target: Target,
    queries: list[LogicalQuery],
    expected: Mapping[str, Answer],
    workers: int,
    passes: int,
    label: str,
) -> tuple[records.RollupFigures, list[PassResult]]:
    """Build the rollup, run ``passes`` passes of the queries it answers; the figures and the passes
    (whose answers the caller counts with the raw passes')."""
    built = target.build_rollup()
    log.info(
        "rollup %s %s: %d rows, %d bytes, built in %.2f s",
        label,
        built.name,
        built.rows,
        built.bytes,
        built.seconds,
    )
    rendered = {q.id: text for q in queries if (text := target.render_on_rollup(q)) is not None}
    answered = [q for q in queries if q.id in rendered]
    results = [
        run_pass(f"rollup-{n}", answered, rendered, expected, target.session, workers, label)
        for n in range(1, passes + 1)
        if answered
    ]
    figures = records.RollupFigures(
        **asdict(built),
        passes=len(results),
        on_rollup=pooled("rollup", results).stats() if results else {},
    )
    return figures, results
