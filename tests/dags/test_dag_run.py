"""End to end: dag.test() of the comparison DAG against real local servers and a real MinIO,
ending in a validated report published to S3; bad Params; a target killed mid-run."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest
from integration.minio import MinioServer

from tsbench.airflow.params import DEFAULTS
from tsbench.results.files import read_json
from tsbench.runtimes.local import LocalRuntime

pytest_plugins = ("integration.minio",)
pytestmark = pytest.mark.integration

TINY = {
    **DEFAULTS,  # complete confs: dag.test() keeps the previous run's values in the DAG's params
    "scales": [10],
    "duration": "12h",
    "queries_per_type": 2,
    "hot_runs": 1,
    "targets": ["questdb", "postgres"],
}


@pytest.fixture
def pipeline_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minio_server: MinioServer) -> dict:
    """Results, datasets and server state in tmp; S3 through the Airflow connection tsbench_s3."""
    bucket = minio_server.new_bucket("dagtest")
    monkeypatch.setenv("TSBENCH_RESULTS", str(tmp_path / "out" / "runs"))
    monkeypatch.setenv("TSBENCH_DATASETS", str(tmp_path / "datasets"))
    monkeypatch.setenv("TSBENCH_STATE", str(Path("/var/tmp/tsbench-tests") / uuid.uuid4().hex[:8]))
    connection = {
        "conn_type": "aws",
        "login": minio_server.access_key,
        "password": minio_server.secret_key,
        "extra": {
            "bucket": bucket,
            "prefix": "nightly",
            "endpoint_url": minio_server.endpoint_url,
            "region_name": minio_server.region,
        },
    }
    monkeypatch.setenv("AIRFLOW_CONN_TSBENCH_S3", json.dumps(connection))
    return {"bucket": bucket, "out": tmp_path / "out", "s3": minio_server.client()}


def _only_run(out: Path) -> Path:
    runs = [p for p in (out / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def test_dag_run_ends_in_a_validated_published_report(
    dagbag, pipeline_env: dict, minio_server: MinioServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the run store in S3 (MinIO), as workers that share no disk use it: every task works in
    its own scratch copy of the run folder, and the machine lease is an object in the store."""
    store = minio_server.new_bucket("runstore")
    for key, value in {
        "TSBENCH_RUN_STORE": f"s3://{store}/team/runs",
        **minio_server.aws_environment(),
    }.items():
        monkeypatch.setenv(key, value)
    dag = dagbag.get_dag("tsbench_comparison")
    run = dag.test(run_conf=TINY)
    assert run.state == "success"
    folder = _only_run(pipeline_env["out"])  # the publication's local copy
    s3 = pipeline_env["s3"]
    stored = {o["Key"] for o in s3.list_objects_v2(Bucket=store, Prefix="team/")["Contents"]}
    run_keys = {key for key in stored if key.startswith(f"team/runs/{folder.name}/")}
    assert f"team/runs/{folder.name}/report/report.pdf" in run_keys
    assert f"team/runs/{folder.name}/scale-10/targets/questdb/queries.json" in run_keys
    assert not [key for key in stored if "/leases/" in key], "the lease was not given back"
    assert not (Path(os.environ["TSBENCH_STATE"]) / "machine.lease").exists(), "the lease was local"
    comparison = read_json(folder / "comparison.json")
    assert comparison["failed_targets"] == []
    validation = read_json(folder / "validation.json")
    assert validation["success"] is True, validation["critical_failed"]
    assert (folder / "report" / "report.html").stat().st_size > 10_000
    assert (folder / "report" / "report.pdf").read_bytes()[:5] == b"%PDF-"
    latest = pipeline_env["out"] / "latest-tsbench_comparison"  # latest/ is the nightly's
    assert (latest / "report.pdf").is_file() and (latest / "RUN").read_text().strip() == folder.name
    assert not (pipeline_env["out"] / "latest").exists()
    s3, bucket = pipeline_env["s3"], pipeline_env["bucket"]
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert f"nightly/runs/{folder.name}/report/report.html" in keys
    mirrored = {f"nightly/latest-tsbench_comparison/report.{kind}" for kind in ("html", "pdf")}
    assert mirrored | {"nightly/index.html"} <= keys and "nightly/latest/report.html" not in keys
    index = s3.get_object(Bucket=bucket, Key="nightly/index.html")["Body"].read().decode()
    assert folder.name in index
    assert not list(LocalRuntime().root.glob(f"{folder.name}-*")), "a server instance was left behind"


