"""A branch's execution, written once: the DAG's tasks call its steps one per task, the command line
calls ``run_all``. A branch is one server group of points × one target (``tsbench.run.group``).

Exclusivity: one branch measures on a benchmark host at a time. ``acquire`` takes one of the
branch's host leases (``tsbench.run.lease``; ``runtimes.select.host_lease_keys``) and records which
(``LeaseTaken``); every step beats that lease while it runs, and a step whose lease was taken over
fails (``LeaseLost``) rather than measure beside another branch; ``teardown`` runs always and gives
the lease back, whatever happened. A failure is recorded in the run folder (with its phase and
reason) before it is raised, so the report shows it and the other branches go on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tsbench.results.folder import PointFolder, RunFolder
from tsbench.results.model import LeaseTaken
from tsbench.results.record import Record
from tsbench.results.workspace import Part
from tsbench.run.group import GroupPhases, branch_part
from tsbench.run.lease import Holder, HostLeases, MachineLease, Waiting, describe, lease_at, wait_limit_s
from tsbench.run.phases import ACQUIRE_RECORD, PHASE_NAMES, step_name
from tsbench.run.pipeline import Step
from tsbench.runtimes.base import Runtime
from tsbench.runtimes.select import RuntimeOptions, host_lease_keys
from tsbench.timeutil import format_instant

log = logging.getLogger("tsbench.run")
# How a branch waits for its lease: given the leases, the owner and a reporter of the wait, the
# lease taken and the seconds waited (``block`` by default; the DAG's in-process test loop hands
# its turn back instead while the holder is its own process).
Wait = Callable[[HostLeases, str, Waiting], tuple[MachineLease, float]]


class BranchItem(BaseModel):
    """One branch of a planned run: its run folder (a local folder or a run store URL, never a
    worker's scratch path), its points (folder names, in order), its target and a label for
    people (``scale-100 × questdb``). The DAG hands it from task to task as JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    folder: str
    points: tuple[str, ...]
    target: str
    label: str

    @property
    def owner(self) -> str:
        """Who holds the machine lease while this branch measures."""
        return f"{self.label} @ {self.folder}"

    def part(self, phases: tuple[str, ...] = ()) -> Part:
        """What a step running ``phases`` opens of the run folder (``group.branch_part``)."""
        return branch_part(self.points, self.target, phases)


def block(leases: HostLeases, owner: str, waiting: Waiting) -> tuple[MachineLease, float]:
    """Wait (polling) until ``owner`` holds one of ``leases``, up to ``wait_limit_s``."""
    return leases.acquire(owner, wait_limit_s(), on_wait=waiting)


def log_waiting(holder: Holder | None, waited_s: float) -> None:
    log.info("machine busy (%.0f s so far): %s", waited_s, describe(holder))


class BranchRun:
    """One branch over a local copy of its run folder (``folder``). ``runtime``: every server's
    (None: the spec's, built with ``runtime_options``). ``process_bound``: the lease dies with this
    process (the command line's run; a DAG branch spans several task processes)."""

    def __init__(
        self,
        folder: Path,
        item: BranchItem,
        runtime: Runtime | None = None,
        runtime_options: RuntimeOptions | None = None,
        process_bound: bool = False,
    ):
        self.item = item
        self.run_folder = RunFolder(folder)
        points = [self.run_folder.point(name).path for name in item.points]
        self.phases = GroupPhases(points, item.target, runtime, runtime_options)
        self.process_bound = process_bound

    @property
    def first_point(self) -> PointFolder:
        return self.phases.first.point

    def leases(self) -> HostLeases:
        """The leases this branch may take: this machine's, or its run's aws host slots."""
        first = self.phases.first
        keys = host_lease_keys(first.spec, first.run.run_id)
        return HostLeases.at(keys, process_bound=self.process_bound)

    def held_lease(self) -> MachineLease:
        """The lease ``acquire`` took for this branch (its record names the host key)."""
        taken = self.phases.first.folder.read(LeaseTaken)
        return lease_at(taken.lease if taken else None, process_bound=self.process_bound)

    def acquire(self, wait: Wait = block, passes: tuple[type[BaseException], ...] = ()) -> float:
        """Take one of the branch's leases (``wait``: how) and record it in every point; returns the
        seconds waited. A failure gives back whatever was taken and is recorded, then raised;
        ``passes``: exceptions that only hand the turn back (not a failure)."""
        leases, owner = self.leases(), self.item.owner
        try:
            lease, waited = wait(leases, owner, log_waiting)
        except passes:
            raise
        except Exception as error:
            for each in leases.leases:  # no teardown follows a failed setup
                each.release(owner)
            self.phases.fail(ACQUIRE_RECORD.FILE, error)  # type: ignore[attr-defined]
            raise
        taken_at = format_instant(time.time_ns())
        self.phases.write(LeaseTaken(waited_s=waited, lease=lease.key, taken_at=taken_at))
        log.info("lease %s taken by %s after %.1f s", lease.where, self.item.label, waited)
        return waited

    def run_step(self, phases: tuple[str, ...]) -> Record:
        """The step's phases in order while beating the held lease; returns the record of the
        step's own phase (``phases.step_name``). A failure is recorded by the phase, then raised."""
        with self.held_lease().keep_alive(self.item.owner):
            records = {name: self.phases.run_phase(name) for name in phases}
        return records[step_name(phases)]

    def teardown(self) -> Record:
        """The teardown phase (also when the lease was lost), then the lease given back."""
        lease = self.held_lease()
        try:
            return self.phases.run_phase(PHASE_NAMES[-1])
        finally:
            lease.release(self.item.owner)

    def run_all(self, steps: Sequence[Step], on_step: Callable[[str], None]) -> bool:
        """Every branch step in order (``pipeline.steps("branch")``), each announced to ``on_step``;
        the teardown runs always once the lease was taken. True when the branch succeeded."""
        teardown = next(step for step in steps if step.teardown)
        acquired = False
        try:
            for step in steps:
                if step.teardown:
                    continue
                on_step(step.name)
                if step.phases:
                    self.run_step(step.phases)
                else:
                    self.acquire()
                    acquired = True
            return True
        except Exception:  # recorded in the run folder by the step that failed
            return False
        finally:
            if acquired:  # no teardown follows a failed acquire (nothing was set up)
                on_step(teardown.name)
                try:
                    self.teardown()
                except Exception:  # recorded by the phase; the other branches and the report go on
                    log.exception("teardown of %s failed", self.item.label)


@contextmanager
def opened_branch(
    item: BranchItem, phases: tuple[str, ...] = (), runtime_options: RuntimeOptions | None = None
) -> Iterator[BranchRun]:
    """The branch over the part of its run folder a step running ``phases`` opens (local, or the
    run store's scratch copy pushed back at the end), its runtime built with ``runtime_options``."""
    with RunFolder.opened(item.folder, part=item.part(phases)) as folder:
        yield BranchRun(folder.path, item, runtime_options=runtime_options)
