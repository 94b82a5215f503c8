#!/usr/bin/env bash
# TimescaleDB's full edition (Apache-2 core + the Timescale License's tsl/: native compression,
# continuous aggregates, policies) built from the pinned upstream source archive into a PostgreSQL
# prefix of its own: the two editions install the same file names (timescaledb-<version>.so, the
# loader timescaledb.so, timescaledb.control), so they cannot share one PostgreSQL's directories.
#
#   source:  $TIMESCALEDB_TSL_ARCHIVE from $TSBENCH_VENDOR (default ../shared/vendor beside the project
#            root), else upstream's $TIMESCALEDB_TSL_URL; its tree hash checked against
#            $TIMESCALEDB_TSL_TREE_SHA256 (all from definition.py; scripts/lib.sh verified_archive)
#   prefix:  a private copy of Debian's PostgreSQL $PG_MAJOR (/usr/lib/postgresql/$PG_MAJOR and
#            /usr/share/postgresql/$PG_MAJOR, and the headers for the build: PostgreSQL finds its
#            share, lib and include directories relative to its binaries), the Apache edition's
#            files (if any) removed, the full edition installed
#   -> /opt/tsbench/timescaledb-tsl-$TIMESCALEDB_VERSION-pg$PG_MAJOR/usr/lib/postgresql/$PG_MAJOR/bin/
#   -> .../BUILD   (archive, tree hash, PostgreSQL copied, seconds, compiler; written last)
#   (not under the opt root: the server runs as the postgres user, who must reach its binaries, and
#   the opt root may sit in a private home; TSBENCH_SYSTEM_OPT overrides /opt/tsbench)
#
# Prints the prefix. Idempotent (BUILD recording the pinned tree hash = done; another pin rebuilds); one build at a time (flock); ≈ 100 s on 2
# cores. The local install recipe of the timescaledb_tsl target (its install.sh links here).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
: "${TIMESCALEDB_VERSION:?from targets/timescaledb/definition.py: run scripts/install.sh timescaledb}"
: "${PG_MAJOR:?from targets/timescaledb/definition.py}"
: "${TIMESCALEDB_TSL_ARCHIVE:?from targets/timescaledb/definition.py}"
: "${TIMESCALEDB_TSL_URL?from targets/timescaledb/definition.py}"
: "${TIMESCALEDB_TSL_TREE_SHA256:?from targets/timescaledb/definition.py}"
SYSTEM_OPT="${TSBENCH_SYSTEM_OPT:-/opt/tsbench}"
PREFIX="$SYSTEM_OPT/timescaledb-tsl-$TIMESCALEDB_VERSION-pg$PG_MAJOR"
PG_LIB="usr/lib/postgresql/$PG_MAJOR"
PG_SHARE="usr/share/postgresql/$PG_MAJOR"
PG_INCLUDE="usr/include/postgresql" # the server headers, for the build (pg_config finds them relatively)

current() { build_is_current "$PREFIX/BUILD" "$TIMESCALEDB_TSL_ARCHIVE" "$TIMESCALEDB_TSL_TREE_SHA256"; }
if current; then
    echo "$PREFIX"
    exit 0
fi
[[ -d "$SYSTEM_OPT" && -w "$SYSTEM_OPT" ]] || as_root install -d -o "$(id -u)" -g "$(id -g)" -m 755 "$SYSTEM_OPT"
exec 9>"$PREFIX.lock"
flock 9
if current; then
    echo "$PREFIX"
    exit 0
fi

# PostgreSQL itself, its server headers, a compiler and cmake (the Apache edition's recipe's too).
bash "$here/../postgres/install.sh" >/dev/null
apt_install cmake gcc make libssl-dev

work="$(mktemp -d "$TSBENCH_OPT/timescaledb-tsl.XXXXXX")"
trap 'rm -rf "$work"' EXIT
archive="$(verified_archive "$TIMESCALEDB_TSL_ARCHIVE" "$TIMESCALEDB_TSL_TREE_SHA256" \
    "$TIMESCALEDB_TSL_URL" "$work")"

started=$(date +%s)
stage="$PREFIX.part"
rm -rf "$stage" && mkdir -p "$stage/usr/lib/postgresql" "$stage/usr/share/postgresql" "$stage/usr/include"
cp -a "/$PG_LIB" "$stage/usr/lib/postgresql/"
cp -a "/$PG_SHARE" "$stage/usr/share/postgresql/"
cp -a "/$PG_INCLUDE" "$stage/usr/include/"
rm -f "$stage/$PG_LIB"/lib/timescaledb*.so "$stage/$PG_SHARE"/extension/timescaledb*
pg_config="$stage/$PG_LIB/bin/pg_config"
[[ "$("$pg_config" --pkglibdir)" == "$stage/$PG_LIB/lib" ]] ||
    die "the copied PostgreSQL does not relocate: pg_config --pkglibdir says $("$pg_config" --pkglibdir)"

tar -xf "$archive" -C "$work" # vendored or upstream's: tar finds the compression
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name "timescaledb-*" | head -n 1)"
grep -q "^version = $TIMESCALEDB_VERSION\$" "$src/version.config" || die "$archive is not TimescaleDB $TIMESCALEDB_VERSION"
log "building TimescaleDB $TIMESCALEDB_VERSION with tsl/ against $("$pg_config" --version) in $stage"
(
    cd "$src"
    BUILD_DIR=build BUILD_FORCE_REMOVE=true ./bootstrap -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF \
        -DWARNINGS_AS_ERRORS=OFF -DUSE_TELEMETRY=OFF -DSEND_TELEMETRY_DEFAULT=OFF \
        -DCMAKE_BUILD_TYPE=Release -DPG_CONFIG="$pg_config" >"$work/configure.log" 2>&1 ||
        { tail -n 30 "$work/configure.log" >&2; die "cmake configure failed"; }
    nice -n 19 make -C build -j"$(nproc)" >"$work/build.log" 2>&1 ||
        { tail -n 30 "$work/build.log" >&2; die "make failed"; }
    make -C build install >"$work/install.log" 2>&1 ||
        { tail -n 30 "$work/install.log" >&2; die "make install failed"; }
)
for built in "$PG_LIB/lib/timescaledb-tsl-$TIMESCALEDB_VERSION.so" "$PG_SHARE/extension/timescaledb.control"; do
    [[ -s "$stage/$built" ]] || die "the build installed no $built"
done
rm -rf "${stage:?}/usr/include" # headers were for the build only
# The private copy is the postgres user's to run, like Debian's (the data directories are its own).
chmod -R a+rX "$stage"
printf 'archive=%s\ntree_sha256=%s\npostgresql=%s\nbuilt=%s\nseconds=%s\ncores=%s\ncompiler=%s\n' \
    "$TIMESCALEDB_TSL_ARCHIVE" "$TIMESCALEDB_TSL_TREE_SHA256" "$("$pg_config" --version)" "$(date -u +%FT%TZ)" \
    "$(($(date +%s) - started))" "$(nproc)" "$(gcc --version | head -n 1)" >"$stage/BUILD"
rm -rf "$PREFIX" && mv "$stage" "$PREFIX"
log "TimescaleDB $TIMESCALEDB_VERSION (full edition) built in $(($(date +%s) - started)) s: $PREFIX"
echo "$PREFIX"
