"""End to end: dag.test() of the comparison DAG against real local servers and a real MinIO: a
target killed mid-run (run store and publication in S3), bad Params, a branch that never gets
the machine."""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from integration.dag_runs import TINY, only_run
from integration.minio import MinioServer

from tsbench.airflow.branch_tasks import RETRY_OWN_HOLDER_S
from tsbench.results.files import read_json
from tsbench.runtimes.local import LocalRuntime

pytest_plugins = ("integration.minio", "integration.dag_runs")
pytestmark = pytest.mark.integration


def test_bad_params_fail_before_any_work(dagbag, pipeline_env: dict) -> None:
    dag = dagbag.get_dag("tsbench_comparison")
    run = dag.test(run_conf={**TINY, "interval": "7s", "query_types": ["double-groupby-1"], "duration": "6h"})
    assert run.state == "failed"
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    assert states["validate_params"] == "failed"
    assert states["dataset"] in ("upstream_failed", None)
    assert {states[t] for t in ("collect", "validate", "report", "publish", "verdict")} == {"skipped"}
    # the run folder holds only the rejection (its reason, for the notification): no plan, no data
    (folder,) = (pipeline_env["out"] / "runs").iterdir()
    assert [p.name for p in folder.iterdir()] == ["rejected.json"]
    rejection = read_json(folder / "rejected.json")
    assert rejection["task"] == "validate_params" and "interval" in rejection["reason"]
    assert not Path(pipeline_env["out"].parent / "datasets").exists()


