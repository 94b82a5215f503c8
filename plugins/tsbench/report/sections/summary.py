"""The executive summary: the winner of each metric (with runner-up and last) and headline sentences."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tsbench.report import fmt
from tsbench.report.sections.caveats import caveats
from tsbench.report.sections.common import join, noise, ranked, ratio
from tsbench.report.sections.footprint import stored_bytes
from tsbench.report.sections.status import TargetView
from tsbench.results.model import RunResult

FOOTPRINT_KINDS = (
    ("db", "Footprint, DB's own accounting", "by its own accounting"),
    ("disk", "Footprint, disk bytes", "on disk"),
)


def _rows_per_s(value: float) -> str:
    return fmt.rate(value) + " rows/s"


def _qps(value: float) -> str:
    return fmt.rate(value) + " qps"


def _winner(
    targets: Mapping[str, Mapping[str, Any]],
    metric: str,
    anchor: str,
    order: list[tuple[str, float]],
    show: Callable[[float], str],
    higher: bool,
) -> dict[str, Any]:
    """One metric's row: the best, the runner-up and the last with their ratio to the best."""
    row: dict[str, Any] = {
        "metric": metric,
        "anchor": anchor,
        "verb": "faster than" if higher else "smaller than",
        "best": None,
        "runner_up": None,
        "last": None,
    }
    if order:
        name, value = order[0]
        row["best"] = {
            "label": targets[name].label,
            "value": show(value),
            "colour": targets[name].colour,
        }
        if len(order) > 1:
            other, other_value = order[1]
            row["runner_up"] = {
                "label": targets[other].label,
                "value": show(other_value),
                "ratio": ratio(value, other_value, higher),
            }
        if len(order) > 2:
            last, last_value = order[-1]
            row["last"] = {
                "label": targets[last].label,
                "value": show(last_value),
                "ratio": ratio(value, last_value, higher),
            }
    return row


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
    load: Mapping[str, Any],
    queries: Mapping[str, Any],
    footprint: Mapping[str, Any],
) -> dict[str, Any]:
    """Winners per metric (load, each query type hot, footprint), headlines and the caveats."""
    views = {t.name: t for t in targets}
    labels = {t.name: t.label for t in targets}
    load_order = ranked({r["target"].name: r["rows_per_s"] for r in load["rows"]}, True)
    winners = [_winner(views, "Load", f"{prefix}load", load_order, _rows_per_s, True)]
    headlines = _load_headline(labels, load_order)
    for row in queries["rows"]:
        winners.append(_winner(views, f"{row['type']} (hot)", row["anchor"], row["ranked"], _qps, True))
    headlines += _wins_headline(labels, queries["wins"])
    for key, metric, what in FOOTPRINT_KINDS:
        order = ranked({r["target"].name: stored_bytes(r, key) for r in footprint["rows"]}, False)
        winners.append(_winner(views, metric, f"{prefix}footprint", order, fmt.size, False))
        headlines += _footprint_headline(labels, order, what)
    return {
        "winners": winners,
        "has_last": any(w["last"] for w in winners),
        "headlines": headlines,
        "caveats": caveats(result, targets, load, queries),
    }
