#!/usr/bin/env bash
# PostgreSQL's own steps on a fresh Debian 12 cloud VM (the Debian postgresql-$PG_MAJOR package). Not
# run as it is: runtimes/cloud_install.py prepends the header rendered from definition.py (PG_MAJOR;
# postgres_conf and postgres_hba_conf, which print the configuration config.py declares for every
# runtime, on this VM's cores and memory) and runtimes/cloud_lib.sh.
# TimescaleDB's script runs before this one and adds its packages (pg_extra_packages) and its
# extension (pg_extra_sql); both are empty here.
#
# Environment:
#   DATA_DIR     the cluster's data directory (PGDATA, WAL included), e.g. /data/db on the data volume
#   DB_PASSWORD  password of the superuser "postgres" for TCP logins (scram-sha-256); required (an
#                empty one stops the script: no TCP login without a password).
#
# One private cluster initdb'ed in DATA_DIR (Debian's own main cluster is never created), run by
# systemd unit tsbench-db.service as user postgres, listening on all interfaces at port 5432, with the
# benchmark database "tsbench" and tsbench.conf = config.py's settings with the definition's tuning.
set -euo pipefail

: "${DATA_DIR:?DATA_DIR (data directory on the data volume) must be set}"
: "${PG_MAJOR:?rendered from definition.py by runtimes/cloud_install.py}"
DB_PASSWORD="${DB_PASSWORD:-}"
[[ -n "$DB_PASSWORD" ]] || die "DB_PASSWORD is empty: the superuser's TCP logins need a password"
export DB_PASSWORD

PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"
DATABASE=tsbench
PG_PACKAGES=("postgresql-$PG_MAJOR" "postgresql-client-$PG_MAJOR")

as_postgres() { runuser -u postgres -- "$@"; }
declare -F pg_extra_packages >/dev/null || pg_extra_packages() { :; }
declare -F pg_extra_sql >/dev/null || pg_extra_sql() { :; }

log "packages: postgresql-$PG_MAJOR (Debian)"
# Debian would create and start a main cluster on install: we run our own in DATA_DIR.
mkdir -p /etc/postgresql-common/createcluster.d
echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/tsbench.conf
apt_get update
apt_get install --no-install-recommends "${PG_PACKAGES[@]}"
pg_extra_packages
apt-mark hold "${PG_PACKAGES[@]}" >/dev/null # no upgrade mid-benchmark
systemctl disable --now postgresql.service >/dev/null 2>&1 || true

log "cluster in $DATA_DIR"
install -d -o postgres -g postgres -m 0700 "$DATA_DIR"
if [[ ! -f "$DATA_DIR/PG_VERSION" ]]; then
    as_postgres "$PG_BIN/initdb" -D "$DATA_DIR" -U postgres -E UTF8 --locale=C.UTF-8 \
        --auth-local=peer --auth-host=scram-sha-256 --no-instructions
fi

# The configuration of every runtime (config.py), rendered with this VM's listener, cores and memory.
postgres_conf >"$DATA_DIR/tsbench.conf"
chown postgres:postgres "$DATA_DIR/tsbench.conf"
include="include_if_exists = 'tsbench.conf'"
grep -qxF "$include" "$DATA_DIR/postgresql.conf" || printf '\n# tsbench\n%s\n' "$include" >>"$DATA_DIR/postgresql.conf"
postgres_hba_conf >"$DATA_DIR/pg_hba.conf"
chown postgres:postgres "$DATA_DIR/pg_hba.conf"

log "systemd unit tsbench-db.service"
install_db_unit "PostgreSQL $PG_MAJOR ($TSBENCH_TARGET)" <<SERVICE
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
SERVICE

wait_ready 120 "PostgreSQL on :5432" as_postgres "$PG_BIN/pg_isready" -q -h /run/postgresql -p 5432

log "database $DATABASE, superuser password"
# The password reaches psql through the environment (\getenv), never through a command line.
{
    cat <<SQL
SELECT 'CREATE DATABASE $DATABASE' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$DATABASE')
\\gexec
\\getenv password DB_PASSWORD
SELECT CASE WHEN :'password' = '' THEN 'ALTER ROLE postgres PASSWORD NULL'
            ELSE format('ALTER ROLE postgres PASSWORD %L', :'password') END
\\gexec
SQL
    pg_extra_sql
} | as_postgres psql -X -q -v ON_ERROR_STOP=1 -h /run/postgresql -d postgres
log "$TSBENCH_TARGET is ready on :5432 (database $DATABASE)"
