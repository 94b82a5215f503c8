"""How fast the open-loop client itself can offer work (``tsbench.measure.open_loop``): against a
do-nothing endpoint in this process, offered rates step up and each step prints the achieved rate,
achieved ÷ offered, the send lag's p99 and the client's CPU-seconds per 1,000 requests. Where
achieved ÷ offered stays ≈ 1.00 with a small lag, the client is not the limit at that rate; a live
phase must stay ≥ 3× below the highest such rate (issue 44's rule for the harness).

    PYTHONPATH=plugins .venv/bin/python bench/open_loop_client.py [--workers 4] [--seconds 3]
"""

from __future__ import annotations

import argparse
import time

from tsbench.measure.open_loop import OpenLoopResult, Schedule, run_open_loop

RATES = (1_000, 10_000, 50_000, 100_000, 200_000, 400_000)


def nothing(_: int) -> None:
    """The do-nothing endpoint: returns at once."""


def step(rate: int, seconds: float, workers: int) -> tuple[OpenLoopResult, float]:
    """One offered rate: the result and the client's CPU-seconds (this process) over it."""
    cpu = time.process_time()
    result = run_open_loop(Schedule(rate, seconds), workers, nothing)
    return result, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    print(f"open-loop client, {args.workers} workers, {args.seconds:g} s per step, do-nothing endpoint")
    print(f"  {'offered/s':>10} {'achieved/s':>11} {'ratio':>6} {'lag p99 ms':>11} {'CPU s/1k':>9}")
    for rate in RATES:
        result, cpu_s = step(rate, args.seconds, args.workers)
        lag = OpenLoopResult.percentiles_ms(result.lag)["p99"]
        per_k = cpu_s / max(result.completed, 1) * 1000
        ratio = result.achieved_per_s / rate
        print(f"  {rate:>10,} {result.achieved_per_s:>11,.0f} {ratio:>6.2f} {lag:>11.2f} {per_k:>9.3f}")


if __name__ == "__main__":
    main()
