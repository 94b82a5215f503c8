#!/usr/bin/env bash
# The local runtime's install recipe (scripts/install.sh influxdb, or the local runtime): InfluxDB
# 1.6.7 from Debian (package `influxdb`, 1.6.7~rc0; InfluxData's repository with definition.py's pin is
# unreachable from our machines — the image and the cloud host run the pin) and make sure
# the packaged service is neither running nor enabled: tsbench runs its own
#   influxd -config <own conf>
# The binary path is recorded in $TSBENCH_OPT/influxdb/influxd.path.
#
# Own conf (verified; InfluxDB 1.x TOML; every listener moved off the defaults):
#   reporting-enabled = false                  # Debian's key (upstream 1.x: reporting-disabled = true)
#   bind-address = "127.0.0.1:<rpc port>"      # top level! backup/restore RPC, default :8088
#   [meta]  dir = "<root>/meta"
#   [data]  dir = "<root>/data"   wal-dir = "<root>/wal"   query-log-enabled = false
#   [http]  enabled = true   bind-address = "127.0.0.1:<http port>"   log-enabled = false
#   [monitor] store-enabled = false              # no _internal database
#   readiness: GET http://127.0.0.1:<http port>/ping -> 204 (header X-Influxdb-Version: 1.6.7~rc0)
#   stop: SIGTERM (shuts down in ~1-2 s)
# ([[graphite]], [[udp]], [[collectd]], [[opentsdb]] are off by default.)
#
# Idempotent: apt only runs when the package is missing.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"

apt_install influxdb

# Stop and disable the distribution's service, whatever the init system.
if command -v systemctl >/dev/null; then
    if [[ -d /run/systemd/system ]]; then
        as_root systemctl disable --now influxdb.service >/dev/null 2>&1 || true
    else
        # No systemd running (containers, CI): disable just removes the symlink.
        as_root systemctl disable influxdb.service >/dev/null 2>&1 || true
    fi
fi
if [[ -x /etc/init.d/influxdb ]]; then
    as_root /etc/init.d/influxdb stop >/dev/null 2>&1 || true
    as_root update-rc.d influxdb disable >/dev/null 2>&1 || true
fi
# A service started by the package runs as user influxdb with the system config.
if pids="$(pgrep -u influxdb -x influxd)"; then
    log "stopping packaged influxd (pids $pids)"
    # shellcheck disable=SC2086
    as_root kill $pids || true
fi

INFLUXD="$(command -v influxd || true)"
[[ -n "$INFLUXD" ]] || INFLUXD=/usr/bin/influxd
[[ -x "$INFLUXD" ]] || die "influxd not found after installing influxdb"
mkdir -p "$TSBENCH_OPT/influxdb"
echo "$INFLUXD" >"$TSBENCH_OPT/influxdb/influxd.path"
log "influxdb: $INFLUXD ($("$INFLUXD" version 2>/dev/null | head -n1))"
echo "$INFLUXD"
