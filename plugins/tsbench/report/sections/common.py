"""Helpers shared by the report's sections: thresholds, ranking, sentence joining, query types."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tsbench.verdicts.noise import Gap, Lead, compare
from tsbench.workload.answers import answer_columns
from tsbench.workload.query_types import QUERY_TYPES

if TYPE_CHECKING:
    from tsbench.report.sections.target_view import TargetView

# The query types the published studies headline (A: high-cpu-*, lastpoint, single-groupby-1-1-1,
# double-groupby; C: double-groupby-5, cpu-max-all-8, lastpoint, groupby-orderby-limit).
HEADLINE_TYPES = (
    "high-cpu-all",
    "lastpoint",
    "single-groupby-1-1-1",
    "double-groupby-5",
    "cpu-max-all-8",
    "groupby-orderby-limit",
    "high-cpu-1",
    "double-groupby-all",
)
TREND_CHART_TYPES = 4
SMALL_ROWS = 1_000_000
FEW_QUERIES = 10
FEW_SAMPLES = 5


@dataclass(frozen=True)
class Caveat:
    """One honest limit of a run: ``severity`` bad | warn | info, and the sentence."""

    severity: str
    text: str


@dataclass(frozen=True)
class TargetNote:
    """A target and why a section shows nothing of it."""

    target: TargetView
    reason: str


def describe(qtype: str) -> str:
    known = QUERY_TYPES.get(qtype)
    return known.describe if known is not None else ""


def query_answer_columns(qtype: str) -> list[str]:
    known = QUERY_TYPES.get(qtype)
    return answer_columns(known)[0] if known is not None else []


def ranked(values: Mapping[str, float | None], higher_is_better: bool) -> list[tuple[str, float]]:
    """Names with a positive value, best first."""
    present = [(name, value) for name, value in values.items() if value is not None and value > 0]
    return sorted(present, key=lambda item: -item[1] if higher_is_better else item[1])


def ratio(best: float, other: float, higher_is_better: bool) -> float:
    return best / other if higher_is_better else other / best


def leaders(
    values: Mapping[str, float | None],
    repeats: Mapping[str, Sequence[float]],
    higher_is_better: bool,
    tolerance: float,
) -> set[str]:
    """The best figure's name and every name within noise of it (``lead_over``): the report
    highlights them all, since a lead within noise is a tie. ``repeats`` by name (trials, hot
    passes); a name without them counts its one figure."""
    order = ranked(values, higher_is_better)
    if not order:
        return set()
    best = order[0][0]
    figures = {name: tuple(repeats.get(name) or ()) or (float(value),) for name, value in order}
    return {best} | {
        name
        for name, _ in order[1:]
        if lead_over(figures, best, name, higher_is_better, tolerance).lead is not Lead.FIRST
    }


def lead_over(
    repeats: Mapping[str, Sequence[float]], best: str, other: str, higher_is_better: bool, tolerance: float
) -> Gap:
    """``best`` against ``other`` by the noise rule (``tsbench.verdicts.noise``) on their repeats
    (trials, hot passes; one figure where measured once)."""
    return compare(repeats[best], repeats[other], higher_is_better, tolerance)


def join(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def query_type_order(types: Iterable[str]) -> list[str]:
    """Each type once: catalogue order first, then unknown types in the order seen."""
    catalogue = list(QUERY_TYPES)
    seen = list(dict.fromkeys(types))
    return sorted(
        seen, key=lambda t: (catalogue.index(t) if t in catalogue else len(catalogue), seen.index(t))
    )


def colours(targets: Sequence[TargetView]) -> dict[str, str]:
    """Chart colour per target label."""
    return {t.label: t.colour for t in targets}
