#!/usr/bin/env bash
# The main job on a fresh Debian machine: set everything up, start nothing by hand, run the comparison
# DAG once (airflow dags test) at a small scale, and leave the HTML + PDF report in reports/out/.
#   TSBENCH_SCALES=100 TSBENCH_TARGETS='["<target>", …]' bash scripts/main.sh
# Default targets: those whose definition.py gives them a main_job position, in that order.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/setup_all.sh
source scripts/setup_all.sh
defined="$(.venv/bin/python -m tsbench.runtimes.definition --main-job | sed 's/.*/"&"/' | paste -sd, -)"
targets=${TSBENCH_TARGETS:-"[$defined]"}
conf=$(cat <<JSON
{"scales": [${TSBENCH_SCALES:-100}], "targets": $targets,
 "duration": "${TSBENCH_DURATION:-1d}", "queries_per_type": ${TSBENCH_QUERIES_PER_TYPE:-5},
 "hot_runs": ${TSBENCH_HOT_RUNS:-2}, "workers": [2], "batch_size": [10000]}
JSON
)
echo "running tsbench_comparison with $conf"
mkdir -p reports/out
status=0
airflow dags test tsbench_comparison --conf "$conf" > reports/out/main-dag.log 2>&1 || status=$?
# `airflow dags test` exits 0 even when the run failed: read the run's final state from its log.
if [[ $status -eq 0 ]] && ! grep -q "DagRun Finished: .*state=success" reports/out/main-dag.log; then
    status=1
fi
latest="$root/reports/out/latest-tsbench_comparison"  # latest/ is the nightly's
if [[ -f "$latest/report.html" ]]; then
    echo "report: $latest/report.html"
    echo "        $latest/report.pdf"
else
    last=$(find reports/out/runs -mindepth 1 -maxdepth 1 -type d -printf "%T@ %p/\n" 2>/dev/null | sort -rn | head -1 | cut -d" " -f2)
    echo "report (run did not pass validation, so latest/ was not replaced): ${last}report/report.html"
fi
echo "task logs: reports/out/main-dag.log (and the Airflow UI: bash scripts/airflow_ui.sh)"
exit "$status"
