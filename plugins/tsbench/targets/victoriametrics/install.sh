#!/usr/bin/env bash
# The local runtime's install recipe (scripts/install.sh victoriametrics, or the local runtime): the
# single-node VictoriaMetrics server built from its Go module at VICTORIAMETRICS_VERSION
# (definition.py's pin; the release binaries and images come from GitHub and Docker Hub, which are not
# reachable from our machines, the Go module proxy is).
#
#   -> $TSBENCH_OPT/victoriametrics/<version>/victoria-metrics   (`--version` in VERSION beside it)
#   Go caches: $TSBENCH_OPT/go/{path,mod,cache} (shared with the other Go builds).
#
# Recipe: `go install github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@<version>`
# (the module's go.mod has no `replace`; pure Go, CGO_ENABLED=0 as upstream's release builds), with
# the version stamped where upstream's Makefile stamps it (lib/buildinfo.Version), so the server
# reports it in --version and in /metrics (vm_app_version).
#
# Idempotent: skips when the binary exists (VICTORIAMETRICS_REBUILD=1 rebuilds). One build per
# machine at a time (CI starts it early, and the tests again): the second waits for the first.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"

: "${VICTORIAMETRICS_VERSION:?from targets/victoriametrics/definition.py: run scripts/install.sh victoriametrics}"
VERSION_DIR="$TSBENCH_OPT/victoriametrics/$VICTORIAMETRICS_VERSION"
BINARY="$VERSION_DIR/victoria-metrics"
MODULE="github.com/VictoriaMetrics/VictoriaMetrics"

REBUILD="${VICTORIAMETRICS_REBUILD:-}" build_once "$BINARY" "victoriametrics-$VICTORIAMETRICS_VERSION" \
    "victoria-metrics $VICTORIAMETRICS_VERSION"
command -v go >/dev/null || die "go is not on PATH (needed to build victoria-metrics $VICTORIAMETRICS_VERSION)"
go_build_env
build_dir="$TSBENCH_OPT/build/victoriametrics-$VICTORIAMETRICS_VERSION"
rm -rf "$build_dir"
mkdir -p "$build_dir" "$VERSION_DIR"
build_log="$build_dir/build.log"

stamp="victoria-metrics-$(date -u +%Y%m%d-%H%M%S)-tags-v$VICTORIAMETRICS_VERSION-0-gmodule"
log "building victoria-metrics $VICTORIAMETRICS_VERSION from the Go module $MODULE" \
    "($(go version | cut -d' ' -f3); output in $build_log)"
if ! CGO_ENABLED=0 GOBIN="$build_dir" go install -ldflags "-X $MODULE/lib/buildinfo.Version=$stamp" \
    "$MODULE/app/victoria-metrics@v$VICTORIAMETRICS_VERSION" >"$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    die "victoria-metrics $VICTORIAMETRICS_VERSION did not build (full output: $build_log)"
fi
# Install by rename: an interrupted build never leaves a binary that the next run would skip.
mv -f "$build_dir/victoria-metrics" "$BINARY"
"$BINARY" --version >"$VERSION_DIR/VERSION" 2>/dev/null || die "the built $BINARY does not run"
log "victoria-metrics installed: $BINARY ($(cat "$VERSION_DIR/VERSION"))"
echo "$BINARY"
