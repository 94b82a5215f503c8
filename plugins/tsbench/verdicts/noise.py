"""The noise rule: when one side's figure beats the other's beyond run-to-run noise.

A figure is measured several times where it can be (load trials, hot query passes); footprints and
the cold pass are measured once. Two sides compare by one rule, used by the claims' verdicts and by
the report's rankings alike:

- **with at least ``MIN_REPEATS`` repeats on each side**: one side is ahead beyond noise only when
  *every* repeat of it beats *every* repeat of the other (complete separation). At 3 against 3 this
  is the most extreme outcome of the exact Mann–Whitney test: under pure noise it happens by chance
  with probability 2/20 = 10 % (1 in 20 each way); at 5 against 5, 2/252 < 1 %. Overlapping repeats
  are a tie, whatever the medians say.
- **with fewer repeats on either side** (a single footprint, one cold pass, a run of 1 trial): the
  gap between the medians must exceed the metric's tolerance (``tolerance``: 10 % for rates and
  latencies, the run-to-run spread the report has always flagged; 5 % for footprints, whose repeats
  on this machine differ by ≤ 1 %). Anything closer is a tie.

The ratio is always "how many times better the first side is" (> 1: the first is better), of the
medians; its range runs over every pair of repeats.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

MIN_REPEATS = 3
RATE_TOLERANCE = 0.10
FOOTPRINT_TOLERANCE = 0.05


class Lead(StrEnum):
    """Which side is ahead beyond noise."""

    FIRST = "first"
    SECOND = "second"
    TIE = "tie"


@dataclass(frozen=True)
class Gap:
    """How ``first`` compares with ``second``: who leads (``Lead``), the ratio of the medians
    oriented so that > 1 means the first is better, its range over every pair of repeats, and the
    rule that decided (for people)."""

    lead: Lead
    ratio: float
    low: float
    high: float
    rule: str

    def shown(self) -> str:
        """``2.03× (1.96–2.10×)``; a single pair shows no range."""
        if self.low == self.high:
            return f"{self.ratio:.2f}×"
        return f"{self.ratio:.2f}× ({self.low:.2f}–{self.high:.2f}×)"


def oriented(first: float, second: float, higher_is_better: bool) -> float:
    """How many times better ``first`` is than ``second`` (> 1: better); inf against a zero."""
    top, bottom = (first, second) if higher_is_better else (second, first)
    return top / bottom if bottom else float("inf")


def compare(
    first: Sequence[float], second: Sequence[float], higher_is_better: bool, tolerance: float = RATE_TOLERANCE
) -> Gap:
    """The noise rule (module docstring) on two sides' repeats (each at least one value)."""
    if not first or not second:
        raise ValueError("compare needs at least one value on each side")
    ratio = oriented(statistics.median(first), statistics.median(second), higher_is_better)
    pairs = [oriented(a, b, higher_is_better) for a in first for b in second]
    low, high = min(pairs), max(pairs)
    counts = f"{len(first)} and {len(second)} repeats"
    if min(len(first), len(second)) >= MIN_REPEATS:
        if low > 1:
            return Gap(
                Lead.FIRST,
                ratio,
                low,
                high,
                f"{counts}: every one of the first beats every one of the second",
            )
        if high < 1:
            return Gap(
                Lead.SECOND,
                ratio,
                low,
                high,
                f"{counts}: every one of the second beats every one of the first",
            )
        return Gap(Lead.TIE, ratio, low, high, f"{counts}: the repeats overlap")
    within = f"fewer than {MIN_REPEATS} repeats ({counts}): a gap of medians within {tolerance:.0%} is a tie"
    lead = Lead.FIRST if ratio > 1 + tolerance else Lead.SECOND if ratio < 1 / (1 + tolerance) else Lead.TIE
    return Gap(lead, ratio, low, high, within if lead is Lead.TIE else f"{within}; this one is wider")
