"""Published vs measured: each claim of a study (``tsbench.published``) checked on one comparison's
points, and each published figure set beside the figures measured under its conditions.

A claim is checked on rankings and ratios only — never by equating absolute numbers across
machines. Its verdict: ``holds`` / ``reversed`` at every point where it could be checked, ``mixed``
when points disagree, ``does not hold`` for a similarity that is not within its tolerance, and
``not comparable`` (with the reason) when no point of this run measures what it compares. The
differences of conditions (machine, versions, the study's scale …) are listed beside every verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tsbench.published import Claim, Metric, Published, PublishedFigure
from tsbench.results.model import Number, RunResult, TargetResult


class Verdict(StrEnum):
    HOLDS = "holds"
    REVERSED = "reversed"
    MIXED = "mixed"
    DOES_NOT_HOLD = "does not hold"
    NOT_COMPARABLE = "not comparable"


@dataclass(frozen=True)
class Measurement:
    """``value`` of a metric at one point for one target, or ``missing`` = why there is none."""

    value: float | None
    missing: str = ""


def measure(run: RunResult, target: str, metric: Metric, query_type: str | None = None) -> Measurement:
    """``metric`` of ``target`` at ``run``'s point: only complete figures (row counts agreed; every
    query answered without error or wrong answer)."""
    body = run.targets.get(target)
    if body is None:
        return Measurement(None, f"{target} is not in this run")
    if metric.needs_query_type:
        return _query_figure(body, target, metric, query_type or "")
    if metric in (Metric.FOOTPRINT_BYTES_AFTER_LOAD, Metric.FOOTPRINT_BYTES_AFTER_SETTLE):
        return _footprint_figure(body, target, metric)
    return _load_figure(body, target, metric)


def _load_figure(body: TargetResult, target: str, metric: Metric) -> Measurement:
    load = body.load
    trial = load.median_trial()[0] if load is not None else None
    if load is None or trial is None or not load.row_count_ok:
        return Measurement(None, f"{target} has no complete load ({body.failed_phase or 'no trial'})")
    value = {
        Metric.LOAD_ROWS_PER_S: trial.rows_per_s,
        Metric.LOAD_METRICS_PER_S: trial.metrics_per_s,
        Metric.LOAD_SECONDS: trial.seconds,
    }[metric]
    return Measurement(float(value))


def _footprint_figure(body: TargetResult, target: str, metric: Metric) -> Measurement:
    phase = body.footprint
    figures = None
    if phase is not None:
        figures = phase.after_load if metric is Metric.FOOTPRINT_BYTES_AFTER_LOAD else phase.after_settle
    value = (
        None if figures is None else figures.disk_bytes if figures.disk_bytes is not None else figures.bytes
    )
    if value is None:
        return Measurement(None, f"{target} has no footprint figure")
    return Measurement(float(value))


def _query_figure(body: TargetResult, target: str, metric: Metric, query_type: str) -> Measurement:
    queries = body.queries
    if queries is None:
        return Measurement(None, f"{target} ran no queries ({body.failed_phase or 'not run'})")
    if query_type in queries.unsupported:
        return Measurement(None, f"{target} does not support {query_type}: {queries.unsupported[query_type]}")
    passes = queries.cold if metric is Metric.QUERY_MEAN_MS_COLD else queries.hot
    stats = passes.get(query_type)
    if stats is None:
        return Measurement(None, f"{query_type} was not run")
    if not stats.clean():
        return Measurement(None, f"{target}'s {query_type} had errors or wrong answers")
    value = stats.qps if metric is Metric.QUERY_QPS else stats.mean_ms
    return Measurement(None, f"no {metric.value}") if value is None else Measurement(float(value))


def matches(run: RunResult, at: dict[str, Any]) -> bool:
    """Whether ``run``'s point has every RunSpec field of ``at`` at that value."""
    return all(run.spec.get(key) == value for key, value in at.items())


def point_name(run: RunResult) -> str:
    """The point as people read it: its label, else ``scale N``."""
    if run.point is not None and run.point.label:
        return run.point.label
    return f"scale {run.spec.get('scale', '?'):,}"


@dataclass(frozen=True)
class ClaimVerdict:
    """One claim's verdict: ``measured`` = the figures or ratios it rests on, per point;
    ``reason`` = why not comparable, or how points disagree; ``differences`` = conditions that
    differ from the study's."""

    claim: Claim
    verdict: Verdict
    measured: list[str] = field(default_factory=list)
    reason: str = ""
    differences: list[str] = field(default_factory=list)


def _better(metric: Metric, first: float, second: float) -> bool:
    return first > second if metric.higher_is_better else first < second


