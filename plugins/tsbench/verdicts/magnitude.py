"""The published magnitude of a check and whether a measured lead reproduces it.

A check's published ratio is the one its text states (``Check.ratio``), else the one the study's
own printed figures give (``Published.figures``): the figure of each side whose conditions are those
of the check at this point — the check's ``study_at`` first, then its ``at``, then the point's own
RunSpec values (e.g. its scale) — when exactly one figure per side matches. A lead beyond noise
reproduces the published ratio when it lies within the band (×/÷ the claim's or the check's
factor; from below only, for an ``at_least`` claim); otherwise the direction only is reproduced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tsbench.results.model import RunResult
from tsbench.verdicts.noise import oriented
from tsbench.verdicts.published import Check, Claim, PublishedFigure


@dataclass(frozen=True)
class PublishedRatio:
    """How many times better the claimed side is, as published, and where that comes from."""

    value: float
    source: str


def band_of(claim: Claim, check: Check) -> float:
    return check.band or claim.band


def reproduces(claim: Claim, check: Check, published: PublishedRatio, measured: float) -> tuple[bool, str]:
    """Whether ``measured`` (> 1) reproduces ``published``, and the sentence saying so."""
    band = band_of(claim, check)
    low, high = published.value / band, published.value * band
    inside = measured >= low if check.at_least else low <= measured <= high
    floor = "at least " if check.at_least else ""
    where = "within" if inside else "outside"
    return inside, (
        f"published {floor}{published.value:.3g}× ({published.source}), "
        f"measured {measured:.2f}×: {where} ×{band:g}"
    )


def published_ratio(
    check: Check, figures: Sequence[PublishedFigure], first: RunResult, second: RunResult | None = None
) -> PublishedRatio | None:
    """The check's published ratio at this point (``second``: the worse point of a within-target
    check), None when neither its text nor the study's figures give one."""
    if check.ratio is not None:
        return PublishedRatio(check.ratio, check.ratio_from or "stated in the quote")
    if check.metric is None:
        return None
    if len(check.ranking) == 2:
        sides = [(name, _wanted(check, first, {})) for name in check.ranking]
    elif check.target and second is not None:
        sides = [
            (check.target, _wanted(check, first, check.better_at)),
            (check.target, _wanted(check, second, check.worse_at)),
        ]
    else:
        return None
    found = [_figure(check, figures, name, wanted) for name, wanted in sides]
    if found[0] is None or found[1] is None or found[0].unit != found[1].unit:
        return None
    better, worse = found
    value = oriented(better.value, worse.value, check.metric.higher_is_better)
    shown = f"the study's figures: {better.value:,.6g} vs {worse.value:,.6g} {better.unit}"
    return PublishedRatio(
        value, f"{shown}, {better.source.split(' / ')[0]} and {worse.source.split(' / ')[0]}"
    )


def _wanted(check: Check, run: RunResult, side: Mapping[str, Any]) -> dict[str, Any]:
    """The conditions a figure must have: the side's, the study's, the check's, then the point's."""
    return {**run.spec, **check.at, **check.study_at, **side}


def _figure(
    check: Check, figures: Sequence[PublishedFigure], target: str, wanted: Mapping[str, Any]
) -> PublishedFigure | None:
    matching = [
        f
        for f in figures
        if f.target == target
        and f.metric is check.metric
        and f.query_type == check.query_type
        and all(wanted.get(key) == value for key, value in f.at.items())
    ]
    return matching[0] if len(matching) == 1 else None
