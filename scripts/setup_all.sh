#!/usr/bin/env bash
# Everything a run needs on this machine: Python venv, the main job's servers (install_all.sh; MinIO
# unless TSBENCH_SKIP_MINIO=1), the report tools, and Airflow's metadata DB.
# Idempotent. Sourced by main.sh and airflow_ui.sh (it exports the Airflow environment).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
bash scripts/setup_python.sh --runtime
TSBENCH_SKIP_MINIO="${TSBENCH_SKIP_MINIO:-1}" bash scripts/install_all.sh
bash scripts/install_report_tools.sh
# shellcheck source=scripts/airflow_env.sh
source scripts/airflow_env.sh
export PATH="$root/.venv/bin:$PATH"
if [[ "${TSBENCH_SKIP_DB_MIGRATE:-0}" != 1 ]]; then  # airflow_ui.sh: standalone migrates itself
    airflow db migrate >/dev/null
fi
