"""What a Celery worker of the Celery form imports once, before it forks its task processes
(``tsbench.airflow.celery_config``): the DAG factory, the modules every branch task and the
dataset / oracle / post-run steps import, and the third-party libraries under them (pyarrow,
psycopg, DuckDB, boto3 for the run store and the remote task logs).

Importing, reading botocore's S3 model once (``results.bucket.shared_model_loader``: every S3
client of a task — run store lease, publication — then skips ~0.3 s of JSON parsing), and making one
throwaway S3 client (explicit fake credentials and endpoint: no request, nothing read from the
environment), which leaves botocore's lazily imported handlers and caches loaded: a forked task's
first client then takes ~0.015 s instead of ~0.07 s (``bench/celery_vs_dagtest.py``). Nothing here
opens a connection or leaves a file open or starts a Python thread (pyarrow's
allocator starts jemalloc's background thread, which is fork-aware: a forked child starts its own),
so forking after it is as safe as forking before (``tests/unit/test_celery_preload.py``). Of the
databases' client libraries only psycopg is here (PostgreSQL, TimescaleDB, QuestDB's PG wire); the
others (pymongo, chDB, GridDB's Java bridge, …) are imported with their target, when a task first
needs it (``targets.registry.load_target``).
"""

from __future__ import annotations

import importlib

PRELOADED = (
    # what runs each task: Celery's workload decoder and Airflow's supervisor, which forks the
    # task's process (otherwise imported by each pool process before its first task)
    "airflow.executors.workloads",
    "airflow.sdk.execution_time.supervisor",
    "airflow.sdk.execution_time.task_runner",
    "tsbench.airflow.comparison_dag",
    "tsbench.airflow.connections",
    "tsbench.airflow.docker_client",
    "tsbench.run.group",
    "tsbench.run.point_setup",
    "tsbench.results.workspace",
    "tsbench.results.model",
    "tsbench.run.lease",
    "tsbench.measure.load",
    "tsbench.measure.query_runner",
    "tsbench.workload.oracle",
    "tsbench.run.comparison",
    "pyarrow.parquet",
    "pyarrow.compute",
    "pyarrow.fs",
    "fsspec.implementations.arrow",
    "psycopg",
    "duckdb",
    "boto3",
    "airflow.providers.amazon.aws.log.s3_task_handler",
)

for _name in PRELOADED:
    importlib.import_module(_name)
_bucket = importlib.import_module("tsbench.results.bucket")
_bucket.shared_model_loader()
_bucket.make_client("http://127.0.0.1:9", "us-east-1", "preload", "preload")  # never used
