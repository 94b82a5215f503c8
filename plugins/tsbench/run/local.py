"""The pipeline in one process (what ``python -m tsbench run`` does): the steps of
``tsbench.run.pipeline.STEPS`` in their order — validate_params, every point step over every point,
every branch (server group × target, ``tsbench.run.group``) with its phases one after another,
then collect → validate → report → publish → verdict. As in the DAG, a failing branch only fails
itself (recorded with its phase and reason, teardown always runs) and the post-run steps run
anyway; the verdict comes last.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tsbench.memory import release_freed_memory
from tsbench.run.branch import BranchItem, BranchRun
from tsbench.run.comparison import PlannedPoint, branch_label, point_dir, read_plan, server_groups
from tsbench.run.pipeline import ComparisonFailed, Publication, Step, plan_run, steps
from tsbench.run.point_setup import prepare_dataset, prepare_oracle
from tsbench.runtimes.base import Runtime
from tsbench.runtimes.select import RuntimeOptions
from tsbench.studies import Study
from tsbench.sweep.plan import SweepLimits

log = logging.getLogger("tsbench.run")


@dataclass
class LocalRun:
    """One comparison run in this process. ``runtime``: every server's (None: the spec's, built
    by ``runtime_for`` with ``runtime_options``); ``on_step(step, label)`` hears every step as it
    starts (``label``: the scale or branch, empty for run-wide steps)."""

    folder: Path
    dataset_cache: Path | None = None
    runtime: Runtime | None = None
    runtime_options: RuntimeOptions | None = None
    publication: Publication = field(default_factory=Publication)
    limits: SweepLimits | None = None  # a sweep's limits (None: SweepLimits())
    study: Study | None = None  # the study, when the run is one (``tsbench study``)
    on_step: Callable[[str, str], None] = lambda step, label: None
    outcomes: dict[str, Any] = field(default_factory=dict)

    def run(self, params: dict[str, Any]) -> list[str]:
        """Every step in order; returns the verdict's problems (empty: the comparison passed).
        SpecError (naming every bad field) before any work when ``params`` are invalid."""
        (validate_params,) = steps("run")
        self._starting(validate_params.name, "")
        plan_run(params, self.folder, self.limits, self.study)
        _, points = read_plan(self.folder)
        for step in steps("point"):
            for point in points:
                self._starting(step.name, point.name)
                self._point_step(step, point, point_dir(self.folder, point.name))
        for group in server_groups(points):
            for target in group[0].spec.targets:
                self._branch(group, target)
        return self._post_run()

    def _starting(self, step: str, label: str) -> None:
        """Before each step: what the last one freed goes back to the system (one process runs
        them all, so it would keep every step's high-water mark), then ``on_step``."""
        release_freed_memory()
        self.on_step(step, label)

    def _point_step(self, step: Step, point: PlannedPoint, run_dir: Path) -> None:
        if step.name != "dataset":
            raise LookupError(f"no in-process form of the point step {step.name}")
        prepare_dataset(point.spec, run_dir, self.dataset_cache, point.facts)
        prepare_oracle(run_dir)

    def _branch(self, points: list[PlannedPoint], target: str) -> bool:
        """Every branch step of one target over one server group (``BranchRun.run_all``); returns
        True when it succeeded."""
        names = tuple(point.name for point in points)
        label = branch_label([Path(name) for name in names], target)
        item = BranchItem(folder=str(self.folder), points=names, target=target, label=label)
        branch = BranchRun(self.folder, item, self.runtime, self.runtime_options, process_bound=True)
        return branch.run_all(steps("branch"), lambda step: self._starting(step, label))

    def _post_run(self) -> list[str]:
        """Every post-run step, each also after an earlier one failed (as ``all_done`` tasks do);
        a failed step is one more problem for the verdict."""
        problems: list[str] = []
        for step in steps("post"):
            self._starting(step.name, "")
            assert step.call is not None
            try:
                self.outcomes[step.name] = step.call(self.folder, self.publication)
            except ComparisonFailed as failed:
                problems += failed.problems
            except Exception as error:
                log.exception("step %s failed", step.name)
                problems.append(f"step {step.name} failed: {type(error).__name__}: {error}")
        return problems
