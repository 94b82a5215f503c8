"""Change points in a nightly history (``tsbench.changes.detect``, on Apache Otava)."""

from __future__ import annotations

import numpy as np
import pytest

from tsbench.changes.detect import Change, find_changes, is_news


def _noisy(levels: list[float], seed: int = 3) -> list[float]:
    rng = np.random.default_rng(seed)
    return [level * (1 + 0.05 * rng.standard_normal()) for level in levels]


def test_a_shift_is_found_at_its_night_with_its_size_and_an_interval_holding_it() -> None:
    values = _noisy([1000.0] * 30 + [1300.0] * 30)
    (change,) = find_changes(values)
    assert change.index == 30 and change.runs_before == 30 and change.runs_after == 30
    assert change.relative == pytest.approx(0.30, abs=0.04)
    assert change.low is not None and change.high is not None
    assert change.low < 0.30 < change.high and change.high - change.low < 0.1
    assert change.pvalue is not None and change.pvalue < 1e-10


def test_two_shifts_are_described_by_their_own_segments() -> None:
    values = _noisy([1000.0] * 20 + [1100.0] * 20 + [1430.0] * 20, seed=5)
    changes = find_changes(values)
    assert [c.index for c in changes] == [20, 40]
    assert changes[0].runs_after == 20 and changes[1].runs_before == 20  # segments end at the next change
    assert changes[1].relative == pytest.approx(0.30, abs=0.05)


def test_noise_alone_is_no_change() -> None:
    assert find_changes(_noisy([1000.0] * 60, seed=11)) == []


def test_short_constant_or_nonpositive_series_are_handled() -> None:
    assert find_changes([1.0, 2.0, 3.0]) == []  # too few runs to look
    assert find_changes([5.0] * 20) == []  # constant
    values = [0.0] * 10 + [100.0] * 10  # a value ≤ 0: a change without an interval
    (change,) = find_changes(values)
    assert change.index == 10 and change.low is None and change.high is None


def test_a_change_moves_to_a_boundary_where_something_recorded_changed_nearby() -> None:
    """E-Divisive places a change a run or two off: a cut where nothing recorded changed moves to
    the nearest boundary within two runs where something did; farther, it stays."""
    values = [100.0] * 10 + [130.0] * 10
    assert [c.index for c in find_changes(values)] == [10]
    assert [c.index for c in find_changes(values, lambda i: i == 11)] == [11]
    assert [c.index for c in find_changes(values, lambda i: i in (8, 12))] == [8]  # earlier on a tie
    assert [c.index for c in find_changes(values, lambda i: i == 13)] == [10]  # three runs away


def test_a_change_whose_interval_reaches_a_trivial_size_is_not_news() -> None:
    """At least 5 %, and its interval must exclude changes under 2.5 % either way."""
    sure = Change(10, 100, 150, 10, 10, 0.5, 0.3, 0.7, 0.001)
    vague = Change(10, 100, 149, 3, 7, 0.49, 0.013, 1.217, 0.04)  # a noisy millisecond median's
    small = Change(10, 100, 104, 10, 10, 0.04, 0.03, 0.05, 0.001)
    short = Change(10, 100, 150, 2, 10, 0.5, None, None, 0.01)  # no interval: the size decides
    assert is_news(sure) and is_news(short)
    assert not is_news(vague) and not is_news(small)


def test_a_first_night_out_of_line_is_an_outlier_not_a_change() -> None:
    """Only the history's first run stands for the level before: no change (a later one still is)."""
    values = [1500.0] + [1000.0 * (1 + 0.01 * (i % 3)) for i in range(15)]
    assert find_changes(values) == []


def test_intervals_for_many_series_together_are_wider() -> None:
    """The same step, searched alone and as one of 96 series (Bonferroni): the same change with a
    wider interval (seed 7), and one whose interval then reaches a change too small to be news is
    dropped (seed 2)."""

    def stepped(seed: int) -> list[float]:
        noise = 1 + 0.03 * np.random.default_rng(seed).standard_normal(16)
        return list(1000 * np.r_[np.ones(10), 1.08 * np.ones(6)] * noise)

    alone, together = find_changes(stepped(7)), find_changes(stepped(7), family=96)
    assert [c.index for c in alone] == [c.index for c in together] == [10]
    assert together[0].low < alone[0].low and together[0].high > alone[0].high
    assert find_changes(stepped(2)) and not find_changes(stepped(2), family=96)
