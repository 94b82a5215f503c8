"""The executive summary: the winner of each metric (with runner-up and last) and headline sentences.
A lead within noise (``tsbench.verdicts.noise``: trials or hot passes overlap, or a single figure
within its tolerance) is a tie, never a win."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tsbench.report import fmt
from tsbench.report.sections.caveats import caveats
from tsbench.report.sections.common import Caveat, join, lead_over, ranked, ratio
from tsbench.report.sections.footprint import FootprintSection
from tsbench.report.sections.load import LoadSection
from tsbench.report.sections.queries import QueriesSection
from tsbench.report.sections.status import TargetView
from tsbench.results.model import RunResult
from tsbench.verdicts.noise import FOOTPRINT_TOLERANCE, RATE_TOLERANCE, Gap, Lead

FOOTPRINT_KINDS = (
    ("db", "Footprint, DB's own accounting", "by its own accounting"),
    ("disk", "Footprint, disk bytes", "on disk"),
)


@dataclass(frozen=True)
class Placing:
    """A target's place in one metric: its label, the figure as text (with its unit), its colour
    (the best) or its ratio to the best (runner-up, last; > 1), and whether that gap is within
    noise (``tied``, with the rule that said so: ``tsbench.verdicts.noise``)."""

    label: str
    value: str
    colour: str = ""
    ratio: float | None = None
    tied: bool = False
    rule: str = ""


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


@dataclass(frozen=True)
class Ranking:
    """One metric's clean figures best first, each target's repeats (trials, hot passes; one
    figure where measured once), the direction and the noise rule's tolerance for single figures."""

    order: list[tuple[str, float]]
    repeats: Mapping[str, Sequence[float]]
    higher: bool
    tolerance: float

    def gap(self, index: int) -> Gap:
        """The best against the figure at ``index`` (noise rule)."""
        return lead_over(self.repeats, self.order[0][0], self.order[index][0], self.higher, self.tolerance)


def _rows_per_s(value: float) -> str:
    return fmt.rate(value) + " rows/s"


def _qps(value: float) -> str:
    return fmt.rate(value) + " qps"


def _winner(
    targets: Mapping[str, TargetView],
    metric: str,
    anchor: str,
    ranking: Ranking,
    show: Callable[[float], str],
) -> Winner:
    """One metric's row: the best, the runner-up and the last with their ratio to the best, and
    whether each is within noise of the best."""
    verb = "faster than" if ranking.higher else "smaller than"
    order = ranking.order
    if not order:
        return Winner(metric, anchor, verb)
    name, value = order[0]

    def placing(index: int) -> Placing:
        other, other_value = order[index]
        gap = ranking.gap(index)
        return Placing(
            targets[other].label,
            show(other_value),
            ratio=ratio(value, other_value, ranking.higher),
            tied=gap.lead is not Lead.FIRST,
            rule=gap.rule,
        )

    return Winner(
        metric,
        anchor,
        verb,
        best=Placing(targets[name].label, show(value), colour=targets[name].colour),
        runner_up=placing(1) if len(order) > 1 else None,
        last=placing(-1) if len(order) > 2 else None,
    )


def _load_headline(labels: Mapping[str, str], ranking: Ranking) -> list[str]:
    order = ranking.order
    if len(order) > 1:
        (best, best_v), (other, other_v) = order[0], order[1]
        times = best_v / other_v
        figures = f"({fmt.rate(best_v)} vs {fmt.rate(other_v)} rows/s)"
        gap = ranking.gap(1)
        if gap.lead is Lead.FIRST:
            text = f"{labels[best]} loads {fmt.times(times)} faster than {labels[other]} {figures}"
        else:
            text = (
                f"{labels[best]} and {labels[other]} load at the same rate within noise {figures}: {gap.rule}"
            )
        if len(order) > 2:
            last, last_v = order[-1]
            text += f"; {fmt.times(best_v / last_v)} faster than {labels[last]}, the slowest"
            if ranking.gap(-1).lead is not Lead.FIRST:
                text += " (within noise)"
        return [text + "."]
    if order:
        return [f"Only {labels[order[0][0]]} completed its load ({fmt.rate(order[0][1])} rows/s)."]
    return []


def _wins_headline(labels: Mapping[str, str], queries: QueriesSection) -> list[str]:
    wins = queries.wins
    if not wins and not queries.ties:
        return []
    order = sorted(wins.items(), key=lambda item: -item[1])
    parts = [f"{labels[name]} in {count}" for name, count in order]
    if queries.ties:
        parts.append(f"none beyond noise in {queries.ties} (the best and the runner-up tie)")
    total = sum(wins.values()) + queries.ties
    return [
        f"Fastest hot queries: of {total} query type(s) with a clean answer from at least one target, "
        f"{join(parts)}."
    ]


def _footprint_headline(labels: Mapping[str, str], ranking: Ranking, what: str) -> list[str]:
    order = ranking.order
    if len(order) < 2:
        return []
    (best, best_v), (other, other_v) = order[0], order[1]
    times = other_v / best_v
    gap = ranking.gap(1)
    if gap.lead is not Lead.FIRST:
        return [
            f"{labels[best]} and {labels[other]} store the data in the same space {what} within noise "
            f"({fmt.size(best_v)} and {fmt.size(other_v)}: {gap.rule})."
        ]
    return [
        f"{labels[best]} stores the data in the least space {what}: {fmt.size(best_v)}; "
        f"{labels[other]} needs {fmt.times(times)} as much ({fmt.size(other_v)})."
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
    load_ranking = Ranking(
        ranked({r.target.name: r.rows_per_s for r in load.rows}, True),
        {r.target.name: r.repeats() for r in load.rows},
        True,
        RATE_TOLERANCE,
    )
    winners = [_winner(views, "Load", f"{prefix}load", load_ranking, _rows_per_s)]
    headlines = _load_headline(labels, load_ranking)
    for row in queries.rows:
        ranking = Ranking(row.ranked, row.repeats(), True, RATE_TOLERANCE)
        winners.append(_winner(views, f"{row.type} (hot)", row.anchor, ranking, _qps))
    headlines += _wins_headline(labels, queries)
    for key, metric, what in FOOTPRINT_KINDS:
        stored = {r.target.name: r.stored(key) for r in footprint.rows}
        single = {name: (float(v),) for name, v in stored.items() if v}
        ranking = Ranking(ranked(stored, False), single, False, FOOTPRINT_TOLERANCE)
        winners.append(_winner(views, metric, f"{prefix}footprint", ranking, fmt.size))
        headlines += _footprint_headline(labels, ranking, what)
    return SummarySection(
        winners=winners,
        has_last=any(w.last for w in winners),
        headlines=headlines,
        caveats=caveats(result, targets, load, queries),
    )
