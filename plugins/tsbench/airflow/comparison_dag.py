"""The comparison DAG, built by a factory so the nightly and the on-demand DAG files stay thin.

Graph: validate_params → dataset (per scale) → oracle (per scale) → branches →
benchmark[scale × target]: acquire_machine → provision → prepare → load → settle → cache_reset →
queries → teardown (always) → collect → validate → report → publish → verdict.

Exclusivity: one branch measures on the machine at a time. ``acquire_machine`` is an ordinary task
that blocks (polling every 2 s) until it holds the machine lease, which ``teardown`` gives back; the
lease file is taken with ``O_CREAT | O_EXCL``, so exactly one branch holds it. No rescheduling
sensor and no trigger is involved, so the scheduler only ever sees the plain queued → running →
success/failed transitions of any task (the reschedule race of Airflow issue #71172 and the
trigger race of #72716 cannot occur). ``max_active_tis_per_dagrun=1`` keeps at most one waiting
``acquire_machine`` per run, so waiters never fill the executor's slots and starve the lease
holder's own tasks; ``acquire_machine`` is never retried (a retry of the holder's own acquire
would queue behind that waiter). Every phase task beats the lease while it runs; a holder that
died without teardown stops beating and its lease is taken over after 15 min, and a phase whose
lease was taken over fails (``LeaseLost``) rather than measure beside another branch. Under
``dag.test()`` / ``airflow dags test`` (one task at a time, in-process, no executor) a blocking wait
would stop the holder too, so there the waiter hands its turn back (a reschedule, which that loop
handles without any scheduler race) and tries again 2 s later.

A failing branch only fails its own tasks; ``collect`` and everything after it run anyway and the
report shows the failure with its phase and reason. ``verdict`` fails the DAG run at the very end
when a target or a critical expectation failed, after the report is published.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import timedelta
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import dag, get_current_context, task, task_group
from airflow.timetables.trigger import CronTriggerTimetable

from tsbench.airflow.params import comparison_params, run_parameters

log = logging.getLogger("tsbench.airflow")
# The Airflow UI's label of a branch's mapped task instances ("scale-100 × questdb"): each task
# puts its item's label into its context first (``_label``); the template reads it from there.
BRANCH_LABEL = "{{ tsbench_branch }}"


def _verbose() -> None:
    logging.getLogger("tsbench").setLevel(logging.INFO)


def _needs(value: Any, what: str) -> None:
    """Skip a post-run step whose input never came (the parameters were rejected)."""
    from airflow.sdk.exceptions import AirflowSkipException

    if value is None:
        raise AirflowSkipException(f"nothing to {what}: the run never started (see validate_params)")


def _folder_name(run_id: str, when: Any) -> str:
    suffix = hashlib.sha256(run_id.encode()).hexdigest()[:6]
    return f"{when:%Y%m%dT%H%M%SZ}-{suffix}"


def _phases(item: dict[str, Any]):
    from tsbench.airflow.connections import runtime_environment
    from tsbench.airflow.docker_client import docker_client_factory
    from tsbench.runner import TargetPhases

    options = {"environment": runtime_environment, "docker_client_factory": docker_client_factory}
    return TargetPhases(Path(item["run_dir"]), item["target"], runtime_options=options)


def _lease_owner(item: dict[str, Any]) -> str:
    return item["label"] + " @ " + item["run_dir"]


def _label(item: dict[str, Any]) -> None:
    """Logging at INFO, and the branch label for ``BRANCH_LABEL`` (rendered from this context)."""
    _verbose()
    get_current_context()["tsbench_branch"] = item["label"]  # type: ignore[typeddict-unknown-key]


def _phase(item: dict[str, Any], name: str, measuring: bool = True) -> dict[str, Any]:
    """Run one phase of one branch (``measuring``: while beating the machine lease, which it must
    hold); on failure record it in the run folder, then fail the task (its log ends with the
    reason)."""
    from tsbench.lease import MachineLease

    _label(item)
    phases = _phases(item)
    try:
        with MachineLease().keep_alive(_lease_owner(item)) if measuring else nullcontext():
            body = phases.run_phase(name)
    except Exception as error:
        phases.fail(name, error)
        raise
    return {k: v for k, v in body.items() if isinstance(v, int | float | str | bool)}


def _in_process_test_run() -> bool:
    """True under ``dag.test()`` / ``airflow dags test``: tasks run one at a time inside the test's
    own process (Airflow's in-process supervisor), so a blocking wait would stop the lease
    holder's tasks too."""
    from airflow.sdk.execution_time import task_runner
    from airflow.sdk.execution_time.supervisor import InProcessSupervisorComms

    return isinstance(getattr(task_runner, "SUPERVISOR_COMMS", None), InProcessSupervisorComms)


def _try_or_give_the_turn_back(
    lease: Any, owner: str, since_file: Path, waiting: Callable[[dict[str, Any] | None, float], None]
) -> float:
    """The in-process form of the wait: take the lease now, or hand the turn back to the test
    loop (a reschedule in 2 s, which ``dag.test`` runs without executor or scheduler, so without
    the race a rescheduling task has under a real scheduler). Returns the seconds waited since
    the first try, which ``since_file`` keeps across tries."""
    from airflow.sdk.exceptions import AirflowRescheduleException

    from tsbench.lease import busy, wait_limit_s

    if not since_file.is_file():
        since_file.parent.mkdir(parents=True, exist_ok=True)
        since_file.write_text(repr(time.time()))
    waited = time.time() - float(since_file.read_text())
    if lease.try_acquire(owner):
        return waited
    holder, limit = lease.holder(), wait_limit_s()
    if waited >= limit:
        raise busy(waited, limit, holder)
    waiting(holder, waited)
    time.sleep(0.5)  # the test loop reruns the task at once when nothing else is ready
    raise AirflowRescheduleException(reschedule_date=pendulum.now("UTC").add(seconds=2))


def _acquire_machine(item: dict[str, Any]) -> dict[str, Any]:
    """Block until this branch holds the machine lease (see the module docstring); a branch that
    never gets it is recorded as failed in ``acquire_machine`` with the holder named."""
    from airflow.sdk.exceptions import AirflowRescheduleException

    from tsbench.lease import MachineLease, describe, wait_limit_s

    _label(item)
    lease, owner, phases = MachineLease(), _lease_owner(item), _phases(item)

    def waiting(holder: dict[str, Any] | None, waited_s: float) -> None:
        log.info("machine busy (%.0f s so far): %s", waited_s, describe(holder))

    try:
        if _in_process_test_run():
            since_file = phases.dir / "acquire_machine.since"
            waited = _try_or_give_the_turn_back(lease, owner, since_file, waiting)
        else:
            waited = lease.acquire(owner, wait_limit_s(), on_wait=waiting)
        phases.write("acquire_machine", {"waited_s": waited})
    except AirflowRescheduleException:
        raise
    except Exception as error:
        lease.release(owner)  # no teardown follows a failed setup
        phases.fail("acquire_machine", error)
        raise
    log.info("machine lease taken by %s after %.1f s", item["label"], waited)
    return {"waited_s": waited}


def nightly_schedule(cron: str) -> CronTriggerTimetable:
    """A cron schedule that never runs a slot missed before the DAG was first switched on
    (``run_immediately=False``; the DAGs have no start date, which would force that slot)."""
    return CronTriggerTimetable(cron, timezone="UTC", run_immediately=False)


def build_comparison_dag(
    dag_id: str,
    schedule: str | None,
    doc_md: str,
    tags: list[str],
    param_overrides: dict[str, Any] | None = None,
    latest_folder: str = "latest",
):
    """``schedule``: a cron expression or None (on demand). ``latest_folder``: the publication's
    ``latest`` folder this DAG's passing runs replace (only the nightly owns ``latest``)."""

    @dag(
        dag_id=dag_id,
        schedule=nightly_schedule(schedule) if schedule else None,
        catchup=False,
        max_active_runs=1,
        doc_md=doc_md,
        tags=tags,
        params=comparison_params(param_overrides),
        default_args={"retries": 1, "retry_delay": timedelta(seconds=20), "owner": "tsbench"},
    )
    def comparison() -> None:
        @task(retries=0)
        def validate_params() -> dict[str, Any]:
            """Check every parameter (RunSpec's messages) before any work; write plan.json."""
            from tsbench.comparison import parse_comparison, write_plan
            from tsbench.pipeline import results_root
            from tsbench.spec import SpecError

            context = get_current_context()
            try:
                specs = parse_comparison(run_parameters(context["params"]))
            except SpecError as error:
                log.error("%s", error)  # every bad field, one per line, as the log's last words
                raise
            dag_run = context["dag_run"]
            when = dag_run.run_after or dag_run.start_date or pendulum.now("UTC")
            folder = results_root() / _folder_name(context["run_id"], when)
            plan = write_plan(folder, specs)
            log.info("plan: %s scales %s × targets %s", folder, plan["scales"], plan["targets"])
            return {"folder": str(folder), "scales": plan["scales"], "targets": plan["targets"]}

        @task
        def scales_of(plan: dict[str, Any]) -> list[dict[str, Any]]:
            return [{"folder": plan["folder"], "scale": scale} for scale in plan["scales"]]

        @task(map_index_template="scale-{{ task.op_kwargs['item']['scale'] }}")
        def dataset(item: dict[str, Any]) -> str:
            """Generate the dataset of one scale, or reuse it from the cache."""
            from tsbench.comparison import read_plan, scale_dir
            from tsbench.run_setup import prepare_dataset

            _verbose()
            folder = Path(item["folder"])
            spec = next(s for s in read_plan(folder)[1] if s.scale == item["scale"])
            body = prepare_dataset(spec, scale_dir(folder, spec.scale))
            log.info(
                "dataset %s: %s rows (%s)",
                body["dataset"]["id"],
                f"{body['dataset']['rows_total']:,}",
                "reused from the cache" if body["dataset"]["reused"] else "generated",
            )
            return str(scale_dir(folder, spec.scale))

        @task
        def oracle(run_dir: str) -> str:
            """The logical query set and its reference answers (DuckDB over the dataset)."""
            from tsbench.run_setup import prepare_oracle

            _verbose()
            body = prepare_oracle(Path(run_dir))
            how = "reused from the dataset's answer cache" if body["oracle_reused"] else "answered"
            log.info("oracle: %d queries %s in %.2f s", body["queries"], how, body["oracle_s"])
            return run_dir

        @task
        def branches(run_dirs: Sequence[str], plan: dict[str, Any]) -> list[dict[str, Any]]:
            # Indexed up to len(): iterating the lazy XCom sequence reads one past its end, which
            # Airflow's client logs as an "XCom not found" error in every run.
            folders = [run_dirs[i] for i in range(len(run_dirs))]
            return [
                {"run_dir": run_dir, "target": target, "label": f"{Path(run_dir).name} × {target}"}
                for run_dir in folders
                for target in plan["targets"]
            ]

        @task_group
        def benchmark(item: dict[str, Any]):
            @task(map_index_template=BRANCH_LABEL, max_active_tis_per_dagrun=1, retries=0)
            def acquire_machine(item: dict[str, Any]) -> dict[str, Any]:
                """Wait until no other branch measures on this machine, then take its lease (given
                back by this branch's teardown). Waiting is logged every minute."""
                return _acquire_machine(item)

            @task(map_index_template=BRANCH_LABEL)
            def provision(item: dict[str, Any]) -> dict[str, Any]:
                """Install (if needed), configure and start the server; with runtime aws, terraform
                apply (its output in this log), then wait until the host and database are ready."""
                return _phase(item, "provision")

            @task(map_index_template=BRANCH_LABEL)
            def prepare(item: dict[str, Any]) -> dict[str, Any]:
                """Create fresh tables (drops what a previous attempt left)."""
                return _phase(item, "prepare")

            @task(map_index_template=BRANCH_LABEL)
            def load(item: dict[str, Any]) -> dict[str, Any]:
                """Load the dataset with N workers; progress every 10 s; row counts checked."""
                return _phase(item, "load")

            @task(map_index_template=BRANCH_LABEL)
            def settle(item: dict[str, Any]) -> dict[str, Any]:
                """Footprint right after load and after the settle period."""
                return _phase(item, "settle")

            @task(map_index_template=BRANCH_LABEL)
            def cache_reset(item: dict[str, Any]) -> dict[str, Any]:
                """Restart the server and drop the OS page cache (recorded whether possible)."""
                return _phase(item, "cache_reset")

            @task(map_index_template=BRANCH_LABEL)
            def queries(item: dict[str, Any]) -> dict[str, Any]:
                """Cold pass, then hot passes; every answer checked against the oracle."""
                return _phase(item, "queries")

            @task(map_index_template=BRANCH_LABEL)
            def teardown(item: dict[str, Any]) -> None:
                """Stop the server, remove its files (runtime aws: terraform destroy), give the machine
                back. Always runs, also when provisioning failed halfway."""
                from tsbench.lease import MachineLease

                try:
                    _phase(item, "teardown", measuring=False)  # also when the lease was lost
                finally:
                    MachineLease().release(_lease_owner(item))

            taken = acquire_machine(item)
            started = provision(item)
            stop = teardown(item)
            chain_end = queries(item)
            taken >> started >> prepare(item) >> load(item) >> settle(item) >> cache_reset(item) >> chain_end
            chain_end >> stop.as_teardown(setups=[taken, started])
            return stop

        @task(trigger_rule="all_done")
        def collect(plan: dict[str, Any]) -> str:
            """Merge every phase file into result.json per scale and comparison.json; record history."""
            from tsbench.pipeline import collect_run

            _needs(plan, "collect")
            _verbose()
            return collect_run(Path(plan["folder"]))

        @task(trigger_rule="all_done")
        def validate(folder: str) -> dict[str, Any]:
            """great_expectations gates: dataset, load, queries (critical), history (warning)."""
            from tsbench.pipeline import validate_run

            _needs(folder, "validate")
            _verbose()
            return validate_run(Path(folder))

        @task(trigger_rule="all_done")
        def report(folder: str, outcome: dict[str, Any]) -> str:
            """HTML + PDF report (one template), with trends over earlier runs."""
            from tsbench.pipeline import render_run_report

            _needs(folder, "report")
            _verbose()
            return render_run_report(Path(folder))

        @task(trigger_rule="all_done")
        def publish(folder: str, report_path: str) -> dict[str, Any]:
            """Local reports/ and, when the connection is configured, S3 (run folder, latest/, index)."""
            from tsbench.airflow.connections import s3_from_connection
            from tsbench.pipeline import publish_run

            _needs(folder, "publish")
            _verbose()
            return publish_run(Path(folder), s3_from_connection(), latest_folder=latest_folder)

        @task(trigger_rule="all_done", retries=0)
        def verdict(folder: str, published: dict[str, Any]) -> None:
            """Fail the DAG run (after publishing) when a target or a critical expectation failed."""
            from tsbench.pipeline import verdict_of

            _needs(folder, "judge")
            problems = verdict_of(Path(folder))
            if problems:
                raise RuntimeError("comparison finished with failures: " + "; ".join(problems))

        plan = validate_params()
        run_dirs = oracle.expand(run_dir=dataset.expand(item=scales_of(plan)))
        done = benchmark.expand(item=branches(run_dirs, plan))
        folder = collect(plan)
        done >> folder  # after every teardown; no XCom is pulled
        outcome = validate(folder)
        page = report(folder, outcome)
        verdict(folder, publish(folder, page))

    return comparison()
