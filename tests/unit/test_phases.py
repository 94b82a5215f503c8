"""How a branch's phases make its steps (``tsbench.run.phases``): one DAG task and one command-line
step each, every phase in exactly one step, in the runner's order."""

from __future__ import annotations

from tsbench.run.phases import PHASES, phase_steps, step_name


def test_every_phase_is_in_one_step_in_order() -> None:
    steps = phase_steps()
    assert [phase for step in steps for phase in step] == list(PHASES)


def test_the_load_step_runs_prepare_load_settle_and_the_queries_step_opens_with_the_cache_reset() -> None:
    steps = {step_name(step): step for step in phase_steps()}
    assert steps == {
        "provision": ("provision",),
        "load": ("prepare", "load", "settle"),
        "queries": ("cache_reset", "queries"),
        "teardown": ("teardown",),
    }
