"""One check of a claim (``tsbench.verdicts.published.Check``) on a comparison's points: its verdict at each
point (or pair of points) where it can be made, and the check's verdict over them.

At one point a check's sides compare by the noise rule (``noise``):

- ``reproduced``: the claimed side leads beyond noise, and the measured ratio lies within the
  claim's band of the published one (a factor of 2 unless the claim says otherwise);
- ``direction only``: it leads beyond noise, but the magnitude differs from the published one, or
  the study published none ("no published magnitude");
- ``tie``: within noise; ``reversed``: the other side leads beyond noise;
- ``not comparable`` (with the reason): a figure is missing, or the point does not meet a condition.

A similarity claim (two targets within ``within`` of each other, or one target ``unchanged`` between
two conditions) is reproduced when the medians are that close, reversed when they differ by more
beyond noise, a tie otherwise.

Over several points the weakest verdict decides (reversed < tie < direction only < reproduced): a
check is only as strong as its weakest point; points that could not check it are listed, not
counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tsbench.results.model import RunResult
from tsbench.verdicts.conditions import unmet
from tsbench.verdicts.figures import Measurement, measure
from tsbench.verdicts.magnitude import published_ratio, reproduces
from tsbench.verdicts.noise import Gap, Lead, compare
from tsbench.verdicts.published import Check, Claim, Condition, Metric, PublishedFigure


class Verdict(StrEnum):
    REPRODUCED = "reproduced"
    DIRECTION_ONLY = "direction only"
    TIE = "tie"
    REVERSED = "reversed"
    NOT_COMPARABLE = "not comparable"


STRENGTH = (Verdict.REVERSED, Verdict.TIE, Verdict.DIRECTION_ONLY, Verdict.REPRODUCED)  # weakest first


def weakest(verdicts: Sequence[Verdict]) -> Verdict:
    """The weakest of comparable verdicts (``STRENGTH``)."""
    return min(verdicts, key=STRENGTH.index)


@dataclass(frozen=True)
class Outcome:
    """A check at one point (or pair): its verdict (None: not checkable there) and the figures it
    rests on, or why it could not be made."""

    verdict: Verdict | None
    text: str


@dataclass(frozen=True)
class CheckVerdict:
    """One check's verdict: ``measured`` = the figures per point; ``reason`` = why not comparable,
    or what separates direction only from reproduced; ``differences`` = conditions that differ
    from the study's (filled in by the claim)."""

    check: Check
    verdict: Verdict
    measured: list[str] = field(default_factory=list)
    reason: str = ""
    differences: list[str] = field(default_factory=list)


def matches(run: RunResult, at: dict[str, Any]) -> bool:
    """Whether ``run``'s point has every RunSpec field of ``at`` at that value."""
    return all(run.spec.get(key) == value for key, value in at.items())


def point_name(run: RunResult) -> str:
    """The point as people read it: its label, else ``scale N``."""
    if run.point is not None and run.point.label:
        return run.point.label
    return f"scale {run.spec.get('scale', '?'):,}"


def conditions(at: dict[str, Any]) -> str:
    """``workers 4, scale 100`` (a point's conditions for people)."""
    return ", ".join(f"{key} {value}" for key, value in at.items())


def fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.3g}"


def _figure(name: str, found: Measurement) -> str:
    """``questdb 305,000 (300,000–310,000)``: the median and the range of the repeats."""
    assert found.value is not None
    named = f"{name} " if name else ""
    if len(found.values) == 1:
        return f"{named}{fmt(found.value)}"
    return f"{named}{fmt(found.value)} ({fmt(min(found.values))}–{fmt(max(found.values))})"


