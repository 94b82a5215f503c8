#!/usr/bin/env bash
# TimescaleDB's own steps on a fresh Debian 12 cloud VM, for both editions (the timescaledb_tsl target
# links here): from Timescale's official apt repository (packagecloud.io/timescale/timescaledb), the
# extension package of TIMESCALEDB_EDITION — timescaledb-2-oss-postgresql-$PG_MAJOR (apache: the
# Apache-2 edition, as the local runtime's Debian build) or timescaledb-2-postgresql-$PG_MAJOR (tsl:
# the full edition, as build_tsl.sh builds locally) — and its loader, pinned to TIMESCALEDB_VERSION and
# held. Not run as it is: runtimes/cloud_install.py renders the header from definition.py
# (TIMESCALEDB_VERSION, PG_MAJOR, TIMESCALEDB_EDITION, postgres_conf: PostgreSQL's configuration plus
# timescaledb's settings, with timescaledb.license = 'timescale' for tsl), runtimes/cloud_lib.sh, this
# file (hooks only) and then targets/postgres/cloud_install.sh, which calls the hooks: one private
# cluster in DATA_DIR under tsbench-db.service, port 5432, database "tsbench" — plus timescaledb
# preloaded and created in it.
set -euo pipefail

: "${TIMESCALEDB_VERSION:?rendered from definition.py by runtimes/cloud_install.py}"
: "${PG_MAJOR:?rendered from definition.py by runtimes/cloud_install.py}"
TIMESCALE_REPO=https://packagecloud.io/timescale/timescaledb/debian/
TIMESCALE_KEY_URL=https://packagecloud.io/timescale/timescaledb/gpgkey
case "${TIMESCALEDB_EDITION:?rendered from definition.py}" in
    apache) extension_pkg="timescaledb-2-oss-postgresql-$PG_MAJOR" ;;
    tsl) extension_pkg="timescaledb-2-postgresql-$PG_MAJOR" ;;
    *) die "TIMESCALEDB_EDITION must be apache or tsl, got '$TIMESCALEDB_EDITION'" ;;
esac

# Exact package versions of the pinned release (e.g. "<version>~debian12").
pinned() {
    apt-cache madison "$1" | awk -v want="$TIMESCALEDB_VERSION" \
        '{ split($3, v, "~"); if (v[1] == want) { print $3; exit } }'
}

# pg_extra_packages: the extension and its loader, after PostgreSQL's packages.
pg_extra_packages() {
    log "Timescale apt repository, timescaledb $TIMESCALEDB_VERSION ($TIMESCALEDB_EDITION edition)"
    apt_get install --no-install-recommends curl gnupg ca-certificates
    install -d -m 0755 /etc/apt/keyrings
    curl -fsSL --retry 5 "$TIMESCALE_KEY_URL" | gpg --dearmor --yes -o /etc/apt/keyrings/timescaledb.gpg
    chmod 0644 /etc/apt/keyrings/timescaledb.gpg
    local codename loader_pkg extension_version loader_version
    # shellcheck source=/dev/null
    codename="$(. /etc/os-release && echo "$VERSION_CODENAME")"
    echo "deb [signed-by=/etc/apt/keyrings/timescaledb.gpg] $TIMESCALE_REPO $codename main" \
        >/etc/apt/sources.list.d/timescaledb.list
    apt_get update
    loader_pkg="timescaledb-2-loader-postgresql-$PG_MAJOR"
    extension_version="$(pinned "$extension_pkg")"
    loader_version="$(pinned "$loader_pkg")"
    [[ -n "$extension_version" && -n "$loader_version" ]] ||
        die "$extension_pkg or $loader_pkg $TIMESCALEDB_VERSION is not in $TIMESCALE_REPO for $codename"
    apt_get install --no-install-recommends --allow-downgrades \
        "$extension_pkg=$extension_version" "$loader_pkg=$loader_version"
    apt-mark hold "$extension_pkg" "$loader_pkg" >/dev/null # no upgrade (and restart) mid-benchmark
}

# pg_extra_sql: psql lines run after the database exists.
pg_extra_sql() {
    printf '%s\n' '\connect tsbench' 'CREATE EXTENSION IF NOT EXISTS timescaledb;'
}
