#!/usr/bin/env bash
# Set up everything the tests need on a fresh Debian machine, then run lint and the whole test suite.
# Fails when pytest collects no test (exit 5) as well as on any failure.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup_python.sh
echo "== servers and tools (installed by the project's scripts; idempotent)"
bash scripts/install_all.sh            # PostgreSQL 15 + TimescaleDB, QuestDB, InfluxDB, MinIO
bash scripts/install_report_tools.sh   # Chromium, poppler-utils, fonts (to look at reports)
py=.venv/bin/python
echo "== ruff"
.venv/bin/ruff check plugins dags tests bench
.venv/bin/ruff format --check plugins dags tests bench
echo "== pytest"
set +e
$py -m pytest -p no:cacheprovider --durations=15 "$@"
status=$?
set -e
if [[ $status -eq 5 ]]; then
    echo "pytest collected no tests: failing" >&2
    exit 1
fi
exit $status
