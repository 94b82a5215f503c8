"""Trends over earlier runs of the same use case and scale (load rate, headline query types' hot
median latency), with the change points ``changes.json`` found in the history (``tsbench.changes``)
marked on the charts and listed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.changes.metrics import LOAD, Metric, figures, hot_latency
from tsbench.report import charts
from tsbench.report.sections.common import HEADLINE_TYPES, TREND_CHART_TYPES
from tsbench.results.change_records import ChangeRecord, ChangeReport
from tsbench.results.documents import HistoryItem, stored_results
from tsbench.results.model import RunResult
from tsbench.targets.registry import target_colour, target_title

Getter = Callable[[RunResult, str], float | None]


@dataclass(frozen=True)
class TrendRun:
    """One run on the trend charts' axis: its label (creation minute or run id) and identity."""

    label: str
    run_id: str
    created_at: str


@dataclass(frozen=True)
class ChangeRow:
    """One detected change as the report lists it."""

    target: str
    metric: str
    verdict: str
    change: str  # relative change and its 95 % interval, per cent
    levels: str  # mean before → mean after, with units
    pvalue: str
    before: str  # the last run of the old level (its label on the charts, else its id)
    after: str
    differences: list[str]


@dataclass(frozen=True)
class ChangesView:
    """What change detection found for this point: ``rows`` newest first; ``searched``: how many
    runs and series it searched, and with what; ``missing``: why there is nothing to show."""

    rows: list[ChangeRow]
    searched: str
    missing: str = ""


@dataclass(frozen=True)
class TrendsSection:
    """Trend charts (SVG: load rows/s, then hot median latency of ``types``) over ``runs``, oldest
    first, at most ``limit``, changes marked; ``skipped``: earlier runs of another use case or
    scale; ``changes``: the change points of this point's series."""

    charts: list[str]
    runs: list[TrendRun]
    skipped: int
    types: list[str]
    limit: int
    changes: ChangesView


def flatten_history(history: Iterable[HistoryItem]) -> list[RunResult]:
    """Earlier runs (results, comparisons or stored results, as records or JSON) as results: a
    comparison gives one per scale; a result without a spec is left out."""
    return [stored.result for stored in stored_results(history) if stored.result.has("spec")]


def _same_shape(result: RunResult, history: Sequence[RunResult]) -> list[RunResult]:
    """Earlier runs (not this one) with the same use case and scale."""
    spec = result.spec
    return [
        h
        for h in history
        if h.run_id != result.run_id
        and h.spec.get("use_case") == spec["use_case"]
        and h.spec.get("scale") == spec["scale"]
    ]


def _run_id(run: RunResult) -> str:
    return run.run_id if run.has("run_id") else "?"


def _labels(runs: Sequence[RunResult], result: RunResult) -> list[str]:
    """Creation minute per run (run ids when two runs share a minute); ``(this)`` marks ``result``."""
    labels = []
    for run in runs:
        created = run.created_at
        label = f"{created[:10]} {created[11:16]}" if len(created) >= 16 else _run_id(run)
        labels.append(label + (" (this)" if run is result else ""))
    if len(set(labels)) != len(labels):
        labels = [_run_id(run) + (" (this)" if run is result else "") for run in runs]
    return labels


def _figure(metric: Metric) -> Getter:
    """``metric``'s value for a target in a run, as change detection reads it (None when not
    comparable: ``tsbench.changes.metrics``)."""

    def get(run: RunResult, name: str) -> float | None:
        body = run.targets.get(name)
        return dict(figures(body)).get(metric) if body is not None else None

    return get


def _series(runs: Sequence[RunResult], names: Sequence[str], getter: Getter) -> dict[str, list[Any]]:
    """Values per target title over ``runs``; targets without any value left out."""
    out = {target_title(n): [getter(run, n) for run in runs] for n in names}
    return {label: values for label, values in out.items() if any(v is not None for v in values)}


