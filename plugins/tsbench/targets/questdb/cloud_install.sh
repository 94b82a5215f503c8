#!/usr/bin/env bash
# QuestDB 9.3.4 on a fresh Debian 12 cloud VM (tsbench's cloud runtime). Runs as root, from the
# benchmark host's first-boot script (infra/modules/benchmark_host); safe to run again.
#
# Environment:
#   DATA_DIR     QuestDB's table directory (cairo.root: tables, symbol maps, indexes, WAL), e.g.
#                /data/db on the data volume. Configuration, web console and logs stay on the root
#                volume (/var/lib/questdb), so the node agent's footprint counts tables + WAL only.
#   DB_PASSWORD  password of the PostgreSQL-wire user "admin" (empty: QuestDB's default, "quest").
#                HTTP (REST /exec, ILP over HTTP /write) has no authentication in open-source
#                QuestDB: the security group admits only the orchestrator.
#
# Installs openjdk-17-jre-headless (Debian) and the org.questdb:questdb:9.3.4 jar from Maven Central
# (SHA-1 checked; the same artifact as scripts/install_questdb.sh), runs it as user questdb under
# systemd unit tsbench-db.service, listening on all interfaces at QuestDB's default ports:
# 9000 HTTP, 9003 health (min) server, 8812 PostgreSQL wire, 9009 ILP over TCP.
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
DB_PASSWORD="${DB_PASSWORD:-}"

QUESTDB_VERSION=9.3.4
JAR_URL="https://repo1.maven.org/maven2/org/questdb/questdb/$QUESTDB_VERSION/questdb-$QUESTDB_VERSION.jar"
INSTALL_DIR=/opt/questdb
JAR="$INSTALL_DIR/questdb-$QUESTDB_VERSION.jar"
ROOT=/var/lib/questdb # QuestDB's -d root: conf/, public/ (web console), import/
UNIT=/etc/systemd/system/tsbench-db.service

log() { echo "[questdb cloud_install] $*"; }
die() {
    log "ERROR: $*" >&2
    exit 1
}
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"; }

[[ "$DB_PASSWORD" != *$'\n'* ]] || die "DB_PASSWORD must be one line"

log "packages: Java 17 runtime, curl"
apt_get update
apt_get install --no-install-recommends openjdk-17-jre-headless curl ca-certificates
apt-mark hold openjdk-17-jre-headless >/dev/null # no unattended upgrade (and restart) mid-benchmark

log "QuestDB $QUESTDB_VERSION jar"
mkdir -p "$INSTALL_DIR"
expected_sha1="$(curl -fsSL --retry 5 "$JAR_URL.sha1" | head -c 40)"
if [[ ! -s "$JAR" ]] || ! echo "$expected_sha1  $JAR" | sha1sum -c --quiet - 2>/dev/null; then
    curl -fsSL --retry 5 -o "$JAR.part" "$JAR_URL"
    echo "$expected_sha1  $JAR.part" | sha1sum -c --quiet - || die "SHA-1 mismatch for $JAR_URL"
    mv -f "$JAR.part" "$JAR"
fi

log "user, directories, configuration"
id questdb >/dev/null 2>&1 || useradd --system --home-dir "$ROOT" --shell /usr/sbin/nologin questdb
install -d -o questdb -g questdb -m 0750 "$ROOT" "$ROOT/conf" "$DATA_DIR"

# Java properties syntax: a backslash in the value must be doubled.
pg_password_line=""
if [[ -n "$DB_PASSWORD" ]]; then
    pg_password_line="pg.password=${DB_PASSWORD//\\/\\\\}"
else
    log "DB_PASSWORD is empty: PostgreSQL wire keeps QuestDB's default password"
fi

umask 027
cat >"$ROOT/conf/server.conf.tmp" <<CONF
# written by tsbench (plugins/tsbench/targets/questdb/cloud_install.sh)
cairo.root=$DATA_DIR
http.net.bind.to=0.0.0.0:9000
http.min.net.bind.to=0.0.0.0:9003
pg.net.bind.to=0.0.0.0:8812
line.tcp.net.bind.to=0.0.0.0:9009
line.udp.enabled=false
telemetry.enabled=false
pg.user=admin
$pg_password_line
# Size-related settings shared with the local runtime (targets/questdb/server.py, README
# "Configuration and tuning"); its worker-count settings were for 2 cores and are left at
# QuestDB's defaults here. A 10,000-row ILP request fits one receive buffer:
http.recv.buffer.size=16m
http.net.connection.rcvbuf=16m
# smaller append pages keep the footprint of a just-loaded table close to its data:
cairo.writer.data.append.page.size=2m
cairo.writer.data.index.value.append.page.size=1m
cairo.inactive.writer.ttl=30s
cairo.idle.check.interval=10s
CONF
# QuestDB logs every query at INFO level by default: errors, critical messages and advisories only.
cat >"$ROOT/conf/log.conf.tmp" <<CONF
writers=stdout
w.stdout.class=io.questdb.log.LogConsoleWriter
w.stdout.level=ERROR,CRITICAL,ADVISORY
CONF
for name in server.conf log.conf; do
    chown questdb:questdb "$ROOT/conf/$name.tmp"
    mv -f "$ROOT/conf/$name.tmp" "$ROOT/conf/$name"
done
umask 022

# QuestDB memory-maps every column file: many mappings and open files.
echo "vm.max_map_count = 1048576" >/etc/sysctl.d/60-tsbench-questdb.conf
sysctl -q -p /etc/sysctl.d/60-tsbench-questdb.conf

# Heap: a quarter of the RAM, between 1 and 8 GiB (table data lives off-heap in mapped files).
mem_mb="$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)"
heap_mb=$((mem_mb / 4))
((heap_mb >= 1024)) || heap_mb=1024
((heap_mb <= 8192)) || heap_mb=8192

log "systemd unit tsbench-db.service"
cat >"$UNIT" <<UNIT
[Unit]
Description=tsbench database: QuestDB $QUESTDB_VERSION
After=network-online.target
Wants=network-online.target
RequiresMountsFor=$DATA_DIR

[Service]
User=questdb
Group=questdb
ExecStart=/usr/bin/java -Xms1g -Xmx${heap_mb}m -XX:+UseParallelGC -p $JAR -m io.questdb/io.questdb.ServerMain -d $ROOT
LimitNOFILE=1048576
KillSignal=SIGTERM
TimeoutStopSec=120
# No automatic restart: a crash during a benchmark must show, not be hidden.
Restart=no

[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable tsbench-db.service
systemctl restart tsbench-db.service

log "waiting for QuestDB to answer on :9000"
for _ in $(seq 1 180); do
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:9000/exec?query=select%201')" == 200 ]]; then
        log "QuestDB $QUESTDB_VERSION is ready"
        exit 0
    fi
    sleep 1
done
journalctl -u tsbench-db.service -n 50 --no-pager || true
die "QuestDB did not become ready within 180 s"
