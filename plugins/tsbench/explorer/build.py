"""The explorer's data from the published runs (``explorer_data``): every run's figures as series
(``tsbench.changes.series.build_series``), the change points of each series over the whole
history (``tsbench.changes.detect.find_changes``, described by ``tsbench.changes.history``).

A run whose validation failed stays on the series, marked by its verdict, but is left out of change
detection (as the run's own change detection leaves it out) and of the explorer's bars. The runs'
documents are read one at a time and only their figures are kept, so the time and memory it takes
grow linearly with the number of runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from tsbench.changes.detect import find_changes
from tsbench.changes.history import change_record, detector_text
from tsbench.changes.series import HistoryRun, Series, SeriesKey, build_series
from tsbench.explorer.data import FORMAT, ExplorerChange, ExplorerData, ExplorerRun, ExplorerSeries
from tsbench.results.change_records import ChangeRecord
from tsbench.results.documents import Document, results_of
from tsbench.results.index_line import IndexLine

DocumentReader = Callable[[IndexLine], Document | None]  # a run's document (None: not readable)
SIGNIFICANT = 6  # digits a value keeps in the data file


def explorer_data(lines: Sequence[IndexLine], read: DocumentReader) -> ExplorerData:
    """The explorer's data for the runs ``lines`` lists (index lines whose ``links`` are relative
    to explorer.html's folder), each run's results read with ``read``; runs it cannot read are left
    out. Runs oldest first (creation time, then id)."""
    runs: list[ExplorerRun] = []
    merged: dict[SeriesKey, Series] = {}
    for line in sorted(lines, key=lambda line: (line.created_at or "", line.run_id or "")):
        document = read(line) if line.run_id else None
        if document is None or not line.run_id:
            continue
        runs.append(_run(line))
        origin = line.study or ""
        for series in build_series(HistoryRun(line.run_id, r, origin) for r in results_of(document)):
            merged.setdefault(series.key, Series(series.key)).values.extend(series.values)
    position = {run.run_id: i for i, run in enumerate(runs)}
    valid = {run.run_id for run in runs if run.valid}
    return ExplorerData(
        format=FORMAT,
        detector=detector_text(),
        runs=runs,
        series=[_series(s, position, valid) for s in _ordered(merged.values())],
    )


def _run(line: IndexLine) -> ExplorerRun:
    links = line.links or {}
    return ExplorerRun(
        run_id=line.run_id or "",
        created_at=line.created_at or "",
        origin=line.study or "",
        verdict=line.verdict,
        report=links.get("report_html"),
    )


def _ordered(series: Iterable[Series]) -> list[Series]:
    """Stable order: origin, use case, scale, point, target, then the metrics as measured."""
    return sorted(
        series,
        key=lambda s: (s.key.origin, s.key.use_case, s.key.scale or 0, s.key.point, s.key.target),
    )


def _series(series: Series, position: dict[str, int], valid: set[str]) -> ExplorerSeries:
    """A series with its changes, found over the values of runs whose validation did not fail."""
    key = series.key
    counted = Series(key, [v for v in series.values if v.run.run_id in valid])
    changes = [change_record(counted, c) for c in find_changes([v.value for v in counted.values])]
    return ExplorerSeries(
        origin=key.origin,
        use_case=key.use_case,
        scale=key.scale,
        point=key.point,
        target=key.target,
        metric=key.metric.name,
        unit=key.metric.unit,
        better=key.metric.better,
        runs=[position[v.run.run_id] for v in series.values],
        values=[_rounded(v.value) for v in series.values],
        changes=[_change(c, position) for c in changes],
    )


def _change(change: ChangeRecord, position: dict[str, int]) -> ExplorerChange:
    return ExplorerChange(
        before=position[change.before.run_id],
        after=position[change.after.run_id],
        verdict=change.verdict,
        mean_before=_rounded(change.mean_before),
        mean_after=_rounded(change.mean_after),
        runs_before=change.runs_before,
        runs_after=change.runs_after,
        relative=change.relative,
        low=change.low,
        high=change.high,
        interval=change.interval_text(),
        pvalue=change.pvalue,
        differences=[d.text() for d in change.differences],
    )


def _rounded(value: float) -> float:
    return float(f"{value:.{SIGNIFICANT}g}")
