#!/usr/bin/env bash
# Tools only the tests use: shellcheck (lints every install and cloud_install script). Idempotent.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
command -v shellcheck >/dev/null 2>&1 || { apt_update_once; apt_install shellcheck; }
