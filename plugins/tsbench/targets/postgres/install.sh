#!/usr/bin/env bash
# Ensure PostgreSQL $PG_MAJOR (server + extension build headers) from Debian: the local runtime's install
# recipe, run by scripts/install.sh postgres (or the local runtime) with PG_MAJOR from definition.py.
#
#   binaries: /usr/lib/postgresql/15/bin (initdb, pg_ctl, postgres, pg_config, psql)
#   also installs cmake + build-essential (needed to build TimescaleDB).
#
# postgresql-server-dev-15 is pinned to the installed server's exact version when
# apt can still offer it (a minor-version header mismatch can break extension ABI).
#
# We never use the Debian "15/main" cluster: tsbench runs a private cluster
# (verified), as user postgres (run as root with `runuser -u postgres --`):
#   install -d -o postgres -g postgres <data> <sockdir>
#   initdb -D <data> -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-instructions
#   pg_ctl -D <data> -l <data>/server.log -w -t 60 start \
#     -o "-p <port> -c listen_addresses=127.0.0.1 -k <sockdir> -c shared_preload_libraries=timescaledb -c timescaledb.telemetry_level=off"
#   readiness: pg_isready -h 127.0.0.1 -p <port> -U postgres
#   pg_ctl -D <data> -m fast -w stop
#
# Idempotent: apt only runs when a package is missing.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
: "${PG_MAJOR:?from targets/postgres/definition.py: run scripts/install.sh postgres}"
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"

dev_pkg="postgresql-server-dev-$PG_MAJOR"
srv_pkg="postgresql-$PG_MAJOR"

pkgs=(build-essential cmake "$srv_pkg")
if ! pkg_installed "$dev_pkg"; then
    if pkg_installed "$srv_pkg"; then
        srv_ver="$(dpkg-query -W -f='${Version}' "$srv_pkg")"
        apt_update_once
        if apt-cache madison "$dev_pkg" | awk -F'|' '{gsub(/ /, "", $2); print $2}' | grep -qxF "$srv_ver"; then
            dev_pkg="$dev_pkg=$srv_ver"
        else
            # That exact version is gone from the archive: move server and headers together.
            log "$dev_pkg $srv_ver not available; upgrading $srv_pkg alongside"
            apt_update_once
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends --only-upgrade "$srv_pkg" >&2
        fi
    fi
fi
pkgs+=("$dev_pkg")
apt_install "${pkgs[@]}"

[[ -x "$PG_BIN/pg_config" ]] || die "$PG_BIN/pg_config missing after install"
log "postgres: $("$PG_BIN/postgres" --version), headers $(dpkg-query -W -f='${Version}' "postgresql-server-dev-$PG_MAJOR")"
echo "$PG_BIN"
