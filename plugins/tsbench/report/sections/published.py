"""The "Published vs measured" section of a study's report (``tsbench.verdicts.claims``): each claim
of the study with its one verdict in this run and its checks beneath it, and the study's figures
beside ours. Absolute figures are never compared as equal across machines: the figure table shows
both, with units, and no verdict."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.report import fmt
from tsbench.results.model import Number, RunResult
from tsbench.verdicts.checks import CheckVerdict, Verdict, compares, conditions
from tsbench.verdicts.claims import ClaimVerdict, FigureBeside, StudyCheck, check_study
from tsbench.verdicts.noise import FOOTPRINT_TOLERANCE, MIN_REPEATS, RATE_TOLERANCE
from tsbench.verdicts.published import Metric, Published

VERDICT_PILL = {
    Verdict.REPRODUCED: "pass",
    Verdict.DIRECTION_ONLY: "warning",
    Verdict.TIE: "neutral",
    Verdict.REVERSED: "fail",
    Verdict.NOT_COMPARABLE: "skipped",
}
RULES = (
    f"Beyond noise: with ≥ {MIN_REPEATS} repeats per side (load trials, hot passes), every repeat of one "
    f"side beats every repeat of the other; with fewer (a footprint, the cold pass), the medians differ by "
    f"more than {RATE_TOLERANCE:.0%} ({FOOTPRINT_TOLERANCE:.0%} for footprints). "
    "A check is reproduced when the claimed side leads beyond noise and the measured ratio lies within the "
    "claim's band of the published one (×/÷ 2 unless the claim says why not), direction only when it leads "
    "but the magnitude differs or none was published, a tie within noise, reversed when the other side "
    "leads beyond noise. Where the run does not meet a claim's condition (an edition feature, cores, data "
    "larger than memory, a scale) it cannot be checked: not comparable, naming the condition. A claim's "
    "verdict is its weakest "
    "check's; a claim judged on some of its checks only is marked partly."
)


def _shown(metric: Metric, value: Number) -> str:
    """A measured value in tsbench's unit for ``metric``."""
    if metric.is_footprint:
        return fmt.size(value)
    if metric is Metric.LOAD_SECONDS:
        return f"{fmt.seconds(value)} s"
    if metric.value.endswith("_ms_hot") or metric.value.endswith("_ms_cold"):
        return f"{fmt.ms(value)} ms"
    unit = {Metric.QUERY_QPS: "queries/s", Metric.LOAD_METRICS_PER_S: "metrics/s"}.get(metric, "rows/s")
    return f"{fmt.rate(value)} {unit}"


@dataclass(frozen=True)
class CheckRow:
    """One check beneath its claim: what it compares, its verdict (and pill), the figures per
    point, why it could not be made (or at which points not), the conditions that differ."""

    compares: str
    verdict: str
    pill: str
    measured: list[str]
    reason: str
    differences: list[str]


@dataclass(frozen=True)
class ClaimRow:
    """One claim: its quote, its verdict (``partly``: judged on ``made`` of its checks), the
    conditions it requires, the study's note, the band when not the default, its checks."""

    text: str
    verdict: str
    pill: str
    partly: str
    requires: list[str]
    note: str
    reason: str
    checks: list[CheckRow]


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
    """The study's title and file, the published side's source and machine, claims per verdict,
    the rule, the claims and the figures."""

    title: str
    study: str
    source: str
    machine: str  # the study's machine beside this run's
    counts: list[tuple[str, str, int]]  # verdict, its pill, how many claims
    partly: int  # claims judged on some of their checks only
    tally: str  # claims per verdict in words (``StudyCheck.tally``)
    rules: str
    claims: list[ClaimRow]
    figures: list[FigureRow]

    def summary(self) -> str:
        """``14 published claims of <title>: reproduced 2 · … (2 judged on …)`` for the summary."""
        return f"{len(self.claims)} published claims of {self.title}: {self.tally}."


def _what(metric: Metric, query_type: str | None, at: dict[str, Any]) -> str:
    where = conditions(at)
    name = metric.label + (f" of {query_type}" if query_type else "")
    return f"{name} ({where})" if where else name


def _check_row(item: CheckVerdict) -> CheckRow:
    return CheckRow(
        compares=compares(item.check) or "not checkable",
        verdict=item.verdict.value,
        pill=VERDICT_PILL[item.verdict],
        measured=item.measured,
        reason=item.reason,
        differences=item.differences,
    )


def _requires(item: ClaimVerdict) -> list[str]:
    shown = []
    for condition in item.claim.requires:
        value = getattr(condition, condition.kind)
        text = f"{condition.kind.replace('_', ' ')}: {', '.join(value) if isinstance(value, list) else value}"
        shown.append(text + (f" ({condition.why})" if condition.why else ""))
    return shown


def _claim_row(item: ClaimVerdict) -> ClaimRow:
    claim = item.claim
    band = f"band ×{claim.band:g}: {claim.band_reason}" if claim.band_reason else ""
    return ClaimRow(
        text=claim.text,
        verdict=item.verdict.value,
        pill=VERDICT_PILL[item.verdict],
        partly=f"partly: {item.made} of {len(item.checks)} checks" if item.partly else "",
        requires=_requires(item) + ([band] if band else []),
        note=claim.note,
        reason=item.reason,
        checks=[_check_row(check) for check in item.checks],
    )


def _figure_row(item: FigureBeside) -> FigureRow:
    figure = item.figure
    conditions_text = f"; {figure.conditions}" if figure.conditions else ""
    return FigureRow(
        target=figure.target,
        what=_what(figure.metric, figure.query_type, figure.at),
        published=f"{figure.value:,.6g} {figure.unit}",
        source=figure.source + conditions_text,
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
        partly=checked.partly(),
        tally=checked.tally(),
        rules=RULES,
        claims=[_claim_row(item) for item in checked.verdicts],
        figures=[_figure_row(item) for item in checked.figures],
    )
