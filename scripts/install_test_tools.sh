#!/usr/bin/env bash
# Tools only the tests use: shellcheck (lints every install and cloud_install script). Idempotent.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v shellcheck >/dev/null 2>&1 || { apt_update_once; apt_install shellcheck; }
# The Celery form of the deployment (tests/celery): its broker (its metadata DB is PostgreSQL, a target).
pkg_installed redis-server || { apt_update_once; apt_install redis-server; }
