#!/usr/bin/env bash
# The GridDB client side of tsbench: the official Java client and tsbench's small bulk helper.
#
#   -> $TSBENCH_OPT/griddb-client/gridstore-$GRIDDB_CLIENT_VERSION.jar        (com.github.griddb:gridstore)
#   -> $TSBENCH_OPT/griddb-client/tsbench-griddb-bulk-<sha12>-gs<version>.jar (our Bulk.java, compiled)
#
# Why not griddb_python's own jars: griddb_python 5.8+/5.9 imports the "GridDB JavaAPI Adapter for
# Apache Arrow" (com.github.griddb:gridstore-arrow) at import time, and that artifact (like gridstore
# 5.7+) is not in the Maven Central our machines reach; gridstore 5.6.0 is. tsbench therefore drives
# the official Java client directly over JPype (as griddb_python does underneath) and moves whole
# columns through java/tsbench/griddb/Bulk.java (in this folder) instead of cells.
# <sha12> is the first 12 hex digits of that source file's sha256, so an edited helper is rebuilt;
# client.py computes the same name. Run by install.sh, by client.py when the jars are missing and,
# before the tests, by test_prepare.sh.
#
# Prints the classpath (one jar per line). Idempotent: skips what is already in place.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../../scripts/lib.sh"

GRIDDB_CLIENT_VERSION="${GRIDDB_CLIENT_VERSION:-5.6.0}" # client.py's CLIENT_VERSION
SOURCE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/java/tsbench/griddb/Bulk.java"
DEST_DIR="$TSBENCH_OPT/griddb-client"
CLIENT_JAR="$DEST_DIR/gridstore-$GRIDDB_CLIENT_VERSION.jar"
M2_REPO="${M2_REPO:-$HOME/.m2/repository}"
M2_JAR="$M2_REPO/com/github/griddb/gridstore/$GRIDDB_CLIENT_VERSION/gridstore-$GRIDDB_CLIENT_VERSION.jar"
CENTRAL_URL="https://repo1.maven.org/maven2/com/github/griddb/gridstore/$GRIDDB_CLIENT_VERSION/gridstore-$GRIDDB_CLIENT_VERSION.jar"

[[ -f "$SOURCE" ]] || die "missing $SOURCE"
sha12="$(sha256sum "$SOURCE" | head -c 12)"
BULK_JAR="$DEST_DIR/tsbench-griddb-bulk-$sha12-gs$GRIDDB_CLIENT_VERSION.jar"

jar_ok() { [[ -s "$1" ]] && unzip -tq "$1" >/dev/null 2>&1; }

if [[ -s "$CLIENT_JAR" && -s "$BULK_JAR" ]]; then
    log "griddb client $GRIDDB_CLIENT_VERSION and bulk helper $sha12 already installed"
    printf '%s\n%s\n' "$CLIENT_JAR" "$BULK_JAR"
    exit 0
fi

command -v java >/dev/null || die "java (17+) is not on PATH"
command -v javac >/dev/null || apt_install openjdk-17-jdk-headless
command -v javac >/dev/null || die "javac is missing after installing openjdk-17-jdk-headless"
apt_install unzip
mkdir -p "$DEST_DIR"

if [[ ! -s "$CLIENT_JAR" ]]; then
    if ! jar_ok "$M2_JAR" && command -v mvn >/dev/null; then
        log "mvn dependency:get com.github.griddb:gridstore:$GRIDDB_CLIENT_VERSION"
        mvn -q -B dependency:get -Dartifact="com.github.griddb:gridstore:$GRIDDB_CLIENT_VERSION" \
            -Dtransitive=false -Dmaven.repo.local="$M2_REPO" >&2 || log "mvn failed; falling back to curl"
    fi
    tmp="$CLIENT_JAR.part"
    if jar_ok "$M2_JAR"; then
        cp "$M2_JAR" "$tmp"
    else
        log "curl $CENTRAL_URL"
        curl -fsSL --retry 2 --connect-timeout 15 -o "$tmp" "$CENTRAL_URL" ||
            die "cannot download the GridDB Java client $GRIDDB_CLIENT_VERSION from Maven Central ($CENTRAL_URL)"
        curl -fsSL --retry 2 --connect-timeout 15 -o "$tmp.sha1" "$CENTRAL_URL.sha1"
        echo "$(head -c 40 "$tmp.sha1")  $tmp" | sha1sum -c --quiet - || die "sha1 mismatch for $CENTRAL_URL"
        rm -f "$tmp.sha1"
    fi
    jar_ok "$tmp" || die "the GridDB Java client jar is not a valid zip: $tmp"
    mv -f "$tmp" "$CLIENT_JAR"
fi

build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
log "javac Bulk.java ($sha12) against gridstore $GRIDDB_CLIENT_VERSION"
javac --release 11 -Xlint:all -Werror -cp "$CLIENT_JAR" -d "$build/classes" "$SOURCE" >&2
jar --create --file "$build/bulk.jar" -C "$build/classes" . >&2
rm -f "$DEST_DIR"/tsbench-griddb-bulk-*-gs"$GRIDDB_CLIENT_VERSION".jar
mv -f "$build/bulk.jar" "$BULK_JAR"
log "griddb client installed: $CLIENT_JAR, $BULK_JAR"
printf '%s\n%s\n' "$CLIENT_JAR" "$BULK_JAR"
