"""A comparison: one run id, one or more points (a point per scale, or per point of a sweep), each
point a folder of the run (``tsbench.results.folder``: the layout), planned before any work
(``plan.json``) and collected at the end (``comparison.json``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tsbench.results.documents import point_order
from tsbench.results.folder import PLAN, SCALE_PREFIX, RunFolder
from tsbench.results.model import Comparison, Plan, PointFacts
from tsbench.results.workspace import Part
from tsbench.run.collect import collect
from tsbench.spec import RunSpec
from tsbench.studies import Study
from tsbench.sweep.plan import SweepLimits, SweepPlan, expand_sweep
from tsbench.timeutil import format_instant


def scale_dir(folder: Path, scale: int) -> Path:
    """The point folder of a plain comparison's scale (a sweep's points: ``point_dir``)."""
    return RunFolder(folder).point(f"{SCALE_PREFIX}{scale}").path


def point_dir(folder: Path, point: str) -> Path:
    return RunFolder(folder).point(point).path


def point_part(point: str) -> Part:
    """What a point's steps (dataset, oracle) open of the run folder in the run store: the plan
    and the point's own folder, not the other points' (their reference answers are over a GB
    each at 4,000 hosts)."""
    return Part((PLAN, point))


def point_key(run_dir: Path) -> str:
    """A point's key in ``comparison.json``: its folder name without ``scale-`` (``"100"`` for a
    plain comparison's scale, as before sweeps; ``"100_workers-4"`` for a sweep's point)."""
    return run_dir.name.removeprefix(SCALE_PREFIX)


def plan_comparison(params: dict[str, Any], limits: SweepLimits | None = None) -> SweepPlan:
    """The validated points of pipeline parameters (``tsbench.sweep.plan.expand_sweep``): RunSpec
    fields, ``scales`` instead of ``scale``, ``duration`` instead of ``end``, the sweep axes as
    lists, ``row_budget``. SpecError naming every problem of every point at once, and when the
    sweep is over ``limits`` (default ``SweepLimits()``)."""
    return expand_sweep(params, limits or SweepLimits())


def parse_comparison(params: dict[str, Any]) -> list[RunSpec]:
    """The RunSpec of every point of ``plan_comparison(params)``, in order."""
    return [point.spec for point in plan_comparison(params).points]


@dataclass(frozen=True)
class PlannedPoint:
    """One point as ``plan.json`` keeps it: which point it is (folder name, the sweep axes' values
    that vary, label, server group) and its RunSpec."""

    facts: PointFacts
    spec: RunSpec

    @property
    def name(self) -> str:
        return self.facts.name


def write_plan(folder: Path, plan: SweepPlan, study: Study | None = None) -> Plan:
    """``plan.json`` (atomically): the points in order, the axes that vary, the plan's summary and
    the study the run is an instance of (the whole study file as read when the run was planned, so
    its report checks the claims of that moment; None for an ad-hoc run)."""
    groups = plan.server_group_of()
    record = Plan(
        format="tsbench-plan/2",
        run_id=folder.name,
        created_at=format_instant(time.time_ns()),
        scales=list(dict.fromkeys(point.spec.scale for point in plan.points)),
        targets=plan.points[0].spec.targets,
        varied=plan.varied,
        study=study.model_dump(mode="json") if study is not None else None,
        summary=plan.summary(),
        points=[
            PointFacts(name=p.name, axes=p.axes, label=p.label(), server_group=groups[p.name])
            for p in plan.points
        ],
        specs={point.name: point.spec.model_dump() for point in plan.points},
    )
    RunFolder(folder).write_plan(record)
    return record


def read_plan(folder: Path) -> tuple[Plan, list[PlannedPoint]]:
    """``plan.json`` and its points with their RunSpecs, in order."""
    plan = RunFolder(folder).read_plan()
    return plan, [PlannedPoint(p, RunSpec.parse(**plan.specs[p.name])) for p in plan.points]


def server_groups(points: list[PlannedPoint]) -> list[list[PlannedPoint]]:
    """The plan's points by server group, in the order the groups first appear."""
    groups: dict[str, list[PlannedPoint]] = {}
    for point in points:
        groups.setdefault(point.facts.server_group, []).append(point)
    return list(groups.values())


def branch_label(run_dirs: list[Path], target: str) -> str:
    """``scale-100 × questdb``; a server group of several points: ``scale-100_workers-1 … +2 × questdb``."""
    more = f" … +{len(run_dirs) - 1}" if len(run_dirs) > 1 else ""
    return f"{Path(run_dirs[0]).name}{more} × {target}"


def point_folders(folder: Path) -> list[Path]:
    """The point folders of a comparison, by scale then by each axis value (``point_order``)."""
    return sorted((point.path for point in RunFolder(folder).points()), key=lambda p: point_order(p.name))


def collect_comparison(folder: Path) -> Comparison:
    """Collect every point folder and write ``comparison.json`` (atomically); returns it."""
    results = {point_key(path): collect(path) for path in point_folders(folder)}
    failed = sorted(
        {name for result in results.values() for name, body in result.targets.items() if body.status != "ok"}
    )
    first = next(iter(results.values()), None)
    spec = first.spec if first is not None else {}
    run = RunFolder(folder)
    plan = run.read_plan() if run.has_plan() else Plan()
    comparison = Comparison(
        format="tsbench-comparison/1",
        run_id=folder.name,
        created_at=first.written("created_at") if first is not None else None,
        finished_at=format_instant(time.time_ns()),
        use_case=spec.get("use_case"),
        targets=spec.get("targets", []),
        scales=sorted({result.spec["scale"] for result in results.values()}),
        varied=plan.varied,
        study=(plan.study or {}).get("name"),
        failed_targets=failed,
        results=results,
    )
    run.write_comparison(comparison)
    return comparison
