#!/usr/bin/env bash
# MongoDB Community Server's own steps on a fresh Debian 12 VM (both MongoDB targets run this server;
# targets/mongodb_naive/cloud_install.sh is a link to this file). Not run as it is:
# runtimes/cloud_install.py prepends the header rendered from definition.py (MONGODB_VERSION;
# mongodb_conf, which prints the configuration config.py declares for every runtime) and
# runtimes/cloud_lib.sh (log, die, UNIT).
#
# Contract: bash, as root, on a fresh Debian 12 (bookworm) VM with internet access. Environment:
#   DATA_DIR     directory for the database files (dbPath = $DATA_DIR/mongodb)      [required]
#   DB_PASSWORD  authorization on, with admin user "tsbench" (role root)            [required]
# Installs mongod pinned to MONGODB_VERSION from repo.mongodb.org (the version of the Docker image
# and of install.sh), listens on all interfaces on port 27017, and runs it as the
# systemd unit tsbench-db.service (enabled and started). Idempotent: a second run changes nothing
# and leaves the data in place.
set -euo pipefail

: "${MONGODB_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
SERIES="${MONGODB_VERSION%.*}"
PORT=27017
ADMIN_USER="tsbench"
KEYRING="/usr/share/keyrings/mongodb-server-${SERIES}.gpg"
LIST="/etc/apt/sources.list.d/mongodb-org-${SERIES}.list"
CONF="/etc/tsbench/mongod.conf"

[[ "$(id -u)" -eq 0 ]] || die "run as root"
[[ -n "${DATA_DIR:-}" ]] || die "DATA_DIR is not set"
[[ -n "${DB_PASSWORD:-}" ]] || die "DB_PASSWORD is empty: mongod would run without authorization"
DB_DIR="$DATA_DIR/mongodb"
export DEBIAN_FRONTEND=noninteractive

# 1. mongod (and mongosh, to create the admin user) from MongoDB's repository, version pinned.
if [[ "$(mongod --version 2>/dev/null | sed -n 's/^db version v//p' | head -n1)" != "$MONGODB_VERSION" ]]; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends ca-certificates curl gnupg >/dev/null
    if [[ ! -s "$KEYRING" ]]; then
        curl -fsSL --retry 5 "https://pgp.mongodb.com/server-${SERIES}.asc" |
            gpg --batch --yes --dearmor -o "$KEYRING"
    fi
    echo "deb [ signed-by=${KEYRING} ] https://repo.mongodb.org/apt/debian bookworm/mongodb-org/${SERIES} main" >"$LIST"
    apt-get update -qq
    apt-mark unhold mongodb-org-server >/dev/null 2>&1 || true
    apt-get install -y -qq --no-install-recommends --allow-downgrades \
        "mongodb-org-server=${MONGODB_VERSION}" mongodb-mongosh >/dev/null
    apt-mark hold mongodb-org-server >/dev/null
fi
# The packaged unit would start a second mongod on the same port with /var/lib/mongodb.
systemctl disable --now mongod.service >/dev/null 2>&1 || true

# 2. Data directory and configuration.
install -d -m 755 "$DATA_DIR"
install -d -o mongodb -g mongodb -m 750 "$DB_DIR"
runuser -u mongodb -- test -w "$DB_DIR" ||
    die "user mongodb cannot write $DB_DIR (a parent directory of DATA_DIR is not searchable?)"
install -d -m 755 /etc/tsbench
# shellcheck disable=SC2034  # authorization: read by mongodb_conf
authorization="enabled"
conf_tmp="$(mktemp)"
# The configuration of every runtime (config.py), rendered with this VM's DB_DIR and authorization.
mongodb_conf >"$conf_tmp"
changed=0
if ! cmp -s "$conf_tmp" "$CONF"; then
    install -m 644 "$conf_tmp" "$CONF"
    changed=1
fi
rm -f "$conf_tmp"

unit_tmp="$(mktemp)"
cat >"$unit_tmp" <<EOF
[Unit]
Description=tsbench database server (MongoDB ${MONGODB_VERSION})
After=network-online.target
Wants=network-online.target

[Service]
User=mongodb
Group=mongodb
ExecStart=/usr/bin/mongod --config ${CONF}
LimitNOFILE=64000
LimitNPROC=64000
TimeoutStopSec=300
Restart=on-failure

[Install]
WantedBy=multi-user.target
EOF
if ! cmp -s "$unit_tmp" "$UNIT"; then
    install -m 644 "$unit_tmp" "$UNIT"
    changed=1
fi
rm -f "$unit_tmp"

# 3. Service: enabled and running (restarted only when its configuration changed).
systemctl daemon-reload
systemctl enable tsbench-db.service >/dev/null 2>&1
if [[ "$changed" -eq 1 ]]; then
    systemctl restart tsbench-db.service
else
    systemctl start tsbench-db.service
fi
for _ in $(seq 1 120); do
    mongosh --quiet --norc --port "$PORT" --eval 'quit(db.adminCommand({ping: 1}).ok ? 0 : 1)' \
        >/dev/null 2>&1 && break
    sleep 1
done
mongosh --quiet --norc --port "$PORT" --eval 'quit(db.adminCommand({ping: 1}).ok ? 0 : 1)' >/dev/null 2>&1 ||
    die "mongod did not answer on port $PORT within 120 s (journalctl -u tsbench-db.service)"

# 4. Admin user (the password travels in the environment, never on a command line).
export DB_PASSWORD
if DB_USER="$ADMIN_USER" mongosh --quiet --norc --port "$PORT" --eval '
    try { db.getSiblingDB("admin").auth(process.env.DB_USER, process.env.DB_PASSWORD); quit(0) }
    catch (e) { quit(1) }' >/dev/null 2>&1; then
    log "admin user $ADMIN_USER exists"
else
    # Allowed once, through the localhost exception, while no user exists.
    DB_USER="$ADMIN_USER" mongosh --quiet --norc --port "$PORT" --eval '
        db.getSiblingDB("admin").createUser(
            {user: process.env.DB_USER, pwd: process.env.DB_PASSWORD, roles: ["root"]})' >/dev/null ||
        die "could not create admin user $ADMIN_USER (does another user exist with another password?)"
    log "admin user $ADMIN_USER created"
fi
log "MongoDB $(mongod --version | sed -n 's/^db version v//p' | head -n1) running as tsbench-db.service, dbPath $DB_DIR"
