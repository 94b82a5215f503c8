"""The plan shown by ``--plan-only``: each stage's estimate, where it runs and where its figures came
from, then what the plan needs of its machines."""

from __future__ import annotations

from tsbench.sweep.estimate import PlanEstimate

GB = 1e9


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:,.2f} h" if seconds >= 360 else f"{seconds:,.0f} s"


def stage_lines(estimate: PlanEstimate) -> list[str]:
    """One line per stage: point, stage, where, time on the declared machine (and at the measuring
    machine's speed where they differ), bytes left stored, the orchestrator's peak RSS, the source."""
    lines = [f"{'point':<28} {'stage':<40} {'where':<14} {'time':>10} {'stored':>10} {'peak RSS':>9}  from"]
    for s in estimate.stages:
        time = _hours(s.scaled_seconds) + (
            f" ({_hours(s.seconds)} here)" if s.seconds != s.scaled_seconds else ""
        )
        lines.append(
            f"{s.point[:28]:<28} {s.stage[:40]:<40} {s.where:<14} {time:>10} {s.stored_bytes / GB:>8,.1f} GB "
            f"{s.peak_rss_bytes / 2**30:>5.1f} GiB  {s.source}"
        )
    return lines


def fit_lines(estimate: PlanEstimate) -> list[str]:
    """What the plan needs of the database host and the orchestrator, against what they have."""
    host, here = estimate.host, estimate.orchestrator
    rule = "database stages at the measuring machine's speed"
    if estimate.speedup > 1:
        rule = (
            f"database stages ÷ {estimate.speedup:g} for its {host.cores} cores (linear in cores: optimistic)"
        )
    database, stored = estimate.host_disk_bytes() / GB, estimate.orchestrator_disk_bytes() / GB
    return [
        f"database host: {host.what}; {rule}; the largest database ~{database:,.1f} GB "
        f"({host.disk_bytes / GB:,.1f} GB {host.disk_what})",
        f"orchestrator: datasets, answers and wire bodies ~{stored:,.1f} GB ({here.disk_bytes / GB:,.1f} GB "
        f"{here.disk_what}); its peak RSS ~{estimate.peak_rss_bytes() / 2**30:,.1f} GiB",
        *(f"does not fit: {problem}" for problem in estimate.problems()),
    ]
