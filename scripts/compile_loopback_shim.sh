#!/usr/bin/env bash
# Compile tsbench's loopback-bind library (plugins/tsbench/runtimes/native/loopback_bind.c; why: its
# comment) into DIR, named by its source's sha256 so that an edited source is compiled again;
# runtimes/loopback_shim.py computes the same name. Prints the library's path. Idempotent.
#
#   bash scripts/compile_loopback_shim.sh DIR   -> DIR/tsbench-loopback-bind-<sha12>.so
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"
dir="${1:?usage: compile_loopback_shim.sh DIR}"
SOURCE="$here/../plugins/tsbench/runtimes/native/loopback_bind.c"
sha12="$(sha256sum "$SOURCE" | head -c 12)"
LIBRARY="$dir/tsbench-loopback-bind-$sha12.so"
if [[ ! -s "$LIBRARY" ]]; then
    command -v gcc >/dev/null || apt_install gcc libc6-dev
    mkdir -p "$dir"
    gcc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$LIBRARY.part" "$SOURCE" -ldl
    mv -f "$LIBRARY.part" "$LIBRARY"
    log "compiled $LIBRARY"
fi
echo "$LIBRARY"
