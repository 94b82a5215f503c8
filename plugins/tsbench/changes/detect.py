"""Change points of one series (one value per run, oldest first): Apache Otava's E-Divisive means
(``otava.analysis.compute_change_points``) places them; each is then described from the final
segmentation by our own statistics, because Otava 0.8.0's merge step can leave a change point with
the statistics of a segmentation it later changed.

A change of the mean smaller than ``MIN_RELATIVE``, or whose interval reaches a change of
``MIN_INTERVAL`` (half that) or less, is dropped (the least first, its neighbours then described as
one segment): a figure as steady as a footprint shows a 0.3 % step as significant, which is real
but no news, and a noisy one (a median of a few milliseconds) shows a 49 % step whose interval
reaches down to +1 %.

E-Divisive places a change a run or two off where it happened. A change between two runs that
differ in nothing that was set differently is moved to the nearest run boundary within ``SNAP_RUNS``
where something was (``explained``: a version, a setting, a parameter, tsbench's commit; not the
machine's measured state, which differs a little between any two runs), when there is one between its
neighbours: the cause named is then the one that lies within the placement's uncertainty.

For each change at run ``index`` (the first run of the new level): the mean of the segment before
(from the previous change) and after (to the next), their relative change, Welch's t-test p-value,
and a ``LEVEL`` interval of the relative change (for a night's series together: each at the
Bonferroni-corrected ``family_level``) (Welch's t on the logarithms of the values, mapped
back: the change is a ratio). A segment of fewer than ``MIN_SEGMENT`` runs, or a value ≤ 0, gives
no interval.

Settings (``WINDOW``, ``MAX_PVALUE``) were chosen by ``bench/change_detection.py``: at 5 % noise a
10 % shift is found within ±5 runs in about 98 % of 60-run histories and about 0.05 false alarms per
history.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from otava.analysis import compute_change_points
from scipy import stats

WINDOW = 60  # runs per E-Divisive window (a longer history is searched in overlapping windows)
MAX_PVALUE = 0.001  # Otava's significance threshold for keeping a change point
MIN_RUNS = 6  # fewer runs: no change is looked for
MIN_SEGMENT = 3  # runs a segment needs for an interval
MIN_RELATIVE = (
    0.05  # a smaller change of the mean is not reported (a footprint 0.3 % larger is real, not news)
)
LEVEL = 0.95
MIN_INTERVAL = 0.025  # ... and its interval must not reach a change this small (half of MIN_RELATIVE)
SNAP_RUNS = 2  # how far a change is moved to a run boundary where something recorded changed


@dataclass(frozen=True)
class Change:
    """A change at run ``index`` (the first run of the new level) of a series: the segments' means
    and sizes, the relative change of the mean (after ÷ before − 1), its interval (None: a segment
    too short or a value ≤ 0) and Welch's p-value (None: a segment of one run)."""

    index: int
    mean_before: float
    mean_after: float
    runs_before: int
    runs_after: int
    relative: float
    low: float | None
    high: float | None
    pvalue: float | None


def find_changes(
    values: Sequence[float], explained: Callable[[int], bool] | None = None, family: int = 1
) -> list[Change]:
    """The change points of ``values`` (oldest first), each described from its neighbouring
    segments; none in fewer than ``MIN_RUNS`` values or a constant series. ``explained(i)``: whether
    something recorded changed between value ``i - 1`` and value ``i`` (default: nothing did).
    ``family``: how many series are searched together (the intervals' level is corrected for it)."""
    level = family_level(family)
    series = [float(v) for v in values]
    if len(series) < MIN_RUNS or max(series) == min(series):
        return []
    found, _ = compute_change_points(series, window_len=WINDOW, max_pvalue=MAX_PVALUE)
    cuts = _refined(series, sorted({int(change.index) for change in found} - {0, len(series)}))
    if explained is not None:
        cuts = _snapped(cuts, len(series), explained)
    while True:
        changes = _each_described(series, cuts, level)
        small = [c for c in changes if not is_news(c)]
        if not small:
            return changes
        cuts.remove(min(small, key=lambda c: abs(c.relative)).index)  # then its neighbours merge


