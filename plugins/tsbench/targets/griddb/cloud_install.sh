#!/usr/bin/env bash
# GridDB CE's own steps on a fresh Debian 12 cloud VM (tsbench's cloud runtime). Not run as it is:
# runtimes/cloud_install.py prepends the header rendered from definition.py (GRIDDB_VERSION,
# GRIDDB_SOURCE_COMMIT; griddb_node_json and griddb_cluster_json, which print the configuration
# config.py declares for every runtime, on this VM's cores and memory) and runtimes/cloud_lib.sh (log, die, apt_get, install_db_unit). Runs as root, from the benchmark host's
# first-boot script (infra/modules/benchmark_host); safe to run again.
#
# Environment:
#   DATA_DIR        GridDB's data files (DATA_DIR/data) and transaction log = WAL (DATA_DIR/txnlog),
#                   e.g. /data/db on the data volume; the node agent's footprint counts exactly these.
#                   GS_HOME (configuration, event logs, backup/sync/swap) stays at /var/lib/gridstore.
#   DB_PASSWORD     password of the GridDB administrators "admin" and "system" (required: an
#                   empty one stops the script rather than keep GridDB's default "admin").
#   PUBLIC_ADDRESS  optional: the VM's public IPv4. Set it when clients connect from outside the VM's
#                   network: it becomes transaction.publicServiceAddress and the client must use
#                   connectionRoute=PUBLIC (endpoint extra "connection_route": "PUBLIC").
#
# Builds GridDB from the same source as the local recipe (build.sh): the pinned commit of
# github.com/griddb/griddb (the commit the vendored archive was made from; git checks the content by
# its hash), bootstrap + configure + make on the VM's cores, gsserver installed under
# /opt/griddb-<version>. Runs the node as user gsadm under systemd unit tsbench-db.service: a one-node
# cluster "tsbench" (fixed list at the VM's primary address), GridDB's default ports on all interfaces
# (the client is on another machine; the VM's security group decides who may connect): 10001
# transaction (clients), 10040 system (REST), 10010 cluster, 10020 sync, 20001 sql. After each start
# the unit joins the node to its cluster (what gs_joincluster does); SIGTERM stops it (what
# gs_stopnode --rc sends).
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
DB_PASSWORD="${DB_PASSWORD:-}"
PUBLIC_ADDRESS="${PUBLIC_ADDRESS:-}"

: "${GRIDDB_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
: "${GRIDDB_SOURCE_COMMIT:?rendered from definition.py by runtimes/cloud_install.py}"
REPOSITORY=https://github.com/griddb/griddb.git
PREFIX="/opt/griddb-$GRIDDB_VERSION"
GS_HOME=/var/lib/gridstore
CLUSTER=tsbench
SECRET=/etc/tsbench/griddb-admin.password
JOIN=/usr/local/lib/tsbench/griddb-join

[[ "$DB_PASSWORD" != *$'\n'* ]] || die "DB_PASSWORD must be one line"
[[ -n "$DB_PASSWORD" ]] || die "DB_PASSWORD is empty: the administrators would keep GridDB's default password"

log "packages: GridDB's build dependencies, git, curl, iproute2"
apt_get update
apt_get install --no-install-recommends autoconf automake libtool make g++ zlib1g-dev tcl ant \
    uuid-dev openjdk-17-jdk-headless python3 git curl ca-certificates iproute2

if [[ ! -x "$PREFIX/bin/gsserver" ]]; then
    log "GridDB $GRIDDB_VERSION from $REPOSITORY at $GRIDDB_SOURCE_COMMIT"
    src=/var/tmp/griddb-src
    rm -rf "$src" && git init -q "$src"
    git -C "$src" fetch -q --depth 1 "$REPOSITORY" "$GRIDDB_SOURCE_COMMIT"
    git -C "$src" checkout -q FETCH_HEAD
    [[ "$(git -C "$src" rev-parse HEAD)" == "$GRIDDB_SOURCE_COMMIT" ]] || die "not the pinned commit"
    (
        cd "$src"
        ./bootstrap.sh
        ./configure
        make -j"$(nproc)" || true # asks for ant's bin/gridstore-conf.jar too early; the next make ends
        make
    )
    install -D -m 755 "$src/bin/gsserver" "$PREFIX/bin/gsserver"
    rm -rf "$src"
