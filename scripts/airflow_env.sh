# shellcheck shell=bash
# Source me: Airflow settings for this checkout (SQLite metadata DB under .airflow/, our dags/ and
# plugins/, no examples). AIRFLOW_HOME may be overridden (the tests use a temporary one).
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export AIRFLOW_HOME="${AIRFLOW_HOME:-$_root/.airflow}"
export AIRFLOW__CORE__DAGS_FOLDER="$_root/dags"
export AIRFLOW__CORE__PLUGINS_FOLDER="$_root/plugins"
export AIRFLOW__CORE__LOAD_EXAMPLES=False
export AIRFLOW__CORE__UNIT_TEST_MODE=False
export PYTHONPATH="$_root/plugins${PYTHONPATH:+:$PYTHONPATH}"
unset _root
