"""The load section: the median trial per target (rows/s, resources, client share) and its chart."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from tsbench.report import charts, fmt
from tsbench.report.sections import client_share
from tsbench.report.sections.client_share import ClientShare, PreparedNote
from tsbench.report.sections.common import leaders, ranked
from tsbench.report.sections.status import TargetView
from tsbench.report.spread import Spread, spread
from tsbench.results.model import LoadPhase, LoadTrial, Number, Resources, RunResult
from tsbench.verdicts.noise import RATE_TOLERANCE


@dataclass(frozen=True)
class LoadRow:
    """One target's median load trial: rows, seconds, rows/s and metrics/s (rates only when the
    row count agreed), server resources (percent of a core, bytes), the client's CPU share."""

    target: TargetView
    trial: LoadTrial | None
    complete: bool
    note: str
    client: ClientShare
    rows: int | None = None
    metrics: int | None = None
    seconds: Number | None = None
    rows_per_s: Number | None = None
    metrics_per_s: Number | None = None
    trial_number: int = 0  # 1-based; 0 without a trial
    trial_rates: tuple[Number, ...] = ()  # rows/s of every trial, when there were several
    spread: Spread | None = None  # of the trials' rows/s (complete loads, ≥ 2 trials)
    resources: Resources | None = None  # None without a trial; empty when none were sampled
    row_counts: dict[str, int] | None = None
    best: bool = False
    vs_best: float | None = None  # the best rows/s ÷ this one's

    def repeats(self) -> tuple[float, ...]:
        """Rows/s of every complete trial (the noise rule's repeats); empty without a figure."""
        if self.rows_per_s is None:
            return ()
        return tuple(float(r) for r in self.trial_rates) or (float(self.rows_per_s),)


@dataclass(frozen=True)
class LoadSection:
    """Rows per target, the rows/s bar chart (SVG) and how bodies were prepared before loading."""

    rows: list[LoadRow]
    chart: str
    prepared: list[PreparedNote]


def _trial_row(target: TargetView, load: LoadPhase, trial: LoadTrial, number: int) -> LoadRow:
    """The median trial's figures; rates only when the load is complete (row counts agree)."""
    done = load.row_count_ok and load.has("median_rows_per_s")
    note = "" if done else "row count after load differs from the dataset: " + json.dumps(trial.row_counts)
    return LoadRow(
        target=target,
        trial=trial,
        complete=done,
        note=note,
        client=client_share.load_client(trial),
        rows=trial.rows,
        metrics=trial.metrics,
        seconds=trial.seconds,
        rows_per_s=trial.rows_per_s if done else None,
        metrics_per_s=trial.metrics_per_s if done else None,
        trial_number=number,
        trial_rates=tuple(t.rows_per_s for t in load.trials) if len(load.trials) > 1 else (),
        spread=spread([t.rows_per_s for t in load.trials]) if done else None,
        resources=trial.resources if trial.resources is not None else Resources(),
        row_counts=trial.row_counts,
    )


def _load_row(target: TargetView, load: LoadPhase) -> LoadRow:
    trial, number = load.median_trial()
    if trial is not None:
        return _trial_row(target, load, trial, number)
    note = target.problem or "no load figures"
    return LoadRow(
        target=target, trial=None, complete=False, note=note, client=client_share.load_client(None)
    )


def load_section(run: RunResult, targets: Sequence[TargetView], prefix: str) -> LoadSection:
    """Rows (one per target, with ``best`` and ``vs_best``), the bar chart and the prepare notes."""
    rows = [_load_row(t, run.targets[t.name].load or LoadPhase()) for t in targets]
    rates = {r.target.name: r.rows_per_s for r in rows}
    order = ranked(rates, True)
    best = order[0][1] if order else None
    leading = leaders(rates, {r.target.name: r.repeats() for r in rows}, True, RATE_TOLERANCE)
    rows = [
        replace(
            row,
            best=row.target.name in leading,
            vs_best=best / row.rows_per_s if best and row.rows_per_s else None,
        )
        for row in rows
    ]
    chart = charts.bar_chart(
        f"{prefix}load-chart",
        [r.target.label for r in rows],
        [r.rows_per_s for r in rows],
        [r.target.colour for r in rows],
        "rows/s (median trial)",
        notes=[r.note or "no figure" for r in rows],
        value_text=[fmt.rate(r.rows_per_s) for r in rows],
    )
    return LoadSection(rows=rows, chart=chart, prepared=client_share.prepare_notes(run, targets))
