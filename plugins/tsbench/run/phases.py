"""The phases of one benchmark branch, declared once (``PHASES``, in the order they run): each
phase's name, the record it writes (whose ``FILE`` names its file), what it does (the DAG task's
doc and the command line's help), which points of a server group run it, whether it reads the
reference answers, and which step it belongs to. The runner, the server groups, the pipeline's
steps, collecting and the DAG derive every fact about phases from here. A module of its own so that
a DAG file's parse — every task process parses it — names them without importing the measuring
code.

Phases that belong to a neighbour's step (one DAG task, one step of the command line), because
what they measure or make is only right in the same attempt, on the same worker, with no
executor's scheduling gap between them and it:

- the prepare opens the load's step: it encodes the load's wire bodies into the worker's own
  dataset cache (workers share no disk), so as a task of its own, a load that ran on the other
  worker encoded them all again (20–33 s per target at 4,000 hosts, in that worker's load task);
- the settle closes the load's step: its first footprint is "right after the load", which as a
  task of its own came a scheduler hop later (0.1–0.8 s under Celery, more on a busy scheduler)
  while the server went on compacting — a gap the command line and dag.test() never had;
- the cache reset opens the queries' step: a cold pass follows its own restart within one
  attempt, so a retried query task restarts the server cold again (as a task of its own, a
  retry ran its "cold" pass on a server the failed attempt had warmed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tsbench.results.live_records import LivePhase
from tsbench.results.phase_records import (
    CacheReset,
    FootprintPhase,
    LeaseTaken,
    LoadPhase,
    PhaseError,
    Prepare,
    Provision,
    QueriesPhase,
    Teardown,
)
from tsbench.results.record import Record

# Which points of a server group (``tsbench.run.group``) run a phase: the first only (the others
# get its record with ``shared_from``), each in turn, or the last only (the others get its record
# with ``loaded_by``: every point loads the same rows).
GroupPoints = Literal["first", "each", "last"]
SHARED_KEY: dict[GroupPoints, str] = {"first": "shared_from", "last": "loaded_by"}


@dataclass(frozen=True)
class Phase:
    """One phase of a branch. ``joins``: the neighbouring step it belongs to (``next``: it opens
    it; ``previous``: it closes it; see the module docstring). ``before_later_points``: the phase a
    group's later points run again right before this one (the queries' cold restart).
    ``completes``: its record makes a target's result ``ok``."""

    name: str
    record: type[Record]
    summary: str
    points: GroupPoints = "each"
    reads_answers: bool = False
    joins: Literal["", "next", "previous"] = ""
    before_later_points: str = ""
    completes: bool = False

    @property
    def file(self) -> str:
        """The file's stem in ``targets/<target>/`` (``<file>.json``)."""
        return self.record.FILE  # type: ignore[attr-defined]


PHASES: tuple[Phase, ...] = (
    Phase(
        "provision",
        Provision,
        "Install (if needed), configure and start the server; with runtime aws, terraform apply (its "
        "output in this log), then wait until the host and database are ready.",
        points="first",
    ),
    Phase(
        "prepare",
        Prepare,
        "Create fresh tables (drops what a previous attempt left); encode the load bodies.",
        joins="next",
    ),
    Phase("load", LoadPhase, "Load the dataset with N workers; progress every 10 s; row counts checked."),
    Phase(
        "settle",
        FootprintPhase,
        "Footprint right after load; with compress_after_load, compression where the target can "
        "(timed, footprint after it); the footprint after the settle period.",
        points="last",
        joins="previous",
    ),
    Phase(
        "cache_reset",
        CacheReset,
        "Restart the server and drop the OS page cache (recorded whether possible).",
        joins="next",
    ),
    Phase(
        "queries",
        QueriesPhase,
        "Cold pass, then hot passes; every answer checked against the oracle.",
        reads_answers=True,
        before_later_points="cache_reset",
        completes=True,
    ),
    Phase(
        "live",
        LivePhase,
        "With live_seconds: ingest past the loaded data at the offered rate while query clients read "
        "the windows it has closed, both open-loop, every answer checked; then the same queries "
        "without ingest. Its rows are removed after it where the target can.",
        reads_answers=True,
    ),
    Phase(
        "teardown",
        Teardown,
        "Stop the server, remove its files (runtime aws: terraform destroy), give the machine back. "
        "Always runs, also when provisioning failed halfway.",
        points="first",
    ),
)
PHASE_NAMES = tuple(phase.name for phase in PHASES)
BY_NAME = {phase.name: phase for phase in PHASES}
COMPLETING = next(phase for phase in PHASES if phase.completes)
# What a branch writes besides its phases: the lease it took before them, and the failure of any.
ACQUIRE_RECORD: type[Record] = LeaseTaken
ERROR_RECORD: type[Record] = PhaseError


def phase(name: str) -> Phase:
    """The phase named ``name`` (KeyError naming the phases when there is none)."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no phase {name!r} (phases: {', '.join(PHASE_NAMES)})") from None


def phase_steps() -> tuple[tuple[str, ...], ...]:
    """The branch's steps as runs of consecutive phases (named by ``step_name``)."""
    steps: list[tuple[str, ...]] = []
    pending: list[str] = []
    for each in PHASES:
        if each.joins == "previous" and steps and not pending:
            steps[-1] = (*steps[-1], each.name)
            continue
        pending.append(each.name)
        if each.joins != "next":
            steps.append(tuple(pending))
            pending = []
    return tuple(steps)


def step_name(phases: tuple[str, ...]) -> str:
    """A step is named after its own phase: the one that joins no neighbour's step."""
    return next(name for name in phases if not BY_NAME[name].joins)


def reads_answers(phases: tuple[str, ...] | list[str]) -> bool:
    """Whether any of ``phases`` opens the reference answers."""
    return any(BY_NAME[name].reads_answers for name in phases)


def record_files() -> tuple[type[Record], ...]:
    """Every record a branch may write into its target folder, in the order they are written
    (the lease, the phases, the error)."""
    return (ACQUIRE_RECORD, *(each.record for each in PHASES), ERROR_RECORD)
