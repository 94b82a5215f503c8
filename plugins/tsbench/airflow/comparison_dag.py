"""The comparison DAG, built by a factory so the nightly and the on-demand DAG files stay thin.

One task per step of ``tsbench.run.pipeline.STEPS``, in its order (the command line walks the same
table): validate_params → dataset (per point: data, then reference answers) → branches →
benchmark[server group × target]: acquire_machine → provision → load (prepare, load, settle) →
queries (cache_reset, queries) → teardown (always) → collect → validate → report → publish →
verdict (``tsbench.run.phases``: which phases share a task, and why). ``points_of`` and ``branches``
only fan out (no step of their own; Airflow maps over a task's whole return value, so the plan
cannot hand its lists on itself). The branch tasks are in ``branch_tasks``.

Values between tasks are JSON (Airflow's XCom): the plan, a point, a branch. Each task parses
what it receives into its record on its first line (``PlannedRun``, ``PointItem``, ``BranchItem``);
the ``dict`` annotations here are that wire form, nothing else.

Tasks share no disk: each works in a workspace of the run folder in the run store
(``results.workspace``; the plan and the items carry the folder's URL and point names, never a
worker's path). Exclusivity: one branch measures on a benchmark host at a time. ``acquire_machine``
is an ordinary task that blocks (polling every 0.2 s) until it holds a host lease (``tsbench.run.lease``:
this machine's for ``local``/``docker``, one of the run's ``max_parallel_hosts`` slots for ``aws``),
which ``teardown`` gives back; a lease changes only by compare-and-swap, so one branch holds it.
No rescheduling sensor and no trigger is involved, so the scheduler only ever sees the plain
queued → running → success/failed transitions of any task (the reschedule race of Airflow issue #71172 and the
trigger race of #72716 cannot occur). ``max_active_tis_per_dagrun=1`` keeps at most one waiting
``acquire_machine`` per run, so waiters never fill the executor's slots and starve the lease
holder's own tasks; ``acquire_machine`` is never retried (a retry of the holder's own acquire
would queue behind that waiter). Lease beats, take-overs and the in-process wait: see
``branch_tasks``.

A failing branch only fails its own tasks; ``collect`` and everything after it run anyway and the
report shows the failure with its phase and reason. ``verdict`` fails the DAG run at the very end
when a target or a critical expectation failed, after the report is published.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import chain, dag, get_current_context, task, task_group
from airflow.timetables.trigger import CronTriggerTimetable

from tsbench.airflow import branch_tasks, notify
from tsbench.airflow.branch_tasks import verbose
from tsbench.airflow.params import comparison_params, run_parameters
from tsbench.run.pipeline import Step, steps
from tsbench.studies import Study
from tsbench.sweep.plan import SweepLimits

log = logging.getLogger("tsbench.airflow")
# The Airflow UI's label of a branch's mapped task instances ("scale-100 × questdb"): each task
# puts its item's label into its context first; the template reads it from there.
BRANCH_LABEL = "{{ tsbench_branch }}"
POINT_LABEL = "{{ task.op_kwargs['item']['point'] }}"
# Airflow-only settings of some steps (every other step: the DAG's default_args).
TASK_OPTIONS: dict[str, dict[str, Any]] = {
    "validate_params": {"retries": 0},  # bad parameters stay bad
    "acquire_machine": {"max_active_tis_per_dagrun": 1, "retries": 0},  # one waiter per run
    "verdict": {"retries": 0},
}
BRANCH_CALLS: dict[str, Callable[[dict[str, Any], str], Any]] = {
    "acquire_machine": branch_tasks.acquire_machine,
    "teardown": branch_tasks.teardown,
}


def _needs(value: Any, what: str) -> None:
    """Skip a post-run step whose input never came (the parameters were rejected)."""
    from airflow.sdk.exceptions import AirflowSkipException

    if value is None:
        raise AirflowSkipException(f"nothing to {what}: the run never started (see validate_params)")


def _task(step: Step, function: Callable[..., Any], **options: Any) -> Any:
    """The Airflow task of ``step``: its name, its summary as the task's doc, its options."""
    function.__doc__ = step.summary
    return task(task_id=step.name, doc_md=step.summary, **{**options, **TASK_OPTIONS.get(step.name, {})})(
        _giving_memory_back(function)
    )


