"""Figures per point × database, when one document covers several points: several scales (study
A/B's shape) or a sweep's points (workers, batch size, ingestion order, trials: the line chart of
load rate against the swept axis, one line per database)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tsbench.report import charts, fmt
from tsbench.report.sections.common import HEADLINE_TYPES, colours, leaders
from tsbench.report.sections.point_view import PointView
from tsbench.report.sections.status import TargetView
from tsbench.report.sections.sweep import SweepTable, sweep_tables
from tsbench.results.model import Number, RunResult
from tsbench.verdicts.noise import FOOTPRINT_TOLERANCE, RATE_TOLERANCE

ACROSS_TYPES = 5


@dataclass(frozen=True)
class PointNaming:
    """How the document names one point: anchor ``prefix``, part ``heading`` (``Scale 100``, or
    the sweep point's label) and its ``value`` on the across axis (``100``, ``4``)."""

    prefix: str
    heading: str
    value: str


@dataclass(frozen=True)
class Axis:
    """The across section's axis: column header (``Scale``, ``Workers``, ``Point``), the noun for
    text (``scale``, ``point``) and the section's title."""

    header: str = "Scale"
    noun: str = "scale"
    title: str = "Across scales"


def point_naming(runs: Sequence[RunResult]) -> tuple[Axis, list[PointNaming]]:
    """The axis and each point's naming. A plain comparison (no sweep axis but scales) keeps
    ``s<scale>-`` anchors and ``Scale N`` headings; a sweep over one other axis is named by that
    axis' values, one over several by the points' labels."""
    multi = len(runs) > 1
    varied = list(dict.fromkeys(a for r in runs if r.point for a in r.point.axes if a != "scales"))
    if not varied:
        names = [
            PointNaming(
                f"s{r.spec['scale']}-" if multi else "",
                f"Scale {fmt.integer(r.spec['scale'])}",
                fmt.integer(r.spec["scale"]),
            )
            for r in runs
        ]
        return Axis(), names
    names = [_sweep_naming(r, varied) for r in runs]
    if len(varied) == 1 and len({r.spec["scale"] for r in runs}) == 1:
        header = varied[0].replace("_", " ").capitalize()
        return Axis(header, "point", f"Across the sweep: {header.lower()}"), names
    return Axis("Point", "point", "Across the sweep"), [
        PointNaming(n.prefix, n.heading, n.heading) for n in names
    ]


def _sweep_naming(run: RunResult, varied: list[str]) -> PointNaming:
    point = run.point
    assert point is not None
    value = point.axes.get(varied[0], run.spec.get(varied[0]))
    shown = fmt.integer(value) if isinstance(value, int) else str(value)
    return PointNaming(f"{point.name}-", point.label or point.name, shown)


@dataclass(frozen=True)
class AcrossRow:
    """One point's figures (rows/s, bytes or queries/s) per target: (target, value, best?);
    ``label``: the point's value on the axis; ``type``: the query type of a queries row ("" otherwise)."""

    label: str
    prefix: str
    cells: list[tuple[TargetView, Number | None, bool]]
    type: str = ""

    def value(self, target: TargetView) -> Number | None:
        """``target``'s figure at this scale (None: none, or not in this row)."""
        return next((value for item, value, _ in self.cells if item.name == target.name), None)


@dataclass(frozen=True)
class AcrossSection:
    """Load rows/s, disk bytes after settle and headline hot queries/s per point × target, the
    chart of load rate along the axis (SVG, "" without figures, or when ``sweep`` charts each
    numeric axis instead) and the sweep's tables and charts per axis (``tsbench.report.sections.sweep``)."""

    axis: Axis
    targets: list[TargetView]
    load: list[AcrossRow]
    footprint: list[AcrossRow]
    queries: list[AcrossRow]
    chart: str
    sweep: list[SweepTable] = field(default_factory=list)


def _row(
    scale: PointView,
    targets: Sequence[TargetView],
    values: Mapping[str, Number | None],
    repeats: Mapping[str, Sequence[float]],
    higher: bool,
    qtype: str = "",
) -> AcrossRow:
    """One point's cells (target, value, best? — the best and every figure within noise of it)."""
    tolerance = RATE_TOLERANCE if qtype or higher else FOOTPRINT_TOLERANCE
    best = leaders(values, repeats, higher, tolerance)
    cells = [(t, values.get(t.name), t.name in best) for t in targets]
    return AcrossRow(scale.axis_value, scale.prefix, cells, qtype)


def _clean_qps(scale: PointView, qtype: str) -> tuple[dict[str, Number | None], dict[str, tuple[float, ...]]]:
    """Clean hot queries/s of ``qtype`` per target, and each target's hot passes."""
    for query_row in scale.queries.rows:
        if query_row.type == qtype:
            qps = {t.name: c.qps for t, c in query_row.cells if c.kind == "ok" and c.clean}
            return qps, query_row.repeats()
    return {}, {}


def _load_chart(
    axis: Axis, scales: Sequence[PointView], targets: Sequence[TargetView], load_rows: Sequence[AcrossRow]
) -> str:
    labels = [s.axis_value for s in scales]
    series = {t.label: [r.value(t) for r in load_rows] for t in targets}
    series = {label: values for label, values in series.items() if any(v is not None for v in values)}
    if not series:
        return ""
    return charts.trend_chart(
        "scales-load",
        labels,
        series,
        colours(targets),
        f"Load rate by {axis.header.lower()}",
        "rows/s",
        xlabel="scale (hosts)" if axis.header == "Scale" else axis.header.lower(),
    )


def across_scales_section(scales: Sequence[PointView], axis: Axis = Axis()) -> AcrossSection | None:
    """Load rate, footprint and headline query types per point × database (None with one point)."""
    if len(scales) < 2:
        return None
    names = list(dict.fromkeys(t.name for s in scales for t in s.targets))
    views = {t.name: t for s in scales for t in s.targets}
    targets = [views[name] for name in names]
    load_rows = [
        _row(
            s,
            targets,
            {r.target.name: r.rows_per_s for r in s.load.rows},
            {r.target.name: r.repeats() for r in s.load.rows},
            True,
        )
        for s in scales
    ]
    footprint_rows = [
        _row(s, targets, {r.target.name: r.stored("disk") for r in s.footprint.rows}, {}, False)
        for s in scales
    ]
    present = [t for t in HEADLINE_TYPES if any(t in s.queries.types for s in scales)][:ACROSS_TYPES]
    query_rows = [_row(s, targets, *_clean_qps(s, qtype), True, qtype) for qtype in present for s in scales]
    sweep = sweep_tables(scales, targets)
    return AcrossSection(
        axis=axis,
        targets=targets,
        load=load_rows,
        footprint=footprint_rows,
        queries=query_rows,
        chart="" if any(t.chart for t in sweep) else _load_chart(axis, scales, targets, load_rows),
        sweep=sweep,
    )
