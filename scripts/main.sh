#!/usr/bin/env bash
# The main job on a fresh Debian machine: set everything up, start nothing by hand, run the comparison
# DAG once (airflow dags test) at a small scale, and leave the HTML + PDF report in reports/out/.
#   TSBENCH_SCALES=100 TSBENCH_TARGETS='["questdb","timescaledb","postgres","influxdb"]' bash scripts/main.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup_python.sh
TSBENCH_SKIP_MINIO="${TSBENCH_SKIP_MINIO:-1}" bash scripts/install_all.sh
bash scripts/install_report_tools.sh
# shellcheck source=scripts/airflow_env.sh
source scripts/airflow_env.sh
export PATH="$root/.venv/bin:$PATH"
airflow db migrate >/dev/null
conf=$(cat <<JSON
{"scales": [${TSBENCH_SCALES:-100}],
 "targets": ${TSBENCH_TARGETS:-["questdb", "timescaledb", "postgres", "influxdb"]},
 "duration": "${TSBENCH_DURATION:-1d}", "queries_per_type": ${TSBENCH_QUERIES_PER_TYPE:-5},
 "hot_runs": ${TSBENCH_HOT_RUNS:-2}, "workers": 2, "batch_size": 10000}
JSON
)
echo "running tsbench_comparison with $conf"
status=0
airflow dags test tsbench_comparison --conf "$conf" > reports/out/main-dag.log 2>&1 || status=$?
latest="$root/reports/out/latest"
if [[ -f "$latest/report.html" ]]; then
    echo "report: $latest/report.html"
    echo "        $latest/report.pdf"
else
    last=$(ls -td reports/out/runs/*/ 2>/dev/null | head -1)
    echo "report (run did not pass validation, so latest/ was not replaced): ${last}report/report.html"
fi
echo "task logs: reports/out/main-dag.log (and the Airflow UI: bash scripts/airflow_ui.sh)"
exit $status
