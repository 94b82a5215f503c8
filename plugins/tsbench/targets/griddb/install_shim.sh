#!/usr/bin/env bash
# tsbench's loopback-bind library for the local GridDB node (native/loopback_bind.c; why: that file's
# comment), compiled with the system's gcc and named by its source's sha256 so an edited source is
# rebuilt; server.py computes the same name and preloads it.
#
#   -> $TSBENCH_OPT/griddb-$GRIDDB_VERSION/lib/tsbench-loopback-bind-<sha12>.so
#
# Run by install.sh after build.sh. Prints the library's path. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/../../../../scripts/lib.sh"
: "${GRIDDB_VERSION:?from targets/griddb/definition.py: run scripts/install.sh griddb}"
SOURCE="$here/native/loopback_bind.c"
sha12="$(sha256sum "$SOURCE" | head -c 12)"
LIBRARY="$TSBENCH_OPT/griddb-$GRIDDB_VERSION/lib/tsbench-loopback-bind-$sha12.so"
if [[ ! -s "$LIBRARY" ]]; then
    apt_install gcc libc6-dev
    mkdir -p "$(dirname "$LIBRARY")"
    gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$LIBRARY.part" "$SOURCE" -ldl
    mv -f "$LIBRARY.part" "$LIBRARY"
    log "compiled $LIBRARY"
fi
echo "$LIBRARY"