def _ratio(metric: Metric, first: float, second: float) -> float | None:
    """How many times better ``first`` is than ``second`` (> 1: better)."""
    if metric.higher_is_better:
        return first / second if second else None
    return second / first if first else None


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _ranking_at(claim: Claim, run: RunResult) -> tuple[str | None, str]:
    """(holds | reversed | mixed, text) at one point; (None, why) when not measurable there."""
    values: dict[str, float] = {}
    for name in claim.ranking:
        found = measure(run, name, claim.metric, claim.query_type)
        if found.value is None:
            return None, found.missing
        values[name] = found.value
    pairs = list(zip(claim.ranking, claim.ranking[1:], strict=False))
    kept = [_better(claim.metric, values[a], values[b]) for a, b in pairs]
    shown = ", ".join(f"{name} {_fmt(values[name])}" for name in claim.ranking)
    if len(pairs) == 1:
        ratio = _ratio(claim.metric, values[pairs[0][0]], values[pairs[0][1]])
        shown += f" ({ratio:.2f}×)" if ratio is not None else ""
    state = "holds" if all(kept) else "reversed" if not any(kept) else "mixed"
    return state, f"{point_name(run)}: {shown}"


def _similar_at(claim: Claim, run: RunResult) -> tuple[str | None, str]:
    a, b = (measure(run, name, claim.metric, claim.query_type) for name in claim.similar)
    if a.value is None or b.value is None:
        return None, a.missing or b.missing
    gap = abs(a.value / b.value - 1) if b.value else float("inf")
    state = "holds" if gap <= claim.within else "does not hold"
    text = f"{point_name(run)}: {claim.similar[0]} {_fmt(a.value)}, {claim.similar[1]} {_fmt(b.value)}"
    return state, f"{text} ({gap:.0%} apart, within {claim.within:.0%} claimed)"


def _pairs(claim: Claim, runs: Sequence[RunResult]) -> list[tuple[RunResult, RunResult]]:
    """Points at ``better_at`` paired with the point at ``worse_at`` that is otherwise alike (same
    values of every other RunSpec field a point varies)."""
    swapped = set(claim.better_at) | set(claim.worse_at)

    def rest(run: RunResult) -> tuple[Any, ...]:
        axes = run.point.axes if run.point is not None else {}
        keys = sorted({*axes, "scale"} - swapped)
        return tuple(repr(run.spec.get(key)) for key in keys)

    better = [r for r in runs if matches(r, {**claim.at, **claim.better_at})]
    worse = [r for r in runs if matches(r, {**claim.at, **claim.worse_at})]
    return [(b, w) for b in better for w in worse if rest(b) == rest(w)]


def _within_target(claim: Claim, pair: tuple[RunResult, RunResult]) -> tuple[str | None, str]:
    assert claim.target is not None
    good, bad = (measure(run, claim.target, claim.metric, claim.query_type) for run in pair)
    if good.value is None or bad.value is None:
        return None, good.missing or bad.missing
    state = "holds" if _better(claim.metric, good.value, bad.value) else "reversed"
    ratio = _ratio(claim.metric, good.value, bad.value)
    text = f"{point_name(pair[0])}: {_fmt(good.value)} vs {point_name(pair[1])}: {_fmt(bad.value)}" + (
        f" ({ratio:.2f}×)" if ratio is not None else ""
    )
    return state, text


def _outcomes(claim: Claim, runs: Sequence[RunResult]) -> list[tuple[str | None, str]]:
    """(state, text) per point (or pair of points) the claim can be checked at."""
    if claim.target is not None:
        return [_within_target(claim, pair) for pair in _pairs(claim, runs)]
    at_points = [run for run in runs if matches(run, claim.at)]
    check = _ranking_at if claim.ranking else _similar_at
    return [check(claim, run) for run in at_points]


def _summary(claim: Claim, outcomes: list[tuple[str | None, str]]) -> tuple[Verdict, str]:
    states = [state for state, _ in outcomes if state is not None]
    if not states:
        why = "; ".join(dict.fromkeys(text for _, text in outcomes)) or _no_point(claim)
        return Verdict.NOT_COMPARABLE, why
    distinct = set(states)
    if len(distinct) == 1:
        return Verdict(distinct.pop()), ""
    counts = ", ".join(f"{state} at {states.count(state)}" for state in sorted(distinct))
    return Verdict.MIXED, f"{counts} of {len(states)} points"


def conditions(at: dict[str, Any]) -> str:
    """``workers 4, scale 100`` (a point's conditions for people)."""
    return ", ".join(f"{key} {value}" for key, value in at.items())