def trends_section(
    prefix: str,
    result: RunResult,
    history: Sequence[RunResult],
    limit: int,
    query_types: Sequence[str],
    changes: ChangeReport | None = None,
) -> TrendsSection | None:
    """Trend charts over the last ``limit`` runs of this shape (None with fewer than two and no
    change detection), the changes of this point's series marked; ``history``: earlier results
    (``flatten_history``); ``changes``: the run's ``changes.json`` (None: detection did not run)."""
    same = _same_shape(result, history)
    runs = sorted([*same, result], key=lambda r: (r.created_at, r.run_id))[-limit:]
    labels = _labels(runs, result)
    mine = _point_changes(result, changes)
    view = _changes_view(mine, changes, dict(zip((r.created_at for r in runs), labels, strict=True)))
    if len(runs) < 2 and not view.rows:
        return None
    chosen = [t for t in HEADLINE_TYPES if t in query_types][:TREND_CHART_TYPES]
    metrics = [(LOAD, "Load rate"), *((hot_latency(t), f"{t}, hot median") for t in chosen)]
    made = [
        chart
        for metric, title in metrics
        if (chart := _trend_chart(f"{prefix}trend-{metric.name}", runs, labels, metric, title, mine))
    ]
    return TrendsSection(
        charts=made,
        runs=[TrendRun(label, run.run_id, run.created_at) for label, run in zip(labels, runs, strict=True)],
        skipped=len(history) - len(same),
        types=chosen,
        limit=limit,
        changes=view,
    )


def _trend_chart(
    key: str,
    runs: Sequence[RunResult],
    labels: Sequence[str],
    metric: Metric,
    title: str,
    changes: Sequence[ChangeRecord],
) -> str | None:
    """One metric's chart over ``runs`` with its changes marked (None: no target has a value)."""
    names = list(dict.fromkeys(n for run in runs for n in run.targets))
    series = _series(runs, names, _figure(metric))
    if not series:
        return None
    colours = {target_title(n): target_colour(n) for n in names}
    index = {run.created_at: i for i, run in enumerate(runs)}
    marks = [
        (index[c.after.created_at], target_title(c.target))
        for c in changes
        if c.metric == metric.name and c.after.created_at in index and index[c.after.created_at] > 0
    ]
    safe_key = key.replace(" ", "-").replace("/", "-")
    return charts.trend_chart(safe_key, labels, series, colours, title, metric.unit, changes=marks)


def _point_changes(result: RunResult, changes: ChangeReport | None) -> list[ChangeRecord]:
    """The changes of ``result``'s point (its use case, scale and point folder's axes)."""
    if changes is None:
        return []
    point = result.point.name if result.point is not None else result.scale_dir
    return [
        c
        for c in changes.changes
        if c.use_case == result.spec.get("use_case")
        and c.scale == result.spec.get("scale")
        and (not point or c.after.point == point)
    ]


def _changes_view(
    mine: Sequence[ChangeRecord], report: ChangeReport | None, labels: dict[str, str]
) -> ChangesView:
    if report is None:
        return ChangesView([], "", missing="Change detection did not run for this run.")
    searched = f"{report.runs} run(s), {report.series} series; {report.detector}"
    return ChangesView([_row(c, labels) for c in mine], searched)


def _row(change: ChangeRecord, labels: dict[str, str]) -> ChangeRow:
    def named(ref_created: str, ref_id: str) -> str:
        return labels.get(ref_created, ref_id)

    unit = change.unit
    return ChangeRow(
        target=target_title(change.target),
        metric=change.metric,
        verdict=change.verdict,
        change=change.interval_text(),
        levels=f"{_human(change.mean_before)} → {_human(change.mean_after)} {unit}",
        pvalue="—" if change.pvalue is None else f"{change.pvalue:.1g}",
        before=named(change.before.created_at, change.before.run_id),
        after=named(change.after.created_at, change.after.run_id),
        differences=[d.text() for d in change.differences],
    )


def _human(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
