#!/usr/bin/env bash
# InfluxDB 1.8.10 (InfluxData's official apt repository) on a fresh Debian 12 cloud VM (tsbench's
# cloud runtime). Runs as root, from the benchmark host's first-boot script
# (infra/modules/benchmark_host); safe to run again.
#
# Environment:
#   DATA_DIR     meta/, data/ (TSM files, series file) and wal/, e.g. /data/db on the data volume
#   DB_PASSWORD  not used: HTTP authentication stays off, as in TSBS's runs and the local runtime (the
#                influxdb target sends no credentials); the security group admits only the orchestrator.
#
# The repository key is checked against InfluxData's published fingerprint before it is trusted. The
# package's own influxdb.service is stopped and masked; systemd unit tsbench-db.service runs
# influxd -config /etc/influxdb/tsbench.conf as user influxdb, HTTP API on all interfaces at 8086,
# backup/restore RPC at 8088. Settings follow the local runtime's (targets/influxdb/server.py, README)
# except the Go GC settings (GOGC/GOMEMLIMIT were tuned for the 2-core machines).
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"

INFLUXDB_VERSION=1.8.10
REPO_URL=https://repos.influxdata.com/debian
KEY_URL=https://repos.influxdata.com/influxdata-archive.key
KEY_FINGERPRINT=24C975CBA61A024EE1B631787C3D57159FC2F927
KEYRING=/etc/apt/keyrings/influxdata-archive.gpg
CONFIG=/etc/influxdb/tsbench.conf
UNIT=/etc/systemd/system/tsbench-db.service

log() { echo "[influxdb cloud_install] $*"; }
die() {
    log "ERROR: $*" >&2
    exit 1
}
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"; }

if [[ -n "${DB_PASSWORD:-}" ]]; then
    log "note: DB_PASSWORD is ignored (HTTP authentication is off, see the header of this script)"
fi

log "InfluxData apt repository"
apt_get update
apt_get install --no-install-recommends curl gnupg ca-certificates
install -d -m 0755 /etc/apt/keyrings
key="$(mktemp)"
trap 'rm -f "$key"' EXIT
curl -fsSL --retry 5 -o "$key" "$KEY_URL"
gpg --show-keys --with-colons --with-fingerprint "$key" 2>/dev/null | grep -q "^fpr:*$KEY_FINGERPRINT:" ||
    die "$KEY_URL does not carry the expected fingerprint $KEY_FINGERPRINT"
gpg --dearmor --yes -o "$KEYRING" <"$key"
chmod 0644 "$KEYRING"
echo "deb [signed-by=$KEYRING] $REPO_URL stable main" >/etc/apt/sources.list.d/influxdata.list
apt_get update

log "influxdb $INFLUXDB_VERSION"
version="$(apt-cache madison influxdb | awk -v want="$INFLUXDB_VERSION" \
    '{ split($3, v, "-"); if (v[1] == want) { print $3; exit } }')"
[[ -n "$version" ]] || die "influxdb $INFLUXDB_VERSION is not in $REPO_URL"
apt_get install --no-install-recommends --allow-downgrades "influxdb=$version"
apt-mark hold influxdb >/dev/null # no upgrade (and restart) mid-benchmark
# The package starts its own server on the default ports: ours replaces it.
systemctl disable --now influxdb.service >/dev/null 2>&1 || true
systemctl mask influxdb.service >/dev/null

log "directories and configuration"
install -d -o influxdb -g influxdb -m 0750 "$DATA_DIR" "$DATA_DIR/meta" "$DATA_DIR/data" "$DATA_DIR/wal"
cat >"$CONFIG.tmp" <<CONF
# written by tsbench (plugins/tsbench/targets/influxdb/cloud_install.sh); see targets/influxdb/README.md
reporting-enabled = false
bind-address = ":8088"

[meta]
  dir = "$DATA_DIR/meta"
  logging-enabled = false

[data]
  dir = "$DATA_DIR/data"
  wal-dir = "$DATA_DIR/wal"
  query-log-enabled = false
  index-version = "inmem"
  cache-max-memory-size = "4g"
  cache-snapshot-memory-size = "25m"
  wal-fsync-delay = "0s"
  max-series-per-database = 0
  max-values-per-tag = 0
  max-concurrent-compactions = 0

[coordinator]
  write-timeout = "60s"

[retention]
  enabled = false

[shard-precreation]
  enabled = false

[monitor]
  store-enabled = false

[subscriber]
  enabled = false

[continuous_queries]
  enabled = false

[http]
  enabled = true
  bind-address = ":8086"
  auth-enabled = false
  log-enabled = false
  pprof-enabled = false
  max-row-limit = 0
  max-body-size = 0

[logging]
  level = "warn"
  suppress-logo = true
CONF
chmod 0644 "$CONFIG.tmp"
mv -f "$CONFIG.tmp" "$CONFIG"

log "systemd unit tsbench-db.service"
cat >"$UNIT" <<UNIT
[Unit]
Description=tsbench database: InfluxDB $INFLUXDB_VERSION
After=network-online.target
Wants=network-online.target
RequiresMountsFor=$DATA_DIR

[Service]
User=influxdb
Group=influxdb
ExecStart=/usr/bin/influxd -config $CONFIG
LimitNOFILE=1048576
KillSignal=SIGTERM
TimeoutStopSec=300
# No automatic restart: a crash during a benchmark must show, not be hidden.
Restart=no

[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable tsbench-db.service
systemctl restart tsbench-db.service

log "waiting for InfluxDB to answer on :8086"
for _ in $(seq 1 180); do
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8086/ping)" == 204 ]]; then
        log "InfluxDB $INFLUXDB_VERSION is ready"
        exit 0
    fi
    sleep 1
done
journalctl -u tsbench-db.service -n 50 --no-pager || true
die "InfluxDB did not become ready within 180 s"
