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
export PYTHONPATH="$_root/plugins${PYTHONPATH:+:$PYTHONPATH}"
unset _root