def family_level(family: int) -> float:
    """``LEVEL`` for each of ``family`` intervals, so that all of them hold together with ``LEVEL``
    (Bonferroni): a night's report searches dozens of series, and at 95 % each, a few would show a
    change that is only noise."""
    return 1 - (1 - LEVEL) / max(family, 1)


def is_news(change: Change) -> bool:
    """At least ``MIN_RELATIVE``, and so is its whole interval where it has one; not a level the
    history's first runs alone stand for (fewer than ``MIN_SEGMENT`` runs before it: a first night
    out of line is an outlier, not a change)."""
    if abs(change.relative) < MIN_RELATIVE or change.index < MIN_SEGMENT:
        return False
    if change.low is None or change.high is None:
        return True
    return change.low > MIN_INTERVAL or change.high < -MIN_INTERVAL


def _snapped(cuts: list[int], length: int, explained: Callable[[int], bool]) -> list[int]:
    """Each cut at a boundary where nothing recorded changed moved to the nearest one within
    ``SNAP_RUNS`` where something did, strictly between its neighbours (earlier first on a tie)."""
    moved = list(cuts)
    for i, cut in enumerate(moved):
        if explained(cut):
            continue
        low = moved[i - 1] if i else 0
        high = moved[i + 1] if i + 1 < len(moved) else length
        for offset in (d for step in range(1, SNAP_RUNS + 1) for d in (-step, step)):
            if low < cut + offset < high and explained(cut + offset):
                moved[i] = cut + offset
                break
    return moved


def _each_described(series: list[float], cuts: list[int], level: float = LEVEL) -> list[Change]:
    bounds = [0, *cuts, len(series)]
    return [
        _described(series[bounds[i - 1] : cut], series[cut : bounds[i + 1]], cut, level)
        for i, cut in enumerate(cuts, 1)
    ]


def _refined(series: list[float], cuts: list[int]) -> list[int]:
    """Each cut moved, between its neighbours, to where the two segments' squared deviations from
    their means are least (E-Divisive places a cut by distributions, a run or a few off a step in
    the mean); in order, each with the cuts before it already moved."""
    values = np.asarray(series)
    moved = list(cuts)
    for i in range(len(moved)):
        start = moved[i - 1] if i else 0
        end = moved[i + 1] if i + 1 < len(moved) else len(values)
        if end - start < 2:
            continue
        candidates = range(start + 1, end)
        moved[i] = min(candidates, key=lambda cut: _spread(values[start:cut]) + _spread(values[cut:end]))
    return sorted(set(moved))


def _spread(segment: np.ndarray) -> float:
    return float(((segment - segment.mean()) ** 2).sum())


def _described(before: list[float], after: list[float], index: int, level: float = LEVEL) -> Change:
    mean_before, mean_after = float(np.mean(before)), float(np.mean(after))
    relative = mean_after / mean_before - 1 if mean_before else math.inf
    low, high = _interval(before, after, level)
    pvalue = None
    if len(before) > 1 and len(after) > 1:
        if np.var(before) == 0 and np.var(after) == 0:  # two constant levels: certain if they differ
            pvalue = 0.0 if mean_before != mean_after else 1.0
        else:
            pvalue = float(stats.ttest_ind(after, before, equal_var=False).pvalue)
    return Change(index, mean_before, mean_after, len(before), len(after), relative, low, high, pvalue)


def _interval(
    before: list[float], after: list[float], level: float = LEVEL
) -> tuple[float | None, float | None]:
    """Welch's t interval (at ``level``) of the difference of the mean logarithms, as a relative change."""
    if min(len(before), len(after)) < MIN_SEGMENT or min(*before, *after) <= 0:
        return None, None
    x, y = np.log(before), np.log(after)
    var_x, var_y = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    spread = math.sqrt(var_x + var_y)
    if spread == 0:
        ratio = math.expm1(float(y.mean() - x.mean()))
        return ratio, ratio
    dof = (var_x + var_y) ** 2 / (var_x**2 / (len(x) - 1) + var_y**2 / (len(y) - 1))
    margin = float(stats.t.ppf(0.5 + level / 2, dof)) * spread
    difference = float(y.mean() - x.mean())
    return math.expm1(difference - margin), math.expm1(difference + margin)
