"""The Celery app's configuration in the Celery form: Airflow's own, plus modules every worker
imports once, at its start (Celery's ``imports`` setting).

An Airflow 3 Celery worker runs each task in a process forked from one of its pool processes, which
are forked from the worker itself; a task process then parses its DAG file and imports what its
task needs. Modules the worker imported before forking are already loaded there, so each of the
run's tasks no longer imports Airflow's task SDK, our DAG factory, pyarrow and the clients again —
seconds of CPU per task on the machine being measured (``bench/celery_vs_dagtest.py``).

Enabled by ``scripts/airflow_celery.sh`` (``AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS``); the scheduler
reads the same dictionary (``imports`` only matters to workers).
"""

from __future__ import annotations

from typing import Any

from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

CELERY_CONFIG: dict[str, Any] = {**DEFAULT_CELERY_CONFIG, "imports": ("tsbench.airflow.preload",)}
