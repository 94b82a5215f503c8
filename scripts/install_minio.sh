#!/usr/bin/env bash
# Build the MinIO server (a real S3-compatible server, used to test S3
# publication with boto3) from the Go module proxy.
#
#   -> $TSBENCH_OPT/minio/bin/minio      (~150 MB, ~5 min build on 2 cores)
#   Go caches: $TSBENCH_OPT/go/{path,mod,cache} so a rebuild reuses them.
#
# The `mc` client is NOT installed: tsbench talks to MinIO with boto3.
#
# Run (verified):
#   MINIO_ROOT_USER=... MINIO_ROOT_PASSWORD=... \
#     minio server <dir> --address 127.0.0.1:<port> --console-address 127.0.0.1:<port2>
#   readiness: GET http://127.0.0.1:<port>/minio/health/live -> 200
#
# Idempotent: skips when the binary exists (set MINIO_REBUILD=1 to rebuild).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Pinned: the pseudo-version `@latest` resolved to on 2026-11-22 (reproducible builds).
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
MINIO_BIN_DIR="$TSBENCH_OPT/minio/bin"
MINIO_BIN="$MINIO_BIN_DIR/minio"

if [[ -x "$MINIO_BIN" && -z "${MINIO_REBUILD:-}" ]]; then
    log "minio already installed: $MINIO_BIN ($(cat "$TSBENCH_OPT/minio/VERSION" 2>/dev/null || echo '?'))"
    echo "$MINIO_BIN"
    exit 0
fi

command -v go >/dev/null || die "go is not on PATH (needed to build minio)"

mkdir -p "$MINIO_BIN_DIR" "$TSBENCH_OPT/go"
log "go install github.com/minio/minio@$MINIO_VERSION (takes ~5 min)"
GOBIN="$MINIO_BIN_DIR" \
    GOPATH="$TSBENCH_OPT/go/path" \
    GOMODCACHE="$TSBENCH_OPT/go/mod" \
    GOCACHE="$TSBENCH_OPT/go/cache" \
    GOFLAGS="-buildvcs=false -modcacherw" \
    go install "github.com/minio/minio@$MINIO_VERSION"

[[ -x "$MINIO_BIN" ]] || die "go install finished but $MINIO_BIN is missing"
# Module version as resolved by the proxy (e.g. v0.0.0-2025...-<sha>).
go version -m "$MINIO_BIN" | awk '$1 == "mod" && $2 == "github.com/minio/minio" {print $3}' \
    >"$TSBENCH_OPT/minio/VERSION"
log "minio installed: $MINIO_BIN ($(cat "$TSBENCH_OPT/minio/VERSION"))"
echo "$MINIO_BIN"