fi
gsserver="$PREFIX/bin/gsserver"
id gsadm >/dev/null 2>&1 || useradd --system --home-dir /var/lib/gridstore --shell /usr/sbin/nologin gsadm

# The address the official image uses for its one-member fixed list: the first of `hostname -I`.
address="$(hostname -I | awk '{print $1}')"
[[ -n "$address" ]] || die "no IPv4 address on this VM"

log "directories and configuration (node address $address)"
install -d -o gsadm -g gsadm -m 0750 "$GS_HOME" "$GS_HOME/conf" "$GS_HOME/log" "$GS_HOME/backup" \
    "$GS_HOME/sync" "$GS_HOME/swap" "$DATA_DIR" "$DATA_DIR/data" "$DATA_DIR/txnlog"

public_transaction=""
if [[ -n "$PUBLIC_ADDRESS" ]]; then
    public_transaction=", \"publicServiceAddress\": \"$PUBLIC_ADDRESS\""
fi

umask 027
# The configuration of every runtime (config.py), rendered with this VM's directories, address and
# optional public address; the tuning table on its cores and memory.
griddb_node_json >"$GS_HOME/conf/gs_node.json.tmp"
griddb_cluster_json >"$GS_HOME/conf/gs_cluster.json.tmp"
digest="$(printf '%s' "$DB_PASSWORD" | sha256sum | awk '{print $1}')"
printf 'admin,%s\nsystem,%s\n' "$digest" "$digest" >"$GS_HOME/conf/password.tmp"
for name in gs_node.json gs_cluster.json password; do
    chown gsadm:gsadm "$GS_HOME/conf/$name.tmp"
    mv -f "$GS_HOME/conf/$name.tmp" "$GS_HOME/conf/$name"
done
chmod 0600 "$GS_HOME/conf/password"
umask 022

install -d -m 0700 /etc/tsbench
(umask 077 && printf '%s\n' "$DB_PASSWORD" >"$SECRET")

install -d -m 0755 "$(dirname "$JOIN")"
cat >"$JOIN" <<'SCRIPT'
#!/usr/bin/env bash
# After gsserver started: wait for recovery, join the one-node cluster, wait until it serves.
set -euo pipefail
secret="$(cat /etc/tsbench/griddb-admin.password)"
stat() { curl -s --noproxy '*' -u "admin:$secret" http://127.0.0.1:10040/node/stat; }
for _ in $(seq 1 600); do
    body="$(stat || true)"
    if grep -Eq '"progressRate": *1([^0-9.]|\.0)' <<<"$body"; then break; fi
    sleep 1
done
if grep -Eq '"nodeStatus": *"INACTIVE"' <<<"$body"; then
    curl -fsS --noproxy '*' -u "admin:$secret" -d clusterName=tsbench -d minNodeNum=1 \
        http://127.0.0.1:10040/node/join >/dev/null
fi
for _ in $(seq 1 300); do
    body="$(stat || true)"
    if grep -Eq '"clusterStatus": *"MASTER"' <<<"$body" && grep -Eq '"partitionStatus": *"NORMAL"' <<<"$body"; then
        exit 0
    fi
    sleep 1
done
echo "GridDB did not form cluster tsbench: $body" >&2
exit 1
SCRIPT
chmod 0700 "$JOIN"

log "systemd unit tsbench-db.service"
install_db_unit "GridDB CE $GRIDDB_VERSION" <<UNIT
User=gsadm
Group=gsadm
Environment=GS_HOME=$GS_HOME GS_LOG=$GS_HOME/log
WorkingDirectory=$GS_HOME
ExecStart=$gsserver --conf $GS_HOME/conf
ExecStartPost=+$JOIN
LimitNOFILE=65536
KillSignal=SIGTERM
TimeoutStartSec=900
TimeoutStopSec=300
UNIT
log "GridDB $GRIDDB_VERSION is serving cluster $CLUSTER on $address:10001"
