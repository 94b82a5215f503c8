"""The Celery app's configuration in the Celery form: Airflow's own, plus modules every worker
imports once, at its start (Celery's ``imports`` setting).

An Airflow 3 Celery worker runs each task in a process forked from one of its pool processes, which
are forked from the worker itself; a task process then parses its DAG file and imports what its
task needs. Modules the worker imported before forking are already loaded there, so each of the
run's tasks no longer imports our DAG factory, pyarrow and the clients again: the preloaded set
takes ≈ 3.5 s of CPU to import in a fresh interpreter, and the phase tasks' time outside their
phases fell from 1.7 to 1.05 s each in ``bench/celery_vs_dagtest.py`` (with the shorter scheduler
sleep of ``scripts/airflow_env.sh`` in the same run).

Enabled by ``scripts/airflow_celery.sh`` (``AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS``); the scheduler
reads the same dictionary (``imports`` only matters to workers).
"""

from __future__ import annotations

from typing import Any

from airflow.providers.celery.executors.default_celery import DEFAULT_CELERY_CONFIG

CELERY_CONFIG: dict[str, Any] = {**DEFAULT_CELERY_CONFIG, "imports": ("tsbench.airflow.preload",)}
