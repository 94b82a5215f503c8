"""The phases of one target over one server group: the points of a comparison that load the same
dataset and differ only in client settings (workers, batch size, trials), so one server per target
measures them in turn — a worker sweep does not re-provision. A plain comparison's groups have one
point each, and then every phase is exactly ``TargetPhases``'.

Phase by phase, in ``PHASES`` order; which points run a phase is declared with it
(``tsbench.run.phases``: ``Phase.points``, ``Phase.before_later_points``):

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

from collections.abc import Sequence
from pathlib import Path

from tsbench.results.folder import TARGETS, is_answers_file
from tsbench.results.record import Record
from tsbench.results.workspace import Part
from tsbench.run.phases import BY_NAME, SHARED_KEY, reads_answers
from tsbench.run.target_phases import TargetPhases
from tsbench.runtimes.base import Runtime
from tsbench.runtimes.select import RuntimeOptions


def branch_part(points: Sequence[str], target: str, phases: Sequence[str]) -> Part:
    """What a step of ``target`` running ``phases`` opens of its run folder: its points' folders
    but the other targets' folders in them, and but the reference answers unless a phase reads them."""
    answers_needed = reads_answers(list(phases))

    def leaves_out(relative: str) -> bool:
        if is_answers_file(relative):
            return not answers_needed
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
        runtime_options: RuntimeOptions | None = None,
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

    def write(self, record: Record) -> None:
        """The same record into every point (e.g. the lease the branch took)."""
        for point in self.points:
            point.write(record)

    def run_phase(self, name: str) -> Record:
        """Run phase ``name`` over the group, on the points its declaration names (see the module
        docstring); returns the record of the first point that ran it. A failure is recorded in
        every point, then raised."""
        declared = BY_NAME[name]
        current = self.first
        try:
            if declared.points != "each":
                return self._once(name, self.first if declared.points == "first" else self.points[-1])
            records: list[Record] = []
            for index, point in enumerate(self.points):
                current = point
                if declared.before_later_points and index > 0:
                    point.run_phase(declared.before_later_points)
                records.append(point.run_phase(name))
            return records[0]
        except BaseException as error:  # also an interruption, recorded before it unwinds
            self.fail(name, error, current)
            raise

    def _once(self, name: str, runner: TargetPhases) -> Record:
        """``name`` on one point; the others get its record, naming that point (``SHARED_KEY``)."""
        record = runner.run_phase(name)
        if len(self.points) > 1:
            points = BY_NAME[name].points
            key = SHARED_KEY[points]
            for point in self.points:  # the last point's record names who loaded, on it too
                if point is not runner or points == "last":
                    point.write(record, phase=name, **{key: runner.run_dir.name})
        return record

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
