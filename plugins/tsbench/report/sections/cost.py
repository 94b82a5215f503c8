"""Cost and price-performance per target, where the run's hosts have a price (runtime aws).

Cost: the hours each target's host lived (``tsbench.results.cost.host_hours``: from the start of
provisioning to the end of teardown) × the run's recorded price per host-hour (``result.json``'s
``price``: instance, volumes and address, from the runtime's price table with its date). Load
rows/s per dollar-hour: the median trial's rows/s ÷ USD per hour. Queries per dollar: the queries/s
of the query mix every priced target answered cleanly (its hot queries ÷ their seconds, every type of
the mix) × 3,600 ÷ USD per hour — what an hour of the host buys at the measured hot rate, not the
queries this run happened to send. A run without a price (local, docker) says so in one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tsbench.report.sections.load import LoadSection
from tsbench.report.sections.target_view import TargetView
from tsbench.results.cost import host_hours
from tsbench.results.model import MachinePrice, PriceLine, RunResult, TargetResult

NOT_RECORDED = "no price recorded (a run collected before prices were)"


@dataclass(frozen=True)
class CostRow:
    """One target: its host's hours (None: not recorded, ``how`` says why) and their cost in USD,
    load rows/s per USD-per-hour and queries per USD (None: no clean figure)."""

    target: TargetView
    hours: float | None
    how: str
    usd: float | None
    rows_per_s_per_usd_h: float | None
    queries_per_usd: float | None


@dataclass(frozen=True)
class CostSection:
    """The run's price per host-hour (``lines``: each billed item; ``table``: its source and date;
    ``not_counted``) and a row per target; without a price, ``no_price`` alone (one line). ``mix``:
    the query types whose hot rate gives queries per dollar; ``shared``: a sweep point, whose hosts
    may serve its server group's other points too."""

    priced: bool
    no_price: str
    usd_per_h: float | None
    lines: list[PriceLine]
    table: str
    not_counted: str
    rows: list[CostRow]
    mix: list[str]
    shared: bool

    @property
    def hows(self) -> list[str]:
        """How the rows' hours were measured, each way once, in order."""
        return list(dict.fromkeys(row.how for row in self.rows))


def _clean_mix(targets: Mapping[str, TargetResult]) -> list[str]:
    """The query types every target of ``targets`` answered cleanly in its hot passes (in the
    first target's order); empty when one of them has no queries."""
    typed = [body.queries.hot if body.queries is not None else {} for body in targets.values()]
    if not typed:
        return []
    return [
        qtype
        for qtype in typed[0]
        if all(qtype in hot and hot[qtype].clean() and hot[qtype].wall_s for hot in typed)
    ]


def _mix_qps(body: TargetResult, mix: Sequence[str]) -> float | None:
    """Queries/s of the mix: every type's hot queries ÷ their summed seconds."""
    if body.queries is None or not mix:
        return None
    stats = [body.queries.hot[qtype] for qtype in mix]
    seconds = sum(float(s.wall_s or 0) for s in stats)
    return sum(s.count or 0 for s in stats) / seconds if seconds > 0 else None


def cost_section(run: RunResult, targets: Sequence[TargetView], load: LoadSection) -> CostSection:
    """The cost section of one point: ``run.price`` (None: recorded before prices), the hours of
    every target's host, its load rate (``load``'s median trial) and its hot query rate."""
    price = run.price or MachinePrice.none("", NOT_RECORDED)
    if not price.priced or not price.usd_per_h:
        return CostSection(False, price.no_price or NOT_RECORDED, None, [], "", "", [], [], False)
    per_hour = float(price.usd_per_h)
    rates = {row.target.name: row.rows_per_s for row in load.rows}
    mix = _clean_mix({name: body for name, body in run.targets.items() if body.ok})
    rows = []
    for view in targets:
        body = run.targets[view.name]
        hours = host_hours(body)
        rate = rates.get(view.name)
        qps = _mix_qps(body, mix) if body.ok else None
        rows.append(
            CostRow(
                target=view,
                hours=hours.hours,
                how=hours.how,
                usd=price.cost_usd(hours.hours) if hours.hours is not None else None,
                rows_per_s_per_usd_h=float(rate) / per_hour if rate else None,
                queries_per_usd=qps * 3_600 / per_hour if qps else None,
            )
        )
    shared = bool(run.point is not None and run.point.axes)
    return CostSection(
        True, "", per_hour, list(price.lines), price.table, price.not_counted, rows, mix, shared
    )
