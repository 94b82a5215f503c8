"""The phases' one declaration (``tsbench.run.phases``): how they make a branch's steps (one DAG
task and one command-line step each, every phase in exactly one step, in order), and that every
other place that knows phases takes it from there."""

from __future__ import annotations

from pathlib import Path

from tsbench.results.folder import TargetFolder
from tsbench.results.model import FootprintPhase, LoadPhase, PhaseError, TargetResult, Teardown
from tsbench.run.collect import target_result
from tsbench.run.phases import PHASE_NAMES, PHASES, phase_steps, record_files, step_name
from tsbench.run.pipeline import steps


def test_every_phase_is_in_one_step_in_order() -> None:
    assert [phase for step in phase_steps() for phase in step] == list(PHASE_NAMES)


def test_the_load_step_runs_prepare_load_settle_and_the_queries_step_opens_with_the_cache_reset() -> None:
    named = {step_name(step): step for step in phase_steps()}
    assert named == {
        "provision": ("provision",),
        "load": ("prepare", "load", "settle"),
        "queries": ("cache_reset", "queries"),
        "live": ("live",),
        "teardown": ("teardown",),
    }


def test_the_pipeline_s_branch_steps_and_their_docs_come_from_the_declaration() -> None:
    branch = [step for step in steps("branch") if step.phases]
    assert [step.phases for step in branch] == list(phase_steps())
    for step in branch:
        assert all(phase.summary in step.summary for phase in PHASES if phase.name in step.phases)
    assert branch[0].setup and branch[-1].teardown


def test_every_record_has_a_file_of_its_own_and_a_field_in_the_result() -> None:
    files = [record.FILE for record in record_files()]  # type: ignore[attr-defined]
    assert len(files) == len(set(files)), files
    fields = set(TargetResult.model_fields)
    assert set(files) - {PhaseError.FILE} <= fields, set(files) - fields


def test_a_target_that_stopped_is_incomplete_before_its_first_missing_phase(tmp_path: Path) -> None:
    folder = TargetFolder(tmp_path / "questdb", "questdb")
    folder.write(LoadPhase(row_count_ok=True), "load")
    assert target_result(folder).stopped_before == "acquire_machine"
    folder.write(Teardown(seconds=1.0))
    folder.write(PhaseError(failed_phase="provision", error="boom"))
    failed = target_result(folder)
    assert (failed.status, failed.failed_phase, failed.teardown.seconds) == ("failed", "provision", 1.0)


def test_a_retried_phase_that_succeeds_clears_its_failure(tmp_path: Path) -> None:
    folder = TargetFolder(tmp_path / "questdb", "questdb")
    folder.write(PhaseError(failed_phase="settle", error="boom"))
    folder.write(Teardown(seconds=1.0), "teardown")
    assert folder.has(PhaseError)  # another phase's success leaves it
    folder.write(FootprintPhase(settle_seconds=0), "settle")
    assert not folder.has(PhaseError)


def test_the_steps_that_check_answers_are_given_the_reference_answers() -> None:
    """A task working in its own part of the run store gets answers.jsonl only if it reads it."""
    from tsbench.run.phases import reads_answers

    assert reads_answers(("cache_reset", "queries")) and reads_answers(("live",))
    assert not reads_answers(("prepare", "load", "settle")) and not reads_answers(("teardown",))
