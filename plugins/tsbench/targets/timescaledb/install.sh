#!/usr/bin/env bash
# Build and install TimescaleDB (Apache-2 edition) for PostgreSQL $PG_MAJOR from the
# Debian trixie *source* package (bookworm has no timescaledb package): the local runtime's install
# recipe, run by scripts/install.sh timescaledb (or the local runtime) with TIMESCALEDB_VERSION and
# PG_MAJOR from definition.py.
#
#   sources/build: $TSBENCH_OPT/build/timescaledb/
#   private apt:   $TSBENCH_OPT/build/apt-trixie-src/ (own deb-src list, lists, cache;
#                  the system's apt config and lists are never touched)
#   installs:      /usr/lib/postgresql/15/lib/timescaledb*.so,
#                  /usr/share/postgresql/15/extension/timescaledb*  (make install)
#
# The Apache edition has no TSL features: no native compression, no continuous
# aggregates, no retention/compression policies. Use it with
#   shared_preload_libraries=timescaledb
# then CREATE EXTENSION timescaledb; SELECT create_hypertable('t', by_range('time', INTERVAL '12 hours'));
#
# Idempotent: skips when timescaledb.control for $TIMESCALEDB_VERSION is installed
# (TIMESCALEDB_REBUILD=1 forces a rebuild; remove $TSBENCH_OPT/build to refetch too).
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"
: "${TIMESCALEDB_VERSION:?from targets/timescaledb/definition.py: run scripts/install.sh timescaledb}"
: "${PG_MAJOR:?from targets/timescaledb/definition.py}"
PG_BIN="/usr/lib/postgresql/$PG_MAJOR/bin"

SUITE="${TIMESCALEDB_SUITE:-trixie}"
PG_CONFIG="$PG_BIN/pg_config"

installed_version() {
    local control
    control="$("$PG_CONFIG" --sharedir)/extension/timescaledb.control"
    [[ -f "$control" ]] || return 0
    sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$control"
}

if [[ -z "${TIMESCALEDB_REBUILD:-}" && -x "$PG_CONFIG" && "$(installed_version)" == "$TIMESCALEDB_VERSION" &&
    -f "$("$PG_CONFIG" --pkglibdir)/timescaledb-$TIMESCALEDB_VERSION.so" ]]; then
    log "timescaledb $TIMESCALEDB_VERSION already installed for PG $PG_MAJOR"
    exit 0
fi

# Compiler, cmake, server headers.
bash "$(dirname "${BASH_SOURCE[0]}")/../postgres/install.sh" >/dev/null
apt_install dpkg-dev xz-utils

# The Debian mirror this machine already uses (first .../debian URI, not -security).
debian_mirror() {
    local f uri
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] || continue
        uri="$(grep -hoE '^[[:space:]]*(deb(-src)?([[:space:]]+\[[^]]*\])?|URIs:)[[:space:]]+[a-z]+://[^[:space:]]+/debian/?([[:space:]]|$)' "$f" |
            grep -oE '[a-z]+://[^[:space:]]+/debian' | head -n1 || true)"
        if [[ -n "$uri" ]]; then
            echo "$uri"
            return 0
        fi
    done
    echo "http://deb.debian.org/debian"
}

BUILD_ROOT="$TSBENCH_OPT/build"
APT_DIR="$BUILD_ROOT/apt-$SUITE-src"
SRC_ROOT="$BUILD_ROOT/timescaledb"
mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$SRC_ROOT"

MIRROR="$(debian_mirror)"
cat >"$APT_DIR/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main
EOF
APT_OPTS=(
    -o "Dir::Etc::sourcelist=$APT_DIR/sources.list"
    -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$APT_DIR/lists"
    -o "Dir::Cache=$APT_DIR/cache"
    -o "APT::Sandbox::User=root"
)

# Find the Debian source version of the wanted upstream release.
src_version() {
    apt-cache "${APT_OPTS[@]}" showsrc timescaledb 2>/dev/null |
        awk '/^Version:/ {print $2}' | grep -E "^${TIMESCALEDB_VERSION//./\\.}(\+|-)" | sort -V | tail -n1 || true
}

SRC_DIR="$(find "$SRC_ROOT" -mindepth 1 -maxdepth 1 -type d -name "timescaledb-${TIMESCALEDB_VERSION}*" | head -n1)"
if [[ -z "$SRC_DIR" ]]; then
    deb_ver="$(src_version)"
    if [[ -z "$deb_ver" ]]; then
        log "apt-get update of the private $SUITE deb-src index ($MIRROR)"
        apt-get "${APT_OPTS[@]}" update -qq >&2
        deb_ver="$(src_version)"
    fi
    [[ -n "$deb_ver" ]] || die "no timescaledb $TIMESCALEDB_VERSION source in $MIRROR $SUITE"
    log "apt-get source timescaledb=$deb_ver"
    (cd "$SRC_ROOT" && apt-get "${APT_OPTS[@]}" -qq source "timescaledb=$deb_ver" >&2)
    SRC_DIR="$(find "$SRC_ROOT" -mindepth 1 -maxdepth 1 -type d -name "timescaledb-${TIMESCALEDB_VERSION}*" | head -n1)"
    [[ -n "$SRC_DIR" ]] || die "apt-get source did not unpack timescaledb-$TIMESCALEDB_VERSION"
fi
grep -q "^version = $TIMESCALEDB_VERSION\$" "$SRC_DIR/version.config" ||
    die "$SRC_DIR is not TimescaleDB $TIMESCALEDB_VERSION"

log "building $SRC_DIR against $("$PG_CONFIG" --version)"
cd "$SRC_DIR"
# BUILD_FORCE_REMOVE: bootstrap otherwise asks interactively about an existing build dir.
BUILD_DIR="build-pg$PG_MAJOR" BUILD_FORCE_REMOVE=true ./bootstrap \
    -DAPACHE_ONLY=1 -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF \
    -DUSE_TELEMETRY=OFF -DSEND_TELEMETRY_DEFAULT=OFF \
    -DCMAKE_BUILD_TYPE=Release \
    -DPG_CONFIG="$PG_CONFIG" >"$SRC_ROOT/configure.log" 2>&1 ||
    { tail -n 30 "$SRC_ROOT/configure.log" >&2; die "cmake configure failed"; }
make -C "build-pg$PG_MAJOR" -j"$(nproc)" >"$SRC_ROOT/build.log" 2>&1 ||
    { tail -n 30 "$SRC_ROOT/build.log" >&2; die "make failed"; }
as_root make -C "build-pg$PG_MAJOR" install >"$SRC_ROOT/install.log" 2>&1 ||
    { tail -n 30 "$SRC_ROOT/install.log" >&2; die "make install failed"; }

[[ "$(installed_version)" == "$TIMESCALEDB_VERSION" ]] ||
    die "timescaledb.control does not say $TIMESCALEDB_VERSION after make install"
log "timescaledb $TIMESCALEDB_VERSION (Apache-2 edition) installed for PG $PG_MAJOR"
