#!/usr/bin/env bash
# Start Airflow (standalone: API server + scheduler + DAG processor + triggerer) for this checkout,
# with the nightly comparison unpaused. UI at http://localhost:8080 (the admin password is printed by
# Airflow and kept in $AIRFLOW_HOME/simple_auth_manager_passwords.json.generated — not in the repo).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/setup_all.sh
source scripts/setup_all.sh
airflow dags reserialize >/dev/null 2>&1 || true
airflow dags unpause tsbench_nightly >/dev/null 2>&1 || true
exec airflow standalone
