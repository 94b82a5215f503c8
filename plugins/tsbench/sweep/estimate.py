"""A plan's time, disk and memory, stage by stage, from measured costs (``sweep.costs``), carried to
the machine the plan declares (``runtimes.shapes``), and whether it fits there.

Which stages a plan runs: per dataset (points that share one): generation, the oracle's answers and
each target's wire encoding; per point and target: the load (× trials), the queries (every query of
every pass), the live phase (its declared seconds); once: validation and the report, at the point
with the most hosts. Provisioning, settling and teardown are not counted (seconds, not hours).

A query reads a fixed window (an hour to a day) of one, eight or all hosts: its cost is read at the
point's hosts (rows of as many hosts over the measured span), not at its rows — a study of 200
hosts × 90 days queries like 200 hosts, not like 15 M rows. So do validation and the report, which
read the answers and figures (time and memory). Costs were measured on cpu-only rows;
another use case is estimated as if its rows were cpu-only ones, and the stage says so.

Machine rule: the database stages (load, queries) run on the database host, whose server used all
of the measuring machine's cores: on a host with more cores their time is divided by the ratio of
cores (linear in cores — an optimistic bound; ``hours(scaled=False)`` is the time at the measuring
machine's speed, the pessimistic one). The orchestrator's stages (generation, oracle, encoding,
validation, report) run where tsbench runs and are never scaled. Disk class is not scaled: the loads
measured kept the server at 137–196 % of 2 cores (CPU-bound), so a faster disk is not assumed to help.

Disk: the orchestrator keeps every dataset and every target's wire bodies side by side (the cache),
but streamed bodies (``wire_bodies``, from 50 M rows by default) are not kept: their encoding is
counted at its measured time as if it ran alone (on shared cores it slows the load about as much);
each database host holds its target's largest point. On ``local`` and ``docker`` they are one machine.
A target without measured costs is estimated from ``ASSUMED_*`` and says so.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from tsbench.runtimes.select import machine_shape
from tsbench.runtimes.shapes import MachineShape
from tsbench.spec.load_options import encoding_processes_at
from tsbench.sweep.costs import MeasuredCosts, StageCurve, measured_costs
from tsbench.workload.extract import planned_extract

if TYPE_CHECKING:
    from tsbench.spec import RunSpec


class SweepPoint(Protocol):
    """A planned point as the estimate reads it (``sweep.plan.SweepPoint``)."""

    spec: RunSpec

    def label(self) -> str: ...


class SweepPlan(Protocol):
    """A plan as the estimate reads it (``sweep.plan.SweepPlan``; a protocol, so no import cycle)."""

    points: list[Any]

    def dataset_groups(self) -> dict[str, list[Any]]: ...


ASSUMED_ROWS_PER_S = 100_000  # per target, load, where no load of it was measured
ASSUMED_STORED_BYTES_PER_ROW = 470  # the largest footprint per cpu row measured (PostgreSQL, 10 M rows)
DISK_HEADROOM = 0.9  # a plan may fill this share of the free disk at most
SHARE = f"{DISK_HEADROOM * 100:.0f} %"


@dataclass(frozen=True)
class StageEstimate:
    """One stage of the plan: seconds at the measuring machine's speed and on the declared machine,
    the orchestrating process's peak RSS during it, bytes it leaves stored, and where they came from."""

    stage: str
    where: str  # "orchestrator" or "database host"
    seconds: float
    scaled_seconds: float
    peak_rss_bytes: float
    stored_bytes: float
    source: str
    point: str = ""  # the point's label (dataset stages: the first point that uses the dataset)


def _target(instance: str) -> str:
    """The target whose costs an instance uses: ``influxdb@1.13.2`` → ``influxdb`` (its pin's)."""
    return instance.split("@", 1)[0]


