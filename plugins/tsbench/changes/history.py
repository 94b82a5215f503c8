"""Change points in a run's history: every series (``tsbench.changes.series``) searched with
``find_changes``, each change described as a ``ChangeRecord`` (``changes.json``): the runs on either
side, the levels, the relative change with its interval, and what differed between those two runs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import otava

from tsbench.changes.detect import (
    MAX_PVALUE,
    MIN_INTERVAL,
    MIN_RELATIVE,
    SNAP_RUNS,
    WINDOW,
    Change,
    find_changes,
)
from tsbench.changes.series import HistoryRun, Series, build_series
from tsbench.results.change_records import ChangeRecord, ChangeReport
from tsbench.results.documents import StoredResult
from tsbench.results.folder import RunFolder
from tsbench.results.model import Comparison
from tsbench.results.store import RunStore, earlier_results, same_use_case_and_scale

log = logging.getLogger("tsbench.changes")
FORMAT = "tsbench-changes/1"
HISTORY_RUNS = 120  # earlier runs searched (each a night: four months)


def detector_text() -> str:
    """The detector and its settings, as the report and changes.json name it."""
    version = getattr(otava, "__version__", "") or _distribution_version()
    return (
        f"Apache Otava {version} E-Divisive means (window {WINDOW} runs, p ≤ {MAX_PVALUE}); "
        "each change moved to the least-squares step between its neighbours, then to a run boundary "
        f"within {SNAP_RUNS} runs where something was set differently; kept when ≥ {MIN_RELATIVE:.0%} "
        f"with its interval beyond ±{MIN_INTERVAL:.1%} (Welch's t on the logarithms, at 95 % for all "
        "the series searched together: Bonferroni) and not stood for by the history's first runs alone"
    )


def _distribution_version() -> str:
    from importlib.metadata import version

    return version("apache-otava")


def history_runs(comparison: Comparison, history: Iterable[StoredResult]) -> list[HistoryRun]:
    """This comparison's points and the stored history as ``HistoryRun``s (same origin rule for
    both: the study's name, "" for ad-hoc runs)."""
    origin = comparison.study or ""
    runs = [HistoryRun(comparison.run_id, result, origin) for result in comparison.results.values()]
    for stored in history:
        if stored.run_id != comparison.run_id:
            runs.append(HistoryRun(stored.run_id, stored.result, stored.study or ""))
    return runs


def detect_changes(comparison: Comparison, history: Sequence[StoredResult]) -> ChangeReport:
    """Every change point in the series this comparison's targets are on (series of other
    targets or other use cases are not searched), newest first."""
    runs = history_runs(comparison, history)
    mine = {
        (str(result.spec.get("use_case") or ""), target)
        for result in comparison.results.values()
        for target in result.targets
    }
    series = [s for s in build_series(runs) if (s.key.use_case, s.key.target) in mine]
    changes = [record for s in series for record in _records(s, len(series))]
    changes.sort(key=lambda c: (c.after.created_at, c.target, c.metric), reverse=True)
    for change in changes:
        log.info("change: %s", change.summary())
    return ChangeReport(
        format=FORMAT,
        run_id=comparison.run_id,
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
        runs=len({r.run_id for r in runs}),
        series=len(series),
        detector=detector_text(),
        changes=changes,
    )


def detect_folder_changes(folder: Path, store: RunStore) -> ChangeReport:
    """``changes.json`` of a collected comparison folder: its series searched over the earlier
    results in ``store`` of the same use case and scale (any targets, at most ``HISTORY_RUNS``
    per scale; results whose validation failed left out)."""
    comparison = RunFolder(folder).read_comparison()
    history = earlier_results(store, comparison, same_use_case_and_scale, HISTORY_RUNS)
    report = detect_changes(comparison, history)
    RunFolder(folder).write_changes(report)
    log.info(
        "change detection: %d change(s) in %d series over %d run(s)",
        len(report.changes),
        report.series,
        report.runs,
    )
    return report


def _records(series: Series, family: int = 1) -> list[ChangeRecord]:
    """``series``' changes, its intervals corrected for the ``family`` of series searched with it."""
    values = series.values

    def explained(index: int) -> bool:
        """Something was set differently (the machine's measured state, which moves a little
        between any two runs, draws no change to its boundary)."""
        return bool(values[index - 1].facts.declared_differences(values[index].facts))

    found = find_changes([v.value for v in values], explained, family)
    return [change_record(series, change) for change in found]


def change_record(series: Series, change: Change) -> ChangeRecord:
    """``change`` (found on ``series``' values, so its ``index`` is one of them) as a ``ChangeRecord``:
    the runs on either side, the levels, the interval and what differed between those two runs."""
    key, values = series.key, series.values
    before, after = values[change.index - 1], values[change.index]
    return ChangeRecord(
        target=key.target,
        metric=key.metric.name,
        unit=key.metric.unit,
        better=key.metric.better,
        use_case=key.use_case,
        scale=key.scale,
        point=key.point,
        before=before.run,
        after=after.run,
        runs_before=change.runs_before,
        runs_after=change.runs_after,
        mean_before=change.mean_before,
        mean_after=change.mean_after,
        relative=change.relative,
        low=change.low,
        high=change.high,
        pvalue=change.pvalue,
        verdict=key.metric.verdict(change.relative),
        differences=before.facts.differences(after.facts),
    )
