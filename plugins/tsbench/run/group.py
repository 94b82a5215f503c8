"""The phases of one target over one server group: the points of a comparison that load the same
dataset and differ only in client settings (workers, batch size, trials), so one server per target
measures them in turn — a worker sweep does not re-provision. A plain comparison's groups have one
point each, and then every phase is exactly ``TargetPhases``'.

Phase by phase (the DAG's branch tasks and the command line run them in ``PHASES`` order):

* ``provision``: once, on the first point; every other point gets a copy of its record with
  ``shared_from`` (the point that provisioned).
* ``prepare``, ``load``: per point, in order; every load trial goes into a freshly created schema,
  so each point loads the whole dataset with its own client settings and a retry never
  double-loads.
* ``settle``: once, on the data as the group's last point loaded it (every point loads the same
  rows); every point gets the footprint with ``loaded_by``.
* ``cache_reset``, ``queries``: the first point's cold restart is the ``cache_reset`` phase; every
  later point restarts cold again right before its own query passes (its own ``cache_reset.json``).
* ``teardown``: once; every point gets the record.

A point that fails fails its phase; the group's other points are recorded as failed in the same
phase, naming the point that failed (they cannot be measured on without it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tsbench.results.workspace import Part
from tsbench.run.target_phases import READS_ANSWERS, TARGETS, TargetPhases
from tsbench.runtimes.base import Runtime
from tsbench.workload.answer_file import is_answers_file

ONCE = ("provision", "teardown")  # run on the first point; the others get its record, ``shared_from``


def branch_part(points: Sequence[str], target: str, phases: Sequence[str]) -> Part:
    """What a step of ``target`` running ``phases`` opens of its run folder: its points' folders
    but the other targets' folders in them, and but the reference answers unless a phase reads them."""
    reads_answers = any(phase in READS_ANSWERS for phase in phases)

    def leaves_out(relative: str) -> bool:
        if is_answers_file(relative):
            return not reads_answers
        parts = relative.split("/")  # point / file, or point / TARGETS / target / file
        return len(parts) > 3 and parts[1] == TARGETS and parts[2] != target

    return Part(tuple(points), leaves_out)


class GroupPhases:
    """One target's phases over the points (run folders, in order) of one server group."""

    def __init__(
        self,
        run_dirs: Sequence[Path],
        name: str,
        runtime: Runtime | None = None,
        runtime_options: Mapping[str, Any] | None = None,
    ):
        if not run_dirs:
            raise ValueError("a server group needs at least one point")
        self.name = name
        self.points = [TargetPhases(Path(d), name, runtime, runtime_options) for d in run_dirs]
        instances = {p.instance for p in self.points}
        if len(instances) != 1:
            raise ValueError(f"points of different server groups in one group: {sorted(instances)}")

    @property
    def first(self) -> TargetPhases:
        return self.points[0]

    @property
    def dir(self) -> Path:
        """The first point's target folder (where a branch keeps its own bookkeeping)."""
        return self.first.dir

    def write(self, phase: str, body: Mapping[str, Any]) -> None:
        """The same record into every point (e.g. ``acquire_machine``)."""
        for point in self.points:
            point.write(phase, body)

    def run_phase(self, name: str) -> dict[str, Any]:
        """Run phase ``name`` over the group (see the module docstring); returns the first point's
        record. A failure is recorded in every point, then raised."""
        current = self.first
        try:
            if name in ONCE:
                return self._once(name)
            if name == "settle":
                return self._settle()
            first_body: dict[str, Any] = {}
            for index, point in enumerate(self.points):
                current = point
                if name == "queries" and index > 0:
                    point.run_phase("cache_reset")
                body = point.run_phase(name)
                first_body = first_body or body
            return first_body
        except BaseException as error:  # also an interruption, recorded before it unwinds
            self.fail(name, error, current)
            raise

    def _once(self, name: str) -> dict[str, Any]:
        body = self.first.run_phase(name)
        for point in self.points[1:]:
            point.write(name, {**body, "shared_from": self.first.run_dir.name})
        return body

    def _settle(self) -> dict[str, Any]:
        last = self.points[-1]
        body = last.run_phase("settle")
        if len(self.points) > 1:
            for point in self.points:
                point.write("footprint", {**body, "loaded_by": last.run_dir.name})
        return body

    def fail(self, phase: str, error: BaseException, failed: TargetPhases | None = None) -> None:
        """``failed`` (default: the first point) records ``error``; the group's other points record
        that they could not be measured without it."""
        failed = failed or self.first
        failed.fail(phase, error)
        for point in self.points:
            if point is not failed:
                point.fail(
                    phase, RuntimeError(f"point {failed.run_dir.name} of this server group failed: {error}")
                )