def _giving_memory_back(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, after which the memory it freed goes back to the system: where tasks share one
    process (``dag.test()``: a run's tasks, one after another) the next task starts lean; in an
    executor's task process, which exits anyway, it costs a few milliseconds."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        finally:
            from tsbench.memory import release_freed_memory

            release_freed_memory()

    return run


def validate_params_task(step: Step, limits: SweepLimits | None = None, study: Study | None = None) -> Any:
    def validate_params() -> dict[str, Any]:
        from tsbench.results.folder import RunFolder
        from tsbench.results.model import Rejection
        from tsbench.results.workspace import run_folder_name
        from tsbench.run.pipeline import plan_run, run_store_url
        from tsbench.spec import SpecError
        from tsbench.timeutil import format_instant

        context = get_current_context()
        dag_run = context["dag_run"]
        when = dag_run.run_after or dag_run.start_date or pendulum.now("UTC")
        url = f"{run_store_url()}/{run_folder_name(context['run_id'], when)}"
        with RunFolder.opened(url) as run:
            try:
                planned = plan_run(run_parameters(context["params"]), run.path, limits, study)
            except SpecError as error:
                log.error("%s", error)  # every bad field, one per line, as the log's last words
                # the only file of a refused run: the notification names the reason from it
                run.write_rejection(
                    Rejection(task=step.name, reason=str(error), rejected_at=format_instant(time.time_ns()))
                )
                raise
            return planned.model_copy(update={"folder": url}).model_dump(mode="json")

    return _task(step, validate_params)


def _planned(folder: Path, item: Any) -> tuple[Any, Path]:
    from tsbench.run.comparison import point_dir, read_plan

    point = next(p for p in read_plan(folder)[1] if p.name == item.point)
    return point, point_dir(folder, point.name)


def _dataset(folder: Path, item: Any) -> None:
    """The point's dataset, then its reference answers — in one task, so the oracle reads the
    dataset on the worker that generated it (another worker would generate it again)."""
    from tsbench.run.point_setup import prepare_dataset, prepare_oracle

    point, run_dir = _planned(folder, item)
    run = prepare_dataset(point.spec, run_dir, point=point.facts)
    how = "reused from the cache" if run.dataset.reused else "generated"
    log.info("dataset %s: %s rows (%s)", run.dataset.id, f"{run.dataset.rows_total or 0:,}", how)
    run = prepare_oracle(run_dir)
    how = "reused from the dataset's answer cache" if run.oracle_reused else "answered"
    log.info("oracle: %d queries %s in %.2f s", run.queries or 0, how, run.oracle_s or 0.0)


POINT_CALLS: dict[str, Callable[[Path, Any], None]] = {"dataset": _dataset}  # (folder, PointItem)


def point_task(step: Step) -> Any:
    def run(item: dict[str, Any]) -> dict[str, Any]:
        from tsbench.results.folder import RunFolder
        from tsbench.run.comparison import point_part
        from tsbench.run.pipeline import PointItem

        verbose()
        point = PointItem.model_validate(item)
        with RunFolder.opened(point.folder, part=point_part(point.point)) as folder:
            POINT_CALLS[step.name](folder.path, point)
        return item

    return _task(step, run, map_index_template=POINT_LABEL)


def branch_task(step: Step) -> Any:
    special = BRANCH_CALLS.get(step.name)

    def run(item: dict[str, Any]) -> Any:
        return special(item, step.name) if special else branch_tasks.phase(item, step.phases)

    return _task(step, run, map_index_template=BRANCH_LABEL)


def post_task(step: Step, latest_folder: str) -> Any:
    def run(plan: dict[str, Any] | None) -> Any:
        from tsbench.airflow.connections import s3_from_connection
        from tsbench.results.folder import RunFolder
        from tsbench.run.pipeline import PlannedRun, Publication, post_part

        _needs(plan, step.name)
        verbose()
        assert plan is not None and step.call is not None
        url = PlannedRun.model_validate(plan).folder
        with RunFolder.opened(url, part=post_part(step)) as run:
            outcome = step.call(run.path, Publication(latest_folder, s3_from_connection()))
            return _in_store(outcome, str(run.path), url)

    return _task(step, run, trigger_rule="all_done")


def _in_store(value: Any, scratch: str, url: str) -> Any:
    """``value`` with paths in the task's scratch copy of the run folder (gone once the task ends)
    named by their place in the run store instead."""
    if isinstance(value, str):
        return url + value[len(scratch) :] if value.startswith(scratch) else value
    if isinstance(value, dict):
        return {key: _in_store(item, scratch, url) for key, item in value.items()}
    if isinstance(value, list):
        return [_in_store(item, scratch, url) for item in value]
    return value


@task
def points_of(plan: dict[str, Any]) -> list[dict[str, Any]]:
    from tsbench.run.pipeline import PlannedRun, PointItem

    planned = PlannedRun.model_validate(plan)
    return [PointItem(folder=planned.folder, point=point).model_dump() for point in planned.points]


@task
def branches(items: Sequence[dict[str, Any]], plan: dict[str, Any]) -> list[dict[str, Any]]:
    """One branch per server group × target (``items``: the points, once their oracle ran); a
    branch names its run folder in the run store and its points (folders in it)."""
    from tsbench.run.branch import BranchItem
    from tsbench.run.comparison import branch_label
    from tsbench.run.pipeline import PlannedRun

    planned = PlannedRun.model_validate(plan)
    return [
        BranchItem(
            folder=planned.folder,
            points=tuple(group),
            target=target,
            label=branch_label([Path(name) for name in group], target),
        ).model_dump(mode="json")
        for group in planned.groups
        for target in planned.targets
    ]


@task_group
def benchmark(item: dict[str, Any]) -> Any:
    """One branch: the branch steps in order, teardown always (after its setups ran)."""
    made = [(step, branch_task(step)(item)) for step in steps("branch")]
    work = [made_task for step, made_task in made if not step.teardown]
    chain(*work)
    stop = next(made_task for step, made_task in made if step.teardown)
    work[-1] >> stop.as_teardown(setups=[made_task for step, made_task in made if step.setup])
    return stop


def nightly_schedule(cron: str) -> CronTriggerTimetable:
    """A cron schedule that never runs a slot missed before the DAG was first switched on (the DAGs
    have no start date, which would force that slot). ``run_immediately=timedelta(0)``, not False:
    Airflow 3.3.2 treats False like None and still takes the past slot when it is less than a tenth
    of the interval old (02:30–04:54 for a nightly)."""
    return CronTriggerTimetable(cron, timezone="UTC", run_immediately=timedelta(0))


def build_comparison_dag(
    dag_id: str,
    schedule: str | None,
    doc_md: str,
    tags: list[str],
    param_overrides: dict[str, Any] | None = None,
    latest_folder: str = "latest",
    limits: SweepLimits | None = None,
    study: Study | None = None,
    paused_at_creation: bool = False,
):
    """``schedule``: a cron expression or None (on demand). ``latest_folder``: the publication's
    ``latest`` folder this DAG's passing runs replace (only the nightly owns ``latest``).
    ``limits``: the sweep limits ``validate_params`` applies (None: ``SweepLimits()``).
    ``study``: the study when the DAG is a study's (its report checks the study's claims).
    ``paused_at_creation``: whether the DAG starts paused when the DAG processor first registers
    it (tsbench's DAGs start switched on; a DAG a user paused later stays paused)."""

    @dag(
        dag_id=dag_id,
        schedule=nightly_schedule(schedule) if schedule else None,
        is_paused_upon_creation=paused_at_creation,
        catchup=False,
        max_active_runs=1,
        doc_md=doc_md,
        tags=tags,
        params=comparison_params(param_overrides),
        default_args={"retries": 1, "retry_delay": timedelta(seconds=20), "owner": "tsbench"},
        on_success_callback=notify.on_success,  # the report delivered (tsbench.airflow.notify)
        on_failure_callback=notify.on_failure,
    )
    def comparison() -> None:
        (first,) = steps("run")
        plan = validate_params_task(first, limits, study)()
        items = points_of(plan)
        for step in steps("point"):
            items = point_task(step).expand(item=items)
        previous = benchmark.expand(item=branches(items, plan))
        for step in steps("post"):
            current = post_task(step, latest_folder)(plan)
            previous >> current  # after every teardown / the previous step; no XCom is pulled
            previous = current

    return comparison()
