# shellcheck shell=bash
# Sourced by scripts/test.sh (after scripts/lib.sh): GridDB's official Java client (Maven Central) and
# tsbench's Bulk helper for the target's tests (install_client.sh; seconds, then instant). In the
# foreground: its apt installs (JDK, unzip) finish before another target's preparation starts one.
bash "$(dirname "${BASH_SOURCE[0]}")/install_client.sh" >/dev/null