def test_bad_params_fail_before_any_work(dagbag, pipeline_env: dict) -> None:
    dag = dagbag.get_dag("tsbench_comparison")
    run = dag.test(run_conf={**TINY, "interval": "7s", "query_types": ["double-groupby-1"], "duration": "6h"})
    assert run.state == "failed"
    states = {ti.task_id: ti.state for ti in run.get_task_instances()}
    assert states["validate_params"] == "failed"
    assert states["dataset"] in ("upstream_failed", None)
    assert {states[t] for t in ("collect", "validate", "report", "publish", "verdict")} == {"skipped"}
    assert not (pipeline_env["out"] / "runs").exists() or not any((pipeline_env["out"] / "runs").iterdir())
    assert not Path(pipeline_env["out"].parent / "datasets").exists()


def test_a_target_killed_mid_run_still_yields_a_published_report(dagbag, pipeline_env: dict) -> None:
    """PostgreSQL is SIGKILLed one second into its load: the run finishes, the report is published
    under runs/ marked failed, latest/ is not replaced, and the DAG run ends failed (verdict)."""
    conf = {**TINY, "scales": [100], "duration": "1d", "queries_per_type": 1}
    results = pipeline_env["out"] / "runs"
    killed: dict[str, str] = {}

    def kill_postgres_during_load() -> None:
        deadline = time.time() + 600
        while time.time() < deadline:
            for marker in results.glob("*/scale-100/targets/postgres/prepare.json"):
                time.sleep(1.0)
                instance = f"{marker.parents[3].name}-scale-100-postgres"
                LocalRuntime().attach(instance).kill()
                killed["instance"] = instance
                return
            time.sleep(0.05)

    watcher = threading.Thread(target=kill_postgres_during_load, daemon=True)
    watcher.start()
    run = dagbag.get_dag("tsbench_comparison").test(run_conf=conf)
    watcher.join(5)
    assert killed, "the watcher never saw postgres start loading"
    assert run.state == "failed"
    states = {(ti.task_id, ti.map_index): ti.state for ti in run.get_task_instances()}
    assert states[("verdict", -1)] == "failed" and states[("publish", -1)] == "success"
    folder = _only_run(pipeline_env["out"])
    result = read_json(folder / "comparison.json")["results"]["100"]
    assert result["targets"]["postgres"]["status"] == "failed"
    assert result["targets"]["postgres"]["failed_phase"] == "load"
    assert result["targets"]["questdb"]["status"] == "ok"
    assert read_json(folder / "validation.json")["success"] is False
    html = (folder / "report" / "report.html").read_text()
    assert "FAILED" in html and "PostgreSQL" in html
    keys = {o["Key"] for o in pipeline_env["s3"].list_objects_v2(Bucket=pipeline_env["bucket"])["Contents"]}
    assert f"nightly/runs/{folder.name}/report/report.html" in keys
    assert "nightly/latest-tsbench_comparison/report.html" not in keys
    assert not (pipeline_env["out"] / "latest-tsbench_comparison").exists()


def test_a_branch_that_never_gets_the_machine_is_reported_with_phase_and_reason(
    dagbag, pipeline_env: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another comparison holds the machine for longer than the wait limit: the branch fails in
    acquire_machine, and result and report name the phase and the holder."""
    from tsbench.lease import MachineLease

    monkeypatch.setenv("TSBENCH_MACHINE_WAIT_S", "3")
    lease, holder = MachineLease(), "scale-100 × influxdb @ another comparison"
    assert lease.try_acquire(holder)
    try:
        run = dagbag.get_dag("tsbench_comparison").test(run_conf={**TINY, "targets": ["postgres"]})
    finally:
        assert lease.release(holder), "the waiting branch must not take or drop another branch's lease"
    assert run.state == "failed"
    folder = _only_run(pipeline_env["out"])
    body = read_json(folder / "comparison.json")["results"]["10"]["targets"]["postgres"]
    assert body["status"] == "failed" and body["failed_phase"] == "acquire_machine", body
    assert "MachineBusy" in body["error"] and f"held by {holder}" in body["error"], body["error"]
    html = (folder / "report" / "report.html").read_text()
    assert "failed in acquire_machine" in html
