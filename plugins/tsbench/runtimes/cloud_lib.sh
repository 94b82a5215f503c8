# shellcheck shell=bash
# Helpers every cloud install shares (prepended to each rendered install script; see cloud_install.py).
UNIT=/etc/systemd/system/tsbench-db.service

log() { echo "[$TSBENCH_TARGET cloud_install] $*"; }
die() {
    log "ERROR: $*" >&2
    exit 1
}
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 "$@"; }

# install_db_unit DESCRIPTION : write tsbench-db.service from the [Service] lines on stdin, enable it
# and (re)start it. No automatic restart: a crash during a benchmark must show, not be hidden.
install_db_unit() {
    local service
    service="$(cat)"
    cat >"$UNIT" <<UNIT
[Unit]
Description=tsbench database: $1
After=network-online.target
Wants=network-online.target
RequiresMountsFor=$DATA_DIR

[Service]
$service
Restart=no

[Install]
WantedBy=multi-user.target
UNIT
    systemctl daemon-reload
    systemctl enable tsbench-db.service
    systemctl restart tsbench-db.service
}

# wait_ready SECONDS WHAT COMMAND... : run COMMAND every second until it succeeds; after SECONDS,
# print the unit's journal and fail.
wait_ready() {
    local seconds="$1" what="$2"
    shift 2
    log "waiting for $what"
    for _ in $(seq 1 "$seconds"); do
        if "$@" >/dev/null 2>&1; then
            log "$what: ready"
            return 0
        fi
        sleep 1
    done
    journalctl -u tsbench-db.service -n 50 --no-pager || true
    die "$what: not ready within $seconds s"
}
