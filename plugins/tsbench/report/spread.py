"""Repeatability of a figure measured several times (load trials, hot query passes): min, median,
max and the coefficient of variation, flagged above ``CV_LIMIT``."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tsbench.results.model import Number

CV_LIMIT = 0.05  # a figure whose repeats vary more than this is flagged in the report


@dataclass(frozen=True)
class Spread:
    """``values`` in the order measured; ``cv`` = sample standard deviation ÷ mean (None with
    fewer than two values or a zero mean)."""

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def max(self) -> float:
        return max(self.values)

    @property
    def cv(self) -> float | None:
        if self.n < 2:
            return None
        mean = statistics.fmean(self.values)
        return statistics.stdev(self.values) / mean if mean else None

    @property
    def flagged(self) -> bool:
        """Whether the repeats vary more than ``CV_LIMIT``."""
        return self.cv is not None and self.cv > CV_LIMIT


def spread(values: Sequence[Number | None]) -> Spread | None:
    """The spread of the values present; None when fewer than two were measured."""
    present = tuple(float(v) for v in values if v is not None)
    return Spread(present) if len(present) >= 2 else None
