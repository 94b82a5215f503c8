#!/usr/bin/env bash
# Install every server tsbench runs as a local process (see scripts/README.md):
# PostgreSQL 15 + TimescaleDB 2.19.3 (Apache-2), QuestDB 9.3.4, InfluxDB 1.6.7, MinIO.
# Idempotent: a second run only checks (well under a second per piece).
# Set TSBENCH_SKIP_MINIO=1 to skip the ~5 min MinIO build.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib.sh
source "$here/lib.sh"

timed() {
    local name="$1" start
    shift
    start=$(date +%s)
    "$@" >/dev/null
    log "$name done in $(($(date +%s) - start))s"
}

timed postgres "$here/install_postgres.sh"
timed timescaledb "$here/install_timescaledb.sh"
timed questdb "$here/install_questdb.sh"
timed influxdb "$here/install_influxdb.sh"
if [[ -z "${TSBENCH_SKIP_MINIO:-}" ]]; then
    timed minio "$here/install_minio.sh"
fi

pg_ver="$("$PG_BIN/postgres" --version | awk '{print $3}')"
ts_ver="$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$("$PG_BIN/pg_config" --sharedir)/extension/timescaledb.control")"
influx_ver="$("$(cat "$TSBENCH_OPT/influxdb/influxd.path")" version | awk '{print $2}')"
if [[ -z "${TSBENCH_SKIP_MINIO:-}" ]]; then
    minio_ver="$(cat "$TSBENCH_OPT/minio/VERSION")"
else
    minio_ver="skipped"
fi
echo "tsbench servers: postgresql=$pg_ver timescaledb=$ts_ver(apache) questdb=$QUESTDB_VERSION influxdb=$influx_ver minio=$minio_ver (opt=$TSBENCH_OPT)"
