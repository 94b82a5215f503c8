#!/usr/bin/env bash
# Start Airflow (standalone: API server + scheduler + DAG processor + triggerer) for this checkout,
# with the nightly comparison unpaused. UI at http://localhost:8080 (the admin password is printed by
# Airflow and kept in $AIRFLOW_HOME/simple_auth_manager_passwords.json.generated — not in the repo).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup_python.sh
TSBENCH_SKIP_MINIO="${TSBENCH_SKIP_MINIO:-1}" bash scripts/install_all.sh
bash scripts/install_report_tools.sh
# shellcheck source=scripts/airflow_env.sh
source scripts/airflow_env.sh
export PATH="$root/.venv/bin:$PATH"
export AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION=False
airflow db migrate >/dev/null
airflow dags reserialize >/dev/null 2>&1 || true
airflow dags unpause tsbench_nightly >/dev/null 2>&1 || true
exec airflow standalone
