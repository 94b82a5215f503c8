#!/usr/bin/env bash
# GridDB CE for the local runtime: the server built from the pinned source archive (build.sh, ≈ 30 min
# once per machine, then cached under the opt root) and the client side (install_client.sh: the same
# release's Java client + tsbench's Bulk helper). Run by scripts/install.sh griddb (or the local
# runtime) with the variables of definition.py (GRIDDB_VERSION, GRIDDB_SOURCE_ARCHIVE,
# GRIDDB_SOURCE_URL, GRIDDB_SOURCE_TREE_SHA256).
#
#   -> $TSBENCH_OPT/griddb-$GRIDDB_VERSION/bin/gsserver   (server.py runs it: one private node per
#                                                          instance, every service on 127.0.0.1)
#   -> .../lib/tsbench-loopback-bind-<sha12>.so          (scripts/compile_loopback_shim.sh: preloaded, see
#                                                          runtimes/native/loopback_bind.c)
#
# Run (what server.py does):
#   gsserver --conf <GS_HOME>/conf       (foreground; GS_HOME, GS_LOG set)
#   GET  http://127.0.0.1:<system>/node/stat   (basic auth admin) -> recovery.progressRate 1
#   POST http://127.0.0.1:<system>/node/join   clusterName=tsbench&minNodeNum=1
#
# Prints the server binary's path. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$here/install_client.sh" >/dev/null
prefix="$(bash "$here/build.sh")"
bash "$here/../../../../scripts/compile_loopback_shim.sh" "$prefix/lib" >/dev/null
echo "$prefix/bin/gsserver"
