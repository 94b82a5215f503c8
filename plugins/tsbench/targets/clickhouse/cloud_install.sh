#!/usr/bin/env bash
# ClickHouse's own steps on a cloud VM (tsbench's aws runtime; see README.md). Not run as it is:
# runtimes/cloud_install.py prepends the header rendered from definition.py (CLICKHOUSE_VERSION;
# clickhouse_config and clickhouse_users, which print the configuration config.py declares for every
# runtime) and runtimes/cloud_lib.sh (log, die, apt_get, UNIT).
#
# Contract: bash, run as root on a fresh Debian 12 VM with internet access, the data volume mounted.
#   DATA_DIR     directory for everything the server keeps (created; owned by user clickhouse)
#   DB_PASSWORD  password of ClickHouse user `default` (required; stored only as SHA-256)
# Installs clickhouse-common-static/-server/-client of definition.py's version (the Docker image's
# release, held) from ClickHouse's official apt repository; the server listens on all interfaces on
# the container ports (HTTP 8123, native 9000) and nowhere else; database `tsbench` exists; systemd
# unit tsbench-db.service is enabled and started (the packaged clickhouse-server.service is disabled).
# Idempotent: a second run changes nothing and restarts the server only if its configuration changed.
set -euo pipefail

: "${CLICKHOUSE_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
REPO=https://packages.clickhouse.com
HTTP_PORT=8123
NATIVE_PORT=9000
DATABASE=tsbench
KEYRING=/usr/share/keyrings/clickhouse-keyring.gpg
SOURCES=/etc/apt/sources.list.d/clickhouse.list
CONFIG=/etc/clickhouse-server/config.d/tsbench.xml
USERS=/etc/clickhouse-server/users.d/tsbench.xml
PACKAGES=(clickhouse-common-static clickhouse-server clickhouse-client)
[[ "$(id -u)" -eq 0 ]] || die "run as root"
[[ -n "${DATA_DIR:-}" ]] || die "DATA_DIR must name the data directory"
[[ -n "${DB_PASSWORD:-}" ]] || die "DB_PASSWORD must be set (the server listens on all interfaces)"
[[ "$DATA_DIR" == /* ]] || die "DATA_DIR must be an absolute path"
DATA_DIR="${DATA_DIR%/}"
export DEBIAN_FRONTEND=noninteractive

installed_version() {
    if [[ -x /usr/bin/clickhouse ]]; then
        /usr/bin/clickhouse --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+' | head -n1 || true
    fi
}

# -- packages -------------------------------------------------------------------------------------
if [[ "$(installed_version)" != "$CLICKHOUSE_VERSION" ]]; then
    log "installing ClickHouse $CLICKHOUSE_VERSION from $REPO"
    apt_get update
    apt_get install --no-install-recommends ca-certificates curl gnupg >/dev/null
    curl -fsSL --retry 5 "$REPO/rpm/lts/repodata/repomd.xml.key" | gpg --dearmor --yes -o "$KEYRING"
    chmod 0644 "$KEYRING"
    echo "deb [signed-by=$KEYRING arch=$(dpkg --print-architecture)] $REPO/deb stable main" >"$SOURCES"
    apt_get update
    pinned=()
    for package in "${PACKAGES[@]}"; do
        pinned+=("$package=$CLICKHOUSE_VERSION")
    done
    apt-mark unhold "${PACKAGES[@]}" >/dev/null 2>&1 || true
    apt_get install --no-install-recommends --allow-downgrades "${pinned[@]}" >/dev/null
    apt-mark hold "${PACKAGES[@]}" >/dev/null
    [[ "$(installed_version)" == "$CLICKHOUSE_VERSION" ]] || die "ClickHouse $CLICKHOUSE_VERSION did not install"
fi
# tsbench-db.service runs the server; the package's own unit must not hold the ports.
systemctl disable --now clickhouse-server.service >/dev/null 2>&1 || true

# -- data directory and configuration ---------------------------------------------------------------
mkdir -p "$(dirname "$CONFIG")" "$(dirname "$USERS")"
install -d -o clickhouse -g clickhouse -m 0750 "$DATA_DIR" "$DATA_DIR/tmp" "$DATA_DIR/user_files" \
    "$DATA_DIR/format_schemas" "$DATA_DIR/access"

before="$(cat "$CONFIG" "$USERS" "$UNIT" 2>/dev/null | sha256sum)"

# write FILE MODE : stdin -> FILE (root:clickhouse), atomically
write() {
    local tmp="$1.tmp"
    cat >"$tmp"
    chown root:clickhouse "$tmp"
    chmod "$2" "$tmp"
    mv -f "$tmp" "$1"
}

# The configuration of every runtime (config.py), rendered with this VM's DATA_DIR and listener: the
# override of the stock config.xml and user default with the password's SHA-256 ($hash).
clickhouse_config | write "$CONFIG" 0640
# shellcheck disable=SC2034  # read by clickhouse_users
hash="$(printf '%s' "$DB_PASSWORD" | sha256sum | cut -d' ' -f1)"
clickhouse_users | write "$USERS" 0640

write "$UNIT" 0644 <<EOF
# written by tsbench (targets/clickhouse/cloud_install.sh)
[Unit]
Description=ClickHouse $CLICKHOUSE_VERSION server (tsbench)
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=clickhouse
Group=clickhouse
ExecStart=/usr/bin/clickhouse server --config-file=/etc/clickhouse-server/config.xml
Restart=on-failure
RestartSec=5
TimeoutStopSec=120
LimitNOFILE=262144
LimitCORE=0
AmbientCapabilities=CAP_NET_ADMIN CAP_IPC_LOCK CAP_SYS_NICE
CapabilityBoundingSet=CAP_NET_ADMIN CAP_IPC_LOCK CAP_SYS_NICE

[Install]
WantedBy=multi-user.target
EOF

after="$(cat "$CONFIG" "$USERS" "$UNIT" | sha256sum)"

# -- service --------------------------------------------------------------------------------------
systemctl daemon-reload
systemctl enable tsbench-db.service >/dev/null 2>&1
if [[ "$before" != "$after" ]] || ! systemctl is-active --quiet tsbench-db.service; then
    log "(re)starting tsbench-db.service"
    systemctl restart tsbench-db.service
fi

for _ in $(seq 1 120); do
    if [[ "$(curl -fsS --max-time 2 "http://127.0.0.1:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; then
        break
    fi
    sleep 1
done
[[ "$(curl -fsS --max-time 2 "http://127.0.0.1:$HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]] ||
    die "tsbench-db.service does not answer on :$HTTP_PORT/ping ($(systemctl is-active tsbench-db.service))"

# The password goes to curl on stdin (a quoted config line), never on a command line.
quoted="${DB_PASSWORD//\\/\\\\}"
quoted="${quoted//\"/\\\"}"
query() {
    printf 'user = "default:%s"\n' "$quoted" |
        curl -fsS --max-time 30 -K - --data-binary "$1" "http://127.0.0.1:$HTTP_PORT/"
}
query "CREATE DATABASE IF NOT EXISTS $DATABASE" >/dev/null
log "ClickHouse $(query 'SELECT version()') ready on :$HTTP_PORT (HTTP) and :$NATIVE_PORT (native), data in $DATA_DIR"
