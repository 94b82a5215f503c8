"""The executive summary: the winner of each metric (with runner-up and last) and headline sentences."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tsbench.report import fmt
from tsbench.report.sections.caveats import caveats
from tsbench.report.sections.common import Caveat, join, noise, ranked, ratio
from tsbench.report.sections.footprint import FootprintSection
from tsbench.report.sections.load import LoadSection
from tsbench.report.sections.queries import QueriesSection
from tsbench.report.sections.status import TargetView
from tsbench.results.model import RunResult

FOOTPRINT_KINDS = (
    ("db", "Footprint, DB's own accounting", "by its own accounting"),
    ("disk", "Footprint, disk bytes", "on disk"),
)


@dataclass(frozen=True)
class Placing:
    """A target's place in one metric: its label, the figure as text (with its unit), its colour
    (the best) or its ratio to the best (runner-up, last; > 1)."""

    label: str
    value: str
    colour: str = ""
    ratio: float | None = None


@dataclass(frozen=True)
class Winner:
    """One metric's row of the summary: the best, the runner-up and the last (None: no such)."""

    metric: str
    anchor: str
    verb: str
    best: Placing | None = None
    runner_up: Placing | None = None
    last: Placing | None = None


@dataclass(frozen=True)
class SummarySection:
    """Winners per metric (``has_last``: some metric has a last place), headlines, caveats."""

    winners: list[Winner]
    has_last: bool
    headlines: list[str]
    caveats: list[Caveat]


def _rows_per_s(value: float) -> str:
    return fmt.rate(value) + " rows/s"


def _qps(value: float) -> str:
    return fmt.rate(value) + " qps"


def _winner(
    targets: Mapping[str, TargetView],
    metric: str,
    anchor: str,
    order: list[tuple[str, float]],
    show: Callable[[float], str],
    higher: bool,
) -> Winner:
    """One metric's row: the best, the runner-up and the last with their ratio to the best."""
    verb = "faster than" if higher else "smaller than"
    if not order:
        return Winner(metric, anchor, verb)
    name, value = order[0]

    def placing(index: int) -> Placing:
        other, other_value = order[index]
        return Placing(targets[other].label, show(other_value), ratio=ratio(value, other_value, higher))

    return Winner(
        metric,
        anchor,
        verb,
        best=Placing(targets[name].label, show(value), colour=targets[name].colour),
        runner_up=placing(1) if len(order) > 1 else None,
        last=placing(-1) if len(order) > 2 else None,
    )


def _load_headline(labels: Mapping[str, str], order: list[tuple[str, float]]) -> list[str]:
    if len(order) > 1:
        (best, best_v), (other, other_v) = order[0], order[1]
        times = best_v / other_v
        text = f"{labels[best]} loads {fmt.times(times)} faster than {labels[other]}"
        text += f" ({fmt.rate(best_v)} vs {fmt.rate(other_v)} rows/s){noise(times)}"
        if len(order) > 2:
            last, last_v = order[-1]
            text += f"; {fmt.times(best_v / last_v)} faster than {labels[last]}, the slowest"
        return [text + "."]
    if order:
        return [f"Only {labels[order[0][0]]} completed its load ({fmt.rate(order[0][1])} rows/s)."]
    return []


def _wins_headline(labels: Mapping[str, str], wins: Mapping[str, int]) -> list[str]:
    if not wins:
        return []
    order = sorted(wins.items(), key=lambda item: -item[1])
    parts = [f"{labels[name]} in {count}" for name, count in order]
    return [
        f"Fastest hot queries: of {sum(wins.values())} query type(s) with a clean answer from at least one "
        f"target, {join(parts)}."
    ]


def _footprint_headline(labels: Mapping[str, str], order: list[tuple[str, float]], what: str) -> list[str]:
    if len(order) < 2:
        return []
    (best, best_v), (other, other_v) = order[0], order[1]
    times = other_v / best_v
    return [
        f"{labels[best]} stores the data in the least space {what}: {fmt.size(best_v)}; "
        f"{labels[other]} needs {fmt.times(times)} as much ({fmt.size(other_v)}){noise(times)}."
    ]


def summary_section(
    prefix: str,
    result: RunResult,
    targets: Sequence[TargetView],
    load: LoadSection,
    queries: QueriesSection,
    footprint: FootprintSection,
) -> SummarySection:
    """Winners per metric (load, each query type hot, footprint), headlines and the caveats."""
    views = {t.name: t for t in targets}
    labels = {t.name: t.label for t in targets}
    load_order = ranked({r.target.name: r.rows_per_s for r in load.rows}, True)
    winners = [_winner(views, "Load", f"{prefix}load", load_order, _rows_per_s, True)]
    headlines = _load_headline(labels, load_order)
    for row in queries.rows:
        winners.append(_winner(views, f"{row.type} (hot)", row.anchor, row.ranked, _qps, True))
    headlines += _wins_headline(labels, queries.wins)
    for key, metric, what in FOOTPRINT_KINDS:
        order = ranked({r.target.name: r.stored(key) for r in footprint.rows}, False)
        winners.append(_winner(views, metric, f"{prefix}footprint", order, fmt.size, False))
        headlines += _footprint_headline(labels, order, what)
    return SummarySection(
        winners=winners,
        has_last=any(w.last for w in winners),
        headlines=headlines,
        caveats=caveats(result, targets, load, queries),
    )
