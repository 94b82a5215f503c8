"""The phases of one benchmark branch, in the order they run (the runner, the DAG's branch tasks and
the command line all take them from here), and how they make the branch's steps. A module of its
own so that a DAG file's parse — every task process parses it — names them without importing the
measuring code."""

PHASES = ("provision", "prepare", "load", "settle", "cache_reset", "queries", "teardown")

# Phases that belong to a neighbour's step (one DAG task, one step of the command line), because
# what they measure or make is only right in the same attempt, on the same worker, with no
# executor's scheduling gap between them and it:
# - the prepare opens the load's step: it encodes the load's wire bodies into the worker's own
#   dataset cache (workers share no disk), so as a task of its own, a load that ran on the other
#   worker encoded them all again (20–33 s per target at 4,000 hosts, in that worker's load task);
# - the settle closes the load's step: its first footprint is "right after the load", which as a
#   task of its own came a scheduler hop later (0.1–0.8 s under Celery, more on a busy scheduler)
#   while the server went on compacting — a gap the command line and dag.test() never had;
# - the cache reset opens the queries' step: a cold pass follows its own restart within one
#   attempt, so a retried query task restarts the server cold again (as a task of its own, a
#   retry ran its "cold" pass on a server the failed attempt had warmed).
OPENS_NEXT_STEP = ("prepare", "cache_reset")
CLOSES_PREVIOUS_STEP = ("settle",)


def phase_steps() -> tuple[tuple[str, ...], ...]:
    """The branch's steps as runs of consecutive phases (named by ``step_name``)."""
    steps: list[tuple[str, ...]] = []
    pending: list[str] = []
    for name in PHASES:
        if name in CLOSES_PREVIOUS_STEP and steps and not pending:
            steps[-1] = (*steps[-1], name)
            continue
        pending.append(name)
        if name not in OPENS_NEXT_STEP:
            steps.append(tuple(pending))
            pending = []
    return tuple(steps)


def step_name(phases: tuple[str, ...]) -> str:
    """A step is named after its own phase: the one that neither opens nor closes another's."""
    return next(name for name in phases if name not in OPENS_NEXT_STEP + CLOSES_PREVIOUS_STEP)
