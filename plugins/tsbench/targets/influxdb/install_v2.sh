#!/usr/bin/env bash
# Build the InfluxDB OSS v2.7.12 server `influxd` from its Go module (release tarballs and
# images come from GitHub/Docker Hub, which are not reachable; the Go proxy and crates.io are).
#
#   -> $TSBENCH_OPT/influxdb2/influxd  (~130 MB, ~7-8 min build on 2 cores from empty caches)
#      `influxd version` in $TSBENCH_OPT/influxdb2/VERSION (build_date = the module's release time)
#   Go caches: $TSBENCH_OPT/go/{path,mod,cache} (shared with install_minio.sh; Flux's Rust build
#   lands in $TSBENCH_OPT/go/cache/pkgconfig). Generated build files (go.mod, go.sum,
#   bin/pkg-config, rustc-wrap.sh, build.log): $TSBENCH_OPT/build/influxdb2/.
#
# Recipe (each step is needed):
#   * `go install .../cmd/influxd@v2.7.12` is refused (influxdb's go.mod has a `replace`), so a
#     throw-away main module takes influxdb's own go.mod and go.sum (same requires, the one
#     `replace`), is renamed, requires influxdb v2.7.12 and `go build`s cmd/influxd.
#   * Flux's cgo package needs `pkg-config flux` (flux_build.sh, shared with the 1.x recipe): InfluxData's pkg-config (Go module
#     github.com/influxdata/pkg-config at the version influxdb requires; PKG_CONFIG=...) builds
#     libflux with cargo from crates.io; it delegates to the system pkg-config, so that must be
#     installed too.
#   * Flux pins Rust 1.72 (rust-toolchain.toml), which is not installed: RUSTUP_TOOLCHAIN selects
#     another toolchain (default `stable`) and a RUSTC_WRAPPER adds `--cap-lints warn`, so lints
#     that newer compilers added do not fail Flux's `deny(...)` attributes.
#   * Build tags as upstream's GNUmakefile (sqlite_foreign_keys,sqlite_json) but without `assets`
#     (the UI is fetched from GitHub): the server has no web UI; the HTTP API is complete.
#
# Needs: go >= 1.23 and rustup with a stable toolchain (~/.cargo/bin is added to PATH if cargo
# is missing); gcc, libc6-dev and pkg-config come from apt. Nothing is printed on stdout.
# Overrides: INFLUXDB2_VERSION (default v2.7.12), INFLUXDB2_RUST_TOOLCHAIN (default stable).
#
# Run (verified by tests/integration/test_influxdb_v2.py):
#   influxd --bolt-path=<dir>/influxd.bolt --engine-path=<dir>/engine \
#           --http-bind-address=127.0.0.1:<port>
#   readiness: GET http://127.0.0.1:<port>/health -> 200; first use: POST /api/v2/setup
#
# Idempotent: skips when the binary exists (set INFLUXDB2_REBUILD=1 to rebuild).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
# shellcheck source=plugins/tsbench/targets/influxdb/flux_build.sh
source "$(dirname "${BASH_SOURCE[0]}")/flux_build.sh"

INFLUXDB2_VERSION="${INFLUXDB2_VERSION:-v2.7.12}"
INFLUXDB2_DIR="$TSBENCH_OPT/influxdb2"
INFLUXD2="$INFLUXDB2_DIR/influxd"
BUILD_DIR="$TSBENCH_OPT/build/influxdb2"
INFLUXDB_MODULE="github.com/influxdata/influxdb/v2"

if [[ -x "$INFLUXD2" && -z "${INFLUXDB2_REBUILD:-}" ]]; then
    log "influxd 2 already installed: $INFLUXD2 ($(cat "$INFLUXDB2_DIR/VERSION" 2>/dev/null || echo '?'))"
    exit 0
fi
# One build at a time per machine (CI starts this build early, and again before the tests): the
# second waits for the first, then finds influxd built.
mkdir -p "$TSBENCH_OPT"
exec 9>"$TSBENCH_OPT/influxdb2.lock"
flock 9
if [[ -x "$INFLUXD2" && -z "${INFLUXDB2_REBUILD:-}" ]]; then
    log "influxd 2 built meanwhile: $INFLUXD2"
    exit 0
fi

command -v go >/dev/null || die "go is not on PATH (needed to build influxd)"
go_build_env -mod=mod

rm -rf "$BUILD_DIR"
mkdir -p "$BUILD_DIR/bin" "$INFLUXDB2_DIR"
cd "$BUILD_DIR"
build_log="$BUILD_DIR/build.log"

# run CMD... : run a build step with its output in build.log; on failure show the log's tail.
run() {
    if ! "$@" >>"$build_log" 2>&1; then
        tail -n 40 "$build_log" >&2
        die "failed: $* (full output: $build_log)"
    fi
}

# The build module: influxdb's own go.mod and go.sum, renamed, requiring influxdb itself.
run go mod download "$INFLUXDB_MODULE@$INFLUXDB2_VERSION"
module_info="$(go list -m -f '{{.Dir}} {{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' \
    "$INFLUXDB_MODULE@$INFLUXDB2_VERSION")" || die "go list -m $INFLUXDB_MODULE@$INFLUXDB2_VERSION failed"
read -r module_dir module_time <<<"$module_info"
cp "$module_dir/go.mod" "$module_dir/go.sum" .
chmod u+w go.mod go.sum
go mod edit -module tsbench.local/influxd2build -require="$INFLUXDB_MODULE@$INFLUXDB2_VERSION"

# InfluxData's pkg-config at the version influxdb's go.mod requires (v0.2.14 for v2.7.12).
pkg_config_version="$(go list -m -f '{{.Version}}' github.com/influxdata/pkg-config)" ||
    die "influxdb $INFLUXDB2_VERSION does not require github.com/influxdata/pkg-config"
log "go install github.com/influxdata/pkg-config@$pkg_config_version"
INFLUXDB_RUST_TOOLCHAIN="${INFLUXDB2_RUST_TOOLCHAIN:-${INFLUXDB_RUST_TOOLCHAIN:-stable}}"
flux_build_env "$BUILD_DIR" "$pkg_config_version" >&2
rustc_version="$(rustc --version)"

log "building influxd $INFLUXDB2_VERSION with $rustc_version" \
    "(~8 min on 2 cores from empty caches; output in $build_log)"
run go build -tags sqlite_foreign_keys,sqlite_json \
    -ldflags "-X main.version=$INFLUXDB2_VERSION -X main.date=$module_time" \
    -o "$BUILD_DIR/influxd" "$INFLUXDB_MODULE/cmd/influxd"

# Install by rename, so an interrupted build never leaves a binary that the next run would skip.
mv -f "$BUILD_DIR/influxd" "$INFLUXD2"
"$INFLUXD2" version >"$INFLUXDB2_DIR/VERSION" 2>/dev/null || die "the built $INFLUXD2 does not run"
log "influxd 2 installed: $INFLUXD2 ($(cat "$INFLUXDB2_DIR/VERSION"))"
