#!/usr/bin/env bash
# The local runtime's install recipe (scripts/install.sh influxdb, or the local runtime): the InfluxDB
# 1.x server `influxd` built from its Go module at INFLUXDB_VERSION (definition.py's pin: the
# studies' 1.8 and the container's version; InfluxData's packages and images are not reachable from
# our machines, the Go module proxy is). The releases definition.py declares are built the same way,
# side by side: INFLUXDB_VERSION=<release> scripts/install.sh influxdb.
#
#   -> $TSBENCH_OPT/influxdb/<version>/influxd   (~60 MB; 89 s here, 56 modules downloaded, Go build cache warm)
#      `influxd version` in $TSBENCH_OPT/influxdb/<version>/VERSION (server.py runs that binary)
#   Go caches: $TSBENCH_OPT/go/{path,mod,cache} (shared with the other Go builds).
#
# Recipe: `go install github.com/influxdata/influxdb/cmd/influxd@v<version>` (influxdb 1.x's go.mod
# has no `replace`, so the go command builds it as published), with the version stamped into the
# binary (`-X main.version`), as upstream's release builds do. 1.8 is pure Go (Flux's Rust parser is
# behind the `libflux` build tag, not set); from 1.9 on Flux's cgo package needs its Rust library,
# which flux_build.sh builds (InfluxData's pkg-config and cargo, as for influxd 2).
#
# Own conf (server.py; InfluxDB 1.x TOML; every listener moved off the defaults):
#   reporting-disabled = true
#   bind-address = "127.0.0.1:<rpc port>"      # top level! backup/restore RPC, default :8088
#   [meta]  dir = "<root>/meta"
#   [data]  dir = "<root>/data"   wal-dir = "<root>/wal"   query-log-enabled = false
#   [http]  enabled = true   bind-address = "127.0.0.1:<http port>"
#   readiness: GET http://127.0.0.1:<http port>/ping -> 204 (header X-Influxdb-Version: the version)
#   stop: SIGTERM (shuts down in ~1-2 s)
# ([[graphite]], [[udp]], [[collectd]], [[opentsdb]] are off by default.)
#
# Idempotent: skips when the binary exists (INFLUXDB_REBUILD=1 rebuilds). One build per machine at a
# time (CI starts it early, and the tests again): the second waits for the first.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
# shellcheck source=plugins/tsbench/targets/influxdb/flux_build.sh
source "$(dirname "${BASH_SOURCE[0]}")/flux_build.sh"

: "${INFLUXDB_VERSION:?from targets/influxdb/definition.py: run scripts/install.sh influxdb}"
VERSION_DIR="$TSBENCH_OPT/influxdb/$INFLUXDB_VERSION"
INFLUXD="$VERSION_DIR/influxd"
MODULE="github.com/influxdata/influxdb"

REBUILD="${INFLUXDB_REBUILD:-}" build_once "$INFLUXD" "influxdb-$INFLUXDB_VERSION" "influxd $INFLUXDB_VERSION"
command -v go >/dev/null || die "go is not on PATH (needed to build influxd $INFLUXDB_VERSION)"
go_build_env
build_dir="$TSBENCH_OPT/build/influxdb-$INFLUXDB_VERSION"
rm -rf "$build_dir"
mkdir -p "$build_dir" "$VERSION_DIR"
build_log="$build_dir/build.log"

# From 1.9 on, influxd embeds Flux, whose cgo package needs its Rust library (flux_build.sh): InfluxData's
# pkg-config at the version the server's go.mod requires builds it with cargo (1.8 is pure Go).
if [[ "$(printf '%s\n' 1.9 "$INFLUXDB_VERSION" | sort -V | head -n 1)" == 1.9 ]]; then
    go mod download "$MODULE@v$INFLUXDB_VERSION" >"$build_log" 2>&1 ||
        die "the Go module proxy does not serve $MODULE@v$INFLUXDB_VERSION (output: $build_log)"
    module_dir="$(go list -m -f '{{.Dir}}' "$MODULE@v$INFLUXDB_VERSION")"
    pkg_config_version="$(awk '$1 == "github.com/influxdata/pkg-config" { print $2 }' "$module_dir/go.mod")"
    [[ -n "$pkg_config_version" ]] || die "influxdb $INFLUXDB_VERSION's go.mod requires no github.com/influxdata/pkg-config"
    log "influxd $INFLUXDB_VERSION embeds Flux: its Rust library through pkg-config $pkg_config_version"
    flux_build_env "$build_dir" "$pkg_config_version" >&2
fi

log "building influxd $INFLUXDB_VERSION from the Go module $MODULE ($(go version | cut -d' ' -f3);" \
    "1.5 min on 2 cores for 1.8, longer with Flux's Rust library; output in $build_log)"
if ! GOBIN="$build_dir" go install -ldflags "-X main.version=$INFLUXDB_VERSION -X main.branch=v$INFLUXDB_VERSION" \
    "$MODULE/cmd/influxd@v$INFLUXDB_VERSION" >>"$build_log" 2>&1; then
    tail -n 40 "$build_log" >&2
    die "influxd $INFLUXDB_VERSION did not build (full output: $build_log)"
fi
# Install by rename: an interrupted build never leaves a binary that the next run would skip.
mv -f "$build_dir/influxd" "$INFLUXD"
"$INFLUXD" version >"$VERSION_DIR/VERSION" 2>/dev/null || die "the built $INFLUXD does not run"
log "influxd installed: $INFLUXD ($(cat "$VERSION_DIR/VERSION"))"
echo "$INFLUXD"
