# shellcheck shell=bash
# Source me: Airflow settings for this checkout (SQLite metadata DB under .airflow/, our dags/ and
# plugins/, no examples). AIRFLOW_HOME may be overridden (the tests use a temporary one).
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$_root/.airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="$_root/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$_root/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__UNIT_TEST_MODE=False
# A task's calls to the execution API wait up to 30 s (Airflow's default: 5 s): a benchmark keeps
# both cores of the machine busy on purpose, and the API server shares them.
export AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT="${AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT:-30}"
# Importing Airflow and a DAG file may take longer than Airflow's 30 s (DAG processor: 50 s): right
# after cache_reset dropped the OS page cache every module is read from disk again while a benchmark
# keeps both cores busy (CI saw 31 s and 50 s). A parse that times out registers no DAG, and the
# scheduler then schedules none of its tasks until a later parse succeeds — a run stalled 10 min.
export AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT="${AIRFLOW__CORE__DAGBAG_IMPORT_TIMEOUT:-180}"
export AIRFLOW__DAG_PROCESSOR__DAG_FILE_PROCESSOR_TIMEOUT="${AIRFLOW__DAG_PROCESSOR__DAG_FILE_PROCESSOR_TIMEOUT:-240}"
# The scheduler sleeps this long after a loop that found nothing to do (Airflow's default: 1 s), and
# a task whose upstream just ended waits for the next loop: with 1 s, ≈ 0.5–1 s per hop over a run's
# ~30 chained tasks. 0.25 s keeps the hops short; the price is more idle loops: in a 4-target run of
# bench/celery_vs_dagtest.py the scheduler used 136 CPU-s with 0.25 s and 63 CPU-s with 1 s, and
# Airflow's share of the run was 18.6 % against 23.2 % (docs/benchmarks.md, "Orchestration
# overhead"). Shorter does not pay: 0.05 s cut a 24-task run's hops from 4.8 to 3.7 s but took the
# scheduler from 16 to 37 % of a core, from the servers' two cores (2026-11-29).
export AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME="${AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME:-0.25}"
export PYTHONPATH="$_root/plugins${PYTHONPATH:+:$PYTHONPATH}"
unset _root
