"""Trends over earlier runs of the same use case and scale (load rate, headline query types)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.report import charts
from tsbench.report.sections.common import HEADLINE_TYPES, TREND_CHART_TYPES
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
class TrendsSection:
    """Trend charts (SVG: load rows/s, then hot queries/s of ``types``) over ``runs``, oldest
    first, at most ``limit``; ``skipped``: earlier runs of another use case or scale."""

    charts: list[str]
    runs: list[TrendRun]
    skipped: int
    types: list[str]
    limit: int


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


def _load_rate(run: RunResult, name: str) -> float | None:
    body = run.targets.get(name)
    return body.load.median_rows_per_s if body is not None and body.load is not None else None


def _hot_qps(qtype: str) -> Getter:
    """Clean hot qps of ``qtype`` (None with errors, wrong answers or no queries)."""

    def get(run: RunResult, name: str) -> float | None:
        body = run.targets.get(name)
        return body.clean_hot_qps(qtype) if body is not None else None

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
) -> TrendsSection | None:
    """Trend charts over the last ``limit`` runs of this shape (None with fewer than two);
    ``history``: earlier results (``flatten_history``)."""
    same = _same_shape(result, history)
    runs = sorted([*same, result], key=lambda r: (r.created_at, r.run_id))[-limit:]
    if len(runs) < 2:
        return None
    labels = _labels(runs, result)
    names = list(dict.fromkeys([*result.targets, *(n for run in runs for n in run.targets)]))
    colours = {target_title(n): target_colour(n) for n in names}
    made = []
    if load_series := _series(runs, names, _load_rate):
        made.append(
            charts.trend_chart(f"{prefix}trend-load", labels, load_series, colours, "Load rate", "rows/s")
        )
    chosen = [t for t in HEADLINE_TYPES if t in query_types][:TREND_CHART_TYPES]
    for qtype in chosen:
        if qps_series := _series(runs, names, _hot_qps(qtype)):
            made.append(
                charts.trend_chart(
                    f"{prefix}trend-{qtype}", labels, qps_series, colours, f"{qtype}, hot", "queries/s"
                )
            )
    return TrendsSection(
        charts=made,
        runs=[TrendRun(label, run.run_id, run.created_at) for label, run in zip(labels, runs, strict=True)],
        skipped=len(history) - len(same),
        types=chosen,
        limit=limit,
    )
