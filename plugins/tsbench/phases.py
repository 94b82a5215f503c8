"""The phases of one benchmark branch, in the order they run (the runner, the DAG's branch tasks and
the command line all take them from here), and how they make the branch's steps. A module of its
own so that a DAG file's parse — every task process parses it — names them without importing the
measuring code."""

PHASES = ("provision", "prepare", "load", "settle", "cache_reset", "queries", "teardown")

# Phases that open the step of the phase after them (one DAG task, one step of the command line):
# a cold pass follows its own cache reset within one attempt, so a retried query task restarts
# the server cold again — as its own task, a retry ran its "cold" pass on a server the failed
# attempt had warmed.
OPENS_NEXT_STEP = ("cache_reset",)


def phase_steps() -> tuple[tuple[str, ...], ...]:
    """The branch's steps as runs of consecutive phases, each named after its last phase."""
    steps: list[tuple[str, ...]] = []
    pending: list[str] = []
    for name in PHASES:
        pending.append(name)
        if name not in OPENS_NEXT_STEP:
            steps.append(tuple(pending))
            pending = []
    return tuple(steps)
