"""A sweep's figures along each numeric axis it varies (scale = cardinality, workers, batch size):
for every combination of the other varied axes, a table (the axis' values down, the databases
across: median load rate with min / median / max and CV of its trials, flagged above 5 %) and the
line chart of the same figures — one line per database, the trials' min–max as error bars, a log
axis for cardinality. Study B's layout (rows/s by workers per cardinality) and A's (by scale per
ingestion order) are instances."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.report import charts, fmt
from tsbench.report.sections.common import colours, leaders
from tsbench.report.sections.point_view import PointView
from tsbench.report.sections.status import TargetView
from tsbench.report.spread import Spread
from tsbench.sweep.axes import AXES, BY_AXIS
from tsbench.verdicts.noise import RATE_TOLERANCE


@dataclass(frozen=True)
class SweepCell:
    """One database at one axis value: the median trial's rows/s, its trials' spread, best?"""

    value: float | None
    spread: Spread | None
    best: bool


@dataclass(frozen=True)
class SweepTable:
    """Load rows/s along ``axis`` with the other varied axes fixed at ``fixed`` (words)."""

    key: str
    axis: str
    fixed: str
    targets: list[TargetView]
    rows: list[tuple[str, list[SweepCell]]]
    chart: str

    @property
    def title(self) -> str:
        return f"Load rate by {BY_AXIS[self.axis].chart_title}" + (f", {self.fixed}" if self.fixed else "")


def _field(axis: str) -> str:
    return BY_AXIS[axis].field


def _varied(scales: Sequence[PointView]) -> list[str]:
    """The axes whose value differs between points, in ``AXES`` order."""
    names = [axis.name for axis in AXES]
    return [axis for axis in names if len({repr(s.run.spec.get(_field(axis))) for s in scales}) > 1]


def _cells(scale: PointView, targets: Sequence[TargetView]) -> list[SweepCell]:
    rows = {row.target.name: row for row in scale.load.rows}
    values = {name: row.rows_per_s for name, row in rows.items()}
    best = leaders(values, {name: row.repeats() for name, row in rows.items()}, True, RATE_TOLERANCE)
    return [
        SweepCell(values.get(t.name), rows[t.name].spread if t.name in rows else None, t.name in best)
        for t in targets
    ]


def _table(
    axis: str, fixed: dict[str, Any], points: list[PointView], targets: Sequence[TargetView]
) -> SweepTable:
    points = sorted(points, key=lambda s: s.run.spec[_field(axis)])
    rows = [(fmt.integer(s.run.spec[_field(axis)]), _cells(s, targets)) for s in points]
    words = ", ".join(f"{_field(k).replace('_', ' ')} {_value(v)}" for k, v in fixed.items())
    key = "sweep-" + "-".join([axis, *(f"{_field(k)}{v}" for k, v in fixed.items())])
    xs = [float(s.run.spec[_field(axis)]) for s in points]
    series = {t.label: [cells[i].value for _, cells in rows] for i, t in enumerate(targets)}
    ranges = {t.label: [_range(cells[i].spread) for _, cells in rows] for i, t in enumerate(targets)}
    drawn = {label: values for label, values in series.items() if any(v is not None for v in values)}
    table = SweepTable(key, axis, words, list(targets), rows, "")
    if not drawn:
        return table
    chart = charts.sweep_chart(
        key,
        xs,
        drawn,
        ranges,
        colours(targets),
        table.title,
        "rows/s (median trial)",
        BY_AXIS[axis].chart_title,
    )
    return SweepTable(key, axis, words, list(targets), rows, chart)


def _value(value: Any) -> str:
    return fmt.integer(value) if isinstance(value, int) else str(value)


def _natural(values: tuple[Any, ...]) -> tuple[tuple[int, float, str], ...]:
    """Numbers by value, then other values by text."""
    return tuple((0, v, "") if isinstance(v, int | float) else (1, 0.0, str(v)) for v in values)


def _range(spread: Spread | None) -> tuple[float, float] | None:
    return (spread.min, spread.max) if spread is not None else None


def sweep_tables(scales: Sequence[PointView], targets: Sequence[TargetView]) -> list[SweepTable]:
    """A table + chart per numeric varied axis × combination of the other varied axes (those with
    at least two points); empty for a single point or a sweep over no numeric axis."""
    varied = _varied(scales)
    tables = []
    for axis in [a for a in varied if BY_AXIS[a].numeric]:
        others = [a for a in varied if a != axis]
        combos = sorted({tuple(s.run.spec.get(_field(a)) for a in others) for s in scales}, key=_natural)
        for combo in combos:
            fixed = dict(zip(others, combo, strict=True))
            points = [s for s in scales if all(s.run.spec.get(_field(a)) == v for a, v in fixed.items())]
            if len(points) >= 2:
                tables.append(_table(axis, fixed, points, targets))
    return tables