@dataclass(frozen=True)
class _Judge:
    """A check being judged: its claim (band, conditions) and the study's figures (magnitudes)."""

    claim: Claim
    check: Check
    figures: Sequence[PublishedFigure]

    @property
    def metric(self) -> Metric:
        assert self.check.metric is not None
        return self.check.metric

    def gap(self, first: Measurement, second: Measurement) -> Gap:
        return compare(first.values, second.values, self.metric.higher_is_better, self.metric.tolerance)

    def lead(self, gap: Gap, first: RunResult, second: RunResult | None = None) -> tuple[Verdict, str]:
        """The verdict of a comparison, with what decided between reproduced and direction only."""
        if gap.lead is Lead.SECOND:
            return Verdict.REVERSED, "reversed"
        if gap.lead is Lead.TIE:
            return Verdict.TIE, "within noise"
        published = published_ratio(self.check, self.figures, first, second)
        if published is None:
            return Verdict.DIRECTION_ONLY, "direction only: no published magnitude"
        inside, text = reproduces(self.claim, self.check, published, gap.ratio)
        return (Verdict.REPRODUCED if inside else Verdict.DIRECTION_ONLY), text

    def ranking_at(self, run: RunResult) -> Outcome:
        found = {name: measure(run, name, self.metric, self.check.query_type) for name in self.check.ranking}
        missing = [m.missing for m in found.values() if m.value is None]
        if missing:
            return Outcome(None, missing[0])
        verdicts, notes = [], []
        for first, second in zip(self.check.ranking, self.check.ranking[1:], strict=False):
            gap = self.gap(found[first], found[second])
            verdict, note = self.lead(gap, run)
            verdicts.append(verdict)
            notes.append(f"{first} vs {second} {gap.shown()}: {note}; {gap.rule}")
        shown = ", ".join(_figure(name, found[name]) for name in self.check.ranking)
        return Outcome(weakest(verdicts), f"{point_name(run)}: {shown} — {' | '.join(notes)}")

    def alike(self, a: Measurement, b: Measurement, shown: str) -> Outcome:
        """A claim of similarity (or of no change): reproduced within ``within``, reversed beyond
        it and beyond noise, a tie otherwise."""
        assert a.value is not None and b.value is not None
        apart = abs(a.value / b.value - 1) if b.value else float("inf")
        gap = self.gap(a, b)
        if apart <= self.check.within:
            verdict = Verdict.REPRODUCED
        else:
            verdict = Verdict.TIE if gap.lead is Lead.TIE else Verdict.REVERSED
        within = self.check.within
        return Outcome(verdict, f"{shown} ({apart:.0%} apart, within {within:.0%} claimed; {gap.rule})")

    def similar_at(self, run: RunResult) -> Outcome:
        check = self.check
        a, b = (measure(run, name, self.metric, check.query_type) for name in check.similar)
        if a.value is None or b.value is None:
            return Outcome(None, a.missing or b.missing)
        shown = f"{point_name(run)}: {_figure(check.similar[0], a)}, {_figure(check.similar[1], b)}"
        return self.alike(a, b, shown)

    def within_target(self, pair: tuple[RunResult, RunResult]) -> Outcome:
        assert self.check.target is not None
        good, bad = (measure(run, self.check.target, self.metric, self.check.query_type) for run in pair)
        if good.value is None or bad.value is None:
            return Outcome(None, good.missing or bad.missing)
        label = f"{point_name(pair[0])}: {_figure('', good)} vs {point_name(pair[1])}: {_figure('', bad)}"
        if self.check.unchanged:
            return self.alike(good, bad, label)
        gap = self.gap(good, bad)
        verdict, note = self.lead(gap, *pair)
        return Outcome(verdict, f"{label} — {gap.shown()}: {note}; {gap.rule}")

    def rollup_at(self, run: RunResult) -> Outcome:
        name = self.check.rollup_beats_raw
        assert name is not None
        good = measure(run, name, self.metric, self.check.query_type, on_rollup=True)
        bad = measure(run, name, self.metric, self.check.query_type)
        if good.value is None or bad.value is None:
            return Outcome(None, good.missing or bad.missing)
        gap = self.gap(good, bad)
        verdict, note = self.lead(gap, run)
        label = f"{point_name(run)}: {name} on its rollup {_figure('', good)} vs raw {_figure('', bad)}"
        return Outcome(verdict, f"{label} — {gap.shown()}: {note}; {gap.rule}")

    def outcomes(self, runs: Sequence[RunResult]) -> list[Outcome]:
        """An outcome per point (or pair of points) the check can be made at."""
        check = self.check
        requires = [*self.claim.requires, *check.requires]
        if check.target is not None:
            return [
                _gated(requires, pair, lambda p=pair: self.within_target(p)) for pair in _pairs(check, runs)
            ]
        points = [run for run in runs if matches(run, check.at)]
        judge = (
            self.rollup_at
            if check.rollup_beats_raw
            else self.ranking_at
            if check.ranking
            else self.similar_at
        )
        return [_gated(requires, (r,), lambda r=r: judge(r)) for r in points]


