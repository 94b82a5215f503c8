#!/usr/bin/env bash
# QuestDB's own steps on a fresh Debian 12 cloud VM. Not run as it is: runtimes/cloud_install.py
# prepends the header rendered from definition.py (QUESTDB_VERSION; questdb_server_conf and
# questdb_log_conf, which print the configuration config.py declares for every runtime, on this VM's
# cores; process_heap_* on its memory) and runtimes/cloud_lib.sh (log, apt_get, install_db_unit,
# wait_ready).
#
# Environment:
#   DATA_DIR     QuestDB's table directory (cairo.root: tables, symbol maps, indexes, WAL), e.g.
#                /data/db on the data volume. Configuration, web console and logs stay on the root
#                volume (/var/lib/questdb), so the node agent's footprint counts tables + WAL only.
#   DB_PASSWORD  password of user "admin" on the PostgreSQL wire and for HTTP Basic (REST /exec, ILP
#                over HTTP /write; required: an empty one stops the script rather than keep QuestDB's
#                default, "quest", or an open HTTP port).
#
# Installs openjdk-17-jre-headless (Debian) and the org.questdb:questdb jar of definition.py's version
# from Maven Central (SHA-1 checked; the same artifact as install.sh), runs it as user questdb under
# systemd unit tsbench-db.service, listening on all interfaces at QuestDB's default ports:
# 9000 HTTP, 9003 health (min) server, 8812 PostgreSQL wire, 9009 ILP over TCP.
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
: "${QUESTDB_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
DB_PASSWORD="${DB_PASSWORD:-}"

JAR_URL="https://repo1.maven.org/maven2/org/questdb/questdb/$QUESTDB_VERSION/questdb-$QUESTDB_VERSION.jar"
INSTALL_DIR=/opt/questdb
JAR="$INSTALL_DIR/questdb-$QUESTDB_VERSION.jar"
ROOT=/var/lib/questdb # QuestDB's -d root: conf/, public/ (web console), import/

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
[[ -n "$DB_PASSWORD" ]] || die "DB_PASSWORD is empty: the PostgreSQL wire would keep QuestDB's default password"
escaped_password="${DB_PASSWORD//\\/\\\\}"

umask 027
# The configuration of every runtime (config.py), rendered with this VM's DATA_DIR and listeners; the
# login's password (PostgreSQL wire and HTTP Basic: this host's secret) is appended.
{
    questdb_server_conf
    printf 'pg.password=%s\nhttp.password=%s\n' "$escaped_password" "$escaped_password"
} >"$ROOT/conf/server.conf.tmp"
questdb_log_conf >"$ROOT/conf/log.conf.tmp"
for name in server.conf log.conf; do
    chown questdb:questdb "$ROOT/conf/$name.tmp"
    mv -f "$ROOT/conf/$name.tmp" "$ROOT/conf/$name"
done
umask 022

# QuestDB memory-maps every column file: many mappings and open files.
echo "vm.max_map_count = 1048576" >/etc/sysctl.d/60-tsbench-questdb.conf
sysctl -q -p /etc/sysctl.d/60-tsbench-questdb.conf

log "systemd unit tsbench-db.service"
install_db_unit "QuestDB $QUESTDB_VERSION" <<SERVICE
User=questdb
Group=questdb
ExecStart=/usr/bin/java -Xms$process_heap_min -Xmx$process_heap_max -XX:+UseParallelGC -p $JAR -m io.questdb/io.questdb.ServerMain -d $ROOT
LimitNOFILE=1048576
KillSignal=SIGTERM
TimeoutStopSec=120
SERVICE

# The health server needs no login (the HTTP port does): 200 once QuestDB serves.
questdb_answers() { [[ "$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:9003/status')" == 200 ]]; }
wait_ready 180 "QuestDB $QUESTDB_VERSION on :9003" questdb_answers
