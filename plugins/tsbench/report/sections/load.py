"""The load section: the median trial per target (rows/s, resources, client share) and its chart."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tsbench.report import charts, client_share, fmt
from tsbench.report.sections.common import RESOURCE_KEYS, complete, ranked
from tsbench.report.sections.status import TargetView
from tsbench.results.model import LoadPhase, LoadTrial, RunResult

NO_TRIAL = {
    "rows": None,
    "metrics": None,
    "seconds": None,
    "rows_per_s": None,
    "metrics_per_s": None,
    "trial_number": 0,
    "trial_rates": [],
    "resources": {},
    "row_counts": {},
}


def _trial_figures(load: LoadPhase, trial: LoadTrial, number: int, done: bool) -> dict[str, Any]:
    """The median trial's figures; rates only when the load is complete (row counts agree)."""
    resources = trial.resources.to_json() if trial.resources is not None else None
    return {
        "rows": trial.rows,
        "metrics": trial.metrics,
        "seconds": trial.seconds,
        "rows_per_s": trial.rows_per_s if done else None,
        "metrics_per_s": trial.metrics_per_s if done else None,
        "trial_number": number,
        "trial_rates": [t.rows_per_s for t in load.trials] if len(load.trials) > 1 else [],
        "resources": complete(resources, RESOURCE_KEYS),
        "row_counts": trial.row_counts,
        "client": client_share.load_client(trial),
    }


def _load_row(target: TargetView, load: LoadPhase) -> dict[str, Any]:
    trial, number = load.median_trial()
    done = trial is not None and load.row_count_ok and load.has("median_rows_per_s")
    row: dict[str, Any] = {"target": target, "trial": trial, "complete": done, "note": ""}
    if trial is not None:
        row.update(_trial_figures(load, trial, number, done))
        if not done:
            row["note"] = "row count after load differs from the dataset: " + json.dumps(trial.row_counts)
    else:
        row.update(NO_TRIAL, client=client_share.load_client(None))
        row["note"] = target.problem or "no load figures"
    return row


def load_section(run: RunResult, targets: Sequence[TargetView], prefix: str) -> dict[str, Any]:
    """Rows (one per target, with ``best`` and ``vs_best``), the bar chart and the prepare notes."""
    rows = [_load_row(t, run.targets[t.name].load or LoadPhase()) for t in targets]
    order = ranked({r["target"].name: r["rows_per_s"] for r in rows}, True)
    best = order[0][1] if order else None
    for row in rows:
        row["best"] = bool(order) and row["target"].name == order[0][0]
        row["vs_best"] = best / row["rows_per_s"] if best and row["rows_per_s"] else None
    chart = charts.bar_chart(
        f"{prefix}load-chart",
        [r["target"].label for r in rows],
        [r["rows_per_s"] for r in rows],
        [r["target"].colour for r in rows],
        "rows/s (median trial)",
        notes=[r["note"] or "no figure" for r in rows],
        value_text=[fmt.rate(r["rows_per_s"]) for r in rows],
    )
    return {"rows": rows, "chart": chart, "prepared": client_share.prepare_notes(run, targets)}