def _no_point(claim: Claim) -> str:
    if claim.target:
        better = conditions({**claim.at, **claim.better_at})
        worse = conditions({**claim.at, **claim.worse_at})
        return f"no pair of points of this run, one with {better}, the other with {worse}, otherwise alike"
    return f"no point of this run has {conditions(claim.at)}" if claim.at else "no point of this run"


def _differences(
    published: Published, claim: Claim | PublishedFigure, runs: Sequence[RunResult], names: Sequence[str]
) -> list[str]:
    """The study's conditions beside this run's (the machine aside: ``machine_difference``):
    versions of ``names``, and each of the claim's ``study_at`` fields whose value differs from
    every point here."""
    found = []
    for name in names:
        ours = next((r.targets[name].provision.version for r in runs if _provisioned(r, name)), "")
        theirs = published.versions.get(name)
        if theirs and ours and not _same_version(theirs, ours):
            found.append(f"{name} version: study {theirs}; here {ours}")
    for key, value in getattr(claim, "study_at", {}).items():
        seen = sorted({repr(r.spec[key]) for r in runs if key in r.spec})
        if not seen:
            found.append(f"{key}: study {value}; not a parameter of this run")
        elif repr(value) not in seen:
            found.append(f"{key}: study {value}; here {', '.join(seen)}")
    return found


def machine_difference(published: Published, runs: Sequence[RunResult]) -> str:
    """The study's machine beside this run's (every claim and figure differs in it)."""
    machine = runs[0].machine if runs else {}
    memory = machine.get("memory_bytes")
    here = f"{machine.get('cores', '?')} cores" + (f", {memory / 2**30:.0f} GiB" if memory else "")
    return f"study: {published.machine}; here: {here}"


def _same_version(theirs: str, ours: str) -> bool:
    """Whether the published version (its first dotted number, e.g. ``9.3.4`` in ``QuestDB
    9.3.4 (Docker)``) is the one this run reported."""
    number = re.search(r"\d+(\.\d+)+", theirs)
    return (
        number is not None and re.search(rf"(?<![\d.]){re.escape(number.group())}(?![\d])", ours) is not None
    )


def _provisioned(run: RunResult, name: str) -> bool:
    body = run.targets.get(name)
    return body is not None and body.provision is not None and bool(body.provision.version)


def check_claim(published: Published, claim: Claim, runs: Sequence[RunResult]) -> ClaimVerdict:
    """``claim``'s verdict over this comparison's points (see the module docstring)."""
    differences = _differences(published, claim, runs, claim.targets)
    if claim.not_comparable:
        return ClaimVerdict(
            claim, Verdict.NOT_COMPARABLE, reason=claim.not_comparable, differences=differences
        )
    outcomes = _outcomes(claim, runs)
    verdict, reason = _summary(claim, outcomes)
    measured = [text for state, text in outcomes if state is not None]
    if claim.ratio is not None and verdict is not Verdict.NOT_COMPARABLE:
        measured.insert(0, f"published ratio {claim.ratio:g}×")
    return ClaimVerdict(claim, verdict, measured, reason, differences)


@dataclass(frozen=True)
class FigureBeside:
    """A published figure and what this run measured under its conditions (``measured``: point
    name → value in tsbench's unit; empty with ``missing`` = why)."""

    figure: PublishedFigure
    measured: list[tuple[str, Number]]
    missing: str = ""


def figure_beside(figure: PublishedFigure, runs: Sequence[RunResult]) -> FigureBeside:
    at_points = [run for run in runs if matches(run, figure.at)]
    if not at_points:
        return FigureBeside(figure, [], f"no point of this run has {conditions(figure.at)}")
    found = [(run, measure(run, figure.target, figure.metric, figure.query_type)) for run in at_points]
    measured = [(point_name(run), m.value) for run, m in found if m.value is not None]
    missing = "" if measured else "; ".join(dict.fromkeys(m.missing for _, m in found))
    return FigureBeside(figure, measured, missing)


@dataclass(frozen=True)
class StudyCheck:
    """Every claim's verdict and every figure beside ours, for one study and one comparison."""

    published: Published
    verdicts: list[ClaimVerdict]
    figures: list[FigureBeside]
    machine: str

    def counts(self) -> dict[Verdict, int]:
        return {v: sum(1 for item in self.verdicts if item.verdict is v) for v in Verdict}


def check_study(published: Published, runs: Sequence[RunResult]) -> StudyCheck:
    return StudyCheck(
        published,
        [check_claim(published, claim, runs) for claim in published.claims],
        [figure_beside(figure, runs) for figure in published.figures],
        machine_difference(published, runs),
    )
