#!/usr/bin/env bash
# GridDB CE's server built from the pinned upstream source archive: the build part of
# the local install recipe (install.sh), run once per machine (cached under the opt root).
#
#   source: $GRIDDB_SOURCE_ARCHIVE from the vendor folder, else upstream's $GRIDDB_SOURCE_URL, its
#           tree hash checked against $GRIDDB_SOURCE_TREE_SHA256 (scripts/lib.sh verified_archive)
#   build:  ./bootstrap.sh && ./configure && make -j<cores> (niced), then a second `make`: the
#           parallel make asks for bin/gridstore-conf.jar before ant has made it
#   -> $TSBENCH_OPT/griddb-$GRIDDB_VERSION/bin/gsserver          (the server; libstdc++/libz only)
#   -> $TSBENCH_OPT/griddb-$GRIDDB_VERSION/conf/                  (the shipped gs_node/gs_cluster.json)
#   -> $TSBENCH_OPT/griddb-$GRIDDB_VERSION/BUILD                  (archive, tree hash, times; written last)
#
# Prints the install folder. Idempotent (BUILD recording the pinned tree hash = done; another pin
# rebuilds: lib.sh build_is_current); one build at a time per machine
# (flock); an interrupted build resumes where make stopped. ≈ 30 min on 2 busy cores; the build
# tree (≈ 235 MB) is removed afterwards unless GRIDDB_KEEP_BUILD is set.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
# shellcheck source=scripts/lib.sh
source "$root/scripts/lib.sh"
: "${GRIDDB_VERSION:?from targets/griddb/definition.py: run scripts/install.sh griddb}"
# The pinned source archive (definition.py): the vendor folder or $GRIDDB_SOURCE_URL, checked.
: "${GRIDDB_SOURCE_ARCHIVE:?from targets/griddb/definition.py}"
: "${GRIDDB_SOURCE_URL?from targets/griddb/definition.py}"
: "${GRIDDB_SOURCE_TREE_SHA256:?from targets/griddb/definition.py}"
PREFIX="$TSBENCH_OPT/griddb-$GRIDDB_VERSION"

current() { build_is_current "$PREFIX/BUILD" "$GRIDDB_SOURCE_ARCHIVE" "$GRIDDB_SOURCE_TREE_SHA256"; }
if current; then
    echo "$PREFIX"
    exit 0
fi
mkdir -p "$TSBENCH_OPT"
exec 9>"$TSBENCH_OPT/griddb-$GRIDDB_VERSION.lock"
flock 9
if current; then # built by the holder of the lock we waited for
    echo "$PREFIX"
    exit 0
fi

[[ "$(uname -m)" == x86_64 ]] || die "GridDB CE builds for x86_64 only"
apt_install autoconf automake libtool make g++ zlib1g-dev tcl ant uuid-dev openjdk-17-jdk-headless python3

work="$TSBENCH_OPT/griddb-$GRIDDB_VERSION.build"
# An interrupted build resumes (make is incremental) when it was extracted from the same pinned tree.
if ! grep -qx "$GRIDDB_SOURCE_TREE_SHA256" "$work/EXTRACTED" 2>/dev/null; then
    rm -rf "$work" && mkdir -p "$work"
    archive="$(verified_archive "$GRIDDB_SOURCE_ARCHIVE" "$GRIDDB_SOURCE_TREE_SHA256" \
        "$GRIDDB_SOURCE_URL" "$work")"
    tar -xf "$archive" -C "$work" # vendored or upstream's: tar finds the compression
    rm -f "$work/$GRIDDB_SOURCE_ARCHIVE"
    echo "$GRIDDB_SOURCE_TREE_SHA256" >"$work/EXTRACTED"
fi
src="$(find "$work" -mindepth 2 -maxdepth 2 -name bootstrap.sh -printf '%h\n' | head -n 1)"
[[ -n "$src" ]] || die "$GRIDDB_SOURCE_ARCHIVE holds no bootstrap.sh"

started=$(date +%s)
cores="$(nproc)"
log "building GridDB $GRIDDB_VERSION in $src (make -j$cores, nice 19; ≈ 30 min on 2 cores)"
(
    cd "$src"
    [[ -f configure ]] || nice -n 19 ./bootstrap.sh >&2
    [[ -f Makefile ]] || nice -n 19 ./configure >&2
    nice -n 19 make -j"$cores" >&2 || true # stops early asking for ant's bin/gridstore-conf.jar
    nice -n 19 make >&2                    # finishes the build (or fails for real)
)
[[ -s "$src/bin/gsserver" ]] || die "the build produced no bin/gsserver"

stage="$PREFIX.part"
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/conf"
install -m 755 "$src/bin/gsserver" "$stage/bin/gsserver"
install -m 644 "$src/conf/gs_node.json" "$src/conf/gs_cluster.json" "$stage/conf/"
printf 'archive=%s\ntree_sha256=%s\nbuilt=%s\nseconds=%s\ncores=%s\ncompiler=%s\n' \
    "$GRIDDB_SOURCE_ARCHIVE" "$GRIDDB_SOURCE_TREE_SHA256" "$(date -u +%FT%TZ)" \
    "$(($(date +%s) - started))" "$cores" "$(g++ --version | head -n 1)" >"$stage/BUILD"
rm -rf "$PREFIX" && mv "$stage" "$PREFIX"
[[ -n "${GRIDDB_KEEP_BUILD:-}" ]] || rm -rf "$work"
log "GridDB $GRIDDB_VERSION built in $(($(date +%s) - started)) s: $PREFIX"
echo "$PREFIX"