def _use_s3_run_store(minio_server: MinioServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """The run store in S3 (MinIO), as workers that share no disk use it: every task works in its
    own scratch copy of the run folder, and the machine lease is an object in the store."""
    store = minio_server.new_bucket("runstore")
    monkeypatch.setenv("TSBENCH_RUN_STORE", f"s3://{store}/team/runs")
    for key, value in minio_server.aws_environment().items():
        monkeypatch.setenv(key, value)
    return store


def _stored(s3: Any, bucket: str, prefix: str = "") -> set[str]:
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return {item["Key"] for page in pages for item in page.get("Contents", [])}


def test_a_target_killed_mid_run_still_yields_a_published_report(
    dagbag, pipeline_env: dict, minio_server: MinioServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL is SIGKILLed one second into its load, the run store in S3: the run finishes, the
    report is published under runs/ marked failed, latest/ is not replaced, the lease is given
    back, and the DAG run ends failed (verdict). (The passing path of ``dag.test`` is the main
    job's; the scheduler's and the Celery form's tests pass runs through a real scheduler.)"""
    store = _use_s3_run_store(minio_server, monkeypatch)
    conf = {**TINY, "scales": [100], "duration": "1d", "queries_per_type": 1}
    s3 = pipeline_env["s3"]
    killed: dict[str, str] = {}

    def kill_postgres_during_load() -> None:
        # This run's folder (its name from the store, where validate_params put the plan), then the
        # load task's own scratch copy of it: prepare, the first phase of that task, has written its
        # record there (the store sees it only when the task ends). Other tests' tasks create and
        # remove scratch folders meanwhile: a vanished one is skipped.
        scratch = Path(tempfile.gettempdir())
        deadline = time.time() + 600
        folder = None
        while time.time() < deadline:
            if folder is None:
                plans = [key for key in _stored(s3, store, "team/runs/") if key.endswith("/plan.json")]
                folder = plans[0].split("/")[2] if plans else None
            record = f"tsbench-task-*/{folder}/scale-100/targets/postgres/prepare.json"
            try:
                records = list(scratch.glob(record))
            except OSError:
                records = []
            if folder and records:
                time.sleep(1.0)
                instance = f"{folder}-scale-100-postgres"
                LocalRuntime().attach(instance).kill()
                killed["instance"] = instance
                return
            time.sleep(0.2)

    watcher = threading.Thread(target=kill_postgres_during_load, daemon=True)
    watcher.start()
    run = dagbag.get_dag("tsbench_comparison").test(run_conf=conf)
    watcher.join(5)
    assert killed, "the watcher never saw postgres start loading"
    assert run.state == "failed"
    states = {(ti.task_id, ti.map_index): ti.state for ti in run.get_task_instances()}
    assert states[("verdict", -1)] == "failed" and states[("publish", -1)] == "success"
    folder = only_run(pipeline_env["out"])  # the publication's local copy
    result = read_json(folder / "comparison.json")["results"]["100"]
    assert result["targets"]["postgres"]["status"] == "failed"
    # Killed inside its load; the load task's retry starts over with prepare, which then finds no
    # server: the record is the last attempt's.
    assert result["targets"]["postgres"]["failed_phase"] in ("load", "prepare")
    assert result["targets"]["questdb"]["status"] == "ok"
    assert read_json(folder / "validation.json")["success"] is False
    html = (folder / "report" / "report.html").read_text()
    assert "FAILED" in html and "PostgreSQL" in html
    assert (folder / "report" / "report.pdf").read_bytes()[:5] == b"%PDF-"

    in_store = _stored(s3, store, "team/")
    assert f"team/runs/{folder.name}/report/report.pdf" in in_store
    assert f"team/runs/{folder.name}/scale-100/targets/questdb/queries.json" in in_store
    assert not [key for key in in_store if "/leases/" in key], "the lease was not given back"
    assert not (Path(os.environ["TSBENCH_STATE"]) / "machine.lease").exists(), "the lease was local"
    keys = _stored(s3, pipeline_env["bucket"])
    assert f"nightly/runs/{folder.name}/report/report.html" in keys
    assert "nightly/latest-tsbench_comparison/report.html" not in keys
    assert not (pipeline_env["out"] / "latest-tsbench_comparison").exists()
    assert not list(LocalRuntime().root.glob(f"{folder.name}-*")), "a server instance was left behind"
    handoff_s, turns_handed_back, waited_s = _machine_handoff(run)
    assert handoff_s < 10, f"the waiting branch got the machine {handoff_s:.1f} s after the teardown"
    # Under dag.test() the waiter hands its turn back every RETRY_OWN_HOLDER_S while this process
    # holds the lease (no public Airflow interface wakes a rescheduled task: see branch_tasks).
    most = 1 + waited_s / RETRY_OWN_HOLDER_S
    assert turns_handed_back <= most, f"the waiting branch was tried {turns_handed_back} times in vain"


def _machine_handoff(run: Any) -> tuple[float, int, float]:
    """Of a 2-branch ``dag.test()`` run: the seconds from the first branch's teardown end to the
    second branch's ``acquire_machine`` end, how many times the waiter handed its turn back
    (rescheduled) before, and the seconds from its first try to its end."""
    from airflow.models.taskreschedule import TaskReschedule
    from airflow.utils.session import create_session

    instances = run.get_task_instances()
    acquires = sorted(
        (ti for ti in instances if ti.task_id == "benchmark.acquire_machine"), key=lambda ti: ti.end_date
    )
    assert len(acquires) == 2, acquires
    first, second = acquires
    teardown = next(
        ti for ti in instances if ti.task_id == "benchmark.teardown" and ti.map_index == first.map_index
    )
    with create_session() as session:
        turns = session.query(TaskReschedule).filter_by(ti_id=second.id).all()
    began = min([turn.start_date for turn in turns], default=second.start_date)
    waited = (second.end_date - began).total_seconds()
    return (second.end_date - teardown.end_date).total_seconds(), len(turns), waited


def test_a_branch_that_never_gets_the_machine_is_reported_with_phase_and_reason(
    dagbag, pipeline_env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another comparison holds the machine for longer than the wait limit: the branch fails in
    acquire_machine, and result and report name the phase and the holder."""
    from tsbench.run.lease import MachineLease

    monkeypatch.setenv("TSBENCH_MACHINE_WAIT_S", "3")
    lease, holder = MachineLease(), "scale-100 × influxdb @ another comparison"
    assert lease.try_acquire(holder)
    try:
        run = dagbag.get_dag("tsbench_comparison").test(run_conf={**TINY, "targets": ["postgres"]})
    finally:
        assert lease.release(holder), "the waiting branch must not take or drop another branch's lease"
    assert run.state == "failed"
    folder = only_run(pipeline_env["out"])
    body = read_json(folder / "comparison.json")["results"]["10"]["targets"]["postgres"]
    assert body["status"] == "failed" and body["failed_phase"] == "acquire_machine", body
    assert "MachineBusy" in body["error"] and f"held by {holder}" in body["error"], body["error"]
    html = (folder / "report" / "report.html").read_text()
    assert "failed in acquire_machine" in html


def test_a_live_phase_runs_as_its_own_dag_task(dagbag, pipeline_env: dict) -> None:
    """The live phase through the DAG (``benchmark.live``, between the queries and the teardown):
    its record collected, validated by the live suite, and drawn in the published report."""
    conf = {**TINY, "targets": ["postgres"], "live_seconds": 3, "live_rate": ["2000"], "query_rate": [5]}
    conf["query_types"] = ["single-groupby-1-1-1", "cpu-max-all-1"]
    run = dagbag.get_dag("tsbench_comparison").test(run_conf=conf)
    assert run.state == "success"
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    assert states["benchmark.live"] == "success"
    folder = only_run(pipeline_env["out"])
    live = read_json(folder / "comparison.json")["results"]["10"]["targets"]["postgres"]["live"]
    assert live["ingest"]["rows_written"] > 0 and live["ingest"]["errors"] == 0
    assert sum(t["checked"] for t in live["queries"].values()) > 0
    validation = read_json(folder / "validation.json")
    assert validation["success"], validation["critical_failed"]
    assert any(s["name"].endswith("live") and s["results"] for s in validation["suites"])
    assert "Live: ingest and queries at once" in (folder / "report" / "report.html").read_text()
