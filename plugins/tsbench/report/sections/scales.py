"""Figures per scale × database, when one document covers several scales (study A/B's shape)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tsbench.report import charts, fmt
from tsbench.report.sections.common import HEADLINE_TYPES, colours, ranked
from tsbench.report.sections.status import TargetView
from tsbench.results.model import Number

if TYPE_CHECKING:
    from tsbench.report.model import ScaleView

ACROSS_TYPES = 5


@dataclass(frozen=True)
class AcrossRow:
    """One scale's figures (rows/s, bytes or queries/s) per target: (target, value, best?);
    ``type``: the query type of a queries row ("" otherwise)."""

    scale: int
    prefix: str
    cells: list[tuple[TargetView, Number | None, bool]]
    type: str = ""

    def value(self, target: TargetView) -> Number | None:
        """``target``'s figure at this scale (None: none, or not in this row)."""
        return next((value for item, value, _ in self.cells if item.name == target.name), None)


@dataclass(frozen=True)
class AcrossSection:
    """Load rows/s, disk bytes after settle and headline hot queries/s per scale × target, and the
    load-by-scale chart (SVG, "" without figures)."""

    targets: list[TargetView]
    load: list[AcrossRow]
    footprint: list[AcrossRow]
    queries: list[AcrossRow]
    chart: str


def _row(
    scale: ScaleView,
    targets: Sequence[TargetView],
    values: Mapping[str, Number | None],
    higher: bool,
    qtype: str = "",
) -> AcrossRow:
    """One scale's cells (target, value, best?)."""
    order = ranked(values, higher)
    cells = [(t, values.get(t.name), bool(order) and order[0][0] == t.name) for t in targets]
    return AcrossRow(scale.scale, scale.prefix, cells, qtype)


def _clean_qps(scale: ScaleView, qtype: str) -> dict[str, Number | None]:
    qps: dict[str, Number | None] = {}
    for query_row in scale.queries.rows:
        if query_row.type == qtype:
            qps = {t.name: c.qps for t, c in query_row.cells if c.kind == "ok" and c.clean}
    return qps


def _load_chart(
    scales: Sequence[ScaleView], targets: Sequence[TargetView], load_rows: Sequence[AcrossRow]
) -> str:
    labels = [fmt.integer(s.scale) for s in scales]
    series = {t.label: [r.value(t) for r in load_rows] for t in targets}
    series = {label: values for label, values in series.items() if any(v is not None for v in values)}
    if not series:
        return ""
    return charts.trend_chart(
        "scales-load",
        labels,
        series,
        colours(targets),
        "Load rate by scale",
        "rows/s",
        xlabel="scale (hosts)",
    )


def across_scales_section(scales: Sequence[ScaleView]) -> AcrossSection | None:
    """Load rate, footprint and headline query types per scale × database (None with one scale)."""
    if len(scales) < 2:
        return None
    names = list(dict.fromkeys(t.name for s in scales for t in s.targets))
    views = {t.name: t for s in scales for t in s.targets}
    targets = [views[name] for name in names]
    load_rows = [_row(s, targets, {r.target.name: r.rows_per_s for r in s.load.rows}, True) for s in scales]
    footprint_rows = [
        _row(s, targets, {r.target.name: r.stored("disk") for r in s.footprint.rows}, False) for s in scales
    ]
    present = [t for t in HEADLINE_TYPES if any(t in s.queries.types for s in scales)][:ACROSS_TYPES]
    query_rows = [_row(s, targets, _clean_qps(s, qtype), True, qtype) for qtype in present for s in scales]
    return AcrossSection(
        targets=targets,
        load=load_rows,
        footprint=footprint_rows,
        queries=query_rows,
        chart=_load_chart(scales, targets, load_rows),
    )
