#!/usr/bin/env bash
# VictoriaMetrics' own steps on a fresh Debian 12 cloud VM. Not run as it is: runtimes/cloud_install.py
# prepends the header rendered from definition.py (VICTORIAMETRICS_VERSION; vm_flags, which prints
# the flags every runtime passes) and runtimes/cloud_lib.sh (log, apt_get, install_db_unit, wait_ready).
#
# Environment:
#   DATA_DIR     -storageDataPath (data/, indexdb/, cache/), e.g. /data/db on the data volume
#   DB_PASSWORD  the password of HTTP Basic user "tsbench" on every path but /health (required: an
#                empty one stops the script rather than run a server anyone could write to)
#
# Installs upstream's release binary of definition.py's version (the GitHub release's linux-amd64
# tarball, checked against the release's own checksums file: it guards against a damaged download,
# not against a compromised release) and runs it as user victoriametrics under systemd unit
# tsbench-db.service, HTTP on all interfaces at 8428 (the container's port).
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
: "${VICTORIAMETRICS_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
[[ -n "${DB_PASSWORD:-}" ]] || die "DB_PASSWORD is empty: VictoriaMetrics would accept anyone's writes and queries"
[[ "$DB_PASSWORD" != *$'\n'* ]] || die "DB_PASSWORD must be one line"

RELEASE="https://github.com/VictoriaMetrics/VictoriaMetrics/releases/download/v$VICTORIAMETRICS_VERSION"
TARBALL="victoria-metrics-linux-amd64-v$VICTORIAMETRICS_VERSION.tar.gz"
CHECKSUMS="victoria-metrics-linux-amd64-v${VICTORIAMETRICS_VERSION}_checksums.txt"
INSTALL_DIR=/opt/victoriametrics
BINARY="$INSTALL_DIR/victoria-metrics-prod"
SECRETS=/etc/victoriametrics

log "packages: curl"
apt_get update
apt_get install --no-install-recommends curl ca-certificates

log "VictoriaMetrics $VICTORIAMETRICS_VERSION release binary"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
curl -fsSL --retry 5 -o "$work/$TARBALL" "$RELEASE/$TARBALL"
curl -fsSL --retry 5 -o "$work/checksums.txt" "$RELEASE/$CHECKSUMS"
expected="$(awk -v name="$TARBALL" '$2 == name || $2 == "*" name { print $1 }' "$work/checksums.txt")"
[[ -n "$expected" ]] || die "$CHECKSUMS names no $TARBALL"
echo "$expected  $work/$TARBALL" | sha256sum -c --quiet - || die "SHA-256 mismatch for $TARBALL"
install -d -m 0755 "$INSTALL_DIR"
tar -xzf "$work/$TARBALL" -C "$work" victoria-metrics-prod
install -m 0755 "$work/victoria-metrics-prod" "$BINARY.tmp"
mv -f "$BINARY.tmp" "$BINARY"

log "user, directories, password file"
id victoriametrics >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin victoriametrics
install -d -o victoriametrics -g victoriametrics -m 0750 "$DATA_DIR"
install -d -o root -g victoriametrics -m 0750 "$SECRETS"
umask 027
printf '%s' "$DB_PASSWORD" >"$SECRETS/password.tmp"
chgrp victoriametrics "$SECRETS/password.tmp"
mv -f "$SECRETS/password.tmp" "$SECRETS/password"
umask 022

log "systemd unit tsbench-db.service"
flags="$(vm_flags | tr '\n' ' ')"
install_db_unit "VictoriaMetrics $VICTORIAMETRICS_VERSION" <<SERVICE
User=victoriametrics
Group=victoriametrics
ExecStart=$BINARY -storageDataPath=$DATA_DIR -httpListenAddr=:8428 -httpAuth.username=tsbench -httpAuth.password=file://$SECRETS/password $flags
LimitNOFILE=1048576
KillSignal=SIGINT
TimeoutStopSec=300
SERVICE

vm_answers() { [[ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8428/health)" == 200 ]]; }
wait_ready 180 "VictoriaMetrics $VICTORIAMETRICS_VERSION on :8428" vm_answers
