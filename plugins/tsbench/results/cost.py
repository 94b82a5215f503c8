"""The hours a target's host lived, read from its records (``host_hours``), and what it cost at a
run's recorded price (``MachinePrice.cost_usd``)."""

from __future__ import annotations

from dataclasses import dataclass

from tsbench.results.model import TargetResult
from tsbench.timeutil import parse_instant

NS_PER_HOUR = 3_600 * 10**9
# The phases whose wall times add up to a lower bound of a host's life when no instant was recorded.
TIMED_PHASES = ("provision", "prepare", "load", "footprint", "cache_reset", "queries", "live", "teardown")


@dataclass(frozen=True)
class HostHours:
    """How long a target's host existed, in hours, and from which records (``how``); ``hours`` is
    None when they do not say (``how`` then says why). ``lower_bound``: only the phases' wall times
    were recorded (the gaps between a DAG's tasks are billed too and not counted)."""

    hours: float | None
    how: str
    lower_bound: bool = False


def _span_hours(start: str, end: str) -> float:
    return (parse_instant(end) - parse_instant(start)) / NS_PER_HOUR


def host_hours(target: TargetResult) -> HostHours:
    """The hours ``target``'s host lived: from the start of provisioning (``provision.started_at``;
    after a failed provisioning, the lease taken right before it: ``acquire_machine.taken_at``) to
    the end of teardown (``teardown.finished_at``). Runs recorded before those instants: the sum of
    the phases' ``wall_s`` (a lower bound). A failed or missing teardown: no hours."""
    if target.teardown is None:
        if target.failed_phase == "teardown":
            return HostHours(None, "teardown failed: the host may still exist and be billed")
        return HostHours(None, "no teardown recorded: the host's end is unknown")
    end = target.teardown.finished_at
    provision = target.provision.started_at if target.provision is not None else ""
    lease = target.acquire_machine.taken_at if target.acquire_machine is not None else ""
    if end and provision:
        return HostHours(_span_hours(provision, end), "from the start of provisioning to the end of teardown")
    if end and lease:
        since = "from the lease taken before provisioning (which failed) to the end of teardown"
        return HostHours(_span_hours(lease, end), since)
    walls = [getattr(target, name).wall_s for name in TIMED_PHASES if getattr(target, name) is not None]
    seconds = sum(wall for wall in walls if wall is not None)
    if seconds > 0:
        return HostHours(
            seconds / 3_600,
            "the sum of the phases' wall times (no instants recorded): a lower bound, the gaps between "
            "tasks are not counted",
            lower_bound=True,
        )
    return HostHours(None, "no provisioning or teardown time recorded")