def _unmet(requires: Sequence[Condition], runs: Sequence[RunResult]) -> str:
    found = [why for condition in requires for run in runs if (why := unmet(condition, run))]
    return "; ".join(dict.fromkeys(found))


def _pairs(check: Check, runs: Sequence[RunResult]) -> list[tuple[RunResult, RunResult]]:
    """Points at ``better_at`` paired with the point at ``worse_at`` that is otherwise alike (same
    values of every other RunSpec field a point varies)."""
    swapped = set(check.better_at) | set(check.worse_at)

    def rest(run: RunResult) -> tuple[Any, ...]:
        axes = run.point.axes if run.point is not None else {}
        keys = sorted({*axes, "scale"} - swapped)
        return tuple(repr(run.spec.get(key)) for key in keys)

    better = [r for r in runs if matches(r, {**check.at, **check.better_at})]
    worse = [r for r in runs if matches(r, {**check.at, **check.worse_at})]
    return [(b, w) for b in better for w in worse if rest(b) == rest(w)]


def _gated(
    requires: Sequence[Condition], runs: Sequence[RunResult], outcome: Callable[[], Outcome]
) -> Outcome:
    """The outcome where every run meets ``requires``; else not checkable, naming the condition —
    with the figures measured there, shown but not judged."""
    missing = _unmet(requires, runs)
    if not missing:
        return outcome()
    found = outcome()
    shown = f"; measured here, not judged: {found.text}" if found.verdict is not None else ""
    return Outcome(None, f"{' vs '.join(point_name(r) for r in runs)}: {missing}{shown}")


def no_point(check: Check) -> str:
    if check.target:
        better = conditions({**check.at, **check.better_at})
        worse = conditions({**check.at, **check.worse_at})
        return f"no pair of points of this run, one with {better}, the other with {worse}, otherwise alike"
    return f"no point of this run has {conditions(check.at)}" if check.at else "no point of this run"


def check_verdict(
    claim: Claim, check: Check, runs: Sequence[RunResult], figures: Sequence[PublishedFigure] = ()
) -> CheckVerdict:
    """``check``'s verdict over the comparison's points (see the module docstring); ``figures``:
    the study's printed figures, where a published ratio may come from (``magnitude``)."""
    if check.not_comparable:
        return CheckVerdict(check, Verdict.NOT_COMPARABLE, reason=check.not_comparable)
    outcomes = _Judge(claim, check, figures).outcomes(runs)
    made = [o for o in outcomes if o.verdict is not None]
    if not made:
        why = "; ".join(dict.fromkeys(o.text for o in outcomes)) or no_point(check)
        return CheckVerdict(check, Verdict.NOT_COMPARABLE, reason=why)
    verdict = weakest([o.verdict for o in made if o.verdict is not None])
    unmade = [o.text for o in outcomes if o.verdict is None]
    reason = f"not checkable at {len(unmade)} point(s): {'; '.join(dict.fromkeys(unmade))}" if unmade else ""
    return CheckVerdict(check, verdict, [o.text for o in made], reason)


def compares(check: Check) -> str:
    """What the check compares, for people."""
    if check.metric is None:
        return ""
    where = conditions(check.at)
    what = check.metric.label + (f" of {check.query_type}" if check.query_type else "")
    what = f"{what} ({where})" if where else what
    if check.ranking:
        return f"{' > '.join(check.ranking)} by {what}"
    if check.similar:
        return f"{check.similar[0]} ≈ {check.similar[1]} by {what}"
    if check.rollup_beats_raw:
        return f"{check.rollup_beats_raw} on its rollup better than on the raw table by {what}"
    if check.target:
        better, worse = conditions(check.better_at), conditions(check.worse_at)
        if check.unchanged:
            return f"{check.target} alike at {better} and at {worse} (within {check.within:.0%}) by {what}"
        return f"{check.target} better at {better} than at {worse} by {what}"
    return ""
