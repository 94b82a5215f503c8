"""The comparison DAG, built by a factory so the nightly and the on-demand DAG files stay thin.

Graph: validate_params → dataset (per scale) → oracle (per scale) → branches →
benchmark[scale × target]: acquire_machine → provision → prepare → load → settle → cache_reset →
queries → teardown (always) → collect → validate → report → publish → verdict.

One branch measures at a time (``acquire_machine`` takes the machine lease, ``teardown`` gives it
back), so databases never share the machine while measured, whatever the executor runs in
parallel. A failing branch only fails its own tasks; ``collect`` and everything after it run anyway
and the report shows the failure. ``verdict`` fails the DAG run at the very end when a target or a
critical expectation failed, after the report is published.
"""

from __future__ import annotations

import hashlib
import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import PokeReturnValue, dag, get_current_context, task, task_group

from tsbench.airflow.params import comparison_params, run_parameters

log = logging.getLogger("tsbench.airflow")
START = pendulum.datetime(2026, 1, 1, tz="UTC")


def _verbose() -> None:
    logging.getLogger("tsbench").setLevel(logging.INFO)


def _needs(value: Any, what: str) -> None:
    """Skip a post-run step whose input never came (the parameters were rejected)."""
    from airflow.exceptions import AirflowSkipException

    if value is None:
        raise AirflowSkipException(f"nothing to {what}: the run never started (see validate_params)")


def _folder_name(run_id: str, when: Any) -> str:
    suffix = hashlib.sha256(run_id.encode()).hexdigest()[:6]
    return f"{when:%Y%m%dT%H%M%SZ}-{suffix}"


def _phase(item: dict[str, Any], name: str) -> dict[str, Any]:
    """Run one phase of one branch; on failure record it in the run folder, then fail the task."""
    from tsbench.airflow.connections import runtime_environment
    from tsbench.airflow.docker_client import docker_client_factory
    from tsbench.runner import TargetPhases

    _verbose()
    get_current_context()["tsbench_branch"] = item["label"]  # the map index shown in the UI
    options = {"environment": runtime_environment, "docker_client_factory": docker_client_factory}
    phases = TargetPhases(Path(item["run_dir"]), item["target"], runtime_options=options)
    try:
        body = phases.run_phase(name)
    except Exception as error:
        phases.fail(name, error)
        raise
    return {k: v for k, v in body.items() if isinstance(v, int | float | str | bool)}


def build_comparison_dag(
    dag_id: str,
    schedule: str | None,
    doc_md: str,
    tags: list[str],
    param_overrides: dict[str, Any] | None = None,
):
    @dag(
        dag_id=dag_id,
        schedule=schedule,
        start_date=START,
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

            context = get_current_context()
            specs = parse_comparison(run_parameters(context["params"]))
            dag_run = context["dag_run"]
            when = dag_run.run_after or dag_run.start_date or pendulum.now("UTC")
            folder = results_root() / _folder_name(context["run_id"], when)
            plan = write_plan(folder, specs)
            log.info("plan: %s scales %s × targets %s", folder, plan["scales"], plan["targets"])
            return {"folder": str(folder), "scales": plan["scales"], "targets": plan["targets"]}

        @task
        def scales_of(plan: dict[str, Any]) -> list[dict[str, Any]]:
            return [{"folder": plan["folder"], "scale": scale} for scale in plan["scales"]]

        @task(map_index_template="scale {{ task.op_kwargs['item']['scale'] }}")
        def dataset(item: dict[str, Any]) -> str:
            """Generate the dataset of one scale, or reuse it from the cache."""
            from tsbench.comparison import read_plan, scale_dir
            from tsbench.runner import prepare_dataset

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
            from tsbench.runner import prepare_oracle

            _verbose()
            body = prepare_oracle(Path(run_dir))
            how = "reused from the dataset's answer cache" if body["oracle_reused"] else "answered"
            log.info("oracle: %d queries %s in %.2f s", body["queries"], how, body["oracle_s"])
            return run_dir

        @task
        def branches(run_dirs: list[str], plan: dict[str, Any]) -> list[dict[str, Any]]:
            return [
                {"run_dir": run_dir, "target": target, "label": f"{Path(run_dir).name} × {target}"}
                for run_dir in run_dirs
                for target in plan["targets"]
            ]

        @task_group
        def benchmark(item: dict[str, Any]):
            label = "{{ tsbench_branch | default('') }}"  # set by each task from its item

            @task.sensor(poke_interval=5, timeout=24 * 3600, mode="reschedule", retries=0)
            def acquire_machine(item: dict[str, Any]) -> PokeReturnValue:
                """Wait until no other branch measures on this machine, then take the lease.

                Taking the lease is the last thing this task does (nothing after it can fail),
                and the branch's teardown, whose setup this is, gives it back."""
                from tsbench.lease import MachineLease

                lease = MachineLease()
                taken = lease.try_acquire(item["label"] + " @ " + item["run_dir"])
                if not taken:
                    log.info("machine busy: %s", (lease.holder() or {}).get("owner"))
                return PokeReturnValue(is_done=taken)

            @task(map_index_template=label)
            def provision(item: dict[str, Any]) -> dict[str, Any]:
                """Install (if needed), configure and start the server; with runtime aws, terraform
                apply (its output in this log), then wait until the host and database are ready."""
                return _phase(item, "provision")

            @task(map_index_template=label)
            def prepare(item: dict[str, Any]) -> dict[str, Any]:
                """Create fresh tables (drops what a previous attempt left)."""
                return _phase(item, "prepare")

            @task(map_index_template=label)
            def load(item: dict[str, Any]) -> dict[str, Any]:
                """Load the dataset with N workers; progress every 10 s; row counts checked."""
                return _phase(item, "load")

            @task(map_index_template=label)
            def settle(item: dict[str, Any]) -> dict[str, Any]:
                """Footprint right after load and after the settle period."""
                return _phase(item, "settle")

            @task(map_index_template=label)
            def cache_reset(item: dict[str, Any]) -> dict[str, Any]:
                """Restart the server and drop the OS page cache (recorded whether possible)."""
                return _phase(item, "cache_reset")

            @task(map_index_template=label)
            def queries(item: dict[str, Any]) -> dict[str, Any]:
                """Cold pass, then hot passes; every answer checked against the oracle."""
                return _phase(item, "queries")

            @task(map_index_template=label)
            def teardown(item: dict[str, Any]) -> dict[str, Any]:
                """Stop the server, remove its files (runtime aws: terraform destroy), give the machine
                back. Always runs, also when provisioning failed halfway."""
                from tsbench.lease import MachineLease

                try:
                    return _phase(item, "teardown")
                finally:
                    MachineLease().release(item["label"] + " @ " + item["run_dir"])

            taken = acquire_machine(item)
            started = provision(item)
            stop = teardown(item)
            chain_end = queries(item)
            taken >> started >> prepare(item) >> load(item) >> settle(item) >> cache_reset(item) >> chain_end
            chain_end >> stop.as_teardown(setups=[taken, started])
            return stop

        @task(trigger_rule="all_done")
        def collect(plan: dict[str, Any], done: list[Any]) -> str:
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
            return publish_run(Path(folder), s3_from_connection())

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
        folder = collect(plan, done)
        outcome = validate(folder)
        page = report(folder, outcome)
        verdict(folder, publish(folder, page))

    return comparison()
