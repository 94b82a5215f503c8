#!/usr/bin/env bash
# The GridDB client side of tsbench: the official Java client of the server's release, built from the
# same pinned source archive as the server (java_client/, `ant jar`: ≈ 20 s), and tsbench's small bulk
# helper.
#
#   -> $TSBENCH_OPT/griddb-client/gridstore-$GRIDDB_VERSION-<tree12>.jar        (the release's client;
#                                          <tree12>: the source's pinned tree hash, so a new pin rebuilds)
#   -> $TSBENCH_OPT/griddb-client/tsbench-griddb-bulk-<sha12>-gs$GRIDDB_VERSION.jar (our Bulk.java)
#   -> $TSBENCH_OPT/griddb-client/gridstore-jdbc-$GRIDDB_JDBC_VERSION.jar    (GridDB's JDBC driver)
#
# Why not griddb_python: it imports the "GridDB JavaAPI Adapter for Apache Arrow"
# (com.github.griddb:gridstore-arrow) at import time, an artifact the Maven Central our machines
# reach does not have (nor gridstore >= 5.7). tsbench therefore drives the official Java client
# directly over JPype (as griddb_python does underneath) and moves whole columns through
# java/tsbench/griddb/Bulk.java (in this folder) instead of cells. <sha12> is the first 12 hex digits
# of that source file's sha256, so an edited helper is rebuilt; client.py computes the same name.
# The JDBC driver (GridDB's SQL interface, used by the iot queries) is not in the source archive: it
# comes from Maven Central (com.github.griddb:gridstore-jdbc; 5.7 and 5.8 are not published there) through mvn,
# checked against $GRIDDB_JDBC_SHA256 (definition.py).
# Run by install.sh, by client.py when the jars are missing (with definition.py's variables) and,
# before the tests, by test_prepare.sh. The client build does not need the server's (build.sh).
#
# Prints the classpath (one jar per line). Idempotent: skips what is already in place.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${GRIDDB_VERSION:?from targets/griddb/definition.py: run scripts/install.sh griddb}"
# The pinned source archive (definition.py): the vendor folder or $GRIDDB_SOURCE_URL, checked.
: "${GRIDDB_SOURCE_ARCHIVE:?from targets/griddb/definition.py}"
: "${GRIDDB_SOURCE_URL?from targets/griddb/definition.py}"
: "${GRIDDB_SOURCE_TREE_SHA256:?from targets/griddb/definition.py}"
: "${GRIDDB_JDBC_VERSION:?from targets/griddb/definition.py}"
: "${GRIDDB_JDBC_SHA256:?from targets/griddb/definition.py}"
SOURCE="$here/java/tsbench/griddb/Bulk.java"
DEST_DIR="$TSBENCH_OPT/griddb-client"
CLIENT_JAR="$DEST_DIR/gridstore-$GRIDDB_VERSION-${GRIDDB_SOURCE_TREE_SHA256:0:12}.jar"

[[ -f "$SOURCE" ]] || die "missing $SOURCE"
sha12="$(sha256sum "$SOURCE" | head -c 12)"
BULK_JAR="$DEST_DIR/tsbench-griddb-bulk-$sha12-gs$GRIDDB_VERSION.jar"
JDBC_JAR="$DEST_DIR/gridstore-jdbc-$GRIDDB_JDBC_VERSION.jar"

jar_ok() { [[ -s "$1" ]] && unzip -tq "$1" >/dev/null 2>&1; }

if [[ -s "$CLIENT_JAR" && -s "$BULK_JAR" && -s "$JDBC_JAR" ]]; then
    log "griddb client $GRIDDB_VERSION, bulk helper $sha12 and JDBC $GRIDDB_JDBC_VERSION already installed"
    printf '%s\n%s\n%s\n' "$CLIENT_JAR" "$BULK_JAR" "$JDBC_JAR"
    exit 0
fi

apt_install openjdk-17-jdk-headless ant unzip
command -v javac >/dev/null || die "javac is missing after installing openjdk-17-jdk-headless"
mkdir -p "$DEST_DIR"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT

if [[ ! -s "$JDBC_JAR" ]]; then
    command -v mvn >/dev/null || apt_install maven
    log "mvn dependency:copy com.github.griddb:gridstore-jdbc:$GRIDDB_JDBC_VERSION"
    mvn -q -B dependency:copy -Dartifact="com.github.griddb:gridstore-jdbc:$GRIDDB_JDBC_VERSION" \
        -Dtransitive=false -DoutputDirectory="$build/jdbc" >&2 ||
        die "mvn could not fetch com.github.griddb:gridstore-jdbc:$GRIDDB_JDBC_VERSION"
    fetched="$build/jdbc/gridstore-jdbc-$GRIDDB_JDBC_VERSION.jar"
    echo "$GRIDDB_JDBC_SHA256  $fetched" | sha256sum -c --quiet - ||
        die "gridstore-jdbc $GRIDDB_JDBC_VERSION does not have the pinned sha256"
    jar_ok "$fetched" || die "gridstore-jdbc $GRIDDB_JDBC_VERSION is not a valid jar"
    mv -f "$fetched" "$JDBC_JAR"
fi

if [[ ! -s "$CLIENT_JAR" ]]; then
    archive="$(verified_archive "$GRIDDB_SOURCE_ARCHIVE" "$GRIDDB_SOURCE_TREE_SHA256" \
        "$GRIDDB_SOURCE_URL" "$build")"
    tar -xf "$archive" -C "$build" --wildcards '*/java_client' '*/3rd_party/slf4j'
    client_src="$(find "$build" -mindepth 2 -maxdepth 2 -type d -name java_client | head -n 1)"
    [[ -n "$client_src" ]] || die "$GRIDDB_SOURCE_ARCHIVE holds no java_client/"
    log "ant jar: the GridDB $GRIDDB_VERSION Java client from $GRIDDB_SOURCE_ARCHIVE"
    if ! (cd "$client_src" && ant -q jar >"$build/ant.log" 2>&1); then
        tail -n 30 "$build/ant.log" >&2
        die "ant jar failed for the GridDB $GRIDDB_VERSION Java client"
    fi
    jar_ok "$client_src/../bin/gridstore.jar" || die "ant made no valid gridstore.jar"
    mv -f "$client_src/../bin/gridstore.jar" "$CLIENT_JAR.part"
    mv -f "$CLIENT_JAR.part" "$CLIENT_JAR"
fi

if [[ -s "$BULK_JAR" ]]; then
    printf '%s\n%s\n%s\n' "$CLIENT_JAR" "$BULK_JAR" "$JDBC_JAR"
    exit 0
fi
log "javac Bulk.java ($sha12) against gridstore $GRIDDB_VERSION"
javac --release 11 -Xlint:all -Werror -cp "$CLIENT_JAR" -d "$build/classes" "$SOURCE" >&2
jar --create --file "$build/bulk.jar" -C "$build/classes" . >&2
rm -f "$DEST_DIR"/tsbench-griddb-bulk-*-gs"$GRIDDB_VERSION".jar
mv -f "$build/bulk.jar" "$BULK_JAR"
log "griddb client installed: $CLIENT_JAR, $BULK_JAR, $JDBC_JAR"
printf '%s\n%s\n%s\n' "$CLIENT_JAR" "$BULK_JAR" "$JDBC_JAR"
