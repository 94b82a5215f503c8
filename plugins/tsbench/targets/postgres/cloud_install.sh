#!/usr/bin/env bash
# PostgreSQL 15 (Debian 12 package) on a fresh Debian 12 cloud VM (tsbench's cloud runtime). Runs as
# root, from the benchmark host's first-boot script (infra/modules/benchmark_host); safe to run again.
#
# Environment:
#   DATA_DIR     the cluster's data directory (PGDATA, WAL included), e.g. /data/db on the data volume
#   DB_PASSWORD  password of the superuser "postgres" for TCP logins (scram-sha-256). Empty: TCP
#                logins need no password (trust) — the security group admits only the orchestrator.
#
# One private cluster initdb'ed in DATA_DIR (Debian's own 15/main cluster is never created), run by
# systemd unit tsbench-db.service as user postgres, listening on all interfaces at port 5432, with the
# benchmark database "tsbench". Settings follow the local runtime's (targets/postgres/server.py,
# README), with memory and parallelism sized to this machine.
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
DB_PASSWORD="${DB_PASSWORD:-}"
export DB_PASSWORD

PG_MAJOR=15
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
DATABASE=tsbench
UNIT=/etc/systemd/system/tsbench-db.service

log() { echo "[postgres cloud_install] $*"; }
die() {
    log "ERROR: $*" >&2
    exit 1
}
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"; }
as_postgres() { runuser -u postgres -- "$@"; }

log "packages: postgresql-$PG_MAJOR (Debian)"
# Debian would create and start a 15/main cluster on install: we run our own in DATA_DIR.
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/tsbench.conf
apt_get update
apt_get install --no-install-recommends "postgresql-$PG_MAJOR" "postgresql-client-$PG_MAJOR"
apt-mark hold "postgresql-$PG_MAJOR" "postgresql-client-$PG_MAJOR" >/dev/null # no upgrade mid-benchmark
systemctl disable --now postgresql.service >/dev/null 2>&1 || true

log "cluster in $DATA_DIR"
install -d -o postgres -g postgres -m 0700 "$DATA_DIR"
if [[ ! -f "$DATA_DIR/PG_VERSION" ]]; then
    as_postgres "$PG_BIN/initdb" -D "$DATA_DIR" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=peer --auth-host=scram-sha-256 --no-instructions
fi

mem_mb="$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)"
cpus="$(nproc)"
half_cpus=$((cpus / 2 > 0 ? cpus / 2 : 1))
cat >"$DATA_DIR/tsbench.conf" <<CONF
# written by tsbench (plugins/tsbench/targets/postgres/cloud_install.sh); see targets/postgres/README.md
listen_addresses = '*'
port = 5432
# memory: a quarter of the RAM for shared buffers, the rest is page cache
shared_buffers = $((mem_mb / 4))MB
effective_cache_size = $((mem_mb * 3 / 4))MB
work_mem = 64MB
maintenance_work_mem = 1GB
wal_buffers = 64MB
# WAL and checkpoints: fewer, spread-out checkpoints while loading
max_wal_size = 8GB
checkpoint_timeout = 15min
checkpoint_completion_target = 0.9
wal_compression = lz4
# durability: the safe defaults, stated so the report shows them
fsync = on
synchronous_commit = on
full_page_writes = on
# parallelism and planner for $cpus vCPUs on SSD
max_worker_processes = $((cpus + 16))
max_parallel_workers = $cpus
max_parallel_workers_per_gather = $half_cpus
random_page_cost = 1.1
effective_io_concurrency = 200
jit = off
autovacuum_naptime = 10s
timezone = 'UTC'
log_timezone = 'UTC'
CONF
chown postgres:postgres "$DATA_DIR/tsbench.conf"
include="include_if_exists = 'tsbench.conf'"
grep -qxF "$include" "$DATA_DIR/postgresql.conf" || printf '\n# tsbench\n%s\n' "$include" >>"$DATA_DIR/postgresql.conf"

method=scram-sha-256
if [[ -z "$DB_PASSWORD" ]]; then
    method=trust
    log "WARNING: DB_PASSWORD is empty: TCP logins need no password (reachable only from the orchestrator)"
fi
cat >"$DATA_DIR/pg_hba.conf" <<HBA
# written by tsbench: local socket by OS user, TCP from anywhere the security group admits
local   all   all                 peer
host    all   all   0.0.0.0/0     $method
host    all   all   ::/0          $method
HBA
chown postgres:postgres "$DATA_DIR/pg_hba.conf"

log "systemd unit tsbench-db.service"
cat >"$UNIT" <<UNIT
[Unit]
Description=tsbench database: PostgreSQL $PG_MAJOR
After=network-online.target
Wants=network-online.target
RequiresMountsFor=$DATA_DIR

[Service]
Type=notify
User=postgres
Group=postgres
Environment=LC_ALL=C.UTF-8
ExecStart=$PG_BIN/postgres -D $DATA_DIR
ExecReload=/bin/kill -HUP \$MAINPID
# SIGINT = fast shutdown: sessions rolled back, shutdown checkpoint written
KillMode=mixed
KillSignal=SIGINT
TimeoutStartSec=600
TimeoutStopSec=600
# No automatic restart: a crash during a benchmark must show, not be hidden.
Restart=no

[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable tsbench-db.service
systemctl restart tsbench-db.service

log "waiting for PostgreSQL"
ready=""
for _ in $(seq 1 120); do
    if as_postgres "$PG_BIN/pg_isready" -q -h /run/postgresql -p 5432; then
        ready=1
        break
    fi
    sleep 1
done
if [[ -z "$ready" ]]; then
    journalctl -u tsbench-db.service -n 50 --no-pager || true
    die "PostgreSQL did not become ready within 120 s"
fi

log "database $DATABASE, superuser password"
# The password reaches psql through the environment (\getenv), never through a command line.
as_postgres psql -X -q -v ON_ERROR_STOP=1 -h /run/postgresql -d postgres <<SQL
SELECT 'CREATE DATABASE $DATABASE' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DATABASE')
\\gexec
\\getenv password DB_PASSWORD
SELECT CASE WHEN :'password' = '' THEN 'ALTER ROLE postgres PASSWORD NULL'
            ELSE format('ALTER ROLE postgres PASSWORD %L', :'password') END
\\gexec
SQL
log "PostgreSQL $PG_MAJOR is ready on :5432 (database $DATABASE)"
