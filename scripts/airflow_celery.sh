#!/usr/bin/env bash
# The Celery form of the deployment: `TSBENCH_EXECUTOR=celery bash scripts/airflow_ui.sh`.
#
#   PostgreSQL   Airflow's metadata DB (its own cluster, loopback, a generated password)
#   Redis        the Celery broker (loopback, a generated password)
#   API server + UI, scheduler, DAG processor, triggerer   (CeleryExecutor)
#   2 × `airflow celery worker` (TSBENCH_CELERY_WORKERS), each with its own AIRFLOW_HOME, state
#                root (under TSBENCH_CELERY_VAR), results root and dataset cache: they share no folder.
#
# Tasks hand each other files only through the run store, so TSBENCH_RUN_STORE must be an s3:// URL
# (S3 or MinIO; credentials and endpoint from the usual AWS_* variables). Secrets live in
# $AIRFLOW_HOME/celery/secrets (0700) and reach the processes through Airflow's *_CMD settings or
# their environment, never their command lines. Everything listens on 127.0.0.1. The processes'
# logs: $AIRFLOW_HOME/celery/logs/. Ctrl-C (or SIGTERM) stops all of them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/lib.sh
source scripts/lib.sh

[[ "${TSBENCH_RUN_STORE:-}" == s3://* ]] || die "the Celery form shares no disk between workers:" \
    "set TSBENCH_RUN_STORE=s3://bucket/prefix (and AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY," \
    "AWS_ENDPOINT_URL for MinIO); got '${TSBENCH_RUN_STORE:-}'"
workers="${TSBENCH_CELERY_WORKERS:-2}"
[[ "$workers" =~ ^[1-9][0-9]?$ ]] || die "TSBENCH_CELERY_WORKERS must be 1..99, got '$workers'"

apt_update_once
apt_install postgresql redis-server
bash scripts/setup_python.sh --runtime
# shellcheck source=scripts/airflow_env.sh
source scripts/airflow_env.sh
export PATH="$root/.venv/bin:$PATH"
deploy="$AIRFLOW_HOME/celery"
# What service users must reach (the metadata DB's cluster, the workers' state roots, where servers
# keep their data) lives outside AIRFLOW_HOME, which they may not be allowed to enter.
var="${TSBENCH_CELERY_VAR:-/var/tmp/tsbench-celery}/$(printf '%s' "$AIRFLOW_HOME" | sha256sum | cut -c1-12)"
mkdir -p "$var"
chmod 0755 "$var" "$(dirname "$var")"
secrets="$deploy/secrets"
mkdir -p "$deploy/logs" "$deploy/pids" "$secrets"
chmod 0700 "$secrets"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
secret() {  # secret NAME : a random token kept in $secrets/NAME (0600), made once
    [[ -s "$secrets/$1" ]] || (umask 077 && python3 -c 'import secrets; print(secrets.token_hex(24))' > "$secrets/$1")
    cat "$secrets/$1"
}

pids=()
# shellcheck disable=SC2317  # reached through the trap
stop_all() {
    local status=$?
    trap - EXIT INT TERM
    log "stopping the deployment"
    for pid in "${pids[@]}"; do kill -TERM "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [[ -n "${pg_data:-}" ]]; then
        runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_data" -m fast stop > /dev/null 2>&1 || true
    fi
    exit "$status"
}
trap stop_all EXIT INT TERM
core=()  # the components whose end ends the deployment (a worker's does not: others take over)
start() {  # start NAME CMD... : in its own process group (pid in pids/NAME.pid), output to logs/NAME.log
    local name="$1"
    shift
    setsid "$@" > "$deploy/logs/$name.log" 2>&1 < /dev/null &
    pids+=("$!")
    echo "$!" > "$deploy/pids/$name.pid"
    [[ "$name" == worker-* ]] || core+=("$!")
}

# -- the metadata database: a PostgreSQL cluster of its own, run as the postgres user --------------
pg_bin="$(dirname "$(find /usr/lib/postgresql -name initdb -path '*/bin/*' | sort -V | tail -1)")"
pg_home="$var/metadb"
pg_data="$pg_home/data"
pg_port="$(free_port)"
meta_password="$(secret metadb_password)"
if [[ ! -s "$pg_data/PG_VERSION" ]]; then
    install -d -o postgres -g postgres -m 0700 "$pg_home" "$pg_data"
    runuser -u postgres -- "$pg_bin/initdb" -D "$pg_data" -U postgres --auth-local=peer \
        --auth-host=scram-sha-256 > "$deploy/logs/initdb.log"
fi
runuser -u postgres -- "$pg_bin/pg_ctl" -D "$pg_data" -w -l "$pg_home/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $pg_port -k $pg_home" start > /dev/null
psql_admin() { runuser -u postgres -- psql -h "$pg_home" -p "$pg_port" -X -q -v ON_ERROR_STOP=1 "$@"; }
if [[ -z "$(psql_admin -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'airflow'")" ]]; then
    psql_admin -c "CREATE ROLE airflow LOGIN" -c "CREATE DATABASE airflow OWNER airflow"
fi
# The password goes in on psql's standard input, not its command line.
printf "ALTER ROLE airflow PASSWORD '%s';\n" "$meta_password" | psql_admin
# No newline at the end: Airflow's *_CMD settings keep it (the DB name would be "airflow\n").
(umask 077 && printf 'postgresql+psycopg2://airflow:%s@127.0.0.1:%s/airflow' \
    "$meta_password" "$pg_port" > "$secrets/sql_alchemy_conn")
export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_CMD="cat $secrets/sql_alchemy_conn"

# -- the broker: Redis with a password from its own 0600 config file ---------------------------------
redis_port="$(free_port)"
redis_password="$(secret redis_password)"
(umask 077 && printf 'bind 127.0.0.1\nport %s\nrequirepass %s\nsave ""\nappendonly no\ndir %s\n' \
    "$redis_port" "$redis_password" "$deploy" > "$secrets/redis.conf")
start redis redis-server "$secrets/redis.conf"
(umask 077 && printf 'redis://:%s@127.0.0.1:%s/0' "$redis_password" "$redis_port" > "$secrets/broker_url")
export AIRFLOW__CELERY__BROKER_URL_CMD="cat $secrets/broker_url"

# -- Airflow ---------------------------------------------------------------------------------------
api_port="${AIRFLOW__API__PORT:-8080}"
export AIRFLOW__CORE__EXECUTOR=CeleryExecutor
# Airflow's Celery settings plus modules each worker imports once before forking its task processes
# (plugins/tsbench/airflow/celery_config.py): a task no longer imports them again.
export AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS="${AIRFLOW__CELERY__CELERY_CONFIG_OPTIONS:-tsbench.airflow.celery_config.CELERY_CONFIG}"
export AIRFLOW__API__HOST="${AIRFLOW__API__HOST:-127.0.0.1}"
export AIRFLOW__API__PORT="$api_port"
export AIRFLOW__CORE__EXECUTION_API_SERVER_URL="http://127.0.0.1:$api_port/execution/"
AIRFLOW__API_AUTH__JWT_SECRET="$(secret jwt_secret)"
export AIRFLOW__API_AUTH__JWT_SECRET
export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS="${AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS:-admin:admin}"
# Task logs: the workers share no disk and serve no logs, so each task's log goes to object storage
# when the task ends (Airflow's remote logging, Amazon provider) and the UI reads it from there:
# by default the run store's bucket, credentials from the environment unless the connection
# TSBENCH_TASK_LOG_CONN (default aws_default) exists.
store_bucket="${TSBENCH_RUN_STORE#s3://}"
export AIRFLOW__LOGGING__REMOTE_LOGGING=True
export AIRFLOW__LOGGING__REMOTE_BASE_LOG_FOLDER="${TSBENCH_TASK_LOGS:-s3://${store_bucket%%/*}/airflow-task-logs}"
export AIRFLOW__LOGGING__REMOTE_LOG_CONN_ID="${TSBENCH_TASK_LOG_CONN:-aws_default}"
# The deployment key every worker derives a cloud host's secrets from (runtime aws), so a host one
# worker provisioned is reached and torn down by another; a team's workers on several machines
# share it through their secrets backend or environment.
TSBENCH_SECRET_KEY="${TSBENCH_SECRET_KEY:-$(secret deployment_key)}"
export TSBENCH_SECRET_KEY
TSBENCH_SKIP_MINIO="${TSBENCH_SKIP_MINIO:-1}" bash scripts/install_all.sh
bash scripts/install_report_tools.sh
airflow db migrate > "$deploy/logs/migrate.log"
# The DAGs are created switched on by the DAG processor's first parse (the nightly paused with
# TSBENCH_NIGHTLY=paused): no reserialize / unpause CLI starts.

start api-server airflow api-server --port "$api_port"
warm_execution_api "http://127.0.0.1:$api_port" >> "$deploy/logs/api-server.log" 2>&1 &
start scheduler airflow scheduler
start dag-processor airflow dag-processor
start triggerer airflow triggerer --skip-serve-logs
for n in $(seq 1 "$workers"); do
    own="$deploy/worker-$n"
    state="$var/worker-$n/state"
    mkdir -p "$own/airflow" "$own/results" "$own/datasets" "$state"
    chmod 0755 "$var/worker-$n" "$state"  # servers run as their own users (PostgreSQL as postgres)
    # --skip-serve-logs: Airflow's log server binds every interface, and one port setting cannot
    # tell the API server two workers' ports on one host; finished tasks' logs are read from the
    # remote log folder above, and each worker keeps its own copy in its AIRFLOW_HOME/logs.
    start "worker-$n" env AIRFLOW_HOME="$own/airflow" \
        TSBENCH_STATE="$state" TSBENCH_RESULTS="$own/results" TSBENCH_DATASETS="$own/datasets" \
        airflow celery worker --celery-hostname "tsbench-worker-$n@%h" --concurrency 4 --skip-serve-logs
done
log "Celery form up: UI http://127.0.0.1:$api_port (admin password in" \
    "$AIRFLOW_HOME/simple_auth_manager_passwords.json.generated); $workers workers; logs in $deploy/logs"
wait -n "${core[@]}"
log "a component exited; see $deploy/logs"
exit 1