class PlanEstimator:
    """Estimates a plan's stages from ``costs`` for the databases' machine ``host``."""

    def __init__(self, costs: MeasuredCosts, host: MachineShape) -> None:
        self.costs, self.host = costs, host
        self.speedup = 1.0
        measured_cores = next(iter(costs.stages.values())).measurement.cores if costs.stages else None
        if host.cores and measured_cores and host.cores > measured_cores:
            self.speedup = host.cores / measured_cores

    def _stage(self, name: str, curve: StageCurve | None, rows: int, times: float = 1.0) -> StageEstimate:
        """An orchestrator stage: ``times`` × its measured wall at ``rows``; a missing curve costs 0."""
        if curve is None:
            return StageEstimate(name, "orchestrator", 0.0, 0.0, 0.0, 0.0, "not measured")
        seconds = curve.at("wall_s", rows) * times
        stored = curve.at("stored_bytes", rows) if curve.has("stored_bytes") else 0.0
        rss = curve.at("peak_rss_bytes", rows) if curve.has("peak_rss_bytes") else 0.0
        return StageEstimate(name, "orchestrator", seconds, seconds, rss, stored, curve.source(rows))

    def _database(self, name: str, seconds: float, stored: float, rss: float, source: str) -> StageEstimate:
        return StageEstimate(name, "database host", seconds, seconds / self.speedup, rss, stored, source)

    def dataset_stages(self, spec: RunSpec) -> Iterator[StageEstimate]:
        """Generation, the oracle (per query) and each target's wire encoding, once per dataset."""
        rows = kept = spec.rows_total
        generate = self._stage(f"generate {rows:,} rows", self.costs.stage("generate"), rows)
        if spec.streams_dataset:  # the extract its queries read is stored, not the rows
            kept = planned_extract(spec)[1]
            stored = self._stage("", self.costs.stage("generate"), kept).stored_bytes
            generate = replace(generate, stage=f"{generate.stage}, keep {kept:,}", stored_bytes=stored)
        yield generate
        oracle = self.costs.stage("oracle")
        queries = len(spec.resolved_query_types) * spec.queries_per_type
        if oracle and queries:
            per_query = queries / oracle.measurement.workload.queries
            yield self._stage(f"oracle, {queries:,} queries", oracle, kept, per_query)
        for target in dict.fromkeys(_target(t) for t in spec.targets):
            encode = self.costs.stage(f"encode {target}")
            if encode and spec.streams_wire_bodies:  # during the load, as long as alone, nothing kept
                stage = self._stage(f"stream {target}'s wire bodies", encode, rows)
                yield replace(stage, stored_bytes=0.0)
            elif encode:
                yield self._stage(f"encode {target}'s wire bodies", encode, rows)

    def target_stages(self, spec: RunSpec, instance: str) -> Iterator[StageEstimate]:
        """One target's load (× trials), queries and live phase at one point."""
        rows, target = spec.rows_total, _target(instance)
        load, task = self.costs.stage(f"load {target}"), self.costs.stage(f"load task {target}")
        rss = task.at("peak_rss_bytes", rows) if task else 0.0
        if load:
            seconds = load.at("wall_s", rows) * spec.trials
            stored = load.at("stored_bytes", rows)
            yield self._database(f"load {instance} × {spec.trials}", seconds, stored, rss, load.source(rows))
        else:
            seconds = rows / ASSUMED_ROWS_PER_S * spec.trials
            stored = rows * ASSUMED_STORED_BYTES_PER_ROW
            source = (
                f"assumed ({ASSUMED_ROWS_PER_S:,} rows/s, {ASSUMED_STORED_BYTES_PER_ROW} B/row): not measured"
            )
            yield self._database(f"load {instance} × {spec.trials}", seconds, stored, rss, source)
        if spec.streams_dataset:
            yield self._regeneration(spec, instance)
        yield from self._queries(spec, instance)
        if spec.live_seconds:
            yield self._database(f"live {instance}", spec.live_seconds, 0.0, rss, "its declared seconds")

    def _regeneration(self, spec: RunSpec, instance: str) -> StageEstimate:
        """A streamed dataset generated again for each load trial, by each process that reads it
        (every wire encoder, streamed or cached, or the load itself), as if alone (it shares the
        load's cores), nothing kept."""
        rows, target = spec.rows_total, _target(instance)
        readers = encoding_processes_at(rows) if self.costs.stage(f"encode {target}") else 1
        times = spec.trials * readers
        name = f"regenerate for {instance}'s load × {times}"
        stage = self._stage(name, self.costs.stage("generate"), rows, times)
        return replace(stage, stored_bytes=0.0)

    def _queries(self, spec: RunSpec, instance: str) -> Iterator[StageEstimate]:
        executions = len(spec.resolved_query_types) * spec.queries_per_type * (1 + spec.hot_runs)
        if not executions:
            return
        target = _target(instance)
        curve = self.costs.stage(f"queries {target}") or self._slowest_queries(spec.rows_total)
        if curve is None:
            return
        measured = curve.measurement.workload
        rows = spec.scale * measured.rows_per_entity  # the rows of the point's hosts over the measured span
        task = self.costs.stage(f"queries task {target}")
        rss = task.at("peak_rss_bytes", rows) if task else 0.0
        per = executions / (measured.queries * measured.query_passes)
        source = curve.source(rows) + (
            "" if curve.name.endswith(target) else f" (as {curve.name}: {target} not measured)"
        )
        seconds = curve.at("wall_s", rows) * per
        yield self._database(f"queries {instance}, {executions:,} runs", seconds, 0.0, rss, source)

    def _slowest_queries(self, rows: int) -> StageCurve | None:
        curves = [
            c for name, c in self.costs.stages.items() if name.startswith("queries ") and " task " not in name
        ]
        return max(curves, key=lambda c: c.at("wall_s", rows), default=None)

    def labelled(
        self, point: SweepPoint, stages: Iterator[StageEstimate], label: str = ""
    ) -> Iterator[StageEstimate]:
        """``stages`` with their point's label, and a note where its use case is not the measured one."""
        measured = next(iter(self.costs.stages.values())).measurement.workload.use_case
        note = (
            "" if point.spec.use_case == measured else f"; as {measured} rows (this is {point.spec.use_case})"
        )
        for stage in stages:
            yield replace(
                stage, point=label or point.label(), source=stage.source + (note if stage.seconds else "")
            )

    def run_stages(self, spec: RunSpec) -> Iterator[StageEstimate]:
        """Validation and the report, once, at the point with the most hosts: they read the run's
        answers and figures, which grow with the hosts a query reads (as the queries do), not rows;
        a load-only run has no answers, and they are read at its rows."""
        for name in ("validate", "report"):
            curve = self.costs.stage(name)
            if curve is None or not spec.queries_per_type:
                rows = spec.rows_total
            else:
                rows = spec.scale * curve.measurement.workload.rows_per_entity
            yield self._stage(name, curve, rows)


