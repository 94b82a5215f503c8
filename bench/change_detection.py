"""How well ``tsbench.changes.find_changes`` finds shifts in a nightly history (issue 45).

Synthetic histories of ``--nights`` runs, each value = level × (1 + 0.05·N(0, 1)) (5 % coefficient of
variation), with shifts of the level at known nights and none elsewhere. Per scenario, over
``--histories`` seeds: the share of shifts found within ±2 and ±5 nights, the false alarms per
history (a change farther than 5 nights from every shift), the share of histories with more than
one, how often the interval of a found shift holds the true shift, and the time per history.

    PYTHONPATH=plugins .venv/bin/python bench/change_detection.py [--histories 200] [--nights 60]
        [--family 96]   (the intervals' level corrected for that many series, as a nightly's report is)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from tsbench.changes.detect import find_changes

CV = 0.05
NEAR, FOUND = 2, 5  # nights: "placed" and "found" windows around a true shift


@dataclass(frozen=True)
class Scenario:
    name: str
    shifts: tuple[tuple[int, float], ...]  # (night, relative change of the level)


SCENARIOS = (
    Scenario("+10 % at night 30", ((30, 0.10),)),
    Scenario("+30 % at night 30", ((30, 0.30),)),
    Scenario("−10 % at night 30", ((30, -0.10),)),
    Scenario("+10 % at 20, +30 % at 40", ((20, 0.10), (40, 0.30))),
    Scenario("no shift", ()),
)


def history(scenario: Scenario, nights: int, rng: np.random.Generator) -> np.ndarray:
    level = np.ones(nights)
    for night, change in scenario.shifts:
        level[night:] *= 1 + change
    return 1000 * level * (1 + CV * rng.standard_normal(nights))


def score(scenario: Scenario, histories: int, nights: int, family: int = 1) -> dict[str, float]:
    placed = found = covered = alarms = many = 0
    seconds = 0.0
    for seed in range(histories):
        values = history(scenario, nights, np.random.default_rng([seed, len(scenario.shifts), nights]))
        started = time.perf_counter()
        changes = find_changes(values.tolist(), family=family)
        seconds += time.perf_counter() - started
        for night, change in scenario.shifts:
            near = [c for c in changes if abs(c.index - night) <= FOUND]
            found += bool(near)
            placed += any(abs(c.index - night) <= NEAR for c in near)
            best = min(near, key=lambda c: abs(c.index - night), default=None)
            if best is not None and best.low is not None and best.high is not None:
                covered += best.low <= change <= best.high
        false = [c for c in changes if all(abs(c.index - n) > FOUND for n, _ in scenario.shifts)]
        alarms += len(false)
        many += len(false) > 1
    shifts = max(1, histories * len(scenario.shifts))
    return {
        "placed": placed / shifts,
        "found": found / shifts,
        "covered": covered / max(1, found),
        "alarms": alarms / histories,
        "many": many / histories,
        "ms": 1000 * seconds / histories,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=int, default=200)
    parser.add_argument("--nights", type=int, default=60)
    parser.add_argument("--family", type=int, default=1, help="series searched together (a nightly's: ~100)")
    args = parser.parse_args()
    print(
        f"{args.histories} histories of {args.nights} nights per scenario, {CV:.0%} CV, "
        f"intervals for {args.family} series searched together"
    )
    print(
        f"  {'scenario':<26} {'±2 nights':>9} {'±5 nights':>9} {'interval holds':>14} "
        f"{'false alarms':>12} {'> 1 alarm':>9} {'ms':>6}"
    )
    for scenario in SCENARIOS:
        s = score(scenario, args.histories, args.nights, args.family)
        shifts = bool(scenario.shifts)
        cells = [f"{s[k]:.3f}" if shifts else "–" for k in ("placed", "found", "covered")]
        print(
            f"  {scenario.name:<26} {cells[0]:>9} {cells[1]:>9} {cells[2]:>14} "
            f"{s['alarms']:>12.3f} {s['many']:>9.3f} {s['ms']:>6.2f}"
        )


if __name__ == "__main__":
    main()
