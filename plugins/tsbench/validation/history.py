"""The history suite (warning only): are this run's headline figures in line with earlier runs?

Compared per target: the load rate (``load.median_rows_per_s``) and the hot queries/s of every
query type, each against the median of the same figure over the trailing window of earlier
comparable runs (same use case, scale and set of targets — ``tsbench.results.store.comparison_key``;
at most ``window`` runs, default 7; runs whose validation failed are left out). A figure passes
within ``±tolerance`` (default 30 %) of that median. With fewer than ``min_history`` (default 3)
earlier values the figure is "skipped (not enough history)". Figures that are not comparable are
left out on both sides: a load whose row count was wrong, a query type with errors or answers
differing from the oracle.
"""

from __future__ import annotations

import statistics
from typing import Any

import pandas as pd

from tsbench.results.documents import StoredResult
from tsbench.results.model import RunResult, TargetResult
from tsbench.results.store import comparison_key
from tsbench.validation.checks import Check, Frame, SuiteSpec, entry
from tsbench.validation.load import target_names

TOLERANCE = 0.30
WINDOW = 7
MIN_HISTORY = 3


def load_rate(body: TargetResult | None) -> float | None:
    """The median load rate, rows/s (None when the row count after the load was wrong)."""
    load = body.load if body is not None else None
    if load is None or not load.row_count_ok or load.median_rows_per_s is None:
        return None
    return float(load.median_rows_per_s)


def hot_qps(body: TargetResult | None, qtype: str) -> float | None:
    """Hot queries/s of ``qtype`` (None with errors, wrong answers or no queries)."""
    qps = body.clean_hot_qps(qtype) if body is not None else None
    return float(qps) if qps is not None else None


def figures(result: RunResult, target: str) -> dict[str, float | None]:
    """Metric → value for one target: ``load rows/s`` and ``hot qps <type>``."""
    body = result.targets.get(target)
    out: dict[str, float | None] = {"load rows/s": load_rate(body)}
    for qtype in body.queries.hot if body is not None and body.queries is not None else {}:
        out[f"hot qps {qtype}"] = hot_qps(body, qtype)
    return out


def trailing_runs(result: RunResult, history: list[StoredResult], window: int = WINDOW) -> list[StoredResult]:
    """The last ``window`` earlier comparable runs whose validation did not fail, oldest first."""
    key = comparison_key(result)
    created = result.created_at
    this = (result.written("run_id"), result.written("created_at"))
    runs = [
        h
        for h in history
        if h.result is not result
        and (h.result.written("run_id"), h.result.written("created_at")) != this
        and comparison_key(h.result) == key
        and (not created or h.result.created_at < created)
        and (h.validation is None or h.validation.success is not False)
    ]
    runs.sort(key=lambda h: (h.result.created_at, h.result.run_id))
    return runs[-window:] if window > 0 else []


def _trend_check(
    name: str, metric: str, value: float, earlier: list[float], tolerance: float
) -> tuple[dict[str, Any], Check]:
    """A figure against the median of its earlier values: its frame row and its check."""
    median = statistics.median(earlier)
    key = f"{name}|{metric}"
    ratio = value / median if median else float("inf")
    row = {"key": key, "target": name, "metric": metric, "value": value, "median": median, "ratio": ratio}
    return row, Check(
        f"{name}: {metric} within ±{tolerance:.0%} of the trailing median",
        "ExpectColumnValuesToBeBetween",
        {"column": "ratio", "min_value": 1 - tolerance, "max_value": 1 + tolerance},
        where=("key", key),
        observed={"value": value, "median": median, "ratio": round(ratio, 4), "runs": len(earlier)},
        details=f"{(ratio - 1) * 100:+.1f} % vs the median of {len(earlier)} earlier run(s)",
    )


def _skipped_entry(name: str, skipped: dict[str, str], earlier_runs: int, min_history: int) -> dict[str, Any]:
    """One skipped (warning-free) result naming every figure of ``name`` that was not compared."""
    reasons = set(skipped.values())
    short = "not enough history" if any(r.startswith("not enough") for r in reasons) else "no figures"
    return entry(
        f"{name}: figures vs the trailing median",
        True,
        {"skipped": skipped, "earlier_runs": earlier_runs},
        f"skipped ({short}): {len(skipped)} figure(s); {earlier_runs} earlier comparable run(s), "
        f"{min_history} needed",
        skipped=True,
    )


def history_suite(
    result: RunResult,
    history: list[StoredResult],
    tolerance: float = TOLERANCE,
    window: int = WINDOW,
    min_history: int = MIN_HISTORY,
) -> SuiteSpec:
    """Each target's figures against their trailing medians (module docstring); warnings only."""
    runs = trailing_runs(result, history, window)
    this, earlier_runs = result, [run.result for run in runs]
    suite = SuiteSpec("history", critical=False)
    rows, checks = [], []
    for name in target_names(result):
        skipped: dict[str, str] = {}
        for metric, value in figures(this, name).items():
            earlier = [v for run in earlier_runs if (v := figures(run, name).get(metric)) is not None]
            if value is None:
                skipped[metric] = "no comparable figure in this run"
            elif len(earlier) < min_history:
                skipped[metric] = f"not enough history ({len(earlier)} earlier value(s), need {min_history})"
            else:
                row, check = _trend_check(name, metric, value, earlier, tolerance)
                rows.append(row)
                checks.append(check)
        if skipped:
            suite.static.append(_skipped_entry(name, skipped, len(runs), min_history))
    frame = pd.DataFrame(rows, columns=["key", "target", "metric", "value", "median", "ratio"])
    if checks:
        suite.frames.append(Frame("trend", frame, checks))
    suite.info = {
        "tolerance": tolerance,
        "window": window,
        "min_history": min_history,
        "earlier_runs": [r.store_id or r.result.written("run_id") for r in runs],
    }
    return suite
