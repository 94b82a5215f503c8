"""A metric of one target at one point as tsbench measured it: every repeat (load trials, hot
passes), only from complete figures (row counts agreed; every query answered without error or wrong
answer); or why there is none."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from tsbench.results.model import Number, QueriesPhase, QueryStats, RunResult, TargetResult
from tsbench.verdicts.published import Metric


@dataclass(frozen=True)
class Measurement:
    """``values``: every repeat in the order measured (one for a figure measured once); empty with
    ``missing`` = why there is none."""

    values: tuple[float, ...] = ()
    missing: str = ""

    @property
    def value(self) -> float | None:
        """The median repeat (the figure the report shows), None when missing."""
        return statistics.median(self.values) if self.values else None


def _of(values: list[Number | None], missing: str) -> Measurement:
    present = tuple(float(v) for v in values if v is not None)
    return Measurement(present) if present else Measurement(missing=missing)


def measure(
    run: RunResult, target: str, metric: Metric, query_type: str | None = None, on_rollup: bool = False
) -> Measurement:
    """``metric`` of ``target`` at ``run``'s point (``on_rollup``: the query metric on the target's
    rollup instead of the raw table)."""
    body = run.targets.get(target)
    if body is None:
        return Measurement(missing=f"{target} is not in this run")
    if metric.needs_query_type:
        return _query_figure(body, target, metric, query_type or "", on_rollup)
    if metric.is_footprint:
        return _footprint_figure(body, target, metric)
    return _load_figure(body, target, metric)


def _load_figure(body: TargetResult, target: str, metric: Metric) -> Measurement:
    load = body.load
    if load is None or not load.trials or not load.row_count_ok:
        return Measurement(missing=f"{target} has no complete load ({body.failed_phase or 'no trial'})")
    field = {
        Metric.LOAD_ROWS_PER_S: "rows_per_s",
        Metric.LOAD_METRICS_PER_S: "metrics_per_s",
        Metric.LOAD_SECONDS: "seconds",
    }[metric]
    return _of([getattr(trial, field) for trial in load.trials], f"{target}: no {field}")


def _footprint_figure(body: TargetResult, target: str, metric: Metric) -> Measurement:
    phase = body.footprint
    figures = None
    if phase is not None:
        figures = phase.after_load if metric is Metric.FOOTPRINT_BYTES_AFTER_LOAD else phase.after_settle
    value = (
        None if figures is None else figures.disk_bytes if figures.disk_bytes is not None else figures.bytes
    )
    return _of([value], f"{target} has no footprint figure")


def _query_figure(
    body: TargetResult, target: str, metric: Metric, query_type: str, on_rollup: bool
) -> Measurement:
    queries = body.queries
    if queries is None:
        return Measurement(missing=f"{target} ran no queries ({body.failed_phase or 'not run'})")
    if query_type in queries.unsupported:
        return Measurement(
            missing=f"{target} does not support {query_type}: {queries.unsupported[query_type]}"
        )
    if on_rollup:
        return _rollup_figure(queries, target, metric, query_type)
    passes = queries.cold if metric is Metric.QUERY_MEAN_MS_COLD else queries.hot
    stats = passes.get(query_type)
    if stats is None:
        return Measurement(missing=f"{query_type} was not run")
    if not stats.clean():
        return Measurement(missing=f"{target}'s {query_type} had errors or wrong answers")
    if metric is Metric.QUERY_MEAN_MS_COLD:
        return _of([stats.mean_ms], f"no {metric.value}")
    by_pass = queries.hot_qps_by_pass if metric is Metric.QUERY_QPS else queries.hot_mean_ms_by_pass
    return _repeats(stats, metric, by_pass.get(query_type))


def _rollup_figure(queries: QueriesPhase, target: str, metric: Metric, query_type: str) -> Measurement:
    rollup = queries.rollup
    if rollup is None:
        return Measurement(missing=f"{target} built no rollup in this run")
    stats = rollup.on_rollup.get(query_type)
    if stats is None:
        return Measurement(missing=f"{target}'s rollup does not answer {query_type}")
    if not stats.clean():
        return Measurement(missing=f"{target}'s {query_type} on its rollup had errors or wrong answers")
    by_pass = rollup.qps_by_pass if metric is Metric.QUERY_QPS else rollup.mean_ms_by_pass
    return _repeats(stats, metric, by_pass.get(query_type))


def _repeats(stats: QueryStats, metric: Metric, by_pass: list[Number] | None) -> Measurement:
    """Each hot pass's figure where the run recorded them, else the pooled figure alone."""
    if by_pass:
        return _of(list(by_pass), f"no {metric.value}")
    pooled = stats.qps if metric is Metric.QUERY_QPS else stats.mean_ms
    return _of([pooled], f"no {metric.value}")