def estimate_stages(plan: SweepPlan, estimator: PlanEstimator) -> list[StageEstimate]:
    """Every stage of ``plan`` (the module docstring says which), each with its point's label."""
    stages: list[StageEstimate] = []
    for group in plan.dataset_groups().values():
        stages.extend(estimator.labelled(group[0], estimator.dataset_stages(group[0].spec)))
    for point in plan.points:
        for instance in point.spec.targets:
            stages.extend(estimator.labelled(point, estimator.target_stages(point.spec, instance)))
    widest = max(plan.points, key=lambda p: p.spec.scale)
    stages.extend(estimator.labelled(widest, estimator.run_stages(widest.spec), "the run"))
    return stages


@dataclass(frozen=True)
class PlanEstimate:
    """A plan's stages on its declared database host, and the orchestrator it is planned on."""

    host: MachineShape
    orchestrator: MachineShape
    shared: bool  # the databases run on the orchestrator's machine (local, docker)
    parallel_hosts: int  # database hosts measuring at once (aws: max_parallel_hosts)
    speedup: float  # the database stages' time on the host = at the measuring machine's speed ÷ this
    stages: list[StageEstimate]

    def _seconds(self, where: str, scaled: bool = True) -> float:
        return sum(s.scaled_seconds if scaled else s.seconds for s in self.stages if s.where == where)

    def host_hours(self, scaled: bool = True) -> float:
        """Hours the database hosts work, summed over hosts (what a cloud bill counts)."""
        return self._seconds("database host", scaled) / 3600

    def hours(self, scaled: bool = True) -> float:
        """Wall hours: the orchestrator's stages, then the database stages ``parallel_hosts`` at a time."""
        return (
            self._seconds("orchestrator") + self._seconds("database host", scaled) / self.parallel_hosts
        ) / 3600

    def orchestrator_disk_bytes(self) -> float:
        """Every dataset, its reference answers and every target's wire bodies, kept side by side."""
        return sum(s.stored_bytes for s in self.stages if s.where == "orchestrator")

    def host_disk_bytes(self) -> float:
        """The most one database holds: its largest point (one target at a time per host)."""
        return max((s.stored_bytes for s in self.stages if s.where == "database host"), default=0.0)

    def peak_rss_bytes(self) -> float:
        return max((s.peak_rss_bytes for s in self.stages), default=0.0)

    def problems(self) -> list[str]:
        """Why the plan does not fit its machines, with the numbers (empty: it fits)."""
        found, gb = [], 1e9
        host_need = self.host_disk_bytes() + (self.orchestrator_disk_bytes() if self.shared else 0)
        if host_need > DISK_HEADROOM * self.host.disk_bytes:
            what = "datasets, wire bodies and the largest database" if self.shared else "the largest database"
            found.append(
                f"disk: {what} need ~{host_need / gb:,.1f} GB, more than {SHARE} of "
                f"{self.host.disk_bytes / gb:,.1f} GB ({self.host.disk_what} on {self.host.what})"
            )
        if not self.shared and self.orchestrator_disk_bytes() > DISK_HEADROOM * self.orchestrator.disk_bytes:
            need, free = self.orchestrator_disk_bytes() / gb, self.orchestrator.disk_bytes / gb
            found.append(
                f"disk: the datasets and wire bodies need ~{need:,.1f} GB on the orchestrator, more than "
                f"{SHARE} of {free:,.1f} GB ({self.orchestrator.disk_what} on this machine)"
            )
        memory = self.orchestrator.memory_bytes
        if memory and self.peak_rss_bytes() > memory:
            found.append(
                f"memory: the orchestrating process peaks at ~{self.peak_rss_bytes() / 2**30:,.1f} GiB, more "
                f"than {self.orchestrator.what} has"
            )
        return found


def estimate_plan(plan: SweepPlan, costs: MeasuredCosts | None = None) -> PlanEstimate:
    """``plan``'s estimate: its stages on the declared host, checked against it and this machine."""
    from tsbench.runtimes.shapes import this_machine
    from tsbench.workload.dataset import cache_dir

    spec = plan.points[0].spec
    host = machine_shape(spec)
    estimator = PlanEstimator(costs or measured_costs(), host)
    shared = spec.runtime != "aws"
    parallel = min(spec.aws.max_parallel_hosts if not shared else 1, len(spec.targets))
    here = this_machine(cache_dir())
    return PlanEstimate(host, here, shared, parallel, estimator.speedup, estimate_stages(plan, estimator))
