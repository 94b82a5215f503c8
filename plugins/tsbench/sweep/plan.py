"""A sweep: run parameters whose axes take lists, expanded into the cross product of points.

Axes (each a list in the parameters; a single value is a one-point axis): ``scales``, ``workers``,
``batch_size``, ``ingestion`` and ``trials``. Cardinality mode (``row_budget``): every scale gets
the same number of rows per measurement — the span is ``row_budget / scale`` epochs from ``start``,
so 100 hosts get a long span and 1,000,000 hosts a short one, as the cardinality studies measured.

Every point is one ``RunSpec``; the whole product is validated before any work, each problem named
with the axis value that provokes it, and refused above ``SweepLimits`` with the numbers. Points that
share a dataset share it (``dataset_groups``); points that differ only in client settings (workers,
batch size, trials) can share one provisioned server (``server_groups``).

The plan's time, disk and memory come from measured costs (``sweep.estimate``): a sweep whose
estimate is over ``SweepLimits.max_hours``, or that does not fit its machine's disk or memory, is
refused with the numbers.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from tsbench.runtimes.select import machine_price
from tsbench.spec import DEFAULT_START, DatasetSpec, RunSpec, SpecError
from tsbench.sweep.axes import AXIS_NAMES, BY_AXIS, axis_text
from tsbench.sweep.estimate import PlanEstimate, estimate_plan
from tsbench.timeutil import format_duration, parse_duration, parse_instant
from tsbench.workload.usecases import get_use_case


@dataclass(frozen=True)
class SweepLimits:
    """What a sweep may ask for at most; above any of them it is refused with the numbers."""

    max_points: int = 200
    max_rows_loaded: int = 20_000_000_000
    max_hours: float = 72.0


@dataclass(frozen=True)
class SweepPoint:
    """One point: its axis values (axis → value) and the RunSpec it runs."""

    axes: dict[str, Any]
    spec: RunSpec

    @property
    def name(self) -> str:
        """Folder-safe, e.g. ``scale-100_workers-2``: the scale always, then the other axes that
        vary (a plain comparison's points are ``scale-<N>``, as before sweeps)."""
        named = {"scales": self.spec.scale, **{k: v for k, v in self.axes.items() if k != "scales"}}
        return "_".join(f"{BY_AXIS[k].field.replace('_', '-')}-{v}" for k, v in named.items())

    def label(self) -> str:
        """For people, e.g. ``100 hosts · 4 workers`` (the axes that vary; the scale always)."""
        entities = get_use_case(self.spec.use_case).entities
        return " · ".join(
            f"{value:,} {entities}" if axis == "scales" else axis_text(axis, value)
            for axis, value in {"scales": self.spec.scale, **self.axes}.items()
        )

    def server_key(self) -> tuple[Any, ...]:
        """Equal for points that may share one loaded server: same data, only client settings differ."""
        return tuple(sorted(self.spec.dataset_key().items()))


@dataclass
class SweepPlan:
    """The validated product and what it would cost (estimates, see the module docstring)."""

    points: list[SweepPoint]
    varied: list[str] = field(default_factory=list)

    def dataset_groups(self) -> dict[str, list[SweepPoint]]:
        """Points by the dataset they load (one generation each)."""
        groups: dict[str, list[SweepPoint]] = {}
        for point in self.points:
            groups.setdefault(repr(point.server_key()), []).append(point)
        return groups

    def server_groups(self) -> list[list[SweepPoint]]:
        """Points that one provisioned server per target can measure in turn (client axes only)."""
        return list(self.dataset_groups().values())

    def server_group_of(self) -> dict[str, str]:
        """Point name → its server group's name (the group's first point's name)."""
        return {point.name: group[0].name for group in self.server_groups() for point in group}

    def rows_generated(self) -> int:
        return sum(group[0].spec.rows_total for group in self.dataset_groups().values())

    def rows_loaded(self) -> int:
        return sum(p.spec.rows_total * p.spec.trials * len(p.spec.targets) for p in self.points)

    @cached_property
    def estimate(self) -> PlanEstimate:
        """Time, disk and memory per stage, from measured costs (``sweep.estimate``)."""
        return estimate_plan(self)

    def estimated_hours(self) -> float:
        """Wall hours on the declared machine (the estimate's machine rule)."""
        return self.estimate.hours()

    def estimated_cost(self) -> str:
        """The estimated cost of the database hosts' hours (``PlanEstimate.host_hours``: each target
        on a host of its own, so host-hours) at the price per hour of one host of the spec's runtime
        (``runtimes.select.machine_price``), in USD, as a sentence; or why there is no price. A lower
        bound, as the hours are: a host also lives while it is provisioned, settles and is torn down."""
        price = machine_price(self.points[0].spec)
        if not price.priced or price.usd_per_h is None:
            return price.no_price
        hours = self.estimate.host_hours()
        return (
            f"estimated cost ≥ ${hours * price.usd_per_h:,.2f}: {hours:,.1f} host-hours of loading and "
            f"querying × ${price.usd_per_h:.3f} per host-hour ({price.lines[0].item}, its volumes and "
            f"address; AWS on-demand prices of {price.table_date}), more with provisioning and settling "
            "(an estimate, not a quote)"
        )

    def summary(self) -> str:
        estimate = self.estimate
        scaled = estimate.hours() != estimate.hours(scaled=False)
        at_speed = (
            f" ({estimate.hours(scaled=False):,.1f} h at the measuring machine's speed)" if scaled else ""
        )
        return (
            f"{len(self.points)} point(s) over {', '.join(self.varied) or 'no axis'}; "
            f"{len(self.dataset_groups())} dataset(s), {self.rows_generated():,} rows generated, "
            f"{self.rows_loaded():,} rows loaded; estimated {estimate.hours():,.1f} h on {estimate.host.what}"
            f"{at_speed}, ~{estimate.orchestrator_disk_bytes() / 1e9:,.1f} GB of datasets and wire bodies, "
            f"~{estimate.host_disk_bytes() / 1e9:,.1f} GB in the largest database, orchestrator peak "
            f"~{estimate.peak_rss_bytes() / 2**30:,.1f} GiB (from measured costs: --plan-only lists each "
            f"stage); {self.estimated_cost()}"
        )


def _axis_values(values: dict[str, Any], axis: str, problems: list[tuple[str, str]]) -> list[Any]:
    given = values.pop(axis, None)
    if given is None:
        return [None]  # RunSpec's default
    listed = given if isinstance(given, list) else [given]
    if not listed:
        problems.append((axis, "give at least one value, or leave it out for the default"))
    elif len({repr(v) for v in listed}) != len(listed):
        problems.append((axis, f"a value is listed twice: {listed}"))
    return listed or [None]


def _span(values: dict[str, Any], problems: list[tuple[str, str]]) -> None:
    """``duration`` (e.g. ``"1d"``) instead of ``end``."""
    duration = values.pop("duration", None)
    if duration is None:
        return
    if "end" in values:
        problems.append(("duration", "give either duration or end, not both"))
        return
    try:
        start = parse_instant(values.get("start", DEFAULT_START))
        values["end"] = start + parse_duration(duration)
    except ValueError as error:
        problems.append(("duration", str(error)))


def _budget_end(values: dict[str, Any], budget: int, scale: Any) -> tuple[int | None, str | None]:
    """End of the span that gives ``budget`` rows per measurement at ``scale`` hosts."""
    if not isinstance(scale, int) or scale < 1:
        return None, None  # RunSpec names the bad scale
    if budget % scale:
        return None, f"row_budget {budget:,} is not a whole number of epochs of {scale:,} hosts"
    try:
        start = parse_instant(values.get("start", DEFAULT_START))
        interval = parse_duration(values.get("interval", DatasetSpec.model_fields["interval"].default))
    except ValueError:
        return None, None  # RunSpec names the bad start or interval
    return start + budget // scale * interval, None


def expand_sweep(params: dict[str, Any], limits: SweepLimits = SweepLimits(), fit: bool = True) -> SweepPlan:
    """Validate ``params`` (RunSpec fields; the axes of ``tsbench.sweep.axes`` may be lists;
    ``duration`` instead of ``end``; ``row_budget`` for cardinality mode) and return the product.
    Raises ``SpecError`` naming every problem — with the axis value that provokes it — and when
    the product is over ``limits`` or, with ``fit``, does not fit its machines (``PlanEstimate.problems``;
    without it the plan is returned to be shown, as ``--plan-only`` does before refusing it)."""
    values = {k: v for k, v in params.items() if v is not None and v != ""}
    problems: list[tuple[str, str]] = []
    axes = {axis: _axis_values(values, axis, problems) for axis in AXIS_NAMES}
    if axes["scales"] == [None]:
        axes["scales"] = [100]
    budget = values.pop("row_budget", None)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        problems.append(("row_budget", f"a whole number of rows ≥ 1 per measurement (got {budget!r})"))
        budget = None
    _span(values, problems)
    if budget is not None and ("end" in values or "duration" in params):
        problems.append(("row_budget", "the row budget sets each scale's span: give no duration or end"))
    varied = [axis for axis in AXIS_NAMES if len(axes[axis]) > 1]
    points = []
    for combination in itertools.product(*(axes[axis] for axis in AXIS_NAMES)):
        chosen = dict(zip(AXIS_NAMES, combination, strict=True))
        point_values = {**values, **{BY_AXIS[k].field: v for k, v in chosen.items() if v is not None}}
        if budget is not None:
            end, problem = _budget_end(values, budget, chosen["scales"])
            if problem:
                _add(problems, (f"scales ({chosen['scales']})", problem))
            if end is not None:
                point_values["end"] = end
        try:
            spec = RunSpec.parse(**point_values)
        except SpecError as error:
            for name, message in error.problems:
                _add(problems, (_axis_field(name, chosen), message))
            continue
        points.append(SweepPoint({axis: chosen[axis] for axis in varied}, spec))
    if problems:
        raise SpecError(problems)
    plan = SweepPlan(points, varied)
    _check_limits(plan, limits, fit)
    return plan


def _axis_field(name: str, chosen: dict[str, Any]) -> str:
    """A RunSpec field's problem named by the axis value that provoked it, e.g. ``workers (0)``."""
    for axis in AXIS_NAMES:
        if name == BY_AXIS[axis].field and chosen[axis] is not None:
            return f"{axis} ({chosen[axis]})"
    return name


def _add(problems: list[tuple[str, str]], entry: tuple[str, str]) -> None:
    if entry not in problems:
        problems.append(entry)


def _check_limits(plan: SweepPlan, limits: SweepLimits, fit: bool) -> None:
    problems = []
    if len(plan.points) > limits.max_points:
        problems.append(("sweep", f"{len(plan.points):,} points exceed the limit of {limits.max_points:,}"))
    if plan.rows_loaded() > limits.max_rows_loaded:
        problems.append(
            ("sweep", f"{plan.rows_loaded():,} rows loaded exceed the limit of {limits.max_rows_loaded:,}")
        )
    if plan.estimated_hours() > limits.max_hours:
        problems.append(
            ("sweep", f"estimated {plan.estimated_hours():,.1f} h exceed the limit of {limits.max_hours:g} h")
        )
    if fit:
        problems.extend(("sweep", problem) for problem in plan.estimate.problems())
    if problems:
        problems.append(("sweep", plan.summary()))
        raise SpecError(problems)


def describe_budget(budget: int, scales: list[int], interval: str = "10s") -> list[str]:
    """One line per scale: the span a row budget gives it (for the plan shown before any work)."""
    step = parse_duration(interval)
    return [f"{s:,} hosts: {budget // s:,} epochs = {format_duration(budget // s * step)}" for s in scales]
