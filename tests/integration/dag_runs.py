"""What the ``dag.test()`` runs of the comparison DAG share (fixture module: register it with
``pytest_plugins = ("integration.minio", "integration.dag_runs")``): the smallest parameters
(``TINY``), the ``pipeline_env`` fixture (results, datasets and server state in tmp; S3 publication
through the Airflow connection ``tsbench_s3`` on a real MinIO) and ``only_run`` (the one run folder
a test's run left)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from integration.minio import MinioServer

from tsbench.airflow.params import DEFAULTS

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


def only_run(out: Path) -> Path:
    """The one run folder under ``out/runs`` (AssertionError naming them when there are others)."""
    runs = [p for p in (out / "runs").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]
