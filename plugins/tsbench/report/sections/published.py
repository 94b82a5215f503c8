"""The "Published vs measured" section of a study's report (``tsbench.claims``): each claim of the
study with its verdict in this run, and the study's figures beside ours. Absolute figures are
never compared as equal across machines: the figure table shows both, with units, and no verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.claims import ClaimVerdict, FigureBeside, StudyCheck, Verdict, check_study, conditions
from tsbench.published import Metric, Published
from tsbench.report import fmt
from tsbench.results.model import Number, RunResult

VERDICT_PILL = {
    Verdict.HOLDS: "pass",
    Verdict.REVERSED: "fail",
    Verdict.DOES_NOT_HOLD: "fail",
    Verdict.MIXED: "warning",
    Verdict.NOT_COMPARABLE: "skipped",
}


def _shown(metric: Metric, value: Number) -> str:
    """A measured value in tsbench's unit for ``metric``."""
    if metric.value.startswith("footprint_"):
        return fmt.size(value)
    if metric is Metric.LOAD_SECONDS:
        return f"{fmt.seconds(value)} s"
    if metric.value.endswith("_ms_hot") or metric.value.endswith("_ms_cold"):
        return f"{fmt.ms(value)} ms"
    unit = {Metric.QUERY_QPS: "queries/s", Metric.LOAD_METRICS_PER_S: "metrics/s"}.get(metric, "rows/s")
    return f"{fmt.rate(value)} {unit}"


@dataclass(frozen=True)
class ClaimRow:
    """One claim: its quote, what it compares, the verdict (and its pill), the figures it rests
    on, why it could not be checked or how points disagree, the conditions that differ."""

    text: str
    first: bool  # the first check of its quote (a quote with several comparisons has several)
    compares: str
    verdict: str
    pill: str
    measured: list[str]
    reason: str
    differences: list[str]


@dataclass(frozen=True)
class FigureRow:
    """A published figure (value and unit as published) and ours under its conditions."""

    target: str
    what: str
    published: str
    source: str
    measured: list[str]
    missing: str


@dataclass(frozen=True)
class PublishedSection:
    """The study's title and file, the published side's source and machine, verdict counts, the
    claims and the figures."""

    title: str
    study: str
    source: str
    machine: str  # the study's machine beside this run's
    counts: list[tuple[str, str, int]]  # verdict, its pill, how many claims
    claims: list[ClaimRow]
    figures: list[FigureRow]


def _what(metric: Metric, query_type: str | None, at: dict[str, Any]) -> str:
    where = conditions(at)
    name = metric.value.replace("_", " ") + (f" of {query_type}" if query_type else "")
    return f"{name} ({where})" if where else name


def _compares(item: ClaimVerdict) -> str:
    claim = item.claim
    what = _what(claim.metric, claim.query_type, claim.at)
    if claim.ranking:
        return f"{' > '.join(claim.ranking)} by {what}"
    if claim.similar:
        return f"{claim.similar[0]} ≈ {claim.similar[1]} by {what}"
    if claim.target:
        better, worse = conditions(claim.better_at), conditions(claim.worse_at)
        return f"{claim.target} better at {better} than at {worse} by {what}"
    return ""


def _claim_row(item: ClaimVerdict, first: bool) -> ClaimRow:
    return ClaimRow(
        text=item.claim.text,
        first=first,
        compares=_compares(item),
        verdict=item.verdict.value,
        pill=VERDICT_PILL[item.verdict],
        measured=item.measured,
        reason=item.reason,
        differences=item.differences,
    )


def _figure_row(item: FigureBeside) -> FigureRow:
    figure = item.figure
    conditions = f"; {figure.conditions}" if figure.conditions else ""
    return FigureRow(
        target=figure.target,
        what=_what(figure.metric, figure.query_type, figure.at),
        published=f"{figure.value:,.6g} {figure.unit}",
        source=figure.source + conditions,
        measured=[f"{point}: {_shown(figure.metric, value)}" for point, value in item.measured],
        missing=item.missing,
    )


def published_section(
    study: str, title: str, published: Published, runs: Sequence[RunResult]
) -> PublishedSection:
    """The section for ``study`` (its file's name and title) over this comparison's points."""
    checked: StudyCheck = check_study(published, runs)
    return PublishedSection(
        title=title,
        study=study,
        source=published.source,
        machine=checked.machine,
        counts=[(verdict.value, VERDICT_PILL[verdict], n) for verdict, n in checked.counts().items() if n],
        claims=[
            _claim_row(item, index == 0 or checked.verdicts[index - 1].claim.text != item.claim.text)
            for index, item in enumerate(checked.verdicts)
        ],
        figures=[_figure_row(item) for item in checked.figures],
    )
