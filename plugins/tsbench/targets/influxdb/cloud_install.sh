#!/usr/bin/env bash
# InfluxDB's own steps on a fresh Debian 12 cloud VM: INFLUXDB_VERSION from InfluxData's official apt
# repository. Not run as it is: runtimes/cloud_install.py prepends the header rendered from
# definition.py (INFLUXDB_VERSION; influxdb_conf, which prints the configuration config.py declares for
# every runtime; process_gogc and process_gomemlimit on this VM's memory) and runtimes/cloud_lib.sh
# (log, apt_get, install_db_unit, wait_ready).
#
# Environment:
#   DATA_DIR     meta/, data/ (TSM files, series file) and wal/, e.g. /data/db on the data volume
#   DB_PASSWORD  the password of the admin "tsbench" (required): HTTP authentication is on, as in every
#                runtime (config.py); the admin is created right after the first start (InfluxDB 1.x
#                lets the first caller create the first admin: the security group admits only the
#                orchestrator), and a re-run finds it there (401).
#
# The repository key is checked against InfluxData's published fingerprint before it is trusted. The
# package's own influxdb.service is stopped and masked; systemd unit tsbench-db.service runs
# influxd -config /etc/influxdb/tsbench.conf as user influxdb, HTTP API on all interfaces at 8086,
# backup/restore RPC at 8088, with the local runtime's settings (the same declaration).
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
: "${INFLUXDB_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"

REPO_URL=https://repos.influxdata.com/debian
KEY_URL=https://repos.influxdata.com/influxdata-archive.key
KEY_FINGERPRINT=24C975CBA61A024EE1B631787C3D57159FC2F927
KEYRING=/etc/apt/keyrings/influxdata-archive.gpg
CONFIG=/etc/influxdb/tsbench.conf

[[ -n "${DB_PASSWORD:-}" ]] || die "DB_PASSWORD is empty: InfluxDB's HTTP API would have no admin"
# An InfluxQL string literal: no quote, backslash or line break to escape.
[[ "$DB_PASSWORD" != *[$'\n'\'\\]* ]] || die "DB_PASSWORD must not hold a quote, a backslash or a line break"

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
# The configuration of every runtime (config.py), rendered with this VM's DATA_DIR and listeners.
influxdb_conf >"$CONFIG.tmp"
chmod 0644 "$CONFIG.tmp"
mv -f "$CONFIG.tmp" "$CONFIG"

log "systemd unit tsbench-db.service"
install_db_unit "InfluxDB $INFLUXDB_VERSION" <<SERVICE
User=influxdb
Group=influxdb
Environment=GOGC=$process_gogc GOMEMLIMIT=$process_gomemlimit
ExecStart=/usr/bin/influxd -config $CONFIG
LimitNOFILE=1048576
KillSignal=SIGTERM
TimeoutStopSec=300
SERVICE

influxdb_answers() { [[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8086/ping)" == 204 ]]; }
wait_ready 180 "InfluxDB $INFLUXDB_VERSION on :8086" influxdb_answers

log "admin user tsbench"
statement="$(mktemp)"
answer="$(mktemp)"
chmod 0600 "$statement" "$answer"
printf "CREATE USER tsbench WITH PASSWORD '%s' WITH ALL PRIVILEGES" "$DB_PASSWORD" >"$statement"
code="$(curl -s -o "$answer" -w '%{http_code}' --data-urlencode "q@$statement" http://127.0.0.1:8086/query)"
rm -f "$statement"
if [[ "$code" == 401 ]]; then
    log "admin user tsbench: already there (a re-run)"
elif [[ "$code" != 200 ]] || grep -q '"error"' "$answer"; then
    die "CREATE USER tsbench failed: HTTP $code $(head -c 300 "$answer")"
fi
rm -f "$answer"
