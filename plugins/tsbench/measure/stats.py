"""Latency statistics as TSBS and the published studies report them (milliseconds)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def latency_stats(
    latencies_ms: list[float], wall_s: float, errors: int = 0, mismatches: int = 0
) -> dict[str, Any]:
    """count, errors, mismatches, min / p50 / mean / p90 / p95 / p99 / max / stddev (ms), qps, wall_s.

    ``qps`` = successful queries / wall-clock seconds of the pass over this query type.
    Percentiles use linear interpolation; ``stddev`` is the population standard deviation.
    """
    values = np.asarray(latencies_ms, dtype=float)
    body: dict[str, Any] = {"count": int(values.size), "errors": errors, "mismatches": mismatches}
    if values.size:
        p50, p90, p95, p99 = np.percentile(values, [50, 90, 95, 99])
        body.update(
            min_ms=float(values.min()),
            p50_ms=float(p50),
            mean_ms=float(values.mean()),
            p90_ms=float(p90),
            p95_ms=float(p95),
            p99_ms=float(p99),
            max_ms=float(values.max()),
            stddev_ms=float(values.std()),
        )
    body["wall_s"] = wall_s
    body["qps"] = values.size / wall_s if wall_s > 0 else 0.0
    return body


def client_cpu(cpu_s: float | None, wall_s: float, cores: int | None = None) -> dict[str, float]:
    """``client_cpu_s`` (user + system CPU-seconds of the measuring process, all its threads, over
    a timed window) and ``client_share``: that CPU as a fraction of the machine's (``wall_s`` ×
    cores of this machine), the part the client took from a server sharing its cores."""
    if cpu_s is None:
        return {}
    capacity = wall_s * (cores or os.cpu_count() or 1)
    return {"client_cpu_s": cpu_s, "client_share": cpu_s / capacity if capacity > 0 else 0.0}
