"""DAG integrity: files import cleanly, are documented, tagged, retried, scheduled as intended."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tsbench.parameters import limit_text

ROOT = Path(__file__).resolve().parents[2]
# The branch's tasks (tsbench.run.phases): prepare and settle run inside the load task, the cache reset
# opens the queries task.
BRANCH_STEPS = ["provision", "load", "queries", "live", "teardown"]


def test_no_import_errors(dagbag) -> None:
    from tsbench.studies import all_studies

    assert dagbag.import_errors == {}
    studies = {study.dag_id for study in all_studies()}
    assert len(studies) == 6  # a DAG per file in studies/: the five published studies' presets, production
    assert set(dagbag.dag_ids) == {"tsbench_nightly", "tsbench_comparison", *studies}


MEASURING = (
    "tsbench.run.target_phases",
    "tsbench.measure",
    "pandas",
    "great_expectations",
    "weasyprint",
    "jinja2",
)


DAG_FILES = ("tsbench_comparison", "tsbench_nightly", "tsbench_studies")
PROBE = """
import importlib, json, sys
import airflow.sdk
before = set(sys.modules)
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_parsing_the_dag_files_imports_no_measuring_code() -> None:
    """Every task process parses its DAG file, and the DAG processor re-parses them all: the parse
    names tasks and parameters only (a heavier one read after cache_reset timed out in CI). One
    fresh interpreter imports the three files (any of them importing measuring code shows)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'plugins'}:{ROOT / 'dags'}"}
    command = [sys.executable, "-c", PROBE, *DAG_FILES]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    imported = json.loads(out.stdout.splitlines()[-1])
    assert set(DAG_FILES) <= set(imported), imported
    assert not [m for m in imported if m.split(".")[0] in MEASURING or m.startswith(MEASURING)], imported


def test_every_dag_is_documented_tagged_and_retried(dagbag) -> None:
    for dag in dagbag.dags.values():
        assert dag.doc_md and dag.doc_md.startswith("### tsbench"), dag.dag_id
        assert "tsbench" in dag.tags
        assert dag.max_active_runs == 1 and dag.catchup is False
        for task in dag.tasks:
            if task.task_id not in ("validate_params", "verdict", "benchmark.acquire_machine"):
                assert task.retries >= 1, task.task_id


def test_nightly_schedule_is_at_night_and_ondemand_is_manual(dagbag) -> None:
    nightly = dagbag.get_dag("tsbench_nightly")
    assert nightly.timetable.summary == "30 2 * * *"  # 02:30 UTC
    assert dagbag.get_dag("tsbench_comparison").schedule is None


def test_dags_are_created_switched_on_unless_the_nightly_is_asked_paused(dagbag, monkeypatch) -> None:
    """The deployment scripts run no ``dags unpause``: each DAG says how it is created, the nightly
    paused only under TSBENCH_NIGHTLY=paused (read when the DAG processor parses the file)."""
    from airflow.models.dagbag import DagBag

    assert {dag.is_paused_upon_creation for dag in dagbag.dags.values()} == {False}
    monkeypatch.setenv("TSBENCH_NIGHTLY", "paused")
    paused = DagBag(dag_folder=str(ROOT / "dags" / "tsbench_nightly.py"))
    assert paused.get_dag("tsbench_nightly").is_paused_upon_creation is True


def test_switching_the_nightly_on_never_runs_a_missed_night(dagbag) -> None:
    """With a start date, or run_immediately, Airflow runs the newest past 02:30 at once when the
    DAG is switched on (what starting the UI did); the first run must be the next 02:30."""
    import pendulum
    from airflow.timetables.base import TimeRestriction

    nightly = dagbag.get_dag("tsbench_nightly")
    assert nightly.start_date is None
    info = nightly.timetable.next_dagrun_info(
        last_automated_data_interval=None,
        restriction=TimeRestriction(earliest=None, latest=None, catchup=False),
    )
    now = pendulum.now("UTC")
    assert now < info.run_after <= now.add(days=1)
    assert (info.run_after.hour, info.run_after.minute) == (2, 30)


def test_graph_reads_like_the_pipeline(dagbag) -> None:
    dag = dagbag.get_dag("tsbench_comparison")
    ids = set(dag.task_ids)
    assert {
        "validate_params",
        "dataset",
        "collect",
        "validate",
        "report",
        "publish",
        "verdict",
    } <= ids
    for before, after in zip(["acquire_machine", *BRANCH_STEPS[:-2]], BRANCH_STEPS[:-1], strict=True):
        assert f"benchmark.{after}" in dag.get_task(f"benchmark.{before}").downstream_task_ids
    teardown = dag.get_task("benchmark.teardown")
    assert teardown.is_teardown and teardown.trigger_rule == "all_done_setup_success"
    assert dag.get_task("collect").trigger_rule == "all_done"
    assert dag.get_task("validate_params").retries == 0


def test_params_form_has_typed_fields(dagbag) -> None:
    params = dagbag.get_dag("tsbench_comparison").params
    for name in (
        "targets",
        "scales",
        "use_case",
        "duration",
        "interval",
        "seed",
        "workers",
        "batch_size",
        "query_types",
        "queries_per_type",
        "trials",
        "runtime",
        "versions",
    ):
        assert name in params, name
    assert params.get_param("scales").schema["type"] == "array"
    assert params.get_param("workers").schema["type"] == "array"  # a sweep axis
    assert params.get_param("hot_runs").schema["type"] == "integer"
    assert params.get_param("versions").schema["type"] == "object"  # {"questdb": ["9.2.3"]}, as docker
    assert params["versions"] == {} and "questdb@9.2.3" not in params.get_param("targets").schema["examples"]


def test_the_forms_type_checks_hold_under_the_declared_schema_draft(dagbag) -> None:
    """The fields declare draft-07 (a cheaper metaschema check, ``tsbench.airflow.params``); Airflow
    still refuses a value of the wrong type, and a null where the field allows one is taken."""
    from airflow.sdk.definitions.param import ParamValidationError

    params = dagbag.get_dag("tsbench_comparison").params
    assert {params.get_param(name).schema["$schema"] for name in params} == {
        "http://json-schema.org/draft-07/schema#"
    }

    def field(name: str) -> Any:  # a copy: a resolve that passes keeps its value in the Param
        return copy.deepcopy(params.get_param(name))

    for name, wrong in (("scales", ["many"]), ("hot_runs", "two"), ("compress_after_load", "yes")):
        with pytest.raises(ParamValidationError):
            field(name).resolve(wrong)
    assert field("row_budget").resolve(None) is None
    assert field("scales").resolve([100, 1000]) == [100, 1000]


def test_choices_are_pick_lists_and_value_checks_are_left_to_runspec(dagbag) -> None:
    """Multi-selects list the allowed values; no value constraint in the JSON schema (Airflow
    would refuse a trigger one field at a time; validate_params names every bad field at once)."""
    from tsbench.targets.registry import target_names
    from tsbench.workload.query_types import QUERY_TYPES

    params = dagbag.get_dag("tsbench_comparison").params
    assert params.get_param("targets").schema["examples"] == list(target_names())
    assert params.get_param("query_types").schema["examples"] == list(QUERY_TYPES)
    assert params.get_param("runtime").schema["examples"] == ["local", "docker", "aws"]
    constraints = {"minimum", "maximum", "pattern", "enum", "minItems", "uniqueItems"}
    for name in params:
        schema = params.get_param(name).schema
        assert not constraints & (schema.keys() | schema.get("items", {}).keys()), name


def test_branch_tasks_are_labelled_by_scale_and_target(dagbag) -> None:
    dag = dagbag.get_dag("tsbench_comparison")
    assert not {"benchmark.prepare", "benchmark.settle", "benchmark.cache_reset"} & set(dag.task_ids)
    assert dag.get_task("benchmark.queries").doc_md.startswith("Restart the server and drop the OS page")
    assert dag.get_task("benchmark.load").doc_md.startswith("Create fresh tables")
    assert "Footprint right after load" in dag.get_task("benchmark.load").doc_md
    for phase in ["acquire_machine", *BRANCH_STEPS]:
        template = dag.get_task(f"benchmark.{phase}").map_index_template
        assert template == "{{ tsbench_branch }}", phase
    acquire = dag.get_task("benchmark.acquire_machine")
    assert acquire.max_active_tis_per_dagrun == 1  # one waiter per run: waiters never fill the executor
    assert acquire.task_type != "DecoratedSensorOperator"  # no rescheduling sensor (Airflow #71172)


def test_dag_files_stay_thin() -> None:
    for path in (ROOT / "dags").glob("*.py"):
        code = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
        assert len(code) < 40, path
        assert "import pandas" not in path.read_text() and "import pyarrow" not in path.read_text()


def test_a_missing_s3_connection_means_local_publication_only(airflow_db) -> None:
    from tsbench.airflow.connections import s3_from_connection

    assert s3_from_connection("tsbench_no_such_connection") is None


def _task_order(dag) -> list[str]:
    """Task ids in dependency order (ties broken by id; the pipeline's tasks form one chain)."""
    upstream = {task_id: set(task.upstream_task_ids) for task_id, task in dag.task_dict.items()}
    order: list[str] = []
    while upstream:
        ready = sorted(task_id for task_id, before in upstream.items() if not before)
        assert ready, "the graph has a cycle"
        order.append(ready[0])
        del upstream[ready[0]]
        for before in upstream.values():
            before.discard(ready[0])
    return order


def test_task_order_is_the_declared_pipeline(dagbag) -> None:
    """One task per step of tsbench.run.pipeline.STEPS, in its order (fan-out helpers aside)."""
    from tsbench.run.pipeline import STEPS

    for dag in dagbag.dags.values():
        steps = [task_id.removeprefix("benchmark.") for task_id in _task_order(dag)]
        assert [s for s in steps if s not in ("points_of", "branches")] == [s.name for s in STEPS]
        for step in STEPS:
            task = dag.get_task(("benchmark." if step.scope == "branch" else "") + step.name)
            assert task.doc_md == step.summary, step.name


def test_params_form_is_runspecs_schema(dagbag) -> None:
    """Names, types, defaults and limits of the form come from RunSpec's JSON schema (with
    scales/duration in place of scale/end); the limits are stated, not enforced."""
    from tsbench.airflow.params import FORM_TARGETS
    from tsbench.spec import RunSpec
    from tsbench.studies import all_studies
    from tsbench.sweep.axes import ComparisonAxes

    schema = RunSpec.model_json_schema(mode="serialization")["properties"]
    axes = ComparisonAxes.model_json_schema(mode="serialization")["properties"]
    defaults = {**RunSpec.model_construct().model_dump(mode="json"), **ComparisonAxes().model_dump()}
    studies = {study.dag_id: study.params_for() for study in all_studies()}
    for dag in dagbag.dags.values():
        params = dag.params
        assert set(params) == (schema.keys() - {"scale", "end"}) | axes.keys()
        prefilled = {"targets": FORM_TARGETS, **defaults, **studies.get(dag.dag_id, {})}
        assert params["targets"] == prefilled["targets"]
        for name in set(params) - {"targets"}:
            body = axes.get(name) or schema[name]  # a sweep axis: a list of RunSpec's field
            limits = schema.get(name, body)
            param = params.get_param(name)
            form = param.schema
            assert params[name] == prefilled[name], name
            kinds = [option.get("type") for option in body.get("anyOf", [body])]
            assert form["type"] in (kinds[0] if len(kinds) == 1 else kinds, "object"), name
            for key in ("minimum", "maximum"):
                if key in limits:
                    assert limit_text(limits[key]) in param.description, (name, param.description)
    scale = schema["scale"]
    scales = dagbag.get_dag("tsbench_comparison").params.get_param("scales")
    assert f"each {scale['minimum']} … {scale['maximum']:,}" in scales.description
