"""The pipeline in one process (what ``python -m tsbench run`` does): the steps of
``tsbench.run.pipeline.STEPS`` in their order — validate_params, every point step over every point,
every branch (server group × target, ``tsbench.run.group``) with its phases one after another,
then collect → validate → report → publish → verdict. As in the DAG, a failing branch only fails
itself (recorded with its phase and reason, teardown always runs) and the post-run steps run
anyway; the verdict comes last.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tsbench.memory import release_freed_memory
from tsbench.run.comparison import PlannedPoint, branch_label, point_dir, read_plan, server_groups
from tsbench.run.group import GroupPhases
from tsbench.run.lease import HostLeases, MachineLease, describe, wait_limit_s
from tsbench.run.pipeline import ComparisonFailed, Publication, Step, plan_run, steps
from tsbench.run.point_setup import prepare_dataset, prepare_oracle
from tsbench.run.sweep import SweepLimits
from tsbench.runtimes.base import Runtime
from tsbench.runtimes.select import host_lease_keys
from tsbench.studies import Study

log = logging.getLogger("tsbench.run")


@dataclass
class LocalRun:
    """One comparison run in this process. ``runtime``: every server's (None: the spec's, built
    by ``runtime_for`` with ``runtime_options``); ``on_step(step, label)`` hears every step as it
    starts (``label``: the scale or branch, empty for run-wide steps)."""

    folder: Path
    dataset_cache: Path | None = None
    runtime: Runtime | None = None
    runtime_options: Mapping[str, Any] = field(default_factory=dict)
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
                self._branch([point_dir(self.folder, p.name) for p in group], target)
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

    def _branch(self, run_dirs: list[Path], target: str) -> bool:
        """Every branch step of one target over one server group; returns True when it succeeded.
        Teardown always runs (and gives the machine lease back) once the lease was taken."""
        label = branch_label(run_dirs, target)
        phases = GroupPhases(run_dirs, target, self.runtime, self.runtime_options)
        owner = f"{label} @ {run_dirs[0]}"
        first = phases.first
        leases = HostLeases.at(host_lease_keys(first.spec, first.run["run_id"]), process_bound=True)
        lease = leases.leases[0]
        branch = steps("branch")
        teardown = next(step for step in branch if step.teardown)
        name, acquired = branch[0].name, False
        try:
            for step in branch:
                if step.teardown:
                    continue
                name = step.name
                self._starting(name, label)
                if name == "acquire_machine":
                    lease = self._acquire(leases, owner, phases)
                    acquired = True
                    continue
                with lease.keep_alive(owner):
                    for phase in step.phases:
                        phases.run_phase(phase)
            return True
        except Exception as error:
            if name == "acquire_machine":
                phases.fail(name, error)  # the measured phases record their own failures
            return False
        finally:
            if acquired:  # no teardown follows a failed acquire (nothing was set up)
                self._teardown(phases, teardown, label, lease, owner)

    def _acquire(self, leases: HostLeases, owner: str, phases: GroupPhases) -> MachineLease:
        def waiting(holder: dict[str, Any] | None, waited_s: float) -> None:
            log.info("machine busy (%.0f s so far): %s", waited_s, describe(holder))

        lease, waited = leases.acquire(owner, wait_limit_s(), on_wait=waiting)
        phases.write("acquire_machine", {"waited_s": waited, "lease": lease.key})
        return lease

    def _teardown(self, phases: GroupPhases, step: Step, label: str, lease: MachineLease, owner: str) -> None:
        self._starting(step.name, label)
        try:
            phases.run_phase(step.name)
        except Exception:  # recorded by the phase; the other branches and the report go on
            log.exception("teardown of %s failed", label)
        finally:
            lease.release(owner)

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
